"""Advice as a whole: the combined plan is what `simulate` gives for the combined settings, no
finding suggests what is already set, the summary states its assumptions and fits 80 columns,
--mycnf keeps catch-up-only settings apart, and MariaDB advice speaks MariaDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, fixture_dirs

SYSBENCH = FIXTURES / "sysbench_oltp_write_only" / "binlog.000001"
MARIADB = FIXTURES / "mariadb_concurrent" / "mariadb-bin.000001"
SNAPSHOTS = Path(__file__).parent / "snapshots"


def lagadvisor(*args: str, columns: int | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if columns:
        env["COLUMNS"] = str(columns)
    r = subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def sysbench():
    return json.loads(lagadvisor("advise", str(SYSBENCH), "--format", "json").stdout)


def test_plan_time_equals_simulate_with_the_combined_settings(sysbench):
    plan = sysbench["plan"]
    assert plan["steps"], "the sysbench fixture's durable baseline has at least one change to make"
    sim = json.loads(lagadvisor("simulate", str(SYSBENCH), *plan["simulate_args"], "--format", "json").stdout)
    (row,) = sim["results"]
    assert row["apply_seconds"] == pytest.approx(plan["recommended_catch_up_seconds"], abs=1e-6)
    cur = plan["current"]
    args = ["--catch-up", "--workers", str(cur["workers"]), "--policy", cur["clock"],
            "--durable" if cur["durable"] else "--relaxed",
            "--preserve-commit-order", "on" if cur["preserve_commit_order"] else "off"]
    (base,) = json.loads(lagadvisor("simulate", str(SYSBENCH), *args, "--format", "json").stdout)["results"]
    assert base["apply_seconds"] == pytest.approx(plan["current_catch_up_seconds"], abs=1e-6)


def test_each_step_is_the_plan_without_that_one_change(sysbench):
    """A step is a setting the plan changes: its 'before' is the plan with that setting as it is
    now (simulated: `simulate` with the plan's arguments but that one value), its 'after' the plan."""
    plan = sysbench["plan"]
    for step in plan["steps"]:
        assert step["catch_up_seconds_after"] == pytest.approx(plan["recommended_catch_up_seconds"], abs=1e-6)
        if step["setting"] == "replica_parallel_workers":
            args = list(plan["simulate_args"])
            args[args.index("--workers") + 1] = step["from"]
            (row,) = json.loads(lagadvisor("simulate", str(SYSBENCH), *args, "--format", "json").stdout)["results"]
            assert row["apply_seconds"] == pytest.approx(step["catch_up_seconds_before"], abs=1e-6)


@pytest.mark.parametrize("fixture", fixture_dirs(), ids=lambda d: d.name)
def test_no_finding_suggests_what_is_already_set(fixture):
    path = sorted(p for p in fixture.iterdir() if p.suffix[1:].isdigit())[0]
    doc = json.loads(lagadvisor("advise", str(path), "--format", "json").stdout)
    for f in doc["findings"]:
        assert f["current"] is None or f["current"] != f["suggested"], f["id"]
        # no fixture misses the default lag target: no finding is critical
        assert f["severity"] != "critical", f["id"]
    assert not doc["plan"]["misses_lag_target"] and doc["plan"]["lag_target_seconds"] == 1.0
    summary = doc["summary"]
    assert sum(summary["findings"].values()) == len(doc["findings"])
    text = " ".join(summary["assumptions"])
    assert "cores" in text and "cost model" in text and "baseline" in text


def test_row_metadata_finding_only_when_not_full_and_schema_gaps_point_to_schema_or_host():
    for fixture in fixture_dirs():
        path = sorted(p for p in fixture.iterdir() if p.suffix[1:].isdigit())[0]
        doc = json.loads(lagadvisor("advise", str(path), "--format", "json").stdout)
        for f in doc["findings"]:
            if f["id"] == "binlog_row_metadata":
                assert f["current"].upper() != "FULL"
            if f["id"] == "table_definitions":
                assert "--schema" in f["suggested"] and "--host" in f["suggested"]


def test_summary_snapshot_at_80_columns():
    """The text summary of the bundled sysbench fixture, rendered at 80 columns, byte for byte
    (regenerate with LAGADVISOR_UPDATE_SNAPSHOTS=1 after an intended change)."""
    out = lagadvisor("advise", str(SYSBENCH), columns=80).stdout
    lines = out.splitlines()
    start = lines.index(next(ln for ln in lines if ln.startswith("summary")))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].strip())
    block = "\n".join(ln.rstrip() for ln in lines[start:end]) + "\n"
    prose = [ln for ln in lines if not ln.startswith("  ") or ln.startswith("   ")]  # SQL lines are never wrapped
    assert max(len(ln) for ln in prose) <= 80 and "…" not in out
    snap = SNAPSHOTS / "sysbench_summary_80.txt"
    if os.environ.get("LAGADVISOR_UPDATE_SNAPSHOTS") == "1":
        snap.write_text(block)
    assert block == snap.read_text()
    for needle in ("findings", "now", "with the plan", "bottleneck", "assumed", "cores", "cost model"):
        assert needle in block


