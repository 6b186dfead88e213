#!/usr/bin/env python3
"""Provision and control real MySQL 9.x and MariaDB 10.11 servers on this machine.

Stdlib only (Python 3.10+); importable and runnable.  The recipes follow
shared/docs/real-servers.md:

* MySQL 9.x is Debian sid's build (``mysql-server-core``/``mysql-client-core``)
  inside a minimal sid chroot made by debootstrap, cached outside the work tree
  at ``$LAGADVISOR_CACHE/sid-root`` (default ``/var/cache/lagadvisor``).
  Data directories live in the chroot at ``/var/lib/lagadvisor/<name>``.
* MariaDB 10.11 is the host's Debian bookworm package, run with
  ``--no-defaults`` on its own data directory ``$LAGADVISOR_CACHE/mariadb/<name>``.

Every server listens on 127.0.0.1 only, with its own port and socket, so a
source and a replica (or several fixtures) can run at once.

Command line::

    python3 scripts/realservers.py provision [--rebuild]
    python3 scripts/realservers.py start NAME --port P [--mariadb] [--fresh] [-- OPTIONS...]
    python3 scripts/realservers.py stop NAME [--mariadb]
    python3 scripts/realservers.py status

``start`` leaves the server running in the background; ``stop`` shuts it down
cleanly.  ``status`` lists every known instance with its port and state.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterable, Sequence

#: Host packages the fixtures need (installed only if missing).
HOST_PACKAGES = ("debootstrap", "sysbench", "mariadb-server", "mariadb-client", "chromium", "strace")
#: Packages debootstrap puts into the sid chroot besides the minbase set.
CHROOT_INCLUDE = ("mysql-server-core", "mysql-client-core")
CHROOT_SUITE = "sid"
#: Written last by ``provision``; its absence marks a half-built chroot.
MARKER_NAME = ".lagadvisor-provisioned"
#: Where data directories live inside the chroot.
CHROOT_DATA = "/var/lib/lagadvisor"

START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 120.0
CLIENT_TIMEOUT_S = 600.0


class RealServerError(RuntimeError):
    """Anything that went wrong while provisioning or running a real server."""


# --------------------------------------------------------------------------- paths


def cache_dir() -> Path:
    """``$LAGADVISOR_CACHE`` or ``/var/cache/lagadvisor`` (never inside the work tree)."""
    return Path(os.environ.get("LAGADVISOR_CACHE", "/var/cache/lagadvisor"))


def chroot_root() -> Path:
    """Host path of the sid chroot."""
    return cache_dir() / "sid-root"


def same_host_paths() -> Path:
    """Let a tool on the host find a chroot server's files where the server says they are, as
    on the server's own host: a link ``/var/lib/lagadvisor`` to the chroot's data directories
    (``@@datadir``, ``@@relay_log_index``). Idempotent; a real directory there is left alone."""
    link = Path(CHROOT_DATA)
    target = chroot_root() / CHROOT_DATA.lstrip("/")
    target.mkdir(parents=True, exist_ok=True)
    if not link.exists() and not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
    return link


def marker_path() -> Path:
    return chroot_root() / MARKER_NAME


def mariadb_dir() -> Path:
    """Host directory holding the MariaDB instances (one data directory per name)."""
    return cache_dir() / "mariadb"


# --------------------------------------------------------------------------- helpers


def _run(cmd: Sequence[str], *, timeout: float = CLIENT_TIMEOUT_S, check: bool = True,
         env: dict | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    """Run a command, capture text output; raise RealServerError on failure if *check*."""
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, errors="replace",
                              timeout=timeout, env=env, input=input)
    except FileNotFoundError as err:
        raise RealServerError(f"{cmd[0]}: command not found") from err
    except subprocess.TimeoutExpired as err:
        raise RealServerError(f"{' '.join(cmd)}: timed out after {timeout:.0f} s") from err
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise RealServerError(f"{' '.join(cmd)}: exit {proc.returncode}: " + " | ".join(detail))
    return proc


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as err:
        return f"(cannot read {path}: {err})"
    return "\n".join(text.splitlines()[-lines:])


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _pid_alive(pid: int) -> bool:
    """True if *pid* exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _pid_comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _mysql_ids(root: Path) -> tuple[int, int] | None:
    """(uid, gid) of the ``mysql`` user in the passwd file under *root*."""
    try:
        for line in (root / "etc/passwd").read_text().splitlines():
            parts = line.split(":")
            if parts[0] == "mysql":
                return int(parts[2]), int(parts[3])
    except OSError:
        pass
    return None


