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


CASES = [pytest.param(c, marks=pytest.mark.corpus) if cli_golden.in_corpus(c.split(" ")) else c
         for c in sorted(GOLDEN)]


@pytest.mark.parametrize("case", CASES)
def test_output_unchanged(now, case):
    assert case in now, f"{case}: not run"
    assert now[case] == GOLDEN[case]


def test_every_case_has_a_golden_answer(now):
    assert sorted(set(now) - set(GOLDEN)) == []
