"""What ``advise`` writes runs on real servers (issue 70, "What it writes runs"): the my.cnf of
``--mycnf`` passes ``mysqld --validate-config`` on the real MySQL 9.7.4 of the sid chroot (and a
my.cnf that sets a variable 9.7 lacks is rejected by that same check); the SQL of each finding,
pasted as one block into the ``mysql`` client exactly as ``--format json`` or the 80-column text
report prints it, runs on a real MySQL 9.7.4 replica (and its source) and a real MariaDB 10.11
replica, and the servers read back what the plan advised.

No my.cnf or SQL for a target of 8.4 or later names ``binlog_transaction_dependency_tracking``
(removed in 8.4.0: a my.cnf setting it stops the server), for every such release of
``versions.RELEASES``; that part needs no server.

One source and replica per server kind for the module; each test reads back what it changed."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

import oracle
from conftest import FIXTURES, free_port, need, server_name, source_and_replica
from lagadvisor.advise.statements import Dialect, mycnf, persist
from lagadvisor.versions import RELEASES

pytestmark = pytest.mark.server
realservers = oracle.realservers

SYSBENCH = str(FIXTURES / "sysbench_oltp_write_only" / "binlog.000001")
MINIMAL = str(FIXTURES / "single_minimal_metadata" / "binlog.000001")
MARIADB = str(FIXTURES / "mariadb_concurrent" / "mariadb-bin.000001")
TRACKING = "binlog_transaction_dependency_tracking"
#: ``advise --mycnf`` cases whose my.cnf must pass 9.7.4's --validate-config, with a setting each
#: must write uncommented (so a my.cnf emptied by a bug cannot pass).
MYCNF_CASES = {
    "target-9.7": ([SYSBENCH, "--current-version", "8.0.36", "--target-version", "9.7"], "replica_parallel_workers"),
    "one-worker": ([SYSBENCH, "--replica-setting", "replica_parallel_workers=1"], "replica_parallel_workers"),
    "source-side": ([MINIMAL], "binlog_row_metadata"),
}
SETTING = re.compile(r"^([a-z_]+) = (\S+)(\s+#.*)?$")
CATCH_UP = re.compile(r"^# ([a-z_]+ = \S+(\s+#.*)?)$")


def _cli(*argv: str) -> str:
    """``lagadvisor ARGV`` in this process (as the console script runs it): its stdout; exit 0."""
    from lagadvisor import cli

    out, err = io.StringIO(), io.StringIO()
    saved, sys.argv = sys.argv, ["lagadvisor", *argv]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main()
            except SystemExit as e:
                code = e.code
    finally:
        sys.argv = saved
    assert not code, f"lagadvisor {' '.join(argv)}: exit {code}: {err.getvalue()}"
    return out.getvalue()


def _json(*args: str) -> dict:
    return json.loads(_cli("advise", *args, "--format", "json"))


def _text80(*args: str) -> str:
    """The text report at 80 columns (a real subprocess: the width is read from COLUMNS)."""
    env = dict(os.environ, COLUMNS="80")
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "advise", *args], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _settings(text: str) -> list[str]:
    """The names a my.cnf sets (uncommented lines)."""
    names = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#") or line.strip() == "[mysqld]":
            continue
        m = SETTING.match(line)
        assert m, f"not a my.cnf setting line: {line!r}"
        names.append(m.group(1))
    return names


def _uncommented(text: str) -> str:
    """The my.cnf with its catch-up-only settings (comments by design) uncommented, as a DBA who
    pastes them into the file (or SET GLOBAL) has them."""
    extra = [m.group(1) for line in text.splitlines() if (m := CATCH_UP.match(line))]
    return text + "\n[mysqld]\n" + "\n".join(extra) + "\n"


def _validate(text: str) -> subprocess.CompletedProcess:
    """``mysqld --defaults-file=FILE --validate-config`` of the chroot's MySQL 9.7.4 (the file
    copied into the chroot). ``--secure-file-priv=`` only because the chroot has no
    /var/lib/mysql-files: without it every file fails on that directory."""
    root = realservers.chroot_root()
    folder = root / "tmp" / f"lagadvisor-mycnf-{uuid.uuid4().hex}"
    folder.mkdir(parents=True)
    try:
        (folder / "my.cnf").write_text(text)
        inside = "/" + str((folder / "my.cnf").relative_to(root))
        return subprocess.run(["chroot", str(root), "mysqld", f"--defaults-file={inside}", "--secure-file-priv=",
                               "--validate-config"], capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _need_chroot() -> None:
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")


# -- the my.cnf ------------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(MYCNF_CASES))
def test_mycnf_passes_validate_config_on_mysql_9_7(case):
    _need_chroot()
    args, must = MYCNF_CASES[case]
    written = _cli("advise", *args, "--mycnf")
    assert must in _settings(written), written
    assert re.search(r"^# sync_binlog = 0\b", written, re.M), "the catch-up-only settings are comments"
    assert "sync_binlog" not in _settings(written)
    for text in (written, _uncommented(written)):
        r = _validate(text)
        out = r.stdout + r.stderr
        assert r.returncode == 0 and "[ERROR]" not in out and "[Warning]" not in out, f"{text}\n{out}"
    assert "sync_binlog" in _settings(_uncommented(written))


def test_validate_config_rejects_a_removed_variable():
    """The check above can fail: 9.7.4 refuses the my.cnf line 8.4 removed, written by hand or by
    the generator for an 8.0 server (the my.cnf a DBA must not carry across the upgrade)."""
    _need_chroot()
    r = _validate(f"[mysqld]\n{TRACKING} = WRITESET\n")
    assert r.returncode != 0 and "unknown variable" in r.stdout + r.stderr, r
    (line,), dropped = mycnf(Dialect((8, 0, 36)), ((TRACKING, "WRITESET_SESSION"),))
    assert line == (TRACKING, "WRITESET_SESSION") and not dropped
    r = _validate(f"[mysqld]\n{line[0]} = {line[1]}    # dependency_tracking (warning)\n")
    assert r.returncode != 0 and f"unknown variable '{TRACKING}=WRITESET_SESSION'" in r.stdout + r.stderr, r


LATER = [r for r in RELEASES if r.first >= (8, 4, 0)]


@pytest.mark.parametrize("release", LATER, ids=[r.label for r in LATER])
def test_no_tracking_for_8_4_and_later(release):
    """No my.cnf line and no statement sets the removed variable for ``release``: the generator
    drops it (while it keeps it for 8.0: the control below), and advise, for an upgrade to
    ``release`` from 8.0 or for a server already there, writes none."""
    d = Dialect(release.first)
    assert mycnf(d, ((TRACKING, "WRITESET"),)) == ((), (TRACKING,))
    assert persist(d, TRACKING, "WRITESET") == ()
    for args in ([SYSBENCH, "--current-version", "8.0.36", "--target-version", release.label],
                 [SYSBENCH, "--current-version", release.label]):
        text = _cli("advise", *args, "--mycnf")
        assert TRACKING not in _settings(text), text
        doc = _json(*args)
        sql = [s for f in doc["findings"] for s in f["statements"] if not s.startswith("--")]
        assert not [s for s in sql if TRACKING in s.split("--")[0]], sql


def test_tracking_written_for_8_0():
    d = Dialect((8, 0, 36))
    assert mycnf(d, ((TRACKING, "WRITESET"),)) == (((TRACKING, "WRITESET"),), ())
    assert persist(d, TRACKING, "WRITESET") == (f"SET PERSIST {TRACKING} = 'WRITESET';",)


def test_the_plan_s_tracking_step_is_written_for_8_0():
    args = [SYSBENCH, "--current-version", "8.0.36"]
    doc = _json(*args)
    (step,) = [s for s in doc["plan"]["steps"] if s["finding"] == "dependency_tracking"]
    sql = [s for f in doc["findings"] for s in f["statements"]]
    assert f"SET PERSIST {TRACKING} = '{step['to']}';" in sql, sql
    assert TRACKING in _settings(_cli("advise", *args, "--mycnf"))


# -- the statements: pasting and reading back -----------------------------------------------

def _paste(server, block: str) -> str:
    """``block`` on the server's command-line client's stdin, as pasted (comments included):
    no error and no warning."""
    r = subprocess.run(server._client_base() + ["--batch", "--show-warnings"], input=block + "\n",
                       capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "ERROR" not in out and "Warning" not in out, f"{server.name}:\n{block}\n{out}"
    return r.stdout


def _one(server, query: str) -> str:
    return server.sql(query).strip()


def _wait(what: str, cond, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def _where(server_of: dict, finding: dict):
    """The server a finding's statements are for: the replica's on the replica; the source's,
    the schema's and the application's on the source (a schema change replicates)."""
    return server_of["replica" if finding["where"] == "replica" else "source"]


def _text_statements(text: str) -> list[tuple[str, list[str]]]:
    """(where, statement lines) of each finding of the text report that has any: the lines
    indented two spaces under it (SQL or ``--`` comments); where from the end of its ``setting``
    field (``(replica)``), which may take more than one line."""
    out: list[tuple[str, list[str]]] = []
    for block in re.split(r"^(?=\d+\. \[(?:CRITICAL|WARNING|INFO)\] )", text, flags=re.M)[1:]:
        lines = block.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("setting "))
        end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    "))
        m = re.search(r"\((\w+)\)$", " ".join(x.strip() for x in lines[start:end]))
        assert m, lines[start:end]
        sql = [line[2:] for line in lines if re.match(r"^  \S", line)]
        if sql:
            out.append((m.group(1), sql))
    return out


def _check_text(doc: dict, text: str, server_of: dict) -> None:
    """The text report's statement lines are the JSON's, one line each (never wrapped at 80
    columns), and run as pasted."""
    in_json = [(f["where"], list(f["statements"])) for f in doc["findings"] if f["statements"]]
    in_text = _text_statements(text)
    assert in_json and in_text == in_json, "\n".join(text.splitlines()[-80:])
    for where, lines in in_text:
        assert all(re.match(r"^(--|[A-Z])", s) for s in lines), lines
        _paste(_where(server_of, {"where": where}), "\n".join(lines))


def _by_id(doc: dict) -> dict:
    return {f["id"]: f for f in doc["findings"]}


def _caught_up(finding: dict, prefix: str) -> list[str]:
    """The SQL a comment of the durability finding gives (``-- once caught up: SET ...;``)."""
    return [s[len(prefix):] for s in finding["statements"] if s.startswith(prefix)]


@pytest.fixture(scope="module")
def mysql_pair():
    """A MySQL 9.7.4 source and replica, replicating (the replica at 1 worker, as advised from;
    the source at binlog_row_image=MINIMAL: the source-side advice sets FULL)."""
    _need_chroot()
    common = ["--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON"]
    # the source at non-default row images and metadata: the source-side advice changes them
    with source_and_replica("writes", common, ["--server-id=71", "--binlog-row-image=MINIMAL"],
                            ["--server-id=72", "--replica-parallel-workers=1"]) as (src, rep):
        rep.sql("START REPLICA")
        try:
            _mysql_replicating(src, rep)
            yield src, rep
        finally:
            # the source's dump thread outlives STOP REPLICA and holds its shutdown up ~10 s
            rep.sql("STOP REPLICA")
            for i in src.sql("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'").split():
                src.sql(f"KILL {int(i)}")


def _mysql_replicating(src, rep) -> None:
    """Both replica threads run, and a write on the source reaches the replica."""
    assert _one(rep, "SELECT SERVICE_STATE FROM performance_schema.replication_applier_status") == "ON"
    _wait("the replica's receiver to connect", lambda: _one(
        rep, "SELECT SERVICE_STATE FROM performance_schema.replication_connection_status") == "ON")
    src.sql("CREATE DATABASE IF NOT EXISTS probe; CREATE TABLE IF NOT EXISTS probe.t (id INT PRIMARY KEY); "
            "REPLACE INTO probe.t VALUES (1)")
    gtids = _one(src, "SELECT @@GLOBAL.gtid_executed").replace("\n", "").replace("\\n", "")
    assert _one(rep, f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{gtids}', 60)") == "0", "the replica did not apply"


def _persisted(server) -> dict:
    rows = server.sql("SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.persisted_variables")
    return dict(line.split("\t", 1) for line in rows.splitlines() if line)


def test_json_statements_run_on_a_mysql_replica(mysql_pair):
    src, rep = mysql_pair
    doc = _json(SYSBENCH, "--replica-setting", "replica_parallel_workers=1")
    n = doc["plan"]["recommended"]["workers"]
    assert n != 1 and _one(rep, "SELECT @@GLOBAL.replica_parallel_workers") == "1"
    by_id = _by_id(doc)
    assert {"replica_parallel_workers", "replica_durability"} <= {i for i, f in by_id.items() if f["statements"]}
    for f in doc["findings"]:
        if f["statements"]:
            _paste(_where({"source": src, "replica": rep}, f), "\n".join(f["statements"]))
    assert _one(rep, "SELECT @@GLOBAL.replica_parallel_workers") == str(n)
    assert _persisted(rep).get("replica_parallel_workers") == str(n)
    assert _one(rep, "SELECT @@GLOBAL.sync_binlog, @@GLOBAL.innodb_flush_log_at_trx_commit") == "0\t2"
    assert not {"sync_binlog", "innodb_flush_log_at_trx_commit"} & set(_persisted(rep)), "catch-up only: not persisted"
    _mysql_replicating(src, rep)
    # the comments' SQL runs too: the crash-safety step (threads stopped) and the revert
    dur = by_id["replica_durability"]
    (safety,) = [s for s in _caught_up(dur, "-- crash safety first: ") if s.endswith(";")]
    _paste(rep, f"STOP REPLICA;\n{safety}\nSTART REPLICA;")
    _paste(rep, "\n".join(_caught_up(dur, "-- once caught up: ")))
    assert _one(rep, "SELECT @@GLOBAL.sync_binlog, @@GLOBAL.innodb_flush_log_at_trx_commit") == "1\t1"
    _mysql_replicating(src, rep)


@pytest.mark.parametrize("fixture,variable", [("single_minimal_metadata", "binlog_row_metadata"),
                                              ("single_minimal_image", "binlog_row_image")])
def test_source_statements_run_on_a_mysql_source(mysql_pair, fixture, variable):
    """A source-side finding (binlog_row_metadata, binlog_row_image) and the schema's (a generated
    invisible key for a table without one): on the source, replicated."""
    src, rep = mysql_pair
    # the fixture's tables as they were (a GIPK persisted by the other case would key them)
    src.sql("SET PERSIST sql_generate_invisible_primary_key = OFF")
    src.sql((FIXTURES / fixture / "schema.sql").read_text())
    doc = _json(str(FIXTURES / fixture / "binlog.000001"))
    by_id = _by_id(doc)
    assert by_id[variable]["where"] == "source" and by_id[variable]["statements"]
    assert _one(src, f"SELECT @@GLOBAL.{variable}") != "FULL"
    for f in doc["findings"]:
        if f["statements"] and f["where"] != "replica":
            _paste(src, "\n".join(f["statements"]))
    assert _one(src, f"SELECT @@GLOBAL.{variable}") == "FULL"
    assert _persisted(src).get(variable) == "FULL"
    if "tables_without_primary_key" in by_id:
        assert _one(src, "SELECT @@GLOBAL.sql_generate_invisible_primary_key") == "1"
    _mysql_replicating(src, rep)
    altered = [m.group(1, 2) for f in doc["findings"] if f["where"] != "replica" for s in f["statements"]
               if (m := re.match(r"ALTER TABLE `(\w+)`\.`(\w+)` ADD .* PRIMARY KEY", s))]
    assert altered or "tables_without_primary_key" not in by_id
    for db, table in altered:   # the key added on the source, and replicated
        for server in (src, rep):
            assert _one(server, "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE "
                                f"TABLE_SCHEMA = '{db}' AND TABLE_NAME = '{table}' AND INDEX_NAME = 'PRIMARY'") != "0"


def test_text_report_statements_run_on_a_mysql_replica(mysql_pair):
    src, rep = mysql_pair
    args = (SYSBENCH, "--replica-setting", "replica_parallel_workers=1")
    _check_text(_json(*args), _text80(*args), {"source": src, "replica": rep})
    _mysql_replicating(src, rep)


# -- MariaDB 10.11 --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mariadb_pair():
    """A MariaDB 10.11 source and replica, replicating by GTID (slave_pos), at the defaults
    advise assumes (slave_parallel_threads 0, slave_parallel_mode optimistic)."""
    need(oracle.have_mariadb_binlog(), "MariaDB 10.11")
    src = realservers.MariaDBServer(server_name("lagadvisor-test-writes-msrc"), free_port(),
                                    ["--server-id=81", "--log-bin=mariadb-bin", "--binlog-format=ROW"], fresh=True)
    rep = realservers.MariaDBServer(server_name("lagadvisor-test-writes-mrep"), free_port(),
                                    ["--server-id=82", "--log-bin=mariadb-bin", "--binlog-format=ROW"], fresh=True)
    src.start()
    try:
        rep.start()
        rep.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={src.port}, MASTER_USER='root', "
                "MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos; START SLAVE")
        _mariadb_replicating(src, rep)
        yield src, rep
    finally:
        for s in (rep, src):
            s.stop()
            s.remove()


def _mariadb_replicating(src, rep) -> None:
    running = "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'SLAVE_RUNNING'"
    _wait("both slave threads running", lambda: _one(rep, running) == "ON")
    src.sql("CREATE DATABASE IF NOT EXISTS probe; CREATE TABLE IF NOT EXISTS probe.t (id INT PRIMARY KEY); "
            "REPLACE INTO probe.t VALUES (1)")
    pos = _one(src, "SELECT @@GLOBAL.gtid_binlog_pos")
    assert _one(rep, f"SELECT MASTER_GTID_WAIT('{pos}', 60)") == "0", "the replica did not apply"


def test_json_statements_run_on_a_mariadb_replica(mariadb_pair):
    src, rep = mariadb_pair
    doc = _json(MARIADB)
    rec = doc["plan"]["recommended"]
    assert _one(rep, "SELECT @@GLOBAL.slave_parallel_threads, @@GLOBAL.slave_parallel_mode") == "0\toptimistic"
    by_id = _by_id(doc)
    assert by_id["replica_parallel_workers"]["statements"] and rec["workers"] > 1
    for f in doc["findings"]:
        if f["statements"]:
            _paste(_where({"source": src, "replica": rep}, f), "\n".join(f["statements"]))
    assert _one(rep, "SELECT @@GLOBAL.slave_parallel_threads") == str(rec["workers"])
    mode = rec["mode"].removeprefix("mariadb_")
    assert _one(rep, "SELECT @@GLOBAL.slave_parallel_mode") == mode
    if "slave_parallel_mode" in by_id:
        assert mode != "optimistic"
    assert _one(rep, "SELECT @@GLOBAL.sync_binlog, @@GLOBAL.innodb_flush_log_at_trx_commit") == "0\t2"
    if "binlog_row_metadata" in by_id:
        assert _one(src, "SELECT @@GLOBAL.binlog_row_metadata") == "FULL"
    _mariadb_replicating(src, rep)
    dur = by_id["replica_durability"]
    (safety,) = [s for s in _caught_up(dur, "-- crash safety first: ") if s.endswith(";")]
    _paste(rep, f"STOP SLAVE;\n{safety}\nSTART SLAVE;")
    _paste(rep, "\n".join(_caught_up(dur, "-- once caught up: ")))
    assert _one(rep, "SELECT @@GLOBAL.sync_binlog, @@GLOBAL.innodb_flush_log_at_trx_commit") == "1\t1"
    _mariadb_replicating(src, rep)


def test_mariadb_replica_setting_statements(mariadb_pair):
    """``--replica-setting replica_parallel_workers=4``: the threads change from 4 (set first on
    the replica, as advised from) to the plan's, and reads back."""
    src, rep = mariadb_pair
    _paste(rep, "STOP SLAVE;\nSET GLOBAL slave_parallel_threads = 4;\nSTART SLAVE;")
    doc = _json(MARIADB, "--replica-setting", "replica_parallel_workers=4")
    f = _by_id(doc)["replica_parallel_workers"]
    assert f["current"] == "4" and f["statements"], f
    _paste(rep, "\n".join(f["statements"]))
    assert _one(rep, "SELECT @@GLOBAL.slave_parallel_threads") == str(doc["plan"]["recommended"]["workers"]) != "4"
    _mariadb_replicating(src, rep)


