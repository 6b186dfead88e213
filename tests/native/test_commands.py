"""Every command that reads binlogs, through the native core against the pure-Python reference.

For every fixture (with and without its schema file) and every corpus file, ``export`` (JSONL
and CSV), ``graph`` (JSON report and the kept range as GraphML), and for four fixtures that cover the
key kinds ``advise`` (JSON), write the
same bytes, stdout and stderr, with the native core as with ``LAGADVISOR_PUREPYTHON=1``; and
the native core really read the run (``lagadvisor.native.run.read_run``, the read pipeline's
native reader, returned a read), except
for the inputs ``EXPECTED_FALLBACK`` lists. A run the native core gives back part-way through
``export`` still writes the reference's records once each.
"""

from __future__ import annotations

import gzip

import pytest
from typer.testing import CliRunner

from conftest import CORPUS, FIXTURES
from lagadvisor import native
from lagadvisor.cli import app
from lagadvisor.errors import LagAdvisorError
from lagadvisor.analysis import records
from lagadvisor.native import run as native_run

from cases import EXPECTED_FALLBACK, multi_file_run, native_or_skip  # noqa: E402
from cases import cases as _cases  # noqa: E402

NATIVE = native_or_skip()


class _Reads:
    """Counts the native reads that completed (``read_run`` not None, or the command's own
    error raised from the native read's per-file step) during a command."""

    def __init__(self, monkeypatch) -> None:
        self.done = 0
        real = native_run.read_run

        def counted(*a, **kw):
            try:
                nr = real(*a, **kw)
            except LagAdvisorError:  # raised by the caller's per-file step, on the native read
                self.done += 1
                raise
            self.done += nr is not None
            return nr

        monkeypatch.setattr(native_run, "read_run", counted)  # the read pipeline's native reader


def _run(args: list[str], monkeypatch, pure: bool) -> tuple[int, str, str]:
    if pure:
        monkeypatch.setenv("LAGADVISOR_PUREPYTHON", "1")
    try:
        res = CliRunner().invoke(app, args)
    finally:
        monkeypatch.delenv("LAGADVISOR_PUREPYTHON", raising=False)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stdout, res.stderr


def _both(name: str, args: list[str], monkeypatch, files_out=()) -> None:
    """The command's output (and the files it writes) with the reference, then natively."""
    ref = _run(args, monkeypatch, pure=True)
    ref_files = [open(f, encoding="utf-8").read() for f in files_out]
    reads = _Reads(monkeypatch)
    mine = _run(args, monkeypatch, pure=False)
    assert mine == ref
    assert [open(f, encoding="utf-8").read() for f in files_out] == ref_files
    if name in EXPECTED_FALLBACK:
        assert reads.done == 0, f"{name}: the native core now reads it; drop it from EXPECTED_FALLBACK"
    else:
        assert reads.done >= 1, f"{name}: the native core gave up unexpectedly"


def _schema_args(schema):
    return ["--schema", schema] if schema else []


def _cases_read_natively():
    """The cases the native core reads (those it gives back are read by the reference either
    way; ``test_differential.py`` checks that it gives exactly those back)."""
    return [c for c in _cases() if c.values[0] not in EXPECTED_FALLBACK]


@pytest.mark.parametrize("name, files, schema", _cases_read_natively())
def test_export(name, files, schema, monkeypatch):
    _both(name, ["export", *files, *_schema_args(schema)], monkeypatch)


@pytest.mark.parametrize("name, files, schema", _cases_read_natively())
def test_graph(name, files, schema, monkeypatch, tmp_path):
    out = str(tmp_path / "g.graphml")
    _both(name, ["graph", "--format", "json", "--graphml", out, *files, *_schema_args(schema)], monkeypatch,
          files_out=[out])


