"""The commit-gap regression of `lagadvisor calibrate` (sim/calibrate.py)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagadvisor.errors import ConfigError
from dataclasses import replace

from lagadvisor.sim.calibrate import (_scaled, fit_any, fixed_of, fit_samples, fit_scaled, fit_workers, held_out_band, lagging_pieces,
                                      redo_share_of)
from lagadvisor.sim.live import alone_gtids, busy_gaps, fsync_overlap, fsync_waits, last_commits, own_times
from lagadvisor.sim.model import MEASURED_ON_MAX, CostModel


def _gaps(seed: int, intercept: float, ins: float, upd: float, dele: float, n: int = 3000,
          noise: float = 0.08, stalls: float = 0.03, stall_us: float = 20_000.0):
    """Gaps of a one-worker replica: linear in rows, multiplicative noise, and rare stalls."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        i, u, d = rnd.choice((0, 1, 3, 10, 30)), rnd.choice((0, 1, 3, 10, 30)), rnd.choice((0, 1, 3, 10))
        if i + u + d == 0:
            u = 1
        g = (intercept + ins * i + upd * u + dele * d) * (1 + rnd.gauss(0, noise))
        if rnd.random() < stalls:
            g += stall_us * rnd.random()
        out.append((g, i, u, d, 200 * (i + u + d)))
    return out


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10**6), st.floats(100, 900), st.floats(10, 80), st.floats(10, 80), st.floats(10, 80))
def test_slopes_are_recovered_despite_stalls(seed, intercept, ins, upd, dele):
    samples = _gaps(seed, intercept, ins, upd, dele)
    fit = fit_samples(samples)
    # The stall-free slopes are recovered; the stalls' time is then spread in proportion.
    assert fit.stall_factor > 1.0
    for got, want in ((fit.insert_us, ins), (fit.update_us, upd), (fit.delete_us, dele)):
        # (8% noise on gaps of up to ~3,500 us: a slope's standard error is about 0.5 us)
        assert got / fit.stall_factor == pytest.approx(want, rel=0.1, abs=2.5)
    # Stalls stay in the total: the fit's mean is the mean of every gap.
    mean = sum(g for g, *_ in samples) / len(samples)
    predicted = sum(fit.intercept + fit.insert_us * i + fit.update_us * u + fit.delete_us * d
                    for _, i, u, d, _ in samples) / len(samples)
    assert predicted == pytest.approx(mean, rel=1e-9)
    assert fit.mean_gap_us == pytest.approx(mean)
    assert fit.samples < len(samples) and fit.r2 > 0.6


def test_large_transactions_are_not_taken_for_stalls():
    # No stalls: nothing a transaction's size explains is dropped (dropping the slowest gaps
    # would drop the 30-row transactions and halve the slopes' evidence).
    samples = _gaps(1, 300.0, 30.0, 45.0, 38.0, stalls=0.0, noise=0.02)
    fit = fit_samples(samples)
    assert fit.samples > 0.97 * len(samples) and fit.stall_factor < 1.01
    assert fit.intercept == pytest.approx(300.0, rel=0.03)
    assert fit.update_us == pytest.approx(45.0, rel=0.02)


def test_too_few_or_degenerate_samples_are_refused():
    with pytest.raises(ConfigError):
        fit_samples([(100.0, 1, 0, 0, 10)] * 5)
    with pytest.raises(ConfigError, match="varied transaction sizes"):
        fit_samples([(100.0 + k, 1, 1, 1, 10) for k in range(100)])


def test_redo_share():
    assert redo_share_of(CostModel(redo_flush_us=300.0, flush_us=100.0)) == 0.75
    default = CostModel()
    assert redo_share_of(CostModel(redo_flush_us=0.0, flush_us=0.0)) == pytest.approx(
        default.redo_flush_us / (default.redo_flush_us + default.flush_us))


def test_held_out_band_is_small_on_a_steady_workload_and_deterministic():
    samples = _gaps(3, 300.0, 30.0, 45.0, 38.0, stalls=0.0, noise=0.05)
    band, checks = held_out_band(samples)
    assert set(checks) == {"interleaved", "time_split", "bootstrap"}
    assert 0.0 < band < 0.03, checks
    assert held_out_band(samples) == (band, checks)


def test_held_out_band_shows_a_drift_within_the_window():
    # the machine gets 30% slower half way through (a disk's fsync latency, a neighbour): the
    # time-split check sees it and the band says so
    samples = _gaps(4, 300.0, 30.0, 45.0, 38.0, stalls=0.0, noise=0.05)
    half = len(samples) // 2
    drifted = samples[:half] + [(g * 1.3, *rest) for g, *rest in samples[half:]]
    band, checks = held_out_band(drifted)
    assert checks["time_split"] == pytest.approx(-0.23, abs=0.03)   # predicted 1/1.3 of the second half
    assert band == pytest.approx(abs(checks["time_split"]), abs=1e-4)
    assert held_out_band(samples[:20]) == (0.0, {})   # too few to check


def test_busy_gaps_are_the_serial_time_while_the_next_transaction_waits():
    # transactions reach the replica every 1,000 us, then a burst of 20 at once; the serial
    # commit path takes 400 us each: idle gaps (1,000 us) are left out, the burst's are counted
    # but its first two (the 5th percentile lag is transfer + one commit, so a transaction
    # counts once it waited longer than one commit: conservative)
    commits, t, done = [], 0, 0
    arrivals = [k * 1000 for k in range(50)] + [50_000] * 20 + [80_000 + k * 1000 for k in range(50)]
    for orig in arrivals:
        done = max(done, orig + 100) + 400   # 100 us of transfer, then 400 us of serial commit
        commits.append((orig, done))
    mean, n = busy_gaps(commits)
    assert n == 18 and mean == pytest.approx(400.0)
    assert busy_gaps(commits[:1]) == (0.0, 0)


def _events(i: int, u: int, d: int) -> int:
    """A transaction's binlog events: GTID, BEGIN, a table map and a rows event per kind of row
    it changes, XID."""
    return 3 + 2 * sum(1 for n in (i, u, d) if n)


def _facts(rows):
    """The facts of (file, last_committed, sequence_number, original ts, immediate ts, inserts,
    updates, deletes, bytes, events) rows, as calibrate's pieces hold them."""
    from lagadvisor.sim.build import TrxFacts

    return [TrxFacts(f, seq, (lc,) * 4, 0, i, u, d, nb, (), None, events=ev)
            for f, lc, seq, _, _, i, u, d, nb, ev in rows]


