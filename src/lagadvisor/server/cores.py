"""The replica's CPU cores, as far as a server's settings show them (issue 33: ``advise`` reads
what a server exposes before it assumes).

MySQL reports no processor count over SQL. From 8.4.0, though, ``innodb_read_io_threads``
defaults to "the number of available logical processors on the system divided by 2, with a
minimum default value of 4" (MySQL 8.4, 9.x and 26.x Reference Manuals, 17.8.5 "Configuring the
Number of Background InnoDB I/O Threads"; 8.0's default is a fixed 4), within its range 1-64. So a
server of 8.4 or later whose value is still the compiled default
(``performance_schema.variables_info.VARIABLE_SOURCE = 'COMPILED'``, readable without privileges)
bounds its logical processors: 2v or 2v+1 for 4 < v < 64, at most 9 for v = 4, 128 or more for
v = 64. What it counts is what the server counts: a container's CPU quota may be below it.
MariaDB's variable means something else (its asynchronous I/O slots): nothing is read there.
A bound is never taken for the count: at v = 4 (1 to 9 processors) the count is not shown, and
:data:`BOUNDED_ASSUMED` is assumed and said so.

A server on this host (a socket, a loopback address or one of this machine's own) is read
better (issue 71): its own process, found by the OS thread of the connection
(``performance_schema.threads.THREAD_OS_ID``), may run on the CPUs of its affinity mask, capped
by its cgroup's CPU quota (:mod:`lagadvisor.cpus`); where that process cannot be found here,
this host's processors (``os.cpu_count``), said so.
"""

from __future__ import annotations

import os
import socket as socketlib
from dataclasses import dataclass
from pathlib import Path

from ..binlog.framing import version_tuple
from ..cpus import cgroup_cpu_quota
from .connection import as_text

#: The first release whose innodb_read_io_threads default follows the processors.
SINCE = (8, 4, 0)
MINIMUM, MAXIMUM = 4, 64
#: The count assumed where the defaults only bound it (v = 4: 1 to 9 logical processors): the
#: middle of the range by ratio (3 = sqrt(9)) rounded up to a worker count advise tries; said so.
BOUNDED_ASSUMED = 4


@dataclass(frozen=True, slots=True)
class ExposedCores:
    """Logical processors bounded by a server's compiled default: ``low``..``high`` (``high``
    None: no upper bound), and ``cores``, the count assumed within them (the lower of an exact
    pair, the upper bound of a capped range, the lower bound of an open one)."""

    read_io_threads: int
    low: int
    high: int | None
    cores: int

    def sentence(self, where: str = "the replica") -> str:
        """Where the count comes from, for the assumptions line (``where``: the server read, as
        ``advise --host`` may name the source)."""
        how = (f"innodb_read_io_threads={self.read_io_threads} at its compiled default (half the logical "
               f"processors MySQL counts, at least {MINIMUM})")
        if self.high is None:
            span = f"{self.low} or more"
        elif self.low == 1:
            return (f"read from {where}: {how}: at most {self.high}, which not shown: {self.cores} assumed "
                    "(--cores to give them)")
        else:
            span = f"{self.low} or {self.high}"
        return (f"read from {where}: {how}: {span}, {self.cores} assumed (a container's CPU limit is not in "
                "it; --cores to give them)")


def exposed_cores(version: str, read_io_threads: str | None, source: str | None) -> ExposedCores | None:
    """The server's logical processors from ``@@version``, ``@@innodb_read_io_threads`` and its
    ``VARIABLE_SOURCE``, or None when they do not show them (before 8.4.0, MariaDB, a value set in
    a file or on the command line, or one not read)."""
    if not version or "mariadb" in version.lower() or version_tuple(version) < SINCE:
        return None
    if source is None or source.upper() != "COMPILED" or read_io_threads is None:
        return None
    try:
        v = int(read_io_threads)
    except ValueError:
        return None
    if not MINIMUM <= v <= MAXIMUM:
        return None
    if v == MINIMUM:   # 1-9 processors: a bound, never the count
        return ExposedCores(v, 1, 2 * MINIMUM + 1, BOUNDED_ASSUMED)
    if v == MAXIMUM:
        return ExposedCores(v, 2 * MAXIMUM, None, 2 * MAXIMUM)
    return ExposedCores(v, 2 * v, 2 * v + 1, 2 * v)


def variable_sources(cur, names: tuple[str, ...], error: type[Exception]) -> dict[str, str]:
    """performance_schema.variables_info's VARIABLE_SOURCE of ``names`` (COMPILED: the default),
    by lowercase name, over either driver's cursor (``error``: its error class); {} where the
    table is not (MariaDB, 5.7)."""
    try:
        cur.execute("SELECT VARIABLE_NAME, VARIABLE_SOURCE FROM performance_schema.variables_info WHERE "
                    "VARIABLE_NAME IN (" + ",".join(["%s"] * len(names)) + ")", names)
        return {as_text(n).lower(): as_text(v) for n, v in cur.fetchall()}
    except error:
        return {}


