"""One streaming pass over binlog files: read, build writesets, re-derive every policy's clock.

Also detects which policy wrote the files, from what the recorded clock looks like.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from ..binlog import FileSummary, Transaction, read_transactions
from ..binlog.framing import version_tuple
from ..kinds import WRITESET_BASED, CommitOrderInput, Policy
from ..schema.model import Catalog
from ..writeset.extract import Writeset
from ..writeset.tracker import KeyTracker, WhatIf
from ..versions import writeset_only, writeset_only_note
from .policies import COMMIT_ORDER_SOURCES, ClockComputer, Computed, history_size_default

DETECT_SAMPLE = 20_000


@dataclass(frozen=True, slots=True)
class WrittenPolicy:
    """What wrote the files' clock: COMMIT_ORDER, WRITESET, WRITESET_SESSION, MariaDB, or none."""

    name: Policy
    evidence: str
    server_version: str = ""
    mariadb: bool = False


def peek_server(path: str) -> tuple[str, bool]:
    """Server version and MariaDB-ness from the file's FORMAT_DESCRIPTION event (no full read)."""
    from ..binlog.decoder import EventReader
    from ..binlog.framing import check_magic
    from ..binlog.scan import open_binlog
    from ..errors import BinlogError

    if hasattr(path, "server_version"):  # streamed from a server: it said what it is
        return path.server_version, bool(getattr(path, "mariadb", False))  # type: ignore[attr-defined]
    reader = EventReader(path)
    try:
        with open_binlog(path) as f:
            check_magic(f, path)
            for _ in reader.read(f, base_offset=4):
                if reader.first_fde is not None:
                    break
    except (BinlogError, OSError):
        return "", False  # the full read reports the problem with file and offset
    fde = reader.first_fde
    return (fde.server_version, fde.is_mariadb) if fde else ("", False)


def _by_server(version: str, mariadb: bool) -> WrittenPolicy | None:
    """The policy when the server alone decides it: MariaDB, or MySQL 8.4+ (WRITESET only)."""
    if mariadb:
        return WrittenPolicy(Policy.MARIADB, "MariaDB binlog: group commit ids, no logical clock", version, True)
    if writeset_only(version_tuple(version)):
        return WrittenPolicy(Policy.WRITESET, writeset_only_note(version), version)
    return None


def detect_written_policy(paths: list[str], sample: int = DETECT_SAMPLE) -> WrittenPolicy:
    """Read up to ``sample`` transactions (no row decoding) and judge the recorded clock.

    8.4+ servers only have WRITESET. Otherwise COMMIT_ORDER's ``last_committed`` is the
    committed prefix at prepare time, so it hardly ever goes down from one transaction to the
    next, and with one session it is always ``sequence_number - 1``; WRITESET's goes down
    whenever a transaction conflicts with nothing recent. WRITESET_SESSION additionally never
    lets a transaction start before its session's previous one.

    The first file's server is read from the same open as the sample: the native sample stops
    at that FDE when the server decides (:func:`_native_sample`), so each file read is opened
    once; the reference peeks at it first.
    """
    fast = _native_sample(paths, sample)
    if isinstance(fast, WrittenPolicy):
        return fast
    summary = FileSummary(paths[0]) if paths else None
    if fast is not None:
        summary, sampled = fast
    else:
        if paths:
            decided = _by_server(*peek_server(paths[0]))
            if decided is not None:
                return decided
        sampled = _sample(paths, sample)
    n = decreases = below_serial = session_violations = session_pairs = 0
    prev_lc = None
    file = None
    last_by_session: dict[int, int] = {}
    for t, s in sampled:
        if s is not None:
            if summary is not None and not summary.server_version:
                summary = s
            continue
        if t.file != file:
            file, prev_lc = t.file, None
            last_by_session = {}
        n += 1
        if prev_lc is not None and t.last_committed < prev_lc:
            decreases += 1
        if t.sequence_number > 1 and t.last_committed < t.sequence_number - 1:
            below_serial += 1
        if t.thread_id is not None:
            prev = last_by_session.get(t.thread_id)
            if prev is not None:
                session_pairs += 1
                if t.last_committed < prev:
                    session_violations += 1
            last_by_session[t.thread_id] = t.sequence_number
        prev_lc = t.last_committed
    version = summary.server_version if summary else ""
    mariadb = bool(summary and summary.mariadb)
    if mariadb:
        return WrittenPolicy(Policy.MARIADB, "MariaDB binlog: group commit ids, no logical clock", version, True)
    if n == 0:
        return WrittenPolicy(Policy.NONE, "no logical clock in these files (MySQL < 5.7 or no GTID events)", version)
    v = version_tuple(version)
    share = decreases / n
    if writeset_only(v):
        return WrittenPolicy(Policy.WRITESET, writeset_only_note(version), version)
    if share > 0.01 or (below_serial and len(last_by_session) <= 1 and session_pairs):
        if session_pairs >= 10 and session_violations == 0:
            return WrittenPolicy(Policy.WRITESET_SESSION, f"last_committed goes down in {share:.1%} of "
                                 f"transactions, never before the session's previous one", version)
        return WrittenPolicy(Policy.WRITESET, f"last_committed goes down in {share:.1%} of transactions "
                             "(COMMIT_ORDER's hardly ever does)", version)
    return WrittenPolicy(Policy.COMMIT_ORDER, f"last_committed goes down in {share:.2%} of transactions: "
                         "a commit-order clock", version)


