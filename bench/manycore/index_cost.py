#!/usr/bin/env python3
"""What one more secondary index, a unique one and a foreign key cost a row-based replica's apply
(issue 33: "worker CPU per row, byte, index").

The cost model charges a worker per row by kind (``insert_us``, ``update_us``, ``delete_us``) and
nothing per secondary index: every lab backlog has at most one non-unique index a table, so the
fitted per-row costs hold that much index work, and a table with eight indexes costs the model what
one with one does. This measures the difference on a real replica: the lab (``lab.py``) on the
backlogs of ``gen_backlogs.py`` ``INDEX_WORKLOADS`` (the same 4,000 transactions, rows, bytes and
statements over tables that differ only in their keys; each transaction changes 4 entries of every
secondary index): ``idx0``, ``idx2``, ``idx4``, ``idx8`` with 0 to 8 non-unique indexes, ``uk4``
with 4 unique ones, ``kr`` with one non-unique index on ``r``, ``fkr`` with a foreign key from
``r`` to a parent table, ``wide0`` ``idx0`` with a wider ``pad`` (more bytes); ``idx4f`` and
``uk4f``, ``idx4`` and ``uk4`` whose insert writes fresh values instead of the deleted row's (a
unique index's duplicate scan runs only when an equal entry is there); and ``fkfk``, the lab's
own ``fk`` backlog, against ``fkkey``, the same without its foreign key. Per configuration and worker count it takes each backlog's median over
the rounds of the catch-up's time, the workers' and the coordinator's CPU and InnoDB purge's CPU
(``/proc``, ``lab.py`` ``cpu_s``), all per transaction; it fits each on the non-unique index count
by least squares (the slope is what one more index costs a transaction, a quarter of it one entry
change), and sets each other variant against its twin (:data:`PAIRS`). The same pairs take the
statement twins (``stmt16`` against ``stmt1``: per binlog event, :data:`EVENTS_ADDED`) and the doc
twins (``doc500`` against ``doc5``: per byte), whose lab runs are JSONs of their own
(bench/stmt_twins_2core.json, bench/doc_twins_2core.json; the model's ``event_us`` and
``byte_us``: docs/accuracy.md "What an event costs").

    python3 bench/manycore/gen_backlogs.py --only idx0,idx2,idx4,idx8,uk4,kr,fkr,wide0 --out bench/data/manycore/index
    python3 bench/manycore/lab.py --quick --workloads idx0,idx2,idx4,idx8,uk4,kr,fkr,wide0 --workers 1,2 --rounds 7 \\
        --no-instrumented --max-fraction 1 --min-fraction 0.5 --max-tars 0 --budget 600 \\
        --backlogs bench/data/manycore/index/backlogs.tar.xz --out /tmp/idxlab
    python3 bench/manycore/index_cost.py /tmp/idxlab/manycore.json --out bench/index_cost_2core.json

Its outputs are committed gzipped (``gzip -9 -n``; ``lab.read_json``, which ``index_check.py``
reads them with, takes the ``.gz`` beside a name). The fresh-value twins (docs/accuracy.md "What
a unique index costs"):

    python3 bench/manycore/gen_backlogs.py --only idx4,uk4,idx4f,uk4f --out bench/data/manycore/uniq
    python3 bench/manycore/lab.py --quick --workloads idx4,uk4,idx4f,uk4f --workers 1,2 --rounds 7 \\
        --no-instrumented --max-fraction 1 --max-tars 0 --budget 1200 \\
        --backlogs bench/data/manycore/uniq/backlogs.tar.xz --out /tmp/uniqlab
    python3 bench/manycore/index_cost.py /tmp/uniqlab/manycore.json --out bench/unique_twins_2core.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lab import read_json  # noqa: E402  (a lab JSON, plain or gzipped)
from startup_probe import line_fit  # noqa: E402  (least squares y = a + b x)

#: Entry changes a transaction of the ``idx`` backlogs makes in each secondary index: the update of
#: every indexed column (its old entry delete-marked, its new one inserted), the delete's, the insert's.
ENTRIES_PER_INDEX = 4
#: Per transaction, from the lab's per-thread CPU (``cpu_s``, seconds by thread name).
MEASURES = {"seconds": None, "worker_cpu": "rpl_rca_wkr", "coordinator_cpu": "rpl_rca_sql", "purge_cpu": "ib_srv_purge"}
#: (variant, its twin, what the difference is): the same statements, one change in the keys.
PAIRS = (("uk4", "idx4", "4 unique secondary indexes instead of 4 non-unique"),
         ("uk4f", "idx4f", "4 unique secondary indexes instead of 4 non-unique, the insert's values fresh "
                           "(none delete-marked: no duplicate scan)"),
         ("idx4f", "idx4", "4 non-unique indexes, the insert's values fresh instead of the deleted row's"),
         ("uk4f", "uk4", "4 unique indexes, the insert's values fresh instead of the deleted row's"),
         ("kr", "idx0", "one non-unique index (on r)"),
         ("fkr", "kr", "a foreign key on r (its parent checked) instead of r's index alone"),
         ("wide0", "idx0", "pad CHAR(252) instead of CHAR(60): the same rows, more bytes"),
         ("fkfk", "fkkey", "the lab's fk backlog: its foreign key (each child insert checks its parent) "
                           "instead of the index alone"),
         ("stmt16", "stmt1", "the same 16 row updates in 16 statements instead of one"),
         ("doc500", "doc5", "the same statements with 5,999-character TEXT values instead of 59"))
#: Binlog events a variant adds a transaction over its twin, where they differ (gen_backlogs.py
#: STMT_WORKLOADS: GTID, BEGIN, a table map and an Update_rows event a statement, XID: 35 against 5).
EVENTS_ADDED = {("stmt16", "stmt1"): 30}


def per_trx_us(run: dict, measure: str) -> float:
    thread = MEASURES[measure]
    seconds = run["seconds"] if thread is None else run["cpu_s"].get(thread, 0.0)
    return seconds / run["transactions"] * 1e6


def indexes_of(workload: str) -> int | None:
    m = re.fullmatch(r"idx(\d+)", workload)
    return int(m.group(1)) if m else None


def medians(lab: dict) -> dict[tuple[str, int], dict[str, dict[str, float]]]:
    """{(config, workers): {backlog: {measure: median per transaction, "rounds": n}}} of the timed rounds."""
    cells: dict[tuple[str, int], dict[str, list[dict]]] = {}
    for r in lab["runs"]:
        if r.get("phase") in ("relaxed", "durable") and r.get("transactions"):
            cells.setdefault((r["config"], r["workers"]), {}).setdefault(r["workload"], []).append(r)
    return {cell: {wl: {"rounds": len(rs), **{m: statistics.median(per_trx_us(r, m) for r in rs) for m in MEASURES}}
                   for wl, rs in by_wl.items()}
            for cell, by_wl in cells.items()}


def summarize(lab: dict) -> list[dict]:
    """One row per (configuration, workers): the idx backlogs' medians and the fits on the index count."""
    out = []
    for (config, workers), by_wl in sorted(medians(lab).items()):
        by_k = {k: v for wl, v in by_wl.items() if (k := indexes_of(wl)) is not None}
        ks = sorted(by_k)
        if len(ks) < 2:
            continue
        row = {"config": config, "workers": workers, "indexes": ks,
               "rounds": [by_k[k]["rounds"] for k in ks], "median_us": {}, "fit": {}}
        for m in MEASURES:
            med = [by_k[k][m] for k in ks]
            a, b = line_fit([float(k) for k in ks], med)
            row["median_us"][m] = [round(x, 1) for x in med]
            row["fit"][m] = {"at_0_us": round(a, 1), "per_index_us": round(b, 2),
                             "per_entry_us": round(b / ENTRIES_PER_INDEX, 2),
                             "per_index_share": round(b / a, 4) if a > 0 else None}
        out.append(row)
    return out


