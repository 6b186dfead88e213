"""Memory and time against input size: ``simulate`` and ``advise`` on 1, 10 and 100 copies of the
benchmark binlog given as one rotation sequence (issue 14's must-show).

1. Builds (or reuses) the 500 MB workload file of ``bench/throughput.py`` (a real MySQL 9.7
   server, sysbench oltp_write_only; cached in ``bench/data/``, git-ignored).
2. Copies it to ``bench/data/scale/binlog.000001`` ... (real copies, not links: the commands
   refuse the same file twice, since it would be counted twice; 100 copies = 50 GB of disk, kept
   for the next run, ``--clean`` removes them).
3. Times each command on the first K copies for each K of ``--copies`` (default 1,10,100): wall
   time, CPU time and peak RSS of the process (``wait4``), output to /dev/null, and writes the
   figures to ``bench/scale.json``.

Each copy starts again from the same commit times, so past the first copy the source timeline
steps back at every rotation: a worst case for the lag statistics (every later copy arrives
"at once"), which is what the run is for (memory and time), not a realistic lag.

Usage: python3 bench/scale.py [--copies 1,10,100] [--data DIR] [--jobs 2] [--clean]

(``--jobs 2`` also times ``simulate --jobs 2`` and ``advise --jobs 2`` on the largest run.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import throughput  # noqa: E402  (the workload file and the wait4 measurement)

WORKERS = "1,2,4,8,16,32,64"


def copies(data: Path, meta: dict, k: int) -> list[Path]:
    src = data / meta["file"]
    out_dir = data / "scale"
    out_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(1, k + 1):
        p = out_dir / f"binlog.{i:06d}"
        if not p.exists() or p.stat().st_size != meta["bytes"]:
            tmp = p.with_suffix(".part")
            shutil.copyfile(src, tmp)
            os.replace(tmp, p)
        files.append(p)
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", default="1,10,100")
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "data")
    ap.add_argument("--jobs", type=int, default=2, help="also simulate and advise --jobs N on the largest run "
                                                        "(0: skip)")
    ap.add_argument("--clean", action="store_true", help="remove the copies afterwards")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "scale.json")
    args = ap.parse_args()
    meta = throughput.build(args.data, 500)
    ks = [int(x) for x in args.copies.split(",")]
    files = copies(args.data, meta, max(ks))
    py = [sys.executable, "-m", "lagadvisor"]
    env = throughput.lagadvisor_env(False)
    env["LAGADVISOR_CACHE_DIR"] = str(args.data / "cache")
    runs = []
    for k in ks:
        names = [str(f) for f in files[:k]]
        plan = [("simulate", [*py, "simulate", "--workers", WORKERS, "--format", "json", *names]),
                ("advise", [*py, "advise", "--format", "json", *names])]
        if args.jobs and k == max(ks):
            plan.append((f"simulate --jobs {args.jobs}",
                         [*py, "simulate", "--workers", WORKERS, "--jobs", str(args.jobs), "--format", "json", *names]))
            plan.append((f"advise --jobs {args.jobs}", [*py, "advise", "--jobs", str(args.jobs), "--format", "json",
                                                         *names]))
        for name, cmd in plan:
            m = throughput.measure(cmd, env)
            row = {"command": name, "copies": k, "bytes": meta["bytes"] * k, "transactions": meta["transactions"] * k,
                   **{key: round(v, 2) for key, v in m.items()}}
            row["s_per_copy"] = round(m["wall_s"] / k, 3)
            runs.append(row)
            print(json.dumps(row), flush=True)
    doc = {"when": time.strftime("%Y-%m-%d %H:%M"), "file": meta, "workers": WORKERS, "cores": os.cpu_count(),
           "runs": runs}
    by = {(r["command"], r["copies"]): r for r in runs}
    flat = {}
    for cmd in ("simulate", "advise"):
        if (cmd, 10) in by and (cmd, 100) in by:
            flat[cmd] = round(by[(cmd, 100)]["peak_rss_mb"] / by[(cmd, 10)]["peak_rss_mb"], 3)
    doc["rss_100_over_10"] = flat
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    if args.clean:
        shutil.rmtree(args.data / "scale", ignore_errors=True)


if __name__ == "__main__":
    main()
