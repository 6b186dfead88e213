"""The applier simulation on small, hand-checked inputs, and its determinism."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
import subprocess
import sys

import pytest

from conftest import FIXTURES
from lagadvisor.sim.build import TrxFacts, logical_clock
from lagadvisor.sim.engine import PREFIX, SimTrx, simulate
from lagadvisor.sim.model import CostModel, ReplicaConfig

# Every cost the engine reads, neutral (the built-in defaults are measured numbers): each test
# sets what it exercises.
NEUTRAL = dict(trx_us=0.0, insert_us=0.0, update_us=0.0, delete_us=0.0, byte_us=0.0, event_us=0.0, dispatch_us=0.0,
               dispatch_event_us=0.0, dispatch_byte_us=0.0, commit_us=0.0, flush_us=0.0, redo_flush_us=0.0, handoff_us=0.0,
               multi_worker_cpu=1.0, multi_worker_us=0.0, concurrency_cpu=0.0, oversubscribed_cpu=0.0, wakeup_us=0.0,
               durable_byte_us=0.0, fsync_byte_us=0.0, switch_us=0.0, cores=2, fsync_devices=1, fsync_cpu=0.44, apply_spread=0.0)


def _cost(**kw) -> CostModel:
    return CostModel(**{**NEUTRAL, **kw})


COST = _cost(trx_us=100, insert_us=0, update_us=0, delete_us=0, byte_us=0, dispatch_us=0,
                 commit_us=0, flush_us=50, cores=64)


def _trx(n, need=lambda i: -1, work=100.0):
    return [SimTrx(0.0, work, 10, need(i), PREFIX) for i in range(n)]


def test_independent_transactions_scale_with_workers_until_cores():
    trxs = _trx(64)
    def relaxed(w: int, cores: int = 64) -> float:
        cost = _cost(trx_us=100, insert_us=0, update_us=0, delete_us=0, byte_us=0, dispatch_us=0,
                         commit_us=0, flush_us=50, cores=cores)
        return simulate(trxs, ReplicaConfig(w, durable=False), cost).apply_us

    assert relaxed(1) == 64 * 100
    assert relaxed(4) == 16 * 100
    # Workers beyond the cores add nothing. The coordinator busy-waiting for a free worker
    # yields its core to the threads that share it: 9 runnable threads on 2 cores are never
    # placed with the coordinator alone, so the workers get both cores; on one core, all of it.
    assert relaxed(8, cores=2) == 32 * 100
    assert relaxed(1, cores=1) == 64 * 100
    # 2 workers and the coordinator on 2 cores: alone on a core in 1 of 3 placements, it holds
    # 1/3 of a core while the two workers run (5/6 of a core each), until the last transaction.
    assert relaxed(2, cores=2) == pytest.approx(31 * 120 + 100)


def test_apply_spread_factors_have_mean_one_and_the_sigma_asked():
    """CostModel.spread_factors: 64 lognormal factors at the middle quantiles, mean exactly 1;
    their 10th-90th percentile width is the sigma's (2 * 1.2816 sigma); none for a spread of 0."""
    from lagadvisor.sim.model import SPREAD_SLOTS

    t = CostModel(apply_spread=0.3).spread_factors()
    assert len(t) == SPREAD_SLOTS and list(t) == sorted(t)
    assert math.fsum(t) / SPREAD_SLOTS == pytest.approx(1.0, abs=1e-12)
    assert math.log(t[57] / t[6]) / (2 * 1.2816) == pytest.approx(0.3, rel=0.03)
    assert CostModel(apply_spread=0.0).spread_factors() == ()


def test_spread_slots_draw_every_factor_evenly_whatever_the_order():
    """engine.spread_slot: the top six bits of SplitMix64 of the index (sim.rs draws the same:
    tests/sim/test_stream.py feeds it in chunks); over 6,400 transactions every slot 100 +- 40
    times, and neighbours do not follow each other (a chain's links draw independently)."""
    from collections import Counter

    from lagadvisor.sim.engine import spread_slot, spread_slots

    slots = spread_slots(6400)
    assert slots == bytes(spread_slot(i) for i in range(6400))
    counts = Counter(slots)
    assert len(counts) == 64 and 60 <= min(counts.values()) and max(counts.values()) <= 140
    assert sum(slots[i] == slots[i + 1] for i in range(6399)) < 6400 * 3 / 64


