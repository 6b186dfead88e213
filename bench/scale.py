"""Memory and time against input size: ``simulate`` and ``advise`` on 1, 10 and 100 copies of the
benchmark binlog given as one rotation sequence (issue 14's must-show).

1. Builds (or reuses) the 500 MB workload file of ``bench/throughput.py`` (a real MySQL 9.7
   server, sysbench oltp_write_only; cached in ``bench/data/``, git-ignored).
2. Copies it to ``bench/data/scale/binlog.000001`` ... (real copies, not links: the commands
   refuse the same file twice, since it would be counted twice; 100 copies = 50 GB of disk, kept
   for the next run, ``--clean`` removes them).
3. Times each command on the first K copies for each K of ``--copies`` (default 1,10,100): wall
   time, CPU time and peak RSS of the process (``wait4``), output to /dev/null, and writes the
   figures to ``bench/scale.json``.

Each copy starts again from the same commit times, so past the first copy the source timeline
steps back at every rotation: a worst case for the lag statistics (every later copy arrives
"at once"), which is what the run is for (memory and time), not a realistic lag.

Usage: python3 bench/scale.py [--copies 1,10,100] [--data DIR] [--jobs 2] [--clean]
       python3 bench/scale.py --replica [--copies 1,10,50] [--replica-mb 200]

(``--jobs 2`` also times ``simulate --jobs 2`` and ``advise --jobs 2`` on the largest run.)

``--replica``: the same on a **replica's own binlog** (``log_replica_updates``), whose every
transaction carries the lag the replica had (immediate minus original commit timestamp), which
``analyze`` reports and which used to be kept per transaction. A real MySQL 9.7 source and
replica on loopback (the replica: 4 workers, relaxed durability like the source) run sysbench
oltp_write_only (8 clients) until the replica's binlog file reaches ``--replica-mb``; that file is
kept in ``bench/data/replica/`` and copied. Times ``analyze``, ``simulate`` and ``advise``;
figures go to ``bench/scale_replica.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import throughput  # noqa: E402  (the workload file and the wait4 measurement)
from docs_tables import conditions, write_table  # noqa: E402

WORKERS = "1,2,4,8,16,32,64"


def copies(data: Path, meta: dict, k: int, where: str = "scale") -> list[Path]:
    src = data / meta["file"]
    out_dir = data / where
    out_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(1, k + 1):
        p = out_dir / f"binlog.{i:06d}"
        if not p.exists() or p.stat().st_size != meta["bytes"]:
            tmp = p.with_suffix(".part")
            shutil.copyfile(src, tmp)
            os.replace(tmp, p)
        files.append(p)
    return files


REPLICA_PORTS = (13630, 13631)


def build_replica(data: Path, min_mb: int) -> dict:
    """A replica's binlog file of at least ``min_mb`` MB (kept in ``data/replica/``, reused)."""
    out_dir = data / "replica"
    meta_path = out_dir / "meta.json"
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        f = out_dir / meta["file"]
        if f.exists() and f.stat().st_size == meta["bytes"] and meta["bytes"] >= min_mb * 1_000_000:
            return meta
    import re

    rs = throughput.realservers
    out_dir.mkdir(parents=True, exist_ok=True)
    common = ["--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--log-bin=binlog",
              "--max-binlog-size=1073741824", "--innodb-buffer-pool-size=384M",
              "--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0"]
    src = rs.MySQLServer("bench-scale-src", REPLICA_PORTS[0], ["--server-id=1", *common], fresh=True)
    rep = rs.MySQLServer("bench-scale-rep", REPLICA_PORTS[1],
                         ["--server-id=2", "--log-replica-updates=ON", "--replica-parallel-workers=4",
                          "--skip-replica-start", *common], fresh=True)
    src.start()
    rep.start()
    try:
        rep.sql(f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={src.port}, "
                "SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1")
        rep.sql("START REPLICA")
        throughput.log(f"source {src.version} :{src.port}, replica :{rep.port}; sysbench prepare")
        src.sql("CREATE DATABASE sbtest")
        rs.sysbench(src.port, *throughput.SYSBENCH, "--threads=4", "prepare")
        gtids = src.sql("SELECT @@GLOBAL.gtid_executed").strip().replace("\n", "")
        rep.sql(f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{gtids}', 600)")
        rep.sql("FLUSH BINARY LOGS")
        target = rep.binlog_files()[-1]
        throughput.log(f"sysbench oltp_write_only, 8 threads, until the replica's {target.name} >= {min_mb} MB")
        workload_s = throughput.sysbench_until(src.port, target, min_mb, seed=11)
        rep.sql("FLUSH BINARY LOGS")
        if rep.binlog_files()[-2] != target:
            raise RuntimeError(f"{target.name} rotated during the run; raise max_binlog_size")
        out = out_dir / target.name
        shutil.copyfile(target, out)
        version = rep.version
    finally:
        rep.stop()
        src.stop()
        rep.remove()
        src.remove()
    text = rs.chroot_mysqlbinlog(out)
    trx = len(re.findall(r"\tGTID\tlast_committed=", text))
    meta = {"file": out.name, "bytes": out.stat().st_size, "transactions": trx, "server": version,
            "workload": "sysbench oltp_write_only --tables=8 --table-size=100000 --threads=8, "
                        "applied by a replica with 4 workers and log_replica_updates",
            "workload_seconds": round(workload_s, 1)}
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def markdown(runs: list[dict]) -> str:
    """The runs as the table docs/performance.md shows."""
    lines = ["| command | copies | GB | transactions | wall s | s per copy | peak RSS MB |",
             "|---|---|---|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r['command']} | {r['copies']} | {r['bytes'] / 1e9:.2f} | {r['transactions']:,} | "
                     f"{r['wall_s']:.1f} | {r['s_per_copy']:.2f} | {r['peak_rss_mb']:,.0f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", default="1,10,100")
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "data")
    ap.add_argument("--jobs", type=int, default=2, help="also simulate and advise --jobs N on the largest run "
                                                        "(0: skip)")
    ap.add_argument("--clean", action="store_true", help="remove the copies afterwards")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--no-docs", action="store_true", help="do not write the table into docs/ (see bench/docs_tables.py)")
    ap.add_argument("--replica", action="store_true", help="a replica's own binlog (observed lags), see above")
    ap.add_argument("--replica-mb", type=int, default=200)
    args = ap.parse_args()
    # Built in a child process: a Linux process's peak RSS starts from its parent's at fork, so
    # this process must never hold the build's mysqlbinlog text while it measures.
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as ex:
        if args.replica:
            meta = ex.submit(build_replica, args.data, args.replica_mb).result()
            meta = {**meta, "file": f"replica/{meta['file']}"}
            copies_dir = "scale-replica"
        else:
            meta = ex.submit(throughput.build, args.data, 500).result()
            copies_dir = "scale"
    out_path = args.out or ROOT / "bench" / ("scale_replica.json" if args.replica else "scale.json")
    ks = [int(x) for x in args.copies.split(",")]
    files = copies(args.data, meta, max(ks), copies_dir)
    py = [sys.executable, "-m", "lagadvisor"]
    env = throughput.lagadvisor_env(False)
    env["LAGADVISOR_CACHE_DIR"] = str(args.data / "cache")
    runs = []
    for k in ks:
        names = [str(f) for f in files[:k]]
        plan = [("simulate", [*py, "simulate", "--workers", WORKERS, "--format", "json", *names]),
                ("advise", [*py, "advise", "--format", "json", *names])]
        if args.replica:
            plan.insert(0, ("analyze", [*py, "analyze", "--format", "json", *names]))
        if args.jobs and k == max(ks) and not args.replica:
            plan.append((f"simulate --jobs {args.jobs}",
                         [*py, "simulate", "--workers", WORKERS, "--jobs", str(args.jobs), "--format", "json", *names]))
            plan.append((f"advise --jobs {args.jobs}", [*py, "advise", "--jobs", str(args.jobs), "--format", "json",
                                                         *names]))
        for name, cmd in plan:
            m = throughput.measure(cmd, env)
            row = {"command": name, "copies": k, "bytes": meta["bytes"] * k, "transactions": meta["transactions"] * k,
                   **{key: round(v, 2) for key, v in m.items()}}
            row["s_per_copy"] = round(m["wall_s"] / k, 3)
            runs.append(row)
            print(json.dumps(row), flush=True)
    doc = {"when": time.strftime("%Y-%m-%d %H:%M"), "file": meta, "workers": WORKERS, "cores": os.cpu_count(),
           "runs": runs}
    by = {(r["command"], r["copies"]): r for r in runs}
    flat = {}
    big = max(ks)
    for cmd in ("analyze", "simulate", "advise"):
        if (cmd, 10) in by and (cmd, big) in by and big > 10:
            flat[cmd] = round(by[(cmd, big)]["peak_rss_mb"] / by[(cmd, 10)]["peak_rss_mb"], 3)
    doc[f"rss_{big}_over_10"] = flat
    out_path.write_text(json.dumps(doc, indent=2) + "\n")
    table = markdown(runs)
    print(table)
    if not args.no_docs:
        flat_text = ", ".join(f"{c} {v:.2f}x" for c, v in flat.items())
        write_table("performance.md", "scale-replica" if args.replica else "scale", table,
                    conditions(f"{os.cpu_count()} cores; one file of {meta['bytes'] / 1e6:,.1f} MB copied"
                               + (f"; peak RSS {big} over 10 copies: {flat_text}" if flat_text else "")
                               + f"; results in {out_path.name}"))
    if args.clean:
        shutil.rmtree(args.data / copies_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
