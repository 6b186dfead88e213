"""The command line as a user runs it (a real subprocess): exit codes, one-line errors, no
tracebacks, warnings for truncated input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import CORPUS

GOOD = CORPUS / "connector_java/mysql-bin.checksum-crc32"
CORRUPT = CORPUS / "mysql_common/corrupt-relay-bin.000624"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True,
                          timeout=300)


def test_version_and_help():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("lagadvisor ")
    r = run("--help")
    assert r.returncode == 0 and "analyze" in r.stdout and "export" in r.stdout


def test_analyze_text():
    r = run("analyze", str(GOOD))
    assert r.returncode == 0, r.stderr
    assert "5.7.21-log" in r.stdout and "transactions" in r.stdout
    assert "Traceback" not in r.stderr


def test_analyze_json_counts():
    r = run("analyze", "--format", "json", str(GOOD))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    f = doc["files"][0]
    assert f["transactions"] == 60 and f["checksum"] == "CRC32"
    assert f["events"]["ANONYMOUS_GTID_LOG_EVENT"] == 60
    assert sum(f["recorded_clock"]["distance_histogram"].values()) == 60


def test_corrupt_file_one_line_exit_2():
    r = run("analyze", str(CORRUPT))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "offset 91204" in lines[0] and "QUERY_EVENT" in lines[0] and str(CORRUPT) in lines[0]


def test_not_a_binlog_exit_2(tmp_path: Path):
    p = tmp_path / "notes.txt"
    p.write_text("not a binlog")
    r = run("export", str(p))
    assert r.returncode == 2 and "not a binlog" in r.stderr and "Traceback" not in r.stderr


def test_missing_file_exit_2(tmp_path: Path):
    r = run("analyze", str(tmp_path / "nope.000001"))
    assert r.returncode == 2 and "cannot open" in r.stderr and "Traceback" not in r.stderr


def test_truncated_tail_warns_and_exits_0(tmp_path: Path):
    data = GOOD.read_bytes()
    p = tmp_path / "live.000001"
    p.write_bytes(data[: len(data) - 200])
    r = run("export", str(p))
    assert r.returncode == 0, r.stderr
    assert "warning" in r.stderr and "still being written" in r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    complete = [x for x in records if not x["incomplete"]]
    assert 55 <= len(complete) < 60
    assert records[-1]["incomplete"] is True  # the half-written last transaction is flagged


def test_checksum_mismatch_exit_2(tmp_path: Path):
    data = bytearray(GOOD.read_bytes())
    data[5000] ^= 0x10
    p = tmp_path / "flipped.000001"
    p.write_bytes(bytes(data))
    r = run("analyze", str(p))
    assert r.returncode == 2 and "checksum" in r.stderr.lower() and "offset" in r.stderr


def test_export_jsonl_and_csv(tmp_path: Path):
    r = run("export", str(GOOD))
    assert r.returncode == 0
    recs = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(recs) == 60
    for key in ("file", "gtid", "sequence_number", "last_committed", "thread_id", "commit_ts_us",
                "rows", "bytes", "tables"):
        assert key in recs[0]
    assert [r["sequence_number"] for r in recs] == sorted(r["sequence_number"] for r in recs)
    out = tmp_path / "t.csv"
    r = run("export", "--format", "csv", "-o", str(out), str(GOOD))
    assert r.returncode == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("file,") and len(lines) == 61
