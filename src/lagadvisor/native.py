"""The optional native core (``lagadvisor._native``, Rust) and the bridge it calls back.

The pure-Python modules are the reference. ``LAGADVISOR_PUREPYTHON=1`` forces them everywhere;
when the extension cannot be imported the reference is used too, and ``analyze`` prints one
notice (:func:`unavailable_notice`). The native analyzer reads a run of files and calls the
:class:`Bridge` for what stays in Python: the reference decoders of FORMAT_DESCRIPTION and rare
control events (so their validation is the reference's), TABLE_MAP decoding with the row-image
column layout, the key plan of a table (``KeyTracker``), classification of statements other than
BEGIN/COMMIT, and the catalog updates of DDL transactions (``KeyTracker.observe``).
When the input leaves what the native core does exactly, it raises ``NativeFallback`` and the
caller reads the run again with the reference (see ``native/src/reader/mod.rs``).
"""

from __future__ import annotations

import os
from dataclasses import replace
from types import ModuleType, SimpleNamespace

from .binlog import events as ev
from .binlog.constants import LOG_EVENT_HEADER_LEN, FieldType
from .binlog.decoder import DECODERS
from .binlog.framing import RawEvent
from .binlog.rows import decode_table_map, decode_value, table_plan
from .binlog.transactions import Statement, classify_statement
from .errors import LagAdvisorError
from .writeset.extract import TablePlan, _label, row_hashes
from .writeset.tracker import KeyTracker

_module: ModuleType | None = None
_import_error: str | None = None
_tried = False


def forced_pure() -> bool:
    return os.environ.get("LAGADVISOR_PUREPYTHON", "") not in ("", "0")


def load() -> ModuleType | None:
    """The native module, or None (forced off, or it failed to import)."""
    global _module, _import_error, _tried
    if forced_pure():
        return None
    if not _tried:
        _tried = True
        try:
            from . import _native  # type: ignore[attr-defined]

            if not hasattr(getattr(_native, "Analyzer", None), "collect_graph"):
                # an extension built from older sources (a copied .so): the reference reads
                raise ImportError("lagadvisor._native is a stale build (no Analyzer.collect_graph)")
            _module = _native
        except ImportError as err:
            _import_error = str(err)
    return _module


def readable(paths) -> bool:
    """Whether the native reader takes these inputs: local regular files, each named once (a
    file streamed from a server, ``binlog.stream.LiveFile``, a FIFO, a directory or a missing
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


def unavailable_notice() -> str | None:
    """The one-line notice for ``analyze`` when the extension failed to import."""
    if forced_pure():
        return None
    load()
    return "native core unavailable: pure Python" if _module is None else None


_ADMIN = ("ANALYZE", "REPAIR", "OPTIMIZE")
_INT_KINDS = frozenset({FieldType.TINY, FieldType.SHORT, FieldType.INT24, FieldType.LONG, FieldType.LONGLONG})


def statement_blocks(query: str) -> bool:
    """One statement's part of ``policies._blocks``."""
    words = query.lstrip().split(None, 2)
    head = words[0].upper() if words else ""
    if head in _ADMIN:
        return True
    return head in ("CREATE", "ALTER", "DROP") and len(words) > 1 and words[1].upper() in ("DATABASE", "SCHEMA")


def native_summary(path: str, size: int, first_fde, r: dict):
    """``FileSummary.fill`` from the counters of ``Analyzer.read_file`` (``r``), with the
    truncated-tail warning worded as the reference's framer words it (``scan._tail_tolerant``)."""
    from collections import Counter

    from .binlog.constants import event_type_name
    from .binlog.scan import FileSummary
    from .errors import TruncatedEventError

    s = FileSummary(path)
    s.size = size
    s.fill_from(first_fde, Counter({event_type_name(code): n for code, n in r["events"]}),
                Counter(dict(r["unknown"])), r["compression"], r["tagged_gtids"], r["gtids"], r["logical_clock"],
                set(r["optional_metadata"]), r["next_file"])
    if r["truncated"] is not None:
        offset, got, size_and_type = r["truncated"]
        if size_and_type is None:
            err = TruncatedEventError(
                f"input ends inside an event header ({got} of {LOG_EVENT_HEADER_LEN} bytes)",
                file=path, offset=offset)
        else:
            esize, code = size_and_type
            err = TruncatedEventError(f"input ends inside the event ({got} of {esize} bytes)",
                                      file=path, offset=offset, event_type=event_type_name(code))
        s.truncated(err)
    s.transactions = r["transactions"]
    if s.unknown_events:
        codes = ", ".join(f"type {c} x{n}" for c, n in sorted(s.unknown_events.items()))
        s.warnings.append(f"{path}: unknown event types counted but not decoded: {codes}")
    s.complete = True
    return s


