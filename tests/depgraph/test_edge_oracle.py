"""MySQL is the oracle on the statements a fixture workload never writes: foreign-key actions
(cascades, SET NULL, a self-referencing table, a two-column key onto a unique index,
``foreign_key_checks=0``), XA (prepared, committed, rolled back, one phase), CREATE TABLE ...
SELECT, a statement that fails inside a transaction, savepoints, temporary tables, multi-table
UPDATE/DELETE, a generated invisible primary key, nullable unique keys, generated columns in
unique keys, partitions and their admin statements, a table whose only key is UNIQUE NOT NULL,
MyISAM, no-op and DCL transactions, REPLACE and ON DUPLICATE KEY UPDATE, JSON and TEXT prefixes.

One connection writes it all, so MySQL 9.x records exactly WRITESET's answer (the commit-order
parent is always the previous transaction; ``sql/rpl_trx_tracking.cc``), and every scenario ends
with transactions on the rows its odd statement touched: a hash the server kept or dropped shows
in their ``last_committed``. ``export --commit-order serial`` must reproduce every one, natively
and in the reference, with the schema and from the binlog's own DDL alone, except where the binlog
cannot tell: a statement that fails inside a transaction leaves its rows' hashes in the server's
writeset (``Rpl_transaction_write_set_ctx`` is truncated by ``ROLLBACK TO SAVEPOINT`` only), but
not its rows in the binlog."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pymysql
import pytest

import oracle
from conftest import free_port, need, server_name, source_and_replica

pytestmark = pytest.mark.server

#: (database, set-up, steps): a step is one autocommitted statement or a list run as one
#: transaction; a statement starting with "!" fails on the server (a duplicate key).
SCENARIOS = [
    ("fk_cascade", [
        "CREATE TABLE p (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, v INT, FOREIGN KEY (pid) REFERENCES p(id) "
        "ON DELETE CASCADE ON UPDATE CASCADE)",
        "INSERT INTO p VALUES (1,0),(2,0),(3,0)", "INSERT INTO c VALUES (10,1,0),(11,2,0),(12,3,0)"],
     ["UPDATE c SET v=1 WHERE id=10", "UPDATE c SET v=1 WHERE id=11", "DELETE FROM p WHERE id=2",
      "UPDATE c SET v=2 WHERE id=12", "UPDATE p SET id=30 WHERE id=3", "UPDATE c SET v=3 WHERE id=12",
      "UPDATE c SET v=3 WHERE id=10", "INSERT INTO c VALUES (13,1,0)", "INSERT INTO c VALUES (14,NULL,0)",
      "INSERT INTO c VALUES (15,NULL,0)", "UPDATE c SET v=9 WHERE id=13"]),
    ("fk_setnull_selfref", [
        "CREATE TABLE e (id INT PRIMARY KEY, boss INT NULL, v INT, FOREIGN KEY (boss) REFERENCES e(id) "
        "ON DELETE SET NULL)", "INSERT INTO e VALUES (1,NULL,0),(2,1,0),(3,1,0),(4,2,0)"],
     ["UPDATE e SET v=1 WHERE id=3", "UPDATE e SET v=1 WHERE id=4", "DELETE FROM e WHERE id=2",
      "UPDATE e SET v=2 WHERE id=3", "RENAME TABLE e TO e2", "UPDATE e2 SET v=3 WHERE id=3"]),
    ("fk_multicol_uk", [
        "CREATE TABLE p2 (id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(10) NOT NULL, UNIQUE KEY uab (a,b))",
        "CREATE TABLE c2 (id INT PRIMARY KEY, a INT NULL, b VARCHAR(10) NULL, v INT, "
        "FOREIGN KEY (a,b) REFERENCES p2(a,b))", "INSERT INTO p2 VALUES (1,1,'x'),(2,2,'y')"],
     ["INSERT INTO c2 VALUES (1,1,'x',0)", "INSERT INTO c2 VALUES (2,1,'x',0)", "INSERT INTO c2 VALUES (3,2,'y',0)",
      "INSERT INTO c2 VALUES (4,1,NULL,0)", "INSERT INTO c2 VALUES (5,1,NULL,0)",
      "INSERT INTO c2 VALUES (6,NULL,'y',0)", "INSERT INTO c2 VALUES (7,2,NULL,0)", "UPDATE c2 SET v=1 WHERE id=3",
      "UPDATE c2 SET v=1 WHERE id=1"]),
    ("fk_checks_off", [
        "CREATE TABLE p3 (id INT PRIMARY KEY)",
        "CREATE TABLE c3 (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p3(id))",
        "INSERT INTO p3 VALUES (1),(2)"],
     [["SET SESSION foreign_key_checks=0", "INSERT INTO c3 VALUES (1,1)", "SET SESSION foreign_key_checks=1"],
      "INSERT INTO c3 VALUES (2,1)", "INSERT INTO c3 VALUES (3,2)",
      ["SET SESSION foreign_key_checks=0", "INSERT INTO c3 VALUES (4,2)", "SET SESSION foreign_key_checks=1"],
      "INSERT INTO c3 VALUES (5,2)"]),
    ("xa", ["CREATE TABLE x (id INT PRIMARY KEY, v INT)", "INSERT INTO x VALUES (1,0),(2,0),(3,0),(4,0)"],
     [["XA START 'a'", "UPDATE x SET v=1 WHERE id=1", "XA END 'a'", "XA PREPARE 'a'"], "XA COMMIT 'a'",
      "UPDATE x SET v=2 WHERE id=2", "UPDATE x SET v=2 WHERE id=1",
      ["XA START 'b'", "UPDATE x SET v=3 WHERE id=3", "XA END 'b'", "XA PREPARE 'b'"], "XA ROLLBACK 'b'",
      "UPDATE x SET v=3 WHERE id=4", "UPDATE x SET v=4 WHERE id=3",
      ["XA START 'c'", "UPDATE x SET v=5 WHERE id=2", "XA END 'c'", "XA COMMIT 'c' ONE PHASE"],
      "UPDATE x SET v=6 WHERE id=4", "UPDATE x SET v=6 WHERE id=2"]),
    ("ctas", ["CREATE TABLE s (id INT PRIMARY KEY, v INT)", "INSERT INTO s VALUES (1,0),(2,0)"],
     ["UPDATE s SET v=1 WHERE id=1", "CREATE TABLE s2 (PRIMARY KEY (id)) AS SELECT * FROM s",
      "UPDATE s SET v=2 WHERE id=2", "UPDATE s2 SET v=2 WHERE id=1", "UPDATE s SET v=3 WHERE id=1",
      "CREATE TABLE s3 AS SELECT * FROM s", "UPDATE s SET v=4 WHERE id=2"]),
    ("stmt_rollback", ["CREATE TABLE r (id INT PRIMARY KEY, v INT)", "INSERT INTO r VALUES (1,0),(2,0),(3,0)"],
     [["BEGIN", "UPDATE r SET v=1 WHERE id=1", "!INSERT INTO r VALUES (10,0),(11,0),(2,0)",
       "UPDATE r SET v=1 WHERE id=3", "COMMIT"],
      "UPDATE r SET v=2 WHERE id=2", "INSERT INTO r VALUES (10,5)", "INSERT INTO r VALUES (11,5)",
      ["BEGIN", "!UPDATE r SET id=3 WHERE id=2", "UPDATE r SET v=9 WHERE id=1", "COMMIT"],
      "UPDATE r SET v=7 WHERE id=2", "UPDATE r SET v=7 WHERE id=10"]),
    ("savepoint", ["CREATE TABLE sp (id INT PRIMARY KEY, v INT)", "INSERT INTO sp VALUES (1,0),(2,0),(3,0)"],
     [["BEGIN", "UPDATE sp SET v=1 WHERE id=1", "SAVEPOINT s1", "UPDATE sp SET v=1 WHERE id=2",
       "ROLLBACK TO SAVEPOINT s1", "COMMIT"],
      "UPDATE sp SET v=2 WHERE id=2", "UPDATE sp SET v=2 WHERE id=3", "UPDATE sp SET v=2 WHERE id=1",
      ["BEGIN", "SAVEPOINT s2", "UPDATE sp SET v=3 WHERE id=3", "ROLLBACK TO SAVEPOINT s2",
       "UPDATE sp SET v=3 WHERE id=1", "COMMIT"],
      "UPDATE sp SET v=4 WHERE id=3"]),
    ("temporary", ["CREATE TABLE tp (id INT PRIMARY KEY, v INT)", "INSERT INTO tp VALUES (1,0),(2,0)"],
     ["CREATE TEMPORARY TABLE tt (id INT PRIMARY KEY)", "UPDATE tp SET v=1 WHERE id=1", "INSERT INTO tt VALUES (1)",
      ["BEGIN", "INSERT INTO tt VALUES (2)", "UPDATE tp SET v=2 WHERE id=2", "COMMIT"],
      "UPDATE tp SET v=3 WHERE id=1", "DROP TEMPORARY TABLE tt", "UPDATE tp SET v=4 WHERE id=2"]),
    ("multitable", [
        "CREATE TABLE m1 (id INT PRIMARY KEY, v INT)", "CREATE TABLE m2 (id INT PRIMARY KEY, v INT)",
        "INSERT INTO m1 VALUES (1,0),(2,0),(3,0)", "INSERT INTO m2 VALUES (1,0),(2,0),(3,0)"],
     ["UPDATE m1 JOIN m2 USING (id) SET m1.v=1, m2.v=1 WHERE id=1", "UPDATE m1 SET v=2 WHERE id=2",
      "UPDATE m2 SET v=2 WHERE id=1", "DELETE m1, m2 FROM m1 JOIN m2 USING (id) WHERE id=3",
      "INSERT INTO m2 VALUES (3,0)", "UPDATE m1 SET v=3 WHERE id=1"]),
    ("gipk", ["SET SESSION sql_generate_invisible_primary_key=ON", "CREATE TABLE g (a INT, b INT)",
              "SET SESSION sql_generate_invisible_primary_key=OFF", "INSERT INTO g VALUES (1,1),(2,2),(3,3)"],
     ["UPDATE g SET b=5 WHERE a=1", "UPDATE g SET b=5 WHERE a=2", "UPDATE g SET b=6 WHERE a=1",
      "INSERT INTO g VALUES (4,4)", "UPDATE g SET b=7 WHERE a=3"]),
    ("nullable_uk", [
        "CREATE TABLE n (id INT PRIMARY KEY, a INT NULL, b INT NULL, UNIQUE KEY uab (a,b))",
        "CREATE TABLE n2 (a INT NOT NULL, b INT NULL, v INT, UNIQUE KEY ua (a), UNIQUE KEY ub (b))",
        "INSERT INTO n VALUES (1,1,NULL),(2,2,2)", "INSERT INTO n2 VALUES (1,NULL,0),(2,2,0)"],
     ["INSERT INTO n VALUES (3,1,NULL)", "INSERT INTO n VALUES (4,1,NULL)", "UPDATE n SET a=9 WHERE id=2",
      "INSERT INTO n VALUES (5,2,2)", "UPDATE n2 SET v=1 WHERE a=1", "UPDATE n2 SET v=1 WHERE a=2",
      "UPDATE n2 SET v=2 WHERE a=1", "INSERT INTO n2 VALUES (3,NULL,0)", "UPDATE n2 SET b=7 WHERE a=3",
      "UPDATE n2 SET v=3 WHERE a=2"]),
    ("gencols", [
        "CREATE TABLE gc (id INT PRIMARY KEY, a INT, s INT AS (a*2) STORED, vv INT AS (a+1) VIRTUAL, "
        "UNIQUE KEY us (s), UNIQUE KEY uv (vv))", "INSERT INTO gc (id, a) VALUES (1,1),(2,2),(3,3)"],
     ["UPDATE gc SET a=10 WHERE id=1", "DELETE FROM gc WHERE id=2", "INSERT INTO gc (id, a) VALUES (4,2)",
      "UPDATE gc SET a=11 WHERE id=3", "INSERT INTO gc (id,a) VALUES (5,3)", "UPDATE gc SET a=12 WHERE id=4"]),
    ("partitioned", [
        "CREATE TABLE pt (id INT, k INT, v INT, PRIMARY KEY (id,k)) PARTITION BY HASH(k) PARTITIONS 4",
        "INSERT INTO pt VALUES (1,1,0),(2,2,0),(3,3,0)"],
     ["UPDATE pt SET v=1 WHERE id=1", "UPDATE pt SET v=1 WHERE id=2", "UPDATE pt SET v=2 WHERE id=1",
      "ALTER TABLE pt TRUNCATE PARTITION p1", "UPDATE pt SET v=3 WHERE id=2", "ANALYZE TABLE pt",
      "UPDATE pt SET v=3 WHERE id=3", "OPTIMIZE TABLE pt", "UPDATE pt SET v=4 WHERE id=3"]),
    ("uk_only", ["CREATE TABLE u (a INT NOT NULL, b INT, UNIQUE KEY ua (a))", "INSERT INTO u VALUES (1,0),(2,0)"],
     ["UPDATE u SET b=1 WHERE a=1", "UPDATE u SET b=1 WHERE a=2", "UPDATE u SET b=2 WHERE a=1",
      "UPDATE u SET a=5 WHERE a=2", "INSERT INTO u VALUES (2,0)"]),
    ("myisam", ["CREATE TABLE my (id INT PRIMARY KEY, v INT) ENGINE=MyISAM", "INSERT INTO my VALUES (1,0),(2,0)"],
     ["UPDATE my SET v=1 WHERE id=1", "UPDATE my SET v=1 WHERE id=2", "UPDATE my SET v=2 WHERE id=1",
      "INSERT INTO my VALUES (3,0)", "UPDATE my SET v=3 WHERE id=2"]),
    ("noop_dcl", ["CREATE TABLE z (id INT PRIMARY KEY, v INT)", "INSERT INTO z VALUES (1,0),(2,0)"],
     ["UPDATE z SET v=1 WHERE id=1", ["BEGIN", "UPDATE z SET v=1 WHERE id=1", "COMMIT"],
      "UPDATE z SET v=0 WHERE id=99", "UPDATE z SET v=2 WHERE id=2", "UPDATE z SET v=3 WHERE id=1",
      "CREATE USER IF NOT EXISTS edge_u1", "UPDATE z SET v=4 WHERE id=2", "TRUNCATE TABLE z",
      "INSERT INTO z VALUES (1,0)"]),
    ("replace_ondup", [
        "CREATE TABLE rp (id INT PRIMARY KEY, u INT, v INT, UNIQUE KEY uu (u))",
        "INSERT INTO rp VALUES (1,1,0),(2,2,0),(3,3,0)"],
     ["REPLACE INTO rp VALUES (4,1,0)", "UPDATE rp SET v=1 WHERE id=2", "UPDATE rp SET v=1 WHERE id=4",
      "INSERT INTO rp VALUES (5,2,0) ON DUPLICATE KEY UPDATE v=v+1", "UPDATE rp SET v=2 WHERE id=3",
      "UPDATE rp SET v=3 WHERE u=2", "REPLACE INTO rp VALUES (3,4,0)", "UPDATE rp SET v=4 WHERE id=3"]),
    ("fmt", ["CREATE TABLE f (id INT PRIMARY KEY, v INT)", "INSERT INTO f VALUES (1,0),(2,0),(3,0),(4,0)"],
     ["UPDATE f SET v=1 WHERE id=1",
      ["SET SESSION binlog_format=STATEMENT", "UPDATE f SET v=2 WHERE id=2", "SET SESSION binlog_format=ROW"],
      "UPDATE f SET v=3 WHERE id=3",
      ["SET SESSION binlog_format=MIXED", "UPDATE f SET v=4 WHERE id=4", "SET SESSION binlog_format=ROW"],
      "UPDATE f SET v=5 WHERE id=1",
      ["SET SESSION binlog_format=MIXED", "UPDATE f SET v=v + 1 + 0 * UUID_SHORT() WHERE id=4",
       "SET SESSION binlog_format=ROW"],
      "UPDATE f SET v=6 WHERE id=2"]),
    ("json_blob", [
        "CREATE TABLE jb (id INT PRIMARY KEY, j JSON, t TEXT, bb BLOB, UNIQUE KEY ut (t(10)))",
        "INSERT INTO jb VALUES (1,'{\"a\":1}','aaaaaaaaaaXX','x'),(2,'[1]','bbbbbbbbbbYY','y')"],
     ["UPDATE jb SET j=JSON_SET(j,'$.a',2) WHERE id=1", "UPDATE jb SET t='aaaaaaaaaaZZ' WHERE id=1",
      "UPDATE jb SET bb='z' WHERE id=2", "INSERT INTO jb VALUES (3,NULL,'cccccccccc',NULL)",
      "UPDATE jb SET t='aaaaaaaaab' WHERE id=2"]),
]

#: Schemas that change under the binlog: keys added and dropped, a primary key added and moved,
#: tables renamed (swapped), re-collated, re-columned, dropped and re-created, LIKE, a foreign key
#: added then dropped, `T` and `t` (two tables: ``lower_case_table_names=0``), odd names, a DESC and
#: an invisible unique key, a multi-valued index.
DDL_SCENARIOS = [
    ("ddl_keys", ["CREATE TABLE a (id INT PRIMARY KEY, u INT, v INT)",
                  "INSERT INTO a VALUES (1,1,10),(2,2,20),(3,3,30)"],
     ["UPDATE a SET v=1 WHERE id=1", "ALTER TABLE a ADD UNIQUE KEY uu (u)", "UPDATE a SET u=9 WHERE id=2",
      "UPDATE a SET u=2 WHERE id=3", "ALTER TABLE a DROP INDEX uu", "UPDATE a SET u=5 WHERE id=1",
      "UPDATE a SET u=9 WHERE id=3", "CREATE UNIQUE INDEX u2 ON a (v)", "UPDATE a SET v=7 WHERE id=1",
      "UPDATE a SET v=1 WHERE id=2", "DROP INDEX u2 ON a", "UPDATE a SET v=7 WHERE id=3"]),
    ("ddl_pk", ["CREATE TABLE b (x INT NOT NULL, y INT NOT NULL, v INT)", "INSERT INTO b VALUES (1,1,0),(2,2,0)"],
     ["UPDATE b SET v=1 WHERE x=1", "UPDATE b SET v=1 WHERE x=2", "ALTER TABLE b ADD PRIMARY KEY (x)",
      "UPDATE b SET v=2 WHERE x=1", "UPDATE b SET v=2 WHERE x=2", "ALTER TABLE b DROP PRIMARY KEY, ADD PRIMARY KEY (y)",
      "UPDATE b SET x=2 WHERE y=1", "UPDATE b SET v=3 WHERE y=2", "UPDATE b SET v=4 WHERE y=1"]),
    ("ddl_rename", [
        "CREATE TABLE c1 (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE c2 (k VARCHAR(10) COLLATE utf8mb4_0900_ai_ci PRIMARY KEY, v INT)",
        "INSERT INTO c1 VALUES (1,0),(2,0)", "INSERT INTO c2 VALUES ('a',0),('b',0)"],
     ["UPDATE c2 SET v=1 WHERE k='a'", "RENAME TABLE c1 TO tmp, c2 TO c1, tmp TO c2", "UPDATE c1 SET v=2 WHERE k='A'",
      "UPDATE c1 SET v=3 WHERE k='b'", "!INSERT INTO c1 VALUES ('á',0)", "UPDATE c2 SET v=4 WHERE id=1",
      "ALTER TABLE c1 RENAME TO c3", "UPDATE c3 SET v=5 WHERE k='b'", "UPDATE c3 SET v=6 WHERE k='a'"]),
    ("ddl_collation", [
        "CREATE TABLE d (k VARCHAR(10) COLLATE utf8mb4_bin PRIMARY KEY, v INT)",
        "INSERT INTO d VALUES ('x',0),('X',0),('y',0)"],
     ["UPDATE d SET v=1 WHERE k='x'", "UPDATE d SET v=1 WHERE k='X'", "DELETE FROM d WHERE k='X'",
      "ALTER TABLE d MODIFY k VARCHAR(10) COLLATE utf8mb4_0900_ai_ci", "UPDATE d SET v=2 WHERE k='x'",
      "!INSERT INTO d VALUES ('Y',0)", "UPDATE d SET v=3 WHERE k='y'", "ALTER TABLE d CONVERT TO CHARACTER SET latin1",
      "UPDATE d SET v=4 WHERE k='Y'", "UPDATE d SET v=5 WHERE k='x'"]),
    ("ddl_columns", ["CREATE TABLE f (id INT PRIMARY KEY, a INT, b INT, UNIQUE KEY ub (b))",
                     "INSERT INTO f VALUES (1,1,1),(2,2,2)"],
     ["UPDATE f SET a=5 WHERE id=1", "ALTER TABLE f ADD COLUMN z INT FIRST", "UPDATE f SET b=3 WHERE id=1",
      "UPDATE f SET b=1 WHERE id=2", "ALTER TABLE f DROP COLUMN a", "UPDATE f SET z=1 WHERE id=1",
      "UPDATE f SET b=7 WHERE id=2", "ALTER TABLE f ADD COLUMN w INT AFTER id, ADD UNIQUE KEY uw (w)",
      "UPDATE f SET w=1 WHERE id=1", "UPDATE f SET w=2 WHERE id=2", "UPDATE f SET b=9 WHERE id=1"]),
    ("ddl_fk_later", [
        "CREATE TABLE gp (id INT PRIMARY KEY, v INT)", "CREATE TABLE gch (id INT PRIMARY KEY, pid INT, KEY (pid))",
        "INSERT INTO gp VALUES (1,0),(2,0)", "INSERT INTO gch VALUES (1,1),(2,2)"],
     ["UPDATE gp SET v=1 WHERE id=1", "UPDATE gp SET v=1 WHERE id=2",
      "ALTER TABLE gch ADD CONSTRAINT fk1 FOREIGN KEY (pid) REFERENCES gp(id)", "UPDATE gp SET v=2 WHERE id=1",
      "UPDATE gch SET pid=1 WHERE id=2", "INSERT INTO gch VALUES (3,1)", "ALTER TABLE gch DROP FOREIGN KEY fk1",
      "UPDATE gp SET v=3 WHERE id=1", "UPDATE gp SET v=3 WHERE id=2", "INSERT INTO gch VALUES (4,1)"]),
    ("ddl_recreate", ["CREATE TABLE h (id INT PRIMARY KEY, v INT)", "INSERT INTO h VALUES (1,0),(2,0)"],
     ["UPDATE h SET v=1 WHERE id=1", "DROP TABLE h", "CREATE TABLE h (id INT, v INT NOT NULL, UNIQUE KEY uv (v))",
      "INSERT INTO h VALUES (1,1),(1,2)", "UPDATE h SET id=5 WHERE v=1", "UPDATE h SET id=6 WHERE v=2",
      "UPDATE h SET id=7 WHERE v=1", "CREATE TABLE h2 LIKE h", "INSERT INTO h2 VALUES (1,1)",
      "INSERT INTO h2 VALUES (1,2)", "UPDATE h2 SET id=3 WHERE v=1"]),
    ("ddl_case", ["CREATE TABLE T (id INT PRIMARY KEY, v INT)", "CREATE TABLE t (k INT, v INT)",
                  "INSERT INTO T VALUES (1,0),(2,0)", "INSERT INTO t VALUES (1,0),(2,0)"],
     ["UPDATE T SET v=1 WHERE id=1", "UPDATE T SET v=1 WHERE id=2", "UPDATE t SET v=1 WHERE k=1",
      "UPDATE T SET v=2 WHERE id=1"]),
    ("ddl_special", [
        "CREATE TABLE `wéird tâble` (`ïd` INT PRIMARY KEY, `v``q` INT)", "INSERT INTO `wéird tâble` VALUES (1,0),(2,0)",
        "CREATE TABLE desc_k (id INT PRIMARY KEY, a INT, b INT, UNIQUE KEY uab (a DESC, b))",
        "INSERT INTO desc_k VALUES (1,1,1),(2,2,2)",
        "CREATE TABLE inv (id INT PRIMARY KEY, a INT, UNIQUE KEY ua (a) INVISIBLE)",
        "INSERT INTO inv VALUES (1,1),(2,2)"],
     ["UPDATE `wéird tâble` SET `v``q`=1 WHERE `ïd`=1", "UPDATE `wéird tâble` SET `v``q`=1 WHERE `ïd`=2",
      "UPDATE `wéird tâble` SET `v``q`=2 WHERE `ïd`=1", "UPDATE desc_k SET a=5 WHERE id=1",
      "UPDATE desc_k SET a=1 WHERE id=2", "UPDATE desc_k SET b=9 WHERE id=1", "UPDATE inv SET a=7 WHERE id=1",
      "UPDATE inv SET a=1 WHERE id=2", "UPDATE inv SET a=8 WHERE id=1", "ALTER TABLE inv ALTER INDEX ua VISIBLE",
      "UPDATE inv SET a=9 WHERE id=2", "UPDATE inv SET a=2 WHERE id=1"]),
    ("mv_index", [
        "CREATE TABLE mv (id INT PRIMARY KEY, j JSON, KEY mvk ((CAST(j->'$.a' AS UNSIGNED ARRAY))))",
        "INSERT INTO mv VALUES (1,'{\"a\":[1,2]}'),(2,'{\"a\":[3]}')"],
     ["UPDATE mv SET j='{\"a\":[3,4]}' WHERE id=1", "UPDATE mv SET j='{\"a\":[5]}' WHERE id=2",
      "UPDATE mv SET j='{\"a\":[1]}' WHERE id=1"]),
]

#: DDL as people write it: CHANGE/RENAME COLUMN, columns added in a group with a unique key on
#: them, a column of a unique key dropped (the key shrinks), RENAME INDEX, DROP and ADD of a key in
#: one ALTER, comments and strings holding `;` and `)`, versioned comments, MyISAM to InnoDB, a
#: primary key added USING BTREE, PARTITION BY and REMOVE PARTITIONING, charsets changed, names
#: qualified with another database and a RENAME across databases.
PARSER_SCENARIOS = [
    ("p_change", ["CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, v INT, UNIQUE KEY ua (a))",
                  "INSERT INTO t VALUES (1,1,1,0),(2,2,2,0),(3,3,3,0)"],
     ["ALTER TABLE t CHANGE COLUMN a aa INT, ALGORITHM=INPLACE", "UPDATE t SET aa=9 WHERE id=1",
      "UPDATE t SET aa=1 WHERE id=2", "ALTER TABLE t RENAME COLUMN aa TO a3", "UPDATE t SET a3=8 WHERE id=3",
      "UPDATE t SET a3=3 WHERE id=1", "ALTER TABLE t ADD COLUMN (x INT, y INT), ADD UNIQUE INDEX uxy (x, y)",
      "UPDATE t SET x=1, y=1 WHERE id=1", "UPDATE t SET x=1, y=2 WHERE id=2", "UPDATE t SET y=1, x=2 WHERE id=1",
      "UPDATE t SET y=1, x=1 WHERE id=3"]),
    ("p_dropcol", ["CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, v INT, UNIQUE KEY uab (a, b))",
                   "INSERT INTO t VALUES (1,1,1,0),(2,2,2,0),(3,3,3,0)"],
     ["UPDATE t SET b=7 WHERE id=1", "UPDATE t SET b=1 WHERE id=2", "ALTER TABLE t DROP COLUMN b",
      "UPDATE t SET a=5 WHERE id=1", "UPDATE t SET a=1 WHERE id=2", "UPDATE t SET a=6 WHERE id=3",
      "!UPDATE t SET a=5 WHERE id=3"]),
    ("p_rename_idx", ["CREATE TABLE t (id INT PRIMARY KEY, a INT, v INT, UNIQUE KEY ua (a))",
                      "INSERT INTO t VALUES (1,1,0),(2,2,0)"],
     ["ALTER TABLE t RENAME INDEX ua TO ub", "UPDATE t SET a=5 WHERE id=1", "UPDATE t SET a=1 WHERE id=2",
      "ALTER TABLE t DROP INDEX ub, ADD UNIQUE KEY ub (v, a)", "UPDATE t SET a=7 WHERE id=1",
      "UPDATE t SET a=5 WHERE id=2", "ALTER TABLE t ALTER COLUMN v SET DEFAULT 3", "UPDATE t SET v=1 WHERE id=1"]),
    ("p_comments", [
        "/*!40101 SET NAMES utf8mb4 */",
        "CREATE TABLE `t` (\n  `id` int NOT NULL COMMENT 'a; ) tricky',\n"
        "  `a` varchar(8) /* inline ) */ DEFAULT 'x)' COMMENT \"q\",\n  PRIMARY KEY (`id`),\n"
        "  UNIQUE KEY `u;a` (`a`)\n) ENGINE=InnoDB /*!50100 COMMENT='t;(' */",
        "INSERT INTO t VALUES (1,'a'),(2,'b')"],
     ["UPDATE t SET a='c' WHERE id=1", "UPDATE t SET a='a' WHERE id=2",
      "/* leading */ ALTER TABLE t /* mid */ ADD COLUMN z INT -- trailing", "UPDATE t SET a='d' WHERE id=2",
      "UPDATE t SET a='b' WHERE id=1"]),
    ("p_engine", ["CREATE TABLE t (id INT, a INT NOT NULL, v INT, UNIQUE KEY ua (a)) ENGINE=MyISAM",
                  "INSERT INTO t VALUES (1,1,0),(2,2,0)"],
     ["UPDATE t SET v=1 WHERE a=1", "ALTER TABLE t ENGINE=InnoDB", "UPDATE t SET v=2 WHERE a=2",
      "UPDATE t SET a=3 WHERE a=1", "UPDATE t SET a=1 WHERE a=2", "ALTER TABLE t ADD PRIMARY KEY USING BTREE (id)",
      "UPDATE t SET a=9 WHERE id=1", "UPDATE t SET a=3 WHERE id=2"]),
    ("p_part", ["CREATE TABLE t (id INT, k INT, v INT, PRIMARY KEY (id, k))", "INSERT INTO t VALUES (1,1,0),(2,2,0)"],
     ["ALTER TABLE t PARTITION BY KEY (id) PARTITIONS 3", "UPDATE t SET v=1 WHERE id=1",
      "UPDATE t SET v=1 WHERE id=2", "ALTER TABLE t REMOVE PARTITIONING", "UPDATE t SET v=2 WHERE id=1"]),
    ("p_charset", ["CREATE TABLE t (k VARCHAR(10) CHARACTER SET latin1 COLLATE latin1_general_cs PRIMARY KEY, v INT)",
                   "INSERT INTO t VALUES ('a',0),('A',0)"],
     ["UPDATE t SET v=1 WHERE k='a'", "UPDATE t SET v=1 WHERE k='A'",
      "ALTER TABLE t MODIFY k VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_as_cs",
      "UPDATE t SET v=2 WHERE k='a'", "UPDATE t SET v=2 WHERE k='A'", "ALTER TABLE t DEFAULT CHARSET latin1",
      "UPDATE t SET v=3 WHERE k='a'"]),
    ("p_qualified", ["CREATE DATABASE p_other", "CREATE TABLE p_other.t (id INT PRIMARY KEY, a INT, v INT)",
                     "INSERT INTO p_other.t VALUES (1,1,0),(2,2,0)"],
     ["ALTER TABLE `p_other`.`t` ADD UNIQUE KEY (a)", "UPDATE p_other.t SET a=9 WHERE id=1",
      "UPDATE p_other.t SET a=1 WHERE id=2", "RENAME TABLE p_other.t TO p_qualified.t2", "UPDATE t2 SET a=7 WHERE id=1",
      "UPDATE t2 SET a=9 WHERE id=2"]),
]

#: ``lower_case_table_names=1``: table maps name `myt`, the DDL text `MyT`, `MYT`, `Other`.
FOLDED_SCENARIOS = [
    ("Lctn", [
        "CREATE TABLE MyT (Id INT PRIMARY KEY, U INT, v INT)", "INSERT INTO MYT VALUES (1,1,0),(2,2,0),(3,3,0)",
        "CREATE TABLE Kids (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES MYT(Id))"],
     ["UPDATE myt SET v=1 WHERE id=1", "ALTER TABLE MYT ADD UNIQUE KEY uu (u)", "UPDATE MyT SET u=9 WHERE id=2",
      "UPDATE mYt SET u=2 WHERE id=3", "INSERT INTO KIDS VALUES (1,1)", "INSERT INTO kids VALUES (2,1)",
      "RENAME TABLE MYT TO Other", "UPDATE OTHER SET v=5 WHERE id=3", "UPDATE other SET u=3 WHERE id=1",
      "INSERT INTO Kids VALUES (3,2)"]),
]

#: What the binlog cannot show. The steps whose rows a failed statement had written (and the
#: server still hashed): their recorded ``last_committed`` is the failed statement's transaction.
#: A MIXED session's statement unsafe to log as one (UUID_SHORT), logged as rows: from 8.4 a
#: session whose binlog_format is not ROW gets no writeset (``can_use_writesets``), so the server
#: gave it the commit-order parent and reset the history, which the step after it shows.
HIDDEN = {("stmt_rollback", 2), ("stmt_rollback", 3), ("fmt", 5), ("fmt", 6)}


def _last_gtid_number(gtid_set: str) -> int:
    return int(gtid_set.replace("\n", "").split(":")[-1].split("-")[-1])


def _write(port: int, scenarios: list) -> dict[int, tuple[str, int]]:
    """Runs the scenarios; the GTID number of each step's transaction -> (database, step)."""
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    steps: dict[int, tuple[str, int]] = {}
    with conn.cursor() as cur:
        def executed() -> int:
            cur.execute("SELECT @@GLOBAL.gtid_executed")
            return _last_gtid_number(cur.fetchone()[0])

        for db, setup, actions in scenarios:
            cur.execute(f"CREATE DATABASE {db}")
            cur.execute(f"USE {db}")
            for sql in setup:
                cur.execute(sql)
            for i, action in enumerate(actions):
                before = executed()
                for sql in action if isinstance(action, list) else [action]:
                    try:
                        cur.execute(sql.lstrip("!"))
                        cur.fetchall()
                    except pymysql.MySQLError:
                        assert sql.startswith("!"), sql
                    else:
                        assert not sql.startswith("!"), f"{sql} did not fail"
                for n in range(before + 1, executed() + 1):
                    steps[n] = (db, i)
    conn.close()
    return steps


