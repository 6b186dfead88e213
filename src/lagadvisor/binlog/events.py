"""Decoders for control, GTID, statement and MariaDB events.

Each ``decode_*`` is a pure function ``(raw, ctx) -> event`` over the body of one framed event.
Layouts follow mysql-server ``libs/mysql/binlog/event/{control_events,statement_events}.cpp`` and
MariaDB ``sql/log_event.cc``; optional trailing fields are gated on the bytes left, never on a
server version (style rule 2).
"""

from __future__ import annotations

import uuid as _uuid
from dataclasses import dataclass, field

from ..errors import CorruptEventError, UnsupportedFormatError
from .constants import LOG_EVENT_HEADER_LEN, EventType
from .cursor import Cursor
from .framing import RawEvent, version_tuple


@dataclass(frozen=True, slots=True)
class FormatDescription:
    """FORMAT_DESCRIPTION_EVENT: ``binlog_version`` (2), ``server_version`` (50), ``create_timestamp``
    (4), ``common_header_len`` (1), ``post_header_len`` (one byte per event type)."""

    EVENT_TYPE = EventType.FORMAT_DESCRIPTION_EVENT
    binlog_version: int
    server_version: str
    create_timestamp: int
    common_header_len: int
    post_header_len: bytes
    checksum_alg: int

    @property
    def version(self) -> tuple[int, int, int]:
        return version_tuple(self.server_version)

    @property
    def is_mariadb(self) -> bool:
        return "mariadb" in self.server_version.lower()

    def post_header(self, type_code: int, default: int) -> int:
        """Post-header length of ``type_code`` as this FDE declares it (``default`` if absent)."""
        i = type_code - 1
        if 0 <= i < len(self.post_header_len):
            return self.post_header_len[i]
        return default


#: What the reader assumes before it has seen a FORMAT_DESCRIPTION event (relay-log fragments,
#: payload inner events use the enclosing file's FDE).
DEFAULT_FDE = FormatDescription(4, "", 0, LOG_EVENT_HEADER_LEN, b"", 0)


@dataclass(frozen=True, slots=True)
class Rotate:
    EVENT_TYPE = EventType.ROTATE_EVENT
    position: int
    next_file: str


@dataclass(frozen=True, slots=True)
class Stop:
    EVENT_TYPE = EventType.STOP_EVENT


@dataclass(frozen=True, slots=True)
class Gtid:
    """GTID_LOG_EVENT, ANONYMOUS_GTID_LOG_EVENT and GTID_TAGGED_LOG_EVENT.

    ``last_committed``/``sequence_number`` are ``None`` for 5.6 events without a logical clock.
    Commit timestamps are microseconds since the epoch (0 when the server did not write them).
    """

    EVENT_TYPE = EventType.GTID_LOG_EVENT
    anonymous: bool
    gtid_flags: int
    sid: str
    gno: int
    tag: str
    last_committed: int | None
    sequence_number: int | None
    immediate_commit_timestamp: int
    original_commit_timestamp: int
    transaction_length: int
    immediate_server_version: int
    original_server_version: int
    commit_group_ticket: int = 0

    @property
    def gtid(self) -> str | None:
        if self.anonymous:
            return None
        if self.tag:
            return f"{self.sid}:{self.tag}:{self.gno}"
        return f"{self.sid}:{self.gno}"


@dataclass(frozen=True, slots=True)
class PreviousGtids:
    EVENT_TYPE = EventType.PREVIOUS_GTIDS_LOG_EVENT
    gtid_set: str


@dataclass(frozen=True, slots=True)
class Query:
    """QUERY_EVENT (and MariaDB QUERY_COMPRESSED_EVENT once inflated). ``thread_id`` is the
    session's ``pseudo_thread_id`` (``slave_proxy_id``)."""

    EVENT_TYPE = EventType.QUERY_EVENT
    thread_id: int
    exec_time: int
    error_code: int
    db: str
    query: str
    status_vars: bytes = field(repr=False, default=b"")


@dataclass(frozen=True, slots=True)
class Xid:
    EVENT_TYPE = EventType.XID_EVENT
    xid: int


@dataclass(frozen=True, slots=True)
class XaPrepare:
    EVENT_TYPE = EventType.XA_PREPARE_LOG_EVENT
    one_phase: bool
    format_id: int
    gtrid: bytes
    bqual: bytes


@dataclass(frozen=True, slots=True)
class Incident:
    EVENT_TYPE = EventType.INCIDENT_EVENT
    incident: int
    message: str


