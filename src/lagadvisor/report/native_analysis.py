"""``analyze`` through the native core: the same :class:`~.analysis.Analysis`, built from the
counters the native analyzer keeps (see :mod:`lagadvisor.native`).

Returns None when the native core is unavailable or gives up on the run (``NativeFallback``);
the caller then reads the run with the reference.
"""

from __future__ import annotations

import copy
import os
from array import array
from collections import Counter
from dataclasses import replace
from typing import Callable

from ..binlog import FileSummary
from ..depgraph.clock import ClockStats
from ..depgraph.pipeline import ClockOptions, ClockRun
from ..depgraph.policies import POLICIES
from ..errors import BinlogError
from ..native import Bridge, load, native_summary
from ..writeset.extract import approximated_caveat
from ..writeset.tracker import KeyTracker
from ..writeset.weights import APPROXIMATED
from .analysis import Analysis, FileAnalysis, PolicyResults, Totals

_COMMIT_ORDER = {"recorded": 0, "serial": 1, "flush-groups": 2}
PROGRESS_EVERY = 2048


def _clock(d: dict) -> ClockStats:
    c = ClockStats()
    c.transactions = d["transactions"]
    c.barriers = d["barriers"]
    c.parallel = d["parallel"]
    c.distance_sum = d["distance_sum"]
    c.depth = d["depth"]
    c.histogram = Counter(d["histogram"])
    return c


def _totals(d: dict) -> Totals:
    t = Totals()
    for name in ("transactions", "rows", "bytes", "ddl", "statement_based", "xa", "incomplete"):
        setattr(t, name, d[name])
    t.incidents = d["incidents"]
    t.first_ts_us = d["first_ts_us"]
    t.last_ts_us = d["last_ts_us"]
    t.recorded = _clock(d["recorded"])
    t.largest = list(d["largest"])
    t.tables = Counter(dict(d["tables"]))
    t.sessions = set(d["sessions"])
    lags = array("q")
    lags.frombytes(d["lags_us"])
    t.lags_us = lags
    return t


def _summary(path: str, size: int, bridge: Bridge, r: dict) -> FileSummary:
    """``FileSummary.fill`` from the native counters."""
    return native_summary(path, size, bridge.first_fde, r)


def analyze_native(paths: list[str], options: ClockOptions, run: ClockRun,
                   on_progress: Callable[[str, int], None] | None) -> Analysis | None:
    native = load()
    if native is None:
        return None
    # The native run applies the binlog's DDL to its own copy of the catalog, so a fallback
    # starts the reference from the catalog as given.
    tracker = KeyTracker(copy.deepcopy(options.catalog), use_binlog_ddl=options.use_binlog_ddl,
                         what_if=options.what_if)
    bridge = Bridge(tracker, on_progress)
    approximated_before = dict(APPROXIMATED)
    analyzer = native.Analyzer(run.history_size, _COMMIT_ORDER[run.commit_order], tracker.catalog.version,
                               bridge, PROGRESS_EVERY if on_progress is not None else 0)
    files: list[FileAnalysis] = []
    try:
        for i, path in enumerate(paths):
            try:
                size = os.path.getsize(path)
            except OSError:
                return None  # the reference reports it
            bridge.begin_file()
            r = analyzer.read_file(path, i)
            files.append(FileAnalysis(_summary(path, size, bridge, r), _totals(r["totals"])))
    except native.NativeFallback as err:
        if os.environ.get("LAGADVISOR_NATIVE_DEBUG"):
            import sys

            print(f"lagadvisor: native core gave up: {err}", file=sys.stderr)
        return None
    except BinlogError:
        return None
    res = analyzer.finish()
    # Values outside a collation's weight table, hashed through the bridge (counted in values).
    outside = sorted(c for c, n in APPROXIMATED.items() if n != approximated_before.get(c))
    if outside:
        res["caveats"] = [*res["caveats"], (approximated_caveat(outside),
                                            sum(APPROXIMATED[c] - approximated_before.get(c, 0) for c in outside))]
    clocks = {name: _clock(c) for name, c in zip(POLICIES, res["clocks"])}
    policies = PolicyResults(
        run.written, run.history_size, run.commit_order, clocks,
        dict(sorted(res["fallbacks"].items(), key=lambda kv: (-kv[1], kv[0]))),
        sorted(res["fallback_tables"], key=lambda x: (-x[2], x[0], x[1])),
        sorted(res["unknown"], key=lambda kv: (-kv[1], kv[0])),
        sorted(res["caveats"], key=lambda kv: (-kv[1], kv[0])),
        res["resets"],
    )
    return Analysis(files, _totals(res["total"]), policies, list(tracker.applied))


__all__ = ["analyze_native", "replace"]
