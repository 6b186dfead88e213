"""The Change Stream Applier (``ReplicaConfig.applier = Applier.CSA``) against the MTA on the
fixtures: faster where workers wait for their commit turn, the same where dependencies serialize
the stream. The model is the documented semantics (MySQL 26.7 manual 19.2.4) scheduled as the
MySQL source does (sim/engine.py's docstring; tests/sim/test_csa_scheduler.py); the margins below
are read from the model's mechanics, stated with each test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
from conftest import FIXTURES, fixture_facts

from lagadvisor.kinds import Applier
from lagadvisor.sim import build
from lagadvisor.sim.engine import simulate
from lagadvisor.sim.model import CostModel, ReplicaConfig


def both(inp, cfg: ReplicaConfig, cost: CostModel):
    return simulate(inp, cfg, cost), simulate(inp, ReplicaConfig(cfg.workers, cfg.preserve_commit_order, cfg.durable,
                                                                 applier=Applier.CSA), cost)


def test_csa_is_faster_where_workers_wait_for_their_commit_turn():
    """sysbench oltp_write_only (8 connections, the WRITESET clock MySQL 9.7 recorded), catch-up,
    4 workers (the default), durable, commit order preserved, the built-in cost model.

    Under the MTA the worker holds its transaction through the commit (its turn, the redo fsync,
    the flush stage, the binlog fsync): 4 transactions in flight at most, commit groups of about
    one (>= n/2 groups), and the coordinator waits for a free worker most of the run. Under the
    CSA the worker is free once it has applied; applied transactions queue in commit order,
    groups grow (at most 0.6 as many: the model gives 903 against 2,113 of 2,509 transactions)
    and the fsyncs are shared: catch-up at least 20% shorter (the model gives 29%: 0.397 s ->
    0.283 s). What bounds the groups is the source's in-flight limit (Csa_service::run's
    ensure_space, 4 x 4 = 16 transactions enqueued and not committed): the reader waits there, not
    for a worker, and no group holds more than 16."""
    facts = fixture_facts("sysbench_oltp_write_only")
    cost = CostModel()
    inp = build.logical_clock(facts, "recorded", cost, catch_up=True)
    n = len(inp)
    mta, csa = both(inp, ReplicaConfig(4, True, True), cost)
    assert csa.apply_us <= 0.8 * mta.apply_us, (mta.apply_us, csa.apply_us)
    # the mechanism: the MTA's workers are held through the commit, the CSA's are not
    assert mta.flushes >= n / 2 and csa.flushes <= 0.6 * mta.flushes, (n, mta.flushes, csa.flushes)
    assert mta.worker_wait_us >= 0.5 * mta.apply_us
    assert max(Counter(csa.commit_us).values()) <= 16
    # the commit order is kept: commits in source order under both
    assert list(csa.commit_us) == sorted(csa.commit_us)


@pytest.mark.parametrize("workers", [1, 2, 4, 8])
@pytest.mark.parametrize("durable", [True, False])
def test_csa_gains_nothing_where_dependencies_serialize(workers, durable):
    """single_full, one connection: its COMMIT_ORDER clock is one chain (each transaction waits
    for the one before it to commit). No worker ever has a second transaction to take, so the CSA
    gains nothing; it loses what the MTA overlaps: the MTA's coordinator reads a transaction while
    its worker applies it (two threads), the CSA's worker reads it, then applies it (one). So the
    CSA takes at least the MTA's time and at most that plus every transaction's read, in the
    same commit groups."""
    facts = fixture_facts("single_full")
    cost = CostModel()
    inp = build.logical_clock(facts, "COMMIT_ORDER", cost, catch_up=True)
    assert all(inp.need[i] == i - 1 for i in range(len(inp)))  # fully serial
    mta, csa = both(inp, ReplicaConfig(workers, True, durable), cost)
    f = cost.worker_cpu(workers)
    reads = sum(cost.dispatch_us + (cost.dispatch_event_us * e + cost.dispatch_byte_us * b) * f
                for b, e in zip(inp.nbytes, inp.events))
    assert mta.apply_us <= csa.apply_us <= mta.apply_us + reads + 1e-6 * mta.apply_us
    assert csa.flushes == mta.flushes


def test_csa_without_commit_order_keeps_the_worker_through_the_commit():
    """With replica_preserve_commit_order OFF the manual describes no separate commit phase: the
    worker holds its transaction to its commit, as the MTA's does, so about the same commit groups
    (within 15%: the CSA's worker reads, then applies, so its transactions reach the flush stage at
    other times, and the groups that merge at the sync stage differ: 2,448 against 2,220)."""
    facts = fixture_facts("sysbench_oltp_write_only")
    cost = CostModel()
    inp = build.logical_clock(facts, "recorded", cost, catch_up=True)
    mta, csa = both(inp, ReplicaConfig(4, False, True), cost)
    # no faster; slower by at most the reads the MTA's coordinator overlaps with the apply
    f = cost.worker_cpu(4)
    reads = sum(cost.dispatch_us + (cost.dispatch_event_us * e + cost.dispatch_byte_us * b) * f
                for b, e in zip(inp.nbytes, inp.events))
    assert mta.apply_us * 0.99 <= csa.apply_us <= mta.apply_us + reads / 4 + 0.02 * mta.apply_us
    assert abs(csa.flushes - mta.flushes) <= 0.15 * mta.flushes


def _simulate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lagadvisor", "simulate", str(FIXTURES / "sysbench_oltp_write_only"),
                           "--no-progress", *args], capture_output=True, text=True, timeout=600)


def test_simulate_applier_csa_names_it_and_its_model():
    r = _simulate("--applier", "csa", "--policy", "recorded", "--workers", "4", "--catch-up", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["applier"] == "csa" and "documented semantics" in doc["applier_model"]
    m = json.loads(_simulate("--policy", "recorded", "--workers", "4", "--catch-up", "--format", "json").stdout)
    assert "applier" not in m  # the MTA's document is as it was
    assert doc["results"][0]["apply_seconds"] < 0.8 * m["results"][0]["apply_seconds"]
    text = _simulate("--applier", "csa", "--policy", "recorded", "--workers", "4", "--catch-up")
    assert text.returncode == 0, text.stderr
    said = " ".join(text.stdout.split())
    assert "documented semantics" in said and "no 26.x server" in said
    assert "mysql/mysql-server commit 312d9ed" in said and "Dependency_adapter_lwm::solve" in said


@pytest.mark.parametrize("args, message", [(("--workers", "0,2"), "APPLIER_WORKER_COUNT"),
                                           (("--mode", "database"), "--mode database")])
def test_simulate_applier_csa_refuses_what_it_has_not(args, message):
    r = _simulate("--applier", "csa", *args)
    assert r.returncode != 0 and message in r.stderr, r.stderr
