"""From framed events to decoded events: the dispatch table and the reader's state.

The only mutable state is what MySQL's own readers keep (``Format_description_event`` and the
table-id map, cleared at a rotation): go-mysql's ``BinlogParser`` and rust_mysql_common's
``EventStreamReader`` do the same. Inner events of a TRANSACTION_PAYLOAD event are read with the
enclosing file's FDE, as if inline.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator

from ..errors import BinlogError, CorruptEventError, UnsupportedFormatError
from . import events as ev
from .constants import ROWS_EVENTS, EventType
from .framing import EventFramer, RawEvent
from .payload import TransactionPayload, decode_transaction_payload, mariadb_uncompress
from .rows import ColumnPlan, TableMap, decode_rows, decode_table_map, table_plan

E = EventType

#: type code -> decoder(raw, fde). Types absent here are counted as :class:`events.Other`.
DECODERS: dict[int, Callable] = {
    E.ROTATE_EVENT: ev.decode_rotate,
    E.STOP_EVENT: lambda raw, fde: ev.Stop(),
    E.GTID_LOG_EVENT: ev.decode_gtid,
    E.ANONYMOUS_GTID_LOG_EVENT: ev.decode_gtid,
    E.GTID_TAGGED_LOG_EVENT: ev.decode_gtid_tagged,
    E.PREVIOUS_GTIDS_LOG_EVENT: ev.decode_previous_gtids,
    E.QUERY_EVENT: ev.decode_query,
    E.XID_EVENT: ev.decode_xid,
    E.XA_PREPARE_LOG_EVENT: ev.decode_xa_prepare,
    E.TABLE_MAP_EVENT: decode_table_map,
    E.INCIDENT_EVENT: ev.decode_incident,
    E.EXECUTE_LOAD_QUERY_EVENT: ev.decode_execute_load_query,
    E.ROWS_QUERY_LOG_EVENT: ev.decode_rows_query,
    E.ANNOTATE_ROWS_EVENT: ev.decode_rows_query,
    E.HEARTBEAT_LOG_EVENT: ev.decode_heartbeat,
    E.TRANSACTION_PAYLOAD_EVENT: decode_transaction_payload,
    E.MARIADB_GTID_EVENT: ev.decode_mariadb_gtid,
    E.GTID_LIST_EVENT: ev.decode_gtid_list,
    E.BINLOG_CHECKPOINT_EVENT: ev.decode_binlog_checkpoint,
}
for _code in ROWS_EVENTS:
    DECODERS[_code] = decode_rows

#: Types we know and deliberately do not decode (their content does not affect dependencies).
KNOWN_UNDECODED = frozenset({
    E.INTVAR_EVENT, E.RAND_EVENT, E.USER_VAR_EVENT, E.BEGIN_LOAD_QUERY_EVENT,
    E.APPEND_BLOCK_EVENT, E.DELETE_FILE_EVENT, E.IGNORABLE_LOG_EVENT,
    E.TRANSACTION_CONTEXT_EVENT, E.VIEW_CHANGE_EVENT, E.HEARTBEAT_LOG_EVENT_V2, E.SLAVE_EVENT,
    E.CREATE_FILE_EVENT, E.EXEC_LOAD_EVENT, E.NEW_LOAD_EVENT, E.LOAD_EVENT,
    E.LARGE_TRANSACTION_HEADER_EVENT,
})


@dataclass(frozen=True, slots=True)
class Event:
    """A decoded event with its framing: ``offset`` in the file (for inner events of a payload,
    the payload event's offset), ``inner`` when it came out of a TRANSACTION_PAYLOAD."""

    offset: int
    type_code: int
    timestamp: int
    server_id: int
    size: int
    body: object
    inner: bool = False


_QUERIES = (E.QUERY_EVENT, E.QUERY_COMPRESSED_EVENT)


def not_sql(query: str) -> bool:
    """A statement no server wrote: empty, or starting with a NUL byte (MySQL's lexer takes a
    NUL that is not the end of the text as a character, so the replica's applier stops on a
    syntax error). Crafted or damaged bytes that happen to frame as a QUERY event."""
    return not query or query[0] == "\0"


def not_sql_warning(file: str, count: int, first: tuple[int, bool, int]) -> str:
    """The file's one warning for its :func:`not_sql` statements (counted, first one located)."""
    offset, inner, size = first
    where = "QUERY_EVENT inside TRANSACTION_PAYLOAD_EVENT" if inner else "QUERY_EVENT"
    return (f"{file} at offset {offset} ({where}): statement is not SQL text ({size:,}-byte event, "
            f"empty or starting with a NUL byte); {count:,} such statement(s) in the file, read as "
            f"statement-based (kind OTHER)")


class EventReader:
    """Decodes the events of one binlog stream. ``counts`` tallies every event by type name,
    inner events of compressed payloads included."""

    def __init__(self, file: str = "") -> None:
        self.file = file
        self.fde: ev.FormatDescription = ev.DEFAULT_FDE
        self.first_fde: ev.FormatDescription | None = None
        self.table_maps: dict[int, TableMap] = {}
        self._plans: dict[int, tuple[TableMap, tuple[ColumnPlan, ...]]] = {}
        # TABLE_MAP events repeat in every transaction with the same bytes: decode each distinct
        # body once (bounded; cleared with the FDE state).
        self._tm_cache: dict[bytes, TableMap] = {}
        self.counts: Counter[str] = Counter()
        self.unknown: Counter[int] = Counter()
        # QUERY events whose statement is not SQL text (empty, or a NUL byte first): how many,
        # and the first one's (offset, inside a payload, event size) for the file's warning.
        self.not_sql = 0
        self.first_not_sql: tuple[int, bool, int] | None = None

    def plans(self, tm: TableMap) -> tuple[ColumnPlan, ...]:
        cached = self._plans.get(tm.table_id)
        if cached is None or cached[0] is not tm:
            cached = self._plans[tm.table_id] = (tm, table_plan(tm))
        return cached[1]

    def table_map(self, table_id: int) -> TableMap:
        tm = self.table_maps.get(table_id)
        if tm is None:
            raise CorruptEventError(f"rows event for table id {table_id} without a preceding TABLE_MAP")
        return tm

    def read(self, stream: BinaryIO, *, base_offset: int = 0,
             splice: tuple[int, int] | None = None) -> Iterator[Event]:
        """Events of a binlog file body (after the magic); ``splice``: see :class:`EventFramer`."""
        framer = EventFramer(stream, file=self.file, base_offset=base_offset, splice=splice)
        for raw in framer:
            yield from self._decode(raw, framer.checksum_alg, inner=False)

    def _decode(self, raw: RawEvent, checksum_alg: int, inner: bool) -> Iterator[Event]:
        code = raw.type_code
        name = raw.type_name
        self.counts[name] += 1
        try:
            if code == E.FORMAT_DESCRIPTION_EVENT:
                fde = ev.decode_fde(raw, checksum_alg)
                self.fde = fde
                if self.first_fde is None:
                    self.first_fde = fde
                # A new FDE starts a new stream (server restart or relay-log source change).
                self.table_maps.clear()
                self._plans.clear()
                self._tm_cache.clear()
                body: object = fde
            elif code == E.START_EVENT_V3:
                raise UnsupportedFormatError("binlog format v1/v3 (MySQL 3.23-4.x) is not supported")
            elif code in (E.PRE_GA_WRITE_ROWS_EVENT, E.PRE_GA_UPDATE_ROWS_EVENT, E.PRE_GA_DELETE_ROWS_EVENT):
                raise UnsupportedFormatError("pre-GA 5.1 rows event (MySQL 5.1.0-5.1.15) is not supported")
            elif code == E.PARTIAL_ROW_DATA_EVENT:
                raise UnsupportedFormatError("MariaDB fragmented row events (PARTIAL_ROW_DATA) are not supported")
            elif code == E.START_ENCRYPTION_EVENT:
                raise UnsupportedFormatError("encrypted MariaDB binlog (START_ENCRYPTION_EVENT): "
                                             "decrypt it with mariadb-binlog first")
            elif code == E.QUERY_COMPRESSED_EVENT:
                q = ev.decode_query(raw, self.fde)
                body = ev.decode_query(raw, self.fde, mariadb_uncompress(
                    q.query.encode("utf-8", "surrogateescape")))
            elif code == E.TABLE_MAP_EVENT:
                key = raw.data[19:raw.body_end]
                body = self._tm_cache.get(key)
                if body is None:
                    if len(self._tm_cache) > 4096:
                        self._tm_cache.clear()
                    body = self._tm_cache[key] = decode_table_map(raw, self.fde)
            elif code in ROWS_EVENTS:
                body = decode_rows(raw, self.fde, mariadb_uncompress)
            else:
                dec = DECODERS.get(code)
                if dec is None:
                    known = code in KNOWN_UNDECODED
                    if not known:
                        self.unknown[code] += 1
                    body = ev.Other(code, known)
                else:
                    body = dec(raw, self.fde)
            if code == E.TABLE_MAP_EVENT:
                self.table_maps[body.table_id] = body  # type: ignore[union-attr]
        except BinlogError as err:
            raise err.located(self.file, raw.offset, name)
        except (ValueError, IndexError, OverflowError, UnicodeError) as err:
            raise CorruptEventError(f"undecodable body: {err}", file=self.file, offset=raw.offset,
                                    event_type=name) from err
        if code in _QUERIES and not_sql(body.query):  # type: ignore[union-attr]
            self.not_sql += 1
            if self.first_not_sql is None:
                self.first_not_sql = (raw.offset, inner, raw.event_size)
        yield Event(raw.offset, code, raw.timestamp, raw.server_id, raw.event_size, body, inner)
        if code == E.TRANSACTION_PAYLOAD_EVENT:
            yield from self._inner(raw, body)  # type: ignore[arg-type]

    def _inner(self, raw: RawEvent, payload: TransactionPayload) -> Iterator[Event]:
        """Inner events of a compressed transaction, read from a streaming decompressor."""
        try:
            stream = payload.open()
            framer = EventFramer(stream, file=self.file, base_offset=0, checksums=False)
            for inner in framer:
                if inner.type_code in (E.FORMAT_DESCRIPTION_EVENT, E.TRANSACTION_PAYLOAD_EVENT):
                    raise CorruptEventError(f"{inner.type_name} inside a transaction payload")
                inner = RawEvent(raw.offset, inner.timestamp, inner.type_code, inner.server_id,
                                 inner.event_size, inner.log_pos, inner.flags, inner.data, inner.body_end)
                yield from self._decode(inner, 0, inner=True)
        except BinlogError as err:
            msg = err.message if isinstance(err, CorruptEventError) else f"truncated payload: {err.message}"
            raise CorruptEventError(f"inside compressed transaction payload: {msg}", file=self.file,
                                    offset=raw.offset, event_type="TRANSACTION_PAYLOAD_EVENT") from err
        except Exception as err:  # zstandard raises its own ZstdError
            if type(err).__name__ != "ZstdError":
                raise
            raise CorruptEventError(f"compressed transaction payload does not decompress: {err}",
                                    file=self.file, offset=raw.offset,
                                    event_type="TRANSACTION_PAYLOAD_EVENT") from err
