"""Input resolution (lagadvisor.inputs): directories, index files, globs, .zst files, and that every
form gives analyze the same transactions as the files named one by one."""

import json
import os
import re
import shutil

import pytest
from typer.testing import CliRunner

from lagadvisor.cli import app
from lagadvisor.errors import ConfigError
from lagadvisor.inputs import resolve

from conftest import FIXTURES

ROT = FIXTURES / "single_rotation"
FILES = sorted(str(p) for p in ROT.glob("binlog.0*"))


def _analyze(*args):
    r = CliRunner().invoke(app, ["analyze", "--format", "json", *args])
    assert r.exit_code == 0, r.output
    # file names differ by folder and suffix only: compare without them
    return json.loads(re.sub(r'[^"@]*/(binlog\.\d+)(\.zst)?', r"\1", r.stdout))


@pytest.fixture
def logdir(tmp_path):
    for f in FILES:
        os.link(f, tmp_path / os.path.basename(f))
    return tmp_path


def test_directory_glob_and_index_list_the_same_files(logdir):
    names = [str(logdir / os.path.basename(f)) for f in FILES]
    assert resolve([str(logdir)]) == names
    assert resolve([str(logdir / "binlog.*")]) == names
    # an index names its files relative to its folder, in its order (here: the last two only)
    (logdir / "binlog.index").write_text("./binlog.000004\nbinlog.000005\n")
    assert resolve([str(logdir / "binlog.index")]) == names[3:]
    assert resolve([str(logdir)]) == names[3:]  # a directory with one index is read through it


def test_mixed_directory_and_repeats_are_refused(logdir):
    os.link(FILES[0], logdir / "relay-bin.000001")
    with pytest.raises(ConfigError, match="several logs"):
        resolve([str(logdir)])
    with pytest.raises(ConfigError, match="given twice"):
        resolve([str(logdir / "binlog.*"), FILES[0]])
    with pytest.raises(ConfigError, match="no file matches"):
        resolve([str(logdir / "nothing.*")])


def test_every_form_and_zst_give_analyze_the_same_result(logdir):
    zstandard = pytest.importorskip("zstandard")
    plain = _analyze(*FILES)
    assert _analyze(str(logdir)) == plain
    assert _analyze(str(logdir / "binlog.0*")) == plain
    zdir = logdir / "z"
    zdir.mkdir()
    for f in FILES:
        with open(f, "rb") as src, open(zdir / (os.path.basename(f) + ".zst"), "wb") as dst:
            dst.write(zstandard.ZstdCompressor().compress(src.read()))
    assert resolve([str(zdir)]) == [str(zdir / (os.path.basename(f) + ".zst")) for f in FILES]
    zst = _analyze(str(zdir))
    for doc in (zst, plain):  # "size" is the file's size on disk, compressed or not
        for f in doc["files"]:
            f.pop("size")
    assert zst == plain


def test_mixed_directory_is_one_line_exit_2(logdir):
    shutil.copy(FILES[0], logdir / "relay-bin.000001")
    r = CliRunner().invoke(app, ["analyze", str(logdir)])
    assert r.exit_code == 2
    assert "lagadvisor: error:" in r.output and "several logs" in r.output