def _four_worker_catch_up(cpu: float, commit: float, n: int = 3000, seed: int = 5, wake: float = 1.0,
                          chain: float = 0.0):
    """A 4-worker catch-up simulated with a known model (the truth), as a replica's binlog would
    record it: (file, last_committed, sequence_number, original ts, immediate ts, rows by kind, bytes,
    events).
    ``wake``: the truth's wake-up latencies over the base's; ``chain``: the share of transactions
    that depend on the one just before (a hot row)."""
    from lagadvisor.sim.build import logical_clock
    from lagadvisor.sim.engine import simulate
    from lagadvisor.sim.model import ReplicaConfig

    rnd = random.Random(seed)
    rows = []
    for seq in range(1, n + 1):
        i, u, d = rnd.choice((0, 1, 3, 10)), rnd.choice((1, 3, 10)), rnd.choice((0, 1, 3))
        back = 0 if rnd.random() < chain else rnd.randint(0, 6)
        rows.append((0, max(0, seq - 1 - back), seq, 0, 0, i, u, d, 300 * (i + u + d), _events(i, u, d)))
    # the base model on a machine ``cpu`` times as slow, its commit stage ``commit`` times more so
    truth = _scaled(CostModel(), cpu, commit, 1.0, wake)
    res = simulate(logical_clock(_facts(rows), "recorded", truth, catch_up=True), ReplicaConfig(4, True, False),
                   truth)
    start = 10_000_000   # the source committed them all at 0; the replica starts 10 s behind
    return [(f, lc, seq, 0, start + int(c), i, u, d, nb, ev)
            for (f, lc, seq, _, _, i, u, d, nb, ev), c in zip(rows, res.commit_us)], truth


def _total(applied, model, workers: int) -> float:
    from lagadvisor.sim.build import logical_clock
    from lagadvisor.sim.engine import simulate
    from lagadvisor.sim.model import ReplicaConfig

    return simulate(logical_clock(_facts(applied), "recorded", model, catch_up=True), ReplicaConfig(workers, True, False),
                    model).apply_us / 1e6


@pytest.mark.parametrize("cpu, commit, tol", [
    (1.0, 1.0, 0.03),     # the base model's own replica
    (1.7, 1.0, 0.03),     # a slower machine
    (0.6, 1.0, 0.03),     # a faster one
    (1.0, 2.0, 0.10),     # a commit stage twice the base's share: the prior holds it back a little
    (1.0, 0.5, 0.10),     # half of it
])
def test_four_worker_fit_predicts_every_worker_count_of_the_model_that_made_the_catch_up(cpu, commit, tol):
    """One CPU scale for every CPU cost, the commit stage's own scale on top (held near the base's
    share by COMMIT_PRIOR) and the base's structure: the fit of one 4-worker catch-up predicts the
    other worker counts of the model that made it (issue 33: a free serial commit_us did not)."""
    applied, truth = _four_worker_catch_up(cpu, commit)
    model, ev = fit_workers(lagging_pieces(applied, 100_000), 4, durable=False, base=CostModel())
    assert ev["pieces"] == 6 and ev["transactions"] == 3000
    assert ev["piece_error_rms"] < 0.05 and 0.0 < model.error_band < 0.1, ev
    for w in (1, 2, 4, 8, 16):
        want = _total(applied, truth, w)
        assert _total(applied, model, w) == pytest.approx(want, rel=tol), (w, ev)


def test_a_calibration_s_times_are_its_own_catch_up_s():
    """The fitted model gives the pieces, simulated at the calibrated worker count, the time the
    replica took over them (``_anchored``), also where part of the catch-up ran slower than the
    rest without a stall (200 transactions 400 us a commit slower: the blocks' fit alone gave the
    run 7 lab's mixed backlog 20% less than its catch-up took)."""
    from lagadvisor.sim.calibrate import _Piece

    applied, _ = _four_worker_catch_up(1.0, 1.0)
    slowed, shift = [], 0
    for k, a in enumerate(applied):
        shift += 400 if 1_000 <= k < 1_200 else 0
        slowed.append(a[:4] + (a[4] + shift,) + a[5:])
    pieces = lagging_pieces(slowed, 100_000)
    model, ev = fit_workers(pieces, 4, durable=False, base=CostModel())
    assert ev["stalls"]["count"] == 0
    measured = sum(p[-1][4] - p[0][4] for p in pieces)
    simulated = sum((lambda c: c[-1] - c[0])(_Piece(p).commits(model, 4, False)) for p in pieces)
    assert simulated == pytest.approx(measured, rel=0.003)
    # and the slow stretch is the whole catch-up's: each worker count's time grows by about its share
    clean, _ = fit_workers(lagging_pieces(applied, 100_000), 4, durable=False, base=CostModel())
    grown = measured / sum(p[-1][4] - p[0][4] for p in lagging_pieces(applied, 100_000))
    for w in (1, 4, 16):
        assert _total(applied, model, w) / _total(applied, clean, w) == pytest.approx(grown, rel=0.05), w


@pytest.mark.parametrize("durable", [False, True])
def test_the_grid_on_threads_fits_what_it_fits_alone(durable):
    """The fit's grid runs on a thread per core (the native engine lets go of the GIL): the
    scales are the same numbers as the grid evaluated on one thread, and the columnar pieces
    simulate to the reference engine's commit times."""
    from lagadvisor.sim.build import logical_clock
    from lagadvisor.sim.calibrate import _Piece, _search
    from lagadvisor.sim.engine import simulate_python, spread_across_workers
    from lagadvisor.sim.model import ReplicaConfig

    applied, _ = _four_worker_catch_up(1.3, 1.5)
    pieces = [_Piece(p) for p in lagging_pieces(applied, 100_000)[:3]]
    alone = _search(pieces, CostModel(), 4, durable, threads=1)
    assert _search(pieces, CostModel(), 4, durable, threads=3) == alone
    assert alone != (1.0, 1.0, 1.0)
    model, cfg = _scaled(CostModel(), *alone), ReplicaConfig(4, True, durable)
    inp, cost = spread_across_workers(logical_clock(list(pieces[0].facts), "recorded", model, catch_up=True), cfg, model)
    ref = simulate_python(inp, cfg, cost).commit_us
    assert list(pieces[0].commits(model, 4, durable)) == pytest.approx(list(ref), abs=1e-6)


