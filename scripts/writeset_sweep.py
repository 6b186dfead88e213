"""Key-type and collation oracle sweep: MySQL's recorded WRITESET against lagadvisor's.

A fresh MySQL 9.x (``scripts/realservers.py``) gets one table per key column type and one per
collation (a unique key over the type or over ``VARCHAR(20)``/``CHAR(10)`` in that collation),
then, from one connection, for each table a sequence of values that are equal or different under
the type/collation (boundaries, trailing spaces, NUL bytes, case and accent pairs, ß/ss,
expansions and contractions, Nordic/German/Spanish tailorings, -0.0, TIMESTAMP across time
zones), each value as two transactions::

    INSERT INTO t (id, k...) VALUES (n, v...);   DELETE FROM t WHERE id = n;

Every value appears at least twice in its sequence, so each INSERT's recorded ``last_committed``
says whether the server's key hash of ``v`` equals the one of an earlier value (it then depends
on that value's DELETE) or not. With one client the recorded value is exactly WRITESET's answer;
``lagadvisor export --commit-order serial`` must reproduce it for every transaction, with the
native core and with the pure-Python reference (``LAGADVISOR_PUREPYTHON=1``).

Usage::

    python3 scripts/writeset_sweep.py            # the types, a sample of collations (as in CI)
    python3 scripts/writeset_sweep.py --all      # every collation information_schema lists
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Collations the CI sample always holds (the issue's, the tailorings, each pad/level kind).
SAMPLE_ALWAYS = (
    "utf8mb4_0900_ai_ci", "utf8mb4_0900_as_cs", "utf8mb4_0900_as_ci", "utf8mb4_0900_bin", "utf8mb4_bin",
    "utf8mb4_general_ci", "utf8mb4_unicode_ci", "utf8mb4_unicode_520_ci", "latin1_swedish_ci",
    "latin1_german2_ci", "latin1_danish_ci", "latin1_spanish_ci", "latin1_bin", "utf8mb4_da_0900_ai_ci",
    "utf8mb4_sv_0900_as_cs", "utf8mb4_de_pb_0900_ai_ci", "utf8mb4_es_trad_0900_ai_ci", "utf8mb4_hu_0900_ai_ci",
    "utf8mb4_spanish2_ci", "utf8mb4_german2_ci", "utf8mb4_tr_0900_ai_ci", "utf8mb3_general_ci",
    "ascii_general_ci", "ucs2_general_ci", "cp1251_general_ci", "utf8mb4_0900_as_cs",
)

#: Strings paired under the collations: equal under some, different under others.
HARD_STRINGS = (
    "a", "A", "á", "Á", "à", "â", "ä", "Ä", "å", "Å", "ã", "a\u0301", "aa", "Aa", "AA", "aA", "æ", "Æ", "ae",
    "AE", "o", "O", "ö", "Ö", "ø", "Ø", "oe", "œ", "Œ", "u", "ü", "Ü", "y", "Y", "ue", "s", "S", "ss", "SS",
    "ß", "ẞ", "sz", "c", "C", "ch", "Ch", "CH", "cH", "h", "l", "ll", "Ll", "LL", "n", "ñ", "Ñ", "nn", "dz",
    "dzs", "Dzs", "cs", "zs", "gy", "ly", "lj", "Lj", "LJ", "nj", "dž", "i", "I", "ı", "İ", "e", "é", "è",
    "ê", "ë", "E", "É", "z", "ž", "Ž", "š", "č", "ç", "Ç", "ğ", "ş", "th", "þ", "Þ", "ð", "Ð", "d", "đ",
    "a ", "a  ", " a", "a\t", "a\0", "\0", "", " ", "  ", "ab", "a b", "ab ", "AB", "Ab", "a-b", "ab\0",
    "σ", "ς", "Σ", "е", "ё", "Ё", "Е", "и", "й", "ă", "ạ", "ả", "ơ", "ư", "x\u200b", "x", "x\u00a0",
)

#: And under the ``*_bin`` collations, which need no weight table: characters outside the generated
#: table (emoji, CJK Extension B, private use, CJK), with trailing spaces, NULs and tabs, and the
#: wide character sets' lookalikes of a space (U+2020 is the bytes 20 20 in ucs2, U+4E20 4E 20).
BIN_STRINGS = (
    "\U0001F600", "\U0001F601", "\U0001F600 ", "\U0001F600  ", "a\U0001F600", "A\U0001F600", " \U0001F600",
    "\U0001F600\0", "\U0001F600\t", "\U00020000", "\U00020001", "\U00020000 ", "\uE000", "\uE001", "\uE000 ",
    "\U000F0000", "\U000F0001", "\U000F0000 ", "中", "中 ", "丁", "表", "ア", "\u2020", "\u2020 ", "\u4e20",
    "\u4e00", "\uff3c", "\\",
)


@dataclass
class Table:
    """One swept table: DDL body, inserted columns, value tuples (SQL literals, or
    ``(time_zone, literals)`` for TIMESTAMP) and a label for the report."""

    name: str
    ddl: str
    columns: tuple[str, ...]
    values: list
    label: str
    kind: str  # "type" or "collation"


def _lit(s: str) -> str:
    """A SQL literal for any text (hex of its UTF-8, converted by the column's character set)."""
    return f"CONVERT(X'{s.encode('utf-8').hex()}' USING utf8mb4)" if s else "''"


def _twice(vals: list, seed: int) -> list:
    """Each value twice: in order, then shuffled (each equality is checked at two distances)."""
    rnd = random.Random(seed)
    again = list(vals)
    rnd.shuffle(again)
    return list(vals) + again


INT_RANGES = {"TINYINT": 8, "SMALLINT": 16, "MEDIUMINT": 24, "INT": 32, "BIGINT": 64}


def _int_values(bits: int, unsigned: bool) -> list[str]:
    lo, hi = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    cands = {0, 1, 2, 7, -1, -2, lo, hi, lo + 1, hi - 1, 2 ** (bits - 1), 2**63, 2**64 - 1, 2**63 - 1,
             -(2**63), 2**61 - 1, 7 + (2**61 - 1), 8 + (2**61 - 1), -(2**61 - 1), 100}
    return [str(v) for v in sorted(cands) if lo <= v <= hi]


def type_tables() -> list[Table]:
    out: list[Table] = []
    n = 0

    def add(label, coldef, values, *, pk=False, extra="", columns=("k",)):
        nonlocal n
        n += 1
        name = f"ty{n:03d}"
        if pk:
            ddl = f"(k {coldef} NOT NULL PRIMARY KEY, id INT NOT NULL UNIQUE{extra})"
        else:
            ddl = f"(id INT PRIMARY KEY, {coldef}{extra})" if columns != ("k",) else \
                f"(id INT PRIMARY KEY, k {coldef}, UNIQUE KEY uk (k){extra})"
        vals = [v if isinstance(v, tuple) else (v,) for v in values]
        out.append(Table(name, ddl, columns, _twice(vals, n), label, "type"))

    for t, bits in INT_RANGES.items():
        for unsigned in (False, True):
            typ = f"{t}{' UNSIGNED' if unsigned else ''}"
            add(typ, typ, _int_values(bits, unsigned))
            add(f"{typ} PRIMARY KEY", typ, _int_values(bits, unsigned), pk=True)
    add("DECIMAL(20,4)", "DECIMAL(20,4)", ["0", "-0", "0.0000", "1.5", "1.50", "-1.5", "0.0001", "-0.0001",
                                          "9999999999999999.9999", "-9999999999999999.9999", "7", "1e3"])
    add("DECIMAL(65,30) UNSIGNED", "DECIMAL(65,30) UNSIGNED", ["0", "1", "1.000000000000000000000000000001",
                                                              "99999999999999999999999999999999999", "7"])
    add("DECIMAL(5,0) PRIMARY KEY", "DECIMAL(5,0)", ["0", "-0", "1", "-1", "99999", "-99999"], pk=True)
    add("FLOAT", "FLOAT", ["0", "-0e0", "0.5", "2", "-2", "0.1", "1.1", "3.4e38", "-3.4e38", "1e-30",
                           "1152921504606846976", "4611686018427387904"])
    add("DOUBLE", "DOUBLE", ["0", "-0e0", "0.5", "2", "-2", "0.1", "1e300", "-1e300", "5e-324",
                             "1152921504606846976", "4611686018427387904", "9007199254740993"])
    add("DOUBLE PRIMARY KEY", "DOUBLE", ["0", "-0e0", "0.5", "2", "1e300"], pk=True)
    add("DATE", "DATE", ["'2020-01-01'", "'1000-01-01'", "'9999-12-31'", "'2020-1-1'", "'2020-01-02'"])
    add("TIME", "TIME", ["'00:00:00'", "'-838:59:59'", "'838:59:59'", "'12:00:00'", "'-00:00:01'"])
    add("TIME(6)", "TIME(6)", ["'00:00:00'", "'12:00:00.5'", "'12:00:00.500000'", "'-00:00:01.000001'",
                               "'-00:00:01'", "'838:59:59.000000'", "'12:00:00.000001'"])
    add("DATETIME", "DATETIME", ["'2020-01-01 00:00:00'", "'1000-01-01 00:00:00'", "'9999-12-31 23:59:59'",
                                 "'2020-01-01 00:00:01'"])
    add("DATETIME(6)", "DATETIME(6)", ["'2020-01-01 00:00:00'", "'2020-01-01 00:00:00.000001'",
                                       "'2020-01-01 00:00:00.000000'", "'9999-12-31 23:59:59.999999'",
                                       "'1000-01-01 00:00:00.5'"])
    add("DATETIME(3) PRIMARY KEY", "DATETIME(3)", ["'2020-01-01 00:00:00.1'", "'2020-01-01 00:00:00.100'",
                                                   "'2020-01-01 00:00:00.101'"], pk=True)
    # TIMESTAMP: one instant written from two time zones is one key.
    add("TIMESTAMP(3) across time zones", "TIMESTAMP(3) NULL",
        [("+00:00", "'2020-06-01 12:00:00'"), ("+02:00", "'2020-06-01 14:00:00'"),
         ("-05:30", "'2020-06-01 06:30:00'"), ("+00:00", "'2020-06-01 12:00:00.001'"),
         ("+01:00", "'2038-01-19 04:14:07.999'"), ("+00:00", "'1970-01-01 00:00:01'")])
    add("YEAR", "YEAR", ["1901", "2155", "0", "2000", "'00'", "'99'", "1999", "70"])
    add("BIT(1)", "BIT(1)", ["b'0'", "b'1'"])
    add("BIT(64)", "BIT(64)", ["0", "1", "7", "0xFFFFFFFFFFFFFFFF", "0x8000000000000000",
                               "0x2000000000000006", "0x7FFFFFFFFFFFFFFF"])
    add("ENUM", "ENUM('a','b','c','d')", ["'a'", "'b'", "'A'", "'c'", "'d'", "2"])
    add("SET", "SET('a','b','c','d')", ["'a,b'", "'b,a'", "'c'", "''", "'a,b,c,d'", "'d'", "15"])
    add("CHAR(10) latin1", "CHAR(10) CHARACTER SET latin1", ["'a'", "'a '", "'A'", "'b'", "''", "'ab'"])
    add("BIGINT UNSIGNED PK + latin1 CHAR UNIQUE", "BIGINT UNSIGNED",
        ["7", "18446744073709551615", "0", "9223372036854775808", "2305843009213693958"], pk=True,
        extra=", c CHAR(10) CHARACTER SET latin1 UNIQUE")
    add("BINARY(16)", "BINARY(16)", ["X'00'", "X'0000'", "X''", "'a'", "X'6100'", "'a '", "UNHEX(REPEAT('FF',16))",
                                     "X'61'"])
    add("VARBINARY(20)", "VARBINARY(20)", ["'a'", "X'6100'", "'a '", "'A'", "X''", "X'00'"])
    add("VARCHAR(20) default collation", "VARCHAR(20)", [_lit(s) for s in ("a", "A", "á", "a ", "ß", "ss", "a\0")])
    add("TEXT prefix 5", "TEXT", [_lit(s) for s in ("abcdef", "abcdeX", "ABCDE", "abcd", "abcd ", "áBcDe")],
        extra="", columns=("k",))
    out[-1].ddl = "(id INT PRIMARY KEY, k TEXT, UNIQUE KEY uk (k(5)))"
    add("BLOB prefix 4", "BLOB", ["'abcdef'", "'abcdX'", "'ABCD'", "'abc'", "X'61626300'"])
    out[-1].ddl = "(id INT PRIMARY KEY, k BLOB, UNIQUE KEY uk (k(4)))"
    add("VARCHAR(20) prefix 3", "VARCHAR(20)", [_lit(s) for s in ("abcd", "abcX", "ABC", "ab", "ab ", "ábc")])
    out[-1].ddl = "(id INT PRIMARY KEY, k VARCHAR(20), UNIQUE KEY uk (k(3)))"
    add("generated STORED VARCHAR", "", [_lit(s) for s in ("Abc", "abc", "ABC ", "abd")], columns=("a",))
    out[-1].ddl = "(id INT PRIMARY KEY, a VARCHAR(20), k VARCHAR(20) AS (LOWER(a)) STORED, UNIQUE KEY uk (k))"
    add("generated VIRTUAL INT", "", ["3", "13", "23", "4", "-3"], columns=("a",))
    out[-1].ddl = "(id INT PRIMARY KEY, a INT, k INT AS (a % 10) VIRTUAL, UNIQUE KEY uk (k))"
    add("nullable composite unique", "", [("1", "NULL"), ("1", "2"), ("NULL", "NULL"), ("2", "1"), ("1", "2 ")],
        columns=("a", "b"))
    out[-1].ddl = "(id INT PRIMARY KEY, a INT NULL, b INT NULL, UNIQUE KEY uk (a, b))"
    add("partitioned", "", [("1",), ("2",), ("5",), ("1",)], columns=("k",))
    out[-1].ddl = "(id INT, k INT, PRIMARY KEY (id, k), UNIQUE KEY uk (k, id)) PARTITION BY HASH(k) PARTITIONS 4"
    return out


#: JSON-derived functional unique indexes: the server hashes a hidden column absent from the row
#: images, so these keys cannot be rebuilt from the binlog; lagadvisor reports them as partial
#: (they are counted apart, not in the 100% match).
def functional_tables() -> list[Table]:
    vals = _twice([("'{\"a\": 1}'",), ("'{\"a\": 2}'",), ("'{\"a\": 1, \"b\": 0}'",), ("'{\"a\": \"1\"}'",)], 99)
    return [Table("fn001", "(id INT PRIMARY KEY, j JSON, UNIQUE KEY uk ((CAST(j->>'$.a' AS UNSIGNED))))",
                  ("j",), vals, "JSON functional index", "functional")]


def collation_tables(collations: list[tuple[str, str]], char_too: set[str]) -> list[Table]:
    """One VARCHAR(20) table per collation (and a CHAR(10) one for ``char_too``), with
    :data:`BIN_STRINGS` too under the ``*_bin`` collations; collations
    lagadvisor only approximates (:func:`lagadvisor.writeset.weights.is_exact`) are of kind
    "approximated": their misses are counted apart, and analyze must name them."""
    from lagadvisor.writeset.weights import is_exact

    out = []
    for i, (name, charset) in enumerate(collations):
        vals = [(_lit(s),) for s in HARD_STRINGS + (BIN_STRINGS if name.endswith("_bin") else ())]
        kind = "collation" if is_exact(name) else "approximated"
        out.append(Table(f"co{i:03d}", f"(id INT PRIMARY KEY, k VARCHAR(20) CHARACTER SET {charset} COLLATE {name}, "
                                       "UNIQUE KEY uk (k))", ("k",), _twice(vals, i), f"{name} VARCHAR(20)", kind))
        if name in char_too:
            out.append(Table(f"cc{i:03d}", f"(id INT PRIMARY KEY, k CHAR(10) CHARACTER SET {charset} COLLATE {name}, "
                                           "UNIQUE KEY uk (k))", ("k",), _twice(vals, 1000 + i), f"{name} CHAR(10)",
                             kind))
    return out


@dataclass
class Result:
    """What one reading of the sweep's binlog found."""

    compared: int = 0
    matched: int = 0
    per_table: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)  # transactions compared per table kind
    misses: list = field(default_factory=list)
    stderr: str = ""


