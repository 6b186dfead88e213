"""The foreign-key checks a replica's InnoDB runs for each transaction (``TrxFacts.fk_checks``,
``writeset.extract.fk_check_count``), counted by both readers, against ``mysqlbinlog -vv``'s
reading of the fixtures' row images (the reference reading) under the rules of InnoDB's
``row_ins_check_foreign_constraint`` and ``row_upd_check_references_constraints``."""

from __future__ import annotations

import re

import pytest

import oracle
from conftest import fixture_dirs, need
from lagadvisor.binlog.constants import RowsKind
from lagadvisor.depgraph.pipeline import ClockOptions
from lagadvisor.depgraph.read import prepare
from lagadvisor.schema.ddl import load_schema_file
from lagadvisor.sim.facts import fact_columns, reference_facts
from lagadvisor.writeset.extract import fk_check_count, plan_table

#: The fixtures' foreign key (scripts/make_fixtures.py): wl_fk.child (id, parent_id, qty), its
#: parent_id referencing wl_fk.parent (id, name); column numbers as the row images count them.
CHILD, PARENT = "wl_fk.child", "wl_fk.parent"
CHILD_ID, CHILD_FK, PARENT_ID = 0, 1, 0

FK_FIXTURES = [d for d in fixture_dirs() if d.name.startswith("single_")]


def _files(d) -> list[str]:
    return [str(p) for p in sorted(d.iterdir()) if p.suffix[1:].isdigit()]


def _expected(table: str, kind: RowsKind, before: dict | None, after: dict | None) -> int:
    """One row image's checks, from mysqlbinlog's text ("NULL" or the value as printed)."""
    before, after = before or {}, after or {}
    if table == CHILD:
        if kind == RowsKind.WRITE:
            return int(after.get(CHILD_FK, "NULL") != "NULL")
        moved = CHILD_ID in after and after[CHILD_ID] != before.get(CHILD_ID)
        if kind == RowsKind.UPDATE and (moved or CHILD_FK in after and after[CHILD_FK] != before.get(CHILD_FK)):
            return int({**before, **after}.get(CHILD_FK, "NULL") != "NULL")
    if table == PARENT:
        if kind == RowsKind.DELETE:
            return 1
        if kind == RowsKind.UPDATE and PARENT_ID in after and after[PARENT_ID] != before.get(PARENT_ID):
            return 1
    return 0


def _per_transaction(text: str) -> list[tuple[int, set]]:
    """Per transaction (one GTID_NEXT each, in order): its expected checks and the kinds of
    check met (to show every rule is exercised)."""
    out = []
    for chunk in re.split(r"^SET @@SESSION\.GTID_NEXT= '(?!AUTOMATIC')[^']*'", text, flags=re.M)[1:]:
        n, kinds = 0, set()
        for table, kind, before, after in oracle.parse_vv(chunk):
            k = _expected(table, kind, before, after)
            n += k
            if k:
                kinds.add((table, kind))
        out.append((n, kinds))
    return out


@pytest.mark.parametrize("d", FK_FIXTURES, ids=[d.name for d in FK_FIXTURES])
def test_fk_checks_match_mysqlbinlog_vv(d):
    need(oracle.have_mysqlbinlog(), "mysqlbinlog (MySQL chroot)")
    files = _files(d)
    want = []
    for f in files:
        want += _per_transaction(oracle.mysqlbinlog(f, "-vv").stdout)
    # every rule meets real rows: child inserts and re-parents, parent deletes and re-keys
    met = set().union(*(k for _, k in want))
    assert met == {(CHILD, RowsKind.WRITE), (CHILD, RowsKind.UPDATE), (PARENT, RowsKind.DELETE),
                   (PARENT, RowsKind.UPDATE)}
    expected = [n for n, _ in want]
    assert sum(expected) > 50
    for catalog in (None, load_schema_file((d / "schema.sql").read_text())):
        options = ClockOptions(catalog=catalog)
        ref = [f.fk_checks for f in reference_facts(files, prepare(files, options), options)]
        assert ref == expected, d.name
        read = fact_columns(files, options, prepare(files, options))
        native = list(read.facts.fk_checks) if hasattr(read.facts, "fk_checks") else [f.fk_checks for f in read.facts]
        assert native == expected, d.name