def test_apply_spread_slows_worker_bound_commit_order_but_not_one_worker():
    """Transactions of one cost on enough cores, commit order preserved and a serial commit
    stage: with every transaction exactly its mean, 4 workers pipeline perfectly; with a spread,
    a worker waits for the slower transactions before it (the lab's uniform backlog at 4
    workers, docs/accuracy.md). One worker only adds the factors up: the same total within the
    64 slots' sampling."""
    trxs = _trx(2000, work=200.0)
    def run(w: int, spread: float) -> float:
        cost = _cost(commit_us=40.0, handoff_us=10.0, cores=16, apply_spread=spread)
        return simulate(trxs, ReplicaConfig(w, durable=False), cost).apply_us

    assert run(1, 0.3) == pytest.approx(run(1, 0.0), rel=0.02)
    assert run(4, 0.3) > 1.05 * run(4, 0.0)
    # each worker holds its transaction through the commit stage: (200 + 40) / 4 a transaction
    assert run(4, 0.0) == pytest.approx(2000 * 240 / 4, rel=0.01)


def test_the_coordinator_reads_and_the_workers_apply_per_event():
    """A transaction's events (``SimTrx.events``, ``TrxFacts.events``): the coordinator reads each
    (``dispatch_event_us``, serial: a coordinator-bound catch-up of 35-event transactions takes the
    reads' time whatever the workers) and a worker applies each (``event_us``, in the work)."""
    read = _cost(dispatch_us=10.0, dispatch_event_us=2.0, cores=64)
    few = [SimTrx(0.0, 20.0, 100, -1, PREFIX, 5) for _ in range(200)]
    many = [SimTrx(0.0, 20.0, 100, -1, PREFIX, 35) for _ in range(200)]
    cfg = ReplicaConfig(16, True, False)
    assert simulate(few, cfg, read).apply_us == pytest.approx(200 * (10.0 + 2.0 * 5), rel=0.02)
    assert simulate(many, cfg, read).apply_us == pytest.approx(200 * (10.0 + 2.0 * 35), rel=0.02)
    assert simulate(many, cfg, _cost(cores=64)).apply_us < 0.1 * simulate(many, cfg, read).apply_us
    apply = _cost(trx_us=5.0, event_us=3.0)
    facts = TrxFacts(0, 1, (0,) * 4, 0, 1, 1, 0, 200, ("d",), None, events=35)
    assert apply.apply_of(facts) == 5.0 + 3.0 * 35
    assert apply.apply_us(1, 1, 0, 200, events=5) == 5.0 + 3.0 * 5


def test_serial_chain_gets_no_speedup():
    trxs = _trx(20, need=lambda i: i - 1)
    one = simulate(trxs, ReplicaConfig(1, durable=False), COST).apply_us
    eight = simulate(trxs, ReplicaConfig(8, durable=False), COST).apply_us
    assert one == eight == 2000


def test_group_commit_shares_flushes():
    trxs = _trx(8)
    one = simulate(trxs, ReplicaConfig(1, durable=True), COST)
    eight = simulate(trxs, ReplicaConfig(8, durable=True), COST)
    assert one.flushes == 8 and one.apply_us == 8 * 150
    # The first to arrive leads a group of one; everyone queued behind it shares the next flush.
    assert eight.flushes == 2 and eight.apply_us == 200


def test_the_commit_stage_pays_its_group_cost_once_per_group():
    """commit_group_us: the commit stage's leader pays it once for the members queued behind it
    (sim.engine start_commit); one worker commits alone, so it pays it every time."""
    cost = _cost(trx_us=100, commit_us=10, commit_group_us=40, cores=64)
    trxs = _trx(8)
    one = simulate(trxs, ReplicaConfig(1, durable=False), cost)
    assert one.commit_groups == 8 and one.apply_us == 8 * (100 + 40 + 10)
    eight = simulate(trxs, ReplicaConfig(8, durable=False), cost)
    # all eight apply at once; the first commits alone, the other seven queue behind it
    assert eight.commit_groups == 2 and eight.apply_us == 100 + (40 + 10) + (40 + 7 * 10)
    single = simulate(trxs, ReplicaConfig(0, durable=False), cost)
    assert single.commit_groups == 8 and single.apply_us == one.apply_us


def test_commit_costs_scale_together_and_a_transaction_alone_pays_both():
    cost = _cost(commit_us=10, commit_group_us=40)
    assert cost.commit_alone_us() == 50
    scaled = cost.commit_scaled(1.5)
    assert (scaled.commit_us, scaled.commit_group_us) == (15, 60) and cost.commit_scaled(1.0) is cost
    assert CostModel.from_dict({"commit_group_us": 52}).commit_group_us == 52.0
    assert CostModel().commit_group_us == 0.0   # the built-in fit could not tell it apart (docs/accuracy.md)


