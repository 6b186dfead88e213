"""Input resolution (lagadvisor.inputs): directories, index files, globs, .zst files, and that every
form gives analyze the same transactions as the files named one by one."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lagadvisor.cli import app
from lagadvisor.errors import ConfigError
from lagadvisor.inputs import distinct_files, resolve

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


def test_numbers_past_six_digits_sort_as_numbers(tmp_path):
    """The server numbers binlog.999999 -> binlog.1000000: by name the seven-digit files came first
    and the run was read out of order (its lag figures wrong)."""
    for n in (999998, 999999, 1000000, 1000001):
        (tmp_path / f"binlog.{n}").write_bytes(b"")
    want = [str(tmp_path / f"binlog.{n}") for n in (999998, 999999, 1000000, 1000001)]
    assert resolve([str(tmp_path)]) == want
    assert resolve([str(tmp_path / "binlog.*")]) == want


def test_a_log_kept_plain_and_compressed_is_refused(logdir):
    shutil.copy(FILES[0], str(logdir / os.path.basename(FILES[0])) + ".gz")
    with pytest.raises(ConfigError, match="the same log twice"):
        resolve([str(logdir)])


def test_an_empty_index_names_no_files(logdir):
    """An empty index read as no files at all gave an empty report and exit 0."""
    (logdir / "binlog.index").write_text("\n")
    with pytest.raises(ConfigError, match="names no binlog files"):
        resolve([str(logdir)])


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to nobody (root lists any directory)")
def test_an_unreadable_directory_is_one_line(tmp_path):
    """os.listdir's PermissionError was a traceback in every command: resolved as nobody, in a
    forked child (no exec: the virtualenv need not be nobody's)."""
    import tempfile

    top = Path(tempfile.mkdtemp(dir="/tmp"))   # pytest's own folder is root's alone: nobody stops there
    d = top / "logs"
    d.mkdir()
    shutil.copy(FILES[0], d / "binlog.000001")
    d.chmod(0o311)   # others may enter, not list
    top.chmod(0o755)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgid(65534)
            os.setuid(65534)
            try:
                resolve([str(d)])
                said = "no error"
            except ConfigError as err:
                said = str(err)
            except BaseException as err:   # what the test must not see
                said = repr(err)
            os.write(w, said.encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        said = f.read().decode()
    os.waitpid(pid, 0)
    shutil.rmtree(top)
    assert said == f"{d}: cannot list the directory: Permission denied"


@pytest.mark.parametrize("damage", ["garbage", "flipped"])
def test_a_damaged_zst_is_one_line(tmp_path, damage):
    """zstandard's ZstdError was a traceback; it is a CompressedFileError naming both offsets."""
    zstandard = pytest.importorskip("zstandard")
    data = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(open(FILES[0], "rb").read()))
    if damage == "garbage":
        data[0:4] = b"\x00\x01\x02\x03"          # not a zstd frame's magic
    else:
        data[-2] ^= 0xFF                        # the frame's content checksum
    bad = tmp_path / "binlog.000001.zst"
    bad.write_bytes(bytes(data))
    for env in ({}, {"LAGADVISOR_PUREPYTHON": "1"}):
        r = CliRunner().invoke(app, ["analyze", "--no-progress", str(bad)], env=env)
        assert r.exit_code == 2, r.output
        assert r.stderr.startswith(f"lagadvisor: error: {bad}: damaged zstd data near compressed offset "), r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


# -- one binlog under two names ------------------------------------------------------------------

def test_a_copy_under_another_name_is_read_once(tmp_path):
    """`simulate dir1/binlog.000005 backup/binlog.000005` read the one binlog twice: every figure
    doubled, and only the generic chain warning said anything."""
    one, backup = tmp_path / "dir1", tmp_path / "backup"
    one.mkdir()
    backup.mkdir()
    a, b = one / "binlog.000005", backup / "binlog.000005"
    shutil.copy(FILES[4], a)
    shutil.copy(FILES[4], b)
    for command in (["simulate", "--workers", "1,4", "--format", "json"], ["analyze", "--format", "json"]):
        alone = CliRunner().invoke(app, [*command, str(a)])
        both = CliRunner().invoke(app, [*command, str(a), str(b)])
        assert both.exit_code == 0, both.output
        assert both.stdout == alone.stdout
        said = f"lagadvisor: warning: {b} is the same binlog as {a}: read once"
        assert both.stderr.splitlines() == [said, *alone.stderr.splitlines()]


def test_a_glob_matching_a_backup_copy_keeps_the_first(logdir):
    copy = logdir / "binlog.000005.bak-copy"
    shutil.copy(FILES[4], copy)
    names = resolve([str(logdir / "binlog.000005*")])
    assert names == [str(logdir / "binlog.000005"), str(copy)]
    assert distinct_files(names) == ([names[0]], [f"{copy} is the same binlog as {names[0]}: read once"])


def test_the_same_file_through_a_hard_link_or_a_symlink_stays_refused(tmp_path):
    """One file reached twice is a mistake in the arguments (refused since issue 20), not a copy."""
    shutil.copy(FILES[4], tmp_path / "binlog.000005")
    os.link(tmp_path / "binlog.000005", tmp_path / "hard.000005")
    (tmp_path / "soft.000005").symlink_to(tmp_path / "binlog.000005")
    for other in ("hard.000005", "soft.000005"):
        with pytest.raises(ConfigError, match="given twice") as err:
            resolve([str(tmp_path / "binlog.000005"), str(tmp_path / other)])
        assert str(tmp_path / other) in str(err.value) and str(tmp_path / "binlog.000005") in str(err.value)


def test_different_binlogs_of_one_size_are_both_read(tmp_path):
    """single_full and single_history50 are two servers' binlogs of 712,179 bytes each."""
    a, b = (str(FIXTURES / d / "binlog.000001") for d in ("single_full", "single_history50"))
    assert os.path.getsize(a) == os.path.getsize(b) and open(a, "rb").read() != open(b, "rb").read()
    assert distinct_files([a, b]) == ([a, b], [])
    # one byte changed within the first 64 KiB, or within the last, is another binlog
    data = bytearray(open(a, "rb").read())
    for at in (100, len(data) - 100):
        changed = bytearray(data)
        changed[at] ^= 0xFF
        (tmp_path / "binlog.000001").write_bytes(bytes(changed))
        assert distinct_files([a, str(tmp_path / "binlog.000001")])[1] == []
    # files holding no event, and missing ones, are left to the reader
    (tmp_path / "x.000001").write_bytes(b"\xfebin")
    (tmp_path / "x.000002").write_bytes(b"\xfebin")
    gone = str(tmp_path / "missing.000001")
    assert distinct_files([str(tmp_path / "x.000001"), str(tmp_path / "x.000002"), gone, gone])[1] == []


def test_benchmarks_may_feed_one_binlog_many_times(tmp_path, monkeypatch):
    """bench/throughput.py --jobs (hard links of one file) and bench/scale.py (copies) read one
    binlog many times on purpose: LAGADVISOR_REPEAT_FILES=1 reads every file given, and the
    transaction count grows with the repeats."""
    a = tmp_path / "binlog.000005"
    shutil.copy(FILES[4], a)
    shutil.copy(FILES[4], tmp_path / "copy.000005")
    os.link(a, tmp_path / "hard.000005")
    names = [str(a), str(tmp_path / "copy.000005"), str(tmp_path / "hard.000005")]

    def transactions() -> int:
        r = CliRunner().invoke(app, ["analyze", "--format", "json", *names])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)["total"]["transactions"]

    with pytest.raises(ConfigError, match="given twice"):
        resolve(names)
    monkeypatch.setenv("LAGADVISOR_REPEAT_FILES", "1")
    assert resolve(names) == names and distinct_files(names) == (names, [])
    once = CliRunner().invoke(app, ["analyze", "--format", "json", str(a)])
    assert transactions() == 3 * json.loads(once.stdout)["total"]["transactions"] > 0
