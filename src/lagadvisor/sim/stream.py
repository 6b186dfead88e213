"""One simulation over a run's facts, as a summary: chunk by chunk through the native engine
(``_native.StreamSim``), so memory follows the chunk and the transactions in flight, not the
run; the lag statistics are gathered as the replica commits.

Lag percentiles are exact up to :func:`exact_lags` transactions (every commit time is kept and
the statistics are those of ``sim.run.lag_stats`` and ``sim.windows.lag_windows``). Past that
they come from a log-bucket sketch with a stated bound: each percentile is within
``SKETCH_ALPHA`` (0.1%) of the exact one (lags under 1 us: within 1 us); the maximum, the counts
and the time above the threshold stay exact, and the lag series keeps 200 to 400 points.
Chosen over an exact on-disk sort because a sweep runs tens of simulations over the run: one
pass each, no sort of tens of millions of lags each time. Without the native core the reference
engine simulates the whole run at once (it is the oracle, for inputs of test size) and the same
statistics come from :class:`ApproxLag` in Python.
"""

from __future__ import annotations

import math
import os
from array import array
from dataclasses import dataclass, field

from ..kinds import Applier, ReplicaMode
from . import engine
from .build import BASE_COLUMNS, WORKER_DEPENDENT, base_columns, native_base, scheduler_input
from .model import CostModel, ReplicaConfig
from .windows import LagWindow, lag_windows

#: Transactions whose lags are kept exactly (16 bytes each while the simulation runs).
DEFAULT_EXACT_LAGS = 1_048_576
SKETCH_ALPHA = 0.001
SKETCH_MIN_US = 1.0


def exact_lags() -> int:
    """``LAGADVISOR_EXACT_LAGS`` (tests make it small), else :data:`DEFAULT_EXACT_LAGS`."""
    v = os.environ.get("LAGADVISOR_EXACT_LAGS", "")
    return int(v) if v.isdigit() else DEFAULT_EXACT_LAGS


@dataclass
class SimSummary:
    """What a simulation leaves once it has run: ``SimResult``'s totals and the lag statistics
    (``lag_relative_error`` 0: exact; else the sketch's bound)."""

    workers: int
    apply_us: float
    busy_us: float
    dependency_wait_us: float
    worker_wait_us: float
    flushes: int
    transactions: int
    lag_p50_us: float = 0.0
    lag_p99_us: float = 0.0
    lag_max_us: float = 0.0
    above_us: float = 0.0
    series: list = field(default_factory=list, repr=False)   # [(commit s, lag s)], commit order
    chart: list = field(default_factory=list, repr=False)    # [[commit s, lag s]] for the advice chart
    windows: list = field(default_factory=list, repr=False)  # LagWindow, in time order
    lag_relative_error: float = 0.0
    commit_groups: int = 0      # the commit stage's groups (SimResult.commit_groups)
    switches: int = 0           # transactions on another worker than their predecessor's (SimResult.switches)

    @property
    def utilisation(self) -> float:
        slots = max(1, self.workers) * self.apply_us
        return self.busy_us / slots if slots > 0 else 0.0


def chunks_of(facts, names: tuple[str, ...] | None = None):
    """``(first index, FactColumns)`` chunks when the facts are columns (a ``FactStore`` or a
    native ``FactList``), else None; ``names``: only those columns are read back from a spilled
    store (the others are empty)."""
    if hasattr(facts, "chunks"):
        return facts.chunks(names)
    cols = getattr(facts, "columns", None)
    if cols is not None and len(cols) == len(facts):
        return iter([(0, cols)])
    return None


def first_ts_of(facts) -> int:
    v = getattr(facts, "first_ts", None)
    if v is not None:
        return v
    from .build import first_commit_ts

    return first_commit_ts(facts)