def test_coordinator_read_overlaps_the_apply():
    # A serial chain with one worker, on 64 cores: the worker applies each transaction's events as
    # the coordinator reads them (dispatch_us + dispatch_byte_us per byte), so each takes the
    # longer of its read and its apply: the apply (100 us) while the read is shorter, the read once
    # it is longer. The single-threaded applier reads, then applies: their sum.
    trxs = [SimTrx(0.0, 100.0, 1000 * (i + 1), i - 1) for i in range(4)]
    cost = _cost(trx_us=0, insert_us=0, update_us=0, delete_us=0, dispatch_us=5.0,
                 dispatch_byte_us=0.01, commit_us=0, flush_us=0, cores=64)
    assert simulate(trxs, ReplicaConfig(1, durable=False), cost).apply_us == 4 * 100.0
    slow = replace(cost, dispatch_byte_us=0.05)   # reads of 55, 105, 155, 205 us
    assert simulate(trxs, ReplicaConfig(1, durable=False), slow).apply_us == 100.0 + 105.0 + 155.0 + 205.0
    single = simulate(trxs, ReplicaConfig(0, durable=False), cost)
    assert single.apply_us == sum(5.0 + 0.01 * 1000 * (i + 1) + 100.0 for i in range(4))


def test_multi_worker_cpu_applies_from_two_workers():
    trxs = _trx(8)
    cost = _cost(trx_us=0, insert_us=0, update_us=0, delete_us=0, dispatch_us=0, commit_us=20.0,
                     flush_us=0, cores=64)
    colder = CostModel(**{**{f: getattr(cost, f) for f in cost.__slots__}, "multi_worker_cpu": 1.5})
    one, one_c = (simulate(trxs, ReplicaConfig(1, durable=False), c).apply_us for c in (cost, colder))
    assert one == one_c == 8 * 120
    # Eight workers on 64 cores: all apply at once (100 us, 150 us colder), then the serial
    # commit stage takes each transaction in turn (20 us, 30 us colder).
    eight, eight_c = (simulate(trxs, ReplicaConfig(8, durable=False), c).apply_us for c in (cost, colder))
    assert eight == 100 + 8 * 20
    assert eight_c == 150 + 8 * 30
    # On one core the threads share one core's caches: no factor (eight workers, one core: the
    # same serial 8 x 120 as one worker)
    one_core = CostModel(**{**{f: getattr(colder, f) for f in colder.__slots__}, "cores": 1})
    assert one_core.worker_cpu(8) == 1.0 and colder.worker_cpu(8) == 1.5 and colder.worker_cpu(1) == 1.0
    assert simulate(trxs, ReplicaConfig(8, durable=False), one_core).apply_us == 8 * 120


def test_multi_worker_us_adds_to_each_transaction_from_two_workers_on_two_cores():
    """``multi_worker_us`` is a cost per transaction (not in proportion to its work): added to
    each transaction's apply with two or more workers on two or more cores, never with one worker
    or one core, and before nothing else (the commit stage keeps its cost)."""
    trxs = _trx(8)
    cost = _cost(commit_us=20.0, cores=64, multi_worker_us=30.0)
    assert cost.worker_add_us(1) == 0.0 and cost.worker_add_us(2) == 30.0
    assert simulate(trxs, ReplicaConfig(1, durable=False), cost).apply_us == 8 * 120
    # eight workers apply at once (100 + 30 us), then the serial commit stage takes each in turn
    assert simulate(trxs, ReplicaConfig(8, durable=False), cost).apply_us == 130 + 8 * 20
    # two workers: the same as transactions of 130 us without the term
    two = simulate(trxs, ReplicaConfig(2, durable=False), cost).apply_us
    assert two == simulate(_trx(8, work=130.0), ReplicaConfig(2, durable=False), _cost(commit_us=20.0, cores=64)).apply_us
    one_core = _cost(commit_us=20.0, cores=1, multi_worker_us=30.0)
    assert one_core.worker_add_us(8) == 0.0
    assert simulate(trxs, ReplicaConfig(8, durable=False), one_core).apply_us == 8 * 120


