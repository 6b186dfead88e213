"""The pre-upgrade review (``advise --target-version``) on binlogs real servers wrote.

The fixtures were written by MySQL 9.7 (WRITESET) and MariaDB; the one real 8.0 COMMIT_ORDER
binlog is the corpus file im_service/binlog.000009 (corpus layer). A review "from 8.0" or "from
8.4" on a fixture names the source's version with ``current_version`` (``--current-version``)
and re-derives its clock from the file: 8.0's COMMIT_ORDER with the commit-order input
(``flush-groups``, an estimate for binlogs written under WRITESET), 8.4's history of 25,000 with
``--history-size``. What the review says about the versions comes from versions.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import CORPUS, FIXTURES, ROOT
from lagadvisor.advise import advise
from lagadvisor.depgraph.pipeline import ClockOptions
from lagadvisor.kinds import Applier
from lagadvisor.versions import RELEASES, SOURCES, Release

SYSBENCH = FIXTURES / "sysbench_oltp_write_only"
HISTORY50 = FIXTURES / "single_history50"
IM = CORPUS / "im_service"


def _files(d) -> list[str]:
    return sorted(str(p) for p in d.iterdir() if p.suffix[1:].isdigit())


def _review(d, target, current=None, **opts):
    a = advise(_files(d), ClockOptions(**opts), target_version=target, current_version=current)
    assert a.review is not None
    return a, a.review


def test_8_0_to_8_4_the_commit_order_clock_becomes_writeset():
    a, r = _review(SYSBENCH, (8, 4, 0), (8, 0, 33), commit_order="flush-groups")
    assert r.current_from == "--current-version"
    now, defaults, advised = r.rows
    assert (now.config.clock, defaults.config.clock, advised.config.clock) == ("COMMIT_ORDER", "WRITESET", "WRITESET")
    assert defaults.history_size == 25_000 and defaults.config.workers == 4 and defaults.config.preserve
    assert defaults.catch_up_seconds < now.catch_up_seconds        # WRITESET lets more overlap
    assert any(c.startswith("the clock: binlog_transaction_dependency_tracking is removed in 8.4") for c in r.changes)
    assert any("removed in 8.4: binlog_transaction_dependency_tracking" in c for c in r.changes)
    hop = next(b for b in r.before if b.startswith("upgrade 8.0.33 -> 8.4 LTS"))
    assert "remove binlog_transaction_dependency_tracking from my.cnf" in hop and "flags removed variables" in hop
    assert not any("mysql_native_password" in b for b in r.before)  # 8.4 keeps the plugin (disabled)
    # the advised column is the plan, and the plan is the upgraded servers'
    assert advised.config == a.plan.recommended and advised.catch_up_seconds == a.plan.recommended_seconds
    assert any("lagadvisor analyze" in s for s in r.after)
    assert a.offer is None  # asked: nothing to offer


def test_8_4_to_9_7_the_larger_history_re_derives_writeset():
    _, r = _review(HISTORY50, (9, 7, 0), (8, 4, 0), history_size=50)
    now, defaults, _ = r.rows
    assert now.history_size == 50 and defaults.history_size == 10_000_000
    assert defaults.config.clock == "WRITESET" and defaults.ideal_speedup is None  # re-derived under a what-if
    line = next(c for c in r.changes if "binlog_transaction_dependency_history_size" in c)
    assert "25,000 -> 10,000,000" in line and "filled up" in line
    assert [c for c in r.changes if c.startswith("removed in")] == [
        "removed in 9.0: the mysql_native_password authentication plugin (a replica cannot log in to its source as a "
        "user of that plugin)"]
    limits = " ".join(r.limits)
    assert "tables_without_primary_key" in limits and "foreign_key_parent_tables" in limits
    assert "ddl_barriers" in limits and "sql_generate_invisible_primary_key" in limits
    assert r.before[0].startswith("add primary keys to wl.t_nokey")
    # 8.4 -> 9.7 crosses 9.0, which removes mysql_native_password: a step before that hop
    hop = next(b for b in r.before if b.startswith("upgrade 8.4 -> 9.7 LTS"))
    assert "mysql_native_password" in hop and "caching_sha2_password" in hop


def test_9_7_to_26_7_names_the_change_stream_applier_and_what_is_unverified():
    _, r = _review(SYSBENCH, (26, 7, 0))
    assert r.current == (9, 7, 4) and r.current_from == "binlog"
    assert r.rows[0].config == r.rows[1].config  # same clock, history and defaults: nothing else moves
    applier = next(c for c in r.changes if c.startswith("applier:"))
    assert "APPLIER_VERSION" in applier and "MySQL source" in applier and "312d9ed" in applier
    assert "history_size (26.7)" in r.unverified
    assert any("19.2.4" in s for s in r.sources)
    # the plan's applier in the advised column, the other one beside it at the same worker count
    advised, other = r.rows[2], r.rows[3]
    assert {advised.applier, other.applier} == {Applier.MTA, Applier.CSA}
    assert (other.config.clock, other.config.workers, other.config.durable, other.config.preserve) == (
        advised.config.clock, advised.config.workers, advised.config.durable, advised.config.preserve)
    assert other.label == f"26.7 advised, {other.applier.upper()}"
    assert any("Change Stream Applier" in s for s in r.after) == (advised.applier == Applier.CSA)


def test_no_change_stream_applier_row_before_26_7():
    _, r = _review(SYSBENCH, (9, 7, 0), (8, 4, 0))
    assert len(r.rows) == 3 and all(row.applier is Applier.MTA for row in r.rows)


def test_the_review_is_in_the_json_and_the_html(tmp_path):
    html = tmp_path / "r.html"
    p = subprocess.run([sys.executable, "-m", "lagadvisor", "advise", str(SYSBENCH), "--format", "json",
                        "--no-progress", "--target-version", "26.7", "--html", str(html)],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    rv = json.loads(p.stdout)["review"]
    assert rv["target_version"] == "26.7" and len(rv["before_after"]) == 4
    assert sorted(row["applier"] for row in rv["before_after"][2:]) == ["csa", "mta"]
    assert "Pre-upgrade review: 9.7.4 → 26.7" in html.read_text()


@pytest.mark.parametrize("bad", ["8", "8.x", "eight", "8.4.3.1", "-8.4", "99.1", "9.8", "26.8"])
def test_a_bad_target_version_is_a_one_line_usage_error(bad):
    p = subprocess.run([sys.executable, "-m", "lagadvisor", "advise", str(SYSBENCH), "--no-progress",
                        "--target-version", bad], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "--target-version" in p.stderr
    if bad in ("99.1", "9.8", "26.8"):  # a version, but no release the table knows: the error lists them
        assert "known: 8.4, 9.0" in p.stderr and "26.10" in p.stderr


def test_the_upgrade_path_goes_through_each_lts():
    from lagadvisor.versions import upgrade_path

    assert [r.label for r in upgrade_path((8, 0, 36), (8, 4, 0))] == ["8.4"]
    assert [r.label for r in upgrade_path((8, 0, 36), (9, 7, 0))] == ["8.4", "9.7"]
    assert [r.label for r in upgrade_path((8, 0, 36), (26, 7, 0))] == ["8.4", "9.7", "26.7"]
    assert [r.label for r in upgrade_path((8, 4, 2), (9, 3, 0))] == ["9.3"]
    assert [r.label for r in upgrade_path((9, 7, 4), (26, 10, 0))] == ["26.10"]
    # 5.7 goes to an 8.0 bugfix release (8.0.34 or later) first (3.2 'Upgrade Paths')
    assert [r.label for r in upgrade_path((5, 7, 21), (8, 4, 0))] == ["8.0.34", "8.4"]


def test_a_5_7_server_gets_its_own_names_and_no_variable_it_lacks():
    from lagadvisor.advise.statements import Dialect, applier_change, mycnf, persist

    d = Dialect((5, 7, 21))
    assert applier_change(d, "replica_parallel_workers", "8") == (
        "STOP SLAVE SQL_THREAD;", "SET GLOBAL slave_parallel_workers = 8;",
        "-- and slave_parallel_workers = 8 in my.cnf, to survive a restart", "START SLAVE SQL_THREAD;")
    assert persist(d, "binlog_row_metadata", "FULL") == ()  # 8.0.1+
    assert mycnf(d, (("replica_parallel_workers", "8"), ("binlog_row_metadata", "FULL"))) == (
        (("slave_parallel_workers", "8"),), ("binlog_row_metadata",))


def test_the_version_table():
    from lagadvisor.versions import (HISTORY_SIZE_DEFAULTS, next_lts, parse_version, release, writeset_only)

    assert [parse_version(v) for v in ("8.4", "9.7", "26.7", "8.4.3")] == [(8, 4, 0), (9, 7, 0), (26, 7, 0), (8, 4, 3)]
    assert HISTORY_SIZE_DEFAULTS == (((9, 7, 0), 10_000_000), ((9, 5, 0), 1_000_000), ((0, 0, 0), 25_000))
    assert [r.first for r in RELEASES] == sorted(r.first for r in RELEASES)
    assert not writeset_only((8, 0, 40)) and writeset_only((8, 4, 0)) and writeset_only((26, 10, 1))
    assert (next_lts((8, 0, 33)).label, next_lts((8, 4, 2)).label, next_lts((9, 7, 0))) == ("8.4", "9.7", None)
    assert release((8, 0, 26)).replica_parallel_workers == 0 and release((8, 0, 27)).replica_parallel_workers == 4
    fields = set(Release.__dataclass_fields__)
    for r in RELEASES:
        assert r.unverified <= fields, r.label
    assert {"tracking", "history_size", "replica_parallel_workers", "replica_preserve_commit_order", "gipk",
            "applier", "lts"} <= set(SOURCES)


@pytest.mark.corpus
@pytest.mark.parametrize("with_schema", [True, False], ids=["schema", "no-schema"])
def test_the_real_8_0_binlog(with_schema):
    from lagadvisor.schema.ddl import read_schema_path

    catalog = read_schema_path(str(IM / "schema.sql")).catalog if with_schema else None
    a = advise([str(IM / "binlog.000009")], ClockOptions(catalog=catalog))
    assert a.offer == "8.4" and a.review is None  # not asked: offered for the next LTS
    a = advise([str(IM / "binlog.000009")], ClockOptions(catalog=catalog), target_version=(8, 4, 0))
    r = a.review
    assert r.current == (8, 0, 33) and r.current_from == "binlog"
    now, defaults, _ = r.rows
    assert now.ideal_speedup == pytest.approx(13.99, abs=0.01)
    if with_schema:
        assert defaults.ideal_speedup > 1000 and not defaults.not_computed
    else:  # the fallback is marked, with how to compute it
        assert defaults.ideal_speedup == pytest.approx(now.ideal_speedup) and defaults.not_computed
        assert any("not computed" in c and "--schema" in c for c in r.changes)
        assert r.before[0].startswith("rerun this review with --schema FILE or --host")


@pytest.mark.parametrize("case", [("single_full", "9.7"), ("single_full", "8.4"), ("mariadb_concurrent", "26.7")])
def test_a_review_is_of_a_mysql_upgrade(case):
    """A target not newer than the binlog's server (9.7.4 here), or a MariaDB binlog: one line, exit 2."""
    d, target = case
    p = subprocess.run([sys.executable, "-m", "lagadvisor", "advise", str(FIXTURES / d), "--no-progress",
                        "--target-version", target], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr.count("\n") == 1 and f"--target-version {target}" in p.stderr
    assert ("not newer than the source's 9.7.4" in p.stderr) if d == "single_full" else ("MariaDB" in p.stderr)

