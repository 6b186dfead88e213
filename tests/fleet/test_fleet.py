"""``lagadvisor fleet`` on a real Dask cluster started here: ``dask scheduler`` and two
``dask worker`` processes on loopback (the commands a DBA runs; nothing mocked).

- every server's advice document equals ``advise`` on that server's files alone, byte for byte;
- a server with a corrupt file is its one-line error, and every other server completes;
- a worker killed while it runs a task: Dask runs its tasks again on the other worker and the
  fleet document is the same as the undisturbed run's;
- an unreachable scheduler is one line naming the address;
- the embedded cluster (the default) through the CLI, with the HTML page drawn in headless Chromium.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, need

BIN = Path(sys.executable).parent
SERVERS = ["sysbench_oltp_write_only", "single_rotation", "mariadb_concurrent", "single_full"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(*args, timeout=120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, **kw)


def _advise_alone(files: list[str]) -> str:
    r = _cli("advise", *files, "--format", "json")
    assert r.returncode == 0, r.stderr
    return r.stdout


def _dumps(doc) -> str:
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


@pytest.fixture(scope="module")
def corrupt_dir(tmp_path_factory) -> Path:
    """single_rotation's first two files, the second with 64 bytes overwritten mid-file."""
    d = tmp_path_factory.mktemp("corrupt") / "broken"
    d.mkdir()
    shutil.copy(FIXTURES / "single_rotation" / "binlog.000001", d / "binlog.000001")
    data = bytearray((FIXTURES / "single_rotation" / "binlog.000002").read_bytes())
    data[len(data) // 2:len(data) // 2 + 64] = b"\xff" * 64
    (d / "binlog.000002").write_bytes(bytes(data))
    return d


class Cluster:
    """``dask scheduler`` + two ``dask worker`` processes (one thread each) on 127.0.0.1."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.logs = tempfile.mkdtemp(prefix="lagadvisor-dask-")
        # as docs/internals.md says to start workers: the statistical profiler off (it can free a native
        # reader object on the wrong thread)
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
        self.scheduler = subprocess.Popen(
            [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.logs, "scheduler.log"), "w"), env=env)
        self.workers = [subprocess.Popen(
            [str(BIN / "dask"), "worker", self.address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
             "--name", f"w{i}", "--host", "127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.logs, f"worker{i}.log"), "w"), env=env,
            start_new_session=True) for i in range(2)]

    def client(self):
        from distributed import Client

        c = Client(self.address, timeout="30s")
        c.wait_for_workers(2, timeout=60)
        return c

    def close(self) -> None:
        for p in self.workers + [self.scheduler]:
            if p.poll() is None:
                p.terminate()
        for p in self.workers + [self.scheduler]:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.logs, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    need(shutil.which("dask", path=str(BIN)) is not None, "the dask command (distributed)")
    c = Cluster()
    yield c
    c.close()


def _entries(corrupt_dir: Path):
    from lagadvisor.fleet import entries_from_dirs

    return entries_from_dirs([str(FIXTURES / s) for s in SERVERS] + [str(corrupt_dir)])


@pytest.fixture(scope="module")
def undisturbed(cluster, corrupt_dir):
    from lagadvisor.fleet import fleet
    from lagadvisor.report.fleet import fleet_json

    with cluster.client() as client:
        run = fleet(_entries(corrupt_dir), client)
    return run, fleet_json(run.results)


def test_each_server_equals_advise_alone(undisturbed):
    """Byte-identical advice per server (single_rotation: five files whose per-file reads ran on
    both workers, then merged), and the fleet document validates against its schema."""
    import jsonschema

    run, doc = undisturbed
    assert run.workers == 2
    jsonschema.validate(doc, json.loads((ROOT / "docs" / "fleet-schema.json").read_text()))
    advise_schema = json.loads((ROOT / "docs" / "advise-schema.json").read_text())
    ok = [s for s in doc["servers"] if s["status"] == "ok"]
    assert [s["name"] for s in ok] == SERVERS
    for s in ok:
        assert s["files"] == sorted(s["files"]) and len(s["files"]) == (5 if s["name"] == "single_rotation" else 1)
        jsonschema.validate(s["advice"], advise_schema)
        assert _dumps(s["advice"]) == _advise_alone(s["files"]), s["name"]
    rows = {r["server"]: r for r in doc["fleet"]["rows"]}
    assert rows["mariadb_concurrent"]["written_policy"] == "MariaDB"
    assert rows["sysbench_oltp_write_only"]["transactions"] == ok[0]["advice"]["input"]["transactions"]
    assert rows["sysbench_oltp_write_only"]["parallelism"]["WRITESET"] > rows["single_rotation"]["parallelism"]["WRITESET"]


def test_a_corrupt_server_is_one_line_and_the_others_complete(undisturbed, corrupt_dir):
    run, doc = undisturbed
    bad = [s for s in doc["servers"] if s["status"] == "error"]
    assert [s["name"] for s in bad] == ["broken"] and bad[0]["advice"] is None
    err = bad[0]["error"]
    assert "\n" not in err and f"{corrupt_dir}/binlog.000002" in err and "checksum" in err.lower()
    # the same line advise gives for that server alone
    r = _cli("advise", str(corrupt_dir / "binlog.000001"), str(corrupt_dir / "binlog.000002"))
    assert r.returncode == 2 and r.stderr.strip() == f"lagadvisor: error: {err}"
    assert doc["fleet"]["completed"] == len(SERVERS) and doc["fleet"]["failed"] == [{"server": "broken", "error": err}]


def test_unreachable_scheduler_is_one_line_naming_it():
    addr = f"tcp://127.0.0.1:{_free_port()}"
    start = time.monotonic()
    r = _cli("fleet", "fixtures/single_full", "--scheduler", addr, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"lagadvisor: error: cannot reach the Dask scheduler at {addr}")
    assert time.monotonic() - start < 30


def test_worker_killed_mid_run_gives_the_same_fleet(cluster, undisturbed, corrupt_dir):
    """SIGKILL to a worker process (and its nanny) while the scheduler has one of the fleet's
    read or advise tasks on it (``Client.processing``): the scheduler gives its tasks to the
    other worker and the document is identical to the undisturbed run's. Runs last: it leaves
    one worker."""
    from lagadvisor.fleet import fleet
    from lagadvisor.report.fleet import fleet_json

    _, expected = undisturbed
    out: dict = {}
    with cluster.client() as client:
        by_name = {}
        for addr, w in client.scheduler_info()["workers"].items():
            by_name[w["name"]] = addr
        victim = cluster.workers[0]
        victim_addr = by_name["w0"]

        def go():
            try:
                out["run"] = fleet(_entries(corrupt_dir), client)
            except BaseException as err:  # noqa: BLE001 - reported by the assertion below
                out["error"] = err

        t = threading.Thread(target=go)
        t.start()
        killed_during = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and t.is_alive():
            busy = client.processing().get(victim_addr, [])
            if any(str(k).startswith(("read-", "advise-")) for k in busy):
                killed_during = list(busy)
                os.killpg(victim.pid, signal.SIGKILL)  # the worker and its nanny's process group
                break
            time.sleep(0.02)
        t.join(timeout=120)
        assert killed_during, "the victim never ran a fleet task"
        assert victim.wait(timeout=10) is not None
        assert "error" not in out, out.get("error")
        assert len(client.scheduler_info()["workers"]) == 1
    assert fleet_json(out["run"].results) == expected


@pytest.mark.server
def test_cli_on_the_embedded_cluster_and_its_html_in_chromium(tmp_path, undisturbed, corrupt_dir):
    """``lagadvisor fleet DIR...`` (embedded LocalCluster, 2 workers): the JSON equals the real
    cluster's, and the HTML page draws one chart per advised server in headless Chromium."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    need(chromium is not None, "Debian chromium")
    _, expected = undisturbed
    page = tmp_path / "fleet.html"
    r = _cli("fleet", *[str(FIXTURES / s) for s in SERVERS], str(corrupt_dir), "--processes", "2", "--format", "json",
             "--html", str(page))
    assert r.returncode == 2, r.stderr  # one server failed
    assert json.loads(r.stdout) == expected
    assert r.stderr.strip().splitlines()[-1].startswith("lagadvisor: error: broken: ")
    text = page.read_text()
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text
    with tempfile.TemporaryDirectory() as profile:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}"]
        dom = subprocess.run(cmd + ["--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
                             capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    out = dom.stdout
    assert f'data-servers-rendered="{len(SERVERS)}"' in out
    import re

    for i, name in enumerate(SERVERS):
        fig = re.search(rf'<figure id="speedup-{i}">(.*?)</figure>', out, re.S)
        assert fig and f'data-server="{name}"' in fig.group(1) and fig.group(1).count("<polyline") >= 1
        assert f'id="server-{name}"' in out
    assert "checksum" in out.lower()  # the broken server's section carries its error
    for s in expected["servers"][:len(SERVERS)]:
        for f in s["advice"]["findings"]:
            assert f'data-finding="{f["id"]}"' in out
