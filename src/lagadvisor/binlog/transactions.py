"""Events -> transactions, in binlog order, one file at a time.

Boundaries follow mysql-server ``trx_boundary_parser.cpp``: a GTID (or ANONYMOUS/TAGGED GTID, or
MariaDB GTID) event opens a transaction; XID, XA_PREPARE, a COMMIT/ROLLBACK/XA COMMIT query, or a
DDL/standalone statement closes it. Binlogs without GTID events (MySQL < 5.7 with GTID_MODE=OFF)
open at BEGIN or at a standalone statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from ..errors import BinlogError, CorruptEventError
from . import events as ev
from .constants import NO_FOREIGN_KEY_CHECKS_F, STMT_END_F, EventType, RowsKind, event_type_name
from .decoder import Event, EventReader
from .rows import RowsEvent, TableMap, iter_rows

E = EventType

#: The events that open a transaction whatever came before (:class:`TransactionAssembler`): MySQL's
#: GTID, anonymous and tagged GTID events and MariaDB's GTID event.
GTID_EVENTS = frozenset({E.GTID_LOG_EVENT, E.ANONYMOUS_GTID_LOG_EVENT, E.GTID_TAGGED_LOG_EVENT, E.MARIADB_GTID_EVENT})

#: ``select(table_map) -> columns`` : which columns' values a transaction keeps per row image
#: (the key-relevant ones). ``frozenset()`` keeps none; rows are still counted.
ColumnSelector = Callable[[TableMap], frozenset[int]]


def primary_key_selector(tm: TableMap) -> frozenset[int]:
    """Default: the primary key as the table map's optional metadata declares it (FULL metadata)."""
    return frozenset(tm.primary_key or ())


@dataclass(frozen=True, slots=True)
class RowChange:
    """One row image pair of a rows event: ``before``/``after`` map column index -> value for the
    selected columns (None for SQL NULL); the missing image is ``None``."""

    table: str
    kind: RowsKind
    before: dict[int, object] | None
    after: dict[int, object] | None
    no_fk_checks: bool = False  # rows event flag NO_FOREIGN_KEY_CHECKS_F (foreign_key_checks=0)


@dataclass(frozen=True, slots=True)
class TableStats:
    table: str
    inserts: int = 0
    updates: int = 0
    deletes: int = 0
    search_events: int = 0   # UPDATE and DELETE rows events: each makes the replica find its rows

    @property
    def rows(self) -> int:
        return self.inserts + self.updates + self.deletes


@dataclass(frozen=True, slots=True)
class Statement:
    """A QUERY event inside a transaction: ``kind`` is BEGIN/COMMIT/ROLLBACK/XA/SAVEPOINT/DDL/DML/OTHER."""

    kind: str
    db: str
    query: str


@dataclass(frozen=True, slots=True)
class Transaction:
    """One binlog transaction. Offsets are file offsets of its first event and one past its last.

    ``last_committed``/``sequence_number`` are as recorded (``None`` when the file has no
    logical clock); ``commit_id`` is MariaDB's group-commit id.
    """

    file: str
    start_offset: int
    end_offset: int
    index: int
    gtid: str | None
    last_committed: int | None
    sequence_number: int | None
    immediate_commit_timestamp: int
    original_commit_timestamp: int
    transaction_length: int
    server_id: int
    thread_id: int | None
    databases: tuple[str, ...]
    tables: tuple[TableStats, ...]
    rows: int
    row_changes: tuple[RowChange, ...] = field(repr=False)
    statements: tuple[Statement, ...] = field(repr=False)
    event_count: int
    timestamp: int = 0
    compressed: bool = False
    row_changes_truncated: bool = False  # more row images than the assembler keeps (memory bound)
    ddl: bool = False
    statement_based: bool = False
    xa: bool = False
    incident: bool = False
    incomplete: bool = False
    commit_id: int | None = None
    domain_id: int | None = None
    mariadb_flags: int = 0
    mariadb_flags_extra: int = 0
    payload_bytes: int = 0   # its TRANSACTION_PAYLOAD events on disk ...
    inner_bytes: int = 0     # ... and the events inside them, uncompressed
    original_server_version: int = 0
    immediate_server_version: int = 0

    @property
    def bytes(self) -> int:
        """Its events' bytes, a compressed payload's as the events it holds (what the replica
        applies): a compressed transaction of 6,000 rows counted the 107 bytes before its payload."""
        return self.end_offset - self.start_offset - self.payload_bytes + self.inner_bytes

    @property
    def commit_ts_us(self) -> int:
        return self.original_commit_timestamp or self.immediate_commit_timestamp

    @property
    def ctas(self) -> bool:
        """CREATE TABLE ... SELECT (8.0.21+: one transaction, the DDL then the new table's rows)."""
        return self.ddl and self.rows > 0


