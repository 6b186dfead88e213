"""The cost model's foreign-key check and index entry terms (``CostModel.fk_check_us``,
``index_entry_us``) price only what a transaction has past what the per-row costs hold
(``sim.model.extra_fk_checks``, ``extra_index_entries``), the same in the native core's input
columns (sim.rs ``sim_base_columns``) as in ``CostModel.apply_us``."""

from __future__ import annotations

from array import array

import pytest

from lagadvisor.sim.model import CostModel, extra_fk_checks, extra_index_entries
from conftest import need_native


@pytest.mark.parametrize("entries,ins,upd,dele,extra", [
    (0, 1, 2, 1, 0),     # no schema known (nothing counted): nothing past the rows' own
    (6, 1, 2, 1, 0),     # the lab's shape: one entry an inserted or deleted row, two an updated one
    (4, 1, 2, 1, 0),     # fewer than the rows hold is not a credit
    (32, 1, 2, 1, 26),   # eight indexes, every indexed column updated (the idx8 backlog)
    (3, 0, 1, 0, 1),     # an update that changes two indexes' columns
])
def test_extra_index_entries(entries, ins, upd, dele, extra):
    assert extra_index_entries(entries, ins, upd, dele) == extra


@pytest.mark.parametrize("checks,ins,extra", [(0, 3, 0), (1, 1, 0), (2, 1, 1), (1, 0, 1), (5, 2, 3)])
def test_extra_fk_checks(checks, ins, extra):
    assert extra_fk_checks(checks, ins) == extra


def test_apply_prices_only_the_extra():
    m = CostModel()
    assert m.fk_check_us > 0 and m.index_entry_us > 0  # the built-in model prices both
    base = m.apply_us(1, 2, 1, 500, events=9)
    # what the lab's transactions have adds nothing: the fitted per-row costs hold it
    assert m.apply_us(1, 2, 1, 500, fk_checks=1, index_entries=6, events=9) == base
    got = m.apply_us(1, 2, 1, 500, fk_checks=3, index_entries=16, events=9)
    assert got == pytest.approx(base + 2 * m.fk_check_us + 10 * m.index_entry_us)


def test_native_input_prices_the_same():
    from lagadvisor.sim.engine import NATIVE

    need_native()
    rows = [(1, 2, 1, 0, 6), (1, 2, 1, 3, 16), (0, 1, 0, 2, 0), (2, 0, 0, 1, 1), (0, 0, 3, 0, 40)]
    cols = {n: array("q", v) for n, v in zip(("inserts", "updates", "deletes", "fk_checks", "index_entries"),
                                             zip(*rows))}
    n = len(rows)
    zeros, events, nbytes = array("q", [0] * n), array("q", [5] * n), array("q", [100 * (i + 1) for i in range(n)])
    m = CostModel(fk_check_us=75.0, index_entry_us=3.0)
    _, work = NATIVE.sim_base_columns(zeros.tobytes(), cols["inserts"].tobytes(), cols["updates"].tobytes(),
                                      cols["deletes"].tobytes(), nbytes.tobytes(), zeros.tobytes(),
                                      cols["fk_checks"].tobytes(), cols["index_entries"].tobytes(),
                                      events.tobytes(), m.work_weights(), True)
    got = array("d")
    got.frombytes(work)
    want = [m.apply_us(i, u, d, nbytes[k], 0, fk, e, 5) for k, (i, u, d, fk, e) in enumerate(rows)]
    assert list(got) == want  # float for float


