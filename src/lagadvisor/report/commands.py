"""The ``simulate`` and ``graph`` reports: their JSON documents and their terminal rendering
(the CLI only wires options to the core and hands the results here)."""

from __future__ import annotations

import json

from rich.console import Console

from ..kinds import Applier
from ..sim.model import CSA_MODEL


def simulate_doc(rows, *, transactions: int, catch_up: bool, durable: bool, mode: str, cost, window_s: float,
                 written_by: str, applier: Applier = Applier.MTA, not_computed: str | None = None) -> dict:
    """``simulate --format json``; ``applier`` and ``applier_model`` only for the CSA (absent: the
    MTA, so the MTA's documents stay as they were)."""
    results = [{**r.as_json(), "apply_seconds_band": cost.time_band_json(r.apply_seconds, r.workers)} for r in rows]
    doc = {"transactions": transactions, "catch_up": catch_up, "durable": durable, "mode": mode,
           "cost_model": json.loads(cost.to_json()), "cost_model_origin": cost.origin(),
           "window_seconds": window_s if not catch_up else 0, "written_by": written_by, "results": results}
    if applier is Applier.CSA:
        doc.update(applier=applier.value, applier_model=CSA_MODEL)
    if not_computed:  # only then: the WRITESET rows repeat the commit-order input
        from ..analysis.results import WRITESET_POLICIES

        doc["not_computed"] = {"policies": list(WRITESET_POLICIES), "note": not_computed}
        for r in results:
            r["not_computed"] = r["policy"] in WRITESET_POLICIES
    return doc


def render_simulate(rows, console: Console, *, transactions: int, durable: bool, preserve_commit_order: str,
                    cost, catch_up: bool, applier: Applier = Applier.MTA, not_computed: str | None = None) -> None:
    """The policy x workers table (a calibrated model's error band in the apply column's head),
    then the worst lag windows when there are any, then where the cost model comes from."""
    from .tables import simulate_table, window_table

    cores = cost.cores
    console.print(simulate_table(rows, f"{transactions:,} transactions; replica "
                                       f"{'durable' if durable else 'relaxed'}, preserve_commit_order="
                                       f"{preserve_commit_order}, {cores} cores"
                                       + ("; catch-up" if catch_up else "; arrivals at source commit times"),
                                 bands=[cost.band_at(r.workers) for r in rows], catch_up=catch_up,
                                 not_computed=not_computed))
    wt = window_table(rows)
    if wt is not None:
        console.print(wt)
    err = max((r.lag_relative_error for r in rows), default=0.0)
    if err:
        console.print(f"(lag percentiles streamed over {transactions:,} transactions: each within {err:.1%} of "
                      "the exact value; maximum and time above the threshold exact)")
    if applier is Applier.CSA:
        console.print(f"applier: {CSA_MODEL}")
    # the model file's measured_on is the user's text: printed, not read as markup
    if cost.error_band > 0:
        console.print(f"cost model: calibrated, {cost.measured()}; {cost.band_words()}; "
                      "speedups are ratios and carry less of it", markup=False)
    else:
        console.print(f"cost model: {cost.origin()}: absolute times are indicative, speedups hold better",
                      markup=False)


def graph_doc(s, policy: str, top: int, not_computed: str | None = None) -> dict:
    """``graph --format json`` from a ``depgraph.graph.GraphSummary`` (``not_computed``: the
    sentence saying the policy's writesets were not computed for some transactions)."""
    def ranked(counter, name):
        return [{name: str(k), "dependencies": n} for k, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]

    return {"policy": policy, "transactions": s.transactions, "depth": s.depth, "width": s.width,
            "critical_path_seconds": round(s.critical_path_us / 1e6, 6),
            "serial_seconds": round(s.serial_us / 1e6, 6), "parallelism": round(s.parallelism, 4),
            "conflicts": s.conflicts, "hot_rows": ranked(s.hot_rows, "key"), "hot_tables": ranked(s.hot_tables, "table"),
            "hot_rows_error": s.hot_rows_error,
            "kept": {"nodes": s.graph.number_of_nodes(), "edges": s.graph.number_of_edges()},
            **({"not_computed": not_computed} if not_computed else {})}


def render_graph(doc: dict, s, console: Console, hot_rows_max: int) -> None:
    from .tables import hot_table

    mark = "*" if doc.get("not_computed") else ""
    console.print(f"{doc['policy']}{mark}: {s.transactions:,} transactions, critical path {s.depth:,} transactions / "
                  f"{s.critical_path_us / 1e6:,.3f} s of {s.serial_us / 1e6:,.3f} s serial apply "
                  f"(parallelism {s.parallelism:,.2f}x), widest level {s.width:,}, {s.conflicts:,} row conflicts")
    if mark:
        console.print(f"* {doc['not_computed']}")
    for title, items, col in (("hot rows", doc["hot_rows"], "key"), ("hot tables", doc["hot_tables"], "table")):
        console.print(hot_table(title, items, col))
    if s.hot_rows_error:
        console.print(f"(more than {hot_rows_max:,} rows conflicted: the less frequent were dropped as they came, "
                      f"so a hot row's count may be short by up to {s.hot_rows_error:,})")


__all__ = ["graph_doc", "render_graph", "render_simulate", "simulate_doc"]
