"""Wire constants of the binlog format, with MySQL's and MariaDB's own names.

References: mysql-server ``libs/mysql/binlog/event/binlog_event.h`` (``Log_event_type``,
``enum_field_types``), MariaDB ``sql/log_event.h``.
"""

from __future__ import annotations

from enum import IntEnum

BINLOG_MAGIC = b"\xfebin"
LOG_EVENT_HEADER_LEN = 19
BINLOG_CHECKSUM_LEN = 4
#: binlog_event.h ``max_log_event_size``: no event (and no max_allowed_packet) is larger.
MAX_LOG_EVENT_SIZE = 1024 * 1024 * 1024
#: Largest event we accept: one max-size event plus header and checksum. Anything larger is corruption.
MAX_EVENT_SIZE = MAX_LOG_EVENT_SIZE + LOG_EVENT_HEADER_LEN + BINLOG_CHECKSUM_LEN + 1024


class EventType(IntEnum):
    """``Log_event_type`` (MySQL) plus MariaDB's types from 160."""

    UNKNOWN_EVENT = 0
    START_EVENT_V3 = 1
    QUERY_EVENT = 2
    STOP_EVENT = 3
    ROTATE_EVENT = 4
    INTVAR_EVENT = 5
    LOAD_EVENT = 6
    SLAVE_EVENT = 7
    CREATE_FILE_EVENT = 8
    APPEND_BLOCK_EVENT = 9
    EXEC_LOAD_EVENT = 10
    DELETE_FILE_EVENT = 11
    NEW_LOAD_EVENT = 12
    RAND_EVENT = 13
    USER_VAR_EVENT = 14
    FORMAT_DESCRIPTION_EVENT = 15
    XID_EVENT = 16
    BEGIN_LOAD_QUERY_EVENT = 17
    EXECUTE_LOAD_QUERY_EVENT = 18
    TABLE_MAP_EVENT = 19
    PRE_GA_WRITE_ROWS_EVENT = 20
    PRE_GA_UPDATE_ROWS_EVENT = 21
    PRE_GA_DELETE_ROWS_EVENT = 22
    WRITE_ROWS_EVENT_V1 = 23
    UPDATE_ROWS_EVENT_V1 = 24
    DELETE_ROWS_EVENT_V1 = 25
    INCIDENT_EVENT = 26
    HEARTBEAT_LOG_EVENT = 27
    IGNORABLE_LOG_EVENT = 28
    ROWS_QUERY_LOG_EVENT = 29
    WRITE_ROWS_EVENT = 30
    UPDATE_ROWS_EVENT = 31
    DELETE_ROWS_EVENT = 32
    GTID_LOG_EVENT = 33
    ANONYMOUS_GTID_LOG_EVENT = 34
    PREVIOUS_GTIDS_LOG_EVENT = 35
    TRANSACTION_CONTEXT_EVENT = 36
    VIEW_CHANGE_EVENT = 37
    XA_PREPARE_LOG_EVENT = 38
    PARTIAL_UPDATE_ROWS_EVENT = 39
    TRANSACTION_PAYLOAD_EVENT = 40
    HEARTBEAT_LOG_EVENT_V2 = 41
    GTID_TAGGED_LOG_EVENT = 42
    LARGE_TRANSACTION_HEADER_EVENT = 43  # trunk 2026: spilled large transaction promoted to its own file
    # MariaDB (sql/log_event.h)
    ANNOTATE_ROWS_EVENT = 160
    BINLOG_CHECKPOINT_EVENT = 161
    MARIADB_GTID_EVENT = 162
    GTID_LIST_EVENT = 163
    START_ENCRYPTION_EVENT = 164
    QUERY_COMPRESSED_EVENT = 165
    WRITE_ROWS_COMPRESSED_EVENT_V1 = 166
    UPDATE_ROWS_COMPRESSED_EVENT_V1 = 167
    DELETE_ROWS_COMPRESSED_EVENT_V1 = 168
    WRITE_ROWS_COMPRESSED_EVENT = 169
    UPDATE_ROWS_COMPRESSED_EVENT = 170
    DELETE_ROWS_COMPRESSED_EVENT = 171
    PARTIAL_ROW_DATA_EVENT = 172  # MariaDB 12: fragments of a huge row event


