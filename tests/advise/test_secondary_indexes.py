"""Secondary index entries past the cost model's per-row share (``sim.model.extra_index_entries``)
are counted from a binlog a real MySQL 9.x wrote (its own DDL), the same by the native core and
the reference, priced by the built-in model (``index_entry_us``), and named by advise's
``secondary_indexes`` finding; a table with one index a row is not charged."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import both_facts, one_worker_catch_up_s, written_binlog

pytestmark = pytest.mark.server

INSERTS = 300
UPDATES = 150
DELETES = 75
LEAN = 40          # transactions on the one-index table, each kind
COLUMNS = "abcdefgh"
WIDE = ("CREATE TABLE wide (id INT NOT NULL PRIMARY KEY, " + ", ".join(f"{c} INT NOT NULL" for c in COLUMNS)
        + ", pad CHAR(40) NOT NULL, " + ", ".join(f"KEY k{c} ({c})" for c in COLUMNS) + ")")
LEAN_TABLE = "CREATE TABLE lean (id INT NOT NULL PRIMARY KEY, a INT NOT NULL, pad CHAR(40) NOT NULL, KEY ka (a))"
#: Past the per-row share: a wide insert or delete 8 - 1 entries, an update of two indexed
#: columns 2 x 2 - 2; the lean table's none.
EXTRA = INSERTS * 7 + UPDATES * 2 + DELETES * 7


@pytest.fixture(scope="module")
def binlog(tmp_path_factory):
    sql = ["CREATE DATABASE si", "USE si", WIDE, LEAN_TABLE]
    sql += [f"INSERT INTO wide VALUES ({i}, " + ", ".join(str(i * 10 + k) for k in range(8)) + ", 'x')"
            for i in range(INSERTS)]
    sql += [f"UPDATE wide SET a = a + 1, b = b + 1 WHERE id = {i}" for i in range(UPDATES)]
    sql += [f"DELETE FROM wide WHERE id = {INSERTS - 1 - i}" for i in range(DELETES)]
    sql += [f"INSERT INTO lean VALUES ({i}, {i}, 'x')" for i in range(LEAN)]
    sql += [f"UPDATE lean SET a = a + 1 WHERE id = {i}" for i in range(LEAN)]
    sql += [f"DELETE FROM lean WHERE id = {i}" for i in range(LEAN)]
    folder = tmp_path_factory.mktemp("indexes")
    with written_binlog("indexes", sql, folder) as (out, _):
        schema = folder / "schema.sql"
        schema.write_text(f"CREATE DATABASE si;\nUSE si;\n{WIDE};\n{LEAN_TABLE};\n")
        yield out, schema


def test_entries_counted_natively_and_by_the_reference(binlog):
    from lagadvisor.sim.model import extra_index_entries

    path, _ = binlog
    ref, nat = both_facts(path)
    assert [f.index_entries for f in nat] == [f.index_entries for f in ref]
    extra = [extra_index_entries(f.index_entries, f.inserts, f.updates, f.deletes) for f in ref]
    assert sorted(e for e in extra if e) == [2] * UPDATES + [7] * (INSERTS + DELETES)
    assert sum(extra) == EXTRA


def test_the_built_in_model_prices_the_extra_entries(binlog, tmp_path):
    from dataclasses import replace

    from lagadvisor.sim.model import CostModel

    path, _ = binlog
    cost = CostModel()
    unpriced = tmp_path / "unpriced.json"
    unpriced.write_text(replace(cost, index_entry_us=0.0).to_json())
    added = one_worker_catch_up_s(path) - one_worker_catch_up_s(path, "--cost-model", str(unpriced))
    # one worker applies them one after the other: the entries' CPU is the time added (within the
    # coordinator's overlap and the threads' contention)
    assert added == pytest.approx(EXTRA * cost.index_entry_us / 1e6, rel=0.1)


@pytest.mark.parametrize("with_schema", [False, True], ids=["binlog-ddl", "schema-file"])
def test_advise_names_the_entries_and_the_table(binlog, with_schema):
    path, schema = binlog
    args = ["--schema", str(schema)] if with_schema else []
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "advise", "--no-progress", "--format", "json", *args,
                        str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f["id"] == "secondary_indexes"]
    assert f["metrics"]["extra_index_entries"] == EXTRA and f["metrics"]["share"] >= 0.10
    eff = f["simulated_effect"]
    assert eff["after"] < eff["before"]
    # named from the schema given, or from the binlog's own DDL as the read followed it
    assert f["tables"] == ["si.wide"] and "si.wide (8 secondary indexes" in f["evidence"], f["evidence"]
    assert f["current"] == "si.wide: 8"