def run_summary(facts, clock: str, cfg: ReplicaConfig, cost: CostModel, *, catch_up: bool,
                threshold_s: float = 1.0, window_s: float = 0.0, origin_us: int = 0,
                chart: bool = False) -> SimSummary:
    """Simulate ``facts`` under ``clock`` and ``cfg`` (``sim.build.scheduler_input`` decides
    the scheduling from ``cfg.mode``); ``window_s`` > 0 (and not ``catch_up``) also cuts the lag
    into windows of the source's timeline from ``origin_us``; ``chart``: also the advice chart's
    points (``SimSummary.chart``)."""
    window_s = window_s if not catch_up else 0.0
    native = engine.NATIVE
    if native is None or not hasattr(native, "StreamSim"):
        return _reference(facts, clock, cfg, cost, catch_up, threshold_s, window_s, origin_us, chart)
    scost, f, b, m, spread = engine.native_work_args(cfg, cost)
    sim = native.StreamSim(cfg, scost, f, b, m, cost.switch_add_us(cfg.workers), exact_lags(), threshold_s * 1e6,
                           int(window_s * 1_000_000), origin_us, list(spread))
    if chunks_of(facts) is None:  # facts as TrxFacts: the whole input at once
        inp = scheduler_input(cfg.mode, facts, clock, cost, cfg.workers, catch_up=catch_up)
        sim.feed(inp.arrival_us.tobytes(), inp.work_us.tobytes(), inp.nbytes.tobytes(), inp.need.tobytes(),
                 inp.need_kind.tobytes(), inp.events.tobytes(), True)
    else:
        inputs = (_chunk_inputs(facts, clock, cost, catch_up) if cfg.mode == ReplicaMode.LOGICAL_CLOCK
                  else _mode_chunk_inputs(facts, cfg.mode, cost, cfg.workers, catch_up))
        for a, wk, nb, needs, kinds, ev in inputs:
            sim.feed(a, wk, nb, needs, kinds, ev, False)
    apply_us, busy, dep, wwait, flushes, groups, n, exact, approx, switches = sim.finish()
    s = SimSummary(max(0, cfg.workers), apply_us, busy, dep, wwait, flushes, n, commit_groups=groups,
                   switches=switches)
    if exact is not None:
        commit, arrival = array("d"), array("d")
        commit.frombytes(exact[0])
        arrival.frombytes(exact[1])
        _exact_stats(s, commit, arrival, threshold_s, window_s, origin_us, chart)
    else:
        p50, p99, mx, above, series, windows = approx
        _approx_stats(s, p50, p99, mx, above, series, windows, window_s, n)
    return s


def _chunk_inputs(facts, clock: str, cost: CostModel, catch_up: bool):
    """The engine's input chunk by chunk (bytes for ``StreamSim.feed``), built natively from
    the fact columns; kept on a store that has not spilled (a sweep or an advice report
    simulates the same input tens of times), rebuilt from the spill file otherwise."""
    from .build import CLOCKS, _CLOCK_COLUMNS

    native = engine.NATIVE
    col = _CLOCK_COLUMNS[CLOCKS.index(clock)]
    first = first_ts_of(facts)
    w = cost.work_weights()
    cache = getattr(facts, "sim_inputs", None)
    keep = cache is not None and not getattr(facts, "spilled", True)
    key = (col, catch_up, w, first)
    if keep and key in cache:
        yield from cache[key]
        return
    names = ("file_idx", "seq", col, *BASE_COLUMNS)
    chunks = facts.chunks(names) if hasattr(facts, "chunks") else chunks_of(facts)
    built = []
    state = (-1, 0, 0)
    for off, c in chunks:
        a, wk = native_base(native, c, w, catch_up, first)
        needs, state = native.sim_clock_needs(c.file_idx.tobytes(), c.seq.tobytes(), getattr(c, col).tobytes(),
                                              off, state)
        item = (a, wk, c.nbytes.tobytes(), needs, bytes(len(c)), c.events.tobytes())
        if keep:
            built.append(item)
        yield item
    if keep:
        cache[key] = built