@dataclass(frozen=True, slots=True)
class RowsQuery:
    """ROWS_QUERY_LOG_EVENT and MariaDB ANNOTATE_ROWS_EVENT: the statement behind the row events."""

    EVENT_TYPE = EventType.ROWS_QUERY_LOG_EVENT
    query: str


@dataclass(frozen=True, slots=True)
class Heartbeat:
    EVENT_TYPE = EventType.HEARTBEAT_LOG_EVENT
    log_ident: str


@dataclass(frozen=True, slots=True)
class MariadbGtid:
    """MariaDB GTID_EVENT: ``domain_id-server_id-seq_no``; ``commit_id`` when the transaction was
    part of a group commit (``FL_GROUP_COMMIT_ID``)."""

    EVENT_TYPE = EventType.MARIADB_GTID_EVENT
    seq_no: int
    domain_id: int
    server_id: int
    flags2: int
    commit_id: int | None
    xid: bytes | None = None
    flags_extra: int = 0

    FL_STANDALONE = 1
    FL_GROUP_COMMIT_ID = 2
    FL_TRANSACTIONAL = 4
    FL_ALLOW_PARALLEL = 8
    FL_WAITED = 16
    FL_DDL = 32
    FL_PREPARED_XA = 64
    FL_COMPLETED_XA = 128
    # flags_extra (10.8+, binlog_alter_two_phase: log_event.h): START ALTER is logged when the
    # ALTER begins, then COMMIT ALTER (the same statement) or ROLLBACK ALTER when it ends
    FL_EXTRA_START_ALTER = 2
    FL_EXTRA_COMMIT_ALTER = 4
    FL_EXTRA_ROLLBACK_ALTER = 8

    @property
    def gtid(self) -> str:
        return f"{self.domain_id}-{self.server_id}-{self.seq_no}"


@dataclass(frozen=True, slots=True)
class GtidList:
    EVENT_TYPE = EventType.GTID_LIST_EVENT
    gtids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BinlogCheckpoint:
    EVENT_TYPE = EventType.BINLOG_CHECKPOINT_EVENT
    binlog_file: str


@dataclass(frozen=True, slots=True)
class Other:
    """An event whose body this reader does not need (INTVAR, USER_VAR, VIEW_CHANGE, ...), or one
    whose type it does not know (``known`` False): counted and reported, never dropped quietly."""

    type_code: int
    known: bool


def _text(b: bytes | memoryview) -> str:
    return str(b, "utf-8", "surrogateescape")


# --------------------------------------------------------------------------- decoders

def decode_fde(raw: RawEvent, checksum_alg: int) -> FormatDescription:
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    binlog_version = c.u16("binlog_version")
    if binlog_version != 4:
        raise UnsupportedFormatError(f"binlog format version {binlog_version} (only v4 is supported)")
    server_version = c.cstring_fixed(50, "server_version")
    created = c.u32("create_timestamp")
    header_len = c.u8("common_header_len")
    if header_len < LOG_EVENT_HEADER_LEN:
        raise CorruptEventError(f"common header length {header_len} < {LOG_EVENT_HEADER_LEN}")
    post = c.rest()
    return FormatDescription(binlog_version, server_version, created, header_len, post, checksum_alg)


def decode_rotate(raw: RawEvent, fde: FormatDescription) -> Rotate:
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    position = c.u64("position") if fde.post_header(EventType.ROTATE_EVENT, 8) >= 8 else 4
    return Rotate(position, _text(c.rest()))


