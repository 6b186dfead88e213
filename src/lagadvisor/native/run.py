"""The native side of the read pipeline (``depgraph.read.read``, its only caller):
:func:`read_run` reads a run of binlog files with the native reader
(``native/src/reader/mod.rs``, ``Analyzer``) into clocks, statistics, simulation facts, export
records, the dependency graph and the writeset log, as the request asks; :class:`NativeRun`
holds what it read.

It says None, and the pipeline reads the run with the pure-Python reference instead, for
``LAGADVISOR_PUREPYTHON=1`` or an extension that fails to import (:mod:`.loader`), inputs the
native reader does not take (:func:`readable`), MariaDB, and a run the native core gives back
(``NativeFallback``: the input leaves what it does exactly) or a read error the reference
reports with its own context.
"""

from __future__ import annotations

import os

from ..kinds import CLOCKS, CommitOrderInput
from ..writeset.tracker import KeyTracker
from .bridge import Bridge, native_summary
from .loader import load
from .results import NativeFacts, NativeFile, NativeFinish, NativeGraph, NativeRecords


def readable(paths) -> bool:
    """Whether the native reader takes these inputs: local regular files, each named once (a
    file streamed from a server, ``server.stream.LiveFile``, a FIFO, a directory or a missing
    file is read, or refused, by the reference; so is a ``.zst`` compressed file)."""
    return (bool(paths) and len(set(paths)) == len(paths)
            and not any(hasattr(p, "read_transactions") or not _utf8(p) or not os.path.isfile(p)
                        or p.endswith(".zst") for p in paths))


def _utf8(path: str) -> bool:
    """Whether the native core can take this name (a non-UTF-8 file name reaches Python with
    surrogate escapes, which a Rust ``String`` refuses): else the reference reads it."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def reader(paths):
    """The native module when it may read ``paths`` (it is loaded and :func:`readable` takes
    them), else None: the reference reads. :func:`read_run` and the policy detection's sample
    (``depgraph.read._native_sample``) ask here."""
    native = load()
    if native is None or not readable(paths):
        return None
    return native


#: ``graph --policy`` as the native graph builder numbers it.
GRAPH_POLICIES = {p: i for i, p in enumerate(CLOCKS)}
PROGRESS_EVERY = 2048
#: Export records handed over per chunk of this many transactions (bounded memory).
RECORDS_CHUNK = 16384
#: The writeset log handed over in chunks of this many int64s (16 MB).
WS_LOG_CHUNK = 1 << 21


class NativeRun:
    """One read of a run of files by the native core (:func:`read_run`): the analyzer (whose
    results :meth:`finish`, :meth:`take_facts` and :meth:`take_graph` hand over as typed values,
    :mod:`.results`), the per-file summaries and counters, and the collation approximations
    counted while it read."""

    def __init__(self, analyzer, bridge: Bridge, tracker: KeyTracker) -> None:
        self.analyzer = analyzer
        self.bridge = bridge
        self.tracker = tracker
        self.files: list[tuple[object, NativeFile]] = []   # (FileSummary, Analyzer.read_file's counters)
        self.approximated_before: dict = {}

    def finish(self) -> NativeFinish:
        """The run's totals and every policy's clock (``Analyzer.finish``)."""
        return NativeFinish.of(self.analyzer.finish())

    def take_facts(self) -> NativeFacts:
        """The facts collected (``Analyzer.take_facts``), and stop collecting."""
        return NativeFacts.of(self.analyzer.take_facts())

    def take_graph(self) -> NativeGraph | None:
        """The dependency graph's summary (``Analyzer.take_graph``; None: none was collected)."""
        return NativeGraph.of(self.analyzer.take_graph())

    def approximated(self) -> list[tuple[str, int]]:
        """The collations whose weight tables could not decide some values during this read,
        as the caveat line and its count (values hashed through the bridge)."""
        from ..writeset.extract import approximated_since

        return approximated_since(self.approximated_before)