def _binlogs(out, scenarios: list, options: tuple[str, ...] = ()):
    """A fresh MySQL 9.x runs the scenarios; its binlogs (copied to ``out``), its schema at the
    end (mysqldump --no-data) and the steps' GTIDs."""
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    srv = oracle.realservers.MySQLServer(
        server_name("lagadvisor-test-edge"), free_port(),
        ["--server-id=7", "--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON",
         "--binlog-row-metadata=FULL", *options], fresh=True)
    srv.start()
    try:
        srv.sql("RESET BINARY LOGS AND GTIDS")
        steps = _write(srv.port, scenarios)
        (out / "schema.sql").write_text(srv.mysqldump_no_data(*[db for db, _, _ in scenarios]))
        srv.sql("FLUSH BINARY LOGS")
        files = []
        for p in srv.binlog_files()[:-1]:
            files.append(str(out / p.name))
            shutil.copyfile(p, files[-1])
    finally:
        srv.stop()
        srv.remove()
    return files, out / "schema.sql", steps


@pytest.fixture(scope="module")
def edge_binlogs(tmp_path_factory):
    return _binlogs(tmp_path_factory.mktemp("edge"), SCENARIOS + DDL_SCENARIOS + PARSER_SCENARIOS)


@pytest.fixture(scope="module")
def folded_binlogs(tmp_path_factory):
    return _binlogs(tmp_path_factory.mktemp("folded"), FOLDED_SCENARIOS, ("--lower-case-table-names=1",))


