"""Selecting the implementation: ``LAGADVISOR_PUREPYTHON=1`` forces the reference; an extension
that fails to import falls back to it with one notice line from ``analyze``."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from conftest import FIXTURES
from lagadvisor import native
from lagadvisor.cli import app

FILE = str(FIXTURES / "sysbench_oltp_write_only" / "binlog.000001")


def _run(*args):
    return CliRunner().invoke(app, ["analyze", "--format", "json", *args])


def test_forced_pure_python(monkeypatch):
    monkeypatch.setenv("LAGADVISOR_PUREPYTHON", "1")
    assert native.load() is None
    assert native.unavailable_notice() is None   # forced: no notice
    res = _run(FILE)
    assert res.exit_code == 0
    assert "native core unavailable" not in res.output


def test_import_failure_falls_back_with_a_notice(monkeypatch):
    monkeypatch.delenv("LAGADVISOR_PUREPYTHON", raising=False)
    monkeypatch.setattr(native.loader, "_tried", True)
    monkeypatch.setattr(native.loader, "_module", None)
    res = _run(FILE)
    assert res.exit_code == 0
    assert res.output.count("native core unavailable: pure Python") == 1
    body = res.output[res.output.index("{"):res.output.rindex("}") + 1]
    assert json.loads(body)["total"]["transactions"] == 2509
