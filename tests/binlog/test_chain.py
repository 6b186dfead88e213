"""Files that are not one server's chain (binlog.scan.note_chain): given out of order, with a gap,
or MySQL's and MariaDB's mixed, the run was read as one timeline without a word (a reversed
rotation gave lag p99 2.0 s against 0.08 s). Every command now warns on the later file."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from lagadvisor.cli import app

from conftest import FIXTURES

ROT = sorted(str(p) for p in (FIXTURES / "single_rotation").glob("binlog.0*"))
MARIADB = sorted(str(p) for p in (FIXTURES / "mariadb_concurrent").glob("*.0*"))


def _warnings(*args):
    r = CliRunner().invoke(app, [*args])
    assert r.exit_code == 0, r.output
    return [ln for ln in r.stderr.splitlines() if ln.startswith("lagadvisor: warning:")]


@pytest.mark.parametrize("command", [["analyze", "--no-progress"], ["analyze", "--no-progress", "--jobs", "2"],
                                     ["simulate", "--no-progress", "--workers", "4"],
                                     ["simulate", "--no-progress", "--workers", "4", "--jobs", "2"],
                                     ["graph", "--format", "json"]])
def test_in_order_is_quiet_and_out_of_order_warns(command):
    assert not [w for w in _warnings(*command, *ROT) if "chain" in w]
    reverse = [w for w in _warnings(*command, *ROT[::-1]) if "chain" in w]
    assert len(reverse) == len(ROT) - 1, reverse
    assert f"{ROT[-2]}: follows {ROT[-1]}, which rotates to binlog.{len(ROT) + 1:06d}" in reverse[0]


def test_a_gap_names_the_missing_file():
    said = [w for w in _warnings("analyze", "--no-progress", ROT[0], ROT[2]) if "chain" in w]
    assert said == [f"lagadvisor: warning: {ROT[2]}: follows {ROT[0]}, which rotates to binlog.000002 (files out "
                    "of order, a gap, or another server's?); lags and timelines assume the files are one server's "
                    "chain, in order"]


def test_mysql_and_mariadb_mixed():
    said = [w for w in _warnings("analyze", "--no-progress", ROT[0], MARIADB[0]) if "chain" in w]
    assert len(said) == 1 and "a MariaDB binlog after" in said[0] and "a MySQL one" in said[0]


def test_the_json_document_carries_it():
    r = CliRunner().invoke(app, ["analyze", "--format", "json", ROT[1], ROT[0]])
    doc = json.loads(r.stdout)
    assert any("follows" in w for w in doc["warnings"])


def test_a_file_of_the_magic_alone_says_so(tmp_path):
    """Four bytes (a binlog just created): 'no warnings' and zero transactions before."""
    f = tmp_path / "binlog.000001"
    f.write_bytes(b"\xfebin")
    for command in (["analyze", "--no-progress"], ["simulate", "--no-progress", "--workers", "2"]):
        said = _warnings(*command, str(f))
        assert said == [f"lagadvisor: warning: {f}: no event after the binlog magic (a binlog just created, or cut "
                        "after 4 bytes?): nothing read from it"], said
