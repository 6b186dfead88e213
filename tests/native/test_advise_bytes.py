"""``lagadvisor advise`` as a user runs it (a real subprocess) on a fixture without its schema
file: the native core and ``LAGADVISOR_PUREPYTHON=1`` print the same JSON (the four fixtures
with their schema files go through the CLI runner in ``test_commands.py``)."""

from __future__ import annotations

import subprocess
import sys

from conftest import FIXTURES

FULL = FIXTURES / "single_full" / "binlog.000001"


def test_same_bytes_native_and_pure(full_json):
    """The what-if passes read through the native core when it is built; the reference gives
    the same advice."""
    import os

    env = dict(os.environ, LAGADVISOR_PUREPYTHON="1")
    pure = subprocess.run([sys.executable, "-m", "lagadvisor", "advise", str(FULL), "--format", "json"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert pure.returncode == 0 and pure.stdout == full_json[0]
