"""Every file of the shared corpus (real binlogs from other projects' suites) against the
reference readers: per-transaction (gtid, last_committed, sequence_number) equal to
``mysqlbinlog``'s, row-image counts equal to ``mysqlbinlog -v`` (or ``mariadb-binlog -v`` for
files MySQL 9.x no longer reads), and the deliberately broken files failing where the reference
readers fail."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

import oracle
import reference
from conftest import CORPUS, corpus_files, corpus_params, need
from lagadvisor.binlog import FileSummary, read_transactions
from lagadvisor.binlog.constants import RowsKind
from lagadvisor.errors import BinlogError, TruncatedEventError

#: Broken on purpose: (offset, event type) where reading must stop with a domain error. The
#: reference readers stop at the same offsets ("Could not read entry at offset N").
EXPECTED_ERRORS = {
    "corrupt-relay-bin.000624": (91204, "QUERY_EVENT"),           # status block longer than the event
    "bug40482-bin.000001": (106, "INCIDENT_EVENT"),               # incident number 66 does not exist
    "ver_5_1-wl2325_r.001": (549, "EXECUTE_LOAD_QUERY_EVENT"),    # pre-GA 5.2 tree: 6-byte post-header
    "ver_5_1-wl2325_s.001": (411, "PRE_GA_WRITE_ROWS_EVENT"),     # pre-GA rows events are not supported
}
#: Truncated tails: a warning and the partial result.
EXPECTED_TRUNCATED = {
    "binlog_truncated_event.000001": 4,
    "binlog_truncated_prev_gtid_event.000001": 120,
}

_ROW_LINE = re.compile(r"^### (INSERT INTO|UPDATE|DELETE FROM) ")
_KIND = {"INSERT INTO": RowsKind.WRITE, "UPDATE": RowsKind.UPDATE, "DELETE FROM": RowsKind.DELETE}
_FAILED_AT = re.compile(r"Could not read entry at offset (\d+)")


def _row_counts(text: str) -> Counter:
    c: Counter = Counter()
    for line in text.splitlines():
        m = _ROW_LINE.match(line)
        if m:
            c[_KIND[m.group(1)]] += 1
    return c


def _mine(path: Path):
    summary = FileSummary(str(path))
    trx = list(read_transactions(str(path), summary))
    rows: Counter = Counter()
    for t in trx:
        for st in t.tables:
            rows[RowsKind.WRITE] += st.inserts
            rows[RowsKind.UPDATE] += st.updates
            rows[RowsKind.DELETE] += st.deletes
    return trx, +rows, summary


FILES = corpus_files()
pytestmark = pytest.mark.corpus


def test_corpus_is_present():
    assert len(FILES) >= 40, f"the corpus at {CORPUS} holds {len(FILES)} binlogs, not the 40 or more expected"


@pytest.mark.parametrize("path", corpus_params(FILES, lambda p: p.name))
def test_corpus_file(path: Path):
    need(oracle.have_mysqlbinlog(), "mysqlbinlog (MySQL 9.x chroot)")
    name = path.name
    if name in EXPECTED_ERRORS:
        offset, etype = EXPECTED_ERRORS[name]
        with pytest.raises(BinlogError) as info:
            _mine(path)
        assert (info.value.offset, info.value.event_type) == (offset, etype), str(info.value)
        assert info.value.file == str(path)
        ref = oracle.mysqlbinlog(path)
        assert ref.returncode != 0 and f"offset {offset}" in ref.stderr
        return
    if name in EXPECTED_TRUNCATED:
        trx, _, summary = _mine(path)
        assert summary.truncated_at == EXPECTED_TRUNCATED[name]
        assert summary.warnings and "ends inside" in summary.warnings[0]
        with pytest.raises(TruncatedEventError):
            list(read_transactions(str(path), strict_tail=True))
        return

    trx, rows, summary = _mine(path)
    assert summary.complete and summary.truncated_at is None
    ref = oracle.mysqlbinlog(path, "-v")
    if ref.returncode == 0:
        expected = reference.mysqlbinlog_transactions(ref.stdout)
        got = [(t.gtid, t.last_committed or 0, t.sequence_number or 0) for t in trx if t.gtid or
               t.sequence_number is not None]
        assert got == expected
        assert rows == +_row_counts(ref.stdout)
        return
    # MySQL 9.x refuses this file: MariaDB's events, or row events v1 (OBSOLETE since 8.4).
    failed = _FAILED_AT.search(ref.stderr)
    assert failed, ref.stderr
    need(oracle.have_mariadb_binlog(), "mariadb-binlog")
    alt = oracle.mariadb_binlog(path, "-v")
    assert alt.returncode == 0, f"neither reference reader reads {name}: {alt.stderr}"
    assert rows == +_row_counts(alt.stdout)
    if summary.mariadb:
        expected_m = reference.mariadb_transactions(alt.stdout)
        assert [(t.gtid, t.commit_id) for t in trx if t.gtid] == expected_m
