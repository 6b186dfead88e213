"""At 80 columns nothing that tells rows apart is cut: no cell is shortened with an ellipsis,
no line is wider than the terminal, and every policy row keeps a name of its own."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest
from rich.console import Console

from conftest import fixture_dirs
from lagadvisor.report.tables import hot_table, policy_caption, simulate_table

POLICIES = ("recorded", "COMMIT_ORDER", "WRITESET", "WRITESET_SESSION")


def _render(renderable, width: int = 80) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, highlight=False, color_system=None).print(renderable)
    return buf.getvalue()


def _row(policy, workers, big):
    return SimpleNamespace(policy=policy, workers=workers, apply_seconds=big, speedup=12.34,
                           lag_p99_seconds=big * 3, lag_max_seconds=big * 4, utilisation=1.0,
                           dependency_wait_seconds=big / 7)


@pytest.mark.parametrize("big", [0.012, 7.5, 1234.5678, 987_654.321])
def test_simulate_table_fits_80_columns(big):
    rows = [_row(p, w, big) for p in POLICIES for w in (1, 4, 1024)]
    out = _render(simulate_table(rows, "a long title " * 8))
    lines = out.splitlines()
    assert "…" not in out
    assert max(len(ln) for ln in lines) <= 80
    body = [ln.split()[0] for ln in lines if ln.split() and "=" not in ln and ln.split()[0] in
            ("recorded", "COMMIT_ORDER", "WRITESET", "WS_SESSION")]
    assert body.count("WRITESET") == 3 and body.count("WS_SESSION") == 3 and body.count("COMMIT_ORDER") == 3
    assert policy_caption(r.policy for r in rows) in " ".join(out.split())


def test_hot_rows_wrap_instead_of_being_cut():
    keys = [f"sbtest.sbtest1 uk_long_name=({'x' * 60}{i})" for i in range(3)]
    out = _render(hot_table("hot rows", [{"key": k, "dependencies": 10 - i} for i, k in enumerate(keys)], "key"))
    assert "…" not in out and max(len(ln) for ln in out.splitlines()) <= 80
    flat = "".join(re.sub(r"\s+[\d,]+$", "", ln).strip() for ln in out.splitlines())
    for k in keys:  # every key is there in full, only wrapped
        assert k.replace(" ", "") in flat.replace(" ", "")


def _first_file(d):
    return sorted(p for p in d.iterdir() if p.name[:1] != "." and p.suffix[1:].isdigit())[0]


@pytest.mark.parametrize("command", [["analyze"], ["simulate", "--workers", "1,4,16"], ["graph"], ["advise"]])
@pytest.mark.parametrize("fixture", fixture_dirs(), ids=lambda d: d.name)
def test_commands_fit_80_columns(command, fixture, tmp_path):
    # under a long directory, as on a CI machine: a path in a cell folds instead of being cut
    src = _first_file(fixture)
    deep = tmp_path / ("a-long-directory-name-" * 3) / fixture.name
    deep.mkdir(parents=True)
    (deep / src.name).write_bytes(src.read_bytes())
    env = dict(os.environ, COLUMNS="80", LINES="50", TERM="xterm")
    env.pop("NO_COLOR", None)
    r = subprocess.run([sys.executable, "-m", "lagadvisor", *command, str(deep / src.name)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode in (0, 1), r.stderr  # advise exits 1 only with --fail-on
    assert "…" not in r.stdout, [ln for ln in r.stdout.splitlines() if "…" in ln]
    sql = re.compile(r"^  (SET|STOP|START|CHANGE|ALTER|CREATE|--) ")
    prose = [ln for ln in r.stdout.splitlines() if not (command[0] == "advise" and sql.match(ln))]
    assert max(len(ln) for ln in prose) <= 80
    # SQL is never wrapped (issue 72): each printed statement line is a whole statement or comment
    for ln in r.stdout.splitlines():
        if command[0] == "advise" and sql.match(ln):
            assert ln.rstrip().endswith(";") or ln.lstrip().startswith("--") or "; -- " in ln, ln
    if command[0] == "analyze":  # issue 72: the file name and every GTID whole on one line
        lines = r.stdout.splitlines()
        assert src.name in lines and fixture.name + "/" in " ".join(lines), lines[:4]
        uuids = re.findall(r"[0-9a-f]{8}-[0-9a-f-]*", r.stdout)
        assert all(re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", u) for u in uuids), uuids


def test_columns_zero_still_prints():
    """COLUMNS=0 made rich print nothing, the error line included (exit 2 and an empty stderr)."""
    from conftest import FIXTURES

    binlog = FIXTURES / "single_minimal_metadata" / "binlog.000001"
    env = dict(os.environ, COLUMNS="0")
    ok = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", "--no-progress", str(binlog)],
                        capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0 and "transactions" in ok.stdout, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", "--no-progress", str(binlog) + ".missing"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("lagadvisor: error: "), bad.stderr
