"""``*.gz`` binlogs: a streaming gzip reader whose errors say where the damage is.

zlib does the decoding (``wbits=31``: the gzip header, the deflate stream, and the CRC32 and
length trailer of each member are checked by zlib itself, as ``gzip -t`` does). This layer counts
the compressed bytes consumed and the uncompressed bytes produced, so a damaged file is one
:class:`~lagadvisor.errors.CompressedFileError` naming both offsets, never a ``zlib.error``
traceback. Members are read one after another, and zero padding after the last member is
ignored, as :mod:`gzip` does (RFC 1952 section 2.2: a gzip file is a series of members).

Memory is bounded by the request, never by a field of the input: each call inflates at most
what the caller asked for (``max_length``), and compressed input is read 64 KiB at a time.
"""

from __future__ import annotations

import io
import zlib
from typing import BinaryIO

from ..errors import CompressedFileError

#: Compressed bytes read from the file at a time.
IN_CHUNK = 64 * 1024
_GZIP = 16 + zlib.MAX_WBITS

#: zlib's words for what it found, in the terms of a gzip file.
_WHY = {
    "incorrect data check": "the CRC32 in the gzip trailer does not match the data",
    "incorrect length check": "the length in the gzip trailer does not match the data",
    "incorrect header check": "not a gzip header",
}


def _why(err: zlib.error) -> str:
    text = str(err)
    text = text.split(": ", 1)[1] if text.startswith("Error ") and ": " in text else text
    return _WHY.get(text, text)


class GzipReader(io.RawIOBase):
    """The uncompressed bytes of the gzip file ``raw`` (named ``name`` in errors)."""

    def __init__(self, raw: BinaryIO, name: str) -> None:
        self.raw = raw
        self.name = name
        self._d = zlib.decompressobj(_GZIP)
        self._pending = b""      # compressed bytes not yet consumed by zlib ...
        self._pending_at = 0     # ... starting at this compressed offset
        self._read_to = 0        # compressed bytes read from the file
        self._out = 0            # uncompressed bytes produced
        self._member_fed = False  # bytes of the current member given to zlib
        self._members = 0
        self._done = False

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        try:
            self.raw.close()
        finally:
            super().close()

    def _fail(self, message: str) -> CompressedFileError:
        return CompressedFileError(message, file=self.name)

    def _fill(self) -> bool:
        """More compressed input into ``_pending``; False at the end of the file."""
        chunk = self.raw.read(IN_CHUNK)
        if not chunk:
            return False
        if not self._pending:
            self._pending_at = self._read_to
        self._pending += chunk
        self._read_to += len(chunk)
        return True

    def _locate(self, snapshot, data: bytes, at: int, err: zlib.error) -> CompressedFileError:
        """Feed ``data`` again one byte at a time from the state before the failing call: the
        byte at which zlib reports the damage, and the uncompressed bytes before it."""
        produced = 0
        where = at + len(data) - 1
        for i in range(len(data)):
            try:
                produced += len(snapshot.decompress(data[i:i + 1]))
            except zlib.error as again:
                where, err = at + i, again
                break
        return self._fail(f"gzip data is damaged at compressed offset {where} (uncompressed offset "
                          f"{self._out + produced}): {_why(err)}")

    def _inflate(self, want: int) -> tuple[bytes, int]:
        """Give zlib the pending input (at most ``want`` bytes out): ``(output, consumed)``."""
        data, at = self._pending, self._pending_at
        snapshot = self._d.copy()
        try:
            out = self._d.decompress(data, want)
        except zlib.error as err:
            raise self._locate(snapshot, data, at, err) from err
        if data:
            self._member_fed = True
        if self._d.eof:
            rest = self._d.unused_data
            self._members += 1
            self._d = zlib.decompressobj(_GZIP)
            self._member_fed = False
        else:
            rest = self._d.unconsumed_tail
        consumed = len(data) - len(rest)
        self._pending, self._pending_at = rest, at + consumed
        return out, consumed

    def readinto(self, b) -> int:
        want = len(b)
        if want == 0 or self._done:
            return 0
        while True:
            at_end = not self._pending and not self._fill()
            if at_end and not self._member_fed:
                self._done = True
                return 0
            if not self._member_fed:
                # Between members: zero padding after the last member is allowed (gzip module).
                stripped = self._pending.lstrip(b"\0")
                self._pending_at += len(self._pending) - len(stripped)
                self._pending = stripped
                if not stripped:
                    continue
            fed = self._member_fed
            out, consumed = self._inflate(want)
            if out:
                n = len(out)
                b[:n] = out
                self._out += n
                return n
            if at_end and self._member_fed:
                raise self._fail(f"gzip data ends at compressed offset {self._read_to} inside a member "
                                 f"(uncompressed offset {self._out}): the file is cut short")
            if consumed == 0 and not at_end and fed == self._member_fed:
                # zlib took nothing and gave nothing: never loop on it (style rule 13).
                raise self._fail(f"gzip data makes no progress at compressed offset {self._pending_at} "
                                 f"(uncompressed offset {self._out})")


def open_gzip(path: str, buffer_size: int) -> io.BufferedReader:
    """``path`` un-gzipped as it is read."""
    return io.BufferedReader(GzipReader(open(path, "rb"), path), buffer_size)
