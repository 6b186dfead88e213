"""String-key equality from the generated server weight table (issue 18), and the report of
whatever stays approximated. The equalities below are WEIGHT_STRING() facts of MySQL 9.7.4; the
live sweep (test_sweep_oracle.py) checks them against recorded WRITESET clocks."""

from __future__ import annotations

from lagadvisor.schema.ddl import apply_statement
from lagadvisor.schema.model import Catalog
from lagadvisor.writeset import weights
from lagadvisor.writeset.collation import COLLATION_NAMES, canonicalizer
from lagadvisor.writeset.extract import approximated_caveat, plan_table, row_hashes


def eq(coll: str, a: str, b: str, enc: str = "utf-8") -> bool:
    c = canonicalizer(coll)
    return c(a.encode(enc)) == c(b.encode(enc))


def test_table_covers_every_collation_of_the_server():
    colls = weights.collations()
    assert len(colls) == 286 and weights.server_version().startswith("9.7")
    assert all(COLLATION_NAMES[e["id"]] == name for name, e in colls.items())
    exact = [n for n in colls if weights.is_exact(n)]
    assert set(colls) - set(exact) == {"binary"}  # compared as bytes, no table needed


def test_server_equalities():
    assert eq("utf8mb4_0900_ai_ci", "a", "Á") and eq("utf8mb4_0900_ai_ci", "a\0", "a")  # NUL is ignorable
    assert not eq("utf8mb4_0900_ai_ci", "a", "a ")  # NO PAD
    assert eq("utf8mb4_0900_ai_ci", "ß", "ss") and not eq("utf8mb4_0900_as_cs", "ß", "SS")
    assert eq("utf8mb4_da_0900_ai_ci", "aa", "å") and not eq("utf8mb4_0900_ai_ci", "aa", "å")
    assert eq("utf8mb4_es_trad_0900_ai_ci", "ch", "CH") and not eq("utf8mb4_es_trad_0900_ai_ci", "ch", "c")
    assert eq("utf8mb4_general_ci", "ß", "s")  # not "ss": the approximation's case folding was wrong here
    assert eq("utf8mb4_general_ci", "a ", "a")  # PAD SPACE
    assert not eq("latin1_swedish_ci", "å", "a", "latin1") and eq("latin1_swedish_ci", "A  ", "a", "latin1")
    assert eq("latin1_german2_ci", "ß", "ss", "latin1")
    assert not eq("latin7_general_ci", "a", "a ", "iso8859-13")  # fills with 0x20, a space weighs 0x30
    assert eq("latin2_czech_cs", "ch", "ch  ", "iso8859-2") and not eq("latin2_czech_cs", "ch", "Ch", "iso8859-2")
    assert eq("cp1250_czech_cs", "a", "a", "cp1250") and not eq("cp1250_czech_cs", "a", "A", "cp1250")


def test_approximated_collations_are_named_per_column(monkeypatch):
    """A collation the table does not hold (a newer server's) is named up front, per column."""
    monkeypatch.setattr(weights, "NOT_CONCATENATIVE", frozenset({"latin2_czech_cs"}))
    weights.exact_canonicalizer.cache_clear()
    try:
        cat = Catalog()
        apply_statement(cat, "CREATE TABLE t (id INT PRIMARY KEY, k VARCHAR(10) CHARACTER SET latin2 "
                             "COLLATE latin2_czech_cs UNIQUE, e VARCHAR(10) COLLATE utf8mb4_0900_ai_ci UNIQUE)",
                        "db")
        plan = plan_table(cat.get("db", "t"), cat)
        assert plan.partial == "collation latin2_czech_cs of db.t.k: equality approximated, WRITESET may be off"
    finally:
        weights.exact_canonicalizer.cache_clear()
        canonicalizer.cache_clear()


def test_values_outside_the_table_are_reported():
    cat = Catalog()
    apply_statement(cat, "CREATE TABLE t (id INT PRIMARY KEY, k VARCHAR(10) COLLATE utf8mb4_0900_ai_ci UNIQUE)",
                    "db")
    plan = plan_table(cat.get("db", "t"), cat)
    assert plan.partial is None  # exact within the table: nothing to say up front
    before = weights.APPROXIMATED["utf8mb4_0900_ai_ci"]
    out: list[int] = []
    row_hashes(plan, {0: 1, 1: "中".encode()}, out, True)  # CJK: outside the stored repertoire
    assert weights.APPROXIMATED["utf8mb4_0900_ai_ci"] > before
    assert "equality approximated, WRITESET may be off" in approximated_caveat(["utf8mb4_0900_ai_ci"])
