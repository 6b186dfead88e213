"""``analyze --jobs N`` gives the same bytes as the sequential read: files with DDL that later
files depend on (the catalog is carried over), with a schema file, pure Python and native, and
a damaged file still stops with one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import FIXTURES
from lagadvisor.depgraph.pipeline import ClockOptions
from lagadvisor.analysis.analyze import analyze
from lagadvisor.analysis.parallel import analyze_parallel
from lagadvisor.report.jsonout import analysis_json

ROTATION = sorted(str(p) for p in (FIXTURES / "single_rotation").glob("binlog.0*"))


def _cli(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", *args, "--format", "json"],
                          capture_output=True, text=True, timeout=600, env=env)


@pytest.mark.parametrize("pure", [False, True])
def test_jobs_equal_sequential(pure):
    env = dict(os.environ)
    if pure:
        env["LAGADVISOR_PUREPYTHON"] = "1"
    seq = _cli(*ROTATION, env=env)
    par = _cli(*ROTATION, "--jobs", "3", env=env)
    assert seq.returncode == par.returncode == 0, par.stderr
    assert seq.stdout == par.stdout


def test_ddl_in_earlier_files_reaches_later_ones(monkeypatch):
    """The rotation fixture creates its tables in the first file: the merged result equals the
    sequential one, and it would not without carrying the catalog over (so this test exercises
    the carry-over)."""
    import lagadvisor.analysis.parallel as par_mod

    seq = analysis_json(analyze(ROTATION, ClockOptions()))
    assert analysis_json(analyze_parallel(ROTATION, ClockOptions(), 2)) == seq
    monkeypatch.setattr(par_mod, "_ddl_catalogs", lambda paths, parts, opts: [None] * len(paths))
    assert analysis_json(analyze_parallel(ROTATION, ClockOptions(), 2)) != seq


def test_mixed_files_and_schema_file():
    files = [str(FIXTURES / "sysbench_oltp_write_only" / "binlog.000001"), *ROTATION[:2]]
    from lagadvisor.schema.ddl import load_schema_file

    cat = load_schema_file((FIXTURES / "single_rotation" / "schema.sql").read_text())
    for opts in (ClockOptions(), ClockOptions(catalog=cat)):
        import copy

        seq = analysis_json(analyze(files, copy.deepcopy(opts)))
        par = analysis_json(analyze_parallel(files, copy.deepcopy(opts), 2))
        assert seq == par


def test_damaged_file_one_line_error(tmp_path):
    bad = tmp_path / "binlog.000009"
    data = (FIXTURES / "single_rotation" / "binlog.000002").read_bytes()
    bad.write_bytes(data[:200] + bytes([data[200] ^ 0xFF]) + data[201:])
    seq = _cli(ROTATION[0], str(bad))
    par = _cli(ROTATION[0], str(bad), "--jobs", "2")
    assert par.returncode == seq.returncode == 2
    assert "Traceback" not in par.stderr and par.stderr.strip() == seq.stderr.strip()


def test_no_second_reading_when_earlier_ddl_changes_nothing(monkeypatch, tmp_path):
    """With the tables known up front (--schema), the CREATE TABLEs of an earlier file leave the
    later file's key plans unchanged: it is read once, and the result still equals the sequential one."""
    import lagadvisor.analysis.parallel as par_mod
    from lagadvisor.schema.ddl import load_schema_file

    src = FIXTURES / "sysbench_oltp_write_only" / "binlog.000001"
    second = tmp_path / "binlog.000002"
    second.write_bytes(src.read_bytes())
    files = [str(src), str(second)]
    schema = (FIXTURES / "sysbench_oltp_write_only" / "schema.sql").read_text()
    seen = []
    orig = par_mod._ddl_catalogs
    monkeypatch.setattr(par_mod, "_ddl_catalogs", lambda *a: seen.append(orig(*a)) or seen[-1])
    par = analysis_json(analyze_parallel(files, ClockOptions(catalog=load_schema_file(schema)), 2))
    assert seen == [[None, None]]
    assert par == analysis_json(analyze(files, ClockOptions(catalog=load_schema_file(schema))))
    # without the schema the tables come from the first file's DDL: the second file is read again
    seen.clear()
    par = analysis_json(analyze_parallel(files, ClockOptions(), 2))
    assert seen[0][0] is None and seen[0][1] is not None
    assert par == analysis_json(analyze(files, ClockOptions()))
