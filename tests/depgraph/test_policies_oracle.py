"""MySQL is the oracle: on binlogs written by MySQL 9.x with one client, the recorded
``last_committed`` is exactly WRITESET's answer (the commit-order parent is always the previous
transaction), so ``export --commit-order serial`` must reproduce it for every transaction. On
multi-client binlogs the recorded value is ``min(ws, co)``, never above the writeset answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES

MANIFEST = {m["name"]: m for m in json.loads((FIXTURES / "MANIFEST").read_text())}


def export(*args: str) -> tuple[list[dict], str]:
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "export", *args], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()], r.stderr


def binlogs(name: str) -> list[str]:
    return [str(p) for p in sorted((FIXTURES / name).glob("binlog.0*"))]


def _history_option(name: str) -> list[str]:
    for opt in MANIFEST[name]["server_options"]:
        if opt.startswith("--binlog-transaction-dependency-history-size="):
            return ["--history-size", opt.split("=", 1)[1]]
    return []


EXACT = ["single_full", "single_compressed", "single_minimal_metadata", "single_rotation",
         "single_history50"]


@pytest.mark.parametrize("name", EXACT)
def test_serial_writeset_equals_recorded(name: str):
    assert MANIFEST[name]["single_connection"] is True
    records, _ = export("--commit-order", "serial", *_history_option(name), *binlogs(name))
    assert len(records) > 1000
    diffs = [(r["file"], r["sequence_number"], r["last_committed"], r["computed"]["WRITESET"])
             for r in records if r["computed"]["WRITESET"] != r["last_committed"]]
    assert diffs == [], f"{len(diffs)} of {len(records)} differ, first: {diffs[:5]}"
    # The stream exercises every kind of fallback the spec names.
    reasons = {r["fallback"] for r in records}
    assert {"ddl", "fk_parent", "no_primary_key"} <= reasons


def test_history50_needs_the_history_size():
    """Without --history-size the tool uses the 9.7 default (10,000,000) and must disagree where
    the small history was full: evidence that capacity is modelled, not ignored."""
    records, _ = export("--commit-order", "serial", *binlogs("single_history50"))
    assert any(r["computed"]["WRITESET"] != r["last_committed"] for r in records)
    small, _ = export("--commit-order", "serial", "--history-size", "50", *binlogs("single_history50"))
    reasons = {r["fallback"] for r in small}
    assert {"history_full", "writeset_limit"} <= reasons


def test_multi_client_recorded_never_above_writeset():
    records, err = export(*binlogs("sysbench_oltp_write_only"))
    assert "WRITESET" in err  # detected: 9.7 has WRITESET only
    assert len(records) > 2000
    bad = [r for r in records if r["last_committed"] > r["computed"]["WRITESET"]]
    assert bad == []
    # And WRITESET really allows parallelism here.
    assert sum(r["sequence_number"] - r["computed"]["WRITESET"] > 1 for r in records) > len(records) / 2


def test_minimal_row_image_is_reported():
    records, err = export("--commit-order", "serial", *binlogs("single_minimal_image"))
    assert "missing from the row images" in err and "WRITESET may overstate parallelism" in err
    # The tool still never claims less dependency than the server recorded where keys are known.
    same = sum(r["computed"]["WRITESET"] == r["last_committed"] for r in records)
    assert same > 0.9 * len(records)


def splice_after_last_ddl(src: str, dst: Path) -> int:
    """Write a binlog that starts after the last DDL of ``src``: its header events, then every
    transaction after that DDL (event bytes and checksums unchanged). Returns how many
    transactions it holds. This is a binlog whose tables were created "before the file"."""
    from lagadvisor.binlog import read_transactions

    trx = list(read_transactions(src))
    last_ddl = max(i for i, t in enumerate(trx) if t.ddl)
    data = Path(src).read_bytes()
    dst.write_bytes(data[:trx[0].start_offset] + data[trx[last_ddl + 1].start_offset:])
    return len(trx) - last_ddl - 1


@pytest.mark.parametrize("name", ["single_minimal_metadata", "single_full"])
def test_tables_created_before_the_file(name: str, tmp_path: Path):
    """Without the CREATE TABLE statements, MINIMAL row metadata leaves the tables unknown (every
    row transaction falls back: no invented parallelism, and the tool says so); FULL metadata
    gives primary keys only (the tool says unique keys are unknown). ``--schema`` with the
    source's mysqldump makes the tables known again."""
    part = tmp_path / "binlog.000001"
    n = splice_after_last_ddl(binlogs(name)[0], part)
    records, err = export("--commit-order", "serial", str(part))
    assert len(records) == n > 100
    if name == "single_minimal_metadata":
        assert "unknown (created before this binlog" in err and "pass --schema" in err
        fell = [r for r in records if r["rows"] and r["fallback"] == "unknown_schema"]
        assert len(fell) == sum(1 for r in records if r["rows"])
        assert all(r["computed"]["WRITESET"] == r["sequence_number"] - 1 for r in fell)
    else:
        assert "unique keys of" in err and "may overstate" in err
    known, err2 = export("--commit-order", "serial", "--schema",
                         str(FIXTURES / name / "schema.sql"), str(part))
    assert "unknown" not in err2 and "unique keys of" not in err2
    assert not any(r["fallback"] == "unknown_schema" for r in known)
    # History before the splice is lost, so transactions near its start may differ; the rest
    # must be the server's answer again.
    same = sum(r["computed"]["WRITESET"] == r["last_committed"] for r in known)
    assert same >= 0.9 * len(known)
