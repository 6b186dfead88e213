"""Lag by time window (issue 14.4): windows cut on the source's commit timeline, aligned in UTC,
each window's lag p99 and max exact over its transactions; simulate and advise report them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from lagadvisor.errors import ConfigError
from lagadvisor.sim.run import percentile
from lagadvisor.sim.windows import auto_window, lag_windows, parse_window, worst

HOUR = 3600 * 1_000_000


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10 * HOUR), st.integers(0, 600_000_000)), min_size=1, max_size=300),
       st.sampled_from([60, 900, 3600]), st.integers(0, 2 * HOUR))
def test_windows_equal_a_brute_force_split(trx, window_s, origin):
    arrival = [float(a) for a, _ in trx]
    commit = [float(a + lag) for a, lag in trx]
    got = lag_windows(arrival, commit, window_s, 1.0, origin)
    w = window_s * 1_000_000
    by: dict[int, list[float]] = {}
    for a, c in zip(arrival, commit):
        by.setdefault((int(a) + origin) // w * w, []).append(c - a)
    assert [x.start_us for x in got] == sorted(by)
    for x in got:
        lags = sorted(by[x.start_us])
        assert x.end_us - x.start_us == w and x.start_us % w == 0
        assert x.transactions == len(lags)
        assert x.lag_p99_seconds == percentile(lags, 99) / 1e6
        assert x.lag_max_seconds == lags[-1] / 1e6
    assert sum(x.transactions for x in got) == len(trx)


def test_worst_first_and_labels():
    arrival = [0.0, 10.0, HOUR + 5.0, 2 * HOUR + 1.0]
    commit = [1e6, 20.0, HOUR + 5e7, 2 * HOUR + 2.0]
    wins = lag_windows(arrival, commit, 3600, 1.0, origin_us=1_700_000_000_000_000 // HOUR * HOUR)
    assert [round(x.lag_max_seconds, 3) for x in worst(wins, 3)] == [50.0, 1.0, 0.0]
    assert worst(wins, 1)[0].label().endswith(":00") and "-" in worst(wins, 1)[0].label()


@pytest.mark.parametrize("text,expect", [("auto", None), ("off", 0.0), ("90s", 90.0), ("15m", 900.0), ("1h", 3600.0),
                                         ("1d", 86400.0), ("120", 120.0)])
def test_parse_window(text, expect):
    assert parse_window(text) == expect


@pytest.mark.parametrize("text", ["", "x", "0.5s", "-1h", "nanh", "400d"])
def test_parse_window_rejects(text):
    with pytest.raises(ConfigError):
        parse_window(text)


def test_auto_window_only_for_long_inputs():
    assert auto_window(1800) == 0
    assert auto_window(5 * 3600) == 900      # 20 windows of 15 min
    assert auto_window(24 * 3600) == 3600    # 24 hours
    assert auto_window(7 * 86400) == 6 * 3600


def _run(*args):
    r = subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, COLUMNS="80"))
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_simulate_and_advise_report_windows():
    path = str(FIXTURES / "sysbench_oltp_write_only" / "binlog.000001")
    doc = json.loads(_run("simulate", "--workers", "1,4", "--policy", "recorded", "--window", "1s", "--format",
                          "json", path))
    assert doc["window_seconds"] == 1.0
    for row in doc["results"]:
        wins = row["windows"]
        assert len(wins) >= 2 and sum(w["transactions"] for w in wins) == doc["transactions"]
        assert max(w["lag_p99_seconds"] for w in wins) <= row["lag_max_seconds"] + 1e-6
    text = _run("simulate", "--workers", "1,4", "--policy", "recorded", "--window", "1s", path)
    assert "lag p99 by 1s window (UTC), recorded" in text
    assert "windows" not in json.loads(_run("simulate", "--workers", "1", "--format", "json", path))["results"][0]
    adv = json.loads(_run("advise", "--no-progress", "--window", "1s", "--format", "json", path))
    ww = adv["summary"]["worst_window"]
    assert ww["window_seconds"] == 1.0 and ww["windows"] >= 2 and ww["lag_p99_seconds_with_plan"] is not None
    assert json.loads(_run("advise", "--no-progress", "--format", "json", path))["summary"]["worst_window"] is None
