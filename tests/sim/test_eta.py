"""GTID-set arithmetic and options of `lagadvisor eta` (the live behaviour: test_eta_live.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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


def test_render_says_never_when_the_source_writes_faster():
    from lagadvisor.sim.eta import Estimate, Option, render
    from lagadvisor.sim.model import ReplicaConfig

    cur = Option("current", ReplicaConfig(4, True, True), 10.0, None, None, None, True)
    more = Option("workers=8", ReplicaConfig(8, True, True), 5.0, 720.0, 600.0, 800.0)
    e = Estimate(0.0, 5000, 100, 140.0, 100.0, 2.0, [cur, more],
                 waits=[{"thread": "coordinator", "waiting_on": "working"},
                        {"thread": "worker", "waiting_on": "commit order"},
                        {"thread": "worker", "waiting_on": "commit order"}, {"thread": "worker", "waiting_on": "fsync"},
                        {"thread": "worker", "waiting_on": "coordinator"}])
    text = "\n".join(render(e))
    assert "falling behind by 40 trx/s: never catches up with 4 workers" in text
    assert "8 workers, durable, preserve_commit_order=ON: in 12.0 min" in text
    # issue 71: one coordinator, as the server has; what left is counted once, with separators
    assert ("applier threads now: 1 coordinator (working), 4 workers: 1 in an fsync, 2 waiting for commit "
            "order, 1 waiting for the coordinator") in text, text
    assert text.startswith("5,000 transactions left to apply")


def _snap(at, executed_to, received_to):
    from lagadvisor.sim.eta import Snapshot

    ex = f"{U}:1-{executed_to}" if executed_to else ""
    return Snapshot(at, f"{U}:1-{received_to}", ex, f"{U}:{executed_to + 1}-{received_to}", True, True)


def test_estimate_from_the_applier_progress():
    """Serial identical transactions (no apply spread: each costs exactly its mean): 10 applied
    in the 1 s window -> 80 left take 8 s; with 30 trx/s arriving (faster than 10/s) it never
    catches up; with none, the band is the ratio's."""
    from lagadvisor.sim.build import TrxFacts
    from lagadvisor.sim.eta import estimate
    from lagadvisor.sim.model import CostModel, ReplicaConfig

    facts = [TrxFacts(0, i + 1, (i, i, i, i), 0, 0, 3, 0, 300, ("c",), None) for i in range(100)]
    gtids = [f"{U}:{i + 1}" for i in range(100)]
    cfg = ReplicaConfig(1, True, False)
    quiet = estimate([_snap(0.0, 0, 100), _snap(1.0, 10, 100), _snap(1.5, 15, 100), _snap(2.0, 20, 100)],
                     facts, gtids, cfg, CostModel(apply_spread=0.0))
    assert quiet.left == 80 and quiet.applied_in_sample == 10 and quiet.arrival_rate == 0
    assert quiet.current.eta_s == pytest.approx(8.0, rel=0.02)
    busy = estimate([_snap(0.0, 0, 100), _snap(1.0, 10, 100), _snap(2.0, 20, 130)], facts, gtids, cfg,
                    CostModel(apply_spread=0.0))
    assert busy.arrival_rate == pytest.approx(30.0)
    assert busy.current.eta_s is None


