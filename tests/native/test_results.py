"""The native results' typed values (``lagadvisor.native.results``, issue 37): their column
orders are the Rust reader's and the consumers'."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from lagadvisor.native.results import FACT_COLUMNS, RECORD_COLUMNS, NativeRecords
from lagadvisor.sim.columns import FactColumns

MOD_RS = Path(__file__).resolve().parents[2] / "native" / "src" / "reader" / "mod.rs"


def _rust_columns(name: str) -> tuple[str, ...]:
    m = re.search(rf"const {name}: \[&str; \d+\] = \[(.*?)\];", MOD_RS.read_text(encoding="utf-8"), re.S)
    return tuple(re.findall(r'"(\w+)"', m.group(1)))


def test_fact_columns_are_the_readers_and_factcolumns_fields():
    assert FACT_COLUMNS == _rust_columns("FACT_COLUMNS")
    assert tuple(f.name for f in fields(FactColumns))[:len(FACT_COLUMNS)] == FACT_COLUMNS


def test_record_columns_are_the_readers_and_the_fields():
    assert RECORD_COLUMNS == _rust_columns("RECORD_COLUMNS")
    assert tuple(f.name for f in fields(NativeRecords))[:len(RECORD_COLUMNS)] == RECORD_COLUMNS
