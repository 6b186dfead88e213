"""mysqlbinlog's window options (issue 14.3): ``--start-position``, ``--stop-position``,
``--start-datetime`` and ``--stop-datetime`` give the same transactions (GTIDs) as the real
``mysqlbinlog`` with the same options on the same file, native core and reference, for windows
that start and stop mid-transaction."""

from __future__ import annotations

import datetime
import json
import os
import random
import re
import subprocess
import sys

import pytest

import oracle
from conftest import FIXTURES, need

FILE = FIXTURES / "single_full" / "binlog.000001"


def _mysqlbinlog(*args: str) -> tuple[list[str], str]:
    r = oracle.mysqlbinlog(FILE, *args)
    return [g for g in re.findall(r"GTID_NEXT= '([^']+)'", r.stdout) if g != "AUTOMATIC"], r.stdout


def _ours(*args: str, native: bool) -> list[str]:
    env = dict(os.environ)
    env.pop("LAGADVISOR_PUREPYTHON", None)
    if not native:
        env["LAGADVISOR_PUREPYTHON"] = "1"
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "export", *args, str(FILE)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return [json.loads(line)["gtid"] for line in r.stdout.splitlines()]


def _cases() -> list[tuple[str, ...]]:
    full, text = _mysqlbinlog()
    assert len(full) > 1000
    ats = [int(x) for x in re.findall(r"^# at (\d+)$", text, re.M)]
    stamps = sorted(set(re.findall(r"^#(\d{6} +\d+:\d\d:\d\d) server id", text, re.M)))
    rnd = random.Random(14)
    out = []
    for _ in range(2):  # event boundaries, most of them inside a transaction
        a, b = sorted(rnd.sample(ats, 2))
        out += [("--start-position", str(a)), ("--stop-position", str(b)),
                ("--start-position", str(a), "--stop-position", str(b))]
    for st in stamps[1:3]:
        when = datetime.datetime.strptime(" ".join(st.split()), "%y%m%d %H:%M:%S").strftime("%Y-%m-%d %H:%M:%S")
        out += [("--start-datetime", when), ("--stop-datetime", when)]
    return out


def test_windows_give_the_transactions_mysqlbinlog_gives():
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot (mysqlbinlog)")
    for case in _cases():
        expect, _ = _mysqlbinlog(*case)
        assert _ours(*case, native=True) == expect, case
        assert _ours(*case, native=False) == expect, case


@pytest.mark.parametrize("args,words", [
    (["--start-position", "-5"], "--start-position"),
    (["--start-position", "500", "--stop-position", "400"], "not after"),
    (["--start-datetime", "yesterday"], "--start-datetime"),
    (["--start-datetime", "2026-11-22 05:00", "--stop-datetime", "2026-11-22 04:00"], "not after"),
])
def test_bad_windows_are_one_line(args, words):
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", *args, str(FILE)], capture_output=True,
                       text=True, timeout=60)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1 and words in lines[0], r.stderr


@pytest.mark.parametrize("native", [True, False], ids=["native", "reference"])
def test_positions_apply_to_the_first_and_the_last_file(native):
    """Over a rotation sequence, --start-position cuts the first file only and --stop-position the
    last one, as mysqlbinlog applies them."""
    files = [str(p) for p in sorted((FIXTURES / "single_rotation").iterdir()) if p.suffix[1:].isdigit()]

    def gtids(paths, *args):
        env = dict(os.environ)
        env.pop("LAGADVISOR_PUREPYTHON", None)
        if not native:
            env["LAGADVISOR_PUREPYTHON"] = "1"
        r = subprocess.run([sys.executable, "-m", "lagadvisor", "export", *args, *paths], capture_output=True,
                           text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        return [json.loads(line)["gtid"] for line in r.stdout.splitlines()]

    start, stop = "20000", "30000"
    whole = gtids(files, "--start-position", start, "--stop-position", stop)
    parts = gtids(files[:1], "--start-position", start)
    for f in files[1:-1]:
        parts += gtids([f])
    parts += gtids(files[-1:], "--stop-position", stop)
    assert whole == parts and 0 < len(whole) < len(gtids(files))
