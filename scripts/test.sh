#!/usr/bin/env bash
# The whole test suite, on a fresh machine, from nothing but this checkout:
#
# 1. builds the abi3 wheel once (maturin, in a build-only virtualenv);
# 2. installs that wheel with its test extras into a NEW virtualenv and runs pytest from it,
#    so a package installed on the machine by hand cannot hide a missing dependency;
# 3. installs the same wheel into a second new virtualenv with no `cargo` on PATH and runs
#    the README's example from it (a user without Rust installs the wheel);
# 4. provisions the reference readers and servers the tests need (MySQL 9.x in a Debian sid
#    chroot, MariaDB 10.11 and sysbench from Debian; cached under $LAGADVISOR_CACHE) and runs
#    pytest with LAGADVISOR_REQUIRE_SERVERS=1 so a missing server fails instead of skipping.
#
# The virtualenvs live under build/test-env/ (recreated on every run). Extra arguments go to pytest.
#
# Tests that read the optional public corpus (binlogs of other projects' suites, never committed;
# tests/conftest.py says where it is looked for) are marked `corpus` and skip where it is absent.
# `scripts/test.sh --corpus-layer` runs only them, from the virtualenvs a full run left, and fails
# if the corpus is missing (.ci/run does this after the full run from a bare clone).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ENVS="${LAGADVISOR_TEST_ENVS:-$ROOT/build/test-env}"
PY="${PYTHON:-python3}"
pipq() { "$1/bin/python" -m pip install --quiet --disable-pip-version-check "${@:2}"; }

if [ "${1:-}" = "--corpus-layer" ]; then
    [ -x "$ENVS/test/bin/python" ] || { echo "no test virtualenv at $ENVS: run scripts/test.sh first" >&2; exit 1; }
    echo "== the optional corpus layer (pytest -m corpus), the corpus required"
    export PATH="$ENVS/test/bin:$PATH" LAGADVISOR_TEST_WHEEL="$(ls "$ENVS"/wheels/lagadvisor-*.whl)"
    export LAGADVISOR_REQUIRE_SERVERS=1 LAGADVISOR_REQUIRE_NATIVE=1 LAGADVISOR_REQUIRE_INSTALLED=1
    export LAGADVISOR_REQUIRE_CORPUS=1
    python scripts/realservers.py provision
    exec python -m pytest -q -p no:cacheprovider --durations=10 -m corpus "${@:2}"
fi

rm -rf "$ENVS"
mkdir -p "$ENVS"

echo "== building the wheel (maturin, release, abi3)"
"$PY" -m venv "$ENVS/build"
pipq "$ENVS/build" "maturin>=1.5,<2"
"$ENVS/build/bin/maturin" build --release --out "$ENVS/wheels" >"$ENVS/build.log" 2>&1 \
    || { cat "$ENVS/build.log" >&2; exit 1; }
WHEEL=$(ls "$ENVS"/wheels/lagadvisor-*.whl)
echo "   $(basename "$WHEEL")"

echo "== the wheel in a clean virtualenv without cargo on PATH: the README's example"
"$PY" -m venv "$ENVS/user"
NOCARGO_PATH="$ENVS/user/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
if PATH="$NOCARGO_PATH" command -v cargo >/dev/null; then
    echo "cargo is still on the no-Rust PATH: $(PATH="$NOCARGO_PATH" command -v cargo)" >&2
    exit 1
fi
PATH="$NOCARGO_PATH" CARGO=/nonexistent RUSTC=/nonexistent pipq "$ENVS/user" --only-binary=:all: "$WHEEL"
PATH="$NOCARGO_PATH" lagadvisor analyze fixtures/sysbench_oltp_write_only/binlog.000001 >"$ENVS/user-example.txt"
PATH="$NOCARGO_PATH" python -c 'import lagadvisor._native' \
    || { echo "the wheel installed without its native core" >&2; exit 1; }
grep -q "transactions" "$ENVS/user-example.txt" \
    || { echo "the README example printed no report:" >&2; cat "$ENVS/user-example.txt" >&2; exit 1; }
echo "   ok ($(wc -l <"$ENVS/user-example.txt") lines of report)"

echo "== the test virtualenv: the wheel and its [test] extras, nothing else"
"$PY" -m venv "$ENVS/test"
pipq "$ENVS/test" "$WHEEL[test]"
export PATH="$ENVS/test/bin:$PATH"
export LAGADVISOR_TEST_WHEEL="$WHEEL"

echo "== provisioning real servers"
python scripts/realservers.py provision

export LAGADVISOR_REQUIRE_SERVERS=1
# the wheel carries lagadvisor._native: the native-vs-Python differential tests must run
export LAGADVISOR_REQUIRE_NATIVE=1
# the tests import lagadvisor from the installed wheel, never from src/
export LAGADVISOR_REQUIRE_INSTALLED=1
if [ "$#" -gt 0 ]; then
    exec python -m pytest -q -p no:cacheprovider --durations=25 "$@"
fi
# The bad-input suites are hundreds of short subprocesses that wait on nothing; the rest waits on
# real servers and clusters much of the time. On a 2-core machine the two halves overlap well, so
# they run as two pytest processes at once (each test keeps its own time limits). The second
# process first runs the suites that only compute (the engines and readers against their
# references, every fixture through every command; no server, no clock), then the bad-input
# suites, and leaves their exit status in bad-input.rc when they end (.ci/run starts its corpus
# layer then): the main suite, waiting on servers, keeps one process busy for as long as the
# second one's two parts and the corpus layer after them.
COMPUTE=(tests/native/test_sim_engine.py tests/native/test_differential.py tests/native/test_facts.py
         tests/advise/test_one_answer.py tests/test_files_opened.py tests/report/test_terminal_width.py)
BAD_INPUT=(tests/binlog/test_damaged_every_command.py tests/test_fuzz.py tests/test_cli_misuse.py)
(
    crc=0
    python -m pytest -q -p no:cacheprovider --durations=10 "${COMPUTE[@]}" >"$ENVS/pytest-compute.log" 2>&1 || crc=$?
    rc=0
    python -m pytest -q -p no:cacheprovider --durations=10 "${BAD_INPUT[@]}" >"$ENVS/pytest-bad-input.log" 2>&1 || rc=$?
    echo "$rc" >"$ENVS/bad-input.rc"
    [ "$crc" -eq 0 ] && [ "$rc" -eq 0 ]
) &
BG=$!
set +e
python -m pytest -q -p no:cacheprovider --durations=25 $(printf -- '--ignore=%s ' "${COMPUTE[@]}" "${BAD_INPUT[@]}")
MAIN=$?
wait "$BG"
BAD=$?
set -e
echo "== the suites that only compute (run alongside)"
cat "$ENVS/pytest-compute.log"
echo "== the bad-input suites (run alongside, after them)"
cat "$ENVS/pytest-bad-input.log"
if [ "$MAIN" -ne 0 ] || [ "$BAD" -ne 0 ]; then
    exit 1
fi
