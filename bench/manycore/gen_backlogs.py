#!/usr/bin/env python3
"""Generate the many-core lab's backlogs on this machine, with the chroot's MySQL as the source.

Each workload is a schema with its initial rows (``schema.sql``, a mysqldump) and a backlog of
transactions (the source's binlog files, ``binlog_format=ROW``, GTIDs on,
``binlog_row_metadata=FULL``), numbered ``SOURCE_UUID:1-N`` because the source's binary logs and
GTIDs are reset between the initial rows and the backlog.  The transactions come from one client
in a seeded order (``random.Random(seed)``), so the same seed gives the same rows and the same
statements; the source's own WRITESET tracking (always on in 9.x) writes the dependency clock
the replica schedules by.

Shapes (``WORKLOADS``), each its own database:

* ``uniform``: sysbench ``oltp_write_only``'s transaction (an index update, a non-index update,
  a delete and an insert of the same id) over 4 tables of 10,000 rows: wide parallelism.
* ``hot``: orders that each bump one of 8 counters, 70% the same one: conflict-heavy.
* ``mixed``: transactions of 1 to 2,000 rows (most small, 1% large) over one table.
* ``nopk``: a log table without a primary key (no writeset: each such transaction waits for
  all earlier ones), 15% of the transactions, among primary-key updates.
* ``fk``: children that reference parents by a foreign key, inserts, updates and deletes.

Writes ``bench/data/manycore/backlogs/<name>/{schema.sql,binlog.00000N,manifest.json}`` and packs
them as ``bench/data/manycore/backlogs.tar.xz`` (carried to the device with the kit).

The secondary-index backlogs (``INDEX_WORKLOADS``: idx0, idx2, idx4, idx8, uk4, kr, fkr, wide0) are made
only when named, into their own folder: ``--only idx0,idx2,idx4,idx8,uk4,kr,fkr,wide0 --out
bench/data/manycore/index``. So are ``fkfk`` (the lab's ``fk``, the same draw) and its twin ``fkkey``
(the index alone, no foreign key): ``--only fkfk,fkkey --out bench/data/manycore/fktwin``. So are the doc
twins (``DOC_WORKLOADS``: the same events a transaction, 1 kB or 37 kB of them: what the coordinator's
read costs a byte): ``--only doc5,doc500 --out bench/data/manycore/doc``. So are the statement twins
(``STMT_WORKLOADS``: the same 16 row updates a transaction in 1 or 16 statements, 5 or 35 events: what
an event costs): ``--only stmt1,stmt16 --out bench/data/manycore/stmt``. So is ``chain``
(``CHAIN_WORKLOADS``: hot's transactions all on one counter, a pure chain: what a transaction pays
with several workers when it stays on its predecessor's worker): ``--only chain --out
bench/data/manycore/chain``.

Usage: python3 bench/manycore/gen_backlogs.py [--scale 1.0] [--only uniform,hot] [--seed 33] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import lzma
import random
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import realservers  # noqa: E402

DATA = ROOT / "bench" / "data" / "manycore"
SRC_PORT = 13633
SOURCE_OPTIONS = ["--server-id=1", "--gtid-mode=ON", "--enforce-gtid-consistency=ON",
                  "--binlog-format=ROW", "--log-bin=binlog", "--binlog-row-metadata=FULL",
                  "--max-binlog-size=67108864", "--innodb-buffer-pool-size=512M",
                  "--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0"]

Trx = list[str]


@dataclass(frozen=True)
class Workload:
    """A backlog shape: its schema and initial rows, and a seeded transaction generator."""

    name: str
    description: str
    transactions: int
    setup: Callable[[random.Random], Iterator[str]]
    trx: Callable[[random.Random, int], Trx]
    seed_key: str = ""  # the seeded draw's key (default: the name); workloads sharing one draw the same rows


#: Distinct values per string length: the rows keep sysbench's sizes, but repeat, so that the
#: backlogs compress well enough to travel (64 MiB with the kit); apply costs do not depend on it.
POOL = 4096
_POOLS: dict[int, list[str]] = {}


def _digits(rnd: random.Random, groups: int) -> str:
    """sysbench's c/pad values (groups of 11 digits joined by '-'), drawn from a seeded pool."""
    if groups not in _POOLS:
        prnd = random.Random(groups)
        _POOLS[groups] = ["-".join("".join(prnd.choices("0123456789", k=11)) for _ in range(groups))
                          for _ in range(POOL)]
    return _POOLS[groups][rnd.randrange(POOL)]


