"""bench/manycore: the lab's plan, budget and summary, and the binlog cut the lab and compare.py share.

The lab itself runs a real mysqld from the kit (bench/manycore/README.md); these check the parts
that decide what a device run measures and how it is compared, on committed fixtures only.
"""

from __future__ import annotations

import importlib.util
from dataclasses import asdict
import tarfile
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "sysbench_oltp_write_only" / "binlog.000001"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"manycore_{name}", ROOT / "bench" / "manycore" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


lab = _load("lab")


def _backlogs(tmp_path: Path) -> dict:
    return {name: lab.Backlog(name, tmp_path, n, "u", ("binlog.000001",))
            for name, n in (("uniform", 10_000), ("hot", 5_000))}


def test_plan_order_puts_probes_relaxed_durable_then_instrumented():
    plan = lab.build_plan(["uniform", "hot"], [1, 2, 4, 8, 16, 32], 3)
    phases = [s.phase for s in plan]
    assert phases == sorted(phases, key=["probe", "relaxed", "durable", "instrumented"].index)
    main = [s for s in plan if s.phase in ("relaxed", "durable")]
    assert len(main) == 2 * 6 * 2 * 3
    # every round holds every workload at every worker count, alternately up and down
    r1 = [s.workers for s in main if s.phase == "relaxed" and s.round == 1 and s.workload == "hot"]
    r2 = [s.workers for s in main if s.phase == "relaxed" and s.round == 2 and s.workload == "hot"]
    assert r1 == [1, 2, 4, 8, 16, 32] and r2 == r1[::-1]
    # every round's 16-worker catch-up keeps its replica binlog (calibrate_check fits on each), and
    # the first round's one-worker catch-up of a dependency chain (a one-worker calibration
    # measures the coordinator's wake-up there)
    kept = [(s.workload, s.config, s.workers, s.round) for s in plan if s.keep]
    assert sorted(kept) == sorted([(wl, cfg, 16, r) for wl in ("hot", "uniform") for cfg in ("durable", "relaxed")
                                   for r in (1, 2, 3)] + [("hot", cfg, 1, 1) for cfg in ("durable", "relaxed")])
    inst = [s for s in plan if s.instrumented]
    assert {s.workers for s in inst if s.workload == "uniform"} == {1, 4, 8, 16, 32} and inst[0].workers == 16
    # the conflict-heavy shape also at 4 and 32 workers (its hand-offs and wake-ups)
    assert sorted((s.workers, s.config) for s in inst if s.workload == "hot") == [
        (4, "durable"), (4, "relaxed"), (8, "relaxed"), (16, "durable"), (16, "relaxed"), (32, "durable"),
        (32, "relaxed")]
    # the shapes that slow from 8 to 16 workers (steps.py), relaxed at 8 and 32 beside 16
    five = lab.build_plan(["uniform", "hot", "mixed", "nopk", "fk"], [1, 2, 4, 8, 16, 32], 3)
    extra = sorted((s.workload, s.workers) for s in five if s.instrumented and s.config == "relaxed"
                   and s.workload in ("fk", "nopk"))
    assert extra == [("fk", 8), ("fk", 16), ("fk", 32), ("nopk", 8), ("nopk", 16), ("nopk", 32)]


def test_plan_without_the_instrumented_round_is_the_timed_rounds_only():
    full = lab.build_plan(["uniform", "hot"], [1, 2, 4, 8, 16, 32], 5)
    bare = lab.build_plan(["uniform", "hot"], [1, 2, 4, 8, 16, 32], 5, instrumented=False)
    assert bare == [s for s in full if not s.instrumented] and len(bare) < len(full)
    assert {s.round for s in bare if s.phase == "durable"} == {1, 2, 3, 4, 5}


def test_fraction_fits_the_budget_and_is_clamped(tmp_path):
    backlogs = _backlogs(tmp_path)
    plan = [s for s in lab.build_plan(list(backlogs), [1, 2, 4], 3) if s.phase != "probe"]
    est = lab.Estimator(4)
    for wl in backlogs:
        for cfg, per in (("relaxed", 200e-6), ("durable", 600e-6)):
            est.per_trx[(wl, cfg, 1)] = per
            est.per_trx[(wl, cfg, 4)] = per / 2
        est.overhead[wl] = 1.0
    f = lab.choose_fraction(plan, backlogs, est, 80.0, 0.05, 1.0)
    total = sum(est.total_s(s, backlogs[s.workload].count(f)) for s in plan)
    assert 0.05 < f < 1.0 and total == pytest.approx(80.0, rel=0.02)
    assert lab.choose_fraction(plan, backlogs, est, 1e6, 0.05, 1.0) == 1.0
    assert lab.choose_fraction(plan, backlogs, est, 30.0, 0.05, 1.0) == 0.05


def test_summary_pairs_each_round_with_its_own_one_worker_run():
    runs = [{"phase": "relaxed", "workload": "u", "config": "relaxed", "workers": w, "round": r, "seconds": s}
            for r, (one, four) in enumerate(((2.0, 1.0), (4.0, 1.0), (3.0, 1.5)), 1)
            for w, s in ((1, one), (4, four))]
    runs.append({"phase": "probe", "workload": "u", "config": "relaxed", "workers": 4, "round": 0, "seconds": 9.0})
    cell = lab.summarize(runs)["u"]["relaxed"]["4"]
    assert cell["rounds"] == 3 and cell["seconds"] == [1.0, 1.0, 1.5]
    assert cell["speedup"] == 2.0  # rounds 2x, 4x, 2x: median_high 2x (not 3.0/1.0 of the medians)


def test_backlog_target_is_a_gtid_prefix(tmp_path):
    b = lab.Backlog("hot", tmp_path, 8000, "3e11fa47-71ca-11e1-9e33-c80aa9429562", ("binlog.000001",))
    assert b.target(0.25) == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-2000"
    assert b.count(2.0) == 8000 and b.count(0.0) == 1


def test_prefix_cuts_a_real_binlog_where_the_next_transaction_begins(tmp_path):
    offsets = lab.gtid_offsets(FIXTURE)
    assert len(offsets) > 10 and offsets == sorted(offsets) and offsets[0] > 4
    b = lab.Backlog("s", FIXTURE.parent, len(offsets), "u", (FIXTURE.name,))
    assert b.prefix(10) == [(FIXTURE, offsets[10])]
    assert b.prefix(len(offsets)) == [(FIXTURE, None)]
    # two files: the second is cut, the first is whole
    two = lab.Backlog("s", FIXTURE.parent, 2 * len(offsets), "u", (FIXTURE.name, FIXTURE.name))
    assert two.prefix(len(offsets) + 3) == [(FIXTURE, None), (FIXTURE, offsets[3])]
    assert two.prefix(len(offsets)) == [(FIXTURE, None)]


def test_kept_binlogs_pack_relaxed_first_into_tars_that_come_back(tmp_path, monkeypatch):
    monkeypatch.setattr(lab, "TAR_LIMIT", 6000)
    args = lab.parse_args(["--quick", "--max-tars", "2"])
    out, work = tmp_path / "out", tmp_path / "work"
    out.mkdir()
    kept = lab.Lab(args, out, work)
    for name, size in (("a-durable-w16.binlog.000002.gz", 3000), ("a-relaxed-w16.binlog.000002.gz", 3000),
                       ("b-relaxed-w16.binlog.000002.gz", 500), ("c-durable-w16.binlog.000002.gz", 3000),
                       ("huge-relaxed-w16.binlog.000002.gz", 9000)):
        (kept.keep_dir / name).write_bytes(b"x" * size)
    kept.server.sock_dir.rmdir()  # made by Mysqld for its socket; no server here
    assert kept.pack_binlogs() == ["replica_binlogs_1.tar", "replica_binlogs_2.tar"]
    with tarfile.open(out / "replica_binlogs_1.tar") as tar:
        assert tar.getnames() == ["a-relaxed-w16.binlog.000002.gz", "b-relaxed-w16.binlog.000002.gz"]
    assert kept.result["binlogs_not_sent"] == ["huge-relaxed-w16.binlog.000002.gz", "c-durable-w16.binlog.000002.gz"]


def test_kept_binlogs_of_later_rounds_pack_after_the_first_round_s(tmp_path, monkeypatch):
    """Round R's kept binlog is WL-CFG-w16-rR (the first round's keeps the committed runs' name);
    the tars take the first round's, relaxed first, before any later round's: what does not fit
    is a later round's."""
    assert lab.kept_tag("u", "relaxed", 16, 1) == "u-relaxed-w16"
    assert lab.kept_tag("u", "durable", 16, 3) == "u-durable-w16-r3"
    assert lab.parse_kept_tag("u-durable-w16-r3") == ("u", "durable", 16, 3)
    assert lab.parse_kept_tag("u-relaxed-w16") == ("u", "relaxed", 16, 1)
    assert lab.parse_kept_tag("manycore") is None
    monkeypatch.setattr(lab, "TAR_LIMIT", 8000)   # three of the four files (1,500 bytes + 1 KiB each)
    args = lab.parse_args(["--quick", "--max-tars", "1"])
    out, work = tmp_path / "out", tmp_path / "work"
    out.mkdir()
    kept = lab.Lab(args, out, work)
    for name in ("a-relaxed-w16-r2.binlog.000002.gz", "a-durable-w16.binlog.000002.gz",
                 "a-relaxed-w16.binlog.000002.gz", "a-durable-w16-r2.binlog.000002.gz"):
        (kept.keep_dir / name).write_bytes(b"x" * 1500)
    kept.server.sock_dir.rmdir()
    assert kept.pack_binlogs() == ["replica_binlogs_1.tar"]
    with tarfile.open(out / "replica_binlogs_1.tar") as tar:
        assert tar.getnames() == ["a-relaxed-w16.binlog.000002.gz", "a-durable-w16.binlog.000002.gz",
                                  "a-relaxed-w16-r2.binlog.000002.gz"]
    assert kept.result["binlogs_not_sent"] == ["a-durable-w16-r2.binlog.000002.gz"]


