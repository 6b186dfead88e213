"""Event framing: magic, the 19-byte common header, sizes and CRC32 footers.

This layer only cuts a byte stream into events; it knows nothing of bodies except the
FORMAT_DESCRIPTION event, whose checksum byte decides how the following events end.
References: ``binlog_event.h`` (``Log_event_header``, ``Log_event_footer``),
``Log_event_footer::event_checksum_test`` (the FDE's CRC is computed with
``LOG_EVENT_BINLOG_IN_USE_F`` cleared).
"""

from __future__ import annotations

import io
import os
import stat
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from ..errors import (ChecksumMismatchError, CorruptEventError, NotABinlogError, TruncatedEventError,
                      UnsupportedFormatError)
from .constants import (
    BINLOG_CHECKSUM_ALG_CRC32,
    BINLOG_CHECKSUM_ALG_OFF,
    BINLOG_CHECKSUM_ALG_UNDEF,
    BINLOG_CHECKSUM_LEN,
    BINLOG_MAGIC,
    LOG_EVENT_BINLOG_IN_USE_F,
    LOG_EVENT_HEADER_LEN,
    MAX_EVENT_SIZE,
    EventType,
    event_type_name,
)

_HEADER = struct.Struct("<IBIIIH")
_FDE = EventType.FORMAT_DESCRIPTION_EVENT
_START_V3 = EventType.START_EVENT_V3


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One framed event. ``data`` is the whole event (header, body, footer); the body is
    ``data[19:body_end]``, so a checksum footer is never mistaken for body bytes."""

    offset: int
    timestamp: int
    type_code: int
    server_id: int
    event_size: int
    log_pos: int
    flags: int
    data: bytes
    body_end: int

    @property
    def type_name(self) -> str:
        return event_type_name(self.type_code)

    @property
    def body(self) -> bytes:
        return self.data[LOG_EVENT_HEADER_LEN:self.body_end]


def version_tuple(server_version: str) -> tuple[int, int, int]:
    """``"8.0.32-debug"`` -> ``(8, 0, 32)``; missing parts are 0."""
    parts: list[int] = []
    for piece in server_version.split("-", 1)[0].split(".")[:3]:
        digits = ""
        for ch in piece:
            if not ("0" <= ch <= "9"):  # ASCII only: str.isdigit() accepts '³', int() does not
                break
            digits += ch
        parts.append(int(digits) if digits else 0)
    while len(parts) < 3:
        parts.append(0)
    return (parts[0], parts[1], parts[2])


def fde_checksum_alg(data: bytes) -> int:
    """Checksum algorithm declared by a FORMAT_DESCRIPTION event (whole event bytes).

    ``Log_event_footer::get_checksum_alg``: servers from the checksum version split (MySQL 5.6.1,
    MariaDB 5.3.0) end the FDE with the algorithm byte and a 4-byte checksum, which is present
    even when the algorithm is OFF; older servers have neither (``UNDEF``).
    """
    if len(data) < LOG_EVENT_HEADER_LEN + 2 + 50:
        return BINLOG_CHECKSUM_ALG_UNDEF
    raw = data[LOG_EVENT_HEADER_LEN + 2:LOG_EVENT_HEADER_LEN + 52].split(b"\0", 1)[0]
    version = raw.decode("latin-1")
    split = (5, 3, 0) if "mariadb" in version.lower() else (5, 6, 1)
    if version_tuple(version) < split:
        return BINLOG_CHECKSUM_ALG_UNDEF
    return data[-BINLOG_CHECKSUM_LEN - 1]


def _crc_ok(data: bytes, type_code: int) -> bool:
    stored = int.from_bytes(data[-BINLOG_CHECKSUM_LEN:], "little")
    if type_code == _FDE and data[17] & LOG_EVENT_BINLOG_IN_USE_F:
        # The server computes the FDE's checksum with the in-use flag clear (it sets and resets
        # that flag in place without rewriting the checksum).
        data = data[:17] + bytes([data[17] & ~LOG_EVENT_BINLOG_IN_USE_F]) + data[18:]
    # A view, not a slice: a 1 GiB event is not copied to be checked.
    return zlib.crc32(memoryview(data)[:-BINLOG_CHECKSUM_LEN]) == stored


class EventFramer:
    """Cuts a stream into :class:`RawEvent` s and verifies checksums.

    ``checksums`` says whether events carry a CRC32 footer: ``None`` learns it from each
    FORMAT_DESCRIPTION event (a binlog file), ``False`` for the inner events of a
    TRANSACTION_PAYLOAD event, which never carry one.

    ``splice``: ``(at, to)`` for a stream that holds a file's preamble, then the same file from
    offset ``to`` (:class:`lagadvisor.binlog.scan.Spliced`): the event that starts at stream
    offset ``at`` is at ``to`` in the file, and so are the offsets after it that events, errors
    and warnings name.
    """

    def __init__(self, stream: BinaryIO, *, file: str = "", base_offset: int = 0,
                 checksums: bool | None = None, verify: bool = True,
                 splice: tuple[int, int] | None = None) -> None:
        self.stream = stream
        self.file = file
        self.offset = base_offset
        self._splice = splice
        self._fixed = checksums
        self.checksum_alg = BINLOG_CHECKSUM_ALG_OFF if checksums is False else BINLOG_CHECKSUM_ALG_UNDEF
        self.verify = verify
        # True while every event's log_pos equals its end offset, as in a binlog (not a relay
        # log, nor a payload's inner events). Then a header that disagrees at EOF is corruption.
        self.positioned = checksums is None

    def __iter__(self) -> Iterator[RawEvent]:
        read = self.stream.read
        unpack = _HEADER.unpack_from
        while True:
            if self._splice is not None and self.offset == self._splice[0]:
                self.offset, self._splice = self._splice[1], None
            offset = self.offset
            header = read(LOG_EVENT_HEADER_LEN)
            if not header:
                return
            if len(header) < LOG_EVENT_HEADER_LEN:
                raise TruncatedEventError(
                    f"input ends inside an event header ({len(header)} of {LOG_EVENT_HEADER_LEN} bytes)",
                    file=self.file, offset=offset)
            timestamp, type_code, server_id, size, log_pos, flags = unpack(header)
            name = event_type_name(type_code)
            if size < LOG_EVENT_HEADER_LEN:
                raise CorruptEventError(
                    f"impossible event length {size}: shorter than the {LOG_EVENT_HEADER_LEN}-byte header "
                    f"(the next event would not start after this one)", file=self.file, offset=offset,
                    event_type=name)
            if size > MAX_EVENT_SIZE:
                raise CorruptEventError(f"impossible event length {size}: larger than any event "
                                        f"({MAX_EVENT_SIZE} bytes)", file=self.file, offset=offset,
                                        event_type=name)
            want = size - LOG_EVENT_HEADER_LEN
            # A length beyond the bytes the input still holds is known before anything is read
            # or allocated (a regular file, a payload's declared size): a 1 GiB length field in
            # a short or sparse file costs nothing.
            left = bytes_left(self.stream) if want > READ_CHUNK else None
            data = read_event(read, header, want) if left is None or left >= want else b""
            got = len(data) - LOG_EVENT_HEADER_LEN if data else left
            if log_pos != offset + size:
                if self.positioned and got < want:
                    raise CorruptEventError(
                        f"event length {size} runs past the end of the file and disagrees with the "
                        f"event's end position {log_pos}", file=self.file, offset=offset, event_type=name)
                self.positioned = False
            if got < want:
                raise TruncatedEventError(
                    f"input ends inside the event ({LOG_EVENT_HEADER_LEN + got} of {size} bytes)",
                    file=self.file, offset=offset, event_type=name)
            if type_code == _FDE and self._fixed is None:
                self.checksum_alg = fde_checksum_alg(data)
            elif type_code == _START_V3 and self._fixed is None:
                self.checksum_alg = BINLOG_CHECKSUM_ALG_UNDEF
            alg = self.checksum_alg
            body_end = size
            if alg == BINLOG_CHECKSUM_ALG_CRC32 or (type_code == _FDE and alg == BINLOG_CHECKSUM_ALG_OFF):
                if size < LOG_EVENT_HEADER_LEN + BINLOG_CHECKSUM_LEN:
                    raise CorruptEventError(f"event length {size} leaves no room for its checksum",
                                            file=self.file, offset=offset, event_type=name)
                body_end = size - BINLOG_CHECKSUM_LEN
                if type_code == _FDE:
                    body_end -= 1  # the algorithm byte belongs to the footer
                if self.verify and alg == BINLOG_CHECKSUM_ALG_CRC32 and not _crc_ok(data, type_code):
                    raise ChecksumMismatchError("CRC32 checksum mismatch", file=self.file,
                                                offset=offset, event_type=name)
            self.offset = offset + size
            yield RawEvent(offset, timestamp, type_code, server_id, size, log_pos, flags, data, body_end)


#: Bytes read at a time for an event body, so a corrupt length field never sizes an allocation:
#: memory grows with the bytes actually there, not with what the header claims.
READ_CHUNK = 1 << 20


def read_event(read, header: bytes, n: int) -> bytes:
    """``header`` followed by up to ``n`` bytes from ``read`` (fewer only at the end of the
    input), as one ``bytes``: the event's only copy in memory.

    A large body is read in chunks of at most :data:`READ_CHUNK` (``read(n)`` of a buffered
    file or a decompressor allocates ``n`` whatever the input holds) into a :class:`io.BytesIO`,
    whose ``getvalue()`` hands over its own buffer: no list of parts joined into a second copy,
    no ``header + body`` making a third.
    """
    if n <= READ_CHUNK:
        return header + read(n)
    out = io.BytesIO()
    out.write(header)
    left = n
    while left > 0:
        part = read(min(left, READ_CHUNK))
        if not part:
            break
        out.write(part)
        left -= len(part)
    return out.getvalue()


def bytes_left(stream) -> int | None:
    """How many bytes ``stream`` still holds, when that is known without reading: a regular
    file (its size less the position), or a stream that says (``bytes_left()``, a transaction
    payload's declared uncompressed size); ``None`` for a pipe or a gzip/zstd file."""
    own = getattr(stream, "bytes_left", None)
    if own is not None:
        return own()
    try:
        fd = stream.fileno()
        pos = stream.tell()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return None
    return max(0, st.st_size - pos)


#: The magic of a binlog file written with binlog_encryption=ON (MySQL 8.0.14+).
ENCRYPTED_MAGIC = b"\xfdbin"


def check_magic(stream: BinaryIO, file: str) -> None:
    """Consume and check the 4-byte magic that starts every binlog and relay log."""
    magic = stream.read(len(BINLOG_MAGIC))
    if magic != BINLOG_MAGIC:
        if len(magic) < len(BINLOG_MAGIC) and BINLOG_MAGIC.startswith(magic):
            raise TruncatedEventError("file ends inside the binlog magic", file=file, offset=0)
        if magic == ENCRYPTED_MAGIC:
            # Binlog_encryption_ostream (sql/rpl_log_encryption.cc): a 512-byte header, then AES-CTR
            raise UnsupportedFormatError("an encrypted binlog (binlog_encryption=ON): read it through the server, "
                                         "which decrypts what it sends (--host with --from FILE, or mysqlbinlog "
                                         "--read-from-remote-server --raw to copy it)", file=file, offset=0)
        raise NotABinlogError(f"not a binlog file (starts with {magic.hex() or 'nothing'}, "
                              f"expected {BINLOG_MAGIC.hex()})", file=file, offset=0)
