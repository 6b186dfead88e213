"""Unit checks of writeset rules on small, explicit cases (the fixtures check them end to end)."""

from __future__ import annotations

from lagadvisor.binlog.constants import RowsKind
from lagadvisor.binlog.transactions import RowChange, TableStats, Transaction, TransactionAssembler
from lagadvisor.depgraph.policies import ClockComputer, Fallback, SerialCommitOrder, WritesetTracker, history_size_default
from lagadvisor.schema.ddl import apply_statement
from lagadvisor.schema.model import Catalog
from lagadvisor.writeset.collation import canonicalizer
from lagadvisor.writeset.extract import Writeset, plan_table, row_hashes, transaction_writeset


def _catalog(*ddl: str) -> Catalog:
    cat = Catalog()
    for stmt in ddl:
        apply_statement(cat, stmt, "db")
    return cat


def test_collation_equality_classes():
    ai = canonicalizer("utf8mb4_0900_ai_ci")
    assert ai("abc".encode()) == ai("ÁBC".encode()) and ai(b"abc") != ai(b"abc ")  # NO PAD
    general = canonicalizer("utf8mb4_general_ci")
    assert general(b"abc") == general(b"ABC  ")  # PAD SPACE
    binary = canonicalizer("utf8mb4_bin")
    assert binary(b"abc") != binary(b"ABC") and binary(b"abc") == binary(b"abc ")
    zero_bin = canonicalizer("utf8mb4_0900_bin")
    assert zero_bin(b"abc") != zero_bin(b"abc ")
    swedish = canonicalizer("latin1_swedish_ci")
    assert swedish("tângo".encode("cp1252")) == swedish(b"TANGO")
    assert swedish("å".encode("cp1252")) != swedish(b"a")


def test_hash_counts_follow_the_server():
    cat = _catalog("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) COLLATE utf8mb4_bin NOT NULL, "
                   "c CHAR(4) NOT NULL, n VARCHAR(8) NULL, UNIQUE KEY (v), UNIQUE KEY (c), UNIQUE KEY (n))")
    plan = plan_table(cat.get("db", "t"), cat)
    out: list[int] = []
    row_hashes(plan, {0: 1, 1: b"x", 2: b"abcd", 3: None}, out, True)
    # PRIMARY (INT) 1 + v (VARCHAR, two passes) 2 + c (CHAR) 1 + n (NULL: skipped) 0
    assert len(out) == 4
    assert len(set(out)) == 4  # utf8mb4_bin pads: the two passes differ
    ai = _catalog("CREATE TABLE u (k VARCHAR(10) PRIMARY KEY)")  # utf8mb4_0900_ai_ci: NO PAD
    out2: list[int] = []
    row_hashes(plan_table(ai.get("db", "u"), ai), {0: b"k"}, out2, True)
    assert len(out2) == 2 and len(set(out2)) == 1  # counted twice, one history entry


def test_implicit_primary_key_and_missing_keys():
    cat = _catalog("CREATE TABLE a (x INT NOT NULL, y INT, UNIQUE KEY ux (x), UNIQUE KEY uy (y))",
                   "CREATE TABLE b (x INT NULL, UNIQUE KEY ux (x))")
    pa = plan_table(cat.get("db", "a"), cat)
    assert not pa.missing_keys and pa.keys[0].name == "ux"
    assert plan_table(cat.get("db", "b"), cat).missing_keys


def test_fk_child_hash_matches_parent_row_and_parent_changes_fall_back():
    cat = _catalog("CREATE TABLE p (id INT PRIMARY KEY)",
                   "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))")
    pp, pc = plan_table(cat.get("db", "p"), cat), plan_table(cat.get("db", "c"), cat)
    assert pp.fk_parent and not pc.fk_parent
    parent_row: list[int] = []
    row_hashes(pp, {0: 7}, parent_row, True)
    child_row: list[int] = []
    row_hashes(pc, {0: 1, 1: 7}, child_row, True)
    assert parent_row[0] in child_row
    no_checks: list[int] = []
    row_hashes(pc, {0: 1, 1: 7}, no_checks, False)  # foreign_key_checks=0: no FK hash
    assert len(no_checks) == len(child_row) - 1


