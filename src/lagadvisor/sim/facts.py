"""The simulation's input, :class:`~.build.TrxFacts` per transaction, for a run of files.

Read by the native core when it is available (``Analyzer.collect_facts``: one column per fact,
kept while it reads, see ``native/src/reader/mod.rs``); otherwise, and whenever the native core
gives the run back (``NativeFallback``: MariaDB, gzip, a key it does not hash, an error...),
by the reference: :func:`~.run.facts_of` over :func:`~..depgraph.pipeline.run_clocks`. Both
give the same facts (``tests/native/test_facts.py``).
"""

from __future__ import annotations

from ..depgraph.pipeline import ClockOptions, ClockRun, run_clocks
from .build import TrxFacts, fact_column  # noqa: F401  (fact_column: re-exported)
from .columns import FACT_COLUMNS, FactColumns, FactList  # noqa: F401  (re-exported)
from .run import ScanSizes, facts_of

def read_facts(paths: list[str], options: ClockOptions, run: ClockRun, on_progress=None) -> list[TrxFacts]:
    """Facts of every transaction of ``paths`` in binlog order (``run`` from ``prepare``;
    ``on_progress(file, offset)`` now and then while the native core reads)."""
    store = native_fact_store(paths, options, run, on_progress)
    if store is not None:
        return store
    return reference_facts(paths, run)


def reference_facts(paths: list[str], run: ClockRun) -> list[TrxFacts]:
    """The reference read (a repeated path is numbered by its last position, as ever)."""
    index = {f: i for i, f in enumerate(paths)}
    scans = ScanSizes()
    return [facts_of(t, c, index.get(t.file, 0), scans.step(t, ws)) for t, ws, c in run_clocks(paths, run)]


def native_facts(paths: list[str], options: ClockOptions, run: ClockRun) -> list[TrxFacts] | None:
    """The facts read by the native core, or None (unavailable, or it gave the run back)."""
    cols = native_fact_columns(paths, options, run)
    return None if cols is None else cols.to_facts()


def native_fact_store(paths: list[str], options: ClockOptions, run: ClockRun, on_progress=None):
    """The run's facts in a ``sim.store.FactStore``, read by the native core and handed over
    file by file (a long run spills to disk instead of growing in memory); None when the core
    is unavailable or gives the run back."""
    from ..native import read_run
    from .store import FactStore

    store = FactStore()
    nr = read_run(paths, options, run, facts=True, on_facts=lambda d: store.add(FactColumns.from_native(d)),
                  on_progress=on_progress)
    if nr is None:
        store.close()
        return None
    run.summaries.extend(s for s, _ in nr.files)
    return store


def native_fact_columns(paths: list[str], options: ClockOptions, run: ClockRun) -> FactColumns | None:
    """The run's facts as columns, read by the native core; None when it is unavailable or
    gives the run back (the caller then reads it with :func:`reference_facts`)."""
    from ..native import read_run

    nr = read_run(paths, options, run, facts=True)
    if nr is None:
        return None
    run.summaries.extend(s for s, _ in nr.files)  # as run_clocks leaves them: the truncated-tail warnings
    return FactColumns.from_native(nr.analyzer.take_facts())


__all__ = ["FACT_COLUMNS", "FactColumns", "native_fact_columns", "native_facts", "read_facts", "reference_facts"]
