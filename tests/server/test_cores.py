"""server.cores: a server's logical processors from its compiled defaults (issue 33), against the
rule the MySQL 8.4+ manuals state for innodb_read_io_threads: max(4, processors // 2), 1-64."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from lagadvisor.server.cores import exposed_cores
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
    assert exposed_cores("9.7.4", "4", "COMPILED").cores == 9          # 1-9 processors: the upper bound
    assert exposed_cores("9.7.4", "64", "COMPILED").high is None       # 128 or more
    assert "16 or 17, 16 assumed" in exposed_cores("8.4.0", "8", "COMPILED").sentence()
    assert "at most 9, 9 assumed" in exposed_cores("8.4.0", "4", "COMPILED").sentence()
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
