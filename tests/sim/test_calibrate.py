"""The commit-gap regression of `lagadvisor calibrate` (sim/calibrate.py)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagadvisor.errors import ConfigError
from lagadvisor.sim.calibrate import fit_samples, held_out_band, redo_share_of
from lagadvisor.sim.live import busy_gaps
from lagadvisor.sim.model import CostModel


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