def server_collations(cur) -> list[tuple[str, str]]:
    cur.execute("SELECT COLLATION_NAME, CHARACTER_SET_NAME FROM information_schema.COLLATIONS "
                "WHERE CHARACTER_SET_NAME <> 'binary' ORDER BY ID")
    return [(a, b) for a, b in cur.fetchall()]


def pick(collations: list[tuple[str, str]], sample: int | None, seed: int) -> list[tuple[str, str]]:
    if sample is None:
        return collations
    from lagadvisor.writeset.weights import is_exact

    always = [c for c in collations if c[0] in SAMPLE_ALWAYS]
    rest = [c for c in collations if c[0] not in SAMPLE_ALWAYS and is_exact(c[0])]
    random.Random(seed).shuffle(rest)
    return always + rest[:max(0, sample - len(always))]


def run_workload(conn, tables: list[Table]) -> tuple[int, Counter]:
    """Create the tables, then write every value; returns (statements run, rejected per table)."""
    cur = conn.cursor()
    cur.execute("CREATE DATABASE sweep")
    cur.execute("USE sweep")
    for t in tables:
        try:
            cur.execute(f"CREATE TABLE {t.name} {t.ddl}")
        except Exception as err:
            raise RuntimeError(f"{t.label}: CREATE TABLE {t.name} {t.ddl}: {err}") from err
    rejected: Counter = Counter()
    ran = 0
    n = 0
    for t in tables:
        cols = ", ".join(t.columns)
        for v in t.values:
            n += 1
            if v and isinstance(v[0], str) and v[0][:1] in "+-" and ":" in v[0]:
                cur.execute(f"SET time_zone = '{v[0]}'")
                v = v[1:]
            try:
                cur.execute(f"INSERT INTO {t.name} (id, {cols}) VALUES ({n}, {', '.join(v)})")
            except Exception:  # noqa: BLE001 - a value the column cannot hold: no transaction
                rejected[t.label] += 1
                continue
            cur.execute(f"DELETE FROM {t.name} WHERE id = {n}")
            ran += 2
        cur.execute("SET time_zone = '+00:00'")
    cur.execute("FLUSH BINARY LOGS")
    return ran, rejected


