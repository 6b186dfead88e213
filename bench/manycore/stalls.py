#!/usr/bin/env python3
"""Where the lab's replica stopped committing, per workload, durability and worker count.

lab.py records each catch-up's gaps of 20 ms or more between two consecutive commits of its own
binlog (``long_gaps``: :func:`lab.long_gaps`). The 16-core lab's 100 ms stalls (InnoDB's GTID
persister holding the binlog group commit, docs/accuracy.md) were seen so far only in the kept
16-worker binlogs, on the fastest-committing backlog; ``calibrate --workers N`` finds them in a
catch-up and leaves them out of its fit, and no engine models them. This table says at which
worker counts they come, which is what modelling them needs. Runs before the field (runs 1-6)
are reported as not recorded.

Usage: python3 bench/manycore/stalls.py LAB.json [--stall-ms 90] [--out stalls.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lab import read_json  # noqa: E402

#: A gap at least this long counts as a stall in the table (the GTID persister's were 100.2-100.8 ms;
#: the mixed backlog's largest transactions make 41-51 ms gaps at the same transactions every round).
STALL_MS = 90.0


def stall_table(lab: dict, stall_ms: float = STALL_MS) -> list[dict]:
    """One row per (workload, config, workers) of the timed catch-ups (phases relaxed and durable)
    that recorded ``long_gaps``: the catch-ups, how many had a gap of ``stall_ms`` or more, the
    stalls' count, and the median time per catch-up in gaps of 20 ms or more."""
    cells: dict[tuple, list[dict]] = {}
    for run in lab.get("runs", []):
        if run.get("phase") not in ("relaxed", "durable") or "long_gaps" not in run:
            continue
        cells.setdefault((run["workload"], run["config"], run["workers"]), []).append(run["long_gaps"])
    rows = []
    for (workload, config, workers), gaps in sorted(cells.items()):
        stalls = [[g for _, g in lg["longest"] if g >= stall_ms * 1e3] for lg in gaps]
        rows.append({"workload": workload, "config": config, "workers": workers, "catch_ups": len(gaps),
                     "with_stall": sum(1 for s in stalls if s), "stalls": sum(map(len, stalls)),
                     "stall_ms": sorted(round(g / 1e3, 1) for s in stalls for g in s),
                     "long_gap_ms_median": round(median(lg["sum_us"] for lg in gaps) / 1e3, 1)})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", type=Path, help="manycore.json written by bench/manycore/lab.py")
    ap.add_argument("--stall-ms", type=float, default=STALL_MS)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    rows = stall_table(read_json(args.lab), args.stall_ms)
    if not rows:
        print(f"{args.lab}: no catch-up recorded its long gaps (a run before lab.py's long_gaps)")
        return 0
    print(f"| workload | replica | workers | catch-ups | with a stall of {args.stall_ms:g} ms+ | stalls (ms) "
          "| gaps of 20 ms+ per catch-up, median (ms) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['workload']} | {r['config']} | {r['workers']} | {r['catch_ups']} | {r['with_stall']} | "
              f"{', '.join(f'{g:g}' for g in r['stall_ms']) or '-'} | {r['long_gap_ms_median']:g} |")
    if args.out:
        args.out.write_text(json.dumps({"lab": str(args.lab), "stall_ms": args.stall_ms, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
