"""Integer key hashes of the native core (``native/src/reader/writeset.rs``,
``number_key_hash``) against the reference's (``writeset.extract.number_key``) at every width's
boundary values (issue 18; the reference's own checks are in ``tests/writeset/test_number_keys.py``)."""

from __future__ import annotations

import itertools

import pytest

from int_boundaries import WIDTHS, boundaries
from lagadvisor.native import load
from lagadvisor.writeset.extract import number_key
from conftest import need_native


def test_native_number_keys_equal_the_reference():
    need_native()
    native = load()
    for kind, unsigned in itertools.product(WIDTHS, (False, True)):
        for v in boundaries(WIDTHS[kind], unsigned):
            assert native.number_key_hash(v) == hash(number_key(v)), v
