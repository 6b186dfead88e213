"""The fleet's tasks: plain functions of picklable values (``cluster`` schedules them; only the
what-if passes reach back to the cluster, through ``cluster.map_on_cluster``).

Per server, three kinds of task, chained like ``advise``'s one pass but split where the split is
exact (the design of ``analyze --jobs``, :mod:`lagadvisor.analysis.parallel`):

1. ``verdict``: which policy wrote the server's clock, its history size and commit-order parent
   (``prepare`` over the server's files: a sample read without row decoding). One per server.
2. ``read_part``: one file read with labelled writesets, as ``advise``'s pass reads it: its
   :class:`~lagadvisor.analysis.results.Analysis`, its simulation facts as int64 columns, and its
   row-conflict counters. The server restarts ``sequence_number`` and the writeset history at
   every rotation, so a file's clocks do not depend on the file before it; only the schema does
   (DDL), which step 3 checks.
3. ``advise_server``: the files' parts merged in order (``analysis.parallel.merge``; a file whose
   tables' key plans the earlier files' DDL changed is read again from that catalog, as
   ``analyze --jobs`` does), the dependency-graph summary replayed from the facts (the same
   ``GraphBuilder`` arithmetic, in binlog order), then the rules, the plan and the simulations
   chained over all the server's transactions: the serial part. A rule's what-if (another pass
   over the files with a changed schema or history) runs as one ``what_if_part`` task per file.

Errors are values (``error`` set, one line), so a corrupt file makes its server's result an
error without an exception crossing the cluster; only a dying worker makes Dask run a task again.
Remote files (fsspec URLs) are copied to a per-run folder on the worker that reads them and named
by their URL in everything reported.
"""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
import tempfile
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

from ..depgraph.pipeline import ClockOptions, WrittenPolicy
from ..depgraph.read import prepare
from ..errors import LagAdvisorError
from ..kinds import CLOCKS, CommitOrderInput, Policy
from ..server.schema import ServerSettings
from ..sim.build import TrxFacts
from ..sim.model import CostModel
from .spec import _one_line, is_url, local_path

#: The per-transaction columns a file part carries (``TrxFacts`` as int64 arrays).
COLUMNS = ("file_idx", "seq", *(c.column for c in CLOCKS), "commit_ts_us",
           "inserts", "updates", "deletes", "nbytes", "dbset", "commit_id", "mariadb_flags", "scan_rows",
           "fk_checks", "index_entries", "events")
_NONE = -(2 ** 63)  # a value the columns never hold: stands for None (MariaDB's commit_id absent, ...)


@dataclass(frozen=True)
class ServerJob:
    """Everything the tasks of one server need (built on the client, shipped to the workers)."""

    name: str
    files: tuple[str, ...]          # as reported: local paths or URLs
    options: ClockOptions           # as advise builds them (catalog from --schema/--host)
    cost: CostModel
    settings: ServerSettings | None
    run_id: str                     # names the workers' folder for remote copies
    target_version: tuple[int, int, int] | None = None  # advise --target-version (the fleet file's target_version)
    cores_given: bool = False       # the entry named the replica's cores (advise --cores)
    cores_read: str = ""            # not named: how the server's settings showed them (server.cores)
    copies: tuple[str, ...] = ()    # the byte-identical copies left out of files (inputs.distinct_files)
    reproduce: tuple[str, ...] = ()  # the simulate options besides a configuration's (advise's reproduce)


@dataclass(frozen=True)
class Verdict:
    written: WrittenPolicy | None = None
    history_size: int = 0
    commit_order: CommitOrderInput | None = None
    error: str | None = None


@dataclass
class FilePart:
    """One file's share of the server's pass."""

    index: int
    analysis: object = None                               # analysis.results.Analysis (one file)
    columns: dict[str, array] = field(default_factory=dict)
    dbsets: list[tuple[str, ...]] = field(default_factory=list)
    conflicts: int = 0
    hot_rows: Counter = field(default_factory=Counter)
    hot_tables: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    nbytes: int = 0
    error: str | None = None


