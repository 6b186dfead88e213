"""``analyze --jobs N``: files read on N processes, results merged into one :class:`Analysis`.

The clocks are independent per file: the server restarts ``sequence_number`` and empties the
writeset history at every rotation (``Transaction_dependency_tracker::rotate``), and
:class:`~lagadvisor.depgraph.policies.ClockComputer` does the same. What is not independent is
the schema knowledge: DDL in one file changes the keys of the next. So the files are read in
parallel from the catalog as given; if a file (other than the last) holds DDL, its DDL is
collected (a reader pass without row decoding) and the files after it are read again from the
catalog those statements produce. The merged result equals the sequential one (tested).
"""

from __future__ import annotations

import copy
import heapq
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context

from ..binlog.scan import note_chain
from ..cpus import usable_cpus
from ..depgraph.clock import ClockStats
from ..depgraph.pipeline import ClockOptions
from ..depgraph.read import prepare
from ..schema.ddl import UnsupportedDDL, apply_statement
from .analyze import analyze
from .results import TOP_N, Analysis, PolicyResults, Totals


def _one(args: tuple[str, ClockOptions]) -> Analysis:
    path, opts = args
    return analyze([path], opts)


def merge_clock(into: ClockStats, other: ClockStats) -> None:
    """Append ``other`` (later files) to ``into``: a file boundary is a barrier, so depths add."""
    into.transactions += other.transactions
    into.barriers += other.barriers
    into.parallel += other.parallel
    into.distance_sum += other.distance_sum
    into.histogram.update(other.histogram)
    into.depth += other.depth


def merge_totals(into: Totals, other: Totals) -> None:
    for name in ("transactions", "rows", "bytes", "ddl", "statement_based", "xa", "incidents", "incomplete"):
        setattr(into, name, getattr(into, name) + getattr(other, name))
    if other.first_ts_us is not None:
        into.first_ts_us = other.first_ts_us if into.first_ts_us is None else min(into.first_ts_us, other.first_ts_us)
    if other.last_ts_us is not None:
        into.last_ts_us = other.last_ts_us if into.last_ts_us is None else max(into.last_ts_us, other.last_ts_us)
    merge_clock(into.recorded, other.recorded)
    into.largest = heapq.nlargest(TOP_N, list(into.largest) + list(other.largest))
    heapq.heapify(into.largest)
    into.tables.update(other.tables)
    into.lags.merge(other.lags)
    into.commit_groups += other.commit_groups


def merge(parts: list[Analysis]) -> Analysis:
    total = Totals()
    files = []
    for a in parts:
        files += a.files
        merge_totals(total, a.total)
    note_chain([f.summary for f in files])
    ps = [a.policies for a in parts if a.policies is not None]
    if not ps:
        return Analysis(files, total, None)
    first = ps[0]
    clocks = {name: ClockStats() for name in first.clocks}
    fallbacks: Counter = Counter()
    tables: Counter = Counter()
    unknown: Counter = Counter()
    caveats: Counter = Counter()
    resets = 0
    for p in ps:
        for name, c in p.clocks.items():
            merge_clock(clocks[name], c)
        fallbacks.update(p.fallbacks)
        tables.update({(r, t): n for r, t, n in p.fallback_tables})
        unknown.update(dict(p.unknown))
        caveats.update(dict(p.caveats))
        resets += p.resets
    policies = PolicyResults(
        first.written, first.history_size, first.commit_order, clocks,
        dict(sorted(fallbacks.items(), key=lambda kv: (-kv[1], kv[0]))),
        sorted(((r, t, n) for (r, t), n in tables.items()), key=lambda x: (-x[2], x[0], x[1])),
        sorted(unknown.items(), key=lambda kv: (-kv[1], kv[0])),
        sorted(caveats.items(), key=lambda kv: (-kv[1], kv[0])),
        resets)
    return Analysis(files, total, policies)


def _relevant(cat, tables) -> tuple:
    """What the key plans of ``tables`` read from the catalog: their definitions, their foreign
    keys' parents, and whether another table references them (``plan_table``)."""
    def norm(t):  # where a definition came from does not change its plan
        return replace(t, source="") if t is not None else None

    out = []
    for name in sorted(tables):
        db, _, table = name.partition(".")
        t = cat.get(db, table)
        parents = tuple(norm(cat.get(fk.ref_db, fk.ref_table)) for fk in t.foreign_keys) if t else ()
        out.append((name, norm(t), parents, cat.is_fk_parent(db, table)))
    return tuple(out)


def _ddl_catalogs(paths: list[str], parts: list[Analysis], opts: ClockOptions) -> list:
    """The catalog a file must be read again from, or None when the DDL of the files before it
    changes nothing its tables' key plans read (then the first reading stands)."""
    from ..schema.model import Catalog

    catalogs: list = [None] * len(paths)
    if not opts.use_binlog_ddl:
        return catalogs
    initial = opts.catalog if opts.catalog is not None else Catalog()
    current = None
    for i, a in enumerate(parts):
        if current is not None:
            written = set(a.total.tables)
            if _relevant(current, written) != _relevant(initial, written):
                catalogs[i] = copy.deepcopy(current)
        if a.ddl and i + 1 < len(paths):
            if current is None:
                current = copy.deepcopy(initial)
            for db, query in a.ddl:
                try:
                    apply_statement(current, query, db)
                except UnsupportedDDL:
                    pass  # the reading of the file that holds it reports it
    return catalogs


def analyze_parallel(paths: list[str], options: ClockOptions | None, jobs: int) -> Analysis:
    paths = list(paths)
    options = options or ClockOptions()
    jobs = min(jobs or usable_cpus(), len(paths))
    if jobs <= 1 or len(set(paths)) != len(paths):
        return analyze(paths, options)
    run = prepare(paths, options)  # one verdict on the written policy for every file
    opts = replace(options, written=run.written, history_size=run.history_size, commit_order=run.commit_order)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("fork")) as pool:
        parts = list(pool.map(_one, [(p, opts) for p in paths]))
        catalogs = _ddl_catalogs(paths, parts, opts)
        redo = [i for i, c in enumerate(catalogs) if c is not None]
        if redo:
            again = pool.map(_one, [(paths[i], replace(opts, catalog=catalogs[i])) for i in redo])
            for i, a in zip(redo, again):
                parts[i] = a
    return merge(parts)
