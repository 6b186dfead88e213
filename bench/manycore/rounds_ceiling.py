#!/usr/bin/env python3
"""What an exact cost model would score against a lab run, given the rounds' noise alone.

Every timed catch-up of the lab JSONs gives one deviation: the log of its time over its cell's
median (workload x durability x workers), scaled by sqrt(3/2) (a deviation from the median of
three is smaller than one from the truth). Then, many times over, a run of ``rounds`` rounds is
drawn: each cell's time is the median of ``rounds`` draws of exp(deviation) around a true time of
1, so each multi-worker speedup is measured as the one-worker median over its own, against a
predicted 1. Counted as the must-show counts (predicted / measured - 1 within 15%): the mean
number of 50 speedups within (5 shapes x 2 durabilities x 5 worker counts), how often one shape
has all ten within, and how often three or more of five shapes do. ``--vs-run``: the same
measured against another drawn run instead of the truth (what two runs' medians can agree on).
``--calibrate``: the calibrate must-show instead (absolute times within 15% at all six worker
counts, 10 cells x 6 = 60, after ``calibrate`` on one 16-worker catch-up): an exact calibration
reproduces its one catch-up, so it predicts every worker count at the truth times that catch-up's
own deviation (the machine as fast as it was then), against each count's median of ``rounds``
draws; ``--calibrate-on K``: the calibration's catch-up is the median of K (one per round).

Seeded (deterministic); stdlib only.

Usage: python3 bench/manycore/rounds_ceiling.py bench/manycore_16core*.json [--rounds 3,5,8] [--draws 4000]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from math import comb
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lab import read_json  # noqa: E402  (stdlib: a committed run may be stored gzipped)

TOLERANCE = 0.15
WORKERS = 6          # 1/2/4/8/16/32: five multi-worker speedups per shape and durability
SHAPES = 5


def deviations(paths: list[Path]) -> list[float]:
    """Each timed catch-up's log time over its cell's median, scaled to a deviation from the truth."""
    out: list[float] = []
    for path in paths:
        cells: dict[tuple, list[float]] = {}
        for r in read_json(path)["runs"]:
            if r.get("phase") in ("relaxed", "durable") and r.get("seconds"):
                cells.setdefault((r["workload"], r["config"], r["workers"]), []).append(r["seconds"])
        for times in cells.values():
            if len(times) >= 2:
                mid = statistics.median(times)
                out += [math.log(t / mid) * math.sqrt(1.5) for t in times]
    return out


def _speedups(rng: random.Random, devs: list[float], rounds: int) -> list[float]:
    meds = [statistics.median(math.exp(rng.choice(devs)) for _ in range(rounds)) for _ in range(WORKERS)]
    return [meds[0] / m for m in meds[1:]]


def ceiling(devs: list[float], rounds: int, draws: int, seed: int = 33, vs_run: bool = False) -> dict:
    """Mean speedups within 15% of 50, P(one shape's ten within), P(three or more of five)."""
    rng = random.Random(seed)
    within = shape_ok = 0
    for _ in range(draws):
        ok = 0
        for _config in range(2):
            got = _speedups(rng, devs, rounds)
            ref = _speedups(rng, devs, rounds) if vs_run else [1.0] * len(got)
            ok += sum(1 for g, p in zip(got, ref) if abs(p / g - 1) <= TOLERANCE)
        within += ok
        shape_ok += ok == 2 * (WORKERS - 1)
    p = shape_ok / draws
    return {"rounds": rounds, "within_of_50": round(within / draws * SHAPES, 1), "shape_all_within": round(p, 2),
            "three_of_five_shapes": round(sum(comb(SHAPES, k) * p ** k * (1 - p) ** (SHAPES - k)
                                              for k in range(3, SHAPES + 1)), 2)}


def calibrate_ceiling(devs: list[float], rounds: int, draws: int, seed: int = 33, calibrate_on: int = 1) -> dict:
    """Mean times within 15% of 60 after an exact calibration on one catch-up (or on the median of
    ``calibrate_on``), how often one cell has all six worker counts within, and all ten cells."""
    rng = random.Random(seed)
    within = cell_ok = all_ok = 0
    for _ in range(draws):
        cells = 0
        for _cell in range(2 * SHAPES):
            own = statistics.median(math.exp(rng.choice(devs)) for _ in range(calibrate_on))
            meds = [statistics.median(math.exp(rng.choice(devs)) for _ in range(rounds)) for _ in range(WORKERS)]
            ok = sum(1 for m in meds if abs(own / m - 1) <= TOLERANCE)
            within += ok
            cells += ok == WORKERS
        cell_ok += cells
        all_ok += cells == 2 * SHAPES
    return {"rounds": rounds, "calibrate_on": calibrate_on, "within_of_60": round(within / draws, 1),
            "cell_all_within": round(cell_ok / draws / (2 * SHAPES), 2), "all_cells": round(all_ok / draws, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("labs", nargs="+", type=Path)
    ap.add_argument("--rounds", default="3,5,8")
    ap.add_argument("--draws", type=int, default=4000)
    ap.add_argument("--vs-run", action="store_true")
    ap.add_argument("--calibrate", action="store_true", help="the calibrate must-show's ceiling instead")
    ap.add_argument("--calibrate-on", type=int, default=1, help="with --calibrate: catch-ups the calibration sees")
    args = ap.parse_args(argv)
    devs = deviations(args.labs)
    if not devs:
        print("rounds_ceiling: no cell with two or more timed rounds in these files", file=sys.stderr)
        return 2
    sd = math.sqrt(statistics.fmean(d * d for d in devs))
    print(f"{len(devs)} catch-ups; a catch-up's deviation from the truth {sd:.3f} (RMS of the log)\n")
    if args.calibrate:
        print(f"| rounds per cell | times within 15% after calibrating on {args.calibrate_on} catch-up(s), of 60 "
              "| one cell's six all within | all ten cells |")
        print("|---|---|---|---|")
        for rounds in (int(x) for x in args.rounds.split(",")):
            c = calibrate_ceiling(devs, rounds, args.draws, calibrate_on=args.calibrate_on)
            print(f"| {rounds} | {c['within_of_60']} | {c['cell_all_within']:.0%} | {c['all_cells']:.0%} |")
        return 0
    print("| rounds per cell | speedups within 15%, of 50 | one shape's ten all within | three or more of five shapes |")
    print("|---|---|---|---|")
    for rounds in (int(x) for x in args.rounds.split(",")):
        c = ceiling(devs, rounds, args.draws, vs_run=args.vs_run)
        print(f"| {rounds} | {c['within_of_50']} | {c['shape_all_within']:.0%} | {c['three_of_five_shapes']:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
