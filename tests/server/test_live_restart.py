"""Live mode reads what the server holds (issue 71), against a real MySQL 9.x source and a
replica (``log_replica_updates``) that were each restarted between two binlog files, set up once
for the module:

* each streamed file (``--from``/``--to``, a whole range, the active file) equals the file on
  disk as ``mysqlbinlog`` reads it: per-file transactions, GTIDs, clocks and both commit
  timestamps; a file that ends in a STOP_EVENT (the restart) ends there; the files' sum equals
  ``gtid_executed``;
* a server with no replication channel is a source (no replica statements); a replica's settings
  are its running applier's, a ``SET PERSIST`` not yet running is pending;
* the cores of a server on this host are this host's;
* ``--replica-setting`` feeds every rule the same effective settings.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

import oracle
from conftest import need, source_and_replica
from lagadvisor.binlog.scan import FileSummary, read_transactions
from lagadvisor.server.connection import pymysql_settings
from lagadvisor.server.stream import list_files

pytestmark = pytest.mark.server
USER, PASSWORD = "la_restart", "la-restart-pw-1"

#: mysqlbinlog's GTID event line: clocks and both commit timestamps (microseconds).
_GTID_LINE = re.compile(r"^#\d.*\tlast_committed=(\d+)\tsequence_number=(\d+)\t.*"
                        r"original_committed_timestamp=(\d+)\timmediate_commit_timestamp=(\d+)")
_GTID_NEXT = re.compile(r"^SET @@SESSION\.GTID_NEXT= '([^']*)'")


def _restart(srv) -> None:
    srv.stop()
    srv.fresh = False
    srv.start()


def _write(src, first: int, n: int) -> None:
    src.sql(" ".join(f"INSERT INTO r.t VALUES ({first + i}, {i % 7}, 'v'); "
                     f"UPDATE r.t SET k = k + 1 WHERE id = {1 + i % 40};" for i in range(n)))


def _caught_up(src, rep, timeout_s: float = 120) -> None:
    want = src.sql("SELECT @@GLOBAL.gtid_executed").strip().replace("\n", "")
    deadline = time.monotonic() + timeout_s
    while rep.sql(f"SELECT GTID_SUBSET('{want}', @@GLOBAL.gtid_executed)").strip() != "1":
        if time.monotonic() > deadline:
            raise RuntimeError(f"the replica did not apply {want} in {timeout_s:.0f} s")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def servers():
    """binlog.000001 (set-up, rotated), binlog.000002 (ended by a restart), binlog.000003
    (rotated), binlog.000004 (active) on the source; the replica's binlog.000001 ends in its own
    restart."""
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    common = ["--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--binlog-row-metadata=FULL"]
    with source_and_replica("restart", common, ["--server-id=71"],
                            ["--server-id=72", "--log-replica-updates=ON"]) as (src, rep):
        grants = (f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'; "
                  f"GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT ON *.* TO '{USER}'@'%'")
        src.sql(grants + "; CREATE DATABASE r; CREATE TABLE r.t (id INT PRIMARY KEY, k INT, v VARCHAR(20))")
        src.sql("FLUSH BINARY LOGS")
        rep.sql("START REPLICA")            # the user and table reach the replica too
        _write(src, 1, 150)
        _caught_up(src, rep)
        _restart(rep)                       # the replica's binlog.000001 ends in a STOP_EVENT
        rep.sql("START REPLICA")
        rep.sql("STOP REPLICA")             # (not left retrying while the source is down)
        _restart(src)                       # the source's binlog.000002 ends in a STOP_EVENT
        rep.sql("START REPLICA")
        _write(src, 1001, 100)
        src.sql("FLUSH BINARY LOGS")
        _write(src, 2001, 40)
        _caught_up(src, rep)
        yield src, rep


def _settings(srv) -> dict:
    return pymysql_settings("127.0.0.1", srv.port, USER, PASSWORD)


def _records(trxs) -> list[tuple]:
    return [(t.gtid, t.last_committed, t.sequence_number, t.original_commit_timestamp, t.immediate_commit_timestamp)
            for t in trxs]


def _mysqlbinlog_records(path) -> tuple[list[tuple], str]:
    """(gtid, last_committed, sequence_number, original, immediate commit timestamp) per
    transaction by ``mysqlbinlog``, and its text."""
    r = oracle.mysqlbinlog(path)
    assert r.returncode == 0, r.stderr
    out, pending = [], None
    for line in r.stdout.splitlines():
        m = _GTID_LINE.match(line)
        if m:
            pending = tuple(int(x) for x in m.groups())
            continue
        m = _GTID_NEXT.match(line)
        if m and pending is not None:
            lc, seq, orig, imm = pending
            out.append((m.group(1), lc, seq, orig, imm))
            pending = None
    return out, r.stdout


def _count(gtid_set: str) -> int:
    n = 0
    for part in gtid_set.replace("\n", "").split(","):
        for iv in part.strip().split(":")[1:]:
            lo, _, hi = iv.partition("-")
            n += int(hi or lo) - int(lo) + 1
    return n


@pytest.mark.parametrize("role", ["source", "replica"])
def test_each_streamed_file_is_the_file_on_disk(servers, role):
    srv = servers[0] if role == "source" else servers[1]
    disk_files = srv.binlog_files()
    names = [p.name for p in disk_files]
    assert len(names) >= (4 if role == "source" else 2), names
    stopped = names[1] if role == "source" else names[0]
    whole = list_files(_settings(srv), names[0])          # --from the first: every file, one range
    assert [f.name for f in whole] == names
    total = 0
    for f, path in zip(whole, disk_files):
        expected, text = _mysqlbinlog_records(path)
        ends_in_stop = text.rstrip().splitlines()[-10:]
        if f.name == stopped:
            assert any("\tStop" in line for line in ends_in_stop), f"{f.name} should end in the restart's STOP_EVENT"
        summary = FileSummary(str(f))
        streamed = _records(read_transactions(f, summary))
        assert streamed == expected, f"{role} {f.name}: {len(streamed)} streamed, {len(expected)} on disk"
        assert not summary.warnings, summary.warnings
        # the same file alone (--from X --to X)
        (one,) = list_files(_settings(srv), f.name, f.name)
        assert _records(read_transactions(one)) == expected
        total += len(expected)
    assert total == _count(srv.sql("SELECT @@GLOBAL.gtid_executed")) > 290


def _cli(srv, *args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, LAGADVISOR_PASSWORD=PASSWORD, **(env_extra or {}))
    env.pop("MYSQL_PWD", None)
    return subprocess.run([sys.executable, "-m", "lagadvisor", *args, "--no-defaults", "--host", "127.0.0.1",
                           "--port", str(srv.port), "--user", USER], capture_output=True, text=True, env=env,
                          timeout=300)


def test_cli_from_to_stops_at_the_restart(servers):
    src, _ = servers
    names = [p.name for p in src.binlog_files()]
    expected, _ = _mysqlbinlog_records(src.binlog_files()[1])
    r = _cli(src, "analyze", "--from", names[1], "--to", names[1], "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total"]["transactions"] == len(expected) > 100


def _options(srv):
    from lagadvisor.server.connection import ServerOptions

    return ServerOptions("127.0.0.1", srv.port, USER, PASSWORD)


def _advise(srv, *args: str) -> dict:
    first = srv.binlog_files()[-1].name
    r = _cli(srv, "advise", "--from", first, "--format", "json", "--progress" if False else "--no-progress", *args)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return json.loads(r.stdout)


def test_a_server_without_a_channel_is_a_source(servers):
    """Issue 71: the source's own replica_parallel_workers is no applier's: its settings are not
    the replica's, one line says it is a source, and no replica statement is printed."""
    from lagadvisor.server.schema import settings_from_server

    src, rep = servers
    s = settings_from_server(_options(src))
    assert s.role == "source" and s.get("replica_parallel_workers") is None and s.get("binlog_format") == "ROW"
    assert settings_from_server(_options(rep)).role == "replica"
    doc = _advise(src)
    said = [a for a in doc["summary"]["assumptions"] if "is a source (no replication channel)" in a]
    assert len(said) == 1, doc["summary"]["assumptions"]
    assert not any(a.startswith("replica settings read from") for a in doc["summary"]["assumptions"])
    assert all(not f["statements"] for f in doc["findings"] if f["where"] == "replica"), doc["findings"]
    text = _cli(src, "advise", "--from", src.binlog_files()[-1].name, "--no-progress")
    assert text.returncode == 0, text.stderr
    assert "REPLICA" not in text.stdout.replace("replica", "") and "is a source" in text.stdout


