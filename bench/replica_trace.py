#!/usr/bin/env python3
"""Where a real replica's applier time goes: for each worker count, one timed catch-up and one
with performance_schema stage and wait instrumentation, printing per thread kind the stages
and waits by total time (bench/replica_catchup.py's servers, workloads and catch-up).

Usage: python3 bench/replica_trace.py [WORKLOAD [relaxed|durable [EVENTS]]]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import replica_catchup as rc  # noqa: E402

INSTRUMENT = [*rc.STAGE_OPTIONS, "--performance-schema-instrument=wait/synch/cond/%=ON",
              "--performance-schema-instrument=wait/synch/mutex/%=ON",
              "--performance-schema-consumer-events-waits-current=ON"]
THREADS = "(t.NAME LIKE '%replica%' OR t.NAME LIKE '%rpl%' OR t.NAME LIKE '%slave%' OR t.NAME LIKE '%log_%')"


def summaries(conn) -> dict[tuple[str, str], tuple[int, int]]:
    """(thread name, event) -> (count, picoseconds), summed over threads of the same name."""
    rows: dict[tuple[str, str], tuple[int, int]] = {}
    for table in ("events_stages_summary_by_thread_by_event_name", "events_waits_summary_by_thread_by_event_name"):
        for name, event, count, total in rc.q(conn, f"SELECT t.NAME, s.EVENT_NAME, s.COUNT_STAR, s.SUM_TIMER_WAIT "
                                                    f"FROM performance_schema.{table} s JOIN performance_schema.threads t "
                                                    f"USING (THREAD_ID) WHERE s.COUNT_STAR > 0 AND {THREADS}"):
            c, ps = rows.get((name, event), (0, 0))
            rows[(name, event)] = (c + int(count), ps + int(total))
    return rows


def main() -> int:
    workload = sys.argv[1] if len(sys.argv) > 1 else "oltp_write_only_8"
    config = sys.argv[2] if len(sys.argv) > 2 else "relaxed"
    events = int(sys.argv[3]) if len(sys.argv) > 3 else 16000
    failures = rc.realservers.provision(log=lambda m: None)
    if failures:
        print("\n".join(failures))
        return 1
    spec = rc.WORKLOADS[workload]
    _, target, snap = rc.prepare_pair(config, rc.sysbench_setup(spec), rc.sysbench_run(spec, events))
    times = {}
    for w in (1, 2, 4, 8):
        plain = rc.catch_up(config, w, target, snap)
        rows: dict = {}
        traced = rc.catch_up(config, w, target, snap, instrument=INSTRUMENT, inspect=lambda r: rows.update(summaries(r)))
        times[w] = {"plain": plain, "traced": traced}
        print(f"=== workers {w}: plain {plain:.2f} s, traced {traced:.2f} s; CPU {rc.LAST_CPU}")
        for (name, event), (count, ps) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
            if ps / 1e12 > 0.02:
                print(f"  {name:45s} {event:70s} {count:8d} {ps / 1e12:8.3f} s  {ps / 1e6 / max(count, 1):9.1f} us")
    print(json.dumps(times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
