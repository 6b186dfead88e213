"""The native reader on crafted TRANSACTION_PAYLOAD events: it decompresses a payload as it reads
its inner events, one at a time, and hands the run back to the reference (whose report it must
then equal) when the declared uncompressed size lies or a statement is not SQL text."""

from __future__ import annotations

import pytest

from cases import native_or_skip  # noqa: E402
from payloads import COMPRESSED, PREFIX, inner_of_first_payload, payload_file, zero_query

NATIVE = native_or_skip()

from test_differential import _native, _public, _reference  # noqa: E402  (the same three reads)


def test_a_payload_with_its_true_size_is_read_natively(tmp_path, monkeypatch):
    inner = inner_of_first_payload()
    files = [payload_file(tmp_path, inner, declared=len(inner))]
    mine = _native(files, None)
    assert mine is not None and mine == _reference(files, None, monkeypatch)
    # A payload without the uncompressed_size field is read natively too.
    files = [payload_file(tmp_path, inner, declared=None, name="n.000001")]
    assert _native(files, None) == _reference(files, None, monkeypatch)


@pytest.mark.parametrize("delta", [1, -1])
def test_a_lying_declared_size_goes_to_the_reference(tmp_path, monkeypatch, delta):
    inner = inner_of_first_payload()
    files = [payload_file(tmp_path, inner, declared=len(inner) + delta)]
    assert _native(files, None) is None
    ref = _reference(files, None, monkeypatch)
    assert ref.startswith(f"error: {files[0]} at offset {PREFIX} (TRANSACTION_PAYLOAD_EVENT)")
    assert _public(files, None) == ref


def test_a_nul_statement_goes_to_the_reference_and_is_warned(tmp_path, monkeypatch):
    files = [payload_file(tmp_path, zero_query(1 << 20), declared=1 << 20)]
    assert _native(files, None) is None
    ref = _reference(files, None, monkeypatch)
    assert "statement is not SQL text" in ref and f"at offset {PREFIX}" in ref
    assert _public(files, None) == ref


def test_the_fixture_is_still_read_natively(monkeypatch):
    files = [str(COMPRESSED)]
    assert _native(files, None) == _reference(files, None, monkeypatch)
