"""Fleet files (TOML and YAML) and binlog locations (directory, glob, .index), no cluster."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from lagadvisor.errors import ConfigError
from lagadvisor.fleet.spec import entries_from_dirs, list_binlogs, load_fleet

ROT = FIXTURES / "single_rotation"


def test_toml_and_yaml_give_the_same_servers(tmp_path):
    t = tmp_path / "f.toml"
    t.write_text('[defaults]\ncores = 8\n[[servers]]\nname = "a"\nbinlogs = "/x/"\n'
                 '[[servers]]\nname = "b"\nbinlogs = "s3://bk/b/"\ncores = 4\n[servers.replica]\n'
                 'replica_parallel_workers = 16\n')
    y = tmp_path / "f.yml"
    y.write_text("defaults: {cores: 8}\nservers:\n  - {name: a, binlogs: /x/}\n"
                 "  - name: b\n    binlogs: s3://bk/b/\n    cores: 4\n    replica: {replica_parallel_workers: 16}\n")
    a, b = load_fleet(str(t)), load_fleet(str(y))
    assert a == b and [s.cores for s in a] == [8, 4] and a[1].replica == {"replica_parallel_workers": 16}


@pytest.mark.parametrize("text, message", [
    ('servers = []', "non-empty 'servers'"),
    ('[[servers]]\nname = "a"\n', "'binlogs'"),
    ('[[servers]]\nname = "a"\nbinlogs = "/x"\npassword = "p"\n', "does not belong"),
    ('[[servers]]\nname = "a"\nbinlogs = "/x"\nworkers = 3\n', "unknown key 'workers'"),
    ('[[servers]]\nname = "a"\nbinlogs = "/x"\n[[servers]]\nname = "a"\nbinlogs = "/y"\n', "used twice"),
    ('[[servers]\n', "not a TOML fleet file"),
    ('[[servers]]\nname = "a"\nbinlogs = "/x"\ntarget_version = 8.4\n', "target_version must be a version"),
    ('[[servers]]\nname = "a"\nbinlogs = "/x"\ntarget_version = "eight"\n', "target_version must be a version"),
])
def test_bad_fleet_files_are_one_line(tmp_path, text, message):
    f = tmp_path / "f.toml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=message) as e:
        load_fleet(str(f))
    assert "\n" not in str(e.value)


def test_locations(tmp_path):
    files = [str(ROT / f"binlog.00000{i}") for i in range(1, 6)]
    assert list_binlogs(str(ROT)) == files  # reference.tsv and schema.sql left out
    assert list_binlogs(str(ROT / "binlog.00000[2-3]")) == files[1:3]
    idx = tmp_path / "binlog.index"
    idx.write_text(f"{ROT}/binlog.000002\n{ROT}/binlog.000001\n")
    assert list_binlogs(str(idx)) == [files[1], files[0]]  # the index's order
    with pytest.raises(ConfigError, match="no such file"):
        list_binlogs(str(tmp_path / "nope"))
    assert [e.name for e in entries_from_dirs(["/a/db1/", "/b/db1", "/c/db2"])] == ["db1", "db1#2", "db2"]


def test_a_target_version_per_server_or_for_all(tmp_path):
    """``target_version``: the pre-upgrade review of a server (advise --target-version)."""
    f = tmp_path / "f.toml"
    f.write_text('[defaults]\ntarget_version = "8.4"\n[[servers]]\nname = "a"\nbinlogs = "/x/"\n'
                 '[[servers]]\nname = "b"\nbinlogs = "/y/"\ntarget_version = "26.7"\n')
    assert [s.target_version for s in load_fleet(str(f))] == ["8.4", "26.7"]
