"""Reading whole binlog files: transactions plus what the file records, with bad-input policy.

A truncated tail (a binlog still being written) ends the file with a warning and the partial
result; anything else wrong raises a :class:`BinlogError` naming file, offset and event type.
"""

from __future__ import annotations

import io
import mmap
import os
import stat
import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

from ..errors import BinlogError, CompressedFileError, TruncatedEventError
from ..inputs import log_number
from .constants import LOG_EVENT_HEADER_LEN, EventType
from .decoder import EventReader, not_sql_warning
from .events import FormatDescription
from .framing import check_magic
from .gz import open_gzip
from .transactions import GTID_EVENTS, ColumnSelector, Transaction, TransactionAssembler

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
    unfinished_at: int | None = None
    bytes_read: int = 0
    next_file: str | None = None
    transactions: int = 0
    complete: bool = False

    def fill(self, reader: EventReader, asm: TransactionAssembler) -> None:
        self.fill_from(reader.first_fde, Counter(reader.counts), Counter(reader.unknown), asm.saw_compression,
                       asm.saw_tagged_gtid, asm.saw_gtid, asm.saw_logical_clock, asm.saw_optional_metadata,
                       asm.rotate_to)

    def fill_from(self, fde: FormatDescription | None, events: Counter, unknown: Counter, compression: bool,
                  tagged_gtids: bool, gtids: bool, logical_clock: bool, optional_metadata: set[int],
                  next_file: str | None) -> None:
        """What the file records, from what a reader saw (the reference or the native core)."""
        if fde is not None:
            self.server_version = fde.server_version
            self.binlog_version = fde.binlog_version
            self.create_timestamp = fde.create_timestamp
            self.mariadb = fde.is_mariadb
            self.checksum = {0: "NONE", 1: "CRC32", 255: "NONE (pre-5.6 server)"}.get(
                fde.checksum_alg, f"alg {fde.checksum_alg}")
        self.events = events
        self.unknown_events = unknown
        # MariaDB compresses events one by one (log_bin_compress), not transactions
        self.compression = compression or any(n.endswith("_COMPRESSED_EVENT") or "_COMPRESSED_EVENT_V" in n
                                              for n in events if events[n])
        self.tagged_gtids = tagged_gtids
        self.gtids = gtids
        self.logical_clock = logical_clock
        if 4 in optional_metadata:  # COLUMN_NAME is only written with binlog_row_metadata=FULL
            self.row_metadata = "FULL"
        elif optional_metadata:
            self.row_metadata = "MINIMAL"
        elif self.events.get("TABLE_MAP_EVENT"):
            v = fde.version if fde else (0, 0, 0)
            if self.mariadb:
                self.row_metadata = "NO_LOG"   # MariaDB's own name for none, its default
            else:
                self.row_metadata = "MINIMAL" if v >= (8, 0, 1) else "none (pre-8.0.1)"
        self.next_file = next_file

    def truncated(self, err: TruncatedEventError) -> None:
        """A truncated tail: the warning, and where the partial result ends."""
        self.truncated_at = err.offset
        self.warnings.append(f"{err} — a binlog still being written? Reported what was read before offset "
                             f"{err.offset} (a transaction still open there as incomplete).")

    def unfinished(self, offset: int) -> None:
        """The file ends, between two events, inside the transaction at ``offset`` (its commit
        not written yet): the warning. Both readers count that transaction, flagged incomplete."""
        self.unfinished_at = offset
        self.warnings.append(f"{self.path}: ends inside the transaction at offset {offset}, before its commit "
                             f"(a binlog still being written?); it is counted as an incomplete transaction, "
                             f"with the events written so far")


