"""The simulation's input, :class:`~.build.TrxFacts` per transaction, for a run of files.

Read by the native core when it is available (``Analyzer.collect_facts``: one column per fact,
kept while it reads, see ``native/src/reader/mod.rs``); otherwise, and whenever the native core
gives the run back (``NativeFallback``: MariaDB, gzip, a key it does not hash, an error...),
by the reference: :func:`~.run.facts_of` over :func:`~..depgraph.pipeline.run_clocks`. Both
give the same facts (``tests/native/test_facts.py``).
"""

from __future__ import annotations

import copy
import os
from array import array

from ..depgraph.pipeline import ClockOptions, ClockRun, run_clocks
from ..errors import BinlogError
from .build import TrxFacts
from .run import facts_of

#: The native columns, in ``TrxFacts`` order (``clocks`` = the four from recorded on).
FACT_COLUMNS = ("file_idx", "seq", "recorded", "commit_order", "writeset", "writeset_session",
                "commit_ts_us", "inserts", "updates", "deletes", "nbytes", "dbset")
_COMMIT_ORDER = {"recorded": 0, "serial": 1, "flush-groups": 2}


def read_facts(paths: list[str], options: ClockOptions, run: ClockRun) -> list[TrxFacts]:
    """Facts of every transaction of ``paths`` in binlog order (``run`` from ``prepare``)."""
    facts = native_facts(paths, options, run)
    if facts is not None:
        return facts
    return reference_facts(paths, run)


def reference_facts(paths: list[str], run: ClockRun) -> list[TrxFacts]:
    index = {f: i for i, f in enumerate(paths)}
    return [facts_of(t, c, index.get(t.file, 0)) for t, ws, c in run_clocks(paths, run)]


def native_facts(paths: list[str], options: ClockOptions, run: ClockRun) -> list[TrxFacts] | None:
    """The facts read by the native core, or None (unavailable, or it gave the run back)."""
    from ..native import Bridge, load
    from ..writeset.tracker import KeyTracker

    native = load()
    if (native is None or options.labels or len(set(paths)) != len(paths)
            or any(hasattr(p, "read_transactions") for p in paths)):  # streamed files: reference
        return None
    # As in analyze_native: the native run changes its own copy of the catalog, so a fallback
    # starts the reference from the catalog as given.
    tracker = KeyTracker(copy.deepcopy(options.catalog), use_binlog_ddl=options.use_binlog_ddl,
                         what_if=options.what_if)
    bridge = Bridge(tracker)
    analyzer = native.Analyzer(run.history_size, _COMMIT_ORDER[run.commit_order], tracker.catalog.version,
                               bridge, 0)
    analyzer.collect_facts()
    try:
        for i, path in enumerate(paths):
            if not os.path.isfile(path):
                return None  # the reference reports it
            bridge.begin_file()
            analyzer.read_file(path, i)
    except native.NativeFallback as err:
        if os.environ.get("LAGADVISOR_NATIVE_DEBUG"):
            import sys

            print(f"lagadvisor: native core gave up: {err}", file=sys.stderr)
        return None
    except BinlogError:
        return None  # the reference raises it with its context
    return facts_from_columns(analyzer.take_facts())


def facts_from_columns(d: dict) -> list[TrxFacts]:
    """``TrxFacts`` from the native columns (``Analyzer.take_facts``). MariaDB's ``commit_id``
    is always None: the native core gives MariaDB binlogs to the reference."""
    cols = []
    for name in FACT_COLUMNS:
        a = array("q")
        a.frombytes(d[name])
        cols.append(a)
    names = [b.decode("utf-8", "surrogateescape") for b in d["db_names"]]
    dbsets = [tuple(sorted(names[i] for i in s)) for s in d["dbsets"]]
    return [TrxFacts(fi, seq, (rec, co, ws, wss), ts, ins, upd, dele, nb, dbsets[k], None)
            for fi, seq, rec, co, ws, wss, ts, ins, upd, dele, nb, k in zip(*cols)]


__all__ = ["FACT_COLUMNS", "facts_from_columns", "native_facts", "read_facts", "reference_facts"]
