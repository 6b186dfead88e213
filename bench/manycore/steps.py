#!/usr/bin/env python3
"""The speedup curve's shape, step by step, paired by round: for each workload, durability and
pair of neighbouring worker counts (1->2, 2->4, ... 16->32), each round's time at the larger count
over its time at the smaller (both less the replica's start: compare.py ``applying_times``), the
median over every round of every lab run given, how many rounds got slower, against the model's
step (each run's compare.py rows: its predicted times).

A loan's speed moves both counts of a round together, so a step is steadier than a cell's median
(on the seven committed 16-core runs the log step's spread over one run's rounds is 0.10 paired,
0.15 across rounds), and a step the model misses on every loan points at what it lacks: a cost
that grows with the workers, or a bound met too early or too late.

Usage: python3 bench/manycore/steps.py LAB1.json[.gz] COMPARE1.json [LAB2 COMPARE2 ...] [--out steps.json]
(each lab run with its compare.py output, which holds the start it took off and the predictions;
the committed ones: bench/manycore_16core.json.gz with bench/manycore_16core_compare.json, and
bench/manycore_16core_runN.json.gz with bench/manycore_16core_runN_compare.json).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import applying_times, start_of_report  # noqa: E402  (sibling scripts)
from lab import read_json  # noqa: E402

#: A step the model misses by more than this (its time ratio against the rounds' median) is marked.
MARK = 0.05


def steps(pairs: list[tuple[dict, dict]]) -> list[dict]:
    """One row per (workload, durability, smaller, larger worker count) measured in every run:
    the median of the rounds' time ratios, the rounds that got slower, the model's ratio (the
    mean over the runs of predicted larger / predicted smaller) and its error."""
    ratios: dict[tuple[str, str, int, int], list[float]] = {}
    predicted: dict[tuple[str, str, int, int], list[float]] = {}
    for lab, cmp in pairs:
        pred = {(r["workload"], r["config"], r["workers"]): r["predicted_s"] for r in cmp["rows"]}
        for (wl, cfg), rounds in applying_times(lab, start_of_report(cmp)).items():
            counts = sorted({w for per in rounds.values() for w in per})
            for a, b in zip(counts, counts[1:]):
                key = (wl, cfg, a, b)
                got = [per[b] / per[a] for per in rounds.values() if a in per and b in per and per[a] > 0]
                if got and pred.get((wl, cfg, a)) and (wl, cfg, b) in pred:
                    ratios.setdefault(key, []).extend(got)
                    predicted.setdefault(key, []).append(pred[(wl, cfg, b)] / pred[(wl, cfg, a)])
    rows = []
    for key in sorted(ratios):
        got, model = ratios[key], predicted[key]
        if len(model) != len(pairs):
            continue
        measured = median(got)
        p = sum(model) / len(model)
        rows.append({"workload": key[0], "config": key[1], "from": key[2], "to": key[3], "rounds": len(got),
                     "slower": sum(x > 1 for x in got), "measured_ratio": round(measured, 3),
                     "predicted_ratio": round(p, 3), "error": round(p / measured - 1, 4)})
    return rows


def print_rows(rows: list[dict]) -> None:
    print("| workload | replica | " + " | ".join(f"{r['from']}->{r['to']}" for r in rows
                                              if (r["workload"], r["config"]) == (rows[0]["workload"], rows[0]["config"]))
          + " |")
    cells: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        mark = " **!**" if abs(r["error"]) > MARK else ""
        cells.setdefault((r["workload"], r["config"]), []).append(
            f"{r['measured_ratio']:.3f} ({r['slower']}/{r['rounds']}) model {r['predicted_ratio']:.3f}{mark}")
    print("|---|---|" + "---|" * len(next(iter(cells.values()))))
    for (wl, cfg), cs in cells.items():
        print(f"| {wl} | {cfg} | " + " | ".join(cs) + " |")
    print(f"\n(time at the larger count over the smaller, median over the rounds paired; (slower/rounds); "
          f"**!**: the model's step off by more than {MARK:.0%})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="LAB.json[.gz] COMPARE.json pairs")
    ap.add_argument("--out", help="write the rows as JSON here")
    args = ap.parse_args()
    if len(args.files) % 2:
        ap.error("give each lab run with its compare.py output: LAB COMPARE [LAB COMPARE ...]")
    pairs = [(read_json(Path(a)), read_json(Path(b))) for a, b in zip(args.files[::2], args.files[1::2])]
    rows = steps(pairs)
    if not rows:
        print("no step measured in every run", file=sys.stderr)
        return 1
    print_rows(rows)
    if args.out:
        Path(args.out).write_text(json.dumps({"runs": args.files, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