SCHEMA = """
CREATE DATABASE d;
CREATE TABLE d.p (id INT NOT NULL PRIMARY KEY, code INT NOT NULL, name VARCHAR(20), UNIQUE KEY (code));
CREATE TABLE d.c (id INT NOT NULL PRIMARY KEY, pid INT NULL, pcode INT NULL, qty INT,
  FOREIGN KEY (pid) REFERENCES d.p (id), FOREIGN KEY (pcode) REFERENCES d.p (code));
CREATE TABLE d.plain (id INT NOT NULL PRIMARY KEY, v INT);
"""


def _plans():
    cat = load_schema_file(SCHEMA)
    return {n: plan_table(cat.get("d", n), cat) for n in ("p", "c", "plain")}


def test_child_rows_check_each_non_null_foreign_key():
    c = _plans()["c"]
    assert fk_check_count(c, RowsKind.WRITE, None, {0: 1, 1: 5, 2: 7, 3: 1}) == 2
    assert fk_check_count(c, RowsKind.WRITE, None, {0: 1, 1: None, 2: 7, 3: 1}) == 1
    # an UPDATE checks only the foreign keys whose columns it changes, to a non-NULL value
    row = {0: 1, 1: 5, 2: 7, 3: 1}
    assert fk_check_count(c, RowsKind.UPDATE, row, {**row, 3: 2}) == 0
    assert fk_check_count(c, RowsKind.UPDATE, row, {**row, 1: 6}) == 1
    assert fk_check_count(c, RowsKind.UPDATE, row, {**row, 1: 6, 2: 8}) == 2
    assert fk_check_count(c, RowsKind.UPDATE, row, {**row, 1: None}) == 0
    # a MINIMAL image: the after image holds only what the statement set
    assert fk_check_count(c, RowsKind.UPDATE, {0: 1}, {1: 6}) == 1
    assert fk_check_count(c, RowsKind.UPDATE, {0: 1}, {3: 2}) == 0
    # a new primary key moves the row: every index entry is rewritten, every foreign key checked
    assert fk_check_count(c, RowsKind.UPDATE, row, {**row, 0: 2}) == 2
    assert fk_check_count(c, RowsKind.UPDATE, row, {**row, 0: 2, 1: None}) == 1
    # deleting a child checks nothing
    assert fk_check_count(c, RowsKind.DELETE, row, None) == 0


def test_parent_rows_check_each_referencing_foreign_key():
    plans = _plans()
    p = plans["p"]
    row = {0: 1, 1: 10, 2: b"x"}
    assert fk_check_count(p, RowsKind.DELETE, row, None) == 2
    assert fk_check_count(p, RowsKind.WRITE, None, row) == 0
    assert fk_check_count(p, RowsKind.UPDATE, row, {**row, 2: b"y"}) == 0
    assert fk_check_count(p, RowsKind.UPDATE, row, {**row, 1: 11}) == 1
    assert fk_check_count(p, RowsKind.UPDATE, row, {**row, 0: 2, 1: 11}) == 2
    # a table no foreign key touches
    assert plans["plain"].fk_probes == ()
    assert fk_check_count(plans["plain"], RowsKind.DELETE, {0: 1, 1: 2}, None) == 0


def test_the_probes_read_their_columns():
    """The reader decodes only the plan's columns: the probes' are among them (``qty`` is not)."""
    plans = _plans()
    assert {1, 2} <= plans["c"].columns and 3 not in plans["c"].columns
    assert {0, 1} <= plans["p"].columns


#: The fixtures' secondary indexes (scripts/make_fixtures.py, fixtures/*/schema.sql) as row-image
#: column numbers, and each table's clustered key: t_auto's two unique keys, t_decimal's, t_prefix's
#: prefix key, t_nokey's plain index (no primary key: InnoDB's hidden row id clusters it), child's.
SECONDARY = {"wl.t_auto": (((1,), (2,)), (0,)), "wl.t_decimal": (((1,),), (0,)), "wl.t_nokey": (((0,),), ()),
             "wl.t_prefix": (((1,),), (0,)), "wl_fk.child": (((1,),), (0,))}


