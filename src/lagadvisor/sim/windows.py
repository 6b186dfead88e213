"""Lag by time window: which hour (or quarter, or day) of the source's timeline the replica
falls behind in, and how far.

Windows are cut on the source's commit timeline (each transaction's arrival at the replica,
``SimResult.arrival_us``), aligned to multiples of the window in UTC (an hour window starts at
hh:00). A transaction belongs to the window its arrival falls in; its lag is its simulated
commit minus its arrival. Per window: transactions, lag p99 and max (exact, over that window's
transactions), and the time above the lag threshold between consecutive commits of the window.
"""

from __future__ import annotations

import bisect
import time
from array import array
from dataclasses import dataclass

#: Window lengths ``--window auto`` picks from (seconds).
CHOICES = (60, 300, 900, 3600, 6 * 3600, 86400)
#: ``auto`` splits inputs longer than this; shorter ones get no per-window report.
AUTO_MIN_SPAN_S = 2 * 3600


@dataclass(frozen=True, slots=True)
class LagWindow:
    start_us: int               # UTC, microseconds since the epoch (the window's first instant)
    end_us: int
    transactions: int
    lag_p99_seconds: float
    lag_max_seconds: float
    seconds_above_threshold: float

    def label(self) -> str:
        """``2026-11-22 02:00-03:00`` (UTC), the date left out when the window is a day."""
        a, b = self.start_us // 1_000_000, self.end_us // 1_000_000
        day = time.strftime("%Y-%m-%d", time.gmtime(a))
        if b - a >= 86400:
            return day
        fmt = "%H:%M:%S" if (b - a) % 60 else "%H:%M"
        return f"{day} {time.strftime(fmt, time.gmtime(a))}-{time.strftime(fmt, time.gmtime(b))}"

    def as_json(self) -> dict:
        return {"start": _iso(self.start_us), "end": _iso(self.end_us), "transactions": self.transactions,
                "lag_p99_seconds": round(self.lag_p99_seconds, 6), "lag_max_seconds": round(self.lag_max_seconds, 6),
                "seconds_above_threshold": round(self.seconds_above_threshold, 6)}


def _iso(us: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(us // 1_000_000))


def parse_window(text: str) -> float | None:
    """``--window``: ``auto`` (None: chosen from the span), ``off`` (0) or a duration such as
    ``90s``, ``15m``, ``1h``, ``1d`` (a bare number is seconds)."""
    from ..errors import ConfigError

    t = text.strip().lower()
    if t == "auto":
        return None
    if t in ("off", "none", "0"):
        return 0.0
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(t[-1:])
    num = t[:-1] if unit else t
    try:
        v = float(num) * (unit or 1)
    except ValueError:
        raise ConfigError(f"--window {text}: expected auto, off or a duration such as 15m, 1h, 1d") from None
    if not (v >= 1 and v <= 366 * 86400):
        raise ConfigError(f"--window {text}: expected a duration from 1s to 366d")
    return v


def auto_window(span_s: float) -> float:
    """The window for ``auto``: none (0) under :data:`AUTO_MIN_SPAN_S`, else the smallest of
    :data:`CHOICES` that cuts the span into at most 48 windows."""
    if span_s < AUTO_MIN_SPAN_S:
        return 0.0
    for c in CHOICES:
        if span_s / c <= 48:
            return float(c)
    return float(CHOICES[-1])


def lag_windows(arrival_us, commit_us, window_s: float, threshold_s: float, origin_us: int = 0) -> list[LagWindow]:
    """Per-window lag of one simulation (see the module doc), in time order; empty windows are
    left out. ``origin_us``: the absolute time (UTC) of arrival 0 (the simulation's arrivals are
    relative to the first commit)."""
    n = len(arrival_us)
    if n == 0 or window_s <= 0:
        return []
    arrival = arrival_us if isinstance(arrival_us, array) else array("d", arrival_us)
    commit = commit_us if isinstance(commit_us, array) else array("d", commit_us)
    if any(arrival[i] > arrival[i + 1] for i in range(n - 1)):
        order = sorted(range(n), key=arrival.__getitem__)  # arrivals out of order (several sources)
        arrival = array("d", (arrival[i] for i in order))
        commit = array("d", (commit[i] for i in order))
    w = int(window_s * 1_000_000)
    out = []
    lo = 0
    while lo < n:
        start = (int(arrival[lo]) + origin_us) // w * w
        end = start + w
        hi = bisect.bisect_left(arrival, end - origin_us, lo)
        if hi == lo:
            hi = lo + 1  # an arrival exactly at a float boundary
        out.append(_window(arrival, commit, lo, hi, start, end, threshold_s))
        lo = hi
    return out


def _window(arrival: array, commit: array, lo: int, hi: int, start: int, end: int, threshold_s: float) -> LagWindow:
    from . import engine

    native = engine.NATIVE
    if native is not None:  # the same statistics as sim.run._lag_stats, over the slice
        _p50, p99, mx, above, _ = native.sim_lag_stats(commit[lo:hi].tobytes(), arrival[lo:hi].tobytes(),
                                                       threshold_s * 1e6)
        return LagWindow(start, end, hi - lo, p99 / 1e6, mx / 1e6, above / 1e6)
    lags = sorted(commit[i] - arrival[i] for i in range(lo, hi))
    k = min(len(lags) - 1, max(0, int(round(0.99 * (len(lags) - 1)))))  # as sim.run.percentile
    order = sorted(range(lo, hi), key=commit.__getitem__)
    above = 0.0
    thr = threshold_s * 1e6
    for a, b in zip(order, order[1:]):
        if commit[a] - arrival[a] > thr:
            above += commit[b] - commit[a]
    return LagWindow(start, end, hi - lo, lags[k] / 1e6, lags[-1] / 1e6, above / 1e6)


def worst(windows: list[LagWindow], k: int = 5) -> list[LagWindow]:
    """The ``k`` windows with the largest lag p99 (then max lag), worst first."""
    return sorted(windows, key=lambda x: (-x.lag_p99_seconds, -x.lag_max_seconds, x.start_us))[:k]


__all__ = ["AUTO_MIN_SPAN_S", "CHOICES", "LagWindow", "auto_window", "lag_windows", "parse_window", "worst"]
