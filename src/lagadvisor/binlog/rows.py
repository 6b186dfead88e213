"""TABLE_MAP and rows events: layouts, column metadata and row images.

References: mysql-server ``libs/mysql/binlog/event/rows_event.{h,cpp}`` (``Table_map_event``,
``Rows_event``, optional metadata), ``sql/log_event.cc`` (``log_event_print_value``: how each
column type is laid out in a row image), ``sql/rpl_utility.cc`` (``calc_field_size``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator, Sequence

from ..errors import CorruptEventError
from .constants import LOG_EVENT_HEADER_LEN, NUMERIC_TYPES, ROWS_EVENTS, EventType, FieldType, RowsKind
from .cursor import Cursor
from .events import FormatDescription
from .framing import RawEvent

T = FieldType

# Optional metadata field types (rows_event.h ``Table_map_event::Optional_metadata_field_type``).
SIGNEDNESS = 1
DEFAULT_CHARSET = 2
COLUMN_CHARSET = 3
COLUMN_NAME = 4
SET_STR_VALUE = 5
ENUM_STR_VALUE = 6
GEOMETRY_TYPE = 7
SIMPLE_PRIMARY_KEY = 8
PRIMARY_KEY_WITH_PREFIX = 9
ENUM_AND_SET_DEFAULT_CHARSET = 10
ENUM_AND_SET_COLUMN_CHARSET = 11
COLUMN_VISIBILITY = 12
VECTOR_DIMENSIONALITY = 13

_ONE_BYTE_META = frozenset({T.FLOAT, T.DOUBLE, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB,
                            T.GEOMETRY, T.JSON, T.TIMESTAMP2, T.DATETIME2, T.TIME2, T.VECTOR})
_TWO_BYTE_META_LE = frozenset({T.VARCHAR, T.VAR_STRING, T.BIT})
_TWO_BYTE_META_BE = frozenset({T.NEWDECIMAL, T.STRING, T.ENUM, T.SET, T.DECIMAL})
_CHARACTER_TYPES = frozenset({T.STRING, T.VAR_STRING, T.VARCHAR, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB,
                              T.LONG_BLOB})


@dataclass(frozen=True, slots=True)
class TableMap:
    """TABLE_MAP_EVENT. ``column_meta`` holds one decoded metadata integer per column
    (``Table_map_event::m_field_metadata`` semantics); the optional metadata (binlog_row_metadata
    = FULL, 8.0.1+) fills the remaining fields when present."""

    EVENT_TYPE = EventType.TABLE_MAP_EVENT
    table_id: int
    flags: int
    database_name: str
    table_name: str
    column_types: bytes
    column_meta: tuple[int, ...]
    null_bits: bytes
    signedness: tuple[bool, ...] | None = None          # per numeric column, in order
    default_charset: tuple[int, tuple[tuple[int, int], ...]] | None = None
    column_charsets: tuple[int, ...] | None = None
    column_names: tuple[str, ...] | None = None
    set_str_values: tuple[tuple[str, ...], ...] | None = None
    enum_str_values: tuple[tuple[str, ...], ...] | None = None
    primary_key: tuple[int, ...] | None = None           # column indexes
    primary_key_prefixes: tuple[int, ...] | None = None   # 0 = whole column
    visibility: tuple[bool, ...] | None = None
    optional_types: tuple[int, ...] = ()

    @property
    def qualified_name(self) -> str:
        return f"{self.database_name}.{self.table_name}"

    @property
    def column_count(self) -> int:
        return len(self.column_types)

    def real_type(self, i: int) -> int:
        """The column's type with STRING's real type (ENUM/SET/CHAR) unpacked from its metadata."""
        t = self.column_types[i]
        if t == T.STRING:
            meta = self.column_meta[i]
            if meta >= 256:
                byte0 = meta >> 8
                return byte0 | 0x30 if (byte0 & 0x30) != 0x30 else byte0
        return t

    def unsigned_columns(self) -> frozenset[int]:
        if self.signedness is None:
            return frozenset()
        numeric = [i for i, t in enumerate(self.column_types) if t in NUMERIC_TYPES]
        return frozenset(i for i, unsigned in zip(numeric, self.signedness) if unsigned)


def _read_meta(c: Cursor, types: bytes) -> tuple[int, ...]:
    out = []
    for t in types:
        if t in _ONE_BYTE_META:
            out.append(c.u8("column metadata"))
        elif t in _TWO_BYTE_META_LE:
            out.append(c.u16("column metadata"))
        elif t in _TWO_BYTE_META_BE:
            hi = c.u8("column metadata")
            out.append((hi << 8) | c.u8("column metadata"))
        else:
            out.append(0)
    return tuple(out)


def _packed_list(c: Cursor, end: int, what: str) -> list[int]:
    out = []
    while c.pos < end:
        out.append(c.packed(what))
    return out


def _str_list(c: Cursor, end: int, what: str) -> tuple[str, ...]:
    out = []
    while c.pos < end:
        n = c.packed(what)
        out.append(c.bytes(n, what).decode("utf-8", "surrogateescape"))
    return tuple(out)


def _charset_fields(c: Cursor, end: int) -> tuple[int, tuple[tuple[int, int], ...]]:
    default = c.packed("default charset")
    pairs = []
    while c.pos < end:
        col = c.packed("charset column")
        pairs.append((col, c.packed("charset")))
    return default, tuple(pairs)


def _bits(data: bytes, n: int) -> tuple[bool, ...]:
    """MSB-first bitmap used by SIGNEDNESS and COLUMN_VISIBILITY."""
    return tuple(bool(data[i >> 3] & (0x80 >> (i & 7))) for i in range(min(n, len(data) * 8)))


def decode_table_map(raw: RawEvent, fde: FormatDescription) -> TableMap:
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    post = fde.post_header(EventType.TABLE_MAP_EVENT, 8)
    table_id = c.uint(6 if post == 8 else 4, "table_id")
    flags = c.u16("flags")
    if post > 8:
        c.skip(post - 8, "post-header")
    db = c.bytes(c.u8("db length"), "database name")
    c.skip(1, "database terminator")
    table = c.bytes(c.u8("table length"), "table name")
    c.skip(1, "table terminator")
    ncols = c.packed("column_count")
    if ncols > 4096 or ncols > c.remaining:
        raise CorruptEventError(f"impossible column count {ncols}")
    types = c.bytes(ncols, "column types")
    meta_len = c.packed("metadata length")
    meta_end = c.pos + meta_len
    c.need(meta_len, "metadata")
    mc = Cursor(c.data, c.pos, meta_end)
    meta = _read_meta(mc, types)
    if mc.pos != meta_end:
        raise CorruptEventError(f"column metadata is {meta_len} bytes, types need {mc.pos - c.pos}")
    c.pos = meta_end
    null_bits = c.bytes((ncols + 7) // 8, "null bitmap")
    opt: dict = {}
    seen = []
    while c.remaining:
        ftype = c.u8("optional metadata type")
        flen = c.packed("optional metadata length")
        c.need(flen, "optional metadata")
        end = c.pos + flen
        seen.append(ftype)
        fc = Cursor(c.data, c.pos, end)
        if ftype == SIGNEDNESS:
            n_numeric = sum(1 for t in types if t in NUMERIC_TYPES)
            opt["signedness"] = _bits(fc.rest(), n_numeric)
        elif ftype == DEFAULT_CHARSET:
            opt["default_charset"] = _charset_fields(fc, end)
        elif ftype == COLUMN_CHARSET:
            opt["column_charsets"] = tuple(_packed_list(fc, end, "column charset"))
        elif ftype == COLUMN_NAME:
            opt["column_names"] = _str_list(fc, end, "column name")
        elif ftype in (SET_STR_VALUE, ENUM_STR_VALUE):
            values = []
            while fc.pos < end:
                n = fc.packed("value count")
                values.append(tuple(fc.bytes(fc.packed("value"), "value").decode("utf-8", "replace")
                                    for _ in range(n)))
            opt["set_str_values" if ftype == SET_STR_VALUE else "enum_str_values"] = tuple(values)
        elif ftype == SIMPLE_PRIMARY_KEY:
            opt["primary_key"] = tuple(_packed_list(fc, end, "primary key column"))
        elif ftype == PRIMARY_KEY_WITH_PREFIX:
            pairs = _packed_list(fc, end, "primary key column")
            if len(pairs) % 2:
                raise CorruptEventError("PRIMARY_KEY_WITH_PREFIX has an odd number of values")
            opt["primary_key"] = tuple(pairs[0::2])
            opt["primary_key_prefixes"] = tuple(pairs[1::2])
        elif ftype == COLUMN_VISIBILITY:
            opt["visibility"] = _bits(fc.rest(), ncols)
        # GEOMETRY_TYPE, ENUM_AND_SET_* charsets, VECTOR_DIMENSIONALITY: not needed for keys.
        c.pos = end
    pk = opt.get("primary_key")
    if pk is not None and any(i >= ncols for i in pk):
        raise CorruptEventError(f"primary key column index out of range {pk}")
    return TableMap(table_id, flags, db.decode("utf-8", "surrogateescape"),
                    table.decode("utf-8", "surrogateescape"), types, meta, null_bits,
                    optional_types=tuple(seen), **opt)


# --------------------------------------------------------------------------- rows events

@dataclass(frozen=True, slots=True)
class RowsEvent:
    """WRITE/UPDATE/DELETE_ROWS v1/v2, PARTIAL_UPDATE_ROWS and MariaDB's compressed variants.

    ``rows`` is the undecoded row data (already inflated for MariaDB compressed events); the
    images are decoded on demand with the matching :class:`TableMap` by :func:`iter_rows`.
    """

    kind: RowsKind
    table_id: int
    flags: int
    column_count: int
    columns_before: bytes      # columns-present bitmap of the before image (or the only image)
    columns_after: bytes       # after-image bitmap for updates, else b""
    rows: bytes
    partial: bool = False      # PARTIAL_UPDATE_ROWS_EVENT


def decode_rows(raw: RawEvent, fde: FormatDescription, inflate=None) -> RowsEvent:
    kind, version, compressed = ROWS_EVENTS[raw.type_code]
    c = Cursor(raw.data, LOG_EVENT_HEADER_LEN, raw.body_end)
    default_post = 10 if version == 2 else 8
    post = fde.post_header(raw.type_code, default_post) if raw.type_code < 160 else default_post
    table_id = c.uint(4 if post == 6 else 6, "table_id")
    flags = c.u16("flags")
    if version == 2 and post >= 10:
        extra = c.u16("extra_data_length")
        if extra < 2:
            raise CorruptEventError(f"rows extra data length {extra} < 2")
        c.skip(extra - 2, "extra data")
        consumed = 10
    else:
        consumed = 8 if post != 6 else 6
    if post > consumed:
        c.skip(post - consumed, "post-header")
    ncols = c.packed("column count")
    if ncols > 4096:
        raise CorruptEventError(f"impossible column count {ncols}")
    nbytes = (ncols + 7) // 8
    before = c.bytes(nbytes, "columns bitmap")
    after = c.bytes(nbytes, "after-image columns bitmap") if kind == RowsKind.UPDATE else b""
    rows = c.rest()
    if compressed:
        if inflate is None:
            raise CorruptEventError("compressed rows event without a decompressor")
        rows = inflate(rows)
    return RowsEvent(kind, table_id, flags, ncols, before, after, rows,
                     raw.type_code == EventType.PARTIAL_UPDATE_ROWS_EVENT)


# --------------------------------------------------------------------------- values

_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_size(precision: int, scale: int) -> int:
    """``decimal_bin_size``: 4 bytes per 9 digits plus the leftover digits' bytes, per side."""
    intg = precision - scale
    return (intg // 9) * 4 + _DIG2BYTES[intg % 9] + (scale // 9) * 4 + _DIG2BYTES[scale % 9]


def decode_decimal(b: bytes, precision: int, scale: int) -> str:
    """``bin2decimal``: big-endian groups of 9 digits, sign in the top bit (inverted), negative
    numbers stored as the one's complement."""
    negative = not (b[0] & 0x80)
    data = bytearray(b)
    data[0] ^= 0x80
    if negative:
        data = bytearray(x ^ 0xFF for x in data)
    intg = precision - scale
    pos = 0
    digits = ""
    lead = _DIG2BYTES[intg % 9]
    if lead:
        digits += str(int.from_bytes(data[pos:pos + lead], "big"))
        pos += lead
    for _ in range(intg // 9):
        digits += f"{int.from_bytes(data[pos:pos + 4], 'big'):09d}"
        pos += 4
    int_part = digits.lstrip("0") or "0"
    frac = ""
    for _ in range(scale // 9):
        frac += f"{int.from_bytes(data[pos:pos + 4], 'big'):09d}"
        pos += 4
    trail = _DIG2BYTES[scale % 9]
    if trail:
        frac += f"{int.from_bytes(data[pos:pos + trail], 'big'):0{scale % 9}d}"
    text = int_part + ("." + frac if scale else "")
    return ("-" + text) if negative else text


def _frac(b: bytes, fsp: int) -> int:
    """Fractional seconds of TIME2/DATETIME2/TIMESTAMP2 in microseconds."""
    if fsp <= 0:
        return 0
    n = (fsp + 1) // 2
    v = int.from_bytes(b[:n], "big")
    return v * (10 ** (6 - 2 * n)) if n < 3 else v


def _fmt_frac(us: int, fsp: int) -> str:
    return "" if fsp <= 0 else "." + f"{us:06d}"[:fsp]


def decode_datetime2(b: bytes, fsp: int) -> str:
    """DATETIME2: 5 bytes big-endian, sign bit + year*13+month (17) day (5) hour (5) minute (6)
    second (6), then the fraction."""
    v = int.from_bytes(b[:5], "big") - 0x8000000000
    ym = v >> 22
    year, month = divmod(ym, 13)
    day = (v >> 17) & 31
    hour = (v >> 12) & 31
    minute = (v >> 6) & 63
    second = v & 63
    us = _frac(b[5:], fsp)
    return f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}{_fmt_frac(us, fsp)}"


def decode_time2(b: bytes, fsp: int) -> str:
    """TIME2: 3 bytes big-endian offset by 0x800000 (sign), hour(10) minute(6) second(6), then
    the fraction (``my_time_packed_from_binary``)."""
    n = (fsp + 1) // 2
    intpart = int.from_bytes(b[:3], "big") - 0x800000
    frac = int.from_bytes(b[3:3 + n], "big") if n else 0
    if n == 1:
        frac_bits, scale = 8, 10000
    elif n == 2:
        frac_bits, scale = 16, 100
    else:
        frac_bits, scale = 24, 1
    if n:
        if intpart < 0 and frac:
            intpart += 1
            frac -= 1 << frac_bits
        packed = (intpart << 24) + frac * scale
    else:
        packed = intpart << 24
    sign = "-" if packed < 0 else ""
    packed = abs(packed)
    hms = packed >> 24
    us = packed % (1 << 24)
    hour = (hms >> 12) & 0x3FF
    minute = (hms >> 6) & 63
    second = hms & 63
    return f"{sign}{hour:02d}:{minute:02d}:{second:02d}{_fmt_frac(us, fsp)}"


@dataclass(frozen=True, slots=True)
class PartialJson:
    """The binary JSON diff of a column in a PARTIAL_UPDATE_ROWS after image."""

    diff: bytes


class ColumnPlan:
    """How to walk one column of a row image: ``size`` bytes when fixed, else a length prefix of
    ``prefix`` bytes (``size`` = -1), plus the decoder for its value."""

    __slots__ = ("size", "prefix", "kind", "meta", "unsigned")

    def __init__(self, size: int, prefix: int, kind: int, meta: int, unsigned: bool) -> None:
        self.size = size
        self.prefix = prefix
        self.kind = kind
        self.meta = meta
        self.unsigned = unsigned


_INT_SIZES = {T.TINY: 1, T.SHORT: 2, T.INT24: 3, T.LONG: 4, T.LONGLONG: 8}


def column_plan(tm: TableMap, i: int, unsigned: frozenset[int]) -> ColumnPlan:
    """``log_event_print_value``/``calc_field_size`` for column ``i``."""
    t = tm.column_types[i]
    meta = tm.column_meta[i]
    if t in _INT_SIZES:
        return ColumnPlan(_INT_SIZES[t], 0, t, meta, i in unsigned)
    if t == T.FLOAT:
        return ColumnPlan(4, 0, t, meta, False)
    if t == T.DOUBLE:
        return ColumnPlan(8, 0, t, meta, False)
    if t == T.YEAR:
        return ColumnPlan(1, 0, t, meta, False)
    if t in (T.DATE, T.NEWDATE, T.TIME):
        return ColumnPlan(3, 0, t, meta, False)
    if t == T.TIMESTAMP:
        return ColumnPlan(4, 0, t, meta, False)
    if t == T.DATETIME:
        return ColumnPlan(8, 0, t, meta, False)
    if t == T.TIMESTAMP2:
        return ColumnPlan(4 + (meta + 1) // 2, 0, t, meta, False)
    if t == T.DATETIME2:
        return ColumnPlan(5 + (meta + 1) // 2, 0, t, meta, False)
    if t == T.TIME2:
        return ColumnPlan(3 + (meta + 1) // 2, 0, t, meta, False)
    if t == T.NEWDECIMAL:
        precision, scale = meta >> 8, meta & 0xFF
        if scale > precision or precision > 65:
            raise CorruptEventError(f"column {i}: impossible DECIMAL({precision},{scale})")
        return ColumnPlan(decimal_size(precision, scale), 0, t, meta, False)
    if t in (T.VARCHAR, T.VAR_STRING):
        return ColumnPlan(-1, 1 if meta < 256 else 2, t, meta, False)
    if t == T.BIT:
        nbits = (meta >> 8) * 8 + (meta & 0xFF)
        return ColumnPlan((nbits + 7) // 8, 0, t, meta, False)
    if t in (T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.GEOMETRY, T.JSON, T.VECTOR):
        if not 1 <= meta <= 4:
            raise CorruptEventError(f"column {i}: impossible length-prefix size {meta}")
        return ColumnPlan(-1, meta, t, meta, False)
    if t in (T.STRING, T.ENUM, T.SET):
        real = t
        length = meta
        if t == T.STRING and meta >= 256:
            byte0, byte1 = meta >> 8, meta & 0xFF
            if (byte0 & 0x30) != 0x30:
                length = byte1 | (((byte0 & 0x30) ^ 0x30) << 4)
                real = byte0 | 0x30
            else:
                length = byte1
                real = byte0
        elif t in (T.ENUM, T.SET):
            length = meta & 0xFF
        if real == T.ENUM:
            if length not in (1, 2):
                raise CorruptEventError(f"column {i}: ENUM of {length} bytes")
            return ColumnPlan(length, 0, T.ENUM, length, False)
        if real == T.SET:
            if not 1 <= length <= 8:
                raise CorruptEventError(f"column {i}: SET of {length} bytes")
            return ColumnPlan(length, 0, T.SET, length, False)
        return ColumnPlan(-1, 1 if length < 256 else 2, T.STRING, length, False)
    raise CorruptEventError(f"column {i}: type {t} cannot be decoded in a row image")


def table_plan(tm: TableMap) -> tuple[ColumnPlan, ...]:
    unsigned = tm.unsigned_columns()
    return tuple(column_plan(tm, i, unsigned) for i in range(tm.column_count))


def decode_value(p: ColumnPlan, b: bytes):
    """The Python value of one column: ints, floats, ``str`` for temporal and DECIMAL values in
    MySQL's text form, ``bytes`` for strings, BLOBs and JSON (binary JSON, undecoded)."""
    k = p.kind
    if k in _INT_SIZES:
        return int.from_bytes(b, "little", signed=not p.unsigned)
    if k == T.STRING or k == T.VARCHAR or k == T.VAR_STRING or k >= T.TINY_BLOB or k == T.JSON:
        return bytes(b)
    if k == T.NEWDECIMAL:
        return decode_decimal(b, p.meta >> 8, p.meta & 0xFF)
    if k == T.DATETIME2:
        return decode_datetime2(b, p.meta)
    if k == T.TIMESTAMP2:
        sec = int.from_bytes(b[:4], "big")
        us = _frac(b[4:], p.meta)
        return f"{sec}{_fmt_frac(us, p.meta)}"
    if k == T.TIME2:
        return decode_time2(b, p.meta)
    if k == T.DATE or k == T.NEWDATE:
        v = int.from_bytes(b, "little")
        return f"{v >> 9:04d}-{(v >> 5) & 15:02d}-{v & 31:02d}"
    if k == T.FLOAT:
        return struct.unpack("<f", b)[0]
    if k == T.DOUBLE:
        return struct.unpack("<d", b)[0]
    if k == T.YEAR:
        return 0 if b[0] == 0 else 1900 + b[0]
    if k in (T.ENUM, T.SET, T.BIT):
        return int.from_bytes(b, "little" if k != T.BIT else "big")
    if k == T.TIMESTAMP:
        return int.from_bytes(b, "little")
    if k == T.DATETIME:
        v = int.from_bytes(b, "little")
        d, t = divmod(v, 1000000)
        return (f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d} "
                f"{t // 10000:02d}:{t // 100 % 100:02d}:{t % 100:02d}")
    if k == T.TIME:
        v = int.from_bytes(b, "little", signed=True)
        sign = "-" if v < 0 else ""
        v = abs(v)
        return f"{sign}{v // 10000:02d}:{v // 100 % 100:02d}:{v % 100:02d}"
    return bytes(b)


def _present(bitmap: bytes, ncols: int) -> list[int]:
    return [i for i in range(ncols) if bitmap[i >> 3] & (1 << (i & 7))]


def _read_image(data: bytes, pos: int, end: int, cols: list[int], plans: Sequence[ColumnPlan],
                wanted: frozenset[int] | None, partial_json: frozenset[int] = frozenset()
                ) -> tuple[dict[int, object], int]:
    """One row image starting at ``pos``: null bitmap over the present columns, then their values.
    Returns ``{column: value}`` for wanted columns (``None`` for SQL NULL) and the end offset."""
    nnull = (len(cols) + 7) // 8
    if pos + nnull > end:
        raise CorruptEventError("row image: null bitmap runs past the event")
    nulls = data[pos:pos + nnull]
    pos += nnull
    values: dict[int, object] = {}
    for j, col in enumerate(cols):
        if nulls[j >> 3] & (1 << (j & 7)):
            if wanted is None or col in wanted:
                values[col] = None
            continue
        p = plans[col]
        if col in partial_json:
            # PARTIAL_UPDATE_ROWS: a partially updated JSON column holds a diff (a list of
            # JSON_REPLACE/SET/REMOVE operations) with the column's usual length prefix; it is
            # kept as raw bytes, never mistaken for a full JSON document.
            pre = p.prefix
            if pos + pre > end:
                raise CorruptEventError(f"row image: column {col} length runs past the event")
            size = int.from_bytes(data[pos:pos + pre], "little")
            if pos + pre + size > end:
                raise CorruptEventError(f"row image: column {col} JSON diff runs past the event")
            if wanted is None or col in wanted:
                values[col] = PartialJson(bytes(data[pos + pre:pos + pre + size]))
            pos += pre + size
            continue
        size = p.size
        if size < 0:
            pre = p.prefix
            if pos + pre > end:
                raise CorruptEventError(f"row image: column {col} length runs past the event")
            size = int.from_bytes(data[pos:pos + pre], "little")
            pos += pre
        if pos + size > end:
            raise CorruptEventError(f"row image: column {col} value ({size} bytes) runs past the event")
        if wanted is None or col in wanted:
            values[col] = decode_value(p, data[pos:pos + size])
        pos += size
    return values, pos


Row = tuple[dict[int, object] | None, dict[int, object] | None]


def iter_rows(ev: RowsEvent, tm: TableMap, plans: Sequence[ColumnPlan],
              wanted: frozenset[int] | None = None) -> Iterator[Row]:
    """Yield ``(before, after)`` per row; INSERTs have no before image, DELETEs no after image."""
    if ev.column_count > tm.column_count:
        raise CorruptEventError(f"rows event has {ev.column_count} columns, table map "
                                f"{tm.qualified_name} has {tm.column_count}")
    data = ev.rows
    end = len(data)
    pos = 0
    cols_b = _present(ev.columns_before, ev.column_count)
    cols_a = _present(ev.columns_after, ev.column_count) if ev.kind == RowsKind.UPDATE else []
    if not cols_b and not cols_a and not ev.partial and end:
        # A row image of no columns has no null bitmap and no values: it consumes no bytes,
        # so the row data could never be used up (a loop over it would not end; style rule 13).
        raise CorruptEventError(f"rows event: columns bitmap selects none of its {ev.column_count} "
                                f"columns, so a row image consumes no bytes ({end} bytes of row data left)")
    if ev.kind == RowsKind.UPDATE:
        # The partial-update bitmap has one bit per JSON column of the table (present or not).
        json_after = [col for col in range(tm.column_count) if tm.column_types[col] == T.JSON]
        while pos < end:
            start = pos
            b, pos = _read_image(data, pos, end, cols_b, plans, wanted)
            partial: frozenset[int] = frozenset()
            if ev.partial:
                c = Cursor(data, pos, end)
                options = c.packed("value_options")
                if options & 1 and json_after:  # PARTIAL_JSON_UPDATES
                    nb = (len(json_after) + 7) // 8
                    bits = c.bytes(nb, "partial bits")
                    partial = frozenset(col for k, col in enumerate(json_after)
                                        if bits[k >> 3] & (1 << (k & 7)))
                pos = c.pos
            a, pos = _read_image(data, pos, end, cols_a, plans, wanted, partial)
            _progressed(start, pos, end)
            yield b, a
    elif ev.kind == RowsKind.WRITE:
        while pos < end:
            start = pos
            a, pos = _read_image(data, pos, end, cols_b, plans, wanted)
            _progressed(start, pos, end)
            yield None, a
    else:
        while pos < end:
            start = pos
            b, pos = _read_image(data, pos, end, cols_b, plans, wanted)
            _progressed(start, pos, end)
            yield b, None


def _progressed(start: int, pos: int, end: int) -> None:
    """Every pass over the row data consumes bytes, or the event is corrupt (style rule 13)."""
    if pos <= start:
        raise CorruptEventError(f"rows event: a row image at row-data byte {start} consumes no bytes "
                                f"({end - start} bytes left)")


def count_rows(ev: RowsEvent, tm: TableMap, plans: Sequence[ColumnPlan]) -> int:
    return sum(1 for _ in iter_rows(ev, tm, plans, frozenset()))
