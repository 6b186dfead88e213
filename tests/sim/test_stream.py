"""The applier fed in chunks (``_native.StreamSim``, ``sim.stream``) and the facts kept in a
``FactStore``: the same floats as one run over the whole input, state bounded by what is in
flight, the lag sketch within its stated bound, the native sketch equal to the reference's."""

from __future__ import annotations

import os
import random
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagadvisor.sim import engine, stream
from lagadvisor.sim.build import TrxFacts
from lagadvisor.sim.engine import ENTERED, PREFIX, SPECIFIC, SimInput, SimTrx, simulate_native, simulate_python
from lagadvisor.sim.model import CostModel, ReplicaConfig
from lagadvisor.sim.run import lag_stats
from lagadvisor.sim.windows import lag_windows
from conftest import skip_without_native

try:
    from lagadvisor import _native
except ImportError:  # pragma: no cover - CI requires it (LAGADVISOR_REQUIRE_NATIVE)
    _native = None

needs_native = pytest.mark.skipif(_native is None and not os.environ.get("LAGADVISOR_REQUIRE_NATIVE"),
                                  reason="native core not built")


def _input(rng: random.Random, n: int, span: int = 30) -> SimInput:
    trxs, t = [], 0.0
    for i in range(n):
        t += rng.choice([0.0, 0.0, 5.0, 50.0, 500.0, 3000.0])
        kind = rng.choice([PREFIX, SPECIFIC, ENTERED])
        need = -1 if i == 0 else rng.randint(max(-1, i - span), i - 1)
        trxs.append(SimTrx(t, rng.choice([10.0, 100.0, 1000.0, 2500.0]), rng.randint(100, 3000), need, kind))
    return SimInput.of(trxs)


def _stream(inp: SimInput, cfg: ReplicaConfig, cost: CostModel, cuts, cap: int, window_us: int = 0,
            threshold_us: float = 1e6):
    s = _native.StreamSim(cfg, cost, 1.0, 0.0, 0.0, cost.switch_add_us(cfg.workers), cap, threshold_us, window_us, 0)
    held = []
    lo = 0
    for hi in list(cuts) + [len(inp)]:
        sl = slice(lo, hi)
        s.feed(inp.arrival_us[sl].tobytes(), inp.work_us[sl].tobytes(), inp.nbytes[sl].tobytes(),
               inp.need[sl].tobytes(), inp.need_kind[sl].tobytes(), inp.events[sl].tobytes(), False)
        held.append(s.held())
        lo = hi
    return s.finish(), held


@needs_native
@pytest.mark.parametrize("seed", range(12))
def test_chunks_give_the_whole_runs_floats(seed):
    rng = random.Random(seed)
    inp = _input(rng, rng.randint(1, 4000))
    cfg = ReplicaConfig(rng.choice([0, 1, 2, 4, 16]), rng.random() < 0.5, rng.random() < 0.5)
    cost = CostModel(commit_group_us=rng.choice([0.0, 45.0]))
    whole = simulate_native(inp, cfg, cost)
    cuts = sorted(rng.sample(range(1, len(inp)), min(len(inp) - 1, rng.randint(0, 40))))
    out, _ = _stream(inp, cfg, cost, cuts, cap=10**9)
    apply_us, busy, dep, wwait, flushes, groups, n, exact, approx, switches = out
    commit = array("d")
    commit.frombytes(exact[0])
    assert approx is None and n == len(inp)
    assert (apply_us, busy, dep, wwait, flushes, groups, switches) == (
        whole.apply_us, whole.busy_us, whole.dependency_wait_us, whole.worker_wait_us, whole.flushes,
        whole.commit_groups, whole.switches)
    assert commit == whole.commit_us


@needs_native
def test_state_follows_what_is_in_flight_not_the_input():
    """300,000 transactions fed 10,000 at a time: the engine keeps at most a few chunks of
    state, and with the sketch on (cap 1,000) no commit time is kept."""
    rng = random.Random(7)
    inp = _input(rng, 300_000, span=8)
    cost = CostModel()
    cuts = list(range(10_000, 300_000, 10_000))
    for cfg in (ReplicaConfig(4, True, True), ReplicaConfig(4, False, True), ReplicaConfig(0, False, False)):
        out, held = _stream(inp, cfg, cost, cuts, cap=1_000, window_us=60_000_000)
        assert max(h[0] for h in held) <= 3 * 65_536 + 10_000, (cfg, held)
        assert max(h[1] for h in held) <= 3 * 65_536 + 10_000, (cfg, held)
        assert max(h[2] for h in held) == 0  # commit times dropped once past the cap
        assert max(h[3] for h in held) < 30_000  # sketch buckets: bounded by the lag range, not the input
        whole = simulate_native(inp, cfg, cost)
        assert out[0] == whole.apply_us and out[4] == whole.flushes