def test_breakdown_sorts_the_applier_time_into_its_parts():
    stages = {lab.COORDINATOR: {"stage/sql/Reading event from the relay log": [10, 0.2],
                                "stage/sql/Waiting for replica workers to process their queues": [3, 0.5],
                                "stage/sql/Waiting for dependent transaction to commit": [2, 0.1]},
              lab.WORKER: {"stage/sql/Waiting for an event from Coordinator": [5, 1.0],
                           "stage/sql/Waiting for preceding transaction to commit": [4, 0.3],
                           "stage/sql/waiting for handler commit": [9, 2.0],
                           "stage/sql/Applying batch of row changes (update)": [9, 0.4],
                           "stage/sql/Opening tables": [9, 0.1]}}
    waits = {lab.WORKER: {"wait/synch/cond/sql/MYSQL_BIN_LOG::COND_done": [5, 0.7],
                          "wait/synch/mutex/sql/MYSQL_BIN_LOG::LOCK_log": [5, 0.2],
                          "wait/io/file/innodb/innodb_log_file": [9, 0.6],
                          "wait/io/file/sql/binlog": [9, 0.5],
                          "wait/synch/mutex/innodb/trx_mutex": [99, 0.01],
                          "wait/synch/cond/sql/Worker_info::jobs_cond": [5, 1.0]}}
    b = lab.breakdown(stages, waits)
    assert b == {"coordinator_read_s": 0.2, "coordinator_wait_workers_s": 0.5, "coordinator_wait_dependency_s": 0.1,
                 "worker_idle_s": 1.0, "worker_apply_s": 0.5, "worker_commit_order_wait_s": 0.3,
                 "worker_commit_s": 2.0, "group_commit_wait_s": 0.9, "redo_io_s": 0.6, "binlog_io_s": 0.5,
                 "innodb_contention_s": 0.01}


def test_round_speedups_take_the_replicas_start_off_each_run():
    """compare.py: each round's speedup is (one-worker time - start) / (w-worker time - start): the
    start (START REPLICA to the first commit) is not applying; a number is the same start at every
    worker count."""
    compare = _load("compare")
    runs = [{"phase": "durable", "workload": "u", "config": "durable", "workers": w, "round": r, "seconds": s}
            for r, (one, four) in enumerate(((2.1, 0.6), (4.1, 1.1)), 1) for w, s in ((1, one), (4, four))]
    runs.append({"phase": "instrumented", "workload": "u", "config": "durable", "workers": 4, "round": 9, "seconds": 5.0})
    got = compare.round_speedups({"runs": runs}, startup=0.1)
    assert got[("u", "durable", 4)] == [4.0, 4.0] and got[("u", "durable", 1)] == [1.0, 1.0]
    assert compare.round_speedups({"runs": runs})[("u", "durable", 4)] == [3.5, round(4.1 / 1.1, 3)]
    start, kept = compare.startup_of({"runs": runs}, 0.25, Path("/nonexistent"), constant=True)
    assert kept == [] and [start.at(w) for w in (1, 16, 32)] == [0.25, 0.25, 0.25]


def test_the_replicas_start_grows_with_its_workers_coordinator_commits():
    """compare.Start: the start measured at 16 workers, its fixed share kept and the rest grown with
    the coordinator's commits at START REPLICA (3 + 3 per worker, startup_probe.py); the one-worker
    and w-worker times of a round each lose their own."""
    compare = _load("compare")
    assert [compare.start_commits(w) for w in (1, 2, 4, 8, 16, 32)] == [6, 9, 15, 27, 51, 99]
    start = compare.Start(0.051, 16, 0.2)
    assert start.at(16) == pytest.approx(0.051)
    assert start.at(1) == pytest.approx(0.051 * (0.2 + 0.8 * 6 / 51))
    assert start.at(32) == pytest.approx(0.051 * (0.2 + 0.8 * 99 / 51))
    assert compare.start_at(start, 8) == start.at(8) and compare.start_at(0.03, 8) == 0.03
    start, _ = compare.startup_of({"runs": []}, 0.031, Path("/nonexistent"))
    assert start.fixed_share == compare.START_FIXED_SHARE and start.at(16) == pytest.approx(0.031)
    runs = [{"phase": "relaxed", "workload": "u", "config": "relaxed", "workers": w, "round": 1, "seconds": s}
            for w, s in ((1, 2.0), (32, 0.5))]
    want = (2.0 - start.at(1)) / (0.5 - start.at(32))
    assert compare.round_speedups({"runs": runs}, start)[("u", "relaxed", 32)] == [round(want, 3)]
    # an earlier calibrate_check --out (one startup_s) keeps its constant start in --report
    check = _load("calibrate_check")
    assert check.start_of_report({"startup_s": 0.03}) == 0.03
    assert asdict(check.start_of_report({"startup_s": 0.03, "start": asdict(start)})) == asdict(start)


def test_startup_probe_fits_the_start_on_the_coordinators_commits():
    """startup_probe.summarize: per worker count the median start and commits, and the line of the
    start on the commits through those medians (a cold first catch-up does not bend it)."""
    probe = _load("startup_probe")
    runs = [{"round": r, "workers": w, "startup_ms": 2.0 + 0.25 * (3 + 3 * w) + (200.0 if r == 1 and w == 32 else 0.0),
             "coordinator_commits": 3 + 3 * w} for r in (1, 2, 3) for w in (1, 4, 16, 32)]
    s = probe.summarize(runs)
    assert [row["coordinator_commits"] for row in s["rows"]] == [6, 15, 51, 99]
    fit = s["startup_ms_fit"]
    assert fit["intercept_ms"] == pytest.approx(2.0) and fit["per_commit_ms"] == pytest.approx(0.25)
    assert fit["fixed_share_16"] == pytest.approx(round(2.0 / (2.0 + 0.25 * 51), 3))


def test_startup_refuses_the_kept_binlogs_of_another_lab_run(tmp_path, monkeypatch):
    """A lab run's kept binlogs are its own (kept_dir by the JSON's name); a binlog whose
    transactions are not the run's count (another run's share) stops compare.py, not a wrong start."""
    import gzip
    compare = _load("compare")
    assert compare.kept_dir(Path("x/manycore_16core_run2.json")) == compare.DATA / "kept" / "manycore_16core_run2"
    name = "u-relaxed-w16.binlog.000002.gz"
    with gzip.open(tmp_path / name, "wb") as f:
        f.write(FIXTURE.read_bytes())
    run = {"phase": "relaxed", "keep": True, "workload": "u", "config": "relaxed", "workers": 16, "seconds": 9.0}
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))
    export = compare.lagadvisor("export", str(tmp_path / name)).splitlines()
    with pytest.raises(SystemExit, match="another lab run"):
        compare.startups({"runs": [{**run, "transactions": len(export) + 1}]}, tmp_path)
    (got,) = compare.startups({"runs": [{**run, "transactions": len(export)}]}, tmp_path)
    assert got["startup_s"] == pytest.approx(9.0 - got["commit_span_s"])


timeline = _load("timeline")
PS = 1000  # performance_schema's picoseconds per nanosecond


def test_timeline_joins_waits_to_their_transactions_and_measures_the_handoff():
    W, C = timeline.WORKER, timeline.COORDINATOR
    threads = {10: W, 11: W, 12: W, 1: C, 99: "thread/sql/one_connection"}
    us = 1000 * PS
    # gno 1 on thread 10: no wait. gno 2 (thread 11) and gno 3 (thread 12) both wait for commit
    # order; 3 was asleep (from 150 us) when 2 woke at 200 us, and woke itself at 290 us: a
    # hand-off of 90 us. gno 4 (thread 10) waits too but only starts waiting at 400 us, after 3
    # woke: not a hand-off sample. A client's transaction and a worker's without a GTID are not
    # the backlog's.
    trx = [(10, "u:1", 0, 120 * us), (11, "u:2", 10 * us, 260 * us), (12, "u:3", 20 * us, 350 * us),
           (10, "u:4", 130 * us, 500 * us), (99, "u:5", 0, 5 * us), (11, "AUTOMATIC", 0, us)]
    stages = [(11, timeline.WAIT_ORDER, 100 * us, 200 * us), (12, timeline.WAIT_ORDER, 150 * us, 290 * us),
              (10, timeline.WAIT_ORDER, 400 * us, 450 * us),
              # the coordinator slept from 50 to 135 us; gno 1 committed at 120 us: woken 15 us
              # later, and gno 4's worker started 5 us before that (not after: no sample) ...
              (1, timeline.WAIT_DEPENDENCY, 50 * us, 135 * us),
              # ... and from 340 to 380 us, met by gno 3's commit at 350: 30 us; no transaction
              # starts after it. One from 355 to 358 us saw no commit while it slept: no sample
              (1, timeline.WAIT_DEPENDENCY, 340 * us, 380 * us), (1, timeline.WAIT_DEPENDENCY, 355 * us, 358 * us)]
    tl = timeline.build(threads, trx, stages)
    assert tl["gno"] == [1, 2, 3, 4] and tl["transactions"] == 4 and tl["workers_seen"] == 3
    assert tl["wait_end"] == [-1, 200_000, 290_000, 450_000]
    assert tl["worker"] == [0, 1, 2, 0]  # by first appearance: thread 10, 11, 12
    lat = timeline.latencies(tl)
    assert lat["commit_order_waits"] == 3 and lat["coordinator_waits"] == 3
    assert lat["handoff"]["n"] == 1 and lat["handoff"]["median_us"] == 90.0
    assert lat["coordinator_wakeup"]["n"] == 2 and lat["coordinator_wakeup"]["mean_us"] == 22.5
    assert lat["dispatch_to_worker_start"]["n"] == 0


