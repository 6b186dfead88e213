"""Run the reference readers (``mysqlbinlog`` from the MySQL 9.x chroot, ``mariadb-binlog`` from
the host) on any file, for differential tests. Provisioned by ``scripts/realservers.py provision``.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import realservers  # noqa: E402

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
