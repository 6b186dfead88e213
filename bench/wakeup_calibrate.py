#!/usr/bin/env python3
"""A one-worker calibration and the coordinator's wake-up, checked on a real replica (issue 33).

With one worker, a transaction whose ``last_committed`` reaches the one before it waits for that
commit (the coordinator sleeps in ``wait_for_last_committed_trx``), so its commit gap holds a
wake-up the simulation also charges (``CostModel.wakeup_us``). ``lagadvisor calibrate`` now
measures it from the gaps that follow such a wait against those that do not, and takes it out of
them (sim/calibrate.py ``take_out_wakeups``); before, the fit kept it in the per-transaction cost
and the simulation paid it a second time.

For each chain share (the probability that a transaction first updates a row the one before it
wrote: 0, 0.5, 0.9, 1), on a real MySQL 9.x source and replica on this machine (relaxed,
``replica_preserve_commit_order=ON``; bench/replica_catchup.py's ``prepare_pair``/``catch_up``):

1. one client writes ``--events`` transactions of varied shapes (1-2 inserts, 0-4 updates, the
   chain's update, one update of a random row the next transaction may chain on);
2. ``--rounds`` interleaved rounds of catch-ups with 1, 2 and 4 workers, each round's one-worker
   replica binlog kept;
3. ``calibrate --relaxed`` on each kept binlog, as it is now and as it was (the wake-up left in
   the gaps: ``take_out_wakeups`` replaced by one that takes nothing out), each model simulating
   the source's binlog at 1, 2 and 4 workers against the median measured catch-ups.

Writes ``--out`` (JSON, naming the machine) and prints a Markdown table.

Usage: python3 bench/wakeup_calibrate.py [--events 4000] [--rounds 3] [--out bench/wakeup_calibrate_2core.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
try:  # the installed package, or the checkout's src/ when none is (PYTHONPATH=src puts it first)
    import lagadvisor  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "src"))
import replica_catchup as rc  # noqa: E402

SHARES = (0.0, 0.5, 0.9, 1.0)
WORKERS = (1, 2, 4)
ROWS = 10_000


def workload(seed: int, n: int, share: float):
    """(setup, run): a table of :data:`ROWS` rows, then ``n`` transactions from one client."""
    def setup(conn):
        rc.q(conn, "CREATE DATABASE w")
        rc.q(conn, "CREATE TABLE w.t (id INT PRIMARY KEY, k INT NOT NULL, v VARCHAR(100) NOT NULL, KEY (k))")
        cur = conn.cursor()
        for lo in range(0, ROWS, 1000):
            cur.execute("INSERT INTO w.t VALUES " + ",".join(f"({i},{i % 997},REPEAT('v',100))"
                                                              for i in range(lo, lo + 1000)))
        cur.close()

    def run():
        rnd = random.Random(seed)
        conn = rc.connect(rc.SRC_PORT)
        cur = conn.cursor()
        next_id, last = ROWS, None
        for _ in range(n):
            cur.execute("BEGIN")
            if last is not None and rnd.random() < share:
                cur.execute(f"UPDATE w.t SET k = k + 1 WHERE id = {last}")
            for _ in range(rnd.choice((1, 1, 2))):
                cur.execute(f"INSERT INTO w.t VALUES ({next_id},{rnd.randint(1, 997)},REPEAT('x',100))")
                next_id += 1
            for _ in range(rnd.choice((0, 1, 2, 4))):
                cur.execute(f"UPDATE w.t SET k = k + 1 WHERE id = {rnd.randrange(next_id)}")
            last = rnd.randrange(next_id)
            cur.execute(f"UPDATE w.t SET k = k + 2 WHERE id = {last}")
            cur.execute("COMMIT")
        cur.close()
        conn.close()
    return setup, run


def left_in():
    """``take_out_wakeups`` as calibrate was before it: nothing taken out, the base's kept."""
    from lagadvisor.sim import calibrate as cal

    def keep(samples, waited, base, **_):
        return samples, cal.Wakeups(base.wakeup_us, False, sum(waited), len(waited) - sum(waited), "left in")
    return keep


