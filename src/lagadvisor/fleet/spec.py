"""The fleet file: one entry per source server, and where each server's binlogs are.

TOML (``[[servers]]`` tables) or YAML (a ``servers:`` list); a ``[defaults]`` table / mapping
gives every server's options unless its own entry says otherwise::

    [defaults]
    cores = 8
    [[servers]]
    name = "orders-1"
    binlogs = "s3://backups/orders-1/binlogs/"   # a directory, a glob, an .index file or an fsspec URL
    [[servers]]
    name = "users-1"
    binlogs = "/data/users-1/binlog.index"
    host = "users-1.db"                          # --host-style: live schema and variables
    user = "lagadvisor"
    [servers.replica]                            # the replica's settings (no server to ask)
    replica_parallel_workers = 16

Per-server keys: ``name``, ``binlogs``, ``schema``, ``cost_model``, ``cores``, ``history_size``,
``commit_order``, ``target_version`` (a string: "8.4"), ``host``, ``port``, ``user``, ``socket``, ``login_path``, ``defaults_file``, ``ssl_ca``, ``ssl_cert``,
``ssl_key``, ``ssl_mode``, ``replica``. A password never goes in the fleet file or on the
command line: it comes from ``LAGADVISOR_PASSWORD``/``MYSQL_PWD`` or ``defaults_file``, as for
``advise --host``; object-storage credentials come from fsspec's usual environment and config
(``AWS_*`` variables, ``~/.aws``, ``FSSPEC_*``), never from the fleet file or argv.
"""

from __future__ import annotations

import glob
import os
import posixpath
from dataclasses import dataclass, field

from ..errors import ConfigError
from ..kinds import CommitOrderInput

from ..inputs import BINLOG_NAME

KEYS = frozenset({"name", "binlogs", "schema", "cost_model", "cores", "history_size", "commit_order", "target_version", "host",
                  "port", "user", "socket", "login_path", "defaults_file", "ssl_ca", "ssl_cert", "ssl_key",
                  "ssl_mode", "replica"})
_SECRET_KEYS = frozenset({"password", "passwd", "aws_secret_access_key", "secret", "key", "token"})


@dataclass(frozen=True)
class ServerEntry:
    """One source server of the fleet, as the fleet file (or a DIR argument) gives it."""

    name: str
    binlogs: str
    schema: str | None = None
    cost_model: str | None = None
    cores: int | None = None
    history_size: int | None = None
    commit_order: CommitOrderInput = CommitOrderInput.AUTO
    target_version: str | None = None   # advise --target-version: the pre-upgrade review of each server
    host: str | None = None
    port: int | None = None        # None: from the option files, else 3306 (as the mysql client)
    user: str | None = None
    socket: str | None = None
    login_path: str | None = None  # a group of ~/.mylogin.cnf (mysql_config_editor)
    defaults_file: str | None = None
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    ssl_mode: str | None = None
    replica: dict = field(default_factory=dict)


def _is_version(value) -> bool:
    from ..versions import parse_version

    try:
        parse_version(value)
    except (ValueError, AttributeError):
        return False
    return isinstance(value, str)


def is_url(location: str) -> bool:
    """An fsspec URL other than a local path (``file://`` is local)."""
    return "://" in location and not location.startswith("file://")


def local_path(location: str) -> str:
    return location[len("file://"):] if location.startswith("file://") else location


