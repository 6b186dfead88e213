"""Live mode against a real MySQL 9.x server started by the test, with a least-privilege user
(REPLICATION SLAVE, REPLICATION CLIENT, SELECT): streamed binlogs decode exactly like the
server's files on disk, a killed dump connection is resumed, the CLI reads the password from the
environment and settings from the server, and nothing is written to the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

import oracle
from conftest import FIXTURES, free_port, need, server_name
from lagadvisor.binlog.scan import FileSummary, read_transactions
from lagadvisor.server.connection import pymysql_settings
from lagadvisor.server.stream import list_files

pytestmark = pytest.mark.server
realservers = oracle.realservers
USER, PASSWORD = "la_stream", "la-stream-pw-1"


@pytest.fixture(scope="module")
def server():
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    srv = realservers.MySQLServer(server_name("lagadvisor-test-stream"), free_port(),
                                  ["--server-id=9", "--log-bin=binlog", "--gtid-mode=ON",
                                   "--enforce-gtid-consistency=ON", "--binlog-row-metadata=FULL"], fresh=True)
    srv.start()
    try:
        srv.sql((FIXTURES / "single_full" / "schema.sql").read_text())
        srv.sql(f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'; "
                f"GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT ON *.* TO '{USER}'@'%'")
        srv.sql("FLUSH BINARY LOGS")
        # ~10 MB in a second file: more than socket buffers hold, so a killed dump is noticed mid-file
        srv.sql("CREATE TABLE wl.big (id INT PRIMARY KEY, v VARCHAR(200), u INT, UNIQUE KEY (u)); "
                "SET SESSION cte_max_recursion_depth = 100000; "
                "INSERT INTO wl.big WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 30000) "
                "SELECT i, REPEAT('x', 200), i FROM s; "
                "UPDATE wl.big SET v = 'y' WHERE id < 20000; UPDATE wl.big SET v = 'z' WHERE id < 20000;")
        srv.sql("FLUSH BINARY LOGS")
        srv.sql(" ".join(f"INSERT INTO wl.big VALUES ({40000 + i}, 'r', {40000 + i}); "
                         f"UPDATE wl.big SET v = 'q' WHERE id = {1 + i % 50};" for i in range(300)))
        yield srv
    finally:
        srv.stop()
        srv.remove()


def _settings(server) -> dict:
    return pymysql_settings("127.0.0.1", server.port, USER, PASSWORD)


def _records(trxs) -> list[tuple]:
    return [(t.start_offset, t.end_offset, t.gtid, t.last_committed, t.sequence_number, t.rows,
             tuple((s.table, s.inserts, s.updates, s.deletes) for s in t.tables),
             tuple((c.table, c.kind, tuple(sorted((c.before or {}).items())), tuple(sorted((c.after or {}).items())))
                   for c in t.row_changes))
            for t in trxs]


def _gtid_executed(server) -> str:
    return server.sql("SELECT @@GLOBAL.gtid_executed").strip()


def test_streamed_files_equal_the_files_on_disk(server):
    files = list_files(_settings(server), "binlog.000001")
    assert [f.name for f in files] == ["binlog.000001", "binlog.000002", "binlog.000003"]
    for f in files:
        live_summary = FileSummary(str(f))
        live = _records(read_transactions(f, live_summary, selector=lambda tm: frozenset(range(tm.column_count))))
        disk_path = str(server.host_datadir / f.name)
        disk_summary = FileSummary(disk_path)
        disk = _records(read_transactions(disk_path, disk_summary,
                                          selector=lambda tm: frozenset(range(tm.column_count))))
        assert live == disk and live, f.name
        assert live_summary.events == disk_summary.events
        assert live_summary.server_version == disk_summary.server_version


def test_killed_dump_connection_is_resumed(server):
    files = list_files(_settings(server), "binlog.000002", "binlog.000002")
    (f,) = files
    killed = threading.Event()
    got = []
    for t in read_transactions(f, FileSummary(str(f)), selector=lambda tm: frozenset({0})):
        got.append(t)
        if not killed.is_set():
            ids = server.sql("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'").split()
            assert ids, "the dump thread should be running while the file is streamed"
            for i in ids:
                server.sql(f"KILL {int(i)}")
            killed.set()
    assert f.reconnects >= 1
    disk = list(read_transactions(str(server.host_datadir / f.name), None, selector=lambda tm: frozenset({0})))
    assert _records(got) == _records(disk)


def _cli(server, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, LAGADVISOR_PASSWORD=PASSWORD)
    env.pop("MYSQL_PWD", None)
    return subprocess.run([sys.executable, "-m", "lagadvisor", *args, "--host", "127.0.0.1", "--port",
                           str(server.port), "--user", USER], capture_output=True, text=True, env=env, timeout=600)


def _strip_files(doc):
    if isinstance(doc, dict):
        return {k: _strip_files(v) for k, v in doc.items() if k not in ("path", "file", "files")}
    if isinstance(doc, list):
        return [_strip_files(v) for v in doc]
    if isinstance(doc, str) and "binlog.0000" in doc:
        return doc.rsplit("/", 1)[-1]
    return doc


def test_cli_analyze_streams_from_the_server(server):
    before = _gtid_executed(server)
    live = _cli(server, "analyze", "--from", "binlog.000001", "--format", "json")
    assert live.returncode == 0, live.stderr
    disk_files = [str(server.host_datadir / f"binlog.00000{i}") for i in (1, 2, 3)]
    env = dict(os.environ, LAGADVISOR_PASSWORD=PASSWORD)
    disk = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", *disk_files, "--format", "json",
                           "--host", "127.0.0.1", "--port", str(server.port), "--user", USER],
                          capture_output=True, text=True, env=env, timeout=600)
    assert disk.returncode == 0, disk.stderr
    a, b = json.loads(live.stdout), json.loads(disk.stdout)
    assert a["total"]["transactions"] == b["total"]["transactions"] > 300
    assert _strip_files(a["total"]) == _strip_files(b["total"])
    assert a["policies"] and _strip_files(a["policies"]) == _strip_files(b["policies"])
    assert _gtid_executed(server) == before, "live mode must not write to the server"


def test_cli_from_needs_host_and_errors_are_one_line(server):
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", "--from", "binlog.000001"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--from needs --host" in r.stderr
    r = _cli(server, "analyze", "--from", "binlog.999999")
    assert r.returncode == 2 and "not among the server's binary logs" in r.stderr and "Traceback" not in r.stderr


def test_advise_reads_current_settings_from_the_server(server):
    """A replica's settings (a replication channel, its applier stopped: the variables it starts
    with) are read; a server without a channel is a source (tests/server/test_live_restart.py)."""
    server.sql("SET GLOBAL replica_parallel_workers = 3; SET GLOBAL sync_binlog = 0; "
               "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=1")
    try:
        r = _cli(server, "advise", "--from", "binlog.000002", "--format", "json")
    finally:
        server.sql("SET GLOBAL replica_parallel_workers = 4; SET GLOBAL sync_binlog = 1; RESET REPLICA ALL")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["input"]["settings_from"] == f"127.0.0.1:{server.port}"
    assert doc["baseline"]["workers"] == 3 and doc["baseline"]["durable"] is False
    by_id = {f["id"]: f for f in doc["findings"]}
    w = by_id["replica_parallel_workers"]
    assert w["current"] == "3" and w["current_assumed"] is False
    # already relaxed: checked, not advised (a finding never suggests what is already set)
    assert "replica_durability" not in by_id
    assert any(c.startswith("sync_binlog / innodb_flush_log_at_trx_commit = sync_binlog=0")
               for c in doc["summary"]["confirmed"])
    assert any("read from 127.0.0.1" in a for a in doc["summary"]["assumptions"])



def _server_cpus(server) -> int:
    """The CPUs the server's process may run on, from its pid file (not the way lagadvisor finds it)."""
    pid = int(server.host_pid_file.read_text().strip())
    return len(os.sched_getaffinity(pid))