def test_stalls_are_commit_gaps_with_several_transactions_stuck_in_their_own_work():
    """timeline.stalls: a gap of more than 1 ms between consecutive commits counts when two or
    more transactions span it without waiting for commit order; one transaction alone (a long
    one the others queue behind) or waiters do not make a stall."""
    ms = 1_000_000  # the timeline's nanoseconds
    # commits at 1, 5 (a 4 ms gap: gno 3 and 4 span it, neither waiting: a stall), 6, 6.1 ms,
    # then 9 ms (a 2.9 ms gap spanned by gno 5 alone, and gno 6 waiting for commit order: none)
    tl = {"start": [0, 0, int(0.5 * ms), int(0.6 * ms), int(5.5 * ms), int(5.6 * ms)],
          "end": [1 * ms, 6 * ms, 5 * ms, int(6.1 * ms), 9 * ms, 10 * ms],
          "wait_start": [-1, -1, -1, -1, -1, int(5.7 * ms)], "wait_end": [-1, -1, -1, -1, -1, int(9.5 * ms)]}
    got = timeline.stalls(tl)
    assert (got["count"], got["total_us"], got["max_us"], got["in_flight"]) == (1, 4000.0, 4000.0, 3)
    assert got["share"] == 0.4  # of the 10 ms from the first start to the last commit
    assert timeline.stalls(tl, min_gap_us=5000)["count"] == 0
    # one worker: its one transaction stuck over a gap is a stall
    one = {"start": [0, 1 * ms], "end": [1 * ms, 4 * ms], "wait_start": [-1, -1], "wait_end": [-1, -1],
           "workers_seen": 1}
    assert timeline.stalls(one)["count"] == 1 and timeline.stalls({**one, "workers_seen": 2})["count"] == 0


def test_timeline_of_a_run_without_backlog_transactions_is_empty():
    assert timeline.build({1: timeline.WORKER}, [(1, "AUTOMATIC", 0, 5)], []) == {"transactions": 0}
    assert timeline.latencies({"transactions": 0}) == {"transactions": 0}


def test_switches_compares_chain_transactions_on_the_same_and_on_another_worker():
    """timeline.switches: only a transaction that started after its predecessor ended counts (a
    chain); its own time is start to end less its commit-order wait; the difference is of the
    medians."""
    # gno: 1 on worker 0 (0-100 us, no predecessor); 2 on worker 0 after it (own 100); 3 on worker 1
    # after 2 (own 200 - 50 waited = 150); 4 on worker 2 overlapping 3 (not a chain); 5 on worker 2
    # after 4 (own 120, same worker); 6 after a gap in the GTIDs (gno 8: no predecessor, not counted)
    tl = {"transactions": 6, "gno": [1, 2, 3, 4, 5, 8], "worker": [0, 0, 1, 2, 2, 1],
          "start": [0, 100_000, 250_000, 300_000, 600_000, 900_000],
          "end": [100_000, 200_000, 450_000, 500_000, 720_000, 950_000],
          "wait_start": [-1, -1, 400_000, -1, -1, -1], "wait_end": [-1, -1, 450_000, -1, -1, -1],
          "workers_seen": 3, "coordinator_waits": []}
    sw = timeline.switches(tl)
    assert sw["chain"] == 3
    assert sw["same_worker"]["n"] == 2 and sw["same_worker"]["median_us"] == 110.0
    assert sw["other_worker"]["n"] == 1 and sw["other_worker"]["median_us"] == 150.0
    assert sw["extra_us"] == 40.0
    # every transaction after its predecessor, chain or not (2, 3, 4, 5): 2 and 5 on its worker
    assert sw["consecutive"] == 4 and sw["same_worker_share"] == 0.5
    assert timeline.latencies(tl)["switches"] == sw
    one = timeline.switches({**tl, "worker": [0] * 6})
    assert one["other_worker"]["n"] == 0 and one["extra_us"] is None


def test_compare_prints_the_switch_table_from_the_committed_timelines():
    compare = _load("compare")
    lines = compare.worker_switches(ROOT / "bench" / "manycore_16core_run2.json")
    assert lines[0].startswith("| run | chain transactions") and len(lines) == 2 + 18
    hot = next(line for line in lines if line.startswith("| hot-relaxed-w16 |"))
    assert hot.split("|")[2].strip() == "2290"
    assert compare.worker_switches(ROOT / "bench" / "manycore_16core.json") == []  # no timelines kept


def test_compare_prints_the_stall_table_from_the_committed_timelines():
    """The second run's 16-worker uniform relaxed catch-up stood still for 100 ms at once, 31%
    of it (docs/accuracy.md); the third's for 3.4%."""
    compare = _load("compare")
    lines = compare.applier_stalls(ROOT / "bench" / "manycore_16core_run2.json")
    assert len(lines) == 2 + 18
    row = next(line for line in lines if line.startswith("| uniform-relaxed-w16 |")).split("|")
    assert float(row[4]) > 99 and row[5].strip() == "30.6%"
    row = next(line for line in compare.applier_stalls(ROOT / "bench" / "manycore_16core_run3.json")
               if line.startswith("| uniform-relaxed-w16 |")).split("|")
    assert row[5].strip() == "3.4%"
    assert compare.applier_stalls(ROOT / "bench" / "manycore_16core.json") == []  # no timelines kept