def test_the_replica_s_stalls_are_found_and_fitted_around():
    """Two 100 ms stops of every commit in a 4-worker catch-up (the 16-core lab's GTID persister)
    are found against the fitted simulation, said in the evidence, and taken out of the fit: the
    scales and the held-out checks are those of the catch-up without them, and the band adds
    their share of its time. The large transactions of the
    same catch-up (10 rows of each kind) are not taken for stalls."""
    from lagadvisor.sim.calibrate import stalls_note

    applied, truth = _four_worker_catch_up(1.3, 1.0)
    stalled, shift = [], 0
    for k, a in enumerate(applied):
        shift += 100_300 if k in (700, 2_100) else 0
        stalled.append(a[:4] + (a[4] + shift,) + a[5:])
    clean, ev0 = fit_workers(lagging_pieces(applied, 100_000), 4, durable=False, base=CostModel())
    model, ev = fit_workers(lagging_pieces(stalled, 100_000), 4, durable=False, base=CostModel())
    assert ev0["stalls"] == {"count": 0, "gaps_ms": [], "seconds": 0.0, "share": 0.0} and stalls_note(ev0["stalls"]) is None
    assert ev["stalls"]["count"] == 2 and all(100.3 <= g < 101.5 for g in ev["stalls"]["gaps_ms"]), ev["stalls"]
    assert ev["stalls"]["seconds"] == pytest.approx(0.2006, abs=0.002) and 0.1 < ev["stalls"]["share"] < 0.3
    # the same fit (the anchor to the pieces' time, less each stall's excess over the simulated gap,
    # moves the CPU by what the simulation puts in the stall's place: a few microseconds)
    assert ev["cpu_scale"] == pytest.approx(ev0["cpu_scale"], rel=1e-3) and ev["commit_scale"] == ev0["commit_scale"]
    # the band: the held-out checks' (those of the catch-up without the stalls) and the stalls' share
    held = max(abs(v) for v in ev["held_out"].values())
    assert held == pytest.approx(clean.error_band, abs=0.01) and held < 0.1
    assert model.error_band == pytest.approx(math.hypot(held, ev["stalls"]["share"]), abs=1e-4)
    note = stalls_note(ev["stalls"])
    assert note and "stopped committing 2 times" in note and "do not include them" in note and "band holds" in note
    assert "stopped committing once in the catch-up (45.9 ms" in stalls_note({"count": 1, "gaps_ms": [45.9], "seconds": 0.0457,
                                                               "share": 0.09})
    for w in (1, 4, 16):
        assert _total(applied, model, w) == pytest.approx(_total(applied, truth, w), rel=0.03), w


def _uniform_catch_up(workers: int, n: int = 3000):
    """A catch-up of sysbench's one transaction shape (2 updates, a delete, an insert, 1.8 kB), every
    one independent of the 300 before it, simulated with the base model at ``workers`` workers: at
    16 the coordinator's read binds it (the 16-core lab's uniform backlog), at one the workers' CPU."""
    from lagadvisor.sim.build import logical_clock
    from lagadvisor.sim.engine import simulate
    from lagadvisor.sim.model import ReplicaConfig

    rows = [(0, max(1, seq - 300) if seq > 1 else 0, seq, 0, 0, 1, 2, 1, 1800, 11) for seq in range(1, n + 1)]
    base = CostModel()
    res = simulate(logical_clock(_facts(rows), "recorded", base, catch_up=True), ReplicaConfig(workers, True, False),
                   base)
    return [(f, lc, seq, 0, 10_000_000 + int(c), i, u, d, nb, ev)
            for (f, lc, seq, _, _, i, u, d, nb, ev), c in zip(rows, res.commit_us)]


def test_a_catch_up_that_hid_the_workers_cpu_says_so():
    """calibrate --workers: the evidence gives how much the fitted catch-up's time, and a one-worker
    catch-up's, move with the workers' CPU (worker_share); a coordinator-bound 16-worker catch-up
    barely shows it while one worker waits on little else, and the calibration says what that
    leaves to the base model. A 4-worker catch-up of mixed sizes shows the workers: no note."""
    from lagadvisor.sim.calibrate import UNSEEN_WORKERS, unseen_workers_note

    _, ev = fit_workers(lagging_pieces(_uniform_catch_up(16), 100_000), 16, durable=False, base=CostModel())
    shares = ev["worker_cpu_share"]
    assert shares["calibrated"] < 0.2 < 0.6 < shares["one_worker"] <= 1.05, shares
    note = unseen_workers_note(shares)
    assert note is not None and "hardly showed the workers' CPU" in note and "fewer workers" in note
    applied, _ = _four_worker_catch_up(1.0, 1.0)
    _, ev = fit_workers(lagging_pieces(applied, 100_000), 4, durable=False, base=CostModel())
    assert ev["worker_cpu_share"]["one_worker"] - ev["worker_cpu_share"]["calibrated"] < UNSEEN_WORKERS
    assert unseen_workers_note(ev["worker_cpu_share"]) is None
    assert unseen_workers_note({"calibrated": 0.3, "one_worker": 0.31 + UNSEEN_WORKERS}) is not None


def _hot_row_catch_up(wake: float, workers: int = 8, n: int = 3000, seed: int = 3):
    """A catch-up of a hot row: 70% of the transactions update it (one row each, each depending on
    the one before it), the rest insert and update 5-20 rows each, independent of what is in
    flight, simulated with the base model whose wake-up latencies are ``wake`` times the base's
    (the 16-core lab's loans: 36-77 us for one backlog's coordinator wake-up)."""
    from lagadvisor.sim.build import logical_clock
    from lagadvisor.sim.engine import simulate
    from lagadvisor.sim.model import ReplicaConfig

    rnd, rows, hot = random.Random(seed), [], 0
    for seq in range(1, n + 1):
        if rnd.random() < 0.3:
            i, u, lc = rnd.choice((5, 10, 20)), rnd.choice((5, 10)), max(0, seq - 20)
        else:
            i, u, lc, hot = 0, 1, hot, seq
        rows.append((0, lc, seq, 0, 0, i, u, 0, 300 * (i + u), _events(i, u, 0)))
    truth = _scaled(CostModel(), 1.0, 1.0, 1.0, wake)
    res = simulate(logical_clock(_facts(rows), "recorded", truth, catch_up=True), ReplicaConfig(workers, True, False),
                   truth)
    return [(f, lc, seq, 0, 10_000_000 + int(c), i, u, d, nb, ev)
            for (f, lc, seq, _, _, i, u, d, nb, ev), c in zip(rows, res.commit_us)], truth


