"""How many times each command opens each input file (issue 21: one read of each file), counted
from the system calls: the command runs as a subprocess under ``strace -f -e trace=open,openat``
and every successful open of an input path counts.

The issue's target is 1 per file for ``analyze``, ``simulate`` and ``advise``. What is above it
today, and what would remove it, is written next to each expected count: the test fails when a
count changes either way (a new re-read, or one removed: then lower the number here)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES

STRACE = shutil.which("strace") or ("/usr/bin/strace" if os.path.exists("/usr/bin/strace") else None)
pytestmark = pytest.mark.skipif(STRACE is None, reason="strace is not installed (apt-get install strace)")

OPEN = re.compile(r'\bopen(?:at)?\((?:[^,]+, )?"((?:[^"\\]|\\.)*)", [^)]*\)\s+=\s+(\d+)')


def count_opens(argv: list[str], paths: list[str]) -> list[int]:
    """Successful opens of each of ``paths`` while ``argv`` runs (and its children)."""
    env = dict(os.environ, COLUMNS="100")
    env.pop("LAGADVISOR_PUREPYTHON", None)
    p = subprocess.run([STRACE, "-f", "-qq", "-e", "trace=open,openat", "-o", "/dev/stderr", *argv],
                       capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    seen = [m.group(1) for m in OPEN.finditer(p.stderr)]
    return [seen.count(path) for path in paths]


def opens(command: str, paths: list[str], *args: str) -> list[int]:
    """Opens of each input file while ``lagadvisor command paths args`` runs."""
    return count_opens([sys.executable, "-m", "lagadvisor", command, *paths, *args], paths)


def files(name: str) -> list[str]:
    d = FIXTURES / name
    return sorted(str(f) for f in d.iterdir() if re.search(r"\.\d+$", f.name))


# 8.4+ MySQL (every fixture but the MariaDB one): the policy that wrote the clock is known from the
# first file's FDE. Detection opens the first file for it (commands/common.read_inputs, once per
# command), then the read opens every file: 2 for the first file. To reach 1, the native read
# (native.read_run and the Analyzer) would have to read the FDE and pick the history size and
# the commit-order input itself before the first transaction, or take the open file from
# detection.
DETECT_THEN_READ = 2

# advise: on top, every schema what-if the rules evaluate is one more pass over every file
# (advise/context.Context.what_if_facts: read_facts over the run for each WhatIf); single_full
# triggers 3 of them (a larger history, a primary key, ignoring hot rows), sysbench none. They would
# have to run side by side in the main pass (one KeyTracker per what-if fed from the same read).
WHAT_IFS = {"single_full": 3, "single_rotation": 3, "sysbench_oltp_write_only": 0}


@pytest.mark.parametrize("command", ["analyze", "simulate", "advise"])
@pytest.mark.parametrize("fixture", ["single_full", "single_rotation", "sysbench_oltp_write_only"])
def test_mysql_84(command, fixture):
    paths = files(fixture)
    extra = WHAT_IFS[fixture] if command == "advise" else 0
    want = [DETECT_THEN_READ + extra] + [1 + extra] * (len(paths) - 1)
    assert opens(command, paths) == want


@pytest.mark.parametrize("command,want", [
    # the detection's native sample stops at the FDE (MariaDB); the reference reads the run
    ("analyze", 2),
    # simulate reads its facts through sim.facts.read_facts -> native.read_run, which tries the
    # native reader first and is given the run back at the first FDE: one open more. Removing it:
    # read_run returns None at once when run.written.mariadb (as report.native_analysis.native_pass does).
    ("simulate", 3),
    ("advise", 2),
])
def test_mariadb(command, want):
    assert opens(command, files("mariadb_concurrent")) == [want]


def test_the_count_is_real(tmp_path):
    """Every open counts, whoever makes it (Python, the native core, a child process)."""
    path = files("single_full")[0]
    child = tmp_path / "child.py"
    child.write_text(f"open({path!r}, 'rb').close()\n", encoding="utf-8")
    script = tmp_path / "parent.py"
    script.write_text(f"import subprocess, sys\nfor _ in range(2):\n    open({path!r}, 'rb').close()\n"
                      f"subprocess.run([sys.executable, {str(child)!r}], check=True)\n", encoding="utf-8")
    assert count_opens([sys.executable, str(script)], [path]) == [3]


def test_export_and_graph_detect_once():
    """export and graph: the same detection, then one read."""
    paths = files("single_full")
    assert opens("export", paths) == [DETECT_THEN_READ]
    assert opens("graph", paths) == [DETECT_THEN_READ]


def test_mysql_57_sample_and_read_share_an_open():
    """Before 8.4 the policy is judged from a sample of the recorded clock: the native sample
    reads the server from the same open (no separate FDE peek), then the read opens it again
    (the same two opens as 8.4+, for the same reason)."""
    from conftest import CORPUS

    path = CORPUS / "connector_java" / "mysql-bin.checksum-crc32"
    if not path.exists():
        pytest.skip("the shared corpus is not here")
    for command in ("analyze", "simulate", "advise"):
        assert opens(command, [str(path)]) == [DETECT_THEN_READ], command
