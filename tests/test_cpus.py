"""The CPUs a run may use (lagadvisor.cpus): the affinity mask, capped by the tightest cgroup CPU
quota on the process's path, v2 or v1, as the kernel lays the files out; ``--jobs 0`` and the
fleet's local cluster size their work by it."""

import os
import shutil
import subprocess
import sys

import pytest

from lagadvisor.cpus import cgroup_cpu_quota, usable_cpus


def _tree(tmp_path, cgroup_lines, files):
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text("".join(line + "\n" for line in cgroup_lines))
    root = tmp_path / "cg"
    for rel, text in files.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text + "\n")
    root.mkdir(exist_ok=True)
    return str(proc), str(root)


def test_v2_takes_the_tightest_quota_up_the_path_rounded_up(tmp_path):
    proc, root = _tree(tmp_path, ["0::/kubepods/pod1/ctr"], {
        "cpu.max": "max 100000",
        "kubepods/cpu.max": "max 100000",
        "kubepods/pod1/cpu.max": "250000 100000",      # 2.5 CPUs: 3 to run on
        "kubepods/pod1/ctr/cpu.max": "800000 100000",
    })
    assert cgroup_cpu_quota(proc, root) == 3


def test_v2_without_a_quota_is_none(tmp_path):
    proc, root = _tree(tmp_path, ["0::/user.slice"], {"user.slice/cpu.max": "max 100000"})
    assert cgroup_cpu_quota(proc, root) is None


def test_v2_in_a_container_reads_its_root(tmp_path):
    """A container mounts its own cgroup at the root: the path it is told names nothing there."""
    proc, root = _tree(tmp_path, ["0::/docker/0123abcd"], {"cpu.max": "200000 100000"})
    assert cgroup_cpu_quota(proc, root) == 2


def test_v1_cpu_controller_and_hybrid_v2_line(tmp_path):
    proc, root = _tree(tmp_path, ["12:memory:/docker/x", "4:cpu,cpuacct:/docker/x", "0::/"], {
        "cpu,cpuacct/docker/x/cpu.cfs_quota_us": "150000",
        "cpu,cpuacct/docker/x/cpu.cfs_period_us": "100000",
        "cpu,cpuacct/cpu.cfs_quota_us": "-1",
        "cpu,cpuacct/cpu.cfs_period_us": "100000",
        "unified/cpu.max": "max 100000",
    })
    assert cgroup_cpu_quota(proc, root) == 2


def test_a_quota_under_one_cpu_still_gives_one(tmp_path):
    proc, root = _tree(tmp_path, ["0::/small"], {"small/cpu.max": "20000 100000"})
    assert cgroup_cpu_quota(proc, root) == 1
    assert usable_cpus(proc, root) == 1


@pytest.mark.parametrize("text", ["", "garbage", "100000", "-5 100000", "abc 100000", "100000 0"])
def test_malformed_quota_files_are_no_quota(tmp_path, text):
    proc, root = _tree(tmp_path, ["0::/a"], {"a/cpu.max": text})
    assert cgroup_cpu_quota(proc, root) is None


def test_no_cgroup_file_system(tmp_path):
    assert cgroup_cpu_quota(str(tmp_path / "absent"), str(tmp_path / "nothing")) is None
    proc, _ = _tree(tmp_path, ["0::/a"], {})
    assert cgroup_cpu_quota(proc, str(tmp_path / "nothing")) is None


def test_the_quota_caps_the_affinity(tmp_path):
    proc, root = _tree(tmp_path, ["0::/"], {"cpu.max": "100000 100000"})
    assert usable_cpus(proc, root) == 1
    (tmp_path / "u").mkdir()
    proc, root = _tree(tmp_path / "u", ["0::/"], {"cpu.max": "max 100000"})
    assert usable_cpus(proc, root) == len(os.sched_getaffinity(0))


def test_this_machine_agrees_with_its_own_files():
    """Read for real: never more than the affinity mask, never less than one."""
    n = usable_cpus()
    assert 1 <= n <= len(os.sched_getaffinity(0))
    quota = cgroup_cpu_quota()
    allowed = len(os.sched_getaffinity(0))
    assert n == (min(allowed, quota) if quota is not None else allowed)


@pytest.mark.skipif(shutil.which("taskset") is None or len(os.sched_getaffinity(0)) < 2,
                    reason="needs taskset and two CPUs")
def test_a_pinned_process_counts_its_one_cpu():
    cpu = min(os.sched_getaffinity(0))
    out = subprocess.run(["taskset", "-c", str(cpu), sys.executable, "-c",
                          "from lagadvisor.cpus import usable_cpus; print(usable_cpus())"],
                         capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "1"