@needs_native
@pytest.mark.parametrize("seed", range(4))
def test_sketch_within_its_bound_and_equal_to_the_reference(seed):
    rng = random.Random(100 + seed)
    inp = _input(rng, 20_000)
    cfg, cost = ReplicaConfig(rng.choice([1, 2, 8]), rng.random() < 0.5, True), CostModel()
    thr = 5_000.0
    out, _ = _stream(inp, cfg, cost, list(range(1_000, 20_000, 1_000)), cap=500, window_us=20_000_000,
                     threshold_us=thr)
    p50, p99, mx, above, series, windows = out[8]
    whole = simulate_python(inp, cfg, cost)
    e50, e99, emax, eabove, _ = lag_stats(whole, thr / 1e6)
    a = stream.SKETCH_ALPHA
    for got, exact in ((p50, e50 * 1e6), (p99, e99 * 1e6)):
        assert abs(got - exact) <= a * exact + 1e-6 * max(1.0, exact) + stream.SKETCH_MIN_US, (got, exact)
    assert mx == pytest.approx(emax * 1e6, rel=1e-12)
    assert above == pytest.approx(eabove * 1e6, rel=1e-9)
    assert 200 <= len(series) <= 401
    ew = lag_windows(whole.arrival_us, whole.commit_us, 20.0, thr / 1e6)
    assert [(w.start_us, w.transactions) for w in ew] == [(s, c) for s, c, *_ in windows]
    for w, (_, _, wp99, wmax, _) in zip(ew, windows):
        exact = w.lag_p99_seconds * 1e6
        assert abs(wp99 - exact) <= a * exact + 1e-6 * max(1.0, exact) + stream.SKETCH_MIN_US
        assert wmax == pytest.approx(w.lag_max_seconds * 1e6, rel=1e-12)
    # the Python reference of the sketch gives the same numbers from the same commits
    acc = stream.ApproxLag(500, thr, 20_000_000, 0)
    c, arr = whole.commit_us, whole.arrival_us
    for i in sorted(range(len(c)), key=lambda i: (c[i], i)):
        acc.take(c[i], arr[i])
    assert acc.result() == (p50, p99, mx, above, series, windows)


def test_fact_store_spills_to_the_cache_dir_and_reads_back(tmp_path, monkeypatch):
    from lagadvisor.sim.facts import FACT_COLUMNS, FactColumns
    from lagadvisor.sim.store import FactStore

    monkeypatch.setenv("LAGADVISOR_CACHE_DIR", str(tmp_path))

    def chunk(start, n, dbsets):
        cols = {name: array("q", [(start + i) * (k + 1) % 97 for i in range(n)]) for k, name in enumerate(FACT_COLUMNS)}
        cols["dbset"] = array("q", [i % len(dbsets) for i in range(n)])
        cols["commit_ts_us"] = array("q", [0 if i % 5 == 0 else 10**15 + start + i for i in range(n)])
        return FactColumns(**cols, dbsets=dbsets)

    parts = [chunk(0, 7, [("a",), ("b",)]), chunk(7, 5, [("b",), ("c", "d")]), chunk(12, 9, [("a",)])]
    mem, disk = FactStore(limit=10**6), FactStore(limit=8)
    for p in parts:
        mem.add(p)
        disk.add(p)
    assert not mem.spilled and disk.spilled and disk.columns is None
    assert list(os.listdir(tmp_path)) == []  # the spill file is unlinked: nothing left behind
    assert len(mem) == len(disk) == 21
    assert list(mem) == list(disk) and mem[13] == disk[13] == list(disk)[13]
    assert [f.dbs for f in disk][7:9] == [("b",), ("c", "d")]  # the second part's sets, remapped
    assert mem.first_ts == disk.first_ts == 10**15 + 1 and disk.last_ts == 10**15 + 20
    assert [off for off, _ in disk.chunks()] == [0, 7, 12]
    disk.close()


_facts = st.builds(
    lambda fi, seq, clocks, ts, rows, nb, dbs, cid, flags, more: TrxFacts(fi, seq, clocks, ts, *rows, nb, dbs, cid, flags,
                                                                          *more),
    st.integers(0, 3), st.integers(1, 10**6), st.tuples(*[st.integers(0, 10**6)] * 4), st.integers(0, 2**62),
    st.tuples(*[st.integers(0, 10**4)] * 3), st.integers(0, 2**40), st.sampled_from([(), ("a",), ("a", "b")]),
    st.one_of(st.none(), st.integers(0, 2**64 - 1)), st.integers(0, 255), st.tuples(*[st.integers(0, 10**5)] * 3))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_facts, min_size=1, max_size=12), min_size=1, max_size=4))
