"""A binlog that ends between two events inside a transaction (a half-written file of a live
server, cut after its GTID and some row events but before its XID): ``analyze`` counted one
incomplete transaction, ``simulate`` and the others printed their results without a word. Every
command now warns once, naming the file and the offset where that transaction starts, through
the file summaries both readers fill (binlog.scan.FileSummary.unfinished)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lagadvisor.binlog import read_transactions
from lagadvisor.binlog.decoder import EventReader
from lagadvisor.binlog.framing import check_magic
from lagadvisor.binlog.scan import unfinished_tail
from lagadvisor.cli import app
from lagadvisor.depgraph.pipeline import ClockOptions
from lagadvisor.depgraph.read import ReadPolicy, ReadRequest, prepare, read

from conftest import FIXTURES

ROT = sorted(str(p) for p in (FIXTURES / "single_rotation").glob("binlog.0*"))
READERS = {"native": {}, "reference": {"LAGADVISOR_PUREPYTHON": "1"}}


def _event_offsets(path: str) -> list[int]:
    with open(path, "rb") as f:
        check_magic(f, path)
        return [e.offset for e in EventReader(path).read(f, base_offset=4)]


def cut_inside_last_transaction(src: str, dst) -> int:
    """``src`` copied to ``dst`` up to the last event of its last transaction (its XID), an event
    boundary; the offset where that transaction starts."""
    last = list(read_transactions(src))[-1]
    inside = [o for o in _event_offsets(src) if last.start_offset < o < last.end_offset]
    assert len(inside) >= 3, inside   # GTID, BEGIN, rows...: the cut leaves events of it
    with open(src, "rb") as f:
        dst.write_bytes(f.read(inside[-1]))
    return last.start_offset


@pytest.fixture
def unfinished(tmp_path):
    """binlog.000002 of the rotation fixture cut before its last XID, its transaction's start."""
    path = tmp_path / "binlog.000002"
    return path, cut_inside_last_transaction(ROT[1], path)


def _warnings(args, env):
    """The warnings that name an input file (not, say, a table's unknown keys)."""
    r = CliRunner().invoke(app, args, env=env)
    assert r.exit_code == 0, r.output
    return [ln for ln in r.stderr.splitlines()
            if ln.startswith("lagadvisor: warning:") and any(a in ln for a in args if "binlog." in a)]


def said(path, start: int) -> str:
    return (f"lagadvisor: warning: {path}: ends inside the transaction at offset {start}, before its commit (a binlog "
            f"still being written?); it is counted as an incomplete transaction, with the events written so far")


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("command", [["simulate", "--workers", "1,4"], ["advise"], ["analyze"],
                                     ["export"], ["graph", "--format", "json"]])
def test_every_command_warns_once_naming_file_and_offset(unfinished, command, reader):
    path, start = unfinished
    assert _warnings([*command, str(path)], READERS[reader]) == [said(path, start)]


@pytest.mark.parametrize("reader", READERS)
def test_a_whole_file_is_quiet_and_the_cut_one_counts_the_transaction(unfinished, reader):
    path, start = unfinished
    assert _warnings(["simulate", "--workers", "4", ROT[1]], READERS[reader]) == []
    r = CliRunner().invoke(app, ["analyze", "--format", "json", str(path)], env=READERS[reader])
    assert '"incomplete": 1' in r.stdout


@pytest.mark.parametrize("policy", [ReadPolicy(reference=False), ReadPolicy(native=False)], ids=["native", "reference"])
def test_both_readers_fill_the_summary(unfinished, policy):
    """The native core counts the transaction but does not say where it starts: unfinished_tail
    finds it; the read really was the native core's (``ReadResult.native``) where asked."""
    path, start = unfinished
    paths = [str(path)]
    r = read(ReadRequest(tuple(paths), ClockOptions(), prepare(paths, ClockOptions()), policy=policy))
    assert r is not None and (r.native is not None) == (not policy.reference)
    assert [s.unfinished_at for s in r.summaries] == [start]
    assert unfinished_tail(str(path)) == start
    assert unfinished_tail(ROT[1]) is None


def test_a_cut_inside_an_event_keeps_its_own_warning_alone(tmp_path):
    """Cut one byte into the XID: the truncated-tail warning, not a second one."""
    path = tmp_path / "binlog.000002"
    start = cut_inside_last_transaction(ROT[1], path)
    with open(ROT[1], "rb") as f:
        path.write_bytes(f.read(path.stat().st_size + 1))
    for env in READERS.values():
        said_ = _warnings(["simulate", "--workers", "4", str(path)], env)
        assert len(said_) == 1 and "still being written" in said_[0] and f"offset {start}" not in said_[0], said_


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_after_it_says_its_tail_is_missing(unfinished, jobs):
    path, start = unfinished
    later = path.parent / "binlog.000003"
    later.write_bytes(open(ROT[2], "rb").read())
    for env in READERS.values():
        got = _warnings(["simulate", "--workers", "4", "--jobs", jobs, str(path), str(later)], env)
        assert got[0] == said(path, start)
        assert got[1].startswith(f"lagadvisor: warning: {later}: follows {path}, which ends inside the transaction "
                                 f"at offset {start}: its tail is missing"), got
        assert len(got) == 2, got
