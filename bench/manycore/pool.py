#!/usr/bin/env python3
"""Several lab runs' speedups pooled: the rounds of every run, one median per workload, durability
and worker count, against the model's predicted speedups (each run's compare.py rows).

One device run has three rounds per cell, and two runs on two loans of the same VM type agreed
within 15% on 30 of 50 multi-worker speedups (docs/accuracy.md, "What the machine's noise allows"): a
single run's median carries that loan's noise. Pooling the runs' rounds estimates the VM type's
speedup instead; each round's speedup is already relative to its own one-worker run, so rounds
of runs that applied a slightly different share of a backlog pool as ratios. The prediction is
the mean of the runs' predicted speedups (their shares differ: 48% and 52% of a backlog gave
predictions within 1.5% of each other). The built-in model was fitted on the first two runs'
medians: a pool with them is partly in-sample; the third and fourth runs (2026-11-27, one loan)
came after the fit and are held out (compare.py on each alone).

``--against-others``: each run's own medians predicted by the other runs instead of the model (the
median of all their rounds, and each other run's median alone): what the real replica, measured
on other loans, scores by the must-show's count; the model's count beside it.

``--times``: the model's absolute time error per cell, the median over the runs, and in how many
runs it was over: a shape the model prices too high or too low on every loan.

Usage: python3 bench/manycore/pool.py COMPARE1.json COMPARE2.json [...] [--out pooled.json] [--against-others] [--times]
(compare.py --out writes each COMPARE.json; the committed ones are bench/manycore_16core_compare.json
and bench/manycore_16core_run{2,3,4}_compare.json.)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from statistics import median

LIMIT = 0.15


def pool(runs: list[list[dict]]) -> list[dict]:
    """One row per (workload, replica, workers) that every run measured with two or more workers:
    the median of all the runs' round speedups, the runs' mean predicted speedup, the error, and
    each run's own median and error (compare.py's)."""
    keyed = [{(r["workload"], r["config"], r["workers"]): r for r in rows} for rows in runs]
    rows = []
    for key in keyed[0]:
        if key[2] < 2 or any(key not in k for k in keyed):
            continue
        these = [k[key] for k in keyed]
        if any(r["predicted_speedup"] is None or not r["round_speedups"] for r in these):
            continue
        rounds = sorted(s for r in these for s in r["round_speedups"])
        measured = median(rounds)
        predicted = sum(r["predicted_speedup"] for r in these) / len(these)
        rows.append({"workload": key[0], "config": key[1], "workers": key[2], "rounds": len(rounds),
                     "measured_speedup": round(measured, 3), "round_range": [rounds[0], rounds[-1]],
                     "predicted_speedup": round(predicted, 3), "speedup_error": round(predicted / measured - 1, 4),
                     "runs": [{"measured_speedup": r["measured_speedup"], "speedup_error": r["speedup_error"]}
                              for r in these]})
    return rows


def error(predicted: float, row: dict) -> float:
    """A prediction's error against a compare.py row's measured median, as compare.py counts it."""
    return predicted / row["measured_speedup"] - 1


def against_others(runs: list[list[dict]]) -> list[dict]:
    """For each run, its multi-worker medians predicted three ways: the model (its compare.py rows),
    the median of every other run's rounds pooled, and each other run's own median: how many of
    its speedups fall within :data:`LIMIT` of each, and the shapes with every speedup within."""
    keyed = [{(r["workload"], r["config"], r["workers"]): r for r in rows
              if r["workers"] >= 2 and r["predicted_speedup"] is not None and r["round_speedups"]} for rows in runs]
    out = []
    for i, own in enumerate(keyed):
        others = [k for j, k in enumerate(keyed) if j != i]
        cells = [key for key in own if all(key in k for k in others)]

        def score(predict) -> dict:
            ok = {key: abs(predict(key)) <= LIMIT for key in cells}
            shapes = [wl for wl in dict.fromkeys(key[0] for key in cells)
                      if all(v for key, v in ok.items() if key[0] == wl)]
            return {"within": sum(ok.values()), "shapes": shapes}

        out.append({"run": i, "cells": len(cells),
                    "model": score(lambda key: own[key]["speedup_error"]),   # compare.py's own error
                    "others_pooled": score(lambda key: error(median(s for k in others for s in k[key]["round_speedups"]),
                                                             own[key])),
                    "each_other": [score(lambda key, k=k: error(k[key]["measured_speedup"], own[key])) for k in others]})
    return out


def time_bias(runs: list[list[dict]]) -> list[dict]:
    """Per workload, durability and worker count that every run measured: the median over the runs
    of the model's absolute time error (compare.py's ``time_error``), and how many runs it was over
    (positive in how many). A shape the model prices too high or too low on every loan shows here,
    where the loans' noise, which moves the runs' errors both ways, does not."""
    keyed = [{(r["workload"], r["config"], r["workers"]): r for r in rows if r.get("time_error") is not None}
             for rows in runs]
    out = []
    for key in keyed[0]:
        errs = [k[key]["time_error"] for k in keyed if key in k]
        if len(errs) < len(keyed):
            continue
        out.append({"workload": key[0], "config": key[1], "workers": key[2], "runs": len(errs),
                    "median_time_error": round(median(errs), 4), "over": sum(e > 0 for e in errs)})
    return out


def print_time_bias(rows: list[dict]) -> None:
    """:func:`time_bias` as one line per workload and durability, the worker counts across."""
    workers = sorted({r["workers"] for r in rows})
    print("the model's absolute time error, the median over the runs (runs over of all), per worker count:\n")
    print("| workload | replica | " + " | ".join(str(w) for w in workers) + " |")
    print("|---|---|" + "---|" * len(workers))
    keyed = {(r["workload"], r["config"], r["workers"]): r for r in rows}
    for wl, cfg in dict.fromkeys((r["workload"], r["config"]) for r in rows):
        cells = [keyed.get((wl, cfg, w)) for w in workers]
        print(f"| {wl} | {cfg} | " + " | ".join(
            "" if c is None else f"{c['median_time_error']:+.0%} ({c['over']}/{c['runs']})" for c in cells) + " |")


def verdicts(rows: list[dict]) -> dict[tuple[str, str], bool]:
    """Per workload and durability: every multi-worker speedup within :data:`LIMIT`."""
    out: dict[tuple[str, str], bool] = {}
    for r in rows:
        key = (r["workload"], r["config"])
        out[key] = out.get(key, True) and abs(r["speedup_error"]) <= LIMIT
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("compare", type=Path, nargs="+", help="compare.py --out JSON of each run (two or more)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--against-others", action="store_true",
                    help="each run predicted by the other runs' medians, beside the model")
    ap.add_argument("--times", action="store_true",
                    help="the model's absolute time error per cell, the median over the runs (a shape's bias)")
    args = ap.parse_args()
    if len(args.compare) < 2:
        ap.error("pool two or more runs' compare.py JSON")
    docs = [json.loads(p.read_text()) for p in args.compare]
    if len({(d["cores"], d["cost_model"]) for d in docs}) > 1:
        raise SystemExit("the runs were compared with other --cores or --cost-model: compare them alike first")
    if args.times:
        print_time_bias(time_bias([d["rows"] for d in docs]))
        return 0
    if args.against_others:
        print(f"each run's multi-worker speedups within {LIMIT:.0%} of: the model; the other runs' rounds pooled; "
              "each other run's median (shapes: every speedup within, relaxed and durable)\n")
        print("| run | cells | the model | the other runs pooled | each other run alone |")
        print("|---|---|---|---|---|")
        for r in against_others([d["rows"] for d in docs]):
            def cell(sc):
                return f"{sc['within']} ({', '.join(sc['shapes']) or 'no shape'})"
            print(f"| {args.compare[r['run']].name} | {r['cells']} | {cell(r['model'])} | {cell(r['others_pooled'])} "
                  f"| {'; '.join(cell(x) for x in r['each_other'])} |")
        return 0
    rows = pool([d["rows"] for d in docs])
    names = ", ".join(p.name for p in args.compare)
    print(f"pooled: {names}; simulate --cores {docs[0]['cores']}, "
          f"{docs[0]['cost_model'] or 'the built-in model'} (fitted on the runs of 2026-11-26, manycore_16core.json and _run2: those are in-sample)\n")
    print("| workload | replica | workers | rounds | measured speedup, pooled (range) | predicted | error "
          "| each run's median: error |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        each = "; ".join(f"{x['measured_speedup']:.2f}x: {x['speedup_error']:+.1%}" for x in r["runs"])
        print(f"| {r['workload']} | {r['config']} | {r['workers']} | {r['rounds']} | {r['measured_speedup']:.2f}x "
              f"({r['round_range'][0]:.2f}-{r['round_range'][1]:.2f}) | {r['predicted_speedup']:.2f}x "
              f"| {r['speedup_error']:+.1%} | {each} |")
    within = sum(abs(r["speedup_error"]) <= LIMIT for r in rows)
    print(f"\npooled speedups within {LIMIT:.0%}: {within} of {len(rows)}; each run's own: " + ", ".join(
        f"{sum(abs(r['runs'][i]['speedup_error']) <= LIMIT for r in rows)}" for i in range(len(docs))))
    by = verdicts(rows)
    for wl in dict.fromkeys(k[0] for k in by):
        print(f"  {wl}: every multi-worker speedup within {LIMIT:.0%}: "
              + ", ".join(f"{cfg} {'yes' if ok else 'no'}" for (w, cfg), ok in by.items() if w == wl))
    shapes = [wl for wl in dict.fromkeys(k[0] for k in by) if all(ok for (w, _), ok in by.items() if w == wl)]
    print(f"  shapes with every speedup within {LIMIT:.0%}, relaxed and durable: {len(shapes)} ({', '.join(shapes)})")
    if args.out:
        args.out.write_text(json.dumps({"runs": [str(p) for p in args.compare], "cores": docs[0]["cores"],
                                        "cost_model": docs[0]["cost_model"], "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