@pytest.mark.parametrize("wake", [0.45, 2.0])
def test_a_catch_up_s_dependency_chains_fit_its_wake_ups(wake):
    """calibrate --workers: where the catch-up's dependency chains show the wake-up latencies
    (wake_share: a change in them moves its simulated time), the fit scales them with the CPU
    (the 16-core lab's hot-row backlog fitted 46-56 us on one loan against the base's 67.6); a
    catch-up without chains keeps the base's and says they were not fitted."""
    from lagadvisor.sim.calibrate import WAKE_SEEN

    applied, truth = _hot_row_catch_up(wake)
    model, ev = fit_workers(lagging_pieces(applied, 100_000), 8, durable=False, base=CostModel())
    fitted = ev["wake"]
    assert fitted["fitted"] and fitted["share"] >= WAKE_SEEN, fitted
    # toward the truth (the prior on the scales holds it back where the CPU can stand in for it)
    assert (fitted["scale"] < 0.9) if wake < 1 else (fitted["scale"] > 1.1), fitted
    assert model.wakeup_us == pytest.approx(CostModel().wakeup_us * fitted["scale"], rel=1e-3)
    assert model.handoff_us == pytest.approx(CostModel().handoff_us * fitted["scale"], rel=1e-3)
    assert fitted["wakeup_us"] == round(model.wakeup_us, 1)
    for w in (1, 2, 4, 8, 16):
        assert _total(applied, model, w) == pytest.approx(_total(applied, truth, w), rel=0.05), (w, ev)
    _, ev = fit_workers(lagging_pieces(_uniform_catch_up(16), 100_000), 16, durable=False, base=CostModel())
    assert not ev["wake"]["fitted"] and ev["wake"]["scale"] == 1.0 and ev["wake"]["share"] < WAKE_SEEN, ev["wake"]
    assert ev["wake"]["wakeup_us"] == CostModel().wakeup_us


def test_lagging_pieces_keep_only_what_was_applied_behind_the_source():
    applied = [(0, k - 1, k, 1_000_000 * k, 1_000_000 * k + (500_000 if 100 <= k < 1400 else 1_000), 1, 1, 0, 10, 7)
               for k in range(2000)]
    pieces = lagging_pieces(applied, 100_000)
    # 1,300 behind: three pieces (500, 500, 300), too few for the held-out checks, so halved
    assert [len(p) for p in pieces] == [250, 250, 250, 250, 150, 150]
    assert pieces[0][0][2] == 100 and pieces[-1][-1][2] == 1399
    assert [t[2] for p in pieces for t in p] == list(range(100, 1400))  # in order, nothing lost
    # 600 behind: a piece of 500 and one of 100 (under half a piece: dropped); halved, still too few
    short = [(0, k - 1, k, 1_000_000 * k, 1_000_000 * k + (500_000 if 100 <= k < 700 else 1_000), 1, 1, 0, 10, 7)
             for k in range(2000)]
    assert [len(p) for p in lagging_pieces(short, 100_000)] == [500]
    with pytest.raises(ConfigError, match="longer lag episode"):
        fit_workers(lagging_pieces(short, 100_000), 4, durable=False, base=CostModel())


def test_one_transaction_shape_scales_the_base_model():
    # sysbench oltp_write_only: every transaction 1 insert, 2 updates, 1 delete; the costs cannot
    # be told apart, so the base model's are scaled by what the replica measured, stalls apart
    base = CostModel()
    per_trx = fixed_of(base) + base.insert_us + 2 * base.update_us + base.delete_us
    rnd = random.Random(9)
    samples = [(1.5 * per_trx * (1 + rnd.gauss(0, 0.03)) + (3_000 if rnd.random() < 0.01 else 0), 1, 2, 1, 500)
               for _ in range(2000)]
    with pytest.raises(ConfigError, match="cannot separate"):
        fit_samples(samples)
    fit, scaled = fit_any(samples, base)
    assert scaled and 1950 < fit.samples < 1995 and fit.stall_factor > 1.05
    assert fit.update_us / fit.stall_factor == pytest.approx(1.5 * base.update_us, rel=0.01)
    mean = sum(g for g, *_ in samples) / len(samples)
    assert fit.intercept + fit.insert_us + 2 * fit.update_us + fit.delete_us == pytest.approx(mean, rel=1e-9)
    band, checks = held_out_band(samples, fit=lambda s, m: fit_scaled(s, base, m))
    assert 0.0 < band < 0.1, checks


def test_alone_transactions_had_nothing_in_flight():
    # source commits (orig) and replica commits (imm): t2 arrives while t1 is applied (not alone,
    # nor is t1: t2 came before it committed); t3 and t4 come after the previous one committed
    commits = [(0, 500, "g0"), (1_000, 1_500, "g1"), (1_200, 1_900, "g2"), (3_000, 3_400, "g3"),
               (5_000, 5_300, "g4"), (7_000, 7_200, "g5")]
    assert alone_gtids(commits) == {"g3", "g4"}
    # a replica clock 600 us behind the source's: the offset comes from the negative lags
    skewed = [(o, i - 600, g) for o, i, g in commits]
    assert alone_gtids(skewed) == {"g3", "g4"}
    assert alone_gtids(commits[:2]) == set()


def test_own_times_take_the_worker_waits_inside_each_transaction_out():
    us = 1_000_000  # picoseconds
    # thread 1: a transaction 0..1000 us with a wait for the coordinator 100..300 and one for its
    # turn to commit 800..950, and a wait before it (-50..0, outside); thread 2: one 1050..1400
    # (started 50 us after thread 1's ended: back to back) and one 5000..5200 (after idle)
    trx = {(1, 10): ("g1", 1, 0, 1_000 * us), (2, 20): ("g2", 2, 1_050 * us, 1_400 * us),
           (2, 30): ("g3", 2, 5_000 * us, 5_200 * us)}
    waits = {(1, 9): (-50 * us, 0), (1, 11): (100 * us, 300 * us), (1, 12): (800 * us, 950 * us),
             (2, 21): (1_390 * us, 1_500 * us), (3, 1): (0, 5_000 * us)}
    own = own_times(trx, waits)
    assert own[(1, 10)] == ("g1", 650.0, False)
    # a wait that runs past the transaction's end counts up to its end; another thread's, not at all
    assert own[(2, 20)] == ("g2", 340.0, True)
    assert own[(2, 30)] == ("g3", 200.0, False)
    # not when another worker's transaction ran during it (both lose it), nor for the first
    both = own_times({**trx, (1, 40): ("g4", 1, 1_100 * us, 1_200 * us)}, {})
    assert both[(1, 40)] == ("g4", 100.0, False)
    assert both[(2, 20)][2] is False and both[(1, 10)][2] is False
    # one that started before g3 began and ended after it started overlaps it too
    late = own_times({**trx, (1, 50): ("g5", 1, 4_990 * us, 5_010 * us)}, {})
    assert late[(2, 30)][2] is False and late[(1, 50)][2] is False


