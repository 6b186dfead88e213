"""`lagadvisor eta` on a real lagging replica (MySQL 9.x, loopback): the applier is stopped while
the source writes a backlog, then started; the ETA printed after a short sample is compared with
the catch-up the replica really took, and `--watch` reports its earlier predictions' errors."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import oracle
from conftest import need, source_and_replica
from test_calibrate_live import _workload

#: The bound the issue asks for: the first ETA within 15% of the measured catch-up.
MAX_ERROR = 0.15


def _eta(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lagadvisor", "eta", *args], capture_output=True, text=True,
                          timeout=timeout)


def _setup(src, rep, n: int) -> str:
    """A replica stopped behind ``n`` received transactions; the source's gtid_executed."""
    rep.sql("START REPLICA")
    src.sql("SET SESSION cte_max_recursion_depth = 10000; CREATE DATABASE c; "
            "CREATE TABLE c.t (id INT PRIMARY KEY, k INT NOT NULL, v VARCHAR(100), KEY (k)); "
            "INSERT INTO c.t SELECT n, n % 997, REPEAT('v', 100) FROM (WITH RECURSIVE s(n) AS "
            "(SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < 1999) SELECT n FROM s) x; "
            "CREATE USER eta@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON performance_schema.* TO eta@'%'; "
            "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO eta@'%'; "
            "CREATE USER nopfs@'%' IDENTIFIED BY 'pw'")
    rep.sql(f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{src.sql('SELECT @@GLOBAL.gtid_executed').strip()}', 120)")
    rep.sql("STOP REPLICA SQL_THREAD")
    txns = _workload(7, n).split("\n")
    for k in range(0, len(txns), 100):
        src.sql("\n".join(txns[k:k + 100]), timeout=300)
    gtids = src.sql("SELECT @@GLOBAL.gtid_executed").strip().replace("\n", "")
    deadline = time.monotonic() + 120
    while rep.sql(f"SELECT GTID_SUBSET('{gtids}', RECEIVED_TRANSACTION_SET) FROM "
                  "performance_schema.replication_connection_status").strip() != "1":
        assert time.monotonic() < deadline, "the replica did not receive the workload"
        time.sleep(0.1)
    return gtids


def test_eta_within_15_percent_of_the_real_catch_up(monkeypatch):
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    common = ["--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON"]
    # a durable replica (an fsync per commit) applies slowly enough to be watched for seconds
    with source_and_replica("eta", common, ["--server-id=31", "--innodb-flush-log-at-trx-commit=2",
                                            "--sync-binlog=0"],
                            ["--server-id=32", "--replica-parallel-workers=2", "--sync-binlog=1",
                             "--innodb-flush-log-at-trx-commit=1"]) as (src, rep):
        gtids = _setup(src, rep, 3000)
        monkeypatch.setenv("LAGADVISOR_PASSWORD", "pw")
        conn = ["-h", "127.0.0.1", "-P", str(rep.port), "-u", "eta", "--no-defaults"]
        # Least privilege: without SELECT on performance_schema, one line naming the grant.
        r = _eta("-h", "127.0.0.1", "-P", str(rep.port), "-u", "nopfs", "--no-defaults", "--source", "127.0.0.1",
                 "--source-port", str(src.port))
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "SELECT on performance_schema" in r.stderr
        # A stopped applier: the cost model's estimate, said so.
        r = _eta(*conn, "--source", "127.0.0.1", "--source-port", str(src.port), "--sample", "0.5s",
                 "--format", "json")
        assert r.returncode == 0, r.stderr
        stopped = json.loads(r.stdout.splitlines()[0])
        assert stopped["transactions_left"] == 3000
        assert any("stopped" in n for n in stopped["notes"])

        started = time.time()
        rep.sql("START REPLICA SQL_THREAD")
        r = _eta(*conn, "--source", "127.0.0.1", "--source-port", str(src.port), "--sample", "2s",
                 "--watch", "1s", "--format", "json")
        rep.sql(f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{gtids}', 300)")
        assert r.returncode == 0, r.stderr
        ests = [json.loads(line) for line in r.stdout.splitlines()]
        first, final = ests[0], ests[-1]
        assert final["transactions_left"] == 0 and len(ests) >= 3, r.stdout
        # The measured catch-up from the first estimate: the watch's own end (a 0.25 s poll).
        errs = final["earlier_predictions"]
        assert errs[0]["made_at"] == first["at"]
        measured = errs[0]["actual_seconds"]
        cur = next(o for o in first["options"] if o["current"])
        err = cur["eta_seconds"] / measured - 1
        print(f"first ETA {cur['eta_seconds']:.2f} s, measured {measured:.2f} s, error {err:+.1%} "
              f"(catch-up from START {final['at'] - started:.1f} s; {len(ests)} estimates)")
        assert abs(err) <= MAX_ERROR, (cur, measured, err)
        assert errs[0]["error"] == err or abs(errs[0]["error"] - err) < 1e-9
        # more workers or relaxed durability are offered with their own ETA
        assert len(first["options"]) > 1
