#!/usr/bin/env python3
"""What a table without any index costs a row-based replica, measured on a real MySQL 9.x pair.

Under row-based replication the replica finds each updated or deleted row by its before image.
With no index on the table it cannot seek: for every rows event it hashes the event's rows and
scans the whole table once (HASH_SCAN, the only algorithm since replica_rows_search_algorithms
was deprecated; sql/log_event.cc ``Rows_log_event::do_hash_scan_and_update``). So the cost grows
with the table's size, per rows event, not per row.

For each table size N: a source and a replica (relaxed durability, one worker), two tables of N
rows with the same columns, ``k`` without any index and ``p`` with a primary key; with the
replica's SQL thread stopped the source runs E single-row UPDATEs on one table, then the SQL
thread is started and the catch-up is timed (WAIT_FOR_EXECUTED_GTID_SET), for ``p`` then ``k``.
The extra time per rows event on ``k`` against ``p``, over N, is fitted by least squares:
its slope is the scan cost per table row (``scan_row_us``), its intercept the fixed part.

    python3 bench/keyless_apply.py [--sizes 2000,10000,40000] [--events 200] [--out bench/keyless.json]
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import realservers  # noqa: E402

BASE = ["--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--binlog-format=ROW", "--log-bin=binlog",
        "--innodb-buffer-pool-size=256M", "--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connect(port: int):
    import mysql.connector

    return mysql.connector.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)


def q(conn, sql: str):
    cur = conn.cursor()
    cur.execute(sql)
    rows = cur.fetchall() if cur.with_rows else []
    cur.close()
    return rows


def gtid_executed(conn) -> str:
    return q(conn, "SELECT @@GLOBAL.gtid_executed")[0][0].replace("\n", "")


def wait_received(rep, target: str, timeout: float = 600) -> None:
    end = time.time() + timeout
    while time.time() < end:
        row = q(rep, "SELECT RECEIVED_TRANSACTION_SET FROM performance_schema.replication_connection_status")
        if q(rep, f"SELECT GTID_SUBSET('{target}', '{(row[0][0] if row else '').replace(chr(10), '')}')")[0][0]:
            return
        time.sleep(0.2)
    raise RuntimeError("the replica's IO thread did not receive the workload in time")


def timed_catch_up(src, rep, table: str, n: int, events: int, rnd: random.Random) -> float:
    q(rep, "STOP REPLICA SQL_THREAD")
    for _ in range(events):
        q(src, f"UPDATE kb.{table} SET b = b + 1 WHERE a = {rnd.randrange(n)}")
    target = gtid_executed(src)
    wait_received(rep, target)
    t0 = time.perf_counter()
    q(rep, "START REPLICA SQL_THREAD")
    if q(rep, f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{target}', 900)")[0][0] != 0:
        raise RuntimeError("the replica did not catch up")
    return time.perf_counter() - t0


def measure(n: int, events: int, rounds: int, seed: int) -> dict:
    tag = f"{int(time.time())}"
    src = realservers.MySQLServer(f"keyless-bench-src-{tag}", free_port(), ["--server-id=1", *BASE], fresh=True)
    rep = realservers.MySQLServer(f"keyless-bench-rep-{tag}", free_port(), [
        "--server-id=2", *BASE, "--relay-log=relay", "--skip-replica-start", "--replica-parallel-workers=1"],
        fresh=True)
    src.start()
    rep.start()
    try:
        s, r = connect(src.port), connect(rep.port)
        q(r, f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={src.port}, SOURCE_USER='root', "
             "SOURCE_PASSWORD='', SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1")
        q(r, "START REPLICA")
        q(s, "CREATE DATABASE kb")
        q(s, "CREATE TABLE kb.k (a INT NOT NULL, b INT NOT NULL, c CHAR(40) NOT NULL)")
        q(s, "CREATE TABLE kb.p (a INT NOT NULL PRIMARY KEY, b INT NOT NULL, c CHAR(40) NOT NULL)")
        for t in ("k", "p"):
            for lo in range(0, n, 1000):
                q(s, f"INSERT INTO kb.{t} VALUES " + ",".join(f"({i},0,'row {i}')" for i in range(lo, min(n, lo + 1000))))
        q(r, f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{gtid_executed(s)}', 900)")
        rnd = random.Random(seed)
        out = {"rows": n, "events": events, "p": [], "k": []}
        for _ in range(rounds):
            for t in ("p", "k"):
                out[t].append(round(timed_catch_up(s, r, t, n, events, rnd), 4))
        s.close()
        r.close()
        return out
    finally:
        rep.stop()
        src.stop()
        rep.remove()
        src.remove()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2000,10000,40000")
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench" / "keyless.json"))
    args = ap.parse_args()
    runs = []
    for n in (int(x) for x in args.sizes.split(",")):
        m = measure(n, args.events, args.rounds, seed=n)
        m["extra_us_per_event"] = round((min(m["k"]) - min(m["p"])) / args.events * 1e6, 2)
        runs.append(m)
        print(json.dumps(m), flush=True)
    xs = [m["rows"] for m in runs]
    ys = [m["extra_us_per_event"] for m in runs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    r2 = 1 - sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys)) / ss_tot if ss_tot else 1.0
    doc = {"server": "MySQL 9.7.4, relaxed, 1 worker", "runs": runs, "scan_row_us": round(slope, 5),
           "scan_event_us": round(intercept, 2), "r2": round(r2, 4),
           "method": "min of rounds; extra catch-up time per single-row UPDATE event on a table without any "
                     "index against the same table with a primary key; least squares over the table size"}
    print(json.dumps(doc, indent=2))
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
