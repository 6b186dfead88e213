"""A statement of up to 1 GiB (max_allowed_packet) read natively: the core hands Python only its
first ``STATEMENT_HEAD`` bytes to classify (binlog.transactions.statement_facts), and the whole
statement only when they do not decide it. Before, a 64 MiB INSERT was in memory three times at
the peak (the event, its bytes copied into Python, their decoded text): 241 MB against 49 MB for a
4 KB one; now the event alone."""

from __future__ import annotations

import pytest

from cases import native_or_skip  # noqa: E402
from conftest import run_lagadvisor
from payloads import big_statement_file

NATIVE = native_or_skip()

from test_differential import _native, _reference  # noqa: E402  (the same reads)

MIB = 1 << 20


def _peak_kb(path: str) -> int:
    """``lagadvisor analyze PATH`` natively: its peak RSS (KB), from a small launcher."""
    code, _out, err, peak = run_lagadvisor(["analyze", "--no-progress", path], timeout=120)
    assert code == 0, err
    return peak


def test_a_64_mib_statement_is_in_memory_once(tmp_path):
    (tmp_path / "small").mkdir()
    small = _peak_kb(big_statement_file(tmp_path / "small", 4096))
    big = _peak_kb(big_statement_file(tmp_path, 64 * MIB))
    assert big - small < 1.5 * 64 * 1024, (small, big)   # the event's own buffer, and no copy of it


@pytest.mark.parametrize("lead", [b"", b"/* " + b"c" * (70 << 10) + b" */ ", b" " * (70 << 10),
                                  b"/*" + b"\xe3\x80\x80" * 30000 + b"*/"],
                         ids=["insert", "long-comment", "long-spaces", "comment-past-the-head"])
def test_a_long_statement_reads_natively_as_the_reference_reads_it(tmp_path, monkeypatch, lead):
    """Decided by its head, or (a comment or spaces past the head) by the whole statement: the
    same report either way."""
    files = [big_statement_file(tmp_path, 2 * MIB, lead)]
    mine = _native(files, None)
    assert mine is not None and mine == _reference(files, None, monkeypatch)
