"""What a DBA reads in an 80-column terminal (issue 72): ``analyze`` and ``fleet`` on the bundled
fixtures, captured at ``COLUMNS=80`` byte for byte (``tests/golden/columns80.json``; regenerate
with ``LAGADVISOR_UPDATE_GOLDENS=1`` after an intended change), and in each every file name,
server name and finding id whole on one line, no line wider than 80 columns."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT

GOLDEN = ROOT / "tests" / "golden" / "columns80.json"
SERVERS = ["sysbench_oltp_write_only", "single_rotation", "mariadb_concurrent"]
CASES = {
    "analyze sysbench": ["analyze", "fixtures/sysbench_oltp_write_only/binlog.000001", "--no-progress"],
    "analyze rotation": ["analyze", "fixtures/single_rotation", "--no-progress"],
    "fleet": ["fleet", *[f"fixtures/{s}" for s in SERVERS], "--processes", "1"],
}


def _run(args: list[str]) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    r = subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True, timeout=300,
                       cwd=ROOT, env={**env, "COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def outputs() -> dict[str, str]:
    got = {name: _run(args) for name, args in CASES.items()}
    if os.environ.get("LAGADVISOR_UPDATE_GOLDENS") == "1":
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    return got


@pytest.mark.parametrize("name", list(CASES))
def test_output_at_80_columns_is_the_golden(outputs, name):
    assert outputs[name] == json.loads(GOLDEN.read_text())[name]


def _whole(out: str, word: str) -> bool:
    return any(word in line for line in out.splitlines())


@pytest.mark.parametrize("name", list(CASES))
def test_identifiers_whole_at_80_columns(outputs, name):
    out = outputs[name]
    assert max(len(line) for line in out.splitlines()) <= 80 and "…" not in out
    if name.startswith("analyze"):
        files = [Path(p).name for p in (FIXTURES / "single_rotation").iterdir() if p.name.startswith("binlog.")] \
            if "rotation" in name else ["binlog.000001"]
        for f in files:
            assert _whole(out, f), f
        for gtid in re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:\d+", out):
            assert _whole(out, gtid)
    else:
        for server in SERVERS:
            assert _whole(out, server), server
        doc = json.loads(_run(CASES["fleet"] + ["--format", "json"]))
        for row in doc["fleet"]["rows"]:
            top = (row.get("top_finding") or {}).get("id")
            if top:
                assert _whole(out, top), top
