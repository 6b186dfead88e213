"""TLS and least privilege against a real MySQL 9.x server started by the test, with its own
certificate authority (made here with openssl): a user created ``REQUIRE SSL`` connects with
``--ssl-ca`` under each of the mysql client's ``--ssl-mode`` values, a wrong CA or a plain-text
connection fails with one line, a user lacking SELECT or REPLICATION SLAVE gets one line naming
the grant, a purged ``--from`` file names the first file the server still has, and the password
appears in no argv, report or message."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import oracle
from conftest import FIXTURES, free_port, need, server_name

realservers = oracle.realservers
pytestmark = pytest.mark.server

PASSWORD = "tls-Secret-pw-93817"  # distinctive, so a leak anywhere is found by a plain search
FIXTURE = FIXTURES / "single_full" / "binlog.000001"
SCHEMA = FIXTURES / "single_full" / "schema.sql"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _make_ca(d: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-keyout", f"{name}-key.pem", "-out", f"{name}.pem", cwd=d)


def _make_server_cert(d: Path, ca: str) -> None:
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=lagadvisor-test-server",
             "-keyout", "server-key.pem", "-out", "server.csr", cwd=d)
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                               "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                               "extendedKeyUsage=serverAuth\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}-key.pem",
             "-CAcreateserial", "-days", "2", "-extfile", "ext.cnf", "-out", "server.pem", cwd=d)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    need(oracle.have_mysqlbinlog() and shutil.which("openssl") is not None, "MySQL 9.x chroot and openssl")
    certs = tmp_path_factory.mktemp("certs")
    _make_ca(certs, "ca")
    _make_ca(certs, "other-ca")
    _make_server_cert(certs, "ca")
    name = server_name("lagadvisor-test-tls")
    root = realservers.chroot_root()
    in_chroot = f"{realservers.CHROOT_DATA}/{name}-tls"
    host_dir = root / in_chroot.lstrip("/")
    shutil.rmtree(host_dir, ignore_errors=True)
    host_dir.mkdir(parents=True)
    for f in ("ca.pem", "server.pem", "server-key.pem"):
        shutil.copy(certs / f, host_dir / f)
        realservers._chown_mysql(host_dir / f, root)
    srv = realservers.MySQLServer(name, free_port(), [
        "--server-id=11", "--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON",
        "--binlog-row-metadata=FULL", f"--ssl-ca={in_chroot}/ca.pem", f"--ssl-cert={in_chroot}/server.pem",
        f"--ssl-key={in_chroot}/server-key.pem"], fresh=True)
    srv.start()
    try:
        srv.sql(SCHEMA.read_text())
        pw = PASSWORD
        srv.sql(
            f"CREATE USER 'la_tls'@'%' IDENTIFIED BY '{pw}' REQUIRE SSL; "
            "GRANT SELECT, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO 'la_tls'@'%'; "
            f"CREATE USER 'la_noselect'@'%' IDENTIFIED BY '{pw}'; "
            "GRANT REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO 'la_noselect'@'%'; "
            f"CREATE USER 'la_norepl'@'%' IDENTIFIED BY '{pw}'; "
            "GRANT SELECT, REPLICATION CLIENT ON *.* TO 'la_norepl'@'%'")
        srv.sql("CREATE DATABASE tlsdb; CREATE TABLE tlsdb.t (id INT PRIMARY KEY, v INT); "
                "INSERT INTO tlsdb.t VALUES (1, 1), (2, 2); FLUSH BINARY LOGS; "
                "INSERT INTO tlsdb.t VALUES (3, 3); FLUSH BINARY LOGS; "
                "INSERT INTO tlsdb.t VALUES (4, 4); FLUSH BINARY LOGS")
        srv.sql("PURGE BINARY LOGS TO 'binlog.000003'")
        yield srv, certs
    finally:
        srv.stop()
        srv.remove()
        shutil.rmtree(host_dir, ignore_errors=True)


def _run(args: list[str], user: str, *, password: str = PASSWORD, timeout: float = 120):
    env = dict(os.environ, LAGADVISOR_PASSWORD=password)
    env.pop("MYSQL_PWD", None)
    return subprocess.run([sys.executable, "-m", "lagadvisor", *args, "--user", user], capture_output=True,
                          text=True, env=env, timeout=timeout)


def _conn(srv) -> list[str]:
    return ["--host", "127.0.0.1", "--port", str(srv.port)]


def _one_line_error(r) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert PASSWORD not in r.stderr and PASSWORD not in r.stdout
    return lines[0]


@pytest.mark.parametrize("mode", [None, "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"])
def test_require_ssl_user_streams_over_tls(tls_server, mode):
    srv, certs = tls_server
    args = ["analyze", *_conn(srv), "--from", "binlog.000003", "--ssl-ca", str(certs / "ca.pem"),
            "--format", "json"]
    if mode:
        args += ["--ssl-mode", mode]
    r = _run(args, "la_tls")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["total"]["transactions"] >= 1
    assert PASSWORD not in r.stdout + r.stderr


def test_require_ssl_user_reads_schema_and_settings_over_tls(tls_server, tmp_path):
    srv, certs = tls_server
    html = tmp_path / "advice.html"
    r = _run(["advise", *_conn(srv), "--ssl-ca", str(certs / "ca.pem"), "--ssl-mode", "VERIFY_IDENTITY",
              "--format", "json", "--html", str(html), str(FIXTURE)], "la_tls")
    assert r.returncode in (0, 1), r.stderr  # 1 only with --fail-on
    doc = json.loads(r.stdout)
    assert doc and html.stat().st_size > 0
    for text in (r.stdout, r.stderr, html.read_text()):
        assert PASSWORD not in text


def test_plain_text_refused_for_require_ssl_user(tls_server):
    srv, _ = tls_server
    line = _one_line_error(_run(["export", *_conn(srv), "--ssl-mode", "DISABLED", str(FIXTURE)], "la_tls"))
    assert "cannot connect" in line and "Access denied" in line


def test_wrong_ca_is_one_line(tls_server):
    srv, certs = tls_server
    line = _one_line_error(_run(["export", *_conn(srv), "--ssl-ca", str(certs / "other-ca.pem"), str(FIXTURE)],
                                "la_tls"))
    assert "cannot connect" in line and "certificate" in line.lower() and "VERIFY_CA" in line
    line = _one_line_error(_run(["analyze", *_conn(srv), "--ssl-ca", str(certs / "other-ca.pem"),
                                 "--from", "binlog.000003"], "la_tls"))
    assert "certificate" in line.lower()


def test_verify_identity_checks_the_host_name(tls_server):
    """The server certificate names 127.0.0.1 and localhost, not the host's other names."""
    srv, certs = tls_server
    import socket

    other = socket.gethostname()
    if socket.gethostbyname(other).startswith("127.") and other not in ("localhost",):
        line = _one_line_error(_run(["export", "--host", other, "--port", str(srv.port), "--ssl-ca",
                                     str(certs / "ca.pem"), "--ssl-mode", "VERIFY_IDENTITY", str(FIXTURE)], "la_tls"))
        assert "cannot connect" in line
    ok = _run(["export", "--host", "localhost", "--port", str(srv.port), "--ssl-ca", str(certs / "ca.pem"),
               "--ssl-mode", "VERIFY_IDENTITY", str(FIXTURE)], "la_tls")
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("args, fragment", [
    (["--ssl-mode", "VERIFY_CA"], "needs --ssl-ca"),
    (["--ssl-mode", "bogus"], "--ssl-mode"),
    (["--ssl-mode", "DISABLED", "--ssl-ca", "x.pem"], "conflicts"),
])
def test_bad_ssl_options_are_one_line(tls_server, args, fragment):
    srv, _ = tls_server
    line = _one_line_error(_run(["export", *_conn(srv), *args, str(FIXTURE)], "la_tls"))
    assert fragment in line