def _trx(seq: int, changes, tables, **kw) -> Transaction:
    base = dict(file="f", start_offset=0, end_offset=1, index=seq, gtid=None, last_committed=seq - 1,
                sequence_number=seq, immediate_commit_timestamp=0, original_commit_timestamp=0,
                transaction_length=0, server_id=1, thread_id=kw.pop("thread_id", 1), databases=("db",),
                tables=tables, rows=sum(t.rows for t in tables), row_changes=changes, statements=(),
                event_count=1)
    base.update(kw)
    return Transaction(**base)


def test_tracker_history_and_session_rules():
    """Appendix B of the spec in miniature: conflicts, a reset, and WRITESET_SESSION."""
    cat = _catalog("CREATE TABLE t (id INT PRIMARY KEY)")
    plans = {"db.t": plan_table(cat.get("db", "t"), cat)}
    cc = ClockComputer(1000, SerialCommitOrder())
    def step(seq, key, session):
        ch = (RowChange("db.t", RowsKind.WRITE, None, {0: key}),)
        t = _trx(seq, ch, (TableStats("db.t", inserts=1),), thread_id=session)
        return cc.step(t, transaction_writeset(t, plans))
    assert step(1, 1, 1).writeset == 0
    assert step(2, 2, 2).writeset == 1          # history_start floor
    r3 = step(3, 1, 2)
    assert r3.writeset == 1 and r3.writeset_session == 2   # conflicts with T1; session B last wrote T2
    ddl = _trx(4, (), (), ddl=True)
    c4 = cc.step(ddl, Writeset())
    assert c4.fallback == Fallback.DDL and c4.writeset == 3
    assert step(5, 2, 1).writeset == 4           # after the reset nothing goes below 4


def test_capacity_and_limit():
    tr = WritesetTracker(history_size=3)
    ws = Writeset(hashes=[1, 2])
    assert tr.dependency(1, 0, ws, None) == (0, None)
    parent, reason = tr.dependency(2, 1, Writeset(hashes=[2, 3]), None)
    assert parent == 1 and reason == Fallback.HISTORY_FULL and tr.history_start == 2
    parent, reason = tr.dependency(3, 2, Writeset(hashes=[5, 6, 7, 8]), None)
    assert reason == Fallback.WRITESET_LIMIT and parent == 2


def test_history_defaults_by_version():
    assert history_size_default((8, 0, 36)) == 25_000
    assert history_size_default((8, 4, 3)) == 25_000
    assert history_size_default((9, 5, 0)) == 1_000_000
    assert history_size_default((9, 7, 4)) == 10_000_000


def test_huge_transaction_keeps_bounded_row_images(monkeypatch):
    from conftest import FIXTURES
    from lagadvisor.depgraph.pipeline import ClockOptions
    from lagadvisor.depgraph.read import prepare
    from lagadvisor.depgraph.read import run_clocks

    monkeypatch.setattr(TransactionAssembler, "MAX_ROW_CHANGES", 100)
    files = [str(FIXTURES / "single_full" / "binlog.000001")]
    opts = ClockOptions(commit_order="serial")
    run = prepare(files, opts)
    big = [(t, c) for t, ws, c in run_clocks(files, run, opts) if t.rows > 1000]
    assert big and all(t.row_changes_truncated and len(t.row_changes) <= 100 + 200 for t, c in big)
    assert all(c.fallback == Fallback.TOO_LARGE and c.writeset == c.commit_order for t, c in big)


def test_alter_modify_and_change_move_columns():
    """MODIFY/CHANGE ... FIRST | AFTER reorder the columns the row images follow."""
    cat = _catalog("CREATE TABLE m (a INT PRIMARY KEY, b INT, c INT)",
                   "ALTER TABLE m MODIFY c INT FIRST",
                   "ALTER TABLE m CHANGE b bb BIGINT AFTER a, MODIFY a INT")
    t = cat.get("db", "m")
    assert [c.name for c in t.columns] == ["c", "a", "bb"]
    assert t.primary_key.parts[0].column == "a"
    assert plan_table(t, cat).keys[0].parts[0][0] == 1  # PK read from the second row-image column
