"""``export --keys`` and ``export --format csv`` (issue 72): a row image's keys are named as the
schema names its columns and hold the unique keys' columns only (they were column ordinals,
``{"0": 4657}``, with a foreign-key column that is no key); CSV booleans are ``true``/``false``
(they were Python's ``True``/``False``).

The oracle for the key columns is the fixture's ``schema.sql`` read here with a regular
expression (PRIMARY KEY and UNIQUE KEY lines), not lagadvisor's own schema parser."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys

from conftest import FIXTURES

FULL = FIXTURES / "single_full"


def _export(*args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "export", *args], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "COLUMNS": "100"})
    assert r.returncode == 0, r.stderr
    return r.stdout


def _unique_key_columns(schema_sql: str) -> dict[str, set[str]]:
    """``{db.table: columns of its PRIMARY and UNIQUE keys}`` from a mysqldump --no-data file."""
    out: dict[str, set[str]] = {}
    db = None
    for block in re.split(r"(?=^USE |^CREATE TABLE )", schema_sql, flags=re.M):
        use = re.match(r"USE `([^`]+)`", block)
        if use:
            db = use.group(1)
            continue
        table = re.match(r"CREATE TABLE `([^`]+)`", block)
        if table:
            cols = set()
            for key in re.findall(r"^\s*(?:PRIMARY KEY|UNIQUE KEY `[^`]+`) \((.*)\)", block, flags=re.M):
                cols |= set(re.findall(r"`([^`]+)`", key))
            out[f"{db}.{table.group(1)}"] = cols
    return out


def test_keys_are_named_and_only_key_columns():
    want = _unique_key_columns((FULL / "schema.sql").read_text())
    assert want["wl_fk.child"] == {"id"} and want["wl.t_auto"] == {"id", "u", "v"}  # the oracle reads keys
    seen = set()
    for line in _export(str(FULL), "--keys").splitlines():
        for rk in json.loads(line)["row_keys"]:
            assert "keys_known" not in rk, rk  # every table of this binlog has a definition
            for image in (rk["before"], rk["after"]):
                if image is not None and rk["table"] in want:  # (t_tmp is created in the binlog)
                    assert set(image) == want[rk["table"]], rk
            seen.add(rk["table"])
    assert {"wl_fk.child", "wl.t_auto", "wl.t_nokey", "wl.t_comp"} <= seen


def test_csv_booleans_are_true_and_false_as_in_jsonl():
    rows = list(csv.DictReader(io.StringIO(_export(str(FULL), "--format", "csv"))))
    records = [json.loads(line) for line in _export(str(FULL)).splitlines()]
    assert len(rows) == len(records)
    for field in ("ddl", "statement_based", "xa", "incident", "incomplete", "compressed"):
        assert {r[field] for r in rows} <= {"true", "false"}, field
        assert [r[field] for r in rows] == [json.dumps(rec[field]) for rec in records], field
    assert any(r["ddl"] == "true" for r in rows) and any(r["ddl"] == "false" for r in rows)
