"""The group-commit-delay what-if (``advise.rules.group_commit_delay``): the source's recorded
clock re-cut into the commit groups ``binlog_group_commit_sync_delay`` would have made. The list
of ``TrxFacts`` (``delayed_groups``, the reference), its column twin (``delayed_recorded``), the
native ``sim_delayed_recorded`` chunk by chunk, and the view the rule simulates
(``DelayedGroups``: bounded memory, however long the input) give the same clock and the same
simulated catch-up."""

from __future__ import annotations

import json
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPUS, fixture_context, run_advise, skip_without_native
from lagadvisor.advise.rules import DelayedGroups, delayed_facts, delayed_groups, delayed_recorded
from lagadvisor.kinds import Policy, WhatIfChange, WhatIfKey
from lagadvisor.sim import engine
from lagadvisor.sim.build import TrxFacts

native = skip_without_native("sim_delayed_recorded")


def _facts(rows) -> list[TrxFacts]:
    return [TrxFacts(fi, seq, (lc, 0, 0, 0), ts, 1, 0, 0, 100, (), None) for fi, seq, ts, lc in rows]


@st.composite
def _run(draw):
    """Files of transactions with increasing sequence numbers, last_committed in [-1, seq) and
    commit times that step 0-3,000 us (sometimes back), and where to cut the chunks."""
    rows = []
    for fi in range(draw(st.integers(1, 3))):
        ts = draw(st.integers(0, 10_000))
        for seq in range(1, draw(st.integers(0, 40)) + 1):
            ts += draw(st.integers(-200, 3_000))
            rows.append((fi, seq, ts, draw(st.integers(-1, seq - 1))))
    cuts = sorted(set(draw(st.lists(st.integers(0, len(rows)), max_size=4))))
    return rows, cuts, draw(st.sampled_from([0, 100, 500, 2_000]))


@native
@settings(max_examples=200, deadline=None)
@given(_run())
def test_the_columns_and_the_native_core_delay_as_the_list_does(run):
    rows, cuts, delay = run
    want = [f.clocks[0] for f in delayed_groups(_facts(rows), delay)]
    cols = [array("q", c) for c in zip(*rows)] if rows else [array("q") for _ in range(4)]
    assert list(delayed_recorded(*cols, delay)[0]) == want
    got, py_got = array("q"), array("q")
    state = py_state = (-1, 0, 0, 0, 0)
    for a, b in zip([0, *cuts], [*cuts, len(rows)]):
        part = [c[a:b] for c in cols]
        out, state = engine.NATIVE.sim_delayed_recorded(*(c.tobytes() for c in part), delay, state)
        got.frombytes(out)
        out, py_state = delayed_recorded(*part, delay, py_state)
        py_got.extend(out)
    assert list(got) == want and list(py_got) == want and state == py_state


@native
@pytest.mark.parametrize("spill", [None, "300"], ids=["memory", "spilled"])
def test_the_view_simulates_what_the_list_does(spill, monkeypatch):
    """A real MySQL binlog's facts (in memory, and spilled every 300 transactions): the catch-up
    simulated on the view equals the one on the reference's list, at every delay the rule tries,
    and the view keeps no copy of the facts (it reads them from the store as it goes)."""
    if spill:
        monkeypatch.setenv("LAGADVISOR_SPILL_TRANSACTIONS", spill)
    ctx = fixture_context("single_full")
    assert bool(spill) == bool(getattr(ctx.facts, "spilled", False))
    listed = list(ctx.facts)
    changed = 0
    for delay in (100, 500, 1000, 2000, 5000):
        view = delayed_facts(ctx.facts, delay)
        assert isinstance(view, DelayedGroups) and not hasattr(view, "facts")
        ref = delayed_groups(listed, delay)
        got = [v for _, c in view.chunks(("recorded",)) for v in c.recorded]
        assert got == [f.clocks[0] for f in ref]
        changed += sum(a != b.clocks[0] for a, b in zip(got, listed))
        key = WhatIfKey(WhatIfChange.SYNC_DELAY, delay)
        for w in (2, 8):  # two contexts: each its own simulation cache
            assert ctx.with_cost(ctx.cost).run(Policy.RECORDED, w, facts=view, key=key).apply_us == \
                ctx.with_cost(ctx.cost).run(Policy.RECORDED, w, facts=ref, key=key).apply_us
    assert changed > 0  # the delays re-cut the groups: not a clock left as it was


@pytest.mark.corpus
def test_a_commit_order_source_s_advice_is_the_same_spilled(monkeypatch):
    """A real MySQL 8.0.33 binlog under COMMIT_ORDER (the optional corpus' im_service), whose
    advice simulates the five delays: its findings and summary are the same when the facts spill
    every 4,096 transactions (the view reads them back chunk by chunk) as in memory."""
    f = CORPUS / "im_service" / "binlog.000009"

    def finding(spill):
        if spill:
            monkeypatch.setenv("LAGADVISOR_SPILL_TRANSACTIONS", spill)  # the subprocess inherits it
        r = run_advise(str(f), "--format", "json")
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["input"]["written_policy"] == "COMMIT_ORDER"
        return doc["findings"], doc["summary"]

    assert finding(None) == finding("4096")

