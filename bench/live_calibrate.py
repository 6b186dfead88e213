#!/usr/bin/env python3
"""Issue 15's check: calibrate a replica in service (``calibrate --host``), predict backlogs.

For each durability setting:

1. a source and a replica with ``--calibrate-workers`` workers (default 4) and
   ``events_transactions_history_long`` on; the source runs the varied calibration workload of
   bench/replica_catchup.py with one client while the replica keeps up (it serves; no backlog,
   no one-worker run) and :func:`lagadvisor.server.calibrate.calibrate_live` watches it for
   ``--window`` seconds as a least-privilege user;
2. for each sysbench workload of bench/replica_catchup.py (never seen by the calibration), the
   catch-up of a backlog measured at 1, 2, 4 and 8 workers (interleaved rounds from one
   snapshot, median; replica_catchup.catch_up) and predicted by ``simulate --catch-up`` with the
   live model.

``--calibrate-on served`` (the production case): instead of the separate calibration workload,
the replica is calibrated while it serves the workload's own shape at a rate it keeps up with
(sysbench ``--rate``, another seed, on its own servers and tables): a production replica is
calibrated on its everyday traffic, and the backlog it later has to catch up (other
transactions, 8 clients at full speed, measured on other servers) is predicted from that.

``--pin``: the replica on its own core and the sources' data directories on a tmpfs, so that
neither its CPU nor its disk is shared with the source (as on two hosts; the replica then has one
core).

``--calibrate-every-round``: the replica is calibrated again before each round's catch-ups (a
new 20 s window of service each time), and the backlog is predicted with the median of those
calibrations (``calibrate --combine``, its band from their spread); each calibration's own
prediction is kept in the JSON too. A machine whose speed drifts between minutes (this VM: the
same one-worker catch-up 2.4-4.9 s within a quarter of an hour) is then read over the same minutes
as the catch-ups it is compared with, as a user calibrates a replica over several windows.

Prints and writes (``--out``) absolute time and speedup errors. Outside CI (minutes).
Usage: python3 bench/live_calibrate.py [--configs relaxed,durable] [--events 6000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
import types
from pathlib import Path
from statistics import median_high

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "src"))
import replica_catchup as rc  # noqa: E402
from docs_tables import conditions, write_table  # noqa: E402

from lagadvisor.server.calibrate import calibrate_live  # noqa: E402
from lagadvisor.server.connection import pymysql_settings  # noqa: E402

TAG = "live15"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: With --pin, the sources' data directories are on a tmpfs inside the chroot (their disk writes
#: do not compete with the replica's fsyncs: as on two hosts), mounted here.
SOURCE_TMPFS = "/var/lib/lagadvisor-tmpfs"


def _tmpfs_path() -> Path:
    return rc.realservers.chroot_root() / SOURCE_TMPFS.lstrip("/")


def _source_tmpfs() -> None:
    path = _tmpfs_path()
    path.mkdir(parents=True, exist_ok=True)
    if not os.path.ismount(path):
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6g,mode=0777", "tmpfs", str(path)], check=True)


def _own_names(source_tmpfs: bool = False) -> None:
    """Servers, snapshot and binlog copies under names of this bench's own (another bench may run);
    ``source_tmpfs``: the sources' data directories on :data:`SOURCE_TMPFS`."""
    real = rc.realservers
    if source_tmpfs:
        _source_tmpfs()

    class Server(real.MySQLServer):
        def __init__(self, name, port, options=(), **kw):
            super().__init__(name.replace("bench-", f"{TAG}-"), port, options, **kw)

        @property
        def datadir(self) -> str:
            if source_tmpfs and "source" in self.name:
                return f"{SOURCE_TMPFS}/{self.name}"
            return super().datadir

    proxy = types.SimpleNamespace(**{k: getattr(real, k) for k in dir(real) if not k.startswith("__")})
    proxy.MySQLServer = Server
    proxy.cache_dir = lambda: real.cache_dir() / TAG
    (real.cache_dir() / TAG).mkdir(parents=True, exist_ok=True)
    rc.realservers = proxy
    rc.SRC_PORT, rc.REP_PORT = _free_port(), _free_port()


