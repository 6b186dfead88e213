#!/usr/bin/env python3
"""What one more secondary index costs a row-based replica's apply (issue 33: "worker CPU per row,
byte, index").

The cost model charges a worker per row by kind (``insert_us``, ``update_us``, ``delete_us``) and
nothing per secondary index: every lab backlog has at most one non-unique index a table, so the
fitted per-row costs hold that much index work, and a table with eight indexes costs the model what
one with one does. This measures the difference on a real replica: the lab (``lab.py``) on the
backlogs ``idx0``, ``idx2``, ``idx4``, ``idx8`` (``gen_backlogs.py`` ``INDEX_WORKLOADS``: the same
4,000 transactions, rows, bytes and statements, over tables with 0, 2, 4 or 8 non-unique secondary
indexes; each transaction changes 4 entries of every index). Per configuration and worker count it
takes each backlog's median over the rounds of the catch-up's time, the workers' and the
coordinator's CPU and InnoDB purge's CPU (``/proc``, ``lab.py`` ``cpu_s``), all per transaction,
and fits each on the index count by least squares: the slope is what one more index costs a
transaction, a quarter of it one entry change.

    python3 bench/manycore/gen_backlogs.py --only idx0,idx2,idx4,idx8 --out bench/data/manycore/index
    python3 bench/manycore/lab.py --quick --workloads idx0,idx2,idx4,idx8 --workers 1,2 --rounds 9 \\
        --no-instrumented --max-fraction 1 --min-fraction 0.5 --budget 420 \\
        --backlogs bench/data/manycore/index/backlogs.tar.xz --out /tmp/idxlab
    python3 bench/manycore/index_cost.py /tmp/idxlab/manycore.json --out bench/index_cost_2core.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from startup_probe import line_fit  # noqa: E402  (least squares y = a + b x)

#: Entry changes a transaction of the ``idx`` backlogs makes in each secondary index: the update of
#: every indexed column (its old entry delete-marked, its new one inserted), the delete's, the insert's.
ENTRIES_PER_INDEX = 4
#: Per transaction, from the lab's per-thread CPU (``cpu_s``, seconds by thread name).
MEASURES = {"seconds": None, "worker_cpu": "rpl_rca_wkr", "coordinator_cpu": "rpl_rca_sql", "purge_cpu": "ib_srv_purge"}


def per_trx_us(run: dict, measure: str) -> float:
    thread = MEASURES[measure]
    seconds = run["seconds"] if thread is None else run["cpu_s"].get(thread, 0.0)
    return seconds / run["transactions"] * 1e6


def indexes_of(workload: str) -> int | None:
    m = re.fullmatch(r"idx(\d+)", workload)
    return int(m.group(1)) if m else None


def summarize(lab: dict) -> list[dict]:
    """One row per (configuration, workers): each backlog's medians and the fits on the index count."""
    cells: dict[tuple[str, int], dict[int, list[dict]]] = {}
    for r in lab["runs"]:
        k = indexes_of(r["workload"])
        if r.get("phase") not in ("relaxed", "durable") or k is None or not r.get("transactions"):
            continue
        cells.setdefault((r["config"], r["workers"]), {}).setdefault(k, []).append(r)
    out = []
    for (config, workers), by_k in sorted(cells.items()):
        ks = sorted(by_k)
        if len(ks) < 2:
            continue
        row = {"config": config, "workers": workers, "indexes": ks,
               "rounds": [len(by_k[k]) for k in ks], "median_us": {}, "fit": {}}
        for m in MEASURES:
            med = [statistics.median(per_trx_us(r, m) for r in by_k[k]) for k in ks]
            a, b = line_fit([float(k) for k in ks], med)
            row["median_us"][m] = [round(x, 1) for x in med]
            row["fit"][m] = {"at_0_us": round(a, 1), "per_index_us": round(b, 2),
                             "per_entry_us": round(b / ENTRIES_PER_INDEX, 2),
                             "per_index_share": round(b / a, 4) if a > 0 else None}
        out.append(row)
    return out


def print_rows(rows: list[dict]) -> None:
    for row in rows:
        print(f"{row['config']}, {row['workers']} worker(s); indexes {row['indexes']}, rounds {row['rounds']}")
        print("| per transaction | " + " | ".join(f"{k} indexes" for k in row["indexes"])
              + " | fit at 0 | per index | per entry | per index, share |")
        print("|---" * (len(row["indexes"]) + 5) + "|")
        for m, med in row["median_us"].items():
            f = row["fit"][m]
            share = f"{f['per_index_share']:+.1%}" if f["per_index_share"] is not None else "-"
            print(f"| {m} (us) | " + " | ".join(f"{x:.1f}" for x in med)
                  + f" | {f['at_0_us']:.1f} | {f['per_index_us']:+.2f} | {f['per_entry_us']:+.2f} | {share} |")
        print()


def load(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        return json.load(fh)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", type=Path, help="a lab JSON of the idx backlogs (lab.py's manycore.json, or .gz)")
    ap.add_argument("--out", type=Path, default=None, help="write the summary and the lab's runs as JSON")
    a = ap.parse_args(argv)
    lab = load(a.lab)
    rows = summarize(lab)
    if not rows:
        print(f"{a.lab}: no timed catch-ups of the idx backlogs (idx0, idx2, ...)", file=sys.stderr)
        return 2
    print_rows(rows)
    if a.out:
        keep = ("round", "workload", "config", "workers", "transactions", "seconds", "cpu_s", "counters")
        runs = [{k: r[k] for k in keep if k in r} for r in lab["runs"] if r.get("phase") in ("relaxed", "durable")]
        a.out.write_text(json.dumps({"machine": lab.get("machine"), "mysqld": lab.get("mysqld", {}).get("version"),
                                     "backlogs": lab.get("backlogs"), "entries_per_index": ENTRIES_PER_INDEX,
                                     "rows": rows, "runs": runs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
