#!/usr/bin/env python3
"""How fast the lab's replica committed, from the kept 16-worker binlogs (issue 33).

The replica writes each transaction's ``immediate_commit_timestamp`` when the binlog group
commit's flush stage writes it (``log_replica_updates=ON``). Over a catch-up, first commit to
last, that gives the replica's commit rate, microseconds per transaction: no serial stage of the
replica can take longer a transaction than that. The gaps between consecutive commits split in
two: a few microseconds where one flush group's members are written back to back, and longer
ones between groups (durable: the group's fsyncs, 80-320 us). This table sets both against the
model's serial commit stage (``CostModel.commit_us``, per member: the built-in's or ``--cost-model``'s).

Usage: PYTHONPATH=src python3 bench/manycore/commit_gaps.py bench/data/manycore/kept/manycore_16core_run7
                                                           [--within-us 10] [--cost-model M.json] [--out gaps.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[2]
try:  # the installed package, or the checkout's src/ when none is (PYTHONPATH=src puts it first)
    import lagadvisor  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "src"))

from lagadvisor.binlog import read_transactions  # noqa: E402
from lagadvisor.sim.model import CostModel  # noqa: E402

#: A gap between two commits shorter than this is taken for two members of one flush group.
WITHIN_US = 10


def commit_times(path: Path) -> list[int]:
    """The ``immediate_commit_timestamp`` of every transaction of a (gzipped) replica binlog."""
    return [t.immediate_commit_timestamp for t in read_transactions(str(path), selector=lambda _tm: frozenset())]


def gaps_row(name: str, ts: list[int], within_us: int = WITHIN_US) -> dict:
    """One catch-up: transactions, commit span, us per transaction, the gaps within and between
    flush groups (count and mean), and the mean members per group."""
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    inside = [g for g in gaps if g < within_us]
    between = [g for g in gaps if g >= within_us]
    span = ts[-1] - ts[0] if len(ts) > 1 else 0
    return {"catch_up": name, "transactions": len(ts), "span_ms": round(span / 1e3, 3),
            "us_per_transaction": round(span / max(1, len(ts) - 1), 2),
            "gaps_within": len(inside), "within_mean_us": round(sum(inside) / len(inside), 2) if inside else None,
            "groups": len(between) + 1, "between_mean_us": round(sum(between) / len(between), 2) if between else None,
            "members_per_group": round(len(ts) / (len(between) + 1), 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kept", type=Path, help="a folder of kept replica binlogs (WL-CFG-w16[-rR].binlog.000002.gz)")
    ap.add_argument("--within-us", type=int, default=WITHIN_US)
    ap.add_argument("--cost-model", default=None, help="default: the built-in model")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    model = CostModel.from_file(args.cost_model) if args.cost_model else CostModel()
    rows = [gaps_row(p.name.split(".binlog")[0], commit_times(p), args.within_us)
            for p in sorted(args.kept.glob("*-w16*.binlog.*.gz"))]
    print(f"the model's serial commit stage: {model.commit_us:.1f} us a member\n")
    print("| catch-up | transactions | us per transaction | members per group | within a group, mean us | between groups, mean us |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['catch_up']} | {r['transactions']} | {r['us_per_transaction']} | {r['members_per_group']} | "
              f"{r['within_mean_us']} | {r['between_mean_us']} |")
    faster = [r for r in rows if r["us_per_transaction"] < model.commit_us]
    if rows:
        print(f"\n{len(faster)} of {len(rows)} catch-ups committed faster than {model.commit_us:.1f} us a transaction "
              f"(median {median(r['us_per_transaction'] for r in rows):.1f} us)")
    if args.out:
        args.out.write_text(json.dumps({"kept": str(args.kept), "within_us": args.within_us,
                                        "model_commit_us": model.commit_us, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