def _bulk(table: str, rows: Iterator[str], per: int = 500) -> Iterator[str]:
    """Multi-row INSERTs of *per* rows each."""
    batch: list[str] = []
    for row in rows:
        batch.append(row)
        if len(batch) == per:
            yield f"INSERT INTO {table} VALUES " + ",".join(batch)
            batch = []
    if batch:
        yield f"INSERT INTO {table} VALUES " + ",".join(batch)


def _picks(rnd: random.Random, tables: int, rows: int, n: int = 3) -> list[tuple[int, int]]:
    """*n* random (table, id) pairs, drawn table then id, like sysbench's statements."""
    return [(rnd.randint(1, tables), rnd.randint(1, rows)) for _ in range(n)]


# ---------------------------------------------------------------- uniform (oltp_write_only)

UNIFORM_TABLES, UNIFORM_ROWS = 4, 10_000


def uniform_setup(rnd: random.Random) -> Iterator[str]:
    for t in range(1, UNIFORM_TABLES + 1):
        yield (f"CREATE TABLE sbtest{t} (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL "
               "DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))")
        yield from _bulk(f"sbtest{t}", (f"({i},{rnd.randint(1, UNIFORM_ROWS)},'{_digits(rnd, 10)}',"
                                        f"'{_digits(rnd, 5)}')" for i in range(1, UNIFORM_ROWS + 1)))


def uniform_trx(rnd: random.Random, seq: int) -> Trx:
    """oltp_write_only: each statement on a random table and id, like sysbench's."""
    (t1, i1), (t2, i2), (t3, i3) = _picks(rnd, UNIFORM_TABLES, UNIFORM_ROWS)
    return [f"UPDATE sbtest{t1} SET k=k+1 WHERE id={i1}",
            f"UPDATE sbtest{t2} SET c='{_digits(rnd, 10)}' WHERE id={i2}",
            f"DELETE FROM sbtest{t3} WHERE id={i3}",
            f"INSERT INTO sbtest{t3} (id,k,c,pad) VALUES ({i3},{rnd.randint(1, UNIFORM_ROWS)},"
            f"'{_digits(rnd, 10)}','{_digits(rnd, 5)}')"]


# ---------------------------------------------------------------- hot rows


def hot_setup(rnd: random.Random) -> Iterator[str]:
    yield "CREATE TABLE counters (id INT PRIMARY KEY, n BIGINT NOT NULL, note CHAR(100) NOT NULL)"
    yield "INSERT INTO counters VALUES " + ",".join(f"({i},0,'{'n' * 100}')" for i in range(1, 9))
    yield ("CREATE TABLE orders (id INT PRIMARY KEY, counter_id INT NOT NULL, amount INT NOT NULL, "
           "note CHAR(60) NOT NULL, KEY (counter_id))")


def hot_trx(rnd: random.Random, seq: int) -> Trx:
    """An order row and its counter: 70% of them the first counter."""
    counter = 1 if rnd.random() < 0.7 else rnd.randint(2, 8)
    amount = rnd.randint(1, 100)
    return [f"INSERT INTO orders VALUES ({seq},{counter},{amount},'{_digits(rnd, 5)}')",
            f"UPDATE counters SET n=n+{amount} WHERE id={counter}"]


# ---------------------------------------------------------------- mixed sizes

MIXED_ROWS = 20_000


def mixed_setup(rnd: random.Random) -> Iterator[str]:
    yield ("CREATE TABLE items (id INT PRIMARY KEY, k INT NOT NULL, v VARCHAR(64) NOT NULL, "
           "KEY (k))")
    yield from _bulk("items", (f"({i},{rnd.randint(1, 1000)},'{_digits(rnd, 3)}')"
                               for i in range(1, MIXED_ROWS + 1)))


def mixed_trx(rnd: random.Random, seq: int) -> Trx:
    """Mostly 1-3 rows; 20% 10-30, 8% 100-300 and 1% 1,000-2,000 rows (range updates)."""
    x = rnd.random()
    rows = (rnd.randint(1000, 2000) if x < 0.01 else rnd.randint(100, 300) if x < 0.09
            else rnd.randint(10, 30) if x < 0.29 else rnd.randint(1, 3))
    if rows >= 100:
        lo = rnd.randint(1, MIXED_ROWS - rows)
        return [f"UPDATE items SET k=k+1, v='{_digits(rnd, 3)}' WHERE id BETWEEN {lo} AND {lo + rows - 1}"]
    return [f"UPDATE items SET k={rnd.randint(1, 1000)}, v='{_digits(rnd, 3)}' "
            f"WHERE id={rnd.randint(1, MIXED_ROWS)}" for _ in range(rows)]


