"""Shared test fixtures: paths of the bundled fixtures, the damaged inputs derived from them and
the optional public corpus, and the gate for tests that need the reference readers provisioned
by ``scripts/realservers.py provision``.

The optional corpus layer: tests that read the public binlogs of other projects' suites (never
committed here) are marked ``corpus``. Where the corpus is absent (a bare clone) they skip, all
with the one reason :data:`CORPUS_ABSENT`; under ``LAGADVISOR_REQUIRE_CORPUS=1`` (CI's corpus
run) they fail instead.

When ``LAGADVISOR_REQUIRE_SERVERS=1`` (set by the test command and CI), a missing reference
reader or server fails the test instead of skipping it: a skipped oracle test proves nothing.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
#: Inputs derived from the fixtures by ``scripts/make_damaged.py`` (committed, always here).
DAMAGED = FIXTURES / "damaged"
#: The optional public corpus: ``$LAGADVISOR_CORPUS``, else the shared folder beside the checkout.
#: The one place that says where it is (scripts/fuzz.py takes it from the test that runs it).
CORPUS = Path(os.environ.get("LAGADVISOR_CORPUS") or ROOT / "../shared/corpus")
CORPUS_ABSENT = f"optional public corpus not here ({CORPUS}; set LAGADVISOR_CORPUS): see README, Tests"
REQUIRE_CORPUS = os.environ.get("LAGADVISOR_REQUIRE_CORPUS") == "1"
sys.path.insert(0, str(Path(__file__).resolve().parent))

REQUIRE = os.environ.get("LAGADVISOR_REQUIRE_SERVERS") == "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "corpus: reads the optional public corpus (skips where it is absent)")


def pytest_collection_modifyitems(config, items):
    """The corpus layer's one gate: skip (or, under CI's corpus run, fail) its tests together."""
    if CORPUS.is_dir():
        return
    layer = [item for item in items if item.get_closest_marker("corpus") is not None]
    if layer and REQUIRE_CORPUS:
        raise pytest.UsageError(f"LAGADVISOR_REQUIRE_CORPUS=1 but the {CORPUS_ABSENT}")
    for item in layer:
        item.add_marker(pytest.mark.skip(reason=CORPUS_ABSENT))


def corpus_params(items, ids=None) -> list:
    """``items`` as parameters of the corpus layer; one placeholder where the corpus is absent
    (so the test skips with :data:`CORPUS_ABSENT`, not pytest's 'empty parameter set')."""
    if not items:
        return [pytest.param(None, id="corpus-absent", marks=pytest.mark.corpus)]
    return [pytest.param(x, id=None if ids is None else ids(x), marks=pytest.mark.corpus) for x in items]


def need(available: bool, what: str) -> None:
    """Skip (or, under the test command, fail) when ``what`` is not provisioned."""
    if available:
        return
    msg = f"{what} is not provisioned: run `python3 scripts/realservers.py provision`"
    if REQUIRE:
        pytest.fail(msg)
    pytest.skip(msg)


REQUIRE_NATIVE = os.environ.get("LAGADVISOR_REQUIRE_NATIVE") == "1"


def native_missing(attr: str | None = None) -> bool:
    """Whether the native core (or its function ``attr``) is missing here."""
    from lagadvisor import native

    mod = native.load()
    return mod is None or (attr is not None and not hasattr(mod, attr))


def skip_without_native(attr: str | None = None):
    """The mark of a test of the native core: it skips where the core (or ``attr``) is not built,
    but under ``LAGADVISOR_REQUIRE_NATIVE=1`` (the test command) it runs, and fails without it."""
    return pytest.mark.skipif(native_missing(attr) and not REQUIRE_NATIVE,
                              reason=f"native core{f' function {attr}' if attr else ''} not built")


def need_native(attr: str | None = None) -> None:
    """Inside a test: skip without the native core (or ``attr``), fail under ``LAGADVISOR_REQUIRE_NATIVE=1``."""
    if native_missing(attr):
        what = f"the native core{f' function {attr}' if attr else ''}"
        if REQUIRE_NATIVE:
            pytest.fail(f"{what} is required (LAGADVISOR_REQUIRE_NATIVE=1)", pytrace=False)
        pytest.skip(f"{what} not built")


def server_name(base: str) -> str:
    """A name for a server a test starts, unique to this test process: two test runs at once
    (helpers, a developer next to CI) must not share a data directory in the chroot."""
    return f"{base}-{os.getpid()}"


@contextlib.contextmanager
def source_and_replica(tag: str, common: list[str], source_options: list[str], replica_options: list[str]):
    """A MySQL 9.x source and replica on loopback, fresh, with the replica pointed at the source
    (GTID auto-positioning) but not started; both are stopped and removed afterwards."""
    import oracle

    rs = oracle.realservers
    src = rs.MySQLServer(server_name(f"lagadvisor-test-{tag}-src"), free_port(), [*source_options, *common],
                         fresh=True)
    rep = rs.MySQLServer(server_name(f"lagadvisor-test-{tag}-rep"), free_port(),
                         [*replica_options, *common, "--skip-replica-start"], fresh=True)
    src.start()
    rep.start()
    try:
        rep.sql(f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={src.port}, "
                "SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1")
        yield src, rep
    finally:
        rep.stop()
        src.stop()
        rep.remove()
        src.remove()


@contextlib.contextmanager
def written_binlog(tag: str, statements: list[str], folder: Path):
    """The binlog a real MySQL 9.x (GTIDs, ``binlog_row_metadata=FULL``) wrote for ``statements``,
    run with autocommit between two ``FLUSH BINARY LOGS`` and copied into ``folder``: yields
    (its path, the running server); the server is stopped and removed afterwards."""
    import shutil

    import mysql.connector

    import oracle

    need(oracle.have_mysqlbinlog(), "MySQL 9.x chroot")
    srv = oracle.realservers.MySQLServer(server_name(f"lagadvisor-test-{tag}"), free_port(), [
        "--server-id=1", "--log-bin=binlog", "--gtid-mode=ON", "--enforce-gtid-consistency=ON",
        "--binlog-row-metadata=FULL"], fresh=True)
    srv.start()
    try:
        conn = mysql.connector.connect(host="127.0.0.1", port=srv.port, user="root", password="", autocommit=True)
        cur = conn.cursor()
        for stmt in ["FLUSH BINARY LOGS", *statements, "FLUSH BINARY LOGS"]:
            cur.execute(stmt)
        cur.close()
        conn.close()
        written = srv.binlog_files()[-2]
        out = folder / written.name
        shutil.copy(written, out)
        yield out, srv
    finally:
        srv.stop()
        srv.remove()


def both_facts(path) -> tuple[list, list]:
    """One binlog's facts by the reference and by the native core (which must not give it back)."""
    from lagadvisor.depgraph.pipeline import ClockOptions
    from lagadvisor.depgraph.read import prepare
    from lagadvisor.sim.facts import native_facts, reference_facts

    opts = ClockOptions()
    ref = reference_facts([str(path)], prepare([str(path)], opts), opts)
    nat = native_facts([str(path)], opts, prepare([str(path)], opts))
    assert nat is not None, "the native core gave the run back"
    return ref, nat


def one_worker_catch_up_s(path, *extra: str) -> float:
    """``lagadvisor simulate --workers 1 --policy recorded --catch-up --relaxed`` of one binlog (a real
    subprocess; ``extra`` options before it): its apply seconds."""
    import json
    import subprocess

    r = subprocess.run([sys.executable, "-m", "lagadvisor", "simulate", "--workers", "1", "--policy", "recorded",
                        "--catch-up", "--relaxed", "--format", "json", *extra, str(path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["results"][0]["apply_seconds"]


def free_port() -> int:
    """A loopback port nothing listens on now, for a server a test starts."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: Corpus folders of damaged inputs found by fuzzing (no reference reading to compare with):
#: they are exercised by the bad-input tests, not by the reference-reader differential tests.
DAMAGED_DIRS = ("hangs", "bad-inputs")

#: ``python -c PEAK_RSS_LAUNCHER FD ARGS...`` runs ``python ARGS...`` as its child and writes the
#: child's peak RSS (KB, ``os.wait4``: its forked children included) to the descriptor FD, exiting
#: with its code. The peak of a process forked from pytest starts at pytest's own resident size
#: (the copied address space counts, and exec keeps the peak), so a command run straight from a
#: large pytest process was charged pytest's memory; a child forked from this small launcher
#: starts at the launcher's size.
PEAK_RSS_LAUNCHER = (
    "import os, sys\npid = os.fork()\nif pid == 0:\n    os.execv(sys.executable, [sys.executable, *sys.argv[2:]])\n"
    "_, status, usage = os.wait4(pid, 0)\nos.write(int(sys.argv[1]), str(usage.ru_maxrss).encode())\n"
    "code = os.waitstatus_to_exitcode(status)\nos._exit(code if code >= 0 else 128 - code)\n")


def run_lagadvisor(args, *, native: bool = True, timeout: float) -> tuple[int, str, str, int]:
    """``python -m lagadvisor ARGS`` (``COLUMNS=100``; ``native`` False: the pure-Python reference)
    through :data:`PEAK_RSS_LAUNCHER`: (exit code, stdout, stderr, peak RSS in KB). Fails the test
    when it does not end within ``timeout`` seconds (its whole process group killed)."""
    import signal
    import subprocess
    import tempfile
    import time

    env = dict(os.environ, COLUMNS="100")
    env.pop("LAGADVISOR_PUREPYTHON", None)
    if not native:
        env["LAGADVISOR_PUREPYTHON"] = "1"
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as peak:
        p = subprocess.Popen([sys.executable, "-c", PEAK_RSS_LAUNCHER, str(peak.fileno()), "-m", "lagadvisor", *args],
                             stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, start_new_session=True,
                             pass_fds=(peak.fileno(),))
        deadline = time.monotonic() + timeout
        while True:
            pid, status, _ = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(p.pid, signal.SIGKILL)
                os.wait4(p.pid, 0)
                pytest.fail(f"`lagadvisor {' '.join(args)}` did not end within {timeout:.0f} s")
            time.sleep(0.01)
        for f in (out, err, peak):
            f.seek(0)
        return (os.waitstatus_to_exitcode(status), out.read().decode("utf-8", "replace"),
                err.read().decode("utf-8", "replace"), int(peak.read() or 0))


def corpus_files() -> list[Path]:
    """Real binlogs of the shared corpus (not the damaged inputs of :data:`DAMAGED_DIRS`)."""
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix not in (".md", ".sql", ".json")
                  and p.relative_to(CORPUS).parts[0] not in DAMAGED_DIRS)


def damaged_corpus_files() -> list[Path]:
    """The damaged inputs of the shared corpus (binlogs, gzip files and cost models)."""
    return sorted(p for d in DAMAGED_DIRS if (CORPUS / d).is_dir()
                  for p in (CORPUS / d).iterdir() if p.is_file() and p.suffix != ".md")


def fixture_dirs() -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir() and (p / "reference.tsv").exists())


@functools.lru_cache(maxsize=None)
def fixture_facts(name: str) -> list:
    """A bundled fixture's simulation facts (``sim.build.TrxFacts``), read once per test process:
    the clocks re-derived with the default options."""
    from lagadvisor.commands.common import clock_options
    from lagadvisor.commands.options import ClockArgs
    from lagadvisor.depgraph.read import prepare, run_clocks
    from lagadvisor.sim.run import facts_of

    d = FIXTURES / name
    files = sorted(str(p) for p in d.iterdir() if p.name.split(".")[-1].isdigit())
    opts = clock_options(ClockArgs())
    runp = prepare(files, opts)
    index = {f: i for i, f in enumerate(files)}
    return [facts_of(t, c, index.get(t.file, 0)) for t, _ws, c in run_clocks(files, runp, opts)]


def fixture_context(name: str):
    """``advise.context.gather`` on a bundled fixture's binlogs, default clock options and the
    built-in cost model: what ``advise`` works on (spilled where ``LAGADVISOR_SPILL_TRANSACTIONS``
    is set small)."""
    from lagadvisor.advise.context import gather
    from lagadvisor.depgraph.pipeline import ClockOptions
    from lagadvisor.sim.model import CostModel

    (d,) = [d for d in fixture_dirs() if d.name == name]
    return gather(sorted(str(p) for p in d.iterdir() if p.suffix[1:].isdigit()), ClockOptions(), CostModel(), None)


def run_advise(*args: str):
    """``lagadvisor advise ARGS`` as a user runs it: a real subprocess."""
    import subprocess

    return subprocess.run([sys.executable, "-m", "lagadvisor", "advise", *args], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="session")
def full_json() -> tuple[str, dict]:
    """``advise --format json`` on the single_full fixture (stdout, parsed): one run for every
    test that reads it."""
    import json

    r = run_advise(str(FIXTURES / "single_full" / "binlog.000001"), "--format", "json")
    assert r.returncode == 0, r.stderr
    return r.stdout, json.loads(r.stdout)
