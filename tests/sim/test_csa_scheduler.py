"""The Change Stream Applier's scheduling rule as the MySQL source states it (mysql/mysql-server
commit 312d9ed; sim/engine.py's docstring), each part shown on a constructed clock, in both
engines (the Python reference and native/src/sim.rs, to the bit):

- the in-flight limit: ``Csa_service::run`` (sql/changestreams/apply/service/csa_service.cpp)
  calls ``Scheduler::ensure_space`` before each enqueue, so at most ``min(4 * workers, 2048)``
  transactions are enqueued and not complete;
- the barrier rule: ``Dependency_adapter_lwm::solve``
  (sql/changestreams/apply/scheduler/dependency_adapter_lwm.h): ``last_committed`` 0 or a break
  in ``sequence_number`` sets the barrier to the transaction's own task id, so it and every
  later transaction whose ``last_committed`` points before it wait for all earlier ones;
- the low-water rule: a transaction starts once the LWM of transactions completed in order
  (``Clock_lwm_registry``) reaches its delay, its ``last_committed``'s task id plus one; the
  ready ones go to the pool in (delay, id) order (``Scheduler::run_main_thread``), so one that
  waits does not hold back those behind it.

Each test fails on the manual-only model this replaced (a coordinator that handed transactions
out in relay-log order, blocked on the head, with no in-flight limit). The mid-file barrier
tests on the builder's input (sim/build.py ``logical_clock`` and sim.rs ``sim_clock_needs``) fail
on its earlier floor, the first transaction of the binlog file where the source's is the last
barrier.
"""

from __future__ import annotations

import os
from array import array
from collections import Counter
from dataclasses import replace

import pytest

from lagadvisor.kinds import Applier
from lagadvisor.sim.build import TrxFacts, logical_clock
from lagadvisor.sim.engine import SimInput, SimTrx, csa_in_flight_limit, simulate_native, simulate_python
from lagadvisor.sim.model import CostModel, ReplicaConfig

try:
    from lagadvisor import _native
except ImportError:  # pragma: no cover - depends on the build
    _native = None

# Everything but the apply and the commit stage free: the schedule alone decides the times.
COST = CostModel(dispatch_us=1.0, dispatch_event_us=0.0, dispatch_byte_us=0.0, commit_us=1.0, commit_group_us=0.0,
                 flush_us=0.0, fsync_byte_us=0.0, redo_flush_us=0.0, handoff_us=0.0, wakeup_us=0.0,
                 concurrency_cpu=0.0, oversubscribed_cpu=0.0, cores=64, fsync_cpu=0.0)


def engines():
    yield "python"
    yield "native"


def run(engine: str, inp: SimInput, cfg: ReplicaConfig, cost: CostModel = COST):
    if engine == "python":
        return simulate_python(inp, cfg, cost)
    if _native is None or not hasattr(_native, "sim_run"):
        msg = "lagadvisor._native is not built"
        if os.environ.get("LAGADVISOR_REQUIRE_NATIVE") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return simulate_native(inp, cfg, cost)


def solve(clock: list[tuple[int, int]]) -> list[int]:
    """``Dependency_adapter_lwm::solve`` over ``(sequence_number, last_committed)`` pairs in
    relay-log order (task ids 0, 1, ...): each transaction's delay (the LWM it needs) less one,
    the engine's PREFIX ``need``. The dense mapping and the hash map of the source resolve a
    ``last_committed`` to the task of that sequence number since the last barrier; one not found
    falls back to the barrier."""
    needs, barrier, prev_seq, seen = [], 0, 0, {}
    for task, (seq, lc) in enumerate(clock):
        contiguous = prev_seq + 1 == seq
        delay = barrier
        if lc > 0 and contiguous:
            if lc in seen and seen[lc] + 1 > barrier:
                delay = seen[lc] + 1
        elif lc == 0 or seq <= prev_seq or prev_seq + 1 < seq or seq <= 0:
            seen.clear()
            barrier = delay = task
        seen[seq] = task
        prev_seq = seq
        needs.append(delay - 1)
    return needs


