"""Connection options resolved as the mysql client resolves them, and the connections of both
drivers: mysql-connector-python (:func:`connect`: the SQL reads of the schema, the settings and
eta) and PyMySQL (:func:`pymysql_settings`: what python-mysql-replication's binlog dump is built
on, and calibrate --host's polling, which streams the same replica with the same settings).
Both stay: the dump needs PyMySQL, and the connector's error messages, option-file groups and
TLS checks are what the SQL reads print and are tested for (one driver would change them).

Precedence, lowest first (mysys/my_default.cc, client/mysql.cc):

1. built-in defaults (port 3306; host localhost when only a socket is given);
2. option files, groups ``[client]`` then ``[lagadvisor]``, read in the client's order:
   ``/etc/my.cnf``, ``/etc/mysql/my.cnf``, ``$MYSQL_HOME/my.cnf``, ``--defaults-extra-file``,
   ``~/.my.cnf``, ``~/.mylogin.cnf`` — or only ``--defaults-file`` (plus the login file) when given;
   nothing with ``--no-defaults``. A later file overrides an earlier one;
3. the ``--login-path`` group of the login file (``~/.mylogin.cnf`` or ``$MYSQL_TEST_LOGIN_FILE``);
4. the command line (``-h -P -u -S``, the TLS options) and the password from a prompt or the
   environment (LAGADVISOR_PASSWORD, MYSQL_PWD). A password is never taken from argv.

The login file written by ``mysql_config_editor`` (client/mysql_config_editor.cc) is: 4 unused
bytes, a 20-byte key, then for each line of option-file text a 4-byte little-endian length and
that many bytes of AES-128-ECB ciphertext (PKCS#7 padded). The AES key is the 20 key bytes
XOR-folded into 16 (mysys my_aes_create_key).
"""

from __future__ import annotations

import getpass
import os
import struct
from dataclasses import dataclass, field

from ..errors import ConfigError, SchemaError
from .tls import Tls, one_line

DEFAULT_PORT = 3306
#: Groups read from option files, in order (a later group overrides an earlier one).
GROUPS = ("client", "lagadvisor")
LOGIN_KEY_OFFSET = 4
LOGIN_KEY_LEN = 20
#: A bound on what is read: a login file holds a few short lines; a huge file is not one.
MAX_LOGIN_FILE_BYTES = 1 << 20
#: Keys this tool uses; option files may hold any other client option, which is ignored.
KEYS = ("host", "port", "user", "password", "socket", "ssl-ca", "ssl-cert", "ssl-key", "ssl-mode")


@dataclass(frozen=True, slots=True)
class ClientArgs:
    """What the command line (and the prompt/environment for the password) gave."""

    host: str | None = None
    port: int | None = None
    user: str | None = None
    socket: str | None = None
    password: str | None = None
    login_path: str | None = None
    defaults_file: str | None = None
    defaults_extra_file: str | None = None
    no_defaults: bool = False
    ssl: dict = field(default_factory=dict)  # ssl-ca/ssl-cert/ssl-key/ssl-mode given on the command line


@dataclass(frozen=True, slots=True)
class Resolved:
    """The options after every source was applied; ``sources`` names where each came from."""

    host: str
    port: int
    user: str | None
    password: str | None
    socket: str | None
    ssl: dict
    sources: dict


def default_option_files(extra: str | None = None) -> list[str]:
    """The option files the client reads without --defaults-file, in its order (my_default.cc:
    /etc, /etc/mysql, SYSCONFDIR (the same as /etc/mysql for distribution builds), $MYSQL_HOME,
    --defaults-extra-file, then the user's ~/.my.cnf)."""
    files = ["/etc/my.cnf", "/etc/mysql/my.cnf"]
    mysql_home = os.environ.get("MYSQL_HOME")
    if mysql_home:
        files.append(os.path.join(mysql_home, "my.cnf"))
    if extra:
        files.append(extra)
    files.append(os.path.join(os.path.expanduser("~"), ".my.cnf"))
    return files


def login_file_path() -> str:
    return os.environ.get("MYSQL_TEST_LOGIN_FILE") or os.path.join(os.path.expanduser("~"), ".mylogin.cnf")


