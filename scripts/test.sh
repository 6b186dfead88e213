#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs the package with its test extras,
# provisions the reference readers and servers the tests need (MySQL 9.x in a Debian sid
# chroot, MariaDB 10.11 and sysbench from Debian; cached under $LAGADVISOR_CACHE), then runs
# pytest with LAGADVISOR_REQUIRE_SERVERS=1 so a missing server fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
python3 scripts/realservers.py provision
export LAGADVISOR_REQUIRE_SERVERS=1
# pip install built lagadvisor._native: the native-vs-Python differential tests must run
export LAGADVISOR_REQUIRE_NATIVE=1
exec python3 -m pytest -q -p no:cacheprovider "$@"