def test_switch_us_is_charged_to_a_transaction_on_another_worker_than_its_predecessors():
    """``switch_us`` is a cost per switch: added to the apply of a transaction the coordinator
    gives to another worker than its predecessor's, with two or more workers on two or more
    cores. The coordinator takes the lowest-numbered free worker (rpl_mta_submode.cc
    get_free_worker), so a chain, each waiting for the one before to commit, stays on worker 0
    and pays nothing."""
    trxs = _trx(8)
    cost = _cost(commit_us=20.0, cores=64, switch_us=30.0)
    assert cost.switch_add_us(1) == 0.0 and cost.switch_add_us(2) == 30.0 and cost.worker_add_us(2) == 0.0
    one = simulate(trxs, ReplicaConfig(1, durable=False), cost)
    assert (one.apply_us, one.switches) == (8 * 120, 0)
    # eight workers: the first on worker 0 (100 us, committed alone by 120), the seven others on
    # workers 1-7 at once (100 + 30 us), then committed as one group of seven (7 x 20 us)
    eight = simulate(trxs, ReplicaConfig(8, durable=False), cost)
    assert (eight.apply_us, eight.switches) == (130 + 7 * 20, 7)
    # two workers: worker 0 is free again (at 120) while worker 1 holds the second transaction,
    # so they alternate and every transaction after the first switches
    two = simulate(trxs, ReplicaConfig(2, durable=False), cost)
    assert two.switches == 7 and two.apply_us > simulate(trxs, ReplicaConfig(2, durable=False),
                                                          replace(cost, switch_us=0.0)).apply_us
    # a chain: each transaction dispatched once its predecessor committed, on worker 0 again
    chain = simulate(_trx(8, need=lambda i: i - 1), ReplicaConfig(4, durable=False), cost)
    assert (chain.apply_us, chain.switches) == (8 * 120, 0)
    one_core = _cost(commit_us=20.0, cores=1, switch_us=30.0)
    assert one_core.switch_add_us(8) == 0.0
    assert simulate(trxs, ReplicaConfig(8, durable=False), one_core).apply_us == 8 * 120


def test_redo_fsync_is_in_the_flush_stage_and_shared_by_its_group():
    # Durable, 64 cores, no dispatch cost: apply 100, then the flush stage (redo fsync 50 for
    # the group), the sync stage (binlog fsync 30 per group) and the commit stage (20 of CPU per
    # member), each a serial stage of its own (binlog.cc ordered_commit's three locks).
    cost = _cost(trx_us=0, insert_us=0, update_us=0, delete_us=0, dispatch_us=0, commit_us=20.0,
                     redo_flush_us=50.0, flush_us=30.0, cores=64, fsync_devices=2)
    one = simulate(_trx(2), ReplicaConfig(1, durable=True), cost)
    assert list(one.commit_us) == [200.0, 400.0]
    assert simulate(_trx(2), ReplicaConfig(0, durable=True), cost).apply_us == 400.0
    # Two workers: T1 finishes applying while T0's group is in its redo fsync, so it forms the
    # next group; its redo fsync (150-200) overlaps T0's binlog fsync (150-180, separate devices)
    # and T0's commit (180-200); then its binlog fsync 200-230 and its commit 230-250.
    two = simulate(_trx(2), ReplicaConfig(2, durable=True), cost)
    assert list(two.commit_us) == [200.0, 250.0] and two.flushes == 2
    # Four workers: T1-T3 share one group and so one redo fsync and one binlog fsync (150-230),
    # then the commit stage commits the three (230-290).
    four = simulate(_trx(4), ReplicaConfig(4, durable=True), cost)
    assert list(four.commit_us) == [200.0, 290.0, 290.0, 290.0] and four.flushes == 2
    # Relaxed: no fsync at all.
    assert simulate(_trx(2), ReplicaConfig(1, durable=False), cost).apply_us == 240.0


def test_each_fsync_also_takes_its_groups_bytes():
    # As above, with fsync_byte_us = 1 and 10 bytes a transaction: each fsync takes 1 us more per
    # byte of its group. One worker: apply 100, redo 50 + 10, binlog 30 + 10, commit CPU 20.
    cost = _cost(commit_us=20.0, redo_flush_us=50.0, flush_us=30.0, fsync_byte_us=1.0, cores=64, fsync_devices=2)
    assert list(simulate(_trx(2), ReplicaConfig(1, durable=True), cost).commit_us) == [220.0, 440.0]
    assert simulate(_trx(2), ReplicaConfig(0, durable=True), cost).apply_us == 440.0
    # Four workers: T1-T3 form one group of 30 bytes: redo 160-240, binlog 240-300, CPU 300-360.
    four = simulate(_trx(4), ReplicaConfig(4, durable=True), cost)
    assert list(four.commit_us) == [220.0, 360.0, 360.0, 360.0] and four.flushes == 2
    # Relaxed: no fsync, no byte cost.
    assert simulate(_trx(2), ReplicaConfig(1, durable=False), cost).apply_us == 240.0