def constructed(clock: list[tuple[int, int]], work: list[float]) -> SimInput:
    return SimInput.of(SimTrx(0.0, w, 100, nd, events=1) for w, nd in zip(work, solve(clock)))


def csa(workers: int, preserve: bool = False, durable: bool = False) -> ReplicaConfig:
    return ReplicaConfig(workers, preserve, durable, applier=Applier.CSA)


def test_solve_reads_the_source_example():
    """The worked example in dependency_adapter_lwm.h's comment (delays 0 1 1 2 4 4, then a new
    group: 6 7), as needs."""
    clock = [(1, 0), (2, 1), (3, 1), (4, 2), (5, 0), (6, 3), (1, 0), (2, 1)]
    assert solve(clock) == [d - 1 for d in (0, 1, 1, 2, 4, 4, 6, 7)]


@pytest.mark.parametrize("engine", list(engines()))
@pytest.mark.parametrize("workers", [1, 2, 4])
def test_at_most_four_per_worker_in_flight(engine, workers):
    """Every transaction independent, the apply short (10 us) and the binlog fsync long (1 ms,
    durable), commit order preserved: each worker is free once it has applied, so only the
    in-flight limit keeps the reader from enqueueing all 200 at once. A transaction is in flight
    until it commits, so no commit group can hold more than 4 x workers of them; and the limit
    binds: while one group is in its fsync the next gathers 4 x workers - 1, and catch-up takes at
    least one fsync per 4 x workers transactions. (The manual-only model had no limit: one group
    took 91, 181 and 199 of the 200 at 1, 2 and 4 workers.)"""
    n, limit = 200, csa_in_flight_limit(workers)
    assert limit == 4 * workers
    inp = SimInput.of(SimTrx(0.0, 10.0, 100, -1, events=1) for _ in range(n))
    res = run(engine, inp, csa(workers, preserve=True, durable=True), replace(COST, flush_us=1000.0))
    groups = Counter(res.commit_us)
    # one group in its fsync is in flight while the next gathers: groups of 1 and limit - 1
    assert limit - 1 <= max(groups.values()) <= limit, sorted(groups.values())
    assert res.flushes >= n / limit
    assert res.apply_us >= n / limit * 1000.0
    assert list(res.commit_us) == sorted(res.commit_us)   # commit order kept


def test_the_limit_is_capped_at_the_session_cache():
    """``std::min(tune::scheduler_max_task_number_factor * n_workers,
    tune::csa_session_default_cache_size)``: 4 x workers, at most 2,048."""
    assert [csa_in_flight_limit(w) for w in (1, 4, 512, 513, 1024)] == [4, 16, 2048, 2048, 2048]


# T0 opens the group; T1 is long and T2 waits for it; T3 waits for T0 only; T4 is the
# transaction under test and T5 points back at T0, before T4.
def _barrier_clock(kind: str) -> list[tuple[int, int]]:
    head = [(1, 0), (2, 1), (3, 2), (4, 1)]
    if kind == "none":
        return head + [(5, 1), (6, 1)]
    if kind == "last_committed_0":
        return head + [(5, 0), (6, 1)]
    return head + [(7, 1), (8, 1)]   # "sequence_break": 5 and 6 missing