_WORD = re.compile(r"\s*(?:/\*.*?\*/\s*)*([A-Za-z]+)(?:\s+([A-Za-z]+))?", re.S)
_DDL_WORDS = {"CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "GRANT", "REVOKE", "ANALYZE",
              "OPTIMIZE", "REPAIR", "INSTALL", "UNINSTALL", "FLUSH", "SET"}
_DML_WORDS = {"INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD", "CALL", "DO"}


def classify_statement(query: str) -> str:
    """BEGIN, COMMIT, ROLLBACK, XA, SAVEPOINT, DDL, DML or OTHER (``Query_log_event`` text)."""
    m = _WORD.match(query)
    if not m:
        return "OTHER"
    w = m.group(1).upper()
    if w in ("BEGIN",) or (w == "START" and (m.group(2) or "").upper() == "TRANSACTION"):
        return "BEGIN"
    if w == "COMMIT":
        return "COMMIT"
    if w == "ROLLBACK":
        return "SAVEPOINT" if (m.group(2) or "").upper() == "TO" else "ROLLBACK"
    if w == "XA":
        return "XA"
    if w in ("SAVEPOINT", "RELEASE"):
        return "SAVEPOINT"
    if w in _DDL_WORDS:
        return "DDL"
    if w in _DML_WORDS:
        return "DML"
    return "OTHER"


_ADMIN = ("ANALYZE", "REPAIR", "OPTIMIZE")
#: The first two words of a statement, each cut at 32 characters: no word the checks below look
#: for is that long, and a statement of up to 1 GiB is not split or upper-cased whole to find them.
_HEAD_WORDS = re.compile(r"\s*(\S{1,32})(?:\s+(\S{1,32}))?")


def statement_blocks(query: str) -> bool:
    """``is_trx_unsafe_for_parallel_slave()``'s part for one statement: admin statements and
    CREATE/ALTER/DROP DATABASE (8.0.4x+) make later transactions wait."""
    m = _HEAD_WORDS.match(query)
    head = m.group(1).upper() if m else ""
    if head in _ADMIN:
        return True
    second = m.group(2) if m else None
    return head in ("CREATE", "ALTER", "DROP") and second is not None and second.upper() in ("DATABASE", "SCHEMA")


#: The bytes of a longer statement the native core hands over to be classified
#: (:func:`statement_facts` with ``whole`` False): its first words decide it, and a statement of
#: up to 1 GiB (max_allowed_packet) is not copied into Python and decoded whole to find them.
STATEMENT_HEAD = 1 << 16
#: How far before the end of such a head a match must stop for the head to decide it: past any
#: character the cut split (a UTF-8 sequence of up to 4 bytes, which may be Unicode whitespace).
_HEAD_MARGIN = 8


