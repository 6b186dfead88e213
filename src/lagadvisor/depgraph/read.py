"""The read pipeline: the one way a command reads binlog files (issue 37).

A :class:`ReadRequest` names the files, the clock options and the plan of the read
(:func:`prepare`: the written policy, history size, commit-order input, windows, the files the
detection opened), the collectors (:class:`Collectors`: simulation facts, export records,
the dependency graph, the writeset log, the reference's per-transaction fold) and the policy
(:class:`ReadPolicy`). :func:`read` takes it and returns a :class:`ReadResult`.

:func:`read` alone decides who reads: the native core (``native.run.read_run``) when it is
available and takes the inputs, else, and whenever it gives the run back, the pure-Python
reference below (the files read again from the start). The policy detection's sample
(:func:`detect_written_policy`, the plan's first step) is read the same way. The read owns its state (the key
tracker, the clock computer, the summaries) and returns it as values: the caller mutates
nothing shared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

from ..binlog import FileSummary, Transaction, read_transactions
from ..binlog.framing import version_tuple
from ..binlog.scan import note_chain
from ..writeset.extract import Writeset, approximated_since
from ..writeset.tracker import KeyTracker
from ..writeset.weights import APPROXIMATED
from .clock import ClockStats
from .pipeline import (DETECT_SAMPLE, ClockOptions, ClockRun, OpenFiles, WrittenPolicy, _by_server, commit_order_for,
                       judge_sample)
from .policies import COMMIT_ORDER_SOURCES, POLICIES, ClockComputer, Computed, history_size_default

if TYPE_CHECKING:  # networkx (the graph's) is imported only by a read that builds a graph
    from ..native.results import NativeFacts, NativeFile, NativeFinish, NativeRecords
    from .graph import GraphSummary, Weights

#: The reference's fold of one transaction: its file's summary (complete once the file is
#: left), the transaction, its writeset and every policy's clock (both None in a clock-free read).
Observe = Callable[[FileSummary, Transaction, "Writeset | None", "Computed | None"], None]


@dataclass(frozen=True, slots=True)
class GraphRequest:
    """The dependency graph to build: under ``policy``, with the six apply-time weights, the
    transactions of ``keep`` kept as nodes (None: none), at most ``hot_max`` hot rows counted."""

    policy: str
    weights: tuple[float, ...]
    keep: range | None
    hot_max: int


@dataclass(frozen=True, slots=True)
class Collectors:
    """What a read collects besides the clocks and statistics (always kept).

    ``facts``: the simulation facts (native: ``ReadResult.native.facts``; with ``on_facts``
    handed over file by file as ``native.results.NativeFacts`` instead), and with them
    the writeset log (``ws_log(bytes)`` with its chunks). ``records(file_index, path, chunk)``:
    the export records' column chunks (``native.results.NativeRecords``). ``graph``: the dependency graph, built by either reader
    (``ReadResult.graph``). ``observe``: the reference's fold of each transaction (what the
    native core collects in columns, the reference computes there)."""

    facts: bool = False
    on_facts: Callable[[NativeFacts], None] | None = None
    ws_log: Callable[[bytes], None] | None = None
    records: Callable[[int, str, NativeRecords], None] | None = None
    graph: GraphRequest | None = None
    observe: Observe | None = None


@dataclass(frozen=True, slots=True)
class ReadPolicy:
    """``native``: the native core may read (False: the reference reads: a fold that needs the
    transactions themselves, ``export --keys``'s row images). ``reference``: the reference may
    read (False: :func:`read` returns None where the native core does not read: the tests and
    benchmarks that compare the two). ``clocks``: derive the policies' clocks (False: a
    clock-free read, ``calibrate``'s gaps: no writesets)."""

    native: bool = True
    reference: bool = True
    clocks: bool = True


@dataclass(frozen=True, slots=True)
class ReadRequest:
    """One read of ``paths`` in order (see the module's docstring); ``on_progress(file,
    offset)`` now and then while the native core reads."""

    paths: tuple[str, ...]
    options: ClockOptions
    run: ClockRun
    collect: Collectors = Collectors()
    policy: ReadPolicy = ReadPolicy()
    on_progress: Callable[[str, int], None] | None = None


@dataclass(frozen=True, slots=True)
class ClockNotes:
    """Every policy's clock statistics (``POLICIES`` order), and what deriving the clocks
    counted, most first: the fallbacks by reason and by (reason, table), the unknown schemas,
    the caveats, the WRITESET history resets; the DDL applied."""

    clocks: tuple[tuple[str, ClockStats], ...]
    fallbacks: tuple[tuple[str, int], ...]
    fallback_tables: tuple[tuple, ...]
    unknown: tuple[tuple[str, int], ...]
    caveats: tuple[tuple[str, int], ...]
    resets: int
    applied: tuple = ()


@dataclass(frozen=True, slots=True)
class NativeRead:
    """What only the native core's read holds (``native.results``' typed values): per file its
    summary and ``read_file`` counters, the run's statistics (``Analyzer.finish``; None in a
    clock-free read) and the facts left at the end (``take_facts``)."""

    files: tuple[tuple[FileSummary, NativeFile], ...]
    stats: NativeFinish | None
    facts: NativeFacts | None = None


@dataclass(frozen=True, slots=True)
class ReadResult:
    """A finished read: its plan, the files' summaries in order, what deriving the clocks
    counted (None in a clock-free read), the graph (when asked for), and ``native`` when the
    native core read the run (None: the reference did, through ``Collectors.observe``)."""

    run: ClockRun
    summaries: tuple[FileSummary, ...]
    notes: ClockNotes | None
    graph: GraphSummary | None = None
    native: NativeRead | None = field(default=None, repr=False)

    def __post_init__(self):
        note_chain(self.summaries)


# -- the plan: the detection's read of the written policy, and prepare -------------------------

def prepare(paths: list[str], opts: ClockOptions) -> ClockRun:
    """The plan of a read of ``paths``: the written policy (detected now unless ``opts`` knows
    it; the files the detection opened stay open for the read), the history size and the
    commit-order input."""
    opened = opts.opened
    if opts.written is not None:
        written = opts.written
    else:
        opened = opened if opened is not None else OpenFiles()
        written = detect_written_policy(paths, files=opened)
    hs = opts.history_size
    if hs is None:
        hs = history_size_default(version_tuple(written.server_version), written.mariadb)
    return ClockRun(written, hs, commit_order_for(written, opts.commit_order), opts.windows, opened)


def detect_written_policy(paths: list[str], sample: int = DETECT_SAMPLE,
                          files: OpenFiles | None = None) -> WrittenPolicy:
    """Read up to ``sample`` transactions (no row decoding) and judge the recorded clock
    (:func:`.pipeline.judge_sample`). The detection's read, like the read that follows: by the
    native core when it can (:func:`_native_sample`), else by the reference.

    The first file's server is read from the same open as the sample: the native sample stops
    at that FDE when the server decides, so each file read is opened once; the reference peeks
    at it first. The files the native sample opened stay open in ``files`` for the read that
    follows (none kept without it).
    """
    held = files if files is not None else OpenFiles()
    try:
        fast = _native_sample(paths, sample, held)
    finally:
        if files is None:
            held.close()
    if isinstance(fast, WrittenPolicy):
        return fast
    if fast is not None:
        return judge_sample(*fast)
    if paths:
        decided = _by_server(*peek_server(paths[0]))
        if decided is not None:
            return decided
    return judge_sample(FileSummary(paths[0]) if paths else None, _sample(paths, sample))


def peek_server(path: str) -> tuple[str, bool]:
    """Server version and MariaDB-ness from the file's FORMAT_DESCRIPTION event (no full read)."""
    from ..binlog.decoder import EventReader
    from ..binlog.framing import check_magic
    from ..binlog.scan import open_binlog
    from ..errors import BinlogError

    if hasattr(path, "server_version"):  # streamed from a server: it said what it is
        return path.server_version, bool(getattr(path, "mariadb", False))  # type: ignore[attr-defined]
    reader = EventReader(path)
    try:
        with open_binlog(path) as f:
            check_magic(f, path)
            for _ in reader.read(f, base_offset=4):
                if reader.first_fde is not None:
                    break
    except (BinlogError, OSError):
        return "", False  # the full read reports the problem with file and offset
    fde = reader.first_fde
    return (fde.server_version, fde.is_mariadb) if fde else ("", False)


def _sample(paths: list[str], sample: int):
    """The reference's detection read: ``(transaction, None)`` for the first ``sample`` clocked
    transactions, and ``(None, summary)`` at each file's first transaction (whose summary is
    complete once the file is left)."""
    n = 0
    for path in paths:
        s = FileSummary(path)
        first = True
        for t in read_transactions(path, s, selector=lambda tm: frozenset()):
            if first:
                first = False
                yield None, s
            if t.sequence_number is None or t.last_committed is None:
                continue
            n += 1
            yield t, None
            if n >= sample:
                return


class _ServerDecides(Exception):
    """The first file's FDE names a server that decides the policy: no sample is needed."""


def _native_sample(paths: list[str], sample: int, files: OpenFiles):
    """The same sample read by the native core: ``(summary, items)``; the policy when the first
    file's FDE decides it (MariaDB, 8.4+: the read stops there); or None when the native core is
    unavailable or gives the read back to the reference."""
    from ..native import reader

    native = reader(paths)
    if native is None:
        return None
    from types import SimpleNamespace

    from ..native import Bridge
    from ..native.run import interrupted, raise_internal

    class DetectBridge(Bridge):
        decided: WrittenPolicy | None = None

        def fde(self, data: bytes, body_end: int, checksum_alg: int) -> None:
            super().fde(data, body_end, checksum_alg)
            if first and self.decided is None:
                self.decided = _by_server(self.first_fde.server_version, self.first_fde.is_mariadb)
                if self.decided is not None:
                    raise _ServerDecides

    first = True
    bridge = DetectBridge(KeyTracker())
    analyzer = native.Analyzer(1, 0, 0, bridge, 0)
    summary = FileSummary(paths[0])
    items: list = []
    n = 0
    try:
        for i, path in enumerate(paths):
            bridge.begin_file()
            first = i == 0
            got = analyzer.detect(path, i, sample - n, files.fd(path))
            if analyzer.file_transactions() and not summary.server_version:
                fde = bridge.first_fde
                summary = FileSummary(path)
                if fde is not None:
                    summary.server_version = fde.server_version
                    summary.mariadb = fde.is_mariadb
            items += [(SimpleNamespace(file=path, last_committed=lc, sequence_number=sn, thread_id=th), None)
                      for lc, sn, th in got]
            n += len(got)
            if n >= sample:
                break
    except native.NativeFallback as err:
        raise_internal(err)
        if interrupted(err):
            raise KeyboardInterrupt from None
        return bridge.decided  # stopped at the first FDE (MariaDB, 8.4+), else given back
    return summary, items


def read(request: ReadRequest) -> ReadResult | None:
    """Read the request's files, by the native core when it can, else by the reference (None
    only when the request's policy rules the reference out)."""
    if request.policy.native:
        done = _native(request)
        if done is not None:
            return done
    return _reference(request) if request.policy.reference else None


def _native(request: ReadRequest) -> ReadResult | None:
    """The native core's read, or None when it is unavailable, cannot take the inputs or gives
    the run back (``native.run.read_run`` decides)."""
    from ..native.run import read_run

    c, paths = request.collect, list(request.paths)
    graph = None
    if c.graph is not None:
        keep = c.graph.keep or range(0)
        graph = (c.graph.policy, c.graph.weights, keep.start, keep.stop, c.graph.hot_max)
    nr = read_run(paths, request.options, request.run, on_progress=request.on_progress, facts=c.facts,
                  records=c.records, graph=graph, on_facts=c.on_facts, ws_log=c.ws_log)
    if nr is None:
        return None
    summaries = tuple(s for s, _ in nr.files)
    if not request.policy.clocks:
        return ReadResult(request.run, summaries, None, native=NativeRead(tuple(nr.files), None))
    res = nr.finish()
    notes = ClockNotes(
        tuple((name, ClockStats.from_native(clock)) for name, clock in zip(POLICIES, res.clocks)),
        tuple(sorted(res.fallbacks, key=lambda kv: (-kv[1], kv[0]))),
        tuple(sorted(res.fallback_tables, key=lambda x: (-x[2], x[0], x[1]))),
        _most_first((nr.bridge.caveat(c), n) for c, n in res.unknown),
        # values outside a collation's weight table, hashed through the bridge (counted in values)
        _most_first([*((nr.bridge.caveat(c), n) for c, n in res.caveats), *nr.approximated()]),
        res.resets, tuple(nr.tracker.applied))
    facts = nr.take_facts() if c.facts else None
    g = None
    if c.graph is not None:
        from .graph import GraphSummary

        g = GraphSummary.from_native(c.graph.policy, nr.take_graph(), paths)
    return ReadResult(request.run, summaries, notes, g, NativeRead(tuple(nr.files), res, facts))


def _most_first(items) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(items, key=lambda kv: (-kv[1], kv[0])))