@pytest.mark.parametrize("engine", list(engines()))
@pytest.mark.parametrize("kind", ["last_committed_0", "sequence_break"])
def test_a_barrier_waits_for_every_earlier_transaction(engine, kind):
    """4 workers, commit order not preserved (a commit time follows its own start). Without a
    barrier T3, T4 and T5 depend on T0 alone and commit long before T1 (1 ms) does, T2 waiting
    for T1 behind them. With ``last_committed`` 0 at T4, or a break in ``sequence_number`` at T4,
    T4 waits for all of T0-T3 to complete, and so does T5, whose ``last_committed`` points before
    the barrier; T3, before the barrier, still does not wait. (The manual-only model handed out in
    relay-log order: T3 waited behind T2 for T1.)"""
    work = [1.0, 1000.0, 10.0, 10.0, 10.0, 10.0]
    free = run(engine, constructed(_barrier_clock("none"), work), csa(4))
    c = free.commit_us
    assert solve(_barrier_clock("none")) == [-1, 0, 1, 0, 0, 0]
    assert max(c[3], c[4], c[5]) < c[1] < c[2]
    assert solve(_barrier_clock(kind)) == [-1, 0, 1, 0, 3, 3]
    res = run(engine, constructed(_barrier_clock(kind), work), csa(4))
    c = res.commit_us
    assert c[3] < c[1]
    assert min(c[4], c[5]) > max(c[0], c[1], c[2], c[3])


@pytest.mark.parametrize("engine", list(engines()))
def test_a_transaction_waits_for_the_low_water_mark_not_its_parent(engine):
    """T2 depends on T0 only and completes long before T1 (1 ms): out of order. T3's
    ``last_committed`` is T2's sequence number, so its delay is T2's task id plus one: the LWM of
    transactions completed in order must pass T2, and T1 holds it: T3 waits for T1 though its
    parent is done. T4 depends on T0 only and starts at once, behind the waiting T3. (The
    manual-only model held T4 behind T3.)"""
    clock = [(1, 0), (2, 1), (3, 1), (4, 3), (5, 1)]
    assert solve(clock) == [-1, 0, 0, 2, 0]
    res = run(engine, constructed(clock, [1.0, 1000.0, 10.0, 10.0, 10.0]), csa(4))
    c = res.commit_us
    assert c[2] < c[1]          # completed out of order
    assert c[3] > c[1]          # waits for the low-water mark, not only for T2
    assert c[4] < c[1]          # not held back by T3


@pytest.mark.parametrize("workers", [1, 3, 8])
@pytest.mark.parametrize("preserve", [True, False])
def test_engines_agree_on_the_constructed_clocks(workers, preserve):
    """Both engines, to the bit, on the constructed clocks, with wake-ups and a durable commit
    pipeline priced (the scheduler's hand-out after a commit, ``wakeup_us`` later)."""
    if _native is None or not hasattr(_native, "sim_run"):
        if os.environ.get("LAGADVISOR_REQUIRE_NATIVE") == "1":
            pytest.fail("lagadvisor._native is not built")
        pytest.skip("lagadvisor._native is not built")
    cost = replace(CostModel(), wakeup_us=40.0, handoff_us=9.0, cores=2)
    clocks = [_barrier_clock(k) for k in ("none", "last_committed_0", "sequence_break")]
    clocks.append([(s, max(0, s - 1 - (s * 7) % 5)) for s in range(1, 300)])
    for clock in clocks:
        work = [10.0 + (37 * i) % 400 for i in range(len(clock))]
        inp = constructed(clock, work)
        for durable in (True, False):
            cfg = csa(workers, preserve, durable)
            a, b = simulate_python(inp, cfg, cost), simulate_native(inp, cfg, cost)
            assert (a.apply_us, list(a.commit_us), a.busy_us, a.worker_wait_us, a.flushes, a.commit_groups,
                    a.switches) == (b.apply_us, list(b.commit_us), b.busy_us, b.worker_wait_us, b.flushes,
                                    b.commit_groups, b.switches)


def _facts(clock: list[tuple[int, int]]) -> list[TrxFacts]:
    """One binlog file of ``(sequence_number, last_committed)``, the same on every clock."""
    return [TrxFacts(0, seq, (lc, lc, lc, lc), 0, 0, 0, 0, 0, (), None, events=1) for seq, lc in clock]


