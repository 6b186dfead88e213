#!/usr/bin/env python3
"""The many-core lab's catch-ups against ``lagadvisor simulate --catch-up --cores N``.

Reads the JSON of bench/manycore/lab.py (``manycore.json``) and, for each backlog and
durability, simulates the same transactions (the first ``transactions`` of the backlog: the lab
applies a share of each, and ``--stop-position`` cuts the source's binlog there) with the same
replica settings (``--policy recorded``, commit order preserved, ``--durable``/``--relaxed``),
the machine's cores (``--cores``, default the JSON's), and prints measured against predicted
seconds and speedups (the lab's speedup is the median of each round's ratio to the same round's
one-worker run) per worker count, as a Markdown table.  ``--out`` also writes the rows as JSON.

Usage: PYTHONPATH=src python3 bench/manycore/compare.py LAB.json [--cores 16] [--cost-model M.json]
                                                                 [--backlogs DIR] [--out rows.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tarfile
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "manycore"))
from lab import Backlog, kept_tag, lab_stem, read_json  # noqa: E402  (the lab's relay logs: the same files and cut; kept names)
from replica_catchup import lagadvisor  # noqa: E402  (runs `python -m lagadvisor ...`, returns stdout)
from timeline import stalls, switches  # noqa: E402  (the timelines' pauses and cost of changing worker)

DATA = ROOT / "bench" / "data" / "manycore"


def backlog_dir(arg: Path | None) -> Path:
    """The generated backlogs here, or the carried tar unpacked into a temporary folder."""
    if arg is not None:
        return arg
    if (DATA / "backlogs").is_dir():
        return DATA / "backlogs"
    tmp = Path(tempfile.mkdtemp(prefix="manycore-backlogs-"))
    with tarfile.open(DATA / "backlogs.tar.xz") as tar:
        tar.extractall(tmp)
    return tmp / "backlogs"


def simulate(folder: Path, n: int, workers: list[int], config: str, cores: int, cost: str | None) -> dict[int, dict]:
    """``simulate --catch-up`` of the backlog's first *n* transactions (the files and the cut
    the lab's relay log had: ``--stop-position`` where transaction n+1 begins): {workers: result}."""
    args = ["simulate", "--catch-up", "--policy", "recorded", "--cores", str(cores),
            "--workers", ",".join(map(str, workers)), "--format", "json", f"--{config}"]
    if cost:
        args += ["--cost-model", cost]
    if (folder / "schema.sql").exists():  # its dump: the foreign keys whose checks the model prices
        args += ["--schema", str(folder / "schema.sql")]
    prefix = Backlog.load(folder).prefix(n)
    if prefix[-1][1] is not None:
        args += ["--stop-position", str(prefix[-1][1])]
    sim = json.loads(lagadvisor(*args, *(str(path) for path, _ in prefix)))
    if sim["transactions"] != n:
        raise SystemExit(f"{folder.name}: simulate read {sim['transactions']} transactions, the lab applied {n}")
    return {r["workers"]: r for r in sim["results"]}


def kept_dir(lab_path: Path) -> Path:
    """Where a lab run's kept replica binlogs are unpacked: ``bench/data/manycore/kept/STEM``
    for ``STEM.json`` (``tar -C`` that folder ``-xf replica_binlogs_N.tar``); the first device
    run's (bench/manycore_16core.json) were unpacked into ``bench/data/manycore/device1``."""
    own = DATA / "kept" / lab_stem(lab_path)
    return DATA / "device1" if not own.is_dir() and lab_stem(lab_path) == "manycore_16core" else own


def commit_times(binlog: Path) -> list[int]:
    """The ``immediate_commit_timestamp`` (us) of every transaction in a replica binlog (plain or
    gzipped), read with ``lagadvisor export``."""
    return [json.loads(line)["immediate_commit_ts_us"] for line in lagadvisor("export", str(binlog)).splitlines()]