def decode_gtid(raw: RawEvent, fde: FormatDescription) -> Gtid:
    """``Gtid_event::Gtid_event(const char*, const Format_description_event*)``.

    Post-header: gtid_flags(1) sid(16) gno(8) [lt_type(1)=2 last_committed(8) sequence_number(8)];
    then optional: immediate_commit_timestamp(7, bit 55 = original follows) [original(7)],
    transaction_length (packed), immediate_server_version(4, bit 31 = original follows)
    [original_server_version(4)], commit_group_ticket(8).
    """
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    gtid_flags = c.u8("gtid_flags")
    sid = c.bytes(16, "sid")
    gno = c.u64("gno")
    last_committed = sequence_number = None
    if c.remaining >= 17:
        lt_type = c.u8("lt_type")
        if lt_type != 2:
            raise CorruptEventError(f"unknown logical timestamp typecode {lt_type}")
        last_committed = c.u64("last_committed")
        sequence_number = c.u64("sequence_number")
    immediate = original = 0
    trx_length = 0
    imm_ver = orig_ver = 0
    ticket = 0
    if c.remaining:
        immediate = c.uint(7, "immediate_commit_timestamp")
        if immediate & (1 << 55):
            immediate &= ~(1 << 55)
            original = c.uint(7, "original_commit_timestamp")
        else:
            original = immediate
        if c.remaining:
            trx_length = c.packed("transaction_length")
        if c.remaining >= 4:
            imm_ver = c.u32("immediate_server_version")
            if imm_ver & (1 << 31):
                imm_ver &= ~(1 << 31)
                orig_ver = c.u32("original_server_version")
            else:
                orig_ver = imm_ver
        if c.remaining >= 8:
            ticket = c.u64("commit_group_ticket")
    c.expect_end("GTID event")
    anonymous = raw.type_code == EventType.ANONYMOUS_GTID_LOG_EVENT
    return Gtid(anonymous, gtid_flags, str(_uuid.UUID(bytes=sid)), gno, "", last_committed,
                sequence_number, immediate, original, trx_length, imm_ver, orig_ver, ticket)


def _format_intervals(uuid_text: str, intervals: list[tuple[int, int]]) -> str:
    parts = [f"{s}" if e - 1 == s else f"{s}-{e - 1}" for s, e in intervals]
    return uuid_text + ":" + ":".join(parts)


def decode_previous_gtids(raw: RawEvent, fde: FormatDescription) -> PreviousGtids:
    """``Gtid_set::add_gtid_encoding``: n_sids(8) then per sid: uuid(16) n_intervals(8)
    (start(8), end_exclusive(8))*. The tagged format (8.3+) marks the top byte of n_sids with 1
    and writes each sid's tag after its uuid."""
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    word = c.u64("n_sids")
    tagged = (word >> 56) == 1
    n_sids = (word >> 8) & ((1 << 48) - 1) if tagged else word & ((1 << 56) - 1)
    if n_sids > c.remaining // 24 + 1:
        raise CorruptEventError(f"PREVIOUS_GTIDS claims {n_sids} sids in {c.remaining} bytes")
    out: list[str] = []
    for _ in range(n_sids):
        sid = str(_uuid.UUID(bytes=c.bytes(16, "sid")))
        tag = ""
        if tagged:
            tag = _text(c.bytes(_varlen_uint(c, "tag length"), "tag"))
        n = c.u64("n_intervals")
        if n > c.remaining // 16:
            raise CorruptEventError(f"PREVIOUS_GTIDS claims {n} intervals in {c.remaining} bytes")
        intervals = [(c.u64("start"), c.u64("end")) for _ in range(n)]
        out.append(_format_intervals(sid + (":" + tag if tag else ""), intervals))
    c.expect_end("PREVIOUS_GTIDS event")
    return PreviousGtids(",\n".join(out))


def _varlen_uint(c: Cursor, what: str) -> int:
    """mysql::serialization variable-length unsigned integer (libs/mysql/serialization/
    variable_length_integers.h): the count of trailing 1-bits in the first byte gives the number
    of extra bytes; the value is the little-endian whole shifted right by that count + 1
    (9-byte form: a first byte of 0xff followed by 8 value bytes)."""
    first = c.u8(what)
    n = 0
    while n < 8 and first & (1 << n):
        n += 1
    if n == 8:
        return c.u64(what)
    rest = c.uint(n, what) if n else 0
    return ((rest << 8) | first) >> (n + 1)


def _varlen_int(c: Cursor, what: str) -> int:
    """Signed variant: zig-zag over the unsigned encoding."""
    z = _varlen_uint(c, what)
    return (z >> 1) ^ -(z & 1)


#: Gtid_event fields in the mysql::serialization message of GTID_TAGGED_LOG_EVENT
#: (control_events.h ``Gtid_event::define_fields``): id -> (name, signed).
_TAGGED_FIELDS = {
    0: ("gtid_flags", False), 1: ("uuid", None), 2: ("gno", True), 3: ("tag", None),
    4: ("last_committed", True), 5: ("sequence_number", True),
    6: ("immediate_commit_timestamp", False), 7: ("original_commit_timestamp", False),
    8: ("transaction_length", False), 9: ("immediate_server_version", False),
    10: ("original_server_version", False), 11: ("commit_group_ticket", False),
}


