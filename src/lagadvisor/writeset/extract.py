"""Transaction -> writeset, as ``add_pke`` (sql/rpl_write_set_handler.cc) computes it.

Per row image (UPDATE: after image, then before image; INSERT: after; DELETE: before), for each
PRIMARY/UNIQUE key of the table: skip the key if a part is NULL; otherwise one hash of
(index name, db, table, the parts' sort keys), plus a second "full column" hash when a part's
key length and column pack length give different ``strnxfrmlen`` (prefix keys, VARCHAR and
VARBINARY parts, whose pack length includes the length bytes). Then one hash per foreign key of
the row (child side). A table without a usable primary key marks the transaction
``has_missing_keys``; a change to a table referenced by a foreign key marks it
``has_related_foreign_keys`` (the parent side).

The hashes here are Python hashes of canonical values (see :mod:`.collation`): equal exactly
when the server's are, and as many per row as the server's, which is what the policies need.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..binlog.constants import RowsKind
from ..binlog.rows import TableMap
from ..binlog.transactions import Transaction
from ..kinds import Caveat, CaveatKind
from ..schema.model import Catalog, TableSchema
from .collation import canonicalizer, is_binary_collation, is_pad_space, prefix_chars
from .weights import APPROXIMATED, is_exact

_VARLEN = frozenset({"varchar", "varbinary", "tinytext", "text", "mediumtext", "longtext", "tinyblob",
                     "blob", "mediumblob", "longblob", "json", "geometry"})
_BINARY_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})


@dataclass(frozen=True, slots=True)
class KeyPlan:
    """How to hash one unique key: ``parts`` = (column index, prefix chars or None, canonicalizer,
    collation); ``hashes`` = 1 or 2 per image (see module doc)."""

    name: str
    parts: tuple
    hashes: int
    primary: bool


@dataclass(frozen=True, slots=True)
class FkPlan:
    ref_key: str
    ref_db: str
    ref_table: str
    parts: tuple  # (child column index, canonicalizer, padded)


@dataclass(frozen=True, slots=True)
class TablePlan:
    """Everything needed to hash rows of one table; ``missing_keys`` when the table has no
    usable primary key; ``columns`` = the row-image columns the plan reads."""

    db: str
    table: str
    keys: tuple[KeyPlan, ...]
    fks: tuple[FkPlan, ...]
    fk_parent: bool
    missing_keys: bool
    columns: frozenset[int]
    partial: Caveat | None = None  # why the plan may miss hashes (unique keys unknown, ...)
    scans: bool = False         # no index at all: the replica scans the table per UPDATE/DELETE event
    table_rows: int = 0         # its size when a server told it (Catalog.rows_of), else 0
    # The foreign-key checks its row changes make the replica's InnoDB run (:func:`fk_check_count`):
    # (parent side, column indexes, the parent's lower-case db.table) per foreign key of the
    # table (child side: its columns) and per known foreign key referencing it (parent side: the
    # referenced columns, here). Every column is in ``columns`` too.
    fk_probes: tuple[tuple[bool, tuple[int, ...], str], ...] = ()
    # The column indexes of each secondary index (unique keys but the clustered one, non-unique
    # indexes, the index InnoDB makes for a foreign key that has none): what
    # :func:`index_entry_count` counts. Every column is in ``columns`` too.
    index_probes: tuple[tuple[int, ...], ...] = ()
    # (column index, column name) of every column of the hashed unique keys, primary key first,
    # each once: what ``export --keys`` prints of a row image (issue 72).
    key_columns: tuple[tuple[int, str], ...] = ()


_BLOBS = frozenset({"tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob",
                    "longblob", "json", "geometry"})
_BLOB_PACKLENGTH = {"tinytext": 1, "tinyblob": 1, "text": 2, "blob": 2, "mediumtext": 3, "mediumblob": 3,
                    "longtext": 4, "longblob": 4, "json": 4, "geometry": 4}


def _part_needs_full_hash(col_type: str, prefix: int | None) -> bool:
    """``strnxfrmlen(key_part.length) != strnxfrmlen(pack_length)``: true for every VARCHAR,
    VARBINARY, BLOB/TEXT and prefix part (pack_length counts the length bytes), false for fixed
    types and whole CHAR/BINARY columns (9.7 add_pke; one extra hash per key)."""
    return prefix is not None or col_type in _VARLEN


def _blob_full_chars(col_type: str, coll: str | None) -> int | None:
    """For BLOB/TEXT parts the NO_PARTIAL pass sorts into ``strnxfrmlen(pack_length)`` bytes,
    with pack_length = length bytes + 8: only the first few characters of the value
    (e.g. 24 under utf8mb4_0900_ai_ci, 3 under utf8mb4_bin, 10 bytes for binary/latin1)."""
    if col_type not in _BLOBS:
        return None
    pack = _BLOB_PACKLENGTH.get(col_type, 2) + 8
    c = (coll or "binary").lower()
    if "_0900_" in c:
        return ((pack + 3) // 4) * 8          # 2-byte weights: one primary weight per character
    if c.startswith("utf8mb4_") and c.endswith("_bin"):
        return (pack + 3) // 4
    if c.startswith("utf8mb4_"):
        return (pack + 3) // 4
    if c.startswith(("utf8mb3_", "utf8_")):
        return (pack + 2) // 3
    return pack


def _strip_nul(canon):
    return lambda b: canon(b.rstrip(b"\0"))


def _string_canon(col_type: str, coll: str | None):
    """The canonicalizer of a string key part, or None for other types.

    ``Field_string::make_sort_key`` (CHAR, BINARY) asks ``strnxfrm`` to pad the sort key to its
    full length; binary NO PAD collations (``binary``, ``utf8mb4_0900_bin``) pad with 0x00
    bytes, so trailing NULs of a CHAR/BINARY value do not count there (the sweep's
    ``utf8mb4_0900_bin CHAR(10)`` table: 'a' and 'a\\0' are one key). VARCHAR sort keys are not
    padded that way."""
    if col_type == "binary":
        return lambda b: b.rstrip(b"\0")  # BINARY(n) pads with 0x00
    if isinstance(coll, str) or col_type in _BINARY_TYPES:
        canon = canonicalizer(coll)
        if col_type == "char" and isinstance(coll, str) and coll.lower().endswith("_bin") \
                and not is_pad_space(coll):
            return _strip_nul(canon)
        return canon
    return None


def plan_table(schema: TableSchema, catalog: Catalog, tm: TableMap | None = None) -> TablePlan:
    cols = schema.columns
    collations = list(c.collation for c in cols)
    if tm is not None and tm.column_charsets is not None:
        from .collation import COLLATION_NAMES

        strings = [i for i, c in enumerate(cols) if c.collation is not None]
        if len(strings) == len(tm.column_charsets):
            for i, cid in zip(strings, tm.column_charsets):
                collations[i] = COLLATION_NAMES.get(cid, collations[i])
    pk = schema.effective_primary_key()
    keys = []
    used: set[int] = set()
    name = schema.qualified_name
    partial = None if schema.complete else Caveat(f"unique keys of {name} unknown", {CaveatKind.KEYS_UNKNOWN}, name)
    ordered = ([pk] if pk else []) + [k for k in schema.keys if k is not pk]
    for k in ordered:
        if k.functional:
            partial = Caveat(f"functional unique index {k.name} of {name} cannot be hashed",
                             {CaveatKind.FUNCTIONAL_INDEX}, name)
            continue
        parts = []
        full = False
        ok = True
        for p in k.parts:
            i = schema.column_index(p.column)
            if i is None:
                ok = False
                break
            col = cols[i]
            coll = collations[i] if col.type not in _BINARY_TYPES else None
            canon = _string_canon(col.type, coll)
            # Field_varstring/Field_blob::make_sort_key pad to the target length only under PAD
            # SPACE collations: then the two passes give different bytes; under NO PAD ones
            # (0900, binary) they are identical unless the prefix cut the value.
            varlen = col.type in _VARLEN
            pad = varlen and isinstance(coll, str) and is_pad_space(coll)
            parts.append((i, p.prefix, canon, coll, pad, _blob_full_chars(col.type, coll)))
            used.add(i)
            full = full or _part_needs_full_hash(col.type, p.prefix)
        if ok:
            keys.append(KeyPlan(k.name if not (k is pk and k.primary) else "PRIMARY", tuple(parts),
                                2 if full else 1, k is pk))
    fks = []
    for fk in schema.foreign_keys:
        ref = catalog.referenced_key(fk)
        if ref is None:
            continue
        parts = []
        for c in fk.columns:
            i = schema.column_index(c)
            if i is None:
                break
            coll = collations[i]
            pad = cols[i].type in _VARLEN and isinstance(coll, str) and is_pad_space(coll)
            parts.append((i, _string_canon(cols[i].type, coll), pad))
            used.add(i)
        else:
            parent = catalog.get(fk.ref_db, fk.ref_table)
            fks.append(FkPlan(ref.name, parent.db if parent else fk.ref_db,
                              parent.name if parent else fk.ref_table, tuple(parts)))
    # The parent-side check sits inside add_pke's "table has a primary key" block.
    fk_parent = pk is not None and catalog.is_fk_parent(schema.db, schema.name)
    probes = _fk_probes(schema, catalog)
    secondary = _index_probes(schema, pk)
    # Collations without server weights: say so per column, never silently (issue 18).
    approx = sorted({f"collation {collations[i]} of {name}.{cols[i].name}: equality "
                     "approximated, WRITESET may be off"
                     for i in used if isinstance(collations[i], str) and cols[i].type not in _BINARY_TYPES
                     and collations[i].lower() != "binary" and not is_binary_collation(collations[i])
                     and not is_exact(collations[i].lower())})
    if approx:
        approx = [Caveat(a, {CaveatKind.COLLATION_APPROXIMATED}, name) for a in approx]
        partial = Caveat.joined([partial, *approx] if partial else approx)
    columns = frozenset(used.union(*(cols for _, cols, _ in probes), *secondary))
    return TablePlan(schema.db, schema.name, tuple(keys), tuple(fks), fk_parent, pk is None, columns, partial,
                     schema.scanned_by_replica,
                     catalog.rows_of(schema.db, schema.name) if schema.scanned_by_replica else 0, probes,
                     secondary, tuple({p[0]: cols[p[0]].name for k in keys for p in k.parts}.items()))


def _column_indexes(schema: TableSchema, names) -> tuple[int, ...] | None:
    """The row-image positions of ``names``; None when there are none or the schema lacks one."""
    idx = tuple(schema.column_index(c) for c in names)
    return idx if idx and None not in idx else None


def _index_probes(schema: TableSchema, pk) -> tuple[tuple[int, ...], ...]:
    """``TablePlan.index_probes``: every secondary index's columns, the clustered index's key
    (``pk``) left out; a foreign key without an index whose first columns are its own gets the one
    InnoDB creates for it (``dict_foreign_find_index``). An index with a column this schema lacks
    or an expression part is left out (its entries cannot be told from the row images)."""
    out: list[tuple[int, ...]] = []
    leads: list[tuple[str, ...]] = []
    for k in (*schema.keys, *schema.indexes):
        names = tuple(p.column.lower() for p in k.parts)
        leads.append(names)
        if k is not pk and not k.functional and (idx := _column_indexes(schema, names)) is not None:
            out.append(idx)
    for fk in schema.foreign_keys:
        names = tuple(c.lower() for c in fk.columns)
        if any(lead[:len(names)] == names for lead in leads):
            continue
        leads.append(names)
        if (idx := _column_indexes(schema, names)) is not None:
            out.append(idx)
    return tuple(out)


def index_entry_count(plan: TablePlan, kind: RowsKind, before: dict[int, object] | None,
                      after: dict[int, object] | None) -> int:
    """The secondary index entries one row change makes InnoDB write: one per secondary index for
    an INSERT (``row_ins_sec_index_entry``) and for a DELETE (the entry delete-marked,
    ``row_upd_sec_index_entry``); for an UPDATE two (the old entry delete-marked, the new one
    inserted) per index whose columns changed (``row_upd_changes_ord_field_binary``: other bytes;
    a prefix part counts as changed when its column does), or per index when the primary key
    changed (the row moves). The entries purge removes later are not counted."""
    if kind != RowsKind.UPDATE:
        return len(plan.index_probes)
    b, a = before or {}, after or {}
    if _changed(primary_columns(plan), b, a):
        return 2 * len(plan.index_probes)
    return 2 * sum(1 for cols in plan.index_probes if _changed(cols, b, a))


def _fk_probes(schema: TableSchema, catalog: Catalog) -> tuple[tuple[bool, tuple[int, ...], str], ...]:
    """``TablePlan.fk_probes``: the table's own foreign keys (child side), then the known ones
    that reference it (parent side), each as the column indexes InnoDB compares; a key with a
    column this schema lacks is left out."""
    out = []
    sides = [(False, fk.columns, f"{fk.ref_db}.{fk.ref_table}") for fk in schema.foreign_keys]
    sides += [(True, fk.ref_columns, schema.qualified_name) for fk in catalog.referencing(schema.db, schema.name)]
    for parent_side, names, ref in sides:
        if (idx := _column_indexes(schema, names)) is not None:
            out.append((parent_side, idx, ref.lower()))
    return tuple(out)


def _changed(cols, before: dict, after: dict) -> bool:
    return any(i in after and (i not in before or after[i] != before[i]) for i in cols)


def primary_columns(plan: TablePlan) -> tuple[int, ...]:
    """The column indexes of the table's clustered index key (its primary key, or the first NOT
    NULL unique key InnoDB promotes: ``KeyPlan.primary``); () without one."""
    return next((tuple(p[0] for p in k.parts) for k in plan.keys if k.primary), ())


def fk_check_count(plan: TablePlan, kind: RowsKind, before: dict[int, object] | None,
                   after: dict[int, object] | None) -> int:
    """The foreign-key checks one row change makes InnoDB run (with foreign_key_checks on):
    a search of the parent's index for each of the row's foreign keys on an INSERT, and on an
    UPDATE for each one whose columns changed, or every one when the primary key changed (the
    row moves: ``row_upd_clust_rec_by_insert`` rewrites every index entry), as
    ``row_ins_check_foreign_constraints`` runs from ``row_ins_sec_index_entry`` when an entry of
    the foreign key's index is rewritten; a search of the child's
    index for each foreign key referencing the row on a DELETE, and on an UPDATE that changes
    the referenced columns (``row_upd_check_references_constraints``). A key with a NULL
    column is not checked (``row_ins_check_foreign_constraint``). Changed means not equal, as
    ``row_upd_changes_ord_field_binary`` compares the bytes; a column absent from a MINIMAL
    before image counts as changed when the after image has it. Cascaded changes the binlog
    does not hold are not counted."""
    n = 0
    moved = None  # the primary key changed (an UPDATE's, computed once)
    for parent_side, cols, _ in plan.fk_probes:
        if kind == RowsKind.WRITE:
            img = after or {}
            if not parent_side and all(img.get(i) is not None for i in cols):
                n += 1
        elif kind == RowsKind.DELETE:
            img = before or {}
            if parent_side and all(img.get(i) is not None for i in cols):
                n += 1
        else:
            b, a = before or {}, after or {}
            if not _changed(cols, b, a):
                if parent_side:
                    continue
                if moved is None:
                    moved = _changed(primary_columns(plan), b, a)
                if not moved:
                    continue
            checked = b if parent_side else {**b, **a}
            if all(checked.get(i) is not None for i in cols):
                n += 1
    return n


_SIGN_FLIP = 1 << 63
_LOW32 = 0xFFFFFFFF


def number_key(v: int) -> tuple[int, int]:
    """An integer key value as two non-negative 32-bit halves of ``v + 2**63``.

    CPython's ``hash(int)`` is ``v mod (2**61 - 1)`` (and ``hash(-1) == hash(-2)``), so hashing a
    raw value made BIGINT UNSIGNED 7 and 2**64 - 1 (and signed -1 and -2) one writeset key, where
    the server, hashing ``make_sort_key`` bytes (big-endian, sign bit flipped for signed types),
    keeps them apart. Shifted by 2**63, every signed and unsigned 64-bit value is a non-negative
    number below 2**64 + 2**63, whose halves hash to themselves: injective, and cheap enough for
    the native core to compute the same numbers (``writeset.rs``)."""
    u = v + _SIGN_FLIP
    return (u >> 32, u & _LOW32)


def float_key(v: float) -> tuple[int, int]:
    """A FLOAT/DOUBLE key value by its IEEE bits, -0.0 as 0.0 (``change_double_for_sort`` gives
    both the zero sort key). ``hash(float)`` is the value's rational hash mod 2**61 - 1: 0.5 and
    2.0**60 would collide."""
    bits = struct.unpack("<q", struct.pack("<d", v + 0.0 if v == 0 else v))[0]
    return number_key(bits)


def _value(v, canon):
    if v is None:
        return None
    if canon is not None and isinstance(v, (bytes, bytearray)):
        return canon(bytes(v))
    if type(v) is int:
        return number_key(v)
    if type(v) is float:
        return float_key(v)
    return v


def _label(name: str, db: str, table: str, vals) -> str:
    """``vals``: the raw values of the key's parts (not their canonical forms). Bytes that are not
    UTF-8 (a latin1 column's 'ß') show as escapes: replaced by one '\ufffd' they made distinct rows
    one label, and the hot-row counts and the what-if that ignores a row by its label merged them."""
    shown = ", ".join(repr(v.decode("utf-8", "backslashreplace") if isinstance(v, (bytes, bytearray)) else v)
                      for v in vals)
    return f"{db}.{table} {name}=({shown})"


def row_hashes(plan: TablePlan, image: dict[int, object], out: list[int], fk_checks: bool,
               labels: list[str] | None = None) -> bool:
    """Append the hashes of one row image (and, with ``labels``, a readable key per hash);
    False if a key column is absent from the image (MINIMAL row image), i.e. the server's
    hashes cannot be rebuilt."""
    complete = True
    for k in plan.keys:
        vals = []
        full_vals = []
        raw = []
        skip = False
        for i, prefix, canon, coll, pad, full_chars in k.parts:
            if i not in image:
                complete = False
                skip = True
                break
            v = image[i]
            if v is None:
                skip = True  # "NULL cannot conflict with any value": this key is skipped
                break
            if prefix is not None and isinstance(v, (bytes, bytearray)):
                vals.append((_value(prefix_chars(bytes(v), prefix, coll), canon), "key" if pad else None))
            else:
                vals.append((_value(v, canon), "key" if pad else None))
            raw.append(v)
            if k.hashes == 2:
                fv = prefix_chars(bytes(v), full_chars, coll) if full_chars is not None else v
                full_vals.append((_value(fv, canon), "pack" if pad else None))
        if skip:
            continue
        out.append(hash((k.name, plan.db, plan.table, tuple(vals))))
        if labels is not None:
            labels.append(_label(k.name, plan.db, plan.table, raw))
        if k.hashes == 2:
            # Equal to the first hash when no part was padded or cut (NO PAD collations): one
            # history entry, counted twice, as in the server.
            out.append(hash((k.name, plan.db, plan.table, tuple(full_vals))))
            if labels is not None:
                labels.append(_label(k.name, plan.db, plan.table, raw))
    if fk_checks:
        for fk in plan.fks:
            fvals: list | None = []
            fraw = []
            for i, canon, pad in fk.parts:
                if i not in image:
                    complete = False
                    fvals = None
                    break
                v = image[i]
                if v is not None:  # a NULL column is left out, but the hash is still made
                    fvals.append((_value(v, canon), "pack" if pad else None))
                    fraw.append(v)
            if fvals is None:
                continue
            # The FK string is the parent key's string built from the child's values, sorted over
            # the child column's pack length: it equals the parent row's NO_PARTIAL key hash.
            out.append(hash((fk.ref_key, fk.ref_db, fk.ref_table, tuple(fvals))))
            if labels is not None:
                labels.append(_label(fk.ref_key, fk.ref_db, fk.ref_table, fraw)
                              + f" (foreign key of {plan.db}.{plan.table})")
    return complete


@dataclass
class Writeset:
    """What ``Rpl_transaction_write_set_ctx`` holds when the transaction reaches the tracker."""

    hashes: list[int] = field(default_factory=list)
    has_missing_keys: bool = False
    has_related_foreign_keys: bool = False
    missing_tables: list[str] = field(default_factory=list)
    fk_parent_tables: list[str] = field(default_factory=list)
    unknown: list[Caveat] = field(default_factory=list)   # tables whose keys cannot be known at all
    caveats: list[Caveat] = field(default_factory=list)   # hashes that may be missing (overstates parallelism)
    labels: list[str] = field(default_factory=list)    # readable key per hash, when asked for
    key_columns: dict[str, tuple[tuple[int, str], ...]] = field(default_factory=dict)  # TablePlan.key_columns
    # (table, UPDATE/DELETE rows events, its known size) for tables without any index: the
    # replica scans them (sim.run.ScanSizes prices it)
    scans: list[tuple[str, int, int]] = field(default_factory=list)
    fk_checks: int = 0   # the foreign-key checks the replica runs for it (fk_check_count)
    index_entries: int = 0   # the secondary index entries the replica writes for it (index_entry_count)


def transaction_writeset(t: Transaction, plans: dict[str, TablePlan | Caveat], *, labels: bool = False) -> Writeset:
    """``plans`` maps ``db.table`` to its plan, or to a reason string when the table is unknown.
    With ``labels``, ``Writeset.labels`` names each hash's row key (for hot-row reports)."""
    ws = Writeset()
    lab = ws.labels if labels else None
    for st in t.tables:
        if not st.rows:
            continue
        plan = plans.get(st.table)
        if plan is None or isinstance(plan, str):
            ws.unknown.append(plan or schema_unknown(st.table))
            continue
        ws.key_columns[st.table] = plan.key_columns
        if plan.missing_keys:
            ws.has_missing_keys = True
            ws.missing_tables.append(st.table)
        if plan.fk_parent:
            ws.has_related_foreign_keys = True
            ws.fk_parent_tables.append(st.table)
        if plan.partial:
            ws.caveats.append(plan.partial)
        if plan.scans and st.search_events:
            ws.scans.append((st.table, st.search_events, plan.table_rows))
    hashes = ws.hashes
    incomplete: set[str] = set()
    for ch in t.row_changes:
        plan = plans.get(ch.table)
        if not isinstance(plan, TablePlan):
            continue
        fk_checks = not ch.no_fk_checks
        if fk_checks and plan.fk_probes:
            ws.fk_checks += fk_check_count(plan, ch.kind, ch.before, ch.after)
        if plan.index_probes:
            ws.index_entries += index_entry_count(plan, ch.kind, ch.before, ch.after)
        if ch.kind == RowsKind.UPDATE:
            after = ch.after
            if ch.before is not None and after is not None and len(after) < len(plan.columns):
                after = {**ch.before, **after}  # MINIMAL image: unchanged columns keep their value
            ok = row_hashes(plan, after or {}, hashes, fk_checks, lab)
            ok = row_hashes(plan, ch.before or {}, hashes, fk_checks, lab) and ok
        elif ch.kind == RowsKind.WRITE:
            ok = row_hashes(plan, ch.after or {}, hashes, fk_checks, lab)
        else:
            ok = row_hashes(plan, ch.before or {}, hashes, fk_checks, lab)
        if not ok:
            incomplete.add(ch.table)
    for name in sorted(incomplete):
        ws.caveats.append(row_image_caveat(name))
    return ws


def schema_unknown(table: str) -> Caveat:
    """A table without a definition (the native reader words it the same: reader/mod.rs)."""
    return Caveat(f"schema of {table} unknown", {CaveatKind.SCHEMA_UNKNOWN}, table)


def row_image_caveat(table: str) -> Caveat:
    """Row images of ``table`` without its key columns (the native reader words it the same)."""
    return Caveat(f"key columns of {table} are missing from the row images (binlog_row_image=MINIMAL or NOBLOB?)",
                  {CaveatKind.ROW_IMAGE_KEYS_MISSING}, table)


def approximated_since(before: dict) -> list[tuple[Caveat, int]]:
    """The collations whose weight tables could not decide some values since ``before`` (a copy
    of :data:`.weights.APPROXIMATED`), as one caveat line and the count of those values: what a
    read reports once for the run, the reference as the native core (whose values the bridge
    hashes); per transaction the reference named each transaction's own collations, and the two
    readers' warnings differed."""
    outside = sorted(c for c, n in APPROXIMATED.items() if n != before.get(c))
    if not outside:
        return []
    return [(approximated_caveat(outside), sum(APPROXIMATED[c] - before.get(c, 0) for c in outside))]


def approximated_caveat(names) -> Caveat:
    """The report line for values outside a collation's weight table (see :mod:`.weights`)."""
    return Caveat(f"collation {', '.join(names)}: values the server weight table cannot decide (characters "
                  "outside it), equality approximated, WRITESET may be off", {CaveatKind.COLLATION_APPROXIMATED})
