"""Every command's output (stdout, stderr, exit code) is what it was before the CLI was split
into modules (issue 21): the cases of ``tests/cli_golden.py`` against ``tests/golden/cli_refactor.json``.

An intended change of output regenerates the golden file (``python tests/cli_golden.py --write``)
in the same commit, which says why."""

from __future__ import annotations

import json

import pytest

import cli_golden

GOLDEN = json.loads(cli_golden.GOLDEN.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def now() -> dict:
    return cli_golden.run_all()


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_output_unchanged(now, case):
    if case not in now:
        assert not cli_golden.available(case.split(" ")), f"{case}: not run"
        pytest.skip("the shared corpus is not here")
    assert now[case] == GOLDEN[case]


def test_every_case_has_a_golden_answer(now):
    assert sorted(set(now) - set(GOLDEN)) == []
