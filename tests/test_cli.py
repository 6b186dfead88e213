"""The command line as a user runs it (a real subprocess): exit codes, one-line errors, no
tracebacks, warnings for truncated input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, DAMAGED, FIXTURES, corpus_params


def _fixture(name: str, file: str) -> tuple:
    """(path, server version, transactions by mysqlbinlog, GTID event types) of a fixture file:
    the version from the fixtures' MANIFEST, the count from its reference reading."""
    manifest = {m["name"]: m for m in json.loads((FIXTURES / "MANIFEST").read_text(encoding="utf-8"))}
    ref = (FIXTURES / name / "reference.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return (FIXTURES / name / file, manifest[name]["server_version"],
            sum(1 for ln in ref if ln.split("\t")[0] == file), ("GTID_LOG_EVENT", "GTID_TAGGED_LOG_EVENT"))


#: A whole binlog: a bundled fixture, and a MySQL 5.7 file of the optional public corpus.
GOODS = [pytest.param(_fixture("single_rotation", "binlog.000001"), id="fixture"),
         *corpus_params([(CORPUS / "connector_java/mysql-bin.checksum-crc32", "5.7.21-log", 60,
                          ("ANONYMOUS_GTID_LOG_EVENT",))] if CORPUS.is_dir() else [], lambda g: "corpus")]
#: A corrupt binlog: (path, offset and event the one line must name).
_BAD_QUERY = json.loads((DAMAGED / "MANIFEST.json").read_text(encoding="utf-8"))["binlogs"]["bad-status-vars-query.binlog"]
CORRUPTS = [pytest.param((DAMAGED / "bad-status-vars-query.binlog", _BAD_QUERY["offset"], "QUERY_EVENT"), id="derived"),
            *corpus_params([(CORPUS / "mysql_common/corrupt-relay-bin.000624", 91204, "QUERY_EVENT")]
                           if CORPUS.is_dir() else [], lambda c: "corpus")]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True,
                          timeout=300)


def test_version_and_help():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("lagadvisor ")
    r = run("--help")
    assert r.returncode == 0 and "analyze" in r.stdout and "export" in r.stdout


@pytest.mark.parametrize("good", GOODS)
def test_analyze_text(good):
    path, version, _, _ = good
    r = run("analyze", str(path))
    assert r.returncode == 0, r.stderr
    assert version in r.stdout and "transactions" in r.stdout
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("good", GOODS)
def test_analyze_json_counts(good):
    path, _, n, gtid_events = good
    r = run("analyze", "--format", "json", str(path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    f = doc["files"][0]
    assert f["transactions"] == n and f["checksum"] == "CRC32"
    assert sum(f["events"].get(e, 0) for e in gtid_events) == n
    assert sum(f["recorded_clock"]["distance_histogram"].values()) == n


@pytest.mark.parametrize("corrupt", CORRUPTS)
def test_corrupt_file_one_line_exit_2(corrupt):
    path, offset, event = corrupt
    r = run("analyze", str(path))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert f"offset {offset}" in lines[0] and event in lines[0] and str(path) in lines[0]


def test_not_a_binlog_exit_2(tmp_path: Path):
    p = tmp_path / "notes.txt"
    p.write_text("not a binlog")
    r = run("export", str(p))
    assert r.returncode == 2 and "not a binlog" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("command", ["analyze", "export", "simulate", "advise"])
def test_an_encrypted_binlog_is_named_so(tmp_path: Path, command):
    """binlog_encryption=ON files start with ``\\xfdbin`` and a 512-byte header
    (sql/rpl_log_encryption.cc): one line saying so and how to read them, not "not a binlog"."""
    p = tmp_path / "binlog.000007"
    p.write_bytes(b"\xfdbin\x01" + bytes(507) + b"\x8a" * 4096)
    r = run(command, str(p))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"{p} at offset 0: an encrypted binlog (binlog_encryption=ON)" in r.stderr and "--from" in r.stderr


def test_missing_file_exit_2(tmp_path: Path):
    r = run("analyze", str(tmp_path / "nope.000001"))
    assert r.returncode == 2 and "cannot open" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("good", GOODS)
def test_truncated_tail_warns_and_exits_0(tmp_path: Path, good):
    path, _, n, _ = good
    data = path.read_bytes()
    p = tmp_path / "live.000001"
    p.write_bytes(data[: len(data) - 200])
    r = run("export", str(p))
    assert r.returncode == 0, r.stderr
    assert "warning" in r.stderr and "still being written" in r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    complete = [x for x in records if not x["incomplete"]]
    assert n - 5 <= len(complete) < n
    assert records[-1]["incomplete"] is True  # the half-written last transaction is flagged


@pytest.mark.parametrize("good", GOODS)
def test_checksum_mismatch_exit_2(tmp_path: Path, good):
    data = bytearray(good[0].read_bytes())
    data[5000] ^= 0x10
    p = tmp_path / "flipped.000001"
    p.write_bytes(bytes(data))
    r = run("analyze", str(p))
    assert r.returncode == 2 and "checksum" in r.stderr.lower() and "offset" in r.stderr


@pytest.mark.parametrize("good", GOODS)
def test_export_jsonl_and_csv(tmp_path: Path, good):
    path, _, n, _ = good
    r = run("export", str(path))
    assert r.returncode == 0
    recs = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(recs) == n
    for key in ("file", "gtid", "sequence_number", "last_committed", "thread_id", "commit_ts_us",
                "rows", "bytes", "tables"):
        assert key in recs[0]
    assert [r["sequence_number"] for r in recs] == sorted(r["sequence_number"] for r in recs)
    out = tmp_path / "t.csv"
    r = run("export", "--format", "csv", "-o", str(out), str(path))
    assert r.returncode == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("file,") and len(lines) == n + 1
