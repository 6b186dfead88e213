"""Compressed payloads: MySQL TRANSACTION_PAYLOAD_EVENT (zstd) and MariaDB compressed events.

MySQL (``Transaction_payload_event``, libs/mysql/binlog/event/control_events.cpp): the body is a
list of fields ``type (packed) length (packed) value (packed)`` ending with type 0, then the
compressed bytes. Field types: 1 payload_size, 2 compression_type (0 ZSTD, 255 NONE),
3 uncompressed_size. The inner events are ordinary events without checksums.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from ..errors import CorruptEventError, UnsupportedFormatError
from .constants import LOG_EVENT_HEADER_LEN, EventType
from .cursor import Cursor
from .framing import RawEvent

PAYLOAD_SIZE = 1
COMPRESSION_TYPE = 2
UNCOMPRESSED_SIZE = 3
ZSTD = 0
NONE = 255


@dataclass(frozen=True, slots=True)
class TransactionPayload:
    EVENT_TYPE = EventType.TRANSACTION_PAYLOAD_EVENT
    compression_type: int
    payload_size: int
    #: The header's uncompressed_size; ``None`` when the event has no such field.
    uncompressed_size: int | None
    payload: bytes | memoryview

    def open(self) -> DeclaredSize:
        """A stream of the inner events' bytes, decompressed as it is read (bounded memory),
        held to the declared uncompressed size."""
        if self.compression_type == NONE:
            return DeclaredSize(io.BytesIO(self.payload), self.uncompressed_size)
        if self.compression_type != ZSTD:
            raise UnsupportedFormatError(f"transaction payload compression type {self.compression_type}")
        import zstandard

        # zstandard reads a buffer-protocol source in place: the compressed bytes are not copied.
        reader = zstandard.ZstdDecompressor().stream_reader(self.payload, read_across_frames=True)
        return DeclaredSize(reader, self.uncompressed_size)


class DeclaredSize(io.RawIOBase):
    """The inner events' bytes, checked against the payload header's ``uncompressed_size``:
    the stream may yield neither more (it stops one byte past, so a zstd bomb costs no more
    than it declares) nor fewer bytes than declared. ``bytes_left`` tells the framer how much
    the payload still holds, so an inner event's length past it fails before anything is read.
    """

    def __init__(self, stream, declared: int | None) -> None:
        self.stream = stream
        self.declared = declared
        self.produced = 0

    def readable(self) -> bool:
        return True

    def bytes_left(self) -> int | None:
        return None if self.declared is None else max(0, self.declared - self.produced)

    def read(self, n: int = -1) -> bytes:
        if self.declared is not None:
            # At most one byte beyond the declared size is ever decompressed.
            cap = self.declared - self.produced + 1
            n = cap if n < 0 else min(n, cap)
        elif n < 0:
            n = 1 << 20
        out = self.stream.read(n) if n > 0 else b""
        self.produced += len(out)
        if self.declared is not None:
            if self.produced > self.declared:
                raise CorruptEventError(f"payload decompresses to more than its declared uncompressed_size "
                                        f"{self.declared}")
            if not out and n > 0 and self.produced < self.declared:
                raise CorruptEventError(f"payload decompresses to {self.produced} bytes, its declared "
                                        f"uncompressed_size is {self.declared}")
        return out


def decode_transaction_payload(raw: RawEvent, fde) -> TransactionPayload:
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    fields = {PAYLOAD_SIZE: None, COMPRESSION_TYPE: None, UNCOMPRESSED_SIZE: None}
    while True:
        ftype = c.packed("payload field type")
        if ftype == 0:
            break
        flen = c.packed("payload field length")
        end = c.pos + flen
        c.need(flen, "payload field")
        if ftype in fields:
            fields[ftype] = Cursor(c.data, c.pos, end).packed("payload field value")
        c.pos = end
    payload = c.rest_view()  # a view of the event: the compressed bytes are not copied
    size = fields[PAYLOAD_SIZE]
    if size is not None and size != len(payload):
        raise CorruptEventError(f"payload_size {size} but {len(payload)} payload bytes")
    ctype = fields[COMPRESSION_TYPE]
    return TransactionPayload(ZSTD if ctype is None else ctype, len(payload),
                              fields[UNCOMPRESSED_SIZE], payload)


def mariadb_uncompress(data: bytes) -> bytes:
    """MariaDB ``binlog_buf_uncompress``: a header byte ``0x80 | n`` with ``n`` (1-4) big-endian
    bytes of the uncompressed length, then a zlib stream."""
    import zlib

    if not data:
        raise CorruptEventError("empty compressed MariaDB event body")
    head = data[0]
    n = head & 0x07
    if not head & 0x80 or not 1 <= n <= 4 or len(data) < 1 + n:
        raise CorruptEventError(f"bad MariaDB compression header 0x{head:02x}")
    length = int.from_bytes(data[1:1 + n], "big")
    try:
        # At most one byte beyond the stated length is inflated: a stream that inflates to more
        # is corrupt, and its size never grows memory beyond what the header claims.
        d = zlib.decompressobj()
        out = d.decompress(data[1 + n:], length + 1)
    except zlib.error as err:
        raise CorruptEventError(f"MariaDB compressed event does not inflate: {err}") from err
    if not d.eof and len(out) <= length:
        raise CorruptEventError("MariaDB compressed event: the zlib stream is cut short")
    if len(out) != length:
        raise CorruptEventError(f"MariaDB compressed event inflates to {len(out)} bytes, header says {length}")
    return out
