"""`lagadvisor eta` against real catch-ups, repeated: a MySQL 9.7 pair on loopback (a durable
2-worker replica with a 4 ms binlog_group_commit_sync_delay, stopped behind a backlog of varied
transactions, then started), the first ETA against the catch-up measured from it. Prints each run and the summary; writes bench/eta.json.

    PYTHONPATH=src python bench/eta_live.py --runs 4 --transactions 2000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "sim")]

from test_eta_live import catch_up  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--transactions", type=int, default=2000)
    ap.add_argument("--sample", default="3s")
    ap.add_argument("-o", "--output", default=str(ROOT / "bench" / "eta.json"))
    a = ap.parse_args()
    runs = []
    for i in range(a.runs):
        out = catch_up(a.transactions, a.sample, "1s", check_privileges=False)
        runs.append({k: out[k] for k in ("eta_s", "measured_s", "error", "from_start_s")})
        print(f"run {i + 1}: first ETA {out['eta_s']:.2f} s, measured {out['measured_s']:.2f} s, "
              f"error {out['error']:+.1%}", flush=True)
    errs = [abs(r["error"]) for r in runs]
    summary = {"runs": runs, "median_abs_error": statistics.median(errs),
               "within_15_percent": sum(e <= 0.15 for e in errs), "transactions": a.transactions,
               "sample": a.sample}
    print(f"median |error| {summary['median_abs_error']:.1%}; within 15%: {summary['within_15_percent']} of "
          f"{len(runs)}")
    Path(a.output).write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