def bytes_per_trx(lab: dict, workload: str) -> float | None:
    """The backlog's binlog bytes per transaction (the lab JSON's ``backlogs``), None when not recorded."""
    b = (lab.get("backlogs") or {}).get(workload)
    if not b or not b.get("transactions") or not b.get("files"):
        return None
    return sum(f["bytes"] for f in b["files"]) / b["transactions"]


def round_ratios(lab: dict) -> dict[tuple[str, int, str, str], dict[str, list[float]]]:
    """{(config, workers, variant, twin): {measure: [variant / twin per round]}} over the rounds
    holding both (the lab interleaves them: a round's two catch-ups ran minutes apart at most, so
    the VM's drift between rounds cancels)."""
    by_round: dict[tuple[str, int, int], dict[str, dict]] = {}
    for r in lab["runs"]:
        if r.get("phase") in ("relaxed", "durable") and r.get("transactions"):
            by_round.setdefault((r["config"], r["workers"], r.get("round")), {})[r["workload"]] = r
    out: dict[tuple[str, int, str, str], dict[str, list[float]]] = {}
    for (config, workers, _), runs in sorted(by_round.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or 0)):
        for variant, twin, _what in PAIRS:
            if variant in runs and twin in runs:
                cell = out.setdefault((config, workers, variant, twin), {m: [] for m in MEASURES})
                for m in MEASURES:
                    t = per_trx_us(runs[twin], m)
                    if t > 0:
                        cell[m].append(per_trx_us(runs[variant], m) / t)
    return out


