"""eta's reads of a lagging replica (read-only): its snapshots (:class:`sim.eta.Snapshot`), its
settings and applier threads from performance_schema, where its backlog is (the relay logs, or
the source's binlogs), and the loop that hands them to :mod:`sim.eta`'s estimate.

Needs on the replica: SELECT on performance_schema (replication_* tables, threads), and, for the
relay logs, the files readable by this process; on the source (``--source``): REPLICATION SLAVE
and REPLICATION CLIENT (SHOW BINARY LOGS, SHOW BINLOG EVENTS, the dump).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace

from ..errors import ConfigError, SchemaError
from ..sim.eta import (Estimate, Prediction, Snapshot, caught_up, cpu_seconds, earlier_predictions, estimate_now,
                       first_due, gtid_count, gtid_subset, note_read, parse_gtid_set, prediction_errors,
                       read_backlog)
from ..sim.model import CostModel, ReplicaConfig
from .connection import ServerOptions, as_text as _s, connect, pymysql_settings
from .cores import replica_cores as cores_of
from .stream import list_files


def _q(cur, sql: str, args=()):
    cur.execute(sql, args)
    return cur.fetchall()


def _missing(err, what: str, grant: str) -> ConfigError:
    code = getattr(err, "errno", None)
    if code in (1142, 1143, 1227, 1044):
        return ConfigError(f"{what}: the user lacks {grant} ({_s(getattr(err, 'msg', err))})")
    if code == 1146:
        return ConfigError(f"{what}: performance_schema is not enabled on the replica (performance_schema=ON "
                           "is needed)")
    return ConfigError(f"{what}: {_s(getattr(err, 'msg', err))}")


def snapshot(conn) -> Snapshot:
    """What the replica has received and executed now (one consistent-enough read)."""
    import mysql.connector

    cur = conn.cursor()
    try:
        rows = _q(cur, "SELECT RECEIVED_TRANSACTION_SET, SERVICE_STATE FROM "
                       "performance_schema.replication_connection_status WHERE CHANNEL_NAME = ''")
        app = _q(cur, "SELECT SERVICE_STATE FROM performance_schema.replication_applier_status "
                      "WHERE CHANNEL_NAME = ''")
    except mysql.connector.Error as err:
        raise _missing(err, "reading performance_schema.replication_connection_status",
                       "SELECT on performance_schema (GRANT SELECT ON performance_schema.* TO the user)") from None
    if not rows:
        raise ConfigError("not a replica: performance_schema.replication_connection_status has no default channel")
    received = _s(rows[0][0]) or ""
    (executed, unapplied), = _q(cur, "SELECT @@GLOBAL.gtid_executed, GTID_SUBTRACT(%s, @@GLOBAL.gtid_executed)",
                                (received,))
    cur.close()
    return Snapshot(time.time(), received, _s(executed) or "", _s(unapplied) or "", _s(rows[0][1]) == "ON",
                    bool(app) and _s(app[0][0]) == "ON")


def replica_config(conn) -> ReplicaConfig:
    """The applier settings now: workers (the running applier's worker rows, else the variable it
    starts with: :func:`.schema._running`), preserve order, durability."""
    from .schema import _running

    cur = conn.cursor()
    v = {_s(k).lower(): _s(x) for k, x in _q(
        cur, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('replica_parallel_workers', "
             "'replica_preserve_commit_order', 'sync_binlog', 'innodb_flush_log_at_trx_commit')")}
    v.update(_running(cur))
    cur.close()
    return ReplicaConfig(int(v.get("replica_parallel_workers", 4) or 0),
                         str(v.get("replica_preserve_commit_order", "ON")).upper() in ("ON", "1"),
                         v.get("sync_binlog") == "1" and v.get("innodb_flush_log_at_trx_commit") == "1")


def replica_cores(conn, opts: ServerOptions):
    """The replica's logical processors: its host's where it runs here, else what its defaults
    show (:func:`.cores.replica_cores`), or None."""
    import mysql.connector

    cur = conn.cursor()
    try:
        return cores_of(cur, mysql.connector.Error, opts.host, opts.socket)
    finally:
        cur.close()


#: performance_schema thread states of the applier, summarized (sql/rpl_replica.cc, rpl_rli_pdb.cc stages).
_WAIT_KINDS = (("dependency", "waiting for dependent transaction"), ("commit order", "preceding transaction to commit"),
               ("coordinator", "waiting for an event from coordinator"), ("lock", "lock"),
               ("fsync", "sync"), ("fsync", "flush"), ("free worker", "slave worker to release"),
               ("free worker", "replica worker to release"), ("free worker", "waiting for workers"))


def worker_states(conn) -> list[dict]:
    """The applier threads' states now, each with the transaction it applies (if readable)."""
    import mysql.connector

    cur = conn.cursor()
    try:
        rows = _q(cur, "SELECT t.NAME, t.PROCESSLIST_STATE, w.APPLYING_TRANSACTION FROM performance_schema.threads t "
                       "LEFT JOIN performance_schema.replication_applier_status_by_worker w ON "
                       "w.THREAD_ID = t.THREAD_ID WHERE t.NAME IN ('thread/sql/replica_worker', "
                       "'thread/sql/replica_sql', 'thread/sql/slave_worker', 'thread/sql/slave_sql')")
    except mysql.connector.Error as err:
        raise _missing(err, "reading performance_schema.threads",
                       "SELECT on performance_schema (GRANT SELECT ON performance_schema.* TO the user)") from None
    finally:
        cur.close()
    out = []
    for name, state, trx in rows:
        st = (_s(state) or "idle")
        kind = next((k for k, needle in _WAIT_KINDS if needle in st.lower()), "working" if state else "idle")
        out.append({"thread": "coordinator" if _s(name).endswith("_sql") else "worker", "state": st,
                    "waiting_on": kind, "transaction": _s(trx) or None})
    return out


