"""``lagadvisor analyze``: per-file and total statistics gathered in one streaming pass."""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..binlog import FileSummary, Transaction, read_transactions
from ..binlog.transactions import ColumnSelector
from ..depgraph.clock import ClockStats

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

    def largest_sorted(self) -> list[tuple[int, int, str, str]]:
        return sorted(self.largest, reverse=True)


@dataclass
class FileAnalysis:
    summary: FileSummary
    totals: Totals


@dataclass
class Analysis:
    files: list[FileAnalysis]
    total: Totals

    @property
    def warnings(self) -> list[str]:
        return [w for f in self.files for w in f.summary.warnings]


def analyze(paths: Iterable[str], selector: ColumnSelector | None = None,
            on_transaction: Callable[[FileSummary, Transaction], None] | None = None) -> Analysis:
    """Read every file in order; ``on_transaction`` sees each transaction (progress, export)."""
    files: list[FileAnalysis] = []
    total = Totals()
    for path in paths:
        summary = FileSummary(path)
        totals = Totals()
        for t in read_transactions(path, summary, selector):
            totals.add(t)
            total.add(t)
            if on_transaction is not None:
                on_transaction(summary, t)
        files.append(FileAnalysis(summary, totals))
    return Analysis(files, total)
