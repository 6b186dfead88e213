"""Fresh binlogs from real servers in every run (not only the committed fixtures): a MySQL 9.x
and a MariaDB 10.11 server started on loopback, a small seeded workload, then the reader and
the clocks against the reference readers and MySQL's own last_committed."""

from __future__ import annotations

import random

import pytest

import oracle
import reference
from conftest import free_port, need, server_name
from lagadvisor.binlog import read_transactions
from lagadvisor.depgraph.pipeline import ClockOptions
from lagadvisor.depgraph.read import prepare
from lagadvisor.depgraph.read import run_clocks

realservers = oracle.realservers



def _workload(seed: int, ai_collation: str = "utf8mb4_0900_ai_ci") -> str:
    rnd = random.Random(seed)
    out = ["CREATE DATABASE w", "USE w",
           f"CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20) COLLATE {ai_collation} NOT NULL, "
           "n INT, UNIQUE KEY (v))",
           "CREATE TABLE b (k VARCHAR(16) COLLATE utf8mb4_general_ci PRIMARY KEY, c INT)"]
    names = ["alpha", "Alpha", "ÁLPHA", "beta", "gamma", "delta ", "delta"]
    for i in range(300):
        r = rnd.random()
        if r < 0.4:
            out.append(f"INSERT INTO a VALUES ({i}, '{rnd.choice(names)}{i}', {rnd.randint(0, 9)})")
        elif r < 0.6:
            out.append(f"UPDATE a SET n = n + 1 WHERE id = {rnd.randint(0, i)}")
        elif r < 0.8:
            out.append(f"REPLACE INTO b VALUES ('{rnd.choice(names)}', {i})")
        elif r < 0.9:
            out.append(f"DELETE FROM b WHERE k = '{rnd.choice(names)}'")
        else:
            out.append(f"BEGIN; INSERT INTO a VALUES ({1000 + i}, 'x{i}', 1); "
                       f"UPDATE a SET n = 0 WHERE id = {rnd.randint(0, i)}; COMMIT")
    return ";\n".join(out) + ";"


@pytest.mark.parametrize("options", [[], ["--binlog-transaction-compression=ON"]],
                         ids=["plain", "compressed"])
def test_fresh_mysql_binlog(options, tmp_path):
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    srv = realservers.MySQLServer(server_name("lagadvisor-test-fresh"), free_port(),
                                  ["--server-id=3", "--log-bin=binlog", "--binlog-row-metadata=FULL",
                                   *options], fresh=True)
    srv.start()
    try:
        srv.sql(_workload(len(options)))
        srv.sql("FLUSH BINARY LOGS")
        files = [str(p) for p in srv.binlog_files()][:-1]
        expected = []
        for f in files:
            expected += reference.mysqlbinlog_transactions(oracle.mysqlbinlog(f).stdout)
        got = [(t.gtid, t.last_committed, t.sequence_number) for f in files for t in read_transactions(f)]
        assert got == expected and len(got) > 200
        opts = ClockOptions(commit_order="serial")
        run = prepare(files, opts)
        pairs = [(t.last_committed, c.writeset) for t, ws, c in run_clocks(files, run, opts)]
        assert all(a == b for a, b in pairs), [p for p in pairs if p[0] != p[1]][:5]
    finally:
        srv.stop()
        srv.remove()


@pytest.mark.parametrize("fmt,compress", [("ROW", False), ("MIXED", False), ("STATEMENT", False), ("ROW", True),
                                          ("MIXED", True)], ids=["ROW", "MIXED", "STATEMENT", "ROW-compressed",
                                                                 "MIXED-compressed"])
def test_fresh_mariadb_binlog(fmt, compress):
    """MIXED is MariaDB's default: a statement-logged group (its GTID event stands for BEGIN) was
    cut at its first statement and the rest read as GTID-less transactions. ``log_bin_compress``
    writes QUERY_COMPRESSED and *_ROWS_COMPRESSED events (zlib) of every statement and row batch
    over the minimum length."""
    need(oracle.have_mariadb_binlog(), "MariaDB 10.11")
    compressed = ["--log-bin-compress=ON", "--log-bin-compress-min-len=10"] if compress else []
    srv = realservers.MariaDBServer(server_name(f"lagadvisor-test-maria-{fmt.lower()}{'-z' * compress}"), free_port(),
                                    ["--server-id=4", "--log-bin=mariadb-bin", f"--binlog-format={fmt}", *compressed],
                                    fresh=True)
    srv.start()
    try:
        srv.sql(_workload(7, "utf8mb4_unicode_ci"))  # MariaDB has no 0900 collations
        srv.sql("FLUSH BINARY LOGS")
        files = [str(p) for p in srv.binlog_files()][:-1]
        expected, texts = [], []
        for f in files:
            r = oracle.mariadb_binlog(f)
            assert r.returncode == 0, r.stderr
            expected += reference.mariadb_transactions(r.stdout)
            texts.append(r.stdout)
        got = [(t.gtid, t.commit_id) for f in files for t in read_transactions(f)]
        assert got == expected and len(got) > 200
        if compress:
            assert any("Write_compressed_rows" in text or "Query_compressed" in text for text in texts)
    finally:
        srv.stop()
        srv.remove()