def _entries(table: str, kind: RowsKind, before: dict | None, after: dict | None) -> int:
    """One row image's secondary index entries, from mysqlbinlog's text."""
    if table not in SECONDARY:
        return 0
    indexes, pk = SECONDARY[table]
    if kind != RowsKind.UPDATE:
        return len(indexes)
    before, after = before or {}, after or {}

    def changed(cols):
        return any(c in after and after[c] != before.get(c) for c in cols)

    return 2 * len(indexes) if changed(pk) else 2 * sum(changed(cols) for cols in indexes)


@pytest.mark.parametrize("d", FK_FIXTURES, ids=[d.name for d in FK_FIXTURES])
def test_index_entries_match_mysqlbinlog_vv(d):
    need(oracle.have_mysqlbinlog(), "mysqlbinlog (MySQL chroot)")
    files = _files(d)
    expected, met = [], set()
    for f in files:
        text = oracle.mysqlbinlog(f, "-vv").stdout
        for chunk in re.split(r"^SET @@SESSION\.GTID_NEXT= '(?!AUTOMATIC')[^']*'", text, flags=re.M)[1:]:
            n = 0
            for table, kind, before, after in oracle.parse_vv(chunk):
                k = _entries(table, kind, before, after)
                n += k
                if k:
                    met.add((table, kind))
            expected.append(n)
    assert {t for t, _ in met} == set(SECONDARY) and {k for _, k in met} == set(RowsKind)
    for catalog in (None, load_schema_file((d / "schema.sql").read_text())):
        options = ClockOptions(catalog=catalog)
        ref = [f.index_entries for f in reference_facts(files, prepare(files, options), options)]
        assert ref == expected, d.name
        read = fact_columns(files, options, prepare(files, options))
        native = (list(read.facts.index_entries) if hasattr(read.facts, "index_entries")
                  else [f.index_entries for f in read.facts])
        assert native == expected, d.name


def test_index_entries_by_kind():
    """An insert or a delete writes one entry per secondary index; an update two per index whose
    columns changed, every index's when the primary key changed; a foreign key without an index
    of its own gets the one InnoDB makes for it."""
    from lagadvisor.writeset.extract import index_entry_count

    cat = load_schema_file(SCHEMA + """
CREATE TABLE d.s (id INT NOT NULL PRIMARY KEY, a INT, b INT, c INT, UNIQUE KEY ua (a), KEY kbc (b, c),
  FOREIGN KEY (c) REFERENCES d.p (id));
CREATE TABLE d.bare (a INT NOT NULL, b INT, UNIQUE KEY ua (a));
""")
    s = plan_table(cat.get("d", "s"), cat)
    assert sorted(s.index_probes) == [(1,), (2, 3), (3,)]   # ua, kbc, and c's for its foreign key
    row = {0: 1, 1: 2, 2: 3, 3: 4}
    assert index_entry_count(s, RowsKind.WRITE, None, row) == 3
    assert index_entry_count(s, RowsKind.DELETE, row, None) == 3
    assert index_entry_count(s, RowsKind.UPDATE, row, dict(row)) == 0
    assert index_entry_count(s, RowsKind.UPDATE, row, {**row, 2: 9}) == 2      # kbc
    assert index_entry_count(s, RowsKind.UPDATE, row, {**row, 3: 9}) == 4      # kbc and c's
    assert index_entry_count(s, RowsKind.UPDATE, row, {**row, 0: 7}) == 6      # the row moved
    # the foreign key's own index is not doubled when an index already leads with its column
    c = _plans()["c"]
    assert sorted(c.index_probes) == [(1,), (2,)]
    # the NOT NULL unique key clusters a table without a primary key: not a secondary index
    bare = plan_table(cat.get("d", "bare"), cat)
    assert bare.index_probes == ()
