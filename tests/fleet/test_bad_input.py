"""``lagadvisor fleet`` on input that used to hang it or end in a traceback (the CLI audit):
servers that are not a Dask scheduler, a directory whose name is not UTF-8, a directory the
user may not list. Real servers on loopback and real files; nothing mocked."""

from __future__ import annotations

import json
import os
import shutil
import socket
import socketserver
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import FIXTURES, ROOT

BINLOG = FIXTURES / "single_minimal_metadata" / "binlog.000001"  # its advice runs what-if passes


def _cli(*args, prefix=(), timeout=180) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "lagadvisor", *args], capture_output=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})


class _Banner(socketserver.BaseRequestHandler):
    """Speaks first, as an SSH server does, then waits for the client to hang up."""

    def handle(self) -> None:
        self.request.sendall(b"SSH-2.0-x\r\n")
        self.request.recv(1 << 16)


@pytest.fixture(params=["http", "banner"])
def not_a_scheduler(request):
    if request.param == "http":
        server = ThreadingHTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    else:
        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Banner)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_server_that_is_not_a_scheduler_is_one_line_naming_it(not_a_scheduler):
    """An HTTP server (waits for a request: the handshake never comes; it hung > 400 s) and one
    that speaks first (its banner read as frame lengths: a MemoryError traceback)."""
    start = time.monotonic()
    r = _cli("fleet", str(BINLOG.parent), "--scheduler", not_a_scheduler, timeout=120)
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"lagadvisor: error: cannot reach the Dask scheduler at {not_a_scheduler}: "), lines
    assert time.monotonic() - start < 30


def _advise_transactions(path: bytes) -> int:
    r = _cli("advise", os.fsdecode(path), "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["input"]["transactions"]


def test_a_directory_name_that_is_not_utf8(tmp_path):
    """nu_\\xff\\xfe: the server named by it reaches Dask (its what-if tasks' keys are msgpack
    text) and the HTML page; its advice is advise's on the same directory."""
    d = os.path.join(os.fsencode(tmp_path), b"nu_\xff\xfe")
    os.mkdir(d)
    shutil.copy(BINLOG, os.path.join(d, b"binlog.000001"))
    page = tmp_path / "fleet.html"
    r = _cli("fleet", "--processes", "1", os.fsdecode(d), "--format", "json", "--html", str(page))
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")[-3000:]
    doc = json.loads(r.stdout)
    (server,) = doc["servers"]
    assert server["status"] == "ok" and os.fsencode(server["name"]) == b"nu_\xff\xfe"
    assert server["advice"]["input"]["transactions"] == _advise_transactions(d)
    assert b"nu_\xff\xfe" in page.read_bytes()


def _unprivileged() -> tuple[str, ...]:
    """A prefix that runs a command without root's permission to read anything (as the audit's
    rn.sh: root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH), or nothing when not root."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root without setpriv: cannot drop the capability to read any directory")
    caps = "-dac_override,-dac_read_search"
    return (setpriv, "--bounding-set", caps, "--inh-caps", caps)


def test_an_unreadable_directory_is_its_server_error_and_the_others_complete(tmp_path):
    shut = tmp_path / "shut"
    shut.mkdir()
    shutil.copy(BINLOG, shut / "binlog.000001")
    ok = tmp_path / "ok"
    ok.mkdir()
    shutil.copy(BINLOG, ok / "binlog.000001")
    shut.chmod(0)
    try:
        r = _cli("fleet", "--processes", "1", str(shut), str(ok), "--format", "json", prefix=_unprivileged())
    finally:
        shut.chmod(0o755)
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err, err
    doc = json.loads(r.stdout)
    assert [s["status"] for s in doc["servers"]] == ["error", "ok"]
    assert doc["servers"][0]["error"] == f"{shut}: cannot list the directory: Permission denied"
    assert err.strip().splitlines() == [f"lagadvisor: error: shut: {shut}: cannot list the directory: Permission denied"]
