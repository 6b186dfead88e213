"""MySQL client conventions against a real MySQL 9.x server started by the test: -S/--socket,
--login-path from a login file written by the chroot's own ``mysql_config_editor``, a
--defaults-file whose host/port/user are honoured (and overridden by -P/-u), the default option
files read in the client's order (HOME and MYSQL_HOME point at temporary directories), and
--no-defaults. Each case streams the server's binlogs (PyMySQL) and reads its schema
(mysql-connector), so both drivers take the resolved options."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import oracle
from conftest import free_port, need, server_name

realservers = oracle.realservers
pytestmark = pytest.mark.server

PASSWORD = "cc-Secret-pw-55170"
USER = "la_cc"


@pytest.fixture(scope="module")
def server():
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    srv = realservers.MySQLServer(server_name("lagadvisor-test-cc"), free_port(), [
        "--server-id=12", "--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON",
        "--binlog-row-metadata=FULL"], fresh=True)
    srv.start()
    try:
        srv.sql(f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'; "
                f"CREATE USER '{USER}'@'localhost' IDENTIFIED BY '{PASSWORD}'; "
                f"GRANT SELECT, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO '{USER}'@'%'; "
                f"GRANT SELECT, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO '{USER}'@'localhost'; "
                "FLUSH BINARY LOGS; CREATE DATABASE ccdb; CREATE TABLE ccdb.t (id INT PRIMARY KEY, v INT); "
                "INSERT INTO ccdb.t VALUES (1, 1), (2, 2); INSERT INTO ccdb.t VALUES (3, 3)")
        yield srv, "binlog.000001"
    finally:
        srv.stop()
        srv.remove()


def _socket(srv) -> str:
    return str(realservers.chroot_root() / "run" / "mysqld" / f"{srv.name}.sock")


def _run(args: list[str], home: Path, *, env_extra: dict | None = None, password: str | None = PASSWORD):
    env = {k: v for k, v in os.environ.items() if k not in ("MYSQL_PWD", "LAGADVISOR_PASSWORD", "MYSQL_HOME",
                                                            "MYSQL_TEST_LOGIN_FILE")}
    env["HOME"] = str(home)  # no developer's ~/.my.cnf or ~/.mylogin.cnf
    if password is not None:
        env["LAGADVISOR_PASSWORD"] = password
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def _ok(r) -> dict:
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["total"]["transactions"] >= 2
    return doc


def _one_line(r) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def test_socket_without_host(server, tmp_path):
    srv, first = server
    r = _run(["analyze", "-S", _socket(srv), "-u", USER, "--from", first, "--format", "json"], tmp_path)
    _ok(r)
    # the socket is really used: a wrong one fails naming it, although host/port are the defaults
    bad = tmp_path / "nothing.sock"
    line = _one_line(_run(["analyze", "--socket", str(bad), "-u", USER, "--from", first], tmp_path))
    assert str(bad) in line


def test_defaults_file_host_port_user_honoured(server, tmp_path):
    srv, first = server
    cnf = tmp_path / "my.cnf"
    cnf.write_text(f"[client]\nhost = 127.0.0.1\nport = {srv.port}\nuser = {USER}\npassword = \"{PASSWORD}\"\n")
    _ok(_run(["analyze", "--defaults-file", str(cnf), "--from", first, "--format", "json"], tmp_path,
             password=None))
    # the command line wins over the file: -P and -u
    line = _one_line(_run(["analyze", "--defaults-file", str(cnf), "-P", "1", "--from", first], tmp_path,
                          password=None))
    assert "127.0.0.1:1" in line
    line = _one_line(_run(["analyze", "--defaults-file", str(cnf), "-u", "la_nobody", "--from", first], tmp_path,
                          password=None))
    assert "Access denied" in line and "la_nobody" in line and PASSWORD not in line


def test_default_option_files_in_client_order(server, tmp_path):
    srv, first = server
    home = tmp_path / "home"
    home.mkdir()
    mysql_home = tmp_path / "mysql_home"
    mysql_home.mkdir()
    # $MYSQL_HOME/my.cnf is read before ~/.my.cnf: its wrong port and user are overridden there
    (mysql_home / "my.cnf").write_text(f"[client]\nport = 1\nuser = la_nobody\npassword = {PASSWORD}\n")
    (home / ".my.cnf").write_text(f"[client]\nport = {srv.port}\n[lagadvisor]\nuser = {USER}\n")
    env = {"MYSQL_HOME": str(mysql_home)}
    _ok(_run(["analyze", "-h", "127.0.0.1", "--from", first, "--format", "json"], home, env_extra=env,
             password=None))
    # without ~/.my.cnf, $MYSQL_HOME's values apply
    (home / ".my.cnf").unlink()
    assert "127.0.0.1:1" in _one_line(_run(["analyze", "-h", "127.0.0.1", "--from", first], home, env_extra=env,
                                           password=None))
    # --defaults-extra-file is read after $MYSQL_HOME, before ~/.my.cnf
    extra = tmp_path / "extra.cnf"
    extra.write_text(f"[client]\nport = {srv.port}\nuser = {USER}\n")
    _ok(_run(["analyze", "-h", "127.0.0.1", "--defaults-extra-file", str(extra), "--from", first,
              "--format", "json"], home, env_extra=env, password=None))
    # --no-defaults: none of them (the built-in port 3306)
    assert "127.0.0.1:3306" in _one_line(_run(["analyze", "-h", "127.0.0.1", "--no-defaults", "--from", first],
                                              home, env_extra=env))


def test_login_path_written_by_mysql_config_editor(server, tmp_path):
    srv, first = server
    root = realservers.chroot_root()
    editor = root / "usr" / "bin" / "mysql_config_editor"
    need(editor.exists(), "mysql_config_editor in the MySQL 9.x chroot")
    in_chroot = f"/tmp/{server_name('lagadvisor-cc-login')}.cnf"
    host_file = root / in_chroot.lstrip("/")
    host_file.unlink(missing_ok=True)
    try:
        # the password is not set here: mysql_config_editor reads it only from a terminal
        subprocess.run(["chroot", str(root), "mysql_config_editor", "set", "--login-path=lagtest", f"--user={USER}",
                        f"--socket={_socket(srv)}"], env={"MYSQL_TEST_LOGIN_FILE": in_chroot, "PATH": os.environ["PATH"]},
                       check=True, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
        subprocess.run(["chroot", str(root), "mysql_config_editor", "set", "--login-path=tcp", f"--user={USER}",
                        "--host=127.0.0.1", f"--port={srv.port}"],
                       env={"MYSQL_TEST_LOGIN_FILE": in_chroot, "PATH": os.environ["PATH"]},
                       check=True, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
        env = {"MYSQL_TEST_LOGIN_FILE": str(host_file)}
        _ok(_run(["analyze", "--login-path", "lagtest", "--from", first, "--format", "json"], tmp_path,
                 env_extra=env))
        _ok(_run(["analyze", "--login-path", "TCP", "--from", first, "--format", "json"], tmp_path, env_extra=env))
        # the command line overrides the login path
        assert "la_nobody" in _one_line(_run(["analyze", "--login-path", "lagtest", "-u", "la_nobody", "--from",
                                              first], tmp_path, env_extra=env))
        assert "no such login path" in _one_line(_run(["analyze", "--login-path", "nope", "--from", first],
                                                      tmp_path, env_extra=env))
    finally:
        host_file.unlink(missing_ok=True)


def test_fleet_entries_connect_as_the_client(server, tmp_path):
    """A fleet entry's connection keys go through the same resolver: a socket and user, or a
    defaults file with host, port and user in it (no host key in the fleet file)."""
    srv, _ = server
    from conftest import FIXTURES

    binlogs = FIXTURES / "single_minimal_metadata"
    cnf = tmp_path / "fleet.cnf"
    cnf.write_text(f"[client]\nhost = 127.0.0.1\nport = {srv.port}\nuser = {USER}\npassword = \"{PASSWORD}\"\n")
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(f'[[servers]]\nname = "by-socket"\nbinlogs = "{binlogs}"\nsocket = "{_socket(srv)}"\n'
                     f'user = "{USER}"\n\n'
                     f'[[servers]]\nname = "by-defaults-file"\nbinlogs = "{binlogs}"\ndefaults_file = "{cnf}"\n\n'
                     f'[[servers]]\nname = "bad-socket"\nbinlogs = "{binlogs}"\nsocket = "{tmp_path}/none.sock"\n'
                     f'user = "{USER}"\n')
    r = _run(["fleet", "--fleet", str(fleet), "--processes", "1", "--format", "json"], tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]  # the bad socket fails alone
    doc = json.loads(r.stdout)
    by = {s["name"]: s for s in doc["servers"]}
    for name in ("by-socket", "by-defaults-file"):
        assert by[name]["error"] is None, by[name]["error"]
        assert by[name]["advice"]["input"]["settings_from"], by[name]["advice"]["input"]
    assert "none.sock" in by["bad-socket"]["error"]
