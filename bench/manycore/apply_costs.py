#!/usr/bin/env python3
"""What one more row and one more binlog event add to a transaction's apply on the replica, from
the per-transaction timelines of the lab's instrumented catch-ups (issue 33).

The cost model prices a worker's apply ``trx_us + update_us * rows + event_us * events + ...``
(sim/model.py). The lab's catch-up times cannot tell a statement's cost from its row's (its
statements are mostly of one row, and ``fit.py`` fits the sum); the timelines can, within one
backlog: ``timeline.py`` keeps each transaction's start on its worker and the start of its wait
for commit order (``Waiting for preceding transaction to commit``, where the apply has ended and
the commit not begun), and the ``mixed`` backlog changes 1 to 2,000 rows of one table a
transaction, one row a statement (1-30 rows: 2 events a row, 3 more) or many (its range updates:
100-2,000 rows in 6-7 events). For each timeline of the workload, durability and worker count
asked, this joins every transaction that waited (the apply alone) with its rows by kind and
events (the backlog's binlog, the GTID's number, lagadvisor's reader), takes the median apply of
each shape (the same rows and events), and fits ``a + u * rows + e * events`` by weighted least
squares (the weight: the shape's transactions), per timeline file and over all of them. The
instrumented catch-ups run with performance_schema's timers and at 16 workers on 16 cores
(contention), so ``u`` and ``e`` are larger than the model's; their ratio is what carries.
Bytes are left out: the backlog's row images are of one size, so they follow the rows.

    PYTHONPATH=src python3 bench/manycore/apply_costs.py bench/manycore_16core_run{2,3,4,5,7b}_timelines.json.gz \\
        [--workload mixed] [--config relaxed] [--workers 16] [--backlogs DIR] [--out costs.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
try:  # the installed package, or the checkout's src/ when none is (PYTHONPATH=src puts it first)
    import lagadvisor  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench" / "manycore"))

#: A shape: (inserts, updates, deletes, events) of a transaction.
Shape = tuple[int, int, int, int]


def shapes_by_gno(files: list[Path]) -> dict[int, Shape]:
    """Each transaction's shape by its GTID's number (the lab's backlogs are ``uuid:1-N``)."""
    from lagadvisor.binlog import read_transactions

    out = {}
    for f in files:
        for t in read_transactions(str(f)):
            if t.gtid and ":" in t.gtid:
                out[int(t.gtid.rsplit(":", 1)[1])] = (sum(x.inserts for x in t.tables),
                                                      sum(x.updates for x in t.tables),
                                                      sum(x.deletes for x in t.tables), t.event_count)
    return out


def applies(timeline: dict, shapes: dict[int, Shape]) -> dict[Shape, list[float]]:
    """The apply times (us: a transaction's start to its commit-order wait) of the timeline's
    transactions that waited, by shape."""
    out: dict[Shape, list[float]] = {}
    for g, start, wait in zip(timeline["gno"], timeline["start"], timeline["wait_start"]):
        if wait >= 0 and g in shapes:
            out.setdefault(shapes[g], []).append((wait - start) / 1000.0)
    return out


def least_squares(rows: list[tuple[list[float], float, float]]) -> tuple[list[float], float]:
    """Weighted least squares of ``y`` on ``x`` (rows of (x, y, weight)): the coefficients and the
    weighted RMS residual (Gauss-Jordan on the normal equations; stdlib only)."""
    k = len(rows[0][0])
    m = [[sum(w * x[i] * x[j] for x, _, w in rows) for j in range(k)] + [sum(w * x[i] * y for x, y, w in rows)]
         for i in range(k)]
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if abs(m[c][c]) < 1e-9:
            raise ValueError("the shapes do not separate the terms")
        for r in range(k):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [a - f * b for a, b in zip(m[r], m[c])]
    coef = [m[i][k] / m[i][i] for i in range(k)]
    res = sum(w * (y - sum(c * v for c, v in zip(coef, x))) ** 2 for x, y, w in rows)
    return coef, (res / sum(w for _, _, w in rows)) ** 0.5


def fit(by_shape: dict[Shape, list[float]]) -> dict:
    """``a + u * rows + e * events`` over the shapes' median applies (rows of every kind together)."""
    rows = [([1.0, float(s[0] + s[1] + s[2]), float(s[3])], statistics.median(v), float(len(v)))
            for s, v in by_shape.items()]
    (a, u, e), rms = least_squares(rows)
    return {"transactions": sum(len(v) for v in by_shape.values()), "shapes": len(by_shape),
            "intercept_us": round(a, 1), "us_per_row": round(u, 2), "us_per_event": round(e, 2),
            "event_per_row": round(e / u, 3) if u else None, "rms_us": round(rms, 1)}


def main(argv: list[str] | None = None) -> int:
    from compare import backlog_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("timelines", type=Path, nargs="+", help="lab timelines (timelines.json.gz)")
    ap.add_argument("--workload", default="mixed")
    ap.add_argument("--config", default="relaxed")
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--backlogs", type=Path, default=None, help="default: the lab's generated ones")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    folder = backlog_dir(a.backlogs) / a.workload
    shapes = shapes_by_gno(sorted(folder.glob("binlog.0*")))
    if not shapes:
        raise SystemExit(f"no backlog {a.workload} under {folder.parent}")
    key = f"{a.workload}-{a.config}-w{a.workers}"
    per_file, pooled = {}, {}
    for p in a.timelines:
        with gzip.open(p, "rt") if p.suffix == ".gz" else open(p) as f:
            t = json.load(f)["runs"].get(key)
        if not t or not t.get("transactions"):
            continue
        by = applies(t, shapes)
        try:
            per_file[p.name] = fit(by)
        except ValueError as err:
            raise SystemExit(f"{p.name} {key}: {err} (rows and events in one ratio: only the mixed backlog "
                             "has one-row and many-row statements)") from None
        for s, v in by.items():
            pooled.setdefault(s, []).extend(v)
    if not per_file:
        raise SystemExit(f"no timeline {key} in the files given")
    per_file["pooled"] = fit(pooled)
    from lagadvisor.sim.model import CostModel

    m = CostModel()
    print(f"{key}: apply = a + u * rows + e * events (medians of each shape; us)")
    print("| timelines | transactions | shapes | a | u (a row) | e (an event) | e / u | rms |")
    print("|---|---|---|---|---|---|---|---|")
    for name, f in per_file.items():
        print(f"| {name} | {f['transactions']} | {f['shapes']} | {f['intercept_us']} | {f['us_per_row']} | "
              f"{f['us_per_event']} | {f['event_per_row']} | {f['rms_us']} |")
    print(f"the built-in model: event_us / update_us = {m.event_us} / {m.update_us} = {m.event_us / m.update_us:.3f}")
    if a.out:
        a.out.write_text(json.dumps({"workload": a.workload, "config": a.config, "workers": a.workers,
                                     "model_event_per_update": round(m.event_us / m.update_us, 3),
                                     "fits": per_file}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
