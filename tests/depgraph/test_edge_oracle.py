"""MySQL is the oracle on the statements a fixture workload never writes: foreign-key actions
(cascades, SET NULL, a self-referencing table, a two-column key onto a unique index,
``foreign_key_checks=0``), XA (prepared, committed, rolled back, one phase), CREATE TABLE ...
SELECT, a statement that fails inside a transaction, savepoints, temporary tables, multi-table
UPDATE/DELETE, a generated invisible primary key, nullable unique keys, generated columns in
unique keys, partitions and their admin statements, a table whose only key is UNIQUE NOT NULL,
MyISAM, no-op and DCL transactions, REPLACE and ON DUPLICATE KEY UPDATE, JSON and TEXT prefixes.

One connection writes it all, so MySQL 9.x records exactly WRITESET's answer (the commit-order
parent is always the previous transaction; ``sql/rpl_trx_tracking.cc``), and every scenario ends
with transactions on the rows its odd statement touched: a hash the server kept or dropped shows
in their ``last_committed``. ``export --commit-order serial`` must reproduce every one, natively
and in the reference, with the schema and from the binlog's own DDL alone, except where the binlog
cannot tell: a statement that fails inside a transaction leaves its rows' hashes in the server's
writeset (``Rpl_transaction_write_set_ctx`` is truncated by ``ROLLBACK TO SAVEPOINT`` only), but
not its rows in the binlog."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pymysql
import pytest

import oracle
from conftest import free_port, need, server_name

pytestmark = pytest.mark.server

#: (database, set-up, steps): a step is one autocommitted statement or a list run as one
#: transaction; a statement starting with "!" fails on the server (a duplicate key).
SCENARIOS = [
    ("fk_cascade", [
        "CREATE TABLE p (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, v INT, FOREIGN KEY (pid) REFERENCES p(id) "
        "ON DELETE CASCADE ON UPDATE CASCADE)",
        "INSERT INTO p VALUES (1,0),(2,0),(3,0)", "INSERT INTO c VALUES (10,1,0),(11,2,0),(12,3,0)"],
     ["UPDATE c SET v=1 WHERE id=10", "UPDATE c SET v=1 WHERE id=11", "DELETE FROM p WHERE id=2",
      "UPDATE c SET v=2 WHERE id=12", "UPDATE p SET id=30 WHERE id=3", "UPDATE c SET v=3 WHERE id=12",
      "UPDATE c SET v=3 WHERE id=10", "INSERT INTO c VALUES (13,1,0)", "INSERT INTO c VALUES (14,NULL,0)",
      "INSERT INTO c VALUES (15,NULL,0)", "UPDATE c SET v=9 WHERE id=13"]),
    ("fk_setnull_selfref", [
        "CREATE TABLE e (id INT PRIMARY KEY, boss INT NULL, v INT, FOREIGN KEY (boss) REFERENCES e(id) "
        "ON DELETE SET NULL)", "INSERT INTO e VALUES (1,NULL,0),(2,1,0),(3,1,0),(4,2,0)"],
     ["UPDATE e SET v=1 WHERE id=3", "UPDATE e SET v=1 WHERE id=4", "DELETE FROM e WHERE id=2",
      "UPDATE e SET v=2 WHERE id=3"]),
    ("fk_multicol_uk", [
        "CREATE TABLE p2 (id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(10) NOT NULL, UNIQUE KEY uab (a,b))",
        "CREATE TABLE c2 (id INT PRIMARY KEY, a INT NULL, b VARCHAR(10) NULL, v INT, "
        "FOREIGN KEY (a,b) REFERENCES p2(a,b))", "INSERT INTO p2 VALUES (1,1,'x'),(2,2,'y')"],
     ["INSERT INTO c2 VALUES (1,1,'x',0)", "INSERT INTO c2 VALUES (2,1,'x',0)", "INSERT INTO c2 VALUES (3,2,'y',0)",
      "INSERT INTO c2 VALUES (4,1,NULL,0)", "INSERT INTO c2 VALUES (5,1,NULL,0)",
      "INSERT INTO c2 VALUES (6,NULL,'y',0)", "INSERT INTO c2 VALUES (7,2,NULL,0)", "UPDATE c2 SET v=1 WHERE id=3",
      "UPDATE c2 SET v=1 WHERE id=1"]),
    ("fk_checks_off", [
        "CREATE TABLE p3 (id INT PRIMARY KEY)",
        "CREATE TABLE c3 (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p3(id))",
        "INSERT INTO p3 VALUES (1),(2)"],
     [["SET SESSION foreign_key_checks=0", "INSERT INTO c3 VALUES (1,1)", "SET SESSION foreign_key_checks=1"],
      "INSERT INTO c3 VALUES (2,1)", "INSERT INTO c3 VALUES (3,2)",
      ["SET SESSION foreign_key_checks=0", "INSERT INTO c3 VALUES (4,2)", "SET SESSION foreign_key_checks=1"],
      "INSERT INTO c3 VALUES (5,2)"]),
    ("xa", ["CREATE TABLE x (id INT PRIMARY KEY, v INT)", "INSERT INTO x VALUES (1,0),(2,0),(3,0),(4,0)"],
     [["XA START 'a'", "UPDATE x SET v=1 WHERE id=1", "XA END 'a'", "XA PREPARE 'a'"], "XA COMMIT 'a'",
      "UPDATE x SET v=2 WHERE id=2", "UPDATE x SET v=2 WHERE id=1",
      ["XA START 'b'", "UPDATE x SET v=3 WHERE id=3", "XA END 'b'", "XA PREPARE 'b'"], "XA ROLLBACK 'b'",
      "UPDATE x SET v=3 WHERE id=4", "UPDATE x SET v=4 WHERE id=3",
      ["XA START 'c'", "UPDATE x SET v=5 WHERE id=2", "XA END 'c'", "XA COMMIT 'c' ONE PHASE"],
      "UPDATE x SET v=6 WHERE id=4", "UPDATE x SET v=6 WHERE id=2"]),
    ("ctas", ["CREATE TABLE s (id INT PRIMARY KEY, v INT)", "INSERT INTO s VALUES (1,0),(2,0)"],
     ["UPDATE s SET v=1 WHERE id=1", "CREATE TABLE s2 (PRIMARY KEY (id)) AS SELECT * FROM s",
      "UPDATE s SET v=2 WHERE id=2", "UPDATE s2 SET v=2 WHERE id=1", "UPDATE s SET v=3 WHERE id=1",
      "CREATE TABLE s3 AS SELECT * FROM s", "UPDATE s SET v=4 WHERE id=2"]),
    ("stmt_rollback", ["CREATE TABLE r (id INT PRIMARY KEY, v INT)", "INSERT INTO r VALUES (1,0),(2,0),(3,0)"],
     [["BEGIN", "UPDATE r SET v=1 WHERE id=1", "!INSERT INTO r VALUES (10,0),(11,0),(2,0)",
       "UPDATE r SET v=1 WHERE id=3", "COMMIT"],
      "UPDATE r SET v=2 WHERE id=2", "INSERT INTO r VALUES (10,5)", "INSERT INTO r VALUES (11,5)",
      ["BEGIN", "!UPDATE r SET id=3 WHERE id=2", "UPDATE r SET v=9 WHERE id=1", "COMMIT"],
      "UPDATE r SET v=7 WHERE id=2", "UPDATE r SET v=7 WHERE id=10"]),
    ("savepoint", ["CREATE TABLE sp (id INT PRIMARY KEY, v INT)", "INSERT INTO sp VALUES (1,0),(2,0),(3,0)"],
     [["BEGIN", "UPDATE sp SET v=1 WHERE id=1", "SAVEPOINT s1", "UPDATE sp SET v=1 WHERE id=2",
       "ROLLBACK TO SAVEPOINT s1", "COMMIT"],
      "UPDATE sp SET v=2 WHERE id=2", "UPDATE sp SET v=2 WHERE id=3", "UPDATE sp SET v=2 WHERE id=1",
      ["BEGIN", "SAVEPOINT s2", "UPDATE sp SET v=3 WHERE id=3", "ROLLBACK TO SAVEPOINT s2",
       "UPDATE sp SET v=3 WHERE id=1", "COMMIT"],
      "UPDATE sp SET v=4 WHERE id=3"]),
    ("temporary", ["CREATE TABLE tp (id INT PRIMARY KEY, v INT)", "INSERT INTO tp VALUES (1,0),(2,0)"],
     ["CREATE TEMPORARY TABLE tt (id INT PRIMARY KEY)", "UPDATE tp SET v=1 WHERE id=1", "INSERT INTO tt VALUES (1)",
      ["BEGIN", "INSERT INTO tt VALUES (2)", "UPDATE tp SET v=2 WHERE id=2", "COMMIT"],
      "UPDATE tp SET v=3 WHERE id=1", "DROP TEMPORARY TABLE tt", "UPDATE tp SET v=4 WHERE id=2"]),
    ("multitable", [
        "CREATE TABLE m1 (id INT PRIMARY KEY, v INT)", "CREATE TABLE m2 (id INT PRIMARY KEY, v INT)",
        "INSERT INTO m1 VALUES (1,0),(2,0),(3,0)", "INSERT INTO m2 VALUES (1,0),(2,0),(3,0)"],
     ["UPDATE m1 JOIN m2 USING (id) SET m1.v=1, m2.v=1 WHERE id=1", "UPDATE m1 SET v=2 WHERE id=2",
      "UPDATE m2 SET v=2 WHERE id=1", "DELETE m1, m2 FROM m1 JOIN m2 USING (id) WHERE id=3",
      "INSERT INTO m2 VALUES (3,0)", "UPDATE m1 SET v=3 WHERE id=1"]),
    ("gipk", ["SET SESSION sql_generate_invisible_primary_key=ON", "CREATE TABLE g (a INT, b INT)",
              "SET SESSION sql_generate_invisible_primary_key=OFF", "INSERT INTO g VALUES (1,1),(2,2),(3,3)"],
     ["UPDATE g SET b=5 WHERE a=1", "UPDATE g SET b=5 WHERE a=2", "UPDATE g SET b=6 WHERE a=1",
      "INSERT INTO g VALUES (4,4)", "UPDATE g SET b=7 WHERE a=3"]),
    ("nullable_uk", [
        "CREATE TABLE n (id INT PRIMARY KEY, a INT NULL, b INT NULL, UNIQUE KEY uab (a,b))",
        "CREATE TABLE n2 (a INT NOT NULL, b INT NULL, v INT, UNIQUE KEY ua (a), UNIQUE KEY ub (b))",
        "INSERT INTO n VALUES (1,1,NULL),(2,2,2)", "INSERT INTO n2 VALUES (1,NULL,0),(2,2,0)"],
     ["INSERT INTO n VALUES (3,1,NULL)", "INSERT INTO n VALUES (4,1,NULL)", "UPDATE n SET a=9 WHERE id=2",
      "INSERT INTO n VALUES (5,2,2)", "UPDATE n2 SET v=1 WHERE a=1", "UPDATE n2 SET v=1 WHERE a=2",
      "UPDATE n2 SET v=2 WHERE a=1", "INSERT INTO n2 VALUES (3,NULL,0)", "UPDATE n2 SET b=7 WHERE a=3",
      "UPDATE n2 SET v=3 WHERE a=2"]),
    ("gencols", [
        "CREATE TABLE gc (id INT PRIMARY KEY, a INT, s INT AS (a*2) STORED, vv INT AS (a+1) VIRTUAL, "
        "UNIQUE KEY us (s), UNIQUE KEY uv (vv))", "INSERT INTO gc (id, a) VALUES (1,1),(2,2),(3,3)"],
     ["UPDATE gc SET a=10 WHERE id=1", "DELETE FROM gc WHERE id=2", "INSERT INTO gc (id, a) VALUES (4,2)",
      "UPDATE gc SET a=11 WHERE id=3", "INSERT INTO gc (id,a) VALUES (5,3)", "UPDATE gc SET a=12 WHERE id=4"]),
    ("partitioned", [
        "CREATE TABLE pt (id INT, k INT, v INT, PRIMARY KEY (id,k)) PARTITION BY HASH(k) PARTITIONS 4",
        "INSERT INTO pt VALUES (1,1,0),(2,2,0),(3,3,0)"],
     ["UPDATE pt SET v=1 WHERE id=1", "UPDATE pt SET v=1 WHERE id=2", "UPDATE pt SET v=2 WHERE id=1",
      "ALTER TABLE pt TRUNCATE PARTITION p1", "UPDATE pt SET v=3 WHERE id=2", "ANALYZE TABLE pt",
      "UPDATE pt SET v=3 WHERE id=3", "OPTIMIZE TABLE pt", "UPDATE pt SET v=4 WHERE id=3"]),
    ("uk_only", ["CREATE TABLE u (a INT NOT NULL, b INT, UNIQUE KEY ua (a))", "INSERT INTO u VALUES (1,0),(2,0)"],
     ["UPDATE u SET b=1 WHERE a=1", "UPDATE u SET b=1 WHERE a=2", "UPDATE u SET b=2 WHERE a=1",
      "UPDATE u SET a=5 WHERE a=2", "INSERT INTO u VALUES (2,0)"]),
    ("myisam", ["CREATE TABLE my (id INT PRIMARY KEY, v INT) ENGINE=MyISAM", "INSERT INTO my VALUES (1,0),(2,0)"],
     ["UPDATE my SET v=1 WHERE id=1", "UPDATE my SET v=1 WHERE id=2", "UPDATE my SET v=2 WHERE id=1",
      "INSERT INTO my VALUES (3,0)", "UPDATE my SET v=3 WHERE id=2"]),
    ("noop_dcl", ["CREATE TABLE z (id INT PRIMARY KEY, v INT)", "INSERT INTO z VALUES (1,0),(2,0)"],
     ["UPDATE z SET v=1 WHERE id=1", ["BEGIN", "UPDATE z SET v=1 WHERE id=1", "COMMIT"],
      "UPDATE z SET v=0 WHERE id=99", "UPDATE z SET v=2 WHERE id=2", "UPDATE z SET v=3 WHERE id=1",
      "CREATE USER IF NOT EXISTS edge_u1", "UPDATE z SET v=4 WHERE id=2", "TRUNCATE TABLE z",
      "INSERT INTO z VALUES (1,0)"]),
    ("replace_ondup", [
        "CREATE TABLE rp (id INT PRIMARY KEY, u INT, v INT, UNIQUE KEY uu (u))",
        "INSERT INTO rp VALUES (1,1,0),(2,2,0),(3,3,0)"],
     ["REPLACE INTO rp VALUES (4,1,0)", "UPDATE rp SET v=1 WHERE id=2", "UPDATE rp SET v=1 WHERE id=4",
      "INSERT INTO rp VALUES (5,2,0) ON DUPLICATE KEY UPDATE v=v+1", "UPDATE rp SET v=2 WHERE id=3",
      "UPDATE rp SET v=3 WHERE u=2", "REPLACE INTO rp VALUES (3,4,0)", "UPDATE rp SET v=4 WHERE id=3"]),
    ("json_blob", [
        "CREATE TABLE jb (id INT PRIMARY KEY, j JSON, t TEXT, bb BLOB, UNIQUE KEY ut (t(10)))",
        "INSERT INTO jb VALUES (1,'{\"a\":1}','aaaaaaaaaaXX','x'),(2,'[1]','bbbbbbbbbbYY','y')"],
     ["UPDATE jb SET j=JSON_SET(j,'$.a',2) WHERE id=1", "UPDATE jb SET t='aaaaaaaaaaZZ' WHERE id=1",
      "UPDATE jb SET bb='z' WHERE id=2", "INSERT INTO jb VALUES (3,NULL,'cccccccccc',NULL)",
      "UPDATE jb SET t='aaaaaaaaab' WHERE id=2"]),
]

#: The steps whose rows a failed statement had written (and the server still hashed): their
#: recorded ``last_committed`` is the failed statement's transaction, later than the binlog shows.
HIDDEN = {("stmt_rollback", 2), ("stmt_rollback", 3)}


def _last_gtid_number(gtid_set: str) -> int:
    return int(gtid_set.replace("\n", "").split(":")[-1].split("-")[-1])


def _write(port: int) -> dict[int, tuple[str, int]]:
    """Runs the scenarios; the GTID number of each step's transaction -> (database, step)."""
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    steps: dict[int, tuple[str, int]] = {}
    with conn.cursor() as cur:
        def executed() -> int:
            cur.execute("SELECT @@GLOBAL.gtid_executed")
            return _last_gtid_number(cur.fetchone()[0])

        for db, setup, actions in SCENARIOS:
            cur.execute(f"CREATE DATABASE {db}")
            cur.execute(f"USE {db}")
            for sql in setup:
                cur.execute(sql)
            for i, action in enumerate(actions):
                before = executed()
                for sql in action if isinstance(action, list) else [action]:
                    try:
                        cur.execute(sql.lstrip("!"))
                        cur.fetchall()
                    except pymysql.MySQLError:
                        assert sql.startswith("!"), sql
                    else:
                        assert not sql.startswith("!"), f"{sql} did not fail"
                for n in range(before + 1, executed() + 1):
                    steps[n] = (db, i)
    conn.close()
    return steps


