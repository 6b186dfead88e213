#!/usr/bin/env python3
"""What the coordinator's read costs, per event and per byte, from the lab's instrumented rounds.

The replica's coordinator (``thread/sql/replica_sql``) reads each event of the relay log and
queues it to a worker in the performance_schema stage "Reading event from the relay log". Its
/proc CPU is no measure of that work: it spins on ``sched_yield`` while it waits for a free
worker (``Mts_submode_logical_clock::get_least_occupied_worker``), so its CPU follows the wall time
at every worker count (docs/accuracy.md). The stage's own time is the read. For each
instrumented catch-up this prints the stage's events and seconds against the backlog's events
and bytes a transaction (the backlog's binlog, the applied prefix, read by lagadvisor's reader),
and fits the read time a transaction as ``a * events + b * bytes`` over the catch-ups given:
the model prices it ``dispatch_us + dispatch_event_us * events + dispatch_byte_us * bytes``
(sim/model.py).

Usage: PYTHONPATH=src python3 bench/manycore/coordinator_read.py LAB.json[.gz] [...] [--backlogs DIR ...]
                                                                 [--out read.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
try:  # the installed package, or the checkout's src/ when none is (PYTHONPATH=src puts it first)
    import lagadvisor  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench" / "manycore"))

READ = "stage/sql/Reading event from the relay log"


def transaction_sizes(files: list[Path]) -> list[tuple[int, int]]:
    """(events, bytes) of each transaction of the binlog files, in order (lagadvisor's reader:
    ``Transaction.event_count`` and ``bytes``; the file's own events are of none)."""
    from lagadvisor.binlog import read_transactions

    return [(t.event_count, t.bytes) for f in files
            for t in read_transactions(str(f), selector=lambda _tm: frozenset())]


def rows_of(lab: dict, backlogs: list[Path]) -> list[dict]:
    """One row per instrumented catch-up: its stage's events and seconds, and its backlog prefix's
    events and bytes a transaction."""
    sizes: dict[str, list[tuple[int, int]]] = {}
    out = []
    for r in lab["runs"]:
        if r.get("phase") != "instrumented" or "performance_schema" not in r:
            continue
        wl = r["workload"]
        if wl not in sizes:
            folder = next((d / wl for d in backlogs if (d / wl / "manifest.json").exists()), None)
            if folder is None:
                raise SystemExit(f"no backlog {wl} under {', '.join(map(str, backlogs))}")
            sizes[wl] = transaction_sizes(sorted(folder.glob("binlog.0*")))
        n = r["transactions"]
        head = sizes[wl][:n]
        events, seconds = r["performance_schema"]["stages"].get("thread/sql/replica_sql", {}).get(READ, (0, 0.0))
        out.append({"workload": wl, "config": r["config"], "workers": r["workers"], "transactions": n,
                    "seconds": r["seconds"], "read_events": events, "read_s": round(seconds, 6),
                    "events_per_trx": round(sum(e for e, _ in head) / n, 3),
                    "bytes_per_trx": round(sum(b for _, b in head) / n, 1),
                    "read_us_per_event": round(seconds / events * 1e6, 3) if events else None,
                    "read_us_per_trx": round(seconds / n * 1e6, 3)})
    return out


def fit(rows: list[dict]) -> dict:
    """Least squares of the read time a transaction on its events and bytes (no intercept), and on
    each alone."""
    def solve(cols):
        k = len(cols)
        a = [[sum(r[c1] * r[c2] for r in rows) for c2 in cols] for c1 in cols]
        y = [sum(r[c] * r["read_us_per_trx"] for r in rows) for c in cols]
        if k == 1:
            return [y[0] / a[0][0]]
        det = a[0][0] * a[1][1] - a[0][1] * a[1][0]
        return [(y[0] * a[1][1] - y[1] * a[0][1]) / det, (a[0][0] * y[1] - a[1][0] * y[0]) / det]

    def rms(pred) -> float:
        return (sum((p - r["read_us_per_trx"]) ** 2 for p, r in zip(pred, rows)) / len(rows)) ** 0.5

    both = solve(["events_per_trx", "bytes_per_trx"])
    ev = solve(["events_per_trx"])[0]
    by = solve(["bytes_per_trx"])[0]
    return {"catch_ups": len(rows),
            "events_and_bytes": {"us_per_event": round(both[0], 3), "us_per_byte": round(both[1], 6),
                                 "rms_us": round(rms([both[0] * r["events_per_trx"] + both[1] * r["bytes_per_trx"]
                                                      for r in rows]), 2)},
            "events_alone": {"us_per_event": round(ev, 3), "rms_us": round(rms([ev * r["events_per_trx"] for r in rows]), 2)},
            "bytes_alone": {"us_per_byte": round(by, 6), "rms_us": round(rms([by * r["bytes_per_trx"] for r in rows]), 2)}}


def main() -> int:
    from compare import backlog_dir
    from lab import read_json

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", type=Path, nargs="+")
    ap.add_argument("--backlogs", type=Path, action="append", default=None,
                    help="where the backlogs are (repeat; default: the lab's generated ones)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    backlogs = [backlog_dir(b) for b in args.backlogs or [None]]
    rows = [dict(r, lab=str(p)) for p in args.lab for r in rows_of(read_json(p), backlogs)]
    if not rows:
        raise SystemExit("no instrumented catch-up with performance_schema stages in the lab JSON")
    print("| lab | catch-up | events a trx | bytes a trx | read us an event | read us a trx |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {Path(r['lab']).name} | {r['workload']} {r['config']} {r['workers']} | {r['events_per_trx']} | "
              f"{r['bytes_per_trx']:.0f} | {r['read_us_per_event']} | {r['read_us_per_trx']:.1f} |")
    f = fit(rows)
    print(f"\nread a transaction = {f['events_and_bytes']['us_per_event']} us an event + "
          f"{f['events_and_bytes']['us_per_byte']} us a byte (rms {f['events_and_bytes']['rms_us']} us); "
          f"events alone {f['events_alone']['us_per_event']} us (rms {f['events_alone']['rms_us']}); "
          f"bytes alone {f['bytes_alone']['us_per_byte']} us (rms {f['bytes_alone']['rms_us']})")
    if args.out:
        args.out.write_text(json.dumps({"fit": f, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
