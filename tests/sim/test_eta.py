"""GTID-set arithmetic and options of `lagadvisor eta` (the live behaviour: test_eta_live.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from lagadvisor.errors import ConfigError
from lagadvisor.sim.eta import gtid_count, gtid_in, gtid_subset, parse_duration, parse_gtid_set, prediction_errors, Prediction

U = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def test_gtid_sets():
    s = parse_gtid_set(f"{U}:1-5:7,\n{U.replace('3e', '4f')}:tag_a:3")
    assert gtid_count(s) == 7
    assert gtid_in(s, f"{U}:5") and not gtid_in(s, f"{U}:6") and gtid_in(s, f"{U.upper()}:7")
    assert gtid_in(s, f"{U.replace('3e', '4f')}:tag_a:3") and not gtid_in(s, f"{U.replace('3e', '4f')}:3")
    assert gtid_subset(parse_gtid_set(f"{U}:2-4"), s) and not gtid_subset(parse_gtid_set(f"{U}:4-7"), s)
    assert gtid_subset(parse_gtid_set(""), s)
    with pytest.raises(ConfigError):
        parse_gtid_set(f"{U}:1-y")


def test_durations_and_errors():
    assert parse_duration("90") == 90 and parse_duration("10m") == 600 and parse_duration("1.5h") == 5400
    for bad in ("", "ten", "-1s", "infs"):
        with pytest.raises(ConfigError):
            parse_duration(bad)
    errs = prediction_errors([Prediction(100.0, 12.0), Prediction(105.0, None)], 110.0)
    assert errs[0]["error"] == pytest.approx(0.2) and errs[1]["error"] is None


def test_eta_needs_a_replica():
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "eta", "--no-defaults"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("lagadvisor: error:") and r.stderr.count("\n") == 1
    assert "--host" in r.stderr
