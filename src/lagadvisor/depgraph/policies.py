"""The source's dependency trackers, re-run over a binlog (sql/rpl_trx_tracking.cc).

MySQL chains its trackers: COMMIT_ORDER gives a commit parent, WRITESET may only lower it
(``std::min``), WRITESET_SESSION may then raise it to the session's previous transaction
(``Transaction_dependency_tracker::get_dependency``). Here each tracker is a small object with
the server's state; :class:`ClockComputer` runs them once per transaction and reports every
policy's ``last_committed`` together, so one pass answers "what would WRITESET give".

The commit-order parent is an input (it depends on prepare/commit instants the binlog does not
keep), chosen by a :class:`CommitOrderSource`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..binlog import Transaction
from ..binlog.transactions import statement_blocks
from ..kinds import POLICIES as _POLICIES, CommitOrderInput, Policy
from ..writeset.extract import Writeset
from ..versions import HISTORY_SIZE_DEFAULTS, history_size_default  # noqa: F401  (re-exported)

POLICIES = _POLICIES  # kinds.POLICIES: COMMIT_ORDER, WRITESET, WRITESET_SESSION


class Fallback(str, Enum):
    """Why WRITESET kept the commit-order parent for a transaction."""

    NO_PRIMARY_KEY = "no_primary_key"        # has_missing_keys: no reset
    DDL = "ddl"                              # DDL (an empty writeset): reset
    STATEMENT = "statement_based"            # statement-format DML: empty writeset: reset
    FK_PARENT = "fk_parent"                  # change to a table referenced by a foreign key: reset
    WRITESET_LIMIT = "writeset_limit"        # more hashes than history_size: reset
    HISTORY_FULL = "history_full"            # history capacity exceeded: parent kept, then reset
    EMPTY = "empty"                          # only BEGIN/COMMIT: no reset
    CTAS = "ctas"                            # CREATE TABLE ... SELECT (9.x): reset
    UNKNOWN_SCHEMA = "unknown_schema"        # keys not knowable here: conservative reset
    INCOMPLETE = "incomplete"                # half-written last transaction
    TOO_LARGE = "too_large"                  # more row images than the reader keeps: conservative reset
    EMPTY_WRITESET = "empty_writeset"        # no row hashed, yet not empty (XA COMMIT/ROLLBACK, DCL...): reset



# ----------------------------------------------------------------------------- commit order


class CommitOrderSource:
    """Base: yields the commit-order parent (relative) of each transaction."""

    name = CommitOrderInput.RECORDED

    def parent(self, t: Transaction, seq: int) -> int:
        raise NotImplementedError

    def reset_file(self) -> None:
        pass


class RecordedCommitOrder(CommitOrderSource):
    """The binlog was written under COMMIT_ORDER: its ``last_committed`` is the parent."""

    name = CommitOrderInput.RECORDED

    def parent(self, t: Transaction, seq: int) -> int:
        return t.last_committed if t.last_committed is not None else seq - 1


class SerialCommitOrder(CommitOrderSource):
    """Every transaction's commit-order parent is its predecessor (one client, or the
    writeset-only answer): ``--commit-order serial``."""

    name = CommitOrderInput.SERIAL

    def parent(self, t: Transaction, seq: int) -> int:
        return seq - 1


class FlushGroupCommitOrder(CommitOrderSource):
    """Estimate for a binlog written under WRITESET, whose recorded value is ``min(ws, co)``.

    ``immediate_commit_timestamp`` is taken per transaction while the flush-stage leader writes
    its group, so members of one flush group are microseconds apart and groups are separated by
    the sync and commit stages (hundreds of microseconds; measured on the sysbench fixture: gaps
    below 50 us within groups, above 100 us between them). A gap over ``gap_us`` starts a new
    group; a transaction's parent is the last transaction before its group, never below the
    recorded value. This over-estimates the true parent when a group prepared while the previous
    one was still committing, so the COMMIT_ORDER parallelism it yields is a lower bound.
    """

    name = CommitOrderInput.FLUSH_GROUPS
    gap_us = 100

    def __init__(self) -> None:
        self.reset_file()

    def reset_file(self) -> None:
        self._group_ts = None
        self._group_first = 1

    def parent(self, t: Transaction, seq: int) -> int:
        ts = t.immediate_commit_timestamp
        if self._group_ts is None or ts - self._group_ts > self.gap_us or ts < self._group_ts:
            self._group_first = seq
        self._group_ts = ts
        recorded = t.last_committed if t.last_committed is not None else 0
        return max(recorded, self._group_first - 1)


COMMIT_ORDER_SOURCES = {c.name: c for c in (RecordedCommitOrder, SerialCommitOrder, FlushGroupCommitOrder)}


# ----------------------------------------------------------------------------- writeset


@dataclass
class WritesetTracker:
    """``Writeset_trx_dependency_tracker``: history of hash -> last writer (relative seq)."""

    history_size: int
    history: dict[int, int] = field(default_factory=dict)
    history_start: int = 1
    resets: int = 0

    def reset_file(self) -> None:
        # Transaction_dependency_tracker::rotate(): m_writeset.rotate(1)
        self.history.clear()
        self.history_start = 1

    def dependency(self, seq: int, co: int, ws: Writeset, reason: Fallback | None) -> tuple[int, Fallback | None]:
        """Returns (parent, fallback). ``reason`` is a fallback already known from the
        transaction's kind (DDL, empty, ...)."""
        hashes = ws.hashes
        if reason is None:
            if ws.has_related_foreign_keys:
                reason = Fallback.FK_PARENT
            elif len(hashes) > self.history_size:
                reason = Fallback.WRITESET_LIMIT   # add_write_set: size() >= history_size
            elif not hashes and not ws.has_missing_keys:
                reason = Fallback.EMPTY_WRITESET
        usable = reason is None or reason == Fallback.EMPTY
        parent = co
        exceeds = False
        if usable:
            history = self.history
            exceeds = len(history) + len(hashes) > self.history_size
            last_parent = self.history_start
            for h in hashes:
                v = history.get(h)
                if v is not None:
                    if last_parent < v < seq:
                        last_parent = v
                    history[h] = seq
                elif not exceeds:
                    history[h] = seq
            if not ws.has_missing_keys:
                parent = min(last_parent, co)
            elif reason is None:
                reason = Fallback.NO_PRIMARY_KEY
        if exceeds or not usable:
            self.history.clear()
            self.history_start = seq
            self.resets += 1
            if exceeds and reason is None:
                reason = Fallback.HISTORY_FULL
        return parent, reason