# ---------------------------------------------------------------- no primary key

NOPK_ROWS, ACCT_ROWS = 5_000, 10_000


def nopk_setup(rnd: random.Random) -> Iterator[str]:
    yield "CREATE TABLE log (k INT NOT NULL, v CHAR(60) NOT NULL, n INT NOT NULL, KEY (k))"
    yield from _bulk("log", (f"({i},'{_digits(rnd, 5)}',0)" for i in range(1, NOPK_ROWS + 1)))
    yield "CREATE TABLE acct (id INT PRIMARY KEY, balance BIGINT NOT NULL, note CHAR(60) NOT NULL)"
    yield from _bulk("acct", (f"({i},1000,'{_digits(rnd, 5)}')" for i in range(1, ACCT_ROWS + 1)))


def nopk_trx(rnd: random.Random, seq: int) -> Trx:
    """10% update a keyless row (found by a secondary index on the replica), 5% insert one,
    85% move money between two accounts (primary keys)."""
    x = rnd.random()
    if x < 0.10:
        return [f"UPDATE log SET n=n+1, v='{_digits(rnd, 5)}' WHERE k={rnd.randint(1, NOPK_ROWS)}"]
    if x < 0.15:
        return [f"INSERT INTO log VALUES ({NOPK_ROWS + seq},'{_digits(rnd, 5)}',0)"]
    a, b, amount = rnd.randint(1, ACCT_ROWS), rnd.randint(1, ACCT_ROWS), rnd.randint(1, 50)
    return [f"UPDATE acct SET balance=balance-{amount} WHERE id={a}",
            f"UPDATE acct SET balance=balance+{amount} WHERE id={b}"]


# ---------------------------------------------------------------- foreign keys

FK_PARENTS, FK_CHILDREN = 2_000, 10_000


FK_CLAUSE = "FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE"


def fk_setup(rnd: random.Random, clause: str = FK_CLAUSE) -> Iterator[str]:
    """``clause`` the child's key on parent_id: the foreign key (the lab's ``fk``) or, for its
    twin ``fkkey``, the index alone that InnoDB would create for it."""
    yield "CREATE TABLE parent (id INT PRIMARY KEY, name CHAR(40) NOT NULL, total BIGINT NOT NULL)"
    yield from _bulk("parent", (f"({i},'{_digits(rnd, 3)}',0)" for i in range(1, FK_PARENTS + 1)))
    yield ("CREATE TABLE child (id INT PRIMARY KEY, parent_id INT NOT NULL, qty INT NOT NULL, "
           f"note CHAR(60) NOT NULL, {clause})")
    yield from _bulk("child", (f"({i},{rnd.randint(1, FK_PARENTS)},1,'{_digits(rnd, 5)}')"
                               for i in range(1, FK_CHILDREN + 1)))


def fk_trx(rnd: random.Random, seq: int) -> Trx:
    """50% a new child (with its parent's total 60% of the time), 25% a child's quantity,
    15% delete a child, 10% rename a parent."""
    x = rnd.random()
    parent = rnd.randint(1, FK_PARENTS)
    if x < 0.5:
        qty = rnd.randint(1, 9)
        out = [f"INSERT INTO child VALUES ({FK_CHILDREN + seq},{parent},{qty},'{_digits(rnd, 5)}')"]
        if rnd.random() < 0.6:
            out.append(f"UPDATE parent SET total=total+{qty} WHERE id={parent}")
        return out
    if x < 0.75:
        return [f"UPDATE child SET qty=qty+1 WHERE id={rnd.randint(1, FK_CHILDREN + seq - 1)}"]
    if x < 0.9:
        return [f"DELETE FROM child WHERE id={rnd.randint(1, FK_CHILDREN + seq - 1)}"]
    return [f"UPDATE parent SET name='{_digits(rnd, 3)}' WHERE id={parent}"]


