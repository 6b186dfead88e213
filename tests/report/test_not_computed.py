"""The fallback is marked (issue 36): without a schema for a MINIMAL-metadata binlog, the
WRITESET and WRITESET_SESSION rows of analyze's policy table are marked not computed and say how
to compute them; with ``--schema`` they are computed and unmarked.

A bare clone has no 8.0 binlog whose tables were created before it; the fixture's MINIMAL
binlog read from past its CREATE TABLE statements (``--start-position``) is one."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import FIXTURES, ROOT

MINIMAL = FIXTURES / "single_minimal_metadata"
PAST_DDL = ["--start-position", "300000"]


def _analyze(*args: str) -> str:
    p = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", str(MINIMAL), *PAST_DDL, "--no-progress", *args],
                       capture_output=True, text=True, cwd=ROOT, env={"COLUMNS": "100", **_env()})
    assert p.returncode == 0, p.stderr
    return p.stdout


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k != "COLUMNS"}


def test_without_a_schema_the_writeset_rows_are_marked():
    out = _analyze()
    assert "WRITESET*" in out and "WS_SESSION*" in out and "COMMIT_ORDER*" not in out
    caption = " ".join(out.split())
    assert "not computed for 647 of 648 transactions" in caption and "pass --schema FILE" in caption
    doc = json.loads(_analyze("--format", "json"))["policies"]
    assert doc["not_computed"]["policies"] == ["WRITESET", "WRITESET_SESSION"]
    assert doc["not_computed"]["transactions"] == 647


def test_with_the_schema_only_the_tables_it_lacks_are_marked():
    """The dump has every table but wl.t_tmp (created and dropped by the workload): its 9
    transactions stay not computed, the others are computed."""
    out = " ".join(_analyze("--schema", str(MINIMAL / "schema.sql")).split())
    assert "WRITESET*" in out and "not computed for 9 of 648 transactions" in out
    doc = json.loads(_analyze("--schema", str(MINIMAL / "schema.sql"), "--format", "json"))["policies"]
    assert doc["not_computed"]["transactions"] == 9
    assert doc["clocks"]["WRITESET"]["ideal_speedup"] > doc["clocks"]["COMMIT_ORDER"]["ideal_speedup"]


def test_a_full_schema_leaves_nothing_marked():
    out = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", str(MINIMAL), "--schema",
                          str(MINIMAL / "schema.sql"), "--no-progress", "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "not_computed" not in json.loads(out)["policies"]


def _run(command: str, *args: str) -> str:
    quiet = ["--no-progress"] if command != "graph" else []
    p = subprocess.run([sys.executable, "-m", "lagadvisor", command, str(MINIMAL), *PAST_DDL, *quiet, *args],
                       capture_output=True, text=True, cwd=ROOT, env={"COLUMNS": "100", **_env()})
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_simulate_and_graph_mark_their_writeset_rows_too():
    """Every command that prints a policy row marks it when WRITESET was not computed (issue 70):
    simulate's WRITESET rows and graph's WRITESET clock, in text and JSON; with the schema, none."""
    out = _run("simulate", "--catch-up", "--workers", "1,4")
    assert "WRITESET*" in out and "WS_SESSION*" in out and "COMMIT_ORDER*" not in out
    assert "not computed for 647 of 648 transactions" in " ".join(out.split())
    doc = json.loads(_run("simulate", "--catch-up", "--workers", "4", "--format", "json"))
    assert doc["not_computed"]["policies"] == ["WRITESET", "WRITESET_SESSION"]
    assert {r["policy"]: r["not_computed"] for r in doc["results"]} == {
        "COMMIT_ORDER": False, "WRITESET": True, "WRITESET_SESSION": True}
    out = _run("graph")
    assert out.startswith("WRITESET*:") and "not computed for 647 of 648" in " ".join(out.split())
    assert "not_computed" in json.loads(_run("graph", "--format", "json"))
    assert "not_computed" not in json.loads(_run("graph", "--policy", "COMMIT_ORDER", "--format", "json"))
    with_schema = _run("simulate", "--catch-up", "--workers", "4", "--schema", str(MINIMAL / "schema.sql"))
    assert "not computed for 9 of 648 transactions" in " ".join(with_schema.split())  # wl.t_tmp, as analyze


def test_simulate_and_graph_leave_computed_rows_unmarked():
    """The whole file with the schema: every writeset computed, nothing marked."""
    schema = ["--schema", str(MINIMAL / "schema.sql")]
    for command, args in (("simulate", ["--catch-up", "--workers", "4", "--no-progress"]), ("graph", [])):
        p = subprocess.run([sys.executable, "-m", "lagadvisor", command, str(MINIMAL), *schema, *args, "--format",
                            "json"], capture_output=True, text=True, cwd=ROOT, check=True)
        assert "not_computed" not in json.loads(p.stdout), command