def test_pool_takes_every_run_s_rounds_and_the_mean_prediction():
    """pool.py: one median over all the runs' round speedups per cell (each round already relative
    to its own one-worker run), against the runs' mean predicted speedup; one-worker rows and cells
    a run did not measure are left out."""
    pool = _load("pool")

    def row(w, rounds, predicted, wl="u", cfg="relaxed"):
        return {"workload": wl, "config": cfg, "workers": w, "round_speedups": rounds, "predicted_speedup": predicted,
                "measured_speedup": sorted(rounds)[len(rounds) // 2] if rounds else None, "speedup_error": 0.0}

    one = [row(1, [1.0, 1.0, 1.0], 1.0), row(4, [3.0, 3.2, 3.4], 3.3), row(8, [5.0, 5.0, 5.0], 5.0)]
    two = [row(1, [1.0, 1.0, 1.0], 1.0), row(4, [2.0, 2.2, 2.4], 3.1)]
    (got,) = pool.pool([one, two])
    assert (got["workers"], got["rounds"], got["round_range"]) == (4, 6, [2.0, 3.4])
    assert got["measured_speedup"] == 2.7 and got["predicted_speedup"] == 3.2
    assert got["speedup_error"] == round(3.2 / 2.7 - 1, 4)
    assert pool.verdicts([got]) == {("u", "relaxed"): False}
    assert pool.verdicts([{**got, "speedup_error": 0.15}]) == {("u", "relaxed"): True}


def test_pool_times_gives_each_cell_s_median_time_error_over_the_runs():
    """pool.py --times: the model's time error per cell, the median over the runs that all measured
    it, and in how many it was over (a shape's bias, which a loan's noise does not give)."""
    pool = _load("pool")

    def row(w, err, wl="hot"):
        return {"workload": wl, "config": "relaxed", "workers": w, "time_error": err}

    runs = [[row(1, 0.10), row(4, 0.30), row(8, -0.1)], [row(1, -0.02), row(4, 0.20)], [row(1, 0.12), row(4, 0.25)]]
    got = pool.time_bias(runs)
    assert [(r["workers"], r["median_time_error"], r["over"], r["runs"]) for r in got] == [(1, 0.10, 2, 3),
                                                                                           (4, 0.25, 3, 3)]
    runs[2][0]["time_error"] = None   # a run without a time for the cell: the cell is left out
    assert [r["workers"] for r in pool.time_bias(runs)] == [4]


def test_the_committed_pooled_view_is_the_committed_runs_pooled():
    """bench/manycore_16core_pooled.json is pool.py of the three full committed compare.py outputs
    (the README's pooled row): reproducible from what is committed."""
    import json

    pool = _load("pool")
    runs = [json.loads((ROOT / "bench" / f"manycore_16core{s}_compare.json").read_text())["rows"]
            for s in ("", "_run2", "_run3")]
    rows = pool.pool(runs)
    committed = json.loads((ROOT / "bench" / "manycore_16core_pooled.json").read_text())
    assert rows == committed["rows"] and len(rows) == 50 and all(r["rounds"] == 9 for r in rows)


def test_compare_checks_the_cores_the_replica_s_defaults_show_against_the_machine():
    """lab.py records innodb_read_io_threads and its source; compare.py says whether the rule
    advise --host uses without --cores (server/cores.py) held on the lab machine."""
    compare = _load("compare")
    lab16 = {"machine": {"cores": 16}, "mysqld": {"version": "9.7.4-2", "innodb_read_io_threads": "8",
                                                  "innodb_read_io_threads_source": "COMPILED"}}
    assert compare.cores_shown(lab16) == ("the replica's defaults show 16-17 cores (16 assumed by advise --host): "
                                          "the machine has 16, within them")
    two = {"machine": {"cores": 2}, "mysqld": {"version": "9.7.4-2", "innodb_read_io_threads": "4",
                                               "innodb_read_io_threads_source": "COMPILED"}}
    # "at most 9" is a bound, not a count: advise --host assumes 4 there (server/cores.py)
    assert compare.cores_shown(two).endswith("1-9 cores (4 assumed by advise --host): the machine has 2, within them")
    assert "OUTSIDE" in compare.cores_shown({**lab16, "machine": {"cores": 64}})
    assert compare.cores_shown({"machine": {"cores": 16}, "mysqld": {"version": "9.7.4-2"}}) == ""


def test_crossfit_scores_a_held_out_run_as_the_must_show_does():
    """crossfit.py: multi-worker speedups within 15%, the shapes with all of them within 15% in
    both durabilities, times within 15%, and the mean absolute log error."""
    crossfit = _load("crossfit")

    def row(wl, cfg, w, sp, t=0.0):
        return {"workload": wl, "config": cfg, "workers": w, "speedup_error": sp, "time_error": t}

    rows = [row("a", "relaxed", 1, 0.0, 0.2), row("a", "relaxed", 4, 0.1), row("a", "durable", 4, -0.15),
            row("b", "relaxed", 4, 0.16), row("b", "durable", 4, 0.0, -0.3)]
    got = crossfit.score(rows)
    assert (got["speedups_within"], got["speedups"], got["times_within"], got["times"]) == (3, 4, 3, 5)
    assert got["shapes_within"] == ["a"]
    import math
    assert got["speedup_log_error"] == round((math.log(1.1) + abs(math.log(0.85)) + math.log(1.16)) / 4, 4)


def test_calibrate_check_band_coverage_of_the_committed_calibrations():
    """sim/model.py's EXTRAPOLATION_BAND cites these counts: each lab calibration's held-out band
    at 16 workers, and that band and 0.15 in quadrature at the other worker counts, against the
    committed calibrate_check.py outputs of the device runs (every model calibrated at 16; run 4's
    mixed backlog, a 20% share, had too few transactions to calibrate), each measured time less the
    replica's start at its worker count (compare.Start)."""
    import json

    check = _load("calibrate_check")
    got = []
    for s in ("", "_run2", "_run3", "_run4"):
        d = json.loads((ROOT / "bench" / f"manycore_16core{s}_calibrate.json").read_text())
        assert {m["calibrated_workers"] for m in d["models"].values()} == {16}
        got.append(check.band_coverage(d["rows"], d["models"]))
    assert got == [["the model's band held the measured time 7 of 10 times at the calibrated worker count",
                    "the model's band held the measured time 43 of 50 times at the others"],
                   ["the model's band held the measured time 6 of 10 times at the calibrated worker count",
                    "the model's band held the measured time 41 of 50 times at the others"],
                   ["the model's band held the measured time 6 of 10 times at the calibrated worker count",
                    "the model's band held the measured time 38 of 50 times at the others"],
                   ["the model's band held the measured time 5 of 8 times at the calibrated worker count",
                    "the model's band held the measured time 26 of 40 times at the others"]]


def test_calibrate_check_summary_of_the_committed_calibrations():
    """Each committed calibration is the first round's (WL-CFG-w16): the summary counts the times
    within 15% as before, the calibrations with all six worker counts within, and, taking out how
    far each calibration's own catch-up ran from its cell's median, what is left to the model."""
    import json

    check = _load("calibrate_check")
    assert check.model_key("uniform-relaxed-w16") == "uniform-relaxed"
    assert check.model_key("uniform-relaxed-w16-r3") == "uniform-relaxed-r3"
    got = []
    for s in ("", "_run3"):
        lab_json = lab.read_json(ROOT / "bench" / f"manycore_16core{s}.json")
        d = json.loads((ROOT / "bench" / f"manycore_16core{s}_calibrate.json").read_text())
        got.append(check.summary(lab_json, d["rows"], check.start_of_report(d)))
    assert got[0][0].startswith("the first round's calibrations: 49 of 60 times within 15%; calibrations with "
                                "all 6 worker counts within: 5 of 10 (fk-durable-w16, fk-relaxed-w16, ")
    assert got[1][0].startswith("the first round's calibrations: 38 of 60 times within 15%; calibrations with "
                                "all 6 worker counts within: 2 of 10 (fk-relaxed-w16, nopk-relaxed-w16)")
    assert got[1][0].endswith("own catch-up's deviation taken out: 54 of 60")
    assert "uniform-relaxed-w16 -25%" in got[1][1]
    # a later round's calibration is found by its round, and one whose round has no run is skipped
    run = {"phase": "relaxed", "workload": "u", "workers": 16}
    lab_json = {"runs": [dict(run, round=1, seconds=1.0), dict(run, round=2, seconds=1.2), dict(run, round=3, seconds=0.8)]}
    assert check.own_deviation(lab_json, "u-relaxed-w16-r2", 0.0) == pytest.approx(0.2)
    assert check.own_deviation(lab_json, "u-relaxed-w16-r4", 0.0) is None
    # the worker count the lab kept: 16, or its most workers where 16 is not run (--quick)
    assert check.kept_workers({"args": {"workers": [1, 2, 4, 8, 16, 32]}}) == 16
    assert check.kept_workers({"args": {"workers": [1, 2, 4]}}) == 4
    # --models-from: the rounds an earlier --out has a model of, without the binlogs
    earlier = {"models": {"u-relaxed": {}, "u-relaxed-r3": {}, "u-durable": {}}}
    assert check.models_rounds(earlier, "u", "relaxed") == [(1, None), (3, None)]
    assert check.models_rounds(earlier, "h", "relaxed") == []


def test_calibrate_check_combined_calibrations_of_run_5():
    """calibrate_check.py --combine: each cell's calibrations of every kept round pooled with
    calibrate --combine and checked at every worker count; run 5 kept five rounds of the seven
    cells whose binlogs came back whole (docs/accuracy.md, "calibrate on one 16-worker catch-up")."""
    import json

    check = _load("calibrate_check")
    d = json.loads((ROOT / "bench" / "manycore_16core_run5_calibrate.json").read_text())
    assert sorted(d["combined_models"]) == ["fk-durable", "fk-relaxed", "hot-durable", "hot-relaxed",
                                            "mixed-relaxed", "nopk-relaxed", "uniform-relaxed"]
    assert all(m["measured_on"].startswith("pooled from 5 calibrations") for m in d["combined_models"].values())
    assert check.combined_summary(d["combined_rows"]) == [
        "calibrate --combine of each cell's 5 calibrations: 34 of 42 times within 15%; cells with all 6 worker "
        "counts within: 4 of 7 (fk-durable, hot-relaxed, mixed-relaxed, nopk-relaxed)"]
    row = {"workload": "u", "config": "relaxed", "members": 3}
    rows = [dict(row, workers=1, time_error=0.1), dict(row, workers=2, time_error=-0.2),
            dict(row, workload="h", workers=1, time_error=0.0), dict(row, workload="h", workers=2, time_error=0.15)]
    assert check.combined_summary(rows) == ["calibrate --combine of each cell's 3 calibrations: 3 of 4 times within "
                                            "15%; cells with all 2 worker counts within: 1 of 2 (h-relaxed)"]
    assert check.combined_summary([]) == []


def test_the_six_runs_pooled_view_is_the_committed_runs_pooled():
    """bench/manycore_16core_pooled_six.json is pool.py of the six committed compare.py outputs."""
    import json

    pool = _load("pool")
    runs = [json.loads((ROOT / "bench" / f"manycore_16core{s}_compare.json").read_text())["rows"]
            for s in ("", "_run2", "_run3", "_run4", "_run5", "_run6")]
    rows = pool.pool(runs)
    committed = json.loads((ROOT / "bench" / "manycore_16core_pooled_six.json").read_text())
    assert rows == committed["rows"] and len(rows) == 50
    assert sum(abs(r["speedup_error"]) <= 0.15 for r in rows) == 49
    # with the start at each worker count (compare.Start) and the coordinator's read per transaction
    # (2026-11-28): every shape but uniform relaxed has every speedup within 15%, relaxed and durable
    assert pool.verdicts(rows) == {("fk", "durable"): True, ("fk", "relaxed"): True, ("hot", "durable"): True,
                                   ("hot", "relaxed"): True, ("mixed", "durable"): True, ("mixed", "relaxed"): True,
                                   ("nopk", "durable"): True, ("nopk", "relaxed"): True,
                                   ("uniform", "durable"): True, ("uniform", "relaxed"): False}


def test_lab_json_is_read_plain_or_gzipped(tmp_path):
    """The committed lab runs are stored as .json.gz (the tree that travels to the device must stay
    under 64 MiB): lab.read_json reads NAME.json, or NAME.json.gz beside it, or a .gz path; their
    kept binlogs and timelines are named after the same stem either way."""
    import gzip
    import json

    plain = tmp_path / "manycore_x.json"
    plain.write_text(json.dumps({"a": 1}))
    assert lab.read_json(plain) == {"a": 1}
    packed = tmp_path / "manycore_y.json.gz"
    packed.write_bytes(gzip.compress(json.dumps({"b": 2}).encode()))
    assert lab.read_json(tmp_path / "manycore_y.json") == {"b": 2} == lab.read_json(packed)
    with pytest.raises(FileNotFoundError):
        lab.read_json(tmp_path / "manycore_z.json")
    assert lab.lab_stem(packed) == lab.lab_stem(tmp_path / "manycore_y.json") == "manycore_y"
    # every committed run is there, compressed, under the name the docs give
    for s in ("", "_run2", "_run3", "_run4", "_run5", "_run6"):
        assert not (ROOT / "bench" / f"manycore_16core{s}.json").exists()
        assert lab.read_json(ROOT / "bench" / f"manycore_16core{s}.json")["machine"]["cores"] == 16


def test_stall_probe_reports_the_longest_commit_gaps():
    """stall_probe.py: the longest gaps between consecutive commits, in ms, with the transaction
    that ended each (the commit times sorted first, as a replica's binlog may interleave them)."""
    probe = _load("stall_probe")
    commits = [0, 1_000, 2_000, 102_500, 103_000, 110_000]
    assert probe.longest_gaps(commits) == [(100.5, 3), (7.0, 5), (1.0, 2)]
    assert probe.longest_gaps(list(reversed(commits)), top=1) == [(100.5, 3)]
    assert probe.longest_gaps([5]) == []


def test_pool_against_others_scores_each_run_by_the_other_runs():
    """pool.py --against-others: each committed run's speedups predicted by the model (its own
    compare.py count) and by the other runs' rounds pooled; no other run alone puts one shape's
    every speedup within 15% (docs/accuracy.md)."""
    import json

    pool = _load("pool")
    docs = [json.loads((ROOT / "bench" / f"manycore_16core{s}_compare.json").read_text())
            for s in ("", "_run2", "_run3", "_run4")]
    got = pool.against_others([d["rows"] for d in docs])
    assert [g["model"]["within"] for g in got] == [44, 38, 35, 26]
    assert [g["others_pooled"]["within"] for g in got] == [33, 37, 38, 32]
    assert all(not x["shapes"] for g in got for x in g["each_other"])
    assert got[1]["model"]["shapes"] == ["mixed"]


def test_host_cpu_reads_the_machine_s_cpu_seconds_by_kind_with_steal():
    """lab.py records /proc/stat's cpu line around every catch-up: how busy the machine was and
    what the hypervisor gave other guests (steal), which the replica's counters do not show."""
    import os

    hz = os.sysconf("SC_CLK_TCK")
    text = "cpu  100 0 50 1000 5 0 2 30 0 0\ncpu0 50 0 25 500 2 0 1 15 0 0\nintr 1\n"
    got = lab.host_cpu(text)
    assert got == {"user": 100 / hz, "nice": 0.0, "system": 50 / hz, "idle": 1000 / hz, "iowait": 5 / hz,
                   "irq": 0.0, "softirq": 2 / hz, "steal": 30 / hz}
    assert lab.host_cpu("intr 1\n") == {}
    assert set(lab.host_cpu()) <= set(lab.PROC_STAT_FIELDS)   # this machine's, read for real


def test_crossfit_reference_is_the_other_runs_measured_medians():
    """crossfit.py's ceiling: each left-out run's speedups against the median of the other runs'
    rounds; on the two committed runs, 30 and 29 of 50 (26 and 30 with the same start at every
    worker count, docs/accuracy.md)."""
    import json

    crossfit = _load("crossfit")

    def row(w, rounds, measured):
        return {"workload": "u", "config": "relaxed", "workers": w, "round_speedups": rounds,
                "measured_speedup": measured}

    a = {"rows": [row(1, [1.0], 1.0), row(4, [3.0, 3.1, 3.2], 3.1), row(8, [5.0], 5.0)]}
    b = {"rows": [row(1, [1.0], 1.0), row(4, [2.0, 2.5, 2.6], 2.5), row(8, [5.5], 5.5)]}
    assert crossfit.measured_reference([a, b]) == [1, 1]   # 4 workers: 2.5 vs 3.1 misses, 8: 5.5 vs 5.0 holds
    runs = [{"rows": json.loads((ROOT / "bench" / f"manycore_16core{s}_compare.json").read_text())["rows"]}
            for s in ("", "_run2")]
    assert crossfit.measured_reference(runs) == [30, 29]


def test_crossfit_by_workload_keeps_the_run_s_name_and_only_the_named_workloads(tmp_path):
    """crossfit.py --by workload: the fit's and the comparison's copies of a lab run hold only
    their workloads, under the run's own file name (compare.py finds its kept binlogs by it)."""
    import json

    crossfit = _load("crossfit")
    lab_file = tmp_path / "manycore_16core.json"
    lab_file.write_text(json.dumps({"summary": {"a": {}, "b": {}, "c": {}}, "runs": [1, 2]}))
    out = crossfit.with_workloads(lab_file, {"a", "c"}, tmp_path / "without-b")
    assert out.name == lab_file.name and out.parent.name == "without-b"
    data = json.loads(out.read_text())
    assert list(data["summary"]) == ["a", "c"] and data["runs"] == [1, 2]


def test_compare_says_how_much_the_hypervisor_stole_and_from_which_runs():
    """compare.py over lab.py's host_cpu_s: steal as a share of the machine's CPU seconds, for the
    runs 10%+ slower than their cell's median and for the rest; nothing for a lab from before."""
    compare = _load("compare")

    def run(seconds, steal, busy=1.0):
        return {"phase": "relaxed", "workload": "u", "config": "relaxed", "workers": 4, "seconds": seconds,
                "host_cpu_s": {"user": busy, "steal": steal}}

    lab = {"runs": [run(1.0, 0.0), run(1.0, 0.0), run(1.5, 1.0), {"phase": "probe", "seconds": 9.0}]}
    assert compare.host_steal(lab) == ("host: steal 1.00 s over the 3 timed catch-ups (25.0% of the machine's CPU "
                                       "seconds); the 1 runs 10%+ slower than their cell's median: 50.0%, the rest: 0.0%")
    assert compare.host_steal({"runs": [{"phase": "relaxed", "seconds": 1.0}]}) == ""


def test_compare_counts_the_durable_commit_groups_measured_and_simulated():
    """A durable catch-up's binlog fsyncs are its commit groups (sync_binlog=1): compare.py takes
    their median over the rounds and sets it beside the simulation's flushes, per worker count."""
    compare = _load("compare")

    def run(w, rnd, fsyncs, phase="durable"):
        return {"phase": phase, "workload": "u", "config": phase, "workers": w, "round": rnd, "seconds": 1.0,
                "counters": {"binlog_fsyncs": fsyncs}}

    lab = {"runs": [run(4, 1, 900), run(4, 2, 1000), run(4, 3, 960), run(8, 1, 500),
                    run(4, 1, 0, "relaxed"), {"phase": "durable", "workload": "u", "config": "durable",
                                              "workers": 16, "round": 1, "error": "died"}]}
    got = compare.measured_groups(lab)
    assert got == {("u", "durable", 4): 960, ("u", "durable", 8): 500}
    rows = [{"workload": "u", "transactions": 1000, "workers": 4, "measured_groups": 960, "predicted_groups": 480},
            {"workload": "u", "transactions": 1000, "workers": 8, "measured_groups": 500, "predicted_groups": 600},
            {"workload": "u", "transactions": 1000, "workers": 1, "config": "relaxed"}]
    table = compare.groups_table(rows)
    assert table[0] == "| workload | trx | 4 workers | 8 workers |"
    assert table[2] == "| u | 1000 | 960 / 480 (0.50x) | 500 / 600 (1.20x) |"
    assert compare.groups_table([rows[2]]) == []


def test_advise_check_reads_the_advised_count_from_a_finding_or_a_confirmation():
    """advise emits a replica_parallel_workers finding when the knee is another count than the
    replica's, and confirms the replica's own count otherwise: advise_check reads either."""
    check = _load("advise_check")
    found = {"findings": [{"id": "replica_durability"}, {"id": "replica_parallel_workers", "suggested": "8"}],
             "summary": {"confirmed": []}}
    confirmed = {"findings": [{"id": "replica_durability"}],
                 "summary": {"confirmed": ["binlog_transaction_dependency_tracking = WRITESET",
                                           "replica_parallel_workers = 16"]}}
    assert check.advised_workers(found) == 8
    assert check.advised_workers(confirmed) == 16
    # a durable replica: where the plan also relaxes durability, the count for keeping it durable
    planned = {"findings": [{"id": "replica_parallel_workers", "suggested": "1", "alternative": {
        "suggested": "2", "condition": "if you keep durable settings"}}], "summary": {"confirmed": []}}
    assert check.advised_workers(planned, "durable") == 2
    assert check.advised_workers(planned, "relaxed") == 1
    assert check.advised_workers(found, "durable") == 8


def test_rounds_ceiling_scores_an_exact_model_against_the_rounds_noise():
    """rounds_ceiling: with no noise an exact model has all 50 speedups within 15%; with the four
    committed runs' deviations it has fewer, and more rounds narrow the medians (docs/accuracy.md:
    44.0 of 50 at three rounds, 49.6 at eight)."""
    rc = _load("rounds_ceiling")
    assert rc.ceiling([0.0], 3, 50) == {"rounds": 3, "within_of_50": 50.0, "shape_all_within": 1.0,
                                        "three_of_five_shapes": 1.0}
    devs = rc.deviations([ROOT / "bench" / f"manycore_16core{s}.json" for s in ("", "_run2", "_run3", "_run4")])
    assert len(devs) == 720
    three, eight = rc.ceiling(devs, 3, 400), rc.ceiling(devs, 8, 400)
    assert 40 < three["within_of_50"] < eight["within_of_50"] <= 50
    assert three["three_of_five_shapes"] < 0.5 < eight["three_of_five_shapes"]
    assert rc.ceiling(devs, 3, 400, vs_run=True)["within_of_50"] < three["within_of_50"]


def test_rounds_ceiling_for_calibrate_on_one_catch_up():
    """rounds_ceiling --calibrate: without noise an exact calibration has all 60 times within; with
    the committed runs' deviations one catch-up's own deviation reaches every worker count, so
    even an exact model has some cell out (docs/accuracy.md: 44.7 of 60 at three rounds, one
    cell's six all within 47% of the time), and calibrating on the median of more catch-ups helps
    more than more rounds do."""
    rc = _load("rounds_ceiling")
    assert rc.calibrate_ceiling([0.0], 3, 20) == {"rounds": 3, "calibrate_on": 1, "within_of_60": 60.0,
                                                  "cell_all_within": 1.0, "all_cells": 1.0}
    devs = rc.deviations([ROOT / "bench" / f"manycore_16core{s}.json" for s in ("", "_run2", "_run3", "_run4")])
    one, nine = rc.calibrate_ceiling(devs, 3, 300), rc.calibrate_ceiling(devs, 9, 300)
    five_on = rc.calibrate_ceiling(devs, 3, 300, calibrate_on=5)
    assert 40 < one["within_of_60"] < nine["within_of_60"] < five_on["within_of_60"] + 5
    assert one["cell_all_within"] < 0.6 and one["all_cells"] < 0.05
    assert five_on["cell_all_within"] > one["cell_all_within"]


def test_lab_reads_a_catch_ups_commit_span_as_lagadvisor_does(monkeypatch, tmp_path):
    """lab.commit_span (stdlib, on the device) reads the first and last immediate_commit_timestamp
    and the GTID events of a binlog as lagadvisor export does; a file that is not a binlog is
    refused and a half-written last event is left out."""
    import json as _json
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))
    compare = _load("compare")
    ts = [_json.loads(line)["immediate_commit_ts_us"]
          for line in compare.lagadvisor("export", str(FIXTURE)).splitlines()]
    assert lab.commit_span(FIXTURE) == (min(ts), max(ts), len(ts))
    cut = tmp_path / "binlog.000009"
    data = FIXTURE.read_bytes()
    cut.write_bytes(data[:-7])   # the tail still being written
    first, last, count = lab.commit_span(cut)
    assert first == min(ts) and count in (len(ts), len(ts) - 1)
    (tmp_path / "x").write_bytes(b"not a binlog")
    with pytest.raises(lab.LabError, match="not a binlog"):
        lab.commit_span(tmp_path / "x")


