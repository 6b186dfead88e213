"""The reference's per-file totals keep a summary's worth once their file is done (a day of
MariaDB binlogs is read by the reference: issue 33's tenth session), and count MariaDB's group
commits as runs of one commit id."""

from __future__ import annotations

import shutil

from conftest import FIXTURES
from lagadvisor.analysis.analyze import analyze
from lagadvisor.analysis.parallel import analyze_parallel
from lagadvisor.depgraph.pipeline import ClockOptions

MARIADB = FIXTURES / "mariadb_concurrent" / "mariadb-bin.000001"


def _copies(tmp_path, n: int) -> list[str]:
    out = []
    for i in range(1, n + 1):
        p = tmp_path / f"mariadb-bin.{i:06d}"
        shutil.copyfile(MARIADB, p)
        out.append(str(p))
    return out


def test_a_done_file_keeps_no_per_transaction_state_and_groups_are_runs(tmp_path):
    from lagadvisor.binlog import read_transactions

    files = _copies(tmp_path, 3)
    a = analyze(files, ClockOptions())
    ids = [t.commit_id for t in read_transactions(str(MARIADB))]
    runs = sum(1 for k, c in enumerate(ids) if c is not None and (k == 0 or ids[k - 1] != c))
    assert runs == len({c for c in ids if c is not None}) > 100   # one run per group in a real binlog
    for f in a.files:
        assert f.totals.commit_groups == runs
        assert len(f.totals.recorded._levels) == 1   # its clock's per-sequence-number levels went
        assert f.totals.recorded.depth > 0 and f.totals.recorded.transactions == len(ids)
    assert a.total.commit_groups == 3 * runs          # the copies' groups are other groups
    assert analyze_parallel(files, ClockOptions(), 2).total.commit_groups == 3 * runs
