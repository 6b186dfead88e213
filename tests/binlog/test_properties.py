"""Property tests: any input gives transactions or the domain error, quickly.

The contract (hpack's): ``read_transactions`` over arbitrary bytes, and over real binlogs that
were truncated or had bits flipped, either returns or raises :class:`BinlogError` — never another
exception, never a hang (hypothesis' deadline bounds each example).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

from conftest import CORPUS, FIXTURES, corpus_params
from lagadvisor.binlog import FileSummary, read_transactions
from lagadvisor.errors import BinlogError

MAGIC = b"\xfebin"


def _seeds() -> list[bytes]:
    """The fixtures' first files (under 300 kB), and some files of the optional public corpus
    where it is here."""
    names = [CORPUS / "mysql_common/transaction_compression.000001",
             CORPUS / "mysql_common/binlog_transaction_with_GTID_TAG.000001",
             CORPUS / "mysql_common/mariadb-bin.000001",
             CORPUS / "mysql_common/json.binlog.000001",
             CORPUS / "mysql_common/vector.binlog",
             CORPUS / "mysql_common/mysql-enum-string-set.000001",
             CORPUS / "connector_java/mysql-bin.checksum-crc32"]
    for d in sorted(FIXTURES.glob("*")) if FIXTURES.is_dir() else []:
        for f in sorted(d.glob("binlog.0*"))[:1]:
            if f.stat().st_size < 300_000:
                names.append(f)
    return [p.read_bytes() for p in names if p.exists()]


SEEDS = _seeds()


def _read(data: bytes) -> None:
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(data)
        f.flush()
        summary = FileSummary(f.name)
        try:
            for _ in read_transactions(f.name, summary):
                pass
        except BinlogError as err:
            assert err.file == f.name
            text = str(err)
            assert "\n" not in text and f.name in text
        else:
            assert summary.complete


PROFILE = settings(max_examples=150, deadline=5000, suppress_health_check=[HealthCheck.too_slow])


@PROFILE
@given(st.binary(max_size=4096))
def test_arbitrary_bytes(data):
    _read(data)


@PROFILE
@given(st.binary(max_size=4096))
def test_arbitrary_bytes_after_magic(data):
    _read(MAGIC + data)


@PROFILE
@given(st.data())
def test_truncated_real_binlogs(data):
    seed = data.draw(st.sampled_from(SEEDS))
    cut = data.draw(st.integers(0, len(seed)))
    _read(seed[:cut])


@PROFILE
@given(st.data())
def test_bit_flipped_real_binlogs(data):
    seed = bytearray(data.draw(st.sampled_from(SEEDS)))
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(seed) - 1))
        seed[pos] ^= 1 << data.draw(st.integers(0, 7))
    _read(bytes(seed))


@pytest.mark.parametrize("path", [pytest.param(FIXTURES / "single_rotation" / "binlog.000001", id="fixture"),
                                  *corpus_params([CORPUS / "connector_java/mysql-bin.checksum-crc32"]
                                                 if CORPUS.is_dir() else [], lambda p: "corpus")])
def test_truncation_is_a_warning_not_an_error(path):
    """Every cut of a real binlog inside its last event reads the earlier transactions."""
    seed = path.read_bytes()
    with tempfile.NamedTemporaryFile() as f:
        f.write(seed)
        f.flush()
        full = list(read_transactions(f.name))
    with tempfile.NamedTemporaryFile() as f:
        f.write(seed[:-10])
        f.flush()
        summary = FileSummary(f.name)
        part = list(read_transactions(f.name, summary))
    assert summary.truncated_at is not None and summary.warnings
    assert [t.gtid for t in part if not t.incomplete] == [t.gtid for t in full][:len(part)]
    assert len(part) >= len(full) - 1


def test_not_a_binlog(tmp_path: Path):
    p = tmp_path / "x.txt"
    p.write_text("hello world, not a binlog\n")
    try:
        list(read_transactions(str(p)))
    except BinlogError as err:
        assert "not a binlog" in str(err) and err.offset == 0
    else:
        raise AssertionError("a text file was read as a binlog")


@settings(max_examples=40, deadline=20000, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_whole_pipeline_on_damaged_binlogs(data):
    """Truncated or bit-flipped binlogs through everything after the reader too: writesets,
    the three policies, the graph and the simulation give a result or the domain error."""
    from lagadvisor.depgraph.graph import GraphBuilder
    from lagadvisor.depgraph.pipeline import ClockOptions
    from lagadvisor.depgraph.read import prepare
    from lagadvisor.depgraph.read import run_clocks
    from lagadvisor.errors import LagAdvisorError
    from lagadvisor.sim.model import CostModel, ReplicaConfig
    from lagadvisor.sim.run import facts_of, sweep

    seed = bytearray(data.draw(st.sampled_from(SEEDS)))
    if data.draw(st.booleans()):
        seed = seed[: data.draw(st.integers(0, len(seed)))]
    for _ in range(data.draw(st.integers(0, 3))):
        if seed:
            seed[data.draw(st.integers(0, len(seed) - 1))] ^= 1 << data.draw(st.integers(0, 7))
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(bytes(seed))
        f.flush()
        try:
            opts = ClockOptions(labels=True)
            run = prepare([f.name], opts)
            gb = GraphBuilder("WRITESET", CostModel().graph_weights())
            facts = []
            for t, ws, c in run_clocks([f.name], run, opts):
                gb.add(t, ws, c)
                facts.append(facts_of(t, c, 0))
            sweep(facts, ["WRITESET"], [1, 4], ReplicaConfig(), CostModel(), catch_up=True)
        except LagAdvisorError:
            pass


@given(st.text(max_size=24))
def test_version_tuple_of_any_text(text):
    """A damaged FDE's server version is any text: non-ASCII digits ('³') must not reach int()
    (found by test_bit_flipped_real_binlogs)."""
    from lagadvisor.binlog.framing import version_tuple

    v = version_tuple(text)
    assert len(v) == 3 and all(isinstance(x, int) and x >= 0 for x in v)
    assert version_tuple("8.0.32-debug") == (8, 0, 32) and version_tuple("³2.1") == (0, 1, 0)