def _reference(request: ReadRequest) -> ReadResult:
    """The pure-Python reference's read: each transaction goes to ``Collectors.observe`` (and
    to the graph builder)."""
    c = request.collect
    gb = None
    if c.graph is not None:
        from .graph import GraphBuilder

        gb = GraphBuilder(c.graph.policy, c.graph.weights, c.graph.keep)
    ref = ReferenceRead(request.paths, request.options, request.run, request.policy.clocks)
    for s, t, ws, computed in ref.transactions():
        if c.observe is not None:
            c.observe(s, t, ws, computed)
        if gb is not None:
            gb.add(t, ws, computed)
    return ReadResult(request.run, tuple(ref.summaries), ref.notes(), gb.s if gb is not None else None)


class ReferenceRead:
    """The reference's read of a run and its state: the key tracker (from the options' catalog,
    which the binlog's DDL changes), the clock computer, the files' summaries. ``clocks`` False:
    no writesets and no clocks (``ReadPolicy.clocks``)."""

    def __init__(self, paths, options: ClockOptions, run: ClockRun, clocks: bool = True) -> None:
        self.paths, self.run = paths, run
        self.summaries: list[FileSummary] = []
        self.tracker = self.computer = None
        if clocks:
            o = options
            self.tracker = KeyTracker(o.catalog, use_binlog_ddl=o.use_binlog_ddl, labels=o.labels, what_if=o.what_if)
            self.computer = ClockComputer(run.history_size, COMMIT_ORDER_SOURCES[run.commit_order]())
            self.clocks = {p: ClockStats() for p in POLICIES}
            self.approximated_before = dict(APPROXIMATED)

    def transactions(self) -> Iterator[tuple[FileSummary, Transaction, Writeset | None, Computed | None]]:
        """``(summary, transaction, writeset, clocks)`` of every file in order; each file's
        summary is in :attr:`summaries` before it is read (complete once it is left). The file
        the detection opened is read through its handle."""
        run, tracker = self.run, self.tracker
        selector = tracker.select if tracker is not None else (lambda tm: frozenset())
        for path in self.paths:
            s = FileSummary(path)
            self.summaries.append(s)
            held = run.opened.take(path) if run.opened is not None else None
            try:
                for t in read_transactions(path, s, selector=selector,
                                           window=run.windows.get(path) if run.windows else None, held=held):
                    if tracker is None:
                        yield s, t, None, None
                        continue
                    ws = tracker.writeset(t)
                    c = self.computer.step(t, ws)
                    tracker.observe(t)
                    for name, lc in c.as_dict().items():
                        self.clocks[name].add(t.file, lc, c.sequence_number)
                    yield s, t, ws, c
            finally:
                if held is not None:
                    held.close()

    def notes(self) -> ClockNotes | None:
        """What deriving the clocks counted (None in a clock-free read)."""
        comp, tracker = self.computer, self.tracker
        if comp is None:
            return None
        return ClockNotes(
            tuple(self.clocks.items()),
            tuple(sorted(((k.value, v) for k, v in comp.fallbacks.items()), key=lambda kv: (-kv[1], kv[0]))),
            tuple(sorted(((r, t, n) for (r, t), n in comp.fallback_tables.items()),
                         key=lambda x: (-x[2], x[0], x[1]))),
            _most_first(tracker.unknown.items()),
            _most_first([*tracker.caveats.items(), *approximated_since(self.approximated_before)]), comp.ws.resets,
            tuple(tracker.applied))