def test_fsyncs_on_one_device_take_turns():
    # As above, but the redo log and the binlog share a device: T1's group redo fsync waits for
    # T0's binlog fsync (150-180), so it runs 180-230, then its binlog fsync 230-260 and its
    # commit 260-280 (T0's commit, 180-200, needs no device).
    cost = _cost(trx_us=0, insert_us=0, update_us=0, delete_us=0, dispatch_us=0, commit_us=20.0,
                     redo_flush_us=50.0, flush_us=30.0, cores=64, fsync_devices=1)
    assert list(simulate(_trx(2), ReplicaConfig(1, durable=True), cost).commit_us) == [200.0, 400.0]
    assert list(simulate(_trx(2), ReplicaConfig(2, durable=True), cost).commit_us) == [200.0, 280.0]
    four = simulate(_trx(4), ReplicaConfig(4, durable=True), cost)
    assert list(four.commit_us) == [200.0, 320.0, 320.0, 320.0] and four.flushes == 2


def test_fsync_cpu_takes_a_share_of_the_cores_while_an_fsync_runs():
    # The committing thread uses CPU while its fsync runs (InnoDB's wait loop): on 64 cores or
    # with one worker (nothing else wants the core) the commits are where they were; on one core
    # with four workers it slows the others' apply, by at most the CPU it adds.
    base = dict(trx_us=0, insert_us=0, update_us=0, delete_us=0, dispatch_us=0, commit_us=20.0,
                redo_flush_us=50.0, flush_us=30.0, fsync_devices=2)
    for cores, workers in ((64, 4), (1, 1)):
        off = simulate(_trx(8), ReplicaConfig(workers, durable=True), _cost(**base, cores=cores))
        on = simulate(_trx(8), ReplicaConfig(workers, durable=True), _cost(**base, cores=cores, fsync_cpu=0.5))
        assert list(on.commit_us) == list(off.commit_us), (cores, workers)
    off = simulate(_trx(8), ReplicaConfig(4, durable=True), _cost(**base, cores=1))
    on = simulate(_trx(8), ReplicaConfig(4, durable=True), _cost(**base, cores=1, fsync_cpu=0.5))
    assert on.apply_us > off.apply_us
    assert on.apply_us <= off.apply_us + 0.5 * (50.0 + 30.0) * on.flushes * 2
    # relaxed: no fsync, nothing changes
    assert simulate(_trx(8), ReplicaConfig(4, durable=False), _cost(**base, cores=1, fsync_cpu=0.5)).apply_us == \
        simulate(_trx(8), ReplicaConfig(4, durable=False), _cost(**base, cores=1)).apply_us


def test_preserve_commit_order_holds_later_commits():
    # T0 is long, T1 short: with preserve order T1 commits after T0.
    trxs = [SimTrx(0.0, 1000.0, 1, -1), SimTrx(0.0, 10.0, 1, -1)]
    on = simulate(trxs, ReplicaConfig(2, preserve_commit_order=True, durable=False), COST)
    off = simulate(trxs, ReplicaConfig(2, preserve_commit_order=False, durable=False), COST)
    assert on.commit_us[1] >= on.commit_us[0]
    assert off.commit_us[1] < off.commit_us[0]


def test_logical_clock_barriers_and_prefix():
    facts = [TrxFacts(0, s, (lc,) * 4, 0, 1, 0, 0, 10, ("d",), None)
             for s, lc in ((1, 0), (2, 1), (3, 1), (4, 1), (5, 0))]
    trxs = logical_clock(facts, "WRITESET", COST, catch_up=True)
    # seq 1 is a barrier; 2-4 wait for seq 1 (index 0); seq 5 has lc=0: a barrier again.
    assert [t.need for t in trxs] == [-1, 0, 0, 0, 3]
    facts2 = facts + [TrxFacts(1, 1, (0,) * 4, 0, 1, 0, 0, 10, ("d",), None),
                      TrxFacts(1, 2, (1,) * 4, 0, 1, 0, 0, 10, ("d",), None)]
    t2 = logical_clock(facts2, "WRITESET", COST, catch_up=True)
    assert t2[5].need == 4 and t2[6].need == 5  # new file: barrier; then prefix within the file


def test_lag_against_arrivals():
    trxs = [SimTrx(i * 1000.0, 100.0, 1, -1) for i in range(10)]
    res = simulate(trxs, ReplicaConfig(1, durable=False), COST)
    assert max(res.lags_us()) == 100.0  # the applier keeps up: lag = apply time


