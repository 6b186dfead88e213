"""Tables without any index cost a row-based replica a full scan per UPDATE/DELETE event (issue
22.4): the scans are counted from a binlog a real MySQL 9.x wrote, the same by the native core
and the reference, priced by the cost model, reported by advise, and a table with a plain index
is not charged."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import both_facts, one_worker_catch_up_s, written_binlog

pytestmark = pytest.mark.server

ROWS = 3000
UPDATES = 40
DELETES = 15


@pytest.fixture(scope="module")
def binlog(tmp_path_factory):
    values = ",".join(f"({i}, 0, 'row {i}')" for i in range(ROWS))
    sql = ["CREATE DATABASE kl",
           "CREATE TABLE kl.k (a INT NOT NULL, b INT NOT NULL, c CHAR(20) NOT NULL)",       # no index
           "CREATE TABLE kl.i (a INT NOT NULL, b INT NOT NULL, c CHAR(20) NOT NULL, KEY (a))",  # an index
           "CREATE TABLE kl.p (a INT NOT NULL PRIMARY KEY, b INT NOT NULL, c CHAR(20) NOT NULL)",
           f"INSERT INTO kl.k VALUES {values}", f"INSERT INTO kl.i VALUES {values}",
           f"INSERT INTO kl.p VALUES {values}"]
    for n in range(UPDATES):
        sql += [f"UPDATE kl.{t} SET b = b + 1 WHERE a = {n * 7}" for t in ("k", "i", "p")]
    for n in range(DELETES):
        sql += [f"DELETE FROM kl.{t} WHERE a = {n * 11 + 1}" for t in ("k", "i", "p")]
    with written_binlog("keyless", sql, tmp_path_factory.mktemp("keyless")) as (out, srv):
        yield out, srv


def expected_scan_rows() -> list[int]:
    """Per UPDATE/DELETE event on kl.k, the rows the table holds then (all inserted in this file)."""
    out = [ROWS] * UPDATES
    out += [ROWS - n for n in range(DELETES)]
    return out


def test_scans_counted_natively_and_by_the_reference(binlog):
    path, _ = binlog
    ref, nat = both_facts(path)
    assert [f.scan_rows for f in nat] == [f.scan_rows for f in ref]
    assert [f.scan_rows for f in ref if f.scan_rows] == expected_scan_rows()  # kl.i and kl.p: none


def test_the_cost_model_prices_the_scans(binlog):
    from lagadvisor.sim.model import CostModel

    cost = CostModel()
    assert cost.apply_us(0, 1, 0, 100, ROWS) - cost.apply_us(0, 1, 0, 100) == pytest.approx(cost.scan_row_us * ROWS)
    path, _ = binlog
    seconds = one_worker_catch_up_s(path)
    assert seconds > cost.scan_row_us * sum(expected_scan_rows()) / 1e6


def test_advise_names_the_scanned_table_and_prices_its_index(binlog):
    path, _ = binlog
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "advise", "--no-progress", "--format", "json",
                        str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    (f,) = [f for f in doc["findings"] if f["id"] == "tables_without_primary_key"]
    assert "kl.k: 55 UPDATE/DELETE events scanned" in f["evidence"], f["evidence"]
    assert "kl.i" in f["title"] and "kl.i:" not in f["evidence"]  # no PK, but an index: no scans
    eff = f["simulated_effect"]
    assert eff["after"] < eff["before"]
    assert any("tables without any index (kl.k)" in a for a in doc["summary"]["assumptions"])


def test_table_sizes_from_the_server(binlog):
    from lagadvisor.server.connection import ServerOptions
    from lagadvisor.server.schema import catalog_from_server
    from lagadvisor.server.tls import Tls

    _, srv = binlog
    cat = catalog_from_server(ServerOptions("127.0.0.1", srv.port, "root", "", None, Tls.from_options(None, None,
                                                                                                       None, None)))
    k, i = cat.get("kl", "k"), cat.get("kl", "i")
    assert k.scanned_by_replica and not i.scanned_by_replica and i.indexed
    assert cat.rows_of("kl", "k") > 0  # InnoDB's estimate of ROWS - DELETES


def test_simulate_and_graph_take_sizes_from_the_server(binlog):
    """With --host the scanned table's size is the server's TABLE_ROWS when larger than what the
    file inserted: a table filled before the binlog (here: a file that only updates it)."""
    import mysql.connector

    path, srv = binlog
    conn = mysql.connector.connect(host="127.0.0.1", port=srv.port, user="root", password="", autocommit=True)
    cur = conn.cursor()
    cur.execute("FLUSH BINARY LOGS")
    for n in range(10):
        cur.execute(f"UPDATE kl.k SET b = b + 1 WHERE a = {n * 13}")
    cur.execute("FLUSH BINARY LOGS")
    cur.execute("ANALYZE TABLE kl.k")
    cur.fetchall()
    cur.close()
    conn.close()
    only_updates = srv.binlog_files()[-2]

    without = one_worker_catch_up_s(only_updates)
    with_host = one_worker_catch_up_s(only_updates, "-h", "127.0.0.1", "-P", str(srv.port), "-u", "root")
    from lagadvisor.sim.model import CostModel

    # ten events over a table of ~2,985 rows (TABLE_ROWS is InnoDB's estimate: within 20%)
    extra = with_host - without
    expect = 10 * (ROWS - DELETES) * CostModel().scan_row_us / 1e6
    assert 0.8 * expect < extra < 1.2 * expect, (without, with_host, expect)
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "graph", "-h", "127.0.0.1", "-P", str(srv.port), "-u",
                        "root", "--format", "json", str(only_updates)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
