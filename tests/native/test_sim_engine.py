"""Differential tests: the native simulation engine (native/src/sim.rs) against the Python
reference (sim/engine.py ``simulate_python``), to the bit.

Every fixture's transactions go through the real pipeline (reader, re-derived clocks) into
every builder (the four clocks, DATABASE mode, MariaDB conservative mode), then through both
engines over worker counts, preserve-commit-order on/off, durable/relaxed, catch-up and
arrival timelines and several cost models; hypothesis adds random inputs. Results must be
equal as floats (``==``, not approximately): commit time of every transaction, apply time,
busy/wait counters, flushes; and the lag statistics computed natively must equal the Python
ones. ``lagadvisor simulate --format json`` must print the same bytes on both paths.

Without the extension the tests skip, unless ``LAGADVISOR_REQUIRE_NATIVE=1`` (set by
scripts/test.sh, whose ``pip install`` builds it): then they fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest
from conftest import FIXTURES, fixture_dirs, fixture_facts
from hypothesis import given, settings
from hypothesis import strategies as st

from lagadvisor.kinds import Applier
from lagadvisor.sim import build, run
from lagadvisor.sim.engine import ENTERED, PREFIX, SPECIFIC, SimArgs, SimInput, SimTrx, simulate_native, simulate_python
from lagadvisor.sim.model import CostModel, ReplicaConfig

try:
    from lagadvisor import _native
except ImportError:  # pragma: no cover - depends on the build
    _native = None


@pytest.fixture(autouse=True)
def _need_native():
    if _native is not None and hasattr(_native, "sim_run"):
        return
    msg = "lagadvisor._native is not built (cd native && cargo build --release; see docs/internals.md)"
    if os.environ.get("LAGADVISOR_REQUIRE_NATIVE") == "1":
        pytest.fail(msg)
    pytest.skip(msg)


COSTS = {
    "default": CostModel(),
    # commit-order hand-offs, 4 cores, a slow coordinator, a commit stage's cost per group
    "handoff": CostModel(handoff_us=35.0, dispatch_us=90.0, cores=4, commit_group_us=41.0),
    # no serial commit work and no sync: everything is decided by dependencies and CPU share
    "free_commit": CostModel(commit_us=0.0, flush_us=0.0, dispatch_us=0.0, cores=1),
    # the coordinator's cost per byte read, and colder caches with several workers
    "per_byte": CostModel(dispatch_us=0.0, dispatch_byte_us=0.0173, multi_worker_cpu=1.13),
    # the coordinator's read per event (and per byte) over a small per-transaction cost
    "per_event": CostModel(dispatch_us=6.0, dispatch_event_us=4.3, dispatch_byte_us=0.0005, cores=4),
    # the redo fsync in the flush stage as well as the binlog fsync in the sync stage
    "redo": CostModel(redo_flush_us=210.0, flush_us=190.0),
    # ... on separate devices (the two fsyncs overlap)
    "redo_2dev": CostModel(redo_flush_us=210.0, flush_us=190.0, fsync_devices=2),
    # ... with the committing threads on a CPU for part of each fsync, on one core
    "fsync_cpu": CostModel(redo_flush_us=210.0, flush_us=190.0, fsync_cpu=0.38, cores=1),
    "fsync_cpu_1dev": CostModel(redo_flush_us=210.0, flush_us=190.0, fsync_cpu=0.7, fsync_devices=2, cores=2),
    # contention: every CPU job slower while others run, more past the cores
    "contention": CostModel(concurrency_cpu=0.031, oversubscribed_cpu=0.017, cores=3),
    # the coordinator's wake-up after sleeping on a dependency
    "wakeup": CostModel(wakeup_us=23.0, handoff_us=7.0, cores=4),
    # the multi-worker cost charged per switch of worker (with the per-transaction one)
    "switch": CostModel(switch_us=55.0, multi_worker_us=12.0, cores=8),
    # the commit stage's cost mostly per group, little per member, durable groups on one device
    "commit_group": CostModel(commit_group_us=52.0, commit_us=6.0, redo_flush_us=120.0, fsync_devices=1),
}


def assert_same(a, b, what) -> None:
    assert a.workers == b.workers, what
    assert a.apply_us == b.apply_us, (what, a.apply_us, b.apply_us)
    assert a.busy_us == b.busy_us, (what, a.busy_us, b.busy_us)
    assert a.dependency_wait_us == b.dependency_wait_us, (what, a.dependency_wait_us, b.dependency_wait_us)
    assert a.worker_wait_us == b.worker_wait_us, (what, a.worker_wait_us, b.worker_wait_us)
    assert a.flushes == b.flushes, (what, a.flushes, b.flushes)
    assert a.commit_groups == b.commit_groups, (what, a.commit_groups, b.commit_groups)
    assert a.switches == b.switches, (what, a.switches, b.switches)
    assert list(a.arrival_us) == list(b.arrival_us), what
    if list(a.commit_us) != list(b.commit_us):
        i = next(k for k, (x, y) in enumerate(zip(a.commit_us, b.commit_us)) if x != y)
        raise AssertionError(f"{what}: commit times differ first at {i}: {a.commit_us[i]!r} != {b.commit_us[i]!r}")
    assert run._lag_stats_python(a, 0.05) == run._lag_stats_native(b, 0.05), what


def both(inp: SimInput, cfg: ReplicaConfig, cost: CostModel, what) -> None:
    assert_same(simulate_python(inp, cfg, cost), simulate_native(inp, cfg, cost), what)


def inputs(facts, cost, catch_up):
    base = build.base_columns(facts, cost, catch_up=catch_up)
    for clock in build.CLOCKS:
        yield clock, build.logical_clock(facts, clock, cost, catch_up=catch_up, base=base)
    yield "database", build.database_partitioned(facts, cost, catch_up=catch_up, base=base)
    yield "mariadb_conservative", build.mariadb_conservative(facts, cost, catch_up=catch_up, base=base)


# A covering set over the settings (each value of each setting appears; the suite's time
# is dominated by the Python reference): workers, preserve order, durable, cost model.
GRID = [(0, True, True, "default"), (1, True, False, "default"), (2, True, True, "default"),
        (8, False, True, "default"), (64, True, False, "handoff"), (3, False, False, "free_commit"),
        (8, True, True, "handoff"), (4, True, True, "free_commit")]


@pytest.mark.parametrize("fixture", [d.name for d in fixture_dirs()])
def test_native_engine_matches_python_on_fixtures(fixture):
    facts = fixture_facts(fixture)
    assert facts
    for catch_up in (True, False):
        for cost_name in ("default", "handoff", "free_commit"):
            cost = COSTS[cost_name]
            for kind, inp in inputs(facts, cost, catch_up):
                for w, preserve, durable, c in GRID:
                    if c == cost_name:
                        cfg = ReplicaConfig(w, preserve, durable)
                        both(inp, cfg, cost, (fixture, cost_name, catch_up, kind, w, preserve, durable))


def test_a_commit_stage_priced_per_group_matches():
    """``commit_group_us``: the commit stage's leader pays it once per group. The engines agree
    to the bit, and the groups grow with the workers as the stage gets busy (with one worker
    every commit is a group of its own)."""
    facts = fixture_facts("sysbench_oltp_write_only")
    cost = COSTS["commit_group"]
    inp = build.logical_clock(facts, "WRITESET", cost, catch_up=True)
    groups = {}
    for w in (0, 1, 2, 8, 32):
        for durable in (False, True):
            both(inp, ReplicaConfig(w, True, durable), cost, ("commit_group", w, durable))
        groups[w] = simulate_native(inp, ReplicaConfig(w, True, False), cost).commit_groups
    assert groups[0] == groups[1] == len(inp)
    assert groups[32] < groups[2] <= len(inp), groups


def test_a_switch_of_worker_priced_matches():
    """``switch_us``: both engines number the workers, give each transaction the lowest free one
    and charge a transaction on another worker than its predecessor's; they agree to the bit and
    on the count, for the MTA and the CSA, with commit order preserved or not."""
    facts = fixture_facts("sysbench_oltp_write_only")
    cost = COSTS["switch"]
    for clock in ("WRITESET", "recorded"):
        inp = build.logical_clock(facts, clock, cost, catch_up=True)
        for w in (0, 1, 2, 8, 32):
            for preserve, durable, applier in ((True, False, Applier.MTA), (False, True, Applier.MTA),
                                               (True, True, Applier.CSA), (False, False, Applier.CSA)):
                both(inp, ReplicaConfig(w, preserve, durable, applier=applier), cost,
                     ("switch", clock, w, preserve, durable, applier))
    inp = build.logical_clock(facts, "WRITESET", cost, catch_up=True)
    one, eight = (simulate_native(inp, ReplicaConfig(w, True, False), cost) for w in (1, 8))
    assert one.switches == 0 < eight.switches < len(inp)
    free = simulate_native(inp, ReplicaConfig(8, True, False), replace(cost, switch_us=0.0))
    assert free.apply_us < eight.apply_us


def test_memory_back_pressure_matches():
    """replica_parallel_pending_jobs_size_max small enough to block the coordinator."""
    facts = fixture_facts("sysbench_oltp_write_only")
    inp = build.logical_clock(facts, "WRITESET", CostModel(), catch_up=True)
    sizes = sorted(inp.nbytes)
    for limit in (sizes[0], sizes[len(sizes) // 2], 3 * sizes[-1]):
        for w in (2, 8, 64):
            both(inp, ReplicaConfig(w, True, True, limit), CostModel(), ("pending", limit, w))


def test_empty_and_tiny_inputs():
    empty = SimInput.of([])
    for w in (0, 1, 4):
        both(empty, ReplicaConfig(w), CostModel(), ("empty", w))
    one = SimInput.of([SimTrx(5.0, 10.0, 100, -1)])
    for w in (0, 1, 4):
        both(one, ReplicaConfig(w), CostModel(), ("one", w))


def test_long_timelines_match():
    """Arrivals hours apart: virtual time is large and the completion tolerance
    (1e-9 relative) decides which jobs finish together."""
    inp = SimInput.of([SimTrx(i * 3.6e9 + 0.3, 22.4 + i % 3, 300, i - 1 - i % 2) for i in range(60)])
    for w in (0, 1, 2, 8):
        for durable in (True, False):
            both(inp, ReplicaConfig(w, True, durable), CostModel(), ("long", w, durable))


@pytest.mark.parametrize("durable", [True, False])
def test_native_scales_and_spreads_the_work_as_python_does(durable):
    """engine.simulate hands the unscaled work to sim.rs with the workers' CPU factor, the
    durable bytes, the per-transaction cost and the apply spread's factors (SimArgs), which
    scales it as StreamSim's feed does; the reference scales it in Python
    (spread_across_workers): the same floats."""
    from lagadvisor.sim.engine import simulate, spread_across_workers

    import random

    rng = random.Random(33)
    inp = random_input([(rng.uniform(0, 1e6), rng.uniform(10, 900), rng.randrange(200, 9000), rng.randrange(0, 12),
                         rng.choice((PREFIX, SPECIFIC, ENTERED))) for _ in range(900)], sort_arrivals=True)
    cost = CostModel(multi_worker_cpu=1.3, multi_worker_us=27.5, durable_byte_us=0.031, apply_spread=0.35, cores=4)
    for workers in (1, 6):
        cfg = ReplicaConfig(workers, True, durable)
        scaled, scost = spread_across_workers(inp, cfg, cost)
        assert_same(simulate_python(scaled, cfg, scost), simulate(inp, cfg, cost), f"{workers} workers")
    assert simulate(inp, cfg, cost).apply_us != simulate(inp, cfg, CostModel(**{
        **{f: getattr(cost, f) for f in cost.__slots__}, "apply_spread": 0.0})).apply_us
    with pytest.raises(ValueError, match="not 64"):
        _native.sim_run(replace(SimArgs.of(inp, cfg, cost, True), spread=(1.0,)))


def test_native_rejects_bad_input():
    bad = SimInput.of([SimTrx(0.0, 1.0, 1, 5)])  # need beyond the input
    with pytest.raises(ValueError):
        simulate_native(bad, ReplicaConfig(2), CostModel())
    nan = SimInput.of([SimTrx(float("nan"), 1.0, 1, -1)])
    with pytest.raises(ValueError):
        simulate_native(nan, ReplicaConfig(2), CostModel())


def test_stall_is_reported_by_both():
    stuck = SimInput.of([SimTrx(0.0, 1.0, 1, 1, PREFIX), SimTrx(0.0, 1.0, 1, 1, PREFIX)])
    for f in (simulate_python, simulate_native):
        with pytest.raises(RuntimeError, match="stalled at transaction 0 of 2"):
            f(stuck, ReplicaConfig(2), CostModel())


def random_input(rows, sort_arrivals: bool) -> SimInput:
    """Hypothesis rows (arrival, work, bytes, how far back the need is, need kind) as an input;
    each transaction's events follow from its bytes (2 to 41)."""
    arrivals = [r[0] for r in rows]
    if sort_arrivals:
        arrivals.sort()
    return SimInput.of([SimTrx(arrivals[i], w, b, (i - 1 - back) if back <= i - 1 else -1, kind, 2 + b % 40)
                        for i, (_, w, b, back, kind) in enumerate(rows)])