def note_chain(summaries) -> None:
    """Warn, on the later file's summary, where consecutive files are not one server's chain: the
    server closes a file with a ROTATE_EVENT naming the next (``MYSQL_BIN_LOG::new_file_impl``),
    so a next file of another number means files out of order, a gap, or another server's; a file
    cut short, or ending inside a transaction, with another after it lost its tail; MySQL's and
    MariaDB's files mixed. Lags and timelines assume one chain, so they say so instead of mixing
    silently. A file of the magic alone (just created, or cut) says it held nothing. Idempotent."""
    for s in summaries:
        if not s.server_version and not s.events and s.truncated_at is None and s.warnings == []:
            s.warnings.append(f"{s.path}: no event after the binlog magic (a binlog just created, or cut "
                              f"after {s.size} bytes?): nothing read from it")
    for a, b in zip(summaries, summaries[1:]):
        said = None
        rotates_to, number = log_number(a.next_file or ""), log_number(b.path)
        if a.mariadb != b.mariadb:
            kinds = ("MariaDB", "MySQL") if a.mariadb else ("MySQL", "MariaDB")
            said = f"{b.path}: a {kinds[1]} binlog after {a.path}, a {kinds[0]} one"
        elif None not in (rotates_to, number) and rotates_to != number:
            said = f"{b.path}: follows {a.path}, which rotates to {a.next_file} (files out of order, a gap, " \
                   f"or another server's?)"
        elif a.truncated_at is not None:
            said = f"{b.path}: follows {a.path}, which is cut at offset {a.truncated_at}: its tail is missing"
        elif a.unfinished_at is not None:
            said = f"{b.path}: follows {a.path}, which ends inside the transaction at offset {a.unfinished_at}: " \
                   f"its tail is missing"
        if said is not None:
            said += "; lags and timelines assume the files are one server's chain, in order"
            if said not in b.warnings:
                b.warnings.append(said)


def open_binlog(path: str, held=None) -> io.BufferedIOBase:
    """Open a binlog, transparently un-gzipping ``*.gz`` files (:mod:`.gz`: a damaged one is a
    :class:`CompressedFileError` naming where). Only regular files: a directory, a FIFO or a
    device is refused before it is read (a FIFO would block forever). ``held``: the file already
    open (``depgraph.pipeline.OpenFiles``: the detection's), read through a duplicate of it."""
    try:
        st = os.stat(path)
    except OSError as err:
        raise BinlogError(f"cannot open: {err.strerror}", file=path) from err
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise BinlogError(f"cannot read: {kind}", file=path)
    try:
        if path.endswith(".gz"):
            return open_gzip(path, _BUFFER)
        if path.endswith(".zst"):
            return _open_zstd(path)
        if held is not None:  # the file the policy detection opened: read it from the start
            os.lseek(held.fileno(), 0, os.SEEK_SET)
            return open(os.dup(held.fileno()), "rb", buffering=_BUFFER)
        return open(path, "rb", buffering=_BUFFER)
    except OSError as err:
        raise BinlogError(f"cannot open: {err.strerror}", file=path) from err


class _ZstdReader(io.RawIOBase):
    """The uncompressed bytes of a ``.zst`` file; zstandard's ``ZstdError`` on damaged input is a
    :class:`CompressedFileError` naming the compressed and uncompressed offsets, as for gzip."""

    def __init__(self, path: str) -> None:
        import zstandard

        self.name = path
        self._raw = open(path, "rb")
        self._z = zstandard.ZstdDecompressor().stream_reader(self._raw, read_across_frames=True, closefd=True)
        self._out = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            n = self._z.readinto(b)
        except Exception as err:  # zstandard raises its own ZstdError
            if type(err).__name__ != "ZstdError":
                raise
            why = str(err).removeprefix("zstd decompress error: ")
            raise CompressedFileError(f"damaged zstd data near compressed offset {self._raw.tell()} "
                                      f"(uncompressed offset {self._out}): {why}", file=self.name) from None
        self._out += n
        return n

    def close(self) -> None:
        try:
            self._z.close()
        finally:
            super().close()


def _open_zstd(path: str) -> io.BufferedReader:
    """A ``.zst`` binlog (``zstd binlog.000001``), decompressed as it is read."""
    return io.BufferedReader(_ZstdReader(path), _BUFFER)


class Spliced(io.RawIOBase):
    """A file's preamble (magic, FORMAT_DESCRIPTION and what follows it up to the first
    transaction), then the same file from ``pos`` on, up to ``limit`` bytes of it: a binlog
    stream that starts at a transaction boundary in the middle of a file."""

    def __init__(self, preamble: bytes, f, pos: int, limit: int | None = None) -> None:
        #: where the file resumes: (offset in this stream, offset in the file), for read_stream's
        #: ``splice`` (the offsets it reports are then the file's)
        self.splice = (len(preamble), pos)
        self._pre = memoryview(preamble)
        self._f = f
        self._left = limit
        f.seek(pos)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._pre:
            n = min(len(b), len(self._pre))
            b[:n] = self._pre[:n]
            self._pre = self._pre[n:]
            return n
        want = len(b) if self._left is None else min(len(b), self._left)
        if want <= 0:
            return 0
        data = self._f.read(want)
        b[:len(data)] = data
        if self._left is not None:
            self._left -= len(data)
        return len(data)


_SIZE = struct.Struct("<I")


