"""Domain errors.

Every failure the user can cause (a bad file, a bad option) is one of these; the CLI turns them into one
line and an exit code, never a traceback. The split between truncation and corruption follows dpkt's
``NeedData``: a half-written last event of a live binlog is normal, a bad length in the middle is not.
"""

from __future__ import annotations


class LagAdvisorError(Exception):
    """Base of every error the tool reports as one line."""


class ConfigError(LagAdvisorError):
    """A bad option or option file."""


class SchemaError(LagAdvisorError):
    """A schema source (file, server) could not be read."""


class BinlogError(LagAdvisorError):
    """A binlog could not be read at ``offset`` of ``file``.

    ``event_type`` names the event being decoded when known.
    """

    def __init__(self, message: str, *, file: str = "", offset: int | None = None,
                 event_type: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.offset = offset
        self.event_type = event_type

    def located(self, file: str | None = None, offset: int | None = None,
                event_type: str | None = None) -> "BinlogError":
        """Fill in location fields not known where the error was raised; returns self."""
        if file is not None and not self.file:
            self.file = file
        if offset is not None and self.offset is None:
            self.offset = offset
        if event_type is not None and self.event_type is None:
            self.event_type = event_type
        return self

    def __str__(self) -> str:
        where = self.file or "<input>"
        if self.offset is not None:
            where += f" at offset {self.offset}"
        what = f" ({self.event_type})" if self.event_type else ""
        return f"{where}{what}: {self.message}"


class NotABinlogError(BinlogError):
    """The file does not start with the binlog magic ``\\xfebin``."""


class UnsupportedFormatError(BinlogError):
    """A binlog we recognise but cannot read (binlog v1/v3, encrypted MariaDB binlogs, ...)."""


class TruncatedEventError(BinlogError):
    """The input ended inside an event: normal for the tail of a binlog that is still being written."""


class CorruptEventError(BinlogError):
    """An event is impossible: bad length, checksum mismatch, or a body that does not decode."""


class CompressedFileError(CorruptEventError):
    """A compressed input (``*.gz``) does not decompress: the message names the compressed
    offset where the damage was detected and the uncompressed offset reached."""


class ChecksumMismatchError(CorruptEventError):
    """The CRC32 stored in an event's footer does not match its bytes."""
