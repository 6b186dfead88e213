"""Lag statistics of one simulation over every transaction's commit and arrival times (the
exact ones; ``sim.stream`` gathers them as the engine commits and switches to a sketch past its
cap)."""

from __future__ import annotations

from array import array

from ..native.loader import require
from . import engine
from .engine import SimResult


def percentile(sorted_vals: list[float], p: float) -> float:
    if not sorted_vals:
        return 0.0
    k = min(len(sorted_vals) - 1, max(0, int(round(p / 100.0 * (len(sorted_vals) - 1)))))
    return sorted_vals[k]


def lag_stats(res: SimResult, threshold_s: float) -> tuple[float, float, float, float, list]:
    """Lag p50, p99, max, seconds above *threshold_s*, and a ~200-point (commit s, lag s) series."""
    if engine.NATIVE is not None:
        return _lag_stats_native(res, threshold_s)
    return _lag_stats_python(res, threshold_s)


_lag_stats = lag_stats


def _lag_stats_native(res: SimResult, threshold_s: float) -> tuple[float, float, float, float, list]:
    native = require()  # as sim.engine.simulate_native: ImportError if not built
    commit = res.commit_us if isinstance(res.commit_us, array) else array("d", res.commit_us)
    arrival = res.arrival_us if isinstance(res.arrival_us, array) else array("d", res.arrival_us)
    p50, p99, mx, above, picks = native.sim_lag_stats(commit.tobytes(), arrival.tobytes(), threshold_s * 1e6)
    series = [(round(commit[i] / 1e6, 6), round((commit[i] - arrival[i]) / 1e6, 6)) for i in picks]
    return (p50 / 1e6, p99 / 1e6, mx / 1e6, above / 1e6, series)


def _lag_stats_python(res: SimResult, threshold_s: float) -> tuple[float, float, float, float, list]:
    lags = res.lags_us()
    s = sorted(lags)
    above = 0.0
    # time above threshold: between consecutive commits, lag is at least the current one's
    order = sorted(range(len(lags)), key=lambda i: res.commit_us[i])
    series = []
    step = max(1, len(order) // 200)
    for k, i in enumerate(order):
        if k % step == 0:
            series.append((round(res.commit_us[i] / 1e6, 6), round(lags[i] / 1e6, 6)))
        if lags[i] > threshold_s * 1e6 and k + 1 < len(order):
            above += res.commit_us[order[k + 1]] - res.commit_us[i]
    return (percentile(s, 50) / 1e6, percentile(s, 99) / 1e6, (s[-1] if s else 0.0) / 1e6, above / 1e6, series)


__all__ = ["lag_stats", "percentile"]