# Times on a coarse grid make ties (equal event times) common: they are where the event order
# (time, then push counter) matters.
times = st.one_of(st.integers(0, 40).map(lambda v: v * 25.0), st.floats(0, 1e10, allow_nan=False))
works = st.one_of(st.integers(0, 8).map(lambda v: v * 12.5), st.floats(0, 5000, allow_nan=False))


@pytest.mark.parametrize("applier", list(Applier))
@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(times, works, st.integers(0, 10**6), st.integers(0, 20),
                          st.sampled_from([PREFIX, SPECIFIC, ENTERED])), min_size=1, max_size=60),
       st.integers(0, 9), st.booleans(), st.booleans(), st.booleans(),
       st.integers(1, 5), st.sampled_from([0.0, 30.0, 154.3]), st.sampled_from([0.0, 12.0, 60.0]),
       st.sampled_from([0.0, 438.5]), st.sampled_from([0.0, 7.5]),
       st.sampled_from([128 * 1024 * 1024, 2 * 10**6, 1]), st.sampled_from([0.0, 0.0173, 1.7]),
       st.sampled_from([1.0, 1.13]), st.sampled_from([0.0, 210.0, 0.1]), st.sampled_from([1, 2]),
       st.sampled_from([0.0, 0.38, 1.0]), st.sampled_from([0.0, 0.028, 0.5]), st.sampled_from([0.0, 0.012]),
       st.sampled_from([0.0, 25.0, 7.3]), st.sampled_from([0.0, 0.043]), st.sampled_from([0.0, 0.0101, 0.37]),
       st.sampled_from([0.0, 4.3, 13.7]))
