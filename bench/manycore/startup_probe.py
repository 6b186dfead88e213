#!/usr/bin/env python3
"""How the replica's start grows with its workers (issue 33).

compare.py takes the replica's start (``START REPLICA SQL_THREAD`` to its first commit: threads,
their info rows) off every measured catch-up, so that a measured time is the applying alone, as
the simulation's is. It measured that start on the kept 16-worker catch-ups only (about 31 ms on
the device) and took the same off every worker count. The instrumented rounds say the start is
not the same: the coordinator's "waiting for handler commit" stage, its own commits, counts about
3 per worker plus 14 in every catch-up whatever its length or workload (38 at 8 workers, 61-63 at
16, 108-112 at 32, 0.35-0.6 ms each; bench/manycore_16core_run{2,3}.json), which is what MySQL
does at ``START REPLICA``: every worker's row of ``mysql.slave_worker_info`` written and committed
(``Slave_worker::init_worker``, ``Rpl_info_table``), before the coordinator reads the relay log.

This probe measures that start directly, on this machine or the device: interleaved rounds of a
short catch-up at each worker count on a replica of the lab's kit (lab.py's reset and timed
catch-up), each one's start = its timed seconds less the span of its own binlog's commit times
(lab.py's ``commit_span``, as the lab records it), and the coordinator's commits in it
(performance_schema's stage summary of ``thread/sql/replica_sql``, reset before each catch-up).
Prints per worker count the median start and commits, and the least-squares line of the start on
the commits through those medians.

Usage: PYTHONPATH=src python3 bench/manycore/startup_probe.py [--workers 1,2,4,8,16,32] [--rounds 5]
       [--workload uniform] [--config relaxed] [--fraction 0.02] [--out probe.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "manycore"))
try:  # the installed package, or the checkout's src/ when none is (PYTHONPATH=src puts it first)
    import lagadvisor  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "src"))

COORDINATOR_COMMITS_SQL = (
    "SELECT COALESCE(SUM(s.COUNT_STAR), 0), COALESCE(ROUND(SUM(s.SUM_TIMER_WAIT) / 1e9, 3), 0) "
    "FROM performance_schema.events_stages_summary_by_thread_by_event_name s "
    "JOIN performance_schema.threads t USING (THREAD_ID) "
    "WHERE t.NAME = 'thread/sql/replica_sql' AND s.EVENT_NAME = 'stage/sql/waiting for handler commit'")


def line_fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least squares ``y = a + b x``: (a, b)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


def summarize(runs: list[dict]) -> dict:
    """Per worker count the median start (ms) and coordinator commits, and the least-squares line
    of the start on the commits through those medians: its intercept (threads, the relay log: what
    does not grow with the workers) and its cost per commit; ``fixed_share_16`` is the intercept's
    share of the start at 16 workers (compare.py's ``START_FIXED_SHARE``)."""
    per: dict[int, list[dict]] = {}
    for r in runs:
        per.setdefault(r["workers"], []).append(r)
    rows = [{"workers": w, "catch_ups": len(rs),
             "startup_ms": round(statistics.median(r["startup_ms"] for r in rs), 2),
             "coordinator_commits": statistics.median(r["coordinator_commits"] for r in rs)}
            for w, rs in sorted(per.items())]
    # through the medians: the first catch-up of a fresh replica writes its worker rows cold (67 and
    # 248 ms at 16 and 32 workers here, 13-26 ms after)
    a, b = line_fit([r["coordinator_commits"] for r in rows], [r["startup_ms"] for r in rows])
    at16 = a + b * (3 + 3 * 16)
    return {"rows": rows, "startup_ms_fit": {"intercept_ms": round(a, 3), "per_commit_ms": round(b, 4),
                                             "fixed_share_16": round(a / at16, 3) if at16 > 0 else None}}


def main() -> int:
    import lab

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", default="1,2,4,8,16,32")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workload", default="uniform")
    ap.add_argument("--config", choices=sorted(lab.CONFIGS), default="relaxed")
    ap.add_argument("--fraction", type=float, default=0.02, help="share of the backlog each catch-up applies")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--report", type=Path, default=None, help="print the summary of an earlier --out file, no catch-ups")
    a = ap.parse_args()
    if a.report:
        print_summary(summarize(json.loads(a.report.read_text())["runs"]))
        return 0
    workers = [int(w) for w in a.workers.split(",")]
    runs = []
    with lab.probe_replica(a.workload, a.workers, lab.INSTRUMENT_OPTIONS, "startup-probe-") as probe:
        server = probe.server
        machine = probe.result["machine"]
        backlog = probe.backlogs[a.workload]
        n = backlog.count(a.fraction)
        for rnd in range(1, a.rounds + 1):
            for w in workers:
                lab.reset(server, backlog, n, {**lab.CONFIGS[a.config], "replica_parallel_workers": w})
                lab.settle(server, 0.1)
                server.client("TRUNCATE TABLE performance_schema.events_stages_summary_by_thread_by_event_name")
                seconds, _ = lab.timed_apply(server, backlog.target(a.fraction), 120)
                commits, commit_ms = server.rows(COORDINATOR_COMMITS_SQL)[0]
                first, last, count = lab.commit_span(lab.current_binlog(server))
                r = {"round": rnd, "workers": w, "transactions": count, "seconds": round(seconds, 4),
                     "startup_ms": round((seconds - (last - first) / 1e6) * 1e3, 2),
                     "coordinator_commits": int(float(commits)), "coordinator_commit_ms": float(commit_ms)}
                runs.append(r)
                lab.log(f"round {rnd}, {w} workers: {seconds:.3f} s, start {r['startup_ms']:.1f} ms, "
                        f"coordinator commits {r['coordinator_commits']} ({r['coordinator_commit_ms']:.1f} ms)")
    s = summarize(runs)
    print_summary(s)
    if a.out:
        a.out.write_text(json.dumps({"workload": a.workload, "config": a.config, "fraction": a.fraction,
                                     "machine": machine, "runs": runs, **s}, indent=1) + "\n")
    return 0


def print_summary(s: dict) -> None:
    print("| workers | catch-ups | start, ms (median) | coordinator commits (median) |\n|---|---|---|---|")
    for row in s["rows"]:
        print(f"| {row['workers']} | {row['catch_ups']} | {row['startup_ms']:.1f} | {row['coordinator_commits']:g} |")
    fit = s["startup_ms_fit"]
    print(f"start = {fit['intercept_ms']:.2f} ms + {fit['per_commit_ms']:.3f} ms x coordinator commits (least squares on the "
          f"medians); at 16 workers (3 + 3 x 16 commits) the intercept is {fit['fixed_share_16']:.1%} of it")


if __name__ == "__main__":
    sys.exit(main())
