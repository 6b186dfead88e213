#!/usr/bin/env python3
"""Where ``lagadvisor simulate`` spends its time: policy detection, reading the facts (native
core, or the reference with ``LAGADVISOR_PUREPYTHON=1``), then the sweep (builders + engine).

    PYTHONPATH=src python3 bench/simulate_phases.py /tmp/big/binlog.000001 --workers 1,2,4,8,16,32,64
    PYTHONPATH=src python3 bench/simulate_phases.py FILE... --read-only   # stop after reading

Prints one JSON object: seconds per phase, transactions, which reader was used, peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

from lagadvisor.depgraph.pipeline import ClockOptions
from lagadvisor.depgraph.read import prepare
from lagadvisor.depgraph.policies import POLICIES
from lagadvisor.native import load
from lagadvisor.sim.facts import native_facts, reference_facts
from lagadvisor.sim.model import CostModel, ReplicaConfig
from lagadvisor.sim.run import sweep


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--read-only", action="store_true")
    a = ap.parse_args()
    out: dict = {}
    t0 = time.perf_counter()
    opts = ClockOptions()
    run = prepare(a.files, opts)
    t1 = time.perf_counter()
    out["detect_s"] = round(t1 - t0, 3)
    facts = native_facts(a.files, opts, run)
    out["reader"] = "native"
    if facts is None:
        out["reader"] = "reference" if load() is None else "reference (native gave up)"
        facts = reference_facts(a.files, run, opts)
    t2 = time.perf_counter()
    out["read_s"] = round(t2 - t1, 3)
    out["transactions"] = len(facts)
    if not a.read_only:
        workers = [int(w) for w in a.workers.split(",")]
        sweep(facts, list(POLICIES), workers, ReplicaConfig(0, True, True), CostModel())
        out["simulate_s"] = round(time.perf_counter() - t2, 3)
    out["total_s"] = round(time.perf_counter() - t0, 3)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
