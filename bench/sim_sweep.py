#!/usr/bin/env python3
"""Speed of the applier simulation sweep: N transactions x 3 policies x 7 worker counts.

The input is realistic, not random: the transactions of a real fixture binlog (sysbench
oltp_write_only, 8 clients, MySQL 9.7; their re-derived COMMIT_ORDER / WRITESET /
WRITESET_SESSION clocks, row counts, sizes and commit timestamps) read once through the real
pipeline, then tiled to N transactions as one long binlog file (sequence numbers, clocks and
timestamps shifted per copy, so dependencies stay within a copy and the arrival timeline
continues). Only :func:`lagadvisor.sim.run.sweep` is timed (building the columns, the 21
simulations, the lag statistics), not reading the fixture.

Usage: python3 bench/sim_sweep.py [--transactions 1000000] [--workers 1,2,4,8,16,32,64]
                                  [--pure] [--catch-up] [--relaxed]

``--pure`` times the pure-Python engine instead (LAGADVISOR_PUREPYTHON semantics; slow: use a
smaller ``--transactions``). Run from the repository root with ``PYTHONPATH=src``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "sysbench_oltp_write_only" / "binlog.000001"


def fixture_facts():
    from lagadvisor.cli import CommitOrder, _clock_options
    from lagadvisor.depgraph.read import prepare, run_clocks
    from lagadvisor.sim.run import facts_of

    files = [str(FIXTURE)]
    run = prepare(files, _clock_options(None, CommitOrder.auto, None))
    return [facts_of(t, c, 0) for t, _ws, c in run_clocks(files, run)]


def tile(facts, n: int):
    """*n* transactions: copies of *facts* one after another in one file."""
    span = max(f.commit_ts_us for f in facts) - min(f.commit_ts_us for f in facts) + 1000
    top = max(f.seq for f in facts)
    out = []
    k = 0
    while len(out) < n:
        for f in facts:
            if len(out) == n:
                break
            shift = k * top
            out.append(replace(f, seq=f.seq + shift,
                               clocks=tuple(c + shift if c > 0 else c for c in f.clocks),
                               commit_ts_us=f.commit_ts_us + k * span))
        k += 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--transactions", type=int, default=1_000_000)
    ap.add_argument("--workers", default="1,2,4,8,16,32,64")
    ap.add_argument("--pure", action="store_true", help="time the pure-Python engine")
    ap.add_argument("--catch-up", action="store_true")
    ap.add_argument("--relaxed", action="store_true")
    args = ap.parse_args()

    from lagadvisor.sim import engine
    from lagadvisor.sim.model import CostModel, ReplicaConfig
    from lagadvisor.sim.run import sweep

    if args.pure:
        engine.NATIVE = None
    elif engine.NATIVE is None:
        print("the native extension is not built (or LAGADVISOR_PUREPYTHON is set)", file=sys.stderr)
        return 2
    facts = tile(fixture_facts(), args.transactions)
    workers = [int(w) for w in args.workers.split(",")]
    policies = ["COMMIT_ORDER", "WRITESET", "WRITESET_SESSION"]
    cfg = ReplicaConfig(0, True, not args.relaxed)
    t0 = time.perf_counter()
    rows = sweep(facts, policies, workers, cfg, CostModel(), catch_up=args.catch_up)
    elapsed = time.perf_counter() - t0
    print(f"{len(facts):,} transactions x {len(policies)} policies x {len(workers)} worker counts "
          f"({'pure Python' if args.pure else 'native'} engine, "
          f"{'catch-up' if args.catch_up else 'arrivals'}, {'relaxed' if args.relaxed else 'durable'}): "
          f"{elapsed:.2f} s")
    for r in rows:
        print(f"  {r.policy:17} {r.workers:3}  apply {r.apply_seconds:10.3f} s  speedup {r.speedup:5.2f}x  "
              f"lag p99 {r.lag_p99_seconds:9.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
