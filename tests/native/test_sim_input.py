"""The simulation input built natively from fact columns equals the reference's loop over the
``TrxFacts`` (arrival, apply work, needs), float for float, on every fixture."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, fixture_dirs
from lagadvisor.depgraph.pipeline import ClockOptions
from lagadvisor.depgraph.read import prepare
from lagadvisor.sim.build import CLOCKS, base_columns, logical_clock
from lagadvisor.sim.facts import native_facts
from lagadvisor.sim.model import CostModel, extra_fk_checks, extra_index_entries


def _server(fixture) -> str:
    manifest = json.loads((FIXTURES / "MANIFEST").read_text(encoding="utf-8"))
    return next(m["server"] for m in manifest if m["name"] == fixture.name)


def _files(fixture) -> list[str]:
    return [str(p) for p in sorted(fixture.iterdir()) if p.suffix[1:].isdigit()]


@pytest.mark.parametrize("fixture", [d for d in fixture_dirs() if _server(d) == "mariadb"], ids=lambda d: d.name)
def test_mariadb_facts_come_from_the_reference(fixture):
    """The native core gives every MariaDB binlog to the reference: no native facts."""
    files = _files(fixture)
    assert native_facts(files, ClockOptions(), prepare(files, ClockOptions())) is None


@pytest.mark.parametrize("fixture", [d for d in fixture_dirs() if _server(d) != "mariadb"], ids=lambda d: d.name)
def test_native_input_equals_the_loop(fixture):
    files = _files(fixture)
    facts = native_facts(files, ClockOptions(), prepare(files, ClockOptions()))
    assert facts is not None and facts.columns is not None
    from lagadvisor.sim.build import _native_columns

    assert _native_columns(facts)[0] is not None  # the native path is the one compared
    plain = list(facts)  # no columns: the reference loops
    cost = CostModel(trx_us=1.5, byte_us=0.001, scan_row_us=0.3, fk_check_us=7.25, index_entry_us=0.75)
    c = facts.columns
    extra_checks = sum(map(extra_fk_checks, c.fk_checks, c.inserts))
    extra_entries = sum(map(extra_index_entries, c.index_entries, c.inserts, c.updates, c.deletes))
    # both schema terms are exercised past the rows' own (the single_* fixtures re-parent children,
    # delete parents and update indexed columns); the sysbench one has neither
    assert (extra_checks > 0 and extra_entries > 0) or fixture.name.startswith("sysbench")
    for catch_up in (False, True):
        assert base_columns(facts, cost, catch_up=catch_up) == base_columns(plain, cost, catch_up=catch_up)
        for clock in CLOCKS:
            a = logical_clock(facts, clock, cost, catch_up=catch_up)
            b = logical_clock(plain, clock, cost, catch_up=catch_up)
            assert (a.arrival_us, a.work_us, a.nbytes, a.need, a.need_kind) == \
                   (b.arrival_us, b.work_us, b.nbytes, b.need, b.need_kind)
