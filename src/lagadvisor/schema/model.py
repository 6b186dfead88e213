"""Table definitions as the writeset code needs them: columns with types and collations,
PRIMARY/UNIQUE keys with their parts (prefix lengths), foreign keys, and which tables are
referenced by a foreign key (``TABLE_SHARE::foreign_key_parents`` in the server)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True, slots=True)
class Column:
    """``type`` is the lower-case base type (``int``, ``varchar``...); ``length`` in characters
    for strings, display/bytes otherwise; ``collation`` None for non-string columns."""

    name: str
    type: str
    length: int | None = None
    unsigned: bool = False
    nullable: bool = True
    collation: str | None = None
    charset: str | None = None
    generated: bool = False
    invisible: bool = False


@dataclass(frozen=True, slots=True)
class KeyPart:
    column: str
    prefix: int | None = None  # characters (strings) or bytes (binary); None = whole column


@dataclass(frozen=True, slots=True)
class Key:
    """A PRIMARY or UNIQUE index (the only ones that produce writeset hashes)."""

    name: str
    parts: tuple[KeyPart, ...]
    primary: bool = False
    functional: bool = False  # a part is an expression: not reproducible from row images


@dataclass(frozen=True, slots=True)
class ForeignKey:
    name: str
    columns: tuple[str, ...]
    ref_db: str
    ref_table: str
    ref_columns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TableSchema:
    db: str
    name: str
    columns: tuple[Column, ...]
    keys: tuple[Key, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    default_collation: str | None = None
    source: str = "unknown"   # server | schema-file | binlog-ddl | row-metadata
    complete: bool = True     # False when only part of the keys is known (row metadata: PK only)
    engine: str | None = None
    indexed: bool = False     # a non-unique index is known (KEY/INDEX, or one a FOREIGN KEY creates)
    indexes: tuple[Key, ...] = ()  # the non-unique KEY/INDEX definitions known (their entries cost
                                   # the replica's workers: writeset.extract.index_entry_count)

    @property
    def scanned_by_replica(self) -> bool:
        """No index at all: a row-based replica finds each updated or deleted row by scanning the
        whole table, once per rows event (HASH_SCAN, sql/log_event.cc
        ``Rows_log_event::do_hash_scan_and_update``). Only said of a table known in full."""
        return self.complete and not self.keys and not self.indexed and not self.foreign_keys

    @property
    def qualified_name(self) -> str:
        return f"{self.db}.{self.name}"

    def column_index(self, name: str) -> int | None:
        low = name.lower()
        for i, c in enumerate(self.columns):
            if c.name.lower() == low:
                return i
        return None

    @property
    def primary_key(self) -> Key | None:
        for k in self.keys:
            if k.primary:
                return k
        return None

    def effective_primary_key(self) -> Key | None:
        """The server's ``TABLE_SHARE::primary_key``: the explicit PRIMARY KEY, else the first
        UNIQUE index whose parts are all NOT NULL whole columns (InnoDB promotes it)."""
        pk = self.primary_key
        if pk is not None:
            return pk
        for k in self.keys:
            if k.functional:
                continue
            ok = True
            for p in k.parts:
                i = self.column_index(p.column)
                if i is None or self.columns[i].nullable or p.prefix is not None:
                    ok = False
                    break
            if ok:
                return k
        return None

    def with_(self, **kw) -> "TableSchema":
        return replace(self, **kw)


def _key(db: str, table: str) -> tuple[str, str]:
    return (db.lower(), table.lower())


@dataclass
class Catalog:
    """All known tables, updated as DDL streams by; ``default_collation`` per database."""

    tables: dict[tuple[str, str], TableSchema] = field(default_factory=dict)
    db_collation: dict[str, str] = field(default_factory=dict)
    server_collation: str = "utf8mb4_0900_ai_ci"
    version: int = 0  # bumps on every change, so callers can cache per version
    table_rows: dict[tuple[str, str], int] = field(default_factory=dict)  # sizes read from a server

    #: the exact keys of ``tables`` by their case-folded key (see ``key_of``)
    folded: dict[tuple[str, str], set[tuple[str, str]]] = field(default_factory=dict, repr=False, compare=False)

    def rows_of(self, db: str, table: str) -> int:
        """The table's size when a server told it (information_schema.TABLES.TABLE_ROWS), else 0."""
        return self.table_rows.get(_key(db, table), 0)

    def key_of(self, db: str, table: str) -> tuple[str, str]:
        """The catalog's key for a name: the table of exactly that name (``lower_case_table_names=0``,
        Linux's default: `T` and `t` are two tables); else the one whose name differs only in case
        (``lower_case_table_names=1`` logs names lowercased in table maps, but DDL text as typed);
        else the folded name."""
        exact = (db, table)
        if exact in self.tables:
            return exact
        found = self.folded.get(_key(db, table))
        return min(found) if found else _key(db, table)

    def __post_init__(self) -> None:
        for k in self.tables:
            self.folded.setdefault(_key(*k), set()).add(k)

    def get(self, db: str, table: str) -> TableSchema | None:
        return self.tables.get(self.key_of(db, table))

    def put(self, t: TableSchema) -> None:
        k = (t.db, t.name)
        self.tables[k] = t
        self.folded.setdefault(_key(*k), set()).add(k)
        self.version += 1

    def drop(self, db: str, table: str) -> None:
        k = self.key_of(db, table)
        if self.tables.pop(k, None) is not None:
            same = self.folded[_key(*k)]
            same.discard(k)
            if not same:
                del self.folded[_key(*k)]
            self.version += 1

    def drop_database(self, db: str) -> None:
        low = db.lower()
        same = [k for k in self.tables if k[0] == db] or [k for k in self.tables if k[0].lower() == low]
        for k in same:
            self.drop(*k)
        self.db_collation.pop(low, None)
        self.version += 1

    def is_fk_parent(self, db: str, table: str) -> bool:
        """Whether any known table has a foreign key referencing ``db.table``."""
        return self.key_of(db, table) in self._parents()

    def _parents(self) -> set[tuple[str, str]]:
        cached = getattr(self, "_parents_cache", None)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        parents = {self.key_of(fk.ref_db, fk.ref_table) for t in self.tables.values() for fk in t.foreign_keys}
        self._parents_cache = (self.version, parents)
        return parents

    def referencing(self, db: str, table: str) -> tuple[ForeignKey, ...]:
        """The known foreign keys that reference ``db.table`` (``dict_table_t::referenced_set``
        in InnoDB: what a DELETE of one of its rows checks the children for)."""
        return self._referencing().get(self.key_of(db, table), ())

    def _referencing(self) -> dict[tuple[str, str], tuple[ForeignKey, ...]]:
        cached = getattr(self, "_referencing_cache", None)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        out: dict[tuple[str, str], list[ForeignKey]] = {}
        for k in sorted(self.tables):
            for fk in self.tables[k].foreign_keys:
                out.setdefault(self.key_of(fk.ref_db, fk.ref_table), []).append(fk)
        refs = {k: tuple(v) for k, v in out.items()}
        self._referencing_cache = (self.version, refs)
        return refs

    def referenced_key(self, fk: ForeignKey) -> Key | None:
        """The parent's unique index an FK refers to (``unique_constraint_name``): the PRIMARY KEY
        or a UNIQUE key with exactly the referenced columns; None (no hash) otherwise."""
        parent = self.get(fk.ref_db, fk.ref_table)
        if parent is None:
            return None
        want = [c.lower() for c in fk.ref_columns]
        ordered = sorted(parent.keys, key=lambda k: not k.primary)
        for k in ordered:
            if [p.column.lower() for p in k.parts] == want and all(p.prefix is None for p in k.parts):
                return k
        return None
