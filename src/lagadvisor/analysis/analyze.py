"""``lagadvisor analyze``: per-file and total statistics gathered in one streaming pass.

The native core reads the run when it can (:mod:`.native`, called from here); the reference
below reads it otherwise. The results' types live in :mod:`.results`."""

from __future__ import annotations

from typing import Callable, Iterable

from ..binlog import FileSummary, Transaction
from ..depgraph.clock import ClockStats
from ..depgraph.pipeline import ClockOptions, ClockRun, prepare, run_clocks
from ..depgraph.policies import POLICIES, Computed
from ..native import readable as native_readable
from ..writeset.extract import Writeset
from .native import analyze_native
from .results import TOP_N, Analysis, FileAnalysis, PolicyResults, Totals

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
    if on_transaction is None and observe is None and native_readable(paths):
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
            if files:  # the previous file is done: its lags become their summary
                files[-1].totals.lags.freeze()
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
    if files:
        files[-1].totals.lags.freeze()
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


__all__ = ["TOP_N", "Analysis", "FileAnalysis", "PolicyResults", "Totals", "analyze"]
