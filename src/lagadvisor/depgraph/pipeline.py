"""What a read of binlog files is planned from: the clock options, the policy that wrote the
files' clock (judged from a sample of the recorded clock: :func:`judge_sample`), and the plan of
the read (:class:`ClockRun`). The read pipeline (:mod:`.read`) reads the sample and the run
(``read.prepare``, ``read.read``).

The detection and the read that follows share one open of each file (issue 21): the detection
keeps what it opened in an :class:`OpenFiles`, which the plan carries to the read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..binlog import FileSummary
from ..binlog.framing import version_tuple
from ..kinds import WRITESET_BASED, CommitOrderInput, Policy
from ..schema.model import Catalog
from ..versions import writeset_only, writeset_only_note
from ..writeset.tracker import WhatIf

DETECT_SAMPLE = 20_000


class OpenFiles:
    """Input files held open from the policy detection's sample to the read that follows, so
    that both share one open of each file (issue 21). Only in the process that opened them (a
    forked worker opens its own: a shared handle would share the file position), and only while
    the path still names the same file (device and inode). Not copied: a copy, or a pickled
    one (a process pool's argument), holds nothing."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._files: dict[str, object] = {}

    def __reduce__(self):
        return OpenFiles, ()

    def __copy__(self) -> "OpenFiles":
        return self

    def __deepcopy__(self, memo) -> "OpenFiles":
        return self

    def fd(self, path: str) -> int | None:
        """The file descriptor of ``path``, opened now if it is not held yet (the native core
        reads through a duplicate, from the start); None for a gzip file (the native core gives
        it to the reference before opening it) or a path that does not open."""
        if os.getpid() != self._pid or not isinstance(path, str) or path.endswith(".gz"):
            return None
        f = self._files.get(path)
        if f is None:
            try:
                f = self._files[path] = open(path, "rb", buffering=0)
            except OSError:
                return None
        return f.fileno()

    def take(self, path: str):
        """The file held for ``path``, no longer held (the caller closes it), when this process
        opened it and the path still names it; else None (the reader opens the path)."""
        f = self._files.pop(path, None) if isinstance(path, str) else None
        if f is None:
            return None
        try:
            same = os.getpid() == self._pid and _same_file(os.fstat(f.fileno()), os.stat(path))
        except OSError:
            same = False
        if not same:
            f.close()
            return None
        return f

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()

    def __del__(self) -> None:  # what no read took (a plan never read) is closed with it
        self.close()


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


@dataclass(frozen=True, slots=True)
class WrittenPolicy:
    """What wrote the files' clock: COMMIT_ORDER, WRITESET, WRITESET_SESSION, MariaDB, or none."""

    name: Policy
    evidence: str
    server_version: str = ""
    mariadb: bool = False


def _by_server(version: str, mariadb: bool) -> WrittenPolicy | None:
    """The policy when the server alone decides it: MariaDB, or MySQL 8.4+ (WRITESET only)."""
    if mariadb:
        return WrittenPolicy(Policy.MARIADB, "MariaDB binlog: group commit ids, no logical clock", version, True)
    if writeset_only(version_tuple(version)):
        return WrittenPolicy(Policy.WRITESET, writeset_only_note(version), version)
    return None


def judge_sample(summary: FileSummary | None, sampled) -> WrittenPolicy:
    """The policy that wrote the clock, judged from a sample of it (``sampled``: ``(transaction,
    None)`` per clocked transaction, ``(None, summary)`` at each file's first one; ``summary``:
    the first file's, for its server), as :func:`.read.detect_written_policy` reads it.

    8.4+ servers only have WRITESET. Otherwise COMMIT_ORDER's ``last_committed`` is the
    committed prefix at prepare time, so it hardly ever goes down from one transaction to the
    next, and with one session it is always ``sequence_number - 1``; WRITESET's goes down
    whenever a transaction conflicts with nothing recent. WRITESET_SESSION additionally never
    lets a transaction start before its session's previous one."""
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


@dataclass(frozen=True)
class ClockOptions:
    """How a run's clocks are derived, built whole (a variant is a ``dataclasses.replace``)."""

    history_size: int | None = None          # None: the server version's default
    commit_order: CommitOrderInput = CommitOrderInput.AUTO
    catalog: Catalog | None = None
    use_binlog_ddl: bool = True
    labels: bool = False                     # readable row keys per hash (hot-row reports)
    what_if: WhatIf | None = None            # schema changes to evaluate (advisor)
    written: WrittenPolicy | None = None     # known from the server's variables (live mode)
    windows: dict | None = None              # path -> binlog.window.Window (mysqlbinlog's options)
    opened: OpenFiles | None = None          # the files the detection of ``written`` kept open


@dataclass(frozen=True, slots=True)
class ClockRun:
    """The plan of one read (:func:`.read.prepare`): the policy that wrote the clock, the history size
    and commit-order input the clocks are derived with, the windows, and the files the
    detection kept open. The read's state and results are the read pipeline's
    (:func:`.read.read`)."""

    written: WrittenPolicy
    history_size: int
    commit_order: CommitOrderInput
    windows: dict | None = None
    opened: OpenFiles | None = None


def commit_order_for(written: WrittenPolicy, requested: CommitOrderInput | str) -> CommitOrderInput:
    requested = CommitOrderInput(requested)
    if requested != CommitOrderInput.AUTO:
        return requested
    return CommitOrderInput.FLUSH_GROUPS if written.name in WRITESET_BASED else CommitOrderInput.RECORDED