def _mode_chunk_inputs(facts, mode: ReplicaMode, cost: CostModel, workers: int, catch_up: bool):
    """As :func:`_chunk_inputs` for the DATABASE and MariaDB modes: each chunk's base columns
    built natively, its needs taken from the mode's rows (``sim.build.mode_needs``, one pass
    over the run beside the chunks), so memory follows the chunk here too."""
    from .build import mode_needs, take_needs

    native = engine.NATIVE
    rows = mode_needs(mode, facts, workers)
    first, w = first_ts_of(facts), cost.work_weights()
    chunks = facts.chunks(("seq", *BASE_COLUMNS)) if hasattr(facts, "chunks") else chunks_of(facts)
    for _, c in chunks:
        a, wk = native_base(native, c, w, catch_up, first)
        work = array("d")
        work.frombytes(wk)
        needs, kinds = take_needs(rows, len(work), work)
        yield a, work.tobytes(), c.nbytes.tobytes(), needs.tobytes(), kinds.tobytes(), c.events.tobytes()


def _exact_stats(s: SimSummary, commit: array, arrival: array, threshold_s: float, window_s: float,
                 origin_us: int, chart: bool) -> None:
    from .engine import SimResult
    from .lagstats import lag_stats

    res = SimResult(s.workers, s.apply_us, commit, arrival)
    p50, p99, mx, above, series = lag_stats(res, threshold_s)
    s.lag_p50_us, s.lag_p99_us, s.lag_max_us, s.above_us, s.series = p50 * 1e6, p99 * 1e6, mx * 1e6, above * 1e6, series
    if chart:
        s.chart = chart_points(commit, arrival)
    if window_s:
        s.windows = lag_windows(arrival, commit, window_s, threshold_s, origin_us)


