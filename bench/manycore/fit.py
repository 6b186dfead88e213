#!/usr/bin/env python3
"""Fit the built-in cost model on the many-core lab's catch-ups (issue 33).

Simulates every workload, durability and worker count the lab measured (its medians,
bench/manycore_16core.json) with the model's engine on the same transactions (the first
``transactions`` of each backlog, the replica's recorded clock, commit order preserved, the
lab machine's cores) and minimises, by Nelder-Mead over the logarithms of the free costs,

    mean(log(predicted / measured time)^2) + W * mean(log(predicted / measured speedup)^2)

(W = ``--speedup-weight``, the multi-worker rows), every measured time less the replica's start
(compare.py's ``startup_of``: what the simulation does not model). What the lab measured directly is held fixed
(``FIXED``: the coordinator's /proc CPU regression, the fsync CPU share and the keyless scan
cost, see sim/model.py; and the multi-worker CPU factor at 1, the multi-worker cost being fitted
per transaction, ``multi_worker_us``), delete_us is tied to insert_us by the 2-core regression's
ratio (the backlogs cannot tell them apart: sysbench's transaction has one of each), and the
start is the current built-in model. ``--free`` fits only the costs it names and holds the rest
at the built-in model's; ``--set cost=value`` holds a cost at a measured value, ``--tie
cost=factor*other`` at a measured ratio to another (applied after the others); several lab JSONs
pool their rows (each less its own start). The current defaults (sim/model.py): both device runs,
the wake-up latencies held at the timelines' (``--set handoff_us=19.2 --set wakeup_us=67.6``) and
the durable costs and commit_us then refit with the commit groups in the loss (``--free
commit_us,redo_flush_us,flush_us,fsync_byte_us,durable_byte_us --groups-weight 1``, the others
held at the values that fit gave). ``--set`` also overrides a ``FIXED`` term (e.g. fsync_devices=2).
``switch_us`` (the multi-worker cost charged per switch of worker instead of per transaction) is
not in ``FREE``: the built-in model keeps it at 0, and a fit frees it by name with a start
(``--free ...,switch_us --start switch_us=39.3``; docs/accuracy.md "Charged per switch").
Prints the fitted model as JSON and the table of errors.

Usage: PYTHONPATH=src python3 bench/manycore/fit.py LAB.json [LAB2.json ...] [--iterations 3000]
                     [--speedup-weight 1] [--free a,b,...] [--set cost=value ...] [--start cost=value ...]
                     [--out fitted.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
try:  # the installed package, or the checkout's src/ when none is (PYTHONPATH=src puts it first)
    import lagadvisor  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench" / "manycore"))

FREE = ("trx_us", "insert_us", "update_us", "event_us", "dispatch_us", "dispatch_event_us", "commit_us", "commit_group_us", "handoff_us", "wakeup_us", "multi_worker_us",
        "concurrency_cpu", "oversubscribed_cpu", "redo_flush_us", "flush_us", "durable_byte_us", "fsync_byte_us",
        "fk_check_us", "index_entry_us")
# multi_worker_cpu: fitted beside multi_worker_us it came to 1.02 (loss 0.03403 against 0.03402
# held at 1): the multi-worker cost is per transaction, so the factor is held at 1.
# dispatch_byte_us and byte_us: the doc twins (sim/model.py); the coordinator's dispatch_us is fitted
# (its /proc CPU follows the wall time: it spins for a free worker, docs/accuracy.md).
FIXED = {"dispatch_byte_us": 0.0005, "byte_us": 0.0048, "fsync_cpu": 0.45, "scan_row_us": 0.259, "fsync_devices": 2,
         "multi_worker_cpu": 1.0}
DELETE_PER_INSERT = 25.5 / 21.6


def load(lab: dict, backlogs: Path | list[Path]) -> dict:
    """Each backlog's facts (the lab's prefix) by workload, read with the backlog's schema (its
    dump, ``schema.sql``: the foreign keys whose checks the model prices, ``fk_check_us``), from
    the first of ``backlogs`` that holds it (the lab's own folder, the index backlogs' ...)."""
    from lagadvisor.depgraph.pipeline import ClockOptions
    from lagadvisor.depgraph.read import prepare
    from lagadvisor.schema.ddl import load_schema_file
    from lagadvisor.sim.facts import read_facts
    from lab import Backlog

    counts = {(r["workload"], r["config"]): r["transactions"] for r in lab["runs"]
              if r.get("phase") in ("relaxed", "durable") and "seconds" in r}
    dirs = [backlogs] if isinstance(backlogs, Path) else list(backlogs)
    out = {}
    for wl in lab["summary"]:
        folder = next((d / wl for d in dirs if (d / wl / "manifest.json").exists()), dirs[0] / wl)
        files = [str(p) for p, _ in Backlog.load(folder).prefix(max(n for (w, _), n in counts.items() if w == wl))]
        schema = folder / "schema.sql"
        options = ClockOptions(catalog=load_schema_file(schema.read_text()) if schema.exists() else None)
        facts = read_facts(files, options, prepare(files, options)).facts
        facts = facts.to_facts() if hasattr(facts, "to_facts") else list(facts)
        out[wl] = {cfg: facts[:counts[(wl, cfg)]] for cfg in lab["summary"][wl]}
    return out


def rows(lab: dict, facts: dict, model, startup=0.0, configs: tuple[str, ...] = ("relaxed", "durable")) -> list[dict]:
    from lagadvisor.kinds import Policy
    from lagadvisor.sim.build import logical_clock
    from lagadvisor.sim.engine import ScaledWork, simulate
    from lagadvisor.sim.model import ReplicaConfig

    from compare import applying_medians, measured_groups, round_speedups

    rounds = round_speedups(lab, startup)
    medians = applying_medians(lab, startup)
    groups = measured_groups(lab)
    out = []
    for wl, cfgs in lab["summary"].items():
        for cfg, per_w in cfgs.items():
            if cfg not in configs:
                continue
            inp = logical_clock(facts[wl][cfg], Policy.RECORDED, model, catch_up=True)
            scaled = ScaledWork()
            res = {int(w): simulate(inp, ReplicaConfig(int(w), True, cfg == "durable"), model, scaled=scaled)
                   for w in per_w}
            pred = {w: r.apply_us / 1e6 for w, r in res.items()}
            for w, m in per_w.items():
                got = sorted(rounds[(wl, cfg, int(w))])
                out.append({"workload": wl, "config": cfg, "workers": int(w), "measured_s": medians[(wl, cfg, int(w))],
                            "predicted_s": pred[int(w)], "measured_speedup": got[len(got) // 2],
                            "predicted_speedup": pred[1] / pred[int(w)],
                            "measured_groups": groups.get((wl, cfg, int(w))), "predicted_groups": res[int(w)].flushes})
    return out


def model_of(x: list[float], base, cores: int, free: tuple[str, ...] = FREE, fixed: dict = FIXED,
             ties: tuple[tuple[str, float, str], ...] = ()):
    v = {k: math.exp(a) for k, a in zip(free, x)}
    if "insert_us" in v:
        v["delete_us"] = v["insert_us"] * DELETE_PER_INSERT
    model = replace(base, cores=cores, **fixed, **v)
    for cost, factor, other in ties:   # --tie: a cost held at a measured ratio to another
        model = replace(model, **{cost: factor * getattr(model, other)})
    return model


def parse_tie(item: str, known) -> tuple[str, float, str]:
    """``--tie COST=FACTOR*OTHER`` (e.g. ``event_us=0.74*update_us``, apply_costs.py's ratio)."""
    cost, _, rhs = item.partition("=")
    factor, _, other = rhs.partition("*")
    try:
        f = float(factor)
    except ValueError:
        raise SystemExit(f"--tie: expected COST=FACTOR*OTHER, got {item!r}") from None
    if not hasattr(known, cost) or not hasattr(known, other) or cost == other or not f > 0:
        raise SystemExit(f"--tie: expected COST=FACTOR*OTHER of two costs and a positive factor, got {item!r}")
    return cost, f, other


def nelder_mead(f, x0: list[float], iterations: int, step: float = 0.3) -> tuple[list[float], float]:
    n = len(x0)
    pts = [list(x0)] + [[x0[j] + (step if j == i else 0.0) for j in range(n)] for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iterations):
        order = sorted(range(n + 1), key=vals.__getitem__)
        pts, vals = [pts[k] for k in order], [vals[k] for k in order]
        if vals[-1] - vals[0] < 1e-7:
            break
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        xr = [2 * c[j] - pts[-1][j] for j in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [3 * c[j] - 2 * pts[-1][j] for j in range(n)]
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [(c[j] + pts[-1][j]) / 2 for j in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for k in range(1, n + 1):
                    pts[k] = [(pts[0][j] + pts[k][j]) / 2 for j in range(n)]
                    vals[k] = f(pts[k])
    best = min(range(n + 1), key=vals.__getitem__)
    return pts[best], vals[best]


def main() -> int:
    from compare import backlog_dir, kept_dir, lab_cores, startup_of
    from lab import read_json
    from lagadvisor.sim.model import CostModel

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", type=Path, nargs="+", help="one or more lab JSONs (their rows pooled)")
    ap.add_argument("--iterations", type=int, default=3000)
    ap.add_argument("--speedup-weight", type=float, default=1.0)
    ap.add_argument("--groups-weight", type=float, default=0.0,
                    help="G: add G * mean(log(simulated / measured commit groups)^2) over the durable "
                         "multi-worker rows (compare.measured_groups: the binlog fsyncs)")
    ap.add_argument("--configs", default="relaxed,durable", help="the rows fitted (e.g. durable)")
    ap.add_argument("--backlogs", type=Path, action="append", default=None,
                    help="the backlogs' folder (repeat: each workload from the first that has it, e.g. the "
                         "lab's and bench/data/manycore/index/backlogs for a lab JSON of the index backlogs)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--free", default=",".join(FREE), help="the costs to fit (default: all of FREE)")
    ap.add_argument("--startup-s", default=None,
                    help="as compare.py's (default: measured); several, comma-separated: one per lab JSON, in order "
                         "(a new checkout without the kept binlogs: each run's committed compare output's)")
    ap.add_argument("--constant-start", action="store_true", help="as compare.py's")
    ap.add_argument("--set", action="append", default=[], metavar="COST=VALUE",
                    help="hold a cost at a measured value (e.g. handoff_us=19.3 from the lab's timelines)")
    ap.add_argument("--start", action="append", default=[], metavar="COST=VALUE",
                    help="start the search for a free cost here instead of at the built-in model's "
                         "(crossfit.py: a start that no lab run has seen)")
    ap.add_argument("--tie", action="append", default=[], metavar="COST=FACTOR*OTHER",
                    help="hold a cost at a measured ratio to another, free or held (e.g. event_us=0.74*update_us "
                         "from apply_costs.py's timelines)")
    args = ap.parse_args()
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    labs = []
    starts = [float(v) for v in args.startup_s.split(",")] if args.startup_s else [None]
    if len(starts) not in (1, len(args.lab)):
        raise SystemExit(f"--startup-s: one value, or one per lab JSON ({len(args.lab)}), not {len(starts)}")
    for k, path in enumerate(args.lab):
        lab = read_json(path)
        startup, _ = startup_of(lab, starts[k % len(starts)], kept_dir(path), args.constant_start)
        labs.append((lab, load(lab, [backlog_dir(b) for b in args.backlogs or [None]]), startup))
    cores = lab_cores(labs[0][0])
    if any(lab_cores(lab) != cores for lab, _, _ in labs):
        raise SystemExit("the lab runs were on machines with different cores: fit them one at a time")
    held = {}
    for item in args.set:
        k, _, v = item.partition("=")
        if not hasattr(CostModel(), k):
            raise SystemExit(f"--set: not a cost: {k}")
        held[k] = int(v) if k == "fsync_devices" else float(v)
    base = replace(CostModel(), **held)
    fixed = {k: held.get(k, v) for k, v in FIXED.items()}  # --set overrides a measured term too
    start = {}
    for item in args.start:
        k, _, v = item.partition("=")
        if not hasattr(CostModel(), k) or k in held:
            raise SystemExit(f"--start: not a free cost: {k}")
        start[k] = float(v)
    base = replace(base, **start)
    ties = tuple(parse_tie(item, base) for item in args.tie)
    free = tuple(k for k in args.free.split(",") if k and k not in held and k not in {t[0] for t in ties})
    unknown = [k for k in free if not hasattr(base, k) or k == "fsync_devices"]
    if unknown:
        raise SystemExit(f"--free: not a fitted cost: {', '.join(unknown)}")
    fixed = {k: v for k, v in fixed.items() if k not in free}   # --free frees a measured term too

    configs = tuple(c for c in args.configs.split(",") if c)

    def pooled(model) -> list[dict]:
        return [r for lab, facts, startup in labs for r in rows(lab, facts, model, startup, configs)]

    def loss(x) -> float:
        rs = pooled(model_of(x, base, cores, free, fixed, ties))
        multi = [r for r in rs if r["workers"] > 1]
        grouped = [r for r in multi if r["measured_groups"] and r["predicted_groups"]]
        value = (sum(math.log(r["predicted_s"] / r["measured_s"]) ** 2 for r in rs) / len(rs)
                 + args.speedup_weight * sum(math.log(r["predicted_speedup"] / r["measured_speedup"]) ** 2
                                             for r in multi) / len(multi))
        if args.groups_weight and grouped:
            value += args.groups_weight * sum(math.log(r["predicted_groups"] / r["measured_groups"]) ** 2
                                              for r in grouped) / len(grouped)
        return value

    x, value = nelder_mead(loss, [math.log(max(getattr(base, k), 1e-4)) for k in free], args.iterations)
    model = model_of(x, base, cores, free, fixed, ties)
    print(model.to_json())
    print(f"\nloss {value:.5f}")
    for r in pooled(model):
        print(f"{r['workload']:8} {r['config']:8} {r['workers']:3}  {r['measured_s']:.3f} s -> {r['predicted_s']:.3f} s "
              f"({r['predicted_s'] / r['measured_s'] - 1:+.1%}); speedup {r['measured_speedup']:.2f}x -> "
              f"{r['predicted_speedup']:.2f}x ({r['predicted_speedup'] / r['measured_speedup'] - 1:+.1%})"
              + (f"; groups {r['measured_groups']} -> {r['predicted_groups']}" if r["measured_groups"] else ""))
    if args.out:
        args.out.write_text(model.to_json() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