def test_simulate_is_deterministic_and_complete():
    files = [str(FIXTURES / "sysbench_oltp_write_only" / "binlog.000001")]
    cmd = [sys.executable, "-m", "lagadvisor", "simulate", "--workers", "1,2,4", "--format", "json", *files]
    a = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    b = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    doc = json.loads(a.stdout)
    rows = doc["results"]
    assert {r["policy"] for r in rows} == {"COMMIT_ORDER", "WRITESET", "WRITESET_SESSION"}
    for r in rows:
        for k in ("policy", "workers", "preserve_commit_order", "apply_seconds", "speedup",
                  "lag_p99_seconds", "lag_max_seconds", "utilisation"):
            assert k in r
    ws = {r["workers"]: r for r in rows if r["policy"] == "WRITESET"}
    co = {r["workers"]: r for r in rows if r["policy"] == "COMMIT_ORDER"}
    # more parallelism is not slower, up to the contention of the threads it runs at once
    assert ws[1]["speedup"] == 1.0 and ws[4]["speedup"] >= 0.99 * co[4]["speedup"]
    assert ws[4]["dependency_wait_seconds"] < co[4]["dependency_wait_seconds"]


def test_other_applier_modes_run_on_real_binlogs():
    maria_files = sorted(str(p) for p in (FIXTURES / "mariadb_concurrent").glob("*.0*"))
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "simulate", "--mode", "mariadb_conservative",
                        "--policy", "recorded", "--workers", "1,4", "--catch-up", "--format", "json",
                        *maria_files], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["results"]
    assert rows[1]["speedup"] > 1.0  # group commits with commit ids apply in parallel
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "simulate", "--mode", "database", "--workers",
                        "1,4", "--catch-up", "--format", "json", "--policy", "recorded",
                        str(FIXTURES / "single_full" / "binlog.000001")], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["workers"] == 1


def test_database_mode_partitions_by_schema():
    from lagadvisor.sim.build import database_partitioned

    facts = [TrxFacts(0, i + 1, (0,) * 4, 0, 1, 0, 0, 10, (db,), None) for i, db in enumerate("abab")]
    trxs = database_partitioned(facts, COST, catch_up=True)
    assert [t.need for t in trxs] == [-1, -1, 0, 1]
    assert simulate(trxs, ReplicaConfig(2, durable=False), COST).apply_us == 200


def test_long_timelines_do_not_stall():
    """Arrivals hours apart (float precision at 1e10 us) must still finish: a regression test
    for a virtual-time rounding stall."""
    trxs = [SimTrx(i * 3.6e9 + 0.3, 22.4 + i % 3, 300, i - 1) for i in range(50)]
    for w in (1, 2, 8):
        res = simulate(trxs, ReplicaConfig(w, durable=True), CostModel())
        assert all(c >= a for c, a in zip(res.commit_us, res.arrival_us))


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=120, deadline=5000)
@given(st.lists(st.tuples(st.floats(0, 1e10), st.floats(0, 5000), st.integers(0, 10**6), st.integers(0, 20),
                          st.sampled_from([PREFIX, 1, 2])), min_size=1, max_size=40),
       st.integers(0, 9), st.booleans(), st.booleans(), st.integers(1, 4))
def test_any_input_finishes_and_respects_dependencies(rows, workers, durable, preserve, cores):
    arrivals = sorted(r[0] for r in rows)
    trxs = [SimTrx(arrivals[i], w, b, (i - 1 - back) if back <= i - 1 else -1, kind)
            for i, (_, w, b, back, kind) in enumerate(rows)]
    cost = CostModel(cores=cores)
    res = simulate(trxs, ReplicaConfig(workers, preserve, durable), cost)
    assert len(res.commit_us) == len(trxs)
    for i, x in enumerate(trxs):
        assert res.commit_us[i] >= x.arrival_us
        if workers and x.need >= 0 and x.need_kind == PREFIX:
            assert res.commit_us[i] >= max(res.commit_us[: x.need + 1])
    if workers and preserve:
        assert all(a <= b for a, b in zip(res.commit_us, res.commit_us[1:]))


def test_contention_slows_every_job_by_the_threads_running_with_it():
    """CostModel.contention: eight transactions of 100 us applied at once by eight workers run
    1 + 7 x 0.1 slower each (64 cores); on 4 cores they also share the cores (half a core each)
    and the four past the cores add 4 x 0.05. One worker runs alone: no contention."""
    trxs = _trx(8)
    base = dict(trx_us=0, insert_us=0, update_us=0, delete_us=0, dispatch_us=0, commit_us=0.0, flush_us=0)
    cost = _cost(**base, cores=64, concurrency_cpu=0.1, oversubscribed_cpu=0.05)
    assert cost.contention(1) == 1.0 and cost.contention(8) == pytest.approx(1.7)
    assert simulate(trxs, ReplicaConfig(1, durable=False), cost).apply_us == 8 * 100
    assert simulate(trxs, ReplicaConfig(8, durable=False), cost).apply_us == pytest.approx(100 * 1.7)
    four = _cost(**base, cores=4, concurrency_cpu=0.1, oversubscribed_cpu=0.05)
    assert four.contention(8) == pytest.approx(1 + 3 * 0.1 + 4 * 0.05)
    assert simulate(trxs, ReplicaConfig(8, durable=False), four).apply_us == pytest.approx(100 * 2 * 1.5)
    without = _cost(**base, cores=64)
    assert simulate(trxs, ReplicaConfig(8, durable=False), without).apply_us == 100


