"""JSON form of ``analyze`` results (sorted keys, plain types: deterministic bytes)."""

from __future__ import annotations

from typing import Any

from ..analysis.results import WRITESET_POLICIES, Analysis, Totals


def _totals(t: Totals) -> dict[str, Any]:
    c = t.recorded
    return {
        "transactions": t.transactions, "rows": t.rows, "bytes": t.bytes,
        "ddl": t.ddl, "statement_based": t.statement_based, "xa": t.xa, "incidents": t.incidents,
        "incomplete": t.incomplete, "first_commit_ts_us": t.first_ts_us, "last_commit_ts_us": t.last_ts_us,
        "span_seconds": round(t.span_seconds, 6), "transactions_per_second": round(t.tps, 3),
        "recorded_clock": {
            "mean_distance": round(c.mean_distance, 4), "parallel_share": round(c.parallel_share, 6),
            "barriers": c.barriers, "depth": c.depth, "ideal_speedup": round(c.ideal_speedup, 4),
            "distance_histogram": dict(c.histogram_rows()),
        },
        "observed_replica_lag": t.observed_lag(),
        "largest_transactions": [{"bytes": b, "rows": r, "gtid": g, "where": w}
                                 for b, r, g, w in t.largest_sorted()],
    }


def _clock(c) -> dict[str, Any]:
    return {"mean_distance": round(c.mean_distance, 4), "parallel_share": round(c.parallel_share, 6),
            "barriers": c.barriers, "depth": c.depth, "ideal_speedup": round(c.ideal_speedup, 4),
            "distance_histogram": dict(c.histogram_rows())}


def analysis_json(a: Analysis) -> dict[str, Any]:
    p = a.policies
    policies = None if p is None else {
        "written_by": p.written.name, "evidence": p.written.evidence, "history_size": p.history_size,
        "commit_order_input": p.commit_order,
        "clocks": {name: _clock(c) for name, c in p.clocks.items()},
        "fallbacks": p.fallbacks,
        "fallback_tables": [{"reason": r, "table": t, "transactions": n} for r, t, n in p.fallback_tables],
        "unknown": [{"what": w, "transactions": n} for w, n in p.unknown],
        "caveats": [{"what": w, "transactions": n} for w, n in p.caveats],
        "history_resets": p.resets,
    }
    note = p.not_computed_note(a.total.transactions) if p is not None else None
    if note:  # only then: the outputs of computed clocks stay as they were
        policies["not_computed"] = {"policies": list(WRITESET_POLICIES), "transactions": p.not_computed(),
                                    "note": note}
    return {
        "policies": policies,
        "files": [{
            "path": f.summary.path, "size": f.summary.size, "server_version": f.summary.server_version,
            "mariadb": f.summary.mariadb, "checksum": f.summary.checksum,
            "compression": f.summary.compression, "tagged_gtids": f.summary.tagged_gtids,
            "row_metadata": f.summary.row_metadata, "events": dict(sorted(f.summary.events.items())),
            "unknown_events": {str(k): v for k, v in sorted(f.summary.unknown_events.items())},
            "truncated_at": f.summary.truncated_at, "warnings": f.summary.warnings,
            **_totals(f.totals),
        } for f in a.files],
        "total": _totals(a.total),
        "warnings": a.warnings,
    }