def compare(files: list[str], labels: dict[str, str], kinds: dict[str, str], *, pure: bool) -> Result:
    env = dict(os.environ)
    env.pop("LAGADVISOR_PUREPYTHON", None)
    if pure:
        env["LAGADVISOR_PUREPYTHON"] = "1"
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "export", "--commit-order", "serial", *files],
                       capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"export failed: {r.stderr[-2000:]}")
    res = Result(stderr=r.stderr)
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        tables = [t.split(".", 1)[-1] for t in rec.get("tables", [])]
        if not tables or not all(t in labels for t in tables):
            continue  # DDL and FLUSH: not part of the sweep
        label = labels[tables[0]]
        res.compared += 1
        res.kinds[kinds[label]] += 1
        if rec["computed"]["WRITESET"] == rec["last_committed"]:
            res.matched += 1
        else:
            res.per_table[label] += 1
            res.misses.append((label, rec["sequence_number"], rec["last_committed"], rec["computed"]["WRITESET"]))
    return res


def sweep(server_port: int, *, sample: int | None, seed: int = 18, binlog_files=None, log=print,
          only: list[str] | None = None) -> dict:
    """Run the whole sweep against the server on ``server_port`` (fresh, binlog on, FULL row
    metadata); returns the figures."""
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=server_port, user="root", password="", charset="utf8mb4",
                           autocommit=True)
    cur = conn.cursor()
    cur.execute("SELECT VERSION()")
    version = cur.fetchone()[0]
    allc = server_collations(cur)
    chosen = [c for c in allc if c[0] in only] if only else pick(allc, sample, seed)
    char_too = {c for c, _ in chosen} if sample is None else set(SAMPLE_ALWAYS)
    types = type_tables()
    tables = types + functional_tables() + collation_tables(chosen, char_too)
    t0 = time.time()
    ran, rejected = run_workload(conn, tables)
    conn.close()
    t1 = time.time()
    files = [str(p) for p in binlog_files()][:-1]
    labels = {t.name: t.label for t in tables}
    kinds = {t.label: t.kind for t in tables}
    out = {"server": version, "types": len(types), "collations": len(chosen), "collations_listed": len(allc),
           "tables": len(tables), "statements": ran, "rejected_values": sum(rejected.values()),
           "workload_s": round(t1 - t0, 1)}
    for mode in ("native", "reference"):
        t2 = time.time()
        res = compare(files, labels, kinds, pure=(mode == "reference"))
        apart = ("functional", "approximated")
        out[mode] = {"compared": res.compared, "matched": res.matched,
                     "compared_exact": res.compared - sum(res.kinds[k] for k in apart),
                     "misses": {k: v for k, v in res.per_table.items() if kinds.get(k) not in apart},
                     "functional_misses": {k: v for k, v in res.per_table.items() if kinds.get(k) == "functional"},
                     "approximated_misses": {k: v for k, v in res.per_table.items()
                                             if kinds.get(k) == "approximated"},
                     "approximated_compared": res.kinds["approximated"],
                     "first_misses": [m for m in res.misses if kinds.get(m[0]) not in apart][:10],
                     "seconds": round(time.time() - t2, 1), "stderr": res.stderr[-3000:]}
        log(f"{mode}: {res.matched}/{res.compared} match; misses by table: {dict(res.per_table)}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="every collation (default: the CI sample)")
    ap.add_argument("--sample", type=int, default=36, help="collations in the sample (default 36)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--collations", help="comma-separated collations to sweep instead (with the types)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "scripts"))
    import realservers

    port = 3400 + os.getpid() % 90
    srv = realservers.MySQLServer(f"ws-sweep-{os.getpid()}", port, sweep_server_options(), fresh=True)
    srv.start()
    try:
        figures = sweep(port, sample=None if args.all else args.sample, binlog_files=srv.binlog_files,
                        log=lambda s: print(s, file=sys.stderr),
                        only=args.collations.split(",") if args.collations else None)
    finally:
        srv.stop()
        srv.remove()
    text = json.dumps(figures, indent=2)
    if args.json:
        Path(args.json).write_text(text)
    print(text)
    ok = all(figures[m]["misses"] == {} for m in ("native", "reference"))
    return 0 if ok else 1


def sweep_server_options() -> list[str]:
    """A fresh server for the sweep: binlog on, FULL row metadata, no fsync per commit."""
    return ["--server-id=18", "--log-bin=binlog", "--binlog-row-metadata=FULL", "--sync-binlog=0",
            "--innodb-flush-log-at-trx-commit=0", "--max-binlog-size=1073741824"]


if __name__ == "__main__":
    raise SystemExit(main())