def test_mariadb_two_phase_alter():
    """binlog_alter_two_phase (10.8+) logs START ALTER, then COMMIT ALTER or ROLLBACK ALTER with
    the same statement: applied at both, the second failed and the table's keys were lost for
    every later transaction (WRITESET fell back to serial); a rolled-back one was applied too."""
    need(oracle.have_mariadb_binlog(), "MariaDB 10.11")
    from lagadvisor.analysis.analyze import analyze

    srv = realservers.MariaDBServer(server_name("lagadvisor-test-maria-alter"), free_port(),
                                    ["--server-id=5", "--log-bin=mariadb-bin", "--binlog-format=ROW",
                                     "--binlog-alter-two-phase=ON"], fresh=True)
    srv.start()
    try:
        srv.sql("CREATE DATABASE a2; USE a2; CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB; "
                "INSERT INTO t VALUES (1, 1), (2, 1); ALTER TABLE t ADD COLUMN w INT DEFAULT 3; "
                "UPDATE t SET w = w + 1 WHERE id = 1")
        with pytest.raises(Exception):   # duplicate v: the server logs ROLLBACK ALTER
            srv.sql("ALTER TABLE a2.t ADD UNIQUE KEY uv (v), ADD COLUMN x INT")
        srv.sql("USE a2; UPDATE t SET w = w + 1 WHERE id = 2; ALTER TABLE t DROP COLUMN v; "
                "UPDATE t SET w = w + 1 WHERE id = 2; FLUSH BINARY LOGS")
        files = [str(p) for p in srv.binlog_files()][:-1]
        text = "".join(oracle.mariadb_binlog(f).stdout for f in files)
        assert "START ALTER" in text and "COMMIT ALTER" in text and "ROLLBACK ALTER" in text
        got = [(t.gtid, t.commit_id) for f in files for t in read_transactions(f)]
        assert got == reference.mariadb_transactions(text)
        a = analyze(files, ClockOptions())
        assert a.policies is not None and set(a.policies.fallbacks) == {"ddl"}, a.policies.fallbacks  # no unknown_schema
        assert not [w for w in a.warnings if "unknown" in w], a.warnings
    finally:
        srv.stop()
        srv.remove()


def test_approximated_collations_warn_alike_natively_and_in_the_reference(tmp_path):
    """Values a collation's weight table cannot decide (emoji under utf8mb4_general_ci and
    utf8mb4_unicode_ci): the native core said one line for the run counting values, the
    reference one line per transaction's set of collations counting transactions."""
    import json
    import os
    import subprocess
    import sys

    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    srv = realservers.MySQLServer(server_name("lagadvisor-test-approx"), free_port(),
                                  ["--server-id=6", "--log-bin=binlog", "--binlog-row-metadata=FULL"], fresh=True)
    srv.start()
    try:
        stmts = ["CREATE DATABASE c", "USE c",
                 "CREATE TABLE g (id INT PRIMARY KEY, k VARCHAR(8) COLLATE utf8mb4_general_ci, UNIQUE KEY (k))",
                 "CREATE TABLE u (id INT PRIMARY KEY, k VARCHAR(8) COLLATE utf8mb4_unicode_ci, UNIQUE KEY (k))"]
        for i, ch in enumerate(["\U0001F600", "\U0001F601", "\U0001F680", "a", "b"]):
            # (both collations weigh every character past U+FFFF alike: one per prefix)
            stmts += [f"INSERT INTO g VALUES ({i}, '{i}{ch}')", f"INSERT INTO u VALUES ({i}, '{ch}{i}')"]
        srv.sql(";\n".join(stmts) + ";\nFLUSH BINARY LOGS;")
        files = [str(p) for p in srv.binlog_files()][:-1]
        out = []
        for pure in (False, True):
            env = dict(os.environ, LAGADVISOR_PUREPYTHON="1") if pure else {k: v for k, v in os.environ.items()
                                                                           if k != "LAGADVISOR_PUREPYTHON"}
            r = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", "--format", "json", *files],
                               capture_output=True, text=True, env=env, timeout=300)
            assert r.returncode == 0, r.stderr
            out.append(json.loads(r.stdout)["warnings"])
        assert out[0] == out[1], out
        said = [w for w in out[0] if "cannot decide" in w]
        assert len(said) == 1 and said[0].endswith(" values)"), out[0]
    finally:
        srv.stop()
        srv.remove()