# -- the backlog's transactions ----------------------------------------------------------------


def source_files(src: ServerOptions, executed: str) -> list:
    """The source's binlogs from the newest whose Previous_gtids the replica has executed."""
    import mysql.connector

    conn = connect(src)
    try:
        cur = conn.cursor()
        try:
            names = [_s(r[0]) for r in _q(cur, "SHOW BINARY LOGS")]
        except mysql.connector.Error as err:
            raise _missing(err, "SHOW BINARY LOGS on the source", "REPLICATION CLIENT on the source") from None
        done = parse_gtid_set(executed)
        start = names[0] if names else None
        for name in reversed(names):
            try:
                evs = _q(cur, f"SHOW BINLOG EVENTS IN '{name}' LIMIT 3")
            except mysql.connector.Error as err:
                raise _missing(err, "SHOW BINLOG EVENTS on the source", "REPLICATION SLAVE on the source") from None
            prev = next((_s(e[5]) for e in evs if _s(e[2]) == "Previous_gtids"), "")
            if gtid_subset(parse_gtid_set(prev), done):
                start = name
                break
        cur.close()
    finally:
        conn.close()
    if start is None:
        raise ConfigError(f"the source {src.host}:{src.port} has no binary logs")
    settings = pymysql_settings(src.host, src.port, src.user, src.password, option_file=src.option_file,
                                tls=src.tls, socket=src.socket)
    return list(list_files(settings, start))


def relay_files(conn) -> list[str]:
    """The replica's relay logs when this process can read them (on the replica's host)."""
    cur = conn.cursor()
    (index,), = _q(cur, "SELECT @@GLOBAL.relay_log_index")
    (datadir,), = _q(cur, "SELECT @@GLOBAL.datadir")
    cur.close()
    index = _s(index) or ""
    path = index if os.path.isabs(index) else os.path.join(_s(datadir), index)
    try:
        with open(path, encoding="utf-8") as f:
            names = [ln.strip() for ln in f if ln.strip()]
    except OSError as err:
        raise ConfigError(f"the replica's relay logs are not readable here ({path}: {err.strerror}): give "
                          "--source HOST to stream the backlog from the source's binlogs") from None
    base = os.path.dirname(path)
    return [n if os.path.isabs(n) else os.path.join(base, n) for n in names]


