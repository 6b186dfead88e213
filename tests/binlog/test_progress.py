"""Every loop over input bytes advances or fails, and no length field sizes an allocation
(style rule 13; issues 17 and 20), checked on the reader's pieces in-process: row data whose row
image consumes nothing, event lengths that point backwards or far past the input, chunked body
reads, and the gzip reader's offsets for damaged, cut and multi-member files."""

from __future__ import annotations

import gzip
import io
import struct

import pytest

from conftest import FIXTURES
from lagadvisor.binlog.constants import FieldType, RowsKind
from lagadvisor.binlog.framing import READ_CHUNK, EventFramer, read_event
from lagadvisor.binlog.gz import GzipReader
from lagadvisor.binlog.rows import RowsEvent, TableMap, iter_rows, table_plan
from lagadvisor.errors import CompressedFileError, CorruptEventError, TruncatedEventError

BINLOG = FIXTURES / "single_full" / "binlog.000001"


def _table(ncols: int) -> TableMap:
    return TableMap(1, 0, "db", "t", bytes([FieldType.LONG]) * ncols, (0,) * ncols, b"\0" * ((ncols + 7) // 8))


@pytest.mark.parametrize("kind", [RowsKind.WRITE, RowsKind.DELETE, RowsKind.UPDATE])
@pytest.mark.parametrize("ncols", [0, 3])
def test_a_row_image_of_no_columns_is_corruption_not_a_loop(kind, ncols):
    tm = _table(3)
    bitmap = b"\0" * ((ncols + 7) // 8)
    ev = RowsEvent(kind, 1, 0, ncols, bitmap, bitmap if kind == RowsKind.UPDATE else b"", b"\x01\x02\x03")
    with pytest.raises(CorruptEventError, match="consumes no bytes"):
        list(iter_rows(ev, tm, table_plan(tm)))


def test_an_empty_rows_event_of_no_columns_has_no_rows():
    tm = _table(3)
    ev = RowsEvent(RowsKind.WRITE, 1, 0, 3, b"\0", b"", b"")
    assert list(iter_rows(ev, tm, table_plan(tm))) == []


def test_rows_wider_than_the_table_map_are_named():
    tm = _table(2)
    ev = RowsEvent(RowsKind.WRITE, 1, 0, 3, b"\x07", b"", b"\0" + b"\1\0\0\0" * 3)
    with pytest.raises(CorruptEventError, match="3 columns, table map db.t has 2"):
        list(iter_rows(ev, tm, table_plan(tm)))


def test_rows_decode_normally():
    tm = _table(2)
    ev = RowsEvent(RowsKind.WRITE, 1, 0, 2, b"\x03", b"", (b"\0" + b"\1\0\0\0\2\0\0\0") * 2)
    assert list(iter_rows(ev, tm, table_plan(tm))) == [(None, {0: 1, 1: 2})] * 2


class _Recorder(io.BytesIO):
    """A stream that remembers the largest read it was asked for."""

    largest = 0

    def read(self, n=-1):
        self.largest = max(self.largest, n)
        return super().read(n)


def _event(type_code: int, size: int, body: bytes, log_pos: int = 0) -> bytes:
    return struct.pack("<IBIIIH", 0, type_code, 1, size, log_pos, 0) + body


def test_read_event_reads_in_chunks():
    s = _Recorder(b"x" * 10)
    assert read_event(s.read, b"h", 1 << 30) == b"h" + b"x" * 10
    assert s.largest <= READ_CHUNK
    s = _Recorder(b"y" * (READ_CHUNK + 5))
    assert read_event(s.read, b"h", READ_CHUNK + 5) == b"h" + b"y" * (READ_CHUNK + 5)


def test_a_1gib_event_length_reads_what_is_there():
    """An event claiming 1 GiB in a small input: the framer asks for chunks, never 1 GiB."""
    s = _Recorder(_event(2, 0x40000000, b"q" * 100))
    with pytest.raises(TruncatedEventError, match="119 of 1073741824"):
        list(EventFramer(s, file="f", base_offset=4, checksums=False))
    assert s.largest <= READ_CHUNK


def test_an_event_length_pointing_backwards_is_named():
    s = io.BytesIO(_event(2, 7, b"zz"))
    with pytest.raises(CorruptEventError, match="impossible event length 7: shorter than the 19-byte header") as e:
        list(EventFramer(s, file="f", base_offset=4))
    assert (e.value.file, e.value.offset) == ("f", 4)


def test_an_event_length_past_the_file_is_named():
    """In a binlog (every log_pos equals the event's end), a length running past the end of the
    file and disagreeing with log_pos is corruption, not a tail still being written."""
    s = io.BytesIO(_event(2, 5000, b"z" * 30, log_pos=4 + 49))
    with pytest.raises(CorruptEventError, match="event length 5000 runs past the end of the file"):
        list(EventFramer(s, file="f", base_offset=4))


# --------------------------------------------------------------------------- gzip

def _gunzip(data: bytes) -> bytes:
    return io.BufferedReader(GzipReader(io.BytesIO(data), "x.gz"), 1 << 16).read()


def test_gzip_reads_members_and_zero_padding_like_gzip():
    raw = BINLOG.read_bytes()[:200_000]
    two = gzip.compress(raw[:70_000], mtime=0) + gzip.compress(raw[70_000:], mtime=0) + b"\0" * 300
    assert _gunzip(two) == raw == gzip.decompress(two)


def test_damaged_deflate_names_both_offsets():
    raw = BINLOG.read_bytes()[:200_000]
    gz = bytearray(gzip.compress(raw, mtime=0))
    at = len(gz) // 2
    gz[at:at + 16] = b"\xff" * 16
    with pytest.raises(CompressedFileError) as e:
        _gunzip(bytes(gz))
    msg = str(e.value)
    found = int(msg.split("compressed offset ")[1].split(" ")[0])
    assert at - 64 <= found < len(gz) and "uncompressed offset" in msg and "\n" not in msg


def test_crc_mismatch_is_found_in_the_trailer():
    gz = bytearray(gzip.compress(b"\xfebin" + b"a" * 5000, mtime=0))
    gz[-8] ^= 0xFF
    with pytest.raises(CompressedFileError, match="CRC32 in the gzip trailer") as e:
        _gunzip(bytes(gz))
    assert f"compressed offset {len(gz) - 8}" in str(e.value) or f"compressed offset {len(gz) - 5}" in str(e.value)
    assert "uncompressed offset 5004" in str(e.value)


def test_a_cut_gzip_file_is_named():
    gz = gzip.compress(BINLOG.read_bytes()[:50_000], mtime=0)
    with pytest.raises(CompressedFileError, match="cut short"):
        _gunzip(gz[:len(gz) - 20])


def test_trailing_garbage_after_a_member_is_named():
    gz = gzip.compress(b"\xfebin", mtime=0) + b"garbage!"
    with pytest.raises(CompressedFileError, match="not a gzip header"):
        _gunzip(gz)
