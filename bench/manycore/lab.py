#!/usr/bin/env python3
"""The many-core replica lab: timed catch-ups of carried backlogs by a carried MySQL 9.x replica.

Stdlib only: it runs on the 16-core device, where there is nothing but python3 and the working
tree (with two files of ``bench/data/manycore`` carried: the kit of bench/manycore/build_kit.py and the
backlogs of bench/manycore/gen_backlogs.py).  One replica ``mysqld`` is started from the
unpacked kit (``lib/ld-linux-x86-64.so.2 --library-path lib bin/mysqld``) with
``log_replica_updates=ON`` and ``replica_preserve_commit_order=ON``; for each catch-up:

1. reset: ``RESET REPLICA ALL``, drop and reload the workload's database from its dump,
   ``RESET BINARY LOGS AND GTIDS``; copy the backlog's binlogs into the datadir as
   ``relay-bin.00000N`` with ``relay-bin.index`` (the last one cut where the run's share of
   the backlog ends, so the applier stops there with its threads alive) and ``CHANGE
   REPLICATION SOURCE TO RELAY_LOG_FILE='relay-bin.000001', RELAY_LOG_POS=4``; wait (bounded)
   until InnoDB has flushed and purged what the reset left;
2. ``SET GLOBAL replica_parallel_workers``, ``sync_binlog`` and
   ``innodb_flush_log_at_trx_commit`` (relaxed 0/2, durable 1/1);
3. time ``START REPLICA SQL_THREAD`` until ``WAIT_FOR_EXECUTED_GTID_SET(target)`` returns,
   with the server's ``SYSDATE(6)`` before and after (one client session), and read what the
   catch-up cost: CPU seconds per thread (/proc), fsyncs of the redo log and the binlog
   (performance_schema file instruments), row-lock waits, applier retries.

The plan, in order of importance, fits a wall budget (``--budget``, default 450 s, from the
start of this script): probes (1 and the most workers, relaxed and durable, on a slice of each
backlog) measure this machine; the share of each backlog that is applied (``fraction``, the
same for every run) is then chosen so that the whole plan fits; then ``--rounds`` interleaved
rounds of every workload at every worker count, relaxed, then the same durable, then one
instrumented round (performance_schema stages and waits on, a restart) at 4-32 workers, which
also keeps each run's per-transaction timeline (``$OUT/timelines.json.gz``: the commit-order
hand-offs and the coordinator's wake-ups, bench/manycore/timeline.py).  A run
that would overrun the budget is skipped (and listed).  The JSON (``$OUT/manycore.json``) is
rewritten after every run, so a timeout still returns what was measured; the replica binlogs of
every round's 16-worker catch-ups are kept (gzip, in ``$OUT/replica_binlogs_N.tar``, the first
round's first) for ``lagadvisor calibrate``: bench/manycore/calibrate_check.py fits on each, since
one catch-up's time strays from its cell's median by the machine's own 12-16% (rounds_ceiling.py
``--calibrate``).

``--quick`` (this 2-core machine): workers 1/2/4, a tenth of each backlog, the same code path.

Usage: python3 bench/manycore/lab.py [--quick] [--budget 450] [--out DIR] [--rounds 5] [--no-instrumented]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from replica_catchup import thread_cpu  # noqa: E402  (stdlib; /proc per-thread CPU)
sys.path.insert(0, str(Path(__file__).resolve().parent))
import timeline  # noqa: E402  (stdlib; the instrumented runs' per-transaction timelines)

DATA = ROOT / "bench" / "data" / "manycore"
WORKERS = (1, 2, 4, 8, 16, 32)
QUICK_WORKERS = (1, 2, 4)
CONFIGS = {"relaxed": {"sync_binlog": 0, "innodb_flush_log_at_trx_commit": 2},
           "durable": {"sync_binlog": 1, "innodb_flush_log_at_trx_commit": 1}}
#: Server options of every run (the durability and the worker count are set per run).
REPLICA_OPTIONS = ["--server-id=2", "--gtid-mode=ON", "--enforce-gtid-consistency=ON",
                   "--log-bin=binlog", "--binlog-format=ROW", "--binlog-row-metadata=FULL",
                   "--log-replica-updates=ON", "--replica-preserve-commit-order=ON",
                   "--relay-log=relay-bin", "--relay-log-recovery=OFF", "--skip-replica-start",
                   "--max-binlog-size=1073741824", "--innodb-buffer-pool-load-at-startup=OFF",
                   "--innodb-buffer-pool-dump-at-shutdown=OFF", "--mysqlx=OFF", "--secure-file-priv=",
                   # an SSD's flushing rate (the default 200 takes seconds to flush a reset's load)
                   "--innodb-io-capacity=2000", "--innodb-io-capacity-max=4000"]
#: The instrumented round's extra options: every stage and wait instrument, timed, and the
#: consumers that feed the per-thread summaries (a restart: some instruments are startup-only).
INSTRUMENT_OPTIONS = ["--performance-schema-instrument=stage/%=ON",
                      "--performance-schema-instrument=wait/%=ON",
                      "--performance-schema-consumer-events-stages-current=ON",
                      "--performance-schema-consumer-events-waits-current=ON",
                      # the per-transaction timelines (bench/manycore/timeline.py): every applied
                      # transaction with its GTID, and the stage histories of the two waits
                      "--performance-schema-instrument=transaction=ON",
                      "--performance-schema-consumer-events-transactions-current=ON",
                      "--performance-schema-consumer-events-transactions-history-long=ON",
                      "--performance-schema-consumer-events-stages-history-long=ON",
                      "--performance-schema-events-stages-history-long-size=1000000",
                      "--performance-schema-events-transactions-history-long-size=200000"]
TIMELINES_NAME = "timelines.json.gz"
STATUS = ("Innodb_row_lock_waits", "Innodb_row_lock_time", "Innodb_os_log_fsyncs", "Innodb_data_fsyncs",
          "Innodb_buffer_pool_reads", "Handler_read_rnd_next", "Handler_read_key", "Com_commit",
          "Binlog_cache_disk_use", "Innodb_rows_updated", "Innodb_rows_inserted", "Innodb_rows_deleted")
#: Until the probes say otherwise: seconds per transaction at one worker, and the resets' cost.
GUESS_TRX_S = {"relaxed": 250e-6, "durable": 700e-6}
GUESS_OVERHEAD_S = 1.5
#: GTID_LOG_EVENT and GTID_TAGGED_LOG_EVENT: one opens each transaction of a binlog.
GTID_TYPES = (33, 42)
#: The common event header: timestamp, type, server_id, event_size, log_pos (then 2 bytes of flags).
EVENT_HEADER = struct.Struct("<IBIII")
JSON_NAME = "manycore.json"
TAR_LIMIT = 15 * 2**20  # the device returns files of at most 16 MiB


class LabError(RuntimeError):
    """The kit, the server or a catch-up failed."""


T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def _median_high(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def _tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError as err:
        return f"(cannot read {path}: {err})"


# --------------------------------------------------------------------------- the machine


def _fs_of(path: Path) -> dict:
    """Mount point, device and file system type holding *path* (the longest /proc/mounts match)."""
    best = ("", "", "")
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            dev, mnt, fstype = line.split()[:3]
            if str(path).startswith(mnt) and len(mnt) >= len(best[1]):
                best = (dev, mnt, fstype)
    except OSError:
        pass
    st = os.statvfs(path)
    return {"device": best[0], "mount": best[1], "type": best[2],
            "free_gib": round(st.f_bavail * st.f_frsize / 2**30, 1)}


def machine_info(workdir: Path) -> dict:
    """Cores, CPU model, kernel, memory and the datadir's file system: what the numbers came from."""
    model, mem_kib = "", 0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cores_usable": len(os.sched_getaffinity(0)), "cpu_model": model,
            "kernel": platform.release(), "system": platform.platform(), "memory_gib": round(mem_kib / 2**20, 1),
            "hostname": socket.gethostname(), "python": platform.python_version(), "datadir_fs": _fs_of(workdir)}