class Unsupported(Exception):
    """A plan the native core does not hash (string, temporal, prefix key parts...)."""


class Bridge:
    """What the native analyzer asks of the reference while it reads."""

    def __init__(self, tracker: KeyTracker, on_progress=None) -> None:
        self.tracker = tracker
        self.on_progress = on_progress
        self.cur_fde: ev.FormatDescription = ev.DEFAULT_FDE
        self.first_fde: ev.FormatDescription | None = None
        self.on_records = None
        self.raised: BaseException | None = None   # what ``on_records`` raised (not a fallback)
        self.shadows = False   # also each keyless table's plan with a primary key (ws_log)
        self.on_ws_log = None
        self._none = hash(None)
        self._key = hash("key")
        self._pack = hash("pack")

    def begin_file(self) -> None:
        self.cur_fde = ev.DEFAULT_FDE
        self.first_fde = None

    @staticmethod
    def _raw(code: int, data: bytes, body_end: int) -> RawEvent:
        return RawEvent(0, 0, code, 0, len(data), 0, 0, data, body_end)

    # -- events
    def fde(self, data: bytes, body_end: int, checksum_alg: int) -> None:
        fde = ev.decode_fde(self._raw(15, data, body_end), checksum_alg)
        self.cur_fde = fde
        if self.first_fde is None:
            self.first_fde = fde

    def event(self, code: int, data: bytes, body_end: int):
        body = DECODERS[code](self._raw(code, data, body_end), self.cur_fde)
        if code == 4:
            return body.next_file
        if code == 42:
            return (body.gtid, body.tag, body.last_committed, body.sequence_number,
                    body.immediate_commit_timestamp, body.original_commit_timestamp,
                    body.transaction_length, body.immediate_server_version, body.original_server_version)
        return None

    def table_map(self, data: bytes, body_end: int):
        tm = decode_table_map(self._raw(19, data, body_end), self.cur_fde)
        try:
            cols = [(p.size, p.prefix, int(p.kind), bool(p.unsigned)) for p in table_plan(tm)]
        except (LagAdvisorError, ValueError, IndexError):
            cols = None  # the reference raises when a rows event needs it; so does the native side
        return (tm.table_id, tm.qualified_name, tm.column_count, list(tm.optional_types), cols, tm,
                tm.database_name.encode("utf-8", "surrogateescape"))

    def statement(self, query: bytes):
        text = query.decode("utf-8", "surrogateescape")
        kind = classify_statement(text)
        upper = text.upper() if kind == "XA" else ""
        return kind, statement_blocks(text), ("XA COMMIT" in upper or "XA ROLLBACK" in upper)

    # -- keys
    def select(self, tm):
        plan = self.tracker._resolve(tm)
        if isinstance(plan, str):
            return ("unknown", plan)
        try:
            out = self._plan(plan, tm)
            if self.shadows:
                shadow = self.tracker.shadow(tm)
                if shadow is not None:
                    name, splan = shadow
                    try:
                        out = out + ((name, self._plan(splan, tm)),)
                    except Unsupported:  # the what-if reads the files again for this table
                        out = out + ((name, None),)
            return out
        except Unsupported as err:
            return ("unsupported", str(err))

    def _plan(self, plan: TablePlan, tm):
        """The plan as the native side hashes it. A key whose parts are all whole integer
        columns (in the row images) is hashed natively; any other key (strings under a
        collation, prefixes, temporal, DECIMAL...) is marked for :meth:`key_hashes`."""
        none, key, pack = self._none, self._key, self._pack
        try:
            cols = table_plan(tm)
        except (LagAdvisorError, ValueError, IndexError):
            cols = None

        def native_col(i: int) -> bool:
            return cols is not None and i < len(cols) and cols[i].kind in _INT_KINDS

        keys = []
        for k in plan.keys:
            parts = []
            py = False
            for i, prefix, _canon, _coll, pad, full_chars in k.parts:
                py = py or prefix is not None or full_chars is not None or not native_col(i)
                parts.append((i, key if pad else none, pack if pad else none))
            keys.append((hash(k.name), hash(plan.db), hash(plan.table), k.hashes, parts, py,
                         f"{plan.db}.{plan.table} {k.name}=("))
        fks = []
        for fk in plan.fks:
            py = any(not native_col(i) for i, _canon, _pad in fk.parts)
            fks.append((hash(fk.ref_key), hash(fk.ref_db), hash(fk.ref_table),
                        [(i, pack if pad else none) for i, _canon, pad in fk.parts], py,
                        f"{fk.ref_db}.{fk.ref_table} {fk.ref_key}=(", f" (foreign key of {plan.db}.{plan.table})",
                        f"{fk.ref_db}.{fk.ref_table}".lower()))
        # the names ``WhatIf.plan`` matches (dropped foreign keys), for the writeset log
        return ("plan", plan.missing_keys, plan.fk_parent, plan.partial, sorted(plan.columns), keys, fks,
                (plan, cols, {}), plan.scans, plan.table_rows, f"{plan.db}.{plan.table}".lower())

    def key_hashes(self, handle, fk: bool, idx: int, values) -> list[int]:
        """The reference's hashes (``extract.row_hashes``) of one key of one row image, from
        the raw bytes of its parts (None = NULL; the native side already skipped keys with a
        NULL or absent part, and left NULL foreign-key parts out the same way)."""
        plan, cols, subs = handle
        sub = subs.get((fk, idx))
        if sub is None:
            sub = subs[(fk, idx)] = (replace(plan, keys=(), fks=(plan.fks[idx],)) if fk
                                     else replace(plan, keys=(plan.keys[idx],), fks=()))
        parts = [p[0] for p in (plan.fks[idx].parts if fk else plan.keys[idx].parts)]
        image = {i: (None if v is None else decode_value(cols[i], v)) for i, v in zip(parts, values)}
        out: list[int] = []
        row_hashes(sub, image, out, fk)
        return out

    def key_hashes_labelled(self, handle, fk: bool, idx: int, values) -> tuple[list[int], str]:
        """:meth:`key_hashes` and the key's readable label (``extract._label``: the decoded
        values of the parts, a NULL foreign-key part left out)."""
        plan, cols, _subs = handle
        hashes = self.key_hashes(handle, fk, idx, values)
        parts = [p[0] for p in (plan.fks[idx].parts if fk else plan.keys[idx].parts)]
        raw = [decode_value(cols[i], v) for i, v in zip(parts, values) if v is not None]
        if fk:
            f = plan.fks[idx]
            return hashes, _label(f.ref_key, f.ref_db, f.ref_table, raw) + f" (foreign key of {plan.db}.{plan.table})"
        return hashes, _label(plan.keys[idx].name, plan.db, plan.table, raw)

    def observe(self, file: str, start: int, statements) -> int:
        stmts = [Statement(k, d.decode("utf-8", "surrogateescape"), q.decode("utf-8", "surrogateescape"))
                 for k, d, q in statements]
        self.tracker.observe(SimpleNamespace(ddl=True, statements=stmts, file=file, start_offset=start))  # type: ignore[arg-type]
        return self.tracker.catalog.version

    def records(self, d: dict) -> None:
        """A chunk of export records (``Analyzer.collect_records``); an exception of the
        consumer (its own error, a closed pipe) is kept and raised again by :func:`read_run`:
        it is the command's answer, not a reason to read the run with the reference."""
        try:
            self.on_records(d)
        except BaseException as err:
            self.raised = err
            raise

    def ws_log(self, b: bytes) -> None:
        """A chunk of the writeset log (``Analyzer.collect_ws_log``), handed on in order."""
        self.on_ws_log(b)

    def progress(self, file: str, offset: int) -> None:
        if self.on_progress is not None:
            self.on_progress(file, offset)