WORKLOADS = {w.name: w for w in (
    Workload("uniform", "sysbench oltp_write_only shape, 4 tables x 10k rows", 12_000, uniform_setup, uniform_trx),
    Workload("hot", "orders + 8 counters, 70% on one counter (conflict-heavy)", 8_000, hot_setup, hot_trx),
    Workload("mixed", "1-3 rows mostly, 20% 10-30, 8% 100-300, 1% 1000-2000 rows", 3_000, mixed_setup, mixed_trx),
    Workload("nopk", "10% updates + 5% inserts on a table without primary key, 85% PK transfers",
             8_000, nopk_setup, nopk_trx),
    Workload("fk", "child rows with a foreign key to 2k parents: inserts, updates, deletes",
             10_000, fk_setup, fk_trx),
)}


# ---------------------------------------------------------------- secondary indexes (not in the lab's set)

INDEX_TABLES, INDEX_ROWS, INDEX_PARENTS = 4, 10_000, 1_000
INDEX_COLUMNS = ("a", "b", "c", "d", "e", "f", "g", "h")
#: Each variant's index clauses (the same columns, rows and statements in all): ``idxK`` the first K
#: of a to h under non-unique indexes; ``uk4`` a to d under unique ones; ``kr`` a non-unique index
#: on ``r``; ``fkr`` a foreign key from ``r`` to the parent table ``p`` (InnoDB indexes ``r`` for it).
#: ``wide0`` (:data:`WIDE_VARIANTS`) is ``idx0`` with a wider ``pad``: the same rows, more bytes.
INDEX_VARIANTS = {**{f"idx{k}": "".join(f", KEY k{col} ({col})" for col in INDEX_COLUMNS[:k]) for k in (0, 2, 4, 8)},
                  "uk4": "".join(f", UNIQUE KEY u{col} ({col})" for col in INDEX_COLUMNS[:4]),
                  "kr": ", KEY kr (r)",
                  "fkr": ", FOREIGN KEY (r) REFERENCES p (id)"}
#: Variant -> its ``pad``'s digit groups (12 characters each, less one): 5 (CHAR(60), sysbench's) unless named.
WIDE_VARIANTS = {"wide0": 21}
#: Variants also generated as ``<name>f``: the insert of fresh values (:func:`index_trx` ``fresh``).
FRESH_VARIANTS = ("idx4", "uk4")
PAD_GROUPS = 5


def index_setup(keys: str, groups: int = PAD_GROUPS) -> Callable[[random.Random], Iterator[str]]:
    """A parent table ``p`` of 1,000 rows and four tables of 10,000 rows with the same columns
    (a to h, unique in every row: ``id * 16`` and what the updates add; ``r`` one of p's ids) and
    *keys*, ``pad`` ``CHAR(12 * groups)``: the same rows whatever the variant (one seeded draw,
    ``seed_key``)."""
    def setup(rnd: random.Random) -> Iterator[str]:
        yield "CREATE TABLE p (id INT NOT NULL PRIMARY KEY, x INT NOT NULL)"
        yield from _bulk("p", (f"({i},0)" for i in range(1, INDEX_PARENTS + 1)))
        ints = "".join(f"{col} INT NOT NULL, " for col in INDEX_COLUMNS)
        for t in range(1, INDEX_TABLES + 1):
            yield (f"CREATE TABLE t{t} (id INT NOT NULL PRIMARY KEY, {ints}r INT NOT NULL, "
                   f"pad CHAR({12 * groups}) NOT NULL{keys})")
            yield from _bulk(f"t{t}", (_index_row(rnd, i, groups) for i in range(1, INDEX_ROWS + 1)))
    return setup


def _index_row(rnd: random.Random, i: int, groups: int = PAD_GROUPS, value: int | None = None) -> str:
    """A row's values: a to h ``i * 16`` (an update adds 1: unique until a row's 16th update), or
    *value*."""
    v = i * 16 if value is None else value
    return (f"({i},{','.join([str(v)] * len(INDEX_COLUMNS))},{rnd.randint(1, INDEX_PARENTS)},"
            f"'{_digits(rnd, groups)}')")


#: The first a to h value of a ``fresh`` insert (:func:`index_trx`): above every table row's ``i * 16 + 15``.
FRESH_BASE = 1_000_000