def test_fsync_waits_are_the_fsyncs_each_transaction_ran_itself_matched_by_event_ids():
    us = 1_000_000
    # transactions (thread, EVENT_ID) -> END_EVENT_ID; their waits' times are on another clock
    # (the cycle counter: WL#10986) and far from the transactions': only event ids place them
    trx = {(5, 10): 20, (5, 30): 40, (6, 10): 20, (7, 10): 20}
    fsyncs = {
        (5, 15): (True, 9_000 * us, 9_250 * us),     # (5, 10)'s redo fsync
        (5, 20): (False, 9_300 * us, 9_500 * us),    # and its binlog fsync: its END_EVENT_ID
        (5, 25): (True, 9_600 * us, 9_700 * us),     # between two transactions: neither's
        (5, 33): (True, 9_800 * us, 9_900 * us),     # (5, 30): a redo fsync, two binlog ones
        (5, 35): (False, 9_900 * us, 10_000 * us),
        (5, 38): (False, 10_000 * us, 10_050 * us),
        (6, 20): (False, 1 * us, 2 * us),            # (6, 10): a binlog fsync, its redo by another thread
        (99, 1): (True, 0, 300 * us),                # the log flusher's
        (8, 15): (False, 0, 100 * us),               # a thread with no transaction read
        (7, 5): (False, 0, 100 * us),                # before (7, 10)'s first event
    }
    out = fsync_waits(trx, fsyncs)
    assert out == {(5, 10): (200.0, 250.0), (5, 30): (150.0, 100.0)}


def test_last_commits_take_the_transactions_own_commit_not_its_statements():
    us = 1_000_000
    trx = {(5, 1): (0, 1_000 * us), (6, 1): (0, 500 * us), (7, 1): (0, 300 * us)}
    commits = {(5, 2): (100 * us, 110 * us),   # a row event's statement commit
               (5, 3): (300 * us, 320 * us),
               (5, 4): (400 * us, 1_005 * us),   # the transaction's: the last to start inside it (the
                                                 # stage ends when the next begins, after the transaction)
               (5, 9): (1_200 * us, 1_300 * us),   # the next transaction's
               (6, 2): (450 * us, 600 * us),   # started inside, runs past the end: counted up to it
               (7, 2): (-50 * us, 10 * us)}    # began before it: not its own
    assert last_commits(trx, commits) == {(5, 1): (400 * us, 600.0), (6, 1): (450 * us, 50.0)}


def test_fsync_overlap_tells_one_at_a_time_from_at_once():
    us = 1_000_000
    # 30 binlog fsyncs of 300 us, each with a redo fsync started 100 us into it (200 us left of
    # the binlog's), and 30 redo fsyncs of 250 us started with nothing running
    def storage(serial: bool):
        out = []
        for k in range(30):
            t = k * 10_000 * us
            out.append((False, t, t + 300 * us))
            out.append((True, t + 100 * us, t + (100 + 200 * serial + 250) * us))
            out.append((True, t + 5_000 * us, t + 5_250 * us))
        return out
    assert fsync_overlap(storage(True)) == (pytest.approx(1.0), 30)    # waited for all that was left
    assert fsync_overlap(storage(False)) == (pytest.approx(0.0), 30)   # ran at once
    # too few concurrent fsyncs to tell
    assert fsync_overlap(storage(True)[:30]) == (None, 10)


def test_pieces_stay_bounded_and_spread_over_a_long_catch_up():
    # 100 pieces of 500 behind the source: at most 2 x 12 are held at any time, and the 12 taken
    # come from the whole run, first to last
    from lagadvisor.sim.calibrate import MAX_PIECES, _Pieces

    pieces = _Pieces(100_000)
    held = 0
    for k in range(50_000):
        pieces.add((0, k - 1, k, 1_000 * k, 1_000 * k + 500_000, 1, 1, 0, 10))
        held = max(held, len(pieces.done.items))
    taken = pieces.take()
    assert held < 2 * MAX_PIECES and len(taken) == MAX_PIECES
    starts = [p[0][2] for p in taken]
    assert starts == sorted(starts) and starts[0] == 0 and starts[-1] >= 40_000
    assert all(len(p) == 500 for p in taken)


def test_combined_calibrations_take_each_cost_s_median_and_their_spread_as_the_band():
    from lagadvisor.sim.calibrate import combine_models
    base = CostModel()
    # three relaxed windows of one replica: the same shape, the machine 10% slower and 12% faster
    members = [replace(base, **{k: getattr(base, k) * f for k in ("trx_us", "insert_us", "update_us", "delete_us",
                                                                   "event_us", "commit_us", "dispatch_us",
                                                                   "dispatch_event_us")},
                       error_band=b) for f, b in ((1.0, 0.01), (1.10, 0.02), (0.88, 0.015))]
    c = combine_models(members)
    assert c.model.commit_us == base.commit_us and c.model.update_us == base.update_us
    assert c.model.flush_us == base.flush_us           # kept by every relaxed member
    assert c.evidence["fsyncs_in_spread"] is False
    assert c.evidence["spread"] == pytest.approx(0.12, abs=1e-4)   # the slowest member's distance: 12%
    assert c.model.error_band == c.evidence["spread"]
    # the band covers every member's transaction
    unit = c.evidence["pooled_unit_transaction_us"]
    assert all(abs(u - unit) <= c.model.error_band * unit + 0.1 for u in c.evidence["unit_transaction_us"])
    # windows that agree: the band is their own median held-out band
    steady = combine_models([replace(base, error_band=b) for b in (0.03, 0.05, 0.04)])
    assert steady.evidence["spread"] == 0 and steady.model.error_band == 0.04
    # durable members fitted their fsyncs: those count in the spread
    durable = combine_models([replace(base, flush_us=200.0), replace(base, flush_us=300.0), replace(base, flush_us=250.0)])
    assert durable.evidence["fsyncs_in_spread"] is True and durable.model.flush_us == 250.0
    assert durable.model.error_band > 0.05
    with pytest.raises(ConfigError, match="two or more"):
        combine_models([base])
    # the pooled model names its members' machines, each once
    where = combine_models([replace(base, measured_on="a"), replace(base, measured_on="b"),
                            replace(base, measured_on="a"), replace(base, measured_on="")]).model.measured_on
    assert where == "pooled from 4 calibrations: a | b | not recorded"
    long = combine_models([replace(base, measured_on=str(i) * 900) for i in range(4)]).model.measured_on
    assert len(long) == MEASURED_ON_MAX and long.endswith("...")
    # the worker count its band was checked at: the members' when they agree, else not recorded
    assert combine_models([replace(base, calibrated_workers=8)] * 3).model.calibrated_workers == 8
    assert combine_models([replace(base, calibrated_workers=w) for w in (8, 8, 16)]).model.calibrated_workers == 0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(50, 2000), st.floats(0, 100), st.floats(0, 0.3)), min_size=2, max_size=9))
