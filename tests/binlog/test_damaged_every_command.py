"""Damaged input under every command, native core and pure-Python reference (issues 13, 17, 20).

Every command (analyze, export, graph, simulate, advise, calibrate) runs as a subprocess over the
shapes that once hung or crashed, rebuilt from the fixtures (``fixtures/damaged``, made by
``scripts/make_damaged.py``: empty row images, a 1 GiB event length, damaged gzip, a bad query
event), truncated fixtures, inputs that are not files (a directory, a FIFO), a valid binlog under
a non-UTF-8 name, and every input the fuzzer saved (``tests/fuzz_regressions``). The optional
corpus layer adds the public corpus's own hangs, bad inputs and files broken on purpose. Each run must end within 10 s with exit 0 and a
warning on stderr, or exit 2 and exactly one line naming the file; never a traceback; peak RSS
under 200 MB (``os.wait4``: the child's own, its forked children included, measured from a small
launcher, conftest.PEAK_RSS_LAUNCHER, not charged the test process's own size).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import json

import pytest

from conftest import CORPUS, DAMAGED, FIXTURES, ROOT, need_native, run_lagadvisor

TIMEOUT_S = 10.0
RSS_LIMIT_KB = 200 * 1024

COMMANDS = {
    "analyze": ["analyze", "--no-progress"],
    "export": ["export", "--format", "jsonl"],
    "graph": ["graph"],
    "simulate": ["simulate", "--workers", "1,4"],
    "advise": ["advise", "--no-progress"],
    "calibrate": ["calibrate"],
}

#: Corpus files broken on purpose (tests/binlog/test_corpus.py pins where they fail).
BROKEN_CORPUS = ["mysql_common/corrupt-relay-bin.000624", "mysql_common/bug40482-bin.000001",
                 "mysql_common/ver_5_1-wl2325_r.001", "mysql_common/ver_5_1-wl2325_s.001",
                 "mysql_common/binlog_truncated_event.000001",
                 "mysql_common/binlog_truncated_prev_gtid_event.000001"]
REGRESSIONS = ROOT / "tests" / "fuzz_regressions"

#: What each generated input must give (None: exit 0 + warning or exit 2 + one line).
GENERATED = ("truncated-body", "truncated-header", "truncated-gz", "directory", "fifo", "non-utf8-name")


def _shared(sub: str) -> list[str]:
    d = CORPUS / sub
    if not d.is_dir():
        return []
    return [f"{sub}/{p.name}" for p in sorted(d.iterdir()) if p.is_file() and p.suffix not in (".md", ".json")]


HANGS = _shared("hangs")
BAD_INPUTS = _shared("bad-inputs")
#: What each derived damaged binlog must give (``fixtures/damaged/MANIFEST.json``).
DERIVED = json.loads((DAMAGED / "MANIFEST.json").read_text(encoding="utf-8"))["binlogs"]
SAVED = sorted(p.name for p in REGRESSIONS.iterdir() if p.is_file() and p.suffix != ".md") \
    if REGRESSIONS.is_dir() else []
CORPUS_INPUTS = HANGS + BAD_INPUTS + BROKEN_CORPUS if CORPUS.is_dir() else ["corpus-absent"]
INPUTS = ([("damaged", n) for n in sorted(DERIVED)] + [("generated", g) for g in GENERATED]
          + [("saved", n) for n in SAVED])
PARAMS = ([pytest.param(src, n, id=n.rsplit("/", 1)[-1]) for src, n in INPUTS]
          + [pytest.param("corpus", n, id="corpus-" + n.rsplit("/", 1)[-1], marks=pytest.mark.corpus)
             for n in CORPUS_INPUTS])


def _native_available() -> bool:
    from lagadvisor import native

    return native.load() is not None


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """The generated inputs, made once."""
    d = tmp_path_factory.mktemp("damaged")
    src = (FIXTURES / "single_full" / "binlog.000001").read_bytes()
    # single_full's events from offset 4: cut 7 bytes into the body of the event that spans
    # offset 100,000, and 7 bytes into the header of the one after it.
    pos = 4
    while True:
        size = int.from_bytes(src[pos + 9:pos + 13], "little")
        if pos + size > 100_000:
            break
        pos += size
    out = {"truncated-body": d / "truncated-body.000001", "truncated-header": d / "truncated-header.000001",
           "truncated-gz": d / "truncated.000001.gz", "directory": d / "a-directory",
           "fifo": d / "a-fifo", "non-utf8-name": Path(os.fsdecode(bytes(d) + b"/\xff\xfe.000001"))}
    out["truncated-body"].write_bytes(src[:pos + 19 + 7])
    out["truncated-header"].write_bytes(src[:pos + 7])
    import gzip

    out["truncated-gz"].write_bytes(gzip.compress(src[:pos + 19 + 7], mtime=0))
    out["directory"].mkdir()
    os.mkfifo(out["fifo"])
    shutil.copyfile(FIXTURES / "single_full" / "binlog.000001", out["non-utf8-name"])
    return out


def run_cli(args: list[str], native: bool) -> tuple[int, str, int]:
    """``python -m lagadvisor ARGS``: (exit code, stderr, peak RSS in kB); fails the test when it
    does not end within :data:`TIMEOUT_S`."""
    code, _out, err, peak = run_lagadvisor(args, native=native, timeout=TIMEOUT_S)
    return code, err, peak


#: Subprocesses run at once (each is one process; the runs are independent).
JOBS = int(os.environ.get("LAGADVISOR_TEST_JOBS", min(4, os.cpu_count() or 1)))


def _path(source: str, name: str, made: dict[str, Path]) -> Path:
    if source == "corpus":
        return CORPUS / name
    if source == "saved":
        return REGRESSIONS / name
    if source == "damaged":
        return DAMAGED / name
    return made[name]


@pytest.fixture(scope="module")
def runs(made) -> dict:
    """Every (input, command, mode) run, :data:`JOBS` at a time: ``{key: (code, stderr, rss)}``
    (a run that does not end in time is ``None``)."""
    from concurrent.futures import ThreadPoolExecutor

    todo = {}
    for source, name in INPUTS + [("corpus", n) for n in CORPUS_INPUTS]:
        path = _path(source, name, made)
        if source == "corpus" and not path.exists():
            continue
        for command in COMMANDS:
            for native in (True, False):
                todo[(name, command, native)] = [*COMMANDS[command], str(path)]

    def one(item):
        key, args = item
        try:
            return key, run_cli(args, key[2])
        except pytest.fail.Exception:
            return key, None

    with ThreadPoolExecutor(JOBS) as pool:
        return dict(pool.map(one, todo.items()))


def check(args: list[str], path: str, native: bool, damaged: bool = True, result=None) -> tuple[int, list[str]]:
    """The contract every command keeps on any input; returns (exit code, stderr lines). A
    ``damaged`` input that exits 0 must say so in a warning."""
    if result is None:
        result = run_cli(args, native)
    code, stderr, rss_kb = result
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert "Traceback" not in stderr, stderr
    assert rss_kb < RSS_LIMIT_KB, f"peak RSS {rss_kb // 1024} MB"
    assert code in (0, 2), (code, stderr)
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("lagadvisor: error: "), stderr
        shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        if args[0] != "calibrate" or "commit gaps" not in lines[0]:  # calibrate: read, too few gaps
            # stderr writes a name's undecodable bytes as Python's backslashreplace does (\udcff)
            escaped = path.encode("utf-8", "backslashreplace").decode("ascii")
            assert shown in lines[0] or path in lines[0] or escaped in lines[0], lines[0]
    elif damaged:
        assert any(ln.startswith("lagadvisor: warning: ") for ln in lines), stderr
    return code, lines


MODES = [pytest.param(True, id="native"), pytest.param(False, id="reference")]


@pytest.mark.parametrize("native", MODES)
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("source,name", PARAMS)
def test_every_command_ends_with_one_line_or_a_warning(source, name, command, native, made, runs):
    if native and not _native_available():
        if os.environ.get("LAGADVISOR_REQUIRE_NATIVE") == "1":
            pytest.fail("lagadvisor._native is required (LAGADVISOR_REQUIRE_NATIVE=1)")
        pytest.skip("native core not built")
    path = _path(source, name, made)
    p = str(path)
    result = runs[(name, command, native)]
    if result is None:
        pytest.fail(f"`lagadvisor {' '.join([*COMMANDS[command], p])}` did not end within {TIMEOUT_S:.0f} s")
    code, lines = check([*COMMANDS[command], p], p, native, damaged=source != "saved" and name != "non-utf8-name",
                        result=result)
    if source == "damaged":
        want = DERIVED[name]["expect"]
        assert code == want["exit"], lines
        assert all(w in lines[0] for w in want["words"]), (want["words"], lines)
        if "offset" in DERIVED[name]:
            assert f"offset {DERIVED[name]['offset']}" in lines[0], lines
    name = name.rsplit("/", 1)[-1] if source != "corpus" or not name.startswith(("hangs/", "bad-inputs/")) else name
    if source == "corpus" and name.startswith("hangs/"):
        # The three inputs that looped forever: the rows event whose row image is empty.
        assert code == 2 and "consumes no bytes" in lines[0] and "offset" in lines[0], lines
    if name.endswith(".gz") and source == "corpus" and "bad-inputs" in name:
        assert code == 2 and "compressed offset" in lines[0] and "uncompressed offset" in lines[0], lines
    if name == "bad-inputs/event-length-1GiB.binlog":
        assert code == 2 and "event length 1073741824" in lines[0], lines
    if name in ("truncated-body", "truncated-header", "binlog_truncated_event.000001") and command != "calibrate":
        assert code == 0 and any("ends inside" in ln for ln in lines), lines
    if name in ("directory", "fifo"):
        assert code == 2 and ("directory" in lines[0] or "regular file" in lines[0]), lines
    if name == "non-utf8-name" and command == "calibrate":
        # a valid source binlog: calibrate refuses it as not a replica's, naming the file
        assert code == 2 and "not a replica's binlog" in lines[0], lines
    elif name == "non-utf8-name":
        assert code == 0 and not any("warning" in ln for ln in lines), lines


@pytest.mark.parametrize("native", MODES)
def test_jobs_with_a_1gib_event_length_stays_small(native):
    """``analyze --jobs 2``: the files are read on forked processes; the event length of
    0x40000000 in a 4 KB file still sizes no allocation (peak RSS of the whole tree)."""
    if native:
        need_native()
    bad = DAMAGED / "event-length-1GiB.binlog"
    good = FIXTURES / "single_minimal_image" / "binlog.000001"
    code, lines = check(["analyze", "--no-progress", "--jobs", "2", str(good), str(bad)], str(bad), native)
    assert code == 2 and "event length 1073741824" in lines[0]
