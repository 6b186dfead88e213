"""The mutation fuzzer (``scripts/fuzz.py``) in the suite: a bounded run over the corpus and the
fixtures through every command must find no hang, traceback, crash or multi-line error; the
fuzzer itself must catch each of those when a worker is made to misbehave; and an execution is a
pure function of (seed, index). The long run and its figures are in docs/internals.md (Bad input)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import CORPUS, ROOT

if CORPUS.is_dir():  # the optional public corpus joins the seeds where it is here
    os.environ.setdefault("LAGADVISOR_FUZZ_CORPUS", str(CORPUS))
sys.path.insert(0, str(ROOT / "scripts"))
import fuzz  # noqa: E402

FUZZ = ROOT / "scripts" / "fuzz.py"
#: Seconds of fuzzing in the suite (CI budget); LAGADVISOR_FUZZ_SECONDS overrides.
SECONDS = float(os.environ.get("LAGADVISOR_FUZZ_SECONDS", "45"))
SEED = int(os.environ.get("LAGADVISOR_FUZZ_SEED", "20"))


def _run(*args: str, timeout: float) -> dict:
    p = subprocess.run([sys.executable, str(FUZZ), *args], capture_output=True, text=True, timeout=timeout)
    assert p.stdout.strip(), p.stderr
    return json.loads(p.stdout)


def test_bounded_fuzz_run_finds_no_hang_or_traceback(tmp_path):
    s = _run("--seed", str(SEED), "--seconds", str(SECONDS), "--save-dir", str(tmp_path),
             timeout=SECONDS + 120)
    replay = [f"python scripts/fuzz.py --seed {SEED} --replay {f['i']}  # {f['status']}: {f['detail']}"
              for f in s["failures"]]
    assert (s["hangs"], s["tracebacks"], s["crashes"], s["other_failures"]) == (0, 0, 0, 0), "\n".join(replay)
    assert s["executions"] >= 20 * SECONDS / 10, s  # it did run (about 50 executions a second)
    assert set(s["by_command"]) == {"analyze", "export", "graph", "simulate", "advise", "calibrate"}
    assert s["peak_rss_mb"] < 200


def test_the_fuzzer_catches_hangs_tracebacks_and_crashes(tmp_path):
    s = _run("--seed", "3", "--executions", "8", "--hang-seconds", "3", "--save-dir", str(tmp_path),
             "--selftest", "1:hang,3:raise,5:die", timeout=120)
    assert (s["hangs"], s["tracebacks"], s["crashes"]) == (1, 1, 1), s
    assert s["executions"] == 8
    assert sorted(f["i"] for f in s["failures"]) == [1, 3, 5]
    saved = sorted(p.name.split("-")[0] for p in tmp_path.iterdir())
    assert saved == ["crash", "hang", "traceback"]


def test_an_execution_is_a_function_of_seed_and_index():
    seeds = fuzz.load_seeds()
    others = [d for _, d, form in seeds if form == "plain" and d]
    a = [fuzz.make_case(7, i, seeds, others) for i in range(40)]
    b = [fuzz.make_case(7, i, seeds, others) for i in range(40)]
    assert a == b
    assert len({c["data"] for c in a}) > 30
    assert fuzz.make_case(8, 0, seeds, others) != a[0]


def test_error_kinds_drop_file_names_and_numbers():
    line = ("lagadvisor: error: /tmp/x/case.binlog at offset 3606 (QUERY_EVENT): event length 1073741824 "
            "runs past the end of the file and disagrees with the event's end position 3691")
    assert fuzz.error_kind(line) == ("event length N runs past the end of the file and disagrees with the "
                                     "event's end position N")