def test_combined_model_lies_within_its_members(costs):
    from lagadvisor.sim.calibrate import combine_models
    members = [replace(CostModel(), commit_us=c, update_us=u, error_band=b) for c, u, b in costs]
    c = combine_models(members)
    assert min(m.commit_us for m in members) <= c.model.commit_us <= max(m.commit_us for m in members)
    assert min(m.update_us for m in members) <= c.model.update_us <= max(m.update_us for m in members)
    assert c.model.error_band >= sorted(m.error_band for m in members)[len(members) // 2] - 1e-4
    assert combine_models(list(reversed(members))).model == c.model   # order does not matter


def test_group_fsyncs_are_the_back_to_back_medians_when_enough_were_read():
    from lagadvisor.sim.live import MIN_WARM_FSYNCS, group_fsyncs
    alone = [(240.0 + i % 7, 240.0 + i % 5) for i in range(300)] + [(3000.0, 4000.0)] * 20   # long tail
    warm = [(230.0, 180.0 + i % 3) for i in range(MIN_WARM_FSYNCS)]
    assert group_fsyncs(alone, warm) == (230.0, 181.0, "back to back")
    b, r, which = group_fsyncs(alone, warm[:MIN_WARM_FSYNCS - 1])   # too few back to back: the alone ones
    assert which == "applied alone" and 240 <= b <= 246 and 240 <= r <= 244   # medians: the tail does not move them
    assert group_fsyncs([], []) is None


def _live_sample(n: int, workers: int = 1):
    """A LiveSample of ``n`` transactions one worker applied back to back (``server.calibrate``
    reads such a sample from a replica): each one's time linear in its rows, no waits."""
    from lagadvisor.sim.live import FsyncTotals, LiveSample

    rnd = random.Random(7)
    trx, shapes, t = {}, {}, 10**12
    for k in range(n):
        i, u, d = rnd.choice((0, 1, 3, 10)), rnd.choice((0, 1, 3, 10)), rnd.choice((0, 1, 3))
        us = 150 + 20 * i + 30 * u + 40 * d
        gtid = f"3e11fa47-71ca-11e1-9e33-c80aa9429562:{k + 1}"
        trx[(1, 100 + 10 * k)] = (gtid, t, t + us * 10**6, 105 + 10 * k)
        shapes[gtid] = (i, u, d, 100 + 50 * (i + u + d), _events(i, u, d))
        t += us * 10**6 + 50 * 10**6   # the next starts 50 us after: back to back
    server = {"workers": workers, "durable": False, "fsync_waits": False, "commit_stage": False}
    return LiveSample(30.0, server, trx, {}, {}, {}, FsyncTotals(), FsyncTotals(), shapes, (), ("binlog.000001",))


def test_fit_live_takes_a_sample_not_a_connection():
    """calibrate --host's fit (sim.live.fit_live) from a sample alone: the per-row costs of a
    replica whose worker times are linear in rows come back, and the evidence says what it read."""
    from lagadvisor.sim.live import fit_live

    base = CostModel()
    got = fit_live(_live_sample(400), base=base, cores=8)
    m, e = got.model, got.evidence
    assert (m.insert_us, m.update_us, m.delete_us) == pytest.approx((20.0, 30.0, 40.0), rel=1e-6)
    assert m.commit_us == pytest.approx(150.0 - base.trx_us, rel=1e-6)
    assert m.cores == 8 and m.byte_us == 0.0
    assert e["samples"] == 400 and e["transactions_timed"] == 400 and e["binlog_files"] == ["binlog.000001"]
    assert e["samples_back_to_back"] == 399 and e["back_to_back_factor"] == 1.0
    assert e["commit_us_from"] == "worker-time intercept" and e["optional_missing"] == []
    with pytest.raises(ConfigError, match="only 40 replicated transactions timed in the 30 s window"):
        fit_live(_live_sample(40), base=base)
    # the model says where it was measured: the server's version and host when the watch read them
    assert m.measured_on == ("a replica (server version unknown), watched live: 400 of its applied transactions "
                             "in 30 s, 1 worker, relaxed; 8 cores")
    assert m.calibrated_workers == 1
    named = _live_sample(400)
    named.server.update(version="9.7.4", hostname="replica-3")
    assert fit_live(named, base=base, cores=8).model.measured_on == (
        "a MySQL 9.7.4 replica on replica-3, watched live: 400 of its applied transactions in 30 s, 1 worker, "
        "relaxed; 8 cores")


def test_handoffs_are_the_wake_up_gaps_of_consecutive_commit_order_waiters():
    """sim.live.handoffs: GTIDs n and n+1 both waited for their turn to commit, n+1 asleep when n
    woke: the gap between their wake-ups (the model's handoff_us). Not a sample: a pair whose
    second started waiting after the first woke, a pair of two sources, a lone waiter."""
    from lagadvisor.sim.live import handoffs

    us = 10**6
    src, other = "3e11fa47-71ca-11e1-9e33-c80aa9429562", "4f22fa47-71ca-11e1-9e33-c80aa9429562"
    trx = {(1, 10): (f"{src}:1", 0, 500 * us, 11), (2, 10): (f"{src}:2", 10 * us, 600 * us, 11),
           (3, 10): (f"{src}:3", 20 * us, 700 * us, 11), (4, 10): (f"{src}:4", 650 * us, 900 * us, 11),
           (5, 10): (f"{other}:5", 30 * us, 800 * us, 11)}
    order = {(1, 12): (100 * us, 400 * us),   # 1 woke at 400
             (2, 12): (200 * us, 430 * us),   # 2 asleep since 200, woke 30 us after 1: a sample
             (3, 12): (300 * us, 470 * us),   # 3 asleep since 300, woke 40 us after 2: a sample
             (4, 12): (660 * us, 700 * us),   # 4 began waiting after 3 woke: not one
             (5, 12): (100 * us, 420 * us)}   # another source's GTID 5 follows no 4 of its own
    assert handoffs(trx, order) == [30.0, 40.0]
    assert handoffs(trx, {}) == []


def test_coordinator_wakeups_run_from_the_commit_that_met_the_wait_to_the_next_start():
    """sim.live.coordinator_wakeups: the last commit inside the coordinator's dependency wait to the
    first transaction start after it (the model's wakeup_us); a wait no commit ended inside, or
    followed by no start within WAKEUP_CAP_PS, is not a sample."""
    from lagadvisor.sim.live import WAKEUP_CAP_PS, coordinator_wakeups

    us = 10**6
    trx = {(1, 1): ("s:1", 0, 100 * us, 2), (2, 1): ("s:2", 160 * us, 300 * us, 2),
           (3, 1): ("s:3", 350 * us, 400 * us, 2), (4, 1): ("s:4", 400 * us + 2 * WAKEUP_CAP_PS, 10**13, 2)}
    waits = {(9, 1): (50 * us, 130 * us),    # met by 1's commit at 100; 2 starts at 160: 60 us
             (9, 2): (310 * us, 340 * us),   # no commit inside it: not a sample
             (9, 3): (320 * us, 420 * us)}   # met by 3's commit at 400; the next start is past the cap
    assert coordinator_wakeups(trx, waits) == [60.0]


def test_fit_live_keeps_the_base_latencies_when_the_window_shows_too_few_and_says_so():
    from dataclasses import replace as dc_replace

    from lagadvisor.sim.live import MIN_WAKEUPS, fit_live

    base = CostModel()
    sample = _live_sample(400)
    got = fit_live(sample, base=base)
    w = got.evidence["wakeups"]
    assert (got.model.handoff_us, got.model.wakeup_us) == (base.handoff_us, base.wakeup_us)
    assert w["handoff_us"]["samples"] == 0 and "the base model's kept" in w["handoff_us"]["why"]
    # the same window where the coordinator slept MIN_WAKEUPS times, each met by a commit 10 us
    # before it woke, the next transaction starting 40 us after it woke (50 us after the commit:
    # the sample's transactions run back to back 50 us apart): wakeup_us becomes 50 us
    keys = sorted(sample.transactions, key=lambda k: sample.transactions[k][1])
    waits = {}
    for j, (a, b) in enumerate(zip(keys[:MIN_WAKEUPS], keys[1:MIN_WAKEUPS + 1])):
        end, start = sample.transactions[a][2], sample.transactions[b][1]
        waits[(99, j)] = (end - 5 * 10**6, start - 40 * 10**6)
    got = fit_live(dc_replace(sample, coordinator_waits=waits), base=base)
    assert got.model.wakeup_us == 50.0 and got.model.handoff_us == base.handoff_us
    assert got.evidence["wakeups"]["wakeup_us"]["samples"] == MIN_WAKEUPS


def test_measured_on_is_always_a_line_the_model_file_reads_back():
    """sim.calibrate.measured_on: a binlog name with a newline or an escape (a file name may hold
    them) still writes a model file that reads back (CostModel.from_dict refuses control
    characters)."""
    import json

    from lagadvisor.binlog import FileSummary
    from lagadvisor.sim.calibrate import measured_on

    where = measured_on([FileSummary("x", server_version="9.7.4")], ["/d/bin\nlog.\x1b[2J000001"], 1200, 4, True, 16)
    assert where == "bin?log.?[2J000001, the binlog of a MySQL 9.7.4 replica: 1,200 commits behind the source, " \
                    "4 workers, durable; 16 cores"
    model = replace(CostModel(), measured_on=where)
    assert CostModel.from_dict(json.loads(model.to_json())) == model
    assert measured_on([FileSummary("x")], ["a", "b"], 5, 1, False, 2).startswith(
        "a to b, the binlog of a replica (server version unknown): 5 commits")


def _waited_flags(clock: list[tuple[int, int]], files: list[int] | None = None) -> list[bool]:
    """What ``_Gaps`` marks for each (last_committed, sequence_number) of a one-worker binlog."""
    from lagadvisor.sim.calibrate import _Gaps

    g = _Gaps(0, 0.0)
    out = []
    for k, (lc, seq) in enumerate(clock):
        if files and k in files:
            g.new_file()
        out.append(g._waited(lc, seq))
        g.prev_seq = seq
    return out


def test_a_one_worker_coordinator_waits_where_the_clock_reaches_the_transaction_before():
    """sim.build.logical_clock's rule at one worker: the prefix a transaction needs includes the
    one before it (last_committed = its sequence_number), or it is a barrier."""
    assert _waited_flags([(0, 1), (1, 2), (1, 3), (3, 4), (2, 5), (2, 7), (6, 8)]) == [
        True,    # the first of the file: a barrier
        True,    # needs 1, the one before
        False,   # needs 1, committed two transactions ago
        True,    # needs 3
        False,   # needs 2
        True,    # a gap in sequence numbers (6 is missing): a barrier
        False]   # needs 6, two before it
    assert _waited_flags([(5, 7), (5, 8)]) == [True, False]
    assert _waited_flags([(5, 7), (0, 8)]) == [True, True]           # last_committed 0: a barrier
    assert _waited_flags([(5, 7), (6, 8)], files=[1]) == [True, True]   # a new file: a barrier
    assert _waited_flags([(0, 0), (0, 0)]) == [False, False]         # no logical clock (MariaDB, 5.6)


def _waited_gaps(seed: int, wake: float, share: float, n: int = 2000):
    """One-worker gaps as :func:`_gaps`, each after a dependency wait with probability ``share``,
    which adds ``wake`` us."""
    rnd = random.Random(seed)
    samples, waited = [], []
    for g, i, u, d, b in _gaps(seed, 120.0, 30.0, 20.0, 40.0, n=n, noise=0.05, stalls=0.01):
        w = rnd.random() < share
        samples.append((g + (wake if w else 0.0), i, u, d, b))
        waited.append(w)
    return samples, waited


@pytest.mark.parametrize("wake", [0.0, 19.0, 67.6, 150.0])
def test_the_wakeup_is_measured_and_taken_out_of_the_waited_gaps(wake):
    from lagadvisor.sim.calibrate import take_out_wakeups

    samples, waited = _waited_gaps(7, wake, 0.4)
    base = CostModel()
    out, w = take_out_wakeups(samples, waited, base)
    assert w.measured and w.waited == sum(waited) and w.free == len(samples) - sum(waited)
    assert w.wakeup_us == pytest.approx(wake, abs=6.0), w
    assert "measured" in w.how and f"{base.wakeup_us:g} us" in w.how
    for (g0, *r0), (g1, *r1), k in zip(samples, out, waited):
        assert r0 == r1 and g1 == pytest.approx(g0 - (w.wakeup_us if k else 0.0))
    # what is left fits the costs of the free gaps alone, the wake-up gone from the intercept
    assert fit_samples(out).intercept / fit_samples(out).stall_factor == pytest.approx(120.0, rel=0.08)


def test_a_chain_takes_out_the_base_wakeup_only_where_the_clock_is_the_dependencies():
    from lagadvisor.sim.calibrate import take_out_wakeups

    samples, _ = _waited_gaps(8, 40.0, 1.0, n=300)
    base = CostModel(wakeup_us=50.0)
    chained, w = take_out_wakeups(samples, [True] * len(samples), base)
    assert not w.measured and w.wakeup_us == 50.0 and "taken out of each" in w.how
    assert [g for g, *_ in chained] == pytest.approx([g - 50.0 for g, *_ in samples])
    # a replica that may track COMMIT_ORDER (before 8.4) gives every one-worker transaction
    # last_committed = the one before: a chain cannot be told from it, nothing is taken out
    kept, w = take_out_wakeups(samples, [True] * len(samples), base, chain_is_dependency=False)
    assert kept == samples and not w.measured and "commit order" in w.how
    # too few of one kind: not measured, nothing taken out
    few = [k < 20 for k in range(len(samples))]
    kept, w = take_out_wakeups(samples, few, base)
    assert kept == samples and not w.measured and "20 gaps after a dependency wait" in w.how


def test_a_durable_fit_s_fsyncs_are_its_mean_gap_over_the_relaxed_model():
    """What the relaxed model gives the mean transaction, taken from the durable gaps' mean, is
    the fsyncs per commit, whether the durable fit has its own slopes or scales one shape (which
    puts most of the excess on the rows the model does not keep)."""
    from lagadvisor.sim.calibrate import durable_excess

    relaxed = CostModel()
    one_shape = [(4.0 * (fixed_of(relaxed) + relaxed.insert_us + 2 * relaxed.update_us) * (1 + 0.01 * (k % 7 - 3)),
                  1, 2, 0, 300) for k in range(400)]
    fit, scaled = fit_any(one_shape, relaxed)
    assert scaled
    fit = replace(fit, mean_rows=(1.0, 2.0, 0.0), mean_bytes=300.0)
    mean = sum(g for g, *_ in one_shape) / len(one_shape)
    # what the model charges a durable transaction per byte besides (its two fsyncs' and the
    # worker's) is not counted twice
    per_byte = (2 * relaxed.fsync_byte_us + relaxed.durable_byte_us + relaxed.byte_us) * 300.0
    rows = relaxed.insert_us + 2 * relaxed.update_us
    want = mean - (fixed_of(relaxed) + rows) - per_byte
    assert durable_excess(fit, relaxed) == pytest.approx(want, rel=1e-6)
    # what the intercept alone gave: the scale's excess on the fixed costs, not on the rows (three
    # times their cost here), so it misses at least twice the rows' cost
    assert fit.intercept - fixed_of(relaxed) < want - 2 * rows
    # varied shapes: the mean gap's excess, the fsyncs being the same for every transaction
    varied = [(g + 300.0, i, u, d, b) for g, i, u, d, b in _gaps(9, fixed_of(relaxed), relaxed.insert_us,
                                                                  relaxed.update_us, relaxed.delete_us, stalls=0.0)]
    fit = fit_samples(varied)
    n = len(varied)
    fit = replace(fit, mean_rows=tuple(sum(s[k] for s in varied) / n for k in (1, 2, 3)))
    assert durable_excess(fit, relaxed) == pytest.approx(300.0, rel=0.05)
    assert durable_excess(fit, replace(relaxed, fsync_byte_us=0.0, durable_byte_us=0.0)) == durable_excess(fit, relaxed)
    assert durable_excess(replace(fit, intercept=0.0), relaxed) == 0.0   # never below nothing


def test_one_worker_gaps_stay_bounded_and_spread_over_a_long_binlog():
    """A day of a busy replica's binlog is tens of millions of commit gaps: at most twice
    ``max_gaps`` are held at any time, the fit takes ``max_gaps`` of them spread evenly from the
    first to the last, each with its own wait flag, and the mean gap is every gap's."""
    from lagadvisor.sim.calibrate import _Gaps

    g = _Gaps(100_000, 0.0, max_gaps=64)
    held, ts, total = 0, 10_000_000, 0
    for k in range(10_000):
        step = 100 + k % 7
        ts += step
        total += step
        # sequence k + 10; every third transaction needs the one before (waited), the others two before
        g.add("f", ts, ts - 500_000, 1 + k, 1 + k, 0, 0, 100, k + 9 if k % 3 == 0 else k + 8, k + 10, 5)
        held = max(held, len(g.gaps.items))
    samples, waited = g.take()
    assert held < 2 * 64 and len(samples) == 64 and g.read == 9_999
    firsts = [i - 1 for _, i, *_ in samples]             # each kept gap's transaction, by its inserts
    assert firsts == sorted(firsts) and firsts[0] == 1 and firsts[-1] >= 9_000
    assert max(b - a for a, b in zip(firsts, firsts[1:])) <= 2 * (10_000 // 64)
    assert waited == [k % 3 == 0 for k in firsts]
    assert g.read_us / g.read == pytest.approx((total - 100) / 9_999)
    # fewer gaps than the cap: every one, as read
    small = _Gaps(100_000, 0.0, max_gaps=64)
    for k in range(50):
        small.add("f", 1_000 * k + 600_000, 100_000, 1, 1, 0, 0, 10, k, k + 1, 5)
    assert len(small.take()[0]) == small.read == 49


def test_a_thinned_fit_recovers_the_costs_of_the_whole():
    """The gaps of a long binlog fitted on an evenly spread 1 in 16 give the costs that all of them
    give (those of the stall-free gaps: the stalls' share is the sample's own)."""
    from lagadvisor.sim.calibrate import _Gaps

    g = _Gaps(0, 0.0, max_gaps=500)
    full = _gaps(21, 150.0, 40.0, 25.0, 35.0, n=8_000)
    ts = 1_000_000
    for k, (gap, i, u, d, b) in enumerate(full):
        ts += int(gap)
        g.add("f", ts, 1, i + u + d, i, u, d, b, k - 1, k + 1, _events(i, u, d))
    thin, _ = g.take()
    assert len(thin) == 500 and g.read == len(full) - 1
    a, b = fit_samples(full), fit_samples(thin)
    for cost, true in (("intercept", 150.0), ("insert_us", 40.0), ("update_us", 25.0), ("delete_us", 35.0)):
        assert getattr(a, cost) / a.stall_factor == pytest.approx(true, rel=0.05), cost
        assert getattr(b, cost) / b.stall_factor == pytest.approx(true, rel=0.1), cost


def test_a_base_model_s_commit_split_is_kept_by_every_calibration_scale():
    """A base model with a per-group commit cost (``commit_group_us``): the catch-up fit's scales
    (sim.calibrate ``_scaled``) and the live fit's measured commit time (sim.live
    ``_commit_split``) keep its split between the group and the member."""
    from lagadvisor.sim.calibrate import _scaled
    from lagadvisor.sim.live import _commit_split

    base = replace(CostModel(), commit_us=10.0, commit_group_us=40.0)
    m = _scaled(base, 1.5, 2.0, 1.0)
    assert m.commit_us == pytest.approx(30.0) and m.commit_group_us == pytest.approx(120.0)
    split = _commit_split(base, 100.0)
    assert split == pytest.approx({"commit_us": 20.0, "commit_group_us": 80.0})
    assert _commit_split(CostModel(), 100.0) == {"commit_us": 100.0, "commit_group_us": 0.0}