@dataclass
class ServerResult:
    name: str
    files: list[str]
    advice: dict | None = None     # the advice document, byte for byte advise's --format json
    row: dict | None = None        # the fleet table's row
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0           # the server task's time (merge, rules, plan, simulations, what-ifs)
    what_if_seconds: float = 0.0   # of which waiting for its what-if passes (per-file tasks)


# -- files -----------------------------------------------------------------------------------------

def cache_dir(run_id: str) -> str:
    base = os.environ.get("LAGADVISOR_FLEET_CACHE") or os.path.join(tempfile.gettempdir(), "lagadvisor-fleet")
    return os.path.join(base, run_id)


def stage(location: str, run_id: str) -> str:
    """A local path for ``location``: itself when local, else a copy made once per worker and run
    (fsspec reads it: credentials from its usual environment and config)."""
    if not is_url(location):
        return local_path(location)
    import fsspec

    dest = staged_path(location, run_id)
    folder = os.path.dirname(dest)
    if os.path.exists(dest):
        return dest
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out, fsspec.open(location, "rb") as src:
            shutil.copyfileobj(src, out, 4 << 20)
        os.replace(tmp, dest)  # concurrent tasks on one worker: the last complete copy wins
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return dest


def staged_path(location: str, run_id: str) -> str:
    """Where :func:`stage` copies a remote file (its name kept, in a folder per URL)."""
    key = hashlib.sha256(location.encode()).hexdigest()[:16]
    return os.path.join(cache_dir(run_id), key, location.rstrip("/").rsplit("/", 1)[-1])


def _unstage(text: str, job: "ServerJob") -> str:
    """A message naming staged copies names their URLs instead."""
    for f in job.files:
        if is_url(f):
            text = text.replace(staged_path(f, job.run_id), f)
    return text


def remove_cache(run_id: str) -> None:
    shutil.rmtree(cache_dir(run_id), ignore_errors=True)


def _error(err: BaseException, local: str | None = None, shown: str | None = None) -> str:
    if isinstance(err, LagAdvisorError):
        text = _one_line(err)
    elif isinstance(err, OSError) and err.strerror:
        text = f"{err.filename or shown or ''}: {err.strerror}".lstrip(": ")
    else:
        text = f"{shown + ': ' if shown else ''}{type(err).__name__}: {_one_line(err)}"
    if local and shown and local != shown:
        text = text.replace(local, shown)
    return text


# -- 1. the server's verdict ---------------------------------------------------------------------

def verdict(job: ServerJob) -> Verdict:
    try:
        run = prepare(_sampled_files(job), job.options)
        return Verdict(run.written, run.history_size, run.commit_order)
    except Exception as err:  # noqa: BLE001 - the reader's or an fsspec backend's: one line, not raised
        return Verdict(error=_unstage(_error(err), job))


def _sampled_files(job: ServerJob) -> list[str]:
    """The files ``prepare``'s detection reads, as local paths. Local files: all of them (nothing
    to copy). Remote ones are copied one at a time until the detection has what it reads: the
    first file decides for 8.4+ and MariaDB, else the first ``DETECT_SAMPLE`` clocked
    transactions do; so the verdict is the one over all files without copying them all here."""
    if not any(is_url(f) for f in job.files):
        return [local_path(f) for f in job.files]
    from ..binlog.framing import version_tuple
    from ..depgraph.pipeline import DETECT_SAMPLE
    from ..depgraph.read import _sample, peek_server
    from ..versions import writeset_only

    out: list[str] = []
    for f in job.files:
        out.append(stage(f, job.run_id))
        version, mariadb = peek_server(out[0])
        if mariadb or writeset_only(version_tuple(version)):
            break
        if sum(1 for t, _ in _sample(out, DETECT_SAMPLE) if t is not None) >= DETECT_SAMPLE:
            break
    return out