def test_native_matches_python_on_random_inputs(applier, rows, workers, durable, preserve, sort_arrivals, cores,
                                                commit_us, dispatch_us, flush_us, handoff_us, pending_max,
                                                dispatch_byte_us, multi_worker_cpu, redo_flush_us, fsync_devices,
                                                fsync_cpu, concurrency_cpu, oversubscribed_cpu, wakeup_us,
                                                durable_byte_us, fsync_byte_us, dispatch_event_us):
    """Both appliers (the Change Stream Applier's changes: sim/engine.py's docstring)."""
    inp = random_input(rows, sort_arrivals)
    cost = CostModel(cores=cores, commit_us=commit_us, dispatch_us=dispatch_us, flush_us=flush_us,
                     handoff_us=handoff_us, dispatch_byte_us=dispatch_byte_us, multi_worker_cpu=multi_worker_cpu,
                     redo_flush_us=redo_flush_us, fsync_devices=fsync_devices, fsync_cpu=fsync_cpu,
                     concurrency_cpu=concurrency_cpu, oversubscribed_cpu=oversubscribed_cpu, wakeup_us=wakeup_us,
                     durable_byte_us=durable_byte_us, fsync_byte_us=fsync_byte_us,
                     dispatch_event_us=dispatch_event_us)
    both(inp, ReplicaConfig(workers, preserve, durable, pending_max, applier=applier), cost,
         (applier, workers, preserve, durable))


