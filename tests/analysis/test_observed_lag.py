"""A real source and replica (MySQL 9.x, loopback): the replica's own binlog carries the
source's commit times, and `analyze` reports the lag the replica really had."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import oracle
from conftest import need, source_and_replica


def test_replica_binlog_observed_lag():
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    common = ["--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON"]
    with source_and_replica("lag", common, ["--server-id=11"],
                            ["--server-id=12", "--log-replica-updates=ON"]) as (src, rep):
        rep.sql("START REPLICA IO_THREAD")
        src.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v INT); " +
                " ".join(f"INSERT INTO d.t VALUES ({i}, {i});" for i in range(50)))
        time.sleep(1.5)  # the SQL thread is stopped: the backlog ages
        gtids = src.sql("SELECT @@GLOBAL.gtid_executed").strip().replace("\n", "")
        rep.sql("START REPLICA SQL_THREAD")
        rep.sql(f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{gtids}', 120)")
        rep.sql("FLUSH BINARY LOGS")
        files = [str(p) for p in rep.binlog_files()][:-1]
        r = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", "--format", "json", *files],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        lag = json.loads(r.stdout)["total"]["observed_replica_lag"]
        assert lag["transactions"] >= 50
        assert 1.0 < lag["max_seconds"] < 60 and lag["p50_seconds"] > 0.5
        assert "relative_error" not in lag

        # Past LAGADVISOR_EXACT_LAGS the lags go to the sketch (bounded memory): native and
        # reference give the same bytes, every percentile within the stated bound of the exact one.
        def run(**env):
            out = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", "--format", "json", *files],
                                 capture_output=True, text=True, timeout=300,
                                 env={**os.environ, "LAGADVISOR_EXACT_LAGS": "10", **env})
            assert out.returncode == 0, out.stderr
            return out.stdout

        native, reference = run(), run(LAGADVISOR_PUREPYTHON="1")
        assert native == reference
        doc = json.loads(native)
        for part in [doc["total"], *doc["files"]]:
            exact = (lag if part is doc["total"] else None)
            approx = part["observed_replica_lag"]
            if approx is None:
                continue
            assert approx.get("relative_error") == (0.001 if approx["transactions"] > 10 else None)
            if exact is not None:
                assert approx["transactions"] == exact["transactions"]
                assert approx["max_seconds"] == exact["max_seconds"]
                for k in ("p50_seconds", "p99_seconds"):
                    assert abs(approx[k] - exact[k]) <= 0.001 * abs(exact[k]) + 1e-9, (k, approx, exact)
        text = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", *files], capture_output=True,
                              text=True, timeout=300, env={**os.environ, "LAGADVISOR_EXACT_LAGS": "10",
                                                           "COLUMNS": "200"})
        assert "percentiles within 0.1%, from a sketch past 10 transactions" in text.stdout
