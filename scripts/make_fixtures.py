#!/usr/bin/env python3
"""Generate real binlog fixtures, with reference readings, from real MySQL 9.x and MariaDB servers.

    python3 scripts/make_fixtures.py --seed 1 [--out fixtures] [--only NAME ...]

Every fixture is made on a freshly initialised server (scripts/realservers.py;
run ``python3 scripts/realservers.py provision`` first), so its binlog
numbering starts at 000001 and the workload's CREATE statements are inside the
first file.  For each fixture ``OUT/<name>/`` receives:

* the binary logs (``binlog.000001`` ...; MariaDB: ``mariadb-bin.000001`` ...),
* ``reference.tsv``: one line per transaction in binlog order, read by the
  server's own reader (``mysqlbinlog`` / ``mariadb-binlog``) and reduced by
  tests/reference.py (MySQL: file, gtid, last_committed, sequence_number;
  MariaDB: file, gtid, commit_id),
* ``schema.sql``: ``mysqldump --no-data`` of the workload databases at the end.

``OUT/MANIFEST`` is a JSON list describing each fixture; it holds nothing that
changes between runs with the same seed, so re-running gives the same bytes.

The single-connection workload (:func:`single_connection_workload`) is
deterministic for a seed: the same statements in the same order, hence the
same transactions; only GTID uuids and timestamps differ between runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import subprocess
import sys
import time
import unicodedata
from decimal import Decimal
from pathlib import Path
from typing import Callable, Sequence

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "tests"))

import realservers as rs  # noqa: E402
import reference  # noqa: E402

MYSQL_BASE_OPTIONS = ("--server-id=1", "--log-bin=binlog", "--gtid-mode=ON",
                      "--enforce-gtid-consistency=ON", "--binlog-format=ROW")
MARIADB_BASE_OPTIONS = ("--server-id=1", "--log-bin=mariadb-bin", "--binlog-format=ROW")
BASE_PORT = 13410
WORKLOAD_DATABASES = ("wl", "wl_fk")
#: Steps of the single-connection workload (each step is one transaction,
#: autocommit statement, rolled-back transaction or DDL).
SINGLE_STEPS = 1500


# =========================================================================== workload


def _strip_accents(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", s) if not unicodedata.combining(c))


# Collation models: map a key to what the server compares.  They only steer the
# workload towards deliberate collisions; a wrong guess just yields a
# duplicate-key error, which is deterministic and counted.
def _norm_ai_ci(s):            # utf8mb4_0900_ai_ci: NO PAD, accent/case-insensitive
    return _strip_accents(s).casefold()


def _norm_pad_ci(s):           # utf8mb4_general_ci, latin1_swedish_ci, CHAR: PAD SPACE, ci
    return _strip_accents(s).casefold().rstrip(" ")


def _norm_pad_bin(s):          # utf8mb4_bin: PAD SPACE, binary
    return s.rstrip(" ")


def _norm_exact(s):            # VARBINARY, numbers, temporals
    return s


_WORDS = ("abc", "alma", "banana", "cafe", "delta", "echo", "elan", "fiance", "gala", "hotel",
          "india", "jalapeno", "kilo", "lima", "mama", "nino", "opera", "papa", "quebec",
          "resume", "sierra", "tango", "uniform", "victor", "whisky", "xray", "yankee", "zulu")
_ACCENTS = {"a": "áàâ", "e": "éèê", "i": "íî", "o": "óô", "u": "úû", "n": "ñ", "c": "ç"}


def _variant(rng: random.Random, base: str) -> str:
    """A spelling of *base* that differs only in case, accents or trailing spaces."""
    kind = rng.randrange(6)
    if kind == 0:
        return base
    if kind == 1:
        return base.upper()
    if kind == 2:
        return base.capitalize()
    if kind == 3:   # accent one letter
        spots = [i for i, ch in enumerate(base) if ch in _ACCENTS]
        if spots:
            i = rng.choice(spots)
            return base[:i] + rng.choice(_ACCENTS[base[i]]) + base[i + 1:]
        return base.upper()
    if kind == 4:
        return base + " "
    return base.capitalize() + "  "


@dataclasses.dataclass
class WorkloadStats:
    """What the workload did (counts are deterministic for a seed)."""
    steps: int = 0
    commits: int = 0
    rollbacks: int = 0
    ddl: int = 0
    failed_statements: int = 0


class _KeyTable:
    """A table whose single-column primary key the workload chooses (model: norm(key) -> key)."""

    def __init__(self, table: str, column: str, norm: Callable[[str], str], pool: Sequence[str],
                 make_key: Callable[[random.Random, str], str]):
        self.table, self.column, self.norm = table, column, norm
        self.pool, self.make_key = list(pool), make_key
        self.rows: dict[str, str] = {}          # insertion-ordered: deterministic choices

    def fresh_key(self, rng: random.Random) -> str:
        return self.make_key(rng, rng.choice(self.pool))


class SingleConnectionWorkload:
    """The seeded single-connection workload shared by the ``single_*`` fixtures.

    Databases ``wl`` and ``wl_fk`` and all tables are created inside the binlog.
    Tables and what they exercise:

    * ``wl.t_auto``: INT AUTO_INCREMENT PK, NOT NULL UNIQUE INT ``u``, nullable UNIQUE
      VARCHAR ``v`` (NULL often); target of INSERT ... ON DUPLICATE KEY UPDATE and REPLACE;
      gets ``ALTER TABLE ... ADD COLUMN`` mid-way.
    * ``wl.t_ci`` VARCHAR(32) utf8mb4_0900_ai_ci PK, ``wl.t_bin`` VARCHAR(32) utf8mb4_bin PK,
      ``wl.t_varbin`` VARBINARY(32) PK: keys differing only in case, accents and trailing
      spaces, deleted in one transaction and re-inserted in another spelling later.
    * ``wl.t_comp`` composite PK (INT, VARCHAR); ``wl.t_prefix`` UNIQUE KEY (name(8)) on a
      utf8mb4_general_ci (PAD SPACE) VARCHAR(64); ``wl.t_latin`` latin1_swedish_ci PK.
    * ``wl.t_nokey``: no primary or unique key (only a plain index).
    * ``wl_fk.parent`` / ``wl_fk.child``: foreign key, child rows with NULL and non-NULL
      parent ids; some transactions modify the parent (name, new rows, key changes).
    * ``wl.t_datetime`` DATETIME(3) PK, ``wl.t_decimal`` DECIMAL(12,3) PK plus UNIQUE
      BIGINT UNSIGNED (values near 2^64), ``wl.t_char`` CHAR(10) PK.
    * ``wl.t_hot``: four hot rows hit repeatedly; ``wl.t_bulk``: one 3000-row transaction
      and a 300-row UPDATE.
    """

    DESCRIPTION = (
        "seeded single-connection SQL workload (scripts/make_fixtures.py"
        f" SingleConnectionWorkload, {SINGLE_STEPS} steps): databases wl and wl_fk created in the"
        " binlog; tables with AUTO_INCREMENT + UNIQUE NOT NULL + nullable UNIQUE keys,"
        " VARCHAR PKs in utf8mb4_0900_ai_ci / utf8mb4_bin / VARBINARY / latin1 with keys"
        " differing in case, accents and trailing spaces, composite PK, unique prefix key"
        " (utf8mb4_general_ci), no-key table, FK parent/child (NULL and non-NULL FK),"
        " DATETIME / DECIMAL / BIGINT UNSIGNED / CHAR keys, hot rows; autocommit single-row"
        " INSERT/UPDATE/DELETE, multi-statement multi-table transactions, primary key"
        " updates, INSERT ... ON DUPLICATE KEY UPDATE, REPLACE, ROLLBACKs, tagged GTIDs"
        " (SET gtid_next='AUTOMATIC:lagadv'), DDL mid-way (ALTER TABLE ADD COLUMN,"
        " CREATE TABLE, DROP TABLE), one 3000-row transaction and one 300-row UPDATE")

    def __init__(self, conn, seed: int, *, steps: int = SINGLE_STEPS,
                 on_step: Callable[[int], None] | None = None):
        self.conn = conn
        self.cur = conn.cursor()
        self.rng = random.Random(seed)
        self.steps = steps
        self.on_step = on_step
        self.stats = WorkloadStats()
        self.in_trx = False
        self.auto_has_note = False
        self.tmp_rows: list[int] = []
        self.pending: list[tuple[int, Callable[[], None]]] = []   # (due step, action)
        dt = lambda r, b: b                                          # noqa: E731
        self.keyed = {
            "t_ci": _KeyTable("wl.t_ci", "k", _norm_ai_ci, _WORDS, _variant),
            "t_bin": _KeyTable("wl.t_bin", "k", _norm_pad_bin, _WORDS, _variant),
            "t_varbin": _KeyTable("wl.t_varbin", "k", _norm_exact, _WORDS, _variant),
            "t_latin": _KeyTable("wl.t_latin", "k", _norm_pad_ci, _WORDS, _variant),
            "t_char": _KeyTable("wl.t_char", "k", _norm_pad_ci, _WORDS[:14],
                                lambda r, b: _variant(r, b)[:10]),
            "t_datetime": _KeyTable("wl.t_datetime", "k", _norm_exact,
                                    [f"2024-0{m}-{d:02d} {h:02d}:{mi:02d}:{s:02d}.{ms:03d}"
                                     for m, d, h, mi, s, ms in
                                     ((1 + i % 9, 1 + i % 28, i % 24, (7 * i) % 60, (13 * i) % 60,
                                       (37 * i) % 1000) for i in range(60))], dt),
            "t_decimal": _KeyTable("wl.t_decimal", "k", _norm_exact,
                                   [str(Decimal(v) / 1000) for v in
                                    range(-123456, 123456, 4321)], dt),
        }
        # t_decimal also has a UNIQUE BIGINT UNSIGNED column u
        self.decimal_u: dict[str, int] = {}
        self.comp: dict[tuple[int, str], int] = {}
        self.prefix: dict[int, str] = {}          # id -> name
        self.parents: dict[int, str] = {}
        self.children: dict[int, int | None] = {}  # child id -> parent id

    # ---------------------------------------------------------------- SQL helpers
    def execute(self, sql: str, params: Sequence | None = None) -> bool:
        """Run one statement; a duplicate-key / FK error is counted and skipped (returns False)."""
        import mysql.connector
        try:
            self.cur.execute(sql, params)
        except mysql.connector.IntegrityError as err:
            if err.errno not in (1062, 1451, 1452, 1586):
                raise
            self.stats.failed_statements += 1
            return False
        return True

    def begin(self):
        self.execute("START TRANSACTION")
        self.in_trx = True

    def commit(self):
        self.execute("COMMIT")
        self.in_trx = False
        self.stats.commits += 1

    def rollback(self):
        self.execute("ROLLBACK")
        self.in_trx = False
        self.stats.rollbacks += 1

    def autocommit(self, fn: Callable[[], object]):
        fn()
        self.stats.commits += 1

    def transaction(self, fns: Sequence[Callable[[], object]]):
        self.begin()
        for fn in fns:
            fn()
        self.commit()

    # ---------------------------------------------------------------- schema
    SCHEMA = (
        "CREATE DATABASE wl DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci",
        "CREATE DATABASE wl_fk DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci",
        "CREATE TABLE wl.t_auto (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, u INT NOT NULL,"
        " v VARCHAR(32) NULL, payload VARCHAR(64) NOT NULL, UNIQUE KEY uk_u (u),"
        " UNIQUE KEY uk_v (v)) ENGINE=InnoDB",
        "CREATE TABLE wl.t_ci (k VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci"
        " NOT NULL PRIMARY KEY, val INT NOT NULL) ENGINE=InnoDB",
        "CREATE TABLE wl.t_bin (k VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
        " NOT NULL PRIMARY KEY, val INT NOT NULL) ENGINE=InnoDB",
        "CREATE TABLE wl.t_varbin (k VARBINARY(32) NOT NULL PRIMARY KEY, val INT NOT NULL)"
        " ENGINE=InnoDB",
        "CREATE TABLE wl.t_latin (k VARCHAR(32) CHARACTER SET latin1 COLLATE latin1_swedish_ci"
        " NOT NULL PRIMARY KEY, val INT NOT NULL) ENGINE=InnoDB",
        "CREATE TABLE wl.t_comp (a INT NOT NULL, b VARCHAR(16) NOT NULL, val INT NOT NULL,"
        " PRIMARY KEY (a, b)) ENGINE=InnoDB",
        "CREATE TABLE wl.t_prefix (id INT NOT NULL PRIMARY KEY, name VARCHAR(64) CHARACTER SET"
        " utf8mb4 COLLATE utf8mb4_general_ci NOT NULL, UNIQUE KEY uk_name8 (name(8)))"
        " ENGINE=InnoDB",
        "CREATE TABLE wl.t_nokey (a INT NOT NULL, b VARCHAR(32) NULL, c INT NULL, KEY ix_a (a))"
        " ENGINE=InnoDB",
        "CREATE TABLE wl.t_datetime (k DATETIME(3) NOT NULL PRIMARY KEY, val INT NOT NULL)"
        " ENGINE=InnoDB",
        "CREATE TABLE wl.t_decimal (k DECIMAL(12,3) NOT NULL PRIMARY KEY, u BIGINT UNSIGNED"
        " NOT NULL, val INT NOT NULL, UNIQUE KEY uk_u (u)) ENGINE=InnoDB",
        "CREATE TABLE wl.t_char (k CHAR(10) NOT NULL PRIMARY KEY, val INT NOT NULL) ENGINE=InnoDB",
        "CREATE TABLE wl.t_hot (id INT NOT NULL PRIMARY KEY, counter BIGINT NOT NULL)"
        " ENGINE=InnoDB",
        "CREATE TABLE wl.t_bulk (id INT NOT NULL PRIMARY KEY, grp INT NOT NULL,"
        " note VARCHAR(40) NOT NULL) ENGINE=InnoDB",
        "CREATE TABLE wl_fk.parent (id INT NOT NULL PRIMARY KEY, name VARCHAR(32) NOT NULL)"
        " ENGINE=InnoDB",
        "CREATE TABLE wl_fk.child (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, parent_id INT NULL,"
        " qty INT NOT NULL, KEY ix_parent (parent_id), CONSTRAINT fk_child_parent FOREIGN KEY"
        " (parent_id) REFERENCES wl_fk.parent (id)) ENGINE=InnoDB",
    )

    def create_schema(self):
        for ddl in self.SCHEMA:
            self.execute(ddl)
            self.stats.ddl += 1
        self.autocommit(lambda: self.execute(
            "INSERT INTO wl.t_hot (id, counter) VALUES (1, 0), (2, 0), (3, 0), (4, 0)"))
        rows = [(i, f"parent-{i}") for i in range(1, 9)]
        self.autocommit(lambda: self.execute(
            "INSERT INTO wl_fk.parent (id, name) VALUES " + ", ".join(["(%s, %s)"] * len(rows)),
            [x for r in rows for x in r]))
        self.parents.update(dict(rows))

    # ---------------------------------------------------------------- single statements
    def op_keyed(self, name: str | None = None):
        """One INSERT / DELETE / UPDATE value / UPDATE key on a keyed table."""
        rng = self.rng
        t = self.keyed[name or rng.choice(sorted(self.keyed))]
        r = rng.random()
        if t.rows and r < 0.20:                                   # delete ...
            nk = rng.choice(list(t.rows))
            key = t.rows[nk]
            if self.execute(f"DELETE FROM {t.table} WHERE {t.column} = %s", (key,)):
                del t.rows[nk]
                if t.make_key is _variant and not self.in_trx:
                    # ... and re-insert another spelling of the same key a few steps later
                    base = _strip_accents(key).strip().lower()
                    due = self.stats.steps + rng.randint(1, 6)
                    self.pending.append((due, lambda: self._insert_key(t, _variant(self.rng, base))))
            return
        if t.rows and r < 0.45:                                   # update a non-key value
            key = t.rows[rng.choice(list(t.rows))]
            self.execute(f"UPDATE {t.table} SET val = val + %s WHERE {t.column} = %s",
                         (rng.randint(1, 9), key))
            return
        if t.rows and r < 0.60:                                   # change the primary key
            nk = rng.choice(list(t.rows))
            old = t.rows[nk]
            new = t.make_key(rng, _strip_accents(old).strip().lower()) if rng.random() < 0.5 \
                else t.fresh_key(rng)
            if t.norm(new) in t.rows and t.norm(new) != nk and t.make_key is _variant:
                new = old + "x" if len(old) < 9 else old[:-1]
            if t.norm(new) in t.rows and t.norm(new) != nk:
                return
            if self.execute(f"UPDATE {t.table} SET {t.column} = %s WHERE {t.column} = %s",
                            (new, old)):
                del t.rows[nk]
                t.rows[t.norm(new)] = new
            return
        self._insert_key(t, t.fresh_key(rng))

    def _insert_key(self, t: _KeyTable, key: str):
        val = self.rng.randint(0, 10000)
        if t.table == "wl.t_decimal":
            u = 2**64 - 1 - self.rng.randrange(200) if self.rng.random() < 0.5 \
                else self.rng.randrange(200)
            ok = self.execute("INSERT INTO wl.t_decimal (k, u, val) VALUES (%s, %s, %s)",
                              (key, u, val))
        else:
            ok = self.execute(f"INSERT INTO {t.table} ({t.column}, val) VALUES (%s, %s)", (key, val))
        if ok:
            t.rows[t.norm(key)] = key

    def op_auto(self):
        """t_auto: INSERT, IODKU, REPLACE, UPDATE, DELETE; u is a small range so IODKU updates."""
        rng = self.rng
        u = rng.randrange(300)
        v = None if rng.random() < 0.35 else _variant(rng, rng.choice(_WORDS)) + str(rng.randrange(20))
        payload = f"p{rng.randrange(10**6)}"
        r = rng.random()
        note_col, note_val = ("", ()) if not self.auto_has_note else (", note", (f"n{u}",))
        if r < 0.30:
            self.execute(f"INSERT INTO wl.t_auto (u, v, payload{note_col})"
                         f" VALUES (%s, %s, %s{', %s' if note_col else ''})", (u, v, payload, *note_val))
        elif r < 0.50:
            self.execute("INSERT INTO wl.t_auto (u, v, payload) VALUES (%s, %s, %s) AS new"
                         " ON DUPLICATE KEY UPDATE payload = CONCAT(wl.t_auto.payload, '+'),"
                         " v = IF(new.v IS NULL, wl.t_auto.v, new.v)", (u, v, payload))
        elif r < 0.60:
            self.execute("REPLACE INTO wl.t_auto (u, v, payload) VALUES (%s, %s, %s)", (u, v, payload))
        elif r < 0.80:
            self.execute("UPDATE wl.t_auto SET payload = %s, v = %s WHERE u = %s", (payload, v, u))
        elif r < 0.90:
            self.execute("UPDATE wl.t_auto SET u = %s WHERE u = %s", (rng.randrange(300), u))
        else:
            self.execute("DELETE FROM wl.t_auto WHERE u = %s", (u,))

    def op_comp(self):
        rng = self.rng
        a, b = rng.randrange(12), rng.choice(("x", "y", "z", "X", "ý", "z "))
        r = rng.random()
        if self.comp and r < 0.3:
            key = rng.choice(list(self.comp))
            if self.execute("DELETE FROM wl.t_comp WHERE a = %s AND b = %s", key):
                del self.comp[key]
        elif self.comp and r < 0.5:
            key = rng.choice(list(self.comp))
            new = (key[0], rng.choice(("x", "y", "z", "w")))
            if new not in self.comp and self.execute(
                    "UPDATE wl.t_comp SET b = %s WHERE a = %s AND b = %s", (new[1], *key)):
                self.comp[new] = self.comp.pop(key)
        elif self.comp and r < 0.7:
            key = rng.choice(list(self.comp))
            self.execute("UPDATE wl.t_comp SET val = val + 1 WHERE a = %s AND b = %s", key)
        else:
            if self.execute("INSERT INTO wl.t_comp (a, b, val) VALUES (%s, %s, %s)",
                            (a, b, rng.randrange(100))):
                self.comp[(a, b)] = 1

    def op_prefix(self):
        rng = self.rng
        r = rng.random()
        if self.prefix and r < 0.3:
            pid = rng.choice(list(self.prefix))
            if self.execute("DELETE FROM wl.t_prefix WHERE id = %s", (pid,)):
                del self.prefix[pid]
        elif self.prefix and r < 0.55:
            pid = rng.choice(list(self.prefix))
            name = self.prefix[pid][:8] + f"-{rng.randrange(1000)}"     # same 8-char prefix
            if self.execute("UPDATE wl.t_prefix SET name = %s WHERE id = %s", (name, pid)):
                self.prefix[pid] = name
        else:
            pid = rng.randrange(1, 60)
            base = rng.choice(_WORDS) + "________"
            name = _variant(rng, base[:8]) .rstrip() + f"/{rng.randrange(100)}"
            if self.execute("INSERT INTO wl.t_prefix (id, name) VALUES (%s, %s)", (pid, name)):
                self.prefix[pid] = name

    def op_nokey(self):
        rng = self.rng
        r = rng.random()
        a = rng.randrange(20)
        if r < 0.5:
            self.execute("INSERT INTO wl.t_nokey (a, b, c) VALUES (%s, %s, %s)",
                         (a, None if rng.random() < 0.2 else rng.choice(_WORDS), rng.randrange(5)))
        elif r < 0.8:
            self.execute("UPDATE wl.t_nokey SET c = c + 1 WHERE a = %s ORDER BY b, c LIMIT 1", (a,))
        else:
            self.execute("DELETE FROM wl.t_nokey WHERE a = %s ORDER BY b, c LIMIT 1", (a,))

    def op_hot(self):
        self.execute("UPDATE wl.t_hot SET counter = counter + 1 WHERE id = %s",
                     (self.rng.randint(1, 4),))

    def op_fk(self):
        rng = self.rng
        r = rng.random()
        if not self.parents:
            self.execute("INSERT INTO wl_fk.parent (id, name) VALUES (1, 'parent-1')")
            self.parents[1] = "parent-1"
            return
        if r < 0.35 or not self.children:                       # new child (some NULL parents)
            pid = None if rng.random() < 0.25 or not self.parents else rng.choice(list(self.parents))
            if self.execute("INSERT INTO wl_fk.child (parent_id, qty) VALUES (%s, %s)",
                            (pid, rng.randrange(1, 10))):
                self.children[self.cur.lastrowid] = pid
        elif r < 0.50:                                          # re-parent a child
            cid = rng.choice(list(self.children))
            pid = None if rng.random() < 0.3 else rng.choice(list(self.parents))
            if self.execute("UPDATE wl_fk.child SET parent_id = %s WHERE id = %s", (pid, cid)):
                self.children[cid] = pid
        elif r < 0.60:
            cid = rng.choice(list(self.children))
            if self.execute("DELETE FROM wl_fk.child WHERE id = %s", (cid,)):
                del self.children[cid]
        elif r < 0.75:                                          # modify a parent row
            pid = rng.choice(list(self.parents))
            name = f"parent-{pid}-{rng.randrange(100)}"
            if self.execute("UPDATE wl_fk.parent SET name = %s WHERE id = %s", (name, pid)):
                self.parents[pid] = name
        elif r < 0.85:                                          # new parent
            pid = rng.randrange(1, 40)
            if pid not in self.parents and self.execute(
                    "INSERT INTO wl_fk.parent (id, name) VALUES (%s, %s)", (pid, f"parent-{pid}")):
                self.parents[pid] = f"parent-{pid}"
        else:                                                   # delete or re-key a childless parent
            used = set(self.children.values())
            free = [p for p in self.parents if p not in used]
            if not free:
                return
            pid = rng.choice(free)
            if rng.random() < 0.5:
                if self.execute("DELETE FROM wl_fk.parent WHERE id = %s", (pid,)):
                    del self.parents[pid]
            else:
                new = rng.randrange(40, 80)
                if new not in self.parents and self.execute(
                        "UPDATE wl_fk.parent SET id = %s WHERE id = %s", (new, pid)):
                    self.parents[new] = self.parents.pop(pid)

    def random_op(self):
        rng = self.rng
        ops = (self.op_keyed, self.op_keyed, self.op_keyed, self.op_auto, self.op_auto,
               self.op_comp, self.op_prefix, self.op_nokey, self.op_hot, self.op_fk, self.op_fk)
        rng.choice(ops)()

    # ---------------------------------------------------------------- special steps
    def ddl_alter(self):
        self.execute("ALTER TABLE wl.t_auto ADD COLUMN note VARCHAR(16) NULL")
        self.auto_has_note = True
        self.stats.ddl += 1
        self.execute("CREATE TABLE wl.t_tmp (id INT NOT NULL PRIMARY KEY, v INT NOT NULL)"
                     " ENGINE=InnoDB")
        self.stats.ddl += 1

    def tmp_insert(self):
        i = len(self.tmp_rows) + 1
        self.autocommit(lambda: self.execute("INSERT INTO wl.t_tmp (id, v) VALUES (%s, %s)",
                                             (i, self.rng.randrange(100))))
        self.tmp_rows.append(i)

    def ddl_drop(self):
        self.execute("DROP TABLE wl.t_tmp")
        self.stats.ddl += 1

    def bulk_insert(self, rows: int = 3000, per_statement: int = 100):
        self.begin()
        for start in range(1, rows + 1, per_statement):
            vals = [(i, i % 10, f"bulk-{i}-{self.rng.randrange(10**6)}")
                    for i in range(start, min(start + per_statement, rows + 1))]
            self.execute("INSERT INTO wl.t_bulk (id, grp, note) VALUES "
                         + ", ".join(["(%s, %s, %s)"] * len(vals)), [x for v in vals for x in v])
        self.commit()

    def bulk_update(self):
        self.autocommit(lambda: self.execute(
            "UPDATE wl.t_bulk SET note = CONCAT(note, '!') WHERE grp = 3"))

    def tagged(self):
        self.execute("SET gtid_next = 'AUTOMATIC:lagadv'")
        self.transaction([self.op_hot, self.op_keyed])
        self.execute("SET gtid_next = 'AUTOMATIC'")

    def rolled_back(self):
        self.begin()
        for _ in range(self.rng.randint(1, 4)):
            choice = self.rng.randrange(3)
            if choice == 0:
                self.execute("UPDATE wl.t_hot SET counter = counter + 100 WHERE id = %s",
                             (self.rng.randint(1, 4),))
            elif choice == 1:
                self.execute("INSERT INTO wl.t_nokey (a, b, c) VALUES (%s, 'rolled back', 0)",
                             (self.rng.randrange(20),))
            else:
                self.execute("INSERT INTO wl.t_auto (u, payload) VALUES (%s, 'rolled back')"
                             " ON DUPLICATE KEY UPDATE payload = 'rolled back'",
                             (self.rng.randrange(300),))
        self.rollback()

    # ---------------------------------------------------------------- driver
    def run(self) -> WorkloadStats:
        rng = self.rng
        n = self.steps
        special = {
            int(n * 0.40): self.ddl_alter,
            int(n * 0.62): self.ddl_drop,
            int(n * 0.55): self.bulk_insert,
            int(n * 0.80): self.bulk_update,
        }
        tmp_steps = set(range(int(n * 0.40) + 1, int(n * 0.62), 17))
        tagged_steps = {int(n * f) for f in (0.1, 0.3, 0.31, 0.7, 0.9)}
        self.create_schema()
        for step in range(n):
            self.stats.steps = step
            if self.on_step is not None:
                self.on_step(step)
            due = [a for s, a in self.pending if s <= step]
            self.pending = [(s, a) for s, a in self.pending if s > step]
            for action in due:
                self.autocommit(action)
            if step in special:
                special[step]()
            elif step in tmp_steps:
                self.tmp_insert()
            elif step in tagged_steps:
                self.tagged()
            else:
                r = rng.random()
                if r < 0.45:                                # autocommit single statement
                    self.autocommit(self.random_op)
                elif r < 0.60:                              # hot rows, alone or with others
                    self.transaction([self.op_hot] * rng.randint(1, 3)
                                     + [self.random_op] * rng.randint(0, 1))
                elif r < 0.96:                              # multi-statement, several tables
                    self.transaction([self.random_op] * rng.randint(2, 5))
                else:
                    self.rolled_back()
        for _, action in self.pending:
            self.autocommit(action)
        self.pending = []
        self.stats.steps = n
        return self.stats


def single_connection_workload(port: int, seed: int, *, on_step: Callable[[int], None] | None = None,
                               steps: int = SINGLE_STEPS) -> WorkloadStats:
    """Run the seeded single-connection workload against 127.0.0.1:*port* (user root)."""
    conn = connect(port)
    try:
        return SingleConnectionWorkload(conn, seed, steps=steps, on_step=on_step).run()
    finally:
        conn.close()


def connect(port: int):
    """A mysql-connector-python autocommit connection (installed with pip if missing)."""
    try:
        import mysql.connector
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "mysql-connector-python"], check=True)
        import mysql.connector
    return mysql.connector.connect(host="127.0.0.1", port=port, user="root", password="",
                                   autocommit=True, charset="utf8mb4",
                                   collation="utf8mb4_0900_ai_ci", use_pure=True)


# =========================================================================== sysbench


SYSBENCH_TABLES = 4
SYSBENCH_TABLE_SIZE = 10000


def load_sysbench_rows(port: int, seed: int, *, mariadb: bool = False) -> None:
    """Fill the (empty, created in the binlog) sbtest tables with sql_log_bin=0.

    The rows look like sysbench's own (ids 1..N, random k, c and pad of digit
    groups) but stay out of the binlog, which keeps the fixture to a few MB.
    """
    rng = random.Random(f"sbtest-rows-{seed}")
    conn = connect_any(port, mariadb)
    cur = conn.cursor()
    cur.execute("SET SESSION sql_log_bin = 0")

    def digits(groups):
        return "-".join("".join(rng.choice("0123456789") for _ in range(11)) for _ in range(groups))
    for t in range(1, SYSBENCH_TABLES + 1):
        for start in range(1, SYSBENCH_TABLE_SIZE + 1, 1000):
            vals = [(i, rng.randint(1, SYSBENCH_TABLE_SIZE), digits(10), digits(5))
                    for i in range(start, start + 1000)]
            cur.execute("START TRANSACTION")
            cur.execute(f"INSERT INTO sbtest.sbtest{t} (id, k, c, pad) VALUES "
                        + ", ".join(["(%s, %s, %s, %s)"] * len(vals)), [x for v in vals for x in v])
            cur.execute("COMMIT")
    conn.close()


def connect_any(port: int, mariadb: bool):
    if not mariadb:
        return connect(port)
    import mysql.connector
    return mysql.connector.connect(host="127.0.0.1", port=port, user="root", password="",
                                   autocommit=True, charset="utf8mb4", use_pure=True)


def sysbench_workload(server: rs._Server, seed: int, events: int, *, mariadb: bool = False) -> None:
    """CREATE DATABASE sbtest + sysbench prepare (tables only) in the binlog, rows loaded
    outside it, then ``oltp_write_only`` with 8 threads and a fixed number of events."""
    server.sql("CREATE DATABASE sbtest")
    common = ["oltp_write_only", f"--tables={SYSBENCH_TABLES}", "--mysql-db=sbtest"]
    rs.sysbench(server.port, *common, "--table-size=0", "prepare")
    load_sysbench_rows(server.port, seed, mariadb=mariadb)
    # sysbench treats --rand-seed=0 as "seed from the clock": shift by one
    rs.sysbench(server.port, *common, f"--table-size={SYSBENCH_TABLE_SIZE}", "--threads=8",
                f"--events={events}", "--time=0", f"--rand-seed={seed + 1}", "run")


# =========================================================================== fixtures


@dataclasses.dataclass(frozen=True)
class Fixture:
    name: str
    server: str                      # "mysql" | "mariadb"
    options: tuple[str, ...]         # per-fixture server options (after the base ones)
    kind: str                        # "single" | "sysbench"
    rotate_at: tuple[int, ...] = ()  # single workload steps before which FLUSH BINARY LOGS runs
    events: int = 0                  # sysbench events

    @property
    def server_options(self) -> list[str]:
        base = MYSQL_BASE_OPTIONS if self.server == "mysql" else MARIADB_BASE_OPTIONS
        return [*base, *self.options]

    @property
    def single_connection(self) -> bool:
        return self.kind == "single"

    def workload_text(self, seed: int) -> str:
        if self.kind == "single":
            text = SingleConnectionWorkload.DESCRIPTION + f"; random.Random({seed})"
            if self.rotate_at:
                text += ("; FLUSH BINARY LOGS before steps "
                         + ", ".join(str(s) for s in self.rotate_at))
            return text
        return (f"sysbench 1.0.20 oltp_write_only: CREATE DATABASE sbtest and 'prepare"
                f" --tables={SYSBENCH_TABLES} --table-size=0' (CREATE TABLE + CREATE INDEX) in the"
                f" binlog, then {SYSBENCH_TABLES} x {SYSBENCH_TABLE_SIZE} sysbench-style rows loaded"
                f" with sql_log_bin=0 (not in the binlog), then 'run --threads=8"
                f" --events={self.events} --time=0 --rand-seed={seed + 1}"
                f" --table-size={SYSBENCH_TABLE_SIZE}'")


_FULL = ("--binlog-row-metadata=FULL", "--binlog-row-image=FULL")
FIXTURES = (
    Fixture("sysbench_oltp_write_only", "mysql", ("--binlog-row-metadata=FULL",), "sysbench",
            events=2500),
    Fixture("single_full", "mysql", _FULL, "single"),
    Fixture("single_compressed", "mysql", _FULL + ("--binlog-transaction-compression=ON",),
            "single"),
    Fixture("single_minimal_image", "mysql",
            ("--binlog-row-metadata=FULL", "--binlog-row-image=MINIMAL"), "single"),
    Fixture("single_minimal_metadata", "mysql",
            ("--binlog-row-metadata=MINIMAL", "--binlog-row-image=FULL"), "single"),
    Fixture("single_history50", "mysql",
            _FULL + ("--binlog-transaction-dependency-history-size=50",), "single"),
    Fixture("single_rotation", "mysql", _FULL, "single",
            rotate_at=(int(SINGLE_STEPS * 0.25), int(SINGLE_STEPS * 0.5), int(SINGLE_STEPS * 0.56),
                       int(SINGLE_STEPS * 0.75))),
    Fixture("mariadb_concurrent", "mariadb",
            ("--binlog-commit-wait-count=4", "--binlog-commit-wait-usec=2000"), "sysbench",
            events=2000),
)
FIXTURE_NAMES = tuple(f.name for f in FIXTURES)


@dataclasses.dataclass
class FixtureResult:
    name: str
    manifest: dict
    files: list[str]
    transactions: int
    mean_seq_minus_lc: float | None = None
    share_lc_below_prev: float | None = None
    group_commits: int | None = None
    stats: WorkloadStats | None = None
    seconds: float = 0.0


def make_fixture(fx: Fixture, seed: int, out: Path, port: int, *, keep_datadir: bool = False,
                 log=print) -> FixtureResult:
    t0 = time.monotonic()
    dest = out / fx.name
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    name = f"fx_{fx.name}"
    mariadb = fx.server == "mariadb"
    srv = (rs.MariaDBServer(name, port, fx.server_options, fresh=True) if mariadb
           else rs.MySQLServer(name, port, fx.server_options, fresh=True))
    stats = None
    with srv:
        version = srv.version
        if mariadb:
            srv.sql("RESET MASTER")
        else:
            srv.sql("RESET BINARY LOGS AND GTIDS")
        if fx.kind == "single":
            on_step = None
            if fx.rotate_at:
                def on_step(step, _srv=srv):
                    if step in fx.rotate_at:
                        _srv.sql("FLUSH BINARY LOGS")
            stats = single_connection_workload(srv.port, seed, on_step=on_step)
            dbs = WORKLOAD_DATABASES
        else:
            sysbench_workload(srv, seed, fx.events, mariadb=mariadb)
            dbs = ("sbtest",)
        schema = srv.mysqldump_no_data(*dbs)
        gtid_executed = None if mariadb else srv.sql("SELECT @@GLOBAL.gtid_executed").strip()
        srv.sql("FLUSH BINARY LOGS")
        files = srv.binlog_files()
    # The last file (opened by the final FLUSH) holds no transaction: leave it out.
    files = files[:-1]
    for f in files:
        shutil.copyfile(f, dest / f.name)
    (dest / "schema.sql").write_text(schema)

    records: list[tuple] = []
    reader = (lambda p, *a: srv.mariadb_binlog(p, *a)) if mariadb else \
        (lambda p, *a: rs.chroot_mysqlbinlog(p, *a))
    for f in files:
        copied = dest / f.name
        reader(copied, "-vv")               # must read without error (raises otherwise)
        text = reader(copied)
        if mariadb:
            records += [(f.name, g, c) for g, c in reference.mariadb_transactions(text)]
        else:
            records += [(f.name, g, lc, seq) for g, lc, seq in reference.mysqlbinlog_transactions(text)]
    (dest / "reference.tsv").write_text(reference.format_tsv(records))
    if not keep_datadir:
        srv.remove()

    result = FixtureResult(fx.name, manifest_entry(fx, seed, version), [f.name for f in files],
                           len(records), stats=stats)
    if mariadb:
        result.group_commits = len({c for _, _, c in records if c is not None})
    else:
        diffs = [seq - lc for _, _, lc, seq in records]
        result.mean_seq_minus_lc = sum(diffs) / len(diffs)
        result.share_lc_below_prev = sum(d > 1 for d in diffs) / len(diffs)
        _check_gtids(fx.name, records, gtid_executed)
    result.seconds = time.monotonic() - t0
    return result


def _check_gtids(name: str, records: list[tuple], gtid_executed: str) -> None:
    """Every GTID the server executed is in reference.tsv exactly once."""
    seen: dict[str, list[int]] = {}
    for _, gtid, _, _ in records:
        if gtid is None:
            raise SystemExit(f"{name}: unexpected ANONYMOUS transaction")
        src, n = gtid.rsplit(":", 1)
        seen.setdefault(src, []).append(int(n))
    executed = {}
    uuid = None
    for part in gtid_executed.replace("\n", "").split(","):
        fields = part.strip().split(":")
        if len(fields[0]) == 36:
            uuid, fields = fields[0], fields[1:]
        tag = None
        for fld in fields:
            if "-" in fld or fld.isdigit():
                lo, _, hi = fld.partition("-")
                key = uuid if tag is None else f"{uuid}:{tag}"
                executed.setdefault(key, []).extend(range(int(lo), int(hi or lo) + 1))
            else:
                tag = fld
    got = {k: sorted(v) for k, v in seen.items()}
    want = {k: sorted(v) for k, v in executed.items()}
    if got != want:
        raise SystemExit(f"{name}: reference GTIDs differ from gtid_executed {gtid_executed!r}")


def manifest_entry(fx: Fixture, seed: int, version: str) -> dict:
    return {
        "name": fx.name,
        "server": fx.server,
        "server_version": version,
        "server_options": fx.server_options,
        "workload": fx.workload_text(seed),
        "seed": seed,
        "single_connection": fx.single_connection,
        "regenerate": f"python3 scripts/make_fixtures.py --seed {seed} --only {fx.name}",
    }


def write_manifest(out: Path, entries: dict[str, dict]) -> None:
    ordered = [entries[n] for n in FIXTURE_NAMES if n in entries]
    (out / "MANIFEST").write_text(json.dumps(ordered, indent=2, ensure_ascii=False) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", type=Path, default=REPO / "fixtures")
    parser.add_argument("--only", nargs="+", choices=FIXTURE_NAMES, metavar="NAME",
                        help=f"fixtures to make (default all: {' '.join(FIXTURE_NAMES)})")
    parser.add_argument("--port", type=int, default=BASE_PORT, help="TCP port for the servers")
    parser.add_argument("--keep-datadirs", action="store_true")
    args = parser.parse_args(argv)

    if not rs.marker_path().exists():
        print("make_fixtures: the MySQL chroot is not provisioned; run:"
              " python3 scripts/realservers.py provision", file=sys.stderr)
        return 1
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    entries: dict[str, dict] = {}
    if (out / "MANIFEST").exists() and args.only:
        entries = {e["name"]: e for e in json.loads((out / "MANIFEST").read_text())}
    wanted = [f for f in FIXTURES if not args.only or f.name in args.only]
    t0 = time.monotonic()
    for fx in wanted:
        print(f"== {fx.name}", flush=True)
        try:
            res = make_fixture(fx, args.seed, out, args.port, keep_datadir=args.keep_datadirs)
        except rs.RealServerError as err:
            print(f"make_fixtures: {fx.name}: FAILED: {err}", file=sys.stderr)
            return 1
        entries[fx.name] = res.manifest
        write_manifest(out, entries)
        size = sum((out / fx.name / f).stat().st_size for f in res.files)
        line = (f"   {res.transactions} transactions in {len(res.files)} file(s),"
                f" {size / 1e6:.2f} MB, {res.seconds:.1f} s")
        if res.mean_seq_minus_lc is not None:
            line += (f"; mean seq-lc {res.mean_seq_minus_lc:.2f},"
                     f" lc < seq-1 in {100 * res.share_lc_below_prev:.1f}%")
        if res.group_commits is not None:
            line += f"; {res.group_commits} distinct commit ids"
            if res.group_commits == 0:
                line += " (WARNING: no group commits recorded)"
        if fx.single_connection and (res.share_lc_below_prev or 0) < 0.2:
            line += " (WARNING: little writeset parallelism recorded)"
        if res.stats is not None:
            s = res.stats
            line += (f"; workload: {s.commits} commits, {s.rollbacks} rollbacks, {s.ddl} DDL,"
                     f" {s.failed_statements} failed statements")
        print(line, flush=True)
    print(f"done in {time.monotonic() - t0:.1f} s; MANIFEST: {out / 'MANIFEST'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
