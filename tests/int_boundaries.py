"""Integer key values at the boundaries of each MySQL integer width, shared by the reference's
key tests (``tests/writeset/test_number_keys.py``) and the native-vs-reference ones
(``tests/native/test_key_hashes.py``)."""

from __future__ import annotations

from lagadvisor.binlog.constants import FieldType as T

WIDTHS = {T.TINY: 1, T.SHORT: 2, T.INT24: 3, T.LONG: 4, T.LONGLONG: 8}


def boundaries(width: int, unsigned: bool) -> list[int]:
    """0, 1, the type's max and min, 2**(bits-1) around the sign bit, 2**63 and 2**64 - 1 where
    they fit, small negatives, and values one multiple of 2**61 - 1 apart (CPython's int hash
    modulus, the cause of the bug)."""
    bits = 8 * width
    lo, hi = (0, (1 << bits) - 1) if unsigned else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    cands = {0, 1, 2, 7, 8, lo, hi, lo + 1, hi - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1,
             -1, -2, -3, 1 << 63, (1 << 64) - 1, (1 << 63) - 1, -(1 << 63), 2**61 - 1, 2**61,
             7 + (2**61 - 1), 7 + 2 * (2**61 - 1), -(2**61 - 1)}
    return sorted(v for v in cands if lo <= v <= hi)
