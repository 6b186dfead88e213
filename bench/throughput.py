#!/usr/bin/env python3
"""Reader throughput against mysqlbinlog, on one large binlog written by a real MySQL 9.7 server.

1. Build (once; cached under ``bench/data/``, git-ignored, or ``--data DIR``) one binlog file of
   at least ``--min-mb`` (default 500) MB: a fresh MySQL 9.x server from the chroot
   (scripts/realservers.py) with ``max_binlog_size=1G`` and the default binlog settings
   (ROW, ``binlog_row_image=FULL``, GTIDs on), sysbench ``prepare`` then ``FLUSH BINARY LOGS``
   (so the file holds only the workload), then sysbench ``oltp_write_only`` with 8 threads until
   the binlog file reaches the size; then ``FLUSH BINARY LOGS`` and the file is kept.
   Durability is relaxed on the source (``sync_binlog=0``, ``innodb_flush_log_at_trx_commit=2``)
   so the build takes minutes; it does not change what is written.
2. Measure, on that file, wall time and peak RSS of each command (a child process each; peak
   RSS = the child's ``ru_maxrss`` from ``wait4``):

   * ``mysqlbinlog FILE > /dev/null`` and ``mysqlbinlog -vv FILE > /dev/null`` (the chroot's
     MySQL 9.7 mysqlbinlog; the file is hard-linked into the chroot before timing, so no copy
     is counted; the ``chroot`` wrapper's own cost is included and negligible);
   * ``lagadvisor analyze FILE`` (output to /dev/null);
   * ``lagadvisor simulate FILE --workers 1,2,4,8,16,32,64`` (the three policies);
   * ``lagadvisor advise FILE``, ``lagadvisor export --format jsonl FILE`` (to /dev/null) and
     ``lagadvisor graph FILE``; then ``analyze``, ``advise``, ``graph`` and ``export`` again with
     ``--schema`` (sysbench's table definition, :data:`SCHEMA`: with it the writesets are
     hashed and the graph has its row conflicts; without it the tables' keys are unknown);
   * with ``--with-pure``: ``analyze`` again with ``LAGADVISOR_PUREPYTHON=1``;
   * with ``--jobs N`` and an ``analyze --jobs`` option: ``analyze --jobs N`` over ``--files``
     copies of the file (hard links; several files).

   lagadvisor runs from this checkout (``PYTHONPATH=src``), so the native extension used is
   the one built into ``src/lagadvisor/``.

Prints a Markdown table (MB/s, transactions/s, peak RSS, time relative to mysqlbinlog plain and
-vv, and to ``analyze`` with the same schema option) and writes it with the raw numbers to
``bench/throughput.json``.

Usage: python3 bench/throughput.py [--data DIR] [--min-mb 500] [--repeat N] [--with-pure]
                                   [--jobs N] [--build-only] [--out bench/throughput.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import realservers  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from docs_tables import conditions, write_table  # noqa: E402

PORT = 13620
SERVER_NAME = "bench-throughput"
OPTIONS = ["--server-id=1", "--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--log-bin=binlog",
           "--max-binlog-size=1073741824", "--innodb-buffer-pool-size=512M",
           "--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0"]
SYSBENCH = ["oltp_write_only", "--tables=8", "--table-size=100000", "--mysql-db=sbtest"]
WORKERS = "1,2,4,8,16,32,64"
#: sysbench's table (oltp_common.lua ``create_table``, MySQL driver, defaults), for --schema.
SCHEMA = "CREATE DATABASE sbtest;\n" + "".join(
    f"CREATE TABLE sbtest.sbtest{i} (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT '0', "
    f"c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), "
    f"KEY k_{i} (k)) ENGINE=InnoDB;\n" for i in range(1, 9))


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- build


def build(data: Path, min_mb: int) -> dict:
    """Make ``data/binlog.000002`` (the workload file) and ``data/meta.json``; reuse them."""
    meta_path = data / "meta.json"
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if (data / meta["file"]).stat().st_size == meta["bytes"] and meta["bytes"] >= min_mb * 1_000_000:
            return meta
    data.mkdir(parents=True, exist_ok=True)
    srv = realservers.MySQLServer(SERVER_NAME, PORT, OPTIONS, fresh=True)
    srv.start()
    try:
        log(f"server {srv.version} on port {PORT}; sysbench prepare")
        srv.sql("CREATE DATABASE sbtest")
        realservers.sysbench(PORT, *SYSBENCH, "--threads=4", "prepare")
        srv.sql("FLUSH BINARY LOGS")
        target = srv.binlog_files()[-1]
        log(f"sysbench oltp_write_only, 8 threads, until {target.name} >= {min_mb} MB")
        workload_s = sysbench_until(PORT, target, min_mb, seed=7)
        srv.sql("FLUSH BINARY LOGS")
        if srv.binlog_files()[-2] != target:
            raise RuntimeError(f"{target.name} rotated during the run; raise max_binlog_size")
        out = data / target.name
        shutil.copyfile(target, out)
        version = srv.version
    finally:
        srv.stop()
        srv.remove()
    log("counting transactions (mysqlbinlog)")
    text = realservers.chroot_mysqlbinlog(out)
    trx = len(re.findall(r"\tGTID\tlast_committed=", text))
    meta = {"file": out.name, "bytes": out.stat().st_size, "transactions": trx, "server": version,
            "workload": "sysbench oltp_write_only --tables=8 --table-size=100000 --threads=8",
            "server_options": OPTIONS, "workload_seconds": round(workload_s, 1)}
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def sysbench_until(port: int, target: Path, min_mb: int, seed: int) -> float:
    """sysbench oltp_write_only with 8 clients against ``port`` until the binlog file ``target``
    (the source's, or a replica's) reaches ``min_mb`` MB; the seconds it ran."""
    cmd = ["sysbench", "--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={port}",
           "--mysql-user=root", *SYSBENCH, "--threads=8", "--time=0", "--events=0",
           f"--rand-seed={seed}", "--report-interval=0", "run"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    t0 = time.monotonic()
    try:
        while target.stat().st_size < min_mb * 1_000_000:
            if proc.poll() is not None:
                raise RuntimeError(f"sysbench exited early ({proc.returncode}): "
                                   f"{proc.stderr.read().decode()[-800:]}")
            time.sleep(2)
            if int(time.monotonic() - t0) % 60 < 2:
                log(f"  {target.stat().st_size / 1e6:.0f} MB")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # our own child's process group
            proc.wait(timeout=60)
    return time.monotonic() - t0


# --------------------------------------------------------------------------- measure


def measure(cmd: list[str], env: dict | None = None) -> dict:
    """Run *cmd* (stdout to /dev/null); wall seconds and the child's own rusage (wait4)."""
    with open(os.devnull, "wb") as null, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=null, stderr=err, env=env)
        _pid, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {err.read().decode()[-800:]}")
    return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_rss_mb": ru.ru_maxrss / 1024}