def fit(files: list[Path], before: bool):
    """The calibrated model of a one-worker replica binlog (``before``: as calibrate was)."""
    from lagadvisor.sim import calibrate as cal

    saved = cal.take_out_wakeups
    if before:
        cal.take_out_wakeups = left_in()
    try:
        return cal.calibrate([str(f) for f in files], durable=False, cores=os.cpu_count() or 1)
    finally:
        cal.take_out_wakeups = saved


def predicted(files: list[Path], workers: int, model) -> float:
    return rc.simulate_catch_up(files, workers, False, model)


def machine() -> dict:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), "unknown")
    return {"cores": os.cpu_count(), "cpu": cpu, "kernel": platform.release()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shares", default=",".join(map(str, SHARES)))
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "wakeup_calibrate_2core.json")
    args = ap.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    rows = []
    for share in (float(s) for s in args.shares.split(",")):
        rc.log(f"chain share {share}: {args.events} transactions")
        setup, run = workload(33, args.events, share)
        files, target, snap = rc.prepare_pair("relaxed", setup, run)
        rc._FACTS.clear()   # prepare_pair reuses its folder and file names: read this share's files
        times: dict[int, list[float]] = {w: [] for w in WORKERS}
        kept = []
        for r in range(args.rounds):
            for w in (WORKERS if r % 2 == 0 else WORKERS[::-1]):
                keep = rc.realservers.cache_dir() / f"bench-wakeup-{r}" if w == 1 else None
                if keep is not None:
                    shutil.rmtree(keep, ignore_errors=True)
                times[w].append(rc.catch_up("relaxed", w, target, snap, keep_binlog=keep))
                if keep is not None:
                    kept.append(sorted(keep.iterdir()))
        measured = {w: median(v) for w, v in times.items()}
        rc.log(f"  measured {measured}")
        for r, binlogs in enumerate(kept):
            for how, before in (("now", False), ("before", True)):
                c = fit(binlogs, before)
                wake = next((n for n in c.notes if "wake-up" in n), "left in the gaps")
                pred = {w: predicted(files, w, c.model) for w in WORKERS}
                row = {"chain_share": share, "round": r + 1, "calibrate": how, "wakeup_us": round(c.model.wakeup_us, 2),
                       "wakeup": wake, "samples": c.samples,
                       "cells": [{"workers": w, "measured_s": round(measured[w], 4), "rounds_s": [round(t, 4) for t in times[w]],
                                  "predicted_s": round(pred[w], 4), "time_error": round(pred[w] / measured[w] - 1, 4)}
                                 for w in WORKERS]}
                rows.append(row)
                rc.log(f"  round {r + 1} {how}: wakeup {row['wakeup_us']} us; " + ", ".join(
                    f"{x['workers']}w {x['time_error']:+.1%}" for x in row["cells"]))
    out = {"machine": machine(), "started": started, "events": args.events, "rounds": args.rounds,
           "replica": "MySQL 9.x relaxed (innodb_flush_log_at_trx_commit=2, sync_binlog=0), "
                      "replica_preserve_commit_order=ON, log_replica_updates=ON",
           "rows": rows}
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print("\n| chain share | calibrate | wakeup_us | 1 worker | 2 workers | 4 workers |\n|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['chain_share']:g} (round {row['round']}) | {row['calibrate']} | {row['wakeup_us']:g} | "
              + " | ".join(f"{x['time_error']:+.1%}" for x in row["cells"]) + " |")
    within = [abs(x["time_error"]) <= 0.15 for row in rows if row["calibrate"] == "now" for x in row["cells"]]
    was = [abs(x["time_error"]) <= 0.15 for row in rows if row["calibrate"] == "before" for x in row["cells"]]
    print(f"\nwithin 15%: now {sum(within)} of {len(within)}, before {sum(was)} of {len(was)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
