"""`lagadvisor calibrate` on a real replica (MySQL 9.x, loopback): a replica with one worker, then
one with four, applies a backlog of varied transactions; the model fitted from its own binlog,
simulated on the source's binlog, gives back the catch-up the replica really took."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import subprocess
import sys
import time

import oracle
import pytest
from conftest import need, source_and_replica
from lagadvisor.binlog import read_transactions
from lagadvisor.cpus import usable_cpus


def _workload(seed: int, n: int, one_shape: bool = False, chain: float = 0.0) -> str:
    """``n`` transactions of varied sizes; ``one_shape``: every one 1 insert, 2 updates and
    1 delete (sysbench oltp_write_only's shape); ``chain``: the share that first updates the row
    the transaction before last updated (so its writeset clock makes it wait for that one)."""
    rnd = random.Random(seed)
    out, next_id, live = [], 2000, list(range(2000))
    last = None
    for _ in range(n):
        stmts = []
        if last is not None and rnd.random() < chain:
            stmts.append(f"UPDATE c.t SET k = k + 1 WHERE id = {last}")
        for _ in range(1 if one_shape else rnd.choice((0, 1, 3, 10))):
            stmts.append(f"INSERT INTO c.t VALUES ({next_id}, {rnd.randint(1, 999)}, REPEAT('x', 100))")
            live.append(next_id)
            next_id += 1
        for _ in range(2 if one_shape else rnd.choice((1, 3, 10))):
            stmts.append(f"UPDATE c.t SET k = k + 1 WHERE id = {rnd.choice(live)}")
        for _ in range(1 if one_shape else rnd.choice((0, 1, 3))):
            stmts.append(f"DELETE FROM c.t WHERE id = {live.pop(rnd.randrange(len(live)))}")
        if chain:
            last = rnd.choice(live)
            stmts.append(f"UPDATE c.t SET k = k + 2 WHERE id = {last}")
        out.append("BEGIN; " + "; ".join(stmts) + "; COMMIT;")
    return "\n".join(out)


def _lagadvisor(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "lagadvisor", *args], capture_output=True, text=True, timeout=300,
                       env=env)
    assert r.returncode == 0, r.stderr
    return r


def _catch_up(name: str, workers: int, n: int, ids: tuple[int, int], one_shape: bool = False, chain: float = 0.0):
    """A real source and replica (relaxed, ``workers`` workers): the replica's SQL thread stopped
    while the source runs ``n`` varied transactions, then started; yields (source's binlog files,
    the replica's binlog files of the catch-up, the replica's applied transactions)."""
    common = ["--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON",
              "--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0"]
    replica_options = [f"--server-id={ids[1]}", "--log-replica-updates=ON", f"--replica-parallel-workers={workers}"]
    with source_and_replica(name, common, [f"--server-id={ids[0]}"], replica_options) as (src, rep):
        rep.sql("START REPLICA")
        src.sql("SET SESSION cte_max_recursion_depth = 10000; CREATE DATABASE c; "
                "CREATE TABLE c.t (id INT PRIMARY KEY, k INT NOT NULL, v VARCHAR(100), KEY (k)); "
                "INSERT INTO c.t SELECT n, n % 997, REPEAT('v', 100) FROM (WITH RECURSIVE s(n) AS "
                "(SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < 1999) SELECT n FROM s) x")
        rep.sql(f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{src.sql('SELECT @@GLOBAL.gtid_executed').strip()}', 120)")
        rep.sql("STOP REPLICA SQL_THREAD")
        src.sql("FLUSH BINARY LOGS")
        first = len(src.binlog_files()) - 1
        txns = _workload(5, n, one_shape, chain).split("\n")
        for k in range(0, len(txns), 100):  # one client call per 100 transactions (argv length)
            src.sql("\n".join(txns[k:k + 100]), timeout=300)
        src.sql("FLUSH BINARY LOGS")
        source_files = [str(p) for p in src.binlog_files()[first:-1]]
        gtids = src.sql("SELECT @@GLOBAL.gtid_executed").strip().replace("\n", "")
        deadline = time.monotonic() + 120  # the whole backlog is in the relay log before the applier starts
        while rep.sql(f"SELECT GTID_SUBSET('{gtids}', RECEIVED_TRANSACTION_SET) FROM "
                      "performance_schema.replication_connection_status").strip() != "1":
            assert time.monotonic() < deadline, "the replica did not receive the workload"
            time.sleep(0.1)
        rep.sql("FLUSH BINARY LOGS")
        before = len(rep.binlog_files()) - 1
        rep.sql(f"START REPLICA SQL_THREAD; SELECT WAIT_FOR_EXECUTED_GTID_SET('{gtids}', 300)")
        rep.sql("FLUSH BINARY LOGS")
        replica_files = [str(p) for p in rep.binlog_files()[before:-1]]
        applied = [t for f in replica_files for t in read_transactions(f) if t.rows]
        assert len(applied) == n
        yield source_files, replica_files, applied


def _checks_not_priced_twice(tmp_path, replica_files, *args):
    """A calibration reads no schema, so the foreign-key checks and index entries its replica ran
    are in the costs it fits: its model prices them at 0 whatever its base's."""
    from dataclasses import replace

    from lagadvisor.sim.model import CostModel

    base, out = tmp_path / "base-fk.json", tmp_path / "cost-fk.json"
    base.write_text(replace(CostModel(), fk_check_us=50.0, index_entry_us=3.0).to_json())
    _lagadvisor("calibrate", "--relaxed", *args, "--base", str(base), "-o", str(out), *replica_files)
    fitted = json.loads(out.read_text())
    assert (fitted["fk_check_us"], fitted["index_entry_us"]) == (0.0, 0.0)


class _TooNoisy(Exception):
    """Both fits said their absolute times are uncertain past the bound the check holds them to."""


#: The widest error band the thinned fit is held to; a run whose fits say more is repeated once.
THIN_BAND = 0.35


def _thinned_fit_agrees(replica_files, applied, retry: bool = False):
    """A binlog of more gaps than calibrate fits (sim.calibrate.MAX_GAPS, a long one) is fitted on
    an evenly spread share of them, says so, and prices the workload's mean transaction as the
    fit of every gap does: within 15%, or within the wider of the two fits' own error bands (what
    each says of its absolute times) up to 35%. On a loaded 2-core VM the catch-up's gaps are
    noisy and a third of them is a smaller sample: under three CPU hogs the two agreed within 6%
    five times in five (bands 0.12-0.37); once in CI, beside the corpus layer, 28% apart; once
    43% apart with bands of 0.48 and 0.38: with ``retry``, a disagreement where a fit's own band
    is past 35% raises ``_TooNoisy`` for the caller to run the catch-up again, once."""
    from lagadvisor.sim.calibrate import calibrate

    full = calibrate(replica_files, durable=False, cores=2)
    thin = calibrate(replica_files, durable=False, cores=2, max_gaps=256)
    assert not any("evenly spread" in n for n in full.notes)
    said = [n for n in thin.notes if "evenly spread" in n]
    assert said and "the fit took 256 of them" in said[0], thin.notes
    assert thin.mean_gap_us == full.mean_gap_us
    n = len(applied)
    rows = [sum(sum(getattr(s, k) for s in t.tables) for t in applied) / n for k in ("inserts", "updates", "deletes")]

    def mean_us(m) -> float:
        return m.trx_us + m.commit_us + m.insert_us * rows[0] + m.update_us * rows[1] + m.delete_us * rows[2]

    bands = (full.model.error_band, thin.model.error_band)
    band = min(THIN_BAND, max(0.15, *bands))
    agree = mean_us(thin.model) == pytest.approx(mean_us(full.model), rel=band)
    if not agree and retry and max(bands) > THIN_BAND:
        raise _TooNoisy(bands)
    assert agree, (mean_us(thin.model), mean_us(full.model), bands)


def test_calibrated_model_gives_back_the_one_worker_catch_up(tmp_path):
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    try:
        _one_worker_catch_up_checks(tmp_path, "cal", retry=True)
    except _TooNoisy as noisy:
        print(f"the thinned fit disagreed where the fits' own error bands were {noisy}: once more")
        _one_worker_catch_up_checks(tmp_path, "cal2", retry=False)


def _one_worker_catch_up_checks(tmp_path, name: str, retry: bool) -> None:
    # closed on the way out, a _TooNoisy included: the servers are gone before a second run
    with contextlib.closing(_catch_up(name, 1, 800, (21, 22))) as runs:
        for source_files, replica_files, applied in runs:
            model = tmp_path / "cost.json"
            cal = _lagadvisor("calibrate", "--relaxed", "--cores", "2", "-o", str(model), *replica_files)
            fitted = json.loads(model.read_text())
            assert "commit gaps" in cal.stderr
            assert min(fitted["insert_us"], fitted["update_us"], fitted["delete_us"]) > 0
            assert 0.0 < fitted["error_band"] < 1.0 and "error band of absolute times +-" in cal.stderr, cal.stderr
            # The native read (per-transaction columns) and the reference fit the same model, to the bit.
            pure_model = tmp_path / "cost-pure.json"
            pure = _lagadvisor("calibrate", "--relaxed", "--cores", "2", "-o", str(pure_model), *replica_files,
                               env=dict(os.environ, LAGADVISOR_PUREPYTHON="1"))
            assert (pure.stdout, pure.stderr, pure_model.read_text()) == (cal.stdout, cal.stderr, model.read_text())
            _checks_not_priced_twice(tmp_path, replica_files)
            _thinned_fit_agrees(replica_files, applied, retry)

            # The replica's catch-up: from the SQL thread's first commit to its last.
            stamps = [t.immediate_commit_timestamp for t in applied]
            measured_s = (max(stamps) - min(stamps)) / 1e6
            sim = json.loads(_lagadvisor("simulate", "--catch-up", "--relaxed", "--policy", "recorded", "--workers",
                                         "1", "--format", "json", "--cost-model", str(model), *source_files).stdout)
            predicted_s = sim["results"][0]["apply_seconds"]
            # The fit keeps the mean gap (stalls included), so the one-worker prediction is the
            # measured catch-up up to the first transaction's own time and the gaps left out.
            assert predicted_s == pytest.approx(measured_s, rel=0.2), (predicted_s, measured_s, fitted)


def test_a_chained_catch_up_measures_the_wakeup_and_pays_it_once(tmp_path):
    """Most transactions wait for the one before (the writeset clock of a 9.x replica): their
    one-worker commit gaps hold the coordinator's wake-up, which calibrate measures against the
    free ones and takes out, so the simulation, which charges it apart, gives back the catch-up
    (bench/wakeup_calibrate.py: left in, such a catch-up was predicted 20-35% slow)."""
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    for source_files, replica_files, applied in _catch_up("calw", 1, 1500, (27, 28), chain=0.8):
        model = tmp_path / "cost.json"
        cal = _lagadvisor("calibrate", "--relaxed", "--cores", "2", "-o", str(model), *replica_files)
        fitted = json.loads(model.read_text())
        said = re.search(r"note: the coordinator's wake-up after a dependency wait \(wakeup_us\): measured: "
                         r"([\d,]+) commit gaps after a dependency wait against ([\d,]+) without, ([\d.]+) us more",
                         cal.stderr)
        assert said, cal.stderr
        waited, free = (int(said.group(k).replace(",", "")) for k in (1, 2))
        assert waited > 2 * free >= 100 and fitted["wakeup_us"] == pytest.approx(float(said.group(3)), abs=0.06)
        assert 0.0 <= fitted["wakeup_us"] < 1000.0
        stamps = [t.immediate_commit_timestamp for t in applied]
        measured_s = (max(stamps) - min(stamps)) / 1e6
        sim = json.loads(_lagadvisor("simulate", "--catch-up", "--relaxed", "--policy", "recorded", "--workers",
                                     "1", "--format", "json", "--cost-model", str(model), *source_files).stdout)
        assert sim["results"][0]["apply_seconds"] == pytest.approx(measured_s, rel=0.12), (sim["results"], measured_s)


def test_one_shape_catch_up_scales_the_base_model(tmp_path):
    """Every transaction of one shape (1 insert, 2 updates, 1 delete): the per-row costs cannot be
    told apart, so calibrate scales the base model by one factor instead of refusing, says so, and
    says which cores it assumed when --cores is not given."""
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    for source_files, replica_files, applied in _catch_up("cal1", 1, 800, (25, 26), one_shape=True):
        model = tmp_path / "cost.json"
        cal = _lagadvisor("calibrate", "--relaxed", "-o", str(model), *replica_files)
        fitted = json.loads(model.read_text())
        assert "scaled by one factor" in cal.stderr, cal.stderr
        assert f"assumed {usable_cpus()}, this machine's" in cal.stderr, cal.stderr
        given = _lagadvisor("calibrate", "--relaxed", "--cores", "2", "-o", str(tmp_path / "c2.json"), *replica_files)
        assert "were not given" not in given.stderr
        assert json.loads((tmp_path / "c2.json").read_text())["cores"] == 2 and fitted["cores"] == usable_cpus()
        # the model file says where it was measured: the replica's server (its binlog's
        # FORMAT_DESCRIPTION_EVENT), its files, what was fitted, and whether the cores were given
        where = fitted["measured_on"]
        assert re.match(rf"{re.escape(os.path.basename(replica_files[0]))}( to \S+)?, the binlog of a MySQL "
                        rf"9\.\d+\.\d+\S* replica: [\d,]+ commits behind the source, 1 worker, relaxed; ", where), where
        assert ", 1 worker, relaxed; " in where and where.endswith(
            f"; {usable_cpus()} cores (assumed: the calibrating machine's, --cores not given)"), where
        assert json.loads((tmp_path / "c2.json").read_text())["measured_on"].endswith(", 1 worker, relaxed; 2 cores")
        assert fitted["calibrated_workers"] == 1
        from lagadvisor.sim.model import CostModel

        default = CostModel()
        scale = fitted["update_us"] / default.update_us
        assert scale > 0
        for cost in ("insert_us", "delete_us"):  # one factor for every row kind
            assert fitted[cost] / getattr(default, cost) == pytest.approx(scale, rel=1e-3)
        stamps = [t.immediate_commit_timestamp for t in applied]
        measured_s = (max(stamps) - min(stamps)) / 1e6
        sim = json.loads(_lagadvisor("simulate", "--catch-up", "--relaxed", "--policy", "recorded", "--workers",
                                     "1", "--format", "json", "--cost-model", str(model), *source_files).stdout)
        assert sim["results"][0]["apply_seconds"] == pytest.approx(measured_s, rel=0.2)


def test_calibrated_from_a_four_worker_catch_up(tmp_path):
    """Issue 15 part 2: a replica that caught up with 4 workers is enough; the fit goes through the
    simulation of 4 workers, and the model then predicts that catch-up from the source's binlog."""
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    for source_files, replica_files, applied in _catch_up("cal4", 4, 2400, (23, 24)):
        stamps = [t.immediate_commit_timestamp for t in applied]
        measured_s = (max(stamps) - min(stamps)) / 1e6
        model = tmp_path / "cost4.json"
        cal = _lagadvisor("calibrate", "--relaxed", "--workers", "4", "--cores", "2", "-o", str(model),
                          *replica_files)
        fitted = json.loads(model.read_text())
        assert "through the simulation of 4 workers" in cal.stderr, cal.stderr
        assert re.search(r"replica: [\d,]+ commits behind the source, 4 workers, relaxed; 2 cores$", fitted["measured_on"])
        assert fitted["calibrated_workers"] == 4   # where its error band was checked
        _checks_not_priced_twice(tmp_path, replica_files, "--workers", "4", "--cores", "2")
        # the wake-up latencies: fitted where the catch-up's chains showed them, else the base's, said
        if "wake-up latencies fitted through the simulation" in cal.stderr:
            assert f"wakeup_us {round(fitted['wakeup_us'], 1):g} us" in cal.stderr, (cal.stderr, fitted)
        else:
            assert ("note: the wake-up latencies are the base model's, not fitted" in cal.stderr
                    and "dependency chains hardly show them" in cal.stderr), cal.stderr
        assert 0.0 < fitted["error_band"] < 1.0, fitted
        sim = json.loads(_lagadvisor("simulate", "--catch-up", "--relaxed", "--policy", "recorded", "--workers",
                                     "4", "--format", "json", "--cost-model", str(model), *source_files).stdout)
        row = sim["results"][-1]
        assert row["workers"] == 4 and row["apply_seconds_band"] is not None
        lo, hi = row["apply_seconds_band"]
        assert hi / row["apply_seconds"] - 1 == pytest.approx(fitted["error_band"], abs=1e-5)   # its own band at 4
        assert row["apply_seconds"] == pytest.approx(measured_s, rel=0.25), (row, measured_s, fitted, cal.stderr)
        print(f"4-worker catch-up {measured_s:.3f} s, predicted {row['apply_seconds']:.3f} s; {cal.stderr.strip()}")
