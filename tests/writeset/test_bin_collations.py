"""Binary (``*_bin``) collations decide key equality exactly for every character.

The server's sort key under a ``_bin`` collation is the characters' code points (utf8mb4_bin,
utf8mb3_bin, ucs2/utf16/utf32_bin: ``my_strnxfrm_unicode``/``_full_bin``) or the stored bytes
(utf8mb4_0900_bin, latin1_bin and the other single- and multi-byte ``_bin`` collations), padded
with the space under PAD SPACE (every MySQL ``_bin`` but utf8mb4_0900_bin; MariaDB's ``*_bin``)
and as they are under NO PAD (utf8mb4_0900_bin, MariaDB's ``*_nopad_bin``). No weight table is
needed, so no value is ever "approximated" there: characters outside the generated table (emoji,
CJK Extension B, private use) once were, and the report said "equality approximated, WRITESET may
be off" for a key it hashed exactly. The generated table agrees (its ``_bin`` weights are the code
points or bytes: :func:`test_table_weights_of_bin_collations_are_code_points_or_bytes`), and the
end-to-end check reads ``fixtures/single_full`` with its ``utf8mb4_bin`` keys spelled in such
characters, through both readers."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib

import pytest

from conftest import FIXTURES, ROOT
from lagadvisor.schema.ddl import apply_statement
from lagadvisor.schema.model import Catalog
from lagadvisor.writeset import weights
from lagadvisor.writeset.collation import canonicalizer
from lagadvisor.writeset.extract import approximated_since, plan_table, row_hashes

EMOJI, EMOJI2 = "\U0001F600", "\U0001F601"
CJK_B, CJK_B2 = "\U00020000", "\U00020001"
PUA, PUA2 = "\uE000", "\uE001"                      # BMP private use (3 bytes in UTF-8)
PUA15, PUA15_2 = "\U000F0000", "\U000F0001"       # plane 15 private use
OUTSIDE = [(EMOJI, EMOJI2), (CJK_B, CJK_B2), (PUA, PUA2), (PUA15, PUA15_2), ("中", "丁")]
#: (collation, Python codec of its character set, PAD SPACE)
UNICODE_BIN = [("utf8mb4_bin", "utf-8", True), ("utf8mb4_0900_bin", "utf-8", False),
               ("utf16_bin", "utf-16-be", True), ("utf16le_bin", "utf-16-le", True),
               ("utf32_bin", "utf-32-be", True),
               # MariaDB's (not in the generated MySQL table): decided by name.
               ("utf8mb4_nopad_bin", "utf-8", False), ("utf16_nopad_bin", "utf-16-be", False)]


def _canon(coll: str, enc: str, s: str):
    return canonicalizer(coll)(s.encode(enc))


def _no_approximation(coll: str):
    before = dict(weights.APPROXIMATED)

    def check():
        assert weights.APPROXIMATED.get(coll, 0) == before.get(coll, 0), f"{coll}: value approximated"
        assert approximated_since(before) == []
    return check


@pytest.mark.parametrize("coll, enc, pad", UNICODE_BIN, ids=[c for c, _, _ in UNICODE_BIN])
def test_characters_outside_the_weight_table_are_exact(coll, enc, pad):
    check = _no_approximation(coll)
    for a, b in OUTSIDE:
        for pre, post in (("", ""), ("k", ""), ("", "k"), ("K", "a")):
            va, vb = pre + a + post, pre + b + post
            assert _canon(coll, enc, va) != _canon(coll, enc, vb), (coll, va, vb)
            assert _canon(coll, enc, va) == _canon(coll, enc, va)
        assert _canon(coll, enc, a) != _canon(coll, enc, a + "\0")
        assert _canon(coll, enc, a) != _canon(coll, enc, a + "\t")
        assert _canon(coll, enc, "a" + a) != _canon(coll, enc, "A" + a)
        # Trailing spaces count exactly when the collation is NO PAD.
        assert (_canon(coll, enc, a + " ") == _canon(coll, enc, a)) is pad
        assert (_canon(coll, enc, a + "   ") == _canon(coll, enc, a)) is pad
        assert _canon(coll, enc, " " + a) != _canon(coll, enc, a)
        assert _canon(coll, enc, a + " " + b) != _canon(coll, enc, a + b)
    # Within the stored repertoire too: case, accents and trailing spaces as the server.
    assert _canon(coll, enc, "a") != _canon(coll, enc, "A") != _canon(coll, enc, "á")
    assert (_canon(coll, enc, "a ") == _canon(coll, enc, "a")) is pad
    check()


def test_wide_character_sets_pad_whole_spaces():
    """ucs2/utf16/utf32 store a space as a whole code unit: U+2020 (bytes 20 20) or U+4E20 (4E 20)
    is no trailing space, and a trailing U+0020 after a surrogate pair is one."""
    for coll, enc in (("ucs2_bin", "utf-16-be"), ("utf16_bin", "utf-16-be"), ("utf32_bin", "utf-32-be")):
        check = _no_approximation(coll)
        assert _canon(coll, enc, "\u4e20") != _canon(coll, enc, "\u4e00")
        assert _canon(coll, enc, "\u2020") != _canon(coll, enc, "")
        assert _canon(coll, enc, "\u4e2d  ") == _canon(coll, enc, "\u4e2d")
        if coll != "ucs2_bin":
            assert _canon(coll, enc, EMOJI + " ") == _canon(coll, enc, EMOJI)
        check()


def test_single_byte_and_legacy_multibyte_bin_compare_bytes():
    for coll, enc in (("latin1_bin", "latin1"), ("utf8mb3_bin", "utf-8"), ("gbk_bin", "gbk"),
                      ("sjis_bin", "shift_jis"), ("big5_bin", "big5"), ("latin1_nopad_bin", "latin1")):
        check = _no_approximation(coll)
        pad = "nopad" not in coll
        for s in ("中文", "表", "ア", "\xe9t\xe9"):
            try:
                b = s.encode(enc)
            except UnicodeEncodeError:
                continue
            c = canonicalizer(coll)
            assert (c(b + b" ") == c(b)) is pad and c(b) != c(b + b"\0")
        check()
    # Bytes, not a Python codec's reading: sjis 0x5C and 0x815F are two characters.
    assert canonicalizer("sjis_bin")(b"\x5c") != canonicalizer("sjis_bin")(b"\x81\x5f")


def test_table_weights_of_bin_collations_are_code_points_or_bytes():
    """What the generated table says (WEIGHT_STRING() on MySQL 9.7.4) for the code points it holds:
    a _bin collation's weight is the code point (3 bytes; 2 for utf8mb3/ucs2) or the stored bytes
    (utf8mb4_0900_bin, the single-byte character sets), so canonicalizing by code point or byte
    is the server's equality for every character, inside the table or not."""
    unicode = ("utf8mb4", "utf8mb3", "ucs2", "utf16", "utf16le", "utf32")
    bins = {n: e for n, e in weights.collations().items() if n.endswith("_bin")}
    assert len(bins) == 41
    for name, e in bins.items():
        assert e["pad"] is (name != "utf8mb4_0900_bin"), name
        if e["charset"] not in unicode and e["maxlen"] != 1:
            continue  # gbk, sjis...: keyed by Python's reading of the character set, weighed by MySQL's
        table = weights._table(name)
        assert table
        for u, w in table.items():
            if e["maxlen"] == 1:
                want = bytes([u])
            elif name == "utf8mb4_0900_bin":
                want = chr(u).encode("utf-8")
            else:
                want = u.to_bytes(2 if e["charset"] in ("utf8mb3", "ucs2") else 3, "big")
            assert w == (want,), (name, hex(u), w)