def run_clocks(paths, run: ClockRun, options: ClockOptions | None = None) -> Iterator[tuple]:
    """The reference's ``(transaction, writeset, clocks)`` of every file in order, from
    ``options``' catalog (the tests and benchmarks that look at the reference alone)."""
    for _s, t, ws, c in ReferenceRead(tuple(paths), options or ClockOptions(), run).transactions():
        yield t, ws, c


def build_graph(paths: list[str], run: ClockRun, options: ClockOptions, policy: str, weights: Weights, keep: range,
                on_progress=None, on_transaction=None) -> tuple[GraphSummary, tuple[FileSummary, ...], int]:
    """The graph of a run (``run`` from :func:`prepare`), the read's file summaries and the
    transactions whose writeset was not computed (their tables' keys unknown):
    built by the native core while it reads when it can (``on_progress(file, offset)`` now and
    then), else by :class:`~.graph.GraphBuilder` over the reference's read
    (``on_transaction(t)`` for each)."""
    observe = None if on_transaction is None else (lambda _s, t, _ws, _c: on_transaction(t))
    from .graph import hot_rows_max

    ask = GraphRequest(policy, tuple(weights), keep, hot_rows_max())
    r = read(ReadRequest(tuple(paths), options, run, Collectors(graph=ask, observe=observe), on_progress=on_progress))
    return r.graph, r.summaries, dict(r.notes.fallbacks).get("unknown_schema", 0) if r.notes is not None else 0


__all__ = ["ClockNotes", "Collectors", "GraphRequest", "NativeRead", "Observe", "ReadPolicy", "ReadRequest",
           "ReadResult", "ReferenceRead", "build_graph", "detect_written_policy", "peek_server", "prepare", "read",
           "run_clocks"]
