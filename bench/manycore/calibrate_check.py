#!/usr/bin/env python3
"""``lagadvisor calibrate --workers 16`` on the lab's own 16-worker catch-ups, checked at every
worker count (issue 33).

For each workload and durability whose 16-worker replica binlogs the lab brought back
(``bench/data/manycore/kept/STEM/WL-CFG-w16.binlog.000002.gz`` for the first round and
``WL-CFG-w16-rR.binlog.000002.gz`` for round R: the replica's own binlog,
``log_replica_updates=ON``, of that round's 16-worker catch-up), fit a cost model with
``calibrate --workers 16 --cores 16`` from each file alone, then simulate the same backlog at
1/2/4/8/16/32 workers with it (bench/manycore/compare.py's ``simulate --catch-up``) and compare
the absolute times with the lab's medians (less the replica's start, as compare.py does). A
backlog calibrate refuses (a lag episode too short for four pieces) is listed as not calibrated.

Prints the first round's calibrations as a Markdown table, then what every calibration shows:
the cells whose six worker counts all fall within 15%, and how far each calibration's own
catch-up ran from its cell's median (one catch-up strays by the machine's 12-16%, and a model
calibrated on it carries that to every worker count: ``rounds_ceiling.py --calibrate`` gives what
an exact model would score). ``--out`` writes the rows and the fitted models as JSON;
``--report CAL.json`` prints the summary of such a file again (with its LAB.json) without fitting.

``--combine``: also each cell's calibrations of every kept round pooled into one model with
``calibrate --combine`` (each cost the median of the rounds'), checked at every worker count the
same way: what a user gets by calibrating on several catch-ups (lag episodes) of one replica
instead of one, whose own deviation from its cell's median one calibration carries to every count.
``--models-from CAL.json`` takes the per-round models of an earlier ``--out`` instead of fitting
(with ``--startup-s``, a run whose kept binlogs are not here is checked again).

Usage: PYTHONPATH=src python3 bench/manycore/calibrate_check.py LAB.json [--only uniform-relaxed,...]
                                                                      [--out rows.json] [--report rows.json]
                                                                      [--combine] [--models-from rows.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "manycore"))
from compare import Start, applying_s, compare, kept_dir, open_lab, start_of_report, startup_of  # noqa: E402
from lab import kept_tag, parse_kept_tag, read_json  # noqa: E402
from replica_catchup import lagadvisor  # noqa: E402

LIMIT = 0.15
CAL_WORKERS = 16   # the lab keeps the 16-worker catch-ups' binlogs (its most workers where 16 is not run)


def kept_workers(lab: dict) -> int:
    """The worker count whose catch-ups the lab kept (lab.py build_plan's ``keep_w``)."""
    workers = lab.get("args", {}).get("workers") or [CAL_WORKERS]
    return CAL_WORKERS if CAL_WORKERS in workers else max(workers)


def kept_rounds(binlogs: Path, wl: str, cfg: str, workers: int = CAL_WORKERS,
                rounds: range = range(1, 100)) -> list[tuple[int, Path]]:
    """The rounds whose *workers*-worker replica binlog of *wl*/*cfg* is in *binlogs*, with the file."""
    out = []
    for r in rounds:
        f = binlogs / f"{kept_tag(wl, cfg, workers, r)}.binlog.000002.gz"
        if f.exists():
            out.append((r, f))
    return out


def models_rounds(earlier: dict, wl: str, cfg: str, workers: int = CAL_WORKERS) -> list[tuple[int, None]]:
    """The rounds of *wl*/*cfg* an earlier ``--out`` has a model of (``--models-from``: no binlog
    needed, so a run whose kept binlogs are not here is checked again)."""
    return [(r, None) for r in range(1, 100) if model_key(kept_tag(wl, cfg, workers, r)) in earlier["models"]]


def model_key(calibrated_on: str) -> str:
    """The models' key of a calibration: ``WL-CFG`` for the first round's (``WL-CFG-w16``, the
    committed runs' one calibration each), ``WL-CFG-rR`` for round R's."""
    wl, cfg, _, rnd = parse_kept_tag(calibrated_on)
    return f"{wl}-{cfg}" + ("" if rnd == 1 else f"-r{rnd}")


def first_round(calibrated_on: str) -> bool:
    """The calibration is the first round's (the one every committed run has)."""
    return parse_kept_tag(calibrated_on)[3] == 1


def fit(src: Path, tag: str, cfg: str, cores: int, tmp: Path, workers: int = CAL_WORKERS,
        base: Path | None = None) -> tuple[Path, dict]:
    """``calibrate --workers N`` on one catch-up's replica binlog: the model file and its JSON
    (``base``: ``--base``, a durable one-worker fit's relaxed model, which splits its fsyncs from
    its CPU)."""
    binlog = tmp / f"{tag}.binlog.000002"
    with gzip.open(src) as f, open(binlog, "wb") as out:
        shutil.copyfileobj(f, out)
    model = tmp / f"{tag}.json"
    lagadvisor("calibrate", str(binlog), "--workers", str(workers), "--cores", str(cores), f"--{cfg}",
               *(("--base", str(base)) if base is not None else ()), "-o", str(model))
    return model, json.loads(model.read_text())


def own_deviation(lab: dict, calibrated_on: str, startup: Start | float) -> float | None:
    """The calibration's own catch-up (the lab run of its tag's round at 16 workers) over its
    cell's median, each less the replica's start: how fast the machine ran while it was timed."""
    tag = parse_kept_tag(calibrated_on)
    if tag is None:
        return None
    wl, cfg, w, r = tag
    times = {x["round"]: applying_s(x, startup) for x in lab["runs"] if x.get("phase") == cfg
             and x.get("workload") == wl and x.get("workers") == w and "seconds" in x}
    if r not in times or len(times) < 2:
        return None
    return times[r] / median(times.values()) - 1


def summary(lab: dict, rows: list[dict], startup: Start | float) -> list[str]:
    """What every calibration shows: times within 15%, the cells (one calibration each) with all
    six worker counts within, each calibration's own catch-up against its cell's median, and the
    times within once that deviation is taken out (a diagnostic of the model's shape across worker
    counts, not the must-show: a user's model is calibrated on the catch-up it saw)."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["calibrated_on"], []).append(r)
    first = {k: v for k, v in by.items() if first_round(k)}
    lines = []
    for name, group in (("the first round's calibrations", first), ("every calibration", by)):
        if not group or (name == "every calibration" and len(by) == len(first)):
            continue
        times = [r for v in group.values() for r in v]
        whole = [k for k, v in group.items() if all(abs(r["time_error"]) <= LIMIT for r in v)]
        adjusted = 0
        for k, v in group.items():
            d = own_deviation(lab, k, startup)
            adjusted += sum(abs((1 + r["time_error"]) / (1 + d) - 1) <= LIMIT for r in v) if d is not None else 0
        lines.append(f"{name}: {sum(abs(r['time_error']) <= LIMIT for r in times)} of {len(times)} times within "
                     f"{LIMIT:.0%}; calibrations with all {len(next(iter(group.values())))} worker counts within: "
                     f"{len(whole)} of {len(group)}" + (f" ({', '.join(whole)})" if whole else "")
                     + f"; with each calibration's own catch-up's deviation taken out: {adjusted} of {len(times)}")
    devs = {k: own_deviation(lab, k, startup) for k in by}
    lines.append("each calibration's own catch-up against its cell's median: " + ", ".join(
        f"{k} {d:+.0%}" for k, d in devs.items() if d is not None))
    return lines


def combine(models: list[dict], tag: str, tmp: Path) -> tuple[Path, dict]:
    """``calibrate --combine`` of one cell's per-round models: the pooled model file and its JSON."""
    paths = []
    for i, m in enumerate(models):
        path = tmp / f"{tag}-member{i + 1}.json"
        path.write_text(json.dumps(m))
        paths.append(str(path))
    out = tmp / f"{tag}-combined.json"
    lagadvisor("calibrate", "--combine", *paths, "-o", str(out))
    return out, json.loads(out.read_text())


def combined_summary(rows: list[dict]) -> list[str]:
    """The pooled calibrations' times within 15% and the cells with all six worker counts within."""
    if not rows:
        return []
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(f"{r['workload']}-{r['config']}", []).append(r)
    whole = [k for k, v in by.items() if all(abs(r["time_error"]) <= LIMIT for r in v)]
    members = sorted({r["members"] for r in rows})
    return [f"calibrate --combine of each cell's {'/'.join(map(str, members))} calibrations: "
            f"{sum(abs(r['time_error']) <= LIMIT for r in rows)} of {len(rows)} times within {LIMIT:.0%}; cells with "
            f"all {len(next(iter(by.values())))} worker counts within: {len(whole)} of {len(by)}"
            + (f" ({', '.join(whole)})" if whole else "")]


def band_coverage(rows: list[dict], models: dict) -> list[str]:
    """How often the error band each model file gives (``CostModel.band_at``: its held-out band at
    the calibrated worker count, wider elsewhere) held the measured time, at the calibrated
    worker count and at the others."""
    from lagadvisor.sim.model import CostModel

    held: dict[bool, list[bool]] = {True: [], False: []}
    for r in rows:
        model = CostModel.from_dict(models[model_key(r["calibrated_on"])])
        own = r["workers"] == model.calibrated_workers
        held[own].append(abs(r["time_error"]) <= model.band_at(r["workers"]))
    return [f"the model's band held the measured time {sum(v)} of {len(v)} times {where}"
            for where, v in (("at the calibrated worker count", held[True]), ("at the others", held[False])) if v]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", type=Path)
    ap.add_argument("--only", default=None, help="workload-config pairs, e.g. uniform-relaxed,nopk-durable")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--report", type=Path, default=None, help="a --out file of this lab: its summary, no fitting")
    ap.add_argument("--regenerated", action="store_true", help="as compare.py's: backlogs gen_backlogs.py wrote again")
    ap.add_argument("--constant-start", action="store_true", help="as compare.py's")
    ap.add_argument("--startup-s", type=float, default=None,
                    help="as compare.py's (with --models-from, for a run whose kept binlogs are not here)")
    ap.add_argument("--combine", action="store_true",
                    help="also each cell's calibrations pooled with calibrate --combine, checked the same way")
    ap.add_argument("--workers", type=int, default=None,
                    help="the kept catch-ups to calibrate on: 1 for the first round's one-worker ones (lab.py "
                         "ONE_WORKER_KEPT); default the lab's 16-worker ones")
    ap.add_argument("--models-from", type=Path, default=None,
                    help="an earlier --out of this lab: its per-round models instead of fitting again")
    args = ap.parse_args()
    if args.report:
        lab = read_json(args.lab)
        done = json.loads(args.report.read_text())
        for line in (summary(lab, done["rows"], start_of_report(done)) + band_coverage(done["rows"], done["models"])
                     + combined_summary(done.get("combined_rows", []))):
            print(line)
        return 0
    lab, cores, backlogs = open_lab(args.lab)
    only = set(args.only.split(",")) if args.only else None
    rows, models, skipped, combined_rows, combined_models = [], {}, {}, [], {}
    earlier = json.loads(args.models_from.read_text()) if args.models_from else None
    binlogs = kept_dir(args.lab)
    startup, _ = startup_of(lab, args.startup_s, binlogs, args.constant_start)
    cal_w = args.workers or kept_workers(lab)
    with tempfile.TemporaryDirectory(prefix="manycore-cal-") as t:
        tmp = Path(t)
        for wl, cfgs in lab["summary"].items():
            for cfg in sorted(cfgs, key=lambda c: c != "relaxed"):   # a durable one-worker fit takes the relaxed one
                if only and f"{wl}-{cfg}" not in only:
                    continue
                sub = {**lab, "summary": {wl: {cfg: cfgs[cfg]}}}
                cell = []
                for rnd, src in (kept_rounds(binlogs, wl, cfg, cal_w) if earlier is None
                                 else models_rounds(earlier, wl, cfg, cal_w)):
                    tag = kept_tag(wl, cfg, cal_w, rnd)
                    if earlier is not None:
                        model = earlier["models"][model_key(tag)]
                        path = tmp / f"{tag}.json"
                        path.write_text(json.dumps(model))
                    else:
                        relaxed = tmp / f"{kept_tag(wl, 'relaxed', cal_w, rnd)}.json"
                        base = relaxed if cal_w == 1 and cfg == "durable" and relaxed.exists() else None
                        try:
                            path, model = fit(src, tag, cfg, cores, tmp, cal_w, base)
                        except RuntimeError as err:   # calibrate refused (too short a lag episode...): say so
                            skipped[model_key(tag)] = str(err).strip().splitlines()[-1]
                            continue
                    models[model_key(tag)] = model
                    cell.append(model)
                    rows += [dict(r, calibrated_on=tag)
                             for r in compare(sub, backlogs, cores, str(path), startup, args.regenerated)]
                if args.combine and len(cell) >= 2:
                    path, model = combine(cell, f"{wl}-{cfg}", tmp)
                    combined_models[f"{wl}-{cfg}"] = model
                    combined_rows += [dict(r, members=len(cell))
                                      for r in compare(sub, backlogs, cores, str(path), startup, args.regenerated)]
        if earlier is not None:
            skipped = dict(earlier.get("skipped", {}))
    print(f"calibrate --workers {cal_w} --cores {cores} on each {cal_w}-worker catch-up's replica binlog; then "
          "simulate --catch-up --cost-model at every worker count (the first round's calibrations)\n")
    print("| workload | replica | workers | measured s | predicted s | time error |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if first_round(r["calibrated_on"]):
            print(f"| {r['workload']} | {r['config']} | {r['workers']} | {r['measured_s']:.3f} | "
                  f"{r['predicted_s']:.3f} | {r['time_error']:+.1%} |")
    print(f"\nmeasured: less the replica's start, {startup.ref_s * 1e3:.1f} ms at {startup.ref_workers} workers"
          + ("" if startup.fixed_share == 1 else f" ({startup.at(1) * 1e3:.1f} at 1, {startup.at(32) * 1e3:.1f} at 32: Start)"))
    for line in summary(lab, rows, startup) + band_coverage(rows, models) + combined_summary(combined_rows):
        print(line)
    for k, why in skipped.items():
        print(f"not calibrated: {k}: {why}")
    if args.out:
        doc = {"cores": cores, "startup_s": startup.ref_s, "start": asdict(startup), "models": models, "skipped": skipped, "rows": rows}
        if args.combine:
            doc.update(combined_models=combined_models, combined_rows=combined_rows)
        args.out.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