def statement_facts(text: str, whole: bool = True) -> tuple[str, bool, bool] | None:
    """(:func:`classify_statement`, :func:`statement_blocks`, whether it ends an XA transaction:
    XA COMMIT or XA ROLLBACK) of a statement. With ``whole`` False, ``text`` is only the head of
    a longer statement: None when the head does not decide it as the whole would (a match that
    does not stop well inside the head, or an XA statement, whose end is looked for anywhere)."""
    if not whole:
        limit = len(text) - _HEAD_MARGIN
        m, h = _WORD.match(text), _HEAD_WORDS.match(text)
        if m is None or h is None or m.end() >= limit or h.end() >= limit:
            return None
    kind = classify_statement(text)
    if kind == "XA" and not whole:
        return None
    upper = text.upper() if kind == "XA" else ""
    return kind, statement_blocks(text), ("XA COMMIT" in upper or "XA ROLLBACK" in upper)


class _Open:
    """A transaction being assembled."""

    __slots__ = ("start", "timestamp", "truncated", "gtid_ev", "mgtid", "thread_id", "dbs", "stats", "changes", "statements",
                 "events", "compressed", "ddl", "sbr", "xa", "incident", "rows", "server_id",
                 "in_begin", "payload_end", "payload_bytes", "inner_bytes")

    def __init__(self, start: int, server_id: int, timestamp: int) -> None:
        self.start = start
        self.timestamp = timestamp
        self.truncated = False
        self.gtid_ev: ev.Gtid | None = None
        self.mgtid: ev.MariadbGtid | None = None
        self.thread_id: int | None = None
        self.dbs: dict[str, None] = {}
        self.stats: dict[str, list[int]] = {}
        self.changes: list[RowChange] = []
        self.statements: list[Statement] = []
        self.events = 0
        self.compressed = self.ddl = self.sbr = self.xa = self.incident = False
        self.rows = 0
        self.server_id = server_id
        self.in_begin = False
        self.payload_end = 0     # where its last TRANSACTION_PAYLOAD event ends in the file
        self.payload_bytes = 0   # its payload events' sizes on disk
        self.inner_bytes = 0     # the events inside them