@pytest.fixture(scope="module")
def minimal_metadata_binlogs(tmp_path_factory):
    return _binlogs(tmp_path_factory.mktemp("meta"), SCENARIOS + DDL_SCENARIOS, ("--binlog-row-metadata=MINIMAL",))


@pytest.fixture(scope="module")
def minimal_image_binlogs(tmp_path_factory):
    return _binlogs(tmp_path_factory.mktemp("image"), SCENARIOS + DDL_SCENARIOS, ("--binlog-row-image=MINIMAL",))


def _export(binlogs, pure: str, schema: bool, warned: list | None = None,
            history: int | None = None) -> tuple[int, dict, dict]:
    """``export --commit-order serial``: the transactions, each step's record, and the steps whose
    re-derived WRITESET differs from the recorded clock (recorded, re-derived). Its warnings go to
    ``warned``; without it, there must be none."""
    files, schema_file, steps = binlogs
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "export", "--commit-order", "serial",
                        *(["--schema", str(schema_file)] if schema else []),
                        *(["--history-size", str(history)] if history else []), *files],
                       capture_output=True, text=True, timeout=300,
                       # a panic of the native core fails the run, not given back to the reference
                       env=dict(os.environ, LAGADVISOR_PUREPYTHON=pure, LAGADVISOR_REQUIRE_NATIVE="1"))
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if "warning" in line]
    if warned is None:
        # nothing to warn about: every table's keys are known, a CREATE TABLE ... SELECT's own table too
        assert warnings == []
    else:
        warned += warnings
    records = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(records) == max(steps)
    by_step = {}
    for rec in records:
        step = steps.get(int(rec["gtid"].rsplit(":", 1)[1]))
        if step:
            by_step[step] = rec
    differ = {s: (rec["last_committed"], rec["computed"]["WRITESET"]) for s, rec in by_step.items()
              if rec["computed"]["WRITESET"] != rec["last_committed"]}
    return len(records), by_step, differ