def test_persisted_but_not_running_is_pending(servers):
    """Issue 71: SET PERSIST replica_parallel_workers with the applier running keeps the running
    workers (its worker rows) current and names the new value pending; SET PERSIST_ONLY too."""
    from lagadvisor.server.schema import settings_from_server

    _, rep = servers
    running = int(rep.sql("SELECT COUNT(*) FROM performance_schema.replication_applier_status_by_worker "
                          "WHERE SERVICE_STATE = 'ON'").strip())
    assert running == 4
    rep.sql("SET PERSIST replica_parallel_workers = 8; SET PERSIST_ONLY sync_binlog = 0")
    try:
        s = settings_from_server(_options(rep))
        assert s.get("replica_parallel_workers") == "4" and s.variables["replica_parallel_workers"] == "8"
        assert "running applier" in s.origin("replica_parallel_workers")
        assert s.get("sync_binlog") == "1"
        pending = s.pending()
        assert any(p.startswith("replica_parallel_workers = 8 pending: persisted (SET PERSIST) while the applier "
                                "runs 4") for p in pending), pending
        assert any(p.startswith("sync_binlog = 0 pending: persisted (SET PERSIST_ONLY)") for p in pending), pending
        doc = _advise(rep)
        assert doc["baseline"]["workers"] == 4 and doc["baseline"]["durable"] is True
        assert sum("replica_parallel_workers = 8 pending" in a for a in doc["summary"]["assumptions"]) == 1
        w = {f["id"]: f for f in doc["findings"]}.get("replica_parallel_workers")
        assert w is None or w["current"] == "4"
    finally:
        rep.sql("SET PERSIST replica_parallel_workers = 4; RESET PERSIST")


