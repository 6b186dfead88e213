"""Integer and floating-point key values: equal writeset keys exactly when the server's
``make_sort_key`` bytes are equal (issue 18: BIGINT UNSIGNED 7 and 2**64 - 1 were one key).

The server hashes big-endian bytes of the column's width, sign bit flipped for signed types
(``Field_long::make_sort_key`` and its siblings), so distinct values of one column never share
a key. Here every width and signedness is decoded from its row-image bytes at the boundary values
and checked: injective in the reference, and the native core computes the same numbers."""

from __future__ import annotations

import itertools
import struct

import pytest

from int_boundaries import WIDTHS, boundaries
from lagadvisor.binlog.constants import FieldType as T
from lagadvisor.binlog.rows import ColumnPlan, decode_value
from lagadvisor.schema.ddl import apply_statement
from lagadvisor.schema.model import Catalog
from lagadvisor.writeset.extract import float_key, number_key, plan_table, row_hashes

NAMES = {T.TINY: "TINYINT", T.SHORT: "SMALLINT", T.INT24: "MEDIUMINT", T.LONG: "INT", T.LONGLONG: "BIGINT"}


def sort_key(v: int, width: int, unsigned: bool) -> bytes:
    """The server's key image: big-endian, sign bit flipped when signed."""
    u = v if unsigned else v + (1 << (8 * width - 1))
    return u.to_bytes(width, "big")


@pytest.mark.parametrize("unsigned", [False, True], ids=["signed", "unsigned"])
@pytest.mark.parametrize("kind", list(WIDTHS), ids=[NAMES[k] for k in WIDTHS])
def test_integer_keys_equal_exactly_when_sort_keys_are(kind, unsigned):
    width = WIDTHS[kind]
    plan = ColumnPlan(width, 0, kind, 0, unsigned)
    values = boundaries(width, unsigned)
    decoded = []
    for v in values:
        le = (v if v >= 0 else v + (1 << (8 * width))).to_bytes(width, "little")
        d = decode_value(plan, le)
        assert d == v
        decoded.append(d)
    for a, b in itertools.combinations(decoded, 2):
        same_server = sort_key(a, width, unsigned) == sort_key(b, width, unsigned)
        assert same_server is False
        assert hash(number_key(a)) != hash(number_key(b)), (a, b)


def test_the_reported_pair_and_signed_neighbours():
    assert hash(7) == hash(2**64 - 1) and hash(-1) == hash(-2)  # why raw ints were wrong
    assert hash(number_key(7)) != hash(number_key(2**64 - 1))
    assert hash(number_key(-1)) != hash(number_key(-2))


def test_float_keys():
    assert float_key(0.0) == float_key(-0.0)  # change_double_for_sort: one zero
    assert hash(0.5) == hash(2.0**60)  # why raw floats were wrong
    vals = [0.0, 0.5, 2.0**60, 2.0, 2.0**62, -1.0, -2.0, 1e308, -1e308, 1.5, struct.unpack("<f", struct.pack("<f", 0.1))[0]]
    keys = {hash(float_key(v)) for v in vals[1:]}
    assert len(keys) == len(vals) - 1


def test_bigint_unsigned_rows_do_not_collide():
    """The issue's table: two rows of (id BIGINT UNSIGNED PRIMARY KEY, c CHAR(10) latin1 UNIQUE)."""
    cat = Catalog()
    apply_statement(cat, "CREATE TABLE t (id BIGINT UNSIGNED PRIMARY KEY, "
                         "c CHAR(10) CHARACTER SET latin1 UNIQUE)", "db")
    plan = plan_table(cat.get("db", "t"), cat)
    a: list[int] = []
    b: list[int] = []
    row_hashes(plan, {0: 7, 1: b"x"}, a, True)
    row_hashes(plan, {0: 2**64 - 1, 1: b"y"}, b, True)
    assert not set(a) & set(b)