def test_reference_facts_as_columns_read_back_whole_spilled_or_not(parts):
    """The reference's facts (MariaDB's commit ids over the whole u64 range, or none, and its
    GTID flags) go into a store as columns and come back the same, in memory and spilled, one by
    one and as the whole run's columns (issue 33 session 10: a MariaDB run used to be held as a list)."""
    from lagadvisor.sim.facts import FactColumns
    from lagadvisor.sim.store import FactStore

    want = [f for p in parts for f in p]
    mem, disk = FactStore(limit=10**6), FactStore(limit=5)
    for p in parts:
        mem.add(FactColumns.of_facts(p))
        disk.add(FactColumns.of_facts(p))
    assert list(mem) == list(disk) == want
    assert [disk[i] for i in range(len(want))] == want
    if not disk.spilled:
        assert disk.columns.build() == want
    assert mem.columns.build() == want
    disk.close()


def test_a_mariadb_run_too_long_for_memory_spills_and_simulates_the_same(tmp_path, monkeypatch):
    """A MariaDB binlog is read by the reference (the native core gives it back): its facts go
    to a store like the native core's and spill past the limit, and simulate and advise say the
    same, byte for byte, spilled or not, in the MariaDB modes."""
    import subprocess
    import sys

    from conftest import FIXTURES
    from lagadvisor.depgraph.pipeline import ClockOptions
    from lagadvisor.depgraph.read import prepare
    from lagadvisor.sim.facts import read_facts, reference_facts
    from lagadvisor.sim.store import FactStore

    f = str(FIXTURES / "mariadb_concurrent" / "mariadb-bin.000001")
    monkeypatch.setenv("LAGADVISOR_SPILL_TRANSACTIONS", "300")
    monkeypatch.setenv("LAGADVISOR_CACHE_DIR", str(tmp_path))
    got = read_facts([f], ClockOptions(), prepare([f], ClockOptions())).facts
    assert isinstance(got, FactStore) and got.spilled and len(got) > 1000
    want = reference_facts([f], prepare([f], ClockOptions()))
    assert list(got) == want and any(x.commit_id is not None for x in want) and any(x.mariadb_flags for x in want)
    got.close()
    monkeypatch.delenv("LAGADVISOR_SPILL_TRANSACTIONS")
    runs = [["simulate", f, "--format", "json", "--workers", "8"],
            ["simulate", f, "--format", "json", "--mode", "mariadb_conservative"],
            ["simulate", f, "--format", "json", "--mode", "mariadb_aggressive", "--catch-up"],
            ["advise", f, "--format", "json"]]
    for args in runs:
        outs = []
        for spill in ("", "300"):
            env = dict(os.environ, LAGADVISOR_SPILL_TRANSACTIONS=spill, LAGADVISOR_CACHE_DIR=str(tmp_path))
            r = subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True, env=env,
                               timeout=300)
            assert r.returncode == 0, r.stderr
            outs.append(r.stdout)
        assert outs[0] == outs[1], args


@skip_without_native()
@pytest.mark.parametrize("mode", ["database", "mariadb_conservative", "mariadb_optimistic", "mariadb_aggressive"])
def test_the_other_modes_stream_their_input_chunk_by_chunk(mode, tmp_path, monkeypatch):
    """The DATABASE and MariaDB modes' input, built chunk by chunk from a spilled store of a real
    binlog's facts (the rows carried from chunk to chunk: the last group, the databases' last
    transactions, the commit ids in flight), is the whole run's, column for column: a MariaDB
    binlog's (read by the reference), and for DATABASE a MySQL one's on four databases (read
    natively)."""
    from conftest import FIXTURES
    from lagadvisor.depgraph.pipeline import ClockOptions
    from lagadvisor.depgraph.read import prepare
    from lagadvisor.kinds import ReplicaMode
    from lagadvisor.sim.build import scheduler_input
    from lagadvisor.sim.facts import read_facts

    files = [str(FIXTURES / "mariadb_concurrent" / "mariadb-bin.000001")]
    if mode == "database":   # five files: the native core hands their facts over one file at a time
        files = [str(p) for p in sorted((FIXTURES / "single_rotation").iterdir()) if p.suffix[1:].isdigit()]
    monkeypatch.setenv("LAGADVISOR_SPILL_TRANSACTIONS", "300")
    monkeypatch.setenv("LAGADVISOR_CACHE_DIR", str(tmp_path))
    facts = read_facts(files, ClockOptions(), prepare(files, ClockOptions())).facts
    assert facts.spilled
    cost, m = CostModel(), ReplicaMode(mode)
    whole = scheduler_input(m, list(facts), "recorded", cost, 4, catch_up=False)
    parts = list(stream._mode_chunk_inputs(facts, m, cost, 4, False))
    assert len(parts) >= 5
    for k, (name, typ) in enumerate([("arrival_us", "d"), ("work_us", "d"), ("nbytes", "q"), ("need", "q"),
                                      ("need_kind", "b")]):
        got = array(typ)
        for p in parts:
            got.frombytes(p[k])
        assert got == getattr(whole, name), name
    assert any(n != i - 1 for i, n in enumerate(whole.need))   # not a chain: the carried state matters
    if mode != "database":
        assert any(w != c.apply_of(x) for w, x, c in zip(whole.work_us, facts, [cost] * len(whole))) == (
            mode != "mariadb_conservative")   # the speculative modes' retries
    facts.close()