def chart_points(commit: array, arrival: array) -> list[list[float]]:
    """report.advice's points: (commit, lag) pairs sorted by (commit, lag), every len // 200-th,
    in seconds. Commits come in order (commit order preserved, or a run that happens to keep
    it): then only the ties of each point are sorted, not the whole run."""
    n = len(commit)
    step = max(1, n // 200)
    if any(commit[i] < commit[i - 1] for i in range(1, n)):
        pairs = sorted(zip(commit, (c - a for c, a in zip(commit, arrival))))
        return [[round(c / 1e6, 6), round(lag / 1e6, 6)] for c, lag in pairs[::step]]
    out, ties = [], {}
    for k in range(0, n, step):
        c = commit[k]
        lo = k
        while lo > 0 and commit[lo - 1] == c:
            lo -= 1
        if lo not in ties:  # the commits equal to this one, their lags sorted (once per tie)
            hi = k + 1
            while hi < n and commit[hi] == c:
                hi += 1
            ties = {lo: sorted(commit[j] - arrival[j] for j in range(lo, hi))}
        out.append([round(c / 1e6, 6), round(ties[lo][k - lo] / 1e6, 6)])
    return out


def _approx_stats(s: SimSummary, p50, p99, mx, above, series, windows, window_s: float, n: int) -> None:
    s.lag_p50_us, s.lag_p99_us, s.lag_max_us, s.above_us = p50, p99, mx, above
    s.series = [(round(c / 1e6, 6), round(lag / 1e6, 6)) for c, lag in series]
    s.chart = [[c, lag] for c, lag in s.series]
    w = int(window_s * 1_000_000)
    s.windows = [LagWindow(start, start + w, cnt, wp99 / 1e6, wmax / 1e6, wabove / 1e6)
                 for start, cnt, wp99, wmax, wabove in windows]
    s.lag_relative_error = SKETCH_ALPHA


def _reference(facts, clock, cfg, cost, catch_up, threshold_s, window_s, origin_us, chart) -> SimSummary:
    """The reference engine over the whole run, and the same statistics."""
    inp = scheduler_input(cfg.mode, facts, clock, cost, cfg.workers, catch_up=catch_up,
                          base=base_columns(facts, cost, catch_up=catch_up))
    res = engine.simulate(inp, cfg, cost)
    n = len(inp)
    s = SimSummary(max(0, cfg.workers), res.apply_us, res.busy_us, res.dependency_wait_us, res.worker_wait_us,
                   res.flushes, n, commit_groups=res.commit_groups, switches=res.switches)
    commit = res.commit_us if isinstance(res.commit_us, array) else array("d", res.commit_us)
    arrival = res.arrival_us if isinstance(res.arrival_us, array) else array("d", res.arrival_us)
    if n <= exact_lags():
        _exact_stats(s, commit, arrival, threshold_s, window_s, origin_us, chart)
        return s
    acc = ApproxLag(exact_lags(), threshold_s * 1e6, int(window_s * 1_000_000), origin_us)
    for i in sorted(range(n), key=lambda i: (commit[i], i)):
        acc.take(commit[i], arrival[i])
    p50, p99, mx, above, series, windows = acc.result()
    _approx_stats(s, p50, p99, mx, above, series, windows, window_s, n)
    return s


class _Part:
    __slots__ = ("zeros", "zero_max", "buckets", "n", "min", "max", "above", "prev")

    def __init__(self) -> None:
        self.zeros, self.zero_max, self.buckets, self.n = 0, 0.0, {}, 0
        self.min = self.max = 0.0
        self.above, self.prev = 0.0, None

    def add(self, c: float, lag: float, threshold: float, lg: float) -> None:
        if self.prev is not None and self.prev[1] > threshold:
            self.above += c - self.prev[0]
        self.prev = (c, lag)
        if self.n == 0 or lag < self.min:
            self.min = lag
        if self.n == 0 or lag > self.max:
            self.max = lag
        self.n += 1
        if lag <= SKETCH_MIN_US:
            if self.zeros == 0 or lag > self.zero_max:
                self.zero_max = lag
            self.zeros += 1
        else:
            k = math.ceil(math.log(lag) / lg)
            self.buckets[k] = self.buckets.get(k, 0) + 1

    def quantile(self, p: float, lg: float) -> float:
        if self.n == 0:
            return 0.0
        last = self.n - 1
        rank = min(last, max(0, int(round(p / 100.0 * last))))
        if rank < self.zeros:
            return self.zero_max
        cum, gamma = self.zeros, math.exp(lg)
        for k in sorted(self.buckets):
            cum += self.buckets[k]
            if rank < cum:
                return min(max(2.0 * math.exp(k * lg) / (gamma + 1.0), self.min), self.max)
        return self.max


class ApproxLag:
    """The reference of the native ``LagAcc`` past its cap, fed in (commit, index) order."""

    def __init__(self, cap: int, threshold_us: float, window_us: int, origin_us: int) -> None:
        self.threshold, self.window_us, self.origin_us = threshold_us, window_us, origin_us
        self.lg = math.log((1.0 + SKETCH_ALPHA) / (1.0 - SKETCH_ALPHA))
        self.total = _Part()
        self.windows: dict[int, _Part] = {}
        self.series: list[tuple[int, float, float]] = []
        self.step = max(1, cap // 200)
        self.k = 0

    def take(self, c: float, a: float) -> None:
        lag = c - a
        self.total.add(c, lag, self.threshold, self.lg)
        if self.window_us > 0:
            w = self.window_us
            start = (int(a) + self.origin_us) // w * w
            self.windows.setdefault(start, _Part()).add(c, lag, self.threshold, self.lg)
        if self.k % self.step == 0:
            self.series.append((self.k, c, lag))
            if len(self.series) > 400:
                self.step *= 2
                self.series = [p for p in self.series if p[0] % self.step == 0]
        self.k += 1

    def result(self):
        lg = self.lg
        t = self.total
        return (t.quantile(50.0, lg), t.quantile(99.0, lg), t.max, t.above,
                [(c, lag) for _, c, lag in self.series],
                [(start, p.n, p.quantile(99.0, lg), p.max, p.above) for start, p in sorted(self.windows.items())])


__all__ = ["ApproxLag", "DEFAULT_EXACT_LAGS", "SimSummary", "chunks_of", "exact_lags", "run_summary"]
