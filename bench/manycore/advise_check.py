#!/usr/bin/env python3
"""``lagadvisor advise --cores 16`` on the lab's backlogs against what the lab measured (issue 33).

For each workload and durability of the lab JSON, runs ``advise --cores N --format json`` on the
backlog's share the lab applied, with the lab replica's settings given by ``--replica-setting``
(16 workers, commit order preserved, relaxed 2/0 or durable 1/1), and compares:

* the worker count advise picks (its ``replica_parallel_workers`` finding: the knee of the
  simulated curve, the fewest workers reaching 90% of the best speedup; for a durable replica the
  count "if you keep durable settings" where the plan also relaxes durability) with the measured knee
  (the same rule on compare.py's measured speedups over 1-32 workers): within one step of
  1/2/4/8/16/32?
* the bottleneck advise names at 16 workers with what the instrumented round shows at 16
  workers: where the coordinator's time went (performance_schema stages: reading events =
  ``coordinator``; waiting for a transaction's dependencies = ``dependencies``; waiting for a free
  worker = the workers' limit, ``commit and fsync`` when their commit stage (group commit, commit
  order, fsyncs) took more of their time than applying, else ``worker CPU``).

``--pooled POOLED.json ADVISE.json ...``: no advise is run; each committed output's advised counts
against the knee of the runs' pooled speedups (pool.py's medians of every run's rounds), where one
run's knee moves with its rounds' noise on a curve that is flat from 8 workers up.

Usage: PYTHONPATH=src python3 bench/manycore/advise_check.py LAB.json [--out rows.json] [--startup-s S] [--instrumented LAB2.json]
       python3 bench/manycore/advise_check.py --pooled POOLED.json ADVISE.json [ADVISE.json ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "manycore"))
sys.path.insert(0, str(ROOT / "bench"))
from compare import kept_dir, open_lab, round_speedups, startup_of  # noqa: E402
from lab import Backlog, read_json  # noqa: E402
from replica_catchup import lagadvisor  # noqa: E402

WORKERS = (1, 2, 4, 8, 16, 32)
SETTINGS = {"relaxed": {"sync_binlog": "0", "innodb_flush_log_at_trx_commit": "2"},
            "durable": {"sync_binlog": "1", "innodb_flush_log_at_trx_commit": "1"}}


def measured_knee(rounds: dict, wl: str, cfg: str) -> int:
    """The fewest workers whose measured speedup (compare.py's: the median of the rounds', the
    replica's start taken off) reaches 90% of the best (advise's rule)."""
    sp = {w: sorted(v)[len(v) // 2] for (a, b, w), v in rounds.items() if (a, b) == (wl, cfg)}
    best = max(sp.values())
    return min(w for w, s in sp.items() if s >= 0.9 * best)


def pooled_knees(pooled_rows: list[dict], advised: list[list[dict]]) -> list[dict]:
    """Per workload and durability, the knee of the pooled measured speedups (:func:`measured_knee`'s
    rule; one worker is 1x) and each advise output's count against it: ``advised`` (one list per
    run, in order), ``within`` (how many within one step)."""
    curves: dict[tuple[str, str], dict[int, float]] = {}
    for r in pooled_rows:
        curves.setdefault((r["workload"], r["config"]), {1: 1.0})[r["workers"]] = r["measured_speedup"]
    out = []
    for (wl, cfg), curve in curves.items():
        knee = measured_knee({(wl, cfg, w): [s] for w, s in curve.items()}, wl, cfg)
        counts = [row["advised_workers"] for rows in advised for row in rows
                  if (row["workload"], row["config"]) == (wl, cfg)]
        out.append({"workload": wl, "config": cfg, "pooled_knee": knee, "advised": counts,
                    "within": sum(abs(WORKERS.index(c) - WORKERS.index(knee)) <= 1 for c in counts)})
    return out


def instrumented_bottleneck(run: dict) -> tuple[str, dict]:
    """What limited the instrumented catch-up: the largest part of the coordinator's time."""
    b = run["performance_schema"]["breakdown"]
    s = run["seconds"]
    shares = {"coordinator": b["coordinator_read_s"] / s, "dependencies": b["coordinator_wait_dependency_s"] / s,
              "workers": b["coordinator_wait_workers_s"] / s}
    name = max(shares, key=shares.get)
    if name == "workers":
        commit = b["worker_commit_s"] + b["worker_commit_order_wait_s"]
        name = "commit and fsync" if commit > b["worker_apply_s"] else "worker CPU"
    return name, {k: round(v, 3) for k, v in shares.items()}