def test_lab_records_a_catch_ups_long_gaps_as_lagadvisor_reads_its_commits(monkeypatch, tmp_path):
    """lab.long_gaps over lab.commit_stamps: the gaps of at least min_us between consecutive
    commits of the fixture, as lagadvisor export's timestamps give them, the longest first."""
    import json as _json
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))
    compare = _load("compare")
    ts = [_json.loads(line)["immediate_commit_ts_us"]
          for line in compare.lagadvisor("export", str(FIXTURE)).splitlines()]
    assert lab.commit_stamps(FIXTURE) == ts
    gaps = sorted((b - a for a, b in zip(ts, ts[1:])), reverse=True)
    cut = gaps[4]   # the five longest gaps (ties at the cut included)
    got = lab.long_gaps(ts, min_us=cut, keep=3)
    want = [g for g in gaps if g >= cut]
    assert got["count"] == len(want) >= 5 and got["sum_us"] == sum(want)
    assert [g for _, g in got["longest"]] == want[:3]
    assert all(ts[k] - ts[k - 1] == g for k, g in got["longest"])
    assert lab.long_gaps(ts, min_us=gaps[0] + 1) == {"min_us": gaps[0] + 1, "count": 0, "sum_us": 0, "longest": []}
    assert lab.long_gaps([]) == lab.long_gaps([5]) == {"min_us": lab.LONG_GAP_US, "count": 0, "sum_us": 0, "longest": []}