def lagadvisor_env(pure: bool) -> dict:
    # one binlog fed many times (hard links, copies): read each time (lagadvisor.inputs.REPEAT_FILES_ENV)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), LAGADVISOR_REPEAT_FILES="1")
    env.pop("LAGADVISOR_PUREPYTHON", None)
    if pure:
        env["LAGADVISOR_PUREPYTHON"] = "1"
    return env


def has_jobs_option() -> bool:
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "analyze", "--help"], capture_output=True,
                       text=True, env=dict(lagadvisor_env(False), COLUMNS="200"))
    return "--jobs" in r.stdout


def run_all(data: Path, meta: dict, args) -> dict:
    path = data / meta["file"]
    root = realservers.chroot_root()
    tmp = Path(tempfile.mkdtemp(prefix="lagadvisor-bench-", dir=root / "tmp"))
    try:
        inside = tmp / path.name
        try:
            os.link(path, inside)     # same file system: no copy
        except OSError:
            shutil.copyfile(path, inside)  # before any timing: not counted
        chroot_file = "/" + str(inside.relative_to(root))
        py = [sys.executable, "-m", "lagadvisor"]
        plan: list[tuple[str, list[str], dict | None]] = [
            ("mysqlbinlog", ["chroot", str(root), "mysqlbinlog", chroot_file], None),
            ("mysqlbinlog -vv", ["chroot", str(root), "mysqlbinlog", "-vv", chroot_file], None),
            ("lagadvisor analyze", [*py, "analyze", str(path)], lagadvisor_env(False)),
            ("lagadvisor simulate", [*py, "simulate", str(path), "--workers", WORKERS], lagadvisor_env(False)),
            ("lagadvisor advise", [*py, "advise", str(path)], lagadvisor_env(False)),
            ("lagadvisor export --format jsonl", [*py, "export", "--format", "jsonl", str(path)], lagadvisor_env(False)),
            ("lagadvisor graph", [*py, "graph", str(path)], lagadvisor_env(False)),
        ]
        schema = tmp / "sbtest.sql"
        schema.write_text(SCHEMA)
        for cmd in ("analyze", "advise", "graph", "export --format jsonl"):
            plan.append((f"lagadvisor {cmd} --schema", [*py, *cmd.split(), "--schema", str(schema), str(path)],
                         lagadvisor_env(False)))
        if args.with_pure:
            plan.append(("lagadvisor analyze (pure Python)", [*py, "analyze", str(path)], lagadvisor_env(True)))
            plan.append(("lagadvisor simulate (pure Python)", [*py, "simulate", str(path), "--workers", WORKERS],
                         lagadvisor_env(True)))
        files_bytes = meta["bytes"]
        skipped = []
        if args.jobs:
            if has_jobs_option():
                links = []
                for k in range(args.files):
                    link = tmp / f"jobs.{k + 1:06d}"
                    os.link(inside, link)
                    links.append(str(link))
                for j in sorted({1, args.jobs}):  # the same files on one process, then on N
                    plan.append((f"lagadvisor analyze --jobs {j} ({args.files} files)",
                                 [*py, "analyze", "--jobs", str(j), *links], lagadvisor_env(False)))
            else:
                skipped.append(f"analyze --jobs {args.jobs}: this lagadvisor has no --jobs option")
        results = []
        for name, cmd, env in plan:
            runs = []
            for k in range(args.repeat):
                log(f"{name} (run {k + 1}/{args.repeat})")
                runs.append(measure(cmd, env))
            scale = args.files if "--jobs" in name else 1
            wall = statistics.median(r["wall_s"] for r in runs)
            results.append({
                "command": name, "argv": ["FILE" if a in (chroot_file, str(path)) else a for a in cmd],
                "runs": runs, "wall_s": wall,
                "cpu_s": statistics.median(r["cpu_s"] for r in runs),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                "mb_per_s": files_bytes * scale / 1e6 / wall,
                "transactions_per_s": meta["transactions"] * scale / wall,
            })
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = {r["command"]: r["wall_s"] for r in results}
    for r in results:
        r["x_mysqlbinlog"] = r["wall_s"] / base["mysqlbinlog"]
        r["x_mysqlbinlog_vv"] = r["wall_s"] / base["mysqlbinlog -vv"]
        if r["command"].startswith("lagadvisor") and "--jobs" not in r["command"] and "pure" not in r["command"]:
            analyze = "lagadvisor analyze --schema" if r["command"].endswith("--schema") else "lagadvisor analyze"
            r["x_analyze"] = r["wall_s"] / base[analyze]
    return {"binlog": meta, "repeat": args.repeat, "cores": os.cpu_count(),
            "native_simulation": native_sim_built(), "results": results, "skipped": skipped,
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}


