"""The advisor's history and hot-row what-ifs replayed from the main pass's writeset log
(``advise.context.Context.what_if_facts``, ``sim.store.ReplayedFacts``, ``_native.WsReplay``)
instead of reading every file again: every transaction's facts equal those of a pass that reads
the files again with the what-if (the reference way), on every MySQL fixture, in memory and
spilled to disk, for histories small enough to fill many times and for ignored hot rows."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from conftest import fixture_dirs
from lagadvisor.advise.context import gather
from lagadvisor.depgraph.pipeline import ClockOptions, prepare
from lagadvisor.native import load
from lagadvisor.schema.ddl import load_schema_file
from lagadvisor.sim.facts import read_facts
from lagadvisor.sim.model import CostModel
from lagadvisor.sim.store import ReplayedFacts
from lagadvisor.writeset.tracker import WhatIf

pytestmark = pytest.mark.skipif(load() is None or not hasattr(load(), "WsReplay"), reason="native core not built")

MYSQL = [d for d in fixture_dirs() if not d.name.startswith("mariadb")]


def _paths(d):
    return sorted(str(p) for p in d.iterdir() if p.suffix[1:].isdigit())


@pytest.mark.parametrize("spill", [None, "300"], ids=["memory", "spilled"])
@pytest.mark.parametrize("fixture", MYSQL, ids=[d.name for d in MYSQL])
def test_replayed_what_ifs_equal_a_second_read(fixture, spill, monkeypatch):
    if spill:
        monkeypatch.setenv("LAGADVISOR_SPILL_TRANSACTIONS", spill)
    paths = _paths(fixture)
    schema = fixture / "schema.sql"
    catalog = load_schema_file(schema.read_text()) if schema.exists() else None
    for options in (ClockOptions(), ClockOptions(catalog=catalog)):
        ctx = gather(paths, options, CostModel(), None)
        assert ctx.ws_log is not None
        if spill:
            assert ctx.facts.spilled and ctx.ws_log.spilled
        hot = [k for k, _ in sorted(ctx.graph.hot_rows.items(), key=lambda kv: (-kv[1], kv[0]))]
        history = ctx.analysis.policies.history_size
        cases = [(WhatIf(), 3), (WhatIf(), 64), (WhatIf(), history * 4),
                 (WhatIf(ignore_rows=frozenset(hot[:5])), None), (WhatIf(ignore_rows=frozenset(hot[:1])), None),
                 (WhatIf(ignore_rows=frozenset(hot[:2])), 16)]
        for what_if, size in cases:
            replayed = ctx.what_if_facts(what_if, size)
            assert isinstance(replayed, ReplayedFacts)
            opts = replace(ctx.options, what_if=what_if, labels=bool(what_if.ignore_rows),
                           catalog=copy.deepcopy(ctx.options.catalog), history_size=size or ctx.options.history_size)
            again = list(read_facts(paths, opts, prepare(paths, opts)))
            assert list(replayed) == again, (fixture.name, what_if, size)
            if size == 3 and len(again) > 10:
                # a history of 3 fills at once: the what-if really changes the clock
                assert [f.clocks[2] for f in again] != [f.clocks[2] for f in ctx.facts]


def test_schema_what_ifs_still_read_again():
    """A primary key added or foreign keys dropped change which columns make the keys: those
    what-ifs read the files again (``tests/test_files_opened.py`` counts it)."""
    paths = _paths(MYSQL[0])
    ctx = gather(paths, ClockOptions(), CostModel(), None)
    assert not isinstance(ctx.what_if_facts(WhatIf(add_primary_key=frozenset({"x.y"}))), ReplayedFacts)
