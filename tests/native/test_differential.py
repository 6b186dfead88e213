"""The native core against the reference, on everything we have.

For every fixture (with and without its schema file) and every corpus file, ``analyze`` through
the native core and through the pure-Python reference give the same report (JSON: transactions,
rows, bytes, flags, timestamps, events by type, the recorded clock and all three computed clocks
with their fallbacks, warnings) or the same error. Files the native core hands back to the
reference are listed in ``EXPECTED_FALLBACK`` with the reason, so a new fallback (or a vanished
one) fails loudly. Plus: the native hash functions are CPython's, and a hypothesis property over
truncated and bit-flipped binlogs.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from lagadvisor import native
from lagadvisor.depgraph.read import prepare
from lagadvisor.errors import LagAdvisorError
from lagadvisor.analysis.analyze import analyze
from lagadvisor.analysis.native import analyze_native
from lagadvisor.report.jsonout import analysis_json

from cases import native_or_skip  # noqa: E402

NATIVE = native_or_skip()

from cases import DAMAGE, EXPECTED_FALLBACK, damaged_file, multi_file_run  # noqa: E402
from cases import cases as _cases  # noqa: E402
from cases import options as _options  # noqa: E402


def _reference(files: list[str], schema: str | None, monkeypatch) -> str:
    monkeypatch.setenv("LAGADVISOR_PUREPYTHON", "1")
    try:
        return json.dumps(analysis_json(analyze(files, _options(schema))), sort_keys=True)
    except LagAdvisorError as err:
        return f"error: {err}"
    finally:
        monkeypatch.delenv("LAGADVISOR_PUREPYTHON")


def _native(files: list[str], schema: str | None) -> str | None:
    """The native result, None when the native core gave the run back to the reference."""
    try:
        opts = _options(schema)
        run = prepare(files, opts)
        a = analyze_native(files, opts, run, None)
    except LagAdvisorError as err:
        return f"error: {err}"
    return None if a is None else json.dumps(analysis_json(a), sort_keys=True)


@pytest.mark.parametrize("name, files, schema", _cases())
def test_native_equals_reference(name, files, schema, monkeypatch):
    ref = _reference(files, schema, monkeypatch)
    mine = _native(files, schema)
    if name in EXPECTED_FALLBACK and EXPECTED_FALLBACK[name] != "error":
        assert mine is None, f"{name}: the native core now reads it; drop it from EXPECTED_FALLBACK"
        return
    assert mine is not None, f"{name}: the native core gave up unexpectedly"
    if EXPECTED_FALLBACK.get(name) == "error":
        assert ref.startswith("error: ")
    assert mine == ref
    # And the public entry point (native first, reference on fallback) gives the same answer.
    assert _public(files, schema) == ref


def test_public_analyze_equals_reference_on_fallbacks(monkeypatch):
    """A run the native core gives back still yields the reference's report through analyze()."""
    files = [str(FIXTURES / "mariadb_concurrent" / "mariadb-bin.000001")]
    assert _native(files, None) is None
    ref = _reference(files, None, monkeypatch)
    assert json.dumps(analysis_json(analyze(files, _options(None))), sort_keys=True) == ref


def _public(files: list[str], schema: str | None) -> str:
    try:
        return json.dumps(analysis_json(analyze(files, _options(schema))), sort_keys=True)
    except LagAdvisorError as err:
        return f"error: {err}"


def test_multi_file_run_carries_state(tmp_path, monkeypatch):
    """Session state, totals and the per-file resets across files, as in the reference: the
    sysbench file read twice under two names, then a corpus file after it."""
    files, schemas = multi_file_run(tmp_path)
    for schema in schemas:
        mine = _native(files, schema)
        assert mine is not None
        assert mine == _reference(files, schema, monkeypatch)


@given(st.integers(min_value=-(1 << 80), max_value=1 << 80))
def test_int_hash_is_cpython(v):
    assert NATIVE.int_hash(v) == hash(v)


@given(st.lists(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1), max_size=6))
def test_tuple_hash_is_cpython(items):
    class H:
        def __init__(self, h):
            self.h = h

        def __hash__(self):
            return self.h

    expected = hash(tuple(H(h) for h in items)) if -1 not in items else None
    if expected is not None:
        assert NATIVE.tuple_hash(items) == expected


def test_key_hash_matches_reference_tuple():
    """The exact shape the reference hashes: (name, db, table, ((value, tag), ...))."""
    vals = ((12345, None), (-7, "key"))
    ref = hash(("PRIMARY", "db", "t", vals))
    inner = [NATIVE.tuple_hash([NATIVE.int_hash(12345), hash(None)]),
             NATIVE.tuple_hash([NATIVE.int_hash(-7), hash("key")])]
    mine = NATIVE.tuple_hash([hash("PRIMARY"), hash("db"), hash("t"), NATIVE.tuple_hash(inner)])
    assert mine == ref


# ----------------------------------------------------------------------------- damaged input

@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("damaged")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**DAMAGE)
def test_damaged_input_same_answer(source, cut, flips, workdir, monkeypatch):
    """Truncated and bit-flipped binlogs: both paths give the same report or the same error
    (file, offset, event type and message); the native core never raises anything else."""
    files = [damaged_file(workdir, source, cut, flips)]
    ref = _reference(files, None, monkeypatch)
    mine = _native(files, None)
    if mine is not None:
        assert mine == ref
    assert _public(files, None) == ref


# ----------------------------------------------------------------------------- detection pass

@pytest.mark.parametrize("sample", [3, 100, 20_000])
@pytest.mark.parametrize("name, files, schema", [c for c in _cases() if not c.id.endswith("+schema")])
def test_detection_sample_equals_reference(name, files, schema, sample, monkeypatch):
    """``detect_written_policy`` reads its sample natively when it can; same verdict, evidence
    and server version as the reference's read, also when the sample ends mid-file."""
    from lagadvisor.depgraph.read import detect_written_policy

    def verdict():
        try:
            return detect_written_policy(files, sample)
        except LagAdvisorError as err:
            return f"error: {err}"

    mine = verdict()
    monkeypatch.setenv("LAGADVISOR_PUREPYTHON", "1")
    assert mine == verdict()


def _caveat_kinds(a) -> list | None:
    p = a.policies
    return None if p is None else sorted((str(c), sorted(c.kinds), c.table) for c, _ in (*p.unknown, *p.caveats))


@pytest.mark.parametrize("name, files, schema", [c for c in _cases() if not c.marks])
def test_native_caveats_carry_the_reference_kinds(name, files, schema, monkeypatch):
    """The native core counts caveats by their text; the analysis gives each back its kinds and
    table (``Bridge.caveat``), the same as the reference's: the rules test those."""
    opts = _options(schema)
    mine = analyze_native(files, opts, prepare(files, opts), None)
    if mine is None:
        return  # given back: the reference's own
    monkeypatch.setenv("LAGADVISOR_PUREPYTHON", "1")
    try:
        ref = analyze(files, _options(schema))
    finally:
        monkeypatch.delenv("LAGADVISOR_PUREPYTHON")
    assert _caveat_kinds(mine) == _caveat_kinds(ref)
    assert all(c.kinds for c, _ in (*mine.policies.unknown, *mine.policies.caveats))