def load_fleet(path: str) -> list[ServerEntry]:
    """The servers of a fleet file (TOML unless it ends in .yaml/.yml)."""
    import os
    import stat

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise ConfigError(f"{path}: cannot read the fleet file: {kind}")
        if st.st_size > 64 << 20:
            raise ConfigError(f"{path}: a fleet file of {st.st_size:,} bytes: larger than 64 MiB")
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the fleet file: {err.strerror}") from None
    if path.endswith((".yaml", ".yml")):
        import yaml

        try:
            doc = yaml.safe_load(raw.decode("utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as err:
            raise ConfigError(f"{path}: not a YAML fleet file: {' '.join(str(err).split())}") from None
    else:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli distribution (declared there)
            import importlib

            tomllib = importlib.import_module("tomli")
        try:
            doc = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            raise ConfigError(f"{path}: not a TOML fleet file: {err}") from None
    return parse_fleet(doc, path)


def parse_fleet(doc, where: str = "fleet file") -> list[ServerEntry]:
    if not isinstance(doc, dict) or not isinstance(doc.get("servers"), list) or not doc["servers"]:
        raise ConfigError(f"{where}: expected a non-empty 'servers' list ([[servers]] in TOML)")
    defaults = doc.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ConfigError(f"{where}: 'defaults' must be a table")
    out: list[ServerEntry] = []
    for n, item in enumerate(doc["servers"], 1):
        if not isinstance(item, dict):
            raise ConfigError(f"{where}: server #{n} is not a table")
        merged = {**defaults, **item}
        secret = sorted(k for k in merged if k.lower() in _SECRET_KEYS)
        if secret:
            raise ConfigError(f"{where}: server #{n}: '{secret[0]}' does not belong in a fleet file (passwords come "
                              "from LAGADVISOR_PASSWORD/MYSQL_PWD or defaults_file, object-storage credentials "
                              "from fsspec's environment and config)")
        unknown = sorted(set(merged) - KEYS)
        if unknown:
            raise ConfigError(f"{where}: server #{n}: unknown key '{unknown[0]}' (known: {', '.join(sorted(KEYS))})")
        for key in ("name", "binlogs"):
            if not isinstance(merged.get(key), str) or not merged[key]:
                raise ConfigError(f"{where}: server #{n}: '{key}' (a string) is required")
        for key in ("cores", "history_size", "port"):
            if key in merged and (not isinstance(merged[key], int) or isinstance(merged[key], bool)
                                  or merged[key] < 1):
                raise ConfigError(f"{where}: server {merged['name']}: '{key}' must be a positive integer")
        if merged.get("commit_order", CommitOrderInput.AUTO) not in tuple(CommitOrderInput):
            raise ConfigError(f"{where}: server {merged['name']}: commit_order must be auto, recorded, serial "
                              "or flush-groups")
        tv = merged.get("target_version")
        if tv is not None and not _is_version(tv):
            raise ConfigError(f"{where}: server {merged['name']}: target_version must be a version string such "
                              "as \"8.4\", \"9.7\" or \"26.7\"")
        if not isinstance(merged.get("replica", {}), dict):
            raise ConfigError(f"{where}: server {merged['name']}: 'replica' must be a table of variables")
        out.append(ServerEntry(**merged))
    names = [s.name for s in out]
    dup = sorted({x for x in names if names.count(x) > 1})
    if dup:
        raise ConfigError(f"{where}: server name '{dup[0]}' is used twice")
    return out


def entries_from_dirs(dirs: list[str], **options) -> list[ServerEntry]:
    """``lagadvisor fleet DIR...``: one server per directory, named by the directory."""
    out: list[ServerEntry] = []
    seen: dict[str, int] = {}
    for d in dirs:
        base = posixpath.basename(d.rstrip("/")) or d
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}#{seen[base]}"
        out.append(ServerEntry(name=name, binlogs=d, **{k: v for k, v in options.items() if v is not None}))
    return out


def list_binlogs(location: str) -> list[str]:
    """The binlog files a location names, in order: a directory's ``name.NNNNNN`` files sorted,
    a glob's matches sorted, an ``.index`` file's lines (relative to its folder), or one file.
    Remote locations are listed through fsspec and returned as full URLs."""
    if is_url(location):
        return _list_remote(location)
    path = local_path(location)
    if glob.has_magic(path):
        found = sorted(p for p in glob.glob(path) if os.path.isfile(p))
        if not found:
            raise ConfigError(f"{location}: no file matches")
        return found
    if os.path.isdir(path):
        found = sorted(os.path.join(path, n) for n in os.listdir(path)
                       if BINLOG_NAME.match(n) and os.path.isfile(os.path.join(path, n)))
        if not found:
            raise ConfigError(f"{location}: no binlog files (name.NNNNNN) in this directory")
        return found
    if path.endswith(".index"):
        try:
            with open(path, encoding="utf-8") as f:
                lines = [ln.strip() for ln in f if ln.strip()]
        except OSError as err:
            raise ConfigError(f"{location}: cannot read the index file: {err.strerror}") from None
        folder = os.path.dirname(path)
        return [ln if os.path.isabs(ln) else os.path.normpath(os.path.join(folder, ln)) for ln in lines]
    if not os.path.exists(path):
        raise ConfigError(f"{location}: no such file or directory")
    return [path]


def _list_remote(url: str) -> list[str]:
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(url)
        if glob.has_magic(path):
            found = sorted(fs.glob(path))
        elif path.endswith(".index") and fs.isfile(path):
            with fs.open(path, "rt", encoding="utf-8") as f:
                lines = [ln.strip() for ln in f if ln.strip()]
            folder = posixpath.dirname(path)
            found = [posixpath.normpath(posixpath.join(folder, ln)) for ln in lines]
        elif fs.isdir(path):
            found = sorted(p for p in fs.ls(path, detail=False) if BINLOG_NAME.match(posixpath.basename(p)))
        elif fs.isfile(path):
            found = [path]
        else:
            raise ConfigError(f"{url}: no such object or prefix")
    except ConfigError:
        raise
    except Exception as err:  # fsspec backends raise their own types (botocore, aiohttp, OSError...)
        raise ConfigError(f"{url}: cannot list: {_one_line(err)}") from None
    if not found:
        raise ConfigError(f"{url}: no binlog files (name.NNNNNN) under this location")
    return [fs.unstrip_protocol(p) for p in found]


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= 300 else text[:297] + "..."


__all__ = ["ServerEntry", "entries_from_dirs", "is_url", "list_binlogs", "load_fleet", "parse_fleet"]