def test_stall_table_counts_the_stalls_of_each_worker_count():
    """bench/manycore/stalls.py: per cell of the timed rounds, the catch-ups with a gap of 90 ms or
    more; probes, instrumented rounds and runs before the field are left out."""
    stalls = _load("stalls")

    def run(phase, workers, longest, wl="uniform"):
        return {"phase": phase, "workload": wl, "config": "relaxed", "workers": workers,
                "long_gaps": {"min_us": 20_000, "count": len(longest), "sum_us": sum(g for _, g in longest),
                              "longest": longest}}

    lab_json = {"runs": [run("relaxed", 16, [[2718, 100_300]]), run("relaxed", 16, []),
                         run("relaxed", 16, [[996, 100_200], [40, 30_000]]), run("relaxed", 8, [[5, 45_000]]),
                         run("probe", 16, [[1, 100_000]]), run("instrumented", 16, [[1, 100_000]]),
                         {"phase": "relaxed", "workload": "hot", "config": "relaxed", "workers": 16}]}
    rows = stalls.stall_table(lab_json)
    assert [(r["workers"], r["catch_ups"], r["with_stall"], r["stalls"]) for r in rows] == [(8, 1, 0, 0), (16, 3, 2, 2)]
    assert rows[1]["stall_ms"] == [100.2, 100.3] and rows[1]["long_gap_ms_median"] == 100.3
    assert stalls.stall_table(lab_json, stall_ms=40)[0]["with_stall"] == 1


def test_a_catch_ups_own_commit_span_is_its_applying_time():
    """compare.applying_s: a run whose lab read its binlog's commit span over all its transactions
    is timed by that span; else its time less the replica's start at its worker count."""
    compare = _load("compare")
    start = compare.Start(0.03, 16, 0.1)
    run = {"phase": "relaxed", "workload": "u", "config": "relaxed", "workers": 32, "round": 1, "seconds": 0.5,
           "transactions": 100}
    assert compare.applying_s(run, start) == pytest.approx(0.5 - start.at(32))
    assert compare.applying_s({**run, "commit_span_s": 0.4, "commits": 100}, start) == 0.4
    assert compare.applying_s({**run, "commit_span_s": 0.4, "commits": 99}, start) == pytest.approx(0.5 - start.at(32))


def test_advise_check_against_the_pooled_knees():
    """advise_check.py --pooled: each advise output's count against the knee of the runs' pooled
    speedups (the fewest workers reaching 90% of the best); on the six committed runs every cell's
    count is within one step (docs/accuracy.md, "advise on 16 cores")."""
    import json

    check = _load("advise_check")
    pooled = [{"workload": "u", "config": "relaxed", "workers": w, "measured_speedup": s}
              for w, s in ((2, 1.8), (4, 3.0), (8, 4.2), (16, 4.5), (32, 4.4))]
    advised = [[{"workload": "u", "config": "relaxed", "advised_workers": 8}],
               [{"workload": "u", "config": "relaxed", "advised_workers": 2}]]
    assert check.pooled_knees(pooled, advised) == [{"workload": "u", "config": "relaxed", "pooled_knee": 8,
                                                   "advised": [8, 2], "within": 1}]
    rows = json.loads((ROOT / "bench" / "manycore_16core_pooled_six.json").read_text())["rows"]
    docs = [json.loads((ROOT / "bench" / f"manycore_16core{s}_advise.json").read_text())["rows"]
            for s in ("", "_run2", "_run3", "_run4", "_run5", "_run6")]
    got = check.pooled_knees(rows, docs)
    assert len(got) == 10 and all(g["within"] == 6 for g in got)


def test_a_lab_on_fewer_cpus_is_simulated_on_those_cores():
    """lab.py --cpus N runs the replica on N of the machine's CPUs (its affinity, inherited by
    mysqld); the JSON's machine.cores_usable says so, and compare.py's default --cores is it."""
    compare = _load("compare")
    assert lab.parse_args(["--cpus", "8"]).cpus == 8 and lab.parse_args([]).cpus is None
    assert compare.lab_cores({"machine": {"cores": 16, "cores_usable": 8}}) == 8
    assert compare.lab_cores({"machine": {"cores": 16, "cores_usable": 16}}) == 16
    assert compare.lab_cores({"machine": {"cores": 16}}) == 16


def test_index_backlogs_differ_only_in_their_keys():
    """gen_backlogs.INDEX_WORKLOADS: one seeded draw for every variant (the same rows and
    statements), tables that differ only in their key clauses, and never in the lab's own set."""
    import random

    gen = _load("gen_backlogs")
    assert not set(gen.INDEX_WORKLOADS) & set(gen.WORKLOADS)
    setups, trxs = {}, {}
    for name, wl in gen.INDEX_WORKLOADS.items():
        if name not in gen.INDEX_VARIANTS and name not in gen.WIDE_VARIANTS:
            continue  # the fk twins: test_fk_twins_differ_only_in_the_foreign_key
        rnd = random.Random(f"33:{wl.seed_key or wl.name}")
        setups[name] = list(wl.setup(rnd))
        trxs[name] = [wl.trx(rnd, seq) for seq in range(1, 50)]
    import re

    def no_pad(stmts):  # the wide variant differs in its pad's length only
        return tuple(re.sub(r"'[0-9-]+'", "''", s).replace("CHAR(252)", "CHAR(60)") for s in stmts)

    assert len({tuple(map(tuple, t)) for name, t in trxs.items() if name not in gen.WIDE_VARIANTS}) == 1
    assert len({tuple(map(no_pad, t)) for t in trxs.values()}) == 1
    assert all(len(trxs["wide0"][i][1]) > len(trxs["idx0"][i][1]) + 150 for i in range(49))
    tables = {name: [s for s in stmts if s.startswith("CREATE TABLE t")] for name, stmts in setups.items()}
    assert all(len(t) == gen.INDEX_TABLES for t in tables.values())
    for k in (0, 2, 4, 8):
        assert all(c.count(", KEY k") == k and "UNIQUE" not in c for c in tables[f"idx{k}"])
    assert all(c.count("UNIQUE KEY") == 4 for c in tables["uk4"])
    assert all(c.endswith(", KEY kr (r))") for c in tables["kr"])
    assert all(c.endswith(", FOREIGN KEY (r) REFERENCES p (id))") for c in tables["fkr"])
    assert no_pad(tables["wide0"]) == no_pad(tables["idx0"]) != tuple(tables["wide0"])
    strip = {name: no_pad(s for s in stmts if not s.startswith("CREATE TABLE t")) for name, stmts in setups.items()}
    assert len(set(strip.values())) == 1
    # every indexed column changes in the update, so each index takes 4 entry changes a transaction;
    # the unique columns stay unique (id * 16, an update adds 1)
    update = trxs["idx8"][0][0]
    assert all(f"{col}={col}+1" in update for col in gen.INDEX_COLUMNS) and "r=r%1000+1" in update
    assert gen._index_row(random.Random(1), 7).startswith("(7," + ",".join(["112"] * 8) + ",")


def test_fresh_twins_differ_from_theirs_in_the_insert_s_values_only():
    """gen_backlogs' ``idx4f`` and ``uk4f``: the draw and statements of ``idx4`` and ``uk4`` but for
    the insert's a to h, a value no row ever had (above every table row's range, 16 apart: an
    update's +1 stays unique), and the two differ from each other only in their keys."""
    import random
    import re

    gen = _load("gen_backlogs")

    def draw(name):
        wl = gen.INDEX_WORKLOADS[name]
        rnd = random.Random(f"33:{wl.seed_key or wl.name}")
        return list(wl.setup(rnd)), [wl.trx(rnd, seq) for seq in range(1, 60)]

    for base in gen.FRESH_VARIANTS:
        (setup, trxs), (fsetup, ftrxs) = draw(base), draw(f"{base}f")
        assert fsetup == setup
        for seq, (t, f) in enumerate(zip(trxs, ftrxs), start=1):
            assert t[:3] == f[:3]
            row = re.compile(r"(INSERT INTO t\d VALUES \((\d+),)((?:\d+,){8})(.*)")
            mt, mf = row.fullmatch(t[3]), row.fullmatch(f[3])
            assert (mt.group(1), mt.group(4)) == (mf.group(1), mf.group(4))
            assert mt.group(3) == f"{int(mt.group(2)) * 16}," * 8
            assert mf.group(3) == f"{gen.FRESH_BASE + 16 * seq}," * 8
    assert gen.FRESH_BASE > 16 * gen.INDEX_ROWS + 15
    assert draw("idx4f")[1] == draw("uk4f")[1]


