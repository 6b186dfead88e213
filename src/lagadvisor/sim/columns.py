"""The facts of a run as columns (``array('q')`` each), as the native reader keeps them, and a
read-only sequence of ``TrxFacts`` over them (built only when something reads them one by one)."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..kinds import CLOCKS

from .build import MARIADB_COLUMNS, TrxFacts, mariadb_column_values, mariadb_columns

if TYPE_CHECKING:
    from ..native.results import NativeFacts

#: The native columns, in ``TrxFacts`` order (``clocks`` = the four from recorded on): the fields
#: below, as ``native.results.NativeFacts.columns`` holds them.
FACT_COLUMNS = ("file_idx", "seq", *(c.column for c in CLOCKS),
                "commit_ts_us", "inserts", "updates", "deletes", "nbytes", "dbset", "scan_rows",
                "fk_checks", "index_entries", "events")


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
    fk_checks: array
    index_entries: array
    events: array
    dbsets: list[tuple[str, ...]]
    #: MariaDB's fields, read by the reference only (None: every transaction's ``commit_id`` None
    #: and ``mariadb_flags`` 0, as the native core's): :func:`mariadb_column_values`
    commit_id: array | None = None
    mariadb: array | None = None

    def __len__(self) -> int:
        return len(self.seq)

    @classmethod
    def of_facts(cls, facts: Sequence[TrxFacts]) -> "FactColumns":
        """The columns of ``TrxFacts`` (the reference's), their database sets numbered in order
        of appearance, MariaDB's fields kept (:data:`MARIADB_COLUMNS`) when any is set."""
        ids: dict[tuple[str, ...], int] = {}
        dbset = array("q", [ids.setdefault(f.dbs, len(ids)) for f in facts])
        cols = [array("q", [f.file_idx for f in facts]), array("q", [f.seq for f in facts])]
        cols += [array("q", [f.clocks[k] for f in facts]) for k in range(4)]
        cols += [array("q", [getattr(f, name) for f in facts]) for name in ("commit_ts_us", "inserts", "updates",
                                                                             "deletes", "nbytes")]
        cols += [dbset] + [array("q", [getattr(f, name) for f in facts]) for name in ("scan_rows", "fk_checks",
                                                                                       "index_entries", "events")]
        extra = {}
        if any(f.commit_id is not None or f.mariadb_flags for f in facts):
            pairs = [mariadb_column_values(f.commit_id, f.mariadb_flags) for f in facts]
            extra = {"commit_id": array("q", [p[0] for p in pairs]), "mariadb": array("q", [p[1] for p in pairs])}
        return cls(*cols, dbsets=list(ids), **extra)

    @classmethod
    def from_native(cls, f: NativeFacts) -> "FactColumns":
        """From ``Analyzer.take_facts``: its columns, and each set of database name indices as
        the sorted names."""
        names = f.db_names
        return cls(*f.columns, dbsets=[tuple(sorted(names[i] for i in s)) for s in f.dbsets])

    def to_facts(self) -> "FactList":
        return FactList(self)

    def build(self) -> list[TrxFacts]:
        """One ``TrxFacts`` per transaction."""
        dbsets = self.dbsets
        cids, flags = mariadb_columns(self)
        return [TrxFacts(fi, seq, (rec, co, ws, wss), ts, ins, upd, dele, nb, dbsets[k], cid, fl, scan, fk, ie, ev)
                for fi, seq, rec, co, ws, wss, ts, ins, upd, dele, nb, k, scan, fk, ie, ev, cid, fl
                in zip(*(getattr(self, name) for name in FACT_COLUMNS), cids, flags)]

    def names(self) -> tuple[str, ...]:
        """Its columns' names: :data:`FACT_COLUMNS`, and :data:`MARIADB_COLUMNS` when it has them."""
        return FACT_COLUMNS + (MARIADB_COLUMNS if self.commit_id is not None else ())


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


__all__ = ["FACT_COLUMNS", "MARIADB_COLUMNS", "FactColumns", "FactList"]