def _run_options(job: ServerJob, v: Verdict, catalog=None) -> ClockOptions:
    """``advise``'s pass options with the server's verdict fixed (so one file reads as it does in
    the run of all of them)."""
    cat = job.options.catalog if catalog is None else catalog
    return replace(job.options, labels=True, catalog=copy.deepcopy(cat), written=v.written,
                   history_size=v.history_size, commit_order=v.commit_order)


# -- 2. one file ---------------------------------------------------------------------------------

def read_part(job: ServerJob, index: int, v: Verdict, catalog=None) -> FilePart:
    """File ``index`` of the server read as ``advise.context.gather`` reads it."""
    from ..depgraph.graph import GraphBuilder
    from ..analysis.analyze import analyze
    from ..sim.run import ScanSizes, facts_of

    if v.error is not None:
        return FilePart(index, error=v.error)
    shown = job.files[index]
    local = None
    start = time.perf_counter()
    try:
        local = stage(shown, job.run_id)
        enc = _Encoder()
        gb = GraphBuilder(Policy.WRITESET, job.cost.graph_weights(), None)
        scans = ScanSizes()

        def observe(t, ws, c):
            enc.add(facts_of(t, c, index, scans.step(t, ws), ws.fk_checks, ws.index_entries))
            gb.add(t, ws, c)

        a = analyze([local], _run_options(job, v, catalog), observe=observe)
        cols, dbsets = enc.cols, enc.dbsets
    except Exception as err:  # noqa: BLE001 - one line, whatever the reader or fsspec raised
        return FilePart(index, error=_error(err, local, shown), seconds=time.perf_counter() - start)
    if local != shown:
        _rename(a, local, shown)
    return FilePart(index, a, cols, sorted(dbsets, key=dbsets.get), gb.s.conflicts, gb.s.hot_rows,
                    gb.s.hot_tables, time.perf_counter() - start, sum(fa.summary.size for fa in a.files))


class _Encoder:
    """``TrxFacts`` into int64 columns (``dbs`` as an index into the distinct sets)."""

    def __init__(self) -> None:
        self.cols = {c: array("q") for c in COLUMNS}
        self.dbsets: dict[tuple[str, ...], int] = {}

    def add(self, f: TrxFacts, file_idx: int | None = None) -> None:
        vals = (f.file_idx if file_idx is None else file_idx, f.seq, *f.clocks, f.commit_ts_us, f.inserts,
                f.updates, f.deletes, f.nbytes, self.dbsets.setdefault(f.dbs, len(self.dbsets)), f.commit_id,
                f.mariadb_flags, f.scan_rows, f.fk_checks, f.index_entries, f.events)
        for name, val in zip(COLUMNS, vals):
            self.cols[name].append(_NONE if val is None else val)


def what_if_part(job: ServerJob, index: int, v: Verdict, what_if, history_size: int | None, catalog) -> FilePart:
    """File ``index``'s facts under a what-if (added primary keys, dropped foreign keys, hot rows
    ignored, a larger history), read as ``Context.what_if_facts`` reads the whole run: the same
    options with the server's verdict fixed, from the catalog this file is read from."""
    from ..sim.facts import read_facts

    shown = job.files[index]
    local = None
    start = time.perf_counter()
    try:
        local = stage(shown, job.run_id)
        opts = replace(job.options, what_if=what_if, labels=bool(what_if.ignore_rows),
                       catalog=copy.deepcopy(catalog), written=v.written, commit_order=v.commit_order,
                       history_size=history_size or job.options.history_size or v.history_size)
        enc = _Encoder()
        for f in read_facts([local], opts, prepare([local], opts)).facts:
            enc.add(f, index)  # read alone, the file is file 0
    except Exception as err:  # noqa: BLE001 - one line, as in read_part
        return FilePart(index, error=_error(err, local, shown), seconds=time.perf_counter() - start)
    return FilePart(index, None, enc.cols, sorted(enc.dbsets, key=enc.dbsets.get), seconds=time.perf_counter() - start)