def test_every_host_command_states_this_host_s_cores(servers):
    """Issue 71: the servers run on this host: each --host command without --cores uses and states
    the CPUs their process may run on (here, this machine's), never a bound from their defaults."""
    src, rep = servers
    cores = len(os.sched_getaffinity(int(src.host_pid_file.read_text().strip())))
    assert cores == os.cpu_count()
    said = f"read on this host, where 127.0.0.1:{src.port} runs: its process (mysqld, pid "
    doc = _advise(src)
    assert doc["cost_model"]["cores"] == cores and doc["summary"]["assumptions"][0].startswith(
        f"replica: {cores} cores, {said}")
    sim = _cli(src, "simulate", str(src.binlog_files()[1]), "--workers", "1,4", "--no-progress")
    assert sim.returncode == 0, sim.stderr
    assert f"{cores} cores" in sim.stdout and f"note: the replica's cores: {cores}, {said}" in sim.stderr, sim
    eta = _cli(rep, "eta", "--format", "json", "--sample", "0.5")
    assert eta.returncode == 0, eta.stderr
    notes = [n for line in eta.stdout.splitlines() for n in json.loads(line).get("notes", ())]
    assert any(n.startswith(f"replica cores: {cores}, read on this host, where the replica runs") for n in notes), eta


def test_replica_settings_given_feed_every_rule(servers):
    """Issue 71: --replica-setting over what the server has: the baseline, the durability rule and
    the workers rule all read the same effective values, the summary says which were given."""
    _, rep = servers
    rep.sql("SET GLOBAL sync_binlog = 0; SET GLOBAL innodb_flush_log_at_trx_commit = 2")
    try:
        relaxed = _advise(rep)
        given = _advise(rep, "--replica-setting", "sync_binlog=1", "--replica-setting",
                        "innodb_flush_log_at_trx_commit=1", "--replica-setting", "replica_parallel_workers=2")
    finally:
        rep.sql("SET GLOBAL sync_binlog = 1; SET GLOBAL innodb_flush_log_at_trx_commit = 1")
    assert relaxed["baseline"]["durable"] is False and relaxed["baseline"]["workers"] == 4
    assert given["baseline"]["durable"] is True and given["baseline"]["workers"] == 2
    everything = json.dumps(given["findings"]) + json.dumps(given["summary"])
    assert "sync_binlog=0" not in everything.replace("sync_binlog=0, innodb_flush_log_at_trx_commit=2 while", ""), \
        [f for f in given["findings"] if "sync_binlog=0" in json.dumps(f)]
    by_id = {f["id"]: f for f in given["findings"]}
    dur = by_id["replica_durability"]
    assert dur["current"] == "sync_binlog=1, innodb_flush_log_at_trx_commit=1" and not dur["current_assumed"]
    w = by_id.get("replica_parallel_workers")
    assert w is None or w["current"] == "2"
    said = [a for a in given["summary"]["assumptions"] if "given with --replica-setting" in a]
    assert len(said) == 1 and "replica_parallel_workers, sync_binlog, innodb_flush_log_at_trx_commit" in said[0], said
