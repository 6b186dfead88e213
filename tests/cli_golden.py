"""Every command's output, captured for the before/after check of the CLI refactor (issue 21):
``tests/test_cli_refactor_golden.py`` compares with ``tests/golden/cli_refactor.json``, which
``python tests/cli_golden.py --write`` regenerates (only when an output change is intended).

The cases run in one fresh interpreter (``python tests/cli_golden.py``, COLUMNS=100), each
through ``lagadvisor.cli.main`` as the console script calls it, with stdout and stderr captured
(not a terminal, as under a pipe) and the exit code kept. Outputs longer than :data:`INLINE_MAX`
characters (but ``--help``) are kept as their length and SHA-256.

They run in a scratch directory that holds two links, ``fixtures`` (the repository's) and
``corpus`` (the optional public corpus, where it is here), so every path in a case and in its
output reads the same wherever the checkout and the corpus are. The cases on ``corpus/`` files
are the optional corpus layer (tests/test_cli_refactor_golden.py marks them)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
GOLDEN = ROOT / "tests" / "golden" / "cli_refactor.json"
INLINE_MAX = 6000
COMMANDS = ("analyze", "export", "simulate", "graph", "advise", "fleet", "calibrate", "eta")
FIXTURE_DIRS = ("mariadb_concurrent", "single_compressed", "single_full", "single_history50",
                "single_minimal_image", "single_minimal_metadata", "single_rotation", "sysbench_oltp_write_only")
#: A few files of the optional public corpus, under the ``corpus`` link (see above).
CORPUS = ("corpus/connector_java/mysql-bin.checksum-crc32",
          "corpus/mysql_common/mariadb-bin.000001",
          "corpus/mysql_common/json.binlog.000001",
          "corpus/mysql_common/binlog_truncated_event.000001",
          "corpus/bad-inputs/gzip-crc-mismatch.binlog.gz")
#: The pre-upgrade review of the one real 8.0 COMMIT_ORDER binlog (issue 36), with its schema and
#: without it (the WRITESET rows marked not computed); kept whole, not as a hash: the README quotes it.
IM = "corpus/im_service/binlog.000009"
REVIEWS = (["advise", IM, "--target-version", "8.4", "--schema", "corpus/im_service/schema.sql"],
           ["advise", IM, "--target-version", "8.4"])
#: Damaged inputs derived from the fixtures (scripts/make_damaged.py): always here.
DAMAGED = ("fixtures/damaged/gzip-crc-mismatch.binlog.gz", "fixtures/damaged/zeroed-tail-rows.binlog")


def cases() -> list[list[str]]:
    out: list[list[str]] = [["--help"], ["--version"]] + [[c, "--help"] for c in COMMANDS]
    for d in FIXTURE_DIRS:
        f = f"fixtures/{d}"
        out += [["analyze", f], ["analyze", f, "--format", "json"],
                ["simulate", f, "--format", "json"], ["graph", f, "--format", "json"],
                ["advise", f, "--format", "json"], ["export", f]]
    big = ("fixtures/single_full", "fixtures/sysbench_oltp_write_only", "fixtures/mariadb_concurrent")
    for f in big:
        out += [["simulate", f], ["graph", f], ["advise", f], ["advise", f, "--mycnf"],
                ["export", f, "--format", "csv"]]
    s = "fixtures/single_rotation"
    out += [
        ["analyze", f"{s}/binlog.000002", f"{s}/binlog.000003", "--history-size", "50", "--commit-order", "serial"],
        ["analyze", "fixtures/single_minimal_metadata", "--schema", "fixtures/single_minimal_metadata/schema.sql"],
        ["analyze", s, "--start-position", "1000", "--stop-position", "100000", "--format", "json"],
        ["analyze", s, "--jobs", "2", "--format", "json"],
        ["simulate", s, "--workers", "0,1,4", "--policy", "writeset", "--policy", "Recorded", "--catch-up",
         "--relaxed", "--window", "off"],
        ["simulate", "fixtures/mariadb_concurrent", "--mode", "mariadb_optimistic", "--workers", "2"],
        ["simulate", s, "--jobs", "2", "--format", "json", "--commit-order", "flush-groups"],
        ["graph", s, "--policy", "recorded", "--top", "3", "--range", "5:50"],
        ["advise", "fixtures/single_history50", "--fail-on", "warning", "--cores", "4"],
        ["export", s, "--keys", "--stop-position", "50000"],
        # usage and input errors: one line, exit 2
        ["analyze", "--format", "bogus", s], ["analyze"], ["analyze", "fixtures/nope.000001"],
        ["analyze", s, "--to", "binlog.000002"], ["analyze", "--from", "binlog.000001"],
        ["analyze", s, "--start-datetime", "yesterday"], ["analyze", s, "--history-size", "0"],
        ["analyze", s, "--progress", "--no-progress"], ["analyze", s, "-pSECRET"],
        ["export", s, "--keys", "--format", "csv"], ["export", s, "-o", "fixtures"],
        ["export", s, "-o", f"{s}/binlog.000001"],
        ["simulate", s, "--workers", "a"], ["simulate", s, "--workers", "1,,2"],
        ["simulate", s, "--policy", "bogus"], ["simulate", s, "--preserve-commit-order", "maybe"],
        ["simulate", s, "--lag-threshold", "nan"], ["simulate", s, "--mode", "mariadb_optimistic", "--policy",
                                                   "WRITESET"],
        ["simulate", s, "--cost-model", "fixtures/damaged/cost-model-nan.json"],
        ["simulate", s, "--cost-model", "corpus/bad-inputs/cost-model-nan.json"],
        ["graph", s, "--range", "5:1"], ["graph", s, "--range", "x"], ["graph", s, "--policy", "nope"],
        ["advise", s, "--window", "forever"], ["advise", s, "--schema", "fixtures/nope.sql"],
        ["calibrate"], ["calibrate", s, "--window", "5"], ["eta"], ["fleet"], ["fleet", s, "--fleet", "x.toml"],
        ["simulate", s, "--schema", f"{s}/schema.sql", "--defaults-file", "/nonexistent.cnf"],
        ["advise", s, "--target-version", "8"],
    ]
    out += [list(r) for r in REVIEWS]
    for f in DAMAGED + CORPUS:
        out += [["analyze", f], ["analyze", f, "--format", "json"], ["simulate", f, "--format", "json"],
                ["advise", f, "--format", "json"], ["export", f]]
    return out


def _kept(text: str, inline: bool = False) -> str | dict:
    if inline or len(text) <= INLINE_MAX:
        return text
    return {"chars": len(text), "sha256": hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()}


def run_case(argv: list[str]) -> dict:
    from lagadvisor import cli

    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv
    sys.argv = ["lagadvisor", *argv]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main()
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = saved
    whole = "--help" in argv or argv in [list(r) for r in REVIEWS]
    return {"exit": code, "stdout": _kept(out.getvalue(), whole), "stderr": _kept(err.getvalue())}


def in_corpus(argv: list[str]) -> bool:
    """Whether a case reads the optional public corpus."""
    return any(a.startswith("corpus/") for a in argv)


def available(argv: list[str]) -> bool:
    from conftest import CORPUS as where

    return not in_corpus(argv) or where.is_dir()


def scratch() -> Path:
    """The directory the cases run in: links to the fixtures and, where it is here, the corpus."""
    import tempfile

    from conftest import CORPUS as where

    d = Path(tempfile.mkdtemp(prefix="lagadvisor-golden-"))
    (d / "fixtures").symlink_to(ROOT / "fixtures")
    if where.is_dir():
        (d / "corpus").symlink_to(where.resolve())
    return d


def run_all() -> dict:
    """Every available case, in a fresh interpreter from the repository root."""
    env = dict(os.environ, COLUMNS="100", TERM="dumb")
    for k in ("LAGADVISOR_PUREPYTHON", "FORCE_COLOR", "NO_COLOR", "TERMINAL_WIDTH"):
        env.pop(k, None)
    if env.get("PYTHONPATH"):  # the cases run elsewhere: a relative entry (PYTHONPATH=src) made absolute
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in env["PYTHONPATH"].split(os.pathsep))
    import shutil

    here = scratch()
    try:
        p = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--run"], cwd=here, env=env,
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, check=True)
    finally:
        shutil.rmtree(here)
    return json.loads(p.stdout)


def _run_here() -> dict:
    got = {}
    real_stdout = sys.stdout
    for argv in cases():
        if available(argv):
            got[" ".join(argv)] = run_case(argv)
    real_stdout.write(json.dumps(got, sort_keys=True))
    return got


def golden_main(golden: Path, run_here, run_every, show) -> None:
    """A golden script's command line: ``--run`` (the cases, in the fresh interpreter that
    ``run_every`` starts), ``--write`` (regenerate ``golden``), else ``show`` what they give now."""
    if "--run" in sys.argv:
        run_here()
    elif "--write" in sys.argv:
        golden.write_text(json.dumps(run_every(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {golden}")
    else:
        show(run_every())


if __name__ == "__main__":
    golden_main(GOLDEN, _run_here, run_all, lambda got: print(json.dumps(got, indent=1, sort_keys=True)))
