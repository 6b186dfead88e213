"""``fixtures/damaged/`` is what ``scripts/make_damaged.py`` derives from the fixtures, byte for
byte: the damaged inputs of the bad-input suites are made, not copied, and stay reproducible."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import DAMAGED, ROOT


def test_committed_files_are_what_the_script_derives():
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_damaged.py"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr


def test_every_binlog_names_its_damage():
    manifest = json.loads((DAMAGED / "MANIFEST.json").read_text(encoding="utf-8"))
    assert (ROOT / manifest["derived_from"]).is_file()
    for name, entry in manifest["binlogs"].items():
        assert (DAMAGED / name).is_file(), name
        assert entry["mutation"] and entry["expect"]["exit"] == 2 and entry["expect"]["words"], name
    assert set(manifest["cost_models"]) == {p.name for p in DAMAGED.glob("cost-model-*.json")}