# --------------------------------------------------------------------------- the kit and the server


def unpack(tar_path: Path, dest: Path) -> None:
    """Extract a tar.xz made by build_kit.py or gen_backlogs.py into *dest*."""
    if not tar_path.is_file():
        raise LabError(f"{tar_path}: missing (build it: see bench/manycore/README.md)")
    with tarfile.open(tar_path) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:  # Python < 3.12 without the backported filters
            tar.extractall(dest)


@dataclass
class Mysqld:
    """One mysqld of the kit, run through the kit's own loader, on a socket in *run_dir*."""

    kit: Path
    run_dir: Path
    options: list[str] = field(default_factory=list)
    proc: subprocess.Popen | None = None
    #: The socket lives in a short /tmp folder: a Unix socket path has at most 107 bytes, and
    #: the device's checkout may lie deep.
    sock_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="mcl-", dir="/tmp")))

    @property
    def datadir(self) -> Path:
        return self.run_dir / "data"

    @property
    def socket(self) -> Path:
        return self.sock_dir / "mysqld.sock"

    @property
    def error_log(self) -> Path:
        return self.run_dir / "mysqld.err"

    def program(self, name: str) -> list[str]:
        """The command line that runs the kit's *name* (mysqld, mysql) through the kit's loader."""
        lib = self.kit / "lib"
        return [str(lib / "ld-linux-x86-64.so.2"), "--library-path", str(lib), str(self.kit / "bin" / name)]

    def _base(self) -> list[str]:
        share = self.kit / "share" / "mysql"
        return [*self.program("mysqld"), "--no-defaults", "--user=root", f"--basedir={self.kit}",
                f"--lc-messages-dir={share}", f"--character-sets-dir={share / 'charsets'}",
                f"--datadir={self.datadir}", f"--tmpdir={self.run_dir}", f"--log-error={self.error_log}"]

    def initialize(self) -> float:
        """``--initialize-insecure`` (root, no password); returns the seconds it took."""
        t0 = time.monotonic()
        proc = subprocess.run([*self._base(), "--initialize-insecure"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise LabError(f"mysqld --initialize-insecure: exit {proc.returncode}:\n{_tail(self.error_log)}")
        return time.monotonic() - t0

    def start(self, extra: list[str] = (), timeout: float = 120) -> float:
        """Start and wait until the socket answers; returns the seconds it took."""
        t0 = time.monotonic()
        cmd = [*self._base(), f"--socket={self.socket}", f"--pid-file={self.run_dir / 'mysqld.pid'}",
               "--port=0", "--skip-networking", *self.options, *extra]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise LabError(f"mysqld exited ({self.proc.returncode}) during start:\n{_tail(self.error_log)}")
            if self.socket.exists() and self.client("SELECT 1", check=False).returncode == 0:
                return time.monotonic() - t0
            time.sleep(0.2)
        self.kill()
        raise LabError(f"mysqld did not answer in {timeout:.0f} s:\n{_tail(self.error_log)}")

    def stop(self, timeout: float = 60) -> None:
        """SHUTDOWN, then SIGKILL if it has not exited in *timeout* seconds."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.client("SHUTDOWN", check=False)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def client(self, sql: str, *, stdin: str | None = None, check: bool = True,
               timeout: float = 900) -> subprocess.CompletedProcess:
        """The kit's ``mysql`` client on the socket (batch mode, no column names)."""
        cmd = [*self.program("mysql"), "--no-defaults", "--user=root", f"--socket={self.socket}",
               f"--character-sets-dir={self.kit / 'share' / 'mysql' / 'charsets'}",
               "--batch", "--skip-column-names", "--raw"]
        if sql:
            cmd += ["-e", sql]
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise LabError(f"mysql -e {sql[:200]!r}: exit {proc.returncode}: {proc.stderr.strip()[-800:]}")
        return proc

    def rows(self, sql: str) -> list[list[str]]:
        """The result rows of *sql*, as lists of strings."""
        return [line.split("\t") for line in self.client(sql).stdout.splitlines() if line]

    def value(self, sql: str) -> str:
        rows = self.rows(sql)
        return rows[-1][0] if rows else ""


# --------------------------------------------------------------------------- backlogs and catch-ups


def read_json(path: Path) -> dict:
    """A lab run's JSON: *path*, or *path*.gz beside it when *path* is not there (the committed
    runs are stored gzipped: the tree that travels to the device, the carried kit included, must
    stay under 64 MiB), or a ``.gz`` path itself."""
    path = Path(path)
    if path.suffix != ".gz" and not path.exists() and path.with_name(path.name + ".gz").exists():
        path = path.with_name(path.name + ".gz")
    return json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_text())


def lab_stem(path: Path) -> str:
    """A lab JSON's name without ``.json`` or ``.json.gz``: what its kept binlogs' folder and its
    timelines file are named after."""
    name = Path(path).name
    for suffix in (".gz", ".json"):
        name = name.removesuffix(suffix)
    return name


def gtid_offsets(path: Path) -> list[int]:
    """Byte offsets of the GTID events (one per transaction) of a binlog file, in order."""
    data = path.read_bytes()
    pos, out = 4, []  # after the magic b"\xfebin"
    while pos + 19 <= len(data):
        _, etype, _, size, _ = EVENT_HEADER.unpack_from(data, pos)
        if size < 19:
            raise LabError(f"{path}: bad event size {size} at offset {pos}")
        if etype in GTID_TYPES:
            out.append(pos)
        pos += size
    return out


@dataclass(frozen=True)
class Backlog:
    """A carried backlog: its database dump, the source's binlog files and the GTID set."""

    name: str
    folder: Path
    transactions: int
    source_uuid: str
    files: tuple[str, ...]

    @classmethod
    def load(cls, folder: Path) -> "Backlog":
        m = json.loads((folder / "manifest.json").read_text())
        return cls(m["name"], folder, int(m["transactions"]), m["source_uuid"],
                   tuple(f["name"] for f in m["files"]))

    def count(self, fraction: float) -> int:
        """How many of its transactions (the first ones) a run with *fraction* applies."""
        return max(1, min(self.transactions, round(self.transactions * fraction)))

    def target(self, fraction: float) -> str:
        return f"{self.source_uuid}:1-{self.count(fraction)}"

    def prefix(self, n: int) -> list[tuple[Path, int | None]]:
        """The files that hold the first *n* transactions, each with the byte length to copy
        (None: all of it): the last one is cut where transaction n+1 begins, so that the relay
        log holds exactly the run's transactions and the applier then waits, threads alive."""
        out, left = [], n
        for name in self.files:
            path = self.folder / name
            if path not in _OFFSETS:
                _OFFSETS[path] = gtid_offsets(path)
            offsets = _OFFSETS[path]
            if left < len(offsets):
                out.append((path, offsets[left]))
                return out
            out.append((path, None))
            left -= len(offsets)
            if left == 0:
                return out
        return out


_OFFSETS: dict[Path, list[int]] = {}


def reset(server: Mysqld, backlog: Backlog, n: int, settings: dict) -> dict:
    """Back to the state before the backlog: no replica channel, no binlogs or GTIDs, the
    workload's database as the source had it, the backlog's first *n* transactions in place as
    the relay log, the run's settings, and a fresh binlog file for the catch-up.  Returns its
    steps' seconds."""
    t0 = time.monotonic()
    server.client("STOP REPLICA", check=False)
    # the load runs relaxed and in one transaction (the last run may have left 1/1 behind)
    server.client(f"RESET REPLICA ALL; DROP DATABASE IF EXISTS `{backlog.name}`; "
                  + "".join(f"SET GLOBAL {k}={v}; " for k, v in CONFIGS["relaxed"].items()))
    t1 = time.monotonic()
    server.client("", stdin="SET SESSION sql_log_bin=0; SET SESSION autocommit=0;\n"
                  + (backlog.folder / "schema.sql").read_text() + "\nCOMMIT;\n")
    t2 = time.monotonic()
    server.client("RESET BINARY LOGS AND GTIDS")
    names = []
    for i, (path, length) in enumerate(backlog.prefix(n), 1):
        name = f"relay-bin.{i:06d}"
        with path.open("rb") as src, (server.datadir / name).open("wb") as dst:
            dst.write(src.read() if length is None else src.read(length))
        names.append(f"./{name}\n")
    (server.datadir / "relay-bin.index").write_text("".join(names))
    server.client("CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=3306, "
                  "SOURCE_USER='root', RELAY_LOG_FILE='relay-bin.000001', RELAY_LOG_POS=4; "
                  + "".join(f"SET GLOBAL {k}={v}; " for k, v in settings.items())
                  + "FLUSH BINARY LOGS")  # the catch-up's transactions go to a file of their own
    return {"drop_s": round(t1 - t0, 3), "load_s": round(t2 - t1, 3), "relay_s": round(time.monotonic() - t2, 3)}


def settle(server: Mysqld, limit_s: float) -> dict:
    """Wait (at most *limit_s*) until InnoDB has flushed the reset's dirty pages and purged the
    last run's history, so that a catch-up does not pay for the one before it."""
    server.client("SET GLOBAL innodb_max_dirty_pages_pct=0")
    t0 = time.monotonic()
    while True:
        dirty, hist = server.rows(
            "SELECT (SELECT VARIABLE_VALUE FROM performance_schema.global_status WHERE "
            "VARIABLE_NAME='Innodb_buffer_pool_pages_dirty'), (SELECT COUNT FROM "
            "information_schema.INNODB_METRICS WHERE NAME='trx_rseg_history_len')")[0]
        # purge leaves a few hundred entries for later: below 1,000 it costs a catch-up nothing
        if (int(dirty) < 64 and int(hist) < 1000) or time.monotonic() - t0 > limit_s:
            break
        time.sleep(0.1)
    server.client("SET GLOBAL innodb_max_dirty_pages_pct=90")
    return {"dirty_pages": int(dirty), "history_len": int(hist), "seconds": round(time.monotonic() - t0, 3)}


#: /proc/stat's aggregate cpu line, in its order (proc(5)); guest time is counted in user already
PROC_STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def host_cpu(text: str | None = None) -> dict[str, float]:
    """The machine's CPU seconds by kind, summed over its processors (``/proc/stat``'s ``cpu``
    line, or *text*): a catch-up's delta says how busy the whole machine was and how much time the
    hypervisor gave to other guests (``steal``): what makes one round of a loaned VM slower than
    the next, which the replica's own counters do not show. {} where there is no /proc/stat."""
    if text is None:
        try:
            text = Path("/proc/stat").read_text()
        except OSError:
            return {}
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            return {k: int(v) / hz for k, v in zip(PROC_STAT_FIELDS, parts[1:])}
    return {}


def counters(server: Mysqld) -> dict[str, int]:
    """Cumulative counters a catch-up moves (one client call): status, applier retries, and the
    fsyncs (non-read/write file operations) of the redo log and the binlog: a durable run's
    commit groups."""
    names = ",".join(f"'{n}'" for n in STATUS)
    rows = server.rows(
        f"SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.global_status WHERE VARIABLE_NAME IN ({names}) "
        "UNION ALL SELECT 'retries', COALESCE(SUM(COUNT_TRANSACTIONS_RETRIES), 0) FROM "
        "performance_schema.replication_applier_status UNION ALL "
        "SELECT IF(EVENT_NAME LIKE '%innodb%', 'redo_fsyncs', 'binlog_fsyncs'), COUNT_MISC FROM "
        "performance_schema.file_summary_by_event_name WHERE EVENT_NAME IN "
        "('wait/io/file/innodb/innodb_log_file', 'wait/io/file/sql/binlog') UNION ALL "
        "SELECT IF(EVENT_NAME LIKE '%innodb%', 'redo_fsync_us', 'binlog_fsync_us'), SUM_TIMER_MISC DIV 1000000 "
        "FROM performance_schema.file_summary_by_event_name WHERE EVENT_NAME IN "
        "('wait/io/file/innodb/innodb_log_file', 'wait/io/file/sql/binlog')")
    return {name: int(value) for name, value in rows}


def applier_error(server: Mysqld) -> str:
    """The applier's last error (coordinator or any worker), or ''."""
    rows = server.rows("SELECT LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE FROM performance_schema."
                       "replication_applier_status_by_coordinator WHERE LAST_ERROR_NUMBER <> 0 UNION ALL "
                       "SELECT LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE FROM performance_schema."
                       "replication_applier_status_by_worker WHERE LAST_ERROR_NUMBER <> 0")
    return "; ".join(" ".join(r) for r in rows)[:1000]


def timed_apply(server: Mysqld, target: str, timeout_s: float) -> tuple[float, float]:
    """``START REPLICA SQL_THREAD`` until *target* is executed: (server seconds, wall seconds).

    One client session stamps ``SYSDATE(6)`` before the start and after the wait; a second
    polls the applier's errors (a failed applier would leave the wait hanging)."""
    sql = (f"SELECT UNIX_TIMESTAMP(SYSDATE(6)); START REPLICA SQL_THREAD; "
           f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{target}', {max(1, int(timeout_s))}); "
           f"SELECT UNIX_TIMESTAMP(SYSDATE(6));")
    t0 = time.perf_counter()
    proc = subprocess.Popen([*server.program("mysql"), "--no-defaults", "--user=root", f"--socket={server.socket}",
                             "--batch", "--skip-column-names", "--raw", "-e", sql],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    next_check = t0 + 1.0
    while proc.poll() is None:
        time.sleep(0.005)
        if time.perf_counter() > next_check:
            next_check += 1.0
            err = applier_error(server)
            if err:
                proc.kill()
                raise LabError(f"applier error: {err}")
    wall = time.perf_counter() - t0
    out, err = proc.communicate()
    lines = out.split()
    if proc.returncode != 0 or len(lines) != 3:
        raise LabError(f"timed catch-up client: exit {proc.returncode}: {err.strip()[-500:]} {out!r}")
    if lines[1] != "0":
        raise LabError(f"not caught up in {timeout_s:.0f} s (WAIT_FOR_EXECUTED_GTID_SET={lines[1]}); "
                       f"applier: {applier_error(server)}")
    return float(lines[2]) - float(lines[0]), wall


def current_binlog(server: "Mysqld") -> Path:
    """The binlog file the server writes now (the last in its binlog.index): a catch-up's own,
    since reset() flushed to a fresh one before it."""
    return server.datadir / Path((server.datadir / "binlog.index").read_text().split()[-1]).name


#: GTID_LOG_EVENT and ANONYMOUS_GTID_LOG_EVENT (libs/mysql/binlog/event/binlog_event.h): their body
#: is flags (1), the source's uuid (16), gno (8), the logical-clock type (1), last_committed and
#: sequence_number (8 each), then immediate_commit_timestamp (7 bytes, microseconds; its top bit
#: says an original_commit_timestamp follows), MySQL 8.0.1 and later (control_events.cpp Gtid_event).
GTID_EVENT_TYPES = (33, 34)
GTID_TS_AT = 1 + 16 + 8 + 1 + 8 + 8


def commit_stamps(path: Path) -> list[int]:
    """Every immediate_commit_timestamp (microseconds) of a binlog file written by this replica,
    in file order, read from its GTID events' headers (stdlib: the lab runs on a bare machine;
    lagadvisor's reader is the reference, tests/test_bench_manycore.py compares the two); [] when
    it holds none (before 8.0.1, or no transaction). A tagged GTID's event (type 42, 8.4+) is not
    read: its transaction is not counted (the lab's backlogs have none; compare.py takes a span
    only when it counts every transaction of the run)."""
    data = path.read_bytes()
    if data[:4] != b"\xfebin":
        raise LabError(f"{path}: not a binlog file")
    pos, out = 4, []
    while pos + 19 <= len(data):
        kind, size = data[pos + 4], struct.unpack_from("<I", data, pos + 9)[0]
        if size < 19 or pos + size > len(data):
            break   # the file's tail is still being written: what is complete is read
        if kind in GTID_EVENT_TYPES and size >= 19 + GTID_TS_AT + 7:
            raw = int.from_bytes(data[pos + 19 + GTID_TS_AT:pos + 19 + GTID_TS_AT + 7], "little")
            out.append(raw & ((1 << 55) - 1))
        pos += size
    return out


def commit_span(path: Path) -> tuple[int, int, int] | None:
    """(first, last immediate_commit_timestamp in microseconds, GTID events) of a binlog file
    written by this replica (:func:`commit_stamps`); None when it holds no such timestamp."""
    stamps = commit_stamps(path)
    return (stamps[0], stamps[-1], len(stamps)) if stamps else None


#: A catch-up's gaps between two consecutive commits of at least this many microseconds are
#: recorded (:func:`long_gaps`): the 16-core lab's stalls were 45-101 ms (InnoDB's GTID persister,
#: docs/accuracy.md), seen so far only in the kept 16-worker binlogs; the mixed backlog's largest
#: transactions make 41-51 ms gaps at the same transactions every round.
LONG_GAP_US = 20_000
#: The most long gaps recorded per catch-up (the longest first).
LONG_GAPS_KEPT = 20


def long_gaps(stamps: list[int], min_us: int = LONG_GAP_US, keep: int = LONG_GAPS_KEPT) -> dict:
    """The gaps of at least ``min_us`` between consecutive commits of one catch-up's binlog
    (:func:`commit_stamps`): their count and sum, and the ``keep`` longest as [transaction index,
    gap in microseconds], longest first, so every worker count's catch-ups show where the replica
    stopped committing, not only the kept binlogs'."""
    gaps = [(k, b - a) for k, (a, b) in enumerate(zip(stamps, stamps[1:]), 1) if b - a >= min_us]
    top = sorted(gaps, key=lambda g: (-g[1], g[0]))[:keep]
    return {"min_us": min_us, "count": len(gaps), "sum_us": sum(g for _, g in gaps), "longest": [list(g) for g in top]}


def kept_tag(workload: str, config: str, workers: int, round_: int) -> str:
    """A kept catch-up's file name stem: ``WL-CFG-wN`` for the first round (the name every
    committed run used), ``WL-CFG-wN-rR`` for round R."""
    return f"{workload}-{config}-w{workers}" + ("" if round_ == 1 else f"-r{round_}")


def parse_kept_tag(tag: str) -> tuple[str, str, int, int] | None:
    """:func:`kept_tag`'s inverse: (workload, config, workers, round), or None for another name."""
    m = re.fullmatch(r"(.+)-(relaxed|durable)-w(\d+)(?:-r(\d+))?", tag)
    return (m.group(1), m.group(2), int(m.group(3)), int(m.group(4) or 1)) if m else None


def pack_order(name: str) -> tuple:
    """The order kept binlogs (``TAG.binlog.N.gz``) go into the tars (what does not fit is not
    sent): the first round's before the others, then relaxed before durable, then by name."""
    tag = parse_kept_tag(name.split(".binlog.", 1)[0])
    return (tag is not None and tag[3] != 1, "-relaxed-" not in name, name)


def keep_binlog(server: Mysqld, before: set[str], dest: Path, tag: str) -> list[str]:
    """gzip the binlog files the catch-up wrote (not in *before*) to ``dest/TAG.binlog.N.gz``."""
    server.client("FLUSH BINARY LOGS")
    index = (server.datadir / "binlog.index").read_text().split()
    kept = []
    for line in index[:-1]:
        name = Path(line).name
        if name in before:
            continue
        out = dest / f"{tag}.{name}.gz"
        with (server.datadir / name).open("rb") as src, gzip.open(out, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        kept.append(out.name)
    return kept


def instrument_summary(server: Mysqld, top: int = 40) -> dict:
    """Where the time went, per thread kind (``performance_schema.threads.NAME``): every stage
    and the *top* waits by time (count, seconds), read while the applier's threads still live
    (a thread's rows leave the per-thread tables when it ends), and their ``breakdown``."""
    full: dict[str, dict] = {}
    for table, kind in (("events_stages_summary_by_thread_by_event_name", "stages"),
                        ("events_waits_summary_by_thread_by_event_name", "waits")):
        rows = server.rows(f"SELECT t.NAME, s.EVENT_NAME, SUM(s.COUNT_STAR), SUM(s.SUM_TIMER_WAIT) FROM "
                           f"performance_schema.{table} s JOIN performance_schema.threads t USING (THREAD_ID) "
                           "WHERE s.COUNT_STAR > 0 GROUP BY t.NAME, s.EVENT_NAME")
        per: dict[str, dict] = {}
        for thread, event, count, wait in rows:
            per.setdefault(thread, {})[event] = [int(count), round(int(wait) / 1e12, 6)]
        full[kind] = per
    out = {kind: {thread: dict(sorted(evs.items(), key=lambda kv: -kv[1][1])[:top])
                  for thread, evs in sorted(per.items())} for kind, per in full.items()}
    out["breakdown"] = breakdown(full["stages"], full["waits"])
    out["threads"] = {name: int(n) for name, n in server.rows(
        "SELECT NAME, COUNT(*) FROM performance_schema.threads GROUP BY NAME")}
    return out


def read_timeline(server: Mysqld) -> dict:
    """The catch-up's per-transaction timeline (bench/manycore/timeline.py) from the histories,
    read while the applier's threads still live (their names are in ``threads``), with the
    histories' row counts and sizes (a full history lost its oldest rows)."""
    threads = {int(t): name for t, name in server.rows(
        f"SELECT THREAD_ID, NAME FROM performance_schema.threads WHERE NAME IN ('{WORKER}', '{COORDINATOR}')")}
    trx = [(int(t), g, int(a), int(b)) for t, g, a, b in server.rows(
        "SELECT THREAD_ID, GTID, TIMER_START, TIMER_END FROM performance_schema.events_transactions_history_long "
        "WHERE STATE = 'COMMITTED' AND TIMER_END IS NOT NULL")]
    stages = [(int(t), n, int(a), int(b)) for t, n, a, b in server.rows(
        "SELECT THREAD_ID, EVENT_NAME, TIMER_START, TIMER_END FROM performance_schema.events_stages_history_long "
        f"WHERE EVENT_NAME IN ('{timeline.WAIT_ORDER}', '{timeline.WAIT_DEPENDENCY}') AND TIMER_END IS NOT NULL")]
    tl = timeline.build(threads, trx, stages)
    tl["history_rows"] = {t: int(server.value(f"SELECT COUNT(*) FROM performance_schema.{t}"))
                          for t in ("events_transactions_history_long", "events_stages_history_long")}
    tl["history_size"] = {v: int(server.value(f"SELECT @@performance_schema_{v}_size"))
                          for v in ("events_transactions_history_long", "events_stages_history_long")}
    return tl


COORDINATOR, WORKER = "thread/sql/replica_sql", "thread/sql/replica_worker"
#: Worker stages that are not applying a transaction's rows.
WORKER_NOT_APPLY = ("stage/sql/Waiting for an event from Coordinator",
                    "stage/sql/Waiting for preceding transaction to commit", "stage/sql/waiting for handler commit")


def breakdown(stages: dict[str, dict], waits: dict[str, dict]) -> dict[str, float]:
    """The applier's thread-seconds by what they were doing (summed over the workers):

    * coordinator: reading the relay log, waiting for workers (queues full, or a transaction
      whose dependency has not committed);
    * workers: idle (no work from the coordinator), applying rows (every other stage),
      waiting for the preceding transaction to commit (commit order), committing ("waiting for
      handler commit": the binlog group commit with its flush, sync and commit stages);
    * inside the commit, from the waits: the group commit's queues and locks
      (``MYSQL_BIN_LOG::*``), the redo log's and the binlog's file I/O (fsyncs included),
      InnoDB's mutexes and rw-locks (contention)."""
    coord, work, wwait = stages.get(COORDINATOR, {}), stages.get(WORKER, {}), waits.get(WORKER, {})

    def total(events: dict, keep) -> float:
        return round(sum(v[1] for k, v in events.items() if keep(k)), 6)

    return {
        "coordinator_read_s": total(coord, lambda k: "Reading event from the relay log" in k),
        "coordinator_wait_workers_s": total(coord, lambda k: "waiting for replica workers" in k.lower()),
        "coordinator_wait_dependency_s": total(coord, lambda k: "Waiting for dependent transaction" in k),
        "worker_idle_s": total(work, lambda k: k == WORKER_NOT_APPLY[0]),
        "worker_apply_s": total(work, lambda k: k not in WORKER_NOT_APPLY),
        "worker_commit_order_wait_s": total(work, lambda k: k == WORKER_NOT_APPLY[1]),
        "worker_commit_s": total(work, lambda k: k == WORKER_NOT_APPLY[2]),
        "group_commit_wait_s": total(wwait, lambda k: "MYSQL_BIN_LOG::" in k),
        "redo_io_s": total(wwait, lambda k: k == "wait/io/file/innodb/innodb_log_file"),
        "binlog_io_s": total(wwait, lambda k: k == "wait/io/file/sql/binlog"),
        "innodb_contention_s": total(wwait, lambda k: k.startswith("wait/synch/") and "/innodb/" in k),
    }


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class RunSpec:
    """One catch-up of the plan."""

    phase: str  # probe | relaxed | durable | instrumented
    round: int
    workload: str
    config: str
    workers: int
    keep: bool = False

    @property
    def instrumented(self) -> bool:
        return self.phase == "instrumented"


#: The workloads whose first-round one-worker catch-up also keeps its replica binlog: the
#: dependency chains, where a one-worker calibration measures the coordinator's wake-up
#: (sim/calibrate.py ``take_out_wakeups``; ``calibrate_check.py --workers 1``), 2.2 MB in all.
ONE_WORKER_KEPT = ("hot", "fk")


#: The shapes whose relaxed catch-ups got slower from 8 to 16 workers on 16 cores in most rounds
#: while 1.1-4.2 transactions ran at once (bench/manycore_16core_steps.json): the instrumented round
#: also times them at 8 and 32 workers.
SLOWDOWN_SHAPES = ("fk", "hot", "nopk")


def build_plan(workloads: list[str], workers: list[int], rounds: int,
               instrumented: bool = True) -> list[RunSpec]:
    """Every run, most important first: the probes, the relaxed rounds, the durable rounds
    (each round every workload at every worker count, alternately up and down), then, unless
    *instrumented* is false, the instrumented round (16 workers for every workload, then 8, 32, 4
    and 1 for the first, then 4 and 32 for ``hot``: its hand-offs and wake-ups, bench/manycore/
    timeline.py; then :data:`SLOWDOWN_SHAPES` relaxed at 8 and 32)."""
    wmax = max(workers)
    keep_w = 16 if 16 in workers else wmax
    plan = [RunSpec("probe", 0, wl, cfg, w) for wl in workloads for cfg in CONFIGS for w in (1, wmax)]
    for cfg in CONFIGS:
        for r in range(1, rounds + 1):
            order = workers if r % 2 else list(reversed(workers))
            plan += [RunSpec(cfg, r, wl, cfg, w, keep=(w == keep_w or (w == 1 and r == 1 and wl in ONE_WORKER_KEPT)))
                     for wl in workloads for w in order]
    if not instrumented:
        return plan
    inst = [w for w in (16, 8, 32, 4, 1) if w in workers] or [wmax]
    plan += [RunSpec("instrumented", 1, wl, cfg, inst[0]) for cfg in CONFIGS for wl in workloads]
    # the first workload over the worker counts: at 4 its workers are the bound (the model's
    # largest miss on uniform), at 1 its stalls (timeline.stalls) have nothing parallel beside them
    plan += [RunSpec("instrumented", 1, workloads[0], cfg, w) for w in inst[1:] for cfg in CONFIGS]
    # the conflict-heavy shape's hand-offs and wake-ups at fewer and at more workers
    plan += [RunSpec("instrumented", 1, "hot", cfg, w) for w in (4, 32) if "hot" in workloads[1:]
             and w in workers and w != inst[0] for cfg in CONFIGS]
    # the shapes whose relaxed catch-ups slow from 8 to 16 workers with few transactions running at
    # once (steps.py, docs/accuracy.md "The curve's shape"): their timelines at 8 and 32 beside 16
    slow = [RunSpec("instrumented", 1, wl, "relaxed", w) for wl in SLOWDOWN_SHAPES if wl in workloads
            for w in (8, 32) if w in workers]
    return plan + [s for s in slow if s not in plan]


class Estimator:
    """Seconds a run will take: the probes' per-transaction times at 1 and the most workers,
    in between ``max(ratio, 1/sqrt(w))`` (conservative), and each workload's reset overhead
    (the median-high of what its runs took besides the catch-up: one slow first run does not
    shrink the plan); replaced by what the same run measured once it has."""

    def __init__(self, wmax: int):
        self.wmax = wmax
        self.per_trx: dict[tuple[str, str, int], float] = {}
        self.overhead: dict[str, float] = {}
        self.overheads: dict[str, list[float]] = {}
        self.measured: dict[tuple[str, str, int], float] = {}

    def learn(self, spec: RunSpec, n: int, seconds: float, total_s: float) -> None:
        key = (spec.workload, spec.config, spec.workers)
        if spec.phase == "probe":
            self.per_trx[key] = seconds / n
        elif not spec.instrumented:
            self.measured[key] = max(self.measured.get(key, 0.0), seconds)
        seen = self.overheads.setdefault(spec.workload, [])
        seen.append(total_s - seconds)
        self.overhead[spec.workload] = _median_high(seen)

    def apply_s(self, spec: RunSpec, n: int) -> float:
        key = (spec.workload, spec.config, spec.workers)
        if key in self.measured and spec.phase != "probe":
            return self.measured[key] * (1.3 if spec.instrumented else 1.0)
        one = self.per_trx.get((spec.workload, spec.config, 1), GUESS_TRX_S[spec.config])
        most = self.per_trx.get((spec.workload, spec.config, self.wmax), one)
        ratio = min(1.0, most / one)
        factor = 1.0 if spec.workers == 1 else max(ratio, spec.workers ** -0.5) if spec.workers < self.wmax else ratio
        return one * n * factor * (1.3 if spec.instrumented else 1.0)

    def total_s(self, spec: RunSpec, n: int) -> float:
        return self.apply_s(spec, n) + self.overhead.get(spec.workload, GUESS_OVERHEAD_S)


def choose_fraction(plan: list[RunSpec], backlogs: dict[str, Backlog], est: Estimator,
                    available_s: float, lo: float, hi: float) -> float:
    """The share of every backlog to apply so that the plan's runs fit in *available_s*."""
    fixed = sum(est.overhead.get(s.workload, GUESS_OVERHEAD_S) for s in plan)
    per_unit = sum(est.apply_s(s, backlogs[s.workload].transactions) for s in plan)
    if per_unit <= 0:
        return hi
    return max(lo, min(hi, (available_s - fixed) / per_unit))


# --------------------------------------------------------------------------- the lab


def summarize(runs: list[dict]) -> dict:
    """Per workload, durability and worker count: median seconds of the rounds, and the median
    of each round's speedup over the same round's one-worker run (paired: drift cancels)."""
    by: dict[tuple, dict[int, float]] = {}
    for r in runs:
        if r.get("phase") in ("relaxed", "durable") and "seconds" in r:
            by.setdefault((r["workload"], r["config"], r["workers"]), {})[r["round"]] = r["seconds"]
    out: dict[str, dict] = {}
    for (wl, cfg, w), rounds in sorted(by.items()):
        one = by.get((wl, cfg, 1), {})
        paired = [one[k] / v for k, v in rounds.items() if k in one and v > 0]
        out.setdefault(wl, {}).setdefault(cfg, {})[str(w)] = {
            "median_s": round(_median_high(list(rounds.values())), 4), "rounds": len(rounds),
            "seconds": [round(rounds[k], 4) for k in sorted(rounds)],
            "speedup": round(_median_high(paired), 3) if paired else None}
    return out


class Lab:
    """The replica, the backlogs, the plan and the JSON it keeps writing."""

    def __init__(self, args: argparse.Namespace, out: Path, workdir: Path):
        self.args, self.out, self.workdir = args, out, workdir
        self.keep_dir = workdir / "keep"
        self.keep_dir.mkdir(parents=True, exist_ok=True)
        self.server = Mysqld(workdir / "mysql-kit", workdir / "replica",
                             [*REPLICA_OPTIONS, f"--innodb-buffer-pool-size={args.buffer_pool}"])
        self.backlogs: dict[str, Backlog] = {}
        self.est = Estimator(max(args.workers))
        self.fraction = args.max_fraction
        self.instrumented_on = False
        self.timelines: dict[str, dict] = {}
        self.result: dict = {"lab": "bench/manycore/lab.py", "version": 1, "complete": False,
                             "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                             "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
                             "machine": machine_info(workdir), "timings": {}, "runs": [], "skipped": []}

    def write(self) -> None:
        """Rewrite ``manycore.json`` (atomically) with everything so far."""
        self.result["elapsed_s"] = round(time.monotonic() - T0, 1)
        self.result["summary"] = summarize(self.result["runs"])
        tmp = self.out / (JSON_NAME + ".tmp")
        tmp.write_text(json.dumps(self.result, indent=1) + "\n")
        tmp.replace(self.out / JSON_NAME)

    def remaining(self) -> float:
        return self.args.budget - (time.monotonic() - T0)

    def setup(self) -> None:
        """Unpack the kit and the backlogs, initialise and start the replica."""
        t = time.monotonic()
        unpack(self.args.kit, self.workdir)
        unpack(self.args.backlogs, self.workdir)
        self.result["timings"]["unpack_s"] = round(time.monotonic() - t, 2)
        self.result["kit"] = json.loads((self.server.kit / "kit.json").read_text())
        for name in self.args.workloads:
            b = Backlog.load(self.workdir / "backlogs" / name)
            self.backlogs[name] = b
            m = json.loads((b.folder / "manifest.json").read_text())
            self.result.setdefault("backlogs", {})[name] = {
                k: m[k] for k in ("description", "transactions", "seed", "target", "files") if k in m}
        self.server.run_dir.mkdir(parents=True)
        try:
            self.result["timings"]["initialize_s"] = round(self.server.initialize(), 2)
            self.result["timings"]["start_s"] = round(self.server.start(), 2)
        except LabError as err:
            if "aio" not in str(err).lower():
                raise
            log("native AIO refused here: again with --innodb-use-native-aio=OFF")
            self.server.kill()
            shutil.rmtree(self.server.run_dir)
            self.server.run_dir.mkdir(parents=True)
            self.server.options.append("--innodb-use-native-aio=OFF")
            self.result["timings"]["initialize_s"] = round(self.server.initialize(), 2)
            self.result["timings"]["start_s"] = round(self.server.start(), 2)
        self.result["mysqld"] = {"version": self.server.value("SELECT VERSION()"), "options": self.server.options,
                                 **self.cores_shown()}
        log(f"replica up: mysqld {self.result['mysqld']['version']} ({self.result['timings']})")
        self.write()

    def cores_shown(self) -> dict:
        """What the server's defaults show of the machine's cores (lagadvisor's server/cores.py reads
        them when --cores is not given): innodb_read_io_threads and whether it is the compiled
        default, to check the rule against the machine's own count."""
        try:
            return {"innodb_read_io_threads": self.server.value("SELECT @@innodb_read_io_threads"),
                    "innodb_read_io_threads_source": self.server.value(
                        "SELECT VARIABLE_SOURCE FROM performance_schema.variables_info "
                        "WHERE VARIABLE_NAME = 'innodb_read_io_threads'")}
        except LabError as err:
            return {"innodb_read_io_threads_error": str(err)[:200]}

    def restart_instrumented(self) -> None:
        """Restart with every stage and wait instrument on (once, before the instrumented runs)."""
        t = time.monotonic()
        self.server.stop()
        self.server.start(INSTRUMENT_OPTIONS)
        self.instrumented_on = True
        self.result["timings"]["instrumented_restart_s"] = round(time.monotonic() - t, 2)
        log(f"restarted with performance_schema stages and waits ({time.monotonic() - t:.1f} s)")

    def run_one(self, spec: RunSpec) -> dict:
        """Reset, configure, settle, time one catch-up; the record for the JSON."""
        s = self.server
        backlog = self.backlogs[spec.workload]
        fraction = min(self.args.probe_fraction, self.fraction) if spec.phase == "probe" else self.fraction
        n = backlog.count(fraction)
        t0 = time.monotonic()
        steps = reset(s, backlog, n, {**CONFIGS[spec.config], "replica_parallel_workers": spec.workers})
        settled = settle(s, self.args.settle)
        # every binlog file but the one the catch-up will write (reset() flushed to a fresh one)
        before = set(Path(x).name for x in (s.datadir / "binlog.index").read_text().split()[:-1])
        if spec.instrumented:
            s.client("TRUNCATE TABLE performance_schema.events_stages_summary_by_thread_by_event_name; "
                     "TRUNCATE TABLE performance_schema.events_waits_summary_by_thread_by_event_name; "
                     "TRUNCATE TABLE performance_schema.events_stages_history_long; "
                     "TRUNCATE TABLE performance_schema.events_transactions_history_long")
        c0, cpu0 = counters(s), thread_cpu(s.proc.pid)
        prepare_s = time.monotonic() - t0
        host0 = host_cpu()
        seconds, wall = timed_apply(s, backlog.target(fraction), max(5.0, self.remaining()))
        host1 = host_cpu()
        cpu1, c1 = thread_cpu(s.proc.pid), counters(s)
        rec = {**asdict(spec), "transactions": n, "fraction": round(fraction, 4), "seconds": round(seconds, 4),
               "wall_s": round(wall, 4), "prepare_s": round(prepare_s, 3), "reset": steps, "settle": settled,
               "cpu_s": {k: round(v - cpu0.get(k, 0.0), 3) for k, v in sorted(cpu1.items())
                         if v - cpu0.get(k, 0.0) > 0.005},
               "counters": {k: v - c0.get(k, 0) for k, v in sorted(c1.items())},
               "host_cpu_s": {k: round(v - host0.get(k, 0.0), 3) for k, v in host1.items()}}
        if spec.instrumented:
            rec["performance_schema"] = instrument_summary(s)
            try:
                tl = read_timeline(s)
                rec["timeline"] = {**timeline.latencies(tl), "history_rows": tl["history_rows"],
                                   "history_size": tl["history_size"]}
                self.timelines[f"{spec.workload}-{spec.config}-w{spec.workers}"] = tl
                self.write_timelines()
            except (LabError, ValueError, KeyError) as err:  # the timing above stands without it
                rec["timeline"] = {"error": str(err)[-500:]}
        # the catch-up's own first-to-last commit (its replica binlog, still open): its time less
        # the replica's start (3 coordinator commits a worker at START REPLICA, compare.py Start)
        own = current_binlog(s)
        stamps = commit_stamps(own) if own.name not in before else []
        if stamps:
            rec["commit_span_s"], rec["commits"] = round((stamps[-1] - stamps[0]) / 1e6, 6), len(stamps)
            rec["long_gaps"] = long_gaps(stamps)
        s.client("STOP REPLICA SQL_THREAD")
        if spec.keep:
            tag = kept_tag(spec.workload, spec.config, spec.workers, spec.round)
            rec["kept_binlogs"] = keep_binlog(s, before, self.keep_dir, tag)
            if spec.round == 1:   # at once (a run killed later still returns them); the rest at the end
                rec["binlog_tars"] = self.pack_binlogs()
        rec["total_s"] = round(time.monotonic() - t0, 3)
        self.est.learn(spec, n, seconds, rec["total_s"])
        return rec

    def write_timelines(self) -> None:
        """Rewrite ``$OUT/timelines.json.gz``: every instrumented run's timeline so far."""
        tmp = self.out / (TIMELINES_NAME + ".tmp")
        with gzip.open(tmp, "wt", compresslevel=6) as f:
            json.dump({"machine": self.result["machine"], "runs": self.timelines}, f, separators=(",", ":"))
        tmp.replace(self.out / TIMELINES_NAME)

    def pack_binlogs(self) -> list[str]:
        """The kept replica binlogs as tars of at most 15 MiB each in $OUT (the device returns
        at most 8 files of 16 MiB), in :func:`pack_order` (the first round's, relaxed first); what fits in no tar is listed in the
        JSON (``binlogs_not_sent``), not sent."""
        tars: list[list[Path]] = [[]]
        sizes = [0]
        not_sent = []
        for f in sorted(self.keep_dir.iterdir(), key=lambda p: pack_order(p.name)):
            size = f.stat().st_size + 1024
            if size > TAR_LIMIT:
                not_sent.append(f.name)
                continue
            if sizes[-1] + size > TAR_LIMIT:
                tars.append([])
                sizes.append(0)
            tars[-1].append(f)
            sizes[-1] += size
        not_sent += [f.name for files in tars[self.args.max_tars:] for f in files]
        self.result["binlogs_not_sent"] = not_sent
        names = []
        for i, files in enumerate(tars[:self.args.max_tars], 1):
            if not files:
                continue
            name = f"replica_binlogs_{i}.tar"
            with tarfile.open(self.out / name, "w") as tar:
                for f in files:
                    tar.add(f, arcname=f.name)
            names.append(name)
        return names

    def plan_fraction(self, rest: list[RunSpec]) -> None:
        """After the probes: the backlog share that makes the remaining plan fit the budget."""
        restart = 2 * self.result["timings"].get("start_s", 5.0) + 5.0
        available = self.remaining() - self.args.margin - restart
        self.fraction = choose_fraction(rest, self.backlogs, self.est, available,
                                        self.args.min_fraction, self.args.max_fraction)
        estimate = sum(self.est.total_s(s, self.backlogs[s.workload].count(self.fraction)) for s in rest)
        self.result["plan"] = {"fraction": round(self.fraction, 4), "runs": len(rest),
                               "estimated_s": round(estimate + restart, 1), "available_s": round(available, 1),
                               "transactions": {k: b.count(self.fraction) for k, b in self.backlogs.items()},
                               "per_trx_us": {f"{k[0]}/{k[1]}/{k[2]}": round(v * 1e6, 1)
                                              for k, v in sorted(self.est.per_trx.items())},
                               "overhead_s": {k: round(v, 2) for k, v in self.est.overhead.items()}}
        log(f"plan: fraction {self.fraction:.3f}, {len(rest)} runs, estimated {estimate + restart:.0f} s "
            f"of {available:.0f} s left")

    def execute(self, plan: list[RunSpec]) -> None:
        """Run the plan in order, skipping what would not fit; the JSON after every run."""
        rest = [s for s in plan if s.phase != "probe"]
        planned = False
        for spec in plan:
            if spec.phase != "probe" and not planned:
                self.plan_fraction(rest)
                planned = True
            n = self.backlogs[spec.workload].count(
                min(self.args.probe_fraction, self.fraction) if spec.phase == "probe" else self.fraction)
            need = self.est.total_s(spec, n)
            if spec.instrumented and not self.instrumented_on:
                need += 2 * self.result["timings"].get("start_s", 5.0) + 5.0
            if need > self.remaining() - self.args.margin:
                self.result["skipped"].append({**asdict(spec), "estimated_s": round(need, 2)})
                continue
            if spec.instrumented and not self.instrumented_on:
                self.restart_instrumented()
            try:
                rec = self.run_one(spec)
                log(f"{spec.phase} r{spec.round} {spec.workload} {spec.config} w={spec.workers}: "
                    f"{rec['seconds']:.3f} s ({rec['transactions']} trx, run {rec['total_s']:.1f} s)")
            except (LabError, subprocess.TimeoutExpired) as err:
                rec = {**asdict(spec), "error": str(err)[-2000:]}
                log(f"{spec.phase} {spec.workload} {spec.config} w={spec.workers}: FAILED: {err}")
                if self.server.proc is None or self.server.proc.poll() is not None:
                    rec["error_log"] = _tail(self.server.error_log)
                    self.result["runs"].append(rec)
                    self.server.start(INSTRUMENT_OPTIONS if self.instrumented_on else [])
                    continue
            self.result["runs"].append(rec)
            self.write()
        self.result["complete"] = not self.result["skipped"] and not any("error" in r for r in self.result["runs"])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="this 2-core machine: workers 1/2/4, a tenth of each backlog")
    ap.add_argument("--budget", type=float, default=450.0, help="wall seconds for everything (default 450)")
    ap.add_argument("--rounds", type=int, default=5,
                    help="interleaved rounds of every cell (default 5: a catch-up's time varies 10-13%% from "
                         "its cell's median whatever its length, so rounds, not longer catch-ups, narrow a median)")
    ap.add_argument("--no-instrumented", dest="instrumented", action="store_false",
                    help="leave out the instrumented round (a second call on a warm machine: its budget goes to rounds)")
    ap.add_argument("--workers", default=None, help="comma-separated (default 1,2,4,8,16,32; quick 1,2,4)")
    ap.add_argument("--workloads", default="uniform,hot,mixed,nopk,fk")
    ap.add_argument("--kit", type=Path, default=DATA / "mysql-kit.tar.xz")
    ap.add_argument("--backlogs", type=Path, default=DATA / "backlogs.tar.xz")
    ap.add_argument("--out", type=Path, default=None, help="default $OUT, else a new temporary folder")
    ap.add_argument("--workdir", type=Path, default=DATA / "run", help="unpacked kit and the datadir (local disk)")
    ap.add_argument("--buffer-pool", default=None, help="innodb_buffer_pool_size (default 2G; quick 512M)")
    ap.add_argument("--settle", type=float, default=0.1,
                    help="at most this long waiting for flush and purge (default 0.1: at 0.5 the wait ran out in 88%% "
                         "of the four 16-core runs' 720 timed catch-ups, took 27%% of a run, and what it left, dirty "
                         "pages and purge history, did not correlate with the catch-up's time, |r| <= 0.09)")
    ap.add_argument("--probe-fraction", type=float, default=None, help="backlog share of a probe (0.1; quick 0.04)")
    ap.add_argument("--max-fraction", type=float, default=None, help="largest backlog share (1; quick 0.1)")
    ap.add_argument("--min-fraction", type=float, default=None,
                    help="smallest backlog share (0.2, so that a kept binlog has the 1,000-2,000 transactions "
                         "calibrate needs; quick 0.02); below it runs are skipped instead")
    ap.add_argument("--margin", type=float, default=15.0, help="seconds kept free at the end of the budget")
    ap.add_argument("--max-tars", type=int, default=4,
                    help="replica binlog tars of 15 MiB in $OUT (8 files, 64 MiB in all come back: four tars "
                         "leave 4 MiB for the JSON, the log and the timelines, 1.3 MiB in the fifth run; with "
                         "three, twelve of that run's 50 kept binlogs stayed behind)")
    ap.add_argument("--keep-workdir", action="store_true")
    ap.add_argument("--cpus", type=int, default=None,
                    help="run on the first N of this machine's CPUs (sched_setaffinity, inherited by mysqld and "
                         "every thread it starts): a replica of N cores on the same machine; the JSON's "
                         "machine.cores_usable says N, and compare.py simulates --cores N")
    args = ap.parse_args(argv)
    q = args.quick
    args.workers = [int(x) for x in (args.workers or ("1,2,4" if q else "1,2,4,8,16,32")).split(",")]
    args.workloads = [w for w in args.workloads.split(",") if w]
    args.buffer_pool = args.buffer_pool or ("512M" if q else "2G")
    args.probe_fraction = args.probe_fraction or (0.04 if q else 0.1)
    args.max_fraction = args.max_fraction or (0.1 if q else 1.0)
    args.min_fraction = args.min_fraction or (0.02 if q else 0.2)
    return args


@contextmanager
def probe_replica(workload: str, workers: str, options: list[str], prefix: str):
    """A replica of the lab's kit for a probe on this machine or the device (stall_probe.py,
    startup_probe.py): ``--quick`` setup with one backlog, restarted with ``options`` (more server
    options, e.g. :data:`INSTRUMENT_OPTIONS`) when given; yields the :class:`Lab` (its ``server``,
    ``backlogs`` and ``result["machine"]``), then stops the server and removes its folder."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    out = work / "out"
    out.mkdir()
    (work / "run").mkdir()
    args = parse_args(["--quick", "--workloads", workload, "--workers", workers, "--out", str(out),
                       "--workdir", str(work / "run")])
    probe = Lab(args, out, work / "run")
    try:
        probe.setup()
        if options:
            probe.server.stop()
            probe.server.start(options)
        yield probe
    finally:
        probe.server.stop()
        probe.server.kill()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out or Path(os.environ.get("OUT") or tempfile.mkdtemp(prefix="manycore-out-"))
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout`: still write the JSON
    if args.cpus:
        cpus = sorted(os.sched_getaffinity(0))
        if not 1 <= args.cpus <= len(cpus):
            raise SystemExit(f"--cpus {args.cpus}: this machine lets the lab use {len(cpus)}")
        os.sched_setaffinity(0, cpus[:args.cpus])   # before mysqld starts: it and its threads inherit it
    lab = Lab(args, out, args.workdir)
    log(f"machine: {lab.result['machine']}; results in {out / JSON_NAME}")
    try:
        lab.setup()
        lab.execute(build_plan(args.workloads, args.workers, args.rounds, args.instrumented))
    finally:
        lab.result["error_log_tail"] = _tail(lab.server.error_log, 15)
        lab.server.stop()
        lab.server.kill()
        shutil.rmtree(lab.server.sock_dir, ignore_errors=True)
        if lab.keep_dir.is_dir() and any(lab.keep_dir.iterdir()):
            lab.result["binlog_tars"] = lab.pack_binlogs()   # every round's kept binlogs, the first round's first
        lab.write()
        if not args.keep_workdir:
            shutil.rmtree(args.workdir, ignore_errors=True)
    runs = lab.result["runs"]
    log(f"done: {len(runs)} runs ({sum('error' in r for r in runs)} failed), {len(lab.result['skipped'])} "
        f"skipped, {lab.result['elapsed_s']} s; {out / JSON_NAME}")
    for wl, cfgs in lab.result["summary"].items():
        for cfg, ws in cfgs.items():
            cells = ", ".join(f"{w}: {v['median_s']:.2f}s {v['speedup'] or 0:.2f}x" for w, v in ws.items())
            print(f"  {wl:8} {cfg:8} {cells}")
    return 0 if lab.result["complete"] else 1


if __name__ == "__main__":
    sys.exit(main())