@pytest.mark.parametrize("name, files, schema", [c for c in _cases_read_natively() if not c.values[2]])
def test_calibrate(name, files, schema, monkeypatch):
    """None of these is a replica's binlog: the same refusal (after the same number of local
    transactions, or with the same count of usable gaps). The fit itself is compared on a real
    replica's binlog in ``tests/sim/test_calibrate_live.py``."""
    _both(name, ["calibrate", "--relaxed", *files], monkeypatch)


#: advise runs dozens of simulations and what-if passes per input (the reference's what-if
#: passes read the files again): the fixtures that between them have integer and string keys
#: (labels through the bridge), foreign keys, MINIMAL images, several files and compression.
_ADVISE = ("sysbench_oltp_write_only", "single_minimal_image", "single_compressed", "single_rotation")


@pytest.mark.parametrize("name, files, schema", [c for c in _cases_read_natively()
                                                 if c.values[0] in _ADVISE and c.values[2]])
def test_advise(name, files, schema, monkeypatch):
    _both(name, ["advise", "--format", "json", *files, *_schema_args(schema)], monkeypatch)


@pytest.mark.parametrize("policy", ["recorded", "COMMIT_ORDER", "WRITESET_SESSION"])
def test_graph_policies(policy, monkeypatch, tmp_path):
    """The other clocks, a range in the middle, DOT output."""
    d = FIXTURES / "sysbench_oltp_write_only"
    out = str(tmp_path / "g.dot")
    _both(d.name, ["graph", "--policy", policy, "--range", "100:900", "--top", "25", "--dot", out,
                   "--schema", str(d / "schema.sql"), *sorted(str(p) for p in d.glob("binlog.0*"))],
          monkeypatch, files_out=[out])


def test_multi_file_run(tmp_path, monkeypatch):
    """Across files: per-file resets, carried state, the file attribute of kept nodes."""
    files, schemas = multi_file_run(tmp_path)
    _both("multi", ["export", "--format", "csv", *files, *_schema_args(schemas[1])], monkeypatch)
    _both("multi", ["graph", "--format", "json", *files, *_schema_args(schemas[1])], monkeypatch)


def test_export_fallback_after_a_file_writes_each_record_once(tmp_path, monkeypatch):
    """The native core reads the first file, then gives the run back (a gzip file after it,
    which the native reader leaves to the reference):
    the reference reads the run again and the records already written are not repeated."""
    src = FIXTURES / "single_rotation"
    first, second = sorted(src.glob("binlog.0*"))[:2]
    gz = tmp_path / (second.name + ".gz")
    gz.write_bytes(gzip.compress(second.read_bytes()))
    args = ["export", str(first), str(gz)]
    ref = _run(args, monkeypatch, pure=True)
    native_files = []
    real = records.native_records

    def seen(path, d):
        native_files.append(path)
        return real(path, d)

    monkeypatch.setattr(records, "native_records", seen)
    mine = _run(args, monkeypatch, pure=False)
    assert native_files == [str(first)]  # the first file was written from the native read
    assert mine == ref
    assert ref[1].count("\n") > 100


def test_records_in_chunks(monkeypatch, tmp_path):
    """Export and calibrate take the native records in chunks of a few transactions (memory
    bounded by the chunk): the same output."""
    monkeypatch.setattr(native.run, "RECORDS_CHUNK", 7)
    d = FIXTURES / "sysbench_oltp_write_only"
    files = sorted(str(p) for p in d.glob("binlog.0*"))
    _both(d.name, ["export", "--schema", str(d / "schema.sql"), *files], monkeypatch)
    _both(d.name, ["calibrate", "--relaxed", *files], monkeypatch)