def _sample(paths: list[str], sample: int):
    """The reference's detection read: ``(transaction, None)`` for the first ``sample`` clocked
    transactions, and ``(None, summary)`` at each file's first transaction (whose summary is
    complete once the file is left)."""
    n = 0
    for path in paths:
        s = FileSummary(path)
        first = True
        for t in read_transactions(path, s, selector=lambda tm: frozenset()):
            if first:
                first = False
                yield None, s
            if t.sequence_number is None or t.last_committed is None:
                continue
            n += 1
            yield t, None
            if n >= sample:
                return


class _ServerDecides(Exception):
    """The first file's FDE names a server that decides the policy: no sample is needed."""


def _native_sample(paths: list[str], sample: int):
    """The same sample read by the native core: ``(summary, items)``; the policy when the first
    file's FDE decides it (MariaDB, 8.4+: the read stops there); or None when the native core is
    unavailable or gives the read back to the reference."""
    from ..native import reader

    native = reader(paths)
    if native is None:
        return None
    from types import SimpleNamespace

    from ..native import Bridge

    class DetectBridge(Bridge):
        decided: WrittenPolicy | None = None

        def fde(self, data: bytes, body_end: int, checksum_alg: int) -> None:
            super().fde(data, body_end, checksum_alg)
            if first and self.decided is None:
                self.decided = _by_server(self.first_fde.server_version, self.first_fde.is_mariadb)
                if self.decided is not None:
                    raise _ServerDecides

    first = True
    bridge = DetectBridge(KeyTracker())
    analyzer = native.Analyzer(1, 0, 0, bridge, 0)
    summary = FileSummary(paths[0])
    items: list = []
    n = 0
    try:
        for i, path in enumerate(paths):
            bridge.begin_file()
            first = i == 0
            got = analyzer.detect(path, i, sample - n)
            if analyzer.file_transactions() and not summary.server_version:
                fde = bridge.first_fde
                summary = FileSummary(path)
                if fde is not None:
                    summary.server_version = fde.server_version
                    summary.mariadb = fde.is_mariadb
            items += [(SimpleNamespace(file=path, last_committed=lc, sequence_number=sn, thread_id=th), None)
                      for lc, sn, th in got]
            n += len(got)
            if n >= sample:
                break
    except native.NativeFallback:
        return bridge.decided  # stopped at the first FDE (MariaDB, 8.4+), else given back
    return summary, items


@dataclass
class ClockOptions:
    history_size: int | None = None          # None: the server version's default
    commit_order: CommitOrderInput = CommitOrderInput.AUTO
    catalog: Catalog | None = None
    use_binlog_ddl: bool = True
    labels: bool = False                     # readable row keys per hash (hot-row reports)
    what_if: WhatIf | None = None            # schema changes to evaluate (advisor)
    written: WrittenPolicy | None = None     # known from the server's variables (live mode)
    windows: dict | None = None              # path -> binlog.window.Window (mysqlbinlog's options)


@dataclass
class ClockRun:
    """State and results of one pass (filled while iterating)."""

    written: WrittenPolicy
    history_size: int
    commit_order: CommitOrderInput
    tracker: KeyTracker
    computer: ClockComputer
    summaries: list[FileSummary] = field(default_factory=list)
    windows: dict | None = None


def commit_order_for(written: WrittenPolicy, requested: CommitOrderInput | str) -> CommitOrderInput:
    requested = CommitOrderInput(requested)
    if requested != CommitOrderInput.AUTO:
        return requested
    return CommitOrderInput.FLUSH_GROUPS if written.name in WRITESET_BASED else CommitOrderInput.RECORDED


def prepare(paths: list[str], opts: ClockOptions) -> ClockRun:
    written = opts.written or detect_written_policy(paths)
    hs = opts.history_size
    if hs is None:
        hs = history_size_default(version_tuple(written.server_version), written.mariadb)
    co = commit_order_for(written, opts.commit_order)
    tracker = KeyTracker(opts.catalog, use_binlog_ddl=opts.use_binlog_ddl, labels=opts.labels,
                         what_if=opts.what_if)
    return ClockRun(written, hs, co, tracker, ClockComputer(hs, COMMIT_ORDER_SOURCES[co]()), windows=opts.windows)


def run_clocks(paths: Iterable[str], run: ClockRun) -> Iterator[tuple[Transaction, Writeset, Computed]]:
    """Transactions with their writesets and every policy's computed ``last_committed``."""
    for path in paths:
        s = FileSummary(path)
        run.summaries.append(s)
        for t in read_transactions(path, s, selector=run.tracker.select,
                                   window=run.windows.get(path) if run.windows else None):
            ws = run.tracker.writeset(t)
            c = run.computer.step(t, ws)
            run.tracker.observe(t)
            yield t, ws, c
