"""``lagadvisor analyze``: per-file and total statistics gathered in one streaming pass.

The read pipeline (:mod:`lagadvisor.depgraph.read`) reads the run, by the native core when it
can (its counters become the analysis in :mod:`.native`), else by the reference, folded here
(:class:`Stats`). The results' types live in :mod:`.results`."""

from __future__ import annotations

from typing import Callable, Iterable

from ..binlog import FileSummary, Transaction
from ..depgraph.pipeline import ClockOptions
from ..depgraph.read import Collectors, ReadPolicy, ReadRequest, ReadResult, prepare, read
from ..depgraph.policies import Computed
from ..writeset.extract import Writeset
from .native import analysis_of, policy_results
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
    reads the run (same result either way: ``tests/native`` checks it)."""
    paths = list(paths)
    options = options or ClockOptions()
    run = prepare(paths, options)
    if on_transaction is None and on_progress is not None:
        def on_transaction(s, t, c):  # noqa: E306
            on_progress(t.file, t.end_offset)
    stats = Stats(on_transaction, observe)
    r = read(ReadRequest(tuple(paths), options, run, Collectors(observe=stats.observe),
                         ReadPolicy(native=on_transaction is None and observe is None), on_progress))
    return analysis_of(r) if r.native is not None else stats.analysis(r, paths)


class Stats:
    """The reference's fold into an :class:`Analysis` (``Collectors.observe``): per file and run
    totals (every policy's clock statistics are the read's, ``ClockNotes.clocks``);
    ``on_transaction``/``observe`` see each transaction too."""

    def __init__(self, on_transaction=None, observe=None) -> None:
        self.on_transaction, self.also = on_transaction, observe
        self.files: list[FileAnalysis] = []
        self.by_path: dict[str, FileAnalysis] = {}
        self.total = Totals()

    def observe(self, s: FileSummary, t: Transaction, ws: Writeset, c: Computed) -> None:
        fa = self.by_path.get(t.file)
        if fa is None:
            if self.files:  # the previous file is done: its totals become their summary
                self.files[-1].totals.freeze()
            fa = self.by_path[t.file] = FileAnalysis(s, Totals())
            self.files.append(fa)
        fa.totals.add(t)
        self.total.add(t)
        if self.on_transaction is not None:
            self.on_transaction(fa.summary, t, c)
        if self.also is not None:
            self.also(t, ws, c)

    def analysis(self, r: ReadResult, paths: list[str]) -> Analysis:
        """The analysis once the reference's read ``r`` is done."""
        files = self.files
        if files:
            files[-1].totals.freeze()
        for s in r.summaries:  # files without transactions still get their summary
            if s.path not in self.by_path:
                files.append(FileAnalysis(s, Totals()))
        order = {p: i for i, p in enumerate(paths)}
        files.sort(key=lambda f: order.get(f.summary.path, 0))
        return Analysis(files, self.total, policy_results(r), list(r.notes.applied))


__all__ = ["TOP_N", "Analysis", "FileAnalysis", "PolicyResults", "Stats", "Totals", "analyze"]