def index_trx(groups: int = PAD_GROUPS, fresh: bool = False) -> Callable[[random.Random, int], Trx]:
    """oltp_write_only's four rows, with every indexed column changed: an update of a to h and r,
    an update of pad, a delete and the insert of the same id. Each secondary index takes 4 entry
    changes a transaction (the update's old entry delete-marked and its new one inserted, the
    delete's, the insert's); the rows and statements are the same in every variant, and the bytes
    but for *groups* (the pad's length: one draw whatever its length). The insert gives a to h
    ``i * 16``, mostly the values the delete just delete-marked (most rows were never updated), or
    with *fresh* a value no row ever had (``FRESH_BASE + seq * 16``): the same draw, one
    number different, so that a unique index's duplicate scan (InnoDB's
    ``row_ins_scan_sec_index_for_duplicate``, run only when an entry with the same unique columns
    is found, delete-marked ones included) is measured apart from its entry."""
    def trx(rnd: random.Random, seq: int) -> Trx:
        (t1, i1), (t2, i2), (t3, i3) = _picks(rnd, INDEX_TABLES, INDEX_ROWS)
        sets = ", ".join(f"{col}={col}+1" for col in INDEX_COLUMNS)
        return [f"UPDATE t{t1} SET {sets}, r=r%{INDEX_PARENTS}+1 WHERE id={i1}",
                f"UPDATE t{t2} SET pad='{_digits(rnd, groups)}' WHERE id={i2}",
                f"DELETE FROM t{t3} WHERE id={i3}",
                f"INSERT INTO t{t3} VALUES {_index_row(rnd, i3, groups, FRESH_BASE + seq * 16 if fresh else None)}"]
    return trx


#: What secondary indexes and foreign keys cost a row-based replica (bench/manycore/index_cost.py):
#: the same backlog over the index clauses of :data:`INDEX_VARIANTS`. Generated only by name
#: (``--only idx0,idx2,idx4,idx8,uk4,kr,fkr,wide0 --out DIR``), never into the lab's own backlogs.
INDEX_WORKLOADS = {name: Workload(name, f"oltp_write_only's rows on 4 tables x 10k rows, every indexed column "
                                  f"updated; keys:{keys or ' none'}; pad CHAR({12 * groups})", 4_000,
                                  index_setup(keys, groups), index_trx(groups, fresh), "idx")
                   for name, keys, groups, fresh in [(n, k, PAD_GROUPS, False) for n, k in INDEX_VARIANTS.items()]
                   + [(n, INDEX_VARIANTS["idx0"], g, False) for n, g in WIDE_VARIANTS.items()]
                   + [(f"{n}f", INDEX_VARIANTS[n], PAD_GROUPS, True) for n in FRESH_VARIANTS]}
#: The lab's ``fk`` shape and its twin without the foreign key (the same draw: the same rows and
#: statements): what the checks of the lab's own foreign-key shape cost (index_cost.py ``PAIRS``).
INDEX_WORKLOADS.update({
    "fkfk": Workload("fkfk", "the lab's fk backlog (the same draw)", 10_000, fk_setup, fk_trx, "fk"),
    "fkkey": Workload("fkkey", "the lab's fk backlog with KEY (parent_id) instead of its foreign key",
                      10_000, lambda rnd: fk_setup(rnd, "KEY parent_id (parent_id)"), fk_trx, "fk")})


# ---------------------------------------------------------------- wide events (not in the lab's set)

DOC_TABLES, DOC_ROWS = 4, 2_000


def doc_setup(groups: int) -> Callable[[random.Random], Iterator[str]]:
    """Four tables of 2,000 rows (``id``, ``k``, a ``doc`` TEXT of ``12 * groups - 1`` characters):
    the same rows whatever ``groups`` (one seeded draw, ``seed_key``)."""
    def setup(rnd: random.Random) -> Iterator[str]:
        for t in range(1, DOC_TABLES + 1):
            yield f"CREATE TABLE d{t} (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, doc TEXT NOT NULL)"
            yield from _bulk(f"d{t}", (f"({i},{rnd.randint(1, DOC_ROWS)},'{_digits(rnd, groups)}')"
                                       for i in range(1, DOC_ROWS + 1)))
    return setup