def shown_by(cur, error: type[Exception]) -> ExposedCores | None:
    """:func:`exposed_cores` of the server behind ``cur`` (either driver; ``error``: its error
    class): its version, innodb_read_io_threads and that variable's source."""
    try:
        cur.execute("SELECT @@version, @@innodb_read_io_threads")
        (version, threads), = cur.fetchall()
    except error:   # a server without the variable: nothing shown
        return None
    source = variable_sources(cur, ("innodb_read_io_threads",), error).get("innodb_read_io_threads")
    return exposed_cores(as_text(version), as_text(threads), source)


@dataclass(frozen=True, slots=True)
class HostCores:
    """The logical processors of a server running on this host: ``cores``, and how they were
    read (``pid``: the server's process, None: this host's processors, the process not found)."""

    cores: int
    pid: int | None = None
    process: str = ""
    affinity: int = 0
    quota: int | None = None

    def sentence(self, where: str = "the replica") -> str:
        if self.pid is None:
            return (f"read on this host, where {where} runs: its {self.cores} logical processors (os.cpu_count; the "
                    "server's process not found here, so its CPU affinity and quota not read; --cores to give them)")
        cap = f", its cgroup's CPU quota {self.quota}" if self.quota is not None else ""
        return (f"read on this host, where {where} runs: its process ({self.process}, pid {self.pid}) may run on "
                f"{self.affinity} CPUs (its affinity{cap}; --cores to give others)")


#: Host names that are this machine (besides a socket and this machine's own addresses).
LOOPBACK = ("localhost", "127.0.0.1", "::1", "localhost.localdomain")


def on_this_host(host: str | None, socket: str | None = None) -> bool:
    """Whether a server reached at ``host`` (or through the Unix ``socket``) runs on this machine:
    a socket, a loopback name or address, or an address this machine can bind."""
    if socket:
        return True
    if not host:
        return False
    h = host.strip("[]").lower()
    if h in LOOPBACK or h.startswith("127."):
        return True
    try:
        infos = socketlib.getaddrinfo(h, None, proto=socketlib.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    for family, _, _, _, addr in infos:
        try:
            with socketlib.socket(family, socketlib.SOCK_STREAM) as s:
                s.bind((addr[0], 0))   # succeeds for this machine's own addresses only
            return True
        except OSError:
            continue
    return False


#: Process names of a MySQL or MariaDB server (``/proc/PID/comm``).
SERVER_PROCESSES = ("mysqld", "mariadbd", "mysqld-debug")


def host_cores(cur, error: type[Exception], proc: str = "/proc") -> HostCores:
    """The CPUs of the server behind ``cur``, which runs on this host (:func:`on_this_host`):
    its process's affinity and cgroup quota where the connection's OS thread
    (performance_schema.threads' own row: SELECT on performance_schema) leads to a server
    process here, else this host's processors."""
    tid = None
    try:
        cur.execute("SELECT THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()")
        row = cur.fetchone()
        cur.fetchall()
        tid = int(row[0]) if row and row[0] is not None else None
    except (error, ValueError, TypeError):
        tid = None
    pid = _server_pid(tid, proc) if tid else None
    if pid is not None:
        try:
            affinity = len(os.sched_getaffinity(pid))
        except (OSError, AttributeError):
            affinity = 0
        if affinity:
            quota = cgroup_cpu_quota(f"{proc}/{pid}")
            name = Path(proc, str(pid), "comm").read_text(errors="replace").strip()
            return HostCores(min(affinity, quota) if quota else affinity, pid, name, affinity, quota)
    return HostCores(os.cpu_count() or 1)


def _server_pid(tid: int, proc: str) -> int | None:
    """The process of the OS thread ``tid`` when it is a server's (its name), else None (another
    PID namespace: the server in a container, whose thread ids are not this host's)."""
    try:
        status = Path(proc, str(tid), "status").read_text(errors="replace")
        pid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("Tgid:")))
        name = Path(proc, str(pid), "comm").read_text(errors="replace").strip()
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    return pid if name in SERVER_PROCESSES else None


def replica_cores(cur, error: type[Exception], host: str | None, socket: str | None = None):
    """The cores to assume for the server behind ``cur``: its host's (:func:`host_cores`) where
    it runs here, else what its defaults show (:func:`shown_by`), else None (the caller assumes
    and says so)."""
    if on_this_host(host, socket):
        return host_cores(cur, error)
    return shown_by(cur, error)


def cores_of_server(opts):
    """:func:`replica_cores` of the server ``opts`` (a :class:`.connection.ServerOptions`), over a
    connection of its own."""
    import mysql.connector

    from .connection import connect

    conn = connect(opts)
    try:
        cur = conn.cursor()
        try:
            return replica_cores(cur, mysql.connector.Error, opts.host, opts.socket)
        finally:
            cur.close()
    finally:
        conn.close()
