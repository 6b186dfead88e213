"""The hot-rows and hot-table what-ifs take rows out of the writesets (``WhatIf.ignore_rows``):
a transaction whose every row was taken out was left with no hash, which the WRITESET tracker
reads as DDL (history reset, commit order), so "if these rows stopped conflicting" simulated a
slower replica (fixtures/single_full: 0.494 s -> 0.585 s). It keeps one hash of its own now
(``tracker.own_rows_hash``), in the reference, the native reader and the writeset-log replay."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from lagadvisor.cli import app

from conftest import FIXTURES


def _effects(path, native: bool) -> dict:
    env = {} if native else {"LAGADVISOR_PUREPYTHON": "1"}
    r = CliRunner().invoke(app, ["advise", "--no-progress", "--format", "json", str(path)], env=env)
    assert r.exit_code == 0, r.output
    return {f["id"]: f["simulated_effect"] for f in json.loads(r.stdout)["findings"]
            if f["id"] in ("hot_rows", "hot_table") and f.get("simulated_effect")}


@pytest.mark.parametrize("fixture", ["single_full", "sysbench_oltp_write_only"])
def test_taking_hot_rows_out_never_slows_the_replica(fixture):
    native, reference = _effects(FIXTURES / fixture, True), _effects(FIXTURES / fixture, False)
    assert native == reference
    for what, e in native.items():
        assert e["after"] <= e["before"], (what, e)


def test_single_full_gains_from_its_hot_rows():
    e = _effects(FIXTURES / "single_full", True)["hot_rows"]
    assert e["after"] < e["before"] and e["gain"] > 0, e