def map_on_cluster(fn, args: list[tuple], name: str) -> list:
    """``fn(*a)`` for each ``a``: as tasks of the cluster when called from a task on a Dask worker
    (``worker_client`` secedes from the worker's thread pool while it waits, so a one-thread
    worker does not deadlock), else here, in order."""
    try:
        from distributed import get_worker, worker_client

        get_worker()
    except (ImportError, ValueError):
        return [fn(*a) for a in args]
    import uuid

    tok = uuid.uuid4().hex[:8]
    # Dask sends keys as msgpack text (UTF-8): a server named by a directory whose name is not
    # UTF-8 (os.fsdecode's surrogates) would fail the scheduler's message, not just this task
    name = name.encode("utf-8", "backslashreplace").decode("utf-8")
    with worker_client() as client:
        futures = [client.submit(fn, *a, key=f"{name}-{tok}-{i}", pure=False) for i, a in enumerate(args)]
        return client.gather(futures)


def _what_ifs_per_file(job: ServerJob, v: Verdict, catalogs: list):
    """The context's what-if passes split per file like the first pass: one ``what_if_part``
    task per file on the cluster (from inside the server task, which leaves its worker slot
    while it waits), or in this process when not on a Dask worker: ``Context.what_ifs`` (the
    context caches what it returns), and the seconds waited for them so far (one item)."""
    waited = [0.0]

    def what_if_facts(what_if, history_size=None):
        start = time.perf_counter()
        args = [(job, i, v, what_if, history_size, catalogs[i] if catalogs[i] is not None else job.options.catalog)
                for i in range(len(job.files))]
        parts = map_on_cluster(what_if_part, args, f"whatif-{job.name}")
        bad = next((p.error for p in parts if p.error is not None), None)
        if bad is not None:
            raise LagAdvisorError(bad)
        waited[0] += time.perf_counter() - start
        return facts_from(parts)

    return what_if_facts, waited


def _rename(a, local: str, shown: str) -> None:
    """Name a staged copy by its URL in everything the analysis reports."""
    for fa in a.files:
        s = fa.summary
        s.path = shown
        s.warnings = [w.replace(local, shown) for w in s.warnings]
        fa.totals.largest = [(b, r, g, w.replace(local, shown)) for b, r, g, w in fa.totals.largest]
    a.total.largest = [(b, r, g, w.replace(local, shown)) for b, r, g, w in a.total.largest]


# -- 3. the server ------------------------------------------------------------------------------

def facts_from(parts: list[FilePart]) -> list[TrxFacts]:
    out: list[TrxFacts] = []
    for p in parts:
        c = p.columns
        for (fi, seq, rec, co, ws, wss, ts, ins, upd, dele, nb, dbs, cid, flags, scan, fk, ie, ev) in zip(
                *(c[n] for n in COLUMNS)):
            out.append(TrxFacts(fi, seq, tuple(None if x == _NONE else x for x in (rec, co, ws, wss)),
                                None if ts == _NONE else ts, ins, upd, dele, nb, p.dbsets[dbs],
                                None if cid == _NONE else cid, flags, scan, fk, ie, ev))
    return out


def graph_from(parts: list[FilePart], facts: list[TrxFacts], cost: CostModel):
    """The WRITESET graph summary ``gather`` builds, from the facts (depth, critical path, width:
    the same ``GraphBuilder.add`` arithmetic in the same order) and the files' row conflicts
    (counted per file: the builder forgets its writers at every file, as the server does)."""
    from ..depgraph.graph import GraphBuilder

    gb = GraphBuilder(Policy.WRITESET, cost.graph_weights(), None)
    no_keys = SimpleNamespace(hashes=(), labels=None)
    for f in facts:
        t = SimpleNamespace(file=f.file_idx, last_committed=f.clocks[0], bytes=f.nbytes, event_count=f.events,
                            tables=(SimpleNamespace(inserts=f.inserts, updates=f.updates, deletes=f.deletes),))
        gb.add(t, no_keys, SimpleNamespace(writeset=f.clocks[2], sequence_number=f.seq))
    s = gb.s
    for p in parts:
        s.conflicts += p.conflicts
        s.hot_rows.update(p.hot_rows)
        s.hot_tables.update(p.hot_tables)
    return s