def _unquote(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    # an unquoted value ends at a '#' comment
    return v.split(" #", 1)[0].split("\t#", 1)[0].strip()


def parse_option_text(text: str, where: str, depth: int = 0) -> dict[str, dict[str, str]]:
    """Groups of ``key=value`` lines, with ``!include`` and ``!includedir`` followed (*.cnf)."""
    groups: dict[str, dict[str, str]] = {}
    group = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("!include"):
            if depth > 10:
                raise ConfigError(f"{where}:{n}: !include nested too deep")
            kind, _, arg = line.partition(" ")
            arg = arg.strip()
            paths = [arg] if kind == "!include" else (
                sorted(os.path.join(arg, f) for f in os.listdir(arg) if f.endswith(".cnf"))
                if os.path.isdir(arg) else [])
            for p in paths:
                for g, kv in read_option_file(p, depth + 1).items():
                    groups.setdefault(g, {}).update(kv)
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise ConfigError(f"{where}:{n}: bad group line {line!r}")
            group = line[1:-1].strip().lower()
            groups.setdefault(group, {})
            continue
        if group is None:
            raise ConfigError(f"{where}:{n}: option outside of a [group]")
        key, eq, value = line.partition("=")
        key = key.strip().lower().replace("_", "-")
        groups[group][key] = _unquote(value) if eq else ""
    return groups


def read_option_file(path: str, depth: int = 0) -> dict[str, dict[str, str]]:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise ConfigError(f"{path}: cannot read option file: {err.strerror}") from None
    return parse_option_text(text, path, depth)


def _aes_key(key: bytes) -> bytes:
    """my_aes_create_key: XOR-fold the key bytes into a 16-byte AES-128 key."""
    out = bytearray(16)
    for i, b in enumerate(key):
        out[i % 16] ^= b
    return bytes(out)


def decode_login_file(data: bytes, where: str = "login file") -> str:
    """The option-file text inside a ``mysql_config_editor`` login file."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    head = LOGIN_KEY_OFFSET + LOGIN_KEY_LEN
    if len(data) < head:
        raise ConfigError(f"{where}: too short for a login file ({len(data)} bytes)")
    key = _aes_key(data[LOGIN_KEY_OFFSET:head])
    pos = head
    lines = []
    while pos < len(data):
        if pos + 4 > len(data):
            raise ConfigError(f"{where}: truncated at byte {pos}")
        (n,) = struct.unpack_from("<i", data, pos)
        pos += 4
        if n <= 0 or n % 16 or pos + n > len(data):
            raise ConfigError(f"{where}: bad chunk length {n} at byte {pos - 4}")
        dec = Cipher(algorithms.AES(key), modes.ECB()).decryptor()
        plain = dec.update(data[pos:pos + n]) + dec.finalize()
        pos += n
        pad = plain[-1]
        if not 1 <= pad <= 16 or plain[-pad:] != bytes([pad]) * pad:
            raise ConfigError(f"{where}: cannot decrypt (bad padding at byte {pos - n})")
        lines.append(plain[:-pad].decode("utf-8", "surrogateescape"))
    return "".join(lines)


def encode_login_file(text: str, key: bytes = bytes(range(1, 21))) -> bytes:
    """The inverse of :func:`decode_login_file` (tests; the real writer is mysql_config_editor)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    out = bytearray(4) + key
    for line in text.splitlines(keepends=True):
        raw = line.encode()
        pad = 16 - len(raw) % 16
        enc = Cipher(algorithms.AES(_aes_key(key)), modes.ECB()).encryptor()
        ct = enc.update(raw + bytes([pad]) * pad) + enc.finalize()
        out += struct.pack("<i", len(ct)) + ct
    return bytes(out)


def read_login_file(path: str | None = None) -> dict[str, dict[str, str]]:
    path = path or login_file_path()
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_LOGIN_FILE_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise ConfigError(f"{path}: cannot read login file: {err.strerror}") from None
    if len(data) > MAX_LOGIN_FILE_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_LOGIN_FILE_BYTES} bytes; not a login file")
    return parse_option_text(decode_login_file(data, path), path)


def _apply(into: dict, sources: dict, groups: dict[str, dict[str, str]], names, where: str) -> None:
    for g in names:
        for k, v in groups.get(g, {}).items():
            if k in KEYS:
                into[k] = v
                sources[k] = f"{where} [{g}]"


