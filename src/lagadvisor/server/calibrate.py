"""calibrate --host's sampling: a replica in service watched over a window (read-only), its
performance_schema polled and its own binlog streamed, into :class:`sim.live.LiveSample`, which
:func:`sim.live.fit_live` fits (see sim/live.py for what is read and why).

Needs (checked first; a missing grant or setting is one line saying how to enable it, and every
missing instrument, consumer and thread is named in one line with the one UPDATE enabling all):
SELECT on ``performance_schema.*``, REPLICATION CLIENT (binlog position), REPLICATION SLAVE
(the binlog stream); instruments ``transaction``, ``wait/io/file/innodb/innodb_log_file``,
``wait/io/file/sql/binlog`` and the two wait stages enabled and timed; consumers
``global_instrumentation``, ``thread_instrumentation``, ``events_transactions_history_long``,
``events_stages_current``, ``events_stages_history_long``; ``thread/sql/replica_worker``
instrumented in ``setup_threads``; ``log_bin`` and ``log_replica_updates`` ON.
Sources: storage/perfschema (pfs_events_transactions.cc), sql/rpl_rli_pdb.cc (worker threads).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..binlog import FileSummary
from ..cpus import usable_cpus
from ..errors import ConfigError
from ..sim.live import COMMIT_STAGE, DEPENDENCY_STAGE, FsyncTotals, LiveCalibration, LiveSample, fit_live
from ..sim.backlog import lower_priority
from ..sim.model import CostModel
from .cores import replica_cores
from .stream import list_files

WORKER_THREAD = "thread/sql/replica_worker"
SQL_THREAD = "thread/sql/replica_sql"  # the applier itself when replica_parallel_workers = 0
REDO = "wait/io/file/innodb/innodb_log_file"
BINLOG = "wait/io/file/sql/binlog"
#: A worker's waits inside a transaction that are not its own work: for the coordinator to hand
#: it the transaction's next event (rpl_rli_pdb.cc ``pop_jobs_item``), and for its turn to commit
#: (rpl_replica_commit_order_manager.cc ``Commit_order_manager::wait``).
WAIT_STAGES = ("stage/sql/Waiting for an event from Coordinator",
               "stage/sql/Waiting for preceding transaction to commit")
INSTRUMENTS = ("transaction", REDO, BINLOG, *WAIT_STAGES)
CONSUMERS = ("global_instrumentation", "thread_instrumentation", "events_transactions_history_long",
             "events_stages_current", "events_stages_history_long")
#: Optional: with these on, each fsync of the redo log and the binlog is timed, and whether the
#: replica's storage runs the two at once is measured (:func:`sim.live.fsync_overlap`).
FSYNC_CONSUMERS = ("events_waits_current", "events_waits_history_long")
#: How often the waits history is read when the fsyncs are timed, seconds.
FSYNC_POLL_S = 0.1


class SetupError(ConfigError):
    """What the replica lacks for a live calibration, in one line with how to enable it."""


def _rows(cur, sql: str, args=()) -> list[tuple]:
    cur.execute(sql, args)
    return list(cur.fetchall())


def _denied(err) -> bool:
    return bool(getattr(err, "args", None)) and err.args[0] in (1142, 1143, 1227, 1044, 1045, 1370)


def _probe(cur, sql: str, missing: str) -> None:
    """Run ``sql``; a permission error becomes :class:`SetupError` ``missing`` (any other error
    is raised as it is)."""
    import pymysql

    try:
        cur.execute(sql)
        cur.fetchall()
    except pymysql.err.MySQLError as err:
        if _denied(err):
            raise SetupError(missing) from None
        raise


def _timed(cur, instrument: str) -> bool:
    """An optional instrument is enabled and timed."""
    row = _rows(cur, "SELECT ENABLED, TIMED FROM performance_schema.setup_instruments WHERE NAME = %s", (instrument,))
    return bool(row) and tuple(row[0]) == ("YES", "YES")


def check_setup(conn) -> dict:
    """Check what a live calibration reads; the replica's settings (workers, durability...).
    Raises :class:`SetupError` naming the first missing grant, instrument, consumer or setting."""
    with conn.cursor() as cur:
        _probe(cur, "SELECT 1 FROM performance_schema.setup_instruments LIMIT 1",
               "missing grant: SELECT on performance_schema: GRANT SELECT ON performance_schema.* TO <user>")
        _probe(cur, "SHOW BINARY LOG STATUS", "missing grant: REPLICATION CLIENT (the binlog position): GRANT "
                                              "REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO <user>")
        grants = " ".join(g for (g,) in _rows(cur, "SHOW GRANTS"))
        if "REPLICATION SLAVE" not in grants and "ALL PRIVILEGES ON *.*" not in grants:
            raise SetupError("missing grant: REPLICATION SLAVE (to stream the replica's own binlog): GRANT "
                             "REPLICATION SLAVE ON *.* TO <user>")
        settings = dict(zip(("log_bin", "log_replica_updates", "sync_binlog", "flush_log", "workers",
                             "preserve", "binlog_format", "version", "hostname"),
                            _rows(cur, "SELECT @@log_bin, @@log_replica_updates, @@sync_binlog, "
                                       "@@innodb_flush_log_at_trx_commit, @@replica_parallel_workers, "
                                       "@@replica_preserve_commit_order, @@binlog_format, @@version, "
                                       "@@hostname")[0]))
        if not settings["log_bin"] or not settings["log_replica_updates"]:
            raise SetupError("the replica does not write what it applies to its binlog: start it with log_bin and "
                             "log_replica_updates=ON (read-only variables: a restart)")
        enabled = {n: (e, t) for n, e, t in _rows(
            cur, "SELECT NAME, ENABLED, TIMED FROM performance_schema.setup_instruments WHERE NAME IN ("
                 + ", ".join(["%s"] * len(INSTRUMENTS)) + ")", INSTRUMENTS)}
        consumers = dict(_rows(cur, "SELECT NAME, ENABLED FROM performance_schema.setup_consumers"))
        threads = _rows(cur, "SELECT ENABLED FROM performance_schema.setup_threads WHERE NAME = %s", (WORKER_THREAD,))
        problem = setup_missing([n for n in INSTRUMENTS if n in enabled and enabled[n] != ("YES", "YES")],
                                [n for n in CONSUMERS if consumers.get(n) != "YES"],
                                bool(threads) and threads[0][0] != "YES")
        absent = [n for n in INSTRUMENTS if n not in enabled]
        if absent:   # a release without them: nothing to enable
            problem = (f"{problem} " if problem else "") + (
                f"performance_schema has no instrument {', '.join(absent)}: this server cannot be calibrated live "
                "(calibrate its binlog files instead)")
        if problem is not None:
            raise SetupError(problem)
        # the running applier's workers (its worker rows), not a value set since it started
        on = _rows(cur, "SELECT COUNT(*) FROM performance_schema.replication_applier_status_by_worker "
                        "WHERE CHANNEL_NAME = '' AND SERVICE_STATE = 'ON' AND WORKER_ID > 0")
        if on and int(on[0][0]):
            settings["workers"] = int(on[0][0])
        settings["fsync_waits"] = all(consumers.get(name) == "YES" for name in FSYNC_CONSUMERS)
        settings["commit_stage"] = _timed(cur, COMMIT_STAGE)
        settings["dependency_stage"] = _timed(cur, DEPENDENCY_STAGE)
        running = _rows(cur, "SELECT SERVICE_STATE FROM performance_schema.replication_applier_status")
        if not running or all(s != "ON" for (s,) in running):
            raise SetupError("the replica's applier is not running (START REPLICA SQL_THREAD): nothing to measure")
    settings["durable"] = int(settings["sync_binlog"]) == 1 and int(settings["flush_log"]) == 1
    return settings


def setup_missing(instruments: list[str], consumers: list[str], workers_untracked: bool) -> str | None:
    """Everything performance_schema lacks for a live calibration, in one line: the instruments
    not enabled and timed, the consumers off, the workers' threads not instrumented; then the one
    UPDATE that enables all of it (a multi-table UPDATE over the setup tables concerned: each
    named row exists, so the join is never empty) and the my.cnf lines that keep it. None: nothing
    missing."""
    parts, tables, sets, wheres, cnf = [], [], [], [], []

    def names(xs: list[str]) -> str:
        return ", ".join(f"'{x}'" for x in xs)

    if instruments:
        parts.append(f"instrument{'s' if len(instruments) > 1 else ''} {', '.join(instruments)} not enabled and timed")
        tables.append("performance_schema.setup_instruments i")
        sets += ["i.ENABLED='YES'", "i.TIMED='YES'"]
        wheres.append(f"i.NAME IN ({names(instruments)})")
        cnf += [f"performance-schema-instrument='{n}=ON'" for n in instruments]
    if consumers:
        parts.append(f"consumer{'s' if len(consumers) > 1 else ''} {', '.join(consumers)} off")
        tables.append("performance_schema.setup_consumers c")
        sets.append("c.ENABLED='YES'")
        wheres.append(f"c.NAME IN ({names(consumers)})")
        cnf += [f"performance-schema-consumer-{n.replace('_', '-')}=ON" for n in consumers]
    if workers_untracked:
        parts.append(f"thread {WORKER_THREAD} not instrumented")
        tables.append("performance_schema.setup_threads t")
        sets.append("t.ENABLED='YES'")
        wheres.append(f"t.NAME = '{WORKER_THREAD}'")
    if not parts:
        return None
    if len(tables) == 1:   # one table: no alias needed
        alias = tables[0].rsplit(" ", 1)[1] + "."
        update = (f"UPDATE {tables[0].rsplit(' ', 1)[0]} SET {', '.join(x.replace(alias, '') for x in sets)} "
                  f"WHERE {wheres[0].replace(alias, '')}")
    else:
        update = f"UPDATE {', '.join(tables)} SET {', '.join(sets)} WHERE {' AND '.join(wheres)}"
    restart = "; then restart the replica's SQL thread (STOP/START REPLICA SQL_THREAD)" if workers_untracked else ""
    keep = f" (my.cnf, to keep it: {'; '.join(cnf)})" if cnf else ""
    return f"performance_schema lacks what calibrate reads: {'; '.join(parts)}. Enable all of it: {update};{restart}{keep}"


def _file_io(cur) -> dict:
    return {n: (int(c), int(t)) for n, c, t in _rows(
        cur, "SELECT EVENT_NAME, COUNT_MISC, SUM_TIMER_MISC FROM performance_schema.file_summary_by_event_name "
             "WHERE EVENT_NAME IN (%s, %s)", (REDO, BINLOG))}


def _poll_transactions(cur, into: dict) -> None:
    """The applier's committed transactions into ``into``: key (thread, EVENT_ID) -> (GTID,
    TIMER_START, TIMER_END, END_EVENT_ID)."""
    for tid, eid, end_eid, gtid, start, end in _rows(
            cur, "SELECT h.THREAD_ID, h.EVENT_ID, h.END_EVENT_ID, h.GTID, h.TIMER_START, h.TIMER_END "
                 "FROM performance_schema.events_transactions_history_long h "
                 "JOIN performance_schema.threads t USING (THREAD_ID) "
                 "WHERE t.NAME IN (%s, %s) AND h.STATE = 'COMMITTED' AND h.TIMER_END IS NOT NULL",
            (WORKER_THREAD, SQL_THREAD)):
        if gtid and ":" in gtid:
            into[(tid, eid)] = (gtid, int(start), int(end), int(end_eid or eid))  # picoseconds


def _poll_stages(cur, w: _Watch, commits: dict | None = None) -> None:
    """The workers' wait stages into ``w.waits`` (the commit-order ones also into
    ``w.order_waits``), the coordinator's dependency waits into ``w.coordinator_waits`` and, given
    ``commits``, the workers' commit stages into it, in one read of the stages history: key
    (thread, event) -> (TIMER_START, TIMER_END)."""
    names = (*WAIT_STAGES, DEPENDENCY_STAGE, *((COMMIT_STAGE,) if commits is not None else ()))
    for tid, eid, thread, name, start, end in _rows(
            cur, "SELECT h.THREAD_ID, h.EVENT_ID, t.NAME, h.EVENT_NAME, h.TIMER_START, h.TIMER_END "
                 "FROM performance_schema.events_stages_history_long h "
                 "JOIN performance_schema.threads t USING (THREAD_ID) "
                 f"WHERE t.NAME IN (%s, %s) AND h.EVENT_NAME IN ({', '.join(['%s'] * len(names))}) "
                 "AND h.TIMER_END IS NOT NULL",
            (WORKER_THREAD, SQL_THREAD, *names)):
        span = (int(start), int(end))
        if name == DEPENDENCY_STAGE:
            if thread == SQL_THREAD:
                w.coordinator_waits[(tid, eid)] = span
        elif thread != WORKER_THREAD:
            continue
        elif name == COMMIT_STAGE:
            commits[(tid, eid)] = span
        else:
            w.waits[(tid, eid)] = span
            if name == WAIT_STAGES[1]:
                w.order_waits[(tid, eid)] = span


def _poll_fsyncs(cur, into: dict) -> None:
    for tid, eid, name, start, end in _rows(
            cur, "SELECT THREAD_ID, EVENT_ID, EVENT_NAME, TIMER_START, TIMER_END "
                 "FROM performance_schema.events_waits_history_long "
                 "WHERE EVENT_NAME IN (%s, %s) AND OPERATION = 'sync' AND TIMER_END IS NOT NULL", (REDO, BINLOG)):
        into[(tid, eid)] = (name == REDO, int(start), int(end))


def _position(cur) -> tuple[str, int]:
    row = _rows(cur, "SHOW BINARY LOG STATUS")[0]
    return row[0], int(row[1])




@dataclass
class _Watch:
    """What the polls read (keys (thread, EVENT_ID), picoseconds): what was already in the
    histories when the window began is before it."""

    server: dict
    seen: dict = field(default_factory=dict)
    seen_before: dict = field(default_factory=dict)
    waits: dict = field(default_factory=dict)
    order_waits: dict = field(default_factory=dict)
    coordinator_waits: dict = field(default_factory=dict)
    commit_stages: dict = field(default_factory=dict)
    fsyncs: dict = field(default_factory=dict)
    fsyncs_before: dict = field(default_factory=dict)
    io0: dict = field(default_factory=dict)
    io1: dict = field(default_factory=dict)
    file0: str = ""
    pos0: int = 0
    file1: str = ""


#: The replica's binlog of the window is read for at most this share of the window (at least
#: READ_MIN_S): with the window itself and the fit, calibrate --host ends within about twice its
#: window (plus seconds); a cut read fits the transactions read, and the evidence says so.
READ_SHARE, READ_MIN_S = 1.0, 5.0


def calibrate_live(settings: dict, window_s: float, *, base: CostModel | None = None, cores: int | None = None,
                   poll_s: float = 0.5, sleep=time.sleep, clock=time.monotonic, on_start=None,
                   on_tick=None, nice: int = 10) -> LiveCalibration:
    """A cost model from ``window_s`` seconds of a running replica (``settings``: pymysql
    connection settings, :func:`server.connection.pymysql_settings`). Reads only; see the module
    docstring for what it needs, sim/live.py for what it reads. ``cores``: the replica's; None: the
    ones its settings show (:mod:`.cores`), else this machine's; the evidence's ``cores`` says
    which (``from``: --cores, server or assumed; ``how``: the server's sentence). ``on_start(server settings)`` once the setup is checked, ``on_tick(elapsed_s,
    transactions)`` after each poll."""
    import pymysql

    # its polls, the binlog read and the fit run beside the applier on the replica's host: at a
    # lower CPU priority, as eta's backlog readers (threads started later inherit it)
    lower_priority(nice)
    try:
        conn = pymysql.connect(autocommit=True, **settings)
    except pymysql.err.MySQLError as err:
        raise ConfigError(f"cannot connect to the replica: {err.args[-1] if err.args else err}") from None
    try:
        watch = _watch(conn, window_s, poll_s, sleep, clock, on_start, on_tick)
        with conn.cursor() as cur:
            shown = (replica_cores(cur, pymysql.err.MySQLError, settings.get("host"), settings.get("unix_socket"))
                     if cores is None else None)
    except pymysql.err.MySQLError as err:
        raise ConfigError(f"reading the replica failed: {err.args[-1] if err.args else err}") from None
    finally:
        conn.close()
    chosen = cores or (shown.cores if shown is not None else None) or usable_cpus()
    sample, cut = _sample(settings, watch, window_s, clock() + max(READ_MIN_S, READ_SHARE * window_s), clock)
    result = fit_live(sample, base=base, cores=chosen)
    result.evidence["binlog_read_cut"] = cut
    result.evidence["cores"] = {"cores": chosen,
                                "from": "--cores" if cores else "server" if shown is not None else "assumed",
                                "how": shown.sentence() if shown is not None else None}
    return result


def _watch(conn, window_s: float, poll_s: float, sleep, clock, on_start, on_tick) -> _Watch:
    """The setup checked, then performance_schema polled over the window."""
    w = _Watch(check_setup(conn))
    if on_start is not None:
        on_start(w.server)
    with conn.cursor() as cur:
        w.io0 = _file_io(cur)
        _poll_transactions(cur, w.seen_before)
        _poll_stages(cur, w)
        time_fsyncs = w.server["fsync_waits"] and w.server["durable"]
        time_commits = time_fsyncs and w.server["commit_stage"]
        if time_fsyncs:
            _poll_fsyncs(cur, w.fsyncs_before)
        w.file0, w.pos0 = _position(cur)
        # events_waits_history_long keeps the last N waits of every kind (each row's table I/O
        # too): the fsyncs are read often enough not to lose most of them
        every = min(poll_s, FSYNC_POLL_S) if time_fsyncs else poll_s
        t0 = clock()
        while clock() - t0 < window_s:
            sleep(min(every, max(0.0, window_s - (clock() - t0))))
            _poll_transactions(cur, w.seen)
            _poll_stages(cur, w, w.commit_stages if time_commits else None)
            if time_fsyncs:
                _poll_fsyncs(cur, w.fsyncs)
            if on_tick is not None:
                on_tick(clock() - t0, len(set(w.seen) - set(w.seen_before)))
        w.io1 = _file_io(cur)
        w.file1, _pos1 = _position(cur)
    return w


def _sample(settings: dict, w: _Watch, window_s: float, deadline: float = float("inf"),
            clock=time.monotonic) -> tuple[LiveSample, str | None]:
    """The window's transactions and fsyncs, and the replica's binlog over it, as the model's
    sample; and, where the binlog read stopped at ``deadline``, how much it read."""
    window = {k: v for k, v in w.seen.items() if k not in w.seen_before}
    fsyncs = {k: f for k, f in w.fsyncs.items() if k not in w.fsyncs_before}
    files = list_files(settings, w.file0, w.file1)
    shapes, commits, cut = _applied(files, w.file0, w.pos0, deadline, clock)
    return LiveSample(window_s, w.server, window, w.waits, w.commit_stages, fsyncs,
                      FsyncTotals(w.io0.get(REDO, (0, 0)), w.io0.get(BINLOG, (0, 0))),
                      FsyncTotals(w.io1.get(REDO, (0, 0)), w.io1.get(BINLOG, (0, 0))),
                      shapes, tuple(commits), tuple(f.name for f in files), order_waits=w.order_waits,
                      coordinator_waits=w.coordinator_waits), cut


def _applied(files, file0: str, pos0: int, deadline: float = float("inf"),
             clock=time.monotonic) -> tuple[dict, list, str | None]:
    """The window's transactions as the replica wrote them: GTID -> (inserts, updates, deletes,
    bytes, events), and (original, immediate commit timestamp, GTID) of those applied with a lag;
    read until ``deadline`` (then: what was read, in words)."""
    shapes, commits = {}, []
    for f in files:
        for t in f.read_transactions(FileSummary(str(f)), selector=lambda tm: frozenset()):
            if clock() > deadline:
                return shapes, commits, (f"the replica's binlog of the window read for its time budget only: "
                                         f"{len(shapes):,} transactions, up to {f.name}:{t.start_offset}")
            if f.name == file0 and t.start_offset < pos0 or not t.gtid or not t.rows:
                continue
            if t.original_commit_timestamp and t.original_commit_timestamp != t.immediate_commit_timestamp:
                commits.append((t.original_commit_timestamp, t.immediate_commit_timestamp, t.gtid))
            shapes[t.gtid] = (sum(s.inserts for s in t.tables), sum(s.updates for s in t.tables),
                              sum(s.deletes for s in t.tables), t.end_offset - t.start_offset, t.event_count)
    return shapes, commits, None