def built(clock: list[tuple[int, int]], work: list[float]) -> SimInput:
    """sim/build.py ``logical_clock``'s input for the clock, each transaction's apply ``work``
    us: the Python loop and native/src/sim.rs ``sim_clock_needs`` (which the builder uses on fact
    columns) give the same needs."""
    inp = replace(logical_clock(_facts(clock), "recorded", COST, catch_up=True), work_us=array("d", work))
    if _native is None or not hasattr(_native, "sim_clock_needs"):
        if os.environ.get("LAGADVISOR_REQUIRE_NATIVE") == "1":
            pytest.fail("lagadvisor._native is not built")
        return inp
    cols = ([0] * len(clock), [s for s, _ in clock], [lc for _, lc in clock])
    native = array("q")
    native.frombytes(_native.sim_clock_needs(*(array("q", c).tobytes() for c in cols))[0])
    assert native == inp.need
    return inp


# A barrier mid-file at T4 (last_committed 0, or sequence numbers 5 and 6 missing), T5 pointing
# back at T0, before it; T6 and T7 point at T5 and at T4, after it.
def _mid_file_clock(kind: str) -> list[tuple[int, int]]:
    head = [(1, 0), (2, 1), (3, 2), (4, 1)]
    if kind == "last_committed_0":
        return head + [(5, 0), (6, 1), (7, 6), (8, 5)]
    return head + [(7, 1), (8, 1), (9, 8), (10, 7)]   # "sequence_gap"


@pytest.mark.parametrize("kind", ["last_committed_0", "sequence_gap"])
def test_the_builder_floors_a_need_at_the_last_barrier(kind):
    """``solve`` sets ``id_after_barrier`` at a barrier inside a file, and a later
    ``last_committed`` that points before it is not found: its delay is the barrier's. The builder
    (both loops) gives T5 T4's floor, 3, as ``solve`` does; it floored at the file's first
    transaction (T5 needed T0, and across the gap T5's arithmetic fell before T0)."""
    clock = _mid_file_clock(kind)
    assert solve(clock) == [-1, 0, 1, 0, 3, 3, 5, 4]
    assert list(built(clock, [1.0] * len(clock)).need) == solve(clock)


@pytest.mark.parametrize("engine", list(engines()))
@pytest.mark.parametrize("kind", ["last_committed_0", "sequence_gap"])
def test_a_transaction_after_a_mid_file_barrier_waits_for_it(engine, kind):
    """As ``test_a_barrier_waits_for_every_earlier_transaction``, from the builder's input: T1 is
    long (1 ms); T5's ``last_committed`` names T0, before the barrier T4, so T5 starts only once
    T0-T3 are complete, after T1, as T4 does; T3, before the barrier, still does not wait. Both
    engines give the same times."""
    clock = _mid_file_clock(kind)
    inp = built(clock, [1.0, 1000.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0])
    res = run(engine, inp, csa(4))
    c = res.commit_us
    assert c[3] < c[1]
    assert min(c[4], c[5]) > max(c[0], c[1], c[2], c[3])
    if engine == "native":
        py = simulate_python(inp, csa(4), COST)
        assert (list(c), res.apply_us, res.busy_us) == (list(py.commit_us), py.apply_us, py.busy_us)


def test_last_committed_not_below_its_own_sequence_number():
    """T4's ``last_committed`` is its own sequence number. The MTA makes it a new group
    (rpl_mta_submode.cc ``schedule_next_event``: ER_RPL_INCONSISTENT_TIMESTAMPS_IN_TRX, its clock
    ``SEQ_UNINIT``); ``solve`` finds no such parent and gives it the last barrier's delay, without
    setting a barrier. The builder's need serves both appliers: T4 waits for every transaction
    before it (the MTA's rule, where the CSA would start it at once), and the floor of those after
    it stays at the last barrier (the CSA's): T5, pointing at T0, needs T0 only, as in ``solve``."""
    clock = [(1, 0), (2, 1), (3, 2), (4, 1), (5, 5), (6, 1)]
    assert solve(clock) == [-1, 0, 1, 0, -1, 0]
    assert list(built(clock, [1.0] * len(clock)).need) == [-1, 0, 1, 0, 3, 0]