def test_coordinator_wakes_up_after_the_dependency_it_slept_on_is_met():
    """wakeup_us: a chain of 4 (each needs the previous committed) on 4 workers: after each
    commit the coordinator, asleep on the dependency, dispatches the next one ``wakeup_us``
    later; the first needs nothing. One worker sleeps on the chain as well (the dependency is
    waited for before a worker is chosen: Mts_submode_logical_clock::schedule_next_event), but
    independent transactions wait for the worker, a spin: no wake-up."""
    chain = _trx(4, need=lambda i: i - 1)
    base = dict(trx_us=0, insert_us=0, update_us=0, delete_us=0, dispatch_us=0, commit_us=0.0, flush_us=0)
    cost = _cost(**base, cores=8, wakeup_us=30.0)
    assert simulate(chain, ReplicaConfig(4, durable=False), cost).apply_us == 4 * 100 + 3 * 30
    assert simulate(chain, ReplicaConfig(1, durable=False), cost).apply_us == 4 * 100 + 3 * 30
    free = _trx(4)
    assert simulate(free, ReplicaConfig(4, durable=False), cost).apply_us == 100
    assert simulate(free, ReplicaConfig(1, durable=False), cost).apply_us == 4 * 100


def test_a_cost_model_written_before_multi_worker_us_keeps_its_factor_alone():
    """A model file that names ``multi_worker_cpu`` but not ``multi_worker_us`` was written when the
    factor held the whole multi-worker cost: loading it must not add the built-in per-transaction
    cost on top (the same replica would be charged twice). A model that names neither keeps both
    defaults; one that names both keeps both."""
    old = CostModel.from_dict({"multi_worker_cpu": 1.19, "trx_us": 50.0})
    assert old.multi_worker_cpu == 1.19 and old.multi_worker_us == 0.0 and old.worker_add_us(4) == 0.0
    plain = CostModel.from_dict({"trx_us": 50.0})
    assert plain.multi_worker_us == CostModel().multi_worker_us > 0
    both = CostModel.from_dict({"multi_worker_cpu": 1.1, "multi_worker_us": 12.5})
    assert (both.multi_worker_cpu, both.multi_worker_us) == (1.1, 12.5)
    assert CostModel.from_dict(json.loads(CostModel().to_json())) == CostModel()


def test_a_cost_model_file_sets_switch_us_and_one_without_it_charges_no_switch():
    """``switch_us`` is read from a model file like any cost (0 to 1e6 us); a file written before
    the term (every calibrated model until 2026-11-29) reads it as the built-in's 0, the multi-worker
    cost staying per transaction as it was fitted."""
    from lagadvisor.errors import ConfigError

    assert CostModel().switch_us == 0.0 and CostModel.from_dict({"trx_us": 50.0}).switch_add_us(8) == 0.0
    set_ = CostModel.from_dict({"switch_us": 55.7, "multi_worker_us": 0.0, "cores": 16})
    assert (set_.switch_add_us(8), set_.switch_add_us(1), set_.worker_add_us(8)) == (55.7, 0.0, 0.0)
    with pytest.raises(ConfigError, match="switch_us"):
        CostModel.from_dict({"switch_us": -1.0})


def test_a_cost_model_file_without_apply_spread_keeps_its_costs_unspread():
    """A whole model file (every cost calibrate writes) without ``apply_spread`` was fitted before
    the term: it loads with 0, not the built-in's; a file naming a few costs by hand keeps the
    built-in's; named, it is read and range-checked; a written model reads back equal."""
    from lagadvisor.errors import ConfigError
    from lagadvisor.sim.model import WRITTEN_MODEL_KEYS

    assert CostModel().apply_spread == 0.2
    old = {k: v for k, v in json.loads(CostModel().to_json()).items() if k != "apply_spread"}
    assert WRITTEN_MODEL_KEYS <= set(old) and CostModel.from_dict(old).apply_spread == 0.0
    assert CostModel.from_dict({"trx_us": 50.0}).apply_spread == 0.2
    assert CostModel.from_dict({"apply_spread": 0.35}).spread_factors() == CostModel(apply_spread=0.35).spread_factors()
    with pytest.raises(ConfigError, match="apply_spread: 2.5 is outside 0..2"):
        CostModel.from_dict({"apply_spread": 2.5})
    assert CostModel.from_dict(json.loads(CostModel(apply_spread=0.1).to_json())).apply_spread == 0.1