def _simulate_json(args: list[str], pure: bool) -> str:
    env = dict(os.environ)
    env.pop("LAGADVISOR_PUREPYTHON", None)
    if pure:
        env["LAGADVISOR_PUREPYTHON"] = "1"
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "simulate", "--format", "json", *args],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


SIMULATE_CASES = {
    "sysbench_default": ["--workers", "0,1,2,4,8,16,32,64", "fixtures/sysbench_oltp_write_only/binlog.000001"],
    "sysbench_catchup_relaxed_unordered": [
        "--workers", "1,3,8", "--catch-up", "--relaxed", "--preserve-commit-order", "off",
        "--lag-threshold", "0.001", "fixtures/sysbench_oltp_write_only/binlog.000001"],
    "rotation_recorded": ["--workers", "2,4", "--policy", "recorded", "--policy", "WRITESET",
                          *(f"fixtures/single_rotation/binlog.00000{k}" for k in range(1, 6))],
    "database": ["--mode", "database", "--policy", "recorded", "--workers", "1,4",
                 "fixtures/single_full/binlog.000001"],
    "mariadb": ["--mode", "mariadb_conservative", "--policy", "recorded", "--workers", "1,4", "--catch-up",
                "fixtures/mariadb_concurrent/mariadb-bin.000001"],
}


@pytest.mark.parametrize("case", sorted(SIMULATE_CASES))
def test_simulate_json_is_byte_identical(case):
    args = [str(FIXTURES.parent / a) if a.startswith("fixtures/") else a for a in SIMULATE_CASES[case]]
    native, pure = _simulate_json(args, False), _simulate_json(args, True)
    assert json.loads(native)["results"]
    assert native == pure