def decode_gtid_tagged(raw: RawEvent, fde: FormatDescription) -> Gtid:
    """GTID_TAGGED_LOG_EVENT (8.3+): one mysql::serialization message: format version, message
    size (bytes, header included), last non-ignorable field id, then ``(field id, value)`` pairs
    in id order; absent fields keep their defaults (the original timestamp and server version
    default to the immediate ones). Integers are variable-length, signed ones zig-zag encoded;
    the UUID is 16 encoded bytes; the tag a length-prefixed string."""
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    start = c.pos
    _varlen_uint(c, "serialization format version")
    size = _varlen_uint(c, "message size")
    if size > raw.body_end - start:
        raise CorruptEventError(f"tagged GTID message of {size} bytes in a {raw.body_end - start}-byte body")
    if size < c.pos - start:
        raise CorruptEventError(f"tagged GTID message of {size} bytes ends inside its own header")
    c.end = start + size
    _varlen_uint(c, "last non-ignorable field id")
    values: dict[str, object] = {}
    last_id = -1
    while c.remaining:
        fid = _varlen_uint(c, "field id")
        if fid <= last_id or fid not in _TAGGED_FIELDS:
            raise CorruptEventError(f"tagged GTID: unexpected field id {fid}")
        last_id = fid
        name, signed = _TAGGED_FIELDS[fid]
        if name == "uuid":
            values[name] = bytes(_varlen_uint(c, "uuid byte") & 0xFF for _ in range(16))
        elif name == "tag":
            n = _varlen_uint(c, "tag length")
            if n > 32:
                raise CorruptEventError(f"tagged GTID: tag of {n} bytes (at most 32)")
            values[name] = _text(c.bytes(n, "tag"))
        else:
            values[name] = _varlen_int(c, name) if signed else _varlen_uint(c, name)
    immediate = int(values.get("immediate_commit_timestamp", 0))
    imm_ver = int(values.get("immediate_server_version", 0))
    sid = values.get("uuid", bytes(16))
    return Gtid(False, int(values.get("gtid_flags", 0)), str(_uuid.UUID(bytes=sid)),
                int(values.get("gno", 0)), str(values.get("tag", "")),
                int(values.get("last_committed", 0)), int(values.get("sequence_number", 0)),
                immediate, int(values.get("original_commit_timestamp", immediate)),
                int(values.get("transaction_length", 0)), imm_ver,
                int(values.get("original_server_version", imm_ver)),
                int(values.get("commit_group_ticket", 0)))


def decode_query(raw: RawEvent, fde: FormatDescription, query_bytes: bytes | None = None) -> Query:
    """Query_event: thread_id(4) exec_time(4) db_len(1) error_code(2) status_vars_len(2)
    [post-header may be longer], status vars, db, NUL, query."""
    post = fde.post_header(raw.type_code if raw.type_code < 160 else EventType.QUERY_EVENT, 13)
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    thread_id = c.u32("thread_id")
    exec_time = c.u32("exec_time")
    db_len = c.u8("db_len")
    error_code = c.u16("error_code")
    status_len = c.u16("status_vars_len") if post >= 13 else 0
    if post > 13:
        c.skip(post - 13, "post-header")
    status = c.bytes(status_len, "status_vars")
    db = c.bytes(db_len, "db")
    c.skip(1, "db terminator")
    query = c.rest_view() if query_bytes is None else query_bytes
    return Query(thread_id, exec_time, error_code, _text(db), _text(query), status)


def decode_xid(raw: RawEvent, fde: FormatDescription) -> Xid:
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    xid = c.u64("xid")  # Xid_event reads 8 bytes and, like the server, ignores any rest
    return Xid(xid)


def decode_xa_prepare(raw: RawEvent, fde: FormatDescription) -> XaPrepare:
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    one_phase = bool(c.u8("one_phase"))
    format_id = c.u32("formatID")
    gtrid_len = c.u32("gtrid_length")
    bqual_len = c.u32("bqual_length")
    if gtrid_len > 64 or bqual_len > 64:
        raise CorruptEventError(f"XA id lengths {gtrid_len}/{bqual_len} exceed 64")
    gtrid = c.bytes(gtrid_len, "gtrid")
    bqual = c.bytes(bqual_len, "bqual")
    return XaPrepare(one_phase, format_id, gtrid, bqual)


def decode_incident(raw: RawEvent, fde: FormatDescription) -> Incident:
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    incident = c.u16("incident")
    if incident != INCIDENT_LOST_EVENTS:
        # Incident_event: numbers outside (INCIDENT_NONE, INCIDENT_COUNT) make the event invalid.
        raise CorruptEventError(f"unknown incident number {incident}")
    message = ""
    if c.remaining:
        n = c.u8("message length")
        message = _text(c.bytes(n, "message"))
    return Incident(incident, message)