def test_render_caught_up_is_one_line():
    from lagadvisor.sim.eta import Estimate, Option, render
    from lagadvisor.sim.model import ReplicaConfig

    e = Estimate(0.0, 0, 10, 0.0, 240.0, 2.0, [Option("current", ReplicaConfig(2), 0.0, 0.0, 0.0, 0.0, True)])
    lines = render(e)
    assert len(lines) == 1 and "caught up at" in lines[0] and "240 trx/s" in lines[0]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_gtid_index_finds_the_last_position_an_executed_set_covers(data):
    """The bisection per interval gives what testing every GTID gives, in order or not."""
    from lagadvisor.sim.eta import GtidIndex, gtid_in

    uuids = ["3e11fa47-71ca-11e1-9e33-c80aa9429562", "3e11fa47-71ca-11e1-9e33-c80aa9429562:tag", "aaaa"]
    n = data.draw(st.integers(0, 60))
    seqs = {u: data.draw(st.integers(1, 5)) for u in uuids}
    gtids = []
    for _ in range(n):
        u = data.draw(st.sampled_from(uuids))
        gtids.append(f"{u}:{seqs[u]}")
        seqs[u] += data.draw(st.integers(1, 3)) if data.draw(st.integers(0, 9)) else -1   # now and then out of order
    executed = {u: sorted((a, a + data.draw(st.integers(0, 6))) for a in
                          data.draw(st.lists(st.integers(1, 90), max_size=4))) for u in uuids}
    done = [i for i, g in enumerate(gtids) if gtid_in(executed, g)]
    assert GtidIndex(gtids).last_done(executed) == (max(done) if done else None)


def test_first_estimate_is_due_once_read_and_sampled():
    """sim.eta.first_due, over the snapshots server.eta polls: at --sample with the head and the
    strata read; at FIRST_BY_S whatever is read; at once when caught up."""
    import threading
    from types import SimpleNamespace

    from lagadvisor.sim.eta import FIRST_BY_S, MIN_HEAD, Snapshot, first_due

    def snap(at, unapplied="u:11-20"):
        return Snapshot(at, "u:1-20", "u:1-10", unapplied, True, True)

    unread, not_yet = SimpleNamespace(facts=[], finished_at=None), threading.Event()
    read, strata = SimpleNamespace(facts=[None] * MIN_HEAD, finished_at=None), threading.Event()
    strata.set()
    assert not first_due([snap(0.0), snap(6.0)], 10, 5.0, unread, not_yet)
    assert first_due([snap(0.0), snap(6.0)], 10, 5.0, read, strata)
    assert not first_due([snap(0.0), snap(1.0)], 10, 5.0, read, strata)
    assert first_due([snap(0.0), snap(FIRST_BY_S)], 10, 5.0, unread, not_yet)
    assert first_due([snap(0.0), snap(1.0, unapplied="")], 10, 5.0, unread, not_yet)
    # FIRST_BY_S counts from the command's start where it is given: its start-up and connection
    # (1.5 s here) count against the user's 10 s; a start long before (a library caller's process)
    # does not, nor does one after the first snapshot
    late = [snap(0.0), snap(FIRST_BY_S - 1.5)]
    assert first_due(late, 10, 5.0, unread, not_yet, started_at=-1.5)
    assert not first_due(late, 10, 5.0, unread, not_yet)
    assert not first_due(late, 10, 5.0, unread, not_yet, started_at=-3600.0)
    assert not first_due(late, 10, 5.0, unread, not_yet, started_at=0.5)


def test_the_process_start_is_read_from_proc(tmp_path):
    """sim.eta.process_started_at: /proc/self/stat's starttime (field 22, after a command name that
    may hold spaces and parentheses) against /proc/uptime, as a wall-clock time; None when
    unreadable."""
    import os
    import time

    from lagadvisor.sim.eta import process_started_at

    mine = process_started_at()
    assert mine is not None and time.time() - 3600 < mine <= time.time()
    with open("/proc/uptime", encoding="ascii") as f:
        uptime = float(f.read().split()[0])
    ticks = os.sysconf("SC_CLK_TCK")
    ten_s_ago = int((uptime - 10.0) * ticks)
    fields = ["S"] + ["0"] * 18 + [str(ten_s_ago)] + ["0"] * 30
    (tmp_path / "stat").write_text(f"4242 (a b) (c)) {' '.join(fields)}\n", encoding="ascii")
    got = process_started_at(str(tmp_path))
    assert got is not None and abs((time.time() - got) - 10.0) < 0.5
    (tmp_path / "stat").write_text("4242 (broken", encoding="ascii")
    assert process_started_at(str(tmp_path)) is None
    assert process_started_at(str(tmp_path / "none")) is None