def _chart_by_sorting(commit, arrival):
    pairs = sorted(zip(commit, (c - a for c, a in zip(commit, arrival))))
    step = max(1, len(pairs) // 200)
    return [[round(c / 1e6, 6), round(lag / 1e6, 6)] for c, lag in pairs[::step]]


@pytest.mark.parametrize("seed", range(40))
def test_chart_points_are_the_sorted_pairs_every_200th(seed):
    # commits in order with ties (a group commits at one time) or out of order: the same points
    # as sorting every (commit, lag) pair
    rnd = random.Random(seed)
    n = rnd.choice([0, 1, 7, 199, 200, 201, 999, 4000])
    commit = sorted(rnd.choice([rnd.random() * 1e6, rnd.randint(0, 40) * 1000.0]) for _ in range(n))
    if seed % 3 == 0 and n > 2:
        commit[n // 2], commit[n // 3] = commit[n // 3], commit[n // 2]
    arrival = [c - rnd.random() * 1000 for c in commit]
    assert stream.chart_points(array("d", commit), array("d", arrival)) == _chart_by_sorting(commit, arrival)


@needs_native
@pytest.mark.parametrize("durable", [True, False])
def test_stream_scales_work_and_adds_the_durable_bytes_as_simulate_does(durable):
    """``StreamSim``'s ``work_scale``, ``work_byte`` and apply ``spread`` (sim.rs ``feed``, by
    each transaction's global index across the chunks) give the floats of ``simulate``, which
    spreads them in Python (``engine.spread_across_workers``)."""
    from dataclasses import replace

    from lagadvisor.sim.engine import simulate

    inp = _input(random.Random(3), 1500)
    cost = CostModel(multi_worker_cpu=1.3, multi_worker_us=27.5, durable_byte_us=0.031, concurrency_cpu=0.02, cores=4)
    cfg = ReplicaConfig(6, True, durable)
    whole = simulate(inp, cfg, cost)
    f, b, m = cost.worker_cpu(cfg.workers), cost.work_byte_us(durable), cost.worker_add_us(cfg.workers)
    assert b == (0.031 if durable else 0.0) and m == 27.5
    assert len(cost.spread_factors()) == 64
    s = _native.StreamSim(cfg, replace(cost, commit_us=cost.commit_us * f), f, b, m, 0.0, 10**9, 1e6, 0, 0,
                          list(cost.spread_factors()))
    for lo in range(0, len(inp), 400):
        sl = slice(lo, lo + 400)
        s.feed(inp.arrival_us[sl].tobytes(), inp.work_us[sl].tobytes(), inp.nbytes[sl].tobytes(),
               inp.need[sl].tobytes(), inp.need_kind[sl].tobytes(), inp.events[sl].tobytes(), False)
    apply_us, *_, exact, _, _ = s.finish()
    assert apply_us == whole.apply_us and exact[0] == whole.commit_us.tobytes()
    if durable:
        assert apply_us > simulate(inp, cfg, replace(cost, durable_byte_us=0.0)).apply_us
    assert apply_us > simulate(inp, cfg, replace(cost, multi_worker_us=0.0)).apply_us
    assert apply_us != simulate(inp, cfg, replace(cost, apply_spread=0.0)).apply_us
    with pytest.raises(ValueError, match="not 64"):
        _native.StreamSim(cfg, cost, f, b, m, 0.0, 10**9, 1e6, 0, 0, [1.0, 1.0])
