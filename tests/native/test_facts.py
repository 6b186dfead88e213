"""The simulation's facts through the native core against the reference, on everything we have.

For every fixture (with and without its schema file) and every corpus file, the facts the native
analyzer collects (``Analyzer.collect_facts``, :func:`lagadvisor.sim.facts.native_facts`) equal
``facts_of`` over ``run_clocks`` (the reference) field by field, or the native core gives the run
back for a reason listed in ``EXPECTED_FALLBACK`` (the same list as ``test_differential.py``), so
a new fallback, or a vanished one, fails loudly. Then ``simulate --format json`` gives the same
bytes through both paths, with the native run forbidden to touch the reference reader.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from conftest import FIXTURES
from lagadvisor import native
from lagadvisor.cli import app
from lagadvisor.depgraph.read import prepare
from lagadvisor.errors import LagAdvisorError
from lagadvisor.sim import facts as sim_facts
from lagadvisor.sim.facts import native_facts, read_facts, reference_facts

from cases import native_or_skip  # noqa: E402

NATIVE = native_or_skip()

from cases import DAMAGE, EXPECTED_FALLBACK, damaged_file, multi_file_run  # noqa: E402
from cases import cases as _cases  # noqa: E402
from cases import options as _options  # noqa: E402


def _reference(files: list[str], schema: str | None, monkeypatch):
    monkeypatch.setenv("LAGADVISOR_PUREPYTHON", "1")
    try:
        opts = _options(schema)
        return reference_facts(files, prepare(files, opts), opts)
    except LagAdvisorError as err:
        return f"error: {err}"
    finally:
        monkeypatch.delenv("LAGADVISOR_PUREPYTHON")


def _native(files: list[str], schema: str | None):
    """The native facts; None when the native core gave the run back to the reference."""
    try:
        opts = _options(schema)
        return native_facts(files, opts, prepare(files, opts))
    except LagAdvisorError as err:
        return f"error: {err}"


def _public(files: list[str], schema: str | None):
    try:
        opts = _options(schema)
        return read_facts(files, opts, prepare(files, opts)).facts
    except LagAdvisorError as err:
        return f"error: {err}"


def _first_difference(mine: list, ref: list) -> str:
    for i, (a, b) in enumerate(zip(mine, ref)):
        if a != b:
            return f"transaction {i}: native {a} != reference {b}"
    return f"native has {len(mine)} transactions, reference {len(ref)}"


@pytest.mark.parametrize("name, files, schema", _cases())
def test_native_facts_equal_reference(name, files, schema, monkeypatch):
    ref = _reference(files, schema, monkeypatch)
    mine = _native(files, schema)
    if name in EXPECTED_FALLBACK and EXPECTED_FALLBACK[name] != "error":
        assert mine is None, f"{name}: the native core now reads it; drop it from EXPECTED_FALLBACK"
    else:
        assert mine is not None, f"{name}: the native core gave up unexpectedly"
        if EXPECTED_FALLBACK.get(name) == "error":
            assert isinstance(ref, str) and ref.startswith("error: ")
        if isinstance(ref, list):
            assert list(mine) == ref, _first_difference(mine, ref)
        else:
            assert mine == ref
    # The public entry point (native first, reference on fallback) gives the reference's facts.
    assert _public(files, schema) == ref


def test_multi_file_run_carries_state(tmp_path, monkeypatch):
    """File indices, per-file clock resets and carried session/DDL state across files: the
    sysbench file under two names, then a corpus file."""
    files, schemas = multi_file_run(tmp_path)
    for schema in schemas:
        mine = _native(files, schema)
        assert isinstance(mine, Sequence)
        assert {f.file_idx for f in mine} == set(range(len(files)))
        assert mine == _reference(files, schema, monkeypatch)


def test_duplicate_paths_go_to_the_reference(monkeypatch):
    """The reference numbers a repeated path by its last position; the native core leaves such
    runs to it (as analyze does)."""
    f = str(FIXTURES / "sysbench_oltp_write_only" / "binlog.000001")
    assert _native([f, f], None) is None
    assert _public([f, f], None) == _reference([f, f], None, monkeypatch)


# ----------------------------------------------------------------------------- damaged input

@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("damaged_facts")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**DAMAGE)
def test_damaged_input_same_facts(source, cut, flips, workdir, monkeypatch):
    """Truncated and bit-flipped binlogs (a half-written last transaction included): the
    native facts, when the native core keeps the run, are the reference's; the public entry
    point gives the reference's facts or the same error."""
    files = [damaged_file(workdir, source, cut, flips)]
    ref = _reference(files, None, monkeypatch)
    mine = _native(files, None)
    if mine is not None:
        assert mine == ref
    assert _public(files, None) == ref


# ----------------------------------------------------------------------------- simulate, end to end

_SIMULATE = [
    pytest.param(["sysbench_oltp_write_only"], [], id="sysbench"),
    pytest.param(["single_compressed"], ["--catch-up", "--relaxed"], id="compressed-catch-up"),
    pytest.param(["single_rotation"], ["--policy", "recorded", "--policy", "WRITESET"], id="rotation"),
    pytest.param(["single_full"], ["--mode", "database", "--workers", "0,4"], id="database-mode"),
    pytest.param(["sysbench_oltp_write_only", "+schema"], ["--preserve-commit-order", "off"], id="sysbench+schema"),
]


def _simulate(args: list[str]) -> str:
    res = CliRunner().invoke(app, ["simulate", "--format", "json", *args])
    assert res.exit_code == 0, (res.output, res.exception)
    return res.stdout


@pytest.mark.parametrize("fixture, extra", _SIMULATE)
def test_simulate_json_same_bytes(fixture, extra, monkeypatch):
    """``simulate --format json``: the native read (which must not fall back to the reference
    reader) and ``LAGADVISOR_PUREPYTHON=1`` print the same bytes."""
    d = FIXTURES / fixture[0]
    args = sorted(str(p) for p in d.iterdir() if p.name.startswith("binlog."))
    if "+schema" in fixture:
        args += ["--schema", str(d / "schema.sql")]
    args += ["--workers", "1,2,4,8"] if "--workers" not in extra else []
    args += extra

    def no_reference(*a, **k):
        raise AssertionError("the native run fell back to the reference reader")

    with monkeypatch.context() as m:
        m.setattr(sim_facts.ReferenceFacts, "observe", no_reference)
        mine = _simulate(args)
    monkeypatch.setenv("LAGADVISOR_PUREPYTHON", "1")
    assert mine == _simulate(args)
