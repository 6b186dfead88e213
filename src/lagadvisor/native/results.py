"""The native reader's results as typed values (issue 37): what ``Analyzer`` (``native/src/reader/mod.rs``)
returns as dicts is read here, once, by :meth:`of` each, and by attribute everywhere else.

- :class:`NativeFile`: ``read_file``'s counters of one file (its totals a :class:`NativeTotals`);
- :class:`NativeFinish`: ``finish``'s run totals, every policy's clock and what deriving them counted;
- :class:`NativeFacts`: ``take_facts``'s simulation-fact columns (and the writeset log's rest);
- :class:`NativeRecords`: ``take_records``'s export-record columns;
- :class:`NativeGraph`: ``take_graph``'s dependency-graph summary.

Columns of native int64s become ``array('q')`` here (one copy, as the callers made before).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

#: ``take_facts``'s columns (``mod.rs`` FACT_COLUMNS), in :class:`NativeFacts` field order.
FACT_COLUMNS = ("file_idx", "seq", "recorded", "commit_order", "writeset", "writeset_session",
                "commit_ts_us", "inserts", "updates", "deletes", "nbytes", "dbset", "scan_rows",
                "fk_checks", "index_entries", "events")
#: ``take_records``'s columns (``mod.rs`` RECORD_COLUMNS; None is i64 min), in :class:`NativeRecords` order.
RECORD_COLUMNS = ("file_idx", "start_offset", "end_offset", "last_committed", "sequence_number", "thread_id",
                  "commit_ts_us", "immediate_commit_ts_us", "rows", "flags", "commit_order", "writeset",
                  "writeset_session", "fallback", "original_commit_ts_us", "inserts", "updates", "deletes", "nbytes",
                  "events")


def _q(b: bytes) -> array:
    a = array("q")
    a.frombytes(b)
    return a


@dataclass(frozen=True, slots=True)
class NativeClock:
    """One clock's statistics (``clock.rs`` ClockStats): ``histogram`` as (distance bucket, count)
    pairs in the native order."""

    transactions: int
    barriers: int
    parallel: int
    distance_sum: int
    depth: int
    histogram: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, d: dict) -> "NativeClock":
        return cls(d["transactions"], d["barriers"], d["parallel"], d["distance_sum"], d["depth"],
                   tuple(d["histogram"].items()))


@dataclass(frozen=True, slots=True)
class LagSummary:
    """A finished file's commit lags: count, p50 and p99 (us), max (us), from the sketch or not."""

    n: int
    p50_us: float
    p99_us: float
    max_us: int
    sketch: bool


@dataclass(frozen=True, slots=True)
class LagState:
    """The run's lag digest state (``analysis.results.LagDigest``'s fields), to go on merging."""

    cap: int
    values: bytes
    n: int
    min: int
    max: int
    sketch: bool
    small: tuple[int, ...]
    neg: tuple[tuple[int, int], ...]
    pos: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class NativeTotals:
    """The statistics of one file or of the run (``analysis.results.Totals``'s counters);
    ``lags``: a file's :class:`LagSummary` (None: no lags), the run's :class:`LagState`."""

    transactions: int
    rows: int
    bytes: int
    ddl: int
    statement_based: int
    xa: int
    incidents: int
    incomplete: int
    first_ts_us: int | None
    last_ts_us: int | None
    recorded: NativeClock
    largest: tuple[tuple, ...]
    tables: tuple[tuple[str, int], ...]
    lags: LagSummary | LagState | None

    @classmethod
    def of(cls, d: dict) -> "NativeTotals":
        lags = d["lags"]
        if "summary" in lags:
            lag = LagSummary(*lags["summary"]) if lags["summary"] is not None else None
        else:
            lag = LagState(lags["cap"], lags["values"], lags["n"], lags["min"], lags["max"], lags["sketch"],
                           tuple(lags["small"]), tuple(lags["neg"]), tuple(lags["pos"]))
        return cls(d["transactions"], d["rows"], d["bytes"], d["ddl"], d["statement_based"], d["xa"],
                   d["incidents"], d["incomplete"], d["first_ts_us"], d["last_ts_us"], NativeClock.of(d["recorded"]),
                   tuple(d["largest"]), tuple(d["tables"]), lag)


@dataclass(frozen=True, slots=True)
class NativeFile:
    """``read_file``'s counters of one file: events by type code, unknown event types, what it
    saw, the next file a rotate names, the truncated tail ((offset, got, (size, type) or None)
    or None), its transactions and totals."""

    events: tuple[tuple[int, int], ...]
    unknown: tuple[tuple[int, int], ...]
    gtids: bool
    logical_clock: bool
    tagged_gtids: bool
    compression: bool
    optional_metadata: tuple
    next_file: str | None
    truncated: tuple | None
    transactions: int
    totals: NativeTotals

    @classmethod
    def of(cls, d: dict) -> "NativeFile":
        return cls(tuple(d["events"]), tuple(d["unknown"]), d["gtids"], d["logical_clock"], d["tagged_gtids"],
                   d["compression"], tuple(d["optional_metadata"]), d["next_file"], d["truncated"],
                   d["transactions"], NativeTotals.of(d["totals"]))