def test_missing_select_is_named(tls_server):
    srv, _ = tls_server
    line = _one_line_error(_run(["export", *_conn(srv), str(FIXTURE)], "la_noselect"))
    assert "SELECT" in line


def test_missing_replication_slave_is_named(tls_server):
    srv, _ = tls_server
    line = _one_line_error(_run(["analyze", *_conn(srv), "--from", "binlog.000003"], "la_norepl"))
    assert "REPLICATION SLAVE" in line


def test_purged_from_file_names_the_first_file_left(tls_server):
    srv, _ = tls_server
    line = _one_line_error(_run(["analyze", *_conn(srv), "--from", "binlog.000001"], "la_tls"))
    assert "purged" in line and "binlog.000003" in line


def test_wrong_password_never_echoed(tls_server):
    srv, certs = tls_server
    r = _run(["export", *_conn(srv), "--ssl-ca", str(certs / "ca.pem"), str(FIXTURE)], "la_tls",
             password=PASSWORD + "-wrong")
    line = _one_line_error(r)
    assert "Access denied" in line and PASSWORD + "-wrong" not in line


def test_password_not_in_argv_while_running(tls_server):
    """The password is taken from the environment (or a prompt, or an option file), never argv:
    while a streaming run is live, no process's command line carries it."""
    srv, certs = tls_server
    env = dict(os.environ, LAGADVISOR_PASSWORD=PASSWORD)
    proc = subprocess.Popen([sys.executable, "-m", "lagadvisor", "analyze", *_conn(srv), "--user", "la_tls",
                             "--ssl-ca", str(certs / "ca.pem"), "--from", "binlog.000003"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    seen = 0
    try:
        while proc.poll() is None and seen < 200:
            for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
                try:
                    assert PASSWORD.encode() not in cmdline.read_bytes()
                except OSError:
                    continue
            seen += 1
            time.sleep(0.01)
    finally:
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert seen >= 1 and PASSWORD.encode() not in out + err
