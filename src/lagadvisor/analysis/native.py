"""``analyze`` from a native read: the same :class:`~.results.Analysis`, built from the
counters the native analyzer keeps (``ReadResult.native``, from the read pipeline
:mod:`lagadvisor.depgraph.read`). Called by :func:`.analyze.analyze` (and by the commands that
want more from the same read); imports nothing from it.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Callable

from ..depgraph.clock import ClockStats
from ..depgraph.pipeline import ClockOptions, ClockRun
from ..depgraph.read import ReadPolicy, ReadRequest, ReadResult, read
from .results import Analysis, FileAnalysis, LagDigest, PolicyResults, Totals

if TYPE_CHECKING:
    from ..native.results import NativeTotals


def _totals(n: NativeTotals) -> Totals:
    return Totals(transactions=n.transactions, rows=n.rows, bytes=n.bytes, ddl=n.ddl,
                  statement_based=n.statement_based, xa=n.xa, incidents=n.incidents, incomplete=n.incomplete,
                  first_ts_us=n.first_ts_us, last_ts_us=n.last_ts_us, recorded=ClockStats.from_native(n.recorded),
                  largest=list(n.largest), tables=Counter(dict(n.tables)), lags=LagDigest.from_native(n.lags))


def analysis_of(r: ReadResult) -> Analysis:
    """The :class:`Analysis` from a finished native read (``ReadResult.native``)."""
    files = [FileAnalysis(summary, _totals(f.totals)) for summary, f in r.native.files]
    for f in files:
        f.totals.lags.freeze()
    return Analysis(files, _totals(r.native.stats.total), policy_results(r), list(r.notes.applied))


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
