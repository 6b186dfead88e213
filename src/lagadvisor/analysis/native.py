"""``analyze`` through the native core: the same :class:`~.results.Analysis`, built from the
counters the native analyzer keeps (see :mod:`lagadvisor.native`). Called by
:func:`.analyze.analyze` (and by the commands that want more from the same read); imports
nothing from it.

Returns None when the native core is unavailable or gives up on the run (``NativeFallback``);
the caller then reads the run with the reference.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from ..depgraph.clock import ClockStats
from ..depgraph.pipeline import ClockOptions, ClockRun
from ..depgraph.policies import POLICIES
from ..kinds import Policy
from ..native import NativeRun, read_run
from .results import Analysis, FileAnalysis, LagDigest, PolicyResults, Totals


def _clock(d: dict) -> ClockStats:
    c = ClockStats()
    c.transactions = d["transactions"]
    c.barriers = d["barriers"]
    c.parallel = d["parallel"]
    c.distance_sum = d["distance_sum"]
    c.depth = d["depth"]
    c.histogram = Counter(d["histogram"])
    return c


def _totals(d: dict) -> Totals:
    t = Totals()
    for name in ("transactions", "rows", "bytes", "ddl", "statement_based", "xa", "incomplete"):
        setattr(t, name, d[name])
    t.incidents = d["incidents"]
    t.first_ts_us = d["first_ts_us"]
    t.last_ts_us = d["last_ts_us"]
    t.recorded = _clock(d[Policy.RECORDED])
    t.largest = list(d["largest"])
    t.tables = Counter(dict(d["tables"]))
    t.lags = LagDigest.from_native(d["lags"])
    return t


def analysis_of(nr: NativeRun, run: ClockRun) -> Analysis:
    """The :class:`Analysis` from a finished native read (:func:`lagadvisor.native.read_run`)."""
    files = [FileAnalysis(summary, _totals(r["totals"])) for summary, r in nr.files]
    for f in files:
        f.totals.lags.freeze()
    res = nr.analyzer.finish()
    # Values outside a collation's weight table, hashed through the bridge (counted in values).
    caveats = [*((nr.bridge.caveat(c), n) for c, n in res["caveats"]), *nr.approximated()]
    clocks = {name: _clock(c) for name, c in zip(POLICIES, res["clocks"])}
    policies = PolicyResults(
        run.written, run.history_size, run.commit_order, clocks,
        dict(sorted(res["fallbacks"].items(), key=lambda kv: (-kv[1], kv[0]))),
        sorted(res["fallback_tables"], key=lambda x: (-x[2], x[0], x[1])),
        sorted(((nr.bridge.caveat(c), n) for c, n in res["unknown"]), key=lambda kv: (-kv[1], kv[0])),
        sorted(caveats, key=lambda kv: (-kv[1], kv[0])),
        res["resets"],
    )
    return Analysis(files, _totals(res["total"]), policies, list(nr.tracker.applied))


def analyze_native(paths: list[str], options: ClockOptions, run: ClockRun,
                   on_progress: Callable[[str, int], None] | None, **collect) -> Analysis | None:
    """``analyze`` by the native core, or None (unavailable, or it gave the run back).
    ``collect`` goes to :func:`~lagadvisor.native.read_run` (facts, records, graph)."""
    pair = native_pass(paths, options, run, on_progress, **collect)
    return None if pair is None else pair[0]


def native_pass(paths: list[str], options: ClockOptions, run: ClockRun,
                on_progress: Callable[[str, int], None] | None = None, **collect) -> tuple[Analysis, NativeRun] | None:
    """The analysis and the native read it came from (for what else it collected). None at
    once for a MariaDB run: the native reader gives every MariaDB binlog back at its first FDE."""
    if getattr(getattr(run, "written", None), "mariadb", False):
        return None
    nr = read_run(paths, options, run, on_progress=on_progress, **collect)
    if nr is None:
        return None
    return analysis_of(nr, run), nr


__all__ = ["analysis_of", "analyze_native", "native_pass"]