@pytest.mark.parametrize("pure", ["0", "1"], ids=["native", "reference"])
@pytest.mark.parametrize("schema", [False, True], ids=["binlog-ddl", "schema"])
def test_edge_statements_against_mysql(edge_binlogs, pure, schema):
    n, by_step, differ = _export(edge_binlogs, pure, schema)
    assert n > 300
    assert set(differ) == HIDDEN, differ
    # the failed statement's transaction, written just before the step that updates row 2
    assert all(recorded > computed for recorded, computed in differ.values())
    fallback = {s: rec["fallback"] for s, rec in by_step.items()}
    # XA COMMIT / XA ROLLBACK of a prepared transaction: no rows, not empty, a reset (not DDL);
    # the prepared part and a one-phase commit are tracked as any transaction
    assert [fallback[("xa", i)] for i in (0, 1, 4, 5, 8)] == [None, "empty_writeset", None, "empty_writeset", None]
    assert [by_step[("xa", i)]["xa"] for i in (0, 1, 4, 5, 8)] == [True] * 5
    assert fallback[("ctas", 1)] == fallback[("ctas", 5)] == "ctas"
    # a cascade's parent and a self-referencing table are foreign-key parents; their children are not
    assert fallback[("fk_cascade", 2)] == fallback[("fk_cascade", 4)] == "fk_parent"
    assert fallback[("fk_cascade", 5)] is None
    assert {fallback[("fk_setnull_selfref", i)] for i in (0, 1, 2, 3, 5)} == {"fk_parent"}  # renamed too
    assert fallback[("noop_dcl", 5)] == fallback[("noop_dcl", 7)] == "ddl"
    # an UPDATE that changed nothing writes no transaction
    assert ("noop_dcl", 2) not in by_step
    # a statement logged as one (STATEMENT, or MIXED's safe statement) has no writeset
    assert [by_step[("fmt", i)]["statement_based"] for i in range(7)] == [False, True, False, True, False, False, False]
    assert [fallback[("fmt", i)] for i in (1, 3, 5)] == ["statement_based", "statement_based", None]
    # `T` has a primary key, `t` none: two tables
    assert [fallback[("ddl_case", i)] for i in range(4)] == [None, None, "no_primary_key", None]
    # a foreign key added makes its parent one, dropped no longer
    assert [fallback[("ddl_fk_later", i)] for i in (0, 3, 7)] == [None, "fk_parent", None]