def test_index_cost_sets_each_round_of_a_pair_against_its_twin():
    """index_cost.pairs' round_ratio: per round the variant over its twin, the median over the
    rounds holding both (a slow round slows both alike and cancels)."""
    ic = _load("index_cost")
    runs = [{"phase": "relaxed", "round": rnd, "workload": wl, "config": "relaxed", "workers": 1,
             "transactions": 1000, "seconds": us * speed * 1000 / 1e6,
             "cpu_s": {"rpl_rca_wkr": 0.5 * us * speed * 1000 / 1e6}}
            for rnd, speed in ((1, 1.0), (2, 3.0), (3, 1.0)) for wl, us in (("idx4f", 100.0), ("uk4f", 104.0))]
    (p,) = ic.pairs({"runs": runs})
    assert (p["variant"], p["twin"]) == ("uk4f", "idx4f")
    assert p["round_ratio"]["seconds"] == pytest.approx(1.04) and p["round_ratio"]["worker_cpu"] == pytest.approx(1.04)
    assert p["round_ratio"]["coordinator_cpu"] is None  # no coordinator CPU recorded


def test_index_cost_fits_the_per_index_cost_on_the_medians():
    """index_cost.summarize: per configuration and worker count, each backlog's median per
    transaction over its rounds, and the least-squares line on the index count."""
    ic = _load("index_cost")
    runs = []
    for rnd in (1, 2, 3):
        for k in (0, 2, 4, 8):
            noise = 0.05 if rnd == 2 else 0.0  # one slow round: the medians ignore it
            t = 4000
            runs.append({"phase": "relaxed", "round": rnd, "workload": f"idx{k}", "config": "relaxed", "workers": 1,
                         "transactions": t, "seconds": (150 + 12 * k) * t / 1e6 * (1 + noise),
                         "cpu_s": {"rpl_rca_wkr": (100 + 6 * k) * t / 1e6, "rpl_rca_sql": 0.5,
                                   "ib_srv_purge": (2 + 1 * k) * t / 1e6}})
    runs.append({"phase": "probe", "round": 0, "workload": "idx0", "config": "relaxed", "workers": 1,
                 "transactions": 10, "seconds": 9.0, "cpu_s": {}})
    rows = ic.summarize({"runs": runs})
    assert len(rows) == 1 and rows[0]["indexes"] == [0, 2, 4, 8] and rows[0]["rounds"] == [3, 3, 3, 3]
    fit = rows[0]["fit"]
    assert fit["seconds"]["per_index_us"] == pytest.approx(12.0) and fit["seconds"]["at_0_us"] == pytest.approx(150.0)
    assert fit["worker_cpu"]["per_entry_us"] == pytest.approx(1.5)
    assert fit["worker_cpu"]["per_index_share"] == pytest.approx(0.06)
    assert fit["purge_cpu"]["per_index_us"] == pytest.approx(1.0)
    rows_and_pairs = ic.pairs({"runs": runs + [dict(r, workload="uk4", seconds=r["seconds"] * 1.5)
                                               for r in runs if r["workload"] == "idx4"]})
    assert [(p["variant"], p["twin"]) for p in rows_and_pairs] == [("uk4", "idx4")]
    p = rows_and_pairs[0]
    assert p["difference_us"]["seconds"] == pytest.approx(0.5 * (150 + 12 * 4), abs=0.1)
    assert p["share"]["seconds"] == pytest.approx(0.5) and p["difference_us"]["worker_cpu"] == 0
    assert "per_byte_us" not in p  # no backlog sizes recorded
    wide = [dict(r, workload="wide0", cpu_s={**r["cpu_s"], "rpl_rca_wkr": r["cpu_s"]["rpl_rca_wkr"] + 4000 * 1e-6 * 20})
            for r in runs if r["workload"] == "idx0" and r["phase"] == "relaxed"]
    backlogs = {"idx0": {"transactions": 4000, "files": [{"bytes": 4000 * 1300}]},
                "wide0": {"transactions": 4000, "files": [{"bytes": 4000 * 2300}]}}
    (w,) = [p for p in ic.pairs({"runs": runs + wide, "backlogs": backlogs}) if p["variant"] == "wide0"]
    assert w["bytes_added"] == 1000 and w["per_byte_us"]["worker_cpu"] == pytest.approx(0.02)


def test_index_check_sets_each_round_against_its_own_reference():
    """index_check.measured_ratios: each backlog's time over the reference's in the same round and
    configuration, the median over the rounds (a loan's slow round cancels); probes and runs
    without a reference in their round are left out."""
    ic = _load("index_check")
    runs = []
    for rnd, speed in ((1, 1.0), (2, 1.5), (3, 1.0)):
        for wl, t in (("kr", 1.0), ("idx8", 1.6), ("fkr", 1.4)):
            runs.append({"phase": "relaxed", "round": rnd, "workload": wl, "config": "relaxed", "workers": 1,
                         "transactions": 4000, "seconds": t * speed * (1.1 if (wl, rnd) == ("fkr", 3) else 1)})
    runs.append({"phase": "probe", "round": 0, "workload": "idx8", "config": "relaxed", "workers": 1,
                 "transactions": 400, "seconds": 9.0})
    runs.append({"phase": "relaxed", "round": 4, "workload": "idx8", "config": "relaxed", "workers": 1,
                 "transactions": 4000, "seconds": 9.0})  # no kr run in round 4
    ratios, counts = ic.measured_ratios({"runs": runs}, "kr")
    assert ratios[("idx8", "relaxed", 1)] == pytest.approx(1.6) and ratios[("kr", "relaxed", 1)] == 1.0
    assert ratios[("fkr", "relaxed", 1)] == pytest.approx(1.4)  # the median of 1.4, 1.4, 1.54
    assert counts[("idx8", "relaxed", 1)] == 4000


def test_index_cost_prices_the_statement_twins_per_event():
    """index_cost.pairs on the statement twins: the difference per binlog event stmt16 adds
    (EVENTS_ADDED, checked against gen_backlogs' statements: GTID, BEGIN, a table map and a rows
    event a statement, XID), per byte where the bytes alone differ (the doc twins)."""
    import random

    ic, gen = _load("index_cost"), _load("gen_backlogs")
    for (variant, twin), added in ic.EVENTS_ADDED.items():
        def events(name):
            wl = gen.STMT_WORKLOADS[name]
            rnd = random.Random(f"33:{wl.seed_key or wl.name}")
            list(wl.setup(rnd))
            return {3 + 2 * len(wl.trx(rnd, seq)) for seq in range(1, 50)}
        assert events(variant) == {35} and events(twin) == {5} and added == 30
    runs = [{"phase": "relaxed", "round": rnd, "workload": wl, "config": "relaxed", "workers": 1, "transactions": 1000,
             "seconds": us * 1000 / 1e6, "cpu_s": {"rpl_rca_wkr": 0.8 * us * 1000 / 1e6}}
            for rnd in (1, 2, 3) for wl, us in (("stmt1", 170.0 + rnd), ("stmt16", 470.0 + rnd))]
    (p,) = ic.pairs({"runs": runs})
    assert (p["variant"], p["twin"], p["events_added"]) == ("stmt16", "stmt1", 30)
    assert p["per_event_us"]["seconds"] == pytest.approx(10.0) and p["per_event_us"]["worker_cpu"] == pytest.approx(8.0)
    assert "per_byte_us" not in p


def test_fk_twins_differ_only_in_the_foreign_key():
    """gen_backlogs' fkfk is the lab's fk backlog statement for statement (one seeded draw), and
    fkkey the same with the index InnoDB makes for the foreign key instead of the key itself."""
    import random

    gen = _load("gen_backlogs")

    def draw(wl):
        rnd = random.Random(f"33:{wl.seed_key or wl.name}")
        return list(wl.setup(rnd)), [wl.trx(rnd, seq) for seq in range(1, 300)]

    lab_fk, fkfk, fkkey = draw(gen.WORKLOADS["fk"]), draw(gen.INDEX_WORKLOADS["fkfk"]), draw(gen.INDEX_WORKLOADS["fkkey"])
    assert fkfk == lab_fk
    assert fkkey[1] == lab_fk[1]
    changed = [(a, b) for a, b in zip(lab_fk[0], fkkey[0]) if a != b]
    assert len(fkkey[0]) == len(lab_fk[0]) and len(changed) == 1
    a, b = changed[0]
    assert a.replace(gen.FK_CLAUSE, "KEY parent_id (parent_id)") == b



def test_commit_gaps_split_a_catch_up_into_flush_groups():
    """commit_gaps.py: the commit rate of a kept catch-up and its gaps within and between flush
    groups (docs/accuracy.md, "The replica's commit rate against the model's commit stage")."""
    import json

    gaps = _load("commit_gaps")
    row = gaps.gaps_row("x", [0, 5, 9, 60, 66, 130], within_us=10)
    assert row == {"catch_up": "x", "transactions": 6, "span_ms": 0.13, "us_per_transaction": 26.0,
                   "gaps_within": 3, "within_mean_us": 5.0, "groups": 3, "between_mean_us": 57.5,
                   "members_per_group": 2.0}
    d = json.loads((ROOT / "bench" / "manycore_16core_run7_commit_gaps.json").read_text())
    uniform = {r["catch_up"]: r for r in d["rows"] if r["catch_up"].startswith("uniform-relaxed")}
    assert len(uniform) == 5 and min(r["us_per_transaction"] for r in uniform.values()) < d["model_commit_us"]


def test_doc_twins_differ_only_in_the_text_s_length():
    """gen_backlogs' doc5 and doc500: the same statements and rows (one seeded draw), the TEXT
    values 59 and 5,999 characters: the events' bytes differ, their number does not."""
    import random

    gen = _load("gen_backlogs")

    def draw(wl):
        rnd = random.Random(f"33:{wl.seed_key or wl.name}")
        return list(wl.setup(rnd)), [wl.trx(rnd, seq) for seq in range(1, 200)]

    small, big = draw(gen.DOC_WORKLOADS["doc5"]), draw(gen.DOC_WORKLOADS["doc500"])
    assert len(small[1]) == len(big[1]) and all(len(a) == len(b) for a, b in zip(small[1], big[1]))
    # the same statements but for the inserted TEXT
    assert [s for t in small[1] for s in t if not s.startswith("INSERT")] == \
           [s for t in big[1] for s in t if not s.startswith("INSERT")]
    assert small[1][0][-1].count("-") == 4 and big[1][0][-1].count("-") == 499
    assert len(small[0]) == len(big[0]) and sum(map(len, big[0])) > 50 * sum(map(len, small[0])) / 60


