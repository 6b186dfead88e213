#!/usr/bin/env python3
"""Which reset between two catch-ups is fastest: SQL (lab.reset) or a fresh datadir and a restart.

Both leave the replica where a catch-up starts: the workload's initial rows, no GTIDs or binlogs,
the backlog as its relay log.  The SQL reset is what bench/manycore/lab.py does; the other stops
mysqld, replaces the datadir with a copy taken right after a reset, and starts it again (as
bench/replica_catchup.py does with its snapshot).  Prints the seconds of each, per workload.

Usage: python3 bench/manycore/reset_cost.py [--workloads uniform,hot] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lab  # noqa: E402


def fresh_datadir(server: lab.Mysqld, snapshot: Path) -> float:
    """Stop, copy the snapshot over the datadir, start: seconds."""
    t0 = time.monotonic()
    server.stop()
    shutil.rmtree(server.datadir)
    subprocess.run(["cp", "-a", str(snapshot), str(server.datadir)], check=True)
    server.start()
    return time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default="uniform,hot")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=lab.DATA / "reset-cost")
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    lab.unpack(lab.DATA / "mysql-kit.tar.xz", args.workdir)
    lab.unpack(lab.DATA / "backlogs.tar.xz", args.workdir)
    server = lab.Mysqld(args.workdir / "mysql-kit", args.workdir / "replica",
                        [*lab.REPLICA_OPTIONS, "--innodb-buffer-pool-size=512M"])
    server.run_dir.mkdir()
    server.initialize()
    server.start()
    settings = {**lab.CONFIGS["relaxed"], "replica_parallel_workers": 4}
    try:
        for name in args.workloads.split(","):
            backlog = lab.Backlog.load(args.workdir / "backlogs" / name)
            sql, fresh = [], []
            for _ in range(args.repeat):
                t0 = time.monotonic()
                lab.reset(server, backlog, settings)
                sql.append(time.monotonic() - t0)
            server.stop()
            snapshot = args.workdir / "snapshot"
            shutil.rmtree(snapshot, ignore_errors=True)
            subprocess.run(["cp", "-a", str(server.datadir), str(snapshot)], check=True)
            server.start()
            fresh = [fresh_datadir(server, snapshot) for _ in range(args.repeat)]
            size = sum(f.stat().st_size for f in snapshot.rglob("*") if f.is_file())
            print(f"{name}: SQL reset {statistics.median(sql):.2f} s (runs {[round(x, 2) for x in sql]}); "
                  f"fresh datadir ({size / 2**20:.0f} MiB) + restart {statistics.median(fresh):.2f} s "
                  f"(runs {[round(x, 2) for x in fresh]})", flush=True)
    finally:
        server.stop()
        shutil.rmtree(server.sock_dir, ignore_errors=True)
        shutil.rmtree(args.workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
