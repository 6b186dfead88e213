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


def _refused(tmp_path, name: str, text: str, message: str) -> str:
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(ConfigError, match=message) as e:
        load_fleet(str(f))
    assert "\n" not in str(e.value) and str(e.value).startswith(f"{f}: ")
    return str(e.value)


def test_a_yaml_alias_bomb_is_refused_before_it_is_built(tmp_path):
    """Ten levels of ten aliases (10^10 nodes from 1 KB, audit: 5 GB and no end) are refused from
    the composed graph; a recursive alias too; ordinary anchors (a defaults mapping merged into
    each server) still load."""
    import time

    levels = "".join(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10))
    bomb = (f"defs:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n{levels}servers:\n  - name: a\n    binlogs: /x\n"
            "    replica: {replica_parallel_workers: *a9}\n")
    start = time.monotonic()
    _refused(tmp_path, "bomb.yaml", bomb, "expand to more than 100,000 nodes")
    assert time.monotonic() - start < 10
    _refused(tmp_path, "loop.yaml", "servers: &s [{name: a, binlogs: /x, replica: *s}]\n", "alias inside its own")
    ok = tmp_path / "anchors.yaml"
    ok.write_text("base: &b {cores: 8, replica: {replica_parallel_workers: 16}}\nservers:\n"
                  "  - {<<: *b, name: a, binlogs: /x}\n  - {<<: *b, name: b, binlogs: /y, cores: 4}\n")
    assert [(s.name, s.cores, s.replica) for s in load_fleet(str(ok))] == [
        ("a", 8, {"replica_parallel_workers": 16}), ("b", 4, {"replica_parallel_workers": 16})]


@pytest.mark.parametrize("name, text", [("deep.toml", "servers = " + "[" * 20000 + "]" * 20000 + "\n"),
                                        ("deep.yaml", "servers: " + "[" * 20000 + "]" * 20000 + "\n")])
def test_a_deeply_nested_fleet_file_is_one_line(tmp_path, name, text):
    _refused(tmp_path, name, text, "nested too deeply")


@pytest.mark.parametrize("entry, message", [
    ("[servers.replica]\nreplica_parallel_workers = -5\n", r"server a: replica: replica_parallel_workers is a whole"),
    ("[servers.replica]\nreplica_parallel_workers = 1000000000\n", r"replica_parallel_workers is a whole number \(0..1024\)"),
    ('[servers.replica]\nreplica_parallel_workers = "lots"\n', "replica_parallel_workers is a whole number"),
    ("[servers.replica]\nreplica_preserve_commit_order = [1, 2]\n", "must be a single value"),
    ('[servers.replica]\nreplica_preserve_commit_order = "maybe"\n', "replica_preserve_commit_order is ON or OFF"),
    ("[servers.replica]\nread_only = 1\n", "server a: replica: unknown setting 'read_only'"),
    ("cores = 100000\n", "'cores' must be a whole number from 1 to 4,096"),
    ("history_size = 1000000000\n", "'history_size' must be a whole number from 1 to 10,000,000"),
    ("port = 99999\n", "'port' must be a whole number from 1 to 65,535"),
])
def test_server_settings_have_the_single_server_commands_limits(tmp_path, entry, message):
    """advise --replica-setting's rules and --cores / --history-size's ranges, not '-5' reported
    as the replica's current workers."""
    _refused(tmp_path, "f.toml", f'[[servers]]\nname = "a"\nbinlogs = "/x"\n{entry}', message)


def test_yaml_on_and_numbers_reach_the_settings_as_the_server_shows_them(tmp_path):
    """YAML 1.1 reads a bare ON as true: it is the replica's ON, not "True" (which the baseline
    would read as OFF)."""
    from lagadvisor.fleet import build_job

    f = tmp_path / "f.yaml"
    f.write_text(f"servers:\n  - name: a\n    binlogs: {ROT}\n    replica:\n      replica_preserve_commit_order: OFF\n"
                 "      replica_parallel_workers: 16\n      slave_parallel_mode: optimistic\n")
    job = build_job(load_fleet(str(f))[0], "t")
    assert job.settings.variables == {"replica_preserve_commit_order": "OFF", "replica_parallel_workers": "16",
                                      "slave_parallel_mode": "optimistic"}


def test_a_server_reads_its_directory_as_advise_does(tmp_path):
    """The directory's one binlog.index names the files (here two of three), and a directory
    mixing binlog.* with relay-bin.* is refused: inputs.resolve, advise's resolver."""
    import shutil

    from lagadvisor.inputs import resolve

    d = tmp_path / "idx"
    d.mkdir()
    for i in (1, 2, 3):
        shutil.copy(ROT / f"binlog.00000{i}", d / f"binlog.00000{i}")
    (d / "binlog.index").write_text("binlog.000001\nbinlog.000002\n")
    assert list_binlogs(str(d)) == resolve([str(d)]) == [str(d / "binlog.000001"), str(d / "binlog.000002")]
    (d / "binlog.index").unlink()
    (d / "relay-bin.000001").write_bytes((ROT / "binlog.000001").read_bytes())
    with pytest.raises(ConfigError, match=r"holds several logs \(binlog, relay-bin\)"):
        list_binlogs(str(d))


def test_a_backup_copy_in_a_server_location_is_read_once(tmp_path):
    """A glob matching binlog.000002 and its copy binlog.000002.bak read it twice (advise's
    inputs.distinct_files): the job keeps the first and says so in its warnings."""
    import shutil

    from lagadvisor.fleet import build_job
    from lagadvisor.fleet.spec import ServerEntry

    for name in ("binlog.000001", "binlog.000002"):
        shutil.copy(ROT / name, tmp_path / name)
    shutil.copy(ROT / "binlog.000002", tmp_path / "binlog.000002.bak")
    job = build_job(ServerEntry(name="a", binlogs=str(tmp_path / "binlog.0*")), "run")
    assert job.files == (str(tmp_path / "binlog.000001"), str(tmp_path / "binlog.000002"))
    assert job.copies == (f"{tmp_path / 'binlog.000002.bak'} is the same binlog as {tmp_path / 'binlog.000002'}: "
                          "read once",)