def read_run(paths, options, run, *, on_progress=None, facts: bool = False, records=None,
             graph: tuple | None = None, on_facts=None, ws_log=None):
    """The read pipeline's native reader: read ``paths`` in order with the native core, for
    the clock options and the read's plan (``depgraph.pipeline.ClockOptions``/``ClockRun``: its
    ``opened`` files, the detection's, are read through their handles), keeping what the caller
    asks for: simulation facts (``facts``; with ``on_facts``, handed over after each file as
    ``on_facts(NativeFacts)`` (``Analyzer.take_facts(keep=True)``) instead of kept), export records
    (``records``: called as ``records(file_index, path, NativeRecords)`` every :data:`RECORDS_CHUNK`
    transactions and at the end of each file; what it raises is raised here), the dependency
    graph (``graph`` = (policy name, six apply-time weights, keep start, keep end, the most hot rows
    counted: ``depgraph.graph.hot_rows_max``)), with the facts the writeset log (``ws_log``:
    ``Analyzer.collect_ws_log``: ``ws_log(bytes)`` is called with its chunks in order, the
    rest of each file in its ``on_facts`` dict; the advisor's what-ifs replay it).

    Returns a :class:`NativeRun`, or None when the native core is unavailable, cannot take
    these inputs, or gives the run back (``NativeFallback``, or a read error the reference
    reports with its own context): the pipeline then reads the run with the reference."""
    native = reader(paths)
    if native is None:
        return None
    if run.written.mariadb:
        # the native reader gives every MariaDB binlog back at its first FDE: not even that
        # read, so the file the detection opened stays for the reference (``run.opened``)
        return None
    from ..errors import BinlogError
    from ..writeset.weights import APPROXIMATED

    # The native run applies the binlog's DDL to its own copy of the catalog, so a fallback
    # starts the reference from the catalog as given.
    import copy

    tracker = KeyTracker(copy.deepcopy(options.catalog), use_binlog_ddl=options.use_binlog_ddl,
                         what_if=options.what_if)
    bridge = Bridge(tracker, on_progress)
    analyzer = native.Analyzer(run.history_size, CommitOrderInput(run.commit_order).code, tracker.catalog.version,
                               bridge, PROGRESS_EVERY if on_progress is not None else 0)
    out = NativeRun(analyzer, bridge, tracker)
    out.approximated_before = dict(APPROXIMATED)
    ignore = tracker.what_if.ignore_rows if tracker.what_if else ()
    if options.labels or ignore or graph is not None:
        analyzer.collect_labels(sorted(ignore or ()))
    if facts:
        analyzer.collect_facts()
        if ws_log is not None:
            bridge.on_ws_log = ws_log
            analyzer.collect_ws_log(WS_LOG_CHUNK)
            bridge.shadows = True
    if records is not None:
        analyzer.collect_records(RECORDS_CHUNK)
    if graph is not None:
        policy, weights, start, end, hot_max = graph
        analyzer.collect_graph(GRAPH_POLICIES[policy], tuple(float(w) for w in weights), start, end, hot_max)
    try:
        for i, path in enumerate(paths):
            try:
                size = os.path.getsize(path)
            except OSError:
                return None  # the reference reports it
            bridge.begin_file()
            if records is not None:
                bridge.on_records = lambda d, i=i, path=path: records(i, path, NativeRecords.of(d))
            window = run.windows.get(path) if run.windows else None
            if window is not None:
                analyzer.set_window(*window.native_args())
            r = NativeFile.of(_read_file(analyzer, path, i, run.opened))
            out.files.append((native_summary(path, size, bridge.first_fde, r), r))
            if on_facts is not None:
                on_facts(NativeFacts.of(analyzer.take_facts(keep=True)))
            if records is not None:
                records(i, path, NativeRecords.of(analyzer.take_records()))
    except native.NativeFallback as err:
        if bridge.raised is not None:
            raise bridge.raised from None
        raise_internal(err)
        if interrupted(err):
            raise KeyboardInterrupt from None
        if os.environ.get("LAGADVISOR_NATIVE_DEBUG"):
            import sys

            print(f"lagadvisor: native core gave up: {err}", file=sys.stderr)
        return None
    except BinlogError:
        return None
    return out


#: What the native core says when it caught a panic of its own: a bug, never an answer.
INTERNAL_ERROR = "internal error in the native reader"


def raise_internal(err: BaseException) -> None:
    """Under the test command (``LAGADVISOR_REQUIRE_NATIVE=1``) a panic of the native core fails
    the run instead of giving it back to the reference: the reference's answer is the user's right
    answer, and would hide the bug from every test that checks only the answer."""
    if str(err).startswith(INTERNAL_ERROR) and os.environ.get("LAGADVISOR_REQUIRE_NATIVE") == "1":
        raise RuntimeError(f"the native core panicked ({err}); LAGADVISOR_REQUIRE_NATIVE=1 makes it an error") from err


def interrupted(err: BaseException) -> bool:
    """The native core stopped because a Python callback it made was interrupted (Ctrl-C: the
    signal is delivered as KeyboardInterrupt inside the callback, which the core reports as a
    ``NativeFallback``): the user's answer, not a reason to read the whole run again with the
    reference (that read went on for minutes after Ctrl-C)."""
    return str(err).startswith("reference callback raised: KeyboardInterrupt")


def _read_file(analyzer, path: str, i: int, opened) -> dict:
    """``Analyzer.read_file`` through the file the detection opened (``opened``:
    ``depgraph.pipeline.OpenFiles``) when it holds it, else by the path."""
    held = opened.take(path) if opened is not None else None
    if held is None:
        return analyzer.read_file(path, i)
    with held:
        return analyzer.read_file(path, i, held.fileno())


__all__ = ["GRAPH_POLICIES", "INTERNAL_ERROR", "NativeRun", "PROGRESS_EVERY", "RECORDS_CHUNK", "WS_LOG_CHUNK",
           "interrupted", "raise_internal", "read_run", "readable", "reader"]
