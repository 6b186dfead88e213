"""connection.resolve precedence (defaults < option files in the client's order < login path <
command line) and the mysql_config_editor login-file decoder, without a server. The decoder is
also checked against a file written by the real mysql_config_editor in test_client_conventions.py."""

from __future__ import annotations

import pytest

from lagadvisor.server.connection import (ClientArgs, decode_login_file, default_option_files, encode_login_file,
                                   parse_option_text, resolve)
from lagadvisor.errors import ConfigError

# Bytes written by MySQL 9.7's mysql_config_editor for
# `set --login-path=x --host=127.0.0.1 --port=3399 --user=bob --socket=/run/mysqld/a.sock`.
REAL_LOGIN_FILE = bytes.fromhex(
    "00000000" "0b03190b1c121c18020c1e0103150a120a1b1804"
    "10000000" "b5d7a1a21acff3182349e10fb8a1dfd9"
    "10000000" "b4d59c2707e0c9855589f227ef4fea29"
    "20000000" "2569b26efe1a20da18aac7deecf8d3a66ef50661ebe2b6335f8bcb75e0187b03"
    "20000000" "f758990d71036b390491220d77e1399c4063b0183c60c0c34da5b03c36703e00"
    "10000000" "3494963f31e0298781c886c16f8cdca0")


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("MYSQL_HOME", raising=False)
    monkeypatch.setenv("MYSQL_TEST_LOGIN_FILE", str(h / ".mylogin.cnf"))
    return h


def test_decode_real_login_file():
    assert decode_login_file(REAL_LOGIN_FILE) == (
        '[x]\nuser = "bob"\nhost = "127.0.0.1"\nsocket = "/run/mysqld/a.sock"\nport = 3399\n')


@pytest.mark.parametrize("cut", [3, 23, 27, 30, len(REAL_LOGIN_FILE) - 1])
def test_truncated_login_file_is_a_config_error(cut):
    with pytest.raises(ConfigError):
        decode_login_file(REAL_LOGIN_FILE[:cut])


def test_header_only_login_file_is_empty():
    assert decode_login_file(REAL_LOGIN_FILE[:24]) == ""


def test_wrong_key_is_a_config_error():
    bad = REAL_LOGIN_FILE[:4] + bytes(20) + REAL_LOGIN_FILE[24:]
    with pytest.raises(ConfigError):
        decode_login_file(bad)


def test_encode_round_trip():
    text = "[client]\nuser = a\n[p]\npassword = \"x y\"\n"
    assert decode_login_file(encode_login_file(text)) == text


def test_option_text_quotes_comments_and_groups():
    g = parse_option_text("# c\n[Client]\nuser = 'a b'\nport=3399 # comment\nssl_ca = /x\n[mysqld]\nport=1\n", "t")
    assert g["client"] == {"user": "a b", "port": "3399", "ssl-ca": "/x"}


def test_default_files_order(home, monkeypatch):
    monkeypatch.setenv("MYSQL_HOME", "/mh")
    files = default_option_files("/extra.cnf")
    assert files == ["/etc/my.cnf", "/etc/mysql/my.cnf", "/mh/my.cnf", "/extra.cnf", str(home / ".my.cnf")]


def test_precedence(home, tmp_path):
    (home / ".my.cnf").write_text("[client]\nhost = h1\nport = 1111\nuser = u1\npassword = p1\n"
                                  "[lagadvisor]\nuser = u2\n")
    r = resolve(ClientArgs())
    assert (r.host, r.port, r.user, r.password) == ("h1", 1111, "u2", "p1")  # [lagadvisor] after [client]
    (home / ".mylogin.cnf").write_bytes(encode_login_file("[lp]\nport = 2222\npassword = lp-pw\n"))
    r = resolve(ClientArgs(login_path="lp"))
    assert (r.host, r.port, r.password) == ("h1", 2222, "lp-pw")
    r = resolve(ClientArgs(port=3333, user="u3", password="env", login_path="lp"))
    assert (r.port, r.user, r.password) == (3333, "u3", "env")
    assert r.sources["port"] == "command line"
    # --defaults-file replaces ~/.my.cnf
    f = tmp_path / "only.cnf"
    f.write_text("[client]\nport = 4444\n")
    r = resolve(ClientArgs(defaults_file=str(f)))
    assert (r.host, r.port, r.user) == ("localhost", 4444, None)
    # --no-defaults: built-ins
    r = resolve(ClientArgs(no_defaults=True))
    assert (r.host, r.port, r.user, r.password) == ("localhost", 3306, None, None)
    with pytest.raises(ConfigError, match="no such login path"):
        resolve(ClientArgs(login_path="nope"))


def test_socket_only_for_localhost(home):
    (home / ".my.cnf").write_text("[client]\nsocket = /s.sock\n")
    assert resolve(ClientArgs()).socket == "/s.sock"
    assert resolve(ClientArgs()).host == "localhost"
    assert resolve(ClientArgs(host="127.0.0.1")).socket is None
    assert resolve(ClientArgs(socket="/t.sock")).socket == "/t.sock"


def test_bad_port_in_file(home):
    (home / ".my.cnf").write_text("[client]\nport = abc\n")
    with pytest.raises(ConfigError, match="not a number"):
        resolve(ClientArgs())
