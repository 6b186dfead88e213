"""Table definitions read from a real MySQL 9.x server (started by the test, loopback only) with
a least-privilege user, compared with the DDL reader's reading of the same schema, and used by
the CLI for a binlog whose tables were created before it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import oracle
from conftest import FIXTURES, free_port, need, server_name
from lagadvisor.schema.ddl import load_schema_file
from lagadvisor.server.connection import ServerOptions
from lagadvisor.server.schema import catalog_from_server

realservers = oracle.realservers
SCHEMA = FIXTURES / "single_full" / "schema.sql"
USER, PASSWORD = "la_reader", "la-reader-pw-1"



@pytest.fixture(scope="module")
def server():
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    srv = realservers.MySQLServer(server_name("lagadvisor-test-live"), free_port(),
                                  ["--server-id=7", "--log-bin=binlog"], fresh=True)
    srv.start()
    try:
        srv.sql(SCHEMA.read_text())
        srv.sql(f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'; "
                f"GRANT SELECT ON wl.* TO '{USER}'@'%'; GRANT SELECT ON wl_fk.* TO '{USER}'@'%'; "
                f"GRANT REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO '{USER}'@'%'")
        yield srv
    finally:
        srv.stop()
        srv.remove()


def _opts(server) -> ServerOptions:
    return ServerOptions("127.0.0.1", server.port, USER, PASSWORD)


def test_least_privilege_user_cannot_write(server):
    import mysql.connector

    conn = mysql.connector.connect(host="127.0.0.1", port=server.port, user=USER, password=PASSWORD)
    try:
        cur = conn.cursor()
        with pytest.raises(mysql.connector.Error):
            cur.execute("INSERT INTO wl.t_hot VALUES (999999, 1)")
    finally:
        conn.close()


def test_server_catalog_equals_ddl_reading(server):
    live = catalog_from_server(_opts(server))
    parsed = load_schema_file(SCHEMA.read_text())
    assert sorted(live.tables) == sorted(parsed.tables)
    for key, lt in live.tables.items():
        pt = parsed.tables[key]
        assert [(c.name, c.nullable) for c in lt.columns] == [(c.name, c.nullable) for c in pt.columns], key
        assert [c.collation for c in lt.columns] == [c.collation for c in pt.columns], key
        assert {(k.name, k.parts, k.primary) for k in lt.keys} == {(k.name, k.parts, k.primary) for k in pt.keys}, key
        assert {(f.columns, f.ref_table, f.ref_columns) for f in lt.foreign_keys} == \
            {(f.columns, f.ref_table, f.ref_columns) for f in pt.foreign_keys}, key
        # the non-unique indexes, whose entries the replica writes (information_schema.STATISTICS)
        assert {(k.name, k.parts) for k in lt.indexes} == {(k.name, k.parts) for k in pt.indexes}, key
    assert live.is_fk_parent("wl_fk", "parent") and not live.is_fk_parent("wl_fk", "child")
    assert [k.name for k in live.get("wl_fk", "child").indexes] == ["ix_parent"]


def test_bad_credentials_one_line_error(server, tmp_path: Path):
    env = dict(os.environ, LAGADVISOR_PASSWORD="wrong")
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "export", "--host", "127.0.0.1", "--port",
                        str(server.port), "--user", USER, str(FIXTURES / "single_full" / "binlog.000001")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and "cannot connect" in r.stderr and "Traceback" not in r.stderr


def test_cli_uses_server_schema_for_tables_created_before_the_file(server, tmp_path: Path):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "depgraph"))
    from test_policies_oracle import splice_after_last_ddl

    part = tmp_path / "binlog.000001"
    splice_after_last_ddl(str(FIXTURES / "single_minimal_metadata" / "binlog.000001"), part)
    env = dict(os.environ, LAGADVISOR_PASSWORD=PASSWORD)
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "export", "--commit-order", "serial",
                        "--host", "127.0.0.1", "--port", str(server.port), "--user", USER, str(part)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "unknown" not in r.stderr
    records = [json.loads(x) for x in r.stdout.splitlines()]
    assert not any(x["fallback"] == "unknown_schema" for x in records)
    same = sum(x["computed"]["WRITESET"] == x["last_committed"] for x in records)
    assert same >= 0.9 * len(records)
