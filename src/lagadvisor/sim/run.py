"""Sweeps: every clock x every worker count, with lag statistics against the source timeline."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field, replace

from ..binlog import Transaction
from ..depgraph.policies import Computed
from . import engine
from .build import WORKER_DEPENDENT, TrxFacts, base_columns, scheduler_input
from .engine import SimResult, simulate
from .lagstats import _lag_stats, _lag_stats_native, _lag_stats_python, lag_stats, percentile  # noqa: F401
from .model import CostModel, ReplicaConfig


def facts_of(t: Transaction, c: Computed, file_idx: int, scan_rows: int = 0, fk_checks: int = 0,
             index_entries: int = 0) -> TrxFacts:
    ins = sum(s.inserts for s in t.tables)
    upd = sum(s.updates for s in t.tables)
    dele = sum(s.deletes for s in t.tables)
    recorded = t.last_committed if t.last_committed is not None else c.commit_order
    return TrxFacts(file_idx, c.sequence_number, (recorded, c.commit_order, c.writeset, c.writeset_session),
                    t.commit_ts_us or t.timestamp * 1_000_000, ins, upd, dele, t.bytes,
                    tuple(sorted(t.databases)), t.commit_id, t.mariadb_flags, scan_rows, fk_checks,
                    index_entries, t.event_count)


class ScanSizes:
    """The table rows a row-based replica scans for each transaction: for every UPDATE or DELETE
    rows event on a table without any index (``Writeset.scans``), the table's size, taken as
    the larger of the size a server told (``information_schema.TABLES.TABLE_ROWS`` through
    ``--host``: the size now, which already counts what the binlog inserted) and the rows
    inserted minus deleted since the file's start — without a server a lower bound. Per file, so files can be read apart (``--jobs``, fleet) and give the
    same numbers; the native core computes the same (``FileState.net_rows``)."""

    def __init__(self) -> None:
        self.file: str | None = None
        self.net: dict[str, int] = {}

    def step(self, t: Transaction, ws) -> int:
        if t.file != self.file:
            self.file, self.net = t.file, {}
        net = self.net
        total = 0
        for table, events, known in ws.scans:
            total += events * max(known, net.get(table, 0))
        for st in t.tables:
            d = st.inserts - st.deletes
            if d:
                net[st.table] = net.get(st.table, 0) + d
        return total


@dataclass
class Row:
    """One cell of the policy x workers table."""

    policy: str
    workers: int
    preserve_commit_order: bool
    apply_seconds: float
    speedup: float
    lag_p50_seconds: float
    lag_p99_seconds: float
    lag_max_seconds: float
    seconds_above_threshold: float
    utilisation: float
    dependency_wait_seconds: float
    flushes: int
    lag_series: list[tuple[float, float]] = field(default_factory=list, repr=False)
    windows: list = field(default_factory=list, repr=False)   # sim.windows.LagWindow, in time order
    # 0: the lag percentiles are exact; else each is within this fraction (sim.stream's sketch)
    lag_relative_error: float = 0.0

    def as_json(self) -> dict:
        out = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()
               if k not in ("lag_series", "windows", "lag_relative_error")}
        if self.lag_relative_error:
            out["lag_relative_error"] = self.lag_relative_error
        if self.windows:
            out["windows"] = [w.as_json() for w in self.windows]
        return out


def window_for(facts: list[TrxFacts], window_s: float | None) -> float:
    """``--window``: as given, or for ``auto`` (None) chosen from the source's commit span."""
    from .windows import auto_window

    if window_s is not None:
        return window_s
    if getattr(facts, "last_ts", None) is not None:  # a FactStore knows its span
        return auto_window((facts.last_ts - facts.first_ts) / 1e6) if facts.first_ts else 0.0
    from .build import fact_column

    col = fact_column(facts, "commit_ts_us")
    ts = [v for v in col if v] if col is not None else [f.commit_ts_us for f in facts if f.commit_ts_us]
    return auto_window((max(ts) - min(ts)) / 1e6) if ts else 0.0


def sweep(facts: list[TrxFacts], policies: list[str], workers: list[int], cfg: ReplicaConfig,
          cost: CostModel, *, catch_up: bool = False, threshold_s: float = 1.0,
          window_s: float = 0.0, jobs: int = 1, on_cell=None) -> list[Row]:
    """Every (policy, workers) cell; with ``window_s`` (and arrivals at the source's commit
    times) each row also holds its lag per window of that length (:mod:`.windows`). Each cell
    is one pass over the facts (``sim.stream.run_summary``: chunk by chunk when they are
    columns), so a run of any length simulates in bounded memory; ``jobs`` > 1 runs that many
    cells at once on threads (the native engine runs without the GIL; the same rows)."""
    from .stream import first_ts_of, run_summary

    origin = first_ts_of(facts)
    cells = {}
    for policy in policies:
        for k, w in enumerate(workers):
            c = replace(cfg, workers=w)
            cells[(policy, w, True)] = (policy, c, window_s)
            if k == 0 and w != 1:  # the speedup's one-worker run
                cells[(policy, 1, False)] = (policy, replace(c, workers=1), 0.0)

    def one_cell(args):
        policy, c, win = args
        out = run_summary(facts, policy, c, cost, catch_up=catch_up, threshold_s=threshold_s, window_s=win,
                          origin_us=origin)
        if on_cell is not None:  # progress (``on_cell()`` after each simulation)
            on_cell()
        return out

    if jobs > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            done = dict(zip(cells, pool.map(one_cell, cells.values())))
    else:
        done = {k: one_cell(v) for k, v in cells.items()}
    rows = []
    for policy in policies:
        one = None
        for w in workers:
            res = done[(policy, w, True)]
            if one is None:
                one = res if w == 1 else done[(policy, 1, False)]
            rows.append(Row(policy, w, cfg.preserve_commit_order, res.apply_us / 1e6,
                            one.apply_us / res.apply_us if res.apply_us else 0.0, res.lag_p50_us / 1e6,
                            res.lag_p99_us / 1e6, res.lag_max_us / 1e6, res.above_us / 1e6,
                            res.utilisation, res.dependency_wait_us / 1e6, res.flushes, res.series, res.windows,
                            res.lag_relative_error))
    return rows
