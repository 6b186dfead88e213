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
from ..inputs import BINLOG_NAME, resolve
from ..kinds import CORES_RANGE, HISTORY_SIZE_RANGE, CommitOrderInput

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


#: A YAML fleet file whose aliases would expand past this many nodes is refused before it is
#: built (a "billion laughs": a 1.5 KB file can name 10^10 nodes); plain anchors stay far below.
YAML_MAX_NODES = 100_000


def load_fleet(path: str) -> list[ServerEntry]:
    """The servers of a fleet file (TOML unless it ends in .yaml/.yml)."""
    raw = _read_fleet_file(path)
    try:
        doc = _load_yaml(raw, path) if path.endswith((".yaml", ".yml")) else _load_toml(raw, path)
    except RecursionError:  # the parsers (and YAML's composer) recurse once per level
        raise ConfigError(f"{path}: the fleet file is nested too deeply") from None
    return parse_fleet(doc, path)


def _read_fleet_file(path: str) -> bytes:
    import stat

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise ConfigError(f"{path}: cannot read the fleet file: {kind}")
        if st.st_size > 64 << 20:
            raise ConfigError(f"{path}: a fleet file of {st.st_size:,} bytes: larger than 64 MiB")
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the fleet file: {err.strerror}") from None


def _load_yaml(raw: bytes, path: str):
    """The YAML document, composed first (aliased nodes shared, as the file writes them) and
    built only when its expanded size is below :data:`YAML_MAX_NODES`."""
    import yaml

    try:
        loader = yaml.SafeLoader(raw.decode("utf-8"))
        try:
            node = loader.get_single_node()
            if node is not None and _expanded_nodes(node, path) > YAML_MAX_NODES:
                raise ConfigError(f"{path}: the YAML fleet file's aliases expand to more than "
                                  f"{YAML_MAX_NODES:,} nodes: refused")
            return loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: not a YAML fleet file: {' '.join(str(err).split())}") from None


def _expanded_nodes(root, path: str) -> int:
    """How many nodes the document under ``root`` has once every alias is copied out: each
    node's count computed once (memoised by identity), iteratively, so neither a deep nor an
    aliased document costs more than its composed size; an alias inside itself is refused."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, closing = stack.pop()
        kids = _yaml_children(node)
        if closing:
            sizes[id(node)] = min(1 + sum(sizes[id(k)] for k in kids), YAML_MAX_NODES + 1)
        elif id(node) not in sizes:
            if id(node) in open_:
                raise ConfigError(f"{path}: the YAML fleet file has an alias inside its own anchor")
            open_.add(id(node))
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in sizes)
    return sizes[id(root)]


def _yaml_children(node) -> list:
    if isinstance(node.value, list):  # a sequence's items, a mapping's (key, value) pairs
        return [x for item in node.value for x in (item if isinstance(item, tuple) else (item,))]
    return []


def _load_toml(raw: bytes, path: str):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli distribution (declared there)
        import importlib

        tomllib = importlib.import_module("tomli")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: not a TOML fleet file: {err}") from None


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
        _check_keys(merged, where, n)
        _check_values(merged, where)
        _check_replica(merged.get("replica", {}), where, merged["name"])
        out.append(ServerEntry(**merged))
    names = [s.name for s in out]
    dup = sorted({x for x in names if names.count(x) > 1})
    if dup:
        raise ConfigError(f"{where}: server name '{dup[0]}' is used twice")
    return out


def _check_keys(merged: dict, where: str, n: int) -> None:
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


#: The numbers a server entry may give, in the ranges the single-server commands take them.
_RANGES = {"cores": CORES_RANGE, "history_size": HISTORY_SIZE_RANGE, "port": (1, 65535)}


def _check_values(merged: dict, where: str) -> None:
    for key, (lo, hi) in _RANGES.items():
        v = merged.get(key)
        if key in merged and (not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi):
            raise ConfigError(f"{where}: server {merged['name']}: '{key}' must be a whole number from {lo:,} "
                              f"to {hi:,}")
    if merged.get("commit_order", CommitOrderInput.AUTO) not in tuple(CommitOrderInput):
        raise ConfigError(f"{where}: server {merged['name']}: commit_order must be auto, recorded, serial "
                          "or flush-groups")
    tv = merged.get("target_version")
    if tv is not None and not _is_version(tv):
        raise ConfigError(f"{where}: server {merged['name']}: target_version must be a version string such "
                          "as \"8.4\", \"9.7\" or \"26.7\"")


def setting_text(value) -> str | None:
    """A replica table's value as the server shows it (a YAML/TOML boolean: ON or OFF), or None
    when it is no single value (a list, a table, a float, null)."""
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    if isinstance(value, (int, str)):
        return str(value).strip()
    return None


def _check_replica(replica, where: str, name: str) -> None:
    """The replica table: advise --replica-setting's names and rules (advise.context)."""
    from ..advise.context import REPLICA_SETTINGS, replica_setting_problem

    if not isinstance(replica, dict):
        raise ConfigError(f"{where}: server {name}: 'replica' must be a table of variables")
    for key, value in replica.items():
        if key not in REPLICA_SETTINGS:
            raise ConfigError(f"{where}: server {name}: replica: unknown setting '{key}' (known: "
                              f"{', '.join(REPLICA_SETTINGS)})")
        text = setting_text(value)
        problem = f"{key} must be a single value (a number or a word)" if text is None else replica_setting_problem(key, text)
        if problem is not None:
            raise ConfigError(f"{where}: server {name}: replica: {problem}")


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
    """The binlog files a location names, in order: a local one as ``advise`` reads its argument
    (:func:`lagadvisor.inputs.resolve`: a directory through its one ``.index`` file or its
    ``name.NNNNNN`` files of one log, an ``.index`` file's lines, a glob's matches, one file), so
    a server's files are those ``advise`` reads. Remote locations are listed through fsspec and
    returned as full URLs."""
    if is_url(location):
        return _list_remote(location)
    path = local_path(location)
    if not glob.has_magic(path) and not os.path.lexists(path):
        raise ConfigError(f"{location}: no such file or directory")
    return resolve([path])


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
