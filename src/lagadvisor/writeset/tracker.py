"""Keeping table knowledge current while a binlog streams by, and turning it into writesets.

Knowledge sources, best first: a live server or a schema file (given up front, in the
:class:`~lagadvisor.schema.model.Catalog`), the CREATE/ALTER/DROP statements in the binlog
itself (applied as their transactions go by), and ``binlog_row_metadata=FULL`` table maps
(primary key only). Whatever stays unknown is recorded per table in :attr:`KeyTracker.unknown`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from ..binlog.constants import FieldType as T
from ..binlog.events import MariadbGtid
from ..binlog.rows import TableMap
from ..binlog.transactions import Transaction
from ..kinds import Caveat, CaveatKind
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


@dataclass(frozen=True)
class WhatIf:
    """Schema changes to evaluate (the advisor's "simulated effect"), by lower-case ``db.table``.

    ``add_primary_key``: a table without a primary key gets one, estimated as its NOT NULL
    non-BLOB columns together (a generated invisible primary key is a new column the row
    images do not have; rows equal in all those columns would collide, so this errs towards
    fewer parallel transactions). ``drop_foreign_keys_to``: the foreign keys referencing these
    parent tables are dropped (no child-side hashes, no parent fallback). ``ignore_rows``: row
    keys (hot-row labels, as the graph reports them) that no longer conflict, e.g. a counter
    row moved out of the transactions.
    """

    add_primary_key: frozenset[str] = frozenset()
    drop_foreign_keys_to: frozenset[str] = frozenset()
    ignore_rows: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.add_primary_key or self.drop_foreign_keys_to or self.ignore_rows)

    def schema(self, schema: TableSchema) -> TableSchema:
        if (schema.qualified_name.lower() not in self.add_primary_key
                or schema.effective_primary_key() is not None):
            return schema
        parts = tuple(KeyPart(c.name) for c in schema.columns
                      if not c.nullable and c.type not in _NOT_KEYABLE)
        if not parts:
            return schema
        return replace(schema, keys=(Key("PRIMARY", parts, primary=True),) + tuple(schema.keys))

    def plan(self, plan: TablePlan) -> TablePlan:
        if not self.drop_foreign_keys_to:
            return plan
        name = f"{plan.db}.{plan.table}".lower()
        fks = tuple(f for f in plan.fks if f"{f.ref_db}.{f.ref_table}".lower() not in self.drop_foreign_keys_to)
        parent = plan.fk_parent and name not in self.drop_foreign_keys_to
        probes = tuple(p for p in plan.fk_probes if p[2] not in self.drop_foreign_keys_to)
        if fks == plan.fks and parent == plan.fk_parent and probes == plan.fk_probes:
            return plan
        return replace(plan, fks=fks, fk_parent=parent, fk_probes=probes)


_NOT_KEYABLE = frozenset({"tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob",
                          "longblob", "json", "geometry", "vector"})


def own_rows_hash(where: int) -> int:
    """The one hash a what-if leaves a transaction whose every row it took out (``ignore_rows``):
    it still writes rows, now shared with no one. Left with no hash it read as DDL (MySQL:
    an empty writeset cannot use writesets) and reset the history, so "without the hot rows"
    simulated slower than with them. Unique per transaction of a file (``where``: its start
    offset), far from the hashes of real keys."""
    return -(1 << 63) + 1 + where


class KeyTracker:
    """Column selector for the reader and writeset builder for the policies."""

    def __init__(self, catalog: Catalog | None = None, *, use_binlog_ddl: bool = True,
                 labels: bool = False, what_if: WhatIf | None = None) -> None:
        self.labels = labels
        self.what_if = what_if or WhatIf()
        self.catalog = catalog if catalog is not None else Catalog()
        self.use_binlog_ddl = use_binlog_ddl
        self._plans: dict[tuple[str, str], tuple[int, int, TablePlan | str]] = {}
        self._current: dict[str, TablePlan | str] = {}
        self.unknown: Counter[Caveat] = Counter()      # reason -> transactions affected
        self.caveats: Counter[Caveat] = Counter()
        self.ddl_errors: list[str] = []
        self.applied: list[tuple[str | None, str]] = []  # DDL statements followed, in order
        self.sources: dict[str, str] = {}          # table -> where its definition came from

    def _resolve(self, tm: TableMap) -> TablePlan | str:
        name = tm.qualified_name
        key = (tm.database_name, tm.table_name)
        cached = self._plans.get(key)
        if cached is not None and cached[0] == self.catalog.version and cached[1] == tm.column_count:
            return cached[2]
        schema, plan = self._schema(tm)
        if schema is not None:
            if self.what_if:
                schema = self.what_if.schema(schema)
            plan = self.what_if.plan(plan_table(schema, self.catalog, tm))
            self.sources[name] = schema.source
        self._plans[key] = (self.catalog.version, tm.column_count, plan)
        return plan

    def _schema(self, tm: TableMap) -> tuple[TableSchema | None, Caveat | str]:
        """The table's definition (the catalog's, else the one its table map carries), or None
        and why: a catalog definition whose column count the row images contradict is stale."""
        name = tm.qualified_name
        why = ""
        schema = self.catalog.get(tm.database_name, tm.table_name)
        if schema is not None and len(schema.columns) != tm.column_count:
            why = Caveat(f"schema of {name} has {len(schema.columns)} columns but its row images have "
                         f"{tm.column_count}: the definition is stale; pass --schema or --host",
                         {CaveatKind.SCHEMA_STALE}, name)
            schema = None
        if schema is None:
            schema = schema_from_table_map(tm)
            if schema is None:
                why = Caveat(f"schema of {name} unknown (created before this binlog, row metadata MINIMAL): "
                             "pass --schema FILE or --host", {CaveatKind.SCHEMA_UNKNOWN}, name)
        return schema, why

    def shadow(self, tm: TableMap) -> tuple[str, TablePlan] | None:
        """The table's plan under ``WhatIf(add_primary_key={it})`` when that what-if changes it
        (a table without a primary key), with the name the what-if matches: what the native
        core hashes alongside the plan, so the advisor's what-if needs no second read. Resolved
        as :meth:`_resolve` resolves the plan (same catalog, same fallback to the table map)."""
        if self.what_if:
            return None
        schema, _ = self._schema(tm)
        if schema is None:
            return None
        name = schema.qualified_name.lower()
        what_if = WhatIf(add_primary_key=frozenset({name}))
        changed = what_if.schema(schema)
        if changed is schema:
            return None
        return name, what_if.plan(plan_table(changed, self.catalog, tm))

    def select(self, tm: TableMap) -> frozenset[int]:
        """``ColumnSelector`` for the reader: decode just the key columns of each row image."""
        plan = self._resolve(tm)
        self._current[tm.qualified_name] = plan
        return plan.columns if isinstance(plan, TablePlan) else frozenset()

    def writeset(self, t: Transaction, *, labels: bool = False) -> Writeset:
        ignore = self.what_if.ignore_rows
        ws = transaction_writeset(t, self._current, labels=labels or self.labels or bool(ignore))
        if ignore and ws.hashes:
            kept = [(h, lab) for h, lab in zip(ws.hashes, ws.labels) if lab not in ignore]
            if not kept:
                kept = [(own_rows_hash(t.start_offset), "")]
            ws.hashes = [h for h, _ in kept]
            ws.labels = [lab for _, lab in kept] if (labels or self.labels) else []
        # CREATE TABLE ... SELECT: its rows are of the table it creates, unknown until `observe`
        # follows its DDL, and its writeset is never used (the `ctas` fallback resets): no caveat
        for u in () if t.ctas else ws.unknown:
            self.unknown[u] += 1
        for c in () if t.ctas else ws.caveats:
            self.caveats[c] += 1
        self._current = {}
        return ws

    def observe(self, t: Transaction) -> None:
        """Apply the transaction's DDL to the catalog (after its writeset was taken)."""
        if not (t.ddl and self.use_binlog_ddl):
            return
        if getattr(t, "mariadb_flags_extra", 0) & (MariadbGtid.FL_EXTRA_START_ALTER | MariadbGtid.FL_EXTRA_ROLLBACK_ALTER):
            return   # MariaDB's two-phase ALTER takes effect at its COMMIT ALTER, never at a rolled-back one
        for s in t.statements:
            if s.kind != "DDL":
                continue
            self.applied.append((s.db, s.query))
            try:
                apply_statement(self.catalog, s.query, s.db)
            except UnsupportedDDL as err:
                self.ddl_errors.append(f"{t.file}@{t.start_offset}: could not follow DDL ({err}): {s.query[:80]}")