_COMMIT_ORDER = {"recorded": 0, "serial": 1, "flush-groups": 2}
#: ``graph --policy`` as the native graph builder numbers it.
GRAPH_POLICIES = {"recorded": 0, "COMMIT_ORDER": 1, "WRITESET": 2, "WRITESET_SESSION": 3}
PROGRESS_EVERY = 2048
#: Export records handed over per chunk of this many transactions (bounded memory).
RECORDS_CHUNK = 16384
#: The writeset log handed over in chunks of this many int64s (16 MB).
WS_LOG_CHUNK = 1 << 21


class NativeRun:
    """One read of a run of files by the native core (:func:`read_run`): the analyzer (its
    ``finish``, ``take_facts`` and ``take_graph`` hold the results), the per-file summaries and
    counters, and the collation approximations counted while it read."""

    def __init__(self, analyzer, bridge: Bridge, tracker: KeyTracker) -> None:
        self.analyzer = analyzer
        self.bridge = bridge
        self.tracker = tracker
        self.files: list[tuple[object, dict]] = []   # (FileSummary, Analyzer.read_file's dict)
        self.approximated_before: dict = {}

    def approximated(self) -> list[tuple[str, int]]:
        """The collations whose weight tables could not decide some values during this read,
        as the caveat line and its count (values hashed through the bridge)."""
        from .writeset.extract import approximated_caveat
        from .writeset.weights import APPROXIMATED

        before = self.approximated_before
        outside = sorted(c for c, n in APPROXIMATED.items() if n != before.get(c))
        if not outside:
            return []
        return [(approximated_caveat(outside), sum(APPROXIMATED[c] - before.get(c, 0) for c in outside))]


