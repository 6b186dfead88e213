"""The key-type and collation sweep against a real MySQL 9.x (issue 18), sampled for CI.

``scripts/writeset_sweep.py`` writes, from one connection, pairs of values equal or different
under every key column type and under a sample of the server's collations; MySQL's recorded
``last_committed`` is then WRITESET's exact answer, and lagadvisor must reproduce it for every
transaction, with the native core and with the pure-Python reference. The one key the binlog
cannot rebuild (a JSON-derived functional index: its hidden column is not in the row images) is
counted apart and must be reported. ``--all`` runs every collation (the figures in docs/accuracy.md)."""

from __future__ import annotations

import sys

import pytest

import oracle
from conftest import ROOT, free_port, need, server_name

sys.path.insert(0, str(ROOT / "scripts"))
import writeset_sweep  # noqa: E402

pytestmark = pytest.mark.server


def test_sweep_types_and_sampled_collations():
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    rs = oracle.realservers
    port = free_port()
    srv = rs.MySQLServer(server_name("lagadvisor-test-ws-sweep"), port, writeset_sweep.sweep_server_options(),
                         fresh=True)
    srv.start()
    try:
        figures = writeset_sweep.sweep(port, sample=36, binlog_files=srv.binlog_files, log=print)
    finally:
        srv.stop()
        srv.remove()
    assert figures["types"] >= 45 and figures["collations"] >= 36
    for mode in ("native", "reference"):
        f = figures[mode]
        functional = sum(f["functional_misses"].values())
        print(f"{mode}: {f['matched']} of {f['compared']} transactions match "
              f"({figures['types']} types x {figures['collations']} collations; {functional} on the "
              "functional index, reported)")
        assert f["compared"] > 20000
        assert f["misses"] == {}, f["first_misses"]
        assert f["matched"] + functional == f["compared"]
        assert "functional unique index uk of sweep.fn001 cannot be hashed" in f["stderr"]
        assert "equality approximated" not in f["stderr"]
    # The native core and the reference agree transaction for transaction.
    assert figures["native"]["matched"] == figures["reference"]["matched"]
