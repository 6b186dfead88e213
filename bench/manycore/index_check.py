#!/usr/bin/env python3
"""The built-in model's index-entry and foreign-key-check costs against the index backlogs'
measured catch-ups (issue 33: "worker CPU per row, byte, index").

``index_cost.py`` measured what the same 4,000 transactions cost a real replica over tables that
differ only in their keys (``gen_backlogs.py`` ``INDEX_WORKLOADS``; the lab JSON's rounds are in
its ``--out``, e.g. bench/index_cost_2core.json). This simulates each of those backlogs read
with its schema (``simulate --catch-up --policy recorded --schema``) at the run's cores and
worker counts, relaxed and durable, with the built-in model and with the same model pricing
neither term (``fk_check_us`` and ``index_entry_us`` at 0: the model before they were priced),
and sets each backlog's time against the reference backlog's (``kr``: one non-unique index a
table, the lab's shape, whose entries the per-row costs hold): measured (the median of the
rounds' ratios, each round against its own reference run) and predicted. The model's absolute
times are another machine's (the 16-core VM's); the ratios are what carries.

    python3 bench/manycore/gen_backlogs.py --only idx0,idx2,idx4,idx8,uk4,kr,fkr --out bench/data/manycore/index
    PYTHONPATH=src python3 bench/manycore/index_check.py bench/index_cost_2core.json --out bench/index_check_2core.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import DATA, simulate  # noqa: E402  (simulate --catch-up of a backlog's first n transactions)
from lab import read_json  # noqa: E402

#: The backlog every other is set against: one non-unique index a table, as the lab's backlogs.
REFERENCE = "kr"
#: Within this of the measured ratio counts as met (the must-show's bar).
BAR = 0.15


def measured_ratios(lab: dict, reference: str) -> dict:
    """{(backlog, config, workers): the median over the rounds of its time over the reference's
    in the same round}, and {(backlog, config, workers): transactions}."""
    by = {(r["workload"], r["config"], r["workers"], r.get("round", 1)): r for r in lab["runs"]
          if "seconds" in r and r.get("phase", "relaxed") != "probe"}
    ratios: dict = {}
    counts: dict = {}
    for (wl, cfg, w, rnd), r in by.items():
        ref = by.get((reference, cfg, w, rnd))
        if ref is None:
            continue
        ratios.setdefault((wl, cfg, w), []).append(r["seconds"] / ref["seconds"])
        counts[(wl, cfg, w)] = r["transactions"]
    return {k: median(v) for k, v in ratios.items()}, counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", type=Path, help="index_cost.py --out (or the index lab's manycore.json)")
    ap.add_argument("--backlogs", type=Path, default=DATA / "index" / "backlogs")
    ap.add_argument("--cores", type=int, default=None, help="default: the lab machine's")
    ap.add_argument("--reference", default=REFERENCE)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    from lagadvisor.sim.model import CostModel

    lab = read_json(args.lab)
    cores = args.cores or lab["machine"]["cores_usable"]
    ratios, counts = measured_ratios(lab, args.reference)
    built_in = CostModel()
    unpriced = Path(tempfile.mkdtemp(prefix="index-check-")) / "unpriced.json"
    unpriced.write_text(replace(built_in, fk_check_us=0.0, index_entry_us=0.0).to_json())
    backlogs = sorted({wl for wl, _, _ in ratios} & {p.name for p in args.backlogs.iterdir()})
    if args.reference not in backlogs:
        raise SystemExit(f"{args.backlogs}: no {args.reference} backlog (gen_backlogs.py --only ...)")
    predicted: dict = {}
    for wl in backlogs:
        for cfg in ("relaxed", "durable"):
            workers = sorted(w for (b, c, w) in ratios if b == wl and c == cfg)
            if not workers:
                continue
            n = counts[(wl, cfg, workers[0])]
            for name, cost in (("built_in", None), ("unpriced", str(unpriced))):
                for w, r in simulate(args.backlogs / wl, n, workers, cfg, cores, cost).items():
                    predicted[(name, wl, cfg, w)] = r["apply_seconds"]
    rows = []
    for (wl, cfg, w), m in sorted(ratios.items()):
        if wl == args.reference or ("built_in", wl, cfg, w) not in predicted:
            continue
        row = {"backlog": wl, "config": cfg, "workers": w, "measured": round(m, 4)}
        for name in ("built_in", "unpriced"):
            p = predicted[(name, wl, cfg, w)] / predicted[(name, args.reference, cfg, w)]
            row[name] = round(p, 4)
            row[f"{name}_error"] = round(p / m - 1, 4)
        rows.append(row)
    print(f"lab: {lab['machine']['cores']} cores, {lab['machine']['cpu_model']}; simulate --cores {cores}, "
          f"the built-in model; each backlog's time over {args.reference}'s\n")
    print("| backlog | config | workers | measured | built-in | error | not priced (0, 0) | error |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['backlog']} | {r['config']} | {r['workers']} | {r['measured']:.3f} | {r['built_in']:.3f} | "
              f"{r['built_in_error']:+.1%} | {r['unpriced']:.3f} | {r['unpriced_error']:+.1%} |")
    met = {name: sum(abs(r[f"{name}_error"]) <= BAR for r in rows) for name in ("built_in", "unpriced")}
    print(f"\nwithin {BAR:.0%}: built-in {met['built_in']} of {len(rows)}, not priced {met['unpriced']} of {len(rows)}")
    if args.out:
        args.out.write_text(json.dumps({"lab": str(args.lab), "machine": lab["machine"], "cores": cores,
                                        "reference": args.reference, "bar": BAR, "met": met,
                                        "model": {"fk_check_us": built_in.fk_check_us,
                                                  "index_entry_us": built_in.index_entry_us},
                                        "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