@pytest.mark.parametrize("pure", ["0", "1"], ids=["native", "reference"])
def test_lowercased_table_names_against_mysql(folded_binlogs, pure):
    """Under ``lower_case_table_names=1`` the DDL's names (`MYT`) find the table the table maps
    name (`myt`): its new unique key and its child's foreign key are followed."""
    _, by_step, differ = _export(folded_binlogs, pure, False)
    assert differ == {}
    assert by_step[("Lctn", 2)]["fallback"] == "fk_parent"   # Kids references MYT
    assert by_step[("Lctn", 4)]["fallback"] is None


def test_statement_logging_is_advised_against(edge_binlogs):
    """advise names binlog_format=ROW, and the pre-upgrade review (8.0 -> 8.4) lists it among
    what limits WRITESET and what to do before the upgrade."""
    from lagadvisor.advise import advise
    from lagadvisor.depgraph.pipeline import ClockOptions

    files, _, _ = edge_binlogs
    a = advise(files, ClockOptions(commit_order="flush-groups"), target_version=(8, 4, 0),
               current_version=(8, 0, 33))
    f = next(f for f in a.findings if f.id == "binlog_format")
    assert (f.setting, f.suggested, f.where) == ("binlog_format", "ROW", "source")
    assert f.evidence.startswith("2 of ") and "transactions logged as statements" in f.evidence
    assert "from 8.4 a session whose binlog_format is not ROW gets no writeset" in f.evidence
    assert f.statements == ("SET PERSIST binlog_format = 'ROW';",)
    assert any(line.startswith("Statement-based logging keeps WRITESET from tracking") for line in a.review.limits)
    assert a.review.before[0].startswith("SET PERSIST binlog_format = 'ROW'; on the source")


