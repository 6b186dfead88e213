"""Timing `lagadvisor eta --watch` against a real catch-up (MySQL 9.x, loopback): shared by
tests/sim/test_eta_timely.py and bench/eta_backlog.py.

The replica's SQL thread is started and `eta` is started at the same moment; each JSON line eta
prints is stamped with the wall time it arrives (stdout read line by line as it comes), while the
replica is polled every 0.2 s until the source's gtid_executed is inside its own: the measured
end of the catch-up. eta's own CPU seconds come from ``os.wait4``.

The relay logs are read the way a DBA on the replica's host reads them: the path in the
replica's ``@@relay_log_index`` opens here (:func:`relay_logs_here`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

#: The least-privilege user eta connects as (issue 38: SELECT on performance_schema, PROCESS,
#: REPLICATION CLIENT, REPLICATION SLAVE); its password goes through LAGADVISOR_PASSWORD.
ETA_USER, ETA_PASSWORD = "eta", "pw"
ETA_GRANTS = (f"CREATE USER {ETA_USER}@'%' IDENTIFIED BY '{ETA_PASSWORD}'; "
              f"GRANT SELECT ON performance_schema.* TO {ETA_USER}@'%'; "
              f"GRANT PROCESS, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO {ETA_USER}@'%'")
#: How often the replica is asked whether it has caught up (the catch-up end's resolution).
POLL_S = 0.2


def relay_logs_here() -> None:
    """Make a chroot server's relay logs readable here where the server says they are
    (``scripts/realservers.py``'s ``same_host_paths``: ``/var/lib/lagadvisor`` links to the chroot's
    data directories), as they are on a replica's own host."""
    import oracle

    oracle.realservers.same_host_paths()


def connect(port: int):
    import pymysql

    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)


def one(conn, sql: str, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        row = cur.fetchone()
    return None if row is None else row[0]


def gtid_executed(conn) -> str:
    return (one(conn, "SELECT @@GLOBAL.gtid_executed") or "").replace("\n", "")


def wait_received(rep, gtids: str, timeout_s: float = 600) -> float:
    """Wait until every GTID of ``gtids`` is in the replica's relay log; seconds waited."""
    t = time.monotonic()
    while not one(rep, "SELECT GTID_SUBSET(%s, RECEIVED_TRANSACTION_SET) FROM "
                       "performance_schema.replication_connection_status WHERE CHANNEL_NAME = ''", (gtids,)):
        if time.monotonic() - t > timeout_s:
            raise RuntimeError(f"the replica did not receive the backlog in {timeout_s:.0f} s")
        time.sleep(0.1)
    return time.monotonic() - t


def backlog_size(rep) -> int:
    """Received but not executed transactions on the replica, counted by the server."""
    text = one(rep, "SELECT GTID_SUBTRACT(RECEIVED_TRANSACTION_SET, @@GLOBAL.gtid_executed) FROM "
                    "performance_schema.replication_connection_status WHERE CHANNEL_NAME = ''") or ""
    n = 0
    for part in text.replace("\n", "").split(","):
        for iv in part.strip().split(":")[1:]:
            if iv and iv[0].isdigit():
                lo, _, hi = iv.partition("-")
                n += int(hi or lo) - int(lo) + 1
    return n


@dataclass
class Watched:
    """One catch-up with eta watching it; times in seconds after :attr:`t0_wall` (the moment
    just before eta and the SQL thread were started)."""

    t0_wall: float
    sql_thread_started_s: float
    #: (arrival, parsed JSON line) for every line eta printed, in order
    lines: list[tuple[float, dict]]
    catch_up_s: float | None          # the first poll that found it caught up (None: not within the timeout)
    not_caught_up_s: float | None     # the poll before it, which did not (the end lies between the two)
    eta_exit: int | None              # eta's exit status (None: killed, see eta_killed)
    eta_exited_s: float | None
    eta_cpu_s: float | None           # user + system, from os.wait4
    eta_killed: bool = False
    stderr: str = ""
    unparsed: list[str] = field(default_factory=list)

    def estimates(self) -> list[dict]:
        """Each estimate: when it arrived and was made, its current-settings ETA and the real
        remaining time from when it was made (the error is ETA / real - 1)."""
        out = []
        for arrival, line in self.lines:
            made = line["at"] - self.t0_wall if isinstance(line.get("at"), (int, float)) else arrival
            cur = next((o for o in line.get("options", ()) if o.get("current")), {})
            eta = cur.get("eta_seconds")
            real = None if self.catch_up_s is None else self.catch_up_s - made
            # An estimate that found nothing left came after the catch-up (between two polls,
            # perhaps): no prediction to score.
            after = line.get("transactions_left") == 0 or real is None or real <= 0
            err = None if after or eta is None else eta / real - 1
            out.append({"arrival_s": arrival, "made_s": made, "transactions_left": line.get("transactions_left"),
                        "eta_seconds": eta, "real_remaining_s": real, "before_catch_up": not after, "error": err})
        return out


def watch_catch_up(rep_port: int, source_gtids: str, eta_args: list[str], *, env: dict,
                   catch_up_timeout_s: float = 900, exit_grace_s: float = 120) -> Watched:
    """Start the replica's SQL thread and ``lagadvisor eta ETA_ARGS`` together; stamp eta's lines
    as they arrive; poll until the replica has executed ``source_gtids``; wait for eta to exit
    (killed ``exit_grace_s`` after the catch-up, or at the timeout)."""
    rep = connect(rep_port)
    lines: list[tuple[float, str]] = []
    err_chunks: list[str] = []
    t0_wall, t0 = time.time(), time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "lagadvisor", "eta", *eta_args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1, env=env)
    try:
        with rep.cursor() as cur:
            cur.execute("START REPLICA SQL_THREAD")
        started = time.monotonic() - t0

        def read_out():
            for text in proc.stdout:
                lines.append((time.monotonic() - t0, text))

        def read_err():
            err_chunks.append(proc.stderr.read())

        readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
        for t in readers:
            t.start()
        catch_up = not_yet = None
        while time.monotonic() - t0 < catch_up_timeout_s:
            asked = time.monotonic() - t0
            if one(rep, "SELECT GTID_SUBSET(%s, @@GLOBAL.gtid_executed)", (source_gtids,)):
                catch_up = asked
                break
            not_yet = asked
            time.sleep(max(0.0, POLL_S - (time.monotonic() - t0 - asked)))
        status = rusage = None
        exited = None
        killed = False
        deadline = time.monotonic() + (exit_grace_s if catch_up is not None else 0)
        while True:
            pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status, rusage, exited = st, ru, time.monotonic() - t0
                break
            if time.monotonic() >= deadline:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
                _, status, rusage = os.wait4(proc.pid, 0)
                exited = time.monotonic() - t0
                break
            time.sleep(0.05)
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code  # reaped here (os.wait4), not by Popen
        for t in readers:
            t.join(10)
    finally:
        if proc.returncode is None:
            proc.kill()
            proc.wait()
        rep.close()
    parsed, unparsed = [], []
    for arrival, text in lines:
        try:
            parsed.append((arrival, json.loads(text)))
        except ValueError:
            unparsed.append(text)
    return Watched(t0_wall, started, parsed, catch_up, not_yet, None if killed else code, exited,
                   rusage.ru_utime + rusage.ru_stime, killed, "".join(err_chunks), unparsed)
