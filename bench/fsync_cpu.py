#!/usr/bin/env python3
"""The CPU a durable replica's committing threads use while their fsyncs run (``fsync_cpu``).

A durable commit waits for the redo fsync in InnoDB's wait loop (log0write.cc
``log_wait_for_flush``: ``os_event_wait_for`` wakes up every few microseconds to look) and
calls the binlog fsync itself; both take CPU while the fsync runs. performance_schema has no CPU
timer for the applier, so ``calibrate --host`` cannot see it; it matters when the replica is short
of cores (the polling competes with the workers' apply). Measured here: the same backlog (sysbench
oltp_write_only, 8 clients) caught up by a real MySQL replica pinned to one core, relaxed and
durable, at 1, 2 and 8 workers; the workers' CPU (/proc/PID/task/*/stat) durable less relaxed,
over the time the redo log and binlog fsyncs took (file_summary_by_event_name). The coordinator is
left out (its busy-wait is modelled on its own).

Usage: python3 bench/fsync_cpu.py [--events 12000] [--repeat 2] [--out bench/fsync_cpu.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
import live_calibrate as lc  # noqa: E402
import replica_catchup as rc  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=12000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--workers", default="1,2,8")
    ap.add_argument("--workload", default="oltp_write_only_8")
    ap.add_argument("--out", default=str(ROOT / "fsync_cpu.json"))
    args = ap.parse_args()
    lc._own_names(source_tmpfs=True)
    import atexit
    atexit.register(lc._unmount_source_tmpfs)
    os.sched_setaffinity(0, {0})
    rc.PIN_REPLICA = 1
    workers = [int(x) for x in args.workers.split(",")]
    spec = rc.WORKLOADS[args.workload]
    runs: dict[str, dict[int, list[dict]]] = {}
    for config in ("relaxed", "durable"):
        rc.log(f"{config}: preparing")
        _files, target, snap = rc.prepare_pair(config, rc.sysbench_setup(spec), rc.sysbench_run(spec, args.events))
        runs[config] = {w: [] for w in workers}
        for _ in range(args.repeat):
            for w in workers:
                seconds = rc.catch_up(config, w, target, snap)
                row = {"seconds": round(seconds, 3), "worker_cpu_s": rc.LAST_CPU.get("rpl_rca_wkr", 0.0),
                       "fsync_s": (rc.LAST_WAITS.get("redo_misc_us", 0) + rc.LAST_WAITS.get("binlog_misc_us", 0)) / 1e6,
                       "redo_fsyncs": rc.LAST_WAITS.get("redo_misc", 0), "binlog_fsyncs": rc.LAST_WAITS.get("binlog_misc", 0)}
                runs[config][w].append(row)
                rc.log(f"  {config} {w} workers: {row}")
    result = []
    for w in workers:
        relaxed_cpu = median(r["worker_cpu_s"] for r in runs["relaxed"][w])
        durable_cpu = median(r["worker_cpu_s"] for r in runs["durable"][w])
        fsync_s = median(r["fsync_s"] for r in runs["durable"][w])
        result.append({"workers": w, "relaxed_worker_cpu_s": relaxed_cpu, "durable_worker_cpu_s": durable_cpu,
                       "durable_fsync_s": round(fsync_s, 3),
                       "fsync_cpu": round((durable_cpu - relaxed_cpu) / fsync_s, 3) if fsync_s else None})
        rc.log(f"{w} workers: worker CPU {relaxed_cpu:.2f} s relaxed, {durable_cpu:.2f} s durable; fsyncs "
               f"{fsync_s:.2f} s: fsync_cpu {result[-1]['fsync_cpu']}")
    Path(args.out).write_text(json.dumps({"transactions": args.events, "workload": args.workload,
                                          "results": result, "runs": runs}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