def resolve(args: ClientArgs) -> Resolved:
    """Apply defaults < option files < login path < command line (see the module docstring)."""
    vals: dict[str, str] = {}
    sources: dict[str, str] = {}
    if not args.no_defaults:
        if args.defaults_file:
            if not os.path.exists(args.defaults_file):
                raise ConfigError(f"--defaults-file {args.defaults_file}: no such file")
            files = [args.defaults_file]
        else:
            if args.defaults_extra_file and not os.path.exists(args.defaults_extra_file):
                raise ConfigError(f"--defaults-extra-file {args.defaults_extra_file}: no such file")
            files = default_option_files(args.defaults_extra_file)
        for path in files:
            _apply(vals, sources, read_option_file(path), GROUPS, path)
    login = {}
    if not args.no_defaults or args.login_path:
        login = read_login_file()
        # the login file's [client] group is read as the last default file (my_default.cc)
        _apply(vals, sources, login, GROUPS, login_file_path())
    if args.login_path:
        group = args.login_path.lower()
        if group not in login:
            raise ConfigError(f"--login-path {args.login_path}: no such login path in {login_file_path()}")
        _apply(vals, sources, login, [group], login_file_path())
    for k, v in (("host", args.host), ("port", args.port), ("user", args.user), ("socket", args.socket),
                 ("password", args.password), *args.ssl.items()):
        if v is not None:
            vals[k] = str(v)
            sources[k] = "command line" if k != "password" else "prompt or environment"
    try:
        port = int(vals.get("port", DEFAULT_PORT))
    except ValueError:
        raise ConfigError(f"port {vals['port']!r} ({sources['port']}): not a number") from None
    socket = vals.get("socket") or None
    host = vals.get("host") or "localhost"
    # as the client: a socket is used only to reach localhost
    if host != "localhost":
        socket = None
    return Resolved(host, port, vals.get("user") or None, vals.get("password"), socket,
                    {k: vals[k] for k in ("ssl-ca", "ssl-cert", "ssl-key", "ssl-mode") if k in vals}, sources)


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """How to reach a server. The password comes from ``password`` (set by the CLI from a
    prompt or the environment), or an option file; never from the command line."""

    host: str
    port: int = 3306
    user: str | None = None
    password: str | None = None
    option_file: str | None = None
    tls: Tls = Tls()
    connect_timeout: int = 10
    #: a Unix socket (-S/--socket): used instead of TCP, as the client does for host localhost
    socket: str | None = None


def password_from_env() -> str | None:
    return os.environ.get("LAGADVISOR_PASSWORD", os.environ.get("MYSQL_PWD"))


def prompt_password(user: str | None, host: str) -> str:
    return getpass.getpass(f"Password for {user or 'current user'}@{host}: ")


def connect(opts: ServerOptions):
    """A mysql-connector connection, or :class:`SchemaError` with the server's message."""
    import mysql.connector

    kw: dict = {"host": opts.host, "port": opts.port, "connection_timeout": opts.connect_timeout,
                "autocommit": True}
    if opts.socket:
        kw["unix_socket"] = opts.socket
    if opts.user:
        kw["user"] = opts.user
    if opts.password is not None:
        kw["password"] = opts.password
    if opts.option_file:
        kw["option_files"] = opts.option_file
        kw["option_groups"] = ["client", "lagadvisor"]
    kw.update(opts.tls.connector_kwargs())
    where = f"cannot connect to {opts.socket if opts.socket else f'{opts.host}:{opts.port}'}"
    try:
        conn = mysql.connector.connect(**kw)
    except mysql.connector.Error as err:
        msg = one_line(err.msg if getattr(err, "msg", None) else err)
        if opts.tls.mode != "PREFERRED" and ("SSL" in msg or "certificate" in msg.lower()):
            msg += f" ({opts.tls.describe()})"
        elif opts.tls.mode == "DISABLED" and "Access denied" in msg:
            msg += " (with --ssl-mode DISABLED: the account may require TLS)"
        raise SchemaError(f"{where}: {msg}") from None
    except (OSError, ValueError) as err:  # unreadable certificate/key files
        raise SchemaError(f"{where}: {one_line(err)} ({opts.tls.describe()})") from None
    try:
        cur = conn.cursor()
        cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        row = cur.fetchone()
        cur.close()
        opts.tls.check_session(as_text(row[1]) if row else None, where)
    except mysql.connector.Error:
        pass  # the status is readable by any user; a failure here is not a TLS failure
    except ConfigError:
        conn.close()
        raise
    return conn


def as_text(v):
    """A value as the server sent it, bytes decoded (utf-8, errors replaced)."""
    return v.decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else v


def pymysql_settings(host: str, port: int, user: str | None, password: str | None, *,
                     option_file: str | None = None, tls: Tls | None = None, connect_timeout: int = 10,
                     socket: str | None = None) -> dict:
    s: dict = {"host": host, "port": port, "connect_timeout": connect_timeout}
    if socket:
        s["unix_socket"] = socket
    if user:
        s["user"] = user
    if password is not None:
        s["password"] = password
    if option_file:
        s["read_default_file"] = option_file
        s["read_default_group"] = "client"
    s.update((tls or Tls()).pymysql_kwargs())
    return s