@dataclass(frozen=True, slots=True)
class NativeFinish:
    """``finish``: the run's totals, every policy's clock (``kinds.POLICIES`` order), the
    fallbacks by reason (native order) and by (reason, table, count), the unknown schemas and
    the caveats (text, count), the WRITESET history resets."""

    total: NativeTotals
    clocks: tuple[NativeClock, ...]
    fallbacks: tuple[tuple[str, int], ...]
    fallback_tables: tuple[tuple[str, str, int], ...]
    unknown: tuple[tuple[str, int], ...]
    caveats: tuple[tuple[str, int], ...]
    resets: int

    @classmethod
    def of(cls, d: dict) -> "NativeFinish":
        return cls(NativeTotals.of(d["total"]), tuple(NativeClock.of(c) for c in d["clocks"]),
                   tuple(d["fallbacks"].items()), tuple(d["fallback_tables"]), tuple(d["unknown"]),
                   tuple(d["caveats"]), d["resets"])


@dataclass(frozen=True, slots=True)
class NativeFacts:
    """``take_facts``: one ``array('q')`` per fact column, in :data:`FACT_COLUMNS` order (the
    fields of ``sim.columns.FactColumns``, which takes them as they are), the database
    names (decoded as the reference decodes them) and the sets of name indices the ``dbset``
    column indexes, the writeset log's rest (``ws_log``: native int64 bytes, with its count of
    unsafe records) and the keyless tables' scans (table, events, rows)."""

    columns: tuple[array, ...]
    db_names: tuple[str, ...]
    dbsets: tuple[tuple[int, ...], ...]
    ws_log: bytes = b""
    ws_log_unsafe: int = 0
    scans: tuple[tuple[str, int, int], ...] = ()

    @classmethod
    def of(cls, d: dict) -> "NativeFacts":
        return cls(tuple(_q(d[name]) for name in FACT_COLUMNS),
                   tuple(b.decode("utf-8", "surrogateescape") for b in d["db_names"]),
                   tuple(tuple(s) for s in d["dbsets"]), d.get("ws_log", b""), d.get("ws_log_unsafe", 0),
                   tuple(d["scans"]))


@dataclass(frozen=True, slots=True)
class NativeRecords:
    """``take_records``: one ``array('q')`` per record column (:data:`RECORD_COLUMNS`), the
    cumulative ends into ``tables`` per record, the table indices into ``names``, each record's
    GTID (str or None) and every table name interned so far."""

    file_idx: array
    start_offset: array
    end_offset: array
    last_committed: array
    sequence_number: array
    thread_id: array
    commit_ts_us: array
    immediate_commit_ts_us: array
    rows: array
    flags: array
    commit_order: array
    writeset: array
    writeset_session: array
    fallback: array
    original_commit_ts_us: array
    inserts: array
    updates: array
    deletes: array
    nbytes: array   # Transaction.bytes: a compressed payload's as the events it holds
    events: array   # Transaction.event_count
    table_ends: array
    tables: array
    gtids: tuple[str | None, ...]
    names: tuple[str, ...]

    @classmethod
    def of(cls, d: dict) -> "NativeRecords":
        return cls(*(_q(d[name]) for name in RECORD_COLUMNS), _q(d["table_ends"]), _q(d["tables"]),
                   tuple(d["gtids"]), tuple(d["names"]))


@dataclass(frozen=True, slots=True)
class NativeGraph:
    """``take_graph``: the ``depgraph.graph.GraphSummary`` numbers, the hot rows (label, count)
    and tables (name, count), and the kept nodes ((index, gtid, seq, last_committed, rows,
    file index, cost)) and edges ((from, to, kind: 0 clock, else conflict, key))."""

    transactions: int
    depth: int
    critical_path_us: float
    serial_us: float
    width: int
    conflicts: int
    hot_rows: tuple[tuple[str, int], ...]
    hot_tables: tuple[tuple[str, int], ...]
    hot_rows_error: int
    nodes: tuple[tuple, ...]
    edges: tuple[tuple[int, int, int, str], ...]

    @classmethod
    def of(cls, d: dict | None) -> "NativeGraph | None":
        if d is None:
            return None
        return cls(d["transactions"], d["depth"], d["critical_path_us"], d["serial_us"], d["width"], d["conflicts"],
                   tuple(d["hot_rows"]), tuple(d["hot_tables"]), d["hot_rows_error"], tuple(d["nodes"]),
                   tuple(d["edges"]))


__all__ = ["FACT_COLUMNS", "LagState", "LagSummary", "NativeClock", "NativeFacts", "NativeFile", "NativeFinish",
           "NativeGraph", "NativeRecords", "NativeTotals", "RECORD_COLUMNS"]
