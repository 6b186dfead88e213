"""`lagadvisor eta` on a real lagging replica (MySQL 9.x, loopback): the applier is stopped while
the source writes a backlog, then started; the ETA printed after a short sample is compared with
the catch-up the replica really took, and `--watch` reports its earlier predictions' errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import oracle
import pytest
from conftest import need, source_and_replica
from test_calibrate_live import _workload

#: The issue's bound is 15% (bench/eta_live.py measures it over repeated runs: 3 of 4 within it,
#: the worst -21%; docs/accuracy.md). Under CI (two pytest processes and other servers on 2 cores) one short
#: run is held to a factor of 1.5: still a failure for an ETA that does not follow the replica
#: (the cost model alone was 4x off here).
MAX_FACTOR = 1.5
#: The replica's own apply rate, from the first estimate's sample to the rest of its catch-up, moving by more
#: than this factor: a change of load on the shared machine no ETA can foresee (once in about ninety CI runs,
#: 145 trx/s sampled, 199 applied after it). Such a run is repeated once, under the same bound.
RATE_SHIFT = 1.25
#: The backlog: its catch-up takes seconds after the first estimate on this 2-core machine.
N = 2000


def _eta(*args: str, timeout: float = 120, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lagadvisor", "eta", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


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


def catch_up(n: int = N, sample: str = "3s", watch: str = "1s", check_privileges: bool = True) -> dict:
    """One run: a durable 2-worker replica (4 ms commit delay) stopped behind ``n`` transactions, started, `eta` run
    against it; the first ETA, the measured catch-up from it, its error and every estimate."""
    common = ["--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON"]
    # A durable replica whose commit groups wait 4 ms before the binlog fsync
    # (binlog_group_commit_sync_delay): a slow disk's steady fsync, so the catch-up lasts seconds
    # whether this shared machine is busy (150 trx/s measured without the delay) or quiet (600).
    with source_and_replica("eta", common, ["--server-id=31", "--innodb-flush-log-at-trx-commit=2",
                                            "--sync-binlog=0"],
                            ["--server-id=32", "--replica-parallel-workers=2", "--sync-binlog=1",
                             "--innodb-flush-log-at-trx-commit=1",
                             "--binlog-group-commit-sync-delay=4000"]) as (src, rep):
        gtids = _setup(src, rep, n)
        env = dict(os.environ, LAGADVISOR_PASSWORD="pw")
        conn = ["-h", "127.0.0.1", "-P", str(rep.port), "-u", "eta", "--no-defaults", "--source", "127.0.0.1",
                "--source-port", str(src.port)]
        if check_privileges:
            # Least privilege: without SELECT on performance_schema, one line naming the grant.
            r = _eta("-h", "127.0.0.1", "-P", str(rep.port), "-u", "nopfs", "--no-defaults", "--source",
                     "127.0.0.1", "--source-port", str(src.port), env=env)
            assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
            assert "SELECT on performance_schema" in r.stderr
            # A stopped applier: the cost model's estimate, said so; --max-eta 0 fails it.
            r = _eta(*conn, "--sample", "0.5s", "--format", "json", "--max-eta", "0s", env=env)
            assert r.returncode == 1, r.stderr
            assert "over --max-eta" in r.stderr
            stopped = json.loads(r.stdout.splitlines()[0])
            assert stopped["transactions_left"] == n
            assert any("stopped" in x for x in stopped["notes"])
        started = time.time()
        rep.sql("START REPLICA SQL_THREAD")
        r = _eta(*conn, "--sample", sample, "--watch", watch, "--format", "json", env=env)
        rep.sql(f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{gtids}', 300)")
        assert r.returncode == 0, r.stderr
        ests = [json.loads(line) for line in r.stdout.splitlines()]
        first, final = ests[0], ests[-1]
        assert final["transactions_left"] == 0 and len(ests) >= 2, r.stdout
        assert first["transactions_left"] > 0, "caught up before the first estimate: make the backlog longer"
        # The catch-up measured from the first estimate: the watch's own end (a 0.25 s poll).
        errs = final["earlier_predictions"]
        assert errs[0]["made_at"] == first["at"]
        measured = errs[0]["actual_seconds"]
        cur = next(o for o in first["options"] if o["current"])
        read_io_threads = int(rep.sql("SELECT @@innodb_read_io_threads").strip())
        return {"eta_s": cur["eta_seconds"], "measured_s": measured, "error": cur["eta_seconds"] / measured - 1,
                "from_start_s": final["at"] - started, "estimates": ests, "watch_errors": errs,
                "read_io_threads": read_io_threads}


def _within(out: dict) -> bool:
    return 1 / MAX_FACTOR <= out["eta_s"] / out["measured_s"] <= MAX_FACTOR


def rate_shift(out: dict) -> float:
    """The rate the replica applied at after the first estimate over the rate that estimate sampled."""
    first = out["estimates"][0]
    sampled = first["apply_rate_trx_s"]
    return first["transactions_left"] / out["measured_s"] / sampled if sampled else float("inf")


def test_eta_against_the_real_catch_up():
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    out = catch_up()
    if not _within(out) and not 1 / RATE_SHIFT <= rate_shift(out) <= RATE_SHIFT:
        print(f"first ETA {out['eta_s']:.2f} s, measured {out['measured_s']:.2f} s: the replica's rate moved "
              f"{rate_shift(out):.2f}x after the sample; once more")
        out = catch_up(check_privileges=False)
    print(f"first ETA {out['eta_s']:.2f} s, measured {out['measured_s']:.2f} s, error {out['error']:+.1%} "
          f"(the replica's rate after the sample {rate_shift(out):.2f}x the sampled) "
          f"(catch-up from START {out['from_start_s']:.1f} s; {len(out['estimates'])} estimates)")
    for e in out["estimates"]:
        print("estimate", round(e["at"] - out["estimates"][0]["at"], 2), e["transactions_left"],
              round(e["apply_rate_trx_s"]), e["seconds_per_simulated_second"],
              [round(o["eta_seconds"] or -1, 2) for o in e["options"] if o["current"]])
    assert _within(out), out
    # --watch gave every earlier prediction its error against the real catch-up
    assert all(e["error"] is not None for e in out["watch_errors"])
    assert out["watch_errors"][0]["error"] == pytest.approx(out["error"])
    # more workers or relaxed durability are offered with their own ETA
    first = out["estimates"][0]
    assert any(o["workers"] > 2 and o["eta_seconds"] for o in first["options"])
    assert any(not o["durable"] for o in first["options"])
    # the replica's cores (no --cores): it runs on this host, whose CPUs its process may use are
    # read (issue 71: not the bound its compiled innodb_read_io_threads shows), said once
    cores = os.cpu_count()
    said = [n for e in out["estimates"] for n in e["notes"] if n.startswith("replica cores: ")]
    assert len(said) == 1 and re.fullmatch(
        rf"replica cores: {cores}, read on this host, where the replica runs: its process \(mysqld, pid \d+\) may "
        rf"run on {cores} CPUs \(its affinity(, its cgroup's CPU quota \d+)?; --cores to give others\)", said[0]), said
    assert said[0] in first["notes"]
