"""Keeping table knowledge current while a binlog streams by, and turning it into writesets.

Knowledge sources, best first: a live server or a schema file (given up front, in the
:class:`~lagadvisor.schema.model.Catalog`), the CREATE/ALTER/DROP statements in the binlog
itself (applied as their transactions go by), and ``binlog_row_metadata=FULL`` table maps
(primary key only). Whatever stays unknown is recorded per table in :attr:`KeyTracker.unknown`.
"""

from __future__ import annotations

from collections import Counter

from ..binlog.constants import FieldType as T
from ..binlog.rows import TableMap
from ..binlog.transactions import Transaction
from ..schema.ddl import UnsupportedDDL, apply_statement
from ..schema.model import Catalog, Column, Key, KeyPart, TableSchema
from .collation import COLLATION_NAMES
from .extract import TablePlan, Writeset, plan_table, transaction_writeset

_TYPE_NAMES = {
    T.TINY: "tinyint", T.SHORT: "smallint", T.INT24: "mediumint", T.LONG: "int", T.LONGLONG: "bigint",
    T.FLOAT: "float", T.DOUBLE: "double", T.NEWDECIMAL: "decimal", T.DATE: "date", T.NEWDATE: "date",
    T.TIME: "time", T.TIME2: "time", T.DATETIME: "datetime", T.DATETIME2: "datetime",
    T.TIMESTAMP: "timestamp", T.TIMESTAMP2: "timestamp", T.YEAR: "year", T.BIT: "bit",
    T.JSON: "json", T.GEOMETRY: "geometry", T.ENUM: "enum", T.SET: "set", T.VECTOR: "vector",
}


def schema_from_table_map(tm: TableMap) -> TableSchema | None:
    """A partial definition from FULL row metadata: column names, types, collations and the
    primary key; unique and foreign keys are not in the binlog (``complete=False``)."""
    if tm.column_names is None:
        return None
    charsets = list(tm.column_charsets or ())
    cols = []
    ci = 0
    for i, name in enumerate(tm.column_names):
        t = tm.real_type(i)
        coll = None
        if t in (T.STRING, T.VARCHAR, T.VAR_STRING, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB):
            cid = charsets[ci] if ci < len(charsets) else None
            ci += 1
            if cid is None and tm.default_charset is not None:
                default, per = tm.default_charset
                cid = dict(per).get(ci - 1, default)
            coll = COLLATION_NAMES.get(cid, "binary" if cid == 63 else None) if cid is not None else None
            binary = coll in (None, "binary")
            if t == T.STRING:
                typ = "binary" if binary else "char"
            elif t in (T.VARCHAR, T.VAR_STRING):
                typ = "varbinary" if binary else "varchar"
            else:
                typ = "blob" if binary else "text"
            coll = None if binary else coll
        else:
            typ = _TYPE_NAMES.get(t, "other")
        cols.append(Column(name, typ, None, i in tm.unsigned_columns(), bool(tm.null_bits[i >> 3] & (1 << (i & 7))),
                           coll))
    keys: tuple[Key, ...] = ()
    if tm.primary_key:
        prefixes = tm.primary_key_prefixes or (0,) * len(tm.primary_key)
        keys = (Key("PRIMARY", tuple(KeyPart(tm.column_names[i], p or None)
                                     for i, p in zip(tm.primary_key, prefixes)), True),)
    return TableSchema(tm.database_name, tm.table_name, tuple(cols), keys, (), None, "row-metadata",
                       complete=False)


class KeyTracker:
    """Column selector for the reader and writeset builder for the policies."""

    def __init__(self, catalog: Catalog | None = None, *, use_binlog_ddl: bool = True,
                 labels: bool = False) -> None:
        self.labels = labels
        self.catalog = catalog if catalog is not None else Catalog()
        self.use_binlog_ddl = use_binlog_ddl
        self._plans: dict[tuple[str, str], tuple[int, int, TablePlan | str]] = {}
        self._current: dict[str, TablePlan | str] = {}
        self.unknown: Counter[str] = Counter()      # reason -> transactions affected
        self.caveats: Counter[str] = Counter()
        self.ddl_errors: list[str] = []
        self.sources: dict[str, str] = {}          # table -> where its definition came from

    def _resolve(self, tm: TableMap) -> TablePlan | str:
        name = tm.qualified_name
        key = (tm.database_name.lower(), tm.table_name.lower())
        cached = self._plans.get(key)
        if cached is not None and cached[0] == self.catalog.version and cached[1] == tm.column_count:
            return cached[2]
        schema = self.catalog.get(tm.database_name, tm.table_name)
        plan: TablePlan | str
        if schema is not None and len(schema.columns) != tm.column_count:
            plan = (f"schema of {name} has {len(schema.columns)} columns but its row images have "
                    f"{tm.column_count}: the definition is stale; pass --schema or --host")
            schema = None
        if schema is None:
            schema = schema_from_table_map(tm)
            if schema is None:
                plan = (f"schema of {name} unknown (created before this binlog, row metadata MINIMAL): "
                        "pass --schema FILE or --host")
        if schema is not None:
            plan = plan_table(schema, self.catalog, tm)
            self.sources[name] = schema.source
        self._plans[key] = (self.catalog.version, tm.column_count, plan)
        return plan

    def select(self, tm: TableMap) -> frozenset[int]:
        """``ColumnSelector`` for the reader: decode just the key columns of each row image."""
        plan = self._resolve(tm)
        self._current[tm.qualified_name] = plan
        return plan.columns if isinstance(plan, TablePlan) else frozenset()

    def writeset(self, t: Transaction, *, labels: bool = False) -> Writeset:
        ws = transaction_writeset(t, self._current, labels=labels or self.labels)
        for u in ws.unknown:
            self.unknown[u] += 1
        for c in ws.caveats:
            self.caveats[c] += 1
        self._current = {}
        return ws

    def observe(self, t: Transaction) -> None:
        """Apply the transaction's DDL to the catalog (after its writeset was taken)."""
        if not (t.ddl and self.use_binlog_ddl):
            return
        for s in t.statements:
            if s.kind != "DDL":
                continue
            try:
                apply_statement(self.catalog, s.query, s.db)
            except UnsupportedDDL as err:
                self.ddl_errors.append(f"{t.file}@{t.start_offset}: could not follow DDL ({err}): {s.query[:80]}")
