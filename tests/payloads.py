"""Crafted binlogs around MySQL's TRANSACTION_PAYLOAD event, built from the real fixtures as
``scripts/make_damaged.py`` builds its files (tests/binlog/test_payload_bounds.py, tests/native)."""

from __future__ import annotations

import struct
import zlib

import zstandard

from conftest import FIXTURES

COMPRESSED = FIXTURES / "single_compressed" / "binlog.000001"
ROTATION = FIXTURES / "single_rotation" / "binlog.000001"
#: single_compressed up to its first TRANSACTION_PAYLOAD's GTID (FDE, PREVIOUS_GTIDS, 17 DDL
#: transactions, the 18th transaction's GTID), as the audit's builder cuts it.
PREFIX = 5072
HEADER = struct.Struct("<IBIIIH")


def _packed(n: int) -> bytes:
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n)
    if n < 1 << 24:
        return b"\xfd" + struct.pack("<I", n)[:3]
    return b"\xfe" + struct.pack("<Q", n)


def _field(ftype: int, value: int) -> bytes:
    v = _packed(value)
    return _packed(ftype) + _packed(len(v)) + v


def _with_crc(event: bytes) -> bytes:
    return event + struct.pack("<I", zlib.crc32(event))


def _event(type_code: int, body: bytes, log_pos: int, size: int | None = None, crc: bool = True) -> bytes:
    size = 19 + len(body) + (4 if crc else 0) if size is None else size
    ev = HEADER.pack(1795321287, type_code, 1, size, log_pos, 0) + body
    return _with_crc(ev) if crc else ev


def payload_file(tmp_path, inner: bytes, *, declared: int | None, name: str = "p.000001") -> str:
    """single_compressed's prefix and one CRC-valid TRANSACTION_PAYLOAD of ``inner`` (zstd)."""
    prefix = COMPRESSED.read_bytes()[:PREFIX]
    comp = zstandard.ZstdCompressor(level=3).compress(inner)
    body = _field(2, 0) + (_field(3, declared) if declared is not None else b"") + _field(1, len(comp)) + b"\0" + comp
    size = 19 + len(body) + 4
    path = tmp_path / name
    path.write_bytes(prefix + _event(40, body, PREFIX + size))
    return str(path)


def zero_query(size: int) -> bytes:
    """An inner QUERY_EVENT (no checksum, as inside a payload) whose body is all zeros."""
    return HEADER.pack(1795321287, 2, 1, size, 0, 0) + b"\0" * (size - 19)


def inner_of_first_payload() -> bytes:
    """The decompressed inner events of single_compressed's first TRANSACTION_PAYLOAD."""
    data = COMPRESSED.read_bytes()
    (size,) = struct.unpack_from("<I", data, PREFIX + 9)
    assert data[PREFIX + 4] == 40
    body = data[PREFIX + 19:PREFIX + size - 4]
    c = 0
    while body[c] != 0:  # skip the fields up to the end-of-fields marker
        c += 1  # type
        flen = body[c]
        c += 1 + flen
    return zstandard.ZstdDecompressor().stream_reader(body[c + 1:], read_across_frames=True).read()


def big_statement_file(tmp_path, n: int, lead: bytes = b"", name: str = "big.000001") -> str:
    """single_rotation's FDE and PREVIOUS_GTIDS, then one CRC-valid QUERY event of ``n`` bytes:
    an INSERT of one long string (a legitimate event may be up to max_allowed_packet, 1 GiB),
    after ``lead`` (leading spaces or comments)."""
    head = ROTATION.read_bytes()[:158]
    sql = lead + b"INSERT INTO t VALUES ('" + b"x" * (n - 19 - 13 - 2 - 4 - 25 - len(lead)) + b"')"
    body = struct.pack("<IIBHH", 7, 0, 1, 0, 0) + b"d\0" + sql
    path = tmp_path / name
    path.write_bytes(head + _event(2, body, 158 + 19 + len(body) + 4))
    return str(path)