def startups(lab: dict, folder: Path) -> list[dict]:
    """What the lab's timed catch-ups hold besides applying: the replica's start (``START REPLICA
    SQL_THREAD`` to its first commit: threads, relay log). For each run that carries its own
    first-to-last commit span (``commit_span_s``: lab.py reads it from the catch-up's binlog from
    the seventh device run on) and each kept run (its replica binlog in *folder*, :func:`kept_dir`),
    its time less that span (a kept binlog's ``immediate_commit_timestamp``s read with ``lagadvisor
    export``). A kept binlog that does not hold the run's transactions (another run's) is refused."""
    out = []
    for r in lab["runs"]:
        span = own_span(r) if r.get("phase") in ("relaxed", "durable") else None
        if span is None:
            path = folder / f"{kept_tag(r.get('workload'), r.get('config'), r.get('workers'), r.get('round', 1))}.binlog.000002.gz"
            if not r.get("keep") or not path.exists():
                continue
            ts = commit_times(path)
            if len(ts) != r["transactions"]:
                raise SystemExit(f"{path}: {len(ts)} transactions, but the lab's run applied {r['transactions']}: "
                                 "the binlogs of another lab run?")
            span = (max(ts) - min(ts)) / 1e6
        out.append({"workload": r["workload"], "config": r["config"], "workers": r["workers"],
                    "seconds": r["seconds"], "commit_span_s": round(span, 6), "startup_s": round(r["seconds"] - span, 6)})
    return out


#: The commits the coordinator makes at ``START REPLICA SQL_THREAD`` before the first transaction
#: is applied: 3 + 3 per worker (every worker's ``mysql.slave_worker_info`` row; bench/manycore/
#: startup_probe.py counts them in performance_schema: 6, 9, 15, 27, 51, 99 at 1-32 workers, and the
#: device's instrumented rounds 3 per worker more on top of their catch-up's own).
def start_commits(workers: int) -> int:
    return 3 + 3 * workers


#: What of the replica's start does not grow with the workers (threads, the relay log), as a share
#: of the start at 16 workers: bench/manycore/startup_probe.py on the 2-core VM, the line of the
#: start on those commits (bench/manycore_startup_probe_2core.json: 1.71 ms + 0.247 ms a commit,
#: 11.9% at 16 workers). On the device the start at 16 workers is 25-41 ms (the kept binlogs) and
#: its instrumented rounds' coordinator commits cost 0.39-0.61 ms each, the same split.
START_FIXED_SHARE = 0.119


@dataclass(frozen=True)
class Start:
    """The replica's start (``START REPLICA SQL_THREAD`` to its first commit) at each worker count,
    from the start measured at ``ref_workers``: ``fixed_share`` of it stays, the rest grows with
    :func:`start_commits`. ``fixed_share`` 1: the same start at every count (what compare.py took
    off until the sixth device run, ``--constant-start``)."""

    ref_s: float
    ref_workers: int = 16
    fixed_share: float = START_FIXED_SHARE

    def at(self, workers: int) -> float:
        grow = start_commits(workers) / start_commits(self.ref_workers)
        return self.ref_s * (self.fixed_share + (1.0 - self.fixed_share) * grow)


def start_at(startup: Start | float, workers: int) -> float:
    """The start to take off a catch-up of ``workers`` workers: a :class:`Start`'s, or a number's
    (the same at every count)."""
    return startup.at(workers) if isinstance(startup, Start) else float(startup)


def start_of_report(done: dict) -> Start | float:
    """The start an earlier ``--out`` (compare.py's or calibrate_check.py's) took off: its
    :class:`Start`, or (written before it) its one ``startup_s`` at every worker count."""
    return Start(**done["start"]) if "start" in done else done["startup_s"]