def test_minimal_row_metadata_follows_the_binlog_s_ddl(minimal_metadata_binlogs):
    """``binlog_row_metadata=MINIMAL``: the table maps name no column, the binlog's own DDL
    defines every table (a CREATE TABLE ... SELECT's too), and nothing else changes."""
    _, _, differ = _export(minimal_metadata_binlogs, "0", False)
    assert set(differ) == HIDDEN, differ


@pytest.mark.parametrize("pure", ["0", "1"], ids=["native", "reference"])
def test_minimal_row_images_warn_for_every_table_they_get_wrong(minimal_image_binlogs, pure):
    """``binlog_row_image=MINIMAL``: the server hashes keys the row images leave out, so some
    re-derived parents are earlier than the recorded ones; each of those transactions touches a
    table named in a warning (never a silently wrong number)."""
    warned: list[str] = []
    _, by_step, differ = _export(minimal_image_binlogs, pure, False, warned)
    named = {line.split("key columns of ", 1)[1].split(" are missing", 1)[0] for line in warned
             if "are missing from the row images" in line}
    assert len(set(differ) - HIDDEN) >= 5
    unwarned = {s: by_step[s]["tables"] for s in set(differ) - HIDDEN if not named & set(by_step[s]["tables"])}
    assert unwarned == {}, (unwarned, named)
    assert all(by_step[s]["last_committed"] > by_step[s]["computed"]["WRITESET"] for s in differ)