class TransactionAssembler:
    """Groups a file's events into :class:`Transaction` s; also keeps what ``analyze`` reports
    about the file (first FDE, whether compression, row metadata and tagged GTIDs were seen)."""

    #: Row images kept per transaction, so one huge transaction cannot exhaust memory; beyond it
    #: rows are still counted and the transaction is flagged ``row_changes_truncated``.
    MAX_ROW_CHANGES = 500_000

    def __init__(self, reader: EventReader, file: str, selector: ColumnSelector | None = None) -> None:
        self.reader = reader
        self.file = file
        self.selector = selector or primary_key_selector
        self.index = 0
        self.saw_compression = False
        self.saw_tagged_gtid = False
        self.saw_optional_metadata: set[int] = set()
        self.saw_gtid = False
        self.saw_logical_clock = False
        self.rotate_to: str | None = None
        # Columns to keep per table id, asked of the selector once per transaction (the
        # selector's answer may change with DDL even when the table map bytes do not).
        self._selected: dict[int, frozenset[int]] = {}
        self.reader_end = 0  # set by the caller to the offset where reading stopped
        #: Where the transaction left open when the events ran out starts (None: none was).
        self.unfinished: int | None = None

    def transactions(self, events: Iterable[Event]) -> Iterator[Transaction]:
        cur: _Open | None = None
        for e in events:
            code = e.type_code
            body = e.body
            if code in GTID_EVENTS:
                if cur is not None:
                    # A GTID while a transaction is open: the previous one never ended (a crash
                    # mid-write followed by a restart). Close it as incomplete.
                    yield self._close(cur, e.offset, incomplete=True)
                cur = self._begin_gtid(e, body)
                continue
            if code == E.ROTATE_EVENT:
                self.rotate_to = body.next_file  # type: ignore[union-attr]
            if code in (E.FORMAT_DESCRIPTION_EVENT, E.ROTATE_EVENT, E.PREVIOUS_GTIDS_LOG_EVENT,
                        E.STOP_EVENT, E.GTID_LIST_EVENT, E.BINLOG_CHECKPOINT_EVENT,
                        E.HEARTBEAT_LOG_EVENT, E.HEARTBEAT_LOG_EVENT_V2):
                if cur is not None and code in (E.FORMAT_DESCRIPTION_EVENT, E.STOP_EVENT):
                    yield self._close(cur, e.offset, incomplete=True)
                    cur = None
                continue
            if cur is None:
                # GTID-less binlogs (MySQL <= 5.6 without GTIDs): a transaction starts at BEGIN,
                # at a statement, at its context events (INTVAR, USER_VAR, RAND, LOAD blocks) or,
                # for 5.1-era non-transactional tables, at a bare TABLE_MAP.
                cur = _Open(e.offset, e.server_id, e.timestamp)
                self._selected.clear()
            cur.events += 1
            end = e.offset + e.size
            if e.inner:
                cur.compressed = True
                cur.inner_bytes += e.size
                end = max(end, cur.payload_end)   # inner events carry the payload's offset
            if self._ends(cur, e, code, body):
                yield self._close(cur, end)
                cur = None
        if cur is not None:
            self.unfinished = cur.start
            yield self._close(cur, self.reader_end, incomplete=True)

    def _begin_gtid(self, e: Event, body) -> _Open:
        """The transaction a GTID event opens (MySQL's, tagged or anonymous, or MariaDB's)."""
        cur = _Open(e.offset, e.server_id, e.timestamp)
        self._selected.clear()
        cur.events = 1
        if isinstance(body, ev.Gtid):
            cur.gtid_ev = body
            self.saw_gtid = self.saw_gtid or not body.anonymous
            self.saw_logical_clock = self.saw_logical_clock or body.sequence_number is not None
            self.saw_tagged_gtid = self.saw_tagged_gtid or bool(body.tag)
        elif isinstance(body, ev.MariadbGtid):
            cur.mgtid = body
            self.saw_gtid = True
            # MariaDB writes no BEGIN: its GTID event opens the group, which a COMMIT or XID ends,
            # unless FL_STANDALONE (one statement, DDL). A statement-based group was cut at its
            # first statement, the rest read as GTID-less transactions.
            cur.in_begin = not body.flags2 & ev.MariadbGtid.FL_STANDALONE
        return cur

    def _ends(self, cur: _Open, e: Event, code: int, body) -> bool:
        """Add one event of the open transaction; whether the transaction ends with it."""
        if code == E.TRANSACTION_PAYLOAD_EVENT:
            self.saw_compression = True
            cur.compressed = True
            cur.payload_end = e.offset + e.size
            cur.payload_bytes += e.size
            return False
        if isinstance(body, ev.Query) and code != E.EXECUTE_LOAD_QUERY_EVENT:
            return self._query_ends(cur, body)
        if isinstance(body, TableMap):
            cur.dbs.setdefault(body.database_name, None)
            self.saw_optional_metadata.update(body.optional_types)
            return False
        if isinstance(body, RowsEvent):
            try:
                self._rows(cur, body)
            except BinlogError as err:
                raise err.located(self.file, e.offset, event_type_name(code))
            except (ValueError, IndexError, OverflowError, UnicodeError) as err:
                # A value decoder over bytes the row image's layout allowed (decode_value)
                raise CorruptEventError(f"undecodable row image: {err}", file=self.file, offset=e.offset,
                                        event_type=event_type_name(code)) from err
            # Rows of a non-transactional table logged without BEGIN (5.1 era).
            return bool(body.flags & STMT_END_F and not cur.in_begin and cur.gtid_ev is None
                        and cur.mgtid is None)
        if code == E.EXECUTE_LOAD_QUERY_EVENT:
            cur.sbr = True
            return not cur.in_begin
        if isinstance(body, ev.Xid):
            return True
        if isinstance(body, ev.XaPrepare):
            cur.xa = True
            return True
        if isinstance(body, ev.Incident):
            cur.incident = True
            return not cur.in_begin
        # ROWS_QUERY, ANNOTATE_ROWS, INTVAR, USER_VAR, RAND, unknown: part of the transaction.
        return False

    def _query_ends(self, cur: _Open, body: ev.Query) -> bool:
        """A statement of the open transaction; whether it ends the transaction (COMMIT,
        ROLLBACK, XA COMMIT/ROLLBACK outside BEGIN, or any statement outside BEGIN..COMMIT)."""
        if cur.thread_id is None:
            cur.thread_id = body.thread_id
        kind = classify_statement(body.query)
        cur.statements.append(Statement(kind, body.db, body.query))
        if body.db:
            cur.dbs.setdefault(body.db, None)
        if kind == "BEGIN":
            cur.in_begin = True
            return False
        if kind in ("COMMIT", "ROLLBACK"):
            return True
        if kind == "XA":
            cur.xa = True
            q = body.query.upper()
            return ("XA COMMIT" in q or "XA ROLLBACK" in q) and not cur.in_begin
        if kind == "DDL":
            cur.ddl = True
        elif kind in ("DML", "OTHER"):
            cur.sbr = True
        # A statement outside BEGIN..COMMIT is a transaction of its own.
        return not cur.in_begin

    def _rows(self, cur: _Open, body: RowsEvent) -> None:
        tm = self.reader.table_map(body.table_id)
        name = tm.qualified_name
        wanted = self._selected.get(body.table_id)
        if wanted is None:
            wanted = self._selected[body.table_id] = self.selector(tm)
        plans = self.reader.plans(tm)
        n = 0
        kind = body.kind
        changes = cur.changes
        keep = bool(wanted) and not cur.truncated
        no_fk = bool(body.flags & NO_FOREIGN_KEY_CHECKS_F)
        for before, after in iter_rows(body, tm, plans, wanted):
            n += 1
            if keep:
                changes.append(RowChange(name, kind, before, after, no_fk))
        if len(changes) > self.MAX_ROW_CHANGES:
            del changes[self.MAX_ROW_CHANGES:]
            cur.truncated = True
        st = cur.stats.get(name)
        if st is None:
            st = cur.stats[name] = [0, 0, 0, 0]
        st[kind] += n
        if kind != RowsKind.WRITE:
            st[3] += 1
        cur.rows += n

    def _close(self, cur: _Open, end: int, incomplete: bool = False) -> Transaction:
        self.index += 1
        g = cur.gtid_ev
        m = cur.mgtid
        gtid = g.gtid if g is not None else (m.gtid if m is not None else None)
        tables = tuple(TableStats(n, s[0], s[1], s[2], s[3]) for n, s in cur.stats.items())
        return Transaction(
            file=self.file, start_offset=cur.start, end_offset=end, index=self.index, gtid=gtid,
            last_committed=g.last_committed if g else None,
            sequence_number=g.sequence_number if g else None,
            immediate_commit_timestamp=g.immediate_commit_timestamp if g else 0,
            original_commit_timestamp=g.original_commit_timestamp if g else 0,
            transaction_length=g.transaction_length if g else 0,
            server_id=cur.server_id, thread_id=cur.thread_id, databases=tuple(cur.dbs),
            tables=tables, rows=cur.rows, row_changes=tuple(cur.changes),
            statements=tuple(cur.statements), event_count=cur.events, timestamp=cur.timestamp,
            compressed=cur.compressed, row_changes_truncated=cur.truncated,
            ddl=cur.ddl or bool(m and m.flags2 & ev.MariadbGtid.FL_DDL), statement_based=cur.sbr,
            xa=cur.xa, incident=cur.incident, incomplete=incomplete,
            commit_id=m.commit_id if m else None, domain_id=m.domain_id if m else None,
            mariadb_flags=m.flags2 if m else 0, mariadb_flags_extra=m.flags_extra if m else 0,
            payload_bytes=cur.payload_bytes, inner_bytes=cur.inner_bytes,
            original_server_version=g.original_server_version if g else 0,
            immediate_server_version=g.immediate_server_version if g else 0,
        )
