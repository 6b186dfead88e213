#!/usr/bin/env python3
"""Where a real replica's applier time goes: one catch-up per worker count with performance_schema
stage and wait instrumentation, printing per thread kind the stages and waits by total time.

Usage: python3 bench/replica_trace.py [WORKLOAD [relaxed|durable [EVENTS]]]
(workloads as in bench/replica_catchup.py; also runs an uninstrumented catch-up for comparison).
"""
import json, shutil, subprocess, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE)); sys.path.insert(0, str(HERE.parent / "scripts"))
import replica_catchup as rc  # noqa: E402
PS = ["--performance-schema-instrument=stage/%=ON", "--performance-schema-instrument=wait/synch/cond/%=ON",
      "--performance-schema-instrument=wait/synch/mutex/%=ON",
      "--performance-schema-consumer-events-stages-current=ON", "--performance-schema-consumer-events-waits-current=ON"]
orig = rc.replica
def traced(workers, config):
    s = orig(workers, config)
    if TRACE: s.options = list(s.options) + PS
    return s
rc.replica = traced
TRACE = False
wl = sys.argv[1] if len(sys.argv) > 1 else "oltp_write_only_8"
config = sys.argv[2] if len(sys.argv) > 2 else "relaxed"
events = int(sys.argv[3]) if len(sys.argv) > 3 else 16000
spec = rc.WORKLOADS[wl]
files, target, snap = rc.prepare_pair(config, rc.sysbench_setup(spec), rc.sysbench_run(spec, events))
out = {}
for w in (1, 2, 4, 8):
    TRACE = False
    plain = rc.catch_up(config, w, target, snap)
    TRACE = True
    # traced run: collect summaries before stopping
    rep = rc.replica(w, config)
    shutil.rmtree(rep.host_datadir, ignore_errors=True)
    subprocess.run(["cp", "-a", str(snap), str(rep.host_datadir)], check=True)
    rep.start()
    try:
        r = rc.connect(rc.REP_PORT)
        rc.q(r, "TRUNCATE performance_schema.events_stages_summary_by_thread_by_event_name")
        rc.q(r, "TRUNCATE performance_schema.events_waits_summary_by_thread_by_event_name")
        t0 = time.perf_counter()
        rc.q(r, "START REPLICA SQL_THREAD")
        rc.q(r, f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{target}', 900)")
        el = time.perf_counter() - t0
        rows = {}
        for tbl in ("events_stages_summary_by_thread_by_event_name", "events_waits_summary_by_thread_by_event_name"):
            for name, ev, cnt, tot in rc.q(r, f"SELECT t.NAME, s.EVENT_NAME, s.COUNT_STAR, s.SUM_TIMER_WAIT FROM performance_schema.{tbl} s JOIN performance_schema.threads t USING (THREAD_ID) WHERE s.COUNT_STAR > 0 AND (t.NAME LIKE '%replica%' OR t.NAME LIKE '%rpl%' OR t.NAME LIKE '%slave%' OR t.NAME like '%log_%')"):
                k = (name, ev)
                c, s = rows.get(k, (0, 0))
                rows[k] = (c + int(cnt), s + int(tot))
        r.close()
    finally:
        rep.stop()
    print(f"=== workers {w}: plain {plain:.2f} s, traced {el:.2f} s; CPU {rc.LAST_CPU}")
    for (name, ev), (c, s) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        if s / 1e12 > 0.02:
            print(f"  {name:45s} {ev:70s} {c:8d} {s/1e12:8.3f} s  {s/1e6/max(c,1):9.1f} us")
    out[w] = {"plain": plain, "traced": el, "rows": [[n, e, c, s] for (n, e), (c, s) in rows.items()]}
print(json.dumps({w: {"plain": v["plain"], "traced": v["traced"]} for w, v in out.items()}))
