"""MySQL is the oracle on seeded random workloads: one connection (so the recorded clock is
WRITESET's answer) runs 400 transactions of one to five statements over a parent and a child
table (ON DELETE SET NULL, a unique key under an accent- and case-insensitive collation), a table
whose unique keys are one nullable column and a two-column one, a table without keys and a
PAD SPACE primary key: INSERT/UPDATE IGNORE that skip duplicates and missing parents,
DELETE, ON DUPLICATE KEY UPDATE and REPLACE. With the default history and with a history of 9,
where capacity resets keep happening (``Writeset_trx_dependency_tracker``), every transaction
must match, natively and in the reference."""

from __future__ import annotations

import random

import pytest

import oracle
from conftest import need
from test_edge_oracle import _binlogs, _export

pytestmark = pytest.mark.server

SCHEMA = [
    "CREATE TABLE p (id INT PRIMARY KEY, u INT NULL, v INT, UNIQUE KEY uu (u))",
    "CREATE TABLE c (id INT PRIMARY KEY, pid INT NULL, w VARCHAR(8) COLLATE utf8mb4_0900_ai_ci NULL, v INT, "
    "UNIQUE KEY uw (w), FOREIGN KEY (pid) REFERENCES p(id) ON DELETE SET NULL)",
    "CREATE TABLE k (a INT NOT NULL, b INT NULL, v INT, UNIQUE KEY ua (a), UNIQUE KEY uab (a, b))",
    "CREATE TABLE n (a INT, v INT)",
    "CREATE TABLE s (k VARCHAR(6) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT)",
]
WORDS = ["a", "A", "á", "b", "B ", "c", "ab", "aB"]


def _statement(r: random.Random) -> str:
    x, i, j = r.random(), r.randint(1, 12), r.randint(1, 12)
    maybe = r.choice(["NULL", str(j)])
    word = r.choice(["NULL", repr(r.choice(WORDS))])
    for bound, sql in ((0.12, f"INSERT IGNORE INTO p VALUES ({i}, {maybe}, 0)"),
                       (0.22, f"UPDATE IGNORE p SET u = {maybe} WHERE id = {i}"),
                       (0.27, f"DELETE FROM p WHERE id = {i}"),
                       (0.40, f"INSERT IGNORE INTO c VALUES ({i}, {maybe}, {word}, 0)"),
                       (0.50, f"UPDATE IGNORE c SET w = {word}, v = v + 1 WHERE id = {i}"),
                       (0.55, f"UPDATE IGNORE c SET pid = {maybe} WHERE id = {i}"),
                       (0.65, f"INSERT IGNORE INTO k VALUES ({i}, {maybe}, 0)"),
                       (0.72, f"UPDATE IGNORE k SET b = {maybe}, v = v + 1 WHERE a = {i}"),
                       (0.76, f"DELETE FROM k WHERE a = {i}"),
                       (0.82, f"INSERT INTO n VALUES ({i}, 0)"),
                       (0.86, f"UPDATE n SET v = v + 1 WHERE a = {i}"),
                       (0.93, f"INSERT INTO s VALUES ({repr(r.choice(WORDS))}, 0) ON DUPLICATE KEY UPDATE v = v + 1")):
        if x < bound:
            return sql
    return f"REPLACE INTO s VALUES ({repr(r.choice(WORDS))}, {i})"


def workload(seed: int, transactions: int = 400) -> list:
    """The scenario ``test_edge_oracle._write`` runs: the schema, then the random transactions."""
    r = random.Random(seed)
    steps = []
    for _ in range(transactions):
        n = r.choice([1, 1, 1, 2, 3, 5])
        steps.append(_statement(r) if n == 1 else ["BEGIN", *(_statement(r) for _ in range(n)), "COMMIT"])
    return [("w", SCHEMA, steps)]


@pytest.mark.parametrize("seed,history", [(11, None), (12, 9)], ids=["default-history", "history-9"])
def test_random_workload_against_mysql(tmp_path, seed, history):
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    options = () if history is None else (f"--binlog-transaction-dependency-history-size={history}",)
    files, schema, steps = _binlogs(tmp_path, workload(seed), options)
    for pure in ("0", "1"):
        n, by_step, differ = _export((files, schema, steps), pure, False, history=history)
        assert n > 250 and differ == {}, differ
        reasons = {rec["fallback"] for rec in by_step.values()}
        assert {"fk_parent", "no_primary_key"} <= reasons
        assert (history is not None) == bool(reasons & {"history_full", "writeset_limit"}), reasons
