"""The simulation's input, :class:`~.build.TrxFacts` per transaction, for a run of files.

Read by the native core when it is available (``Analyzer.collect_facts``: one column per fact,
kept while it reads, see ``native/src/reader/mod.rs``); otherwise, and whenever the native core
gives the run back (``NativeFallback``: MariaDB, gzip, a key it does not hash, an error...),
by the reference: :func:`~.run.facts_of` over :func:`~..depgraph.pipeline.run_clocks`. Both
give the same facts (``tests/native/test_facts.py``).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from ..depgraph.pipeline import ClockOptions, ClockRun, run_clocks
from .build import TrxFacts, fact_column  # noqa: F401  (fact_column: re-exported)
from .run import ScanSizes, facts_of

#: The native columns, in ``TrxFacts`` order (``clocks`` = the four from recorded on).
FACT_COLUMNS = ("file_idx", "seq", "recorded", "commit_order", "writeset", "writeset_session",
                "commit_ts_us", "inserts", "updates", "deletes", "nbytes", "dbset", "scan_rows")


def read_facts(paths: list[str], options: ClockOptions, run: ClockRun) -> list[TrxFacts]:
    """Facts of every transaction of ``paths`` in binlog order (``run`` from ``prepare``)."""
    store = native_fact_store(paths, options, run)
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


@dataclass(frozen=True)
class FactColumns:
    """The facts of a run as columns (``array('q')`` each, one item per transaction, in binlog
    order), as the native core keeps them: what a columnar consumer (a native engine) can take
    without building a ``TrxFacts`` per transaction. ``dbset[i]`` indexes ``dbsets`` (each
    sorted, as ``TrxFacts.dbs``). MariaDB's ``commit_id`` is absent: the native core gives
    MariaDB binlogs to the reference."""

    file_idx: array
    seq: array
    recorded: array
    commit_order: array
    writeset: array
    writeset_session: array
    commit_ts_us: array
    inserts: array
    updates: array
    deletes: array
    nbytes: array
    dbset: array
    scan_rows: array
    dbsets: list[tuple[str, ...]]

    def __len__(self) -> int:
        return len(self.seq)

    @classmethod
    def from_native(cls, d: dict) -> "FactColumns":
        """From ``Analyzer.take_facts``: native int64 bytes per column, raw database names
        (decoded as the reference decodes them) and sets of name indices."""
        cols = {}
        for name in FACT_COLUMNS:
            a = array("q")
            a.frombytes(d[name])
            cols[name] = a
        names = [b.decode("utf-8", "surrogateescape") for b in d["db_names"]]
        return cls(**cols, dbsets=[tuple(sorted(names[i] for i in s)) for s in d["dbsets"]])

    def to_facts(self) -> "FactList":
        return FactList(self)

    def build(self) -> list[TrxFacts]:
        """One ``TrxFacts`` per transaction."""
        dbsets = self.dbsets
        return ([TrxFacts(fi, seq, (rec, co, ws, wss), ts, ins, upd, dele, nb, dbsets[k], None, 0, scan)
                for fi, seq, rec, co, ws, wss, ts, ins, upd, dele, nb, k, scan
                in zip(*(getattr(self, name) for name in FACT_COLUMNS))])


class FactList(Sequence):
    """The facts of a run read natively: a read-only sequence of ``TrxFacts`` built only when
    something reads them one by one, over the columns they come from (``columns``), which the
    simulation input (``sim.build.base_columns``, ``logical_clock``) and the advisor's sums read
    directly, with the same numbers (an advice report over 300k transactions never builds them)."""

    __slots__ = ("columns", "_items")

    def __init__(self, columns: FactColumns) -> None:
        self.columns = columns
        self._items: list[TrxFacts] | None = None

    def _all(self) -> list[TrxFacts]:
        if self._items is None:
            self._items = self.columns.build()
        return self._items

    def __len__(self) -> int:
        return len(self.columns)

    def __getitem__(self, i):
        return self._all()[i]

    def __iter__(self):
        return iter(self._all())

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FactList({len(self)} transactions)"


def native_fact_store(paths: list[str], options: ClockOptions, run: ClockRun):
    """The run's facts in a ``sim.store.FactStore``, read by the native core and handed over
    file by file (a long run spills to disk instead of growing in memory); None when the core
    is unavailable or gives the run back."""
    from ..native import read_run
    from .store import FactStore

    store = FactStore()
    nr = read_run(paths, options, run, facts=True, on_facts=lambda d: store.add(FactColumns.from_native(d)))
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
