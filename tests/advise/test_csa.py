"""advise's Change Stream Applier finding (advise/csa.py): only for a 26.7+ target, with the CSA's
simulated gain at the advised worker count, its prerequisites (read from the server when there is
one, else listed as to check), the SQL to switch, and the statement that the model is the
MySQL source's scheduler (commit 312d9ed) and its manual."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import pytest
from conftest import FIXTURES, free_port, need, server_name

from lagadvisor.advise import advise_context
from lagadvisor.advise.context import baseline_from, gather
from lagadvisor.advise.csa import change_stream_applier, prerequisites
from lagadvisor.commands.common import clock_options
from lagadvisor.commands.options import ClockArgs
from lagadvisor.server.schema import ServerSettings
from lagadvisor.sim.model import CostModel


@lru_cache(maxsize=None)
def _context(name: str, cost: CostModel = CostModel()):
    d = FIXTURES / name
    files = sorted(str(p) for p in d.iterdir() if p.name.split(".")[-1].isdigit())
    return gather(files, clock_options(ClockArgs()), cost, None)


def _ctx(name: str, target, settings=None, cost: CostModel = CostModel()):
    base = _context(name, cost)
    # a replace shares the context's caches: the same simulations
    return replace(base, target_version=target, settings=settings,
                   baseline=baseline_from(settings, base.mariadb, base.version))


def _csa(advice):
    return [f for f in advice.findings + advice.confirmed if f.id == "change_stream_applier"]


@pytest.mark.parametrize("target", [None, (8, 4, 0), (9, 7, 0), (9, 7, 9)])
def test_no_finding_below_26_7_or_without_a_target(target):
    # a review is of an upgrade: the 9.7.4 binlog's source named as an 8.0 one (--current-version)
    ctx = replace(_ctx("sysbench_oltp_write_only", target), version=(8, 0, 33), version_from="--current-version")
    assert _csa(advise_context(ctx)) == []


#: A replica whose coordinator's reading limits the MTA (0.1 us a byte of the events: 0.18 ms for
#: sysbench's transaction): the CSA's workers read their own transactions' events, in parallel.
READ_BOUND = replace(CostModel(), dispatch_byte_us=0.1)


def test_finding_for_26_7_with_the_gain_the_sql_and_what_to_check():
    advice = advise_context(_ctx("sysbench_oltp_write_only", (26, 7, 0), cost=READ_BOUND))
    [f] = _csa(advice)
    w = f.metrics["workers"]
    assert w == advice.plan.recommended.workers  # the plan's worker count, the one verdict
    assert advice.plan.recommended.applier == "csa"  # the plan searched both appliers and runs the CSA
    assert f.metrics["csa_seconds"] < f.metrics["mta_seconds"]
    assert f.simulated_effect.gain >= 0.02 and f.suggested == "2"
    assert f.statements[0] == "STOP REPLICA;" and f.statements[-1] == "START REPLICA;"
    assert f"APPLIER_VERSION = 2, APPLIER_WORKER_COUNT = {w}" in f.statements[1]
    for opt in ("SOURCE_AUTO_POSITION = 1", "GTID_ONLY = 1", "REQUIRE_ROW_FORMAT = 1", "SOURCE_DELAY = 0"):
        assert opt in f.statements[1]
    assert "documented semantics" in f.simulated_effect.description and "312d9ed" in f.simulated_effect.description
    assert "312d9ed" in f.metrics["model"]
    # without --host: the binlog says the row format; the channel's settings are to check
    reqs = {r["name"]: r for r in f.metrics["prerequisites"]}
    assert reqs["row-based binary logging"]["met"] is True
    for name in ("gtid_mode", "SOURCE_AUTO_POSITION", "GTID_ONLY", "REQUIRE_ROW_FORMAT", "SOURCE_DELAY"):
        assert reqs[name]["current"] is None and f"{name}: to check" in f.evidence
    assert f.current == "1" and f.current_assumed


def test_no_gain_says_so_and_advises_no_switch():
    """A relaxed replica (sync_binlog=0, innodb_flush_log_at_trx_commit=2, read from the server):
    no fsync to share, so nothing for freed workers to win; on the model's 2 cores the workers
    that keep applying take CPU from the serial commit stage instead. The CSA simulates no
    faster: the finding says so and advises no switch."""
    s = ServerSettings("replica:3306", {"sync_binlog": "0", "innodb_flush_log_at_trx_commit": "2"}, None, ())
    advice = advise_context(_ctx("sysbench_oltp_write_only", (26, 10, 0), s))
    [f] = _csa(advice)
    assert advice.plan.recommended.applier == "mta"
    # the verdict is the plan's: the CSA is not faster by more than the plan's tolerance
    assert f.metrics["csa_seconds"] > f.metrics["mta_seconds"] * (1 - advice.plan.tolerance), f.metrics
    assert "keep the multi-threaded applier" in f.title and f.statements == () and f.suggested == "1"
    assert f.metrics["workers"] == advice.plan.recommended.workers
    assert f.severity.value == "info"
    assert "documented semantics" in f.simulated_effect.description


def test_prerequisites_read_from_the_server():
    s = ServerSettings("replica:3306", {"gtid_mode": "OFF_PERMISSIVE"}, None, (),
                       {"AUTO_POSITION": "1", "GTID_ONLY": "0", "REQUIRE_ROW_FORMAT": "YES", "DESIRED_DELAY": "3600",
                        "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_TYPE": "OFF", "APPLIER_VERSION": "1"})
    ctx = _ctx("sysbench_oltp_write_only", (26, 7, 0), s, cost=READ_BOUND)  # a switch advised: its prerequisites first
    got = {r.name: (r.current, r.met) for r in prerequisites(ctx)}
    assert got == {"row-based binary logging": ("ROW", True), "gtid_mode": ("OFF_PERMISSIVE", False),
                   "SOURCE_AUTO_POSITION": ("1", True), "GTID_ONLY": ("0", False),
                   "REQUIRE_ROW_FORMAT": ("YES", True), "SOURCE_DELAY": ("3600", False),
                   "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS": ("OFF", True)}
    [f] = _csa(advise_context(ctx))
    assert not f.current_assumed and f.current == "1"
    assert "3 prerequisite(s) not met" in f.title
    assert f.statements[0] == "-- first: gtid_mode = ON (now OFF_PERMISSIVE)"


def test_a_channel_already_on_the_csa_is_a_confirmation():
    s = ServerSettings("replica:3306", {"gtid_mode": "ON"}, None, (), {"APPLIER_VERSION": "2"})
    advice = advise_context(_ctx("sysbench_oltp_write_only", (26, 7, 0), s, cost=READ_BOUND))
    assert [f.id for f in advice.confirmed if f.id == "change_stream_applier"] == ["change_stream_applier"]
    assert not [f for f in advice.findings if f.id == "change_stream_applier"]


def test_load_settings_reads_the_channel_from_a_real_server():
    """A MySQL 9.x replica's default channel, as --host reads it (performance_schema)."""
    import oracle

    from lagadvisor.server.schema import load_settings

    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    rs = oracle.realservers
    srv = rs.MySQLServer(server_name("lagadvisor-test-csa"), free_port(),
                         ["--server-id=7", "--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--skip-replica-start"],
                         fresh=True)
    srv.start()
    try:
        srv.sql("CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=1, SOURCE_AUTO_POSITION=1, "
                "GTID_ONLY=1, REQUIRE_ROW_FORMAT=1, SOURCE_DELAY=5")
        import mysql.connector

        conn = mysql.connector.connect(host="127.0.0.1", port=srv.port, user="root")
        try:
            s = load_settings(conn, "replica")
        finally:
            conn.close()
    finally:
        srv.stop()
        srv.remove()
    assert s.channel is not None
    assert (s.channel["AUTO_POSITION"], s.channel["GTID_ONLY"], s.channel["REQUIRE_ROW_FORMAT"],
            str(s.channel["DESIRED_DELAY"])) == ("1", "1", "YES", "5")
    ctx = _ctx("sysbench_oltp_write_only", (26, 7, 0), s)
    got = {r.name: r.met for r in prerequisites(ctx)}
    assert got["gtid_mode"] and got["GTID_ONLY"] and got["SOURCE_AUTO_POSITION"] and not got["SOURCE_DELAY"]
