"""Run the reference readers (``mysqlbinlog`` from the MySQL 9.x chroot, ``mariadb-binlog`` from
the host) on any file, for differential tests. Provisioned by ``scripts/realservers.py provision``.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import realservers  # noqa: E402

from lagadvisor.binlog.constants import RowsKind  # noqa: E402

TIMEOUT_S = 120


def have_mysqlbinlog() -> bool:
    root = realservers.chroot_root()
    return (root / "usr/bin/mysqlbinlog").exists() and realservers.marker_path().exists()


def have_mariadb_binlog() -> bool:
    return shutil.which("mariadb-binlog") is not None


def mysqlbinlog(path: str | os.PathLike, *args: str) -> subprocess.CompletedProcess:
    """Run the chroot's ``mysqlbinlog ARGS FILE`` (the file is copied into the chroot; ``.gz``
    files are un-gzipped first). Returns the completed process (text, errors replaced)."""
    root = realservers.chroot_root()
    tmp = root / "tmp" / f"lagadvisor-oracle-{uuid.uuid4().hex}"
    tmp.mkdir(parents=True)
    try:
        src = Path(path)
        name = src.name[:-3] if src.name.endswith(".gz") else src.name
        dst = tmp / name
        if src.name.endswith(".gz"):
            with gzip.open(src, "rb") as fi, open(dst, "wb") as fo:
                shutil.copyfileobj(fi, fo)
        else:
            shutil.copyfile(src, dst)
        inside = "/" + str(dst.relative_to(root))
        # --local-load keeps LOAD DATA temp files of old binlogs inside our own temp dir.
        local = "/" + str(tmp.relative_to(root))
        return subprocess.run(["chroot", str(root), "mysqlbinlog", f"--local-load={local}", *args, inside],
                              capture_output=True, timeout=TIMEOUT_S, text=True, errors="replace")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def mariadb_binlog(path: str | os.PathLike, *args: str) -> subprocess.CompletedProcess:
    src = Path(path)
    with tempfile.TemporaryDirectory() as d:
        if src.name.endswith(".gz"):
            dst = Path(d) / src.name[:-3]
            with gzip.open(src, "rb") as fi, open(dst, "wb") as fo:
                shutil.copyfileobj(fi, fo)
            src = dst
        return subprocess.run(["mariadb-binlog", *args, str(src)], capture_output=True,
                              timeout=TIMEOUT_S, text=True, errors="replace")


# -- mysqlbinlog -vv row images

VV_ROW = re.compile(r"^### (INSERT INTO|UPDATE|DELETE FROM) `((?:[^`]|``)+)`\.`((?:[^`]|``)+)`")
VV_VAL = re.compile(r"^###   @(\d+)=(.*) /\* (\S+).* is_null=(\d) \*/$")
VV_KIND = {"INSERT INTO": RowsKind.WRITE, "UPDATE": RowsKind.UPDATE, "DELETE FROM": RowsKind.DELETE}


def parse_vv(text: str):
    """Row images from ``mysqlbinlog -vv``: [(db.table, kind, before{col: text}, after{col: text})]."""
    rows = []
    cur = None
    section = None
    for line in text.splitlines():
        m = VV_ROW.match(line)
        if m:
            cur = [f"{m.group(2)}.{m.group(3)}", VV_KIND[m.group(1)], None, None]
            rows.append(cur)
            section = None
            continue
        if cur is None:
            continue
        if line == "### WHERE":
            section = 2
            cur[2] = {}
        elif line == "### SET":
            section = 3
            cur[3] = {}
        else:
            v = VV_VAL.match(line)
            if v and section:
                cur[section][int(v.group(1)) - 1] = "NULL" if v.group(4) == "1" else v.group(2)
    return rows
