"""Memory bounds of compressed transaction payloads and of single huge events (the reference).

A TRANSACTION_PAYLOAD event (MySQL 8.0.20+ ``binlog_transaction_compression``) is decompressed
as it is read and held to its header's ``uncompressed_size``; an event is held once in memory,
and an event length past the bytes a file holds fails before anything is read. The files are
the real ``single_compressed`` and ``single_rotation`` fixtures with one crafted event appended
(as ``scripts/make_damaged.py`` crafts its files): a zstd bomb whose inner QUERY event is all
NUL bytes (the audit's ``make_payload_bomb.py``, smaller), payloads whose declared size lies,
and a 64 MiB statement with a valid CRC.
"""

from __future__ import annotations

import random
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from payloads import COMPRESSED, HEADER, PREFIX, ROTATION, big_statement_file, inner_of_first_payload, payload_file, zero_query
from lagadvisor.binlog.framing import READ_CHUNK, EventFramer, check_magic
from lagadvisor.binlog.scan import FileSummary, read_transactions
from lagadvisor.binlog.transactions import statement_blocks, statement_facts
from lagadvisor.errors import CorruptEventError, TruncatedEventError

def _read(path: str) -> tuple[list, FileSummary]:
    summary = FileSummary(path)
    return list(read_transactions(path, summary)), summary


def test_a_nul_statement_inside_a_payload_is_a_located_warning(tmp_path):
    """The audit's bomb, at 4 MiB: the inner QUERY event frames and decodes, but its statement
    is NUL bytes, which no server writes; it was read as a statement-based transaction with
    "no warnings". Now one warning per file names the file, the payload's offset and the count."""
    path = payload_file(tmp_path, zero_query(4 << 20) + zero_query(200), declared=(4 << 20) + 200)
    trxs, summary = _read(path)
    assert len(trxs) == 19  # 17 DDL, then the payload's two statements outside BEGIN
    assert summary.warnings == [
        f"{path} at offset {PREFIX} (QUERY_EVENT inside TRANSACTION_PAYLOAD_EVENT): statement is not SQL "
        f"text (4,194,304-byte event, empty or starting with a NUL byte); 2 such statement(s) in the "
        f"file, read as statement-based (kind OTHER)"]


def test_the_fixture_has_no_such_warning():
    trxs, summary = _read(str(COMPRESSED))
    assert summary.warnings == [] and summary.compression


@pytest.mark.parametrize("delta", [1, -1, 100])
def test_a_declared_uncompressed_size_that_lies_is_an_error(tmp_path, delta):
    """The header's uncompressed_size against what the zstd stream yields: more is stopped one
    byte past the declared size (a bomb decompresses no further), fewer is an error too."""
    inner = inner_of_first_payload()
    path = payload_file(tmp_path, inner, declared=len(inner) + delta)
    with pytest.raises(CorruptEventError) as e:
        _read(path)
    assert (e.value.file, e.value.offset) == (path, PREFIX)
    assert "inside compressed transaction payload" in str(e.value)
    assert "declared uncompressed_size" in str(e.value)
    assert "\n" not in str(e.value)


def test_the_true_declared_size_reads_as_the_fixture(tmp_path):
    inner = inner_of_first_payload()
    path = payload_file(tmp_path, inner, declared=len(inner))
    trxs, summary = _read(path)
    assert summary.warnings == [] and trxs[-1].compressed and trxs[-1].rows > 0


def test_an_inner_event_past_the_declared_size_is_not_read(tmp_path):
    """An inner event claiming 512 MiB in a payload declaring 100 bytes: an error before any
    buffer is sized (the decompressor is never asked for more than the declared size + 1)."""
    inner = HEADER.pack(0, 2, 1, 512 << 20, 0, 0) + b"\0" * 81
    path = payload_file(tmp_path, inner, declared=100)
    tracemalloc.start()
    try:
        with pytest.raises(CorruptEventError, match="truncated payload: input ends inside the event"):
            _read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * READ_CHUNK  # the file's 1 MiB read buffer; a chunk asked of zstd is another


def test_an_event_length_past_the_file_allocates_nothing(tmp_path):
    """A QUERY header saying 1 GiB with 3 MiB after it (the audit's sparse file, small): the
    framer knows the file's size and fails before reading or allocating the body."""
    path = tmp_path / "long.000001"
    head = ROTATION.read_bytes()[:158]
    path.write_bytes(head + HEADER.pack(0, 2, 1, 1 << 30, 158 + (1 << 30), 0) + b"\1" * (3 << 20))
    tracemalloc.start()
    try:
        with open(path, "rb", buffering=1 << 16) as f:
            check_magic(f, str(path))
            with pytest.raises(TruncatedEventError, match=f"input ends inside the event \\({19 + (3 << 20)} of"):
                list(EventFramer(f, file=str(path), base_offset=4))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < READ_CHUNK


