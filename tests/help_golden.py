"""Every command's ``--help`` at 80 and 120 columns, as a user's terminal shows it (issue 35):
``tests/test_cli_help.py`` compares with ``tests/golden/help.json``, which
``python tests/help_golden.py --write`` regenerates (only when a help change is intended, in the
commit that says why).

Each width runs in one fresh interpreter from the repository root (COLUMNS set, TERM=dumb, not a
terminal), each case through ``lagadvisor.cli.main`` as the console script calls it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cli_golden

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "help.json"
WIDTHS = (80, 120)


def cases() -> list[list[str]]:
    return [["--help"]] + [[c, "--help"] for c in cli_golden.COMMANDS]


def run_width(columns: int) -> dict:
    """``{"lagadvisor analyze --help": stdout}`` for every case, at ``columns``."""
    env = dict(os.environ, COLUMNS=str(columns), TERM="dumb", PYTHONPATH=str(ROOT / "src"))
    for k in ("LAGADVISOR_PUREPYTHON", "FORCE_COLOR", "NO_COLOR", "TERMINAL_WIDTH", "LINES"):
        env.pop(k, None)
    p = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--run"], cwd=ROOT, env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, check=True)
    return json.loads(p.stdout)


def run_all() -> dict:
    """``{"80": {case: help}, "120": {...}}``."""
    return {str(w): run_width(w) for w in WIDTHS}


def _run_here() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    got = {}
    real_stdout = sys.stdout
    for argv in cases():
        r = cli_golden.run_case(argv)
        assert r["exit"] == 0 and r["stderr"] == "", (argv, r)
        got[" ".join(["lagadvisor", *argv])] = r["stdout"]
    real_stdout.write(json.dumps(got, sort_keys=True))


def _show(got: dict) -> None:
    for width, helps in got.items():
        for case, text in helps.items():
            print(f"== {case} (COLUMNS={width})\n{text}")


if __name__ == "__main__":
    cli_golden.golden_main(GOLDEN, _run_here, run_all, _show)
