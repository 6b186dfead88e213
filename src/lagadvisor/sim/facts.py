"""The simulation's input, :class:`~.build.TrxFacts` per transaction, for a run of files.

Read by the native core when it is available (``Analyzer.collect_facts``: one column per fact,
kept while it reads, see ``native/src/reader/mod.rs``); otherwise, and whenever the native core
gives the run back (``NativeFallback``: MariaDB, gzip, a key it does not hash, an error...),
by the reference: :func:`~.run.facts_of` over each transaction (:class:`ReferenceFacts`). The
read pipeline (:func:`lagadvisor.depgraph.read.read`) decides which. Both give the same facts
(``tests/native/test_facts.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..binlog import FileSummary
from ..depgraph.pipeline import ClockOptions, ClockRun
from ..depgraph.read import Collectors, ReadPolicy, ReadRequest, ReadResult, read
from .build import TrxFacts, fact_column  # noqa: F401  (fact_column: re-exported)
from .columns import FACT_COLUMNS, FactColumns, FactList  # noqa: F401  (re-exported)
from .run import ScanSizes, facts_of
from .store import spill_limit


@dataclass(frozen=True, slots=True)
class FactsRead:
    """The facts of a run (a ``sim.store.FactStore``, ``FactColumns`` or a ``TrxFacts`` list),
    the read's file summaries (their truncated-tail warnings) and the DDL it applied."""

    facts: object
    summaries: tuple[FileSummary, ...]
    applied: tuple = ()
    not_computed: int = 0   # transactions whose writeset could not be computed (Fallback.UNKNOWN_SCHEMA)


def not_computed_of(notes) -> int:
    """The transactions of a read whose WRITESET clocks repeat the commit-order input because
    their tables' keys are unknown (``AnalysisPolicies.not_computed``'s count, from the read's notes)."""
    return dict(notes.fallbacks).get("unknown_schema", 0) if notes is not None else 0


#: Transactions the reference gathers before it hands them to a store as columns.
REFERENCE_CHUNK = 65_536


class ReferenceFacts:
    """The reference's fold into facts (``Collectors.observe``): a repeated path is numbered by
    its last position, as ever. With a ``store`` (``sim.store.FactStore``) they go to it as
    columns every :data:`REFERENCE_CHUNK` transactions (fewer when ``sim.store.spill_limit`` is
    lower; :meth:`done` hands over the rest), so a
    long run the native core gave back (MariaDB, gzip...) spills to disk as the native core's
    does; without one they stay in :attr:`facts`."""

    def __init__(self, paths, store=None) -> None:
        self.index = {f: i for i, f in enumerate(paths)}
        self.scans = ScanSizes()
        self.facts: list[TrxFacts] = []
        self.store = store
        self.chunk = min(REFERENCE_CHUNK, max(1, spill_limit()))

    def observe(self, _s, t, ws, c) -> None:
        self.facts.append(facts_of(t, c, self.index.get(t.file, 0), self.scans.step(t, ws), ws.fk_checks,
                                   ws.index_entries))
        if self.store is not None and len(self.facts) >= self.chunk:
            self.done()

    def done(self):
        """Hand the facts gathered since the last chunk to the store; the store."""
        if self.facts:
            self.store.add(FactColumns.of_facts(self.facts))
            self.facts = []
        return self.store


def read_facts(paths: list[str], options: ClockOptions, run: ClockRun, on_progress=None) -> FactsRead:
    """Facts of every transaction of ``paths`` in binlog order (``run`` from ``prepare``;
    ``on_progress(file, offset)`` now and then while the native core reads); the native core
    hands them over file by file into a ``sim.store.FactStore`` (a long run spills to disk
    instead of growing in memory), the reference in chunks into another."""
    from .store import FactStore

    store = FactStore()
    ref = ReferenceFacts(paths, FactStore())
    r = read(ReadRequest(tuple(paths), options, run,
                         Collectors(facts=True, on_facts=lambda d: store.add(FactColumns.from_native(d)),
                                    observe=ref.observe), on_progress=on_progress))
    if r.native is not None:
        ref.store.close()
        return FactsRead(store, r.summaries, r.notes.applied, not_computed_of(r.notes))
    store.close()
    return FactsRead(ref.done(), r.summaries, r.notes.applied, not_computed_of(r.notes))


def fact_columns(paths: list[str], options: ClockOptions, run: ClockRun, policy: ReadPolicy = ReadPolicy()):
    """The run's facts as ``FactColumns`` (native) or a ``TrxFacts`` list (reference), in one
    :class:`FactsRead`; None where ``policy`` rules out the reader that would read."""
    ref = ReferenceFacts(paths)
    r: ReadResult | None = read(ReadRequest(tuple(paths), options, run, Collectors(facts=True, observe=ref.observe),
                                            policy))
    if r is None:
        return None
    facts = FactColumns.from_native(r.native.facts) if r.native is not None else ref.facts
    return FactsRead(facts, r.summaries, r.notes.applied, not_computed_of(r.notes))


def reference_facts(paths: list[str], run: ClockRun, options: ClockOptions | None = None) -> list[TrxFacts]:
    """The reference's facts (the tests and benchmarks that compare it with the native core)."""
    return fact_columns(paths, options or ClockOptions(), run, ReadPolicy(native=False)).facts


def native_facts(paths: list[str], options: ClockOptions, run: ClockRun) -> list[TrxFacts] | None:
    """The facts read by the native core, or None (unavailable, or it gave the run back)."""
    got = fact_columns(paths, options, run, ReadPolicy(reference=False))
    return None if got is None else got.facts.to_facts()


__all__ = ["FACT_COLUMNS", "FactColumns", "FactsRead", "ReferenceFacts", "fact_columns", "native_facts",
           "read_facts", "reference_facts"]
