"""Checked little-endian reads over an event body.

Every read checks the bytes it needs against ``end`` first and raises :class:`CorruptEventError`
naming the field, so a decoder can never silently invent a value (style rule 3).
"""

from __future__ import annotations

import struct

from ..errors import CorruptEventError

_U16 = struct.Struct("<H").unpack_from
_U32 = struct.Struct("<I").unpack_from
_U64 = struct.Struct("<Q").unpack_from


class Cursor:
    """Reads ``data[pos:end]`` front to back."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def need(self, n: int, field: str) -> None:
        if n < 0 or self.pos + n > self.end:
            raise CorruptEventError(f"{field}: needs {n} bytes, {self.end - self.pos} left")

    def u8(self, field: str) -> int:
        self.need(1, field)
        v = self.data[self.pos]
        self.pos += 1
        return v

    def u16(self, field: str) -> int:
        self.need(2, field)
        v = _U16(self.data, self.pos)[0]
        self.pos += 2
        return v

    def u32(self, field: str) -> int:
        self.need(4, field)
        v = _U32(self.data, self.pos)[0]
        self.pos += 4
        return v

    def u64(self, field: str) -> int:
        self.need(8, field)
        v = _U64(self.data, self.pos)[0]
        self.pos += 8
        return v

    def uint(self, n: int, field: str) -> int:
        """Little-endian unsigned integer of ``n`` bytes (e.g. 6-byte table ids, 7-byte timestamps)."""
        self.need(n, field)
        v = int.from_bytes(self.data[self.pos:self.pos + n], "little")
        self.pos += n
        return v

    def bytes(self, n: int, field: str) -> bytes:
        self.need(n, field)
        v = self.data[self.pos:self.pos + n]
        self.pos += n
        return bytes(v)

    def rest(self) -> bytes:
        v = self.data[self.pos:self.end]
        self.pos = self.end
        return bytes(v)

    def rest_view(self) -> memoryview:
        """The rest as a view of ``data``, not a copy (a statement of up to 1 GiB is decoded to
        text straight from the event's bytes)."""
        v = memoryview(self.data)[self.pos:self.end]
        self.pos = self.end
        return v

    def packed(self, field: str) -> int:
        """``net_field_length``: 1, 3, 4 or 9 bytes; 251 (SQL NULL) is not valid here."""
        first = self.u8(field)
        if first < 251:
            return first
        if first == 252:
            return self.uint(2, field)
        if first == 253:
            return self.uint(3, field)
        if first == 254:
            return self.uint(8, field)
        raise CorruptEventError(f"{field}: invalid packed integer prefix {first}")

    def cstring_fixed(self, n: int, field: str) -> str:
        """A NUL-padded fixed-width string."""
        return self.bytes(n, field).split(b"\0", 1)[0].decode("utf-8", "replace")

    def skip(self, n: int, field: str) -> None:
        self.need(n, field)
        self.pos += n

    def expect_end(self, what: str) -> None:
        if self.pos != self.end:
            raise CorruptEventError(f"{what}: {self.end - self.pos} unexpected trailing bytes")
