"""The bundled fixtures (binlogs written by real MySQL 9.x and MariaDB servers) against their
reference readings: ``reference.tsv`` (committed, from mysqlbinlog/mariadb-binlog) and, live,
``mysqlbinlog -vv`` for row counts and primary-key values of every row image."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import oracle
import reference
from conftest import FIXTURES, fixture_dirs, need
from lagadvisor.binlog import FileSummary, read_transactions
from lagadvisor.binlog.constants import RowsKind

DIRS = fixture_dirs()
MANIFEST = json.loads((FIXTURES / "MANIFEST").read_text()) if (FIXTURES / "MANIFEST").exists() else []


def binlogs(d: Path) -> list[Path]:
    index = [p for p in d.iterdir() if p.is_file() and re.search(r"\.\d{6}$", p.name)]
    return sorted(index)


def read_all(d: Path):
    out = []
    summaries = []
    for f in binlogs(d):
        s = FileSummary(str(f))
        out.extend(read_transactions(str(f), s))
        summaries.append(s)
    return out, summaries


def test_fixtures_present_and_listed():
    names = {m["name"] for m in MANIFEST}
    assert len(DIRS) >= 8
    assert {d.name for d in DIRS} == names
    for m in MANIFEST:
        for k in ("server", "server_version", "server_options", "workload", "seed", "regenerate"):
            assert m.get(k) not in (None, ""), (m["name"], k)
    total = sum(p.stat().st_size for p in FIXTURES.rglob("*") if p.is_file())
    assert total < 30 * 1024 * 1024


@pytest.mark.parametrize("d", DIRS, ids=[d.name for d in DIRS])
def test_fixture_matches_reference_tsv(d: Path):
    trx, summaries = read_all(d)
    assert all(s.complete and not s.warnings for s in summaries), [s.warnings for s in summaries]
    ref = reference.read_tsv(d / "reference.tsv")
    assert trx, "no transactions read"
    if summaries[0].mariadb:
        got = [(Path(t.file).name, t.gtid, t.commit_id) for t in trx]
    else:
        got = [(Path(t.file).name, t.gtid, t.last_committed, t.sequence_number) for t in trx]
    assert got == [tuple(r) for r in ref]


_ROW, _VAL, _KIND = oracle.VV_ROW, oracle.VV_VAL, oracle.VV_KIND
parse_vv = oracle.parse_vv


def quoted(b: bytes) -> str:
    """``my_b_write_quoted``: control bytes escaped, everything else raw (read back as text
    with undecodable bytes replaced, as the oracle output is)."""
    out = bytearray(b"'")
    esc = {8: b"\\b", 12: b"\\f", 10: b"\\n", 13: b"\\r", 9: b"\\t", 92: b"\\\\", 39: b"\\'"}
    for ch in b:
        if ch in esc:
            out += esc[ch]
        elif ch < 0x20:
            out += b"\\x%02x" % ch
        else:
            out.append(ch)
    out += b"'"
    return out.decode("utf-8", "replace")


def vv_text(value, typestr: str) -> str:
    """How ``mysqlbinlog -vv`` prints one of our decoded values (log_event_print_value)."""
    if value is None:
        return "NULL"
    bits = {"TINYINT": 8, "SHORTINT": 16, "MEDIUMINT": 24, "INT": 32, "LONGINT": 64}.get(typestr)
    if bits is not None:
        v = value - (1 << bits) if value >= 1 << (bits - 1) else value
        return f"{v} ({v + (1 << bits)})" if v < 0 else str(v)
    if typestr.startswith("DATETIME("):
        return f"'{value}'"
    if isinstance(value, bytes):
        return quoted(value)
    return str(value)


MYSQL_DIRS = [d for d in DIRS if not d.name.startswith("mariadb")]


@pytest.mark.parametrize("d", MYSQL_DIRS, ids=[d.name for d in MYSQL_DIRS])
def test_fixture_rows_and_primary_keys_match_mysqlbinlog_vv(d: Path):
    need(oracle.have_mysqlbinlog(), "mysqlbinlog (MySQL 9.x chroot)")
    checked = 0
    for f in binlogs(d):
        r = oracle.mysqlbinlog(f, "-vv")
        assert r.returncode == 0, r.stderr
        assert [(g, lc, seq) for g, lc, seq in reference.mysqlbinlog_transactions(r.stdout)] == \
            [(t.gtid, t.last_committed, t.sequence_number) for t in read_transactions(str(f))]
        expected = parse_vv(r.stdout)
        mine = []
        counts_mine: Counter = Counter()
        for t in read_transactions(str(f)):
            mine.extend(t.row_changes)
            for st in t.tables:
                counts_mine[RowsKind.WRITE] += st.inserts
                counts_mine[RowsKind.UPDATE] += st.updates
                counts_mine[RowsKind.DELETE] += st.deletes
        assert +counts_mine == +Counter(k for _, k, _, _ in expected)
        # Row images of tables with a primary key in the table map (FULL metadata) are kept with
        # their PK values; compare them with mysqlbinlog's text, in order.
        exp_pk = [e for e in expected if any(e[0] == c.table for c in mine)]
        assert len(exp_pk) == len(mine)
        for c, (table, kind, before, after) in zip(mine, exp_pk):
            assert (c.table, c.kind) == (table, kind)
            for img, ref_img in ((c.before, before), (c.after, after)):
                if img is None:
                    assert ref_img is None
                    continue
                for col, value in img.items():
                    typestr = _typestr(r.stdout, table, col)
                    assert vv_text(value, typestr) == ref_img[col], (table, col, value, ref_img[col])
                    checked += 1
    if d.name.endswith("minimal_metadata"):
        assert checked == 0  # MINIMAL metadata: no primary key in the table map, nothing kept
    else:
        assert checked > 100


_TYPE_CACHE: dict[tuple[int, str, int], str] = {}


def _typestr(text: str, table: str, col: int) -> str:
    key = (id(text), table, col)
    if key not in _TYPE_CACHE:
        current = None
        for line in text.splitlines():
            m = _ROW.match(line)
            if m:
                current = f"{m.group(2)}.{m.group(3)}"
                continue
            if current == table:
                v = _VAL.match(line)
                if v and int(v.group(1)) - 1 == col:
                    _TYPE_CACHE[key] = v.group(3)
                    break
        _TYPE_CACHE.setdefault(key, "?")
    return _TYPE_CACHE[key]



#: An event's header comment in mysqlbinlog's output, and its type's first word.
_HEADER = re.compile(r"^#\d{6}\s+\d+:\d\d:\d\d server id \d+\s+end_log_pos \d+[^\t]*\t(\S+)", re.M)
#: The file's own events (no transaction's).
_OWN = {"Start:", "Previous-GTIDs", "Rotate", "Stop"}


@pytest.mark.parametrize("d", MYSQL_DIRS, ids=[d.name for d in MYSQL_DIRS])
def test_fixture_event_counts_match_mysqlbinlog(d: Path):
    """``Transaction.event_count`` (what the model's coordinator and workers pay per event,
    ``TrxFacts.events``): the event headers ``mysqlbinlog`` prints from each GTID event to the
    next, the file's own events left out; a compressed transaction is its payload event and the
    events inside it, which ``mysqlbinlog`` prints each with a header too."""
    need(oracle.have_mysqlbinlog(), "mysqlbinlog (MySQL 9.x chroot)")
    checked = 0
    for f in binlogs(d):
        r = oracle.mysqlbinlog(f)
        assert r.returncode == 0, r.stderr
        counts: list[int] = []
        for m in _HEADER.finditer(r.stdout):
            kind = m.group(1)
            if kind in ("GTID", "Anonymous_GTID"):
                counts.append(0)
            if kind not in _OWN:
                counts[-1] += 1
        mine = [t.event_count for t in read_transactions(str(f))]
        assert mine == counts, f.name
        checked += len(mine)
    assert checked
