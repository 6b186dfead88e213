"""Detection and the read share one open of each file: the detection keeps what it opened in
an ``OpenFiles`` (``depgraph.pipeline``), which the read's plan carries to the read; the read
takes a handle only in the process that opened it and only while the path still names that
file, and reads it from the start."""

from __future__ import annotations

import os
import pickle
import shutil
from multiprocessing import get_context

import pytest

from conftest import FIXTURES, skip_without_native
from lagadvisor import native
from lagadvisor.analysis.analyze import analyze
from lagadvisor.depgraph.pipeline import ClockOptions, OpenFiles
from lagadvisor.depgraph.read import detect_written_policy

pytestmark = skip_without_native()

A = FIXTURES / "single_full" / "binlog.000001"
B = FIXTURES / "sysbench_oltp_write_only" / "binlog.000001"


def transactions(path: str, opened: OpenFiles | None = None) -> int:
    written = detect_written_policy([path]) if opened is None else None
    return analyze([path], ClockOptions(written=written, opened=opened)).total.transactions


def _detected(path: str) -> OpenFiles:
    files = OpenFiles()
    detect_written_policy([path], files=files)
    assert files.fd(path) is not None
    return files


def test_a_file_replaced_after_detection_is_read_anew(tmp_path):
    path = str(tmp_path / "binlog.000001")
    shutil.copy(A, path)
    files = _detected(path)                  # holds A's copy open
    os.replace(shutil.copy(B, tmp_path / "other"), path)
    assert transactions(path, files) == transactions(str(B))


def _child(args) -> int:
    path, files = args
    return transactions(path, files)


def test_a_forked_worker_opens_its_own(tmp_path):
    path = str(tmp_path / "binlog.000001")
    shutil.copy(A, path)
    want = transactions(str(A))
    files = _detected(path)                  # the parent holds the file open
    assert pickle.loads(pickle.dumps(files)).take(path) is None  # a pickled one holds nothing
    with get_context("fork").Pool(1) as pool:
        assert pool.apply(_child, ((path, files),)) == want
    assert transactions(path, files) == want  # the parent's handle, from the start


def test_a_kept_handle_is_read_from_the_start(tmp_path):
    path = str(tmp_path / "binlog.000001")
    shutil.copy(A, path)
    want = transactions(path)
    for _ in range(2):
        files = _detected(path)
        assert transactions(path, files) == want
        assert files.take(path) is None      # the read took it