@dataclass
class SessionTracker:
    """``Writeset_session_trx_dependency_tracker``: per-session last sequence number, never
    reset at rotation (rpl_context.h keeps it in the THD)."""

    last: dict[int, int] = field(default_factory=dict)

    def dependency(self, seq: int, parent: int, session: int | None) -> int:
        if session is None:
            return parent
        prev = self.last.get(session, 0)
        if prev != 0 and prev < seq:
            parent = max(parent, prev)
        self.last[session] = seq
        return parent


# ----------------------------------------------------------------------------- engine




def _kind_fallback(t: Transaction, ws: Writeset) -> Fallback | None:
    if t.incomplete:
        return Fallback.INCOMPLETE
    if t.row_changes_truncated:
        return Fallback.TOO_LARGE
    if t.ctas:
        return Fallback.CTAS
    if ws.unknown:
        return Fallback.UNKNOWN_SCHEMA
    if t.ddl:
        return Fallback.DDL
    if t.statement_based and not t.rows:
        return Fallback.STATEMENT
    if t.rows == 0:
        kinds = {s.kind for s in t.statements}
        if kinds <= {"BEGIN", "COMMIT", "ROLLBACK"} and not t.xa:
            return Fallback.EMPTY
        return Fallback.EMPTY_WRITESET
    return None


def _blocks(t: Transaction) -> bool:
    """is_trx_unsafe_for_parallel_slave(): admin statements and CREATE/ALTER/DROP DATABASE
    (8.0.4x+), and incidents, make later transactions wait (m_last_blocking_transaction)."""
    if t.incident:
        return True
    return any(statement_blocks(s.query) for s in t.statements)


@dataclass(frozen=True, slots=True)
class Computed:
    """Every policy's ``last_committed`` for one transaction, and WRITESET's fallback."""

    sequence_number: int
    commit_order: int
    writeset: int
    writeset_session: int
    fallback: Fallback | None

    def as_dict(self) -> dict[Policy, int]:
        return {Policy.COMMIT_ORDER: self.commit_order, Policy.WRITESET: self.writeset,
                Policy.WRITESET_SESSION: self.writeset_session}


class ClockComputer:
    """Runs the trackers over transactions in binlog order (files in order)."""

    def __init__(self, history_size: int, commit_order: CommitOrderSource) -> None:
        self.co_source = commit_order
        self.ws = WritesetTracker(history_size)
        self.session = SessionTracker()
        self._file: str | None = None
        self._seq = 0
        self._blocking = 0
        self.fallbacks: dict[Fallback, int] = {}
        self.fallback_tables: dict[tuple[str, str], int] = {}

    def step(self, t: Transaction, ws: Writeset) -> Computed:
        if t.file != self._file:
            self._file = t.file
            self._seq = 0
            self._blocking = 0
            self.ws.reset_file()
            self.co_source.reset_file()
        self._seq += 1
        seq = t.sequence_number if t.sequence_number else self._seq
        self._seq = seq
        co = self.co_source.parent(t, seq)
        if co != 0 and self._blocking > co:
            co = self._blocking
        if _blocks(t):
            self._blocking = seq
        reason = _kind_fallback(t, ws)
        wparent, reason = self.ws.dependency(seq, co, ws, reason)
        sparent = self.session.dependency(seq, wparent, t.thread_id)
        if reason is not None:
            self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
            tables = {Fallback.NO_PRIMARY_KEY: ws.missing_tables,
                      Fallback.FK_PARENT: ws.fk_parent_tables}.get(reason) or [s.table for s in t.tables] or ["-"]
            for name in tables:
                key = (reason.value, name)
                self.fallback_tables[key] = self.fallback_tables.get(key, 0) + 1
        return Computed(seq, co, wparent, sparent, reason)