def startup_of(lab: dict, given: float | None, folder: Path, constant: bool = False) -> tuple[Start, list[dict]]:
    """The start to take off a measured time that has no commit span of its own (:class:`Start`):
    ``given`` (at 16 workers), else the median of :func:`startups` at 16 workers (or their middle
    worker count); with ``constant``, the same at every worker count."""
    runs = startups(lab, folder) if given is None else []
    share = 1.0 if constant else START_FIXED_SHARE
    if given is not None:
        return Start(given, 16, share), runs
    if not runs:
        raise SystemExit(f"no kept replica binlog under {folder} and no run with its own commit span: give "
                         "--startup-s (0 for none)")
    counts = sorted({x["workers"] for x in runs})
    workers = 16 if 16 in counts else counts[len(counts) // 2]
    at = sorted(x["startup_s"] for x in runs if x["workers"] == workers)
    return Start(at[len(at) // 2], workers, share), runs


def own_span(run: dict) -> float | None:
    """A catch-up's own first-to-last commit span, when the lab read it from the catch-up's binlog
    (``commit_span_s``, lab.py ``commit_span``) over every transaction it applied; else None."""
    if "commit_span_s" in run and run.get("commits") == run.get("transactions"):
        return run["commit_span_s"]
    return None


def applying_s(run: dict, startup: Start | float) -> float:
    """A timed catch-up's time less the replica's start: its :func:`own_span`, else its time less
    :func:`start_at` its worker count."""
    span = own_span(run)
    return span if span is not None else run["seconds"] - start_at(startup, run["workers"])


def applying_times(lab: dict, startup: Start | float) -> dict[tuple[str, str], dict[int, dict[int, float]]]:
    """The timed catch-ups' :func:`applying_s` by (workload, durability), round and workers."""
    times: dict[tuple[str, str], dict[int, dict[int, float]]] = {}
    for r in lab["runs"]:
        if r.get("phase") in ("relaxed", "durable") and "seconds" in r:
            times.setdefault((r["workload"], r["config"]), {}).setdefault(r["round"], {})[r["workers"]] = \
                applying_s(r, startup)
    return times


def applying_medians(lab: dict, startup: Start | float) -> dict[tuple[str, str, int], float]:
    """The median over the rounds of each cell's :func:`applying_s` (the upper of two middle ones,
    as lab.py's ``median_s``), by (workload, durability, workers)."""
    cells: dict[tuple[str, str, int], list[float]] = {}
    for (wl, cfg), rounds in applying_times(lab, startup).items():
        for per in rounds.values():
            for w, t in per.items():
                cells.setdefault((wl, cfg, w), []).append(t)
    return {k: sorted(v)[len(v) // 2] for k, v in cells.items()}


def round_speedups(lab: dict, startup: Start | float = 0.0) -> dict[tuple[str, str, int], list[float]]:
    """Each round's speedup (its one-worker time over its w-worker time, each less its start:
    :func:`applying_s`), by workload, durability and workers: the median is the measured speedup;
    the spread, how far the rounds disagree."""
    out: dict[tuple[str, str, int], list[float]] = {}
    for (wl, cfg), rounds in applying_times(lab, startup).items():
        for per in rounds.values():
            for w, t in per.items():
                if 1 in per and t > 0:
                    out.setdefault((wl, cfg, w), []).append(round(per[1] / t, 3))
    return out


def measured_groups(lab: dict) -> dict[tuple[str, str, int], int]:
    """The median over the rounds of each durable catch-up's binlog fsyncs (``counters``, from
    performance_schema's file_summary_by_event_name): with sync_binlog=1 one per commit group
    (binlog.cc ``MYSQL_BIN_LOG::sync_binlog_file`` once per sync stage), the count the simulation
    calls ``flushes``. A count, not a time: the rounds agree on it within a few percent where
    their times differ by 10-50%."""
    per: dict[tuple[str, str, int], list[int]] = {}
    for r in lab["runs"]:
        if r.get("phase") == "durable" and "seconds" in r and "binlog_fsyncs" in r.get("counters", {}):
            per.setdefault((r["workload"], r["config"], r["workers"]), []).append(r["counters"]["binlog_fsyncs"])
    return {k: sorted(v)[len(v) // 2] for k, v in per.items()}


def check_backlog(wl: str, ran: dict, folder: Path, regenerated: bool = False) -> None:
    """Stop unless *folder* holds the backlog the lab ran (its source uuid), or, with
    *regenerated* (``--regenerated``), gen_backlogs.py's same workload again: the same seed,
    transactions and description, so the same statements under a new source uuid (bench/data/ is
    never committed, so a new checkout generates it again; the committed runs' compare outputs
    came back identical so, docs/accuracy.md)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    uuid = ran["target"].split(":")[0]
    if uuid == manifest["source_uuid"]:
        return
    same = all(ran.get(k) == manifest.get(k) for k in ("seed", "transactions", "description"))
    if regenerated and same:
        print(f"{wl}: {folder} was generated again (source {manifest['source_uuid']}; the lab ran {uuid}): "
              "the same seed, transactions and description", file=sys.stderr)
        return
    raise SystemExit(f"{wl}: the lab ran the backlog of source {uuid}, {folder} is of {manifest['source_uuid']}"
                     + ("" if same else " and another seed, count or description")
                     + ("; --regenerated accepts gen_backlogs.py's same workload" if same and not regenerated else ""))


def compare(lab: dict, backlogs: Path, cores: int, cost: str | None, startup: Start | float = 0.0,
            regenerated: bool = False) -> list[dict]:
    """One row per workload, durability and worker count measured by the lab: its median time
    less its start (:func:`start_at`: what the simulation does not model), the median of
    the rounds' speedups so corrected, and for a durable replica its commit groups, measured
    (:func:`measured_groups`) and simulated."""
    counts = {(r["workload"], r["config"]): r["transactions"] for r in lab["runs"]
              if r.get("phase") in ("relaxed", "durable") and "seconds" in r}
    rounds = round_speedups(lab, startup)
    medians = applying_medians(lab, startup)
    groups = measured_groups(lab)
    rows = []
    for wl, cfgs in lab["summary"].items():
        check_backlog(wl, lab["backlogs"][wl], backlogs / wl, regenerated)
        for cfg, per_w in cfgs.items():
            workers = sorted(int(w) for w in per_w)
            n = counts[(wl, cfg)]
            predicted = simulate(backlogs / wl, n, workers, cfg, cores, cost)
            one_p = predicted[1]["apply_seconds"] if 1 in predicted else None
            for w in workers:
                m, p = per_w[str(w)], predicted[w]
                ps = one_p / p["apply_seconds"] if one_p and p["apply_seconds"] else None
                got = sorted(rounds.get((wl, cfg, w), []))
                ms = got[len(got) // 2] if got else None
                t = medians[(wl, cfg, w)]
                rows.append({"workload": wl, "config": cfg, "workers": w, "transactions": n,
                             "measured_s": round(t, 4), "measured_raw_s": m["median_s"],
                             "predicted_s": round(p["apply_seconds"], 4),
                             "time_error": round(p["apply_seconds"] / t - 1, 4),
                             "measured_speedup": ms, "measured_raw_speedup": m["speedup"],
                             "predicted_speedup": round(ps, 3) if ps else None,
                             "speedup_error": round(ps / ms - 1, 4) if ps and ms else None,
                             "rounds": m["rounds"], "round_speedups": got})
                if (wl, cfg, w) in groups:
                    rows[-1].update(measured_groups=groups[(wl, cfg, w)], predicted_groups=p["flushes"])
    return rows


def groups_table(rows: list[dict]) -> list[str]:
    """The durable rows' commit groups, measured against simulated, one line per workload
    (``predicted/measured`` at each worker count): where the model's group commit forms bigger or
    smaller groups than the server's, its time can still match, with the fsyncs' cost misplaced."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("measured_groups"):
            by.setdefault(r["workload"], []).append(r)
    if not by:
        return []
    workers = sorted({r["workers"] for rs in by.values() for r in rs})
    out = ["| workload | trx | " + " | ".join(f"{w} worker{'s' * (w > 1)}" for w in workers) + " |",
           "|---|---|" + "---|" * len(workers)]
    for wl, rs in by.items():
        cell = {r["workers"]: f"{r['measured_groups']} / {r['predicted_groups']} ({r['predicted_groups'] / r['measured_groups']:.2f}x)"
                for r in rs}
        out.append(f"| {wl} | {rs[0]['transactions']} | " + " | ".join(cell.get(w, "-") for w in workers) + " |")
    return out


def where_time_went(lab: dict) -> list[str]:
    """The instrumented runs' breakdown (lab.breakdown: thread-seconds, summed over the workers)
    as a Markdown table."""
    runs = [r for r in lab["runs"] if r.get("phase") == "instrumented" and "performance_schema" in r]
    if not runs:
        return []
    keys = list(runs[0]["performance_schema"]["breakdown"])
    lines = ["| workload | replica | workers | catch-up s | " + " | ".join(k[:-2] for k in keys) + " |",
             "|---|---|---|---|" + "---|" * len(keys)]
    for r in runs:
        b = r["performance_schema"]["breakdown"]
        lines.append(f"| {r['workload']} | {r['config']} | {r['workers']} | {r['seconds']:.3f} | "
                     + " | ".join(f"{b[k]:.3f}" for k in keys) + " |")
    return lines


def wakeups(lab: dict) -> list[str]:
    """The instrumented runs' wake-up latencies (bench/manycore/timeline.py) as a Markdown table:
    median (quartiles) microseconds and samples; the last line, the medians of the runs' medians
    (what ``CostModel.handoff_us`` and ``wakeup_us`` are measured as)."""
    runs = [r for r in lab["runs"] if r.get("phase") == "instrumented" and r.get("timeline", {}).get("transactions")]
    if not runs:
        return []

    lines = ["| workload | replica | workers | hand-off us (quartiles), pairs | coordinator wake-up us, waits "
             "| its wait's end to the next worker start us | wake-up to worker start us |", "|---|---|---|---|---|---|---|"]
    hand, wake = [], []
    for r in runs:
        t = r["timeline"]
        both = (t["coordinator_wakeup"].get("median_us", 0) + t["dispatch_to_worker_start"].get("median_us", 0)
                if t["coordinator_wakeup"].get("n") and t["dispatch_to_worker_start"].get("n") else None)
        lines.append(f"| {r['workload']} | {r['config']} | {r['workers']} | {_quartile_cell(t['handoff'])} "
                     f"| {_quartile_cell(t['coordinator_wakeup'])} | {_quartile_cell(t['dispatch_to_worker_start'])} "
                     f"| {'-' if both is None else f'{both:.1f}'} |")
        if t["handoff"].get("n", 0) >= 10:
            hand.append(t["handoff"]["median_us"])
        if both is not None and t["coordinator_wakeup"]["n"] >= 100:
            wake.append(both)
    if hand and wake:
        lines.append(f"| median of the runs' medians | | | {median(hand):.1f} ({len(hand)} runs with 10+ pairs) | | "
                     f"| {median(wake):.1f} ({len(wake)} runs with 100+ waits) |")
    return lines


def worker_switches(lab_path: Path) -> list[str]:
    """The chains' cost of changing worker (timeline.py ``switches``) as a Markdown table, from the
    lab's full timelines (``<lab>_timelines.json.gz`` beside it, when there is one)."""
    path = lab_path.with_name(lab_stem(lab_path) + "_timelines.json.gz")
    if not path.is_file():
        return []
    runs = json.loads(gzip.decompress(path.read_bytes()))["runs"]
    lines = ["| run | chain transactions | on another worker | own time, same worker us (quartiles) "
             "| own time, another worker us (quartiles) | difference of the medians us |", "|---|---|---|---|---|---|"]
    for name, tl in runs.items():
        sw = switches(tl) if tl.get("transactions") else {"chain": 0}
        if not sw["chain"]:
            continue
        extra = "-" if sw["extra_us"] is None else f"{sw['extra_us']:+.1f}"
        lines.append(f"| {name} | {sw['chain']} | {sw['other_worker']['n'] / sw['chain']:.0%} "
                     f"| {_quartile_cell(sw['same_worker'])} | {_quartile_cell(sw['other_worker'])} | {extra} |")
    return lines


def applier_stalls(lab_path: Path) -> list[str]:
    """The timelines' stalls (timeline.py ``stalls``: more than 1 ms without a commit while two or
    more transactions were stuck in their own work) as a Markdown table, one row per run."""
    path = lab_path.with_name(lab_stem(lab_path) + "_timelines.json.gz")
    if not path.is_file():
        return []
    runs = json.loads(gzip.decompress(path.read_bytes()))["runs"]
    lines = ["| run | stalls | stalled ms | longest ms | share of the catch-up | transactions stuck (median) |",
             "|---|---|---|---|---|---|"]
    for name, tl in runs.items():
        if tl.get("transactions"):
            st = stalls(tl)
            lines.append(f"| {name} | {st['count']} | {st['total_us'] / 1000:.1f} | {st['max_us'] / 1000:.1f} "
                         f"| {st['share']:.1%} | {st['in_flight']:g} |")
    return lines


def _quartile_cell(q: dict) -> str:
    return f"{q['median_us']:.1f} ({q['p25_us']:.0f}-{q['p75_us']:.0f}), {q['n']}" if q.get("n") else "-"


def cores_shown(lab: dict) -> str:
    """What the replica's defaults showed of the machine's cores (lab.py records them; lagadvisor's
    server/cores.py reads them for advise --host without --cores) against its real count, or ""
    for a lab JSON from before."""
    m = lab.get("mysqld", {})
    if "innodb_read_io_threads" not in m:
        return ""
    sys.path.insert(0, str(ROOT / "src"))
    from lagadvisor.server.cores import exposed_cores

    e = exposed_cores(m["version"], m["innodb_read_io_threads"], m.get("innodb_read_io_threads_source"))
    real = lab["machine"]["cores"]
    if e is None:
        return (f"the replica's defaults show no core count (innodb_read_io_threads={m['innodb_read_io_threads']}, "
                f"{m.get('innodb_read_io_threads_source')}); the machine has {real}")
    held = e.low <= real and (e.high is None or real <= e.high)
    return (f"the replica's defaults show {e.low}{'' if e.high == e.low else f'-{e.high}' if e.high else '+'} cores "
            f"({e.cores} assumed by advise --host): the machine has {real}, "
            f"{'within' if held else 'OUTSIDE'} them")


def host_steal(lab: dict) -> str:
    """What the hypervisor took from the lab machine while it timed the catch-ups (lab.py's
    ``host_cpu_s``, /proc/stat): steal over all the machine's CPU seconds, and whether the runs that
    were slow for their cell (10% or more over its median) had more of it than the rest; "" for a
    lab JSON from before."""
    runs = [r for r in lab.get("runs", []) if r.get("phase") in ("relaxed", "durable") and r.get("host_cpu_s")]
    if not runs:
        return ""
    cells: dict[tuple, list[float]] = {}
    for r in runs:
        cells.setdefault((r["workload"], r["config"], r["workers"]), []).append(r["seconds"])
    median = {k: sorted(v)[len(v) // 2] for k, v in cells.items()}

    def share(group: list[dict]) -> str:
        total = sum(sum(r["host_cpu_s"].values()) for r in group)
        return f"{sum(r['host_cpu_s'].get('steal', 0.0) for r in group) / total:.1%}" if total > 0 else "-"

    slow, rest = [], []
    for r in runs:
        (slow if r["seconds"] >= 1.1 * median[(r["workload"], r["config"], r["workers"])] else rest).append(r)
    steal = sum(r["host_cpu_s"].get("steal", 0.0) for r in runs)
    return (f"host: steal {steal:.2f} s over the {len(runs)} timed catch-ups ({share(runs)} of the machine's CPU "
            f"seconds); the {len(slow)} runs 10%+ slower than their cell's median: {share(slow)}, the rest: {share(rest)}")


def lab_cores(lab: dict) -> int:
    """The cores the lab's replica could run on: ``cores_usable`` (its CPU affinity: ``lab.py
    --cpus N``, or a container's limit), else the machine's ``cores``."""
    m = lab["machine"]
    return m.get("cores_usable") or m["cores"]


def open_lab(path: Path) -> tuple[dict, int, Path]:
    """The lab JSON, the cores its replica could use (:func:`lab_cores`) and the backlogs (the
    scripts that compare with it run ``python -m lagadvisor`` from this checkout's src/)."""
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    lab = read_json(path)
    return lab, lab_cores(lab), backlog_dir(None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", type=Path, help="manycore.json written by bench/manycore/lab.py")
    ap.add_argument("--cores", type=int, default=None, help="default: the cores the lab's replica could use")
    ap.add_argument("--cost-model", default=None)
    ap.add_argument("--backlogs", type=Path, default=None, help="default bench/data/manycore/backlogs")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--startup-s", type=float, default=None,
                    help="seconds of a 16-worker catch-up before its first commit; the start taken off each "
                         "measured time grows from it with the workers (Start) (default: the median over the "
                         "kept runs' own replica binlogs; 0: none)")
    ap.add_argument("--constant-start", action="store_true",
                    help="take the same start off every worker count (as compare.py did until the sixth device run)")
    ap.add_argument("--regenerated", action="store_true",
                    help="accept backlogs gen_backlogs.py wrote again (same seed, count, description; new uuid)")
    args = ap.parse_args()
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    lab = read_json(args.lab)
    cores = args.cores or lab_cores(lab)
    startup, kept = startup_of(lab, args.startup_s, kept_dir(args.lab), args.constant_start)
    rows = compare(lab, backlog_dir(args.backlogs), cores, args.cost_model, startup, args.regenerated)
    m = lab["machine"]
    timed = [r for r in lab["runs"] if r.get("phase") in ("relaxed", "durable") and "seconds" in r]
    own = sum(own_span(r) is not None for r in timed)
    if own == len(timed):
        start = "each less the replica's start, its own (its binlog's first-to-last commit span)\n"
    else:
        start = (f"less the replica's start, {startup.ref_s * 1e3:.1f} ms at {startup.ref_workers} workers (the median "
                 f"of the {sum(k['workers'] == startup.ref_workers for k in kept)} runs there whose first-to-last "
                 "commit span is known: their time less it)"
                 + (", the same at every worker count" if startup.fixed_share == 1 else
                    f", {startup.at(1) * 1e3:.1f} ms at 1 and {startup.at(32) * 1e3:.1f} ms at 32 (3 coordinator "
                    "commits a worker: Start)")
                 + (f"; {own} of {len(timed)} by their own commit span\n" if own else "\n"))
    print(f"lab: {m['cores']} cores, {m['cpu_model']}, kernel {m['kernel']}; simulate --cores {cores}"
          f"{' --cost-model ' + args.cost_model if args.cost_model else ' (built-in model)'}; every measured time {start}")
    for line in (cores_shown(lab), host_steal(lab)):
        if line:
            print(line + "\n")
    print("| workload | replica | workers | trx | measured s | predicted s | time error "
          "| measured speedup (rounds) | predicted speedup | speedup error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        se = f"{r['speedup_error']:+.1%}" if r["speedup_error"] is not None else "-"
        spread = (f" ({min(r['round_speedups']):.2f}-{max(r['round_speedups']):.2f})"
                  if r["workers"] > 1 and r["round_speedups"] else "")
        print(f"| {r['workload']} | {r['config']} | {r['workers']} | {r['transactions']} | {r['measured_s']:.3f} "
              f"| {r['predicted_s']:.3f} | {r['time_error']:+.1%} | {r['measured_speedup'] or 0:.2f}x{spread} "
              f"| {r['predicted_speedup'] or 0:.2f}x | {se} |")
    multi = [r for r in rows if r["workers"] > 1 and r["speedup_error"] is not None]
    print(f"\nspeedups within 15% of the median: {sum(abs(r['speedup_error']) <= 0.15 for r in multi)} of {len(multi)}; "
          f"within the rounds' range or 15%: "
          f"{sum(abs(r['speedup_error']) <= 0.15 or min(r['round_speedups'] or [0]) <= r['predicted_speedup'] <= max(r['round_speedups'] or [0]) for r in multi)}"
          f" of {len(multi)}; times within 15%: {sum(abs(r['time_error']) <= 0.15 for r in rows)} of {len(rows)}")
    for wl in dict.fromkeys(r["workload"] for r in rows):
        ok = {cfg: all(abs(r["speedup_error"]) <= 0.15 for r in multi if (r["workload"], r["config"]) == (wl, cfg))
              for cfg in dict.fromkeys(r["config"] for r in rows if r["workload"] == wl)}
        print(f"  {wl}: every multi-worker speedup within 15%: " + ", ".join(f"{c} {'yes' if v else 'no'}" for c, v in ok.items()))
    table = groups_table(rows)
    if table:
        print("\nCommit groups, durable (measured binlog fsyncs, median of the rounds / simulated flushes):\n")
        print("\n".join(table))
    table = where_time_went(lab)
    if table:
        print("\nWhere the time went (instrumented round; thread-seconds, workers summed):\n")
        print("\n".join(table))
    table = wakeups(lab)
    if table:
        print("\nWake-ups (instrumented round's per-transaction timelines, bench/manycore/timeline.py):\n")
        print("\n".join(table))
    table = worker_switches(args.lab)
    if table:
        print("\nChanging worker in a chain (the timelines' transactions that started after their predecessor "
              "ended; own time: start to end less the commit-order wait):\n")
        print("\n".join(table))
    table = applier_stalls(args.lab)
    if table:
        print("\nStalls (the timelines' gaps of over 1 ms without a commit, two or more transactions stuck in "
              "their own work, none waiting for commit order; on mixed they include its 1,000-2,000-row "
              "transactions, which the model simulates; on the other backlogs the model has no such pause):\n")
        print("\n".join(table))
    if args.out:
        args.out.write_text(json.dumps({"cores": cores, "cost_model": args.cost_model, "startup_s": startup.ref_s,
                                        "start": asdict(startup), "startups": kept, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