def test_purepython_switch_and_silent_fallback():
    code = "import lagadvisor.sim.engine as e; print(e.NATIVE is None)"
    env = dict(os.environ, LAGADVISOR_PUREPYTHON="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "True"
    env.pop("LAGADVISOR_PUREPYTHON")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"
    # extension missing: the Python engine, silently
    code = ("import sys; sys.modules['lagadvisor._native'] = None\n"
            "import lagadvisor.sim.engine as e\n"
            "from lagadvisor.sim.model import CostModel, ReplicaConfig\n"
            "r = e.simulate([e.SimTrx(0.0, 10.0, 1, -1)], ReplicaConfig(2), CostModel())\n"
            "print(e.NATIVE is None, r.flushes)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "True 1" and not out.stderr


# ---------------------------------------------------------------- the Change Stream Applier

CSA_GRID = [(1, True, True, "default"), (2, True, True, "default"), (4, False, True, "default"),
            (8, True, False, "per_byte"), (3, True, True, "handoff"), (16, True, True, "redo"),
            (4, True, False, "free_commit"), (2, False, True, "fsync_cpu")]


@pytest.mark.parametrize("fixture", ["sysbench_oltp_write_only", "single_full", "mariadb_concurrent"])
def test_csa_native_matches_python_on_fixtures(fixture):
    """The CSA's changes (reads in the workers, no pending-jobs limit, the worker free at
    apply with commit order preserved) replayed to the bit, on every clock of a fixture."""
    facts = fixture_facts(fixture)
    for catch_up in (True, False):
        for w, preserve, durable, cost_name in CSA_GRID:
            cost = COSTS[cost_name]
            base = build.base_columns(facts, cost, catch_up=catch_up)
            for clock in build.CLOCKS:
                inp = build.logical_clock(facts, clock, cost, catch_up=catch_up, base=base)
                cfg = ReplicaConfig(w, preserve, durable, applier=Applier.CSA)
                both(inp, cfg, cost, ("csa", fixture, cost_name, catch_up, clock, w, preserve, durable))


def test_csa_ignores_pending_jobs_size_max():
    """19.2.4.2: the CSA has no replica_pending_jobs_size_max; a limit of one byte changes nothing."""
    facts = fixture_facts("sysbench_oltp_write_only")
    inp = build.logical_clock(facts, "WRITESET", CostModel(), catch_up=True)
    for w in (2, 8):
        free = simulate_native(inp, ReplicaConfig(w, True, True, applier=Applier.CSA), CostModel())
        tight = ReplicaConfig(w, True, True, 1, applier=Applier.CSA)
        both(inp, tight, CostModel(), ("csa pending", w))
        assert simulate_native(inp, tight, CostModel()).commit_us == free.commit_us


def test_csa_stream_matches_whole_run():
    """``StreamSim`` (what simulate and advise run) fed in chunks gives sim_run's floats for the
    CSA, a switch of worker priced or not (the switch's CPU given to both as ``switch_add``)."""
    facts = fixture_facts("sysbench_oltp_write_only")
    for name, w, preserve in (("per_byte", 2, True), ("per_byte", 4, False), ("switch", 8, True),
                              ("switch", 4, False)):
        cost = COSTS[name]
        inp = build.logical_clock(facts, "recorded", cost, catch_up=False)
        cfg = ReplicaConfig(w, preserve, True, applier=Applier.CSA)
        whole = simulate_native(inp, cfg, cost)
        if name == "switch":  # the stream must be given the charge, or it would differ below
            assert whole.switches > 0
            assert whole.busy_us > simulate_native(inp, cfg, replace(cost, switch_us=0.0)).busy_us
        s = _native.StreamSim(cfg, cost, 1.0, 0.0, 0.0, cost.switch_add_us(w), 10**9, 1e6, 0, 0)
        for lo in range(0, len(inp), 700):
            sl = slice(lo, lo + 700)
            s.feed(inp.arrival_us[sl].tobytes(), inp.work_us[sl].tobytes(), inp.nbytes[sl].tobytes(),
                   inp.need[sl].tobytes(), inp.need_kind[sl].tobytes(), inp.events[sl].tobytes(), False)
        apply_us, busy, dep, wwait, flushes, groups, n, exact, _, switches = s.finish()
        assert (apply_us, busy, dep, wwait, flushes, groups, n, switches) == (
            whole.apply_us, whole.busy_us, whole.dependency_wait_us, whole.worker_wait_us, whole.flushes,
            whole.commit_groups, len(inp), whole.switches)
        assert exact[0] == whole.commit_us.tobytes()


def test_native_rejects_an_unknown_applier():
    with pytest.raises(TypeError, match="RunArgs.cfg") as e:
        _native.sim_run(SimArgs.of(SimInput.of([]), ReplicaConfig(2, applier="bogus"), CostModel()))
    assert "expected mta or csa" in str(e.value.__cause__.__cause__)