def doc_trx(groups: int) -> Callable[[random.Random, int], Trx]:
    """Two updates of ``k`` (the full row image carries ``doc`` twice in each), a delete and the
    insert of the same id: the same statements and rows whatever ``groups``; the events' bytes
    grow with the ``doc``, their number does not."""
    def trx(rnd: random.Random, seq: int) -> Trx:
        (t1, i1), (t2, i2), (t3, i3) = _picks(rnd, DOC_TABLES, DOC_ROWS)
        return [f"UPDATE d{t1} SET k=k+1 WHERE id={i1}", f"UPDATE d{t2} SET k=k+1 WHERE id={i2}",
                f"DELETE FROM d{t3} WHERE id={i3}",
                f"INSERT INTO d{t3} VALUES ({i3},{rnd.randint(1, DOC_ROWS)},'{_digits(rnd, groups)}')"]
    return trx


#: What the coordinator's read costs per byte of an event (docs/accuracy.md, "The coordinator
#: reads per event, not per byte"): ``doc5`` and ``doc500``, the same transactions and events with
#: a ``doc`` of 59 and 5,999 characters (about 1 kB and 37 kB of binlog a transaction). Generated
#: only by name (``--only doc5,doc500 --out DIR``).
DOC_WORKLOADS = {f"doc{g}": Workload(f"doc{g}", f"2 updates, a delete and an insert on 4 tables x 2k rows with a "
                                     f"TEXT of {12 * g - 1} characters", 2_000, doc_setup(g), doc_trx(g), "doc")
                 for g in (5, 500)}


# ---------------------------------------------------------------- many events (not in the lab's set)

STMT_TABLES, STMT_ROWS, STMT_UPDATES = 4, 10_000, 16


def stmt_setup(rnd: random.Random) -> Iterator[str]:
    """Four tables of 10,000 rows (``id``, ``k``, a ``c`` of 59 characters)."""
    for t in range(1, STMT_TABLES + 1):
        yield f"CREATE TABLE s{t} (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(60) NOT NULL)"
        yield from _bulk(f"s{t}", (f"({i},{rnd.randint(1, STMT_ROWS)},'{_digits(rnd, 5)}')"
                                   for i in range(1, STMT_ROWS + 1)))


def stmt_trx(statements: int) -> Callable[[random.Random, int], Trx]:
    """:data:`STMT_UPDATES` updates of ``k`` on distinct rows of one table, in ``statements``
    statements (``WHERE id IN (...)``): the same rows whatever ``statements`` (one seeded draw),
    a table map and an update rows event a statement."""
    def trx(rnd: random.Random, seq: int) -> Trx:
        t = rnd.randint(1, STMT_TABLES)
        ids = rnd.sample(range(1, STMT_ROWS + 1), STMT_UPDATES)
        per = STMT_UPDATES // statements
        return [f"UPDATE s{t} SET k=k+1 WHERE id IN ({','.join(map(str, ids[k:k + per]))})"
                for k in range(0, STMT_UPDATES, per)]
    return trx


#: What the coordinator's read costs per event (docs/accuracy.md, "The coordinator reads per event"):
#: ``stmt1`` and ``stmt16``, the same 16 row updates a transaction in one statement (5 events) or
#: sixteen (35 events). Generated only by name (``--only stmt1,stmt16 --out DIR``).
STMT_WORKLOADS = {f"stmt{n}": Workload(f"stmt{n}", f"{STMT_UPDATES} updates of k on one of 4 tables x 10k rows, "
                                       f"in {n} statement{'s' if n > 1 else ''}", 2_000, stmt_setup, stmt_trx(n),
                                       "stmt")
                  for n in (1, 16)}


def chain_trx(rnd: random.Random, seq: int) -> Trx:
    """``hot``'s order and counter, every one on the first counter: each transaction's writeset
    meets its predecessor's, so each waits for the one before to commit."""
    amount = rnd.randint(1, 100)
    return [f"INSERT INTO orders VALUES ({seq},1,{amount},'{_digits(rnd, 5)}')",
            f"UPDATE counters SET n=n+{amount} WHERE id=1"]


#: Per transaction or per switch (docs/accuracy.md "Charged per switch"): ``chain``, a pure chain,
#: whose transactions MySQL's get_free_worker gives to the predecessor's worker at any worker
#: count (no switch), so its multi-worker time less its one-worker time is the multi-worker cost a
#: transaction pays without a switch. Generated only by name (``--only chain --out DIR``).
CHAIN_WORKLOADS = {"chain": Workload("chain", "hot's orders, every one on the first counter (a pure chain)",
                                     8_000, hot_setup, chain_trx)}


# ---------------------------------------------------------------- generation


def _connect(database: str | None = None):
    import mysql.connector

    return mysql.connector.connect(host="127.0.0.1", port=SRC_PORT, user="root", password="",
                                   database=database, autocommit=False)