@pytest.mark.parametrize("spill", [None, "300"], ids=["memory", "spilled"])
def test_advise_counts_them_natively_as_the_model_prices_them(spill, monkeypatch):
    """``advise.context.Context.schema_counts`` (the extra ones summed natively as a model's apply
    time) equals the count transaction by transaction with ``extra_*``, in memory and spilled."""
    from conftest import fixture_context
    from lagadvisor.sim.build import fact_rows

    if spill:
        monkeypatch.setenv("LAGADVISOR_SPILL_TRANSACTIONS", spill)
    ctx = fixture_context("single_full")
    assert bool(spill) == bool(getattr(ctx.facts, "spilled", False))
    rows = list(fact_rows(ctx.facts, ("index_entries", "fk_checks", "inserts", "updates", "deletes")))
    want = {"entries": sum(r[0] for r in rows), "checks": sum(r[1] for r in rows),
            "extra_entries": sum(extra_index_entries(r[0], *r[2:]) for r in rows),
            "extra_checks": sum(extra_fk_checks(r[1], r[2]) for r in rows)}
    assert ctx.schema_counts() == want
    assert want["extra_entries"] > 0 and want["extra_checks"] > 0  # both exercised (re-parented children)


def test_a_spilled_sum_reads_its_column_alone(monkeypatch):
    """``sim.build.fact_sum`` of a spilled store reads back that one column of each chunk (8 bytes
    a transaction), not every column: a day of binlogs spills gigabytes."""
    from conftest import fixture_context
    from lagadvisor.sim.build import fact_rows, fact_sum

    monkeypatch.setenv("LAGADVISOR_SPILL_TRANSACTIONS", "300")
    store = fixture_context("single_full").facts
    assert store.spilled
    want = sum(r[0] for r in fact_rows(store, ("index_entries",)))
    read = _spill_reads(store, monkeypatch)
    assert fact_sum(store, "index_entries") == want > 0
    assert sum(read) == 8 * len(store)


def test_advise_makes_no_pass_for_a_count_that_is_zero(monkeypatch):
    """``Context.schema_counts`` prices the extra ones with a native pass over the facts only
    where the input has some: sysbench's binlog writes index entries (its ``k``) and checks no
    foreign key, so one pass, for the entries."""
    from conftest import fixture_context
    from lagadvisor.advise.context import Context

    ctx = fixture_context("sysbench_oltp_write_only")
    passes = []
    real = Context._work_sum
    monkeypatch.setattr(Context, "_work_sum", lambda self, cost: passes.append(cost) or real(self, cost))
    counts = ctx.schema_counts()
    assert counts["entries"] > 0 and counts["checks"] == counts["extra_checks"] == 0
    assert [(c.index_entry_us, c.fk_check_us) for c in passes] == [(1.0, 0.0)]


def test_the_largest_transactions_are_priced_in_one_pass_reading_their_columns(monkeypatch):
    """``advise.rules._largest_apply_us``: every one of the input's largest transactions priced
    as ``CostModel.apply_of`` prices it, in memory and spilled alike; spilled, one pass that reads
    back the nine columns the price needs, not each column of the store once per transaction."""
    from conftest import fixture_context
    from lagadvisor.advise.rules import _APPLY_COLUMNS, _largest_apply_us

    memory = fixture_context("single_full")
    sizes = [(b, r) for b, r, _, _ in memory.analysis.total.largest_sorted()]
    assert len(sizes) > 3
    want = {(f.nbytes, f.inserts + f.updates + f.deletes): CostModel().apply_of(f) for f in reversed(list(memory.facts))}
    assert _largest_apply_us(memory, sizes) == {s: want[s] for s in sizes}
    monkeypatch.setenv("LAGADVISOR_SPILL_TRANSACTIONS", "300")
    spilled = fixture_context("single_full")
    assert spilled.facts.spilled
    read = _spill_reads(spilled.facts, monkeypatch)
    assert _largest_apply_us(spilled, sizes) == {s: want[s] for s in sizes}
    assert sum(read) <= 8 * len(spilled.facts) * (1 + len(_APPLY_COLUMNS))


def _spill_reads(store, monkeypatch) -> list[int]:
    """The byte counts ``store`` reads back from its spill file from now on."""
    read: list[int] = []
    real = store._file.read
    monkeypatch.setattr(store._file, "read", lambda *a: read.append(a[1]) or real(*a))
    return read