_NAMES = {int(e): e.name for e in EventType}


def event_type_name(code: int) -> str:
    """Name of a type code; unknown codes read ``UNKNOWN_<code>``."""
    name = _NAMES.get(code)
    return name if name is not None else f"UNKNOWN_{code}"


class RowsKind(IntEnum):
    """What a rows event does to each row."""

    WRITE = 0
    UPDATE = 1
    DELETE = 2


#: rows event type -> (kind, version, mariadb_compressed)
ROWS_EVENTS: dict[int, tuple[RowsKind, int, bool]] = {
    EventType.WRITE_ROWS_EVENT_V1: (RowsKind.WRITE, 1, False),
    EventType.UPDATE_ROWS_EVENT_V1: (RowsKind.UPDATE, 1, False),
    EventType.DELETE_ROWS_EVENT_V1: (RowsKind.DELETE, 1, False),
    EventType.WRITE_ROWS_EVENT: (RowsKind.WRITE, 2, False),
    EventType.UPDATE_ROWS_EVENT: (RowsKind.UPDATE, 2, False),
    EventType.DELETE_ROWS_EVENT: (RowsKind.DELETE, 2, False),
    EventType.PARTIAL_UPDATE_ROWS_EVENT: (RowsKind.UPDATE, 2, False),
    EventType.WRITE_ROWS_COMPRESSED_EVENT_V1: (RowsKind.WRITE, 1, True),
    EventType.UPDATE_ROWS_COMPRESSED_EVENT_V1: (RowsKind.UPDATE, 1, True),
    EventType.DELETE_ROWS_COMPRESSED_EVENT_V1: (RowsKind.DELETE, 1, True),
    EventType.WRITE_ROWS_COMPRESSED_EVENT: (RowsKind.WRITE, 2, True),
    EventType.UPDATE_ROWS_COMPRESSED_EVENT: (RowsKind.UPDATE, 2, True),
    EventType.DELETE_ROWS_COMPRESSED_EVENT: (RowsKind.DELETE, 2, True),
}

#: Binlog checksum algorithms (``enum_binlog_checksum_alg``).
BINLOG_CHECKSUM_ALG_OFF = 0
BINLOG_CHECKSUM_ALG_CRC32 = 1
BINLOG_CHECKSUM_ALG_UNDEF = 255

#: Common-header flags.
LOG_EVENT_BINLOG_IN_USE_F = 0x1
LOG_EVENT_ARTIFICIAL_F = 0x20
LOG_EVENT_RELAY_LOG_F = 0x40

#: Rows event flags (rows_event.h ``enum_flag``).
STMT_END_F = 1
NO_FOREIGN_KEY_CHECKS_F = 2
RELAXED_UNIQUE_CHECKS_F = 4
COMPLETE_ROWS_F = 8


class FieldType(IntEnum):
    """``enum_field_types`` (include/field_types.h)."""

    DECIMAL = 0
    TINY = 1
    SHORT = 2
    LONG = 3
    FLOAT = 4
    DOUBLE = 5
    NULL = 6
    TIMESTAMP = 7
    LONGLONG = 8
    INT24 = 9
    DATE = 10
    TIME = 11
    DATETIME = 12
    YEAR = 13
    NEWDATE = 14
    VARCHAR = 15
    BIT = 16
    TIMESTAMP2 = 17
    DATETIME2 = 18
    TIME2 = 19
    TYPED_ARRAY = 20
    VECTOR = 242
    INVALID = 243
    BOOL = 244
    JSON = 245
    NEWDECIMAL = 246
    ENUM = 247
    SET = 248
    TINY_BLOB = 249
    MEDIUM_BLOB = 250
    LONG_BLOB = 251
    BLOB = 252
    VAR_STRING = 253
    STRING = 254
    GEOMETRY = 255


#: Numeric types, the columns the SIGNEDNESS optional metadata covers (rows_event.cpp ``is_numeric_type``).
NUMERIC_TYPES = frozenset({
    FieldType.TINY, FieldType.SHORT, FieldType.INT24, FieldType.LONG, FieldType.LONGLONG,
    FieldType.NEWDECIMAL, FieldType.FLOAT, FieldType.DOUBLE, FieldType.DECIMAL,
})