def _plan(ddl: str):
    cat = Catalog()
    apply_statement(cat, ddl, "db")
    return plan_table(cat.get("db", "t"), cat)


@pytest.mark.parametrize("coll", ["utf8mb4_bin", "utf8mb4_0900_bin", "utf8mb4_nopad_bin", "utf8mb3_bin",
                                  "latin1_bin"])
def test_extract_hashes_bin_keys_without_a_caveat(coll):
    """Through the extract API: no per-column caveat up front, no approximated value counted, and
    keys that differ only in characters outside the weight table hash apart."""
    charset = coll.split("_", 1)[0]
    plan = _plan(f"CREATE TABLE t (id INT PRIMARY KEY, k VARCHAR(20) CHARACTER SET {charset} "
                 f"COLLATE {coll} UNIQUE, c CHAR(10) CHARACTER SET {charset} COLLATE {coll} UNIQUE)")
    assert plan.partial is None
    before = dict(weights.APPROXIMATED)
    enc = "latin1" if charset == "latin1" else "utf-8"
    pairs = [("\xe9", "\xe8")] if charset == "latin1" else [(a, b) for a, b in OUTSIDE
                                                           if charset == "utf8mb4" or len(a.encode()) < 4]

    def hashes(k: str, c: str) -> list[int]:
        out: list[int] = []
        row_hashes(plan, {0: 1, 1: k.encode(enc), 2: c.encode(enc)}, out, True)
        return out

    for a, b in pairs:
        assert hashes("x" + a, "y") != hashes("x" + b, "y")           # the VARCHAR key
        assert hashes("x", a) != hashes("x", b)                       # the CHAR key
        pad = coll not in ("utf8mb4_0900_bin", "utf8mb4_nopad_bin")
        assert (hashes("x" + a + "  ", "y") == hashes("x" + a, "y")) is pad
        # CHAR sort keys of utf8mb4_0900_bin are filled with NULs (the sweep's finding), PAD
        # SPACE ones with spaces.
        if coll != "utf8mb4_nopad_bin":
            assert (hashes("x", a + "\0") == hashes("x", a)) is (coll == "utf8mb4_0900_bin")
    assert approximated_since(before) == []
    assert weights.APPROXIMATED.get(coll, 0) == before.get(coll, 0)