def test_a_replica_s_binlog_matches_every_transaction(tmp_path):
    """A one-worker replica (``log_replica_updates``) applies the scenarios from the source's
    binlog and writes its own under WRITESET: what was hidden at the source is gone (the failed
    statement was never sent, a MIXED session's rows arrive as rows), so every one of its
    transactions matches, natively and in the reference."""
    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    common = ["--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--binlog-row-metadata=FULL"]
    with source_and_replica("edge", common, ["--server-id=41"],
                            ["--server-id=42", "--replica-parallel-workers=1"]) as (src, rep):
        rep.sql("START REPLICA")
        steps = _write(src.port, SCENARIOS + DDL_SCENARIOS + PARSER_SCENARIOS)
        executed = src.sql("SELECT @@GLOBAL.gtid_executed").strip().replace("\n", "")
        assert rep.sql(f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{executed}', 120)").strip() == "0"
        rep.sql("FLUSH BINARY LOGS")
        files = []
        for p in rep.binlog_files()[:-1]:
            files.append(str(tmp_path / p.name))
            shutil.copyfile(p, files[-1])
    for pure in ("0", "1"):
        n, by_step, differ = _export((files, None, steps), pure, False)
        assert n == max(steps) and differ == {}
        assert {s for s in HIDDEN if s in by_step} == HIDDEN
