"""Detection and the read share one open of each file (``native/src/reader``: HANDOFF): the
read takes the handle the detection sample kept, only in the process that kept it and only while
the path still names that file."""

from __future__ import annotations

import os
import shutil
from multiprocessing import get_context

import pytest

from conftest import FIXTURES
from lagadvisor import native
from lagadvisor.depgraph.pipeline import ClockOptions, detect_written_policy
from lagadvisor.analysis.analyze import analyze

pytestmark = pytest.mark.skipif(native.load() is None, reason="the native core is not built")

A = FIXTURES / "single_full" / "binlog.000001"
B = FIXTURES / "sysbench_oltp_write_only" / "binlog.000001"


def transactions(path: str) -> int:
    return analyze([path], ClockOptions()).total.transactions


def test_a_file_replaced_after_detection_is_read_anew(tmp_path):
    path = str(tmp_path / "binlog.000001")
    shutil.copy(A, path)
    detect_written_policy([path])            # keeps a handle on A's copy
    os.replace(shutil.copy(B, tmp_path / "other"), path)
    assert transactions(path) == transactions(str(B))


def _child(path: str) -> int:
    return transactions(path)


def test_a_forked_worker_opens_its_own(tmp_path):
    path = str(tmp_path / "binlog.000001")
    shutil.copy(A, path)
    want = transactions(str(A))
    detect_written_policy([path])            # the parent keeps a handle
    with get_context("fork").Pool(1) as pool:
        assert pool.apply(_child, (path,)) == want
    assert transactions(path) == want        # the parent's handle, from the start


def test_a_kept_handle_is_read_from_the_start(tmp_path):
    path = str(tmp_path / "binlog.000001")
    shutil.copy(A, path)
    want = transactions(path)
    for _ in range(2):
        detect_written_policy([path])
        assert transactions(path) == want