def _chown_mysql(path: Path, root: Path = Path("/")) -> None:
    ids = _mysql_ids(root)
    if ids is None:
        raise RealServerError(f"no mysql user in {root / 'etc/passwd'}")
    os.chown(path, *ids)


@contextlib.contextmanager
def _lock(name: str):
    """An exclusive flock on ``$LAGADVISOR_CACHE/<name>.lock`` (serialises provisioning)."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / f"{name}.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _mounts_under(root: Path) -> list[str]:
    prefix = str(root.resolve()).rstrip("/") + "/"
    found = []
    with open("/proc/mounts") as f:
        for line in f:
            mnt = line.split()[1].replace("\\040", " ")
            if mnt == prefix[:-1] or mnt.startswith(prefix):
                found.append(mnt)
    return sorted(found, key=len, reverse=True)


def _remove_tree(root: Path) -> None:
    """Remove a (half-built) chroot, unmounting anything debootstrap left mounted in it."""
    for mnt in _mounts_under(root):
        _run(["umount", "-l", mnt], check=False)
    if _mounts_under(root):
        raise RealServerError(f"{root}: still has mounts, refusing to delete it")
    shutil.rmtree(root)


# --------------------------------------------------------------------------- provisioning


def _missing_packages(packages: Iterable[str]) -> list[str]:
    missing = []
    for pkg in packages:
        proc = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg],
                              capture_output=True, text=True)
        if proc.returncode != 0 or not proc.stdout.strip().endswith(" installed"):
            missing.append(pkg)
    return missing


def _apt_env() -> dict:
    env = dict(os.environ)
    env["DEBIAN_FRONTEND"] = "noninteractive"
    return env


def _stop_system_mariadb() -> str | None:
    """Stop a MariaDB that the Debian postinst may have started on the default datadir.

    Our instances use their own sockets, ports and pid files, but a system server
    on port 3306 or holding /run/mysqld/mysqld.sock would confuse clients and
    waste memory.  Returns a message if one was stopped.
    """
    pid = _read_pid(Path("/run/mysqld/mysqld.pid"))
    if pid is None or not _pid_alive(pid) or _pid_comm(pid) not in ("mariadbd", "mysqld"):
        return None
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
    return f"stopped the system MariaDB (pid {pid}) started by the Debian package"


def chroot_mysqld_version(root: Path | None = None) -> str:
    """``mysqld --version`` inside the chroot, e.g. ``9.7.4``; raises if it does not run."""
    root = root or chroot_root()
    out = _run(["chroot", str(root), "mysqld", "--version"], timeout=60).stdout
    m = re.search(r"Ver\s+(\d+\.\d+\.\d+)", out)
    if not m:
        raise RealServerError(f"unexpected mysqld --version output: {out.strip()!r}")
    return m.group(1)


def provision(*, rebuild: bool = False, log=print) -> list[str]:
    """Install host packages and build the sid chroot; return a list of failures (empty = ok).

    Idempotent: a second run only checks packages (dpkg-query) and runs
    ``mysqld --version`` in the chroot.  A chroot without the marker file is
    half-built and is removed and rebuilt.
    """
    failures: list[str] = []
    if os.geteuid() != 0:
        return ["not running as root (apt-get, debootstrap and chroot need root)"]
    with _lock("provision"):
        # 1. host packages
        missing = _missing_packages(HOST_PACKAGES)
        if missing:
            log(f"installing host packages: {' '.join(missing)}")
            apt = ["apt-get", "-o", "DPkg::Lock::Timeout=900"]
            try:
                _run(apt + ["update"], timeout=1800, env=_apt_env())
                _run(apt + ["install", "-y", "--no-install-recommends", *missing],
                     timeout=1800, env=_apt_env())
            except RealServerError as err:
                failures.append(f"apt-get failed: {err}")
            still = _missing_packages(missing)
            if still:
                failures.append(f"host packages still missing: {' '.join(still)}")
        try:
            msg = _stop_system_mariadb()
            if msg:
                log(msg)
        except OSError as err:
            failures.append(f"could not stop the system MariaDB: {err}")

        # 2. the sid chroot
        root = chroot_root()
        if root.exists() and (rebuild or not marker_path().exists()):
            log(f"removing {'old' if rebuild else 'half-built'} chroot {root}")
            try:
                _remove_tree(root)
            except (OSError, RealServerError) as err:
                failures.append(f"could not remove {root}: {err}")
                return failures
        if not root.exists():
            if shutil.which("debootstrap") is None:
                failures.append("debootstrap is not installed; cannot build the chroot")
                return failures
            log(f"building {CHROOT_SUITE} chroot in {root} (debootstrap, ~300 MB)")
            root.parent.mkdir(parents=True, exist_ok=True)
            try:
                _run(["debootstrap", "--variant=minbase", "--include=" + ",".join(CHROOT_INCLUDE),
                      CHROOT_SUITE, str(root)], timeout=3600)
            except RealServerError as err:
                failures.append(f"debootstrap failed: {err} (log: {root}/debootstrap/debootstrap.log)")
                return failures
        if marker_path().exists():
            try:
                version = chroot_mysqld_version(root)
            except RealServerError as err:
                failures.append(f"chroot {root} is marked complete but mysqld does not run: {err};"
                                " re-run with --rebuild")
                return failures
            log(f"chroot ready: {root} (mysqld {version})")
            return failures

        # 3. finish the chroot: mysql user, directories, verification, marker
        try:
            if _mysql_ids(root) is None:
                _run(["chroot", str(root), "useradd", "-r", "-M", "-s", "/bin/false", "mysql"])
            for d in ("run/mysqld", CHROOT_DATA.lstrip("/")):
                (root / d).mkdir(parents=True, exist_ok=True)
                _chown_mysql(root / d, root)
            version = chroot_mysqld_version(root)
            tools = sorted(t for t in ("mysqld", "mysql", "mysqlbinlog", "mysqldump", "mysqladmin")
                           if (root / "usr/bin" / t).exists() or (root / "usr/sbin" / t).exists())
            marker_path().write_text(json.dumps({"mysqld": version, "tools": tools}) + "\n")
        except (OSError, RealServerError) as err:
            failures.append(f"could not finish the chroot: {err}")
            return failures
        log(f"chroot ready: {root} (mysqld {version}; tools: {' '.join(tools)})")
    return failures


# --------------------------------------------------------------------------- servers


class _Server:
    """Common parts of a server process we start and stop ourselves."""

    kind = ""
    #: executables whose pid a pid file may name (safety check before signalling)
    process_names: tuple[str, ...] = ()

    def __init__(self, name: str, port: int, options: Sequence[str] = (), *, fresh: bool = False):
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise ValueError(f"bad server name {name!r}")
        self.name = name
        self._port = int(port)
        self.options = list(options)
        self.fresh = fresh
        self._proc: subprocess.Popen | None = None
        self._version: str | None = None
        self._log_bin_index: str | None = None

    # ---- paths supplied by subclasses
    @property
    def host_datadir(self) -> Path:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def host_error_log(self) -> Path:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def host_pid_file(self) -> Path:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def state_file(self) -> Path:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def port(self) -> int:
        return self._port

    @property
    def version(self) -> str:
        """``SELECT VERSION()`` of the running server (cached after start)."""
        if self._version is None:
            self._version = self.sql("SELECT VERSION()").strip()
        return self._version

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, port={self.port})"

    # ---- context manager
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- lifecycle
    def is_running(self) -> bool:
        pid = _read_pid(self.host_pid_file)
        return pid is not None and _pid_alive(pid) and _pid_comm(pid) in self.process_names

    def _initialize(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _server_command(self) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _client_base(self) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _wipe(self) -> None:
        for p in (self.host_datadir,):
            if p.exists():
                shutil.rmtree(p)
        for p in (self.host_error_log, self.state_file):
            p.unlink(missing_ok=True)

    def start(self, timeout: float = START_TIMEOUT_S) -> "_Server":
        """Initialise the data directory if new, start the server and wait for TCP."""
        if self.is_running():
            raise RealServerError(f"{self.name}: already running (pid file {self.host_pid_file})")
        if _port_in_use(self.port):
            raise RealServerError(f"{self.name}: port {self.port} on 127.0.0.1 is already in use")
        if self.fresh:
            self._wipe()
        if not self.host_datadir.exists():
            self._initialize()
        self.host_error_log.unlink(missing_ok=True)
        cmd = self._server_command()
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self._proc.poll() is not None:
                raise RealServerError(
                    f"{self.name}: server exited with code {self._proc.returncode} during start;"
                    f" error log {self.host_error_log}:\n{_tail(self.host_error_log)}")
            if _port_in_use(self.port):
                probe = _run(self._client_base() + ["-e", "SELECT 1"], check=False, timeout=30)
                if probe.returncode == 0:
                    break
            if time.monotonic() > deadline:
                self._kill()
                raise RealServerError(
                    f"{self.name}: no connection on 127.0.0.1:{self.port} after {timeout:.0f} s;"
                    f" error log {self.host_error_log}:\n{_tail(self.host_error_log)}")
            time.sleep(0.25)
        self._version = None
        self._after_start()
        self._log_bin_index = self.sql("SELECT IF(@@log_bin, @@log_bin_index, '')").strip() or None
        self.state_file.write_text(json.dumps({
            "kind": self.kind, "name": self.name, "port": self.port, "options": self.options,
            "log_bin_index": self._log_bin_index, "version": self.version,
        }, indent=1) + "\n")
        return self

    def _after_start(self) -> None:
        pass

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Clean shutdown (SQL SHUTDOWN, then SIGTERM), SIGKILL only as a last resort."""
        pid = _read_pid(self.host_pid_file)
        if self._proc is not None and self._proc.poll() is None:
            pid = self._proc.pid
        if pid is None or not self._alive(pid):
            self._reap()
            return
        _run(self._client_base() + ["-e", "SHUTDOWN"], check=False, timeout=30)
        if not self._wait_exit(pid, timeout / 2):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            if not self._wait_exit(pid, timeout / 2):
                self._kill()
                self._wait_exit(pid, 10)
        self._reap()

    def remove(self) -> None:
        """Stop the server if it runs, then delete its data directory, logs and state file."""
        if self.is_running() or (self._proc is not None and self._proc.poll() is None):
            self.stop()
        self._wipe()

    def _alive(self, pid: int) -> bool:
        if self._proc is not None and self._proc.pid == pid:
            return self._proc.poll() is None
        return _pid_alive(pid) and _pid_comm(pid) in self.process_names

    def _wait_exit(self, pid: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self._alive(pid):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def _kill(self) -> None:
        pid = self._proc.pid if self._proc is not None else _read_pid(self.host_pid_file)
        if pid is not None and self._alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _reap(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=10)
            self._proc = None

    # ---- clients
    def sql(self, statement: str, *, database: str | None = None, timeout: float = CLIENT_TIMEOUT_S) -> str:
        """Run *statement* with the command-line client; return its batch output (no column names)."""
        cmd = self._client_base() + ["--batch", "--skip-column-names", "--raw"]
        if database:
            cmd += ["--database", database]
        return _run(cmd + ["-e", statement], timeout=timeout).stdout

    def _host_path_of(self, server_path: str) -> Path:
        """Host path of a path as the server sees it."""
        return Path(server_path)

    def binlog_files(self) -> list[Path]:
        """Host paths of the binary logs, in index order."""
        index = self._log_bin_index
        if index is None and self.state_file.exists():
            index = json.loads(self.state_file.read_text()).get("log_bin_index")
        if not index:
            raise RealServerError(f"{self.name}: binary logging is off or the server never started")
        host_index = self._host_path_of(index)
        files = []
        for line in host_index.read_text().splitlines():
            line = line.strip()
            if not line:
                continue
            p = Path(line)
            files.append(self._host_path_of(line) if p.is_absolute()
                         else (self.host_datadir / p).resolve())
        return files

    def state(self) -> dict:
        data = json.loads(self.state_file.read_text()) if self.state_file.exists() else {}
        data.update(name=self.name, kind=self.kind, running=self.is_running())
        return data


class MySQLServer(_Server):
    """A Debian sid MySQL 9.x server running in the chroot.

    ``MySQLServer("src", 13306, ["--server-id=1", "--log-bin=binlog"])`` keeps its
    data directory at ``<chroot>/var/lib/lagadvisor/src`` (``fresh=True`` wipes it
    first).  Use as a context manager or call ``start()``/``stop()``.  With
    *version_check* (default) ``start()`` refuses an unprovisioned chroot and
    checks that the server answering on the port reports the chroot's
    ``mysqld --version``.
    """

    kind = "mysql"
    process_names = ("mysqld",)

    def __init__(self, name: str, port: int, options: Sequence[str] = (),
                 version_check: bool = True, *, fresh: bool = False):
        super().__init__(name, port, options, fresh=fresh)
        self.version_check = version_check
        self.root = chroot_root()

    # paths as the server sees them
    @property
    def datadir(self) -> str:
        return f"{CHROOT_DATA}/{self.name}"

    @property
    def host_datadir(self) -> Path:
        return self.root / self.datadir.lstrip("/")

    @property
    def host_error_log(self) -> Path:
        return self.root / f"{CHROOT_DATA.lstrip('/')}/{self.name}.err"

    @property
    def host_pid_file(self) -> Path:
        return self.root / f"run/mysqld/{self.name}.pid"

    @property
    def state_file(self) -> Path:
        return self.root / f"{CHROOT_DATA.lstrip('/')}/{self.name}.json"

    @property
    def socket_path(self) -> str:
        return f"/run/mysqld/{self.name}.sock"

    def _host_path_of(self, server_path: str) -> Path:
        return self.root / server_path.lstrip("/")

    def _check_chroot(self) -> None:
        if not (self.root / MARKER_NAME).exists():
            raise RealServerError(f"chroot {self.root} is not provisioned;"
                                  " run: python3 scripts/realservers.py provision")

    def _wipe(self) -> None:
        super()._wipe()
        (self.root / f"{CHROOT_DATA.lstrip('/')}/{self.name}.init.err").unlink(missing_ok=True)

    def _initialize(self) -> None:
        self._check_chroot()
        init_log = f"{CHROOT_DATA}/{self.name}.init.err"
        # lower_case_table_names is fixed when the data dictionary is made: given at --initialize too
        fixed = [o for o in self.options if o.replace("_", "-").startswith("--lower-case-table-names")]
        proc = _run(["chroot", str(self.root), "mysqld", "--no-defaults", "--initialize-insecure",
                     "--user=mysql", f"--datadir={self.datadir}", f"--log-error={init_log}", *fixed],
                    check=False, timeout=600)
        if proc.returncode != 0:
            if self.host_datadir.exists():
                shutil.rmtree(self.host_datadir)
            raise RealServerError(f"{self.name}: mysqld --initialize-insecure failed (exit"
                                  f" {proc.returncode}):\n{_tail(self.root / init_log.lstrip('/'))}")

    def _server_command(self) -> list[str]:
        if self.version_check:
            self._check_chroot()
        return ["chroot", str(self.root), "mysqld", "--no-defaults", "--user=mysql",
                f"--datadir={self.datadir}", f"--port={self.port}", "--bind-address=127.0.0.1",
                f"--socket={self.socket_path}", f"--pid-file=/run/mysqld/{self.name}.pid",
                '--secure-file-priv=', "--mysqlx=OFF",
                f"--log-error={CHROOT_DATA}/{self.name}.err", *self.options]

    def _client_base(self) -> list[str]:
        return ["chroot", str(self.root), "mysql", "--no-defaults", "--user=root",
                "--host=127.0.0.1", f"--port={self.port}", "--protocol=TCP"]

    def _after_start(self) -> None:
        if self.version_check:
            expected = chroot_mysqld_version(self.root)
            if not self.version.startswith(expected):
                self.stop()
                raise RealServerError(f"{self.name}: server on port {self.port} reports"
                                      f" {self.version}, chroot mysqld is {expected}")

    def _chroot_tool(self, tool: str) -> bool:
        return any((self.root / d / tool).exists() for d in ("usr/bin", "usr/sbin", "bin"))

    def mysqlbinlog(self, host_path: str | os.PathLike, *args: str) -> str:
        """Run the chroot's ``mysqlbinlog ARGS FILE`` on a host file; return stdout."""
        return chroot_mysqlbinlog(host_path, *args, root=self.root)

    def mysqldump_no_data(self, *databases: str) -> str:
        """Schema (no rows) of *databases*: ``mysqldump --no-data`` if the chroot has it.

        Otherwise (sid's mysql-client-core has no mysqldump) it is assembled from
        ``SHOW CREATE DATABASE`` / ``SHOW CREATE TABLE`` through the ``mysql`` client.
        """
        if self._chroot_tool("mysqldump"):
            cmd = ["chroot", str(self.root), "mysqldump", "--no-defaults", "--user=root",
                   "--host=127.0.0.1", f"--port={self.port}", "--protocol=TCP", "--no-data",
                   "--skip-dump-date", "--skip-comments", "--set-gtid-purged=OFF", "--databases", *databases]
            return _run(cmd).stdout
        return schema_via_show_create(self, databases)


def chroot_mysqlbinlog(host_path: str | os.PathLike, *args: str, root: Path | None = None) -> str:
    """Run the chroot's ``mysqlbinlog`` on a host file (hard-linked or copied into the chroot)."""
    root = root or chroot_root()
    src = Path(host_path)
    if not src.is_file():
        raise RealServerError(f"{src}: no such file")
    tmp = Path(tempfile.mkdtemp(prefix="lagadvisor-", dir=root / "tmp"))
    try:
        dst = tmp / src.name
        try:
            os.link(src, dst)
        except OSError:
            shutil.copyfile(src, dst)
        inside = "/" + str(dst.relative_to(root))
        extra = []
        if not any(a.startswith("--local-load") for a in args):
            # LOAD DATA events make mysqlbinlog write SQL_LOAD_MB-* files: keep them in tmp
            extra = [f"--local-load={inside.rsplit('/', 1)[0]}"]
        proc = _run(["chroot", str(root), "mysqlbinlog", *extra, *args, inside], check=False)
        if proc.returncode != 0 or "ERROR:" in proc.stderr:
            raise RealServerError(f"mysqlbinlog {' '.join(args)} {src}: exit {proc.returncode}:"
                                  f" {proc.stderr.strip()[-500:]}")
        return proc.stdout
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def schema_via_show_create(server: _Server, databases: Iterable[str]) -> str:
    """``mysqldump --no-data``-like SQL from SHOW CREATE statements, tables sorted by name."""
    out = ["SET FOREIGN_KEY_CHECKS=0;", ""]
    for db in databases:
        qdb = "`" + db.replace("`", "``") + "`"
        row = server.sql(f"SHOW CREATE DATABASE {qdb}")
        out.append(row.split("\t", 1)[1].rstrip("\n") + ";")
        out.append(f"USE {qdb};")
        out.append("")
        tables = server.sql(f"SHOW FULL TABLES FROM {qdb}").splitlines()
        for line in sorted(tables):
            tname, ttype = line.split("\t")
            qt = "`" + tname.replace("`", "``") + "`"
            row = server.sql(f"SHOW CREATE TABLE {qdb}.{qt}")
            create = row.split("\t", 1)[1]
            if ttype == "VIEW":
                create = create.split("\t", 1)[0]
            out.append(create.rstrip("\n") + ";")
            out.append("")
    out.append("SET FOREIGN_KEY_CHECKS=1;")
    return "\n".join(out) + "\n"


class MariaDBServer(_Server):
    """A host (Debian bookworm) MariaDB 10.11 server with its own data directory.

    Data directory ``$LAGADVISOR_CACHE/mariadb/<name>``; error log, pid file and
    socket beside it.  Started with ``--no-defaults`` so the system configuration
    (and any system instance) is not involved.
    """

    kind = "mariadb"
    process_names = ("mariadbd", "mysqld")

    @property
    def host_datadir(self) -> Path:
        return mariadb_dir() / self.name

    @property
    def host_error_log(self) -> Path:
        return mariadb_dir() / f"{self.name}.err"

    @property
    def host_pid_file(self) -> Path:
        return mariadb_dir() / f"{self.name}.pid"

    @property
    def state_file(self) -> Path:
        return mariadb_dir() / f"{self.name}.json"

    @property
    def socket_path(self) -> str:
        return str(mariadb_dir() / f"{self.name}.sock")

    def _prepare_dirs(self) -> None:
        d = mariadb_dir()
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(cache_dir(), 0o755)
        _chown_mysql(d)

    def _initialize(self) -> None:
        if shutil.which("mariadb-install-db") is None:
            raise RealServerError("mariadb-install-db not found; run: python3 scripts/realservers.py provision")
        self._prepare_dirs()
        proc = _run(["mariadb-install-db", "--no-defaults", "--user=mysql",
                     f"--datadir={self.host_datadir}", "--auth-root-authentication-method=normal",
                     "--skip-test-db"], check=False, timeout=600)
        if proc.returncode != 0:
            if self.host_datadir.exists():
                shutil.rmtree(self.host_datadir)
            raise RealServerError(f"{self.name}: mariadb-install-db failed (exit {proc.returncode}):"
                                  f" {(proc.stderr or proc.stdout).strip()[-1500:]}")

    def _server_command(self) -> list[str]:
        self._prepare_dirs()
        return ["mariadbd", "--no-defaults", "--user=mysql", f"--datadir={self.host_datadir}",
                f"--port={self.port}", "--bind-address=127.0.0.1", f"--socket={self.socket_path}",
                f"--pid-file={self.host_pid_file}", "--secure-file-priv=",
                f"--log-error={self.host_error_log}", *self.options]

    def _client_base(self) -> list[str]:
        return ["mariadb", "--no-defaults", "--user=root", "--host=127.0.0.1",
                f"--port={self.port}", "--protocol=TCP"]

    def mariadb_binlog(self, host_path: str | os.PathLike, *args: str) -> str:
        """Run the host ``mariadb-binlog ARGS FILE``; return stdout."""
        proc = _run(["mariadb-binlog", "--no-defaults", *args, str(host_path)], check=False)
        if proc.returncode != 0 or "ERROR:" in proc.stderr:
            raise RealServerError(f"mariadb-binlog {' '.join(args)} {host_path}: exit"
                                  f" {proc.returncode}: {proc.stderr.strip()[-500:]}")
        return proc.stdout

    def mysqldump_no_data(self, *databases: str) -> str:
        """``mariadb-dump --no-data`` of *databases*."""
        cmd = ["mariadb-dump", "--no-defaults", "--user=root", "--host=127.0.0.1",
               f"--port={self.port}", "--protocol=TCP", "--no-data", "--skip-dump-date",
               "--skip-comments", "--databases", *databases]
        return _run(cmd).stdout


# --------------------------------------------------------------------------- load generator


def sysbench(port: int, *args: str, timeout: float = 3600, host: str = "127.0.0.1",
             user: str = "root") -> str:
    """Run the host sysbench against 127.0.0.1:*port*; *args* are e.g. ``oltp_write_only --tables=4 run``.

    Returns stdout; raises RealServerError (with the output tail) on failure.
    """
    cmd = ["sysbench", "--db-driver=mysql", f"--mysql-host={host}", f"--mysql-port={port}",
           f"--mysql-user={user}", *args]
    proc = _run(cmd, check=False, timeout=timeout)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise RealServerError(f"{' '.join(cmd)}: exit {proc.returncode}:\n{tail}")
    return proc.stdout


# --------------------------------------------------------------------------- CLI


def _known_instances() -> list[_Server]:
    found: list[_Server] = []
    for kind, directory in (("mysql", chroot_root() / CHROOT_DATA.lstrip("/")),
                            ("mariadb", mariadb_dir())):
        if not directory.is_dir():
            continue
        for state in sorted(directory.glob("*.json")):
            try:
                data = json.loads(state.read_text())
                cls = MySQLServer if kind == "mysql" else MariaDBServer
                found.append(cls(data["name"], data["port"], data.get("options", ())))
            except (OSError, ValueError, KeyError):
                continue
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("provision", help="install packages and build the sid chroot (idempotent)")
    p.add_argument("--rebuild", action="store_true", help="delete and rebuild the chroot")
    p = sub.add_parser("start", help="start a server in the background",
                       usage="%(prog)s NAME --port P [--mariadb] [--fresh] [-- SERVER_OPTIONS...]")
    p.add_argument("name")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--mariadb", action="store_true", help="host MariaDB instead of chroot MySQL")
    p.add_argument("--fresh", action="store_true", help="wipe the data directory first")
    p = sub.add_parser("stop", help="stop a server started by 'start'")
    p.add_argument("name")
    p.add_argument("--mariadb", action="store_true")
    sub.add_parser("status", help="list known servers")
    argv = list(sys.argv[1:] if argv is None else argv)
    # argparse mishandles "--" after a subcommand: split the server options off first
    server_options: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, server_options = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    args.options = server_options

    try:
        if args.cmd == "provision":
            t0 = time.monotonic()
            failures = provision(rebuild=args.rebuild)
            for f in failures:
                print(f"provision: FAILED: {f}", file=sys.stderr)
            if failures:
                return 1
            print(f"provision: ok ({time.monotonic() - t0:.1f} s)")
            return 0
        if args.cmd == "start":
            cls = MariaDBServer if args.mariadb else MySQLServer
            srv = cls(args.name, args.port, args.options, fresh=args.fresh)
            srv.start()
            print(f"{srv.name}: {srv.kind} {srv.version} on 127.0.0.1:{srv.port}"
                  f" datadir {srv.host_datadir}")
            return 0
        if args.cmd == "stop":
            matches = [s for s in _known_instances() if s.name == args.name
                       and (not args.mariadb or s.kind == "mariadb")]
            if not matches:
                print(f"stop: no known server named {args.name}", file=sys.stderr)
                return 1
            if len(matches) > 1:
                matches = [s for s in matches if s.kind == "mysql"]
            srv = matches[0]
            srv.stop()
            print(f"{srv.name}: stopped")
            return 0
        if args.cmd == "status":
            ready = marker_path().exists()
            print(f"chroot: {chroot_root()} ({'provisioned' if ready else 'not provisioned'})")
            for srv in _known_instances():
                st = srv.state()
                print(f"{st['name']:24} {st['kind']:8} port {st['port']:<6}"
                      f" {'running' if st['running'] else 'stopped':8} {st.get('version', '')}")
            return 0
    except RealServerError as err:
        print(f"{args.cmd}: FAILED: {err}", file=sys.stderr)
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