def test_mycnf_keeps_catch_up_only_settings_apart(sysbench):
    text = lagadvisor("advise", str(SYSBENCH), "--mycnf").stdout
    permanent, _, temporary = text.partition("ONLY while it catches up")
    assert "sync_binlog = 0" not in permanent and "innodb_flush_log_at_trx_commit = 2" not in permanent
    assert "# sync_binlog = 0" in temporary
    # a setting the plan keeps is not written
    if not any(s["setting"] == "replica_parallel_workers" for s in sysbench["plan"]["steps"]):
        assert "replica_parallel_workers" not in text


def test_mariadb_advice_uses_mariadb_defaults_and_syntax():
    doc = json.loads(lagadvisor("advise", str(MARIADB), "--format", "json").stdout)
    assert doc["baseline"]["workers"] == 0  # slave_parallel_threads defaults to 0
    text = json.dumps(doc["findings"])
    assert "SET PERSIST" not in text and "SOURCE_AUTO_POSITION" not in text and "STOP REPLICA" not in text
    workers = next((f for f in doc["findings"] if f["id"] == "replica_parallel_workers"), None)
    if workers is not None:
        assert workers["setting"] == "slave_parallel_threads" and workers["current"] == "0"
        # slave_parallel_threads changes only with every replication thread stopped
        assert workers["statements"][0] == "STOP SLAVE;" and workers["statements"][-1] == "START SLAVE;"
    dur = next(f for f in doc["findings"] if f["id"] == "replica_durability")
    assert any("MASTER_USE_GTID" in s for s in dur["statements"])
    assumed = " ".join(doc["summary"]["assumptions"])
    assert "MariaDB's defaults" in assumed and "slave_parallel_threads=0" in assumed
    # MariaDB's words: its variables, no MySQL-only setting or version
    assert "replica_parallel_workers" not in assumed and "preserve_commit_order" not in assumed
    assert "8.4" not in assumed and "MySQL does not" not in assumed


def test_mariadb_modes_are_distinct_rows_with_distinct_schedules():
    seconds = {}
    for mode in ("mariadb_conservative", "mariadb_optimistic", "mariadb_aggressive"):
        sim = json.loads(lagadvisor("simulate", str(MARIADB), "--mode", mode, "--workers", "1,4", "--catch-up",
                                    "--format", "json").stdout)
        assert [(r["policy"], r["workers"]) for r in sim["results"]] == [(mode, 1), (mode, 4)]
        seconds[mode] = tuple(r["apply_seconds"] for r in sim["results"])
    # one worker applies serially whatever the mode (to 2%: when the coordinator may start reading
    # the next transaction, which overlaps the apply, follows each mode's dependencies); at 4 the
    # three schedules differ, by more
    ones = [s[0] for s in seconds.values()]
    assert max(ones) <= 1.02 * min(ones)
    assert len({s[1] for s in seconds.values()}) == 3
    fours = sorted(s[1] for s in seconds.values())
    assert fours[-1] >= 1.1 * fours[0]


def test_mariadb_plan_reproduced_by_simulate():
    doc = json.loads(lagadvisor("advise", str(MARIADB), "--format", "json").stdout)
    assert doc["plan"]["current"]["mode"] == "mariadb_optimistic"  # 10.11's default slave_parallel_mode
    (row,) = json.loads(lagadvisor("simulate", str(MARIADB), *doc["plan"]["simulate_args"], "--format",
                                   "json").stdout)["results"]
    assert row["apply_seconds"] == pytest.approx(doc["plan"]["recommended_catch_up_seconds"], abs=1e-6)
    modes = next(f for f in doc["findings"] + [] if f["id"] == "slave_parallel_mode") \
        if any(f["id"] == "slave_parallel_mode" for f in doc["findings"]) else None
    if modes is not None:
        assert set(modes["metrics"]["catch_up_seconds"]) == {"conservative", "optimistic", "aggressive"}
    else:
        assert any(c.startswith("slave_parallel_mode = ") for c in doc["summary"]["confirmed"])
