"""``simulate --jobs``: facts read file by file on several processes equal the sequential read,
native core and reference, also when DDL in one file changes the keys of the next (issue 14.5)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import FIXTURES
from lagadvisor.depgraph.pipeline import ClockOptions
from lagadvisor.depgraph.read import prepare
from lagadvisor.sim.facts import read_facts
from lagadvisor.sim.parallel import _numbered, _read_one, read_facts_parallel

MULTI = [d for d in sorted(FIXTURES.iterdir()) if d.is_dir()
         and len([p for p in d.iterdir() if p.suffix[1:].isdigit()]) > 1]


def _files(d):
    return [str(p) for p in sorted(d.iterdir()) if p.suffix[1:].isdigit()]


@pytest.mark.parametrize("native", [True, False], ids=["native", "reference"])
@pytest.mark.parametrize("fixture", MULTI, ids=lambda d: d.name)
def test_parallel_facts_equal_the_sequential_read(fixture, native, monkeypatch):
    if not native:
        monkeypatch.setenv("LAGADVISOR_PUREPYTHON", "1")
    files = _files(fixture)
    opts = ClockOptions()
    seq = read_facts(files, opts, prepare(files, opts))
    run = prepare(files, opts)
    par = read_facts_parallel(files, opts, run, 2)
    assert par.facts == seq.facts
    assert len(par.summaries) == len(files)


def test_the_ddl_of_earlier_files_is_needed():
    """Read alone from the catalog as given, a later file's facts differ (its tables were created
    in an earlier file): the second reading with the earlier files' DDL is what makes them equal."""
    for fixture in MULTI:
        files = _files(fixture)
        opts = ClockOptions()
        run = prepare(files, opts)
        opts = ClockOptions(written=run.written, history_size=run.history_size, commit_order=run.commit_order)
        alone = [f for i, p in enumerate(files) for f in _numbered(_read_one((p, opts))[0], i)]
        if alone != read_facts(files, opts, prepare(files, opts)).facts:
            return
    pytest.fail("no multi-file fixture has DDL that later files depend on: the redo is not exercised")


def test_simulate_jobs_gives_the_same_bytes():
    files = _files(MULTI[0])
    outs = []
    for jobs in ("1", "2", "0"):
        r = subprocess.run([sys.executable, "-m", "lagadvisor", "simulate", "--jobs", jobs, "--format", "json",
                            *files], capture_output=True, text=True, timeout=120, env=dict(os.environ))
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] == outs[2]
