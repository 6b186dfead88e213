"""``analyze`` from a native read: the same :class:`~.results.Analysis`, built from the
counters the native analyzer keeps (``ReadResult.native``, from the read pipeline
:mod:`lagadvisor.depgraph.read`). Called by :func:`.analyze.analyze` (and by the commands that
want more from the same read); imports nothing from it.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from ..depgraph.clock import ClockStats
from ..depgraph.pipeline import ClockOptions, ClockRun
from ..depgraph.read import ReadPolicy, ReadRequest, ReadResult, read
from ..kinds import Policy
from .results import Analysis, FileAnalysis, LagDigest, PolicyResults, Totals


def _totals(d: dict) -> Totals:
    t = Totals()
    for name in ("transactions", "rows", "bytes", "ddl", "statement_based", "xa", "incomplete"):
        setattr(t, name, d[name])
    t.incidents = d["incidents"]
    t.first_ts_us = d["first_ts_us"]
    t.last_ts_us = d["last_ts_us"]
    t.recorded = ClockStats.from_native(d[Policy.RECORDED])
    t.largest = list(d["largest"])
    t.tables = Counter(dict(d["tables"]))
    t.lags = LagDigest.from_native(d["lags"])
    return t


def analysis_of(r: ReadResult) -> Analysis:
    """The :class:`Analysis` from a finished native read (``ReadResult.native``)."""
    files = [FileAnalysis(summary, _totals(d["totals"])) for summary, d in r.native.files]
    for f in files:
        f.totals.lags.freeze()
    return Analysis(files, _totals(r.native.stats["total"]), policy_results(r), list(r.notes.applied))


def policy_results(r: ReadResult) -> PolicyResults:
    """The policies' results of a read (either reader's): its plan, its clocks' statistics and
    what deriving them counted."""
    n, run = r.notes, r.run
    return PolicyResults(run.written, run.history_size, run.commit_order, dict(n.clocks), dict(n.fallbacks),
                         list(n.fallback_tables), list(n.unknown), list(n.caveats), n.resets)


def analyze_native(paths: list[str], options: ClockOptions, run: ClockRun,
                   on_progress: Callable[[str, int], None] | None = None) -> Analysis | None:
    """``analyze`` by the native core alone, or None (unavailable, or it gave the run back):
    the tests that compare it with the reference."""
    r = read(ReadRequest(tuple(paths), options, run, policy=ReadPolicy(reference=False), on_progress=on_progress))
    return None if r is None else analysis_of(r)


__all__ = ["analysis_of", "analyze_native", "policy_results"]