def unfinished_tail(path: str) -> int | None:
    """Where the transaction a plain binlog file ends inside starts, as the reference reads it
    (None: the file leaves none open, or does not read): the native core counts such a
    transaction but does not say where it is. The event headers are walked to the last GTID
    event (no body read; a file without one is read whole), and the reference reads from there,
    after the FORMAT_DESCRIPTION event before it."""
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            (fde_start, fde_end), start = _last_opener(m)
            pre = m[:4] + m[fde_start:fde_end]
            seen, spliced = FileSummary(path), Spliced(pre, f, start)
            for _ in read_stream(path, io.BufferedReader(spliced, _BUFFER), seen,
                                 lambda _tm: frozenset(), splice=spliced.splice):
                pass
    except (OSError, ValueError, BinlogError):
        return None
    return seen.unfinished_at


def _last_opener(m) -> tuple[tuple[int, int], int]:
    """The span of the last FORMAT_DESCRIPTION event before the last GTID event of a binlog's
    bytes ``m``, and that GTID event's offset; ``((4, 4), 4)`` where there is none."""
    pos, n, fde, at, last = 4, len(m), (4, 4), (4, 4), 4
    unpack = _SIZE.unpack_from
    while pos + LOG_EVENT_HEADER_LEN <= n:
        size = unpack(m, pos + 9)[0]   # event_length, after timestamp, type code and server_id
        if size < LOG_EVENT_HEADER_LEN:
            break
        code = m[pos + 4]
        if code == EventType.FORMAT_DESCRIPTION_EVENT:
            fde = (pos, pos + size)
        elif code in GTID_EVENTS:
            at, last = fde, pos
        pos += size
    return at, last


from .window import gate  # noqa: E402


def read_transactions(path: str, summary: FileSummary | None = None,
                      selector: ColumnSelector | None = None, *, strict_tail: bool = False,
                      window=None, held=None) -> Iterator[Transaction]:
    """Transactions of one binlog file in binlog order (``held``: see :func:`open_binlog`).

    ``summary`` (if given) is filled in as the file is read and is complete when the iterator is
    exhausted. A truncated tail adds a warning (or raises with ``strict_tail``).
    """
    if hasattr(path, "read_transactions"):  # a file streamed from a server (server.stream.LiveFile)
        yield from path.read_transactions(summary, selector, strict_tail=strict_tail)  # type: ignore[attr-defined]
        return
    summary = summary if summary is not None else FileSummary(path)
    try:
        summary.size = os.path.getsize(path)
    except OSError as err:
        raise BinlogError(f"cannot open: {err.strerror}", file=path) from err
    with open_binlog(path, held) as f:
        try:
            yield from read_stream(path, f, summary, selector, strict_tail=strict_tail, window=window)
        except OSError as err:
            raise BinlogError(f"read error: {err.strerror or err}", file=path) from err


def read_stream(name: str, stream, summary: FileSummary, selector: ColumnSelector | None = None, *,
                strict_tail: bool = False, window=None,
                splice: tuple[int, int] | None = None) -> Iterator[Transaction]:
    """Transactions of one binlog byte stream (magic first) named ``name`` in messages; fills
    ``summary``, which is complete when the iterator is exhausted. ``splice``: a
    :class:`Spliced` stream's, so that offsets are the file's (framing.EventFramer)."""
    reader = EventReader(name)
    asm = TransactionAssembler(reader, name, selector)
    try:
        check_magic(stream, name)
        events = _tail_tolerant(reader.read(stream, base_offset=4, splice=splice), summary, asm, strict_tail)
        for trx in asm.transactions(gate(events, window)):
            summary.transactions += 1
            yield trx
    finally:
        summary.fill(reader, asm)
    if asm.unfinished is not None and summary.truncated_at is None:  # a cut tail has its own warning
        summary.unfinished(asm.unfinished)
    if reader.unknown:
        codes = ", ".join(f"type {c} x{n}" for c, n in sorted(reader.unknown.items()))
        summary.warnings.append(f"{name}: unknown event types counted but not decoded: {codes}")
    if reader.first_not_sql is not None:
        summary.warnings.append(not_sql_warning(name, reader.not_sql, reader.first_not_sql))
    summary.complete = True


def _tail_tolerant(events, summary: FileSummary, asm: TransactionAssembler, strict: bool):
    try:
        for e in events:
            asm.reader_end = e.offset + e.size
            yield e
    except TruncatedEventError as err:
        if strict:
            raise
        summary.truncated(err)
        asm.reader_end = err.offset or 0
