#!/usr/bin/env python3
"""Checked against reality: a real MySQL 9.x source and replica on this machine.

For each replica configuration (relaxed: innodb_flush_log_at_trx_commit=2, sync_binlog=0;
durable: 1 and 1) and each workload (sysbench oltp_write_only with 8 clients; a conflict-heavy
variant on a 10-row table where writesets allow little parallelism):

1. start a source and a replica (GTID auto-positioning, replica_preserve_commit_order=ON),
   prepare the tables, let the replica catch up;
2. stop the replica's SQL thread, run the workload on the source, wait until the replica's IO
   thread has received all of it, stop the replica and snapshot its data directory;
3. for each worker count (1, 2, 4, 8): restore the snapshot, start the replica with that many
   workers, START REPLICA SQL_THREAD and time WAIT_FOR_EXECUTED_GTID_SET (the catch-up time);
4. simulate the source's workload binlog with the same replica settings
   (``lagadvisor simulate --catch-up --policy recorded``);

and prints measured vs predicted speedup and catch-up time with the error. With
``--calibrate`` it first runs a calibration workload (varied transaction shapes, one client)
replicated with one worker, and fits the cost model from the replica's own binlog
(``lagadvisor calibrate``), for each durability setting.

Usage: python3 bench/replica_catchup.py [--events 12000] [--workers 1,2,4,8] [--calibrate]
                                        [--out bench/results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import median_high

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import realservers  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from docs_tables import conditions, write_table  # noqa: E402

SRC_PORT, REP_PORT = 13510, 13511
BASE = ["--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--binlog-format=ROW", "--log-bin=binlog",
        "--max-binlog-size=1073741824", "--innodb-buffer-pool-size=256M"]
CONFIGS = {
    "relaxed": ["--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0"],
    "durable": ["--innodb-flush-log-at-trx-commit=1", "--sync-binlog=1"],
}
WORKLOADS = {
    "oltp_write_only_8": ["oltp_write_only", "--tables=4", "--table-size=10000", "--threads=8"],
    "conflict_heavy_8": ["oltp_write_only", "--tables=1", "--table-size=10", "--threads=8"],
}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def connect(port: int):
    import mysql.connector

    return mysql.connector.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)


def q(conn, sql: str):
    cur = conn.cursor()
    cur.execute(sql)
    rows = cur.fetchall() if cur.with_rows else []
    cur.close()
    return rows


def gtid_executed(conn) -> str:
    return q(conn, "SELECT @@GLOBAL.gtid_executed")[0][0].replace("\n", "")


def replica(workers: int, config: str) -> realservers.MySQLServer:
    return realservers.MySQLServer("bench-replica", REP_PORT, [
        "--server-id=2", *BASE, *CONFIGS[config], "--relay-log=relay", "--skip-replica-start",
        f"--replica-parallel-workers={workers}", "--replica-preserve-commit-order=ON",
        "--log-replica-updates=ON", "--relay-log-recovery=OFF"])


def wait_received(rep, target: str, timeout: float = 600) -> None:
    end = time.time() + timeout
    while time.time() < end:
        row = q(rep, "SELECT RECEIVED_TRANSACTION_SET FROM performance_schema.replication_connection_status")
        received = row[0][0].replace("\n", "") if row else ""
        if q(rep, f"SELECT GTID_SUBSET('{target}', '{received}')")[0][0] == 1:
            return
        time.sleep(0.2)
    raise RuntimeError("replica IO thread did not receive the workload in time")


def flush_and_list(conn, server: realservers.MySQLServer) -> list[Path]:
    q(conn, "FLUSH BINARY LOGS")
    return server.binlog_files()


def prepare_pair(config: str, setup, workload) -> tuple[list[Path], str, Path]:
    """Source + replica; ``setup(src_conn)`` before, ``workload()`` while the SQL thread is
    stopped. Returns the source's workload binlog files, the target GTID set and the snapshot."""
    src = realservers.MySQLServer("bench-source", SRC_PORT, ["--server-id=1", *BASE, *CONFIGS["relaxed"]],
                                  fresh=True)
    rep = replica(1, config)
    rep.fresh = True
    src.start()
    rep.start()
    rep.fresh = False
    try:
        s, r = connect(SRC_PORT), connect(REP_PORT)
        q(r, f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={SRC_PORT}, "
             "SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1")
        q(r, "START REPLICA")
        setup(s)
        q(r, f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{gtid_executed(s)}', 600)")
        q(r, "STOP REPLICA SQL_THREAD")
        before = set(flush_and_list(s, src))
        workload()
        after = flush_and_list(s, src)
        files = [p for p in after[:-1] if p not in before or p == sorted(before)[-1]]
        target = gtid_executed(s)
        wait_received(r, target)
        s.close()
        r.close()
    finally:
        rep.stop()
    snap = realservers.cache_dir() / "bench-snapshot"
    shutil.rmtree(snap, ignore_errors=True)
    subprocess.run(["cp", "-a", str(rep.host_datadir), str(snap)], check=True)
    keep = Path(realservers.cache_dir() / "bench-binlogs")
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir(parents=True)
    copies = []
    for f in files:
        shutil.copy(f, keep / f.name)
        copies.append(keep / f.name)
    src.stop()
    return copies, target, snap


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds per thread name of a process (/proc/PID/task/*/stat utime+stime)."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        cpu = (int(fields[11]) + int(fields[12])) / tick
        key = name.rstrip("0123456789-")
        out[key] = out.get(key, 0.0) + cpu
    return out


LAST_CPU: dict[str, float] = {}
LAST_WAITS: dict[str, int] = {}
#: A CPU the replica's mysqld is pinned to (every thread, ``taskset -a``), or None: with the rest
#: (the source, sysbench, this script) pinned elsewhere, source and replica do not share a core,
#: as on two hosts (bench/live_calibrate.py --pin).
PIN_REPLICA: int | None = None


def pin(server, cpu: int | None) -> None:
    """Pin every thread of a running server to ``cpu`` (threads it starts later inherit it)."""
    if cpu is not None:
        pid = int(server.host_pid_file.read_text().split()[0])
        subprocess.run(["taskset", "-a", "-cp", str(cpu), str(pid)], check=True, capture_output=True)


def _waits(conn) -> dict[str, int]:
    """InnoDB row-lock waits and the applier's transaction retries (commit-order deadlocks:
    with replica_preserve_commit_order a later transaction holding a lock an earlier one needs
    is rolled back and retried). Locks the writesets do not see (secondary-index gap locks)
    would show here."""
    out = {}
    for name, value in q(conn, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', "
                               "'Innodb_row_lock_time', 'Innodb_deadlocks')"):
        out[str(name)] = int(value)
    row = q(conn, "SELECT COALESCE(SUM(COUNT_TRANSACTIONS_RETRIES), 0) FROM "
                  "performance_schema.replication_applier_status")
    out["retries"] = int(row[0][0]) if row else 0
    # The fsyncs (and other non-read/write file operations) on the redo log and the binlog:
    # how many commit groups there were and what each fsync costs (performance_schema file
    # instruments, on by default).
    for name, count, wait in q(conn, "SELECT EVENT_NAME, COUNT_MISC, SUM_TIMER_MISC FROM "
                                     "performance_schema.file_summary_by_event_name WHERE EVENT_NAME IN "
                                     "('wait/io/file/innodb/innodb_log_file', 'wait/io/file/sql/binlog')"):
        key = "redo" if "innodb" in str(name) else "binlog"
        out[f"{key}_misc"] = int(count)
        out[f"{key}_misc_us"] = int(wait) // 1_000_000
    return out


def wait_buffer_pool_loaded(conn, timeout: float = 120) -> None:
    """A replica that catches up in production has a warm buffer pool: wait for the startup load
    (innodb_buffer_pool_load_at_startup) so its reads do not compete with the applier."""
    end = time.time() + timeout
    while time.time() < end:
        rows = q(conn, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_load_status'")
        if not rows or "completed" in str(rows[0][1]).lower() or "not started" in str(rows[0][1]).lower():
            return
        time.sleep(0.1)


def steal_ticks() -> int:
    """CPU time the hypervisor gave to other guests (/proc/stat), logged per run: a noisy
    neighbour shows here."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return int(fields[8]) if len(fields) > 8 else 0


STAGE_OPTIONS = ["--performance-schema-instrument=stage/%=ON",
                 "--performance-schema-consumer-events-stages-current=ON"]


def coordinator_active_seconds(conn) -> float:
    """Seconds the coordinator (SQL thread) spent in stages other than waiting: reading events
    and handing them to workers (performance_schema stage summary)."""
    total = 0
    for stage, wait in q(conn, "SELECT s.EVENT_NAME, s.SUM_TIMER_WAIT FROM "
                               "performance_schema.events_stages_summary_by_thread_by_event_name s JOIN "
                               "performance_schema.threads t USING (THREAD_ID) "
                               "WHERE t.NAME = 'thread/sql/replica_sql' AND s.COUNT_STAR > 0"):
        name = str(stage).lower()
        if "wait" not in name and "has read all" not in name:
            total += int(wait)
    return total / 1e12


def catch_up(config: str, workers: int, target: str, snap: Path, keep_binlog: Path | None = None, *,
             instrument: Sequence[str] = (), inspect: Callable[[object], None] | None = None) -> float:
    """Catch-up seconds. *instrument*: extra server options (performance_schema instruments: they
    slow the applier, so only for runs that measure, not for the timed ones); *inspect* is called
    with the replica's connection once it has caught up."""
    rep = replica(workers, config)
    rep.options = [*rep.options, *instrument]
    shutil.rmtree(rep.host_datadir, ignore_errors=True)
    subprocess.run(["cp", "-a", str(snap), str(rep.host_datadir)], check=True)
    os.sync()  # the copy's ~300 MB of dirty pages are written back now, not during the catch-up
    rep.start()
    try:
        pin(rep, PIN_REPLICA)
        r = connect(REP_PORT)
        wait_buffer_pool_loaded(r)
        before = set(rep.binlog_files())
        q(r, "FLUSH BINARY LOGS")  # the applied transactions go to files not in `before`
        pid = int(rep.host_pid_file.read_text().split()[0])
        cpu0 = thread_cpu(pid)
        w0 = _waits(r)
        st0 = steal_ticks()
        t0 = time.perf_counter()
        q(r, "START REPLICA SQL_THREAD")
        res = q(r, f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{target}', 900)")
        elapsed = time.perf_counter() - t0
        cpu1 = thread_cpu(pid)
        w1 = _waits(r)
        if inspect is not None:
            inspect(r)
        LAST_WAITS.clear()
        LAST_WAITS.update({k: v - w0.get(k, 0) for k, v in w1.items()})
        LAST_WAITS["steal_s"] = (steal_ticks() - st0) / os.sysconf("SC_CLK_TCK")
        LAST_CPU.clear()
        LAST_CPU.update({k: round(v - cpu0.get(k, 0.0), 3) for k, v in cpu1.items() if v - cpu0.get(k, 0.0) > 0.005})
        if res[0][0] != 0:
            raise RuntimeError(f"replica did not catch up (workers={workers})")
        if keep_binlog is not None:
            q(r, "FLUSH BINARY LOGS")
            keep_binlog.mkdir(parents=True, exist_ok=True)
            for f in rep.binlog_files()[:-1]:
                if f not in before:
                    shutil.copy(f, keep_binlog / f.name)
        r.close()
    finally:
        rep.stop()
    return elapsed


def lagadvisor(*args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return r.stdout


def sysbench_setup(spec: list[str]):
    def setup(conn):
        q(conn, "CREATE DATABASE sbtest")
        realservers.sysbench(SRC_PORT, *spec, "--mysql-db=sbtest", "prepare")
    return setup


def sysbench_run(spec: list[str], events: int):
    def run():
        realservers.sysbench(SRC_PORT, *spec, "--mysql-db=sbtest", f"--events={events}", "--time=0",
                             "--rand-seed=7", "run")
    return run


def calibration_workload(seed: int, n: int):
    """One client, transactions of varied shapes (1-30 inserts/updates/deletes), so per-row
    costs by kind can be told apart."""
    def setup(conn):
        q(conn, "CREATE DATABASE cal")
        q(conn, "CREATE TABLE cal.t (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, "
                "pad CHAR(60) NOT NULL, KEY (k))")
        rnd = random.Random(seed)
        cur = conn.cursor()
        for base in range(0, 20000, 500):
            cur.execute("INSERT INTO cal.t VALUES " + ",".join(
                f"({i},{rnd.randint(1, 10000)},'{'c' * 120}','{'p' * 60}')" for i in range(base, base + 500)))
        cur.close()

    def run():
        rnd = random.Random(seed + 1)
        conn = connect(SRC_PORT)
        cur = conn.cursor()
        next_id = 20000
        live = list(range(20000))
        for _ in range(n):
            cur.execute("BEGIN")
            for _ in range(rnd.choice((0, 0, 1, 3, 10, 30))):
                cur.execute(f"INSERT INTO cal.t VALUES ({next_id},{rnd.randint(1, 10000)},'{'x' * 120}','{'y' * 60}')")
                live.append(next_id)
                next_id += 1
            for _ in range(rnd.choice((0, 1, 3, 10, 30))):
                cur.execute(f"UPDATE cal.t SET k = k + 1 WHERE id = {rnd.choice(live)}")
            for _ in range(rnd.choice((0, 0, 1, 3, 10))):
                if len(live) > 1000:
                    victim = live.pop(rnd.randrange(len(live)))
                    cur.execute(f"DELETE FROM cal.t WHERE id = {victim}")
            cur.execute("COMMIT")
        cur.close()
        conn.close()
    return setup, run


_FACTS: dict[tuple, list] = {}


def simulate_catch_up(files: list[Path], workers: int, durable: bool, cost) -> float:
    """Predicted catch-up seconds (the replica schedules by the source's recorded clock)."""
    sys.path.insert(0, str(ROOT / "src"))
    from lagadvisor.depgraph.pipeline import ClockOptions
    from lagadvisor.depgraph.read import prepare, run_clocks
    from lagadvisor.sim.build import logical_clock
    from lagadvisor.sim.engine import simulate
    from lagadvisor.sim.model import ReplicaConfig
    from lagadvisor.sim.run import facts_of

    names = tuple(str(f) for f in files)
    if names not in _FACTS:
        run = prepare(list(names), ClockOptions(commit_order="recorded"))
        index = {f: i for i, f in enumerate(names)}
        _FACTS[names] = [facts_of(t, c, index[t.file]) for t, _, c in run_clocks(list(names), run)]
    trxs = logical_clock(_FACTS[names], "recorded", cost, catch_up=True)
    return simulate(trxs, ReplicaConfig(workers, True, durable), cost).apply_us / 1e6


def calibrate_models(k: int = 4, rounds: int = 3) -> "object":
    """Fit the cost model on the calibration workload (not on the validation workloads).

    Measured, not fitted: the coordinator's cost per byte (its active time in a
    stage-instrumented one-worker catch-up over the bytes of the transactions), the worker CPU
    factor with several workers (worker threads' CPU at 2 and k workers over one worker), the
    per-row costs (one-worker commit gaps, with the coordinator's share taken out), the split of
    the durable fsync time between the redo log and the binlog (file instruments). Fitted: the
    split of the per-transaction intercept into parallel worker work and the serial commit
    stage, by matching the 2- and k-worker catch-up times of the same workload."""
    sys.path.insert(0, str(ROOT / "src"))
    from dataclasses import replace

    from lagadvisor.sim.calibrate import calibrate, fit_gaps
    from lagadvisor.sim.model import CostModel

    setup, run = calibration_workload(11, 4000)
    files, target, snap = prepare_pair("relaxed", setup, run)
    stages: dict = {}
    catch_up("relaxed", 1, target, snap, instrument=STAGE_OPTIONS,
             inspect=lambda r: stages.update(coordinator_s=coordinator_active_seconds(r)))
    simulate_catch_up(files, 1, False, CostModel())  # reads the facts
    total_bytes = sum(f.nbytes for f in _FACTS[tuple(str(f) for f in files)])
    byte_us = stages["coordinator_s"] * 1e6 / total_bytes
    out = realservers.cache_dir() / "bench-replica-binlog"
    shutil.rmtree(out, ignore_errors=True)
    times: dict[int, list[float]] = {1: [], 2: [], k: []}
    cpu: dict[int, list[float]] = {1: [], 2: [], k: []}
    for rnd in range(rounds):
        for w in times:
            times[w].append(catch_up("relaxed", w, target, snap, keep_binlog=out if (rnd, w) == (0, 1) else None))
            cpu[w].append(LAST_CPU.get("rpl_rca_wkr", 0.0))
    med = {w: median_high(v) for w, v in times.items()}
    cpu_med = {w: median_high(v) for w, v in cpu.items()}
    multi = max(1.0, (cpu_med[2] + cpu_med[k]) / 2 / cpu_med[1]) if cpu_med[1] else 1.0
    fit, _scaled = fit_gaps(sorted(str(p) for p in out.iterdir()), serial_byte_us=byte_us)
    log(f"  relaxed calibration: catch-up {med}, worker CPU {cpu_med}; coordinator {stages['coordinator_s']:.3f} s "
        f"for {total_bytes} bytes ({byte_us * 1e3:.2f} ns/byte); multi-worker CPU x{multi:.3f}; gap fit {fit}")
    base = CostModel(cores=os.cpu_count() or 2, insert_us=fit.insert_us, update_us=fit.update_us,
                     delete_us=fit.delete_us, byte_us=fit.byte_us, flush_us=0.0, dispatch_us=0.0,
                     dispatch_byte_us=byte_us, multi_worker_cpu=multi, multi_worker_us=0.0,
                     # the wake-up the fit took out of the gaps that waited (or the built-in's, kept)
                     wakeup_us=fit.wakeups.wakeup_us if fit.wakeups else CostModel().wakeup_us)
    span = fit.intercept
    best = None
    for c_share in [x / 20 for x in range(21)]:
        m = replace(base, commit_us=span * c_share, trx_us=span * (1 - c_share))
        err = sum(((simulate_catch_up(files, w, False, m) - med[w]) / med[w]) ** 2 for w in (2, k))
        if best is None or err < best[0]:
            best = (err, m)
    model = best[1]
    log(f"  relaxed model: {model}")
    files_d, target_d, snap_d = prepare_pair("durable", setup, run)
    out_d = realservers.cache_dir() / "bench-replica-binlog-durable"
    shutil.rmtree(out_d, ignore_errors=True)
    catch_up("durable", 1, target_d, snap_d, keep_binlog=out_d)
    fsync = dict(LAST_WAITS)
    # The durable excess per commit is two fsyncs: the redo log's in the flush stage and the
    # binlog's in the sync stage. Their split is measured (file instruments' fsync time); the
    # rest is what `lagadvisor calibrate --durable --base relaxed.json --redo-share X` does.
    redo, binlog = fsync.get("redo_misc_us", 0), fsync.get("binlog_misc_us", 0)
    share = redo / (redo + binlog) if redo + binlog else 0.5
    cal = calibrate(sorted(str(p) for p in out_d.iterdir()), durable=True, base=model, redo_share=share)
    log(f"  durable fit: {cal.samples} gaps, R^2 {cal.r2:.3f}, stalls x{cal.stall_factor:.3f}; fsyncs {fsync} "
        f"(redo share {share:.3f}); model: {cal.model}")
    return cal.model


SAVED = ROOT / "bench" / "data" / "catchup"   # git-ignored: each backlog's source binlogs, for --resimulate


def save_backlog(files: list[Path], name: str, config: str) -> list[Path]:
    """Keep the source's workload binlogs under bench/data/catchup/NAME-CONFIG, so that
    ``--resimulate`` can predict the same catch-ups again with another model."""
    out = SAVED / f"{name}-{config}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    return [Path(shutil.copy(f, out / f.name)) for f in files]


def predict(files: list[Path], workers: list[int], config: str, cost_file: Path) -> tuple[int, dict[int, dict]]:
    """``simulate --catch-up`` of the source's binlogs with this machine's cores: (transactions,
    {workers: result})."""
    sim_args = ["simulate", "--catch-up", "--policy", "recorded", "--workers", ",".join(map(str, workers)),
                "--format", "json", "--cores", str(os.cpu_count() or 1),
                "--durable" if config == "durable" else "--relaxed"]
    if cost_file.exists():
        sim_args += ["--cost-model", str(cost_file)]
    sim = json.loads(lagadvisor(*sim_args, *map(str, files)))
    return sim["transactions"], {r["workers"]: r for r in sim["results"]}


#: A catch-up whose VM lost more than this share of its wall time to other guests (CPU steal,
#: /proc/stat) measured the host, not the replica: its round's speedup is left out of the
#: steal-clean figure (``measured_speedup_clean``), never out of ``measured_speedup``.
MAX_STEAL_SHARE = 0.05


def clean_speedup(runs: dict[int, list[float]], steal: dict[int, list[float]] | None, w: int) -> tuple[float | None, int]:
    """The paired speedup at ``w`` workers over the rounds whose one-worker and ``w``-worker
    catch-ups both lost at most :data:`MAX_STEAL_SHARE` of their time to steal, and how many
    rounds that is (None, 0 when none did, or the steal was not recorded)."""
    if not steal or w not in steal or 1 not in steal:
        return None, 0
    ratios = [runs[1][k] / runs[w][k] for k in range(min(len(runs[w]), len(steal[w]), len(steal[1])))
              if steal[1][k] <= MAX_STEAL_SHARE * runs[1][k] and steal[w][k] <= MAX_STEAL_SHARE * runs[w][k]]
    return (median_high(ratios) if ratios else None), len(ratios)


def rows_of(name: str, config: str, runs: dict[int, list[float]], fsyncs: dict[int, list[int]], files: list[Path],
            cost_file: Path, steal: dict[int, list[float]] | None = None) -> list[dict]:
    """Measured against predicted, per worker count. Paired speedups: each round's w-worker run
    against the same round's one-worker run (the rounds are interleaved, so a drift of the disk's
    fsync latency or the host's speed between rounds cancels out), median over rounds; and the
    same over the rounds without CPU steal (:func:`clean_speedup`) where ``steal`` (seconds per
    run) was recorded."""
    workers = sorted(runs)
    n, predicted = predict(files, workers, config, cost_file)
    measured = {w: median_high(runs[w]) for w in workers}
    out = []
    for w in workers:
        ms = median_high(runs[1][k] / runs[w][k] for k in range(len(runs[w])))
        ps = predicted[w]["speedup"]
        clean, clean_rounds = clean_speedup(runs, steal, w)
        extra = {}
        if steal:
            extra = {"steal_s": [round(x, 2) for x in steal[w]], "clean_rounds": clean_rounds,
                     "measured_speedup_clean": None if clean is None else round(clean, 3),
                     "speedup_error_clean": None if clean is None else round((ps - clean) / clean, 4)}
        out.append({"workload": name, "config": config, "workers": w, "transactions": n, **extra,
                    "measured_seconds": round(measured[w], 3),
                    "predicted_seconds": round(predicted[w]["apply_seconds"], 3),
                    "measured_speedup": round(ms, 3), "predicted_speedup": round(ps, 3),
                    "measured_speedup_of_medians": round(measured[1] / measured[w], 3),
                    "speedup_error": round((ps - ms) / ms, 4),
                    # durable: redo log fsyncs (about one per commit group) against the model's groups
                    "measured_redo_fsyncs": median_high(fsyncs[w]), "predicted_groups": predicted[w].get("flushes"),
                    "time_error": round((predicted[w]["apply_seconds"] - measured[w]) / measured[w], 4),
                    "runs_s": [round(x, 4) for x in runs[w]], "fsyncs": fsyncs[w],
                    "binlogs": [str(f.relative_to(ROOT)) for f in files]})
        log(f"  {w}: measured {ms:.2f}x ({measured[w]:.2f} s), predicted {ps:.2f}x "
            f"({predicted[w]['apply_seconds']:.2f} s), speedup error {out[-1]['speedup_error']:+.1%}"
            + (f"; without steal {clean:.2f}x ({clean_rounds} rounds)" if clean is not None else ""))
    return out


def measure(args, workers: list[int], cost_file: Path) -> list[dict]:
    results = []
    for config in args.configs.split(","):
        for name in args.workloads.split(","):
            spec = WORKLOADS[name]
            log(f"{name} / {config}: preparing")
            files, target, snap = prepare_pair(config, sysbench_setup(spec), sysbench_run(spec, args.events))
            files = save_backlog(files, name, config)
            # Rounds are interleaved (1, 2, 4, 8, 1, 2, ...) so that a slow drift of the machine's
            # speed (a shared host) moves every worker count alike instead of biasing a speedup.
            runs: dict[int, list[float]] = {w: [] for w in workers}
            fsyncs: dict[int, list[int]] = {w: [] for w in workers}
            steal: dict[int, list[float]] = {w: [] for w in workers}
            for rnd in range(args.repeat):
                for w in workers:
                    runs[w].append(catch_up(config, w, target, snap))
                    fsyncs[w].append(LAST_WAITS.get("redo_misc", 0))
                    steal[w].append(LAST_WAITS.get("steal_s", 0.0))
                    log(f"  round {rnd + 1}, {w} workers: caught up in {runs[w][-1]:.2f} s; "
                        f"CPU s by thread {LAST_CPU}; waits {LAST_WAITS}")
            for w in workers:
                log(f"  {w} workers: median {median_high(runs[w]):.2f} s (runs {[round(x, 2) for x in runs[w]]})")
            results += rows_of(name, config, runs, fsyncs, files, cost_file, steal)
    return results


def resimulate(path: Path, cost_file: Path) -> list[dict]:
    """The catch-ups of an earlier run (its JSON, with the runs and binlogs it kept) predicted
    again with the current simulator and ``cost_file`` (or the built-in model)."""
    old = json.loads(path.read_text())["results"]
    results = []
    for key in dict.fromkeys((r["workload"], r["config"]) for r in old):
        rs = [r for r in old if (r["workload"], r["config"]) == key]
        if "runs_s" not in rs[0]:
            raise SystemExit(f"{path}: written before the runs and binlogs were kept: measure again")
        log(f"{key[0]} / {key[1]}: predicting again")
        steal = {r["workers"]: r["steal_s"] for r in rs} if all("steal_s" in r for r in rs) else None
        results += rows_of(key[0], key[1], {r["workers"]: r["runs_s"] for r in rs}, {r["workers"]: r["fsyncs"] for r in rs},
                           [ROOT / f for f in rs[0]["binlogs"]], cost_file, steal)
    return results


def table(results: list[dict]) -> tuple[list[str], str]:
    """The Markdown table of ``results`` and its one-line summary: speedups within 15%, and,
    where the runs' CPU steal was recorded, the same over the rounds without it."""
    stolen = all("clean_rounds" in r for r in results)
    head = ("| workload | replica | workers | measured s | predicted s | time error | measured speedup | "
            "predicted speedup | speedup error |")
    lines = [head + (" without steal (rounds) | its error |" if stolen else ""),
             "|---|---|---|---|---|---|---|---|---|" + ("---|---|" if stolen else "")]
    for r in results:
        row = (f"| {r['workload']} | {r['config']} | {r['workers']} | {r['measured_seconds']:.2f} | "
               f"{r['predicted_seconds']:.2f} | {r['time_error']:+.1%} | {r['measured_speedup']:.2f}x | "
               f"{r['predicted_speedup']:.2f}x | {r['speedup_error']:+.1%} |")
        if stolen:
            clean = r["measured_speedup_clean"]
            row += (f" none of {len(r['steal_s'])} | |" if clean is None else
                    f" {clean:.2f}x ({r['clean_rounds']}) | {r['speedup_error_clean']:+.1%} |")
        lines.append(row)
    speedups = [r for r in results if r["workers"] != 1]
    summary = f"{sum(abs(r['speedup_error']) <= 0.15 for r in speedups)} of {len(speedups)} speedups within 15%"
    if stolen:
        clean = [r for r in speedups if r["measured_speedup_clean"] is not None]
        summary += (f"; over the rounds that lost at most {MAX_STEAL_SHARE:.0%} of their time to CPU steal, "
                    f"{sum(abs(r['speedup_error_clean']) <= 0.15 for r in clean)} of {len(clean)} "
                    f"({len(speedups) - len(clean)} without such a round)")
    return lines, summary


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=12000)
    ap.add_argument("--workers", default="1,2,4,8")
    ap.add_argument("--calibrate", action="store_true", help="fit bench/cost.json first")
    ap.add_argument("--repeat", type=int, default=3, help="catch-up runs per worker count (median)")
    ap.add_argument("--configs", default="relaxed,durable")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results.json"))
    ap.add_argument("--no-docs", action="store_true", help="do not write the table into docs/ (see bench/docs_tables.py)")
    ap.add_argument("--cost", default=str(ROOT / "bench" / "cost.json"))
    ap.add_argument("--resimulate", type=Path, default=None,
                    help="predict the catch-ups of this earlier results JSON again (no servers; its binlogs kept "
                         "under bench/data/catchup)")
    args = ap.parse_args()
    cost_file = Path(args.cost)
    if args.resimulate:
        results = resimulate(args.resimulate, cost_file)
    else:
        failures = realservers.provision(log=lambda m: None)
        if failures:
            print("\n".join(failures))
            return 1
        if args.calibrate:
            log("calibration")
            model = calibrate_models()
            cost_file.write_text(model.to_json() + "\n")
        results = measure(args, [int(x) for x in args.workers.split(",")], cost_file)
    if args.resimulate:   # the machine that measured, not this one
        machine = json.loads(args.resimulate.read_text()).get("machine", {})
    else:   # the many-core lab's record (cores, CPU model, kernel, the datadir's file system)
        sys.path.insert(0, str(ROOT / "bench" / "manycore"))
        from lab import machine_info   # here: lab imports this script's thread_cpu
        machine = machine_info(replica(1, "relaxed").host_datadir.parent)
    Path(args.out).write_text(json.dumps({"machine": machine, "results": results}, indent=2))
    lines, summary = table(results)
    print("\n".join(lines))
    print(summary)
    if not args.no_docs:
        write_table("accuracy.md", "replica-catchup", "\n".join(lines),
                    conditions(f"{os.cpu_count()} cores; {summary}; results in {Path(args.out).name}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
