"""What ``analyze`` computes: per-file and total statistics and the re-derived clocks (filled
by the reference in :mod:`.analysis` or from the native counters in :mod:`.native_analysis`)."""

from __future__ import annotations

import heapq
from array import array
from collections import Counter
from dataclasses import dataclass, field

from ..binlog import FileSummary, Transaction
from ..depgraph.clock import ClockStats
from ..depgraph.pipeline import WrittenPolicy
from ..sim.run import percentile

TOP_N = 5


@dataclass
class Totals:
    """Statistics of a set of transactions (one file, or all files)."""

    transactions: int = 0
    rows: int = 0
    bytes: int = 0
    ddl: int = 0
    statement_based: int = 0
    xa: int = 0
    incidents: int = 0
    incomplete: int = 0
    first_ts_us: int | None = None
    last_ts_us: int | None = None
    recorded: ClockStats = field(default_factory=ClockStats)
    largest: list[tuple[int, int, str, str]] = field(default_factory=list)  # (bytes, rows, gtid, file@offset)
    tables: Counter = field(default_factory=Counter)          # rows per table
    sessions: set = field(default_factory=set)
    # Replica binlogs (log_replica_updates): original (source) vs immediate (this server) commit.
    lags_us: array = field(default_factory=lambda: array("q"))
    commit_ids: set = field(default_factory=set)

    def add(self, t: Transaction) -> None:
        self.transactions += 1
        self.rows += t.rows
        self.bytes += t.bytes
        self.ddl += t.ddl
        self.statement_based += t.statement_based
        self.xa += t.xa
        self.incidents += t.incident
        self.incomplete += t.incomplete
        ts = t.commit_ts_us or t.timestamp * 1_000_000
        if ts:
            if self.first_ts_us is None or ts < self.first_ts_us:
                self.first_ts_us = ts
            if self.last_ts_us is None or ts > self.last_ts_us:
                self.last_ts_us = ts
        self.recorded.add(t.file, t.last_committed, t.sequence_number)
        item = (t.bytes, t.rows, t.gtid or f"#{t.index}", f"{t.file}@{t.start_offset}")
        if len(self.largest) < TOP_N:
            heapq.heappush(self.largest, item)
        elif item > self.largest[0]:
            heapq.heapreplace(self.largest, item)
        for st in t.tables:
            self.tables[st.table] += st.rows
        if (t.original_commit_timestamp and t.immediate_commit_timestamp
                and t.original_commit_timestamp != t.immediate_commit_timestamp):
            self.lags_us.append(t.immediate_commit_timestamp - t.original_commit_timestamp)
        if t.thread_id is not None:
            self.sessions.add(t.thread_id)
        if t.commit_id is not None:
            self.commit_ids.add(t.commit_id)

    @property
    def span_seconds(self) -> float:
        if self.first_ts_us is None or self.last_ts_us is None:
            return 0.0
        return (self.last_ts_us - self.first_ts_us) / 1e6

    @property
    def tps(self) -> float:
        span = self.span_seconds
        return self.transactions / span if span > 0 else 0.0

    def observed_lag(self) -> dict[str, float] | None:
        """Lag seen by this server when the file is a replica's own binlog (p50/p99/max s)."""
        if not self.lags_us:
            return None
        v = sorted(self.lags_us)
        return {"transactions": len(v), "p50_seconds": percentile(v, 50) / 1e6,
                "p99_seconds": percentile(v, 99) / 1e6, "max_seconds": v[-1] / 1e6}

    def largest_sorted(self) -> list[tuple[int, int, str, str]]:
        return sorted(self.largest, reverse=True)


@dataclass
class FileAnalysis:
    summary: FileSummary
    totals: Totals


@dataclass
class PolicyResults:
    """The re-derived clocks: one :class:`ClockStats` per policy, fallbacks and what stayed unknown."""

    written: WrittenPolicy
    history_size: int
    commit_order: str
    clocks: dict[str, ClockStats]
    fallbacks: dict[str, int]
    fallback_tables: list[tuple[str, str, int]]   # (reason, table, transactions)
    unknown: list[tuple[str, int]]                # (what is unknown, transactions affected)
    caveats: list[tuple[str, int]]
    resets: int


@dataclass
class Analysis:
    files: list[FileAnalysis]
    total: Totals
    policies: PolicyResults | None = None
    ddl: list = field(default_factory=list, repr=False)  # (db, statement) followed, in order

    @property
    def warnings(self) -> list[str]:
        out = [w for f in self.files for w in f.summary.warnings]
        if self.policies is not None:
            out += [f"{what} ({n} transactions fell back)" for what, n in self.policies.unknown]
            out += [f"{what} ({n} transactions)" if "WRITESET may" in what
                    else f"{what}: WRITESET may overstate parallelism ({n} transactions)"
                    for what, n in self.policies.caveats]
        return out


__all__ = ["TOP_N", "Analysis", "FileAnalysis", "PolicyResults", "Totals"]