def test_a_cost_model_file_from_before_the_event_costs_does_not_count_its_statements_twice():
    """A whole model file without ``event_us`` and ``dispatch_event_us`` was calibrated before the
    per-event costs, its fitted costs holding the statements' work: both load as 0, and its
    simulated times are what they were (bench/cost.json, a 2-core calibration of 2026-11-22); a
    file naming a few costs by hand keeps the built-in's; a written model reads back equal."""
    from lagadvisor.sim.model import UNWRITTEN_BEFORE

    old = json.loads((FIXTURES.parent / "bench" / "cost.json").read_text())
    assert not set(UNWRITTEN_BEFORE) & set(old)
    m = CostModel.from_dict(old)
    assert (m.event_us, m.dispatch_event_us, m.apply_spread) == (0.0, 0.0, 0.0)
    assert m.apply_us(1, 2, 1, 1800, events=11) == m.apply_us(1, 2, 1, 1800)
    assert m.coordinator_us(1800, 11) == m.dispatch_us + m.dispatch_byte_us * 1800
    partial = CostModel.from_dict({"trx_us": 50.0})
    assert (partial.event_us, partial.dispatch_event_us) == (CostModel().event_us, CostModel().dispatch_event_us) != (0, 0)
    new = CostModel.from_dict(dict(old, event_us=2.5))   # named: read, the other still absent
    assert (new.event_us, new.dispatch_event_us) == (2.5, 0.0)
    assert CostModel.from_dict(json.loads(CostModel().to_json())) == CostModel()


def test_a_model_file_says_which_machine_its_numbers_came_from():
    """``measured_on`` (issue 33: "the model file says which machine its numbers came from"): the
    built-in's names the lab machine and reads back; a file without it is "not recorded", not the
    built-in's machine; it is one line of text of bounded length, checked like the numbers."""
    from lagadvisor.errors import ConfigError
    from lagadvisor.sim.model import MACHINE, MEASURED_ON_MAX

    built_in = CostModel()
    assert built_in.measured_on == MACHINE and "16 cores" in MACHINE and "MySQL 9.7.4" in MACHINE
    assert json.loads(built_in.to_json())["measured_on"] == MACHINE
    assert CostModel.from_dict({"commit_us": 10.0}).measured_on == ""
    assert "where it was measured is not recorded" in CostModel.from_dict({"commit_us": 10.0}).origin()
    mine = CostModel.from_dict({"commit_us": 10.0, "measured_on": "a MySQL 8.0.36 replica on db7; 32 cores"})
    assert mine.origin() == "given with --cost-model; measured on a MySQL 8.0.36 replica on db7; 32 cores"
    # only the costs decide whether a file is the built-in model
    assert CostModel.from_dict({"cores": 32}).origin().startswith("built-in default with cores set to 32")
    for bad, why in ((5, "expected a string, got the number 5"), (None, "expected a string, got null"),
                     ("a\nb", "holds a control character"), ("x\x1b[2J", "holds a control character"),
                     ("x" * (MEASURED_ON_MAX + 1), f"longer than {MEASURED_ON_MAX} characters")):
        with pytest.raises(ConfigError, match=f"^m.json: measured_on: {re.escape(why)}$"):
            CostModel.from_dict({"measured_on": bad}, "m.json")
    assert CostModel.from_dict({"measured_on": "x" * MEASURED_ON_MAX}).measured_on == "x" * MEASURED_ON_MAX


def test_groups_merge_where_a_later_stage_is_slower():
    # binlog.cc change_stage: a flush group that finds the sync stage busy queues there, and the
    # sync stage's next leader takes everything queued (fetch_queue_for): one binlog fsync for
    # several flush groups. Redo fsync 10, binlog fsync 100, no commit CPU; transactions finish
    # applying 20 apart (one worker each, staggered work): T0's binlog fsync runs 110-210 while
    # T1-T4 pass the flush stage one by one (each its own redo fsync) and wait; 210-310 syncs
    # the four at once, then T5-T9 the same way.
    cost = _cost(trx_us=0, insert_us=0, update_us=0, delete_us=0, dispatch_us=0, commit_us=0.0,
                 redo_flush_us=10.0, flush_us=100.0, cores=64, fsync_devices=2)
    trxs = [SimTrx(0.0, 100.0 + 20.0 * i, 10, -1, PREFIX) for i in range(10)]
    res = simulate(trxs, ReplicaConfig(10, durable=True), cost)
    assert list(res.commit_us) == [210.0] + [310.0] * 4 + [410.0] * 5 and res.flushes == 3