# --- end to end: a real binlog with utf8mb4_bin keys outside the weight table -----------------

HEADER = 19
TABLE_MAP, WRITE_ROWS, UPDATE_ROWS, DELETE_ROWS = 19, 30, 31, 32
#: Supplementary characters the keys are respelled in: emoji, CJK Extension B, plane-15 private use.
BASES = (0x1F600, 0x20000, 0xF0000)


def _events(data: bytes):
    pos = 4
    while pos + HEADER <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        yield pos, size, data[pos + 4]
        pos += size


class _Respell:
    """Each key's first four bytes, when ASCII and not a space, become one 4-byte supplementary
    character, a distinct one per distinct prefix: an injective, length-keeping rewrite that keeps
    every equality (and inequality) of the keys under utf8mb4_bin, trailing spaces included, so the
    recorded WRITESET clock stays the server's answer for the rewritten file."""

    def __init__(self):
        self.chars: dict[bytes, bytes] = {}

    def __call__(self, v: bytes) -> bytes:
        head = v[:4]
        if len(head) < 4 or not all(0x21 <= x <= 0x7E for x in head):
            return v
        if head not in self.chars:
            i = len(self.chars)
            self.chars[head] = chr(BASES[i % 3] + i // 3).encode("utf-8")
        return self.chars[head] + v[4:]


def _respell_table(data: bytes, db: bytes, table: bytes) -> tuple[bytes, int]:
    """``data`` (a whole binlog with CRC32 footers) with every key of ``db.table`` (a VARCHAR key
    of at most 255 bytes, then an INT: the fixture's ``wl.t_bin``) respelled; and the count."""
    fde_off = 4
    post = data[fde_off + HEADER + 2 + 50 + 4 + 1:]
    out, ids, respell, n = bytearray(data), set(), _Respell(), 0
    for off, size, t in _events(data):
        body = off + HEADER
        if t == TABLE_MAP:
            tid = int.from_bytes(data[body:body + 6], "little")
            p = body + post[TABLE_MAP - 1]
            dlen = data[p]
            name_db = data[p + 1:p + 1 + dlen]
            tlen = data[p + 2 + dlen]
            if name_db == db and data[p + 3 + dlen:p + 3 + dlen + tlen] == table:
                ids.add(tid)
        elif t in (WRITE_ROWS, UPDATE_ROWS, DELETE_ROWS) and int.from_bytes(data[body:body + 6], "little") in ids:
            p = body + post[t - 1]
            p += struct.unpack_from("<H", data, body + 8)[0] - 2
            assert data[p] == 2 and all(data[p + 1 + k] & 3 == 3 for k in range(2 if t == UPDATE_ROWS else 1))
            p += 2 if t != UPDATE_ROWS else 3
            end = off + size - 4
            while p < end:
                assert data[p] == 0  # null bitmap: no NULL
                ln = data[p + 1]
                new = respell(data[p + 2:p + 2 + ln])
                out[p + 2:p + 2 + ln] = new
                n += new != data[p + 2:p + 2 + ln]
                p += 2 + ln + 4
            assert p == end
            struct.pack_into("<I", out, end, zlib.crc32(bytes(out[off:end])))
    return bytes(out), n


def _export(path: str, pure: bool) -> tuple[list[dict], str]:
    env = {k: v for k, v in os.environ.items() if k != "LAGADVISOR_PUREPYTHON"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    if pure:
        env["LAGADVISOR_PUREPYTHON"] = "1"
    else:
        env["LAGADVISOR_NATIVE_DEBUG"] = "1"  # says so if the native core gave the run back
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "export", "--commit-order", "serial", path],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()], r.stderr


def test_fixture_with_supplementary_bin_keys_reads_exactly_in_both_readers(tmp_path):
    src = FIXTURES / "single_full" / "binlog.000001"
    data, n = _respell_table(src.read_bytes(), b"wl", b"t_bin")
    assert n > 100  # row images of wl.t_bin respelled
    assert "\U0001F600".encode() in data and "\U00020000".encode() in data and "\U000F0000".encode() in data
    path = tmp_path / "binlog.000001"
    path.write_bytes(data)
    original, _ = _export(str(src), pure=False)
    for pure in (False, True):
        recs, stderr = _export(str(path), pure)
        assert "approximated" not in stderr, stderr
        assert "native core gave up" not in stderr, stderr
        # The server's recorded clock, which the rewrite keeps valid, for every transaction.
        assert [r["computed"]["WRITESET"] for r in recs] == [r["last_committed"] for r in recs]
        assert [r["computed"] for r in recs] == [r["computed"] for r in original]
    assert sum(1 for r in recs if "wl.t_bin" in r["tables"]) > 50
