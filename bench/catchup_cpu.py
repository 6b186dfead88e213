#!/usr/bin/env python3
"""Where a relaxed catch-up's time goes on the replica's one core, thread by thread.

For each workload of bench/replica_catchup.py, a backlog of ``--events`` transactions is caught
up by a real MySQL replica pinned to one core (as ``live_calibrate.py --pin``: the source on the
other core, its data directory on a tmpfs) at 1 and 4 workers, ``--repeat`` times, and each
thread's CPU (/proc/PID/task/*/stat) is given per transaction: the workers (``rpl_rca_wkr``),
the coordinator (``rpl_rca_sql``), InnoDB's purge (``ib_srv_purge``). Compared with the worker
time ``calibrate --host`` reads in service, it tells what a calibration in service cannot see.

Usage: python3 bench/catchup_cpu.py [--workloads oltp_write_only_8,conflict_heavy_8] [--out F]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
import live_calibrate as lc  # noqa: E402
import replica_catchup as rc  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default=",".join(rc.WORKLOADS))
    ap.add_argument("--events", type=int, default=12000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--workers", default="1,4")
    ap.add_argument("--out", default=str(ROOT / "catchup_cpu.json"))
    args = ap.parse_args()
    lc._own_names(source_tmpfs=True)
    os.sched_setaffinity(0, {0})
    rc.PIN_REPLICA = 1
    out: dict[str, list] = {}
    try:
        for name in args.workloads.split(","):
            spec = rc.WORKLOADS[name]
            _, target, snap = rc.prepare_pair("relaxed", rc.sysbench_setup(spec), rc.sysbench_run(spec, args.events))
            for _ in range(args.repeat):
                for w in map(int, args.workers.split(",")):
                    t = rc.catch_up("relaxed", w, target, snap)
                    cpu = {k: round(v / args.events * 1e6, 1) for k, v in sorted(rc.LAST_CPU.items(), key=lambda x: -x[1])}
                    rc.log(f"{name} {w} workers: {t:.2f} s = {t / args.events * 1e6:.0f} us a transaction; "
                           f"CPU us a transaction by thread {cpu}")
                    out.setdefault(name, []).append({"workers": w, "seconds": round(t, 3), "cpu_us_per_trx": cpu})
    finally:
        lc._unmount_source_tmpfs()
    Path(args.out).write_text(json.dumps({"events": args.events, "config": "relaxed", "runs": out}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