@pytest.fixture(scope="module")
def edge_binlogs(tmp_path_factory):
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    out = tmp_path_factory.mktemp("edge")
    srv = oracle.realservers.MySQLServer(
        server_name("lagadvisor-test-edge"), free_port(),
        ["--server-id=7", "--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON",
         "--binlog-row-metadata=FULL"], fresh=True)
    srv.start()
    try:
        srv.sql("RESET BINARY LOGS AND GTIDS")
        steps = _write(srv.port)
        (out / "schema.sql").write_text(srv.mysqldump_no_data(*[db for db, _, _ in SCENARIOS]))
        srv.sql("FLUSH BINARY LOGS")
        files = []
        for p in srv.binlog_files()[:-1]:
            files.append(str(out / p.name))
            shutil.copyfile(p, files[-1])
    finally:
        srv.stop()
        srv.remove()
    return files, out / "schema.sql", steps


@pytest.mark.parametrize("pure", ["0", "1"], ids=["native", "reference"])
@pytest.mark.parametrize("schema", [False, True], ids=["binlog-ddl", "schema"])
def test_edge_statements_against_mysql(edge_binlogs, pure, schema):
    files, schema_file, steps = edge_binlogs
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "export", "--commit-order", "serial",
                        *(["--schema", str(schema_file)] if schema else []), *files],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, LAGADVISOR_PUREPYTHON=pure))
    assert r.returncode == 0, r.stderr
    # nothing to warn about: every table's keys are known, a CREATE TABLE ... SELECT's own table too
    assert [line for line in r.stderr.splitlines() if "warning" in line] == []
    records = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(records) == max(steps) and len(records) > 190
    by_step = {}
    for rec in records:
        step = steps.get(int(rec["gtid"].rsplit(":", 1)[1]))
        if step:
            by_step[step] = rec
    differ = {s: (rec["last_committed"], rec["computed"]["WRITESET"]) for s, rec in by_step.items()
              if rec["computed"]["WRITESET"] != rec["last_committed"]}
    assert set(differ) == HIDDEN, differ
    # the failed statement's transaction, written just before the step that updates row 2
    assert all(recorded > computed for recorded, computed in differ.values())
    fallback = {s: rec["fallback"] for s, rec in by_step.items()}
    # XA COMMIT / XA ROLLBACK of a prepared transaction: no rows, not empty, a reset (not DDL);
    # the prepared part and a one-phase commit are tracked as any transaction
    assert [fallback[("xa", i)] for i in (0, 1, 4, 5, 8)] == [None, "empty_writeset", None, "empty_writeset", None]
    assert [by_step[("xa", i)]["xa"] for i in (0, 1, 4, 5, 8)] == [True] * 5
    assert fallback[("ctas", 1)] == fallback[("ctas", 5)] == "ctas"
    # a cascade's parent and a self-referencing table are foreign-key parents; their children are not
    assert fallback[("fk_cascade", 2)] == fallback[("fk_cascade", 4)] == "fk_parent"
    assert fallback[("fk_cascade", 5)] is None
    assert {fallback[("fk_setnull_selfref", i)] for i in range(4)} == {"fk_parent"}
    assert fallback[("noop_dcl", 5)] == fallback[("noop_dcl", 7)] == "ddl"
    # an UPDATE that changed nothing writes no transaction
    assert ("noop_dcl", 2) not in by_step
