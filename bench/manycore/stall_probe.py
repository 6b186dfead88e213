#!/usr/bin/env python3
"""What the replica waited on during a stall of its catch-up (issue 33).

The kept 16-worker binlogs of the fifth device run show commit gaps of 100.2-100.3 ms with
transactions in flight (docs/accuracy.md, "The replica's stalls"): they made two of
five rounds' catch-ups 30% slower. This probe repeats one workload's catch-up on a replica of the
lab's kit (lab.py's reset and timed catch-up, on this machine or the device) with
performance_schema's wait history on, reads each catch-up's own binlog for its longest commit
gaps, and when one reaches ``--gap-ms`` prints and keeps every wait and stage of 20 ms or more
recorded during that catch-up, with the thread that waited.

On the 2-core development VM (2026-11-27, uniform backlog, 10%, 4 workers, relaxed) 5 of 100
catch-ups had such a gap (100.4-104.8 ms), and every time the same picture: one worker waiting
100 ms for ``MYSQL_BIN_LOG::LOCK_log`` (Commit_stage_manager::enroll_for, the binlog flush
stage), the others for ``COND_done``, the coordinator for a free worker, one worker in "waiting
for handler commit" with no instrumented wait, and InnoDB's GTID persister
(``thread/innodb/clone_gtid_thread``, Clone_persist_gtid, whose timer is 100 ms:
``s_time_threshold``) in "waiting for handler commit" for 100-200 ms.

Usage: PYTHONPATH=src python3 bench/manycore/stall_probe.py [--runs 100] [--workload uniform] [--workers 4]
       [--fraction 0.1] [--gap-ms 40] [--config relaxed] [--no-instrumented] [--out probe.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "manycore"))
try:  # the installed package, or the checkout's src/ when none is (PYTHONPATH=src puts it first)
    import lagadvisor  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "src"))

WAITS_SQL = ("SELECT t.NAME, w.EVENT_NAME, ROUND(w.TIMER_WAIT / 1e9, 2), w.SOURCE "
             "FROM performance_schema.events_waits_history_long w JOIN performance_schema.threads t USING (THREAD_ID) "
             "WHERE w.TIMER_WAIT > 20e9 ORDER BY w.TIMER_WAIT DESC LIMIT 40")
STAGES_SQL = ("SELECT t.NAME, s.EVENT_NAME, ROUND(s.TIMER_WAIT / 1e9, 2), s.SOURCE "
              "FROM performance_schema.events_stages_history_long s JOIN performance_schema.threads t USING (THREAD_ID) "
              "WHERE s.TIMER_WAIT > 20e9 ORDER BY s.TIMER_WAIT DESC LIMIT 40")
HISTORY = ["--performance-schema-consumer-events-waits-history-long=ON",
           "--performance-schema-events-waits-history-long-size=2000000"]


def longest_gaps(commit_us: list[int], top: int = 3) -> list[tuple[float, int]]:
    """The *top* longest gaps between consecutive commits (sorted by time), in ms, each with the
    index of the transaction that ended it."""
    ts = sorted(commit_us)
    gaps = sorted(((ts[k] - ts[k - 1], k) for k in range(1, len(ts))), reverse=True)[:top]
    return [(round(g / 1e3, 1), k) for g, k in gaps]


def main() -> int:
    import lab
    from compare import commit_times

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--workload", default="uniform")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--config", choices=sorted(lab.CONFIGS), default="relaxed")
    ap.add_argument("--fraction", type=float, default=0.1, help="share of the backlog each catch-up applies")
    ap.add_argument("--gap-ms", type=float, default=40.0, help="a commit gap this long is a stall")
    ap.add_argument("--no-instrumented", dest="instrumented", action="store_false",
                    help="no performance_schema history: how often stalls come without the instruments")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    runs, stalls = [], []
    with lab.probe_replica(a.workload, str(a.workers), lab.INSTRUMENT_OPTIONS + HISTORY if a.instrumented else [],
                           "stall-probe-") as probe:
        server = probe.server
        backlog = probe.backlogs[a.workload]
        n = backlog.count(a.fraction)
        for i in range(a.runs):
            lab.reset(server, backlog, n, {**lab.CONFIGS[a.config], "replica_parallel_workers": a.workers})
            lab.settle(server, 0.1)
            if a.instrumented:
                server.client("TRUNCATE TABLE performance_schema.events_waits_history_long; "
                              "TRUNCATE TABLE performance_schema.events_stages_history_long")
            seconds, _ = lab.timed_apply(server, backlog.target(a.fraction), 120)
            gaps = longest_gaps(commit_times(lab.current_binlog(server)))
            runs.append({"run": i, "seconds": round(seconds, 4), "longest_gaps_ms": gaps})
            lab.log(f"run {i}: {seconds:.3f} s, longest commit gaps (ms, at transaction) {gaps}")
            if gaps and gaps[0][0] >= a.gap_ms:
                stall = {"run": i, "gap_ms": gaps[0][0]}
                if a.instrumented:
                    stall["waits"] = server.rows(WAITS_SQL)
                    stall["stages"] = server.rows(STAGES_SQL)
                    for row in stall["waits"] + stall["stages"]:
                        print("   ", " | ".join(row))
                stalls.append(stall)
    print(f"{len(stalls)} of {len(runs)} catch-ups had a commit gap of {a.gap_ms:g} ms or more")
    if a.out:
        a.out.write_text(json.dumps({"workload": a.workload, "workers": a.workers, "config": a.config,
                                     "fraction": a.fraction, "instrumented": a.instrumented, "runs": runs,
                                     "stalls": stalls}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