INCIDENT_LOST_EVENTS = 1


def decode_execute_load_query(raw: RawEvent, fde: FormatDescription) -> Query:
    """Execute_load_query_event: a Query event whose post-header adds file_id(4) fn_pos_start(4)
    fn_pos_end(4) dup_handling(1); the file-name placeholder must lie inside the query."""
    post = fde.post_header(EventType.EXECUTE_LOAD_QUERY_EVENT, 26)
    if post < 26:
        raise CorruptEventError(f"EXECUTE_LOAD_QUERY post-header of {post} bytes (needs 26)")
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    thread_id = c.u32("thread_id")
    exec_time = c.u32("exec_time")
    db_len = c.u8("db_len")
    error_code = c.u16("error_code")
    status_len = c.u16("status_vars_len")
    c.u32("file_id")
    start = c.u32("fn_pos_start")
    end = c.u32("fn_pos_end")
    dup = c.u8("dup_handling")
    if dup > 2:
        raise CorruptEventError(f"EXECUTE_LOAD_QUERY dup_handling {dup}")
    c.skip(post - 26, "post-header")
    status = c.bytes(status_len, "status_vars")
    db = c.bytes(db_len, "db")
    c.skip(1, "db terminator")
    query = c.rest()
    if not start <= end <= len(query):
        raise CorruptEventError(f"EXECUTE_LOAD_QUERY file-name position {start}..{end} outside the "
                                f"{len(query)}-byte query")
    return Query(thread_id, exec_time, error_code, _text(db), _text(query), status)


def decode_rows_query(raw: RawEvent, fde: FormatDescription) -> RowsQuery:
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    if raw.type_code == EventType.ROWS_QUERY_LOG_EVENT:
        c.skip(1, "length byte")  # an obsolete 1-byte length; the text runs to the end
    return RowsQuery(_text(c.rest_view()))


def decode_heartbeat(raw: RawEvent, fde: FormatDescription) -> Heartbeat:
    return Heartbeat(_text(raw.body))


def decode_mariadb_gtid(raw: RawEvent, fde: FormatDescription) -> MariadbGtid:
    """MariaDB ``Gtid_log_event``: seq_no(8) domain_id(4) flags2(1), then commit_id(8) if
    FL_GROUP_COMMIT_ID, or the XA xid if FL_PREPARED_XA|FL_COMPLETED_XA; then (10.5+)
    flags_extra(1) and its optional fields."""
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    seq_no = c.u64("seq_no")
    domain_id = c.u32("domain_id")
    flags2 = c.u8("flags2")
    commit_id = None
    xid = None
    if flags2 & MariadbGtid.FL_GROUP_COMMIT_ID:
        commit_id = c.u64("commit_id")
    elif flags2 & (MariadbGtid.FL_PREPARED_XA | MariadbGtid.FL_COMPLETED_XA):
        c.u32("format_id")
        gtrid_len = c.u8("gtrid_length")
        bqual_len = c.u8("bqual_length")
        xid = c.bytes(gtrid_len + bqual_len, "xid")
    flags_extra = 0
    # The rest (6 zero bytes of padding, or flags_extra and its fields) carries nothing the
    # dependency analysis needs; flags_extra is read when present past the classic padding.
    rest = c.rest()
    if rest and commit_id is None and xid is None and len(rest) >= 6 and rest[:6] == b"\0" * 6:
        rest = rest[6:]
    if rest:
        flags_extra = rest[0]
    return MariadbGtid(seq_no, domain_id, raw.server_id, flags2, commit_id, xid, flags_extra)


def decode_gtid_list(raw: RawEvent, fde: FormatDescription) -> GtidList:
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    word = c.u32("count")
    count = word & 0x0FFFFFFF
    if count * 16 > c.remaining:
        raise CorruptEventError(f"GTID_LIST claims {count} GTIDs in {c.remaining} bytes")
    gtids = []
    for _ in range(count):
        domain = c.u32("domain_id")
        server = c.u32("server_id")
        seq = c.u64("seq_no")
        gtids.append(f"{domain}-{server}-{seq}")
    return GtidList(tuple(gtids))


def decode_binlog_checkpoint(raw: RawEvent, fde: FormatDescription) -> BinlogCheckpoint:
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    n = c.u32("binlog_file_len")
    return BinlogCheckpoint(_text(c.bytes(n, "binlog_file")))
