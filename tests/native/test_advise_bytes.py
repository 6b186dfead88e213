"""``lagadvisor advise`` as a user runs it (a real subprocess) on a fixture without its schema
file: the native core and ``LAGADVISOR_PUREPYTHON=1`` print the same JSON (the four fixtures
with their schema files go through the CLI runner in ``test_commands.py``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import FIXTURES

FULL = FIXTURES / "single_full" / "binlog.000001"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lagadvisor", "advise", *args], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def full_json() -> tuple[str, dict]:
    r = run(str(FULL), "--format", "json")
    assert r.returncode == 0, r.stderr
    return r.stdout, json.loads(r.stdout)


def test_same_bytes_native_and_pure(full_json):
    """The what-if passes read through the native core when it is built; the reference gives
    the same advice."""
    import os

    env = dict(os.environ, LAGADVISOR_PUREPYTHON="1")
    pure = subprocess.run([sys.executable, "-m", "lagadvisor", "advise", str(FULL), "--format", "json"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert pure.returncode == 0 and pure.stdout == full_json[0]
