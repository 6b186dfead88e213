"""The advisor's what-ifs replayed from the main pass's writeset log
(``advise.context.Context.what_if_facts``, ``sim.store.ReplayedFacts``, ``_native.WsReplay``)
instead of reading every file again: every transaction's facts equal those of a pass that reads
the files again with the what-if (the reference way), on every MySQL fixture, in memory and
spilled to disk, with and without the fixture's schema: histories small enough to fill many
times, ignored hot rows, a primary key on keyless tables (hashed alongside in the main pass),
dropped foreign keys."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from conftest import fixture_dirs, skip_without_native
from lagadvisor.advise.context import gather
from lagadvisor.depgraph.pipeline import ClockOptions
from lagadvisor.depgraph.read import prepare
from lagadvisor.native import load
from lagadvisor.schema.ddl import load_schema_file
from lagadvisor.sim.facts import read_facts
from lagadvisor.sim.model import CostModel
from lagadvisor.sim.store import ReplayedFacts
from lagadvisor.writeset.tracker import WhatIf

pytestmark = skip_without_native("WsReplay")

MYSQL = [d for d in fixture_dirs() if not d.name.startswith("mariadb")]


def _paths(d):
    return sorted(str(p) for p in d.iterdir() if p.suffix[1:].isdigit())


@pytest.mark.parametrize("spill", [None, "300"], ids=["memory", "spilled"])
@pytest.mark.parametrize("fixture", MYSQL, ids=[d.name for d in MYSQL])
def test_replayed_what_ifs_equal_a_second_read(fixture, spill, monkeypatch):
    if spill:
        monkeypatch.setenv("LAGADVISOR_SPILL_TRANSACTIONS", spill)
        # and the log handed over in small chunks while a file is read, as a 1 GB file's is
        monkeypatch.setattr("lagadvisor.native.run.WS_LOG_CHUNK", 64)
    paths = _paths(fixture)
    schema = fixture / "schema.sql"
    catalog = load_schema_file(schema.read_text()) if schema.exists() else None
    for options in (ClockOptions(), ClockOptions(catalog=catalog)):
        ctx = gather(paths, options, CostModel(), None)
        assert ctx.ws_log is not None
        if spill:
            assert ctx.facts.spilled and ctx.ws_log.spilled
        hot = [str(k) for k, _ in sorted(ctx.graph.hot_rows.items(), key=lambda kv: (-kv[1], kv[0]))]
        history = ctx.analysis.policies.history_size
        fallback = ctx.analysis.policies.fallback_tables
        keyless = frozenset(t.lower() for r, t, _ in fallback if r == "no_primary_key")
        parents = frozenset(t.lower() for r, t, _ in fallback if r == "fk_parent")
        every = frozenset(t.lower() for _, t, _ in fallback) | {"nosuch.table"}
        cases = [(WhatIf(), 3), (WhatIf(), 64), (WhatIf(), history * 4),
                 (WhatIf(ignore_rows=frozenset(hot[:5])), None), (WhatIf(ignore_rows=frozenset(hot[:1])), None),
                 (WhatIf(ignore_rows=frozenset(hot[:2])), 16),
                 (WhatIf(add_primary_key=keyless), None), (WhatIf(add_primary_key=every), None),
                 (WhatIf(add_primary_key=frozenset(sorted(keyless)[:1])), 8),
                 (WhatIf(drop_foreign_keys_to=parents), None), (WhatIf(drop_foreign_keys_to=every), None),
                 (WhatIf(drop_foreign_keys_to=frozenset(sorted(parents)[:1])), 8)]
        for what_if, size in cases:
            replayed = ctx.what_if_facts(what_if, size)
            assert isinstance(replayed, ReplayedFacts)
            opts = replace(ctx.options, what_if=what_if, labels=bool(what_if.ignore_rows),
                           catalog=copy.deepcopy(ctx.options.catalog), history_size=size or ctx.options.history_size)
            again = list(read_facts(paths, opts, prepare(paths, opts)).facts)
            assert list(replayed) == again, (fixture.name, what_if, size)
            if size == 3 and len(again) > 10:
                # a history of 3 fills at once: the what-if really changes the clock
                assert [f.clocks[2] for f in again] != [f.clocks[2] for f in ctx.facts]


def test_the_fixtures_exercise_every_what_if():
    """The equality above is not vacuous: some fixture has keyless tables and foreign-key
    parents, and replaying their what-ifs changes the WRITESET clock."""
    d = next(d for d in MYSQL if d.name == "single_full")
    ctx = gather(_paths(d), ClockOptions(), CostModel(), None)
    reasons = {r for r, _, _ in ctx.analysis.policies.fallback_tables}
    assert {"no_primary_key", "fk_parent"} <= reasons
    base = [f.clocks[2] for f in ctx.facts]
    for r, key in (("no_primary_key", "add_primary_key"), ("fk_parent", "drop_foreign_keys_to")):
        names = frozenset(t.lower() for rr, t, _ in ctx.analysis.policies.fallback_tables if rr == r)
        assert [f.clocks[2] for f in ctx.what_if_facts(WhatIf(**{key: names}))] != base, key
    # dropping the foreign keys to the parents drops the checks they cost (TrxFacts.fk_checks)
    parents = frozenset(t.lower() for r, t, _ in ctx.analysis.policies.fallback_tables if r == "fk_parent")
    assert sum(f.fk_checks for f in ctx.facts) > 0
    assert sum(f.fk_checks for f in ctx.what_if_facts(WhatIf(drop_foreign_keys_to=parents))) == 0


def test_an_unsafe_log_reads_again(monkeypatch):
    """A transaction the primary-key what-if cannot replay exactly (counted by the native core)
    sends the schema what-ifs back to a second read; the others still replay."""
    d = next(d for d in MYSQL if d.name == "single_full")
    ctx = gather(_paths(d), ClockOptions(), CostModel(), None)
    ctx.ws_log.unsafe = 1
    assert not isinstance(ctx.what_if_facts(WhatIf(add_primary_key=frozenset({"wl.t_nokey"}))), ReplayedFacts)
    assert isinstance(ctx.what_if_facts(WhatIf(ignore_rows=frozenset({"x"}))), ReplayedFacts)


@pytest.mark.corpus
def test_corpus_what_ifs_equal_a_second_read():
    """The same over the shared corpus (MySQL 5.7 to 9.x binlogs of other projects' tests): every
    what-if the rules could ask, replayed, equals a second read."""
    from conftest import corpus_files

    compared = 0
    for path in corpus_files():
        paths = [str(path)]
        try:
            ctx = gather(paths, ClockOptions(), CostModel(), None)
        except Exception:  # noqa: BLE001 - files the reader refuses are the bad-input tests' business
            continue
        if ctx.ws_log is None or ctx.analysis.policies is None:
            continue
        every = frozenset(t.lower() for _, t, _ in ctx.analysis.policies.fallback_tables)
        hot = frozenset(str(k) for k, _ in sorted(ctx.graph.hot_rows.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
        for what_if, size in ((WhatIf(add_primary_key=every), None), (WhatIf(drop_foreign_keys_to=every), None),
                              (WhatIf(), 5), (WhatIf(ignore_rows=hot), None)):
            replayed = ctx.what_if_facts(what_if, size)
            opts = replace(ctx.options, what_if=what_if, labels=bool(what_if.ignore_rows),
                           catalog=copy.deepcopy(ctx.options.catalog), history_size=size or ctx.options.history_size)
            assert list(replayed) == list(read_facts(paths, opts, prepare(paths, opts)).facts), (path.name, what_if, size)
            compared += 1
    assert compared >= 40