def read_run(paths, options, run, *, on_progress=None, facts: bool = False, records=None,
             graph: tuple | None = None, on_facts=None, ws_log=None):
    """The one native loader: read ``paths`` in order with the native core, for the clock
    options and prepared run (``depgraph.pipeline.ClockOptions``/``ClockRun``), keeping what
    the caller asks for: simulation facts (``facts``; with ``on_facts``, handed over after each
    file as ``on_facts(Analyzer.take_facts(keep=True))`` instead of kept), export records (``records``: called as
    ``records(file_index, path, Analyzer.take_records())`` every :data:`RECORDS_CHUNK`
    transactions and at the end of each file; what it raises is raised here), the dependency
    graph (``graph`` = (policy name, six apply-time weights, keep start, keep end, the most hot rows
    counted: ``depgraph.graph.hot_rows_max``)), with the facts the writeset log (``ws_log``:
    ``Analyzer.collect_ws_log``: ``ws_log(bytes)`` is called with its chunks in order, the
    rest of each file in its ``on_facts`` dict; the advisor's what-ifs replay it).

    Returns a :class:`NativeRun`, or None when the native core is unavailable, cannot take
    these inputs, or gives the run back (``NativeFallback``, or a read error the reference
    reports with its own context): the caller then reads the run with the reference. This is
    the only place that decides it."""
    native = load()
    if native is None or not readable(paths):
        return None
    if getattr(getattr(run, "written", None), "mariadb", False):
        # the native reader gives every MariaDB binlog back at its first FDE: not even that
        # read, so the detection's handle stays for the reference (``take_handle``)
        return None
    from .errors import BinlogError
    from .writeset.weights import APPROXIMATED

    # The native run applies the binlog's DDL to its own copy of the catalog, so a fallback
    # starts the reference from the catalog as given.
    import copy

    tracker = KeyTracker(copy.deepcopy(options.catalog), use_binlog_ddl=options.use_binlog_ddl,
                         what_if=options.what_if)
    bridge = Bridge(tracker, on_progress)
    analyzer = native.Analyzer(run.history_size, _COMMIT_ORDER[run.commit_order], tracker.catalog.version,
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
                bridge.on_records = lambda d, i=i, path=path: records(i, path, d)
            window = run.windows.get(path) if getattr(run, "windows", None) else None
            if window is not None:
                analyzer.set_window(*window.native_args())
            r = analyzer.read_file(path, i)
            out.files.append((native_summary(path, size, bridge.first_fde, r), r))
            if on_facts is not None:
                on_facts(analyzer.take_facts(keep=True))
            if records is not None:
                records(i, path, analyzer.take_records())
    except native.NativeFallback as err:
        if bridge.raised is not None:
            raise bridge.raised from None
        if os.environ.get("LAGADVISOR_NATIVE_DEBUG"):
            import sys

            print(f"lagadvisor: native core gave up: {err}", file=sys.stderr)
        return None
    except BinlogError:
        return None
    return out


__all__ = ["Bridge", "NativeRun", "read_run", "load", "forced_pure", "unavailable_notice", "statement_blocks", "LOG_EVENT_HEADER_LEN"]
