"""Schema files: statements split as the mysql client splits them (strings, comments, DELIMITER),
the fast tokenizer equal to the named-group one, the account of what was not understood, and
CREATE UNIQUE INDEX / DROP INDEX followed (issue 20)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lagadvisor.schema.ddl import (_tokenize_reference, apply_statement, iter_statements, read_schema_file,
                                   split_statements, tokenize)
from lagadvisor.schema.model import Catalog

SQLISH = st.text(alphabet=st.sampled_from(list("ab_$@`'\"\\/*!#-;()=,. \n\t0123456789éZ½²")), max_size=80)


@settings(max_examples=400, deadline=None)
@given(SQLISH)
def test_fast_tokenizer_equals_the_named_group_one(text):
    fast = [(str(t), t.kind, t.quoted) for t in tokenize(text)]
    ref = [(str(t), t.kind, t.quoted) for t in _tokenize_reference(text)]
    assert fast == ref


@settings(max_examples=300, deadline=None)
@given(SQLISH)
def test_statements_cover_the_text_without_overlap(text):
    """Every statement is a slice at its offset; the slices and the delimiters between them are
    the whole text (nothing dropped, nothing read twice), and splitting always ends."""
    pos = 0
    for offset, stmt in iter_statements(text):
        assert offset >= pos and text[offset:offset + len(stmt)] == stmt
        pos = offset + len(stmt)
    assert pos <= len(text)


def test_semicolons_inside_strings_and_comments_do_not_split():
    text = ("CREATE TABLE a (s varchar(9) DEFAULT 'x;y' COMMENT \"p;q\") /* c; d */;\n"
            "-- a comment; with a semicolon\n# another; one\nINSERT INTO a VALUES ('it''s;', 'b\\';c');\n"
            "CREATE TABLE `we;ird` (id int primary key);")
    stmts = [s.strip() for s in split_statements(text)]
    assert len(stmts) == 3, stmts
    assert stmts[1].endswith("INSERT INTO a VALUES ('it''s;', 'b\\';c')")
    assert stmts[2] == "CREATE TABLE `we;ird` (id int primary key)"


def test_delimiter_blocks_as_the_mysql_client():
    text = ("CREATE TABLE t (id int primary key);\nDELIMITER ;;\n"
            "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.id = 1; SET @a = 2; END ;;\n"
            "delimiter $$\nCREATE PROCEDURE p() BEGIN SELECT 1; END$$\nDELIMITER ;\n"
            "CREATE TABLE u (id int, unique key (id));\n")
    stmts = [s.strip() for s in split_statements(text)]
    assert len(stmts) == 4, stmts
    assert stmts[1].startswith("CREATE TRIGGER") and stmts[1].endswith("END")
    assert stmts[2] == "CREATE PROCEDURE p() BEGIN SELECT 1; END"
    r = read_schema_file(text)
    assert r.not_understood == 0 and {n for _, n in r.catalog.tables} == {"t", "u"}


def test_the_account_of_a_dump():
    text = ("/*!40101 SET NAMES utf8mb4 */;\nUSE `d`;\nCREATE TABLE t (id int primary key);\n"
            "LOCK TABLES t WRITE;\nINSERT INTO t VALUES (1),(2);\nUNLOCK TABLES;\n"
            "hello world;\nCREATE TABLE ( broken;\nselec 1;\n")
    r = read_schema_file(text)
    assert (r.statements, r.followed, r.ignored, r.not_understood) == (9, 3, 4, 2)
    assert r.first_not_understood == (7, "hello world")
    assert ("d", "t") in r.catalog.tables
    (w,) = r.warnings("dump.sql")
    assert "2 of 9 statements not understood" in w and "line 7" in w


def test_create_unique_index_and_drop_index():
    cat = Catalog()
    for sql in ("CREATE TABLE t (id int primary key, a int, b varchar(10))",
                "CREATE UNIQUE INDEX ua USING BTREE ON t (a) ALGORITHM=INPLACE",
                "CREATE INDEX plain ON t (b)",  # not unique: no writeset key
                "create unique key ub on d.t (b(4), a)"):
        apply_statement(cat, sql, "d")
    keys = {k.name: [(p.column, p.prefix) for p in k.parts] for k in cat.get("d", "t").keys}
    assert keys == {"PRIMARY": [("id", None)], "ua": [("a", None)], "ub": [("b", 4), ("a", None)]}
    apply_statement(cat, "DROP INDEX ua ON t", "d")
    apply_statement(cat, "DROP INDEX `PRIMARY` ON d.t", "d")
    assert [k.name for k in cat.get("d", "t").keys] == ["ub"]


def test_non_unique_indexes_followed_through_alters():
    """The non-unique indexes (``TableSchema.indexes``: what their entries cost a replica) as the
    server keeps them: named after their first column when unnamed, moved by column renames,
    shortened by dropped columns (gone with their last one), dropped and renamed by name."""
    cat = Catalog()
    for sql in ("CREATE TABLE t (id int primary key, a int, b varchar(10), c int, KEY (a), INDEX kb USING BTREE (b(4), c),"
                " UNIQUE KEY uc (c))",
                "CREATE INDEX kc ON t (c)",
                "ALTER TABLE t ADD KEY (a, c), RENAME COLUMN a TO a2"):
        apply_statement(cat, sql, "d")

    def indexes():
        return {k.name: [(p.column, p.prefix) for p in k.parts] for k in cat.get("d", "t").indexes}

    assert indexes() == {"a": [("a2", None)], "kb": [("b", 4), ("c", None)], "kc": [("c", None)],
                         "a_2": [("a2", None), ("c", None)]}
    assert [k.name for k in cat.get("d", "t").keys] == ["PRIMARY", "uc"] and cat.get("d", "t").indexed
    apply_statement(cat, "ALTER TABLE t DROP COLUMN c, RENAME INDEX kb TO kb2", "d")
    assert indexes() == {"a": [("a2", None)], "kb2": [("b", 4)], "a_2": [("a2", None)]}
    apply_statement(cat, "DROP INDEX a ON t", "d")
    apply_statement(cat, "ALTER TABLE t DROP INDEX kb2", "d")
    assert indexes() == {"a_2": [("a2", None)]}


def test_table_names_exact_first_then_differing_in_case():
    """`T` and `t` are two tables (``lower_case_table_names=0``, Linux's default); a name that
    differs only in case from the one table of that name finds it (``lower_case_table_names=1``:
    table maps name `myt`, DDL text `MYT`), and renames carry foreign keys to the table renamed."""
    cat = Catalog()
    for sql in ("CREATE TABLE T (id INT PRIMARY KEY)", "CREATE TABLE t (k INT)", "CREATE TABLE MyT (id INT PRIMARY KEY)",
                "CREATE TABLE kids (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES MYT (id))"):
        apply_statement(cat, sql, "d")
    assert cat.get("d", "T").primary_key is not None and cat.get("d", "t").primary_key is None
    assert cat.get("d", "myt") is cat.get("d", "MyT") and cat.is_fk_parent("d", "myt")
    assert not cat.is_fk_parent("d", "T") and not cat.is_fk_parent("d", "t")
    apply_statement(cat, "ALTER TABLE MYT ADD COLUMN v INT", "d")
    assert [c.name for c in cat.get("d", "myt").columns] == ["id", "v"] and len(cat.tables) == 4
    apply_statement(cat, "RENAME TABLE myt TO Other", "d")
    assert cat.get("d", "MyT") is None and cat.is_fk_parent("d", "other")
    assert [(fk.ref_table) for fk in cat.get("d", "kids").foreign_keys] == ["Other"]
    apply_statement(cat, "DROP TABLE t", "d")
    assert cat.get("d", "t") is cat.get("d", "T") and len(cat.tables) == 3


def test_renaming_a_self_referencing_table_keeps_one_table():
    cat = Catalog()
    for sql in ("CREATE TABLE e (id INT PRIMARY KEY, boss INT, FOREIGN KEY (boss) REFERENCES e (id))",
                "RENAME TABLE e TO staff"):
        apply_statement(cat, sql, "d")
    assert list(cat.tables) == [("d", "staff")]
    assert [(fk.ref_db, fk.ref_table) for fk in cat.get("d", "staff").foreign_keys] == [("d", "staff")]
    assert cat.is_fk_parent("d", "staff") and not cat.is_fk_parent("d", "e")
