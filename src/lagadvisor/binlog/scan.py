"""Reading whole binlog files: transactions plus what the file records, with bad-input policy.

A truncated tail (a binlog still being written) ends the file with a warning and the partial
result; anything else wrong raises a :class:`BinlogError` naming file, offset and event type.
"""

from __future__ import annotations

import gzip
import io
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

from ..errors import BinlogError, TruncatedEventError
from .decoder import EventReader
from .events import FormatDescription
from .framing import check_magic
from .transactions import ColumnSelector, Transaction, TransactionAssembler

_BUFFER = 1 << 20


@dataclass
class FileSummary:
    """What one file records, filled in as it is read."""

    path: str
    size: int = 0
    server_version: str = ""
    binlog_version: int = 0
    checksum: str = ""
    create_timestamp: int = 0
    mariadb: bool = False
    compression: bool = False
    tagged_gtids: bool = False
    gtids: bool = False
    logical_clock: bool = False
    row_metadata: str = "unknown"
    events: Counter = field(default_factory=Counter)
    unknown_events: Counter = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    truncated_at: int | None = None
    bytes_read: int = 0
    next_file: str | None = None
    transactions: int = 0
    complete: bool = False

    def fill(self, reader: EventReader, asm: TransactionAssembler) -> None:
        fde: FormatDescription | None = reader.first_fde
        if fde is not None:
            self.server_version = fde.server_version
            self.binlog_version = fde.binlog_version
            self.create_timestamp = fde.create_timestamp
            self.mariadb = fde.is_mariadb
            self.checksum = {0: "NONE", 1: "CRC32", 255: "NONE (pre-5.6 server)"}.get(
                fde.checksum_alg, f"alg {fde.checksum_alg}")
        self.events = Counter(reader.counts)
        self.unknown_events = Counter(reader.unknown)
        self.compression = asm.saw_compression
        self.tagged_gtids = asm.saw_tagged_gtid
        self.gtids = asm.saw_gtid
        self.logical_clock = asm.saw_logical_clock
        seen = asm.saw_optional_metadata
        if seen & {4}:  # COLUMN_NAME is only written with binlog_row_metadata=FULL
            self.row_metadata = "FULL"
        elif seen:
            self.row_metadata = "MINIMAL"
        elif self.events.get("TABLE_MAP_EVENT"):
            v = fde.version if fde else (0, 0, 0)
            self.row_metadata = "MINIMAL" if v >= (8, 0, 1) and not self.mariadb else "none (pre-8.0.1)"
        self.next_file = asm.rotate_to


def open_binlog(path: str) -> io.BufferedIOBase:
    """Open a binlog, transparently un-gzipping ``*.gz`` files."""
    if path.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb", buffering=_BUFFER)


def read_transactions(path: str, summary: FileSummary | None = None,
                      selector: ColumnSelector | None = None, *, strict_tail: bool = False
                      ) -> Iterator[Transaction]:
    """Transactions of one binlog file in binlog order.

    ``summary`` (if given) is filled in as the file is read and is complete when the iterator is
    exhausted. A truncated tail adds a warning (or raises with ``strict_tail``).
    """
    if hasattr(path, "read_transactions"):  # a file streamed from a server (binlog.stream.LiveFile)
        yield from path.read_transactions(summary, selector, strict_tail=strict_tail)  # type: ignore[attr-defined]
        return
    summary = summary if summary is not None else FileSummary(path)
    try:
        summary.size = os.path.getsize(path)
    except OSError as err:
        raise BinlogError(f"cannot open: {err.strerror}", file=path) from err
    reader = EventReader(path)
    asm = TransactionAssembler(reader, path, selector)
    try:
        with open_binlog(path) as f:
            try:
                check_magic(f, path)
                events = reader.read(f, base_offset=4)
                for trx in asm.transactions(_tail_tolerant(events, summary, asm, strict_tail)):
                    summary.transactions += 1
                    yield trx
            except (OSError, EOFError) as err:
                if isinstance(err, (gzip.BadGzipFile,)) or isinstance(err, EOFError):
                    raise BinlogError(f"compressed file is damaged: {err}", file=path) from err
                raise BinlogError(f"read error: {err}", file=path) from err
    finally:
        summary.fill(reader, asm)
    if reader.unknown:
        codes = ", ".join(f"type {c} x{n}" for c, n in sorted(reader.unknown.items()))
        summary.warnings.append(f"{path}: unknown event types counted but not decoded: {codes}")
    summary.complete = True


def _tail_tolerant(events, summary: FileSummary, asm: TransactionAssembler, strict: bool):
    try:
        for e in events:
            asm.reader_end = e.offset + e.size
            yield e
    except TruncatedEventError as err:
        if strict:
            raise
        summary.truncated_at = err.offset
        summary.warnings.append(f"{err} — a binlog still being written? Reported the "
                                f"transactions before offset {err.offset}.")
        asm.reader_end = err.offset or 0
