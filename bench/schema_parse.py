#!/usr/bin/env python3
"""Schema-file parsing speed: builds a mysqldump-style file of the requested size (varied tables:
column types, charsets and collations, composite and prefix unique keys, foreign keys, generated
columns, partitions, comments holding ';' and quotes, triggers and routines under DELIMITER, views,
and a data section of extended INSERTs) and times ``lagadvisor.schema.ddl.read_schema_file`` on
it, with peak RSS. Nothing here is committed data: the file is made under --dir and can be
deleted.

    python3 bench/schema_parse.py --mb 200            # the figure in docs/internals.md (Bad input)
    python3 bench/schema_parse.py --mb 200 --data 0.5 # half of the bytes in INSERT statements
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import time
from pathlib import Path

TYPES = ["int", "int unsigned", "bigint", "bigint unsigned", "smallint", "tinyint(1)", "decimal(12,4)",
         "datetime(6)", "timestamp NULL DEFAULT NULL", "date", "double", "binary(16)", "varbinary(255)",
         "json", "enum('a','b;c','it''s')", "set('x','y')", "text", "blob"]
CHARSETS = [("utf8mb4", "utf8mb4_0900_ai_ci"), ("utf8mb4", "utf8mb4_bin"), ("latin1", "latin1_swedish_ci"),
            ("utf8mb3", "utf8mb3_general_ci"), ("ascii", "ascii_bin"), ("utf8mb4", "utf8mb4_0900_as_cs")]


def _column(rng: random.Random, j: int) -> tuple[str, str, bool]:
    """(definition, name, is_string)"""
    name = f"col_{j}_{rng.randrange(10**6)}"
    if rng.random() < 0.45:
        cs, coll = rng.choice(CHARSETS)
        length = rng.choice((1, 8, 32, 64, 191, 255))
        kind = rng.choice(("varchar", "char"))
        extra = f" CHARACTER SET {cs} COLLATE {coll}" if rng.random() < 0.6 else ""
        dflt = rng.choice(("", " DEFAULT ''", " DEFAULT 'a;b'", " DEFAULT 'it''s'", " DEFAULT NULL"))
        null = " NOT NULL" if "NULL" not in dflt and rng.random() < 0.6 else ""
        cmt = rng.choice(("", f" COMMENT 'note; {j} \\' quoted'", " COMMENT \"x;y\""))
        return f"  `{name}` {kind}({length}){extra}{null}{dflt}{cmt}", name, True
    typ = rng.choice(TYPES)
    null = " NOT NULL" if rng.random() < 0.5 and "NULL" not in typ else ""
    dflt = " DEFAULT '0'" if null and typ.startswith(("int", "bigint", "small", "tiny")) else ""
    gen = ""
    if rng.random() < 0.05 and typ.startswith("int"):
        gen = f" GENERATED ALWAYS AS ((`id` * {rng.randrange(2, 9)})) {rng.choice(('VIRTUAL', 'STORED'))}"
        dflt = null = ""
    return f"  `{name}` {typ}{null}{dflt}{gen}", name, False


def make_dump(path: Path, megabytes: float, data_share: float, seed: int = 7) -> dict:
    rng = random.Random(seed)
    target = int(megabytes * 1e6)
    ddl_target = int(target * (1 - data_share))
    stats = {"databases": 0, "tables": 0, "unique_keys": 0, "triggers": 0, "bytes": 0}
    with open(path, "w", encoding="utf-8") as f:
        f.write("-- MySQL dump 10.13  Distrib 9.7.4, for Linux (x86_64)\n/*!40101 SET NAMES utf8mb4 */;\n"
                "/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;\n")
        written = 0
        db = None
        tables_in_db = 0
        prev_table = None
        while written < ddl_target:
            out = []
            if db is None or tables_in_db > rng.randrange(20, 200):
                db = f"tenant_{stats['databases']}"
                stats["databases"] += 1
                tables_in_db = 0
                prev_table = None
                cs, coll = rng.choice(CHARSETS)
                out.append(f"\n--\n-- Current Database: `{db}`\n--\n\nCREATE DATABASE /*!32312 IF NOT EXISTS*/ "
                           f"`{db}` /*!40100 DEFAULT CHARACTER SET {cs} COLLATE {coll} */;\n\nUSE `{db}`;\n")
            table = f"t_{tables_in_db}_{rng.randrange(10**6)}"
            cols = [("  `id` bigint unsigned NOT NULL AUTO_INCREMENT", "id", False)]
            cols += [_column(rng, j) for j in range(rng.randrange(2, 24))]
            keys = ["  PRIMARY KEY (`id`)"]
            for k in range(rng.randrange(0, 4)):
                picks = rng.sample(cols[1:], min(len(cols) - 1, rng.randrange(1, 4)))
                parts = ",".join(f"`{n}`(10)" if s and rng.random() < 0.3 else f"`{n}`" for _, n, s in picks)
                kind = "UNIQUE KEY" if rng.random() < 0.5 else "KEY"
                stats["unique_keys"] += kind == "UNIQUE KEY"
                keys.append(f"  {kind} `k{k}_{rng.randrange(999)}` ({parts})")
            if prev_table and rng.random() < 0.2:
                keys.append(f"  CONSTRAINT `fk_{table}` FOREIGN KEY (`id`) REFERENCES `{prev_table}` (`id`) "
                            "ON DELETE CASCADE")
            part = " /*!50100 PARTITION BY HASH (`id`) PARTITIONS 4 */" if rng.random() < 0.05 else ""
            cs, coll = rng.choice(CHARSETS)
            out.append(f"\n--\n-- Table structure for table `{table}`\n--\n\nDROP TABLE IF EXISTS `{table}`;\n"
                       "/*!40101 SET @saved_cs_client     = @@character_set_client */;\n/*!50503 SET "
                       f"character_set_client = utf8mb4 */;\nCREATE TABLE `{table}` (\n"
                       + ",\n".join([c for c, _, _ in cols] + keys)
                       + f"\n) ENGINE=InnoDB AUTO_INCREMENT={rng.randrange(1, 10**7)} DEFAULT CHARSET={cs} "
                         f"COLLATE={coll} COMMENT='table; {table}'{part};\n"
                         "/*!40101 SET character_set_client = @saved_cs_client */;\n")
            if rng.random() < 0.05:
                stats["triggers"] += 1
                out.append(f"DELIMITER ;;\n/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 "
                           f"TRIGGER `tr_{table}` BEFORE INSERT ON `{table}` FOR EACH ROW BEGIN\n"
                           f"  SET NEW.`id` = NEW.`id` + 0;\n  SET @x = 'a;b';\nEND */;;\nDELIMITER ;\n")
            if rng.random() < 0.03:
                out.append(f"/*!50001 CREATE ALGORITHM=UNDEFINED */\n/*!50001 VIEW `v_{table}` AS select "
                           f"`{table}`.`id` AS `id` from `{table}` */;\n")
            text = "".join(out)
            f.write(text)
            written += len(text.encode())
            stats["tables"] += 1
            tables_in_db += 1
            prev_table = table
        if data_share > 0:
            f.write("\nUSE `tenant_0`;\nCREATE TABLE `bulk` (`id` bigint NOT NULL, `s` varchar(200), "
                    "PRIMARY KEY (`id`));\nLOCK TABLES `bulk` WRITE;\n")
            stats["tables"] += 1
            k = 0
            while written < target:
                rows = ",".join(f"({k + r},'value \\' {r} ; {rng.randrange(10**9)} \"q\"')" for r in range(400))
                line = f"INSERT INTO `bulk` VALUES {rows};\n"
                f.write(line)
                written += len(line)
                k += 400
            f.write("UNLOCK TABLES;\n")
    stats["bytes"] = path.stat().st_size
    return stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=200.0, help="size of the dump (default 200)")
    ap.add_argument("--data", type=float, default=0.0, help="share of the bytes in INSERT statements")
    ap.add_argument("--dir", default="bench/data", help="where the dump is made (default bench/data)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from lagadvisor.schema.ddl import read_schema_file

    os.makedirs(args.dir, exist_ok=True)
    path = Path(args.dir) / f"schema-{args.mb:g}MB-data{args.data:g}.sql"
    t0 = time.perf_counter()
    made = make_dump(path, args.mb, args.data)
    t1 = time.perf_counter()
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    t2 = time.perf_counter()
    r = read_schema_file(text)
    t3 = time.perf_counter()
    doc = {"file": str(path), "made": made, "make_seconds": round(t1 - t0, 2), "read_seconds": round(t2 - t1, 2),
           "parse_seconds": round(t3 - t2, 2), "mb_per_second": round(made["bytes"] / 1e6 / (t3 - t2), 2),
           "statements": r.statements, "followed": r.followed, "ignored": r.ignored,
           "not_understood": r.not_understood, "tables": len(r.catalog.tables),
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    print(json.dumps(doc, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
