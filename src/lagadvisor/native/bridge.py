"""What the native reader (``native/src/reader/mod.rs``, ``Analyzer``) asks of the reference
while it reads: the :class:`Bridge` it calls back, and :func:`native_summary`, a file's
``FileSummary`` from the reader's counters.

The Rust side calls the bridge for what stays in Python: the reference decoders of
FORMAT_DESCRIPTION and rare control events (so their validation is the reference's), TABLE_MAP
decoding with the row-image column layout, the key plan of a table (``KeyTracker``; keys whose
parts are all whole integer columns are hashed in ``native/src/reader/writeset.rs``, the others
here, :meth:`Bridge.key_hashes`), classification of statements other than BEGIN/COMMIT, and the
catalog updates of DDL transactions (``KeyTracker.observe``).
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from ..binlog import events as ev
from ..binlog.constants import LOG_EVENT_HEADER_LEN, FieldType
from ..binlog.decoder import DECODERS
from ..binlog.framing import RawEvent
from ..binlog.rows import decode_table_map, decode_value, table_plan
from ..binlog.transactions import Statement, statement_blocks, statement_facts
from ..errors import LagAdvisorError
from ..kinds import Caveat
from ..writeset.extract import TablePlan, _label, primary_columns, row_hashes, row_image_caveat, schema_unknown
from ..writeset.tracker import KeyTracker
from .results import NativeFile

_INT_KINDS = frozenset({FieldType.TINY, FieldType.SHORT, FieldType.INT24, FieldType.LONG, FieldType.LONGLONG})


def native_summary(path: str, size: int, first_fde, r: NativeFile):
    """``FileSummary.fill`` from the counters of ``Analyzer.read_file`` (``r``), with the
    truncated-tail warning worded as the reference's framer words it (``scan._tail_tolerant``)
    and the unfinished last transaction's as ``scan.read_stream`` words it (the core counts
    incomplete transactions; where the last one starts, ``scan.unfinished_tail`` finds)."""
    from collections import Counter

    from ..binlog.constants import event_type_name
    from ..binlog.scan import FileSummary, unfinished_tail
    from ..errors import TruncatedEventError

    s = FileSummary(path)
    s.size = size
    s.fill_from(first_fde, Counter({event_type_name(code): n for code, n in r.events}),
                Counter(dict(r.unknown)), r.compression, r.tagged_gtids, r.gtids, r.logical_clock,
                set(r.optional_metadata), r.next_file)
    if r.truncated is not None:
        offset, got, size_and_type = r.truncated
        if size_and_type is None:
            err = TruncatedEventError(
                f"input ends inside an event header ({got} of {LOG_EVENT_HEADER_LEN} bytes)",
                file=path, offset=offset)
        else:
            esize, code = size_and_type
            err = TruncatedEventError(f"input ends inside the event ({got} of {esize} bytes)",
                                      file=path, offset=offset, event_type=event_type_name(code))
        s.truncated(err)
    elif r.totals.incomplete and (at := unfinished_tail(path)) is not None:
        s.unfinished(at)
    s.transactions = r.transactions
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
        self._caveats: dict[str, Caveat] = {}   # every caveat line the native side may count

    def caveat(self, text: str) -> Caveat:
        """The caveat a line of the native results is (the native side counts them by their text):
        one this bridge handed over, or one it words the same way for the tables it saw."""
        return self._caveats.get(text) or Caveat(text)

    def _known(self, *caveats) -> None:
        for c in caveats:
            if isinstance(c, Caveat):
                self._caveats.setdefault(str(c), c)

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
        self._known(schema_unknown(tm.qualified_name), row_image_caveat(tm.qualified_name))
        try:
            cols = [(p.size, p.prefix, int(p.kind), bool(p.unsigned)) for p in table_plan(tm)]
        except (LagAdvisorError, ValueError, IndexError):
            cols = None  # the reference raises when a rows event needs it; so does the native side
        return (tm.table_id, tm.qualified_name, tm.column_count, list(tm.optional_types), cols, tm,
                tm.database_name.encode("utf-8", "surrogateescape"))

    def statement(self, query: bytes, whole: bool = True):
        """(kind, blocks, XA end) of a statement (:func:`statement_facts`); ``whole`` False: the
        core passed only the first ``STATEMENT_HEAD`` bytes of a longer one, and None asks it for the
        whole statement."""
        return statement_facts(query.decode("utf-8", "surrogateescape"), whole)

    # -- keys
    def select(self, tm):
        plan = self.tracker._resolve(tm)
        self._known(plan, getattr(plan, "partial", None))
        if isinstance(plan, str):
            return ("unknown", plan)
        try:
            out = self._plan(plan, tm)
            if self.shadows:
                shadow = self.tracker.shadow(tm)
                if shadow is not None:
                    name, splan = shadow
                    self._known(splan.partial)
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
                (plan, cols, {}), plan.scans, plan.table_rows, f"{plan.db}.{plan.table}".lower(),
                [(side, list(cols_), ref) for side, cols_, ref in plan.fk_probes],
                list(primary_columns(plan)) if plan.fk_probes or plan.index_probes else [],
                [list(cols_) for cols_ in plan.index_probes])

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
        consumer (its own error, a closed pipe) is kept and raised again by the read (:mod:`.run`):
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


__all__ = ["Bridge", "Unsupported", "native_summary", "statement_blocks"]