def live_model(config: str, workers: int, window: float, n: int, served: list[str] | None = None,
               rate: int = 0):
    """The cost model fitted live on a replica with ``workers`` workers serving the calibration
    workload, or (``served``: a sysbench spec) that workload's shape at ``rate`` transactions/s."""
    src = rc.realservers.MySQLServer("bench-cal-source", rc.SRC_PORT,
                                     ["--server-id=1", *rc.BASE, *rc.CONFIGS["relaxed"]], fresh=True)
    rep = rc.replica(workers, config)
    rep.options = [*rep.options, "--performance-schema-consumer-events-transactions-history-long=ON",
                   "--performance-schema-consumer-events-stages-current=ON",
                   "--performance-schema-consumer-events-stages-history-long=ON",
                   "--performance-schema-consumer-events-waits-current=ON",
                   "--performance-schema-consumer-events-waits-history-long=ON",
                   "--performance-schema-instrument=stage/sql/Waiting for an event from Coordinator=ON",
                   "--performance-schema-instrument=stage/sql/Waiting for preceding transaction to commit=ON",
                   "--performance-schema-instrument=stage/sql/waiting for handler commit=ON",
                   # the coordinator's dependency waits: calibrate --host measures wakeup_us from them
                   "--performance-schema-instrument=stage/sql/Waiting for dependent transaction to commit=ON"]
    rep.fresh = True
    src.start()
    rep.start()
    rc.pin(rep, rc.PIN_REPLICA)
    try:
        s, r = rc.connect(rc.SRC_PORT), rc.connect(rc.REP_PORT)
        rc.q(r, f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={rc.SRC_PORT}, "
                "SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1")
        rc.q(r, "START REPLICA")
        for stmt in ("SET sql_log_bin = 0", "CREATE USER cal@'%' IDENTIFIED BY 'pw'",
                     "GRANT SELECT ON performance_schema.* TO cal@'%'",
                     "GRANT REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO cal@'%'"):
            rc.q(r, stmt)
        if served is None:
            setup, run = rc.calibration_workload(11, n)
        else:
            setup = rc.sysbench_setup(served)

            def run():
                rc.realservers.sysbench(rc.SRC_PORT, *served, "--mysql-db=sbtest", f"--time={int(window) + 6}",
                                        f"--rate={rate}", "--events=0", "--rand-seed=99", "run")
        setup(s)
        rc.q(r, f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{rc.gtid_executed(s)}', 600)")
        th = threading.Thread(target=run)
        th.start()
        time.sleep(2.0)
        cal = calibrate_live(pymysql_settings("127.0.0.1", rc.REP_PORT, "cal", "pw"), window,
                             cores=1 if rc.PIN_REPLICA is not None else os.cpu_count())
        th.join()
        s.close()
        r.close()
    finally:
        rep.stop()
        src.stop()
        rep.remove()
        src.remove()
    return cal


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", default="relaxed,durable")
    ap.add_argument("--workloads", default=",".join(rc.WORKLOADS))
    ap.add_argument("--events", type=int, default=6000)
    ap.add_argument("--workers", default="1,2,4,8")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--calibrate-workers", type=int, default=4)
    ap.add_argument("--window", type=float, default=20.0)
    ap.add_argument("--calibration-transactions", type=int, default=6000)
    ap.add_argument("--calibrate-on", choices=("calibration", "served"), default="calibration",
                    help="the separate calibration workload, or the replica serving the workload's own shape")
    ap.add_argument("--rate", default="relaxed=600,durable=200",
                    help="with --calibrate-on served: transactions/s the source sends while calibrating")
    ap.add_argument("--pin", action="store_true",
                    help="the replica on CPU 1, the source, sysbench and this script on CPU 0: they do not "
                         "share a core, and the sources' data directories on a tmpfs (their writes do not "
                         "share the replica's disk), as on two hosts (the replica then has one core: the "
                         "model says so)")
    ap.add_argument("--calibrate-every-round", action="store_true",
                    help="calibrate again before each round; predict with the calibrations combined")
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-docs", action="store_true", help="do not write the table into docs/ (see bench/docs_tables.py)")
    args = ap.parse_args()
    _own_names(source_tmpfs=args.pin)
    if args.pin:
        import atexit
        atexit.register(_unmount_source_tmpfs)   # the sources' data leave memory with the bench
        os.sched_setaffinity(0, {0})   # inherited by the servers and sysbench started from here
        rc.PIN_REPLICA = 1
    workers = [int(x) for x in args.workers.split(",")]
    served = args.calibrate_on == "served"
    out = Path(args.out or ROOT / ("live_calibrate_served.json" if served else "live_calibrate.json"))
    rates = dict((k, int(v)) for k, v in (x.split("=") for x in args.rate.split(",")))
    results, models = [], {}
    for config in args.configs.split(","):
        for name in args.workloads.split(","):
            spec = rc.WORKLOADS[name]
            key = f"{config}/{name}" if served else config
            tag = key.replace('/', '-')

            def calibrate_once(k: int) -> Path:
                rc.log(f"{key}: live calibration {k + 1}, {args.calibrate_workers} workers, {args.window:g} s window"
                       + (f", serving {name} at {rates[config]} trx/s" if served else ""))
                cal = live_model(config, args.calibrate_workers, args.window, args.calibration_transactions,
                                 spec if served else None, rates.get(config, 0))
                models.setdefault(key, []).append({"model": json.loads(cal.model.to_json()),
                                                   "evidence": cal.evidence, "at": time.strftime("%H:%M:%S")})
                rc.log(f"  evidence {cal.evidence}")
                cost = rc.realservers.cache_dir() / f"live-{tag}-{k}.json"
                cost.write_text(cal.model.to_json() + "\n")
                return cost

            every = args.calibrate_every_round
            if every:
                costs = []   # one calibration per round, below
            elif key in models:   # one calibration per durability (the separate calibration workload)
                costs = [rc.realservers.cache_dir() / f"live-{tag}-0.json"]
            else:
                costs = [calibrate_once(0)]
            rc.log(f"{name} / {config}: preparing")
            files, target, snap = rc.prepare_pair(config, rc.sysbench_setup(spec), rc.sysbench_run(spec, args.events))
            runs: dict[int, list[float]] = {w: [] for w in workers}
            for k in range(args.repeat):
                if every:
                    costs.append(calibrate_once(k))
                for w in workers:
                    runs[w].append(rc.catch_up(config, w, target, snap))
                    rc.log(f"  round {k + 1}, {w} workers: {runs[w][-1]:.2f} s")
            if len(costs) > 1:   # the product's way to pool windows: calibrate --combine
                combined = rc.realservers.cache_dir() / f"live-{tag}-combined.json"
                rc.lagadvisor("calibrate", "--combine", *map(str, costs), "-o", str(combined))
            else:
                combined = costs[0]
            band = json.loads(combined.read_text())["error_band"]

            def predict(cost: Path) -> dict[int, dict]:
                sim = json.loads(rc.lagadvisor("simulate", "--catch-up", "--policy", "recorded", "--workers",
                                               ",".join(map(str, workers)), "--format", "json",
                                               "--durable" if config == "durable" else "--relaxed",
                                               "--cost-model", str(cost), *map(str, files)))
                return {r["workers"]: r | {"transactions": sim["transactions"]} for r in sim["results"]}

            predicted = predict(combined)
            each = [predict(c) for c in costs] if len(costs) > 1 else [predicted]
            measured = {w: median_high(runs[w]) for w in workers}
            for w in workers:
                ms = median_high(runs[1][k] / runs[w][k] for k in range(args.repeat))
                ps = predicted[w]["speedup"]
                pt = predicted[w]["apply_seconds"]
                row = {"workload": name, "config": config, "workers": w, "transactions": predicted[w]["transactions"],
                       "measured_seconds": round(measured[w], 3), "predicted_seconds": round(pt, 3),
                       "time_error": round((pt - measured[w]) / measured[w], 4),
                       "measured_speedup": round(ms, 3), "predicted_speedup": round(ps, 3),
                       "speedup_error": round((ps - ms) / ms, 4), "runs": [round(x, 3) for x in runs[w]],
                       "each_calibration_seconds": [round(e[w]["apply_seconds"], 3) for e in each],
                       "each_calibration_speedup": [round(e[w]["speedup"], 3) for e in each],
                       "band": band, "within_band": abs(pt - measured[w]) <= band * pt}
                results.append(row)
                rc.log(f"  {w}: measured {measured[w]:.2f} s ({ms:.2f}x), predicted {pt:.2f} s ({ps:.2f}x), "
                       f"time error {row['time_error']:+.1%}, speedup error {row['speedup_error']:+.1%}, "
                       f"each calibration {row['each_calibration_seconds']}")
    out.write_text(json.dumps({"machine": {"cores": os.cpu_count(), "replica_pinned_to_one_core": args.pin},
                               "calibrate_on": args.calibrate_on,
                               "calibrate_every_round": args.calibrate_every_round,
                               "models": models, "results": results}, indent=2) + "\n")
    lines = ["| workload | replica | workers | measured s | predicted s | time error | band | measured speedup | "
             "predicted speedup | speedup error |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['workload']} | {r['config']} | {r['workers']} | {r['measured_seconds']:.2f} | "
                     f"{r['predicted_seconds']:.2f} | {r['time_error']:+.1%} | +-{r['band']:.1%} | "
                     f"{r['measured_speedup']:.2f}x | {r['predicted_speedup']:.2f}x | {r['speedup_error']:+.1%} |")
    times = sum(abs(r["time_error"]) <= 0.15 for r in results)
    speedups = [r for r in results if r["workers"] != 1]
    summary = (f"{times} of {len(results)} absolute times and "
               f"{sum(abs(r['speedup_error']) <= 0.15 for r in speedups)} of {len(speedups)} speedups within 15%")
    print("\n".join(lines))
    print(summary)
    if not args.no_docs:
        write_table("accuracy.md", "live-calibrate", "\n".join(lines),
                    conditions(f"{os.cpu_count()} cores; {summary}; results in {out.name}"))
    return 0


def _unmount_source_tmpfs() -> None:
    path = _tmpfs_path()
    if os.path.ismount(path):
        subprocess.run(["umount", str(path)], check=False)


if __name__ == "__main__":
    sys.exit(main())
