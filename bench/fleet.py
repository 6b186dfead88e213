#!/usr/bin/env python3
"""``lagadvisor fleet`` on the embedded Dask cluster with 1 and then 2 worker processes.

Builds a fleet of 8 servers from the real-server binlogs in fixtures/ (each server a copy of one
fixture's binlog set: sysbench oltp_write_only, the five rotated files, the MariaDB concurrent
run, the compressed / minimal-image / minimal-metadata / history-50 / full-metadata single runs),
then for each worker count: starts a LocalCluster, runs the fleet once with Dask's task stream
on, and reports the wall time (cluster start apart), the speedup, the per-file read rate (bytes
per second per core), the per-server serial part, and the scheduler's overhead per task two
ways: (workers x wall - busy compute) / tasks for this run, and the round trip of 200 no-op
tasks. The rules' what-if passes are per-file tasks too (submitted from the server tasks). Checks that both runs give the same fleet document.

Usage: python3 bench/fleet.py [--out bench/fleet.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from docs_tables import conditions, write_table

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SETS = ["sysbench_oltp_write_only", "single_rotation", "mariadb_concurrent", "single_compressed",
        "single_minimal_image", "single_minimal_metadata", "single_history50", "single_full"]


def build_fleet(into: Path) -> list[str]:
    dirs = []
    for n, name in enumerate(SETS, 1):
        d = into / f"server-{n:02d}-{name}"
        d.mkdir(parents=True)
        for f in sorted((FIXTURES / name).iterdir()):
            if f.name.split(".")[-1].isdigit():
                shutil.copy(f, d / f.name)
        dirs.append(str(d))
    return dirs


def _noop(x):
    return x


def measure(dirs: list[str], workers: int) -> dict:
    from lagadvisor.fleet import build_job, connect, entries_from_dirs
    from lagadvisor.fleet.cluster import run_fleet
    from lagadvisor.report.fleet import fleet_json

    t0 = time.perf_counter()
    client, cluster = connect(None, workers)
    client.wait_for_workers(workers)
    started = time.perf_counter() - t0
    try:
        # the scheduler's round trip for a trivial task (warm: after one batch)
        client.gather(client.map(_noop, range(50), pure=False))
        t = time.perf_counter()
        client.gather(client.map(_noop, range(200), pure=False))
        noop_ms = (time.perf_counter() - t) / 200 * 1e3
        import uuid

        rid = uuid.uuid4().hex[:12]
        jobs = [build_job(e, rid) for e in entries_from_dirs(dirs)]
        run = run_fleet(jobs, client, stream=True)
    finally:
        client.close()
        cluster.close()
    busy = {"verdict": 0.0, "read": 0.0, "whatif": 0.0, "advise": 0.0}
    for task in run.task_stream:
        kind = str(task["key"]).split("-", 1)[0]
        for ss in task["startstops"]:
            if ss["action"] == "compute" and kind in busy:
                busy[kind] += ss["stop"] - ss["start"]
    # the server task's compute span includes its waits for its what-if tasks (seceded: the
    # worker runs other tasks meanwhile): the serial part is the span less those waits
    waits = sum(r.what_if_seconds for r in run.results)
    busy["advise"] -= waits
    total_busy = sum(busy.values())
    ntasks = run.tasks + sum(1 for t in run.task_stream if str(t["key"]).startswith("whatif"))
    nbytes = sum(os.path.getsize(os.path.join(d, f)) for d in dirs for f in os.listdir(d))
    per_server = sorted(r.seconds - r.what_if_seconds for r in run.results)
    return {
        "workers": workers, "cluster_start_s": round(started, 2), "wall_s": round(run.seconds, 3),
        "tasks": ntasks, "files": sum(len(j.files) for j in jobs), "bytes": nbytes,
        "busy_s": {k: round(v, 3) for k, v in busy.items()},
        "read_mb_per_s_per_core": round(nbytes / busy["read"] / 1e6, 3) if busy["read"] else None,
        "overhead_ms_per_task": round((workers * run.seconds - total_busy) / ntasks * 1e3, 1),
        "noop_roundtrip_ms": round(noop_ms, 2),
        "server_task_s": {"max": round(per_server[-1], 3), "sum": round(sum(per_server), 3)},
        "doc": fleet_json(run.results),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "fleet.json"))
    ap.add_argument("--no-docs", action="store_true", help="do not write the table into docs/ (see bench/docs_tables.py)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    with tempfile.TemporaryDirectory(prefix="lagadvisor-fleet-bench-") as tmp:
        dirs = build_fleet(Path(tmp))
        rows = [measure(dirs, w) for w in (1, 2)]
        docs = [json.dumps(r.pop("doc"), sort_keys=True).replace(tmp, "<fleet>") for r in rows]
    assert docs[0] == docs[1], "1 and 2 workers gave different fleet documents"
    speedup = rows[0]["wall_s"] / rows[1]["wall_s"]
    out = {"servers": len(SETS), "runs": rows, "speedup_2_vs_1": round(speedup, 3), "cpu_count": os.cpu_count(),
           "load_average_1min_after": round(os.getloadavg()[0], 2), "same_document": True}
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    lines = ["| workers | wall s | speedup | read MB/s/core | busy read / what-if / verdict / server s | "
             "overhead ms/task | no-op round trip ms | cluster start s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = r["busy_s"]
        sp = 1.0 if r["workers"] == 1 else speedup
        lines.append(f"| {r['workers']} | {r['wall_s']:.2f} | {sp:.2f}x | {r['read_mb_per_s_per_core']} | "
                     f"{b['read']:.2f} / {b['whatif']:.2f} / {b['verdict']:.2f} / {b['advise']:.2f} | "
                     f"{r['overhead_ms_per_task']} | "
                     f"{r['noop_roundtrip_ms']} | {r['cluster_start_s']} |")
    summary = (f"{len(SETS)} servers, {rows[0]['files']} files, {rows[0]['bytes'] / 1e6:.1f} MB, {rows[0]['tasks']} "
               f"tasks; per-server task (serial part): max {rows[0]['server_task_s']['max']} s, sum "
               f"{rows[0]['server_task_s']['sum']} s; same document at 1 and 2 workers; {os.cpu_count()} cores, "
               f"load average {os.getloadavg()[0]:.2f}")
    print("\n".join(lines))
    print(summary)
    if not args.no_docs:
        write_table("performance.md", "fleet", "\n".join(lines), conditions(summary))

if __name__ == "__main__":
    main()