def test_a_huge_event_is_held_once(tmp_path):
    """A 64 MiB event is in memory once while framed and checked: no parts list joined, no
    ``header + body``, no CRC over a slice (before: about three copies at the peak)."""
    n = 64 << 20
    path = big_statement_file(tmp_path, n)
    tracemalloc.start()
    try:
        with open(path, "rb", buffering=1 << 16) as f:
            check_magic(f, path)
            sizes = [raw.event_size for raw in EventFramer(f, file=path, base_offset=4)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sizes[-1] == n
    assert peak < n * 1.2  # BytesIO grows by an eighth at a time


def test_a_huge_statement_is_its_bytes_and_its_text(tmp_path):
    """Read into a transaction, a 64 MiB statement costs its event's bytes and the statement
    text the transaction keeps: the text is decoded from a view, not a copy of the body."""
    n = 64 << 20
    path = big_statement_file(tmp_path, n)
    tracemalloc.start()
    try:
        trxs, summary = _read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert trxs[-1].statements[0].kind == "DML" and len(trxs[-1].statements[0].query) > n - 100
    assert summary.warnings == []
    assert peak < n * 2.3


def _blocks_by_split(query: str) -> bool:
    """``statement_blocks`` as it was: the whole statement split and upper-cased."""
    words = query.lstrip().split(None, 2)
    head = words[0].upper() if words else ""
    if head in ("ANALYZE", "REPAIR", "OPTIMIZE"):
        return True
    return head in ("CREATE", "ALTER", "DROP") and len(words) > 1 and words[1].upper() in ("DATABASE", "SCHEMA")


_WORDS = st.sampled_from(["ANALYZE", "repair", "Optimize", "CREATE", "alter", "DROP", "database", "SCHEMA",
                          "table", "x" * 40, "DATABASEX", "", "\0", "ß", "ﬀ"])
_SPACE = st.sampled_from([" ", "\t", "\n", "\u3000", "\x1c", "", "  "])


@given(st.lists(st.tuples(_SPACE, _WORDS), max_size=4))
def test_statement_blocks_reads_two_words_as_the_split_did(parts):
    query = "".join(s + w for s, w in parts)
    assert statement_blocks(query) == _blocks_by_split(query)


def test_statement_blocks_on_corpus_statements():
    rnd = random.Random(7)
    for q in ["ANALYZE TABLE t", "  drop   schema x", "CREATE DATABASE" + "x" * 40, "create\u3000database d",
              "OPTIMIZE" + "x" * 30, "x" * 100, "", "   "] + ["".join(rnd.choice("CREATE DB \t") for _ in range(20))
                                                              for _ in range(200)]:
        assert statement_blocks(q) == _blocks_by_split(q), q


_PIECES = st.sampled_from(["XA", "xa", "COMMIT", "ROLLBACK", "CREATE", "DATABASE", "insert", "/*", "*/", "/* c */",
                           "\u3000", "ß", "x" * 40, "START", "TRANSACTION", "TO", "é", "\x1c", "--", "'"])


@given(st.lists(st.tuples(_SPACE, _PIECES), max_size=8), st.integers(0, 120))
def test_a_statement_s_head_decides_it_as_the_whole_or_not_at_all(parts, cut):
    """The native core classifies a long statement by its first bytes (``statement_facts`` with
    ``whole`` False): either that gives what the whole statement gives, or it asks for the whole
    (None), also where the cut splits a UTF-8 sequence."""
    text = "".join(s + w for s, w in parts) + " VALUES ('" + "x" * 20 + "')"
    head = text.encode("utf-8")[:cut].decode("utf-8", "surrogateescape")
    said = statement_facts(head, whole=False)
    assert said is None or said == statement_facts(text), (head, said, statement_facts(text))


@pytest.mark.parametrize("text", ["ROLLBACK\u3000TO s1", "XA COMMIT 'x'", "xa rollback 'x'", "CREATE\u3000DATABASE d",
                                  "/* \u3000 */ BEGIN", "START\u3000TRANSACTION",
                                  "XA END 'id' /* " + "x" * 20 + " XA COMMIT */"])
def test_a_head_cut_inside_a_character_or_an_xa_statement_asks_for_the_whole(text):
    """Every cut of these: the head decides as the whole does or asks for it. A cut inside U+3000
    (Unicode whitespace, 3 bytes in UTF-8) leaves bytes that are not whitespace until the rest
    comes; an XA statement's end (XA COMMIT, XA ROLLBACK) is looked for anywhere in it."""
    whole = statement_facts(text)
    raw = text.encode("utf-8")
    for cut in range(len(raw) + 1):
        said = statement_facts(raw[:cut].decode("utf-8", "surrogateescape"), whole=False)
        assert said is None or said == whole, (cut, said, whole)
