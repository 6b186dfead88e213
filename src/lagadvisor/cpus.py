"""The CPUs this process may run on: what ``--jobs 0`` and the fleet's local cluster size their
work by, and what calibrate assumes for a replica's cores when none are given.

``os.cpu_count()`` is the host's processors. A process pinned by ``taskset``/cpuset, or a
container with a CPU quota (Kubernetes ``limits.cpu``, ``docker --cpus``), may use fewer: 64
processes on a pod allowed 4 CPUs only take turns and multiply the memory. This counts the
affinity mask (``os.process_cpu_count`` from Python 3.13, ``sched_getaffinity`` before) and the
tightest CFS quota on the process's cgroup path, v2 (``cpu.max``) or v1
(``cpu.cfs_quota_us``/``cpu.cfs_period_us``), rounded up to whole CPUs.

Kept free of lagadvisor imports so every layer may use it (tests/test_layers.py: SHARED).
"""

from __future__ import annotations

import math
import os
from pathlib import Path


def usable_cpus(proc: str = "/proc/self", cgroup_root: str = "/sys/fs/cgroup") -> int:
    """The CPUs this process may use: its affinity, capped by its cgroups' CPU quota; at least 1.
    ``proc`` and ``cgroup_root`` point elsewhere in tests."""
    n = _affinity()
    quota = cgroup_cpu_quota(proc, cgroup_root)
    if quota is not None:
        n = min(n, quota)
    return max(1, n)


def _affinity() -> int:
    counter = getattr(os, "process_cpu_count", None)  # 3.13+: affinity, and -X cpu_count
    if counter is not None:
        return counter() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cgroup_cpu_quota(proc: str = "/proc/self", cgroup_root: str = "/sys/fs/cgroup") -> int | None:
    """Whole CPUs the tightest CFS quota on this process's cgroup path and its ancestors allows
    (``None``: no quota, or no cgroup file system to read). Read as the kernel documents them
    (Documentation/admin-guide/cgroup-v2.rst ``cpu.max``: "$MAX $PERIOD", ``max`` for none;
    cgroup-v1 ``cpu.cfs_quota_us``, -1 for none)."""
    try:
        lines = Path(proc, "cgroup").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    root = Path(cgroup_root)
    best: int | None = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # v2: one hierarchy, at the root or under unified/ (hybrid)
            bases = [root, root / "unified"]
            reader = _v2_quota
        elif "cpu" in controllers.split(","):
            bases = [root / controllers, *(root / c for c in controllers.split(",")), root / "cpu,cpuacct"]
            reader = _v1_quota
        else:
            continue
        for q in _along(bases, path, reader):
            best = q if best is None else min(best, q)
    return best


def _along(bases: list[Path], path: str, reader) -> list[int]:
    """Each quota from the process's own cgroup up to the hierarchy's root, in the first base
    that holds the path (a container sees its own cgroup mounted at the root: then the path
    names nothing there and the root's own files are its quota)."""
    rel = [p for p in path.strip().split("/") if p and p not in (".", "..")]
    for base in bases:
        if not base.is_dir():
            continue
        found = []
        here = base.joinpath(*rel)
        if not here.is_dir():
            here = base
        while True:
            q = reader(here)
            if q is not None:
                found.append(q)
            if here == base or base not in here.parents:
                break
            here = here.parent
        return found
    return []


def _v2_quota(d: Path) -> int | None:
    try:
        fields = (d / "cpu.max").read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(fields) != 2 or fields[0] == "max":
        return None
    return _whole(fields[0], fields[1])


def _v1_quota(d: Path) -> int | None:
    try:
        quota = (d / "cpu.cfs_quota_us").read_text(encoding="ascii").strip()
        period = (d / "cpu.cfs_period_us").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return _whole(quota, period)


def _whole(quota: str, period: str) -> int | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    if q <= 0 or p <= 0:
        return None
    return max(1, math.ceil(q / p))
