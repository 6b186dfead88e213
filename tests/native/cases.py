"""What the native differential tests share: the inputs, the files the native core gives back
to the reference (and why), and the clock options with or without a schema file."""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import strategies as st

from conftest import FIXTURES, corpus_files, fixture_dirs
from lagadvisor.depgraph.pipeline import ClockOptions
from lagadvisor.schema.ddl import load_schema_file

#: Inputs the native core gives back to the reference (the run is then read by Python), and why.
EXPECTED_FALLBACK = {
    "mariadb_concurrent": "MariaDB",
    "mysql-bin.sakila.gz": "gzip",
    "json.binlog.000001": "PARTIAL_UPDATE_ROWS",
    "mariadb-bin.000001": "MariaDB",
    # Read errors: the policy detection pass (Python) raises before the native core runs.
    "corrupt-relay-bin.000624": "error",
    "bug40482-bin.000001": "error",
    "ver_5_1-wl2325_r.001": "error",
    "ver_5_1-wl2325_s.001": "error",
}


def native_or_skip():
    """The native module; these tests skip without it, but fail under
    ``LAGADVISOR_REQUIRE_NATIVE=1`` (CI), where they must run."""
    from lagadvisor import native

    mod = native.load()
    if mod is None:
        if os.environ.get("LAGADVISOR_REQUIRE_NATIVE") == "1":
            pytest.fail("lagadvisor._native is required (LAGADVISOR_REQUIRE_NATIVE=1)", pytrace=False)
        pytest.skip("native core not built (LAGADVISOR_PUREPYTHON or no extension)", allow_module_level=True)
    return mod


def cases():
    """Every fixture (with and without its schema.sql) and every corpus file."""
    out = []
    for d in fixture_dirs():
        files = sorted(str(p) for p in d.iterdir() if p.name.startswith(("binlog.", "mariadb-bin")))
        out.append(pytest.param(d.name, files, None, id=d.name))
        out.append(pytest.param(d.name, files, str(d / "schema.sql"), id=d.name + "+schema"))
    for p in corpus_files():
        out.append(pytest.param(p.name, [str(p)], None, id=p.name, marks=pytest.mark.corpus))
    return out


def multi_file_run(directory) -> tuple[list[str], tuple[str | None, str]]:
    """A run across files: the sysbench file under two names in ``directory``, then a corpus file
    after it; and the schemas to read it with (none, the sysbench schema.sql)."""
    src = FIXTURES / "sysbench_oltp_write_only"
    files = []
    for name in ("binlog.000001", "binlog.000002"):
        shutil.copyfile(src / "binlog.000001", directory / name)
        files.append(str(directory / name))
    files += [str(c) for c in corpus_files() if c.name == "binlog_transaction_with_GTID.000001"]
    return files, (None, str(src / "schema.sql"))


def options(schema: str | None) -> ClockOptions:
    return ClockOptions(catalog=load_schema_file(schema) if schema else None)


# Damaged input: the first bytes of two fixtures, cut and bit-flipped by hypothesis.
DAMAGE_SOURCES = (FIXTURES / "sysbench_oltp_write_only" / "binlog.000001",   # integer keys, native hashes
                  FIXTURES / "single_compressed" / "binlog.000001")           # zstd payloads, string keys
DAMAGE_PREFIX = 400_000  # keep examples fast: the first few hundred transactions
#: The hypothesis arguments of a damaged-input test: ``@given(**DAMAGE)``, then
#: ``damaged_file(directory, source, cut, flips)``.
DAMAGE = dict(source=st.sampled_from(DAMAGE_SOURCES), cut=st.integers(min_value=0, max_value=DAMAGE_PREFIX),
              flips=st.lists(st.tuples(st.integers(min_value=0, max_value=DAMAGE_PREFIX - 1), st.integers(0, 7)),
                             max_size=3))


def damaged_file(directory, source, cut: int, flips) -> str:
    """``source``'s first DAMAGE_PREFIX bytes with ``flips`` (position, bit) applied, cut at
    ``cut``, written to ``directory/binlog.000001``."""
    data = bytearray(source.read_bytes()[:DAMAGE_PREFIX])
    for pos, bit in flips:
        if pos < len(data):
            data[pos] ^= 1 << bit
    data = bytes(data[:cut]) if cut < len(data) else bytes(data)
    path = directory / "binlog.000001"
    path.write_bytes(data)
    return str(path)
