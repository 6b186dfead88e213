"""bench/replica_catchup.py's reading of its catch-ups (the 2-core check-back, issue 33's
must-show 3): the paired speedups over the rounds without CPU steal, and their table."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_replica_catchup", ROOT / "bench" / "replica_catchup.py")
catchup = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = catchup
spec.loader.exec_module(catchup)


def test_a_round_with_steal_on_either_side_leaves_the_clean_speedup():
    runs = {1: [10.0, 12.0, 10.0], 4: [5.0, 4.0, 2.5]}
    # round 2's one-worker run lost 2 s of its 12 (17%), round 3's four-worker run 0.5 of 2.5
    steal = {1: [0.1, 2.0, 0.0], 4: [0.2, 0.0, 0.5]}
    assert catchup.clean_speedup(runs, steal, 4) == (2.0, 1)
    steal[4][2] = 0.1   # now 4%: round 3 counts; median_high of 2.0 and 4.0
    assert catchup.clean_speedup(runs, steal, 4) == (4.0, 2)
    assert catchup.clean_speedup(runs, {1: [5.0] * 3, 4: [0.0] * 3}, 4) == (None, 0)
    assert catchup.clean_speedup(runs, None, 4) == (None, 0)


def test_the_table_says_how_many_rounds_each_figure_stands_on():
    committed = json.loads((ROOT / "bench" / "results_default_1128e.json").read_text())["results"]
    lines, summary = catchup.table(committed)
    assert lines[0].endswith("| without steal (rounds) | its error |") and len(lines) == 2 + len(committed)
    multi = [r for r in committed if r["workers"] > 1]
    within = sum(abs(r["speedup_error"]) <= 0.15 for r in multi)
    assert summary.startswith(f"{within} of {len(multi)} speedups within 15%")
    none = [r for r in multi if r["measured_speedup_clean"] is None]
    assert f"({len(none)} without such a round)" in summary
    for r, line in zip(committed, lines[2:]):
        assert ("none of" in line) == (r["measured_speedup_clean"] is None), line
    # a run from before the steal was kept: the table as it was, no steal columns
    old = json.loads((ROOT / "bench" / "results_default_1126.json").read_text())["results"]
    lines, summary = catchup.table(old)
    assert "steal" not in lines[0] and "steal" not in summary
