#!/usr/bin/env python3
"""Pack MySQL 9.x from the provisioned sid chroot into a self-contained kit for the device.

The 16-core device has no MySQL and reaches nothing, so the lab carries its own: ``mysqld`` and
the ``mysql`` client with every shared library they load (``ldd`` inside the chroot), the chroot's
own dynamic loader (its glibc is newer than any host's), and ``share/mysql`` (english/errmsg.sys
and the charsets).  It runs without the chroot as::

    KIT/lib/ld-linux-x86-64.so.2 --library-path KIT/lib KIT/bin/mysqld --no-defaults \
        --user=root --basedir=KIT --lc-messages-dir=KIT/share/mysql ...

The tar.xz (about 30 MB) goes to an ignored folder (default ``bench/data/manycore/``) that the
device call names in ``carry``; ``bench/manycore/lab.py --kit`` unpacks it.

Usage: python3 bench/manycore/build_kit.py [--out bench/data/manycore/mysql-kit.tar.xz]
"""

from __future__ import annotations

import argparse
import io
import json
import lzma
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import realservers  # noqa: E402

#: The programs the lab runs, as the chroot names them.
PROGRAMS = ("/usr/sbin/mysqld", "/usr/bin/mysql")
#: The part of /usr/share/mysql the server needs: its messages and the charset files.
SHARE = ("english", "charsets")
LOADER = "ld-linux-x86-64.so.2"
#: The top folder inside the tar.
TOP = "mysql-kit"
DEFAULT_OUT = ROOT / "bench" / "data" / "manycore" / "mysql-kit.tar.xz"


def library_closure(root: Path, programs: tuple[str, ...]) -> dict[str, Path]:
    """``{soname: host path}`` of every library the programs load, read by ``ldd`` in the chroot.

    Symbolic links are resolved to the file; the loader itself is included under its soname."""
    out = subprocess.run(["chroot", str(root), "ldd", *programs], check=True,
                         capture_output=True, text=True).stdout
    libs: dict[str, Path] = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+) \(", line)
        if m:
            libs[m.group(1)] = (root / m.group(2).lstrip("/")).resolve()
        elif "not found" in line:
            raise realservers.RealServerError(f"ldd in the chroot: {line.strip()}")
        elif LOADER in line:
            libs[LOADER] = (root / "lib64" / LOADER).resolve()
    if LOADER not in libs:
        raise realservers.RealServerError("ldd did not name the dynamic loader")
    return libs


def _add_file(tar: tarfile.TarFile, src: Path, name: str, mode: int = 0o644) -> None:
    """Add *src* (a regular file) as *name* with fixed owner and time (a reproducible tar)."""
    info = tarfile.TarInfo(name)
    info.size = src.stat().st_size
    info.mode = mode
    info.mtime = 0
    with src.open("rb") as f:
        tar.addfile(info, f)


def _add_bytes(tar: tarfile.TarFile, data: bytes, name: str) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def build(out: Path, root: Path) -> dict:
    """Write the kit tar.xz to *out*; return its manifest (also stored as ``kit.json`` inside)."""
    version = realservers.chroot_mysqld_version(root)
    libs = library_closure(root, PROGRAMS)
    share = root / "usr/share/mysql"
    manifest = {"mysqld": version, "programs": [Path(p).name for p in PROGRAMS],
                "libraries": sorted(libs), "loader": f"lib/{LOADER}",
                "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with lzma.open(tmp, "wb", preset=9) as xz, tarfile.open(fileobj=xz, mode="w") as tar:
        for prog in PROGRAMS:
            _add_file(tar, root / prog.lstrip("/"), f"{TOP}/bin/{Path(prog).name}", 0o755)
        for soname, path in sorted(libs.items()):
            _add_file(tar, path, f"{TOP}/lib/{soname}", 0o755)
        for sub in SHARE:
            for f in sorted((share / sub).rglob("*")):
                if f.is_file():
                    _add_file(tar, f, f"{TOP}/share/mysql/{f.relative_to(share)}")
        _add_bytes(tar, json.dumps(manifest, indent=1).encode() + b"\n", f"{TOP}/kit.json")
    tmp.replace(out)
    manifest["bytes"] = out.stat().st_size
    return manifest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    t0 = time.monotonic()
    manifest = build(args.out, realservers.chroot_root())
    print(f"{args.out}: mysqld {manifest['mysqld']}, {len(manifest['libraries'])} libraries, "
          f"{manifest['bytes'] / 2**20:.1f} MiB in {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