def test_statement_twins_update_the_same_rows_in_one_or_sixteen_statements():
    """gen_backlogs' stmt1 and stmt16: the same 16 distinct rows of one table a transaction (one
    seeded draw), in one ``WHERE id IN (...)`` or sixteen; and the committed 2-core run of them
    (bench/stmt_twins_2core.json) shows the statements' cost: with the same rows, stmt16's one
    relaxed worker spent more CPU and time (docs/accuracy.md "What an event costs")."""
    import json
    import random
    import re
    import statistics

    gen = _load("gen_backlogs")

    def draw(wl):
        rnd = random.Random(f"33:{wl.seed_key or wl.name}")
        return list(wl.setup(rnd)), [wl.trx(rnd, seq) for seq in range(1, 200)]

    one, sixteen = draw(gen.STMT_WORKLOADS["stmt1"]), draw(gen.STMT_WORKLOADS["stmt16"])
    assert one[0] == sixteen[0]
    assert {len(t) for t in one[1]} == {1} and {len(t) for t in sixteen[1]} == {16}

    def rows(trx):
        return [(re.search(r"UPDATE (s\d)", s).group(1), int(i)) for s in trx
                for i in re.search(r"IN \(([\d,]+)\)", s).group(1).split(",")]

    assert [rows(t) for t in one[1]] == [rows(t) for t in sixteen[1]]
    assert all(len(set(rows(t))) == 16 for t in one[1])
    lab = json.loads((ROOT / "bench" / "stmt_twins_2core.json").read_text())
    assert lab["machine"]["cores"] == 2

    def median(wl, key):
        return statistics.median(key(r) for r in lab["runs"] if r.get("phase") == "relaxed"
                                 and r["workload"] == wl and r["workers"] == 1 and "seconds" in r)

    cpu = {wl: median(wl, lambda r: r["cpu_s"]["rpl_rca_wkr"]) for wl in ("stmt1", "stmt16")}
    assert cpu["stmt16"] > 1.5 * cpu["stmt1"]
    assert median("stmt16", lambda r: r["seconds"]) > 1.5 * median("stmt1", lambda r: r["seconds"])


def test_coordinator_read_counts_a_binlog_s_events_and_bytes():
    """coordinator_read.py: the events and bytes of each transaction (sysbench's: GTID, BEGIN, four
    table maps and rows events, XID; its 9 DDL: GTID and the query), all of the file's bytes but
    its own events; and the fit finds a per-event cost in rows made by one."""
    cr = _load("coordinator_read")

    sizes = cr.transaction_sizes([FIXTURE])
    assert [e for e, _ in sizes] == [2] * 9 + [11] * 2500
    assert 0 < FIXTURE.stat().st_size - sum(b for _, b in sizes) < 256
    rows = [{"events_per_trx": e, "bytes_per_trx": b, "read_us_per_trx": 4.0 * e} for e, b in
            [(11, 1800), (7, 730), (15, 3800), (6, 470), (9, 37000)]]
    f = cr.fit(rows)
    assert f["events_and_bytes"]["us_per_event"] == pytest.approx(4.0)
    assert abs(f["events_and_bytes"]["us_per_byte"]) < 1e-9 and f["events_alone"]["rms_us"] < 1e-6
    assert f["bytes_alone"]["rms_us"] > 5


def test_apply_costs_separates_a_row_from_an_event_within_one_backlog():
    """apply_costs.py: the timeline's transactions that waited for commit order (their apply alone),
    joined with their shapes by GTID number, a median per shape, and the weighted least squares
    of ``a + u * rows + e * events`` gives back the costs they were made with; shapes whose rows
    and events keep one ratio cannot separate them (one line, not a wrong number)."""
    import random

    ac = _load("apply_costs")
    rnd = random.Random(7)
    shapes, gno, start, wait = {}, [], [], []
    t = 0
    for g in range(1, 400):
        rows = rnd.choice([1, 2, 3, 12, 20, 150])
        events = 3 + 2 * rows if rows <= 20 else 6   # one statement a row, or a range update
        shapes[g] = (0, rows, 0, events)
        apply_ns = int((140 + 20 * rows + 15 * events) * 1000)
        gno.append(g)
        start.append(t)
        wait.append(t + apply_ns if g % 5 else -1)   # every fifth did not wait: left out
        t += apply_ns + 5000
    by = ac.applies({"gno": gno, "start": start, "wait_start": wait}, shapes)
    assert sum(len(v) for v in by.values()) == len([g for g in gno if g % 5])
    f = ac.fit(by)
    assert (f["intercept_us"], f["us_per_row"], f["us_per_event"]) == (pytest.approx(140), pytest.approx(20),
                                                                      pytest.approx(15))
    assert f["event_per_row"] == pytest.approx(0.75) and f["rms_us"] < 0.1
    one_ratio = {s: v for s, v in by.items() if s[1] <= 20}   # events = 3 + 2 rows: collinear with the intercept
    with pytest.raises(ValueError, match="do not separate"):
        ac.fit(one_ratio)


def test_chain_is_a_pure_chain_and_its_2core_run_shows_little_multi_worker_cpu():
    """``chain`` (gen_backlogs.CHAIN_WORKLOADS): hot's schema, every transaction on counter 1, so each
    one's writeset meets its predecessor's. Its 2-core run (bench/manycore_chain_2core.json,
    docs/accuracy.md "Charged per switch, fitted") is what separates a multi-worker cost per
    transaction (39.3 us built in) from one per switch: relaxed, the workers' CPU at 2 and 4 workers
    over one worker's, paired by round, is well under the per-transaction charge, and the chain is
    not slower with more workers."""
    import json
    import random
    import statistics

    gen = _load("gen_backlogs")
    wl = gen.CHAIN_WORKLOADS["chain"]
    rnd = random.Random(f"33:{wl.seed_key or wl.name}")
    assert wl.setup is gen.hot_setup
    trxs = [wl.trx(rnd, seq) for seq in range(1, 300)]
    assert all(len(t) == 2 and t[1].endswith("WHERE id=1") and ",1," in t[0] for t in trxs)
    lab = json.loads((ROOT / "bench" / "manycore_chain_2core.json").read_text())
    assert lab["machine"]["cores"] == 2
    runs = [r for r in lab["runs"] if r.get("phase") == "relaxed" and r["workload"] == "chain"]
    for w in (2, 4):
        extra, speedups = [], []
        for rd in sorted({r["round"] for r in runs}):
            one = next(r for r in runs if r["round"] == rd and r["workers"] == 1)
            many = next(r for r in runs if r["round"] == rd and r["workers"] == w)
            extra.append((many["cpu_s"]["rpl_rca_wkr"] - one["cpu_s"]["rpl_rca_wkr"]) / one["transactions"] * 1e6)
            speedups.append(one["seconds"] / many["seconds"])
        assert len(extra) >= 3
        assert statistics.median(extra) < 20.0, (w, extra)      # us a transaction; 39.3 charged built in
        assert statistics.median(speedups) >= 1.0, (w, speedups)


def test_steps_pair_each_round_s_neighbouring_counts_less_their_start():
    """steps.py: each round's time at the larger count over the smaller, each less the start the
    compare run took off (here 0.1 s, the same at every count), the median over the rounds of
    every run, the rounds that got slower, and the model's step from the compare rows."""
    steps = _load("steps")

    def lab_of(times: dict[int, list[float]]) -> dict:
        return {"runs": [{"phase": "relaxed", "round": k + 1, "workload": "hot", "config": "relaxed",
                          "workers": w, "seconds": t[k]} for w, t in times.items() for k in range(len(t))]}

    def cmp_of(pred: dict[int, float]) -> dict:
        return {"startup_s": 0.1, "rows": [{"workload": "hot", "config": "relaxed", "workers": w, "predicted_s": p}
                                           for w, p in pred.items()]}

    # run A: rounds 1.1/0.6 and 2.1/1.3 at 1/2 workers (paired 0.5/1.0 = 0.5, 1.2/2.0 = 0.6);
    # run B: 1.1/1.2 (1.1/1.0 = 1.1, slower). Unpaired, run B's 2-worker round would pair with any.
    a = (lab_of({1: [1.1, 2.1], 2: [0.6, 1.3]}), cmp_of({1: 1.0, 2: 0.8}))
    b = (lab_of({1: [1.1], 2: [1.2]}), cmp_of({1: 1.0, 2: 0.6}))
    (row,) = steps.steps([a, b])
    assert (row["from"], row["to"], row["rounds"], row["slower"]) == (1, 2, 3, 1)
    assert row["measured_ratio"] == pytest.approx(0.6)
    assert row["predicted_ratio"] == pytest.approx(0.7)
    assert row["error"] == pytest.approx(0.7 / 0.6 - 1, abs=1e-4)
    # a step one run did not measure is left out
    c = (lab_of({1: [1.1]}), cmp_of({1: 1.0}))
    assert steps.steps([a, c]) == []


def test_the_committed_steps_are_the_seven_committed_runs_steps():
    """bench/manycore_16core_steps.json is steps.py of the seven committed lab runs with their
    compare.py outputs (docs/accuracy.md "The curve's shape, step by step"): reproducible."""
    import json

    steps = _load("steps")
    names = ("", "_run2", "_run3", "_run4", "_run5", "_run6", "_run7")
    pairs = [(lab.read_json(ROOT / "bench" / f"manycore_16core{s}.json.gz"),
              lab.read_json(ROOT / "bench" / f"manycore_16core{s}_compare.json")) for s in names]
    rows = steps.steps(pairs)
    committed = json.loads((ROOT / "bench" / "manycore_16core_steps.json").read_text())
    assert rows == committed["rows"] and len(rows) == 50 and all(r["rounds"] >= 23 for r in rows)