def native_sim_built() -> bool:
    r = subprocess.run([sys.executable, "-c", "import lagadvisor.sim.engine as e; print(e.NATIVE is not None)"],
                       capture_output=True, text=True, env=lagadvisor_env(False))
    return r.stdout.strip() == "True"


def markdown(doc: dict) -> str:
    b = doc["binlog"]
    lines = [f"{b['file']}: {b['bytes'] / 1e6:,.1f} MB, {b['transactions']:,} transactions "
             f"(MySQL {b['server']}, {b['workload']}); median of {doc['repeat']} run(s); "
             f"{doc['cores']} cores; native simulation engine: {'yes' if doc['native_simulation'] else 'no'}",
             "",
             "| command | wall s | CPU s | MB/s | transactions/s | peak RSS MB | x mysqlbinlog | x mysqlbinlog -vv "
             "| x analyze |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in doc["results"]:
        xa = f"{r['x_analyze']:.2f}" if "x_analyze" in r else ""
        lines.append(f"| {r['command']} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['mb_per_s']:.1f} | "
                     f"{r['transactions_per_s']:,.0f} | {r['peak_rss_mb']:,.0f} | {r['x_mysqlbinlog']:.2f} | "
                     f"{r['x_mysqlbinlog_vv']:.2f} | {xa} |")
    for s in doc["skipped"]:
        lines.append(f"\nskipped: {s}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "data",
                    help="where the binlog is built and cached (default bench/data, git-ignored)")
    ap.add_argument("--min-mb", type=int, default=500, help="minimum size of the binlog file, MB")
    ap.add_argument("--repeat", type=int, default=1, help="runs per command; the median is reported")
    ap.add_argument("--with-pure", action="store_true", help="also LAGADVISOR_PUREPYTHON=1 (slow)")
    ap.add_argument("--jobs", type=int, default=0, help="also analyze --jobs N, if the option exists")
    ap.add_argument("--files", type=int, default=4, help="files for the --jobs measurement (links)")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "throughput.json")
    ap.add_argument("--no-docs", action="store_true", help="do not write the table into docs/ (see bench/docs_tables.py)")
    args = ap.parse_args()
    meta = build(args.data, args.min_mb)
    if args.build_only:
        print(json.dumps(meta, indent=2))
        return 0
    doc = run_all(args.data, meta, args)
    table = markdown(doc)
    doc["table"] = table
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    print(table)
    if not args.no_docs:
        write_table("performance.md", "throughput", table, conditions(f"results in {args.out.name}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