def relay_start(conn, files: list[str]) -> tuple[int, int]:
    """Where the applier stands in the relay logs (``Relay_Log_File``/``Relay_Log_Pos`` of SHOW
    REPLICA STATUS: the coordinator's checkpoint, a transaction boundary): (file index, offset);
    (0, 0) when it cannot be read (the backlog is then read from the first relay log)."""
    import mysql.connector

    cur = conn.cursor(dictionary=True)
    try:
        rows = _q(cur, "SHOW REPLICA STATUS")
    except mysql.connector.Error:  # no REPLICATION CLIENT: read from the first file
        return 0, 0
    finally:
        cur.close()
    if not rows:
        return 0, 0
    name = os.path.basename(_s(rows[0].get("Relay_Log_File") or ""))
    pos = int(rows[0].get("Relay_Log_Pos") or 0)
    idx = next((i for i, f in enumerate(files) if os.path.basename(f) == name), None)
    return (idx, pos) if idx is not None and name else (0, 0)


def sample(conn, seconds: float, step: float = 0.25) -> list[Snapshot]:
    """Snapshots every ``step`` for ``seconds`` (at least two)."""
    snaps = [snapshot(conn)]
    end = snaps[0].at + seconds
    while True:
        time.sleep(max(0.0, min(step, end - time.time())))
        snaps.append(snapshot(conn))
        if snaps[-1].at >= end or not snaps[-1].unapplied:
            return snaps


def open_replica(opts: ServerOptions):
    try:
        return connect(opts)
    except SchemaError as err:
        raise ConfigError(str(err)) from None


def first_sample(conn, first: Snapshot, sample_s: float, reader, strata_read, step: float = 0.25,
                 started_at: float | None = None) -> list[Snapshot]:
    """The snapshots before the first estimate (:func:`sim.eta.first_due` says when, its deadline
    from ``started_at`` where given)."""
    snaps = [first]
    done0 = gtid_count(parse_gtid_set(first.executed))
    while True:
        time.sleep(step)
        snaps.append(snapshot(conn))
        if first_due(snaps, done0, sample_s, reader, strata_read, started_at):
            return snaps


def run(conn, files, cfg: ReplicaConfig, cost: CostModel, *, sample_s: float, watch_s: float | None,
        emit, timeout_s: float = 86400.0, start: tuple[int, int] = (0, 0), local: bool = False, nice: int = 10,
        started_at: float | None = None) -> tuple[Estimate, list[dict]]:
    """The first estimate after ``sample_s`` (or sooner: :func:`sim.eta.first_due`), made from what
    is read of the backlog by then (:mod:`sim.backlog`: its head in binlog order from ``start``, the
    applier's position, and, with ``local`` files, windows spread over the rest; the readers'
    threads niced by ``nice``; the first estimate's deadline counted from ``started_at``, the
    command's start, where given); with ``watch_s``, a new one every ``watch_s`` seconds until caught
    up (over the whole backlog once it is read), ``emit(estimate,
    earlier)`` each time with the earlier predictions' errors so far (against the current
    expectation while lagging, against the real catch-up once done). Returns the last estimate
    and the final errors (empty without ``watch_s``)."""
    first = snapshot(conn)
    if not first.unapplied:
        e = caught_up(first, cfg)
        emit(e, [])
        return e, []
    backlog = read_backlog(files, first, start, local, nice)
    reader = backlog.reader
    snaps = first_sample(conn, first, sample_s, reader, backlog.strata_read, started_at=started_at)
    preds: list[Prediction] = []
    warned = False
    while True:
        e = estimate_now(snaps, first, backlog, cfg, cost)
        if reader.done and not warned:
            warned = True
            e = note_read(e, reader, first)
        e = replace(e, waits=worker_states(conn), cpu_s=cpu_seconds())
        last = snaps[-1]
        if not last.unapplied:
            reader.stop()
            errs = prediction_errors(preds, last.at)
            emit(e, errs)
            return e, errs
        emit(e, earlier_predictions(preds, e, last))
        preds.append(Prediction(e.at, e.current.eta_s))
        if watch_s is None or time.time() - first.at > timeout_s:
            reader.stop()
            return e, []
        backlog.more()   # a backlog not read in full: more strata for the next estimate
        snaps += sample(conn, watch_s)
