#!/usr/bin/env python3
"""``lagadvisor calibrate --workers 16`` on the lab's own 16-worker catch-ups, checked at every
worker count (issue 33).

For each workload and durability whose 16-worker replica binlog the lab brought back
(``bench/data/manycore/device1/WL-CFG-w16.binlog.000002.gz``: the replica's own binlog,
``log_replica_updates=ON``, of the first round's 16-worker catch-up), fit a cost model with
``calibrate --workers 16 --cores 16`` from that file alone, then simulate the same backlog at
1/2/4/8/16/32 workers with it (bench/manycore/compare.py's ``simulate --catch-up``) and compare
the absolute times with the lab's medians (less the replica's start, as compare.py does). A
backlog calibrate refuses (a lag episode too short for four pieces) is listed as not calibrated. Prints a Markdown table; ``--out`` writes the rows
and the fitted models as JSON.

Usage: PYTHONPATH=src python3 bench/manycore/calibrate_check.py LAB.json [--only uniform-relaxed,...]
                                                                      [--out rows.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "manycore"))
from compare import compare, kept_dir, open_lab, startup_of  # noqa: E402
from replica_catchup import lagadvisor  # noqa: E402

def fit(binlogs: Path, name: str, cfg: str, cores: int, tmp: Path) -> tuple[Path, dict]:
    """``calibrate --workers 16`` on one catch-up's replica binlog: the model file and its JSON."""
    src = binlogs / f"{name}-{cfg}-w16.binlog.000002.gz"
    binlog = tmp / f"{name}-{cfg}.binlog.000002"
    with gzip.open(src) as f, open(binlog, "wb") as out:
        shutil.copyfileobj(f, out)
    model = tmp / f"{name}-{cfg}.json"
    lagadvisor("calibrate", str(binlog), "--workers", "16", "--cores", str(cores), f"--{cfg}", "-o", str(model))
    return model, json.loads(model.read_text())


def band_coverage(rows: list[dict], models: dict) -> list[str]:
    """How often the error band each model file gives (``CostModel.band_at``: its held-out band at
    the calibrated worker count, wider elsewhere) held the measured time, at the calibrated
    worker count and at the others."""
    from lagadvisor.sim.model import CostModel

    held: dict[bool, list[bool]] = {True: [], False: []}
    for r in rows:
        model = CostModel.from_dict(models[r["calibrated_on"].rsplit("-w", 1)[0]])
        own = r["workers"] == model.calibrated_workers
        held[own].append(abs(r["time_error"]) <= model.band_at(r["workers"]))
    return [f"the model's band held the measured time {sum(v)} of {len(v)} times {where}"
            for where, v in (("at the calibrated worker count", held[True]), ("at the others", held[False])) if v]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", type=Path)
    ap.add_argument("--only", default=None, help="workload-config pairs, e.g. uniform-relaxed,nopk-durable")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    lab, cores, backlogs = open_lab(args.lab)
    only = set(args.only.split(",")) if args.only else None
    rows, models, skipped = [], {}, {}
    binlogs = kept_dir(args.lab)
    startup, _ = startup_of(lab, None, binlogs)
    with tempfile.TemporaryDirectory(prefix="manycore-cal-") as t:
        tmp = Path(t)
        for wl, cfgs in lab["summary"].items():
            for cfg in cfgs:
                if (only and f"{wl}-{cfg}" not in only) or not (binlogs / f"{wl}-{cfg}-w16.binlog.000002.gz").exists():
                    continue
                try:
                    path, model = fit(binlogs, wl, cfg, cores, tmp)
                except RuntimeError as err:   # calibrate refused (too short a lag episode...): say so
                    skipped[f"{wl}-{cfg}"] = str(err).strip().splitlines()[-1]
                    continue
                models[f"{wl}-{cfg}"] = model
                sub = {**lab, "summary": {wl: {cfg: cfgs[cfg]}}}
                rows += [dict(r, calibrated_on=f"{wl}-{cfg}-w16")
                         for r in compare(sub, backlogs, cores, str(path), startup)]
    print(f"calibrate --workers 16 --cores {cores} on each 16-worker catch-up's replica binlog; then "
          "simulate --catch-up --cost-model at every worker count\n")
    print("| workload | replica | workers | measured s | predicted s | time error |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['workload']} | {r['config']} | {r['workers']} | {r['measured_s']:.3f} | {r['predicted_s']:.3f} "
              f"| {r['time_error']:+.1%} |")
    within = sum(abs(r["time_error"]) <= 0.15 for r in rows)
    print(f"\n{within} of {len(rows)} times within 15% (measured: less the replica's start, {startup * 1e3:.1f} ms)")
    for line in band_coverage(rows, models):
        print(line)
    for k, why in skipped.items():
        print(f"not calibrated: {k}: {why}")
    if args.out:
        args.out.write_text(json.dumps({"cores": cores, "startup_s": startup, "models": models, "skipped": skipped,
                                        "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
