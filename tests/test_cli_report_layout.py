"""Report layout (issue 22, part 7) and the client conventions that need no server: policy names
in any case, warnings printed once, calibrate refusing a source binlog after its first
transactions, progress bars on graph/export/calibrate on a terminal only, and a password on the
command line refused."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time

import pytest

from conftest import FIXTURES

SYSBENCH = FIXTURES / "sysbench_oltp_write_only" / "binlog.000001"
SMALL = FIXTURES / "single_full" / "binlog.000001"


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def truncated(tmp_path_factory):
    """The small fixture with its last event cut short: reading warns that it ends inside an event."""
    p = tmp_path_factory.mktemp("trunc") / "binlog.000001"
    data = SMALL.read_bytes()
    p.write_bytes(data[:-7])
    return str(p)


@pytest.mark.parametrize("spelling", ["writeset_session", "Writeset-Session", "WRITESET_SESSION"])
def test_graph_policy_any_case(spelling):
    r = _run("graph", "--policy", spelling, "--format", "json", str(SMALL))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["policy"] == "WRITESET_SESSION"


def test_simulate_policy_any_case():
    r = _run("simulate", "--policy", "commit_order", "--policy", "Recorded", "--workers", "2", "--format", "json",
             str(SMALL))
    assert r.returncode == 0, r.stderr
    assert {row["policy"] for row in json.loads(r.stdout)["results"]} == {"COMMIT_ORDER", "recorded"}


def test_unknown_policy_is_still_one_line():
    r = _run("graph", "--policy", "writesets", str(SMALL))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "writesets" in r.stderr


@pytest.mark.parametrize("command", ["analyze", "advise", "simulate"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_warnings_printed_once(truncated, command, fmt):
    args = [command, "--format", fmt, truncated]
    if command == "simulate":
        args[1:1] = ["--workers", "2"]
    r = _run(*args)
    assert r.returncode == 0, r.stderr
    warned = [ln for ln in r.stderr.splitlines() if ln.startswith("lagadvisor: warning: ") and "ends inside" in ln]
    assert len(warned) == 1, r.stderr
    text = warned[0].removeprefix("lagadvisor: warning: ")
    if fmt == "text":
        assert text not in r.stdout and "ends inside" not in r.stdout
    else:
        json.loads(r.stdout)  # a JSON document may carry it as data; a human reads it once, on stderr


def test_calibrate_on_a_source_binlog_fails_fast():
    start = time.monotonic()
    r = _run("calibrate", str(SYSBENCH))
    took = time.monotonic() - start
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "not a replica's binlog" in lines[0] and str(SYSBENCH) in lines[0], lines
    assert took < 5, f"{took:.1f} s: the whole file was read"
    assert r.stdout == ""


@pytest.mark.parametrize("workers", [[], ["--workers", "16", "--cores", "16"]], ids=["one-worker", "16-workers"])
def test_calibrate_on_a_binlog_without_commit_timestamps_says_so(workers):
    """A MariaDB binlog (or MySQL's before 8.0.1) has no commit timestamps to fit: the one line
    names that, not a source's binlog."""
    mariadb = FIXTURES / "mariadb_concurrent" / "mariadb-bin.000001"
    r = _run("calibrate", str(mariadb), *workers)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(mariadb) in lines[0], lines
    assert "no commit timestamps" in lines[0] and "MariaDB" in lines[0], lines
    assert "not a replica's binlog" not in lines[0], lines
    assert r.stdout == ""


def _on_a_terminal(*args: str) -> str:
    """stderr as a terminal (a pty), stdout to a pipe; returns what the terminal got."""
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="100", TERM="xterm")
    proc = subprocess.Popen([sys.executable, "-m", "lagadvisor", *args], stdout=subprocess.DEVNULL, stderr=slave,
                            env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=120)
    os.close(master)
    return out.decode("utf-8", "replace")


@pytest.mark.parametrize("args", [["graph"], ["export"], ["calibrate"], ["analyze"]], ids=lambda a: a[0])
def test_progress_bar_on_a_terminal_only(args):
    assert "reading" in _on_a_terminal(*args, str(SYSBENCH))
    r = _run(*args, str(SYSBENCH))
    assert "reading" not in r.stderr and "\x1b[" not in r.stderr


@pytest.mark.parametrize("arg", ["-pSecret1", "--password=Secret1", "--ask-password=Secret1"])
def test_password_on_argv_refused(arg):
    r = _run("analyze", "-h", "127.0.0.1", arg, str(SMALL))
    assert r.returncode == 2 and "refused" in r.stderr and "Secret1" not in r.stderr + r.stdout
    assert len(r.stderr.strip().splitlines()) == 1


def test_p_flag_prompts_without_a_value():
    # -p takes no value: the next argument stays a binlog file; the prompt reads the password
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", "-h", "127.0.0.1", "-P", "1", "-p",
                        str(SMALL)], capture_output=True, text=True, timeout=60, input="pw-from-prompt\n")
    assert r.returncode == 2 and "Password for" in r.stderr, r.stderr
    assert "cannot connect to 127.0.0.1:1" in r.stderr and "Traceback" not in r.stderr
