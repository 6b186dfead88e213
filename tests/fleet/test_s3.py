"""``lagadvisor fleet`` reading binlogs through s3:// URLs from an S3-compatible server process on
loopback: moto's ``moto_server`` (a real HTTP server speaking the S3 REST protocol; s3fs talks
to it through aiobotocore exactly as to AWS: signed requests, ListObjectsV2, ranged GETs), with
credentials and the endpoint only in the environment fsspec reads (``AWS_*``,
``FSSPEC_S3_ENDPOINT_URL``), never in argv or the fleet file. Moto is chosen over MinIO because it
is a PyPI package the test extra installs (no binary download), and it is a separate server
process, not an in-process mock.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, need

BIN = Path(sys.executable).parent
SECRET = "lagadvisor-test-secret-9f3c"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3():
    exe = BIN / "moto_server"
    need(exe.exists(), "moto_server (moto[server], the test extra)")
    port = _free_port()
    proc = subprocess.Popen([str(exe), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline and proc.poll() is None, "moto_server did not start"
            time.sleep(0.1)
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "lagadvisor-test", "AWS_SECRET_ACCESS_KEY": SECRET,
           "AWS_DEFAULT_REGION": "us-east-1", "FSSPEC_S3_ENDPOINT_URL": f"http://127.0.0.1:{port}"}
    yield env, port
    proc.terminate()
    proc.wait(timeout=10)


def test_fleet_reads_s3_urls_and_equals_advise_on_the_local_files(s3, tmp_path):
    import s3fs

    env, port = s3
    fs = s3fs.S3FileSystem(key=env["AWS_ACCESS_KEY_ID"], secret=SECRET,
                           endpoint_url=f"http://127.0.0.1:{port}")
    fs.mkdir("fleet")
    rot = sorted((FIXTURES / "single_rotation").glob("binlog.0*"))
    for f in rot:
        fs.put_file(str(f), f"fleet/rot/{f.name}")
    fs.put_file(str(FIXTURES / "single_rotation" / "schema.sql"), "fleet/rot/schema.sql")  # not a binlog: skipped
    sb = FIXTURES / "sysbench_oltp_write_only" / "binlog.000001"
    fs.put_file(str(sb), "fleet/sb/binlog.000001")
    fs.pipe_file("fleet/sb/binlog.index", b"./binlog.000001\n")
    fs.put_file(str(rot[0]), "fleet/bad/binlog.000001")
    data = bytearray(rot[1].read_bytes())
    data[len(data) // 2:len(data) // 2 + 64] = b"\xff" * 64
    fs.pipe_file("fleet/bad/binlog.000002", bytes(data))
    fleet = tmp_path / "fleet.toml"
    fleet.write_text('[[servers]]\nname = "rot"\nbinlogs = "s3://fleet/rot/"\n'
                     '[[servers]]\nname = "sb"\nbinlogs = "s3://fleet/sb/binlog.index"\n'
                     '[[servers]]\nname = "missing"\nbinlogs = "s3://fleet/nothing-here/"\n'
                     '[[servers]]\nname = "bad"\nbinlogs = "s3://fleet/bad/"\n')
    argv = [sys.executable, "-m", "lagadvisor", "fleet", "--fleet", str(fleet), "--processes", "2", "--format", "json"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert r.returncode == 2, r.stderr  # the missing prefix and the corrupt file
    assert SECRET not in " ".join(argv) + fleet.read_text() + r.stdout + r.stderr
    doc = json.loads(r.stdout)
    by = {s["name"]: s for s in doc["servers"]}
    assert by["rot"]["files"] == [f"s3://fleet/rot/{f.name}" for f in rot]
    assert by["sb"]["files"] == ["s3://fleet/sb/binlog.000001"]
    assert by["missing"]["status"] == "error" and "s3://fleet/nothing-here/" in by["missing"]["error"]
    # a corrupt remote file is named by its URL, at the offset advise names in the local copy
    bad = by["bad"]["error"]
    assert bad.startswith("s3://fleet/bad/binlog.000002 at offset ") and "checksum" in bad.lower()
    assert doc["fleet"]["completed"] == 2
    for name, local_dir, files in (("rot", FIXTURES / "single_rotation", rot), ("sb", sb.parent, [sb])):
        a = subprocess.run([sys.executable, "-m", "lagadvisor", "advise", *map(str, files), "--format", "json"],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert a.returncode == 0, a.stderr
        expected = a.stdout.replace(str(local_dir), f"s3://fleet/{name}")
        assert json.dumps(by[name]["advice"], indent=2, sort_keys=True) + "\n" == expected, name


def test_a_secret_in_the_fleet_file_is_refused(tmp_path):
    from lagadvisor.errors import ConfigError
    from lagadvisor.fleet import load_fleet

    f = tmp_path / "fleet.yaml"
    f.write_text("servers:\n  - name: a\n    binlogs: s3://b/a/\n    aws_secret_access_key: x\n")
    with pytest.raises(ConfigError, match="does not belong in a fleet file"):
        load_fleet(str(f))
