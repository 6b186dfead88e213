"""``simulate --jobs N``: the files' facts read on N processes and put together in binlog order.

The facts of a file depend on nothing read before it but the schema: the server restarts the
logical clock and empties the writeset history at every rotation
(``Transaction_dependency_tracker::rotate``), and the scan sizes are per file
(:class:`~.run.ScanSizes`). So each file is read alone from the catalog as given; the DDL each
file applied is collected, and every file after the first one holding DDL is read again from the
catalog those statements produce (as ``analyze --jobs`` does, ``analysis/parallel.py``). The result
equals the sequential read fact for fact (tested).
"""

from __future__ import annotations

import copy
from array import array
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context

from ..binlog.scan import note_chain
from ..cpus import usable_cpus
from ..depgraph.pipeline import ClockOptions, ClockRun
from ..depgraph.read import prepare
from .build import TrxFacts
from .facts import FactColumns, FactsRead, fact_columns, read_facts


def _read_one(args: tuple[str, ClockOptions]) -> tuple[object, list, list, int]:
    """(facts of one file as FactColumns or a TrxFacts list, the DDL it applied, its summaries, its
    transactions whose writeset was not computed)."""
    path, opts = args
    got = fact_columns([path], opts, prepare([path], opts))
    return got.facts, list(got.applied), list(got.summaries), got.not_computed


def _numbered(part, index: int) -> list[TrxFacts]:
    """One file's facts as ``TrxFacts`` numbered as file ``index`` of the run."""
    if isinstance(part, FactColumns):
        part.file_idx[:] = array("q", [index]) * len(part)
        return part.to_facts()
    return [f if f.file_idx == index else replace(f, file_idx=index) for f in part]


def read_facts_parallel(paths: list[str], options: ClockOptions, run: ClockRun, jobs: int) -> FactsRead:
    """:func:`~.facts.read_facts` on ``jobs`` processes (0: one per core); the same facts, and
    the files' read summaries (truncated-tail warnings) in file order."""
    from ..schema.ddl import UnsupportedDDL, apply_statement
    from ..schema.model import Catalog

    paths = list(paths)
    jobs = min(jobs or usable_cpus(), len(paths))
    if jobs <= 1:
        return read_facts(paths, options, run)
    opts = replace(options, written=run.written, history_size=run.history_size, commit_order=run.commit_order)
    from .store import FactStore

    summaries: list = []
    not_computed = 0
    store = FactStore()   # the parts in file order, spilled past its limit
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("fork")) as pool:
        initial = opts.catalog if opts.catalog is not None else Catalog()
        current = None   # the catalog after the DDL of the files before (None: none yet)
        for i, part in enumerate(pool.map(_read_one, [(p, opts) for p in paths])):
            if opts.use_binlog_ddl and current is not None:
                # an earlier file changed the schema: read this one again from that schema
                part = pool.submit(_read_one, (paths[i], replace(opts, catalog=copy.deepcopy(current)))).result()
            cols, ddl, summaries_i, unknown = part
            not_computed += unknown
            if opts.use_binlog_ddl and ddl and i + 1 < len(paths):
                current = current if current is not None else copy.deepcopy(initial)
                for db, query in ddl:
                    try:
                        apply_statement(current, query, db)
                    except UnsupportedDDL:
                        pass  # the file's own reading reported it
            summaries.extend(summaries_i)
            if not isinstance(cols, FactColumns):   # read by the reference
                cols = FactColumns.of_facts(cols)
            cols.file_idx[:] = array("q", [i]) * len(cols)
            store.add(cols)
    note_chain(summaries)
    return FactsRead(store, tuple(summaries), not_computed=not_computed)


__all__ = ["read_facts_parallel"]
