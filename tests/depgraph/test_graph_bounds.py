"""The dependency graph in bounded memory (issue 14.2): with more conflicting rows than it counts,
the hot-row report keeps the most frequent, states its error bound, and every kept count is
within that bound of the exact one; hot tables stay exact; native core and reference agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import fixture_dirs


def _graph(path: str, *, bound: int | None, native: bool) -> dict:
    env = dict(os.environ)
    env.pop("LAGADVISOR_HOT_ROWS_MAX", None)
    env.pop("LAGADVISOR_PUREPYTHON", None)
    if bound is not None:
        env["LAGADVISOR_HOT_ROWS_MAX"] = str(bound)
    if not native:
        env["LAGADVISOR_PUREPYTHON"] = "1"
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "graph", "--top", "100000", "--format", "json", path],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _first(d):
    return str(sorted(p for p in d.iterdir() if p.suffix[1:].isdigit())[0])


#: Fixtures with many conflicting rows, one per reader path: MySQL through the native core with
#: string and integer keys, and MariaDB through the reference (each run is four subprocesses).
BOUNDED = ("sysbench_oltp_write_only", "single_full", "mariadb_concurrent")


@pytest.mark.parametrize("fixture", [d for d in fixture_dirs() if d.name in BOUNDED], ids=lambda d: d.name)
def test_bounded_hot_rows_keep_their_error_bound(fixture):
    path = _first(fixture)
    exact = _graph(path, bound=None, native=True)
    rows = {r["key"]: r["dependencies"] for r in exact["hot_rows"]}
    if len(rows) < 8:
        pytest.skip("too few conflicting rows to bound")
    assert exact["hot_rows_error"] == 0
    bounded = _graph(path, bound=6, native=True)
    assert bounded == _graph(path, bound=6, native=False)  # the same cut, native and reference
    err = bounded["hot_rows_error"]
    assert err > 0 and len(bounded["hot_rows"]) <= 6
    for r in bounded["hot_rows"]:
        assert rows[r["key"]] - err <= r["dependencies"] <= rows[r["key"]]
    assert bounded["hot_tables"] == exact["hot_tables"]
    for k in ("transactions", "depth", "width", "conflicts", "critical_path_seconds"):
        assert bounded[k] == exact[k]