def advise_server(job: ServerJob, v: Verdict, *parts: FilePart) -> ServerResult:
    """Merge the server's parts and advise on them: ``advise`` on the server's files, exactly."""
    start = time.perf_counter()
    files = list(job.files)
    bad = next((p.error for p in parts if p.error is not None), v.error)
    if bad is not None:
        return ServerResult(job.name, files, error=bad, seconds=time.perf_counter() - start)
    try:
        return _advise(job, v, list(parts), start)
    except Exception as err:  # noqa: BLE001 - a what-if re-read can meet what the first read did not
        return ServerResult(job.name, files, error=_unstage(_error(err), job), seconds=time.perf_counter() - start)


def _advise(job: ServerJob, v: Verdict, parts: list[FilePart], start: float) -> ServerResult:
    from ..advise import advise_context
    from ..advise.context import context_of
    from ..report.advice import advice_json
    from ..analysis.parallel import _ddl_catalogs, merge

    locals_ = [stage(f, job.run_id) for f in job.files]
    catalogs = _ddl_catalogs(locals_, [p.analysis for p in parts], _run_options(job, v))
    for i, cat in enumerate(catalogs):
        if cat is not None:  # an earlier file's DDL changed this file's key plans: read it again
            parts[i] = read_part(job, i, v, cat)
            if parts[i].error is not None:
                return ServerResult(job.name, list(job.files), error=parts[i].error)
    analysis = merge([p.analysis for p in parts])
    analysis.ddl = [d for p in parts for d in p.analysis.ddl]
    facts = facts_from(parts)
    graph = graph_from(parts, facts, job.cost)
    # The context names the local copies while the rules run; the advice names the files as given
    # (for local files the two are the same).
    what_ifs, waited = _what_ifs_per_file(job, v, catalogs)
    ctx = replace(context_of(locals_, analysis, graph, facts, job.cost, job.settings, job.options),
                  target_version=job.target_version, what_ifs=what_ifs, cores_given=job.cores_given,
                  cores_read=job.cores_read, reproduce=job.reproduce + ("--cores", str(job.cost.cores)))
    advice = advise_context(ctx)
    # the same context (its caches shared) naming the files as given
    advice = replace(advice, context=replace(ctx, paths=list(job.files)))
    doc = advice_json(advice)
    return ServerResult(job.name, list(job.files), doc, fleet_row(job.name, advice, doc),
                        [*job.copies, *analysis.warnings], None, time.perf_counter() - start, waited[0])


def fleet_row(name: str, advice, doc: dict) -> dict:
    """The fleet table's row: what the server is, the parallelism its clocks allow, the lag the
    simulation predicts now and with the plan, and the first finding."""
    a = advice.context.analysis
    p = a.policies
    clocks = p.clocks if p is not None else {}

    def ideal(stats) -> float | None:
        return round(stats.ideal_speedup, 4) if stats is not None and stats.transactions else None

    sm = doc["summary"]
    top = doc["findings"][0] if doc["findings"] else None
    return {
        "server": name,
        "server_version": doc["input"]["server_version"],
        "written_policy": doc["input"]["written_policy"],
        "transactions": doc["input"]["transactions"],
        "parallelism": {Policy.RECORDED: ideal(a.total.recorded), Policy.WRITESET: ideal(clocks.get(Policy.WRITESET)),
                        Policy.COMMIT_ORDER: ideal(clocks.get(Policy.COMMIT_ORDER))},
        "lag_p99_seconds": {"current": sm["current"]["lag_p99_seconds"] if sm.get("current") else None,
                            "suggested": sm["recommended"]["lag_p99_seconds"] if sm.get("recommended") else None},
        "top_finding": {"id": top["id"], "severity": top["severity"], "title": top["title"]} if top else None,
    }


__all__ = ["COLUMNS", "FilePart", "ServerJob", "ServerResult", "Verdict", "advise_server", "read_part",
           "remove_cache", "stage", "verdict"]