def advised_workers(doc: dict, config: str = "relaxed") -> int:
    """The worker count advise recommends for the lab's replica as it ran: its
    replica_parallel_workers finding's, or, where the replica's own count is already the knee, the
    count it confirmed ("replica_parallel_workers = N" under summary.confirmed, no finding). A
    durable replica is measured durable, so where advise's plan also relaxes durability (and sets
    the workers for a relaxed replica), the count is the finding's alternative "if you keep durable
    settings" (the knee of the durable curve)."""
    for f in doc["findings"]:
        if f["id"] == "replica_parallel_workers":
            alt = f.get("alternative") or {}
            if config == "durable" and "keep durable settings" in (alt.get("condition") or ""):
                return int(alt["suggested"])
            return int(f["suggested"])
    prefix = "replica_parallel_workers = "
    return next(int(c[len(prefix):]) for c in doc["summary"]["confirmed"] if c.startswith(prefix))


def advise(folder: Path, n: int, config: str, cores: int) -> dict:
    args = ["advise", "--cores", str(cores), "--format", "json", "--no-progress",
            "--replica-setting", "replica_parallel_workers=16", "--replica-setting", "replica_preserve_commit_order=ON"]
    for k, v in SETTINGS[config].items():
        args += ["--replica-setting", f"{k}={v}"]
    prefix = Backlog.load(folder).prefix(n)
    if prefix[-1][1] is not None:
        args += ["--stop-position", str(prefix[-1][1])]
    return json.loads(lagadvisor(*args, *(str(p) for p, _ in prefix)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", type=Path, nargs="+", help="the lab JSON (with --pooled: advise_check outputs)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--pooled", type=Path, default=None,
                    help="pool.py --out JSON: the advise outputs given against its pooled knees, no advise run")
    ap.add_argument("--startup-s", type=float, default=None,
                    help="as compare.py's (a run whose kept binlogs are not here: its compare output's startup_s)")
    ap.add_argument("--constant-start", action="store_true", help="as compare.py's")
    ap.add_argument("--instrumented", type=Path, default=None,
                    help="the instrumented round from this lab JSON instead (a second call on the loan: run 7b)")
    args = ap.parse_args()
    if args.pooled:
        pooled = json.loads(args.pooled.read_text())
        got = pooled_knees(pooled["rows"], [json.loads(p.read_text())["rows"] for p in args.lab])
        print(f"advised workers against the knee of {len(pooled['runs'])} runs' pooled speedups ({args.pooled.name})\n")
        print("| workload | replica | pooled knee | advised (each run) | within one step |\n|---|---|---|---|---|")
        for g in got:
            print(f"| {g['workload']} | {g['config']} | {g['pooled_knee']} | {', '.join(map(str, g['advised']))} | "
                  f"{g['within']} of {len(g['advised'])} |")
        print(f"\nwithin one step: {sum(g['within'] for g in got)} of {sum(len(g['advised']) for g in got)}")
        return 0
    if len(args.lab) != 1:
        ap.error("one lab JSON (several files only with --pooled)")
    args.lab = args.lab[0]
    lab, cores, backlogs = open_lab(args.lab)
    rounds = round_speedups(lab, startup_of(lab, args.startup_s, kept_dir(args.lab), args.constant_start)[0])
    counts = {(r["workload"], r["config"]): r["transactions"] for r in lab["runs"]
              if r.get("phase") in ("relaxed", "durable") and "seconds" in r}
    inst_lab = read_json(args.instrumented) if args.instrumented else lab
    instrumented = {(r["workload"], r["config"]): r for r in inst_lab["runs"]
                    if r.get("phase") == "instrumented" and r.get("workers") == 16 and "performance_schema" in r}
    rows = []
    for wl, cfgs in lab["summary"].items():
        for cfg, per_w in cfgs.items():
            doc = advise(backlogs / wl, counts[(wl, cfg)], cfg, cores)
            knee = advised_workers(doc, cfg)
            want = measured_knee(rounds, wl, cfg)
            shown, shares = instrumented_bottleneck(instrumented[(wl, cfg)]) if (wl, cfg) in instrumented else (None, {})
            named = doc["summary"]["bottleneck"]["name"]
            rows.append({"workload": wl, "config": cfg, "advised_workers": knee, "measured_knee": want,
                         "within_one_step": abs(WORKERS.index(knee) - WORKERS.index(want)) <= 1,
                         "advise_bottleneck": named, "instrumented_bottleneck": shown,
                         "coordinator_time_shares": shares, "same_bottleneck": named == shown,
                         "bottleneck_sentence": doc["summary"]["bottleneck"]["sentence"]})
    print(f"advise --cores {cores} (replica: 16 workers, commit order ON) against the lab\n")
    print("| workload | replica | advised workers | measured knee | within one step | advise: bound by "
          "| instrumented round (16 workers) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['workload']} | {r['config']} | {r['advised_workers']} | {r['measured_knee']} | "
              f"{'yes' if r['within_one_step'] else 'no'} | {r['advise_bottleneck']} | {r['instrumented_bottleneck']} "
              f"({', '.join(f'{k} {v:.0%}' for k, v in r['coordinator_time_shares'].items())}) |")
    if args.out:
        args.out.write_text(json.dumps({"cores": cores, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
