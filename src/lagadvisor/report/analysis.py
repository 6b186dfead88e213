"""``lagadvisor analyze``: per-file and total statistics gathered in one streaming pass."""

from __future__ import annotations

import heapq
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..binlog import FileSummary, Transaction
from ..depgraph.clock import ClockStats
from ..depgraph.pipeline import ClockOptions, ClockRun, WrittenPolicy, prepare, run_clocks
from ..depgraph.policies import POLICIES, Computed
from ..sim.run import percentile
from ..native import readable as native_readable
from ..writeset.extract import Writeset

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


def analyze(paths: Iterable[str], options: ClockOptions | None = None,
            on_transaction: Callable[[FileSummary, Transaction, Computed], None] | None = None,
            observe: Callable[[Transaction, Writeset, Computed], None] | None = None,
            on_progress: Callable[[str, int], None] | None = None) -> Analysis:
    """Read every file in order and re-derive every policy's clock; ``on_transaction`` sees each
    transaction with its computed clocks (export), ``observe`` also its writeset (graph,
    simulation facts); ``on_progress(file, offset)`` is called now and then (progress bars).

    Without ``on_transaction``/``observe`` the native core reads local files when it is
    available; whenever it meets input it does not handle exactly it gives up and the reference
    below reads the run (same result either way: ``tests/native`` checks it)."""
    paths = list(paths)
    options = options or ClockOptions()
    run: ClockRun = prepare(paths, options)
    if on_transaction is None and observe is None and not options.labels and native_readable(paths):
        from .native_analysis import analyze_native

        result = analyze_native(paths, options, run, on_progress)
        if result is not None:
            return result
    if on_transaction is None and on_progress is not None:
        def on_transaction(s, t, c):  # noqa: E306
            on_progress(t.file, t.end_offset)
    files: list[FileAnalysis] = []
    by_path: dict[str, FileAnalysis] = {}
    total = Totals()
    clocks = {p: ClockStats() for p in POLICIES}
    for t, ws, c in run_clocks(paths, run):
        fa = by_path.get(t.file)
        if fa is None:
            fa = by_path[t.file] = FileAnalysis(run.summaries[-1], Totals())
            files.append(fa)
        fa.totals.add(t)
        total.add(t)
        for name, lc in c.as_dict().items():
            clocks[name].add(t.file, lc, c.sequence_number)
        if on_transaction is not None:
            on_transaction(fa.summary, t, c)
        if observe is not None:
            observe(t, ws, c)
    for s in run.summaries:  # files without transactions still get their summary
        if s.path not in by_path:
            files.append(FileAnalysis(s, Totals()))
    order = {p: i for i, p in enumerate(paths)}
    files.sort(key=lambda f: order.get(f.summary.path, 0))
    comp = run.computer
    policies = PolicyResults(
        run.written, run.history_size, run.commit_order, clocks,
        {k.value: v for k, v in sorted(comp.fallbacks.items(), key=lambda kv: (-kv[1], kv[0].value))},
        sorted(((r, t, n) for (r, t), n in comp.fallback_tables.items()), key=lambda x: (-x[2], x[0], x[1])),
        sorted(run.tracker.unknown.items(), key=lambda kv: (-kv[1], kv[0])),
        sorted(run.tracker.caveats.items(), key=lambda kv: (-kv[1], kv[0])),
        comp.ws.resets,
    )
    return Analysis(files, total, policies, list(run.tracker.applied))