def pairs(lab: dict) -> list[dict]:
    """Each :data:`PAIRS` variant against its twin, per (configuration, workers): the difference of
    the medians per transaction, as a share of the twin's, the median over the rounds of each
    round's ratio (``round_ratio``: :func:`round_ratios`), and per byte of binlog the variant adds
    a transaction (where it adds 100 or more: the wide pad's)."""
    out = []
    ratios = round_ratios(lab)
    for (config, workers), by_wl in sorted(medians(lab).items()):
        for variant, twin, what in PAIRS:
            if variant in by_wl and twin in by_wl:
                v, t = by_wl[variant], by_wl[twin]
                rr = ratios.get((config, workers, variant, twin), {})
                row = {"config": config, "workers": workers, "variant": variant, "twin": twin, "what": what,
                       "rounds": [v["rounds"], t["rounds"]],
                       "difference_us": {m: round(v[m] - t[m], 1) for m in MEASURES},
                       "share": {m: round(v[m] / t[m] - 1, 4) if t[m] > 0 else None for m in MEASURES},
                       "round_ratio": {m: round(statistics.median(x), 4) if x else None for m, x in rr.items()}}
                bv, bt = bytes_per_trx(lab, variant), bytes_per_trx(lab, twin)
                events = EVENTS_ADDED.get((variant, twin))
                if events:
                    row["events_added"] = events
                    row["per_event_us"] = {m: round((v[m] - t[m]) / events, 2) for m in MEASURES}
                elif bv is not None and bt is not None and bv - bt >= 100:
                    row["bytes_added"] = round(bv - bt, 1)
                    row["per_byte_us"] = {m: round((v[m] - t[m]) / (bv - bt), 4) for m in MEASURES}
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


def print_pairs(rows: list[dict]) -> None:
    if not rows:
        return
    print("| configuration | workers | variant - twin | " + " | ".join(f"{m}, us" for m in MEASURES) + " |")
    print("|---" * (3 + len(MEASURES)) + "|")
    for p in rows:
        cells = " | ".join(f"{p['difference_us'][m]:+.1f}" + (f" ({p['share'][m]:+.1%})" if p["share"][m] is not None else "")
                           for m in MEASURES)
        print(f"| {p['config']} | {p['workers']} | {p['variant']} - {p['twin']}: {p['what']} | {cells} |")
    print()
    print("Per round, variant / twin (the median over the rounds that hold both):")
    print("| configuration | workers | variant / twin | " + " | ".join(MEASURES) + " |")
    print("|---" * (3 + len(MEASURES)) + "|")
    for p in rows:
        rr = p.get("round_ratio") or {}
        cells = " | ".join(f"{rr[m]:.3f}" if rr.get(m) is not None else "-" for m in MEASURES)
        print(f"| {p['config']} | {p['workers']} | {p['variant']} / {p['twin']} | {cells} |")
    for p in rows:
        if "per_event_us" in p:
            print(f"{p['config']}, {p['workers']} worker(s), {p['variant']} - {p['twin']}: {p['events_added']} binlog "
                  "events more a transaction; per event: "
                  + ", ".join(f"{m} {p['per_event_us'][m]:+.2f} us" for m in MEASURES))
        if "per_byte_us" in p:
            print(f"{p['config']}, {p['workers']} worker(s), {p['variant']} - {p['twin']}: {p['bytes_added']:.0f} bytes of "
                  "binlog more a transaction; per byte: "
                  + ", ".join(f"{m} {p['per_byte_us'][m]:+.4f} us" for m in MEASURES))
    print()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", type=Path, help="a lab JSON of the idx backlogs (lab.py's manycore.json, or .gz)")
    ap.add_argument("--out", type=Path, default=None, help="write the summary and the lab's runs as JSON")
    a = ap.parse_args(argv)
    lab = read_json(a.lab)
    rows, twins = summarize(lab), pairs(lab)
    if not rows and not twins:
        print(f"{a.lab}: no timed catch-ups of the index backlogs (idx0, idx2, ..., uk4, kr, fkr) or of a pair of "
              "twins (stmt1/stmt16, doc5/doc500)", file=sys.stderr)
        return 2
    print_rows(rows)
    print_pairs(twins)
    if a.out:
        keep = ("round", "workload", "config", "workers", "transactions", "seconds", "cpu_s", "counters")
        runs = [{k: r[k] for k in keep if k in r} for r in lab["runs"] if r.get("phase") in ("relaxed", "durable")]
        a.out.write_text(json.dumps({"machine": lab.get("machine"), "mysqld": lab.get("mysqld", {}).get("version"),
                                     "backlogs": lab.get("backlogs"), "entries_per_index": ENTRIES_PER_INDEX,
                                     "rows": rows, "pairs": twins, "runs": runs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