def test_advise_reads_the_replica_s_cores_on_its_host(server):
    """Issues 33 and 71: without --cores, a server on this host (127.0.0.1) has its process's CPUs,
    not the bound its innodb_read_io_threads default shows (at most 9 here); --cores wins."""
    expected = _server_cpus(server)
    assert expected == os.cpu_count()
    r = _cli(server, "advise", "--from", "binlog.000002", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["cost_model"]["cores"] == expected
    assert doc["summary"]["assumptions"][0].startswith(
        f"replica: {expected} cores, read on this host, where 127.0.0.1:{server.port} runs: its process (mysqld, pid ")
    assert f"may run on {expected} CPUs (its affinity" in doc["summary"]["assumptions"][0]
    r = _cli(server, "advise", "--from", "binlog.000002", "--format", "json", "--cores", "6")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["cost_model"]["cores"] == 6 and doc["summary"]["assumptions"][0] == "replica: 6 cores (--cores)"


def test_password_from_an_option_file(server, tmp_path):
    cnf = tmp_path / "client.cnf"
    cnf.write_text(f"[client]\nuser={USER}\npassword={PASSWORD}\n")
    cnf.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if k not in ("LAGADVISOR_PASSWORD", "MYSQL_PWD")}
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", "--host", "127.0.0.1", "--port",
                        str(server.port), "--defaults-file", str(cnf), "--from", "binlog.000003",
                        "--format", "json"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    disk = list(read_transactions(str(server.host_datadir / "binlog.000003")))
    assert json.loads(r.stdout)["total"]["transactions"] == len(disk) > 300


def test_a_fleet_entry_with_a_host_reads_its_cores_too(server, monkeypatch):
    """fleet builds each server's job as advise --host does: without the entry's cores, the ones
    read on its host (it runs here); with them, those (fleet.build_job)."""
    from lagadvisor.fleet import build_job
    from lagadvisor.fleet.spec import ServerEntry

    monkeypatch.setenv("LAGADVISOR_PASSWORD", PASSWORD)
    monkeypatch.delenv("MYSQL_PWD", raising=False)
    expected = _server_cpus(server)
    binlogs = str(FIXTURES / "sysbench_oltp_write_only")
    job = build_job(ServerEntry("r1", binlogs, host="127.0.0.1", port=server.port, user=USER), "run")
    assert job.cost.cores == expected and not job.cores_given
    assert job.cores_read.startswith(f"read on this host, where 127.0.0.1:{server.port} runs: its process (mysqld")
    given = build_job(ServerEntry("r1", binlogs, cores=6, host="127.0.0.1", port=server.port, user=USER), "run")
    assert given.cost.cores == 6 and given.cores_given and given.cores_read == ""
