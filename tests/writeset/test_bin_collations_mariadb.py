"""MariaDB's ``*_bin`` (PAD SPACE) and ``*_nopad_bin`` (NO PAD) key equality, against a real
MariaDB 10.11: for every such collation the server lists, pairs of values are compared with the
collation's ``=`` (``my_strnncollsp_*``, what a unique index compares), and two values hash to
one writeset key exactly when the server says they are equal
(``writeset.collation.binary_canonicalizer``: the bytes, trailing spaces dropped by whole code
units under PAD SPACE, kept under NO PAD)."""

from __future__ import annotations

import itertools

import pytest

import oracle
from conftest import free_port, need, server_name
from lagadvisor.writeset.collation import canonicalizer

#: The Python codec that writes test values in a character set; the rest are single-byte sets
#: (the values there are bytes: ASCII, and for all but ascii 0xE9 and 0xA0).
CODECS = {"utf8mb3": "utf-8", "utf8mb4": "utf-8", "ucs2": "utf-16-be", "utf16": "utf-16-be",
          "utf16le": "utf-16-le", "utf32": "utf-32-be", "sjis": "shift_jis", "cp932": "cp932",
          "big5": "big5", "gbk": "gbk", "gb2312": "gb2312", "euckr": "euc-kr", "ujis": "euc-jp",
          "eucjpms": "euc-jp"}
#: Values that differ only in trailing spaces, tabs, NULs, case, accents or width, and characters
#: whose bytes hold 0x20 or end in it (U+2020 in ucs2 is 20 20; 中 in UTF-16 ends in 0x2D).
TEXT = ["", " ", "  ", "a", "a ", "a  ", "A", "a\t", "a\0", "e", "é", "é ", "中", "中 ", "\u3000", "a\u3000",
        "\u2020", "\u2020 ", "\U0001F600", "\U0001F600 ", "ア", "ア "]
SINGLE = [b"", b" ", b"a", b"a ", b"a  ", b"A", b"a\t", b"a\0", b"\xe9", b"\xe9 ", b"\xa0", b"a\xa0"]


def _values(charset: str) -> list[bytes]:
    codec = CODECS.get(charset)
    if codec is None:
        return [v for v in SINGLE if charset != "ascii" or max(v, default=0) < 0x80]
    out = []
    for s in TEXT:
        if charset == "utf8mb3" and any(ord(c) > 0xFFFF for c in s) or charset == "ucs2" and any(ord(c) > 0xFFFF for c in s):
            continue
        try:
            out.append(s.encode(codec))
        except UnicodeEncodeError:
            continue
    return out


def test_bin_and_nopad_bin_keys_are_equal_exactly_where_mariadb_says():
    need(oracle.have_mariadb_binlog(), "MariaDB 10.11")
    srv = oracle.realservers.MariaDBServer(server_name("lagadvisor-test-maria-bin"), free_port(),
                                           ["--server-id=6"], fresh=True)
    srv.start()
    try:
        names = srv.sql("SELECT COLLATION_NAME FROM information_schema.COLLATIONS "
                        "WHERE COLLATION_NAME LIKE '%\\_bin' ORDER BY 1").split()
        assert len([n for n in names if n.endswith("_nopad_bin")]) >= 30, names
        checked, wrong = 0, []
        for coll in names:
            charset = coll[:-len("_nopad_bin")] if coll.endswith("_nopad_bin") else coll[:-len("_bin")]
            pairs = list(itertools.combinations(_values(charset), 2))
            lit = lambda b: f"_{charset} X'{b.hex()}' COLLATE {coll}"  # noqa: E731
            row = srv.sql("SELECT " + ", ".join(f"{lit(a)} = {lit(b)}" for a, b in pairs)).split()
            assert len(row) == len(pairs), (coll, row)
            canon = canonicalizer(coll)
            for (a, b), said in zip(pairs, row):
                checked += 1
                if (canon(a) == canon(b)) != (said == "1"):
                    wrong.append((coll, a, b, said))
        assert not wrong, wrong[:20]
        # NO PAD and PAD SPACE differ where they should: the server kept "a" and "a " apart under
        # every *_nopad_bin and together under every *_bin
        assert canonicalizer("utf8mb4_nopad_bin")(b"a") != canonicalizer("utf8mb4_nopad_bin")(b"a ")
        assert canonicalizer("utf16_bin")("a".encode("utf-16-be")) == canonicalizer("utf16_bin")("a ".encode("utf-16-be"))
        assert checked > 8000, checked   # 8,362 pairs of 78 collations on MariaDB 10.11
    finally:
        srv.stop()
        srv.remove()


@pytest.mark.parametrize("coll", ["latin1_nopad_bin", "utf8mb4_nopad_bin", "ucs2_nopad_bin", "sjis_nopad_bin"])
def test_nopad_bin_keeps_trailing_spaces_without_a_server(coll):
    """The same decision, without a server: a NO PAD key keeps its trailing spaces."""
    charset = coll[:-len("_nopad_bin")]
    codec = CODECS.get(charset, "latin-1")
    c = canonicalizer(coll)
    assert c("a ".encode(codec)) != c("a".encode(codec)) and c("a".encode(codec)) == "a".encode(codec)