def _dump(db: str) -> str:
    """``mysqldump`` (the chroot's) of one database, schema and rows, no GTID or binlog noise."""
    cmd = ["chroot", str(realservers.chroot_root()), "mysqldump", "--no-defaults", "--user=root",
           "--host=127.0.0.1", f"--port={SRC_PORT}", "--protocol=TCP", "--databases", db,
           "--set-gtid-purged=OFF", "--skip-dump-date", "--skip-comments", "--single-transaction",
           "--extended-insert", "--net-buffer-length=1048576"]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def generate(src: realservers.MySQLServer, wl: Workload, n: int, seed: int, out: Path) -> dict:
    """Initial rows, dump, reset the source's binlogs and GTIDs, the backlog; return the manifest."""
    rnd = random.Random(f"{seed}:{wl.seed_key or wl.name}")
    conn = _connect()
    cur = conn.cursor()
    cur.execute(f"DROP DATABASE IF EXISTS {wl.name}")
    cur.execute(f"CREATE DATABASE {wl.name}")
    cur.execute(f"USE {wl.name}")
    for stmt in wl.setup(rnd):
        cur.execute(stmt)
        conn.commit()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "schema.sql").write_text(_dump(wl.name))
    cur.execute("RESET BINARY LOGS AND GTIDS")
    t0 = time.monotonic()
    for seq in range(1, n + 1):
        for stmt in wl.trx(rnd, seq):
            cur.execute(stmt)
        conn.commit()
    elapsed = time.monotonic() - t0
    cur.execute("FLUSH BINARY LOGS")
    cur.execute("SELECT @@GLOBAL.gtid_executed, @@server_uuid")
    target, uuid = cur.fetchone()
    conn.close()
    files = []
    for f in src.binlog_files()[:-1]:
        shutil.copy(f, out / f.name)
        files.append({"name": f.name, "bytes": f.stat().st_size})
    last = int(target.rsplit("-", 1)[1]) if "-" in target else 1
    # statements that change no row (a DELETE of a deleted child) write no transaction
    manifest = {"name": wl.name, "description": wl.description, "transactions": last, "seed": seed,
                "target": target.replace("\n", ""), "source_uuid": uuid, "files": files,
                "source_seconds": round(elapsed, 1), "mysqld": src.version}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def pack(folder: Path, names: list[str], tar_path: Path) -> int:
    """tar.xz of ``folder/<name>/*`` for each name (reproducible: fixed times and owners)."""
    tmp = tar_path.with_suffix(".tmp")
    with lzma.open(tmp, "wb", preset=9) as xz, tarfile.open(fileobj=xz, mode="w") as tar:
        for name in names:
            for f in sorted((folder / name).iterdir()):
                info = tar.gettarinfo(str(f), f"backlogs/{name}/{f.name}")
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                with f.open("rb") as fh:
                    tar.addfile(info, fh)
    tmp.replace(tar_path)
    return tar_path.stat().st_size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every workload's transactions")
    ap.add_argument("--only", default="", help="comma-separated workloads to (re)generate")
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--out", type=Path, default=DATA)
    args = ap.parse_args()
    names = [n for n in (args.only.split(",") if args.only else WORKLOADS) if n]
    known = {**WORKLOADS, **INDEX_WORKLOADS, **DOC_WORKLOADS, **STMT_WORKLOADS, **CHAIN_WORKLOADS}
    if unknown := [n for n in names if n not in known]:
        ap.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(known)}")
    src = realservers.MySQLServer("mc-source", SRC_PORT, SOURCE_OPTIONS, fresh=True)
    src.start()
    try:
        for name in names:
            wl = known[name]
            m = generate(src, wl, max(1, round(wl.transactions * args.scale)), args.seed,
                         args.out / "backlogs" / name)
            size = sum(f["bytes"] for f in m["files"])
            print(f"{name}: {m['transactions']} transactions, {size / 2**20:.1f} MiB of binlog, "
                  f"target {m['target']} ({m['source_seconds']} s on the source)", flush=True)
    finally:
        src.remove()
    every = sorted(p.name for p in (args.out / "backlogs").iterdir() if (p / "manifest.json").exists())
    size = pack(args.out / "backlogs", every, args.out / "backlogs.tar.xz")
    print(f"{args.out / 'backlogs.tar.xz'}: {', '.join(every)}: {size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
