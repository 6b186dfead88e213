"""server.cores: a server's logical processors from its compiled defaults (issue 33), against the
rule the MySQL 8.4+ manuals state for innodb_read_io_threads: max(4, processors // 2), 1-64; a
bound is never the count (issue 71); a server on this host is read here (its process's CPUs)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from lagadvisor.server.cores import HostCores, exposed_cores, on_this_host
from lagadvisor.server.schema import ServerSettings


def _default(processors: int) -> int:
    """innodb_read_io_threads's compiled default on 8.4+ (MySQL 8.4 Reference Manual, 17.8.5)."""
    return min(64, max(4, processors // 2))


@given(st.integers(1, 512))
def test_the_bounds_hold_the_processors_that_gave_the_default(processors):
    e = exposed_cores("8.4.3", str(_default(processors)), "COMPILED")
    assert e is not None
    assert e.low <= processors and (e.high is None or processors <= e.high)
    assert e.low <= e.cores and (e.high is None or e.cores <= e.high)


def test_what_is_assumed_within_the_bounds():
    assert (exposed_cores("9.7.4", "8", "COMPILED").low, exposed_cores("9.7.4", "8", "COMPILED").cores) == (16, 16)
    assert exposed_cores("9.7.4", "4", "COMPILED").cores == 4          # 1-9 processors: a bound, not the count
    assert exposed_cores("9.7.4", "64", "COMPILED").high is None       # 128 or more
    assert "16 or 17, 16 assumed" in exposed_cores("8.4.0", "8", "COMPILED").sentence()
    assert "at most 9, which not shown: 4 assumed (--cores to give them)" in exposed_cores(
        "8.4.0", "4", "COMPILED").sentence()
    assert "128 or more, 128 assumed" in exposed_cores("26.7.0", "64", "COMPILED").sentence()
    # which server was read: advise --host may name the source
    assert exposed_cores("9.7.4", "8", "COMPILED").sentence().startswith("read from the replica: innodb_read_io_threads=8")
    assert exposed_cores("9.7.4", "8", "COMPILED").sentence("db1:3306").startswith("read from db1:3306: ")


@pytest.mark.parametrize("version, value, source", [
    ("8.0.36", "8", "COMPILED"),          # 8.0: a fixed default of 4, so 8 was set somewhere
    ("8.3.0", "8", "COMPILED"),           # before 8.4.0: not the processor rule
    ("10.11.6-MariaDB-log", "8", "COMPILED"),
    ("9.7.4", "8", "COMMAND_LINE"),       # set by the user: says nothing of the processors
    ("9.7.4", "8", "GLOBAL"),
    ("9.7.4", "8", None),                 # variables_info not read
    ("9.7.4", None, "COMPILED"),
    ("9.7.4", "3", "COMPILED"),           # below the default's minimum: not a default
    ("9.7.4", "x", "COMPILED"),
    ("", "8", "COMPILED"),
])
def test_nothing_is_read_where_the_default_does_not_follow_the_processors(version, value, source):
    assert exposed_cores(version, value, source) is None


def test_server_settings_read_them_only_at_the_compiled_default():
    s = ServerSettings("replica:3306", {"version": "9.7.4", "innodb_read_io_threads": "12"}, None, (),
                       sources={"innodb_read_io_threads": "COMPILED"})
    assert s.cores().cores == 24
    assert ServerSettings("replica:3306", {"version": "9.7.4", "innodb_read_io_threads": "12"}, None, (),
                          sources={"innodb_read_io_threads": "PERSISTED"}).cores() is None
    assert ServerSettings("replica:3306", {"version": "9.7.4", "innodb_read_io_threads": "12"}, None, ()).cores() is None
    maria = ServerSettings("replica:3306", {"version": "11.4.2", "version_comment": "MariaDB Server",
                                            "innodb_read_io_threads": "12"}, None, (),
                           sources={"innodb_read_io_threads": "COMPILED"})
    assert maria.cores() is None


def test_what_runs_on_this_host():
    assert on_this_host("127.0.0.1") and on_this_host("localhost") and on_this_host("::1")
    assert on_this_host("db.example", socket="/run/mysqld/mysqld.sock")
    assert not on_this_host("192.0.2.1") and not on_this_host("") and not on_this_host(None)
    assert not on_this_host("no-such-host.invalid")


def test_host_cores_win_over_the_defaults():
    here = HostCores(2, 1234, "mysqld", 2, None)
    s = ServerSettings("127.0.0.1:3306", {"version": "9.7.4", "innodb_read_io_threads": "4"}, None, (),
                       sources={"innodb_read_io_threads": "COMPILED"}, host_cores=here)
    assert s.cores() is here and s.cores().cores == 2
    assert here.sentence("127.0.0.1:3306") == ("read on this host, where 127.0.0.1:3306 runs: its process (mysqld, "
                                               "pid 1234) may run on 2 CPUs (its affinity; --cores to give others)")
    assert "its cgroup's CPU quota 1" in HostCores(1, 7, "mysqld", 2, 1).sentence()
    assert "os.cpu_count" in HostCores(2).sentence()