def _partial_json_binlog(directory) -> str:
    """A binlog a real MySQL 9.x writes with ``binlog_row_value_options=PARTIAL_JSON``: plain
    transactions, then JSON_SET updates (PARTIAL_UPDATE_ROWS_EVENT, which the native core gives
    to the reference), then plain ones again; copied to ``directory``."""
    import shutil

    import oracle
    from conftest import free_port, need, server_name

    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    srv = oracle.realservers.MySQLServer(
        server_name("lagadvisor-test-partial-json"), free_port(),
        ["--server-id=1", "--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON",
         "--binlog-format=ROW", "--binlog-row-image=MINIMAL", "--binlog-row-value-options=PARTIAL_JSON"], fresh=True)
    srv.start()
    try:
        srv.sql("CREATE DATABASE j; CREATE TABLE j.t (id INT PRIMARY KEY, doc JSON, n INT)")
        plain = "; ".join(f"INSERT INTO j.t VALUES ({i}, JSON_OBJECT('a', {i}, 'b', REPEAT('x', 40)), {i})"
                          for i in range(1, 21))
        srv.sql(plain)
        srv.sql("; ".join(f"UPDATE j.t SET doc = JSON_SET(doc, '$.a', {i + 100}) WHERE id = {i}" for i in range(1, 6)))
        srv.sql("; ".join(f"UPDATE j.t SET n = n + 1 WHERE id = {i}" for i in range(1, 11)))
        srv.sql("FLUSH BINARY LOGS")
        src = srv.binlog_files()[-2]
        out = directory / "binlog.000001"
        shutil.copyfile(src, out)
        return str(out)
    finally:
        srv.stop()
        srv.remove()


@pytest.mark.server
def test_records_given_back_mid_file_are_written_once(monkeypatch, tmp_path):
    """A run the native core gives back in the middle of a file (at a PARTIAL_UPDATE_ROWS_EVENT,
    in a binlog a real server writes here), after chunks of it were written, still writes each
    record once."""
    import struct

    partial = _partial_json_binlog(tmp_path)
    data, pos, types = open(partial, "rb").read(), 4, set()
    while pos + 19 <= len(data):
        types.add(data[pos + 4])
        pos += struct.unpack_from("<I", data, pos + 9)[0]
    assert 39 in types and 30 in types, sorted(types)   # PARTIAL_UPDATE_ROWS_EVENT after WRITE_ROWS_EVENTs
    _records_written_once(monkeypatch, partial)


@pytest.mark.corpus
def test_corpus_records_given_back_mid_file_are_written_once(monkeypatch):
    """The same on a public corpus file with partial JSON updates."""
    _records_written_once(monkeypatch, str(CORPUS / "mysql_common" / "json.binlog.000001"))


def _records_written_once(monkeypatch, partial: str) -> None:
    monkeypatch.setattr(native.run, "RECORDS_CHUNK", 2)
    chunks = []
    real = records.native_records

    def seen(path, d):
        chunks.append(path)
        return real(path, d)

    runs = []
    real_run = native_run.read_run

    def read_run(*args, **kwargs):
        runs.append(real_run(*args, **kwargs))
        return runs[-1]

    monkeypatch.setattr(records, "native_records", seen)
    monkeypatch.setattr(native_run, "read_run", read_run)
    ref = _run(["export", str(partial)], monkeypatch, pure=True)
    mine = _run(["export", str(partial)], monkeypatch, pure=False)
    assert chunks, "no chunk was written before the native core gave the run back"
    assert runs and runs[-1] is None, "the native core read the whole file: nothing was given back"
    assert mine == ref


def test_a_native_panic_fails_under_the_test_command(monkeypatch):
    """A panic the native core caught (a bug) is given back to the reference for a user, but fails
    the run under ``LAGADVISOR_REQUIRE_NATIVE=1``; an input it gives back on purpose never does."""
    fallback = native.load().NativeFallback
    panic = fallback(native_run.INTERNAL_ERROR)
    monkeypatch.delenv("LAGADVISOR_REQUIRE_NATIVE", raising=False)
    native_run.raise_internal(panic)
    monkeypatch.setenv("LAGADVISOR_REQUIRE_NATIVE", "1")
    native_run.raise_internal(fallback("MariaDB binlog: the reference reads it"))
    with pytest.raises(RuntimeError, match="native core panicked"):
        native_run.raise_internal(panic)