def test_mariadb_schema_statements(mariadb_pair):
    """The schema's advice for a MariaDB binlog (a key for a table without one; MariaDB has no
    generated invisible primary keys): a binlog the source writes here, its statements run there
    and the key reaches the replica."""
    src, rep = mariadb_pair
    src.sql("SET GLOBAL binlog_row_metadata = 'FULL'; CREATE DATABASE nk; CREATE TABLE nk.t (a INT, b INT); "
            "FLUSH BINARY LOGS")
    src.sql(" ".join(f"INSERT INTO nk.t VALUES ({i}, {i}); UPDATE nk.t SET b = b + 1 WHERE a = {i % 7};"
                     for i in range(100)) + " FLUSH BINARY LOGS")
    doc = _json(str(src.binlog_files()[-2]))
    f = _by_id(doc)["tables_without_primary_key"]
    assert f["where"] == "schema" and any(s.startswith("ALTER TABLE `nk`.`t` ") for s in f["statements"]), f
    _paste(src, "\n".join(f["statements"]))
    _mariadb_replicating(src, rep)
    for server in (src, rep):
        assert _one(server, "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'nk' "
                            "AND TABLE_NAME = 't' AND INDEX_NAME = 'PRIMARY'") != "0", server.name


def test_text_report_statements_run_on_a_mariadb_replica(mariadb_pair):
    src, rep = mariadb_pair
    _check_text(_json(MARIADB), _text80(MARIADB), {"source": src, "replica": rep})
    _mariadb_replicating(src, rep)
