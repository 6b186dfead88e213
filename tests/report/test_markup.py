"""Names are printed as they are (commands.common.console): a path, a schema statement or a table
name holding ``[/]`` raised rich's MarkupError (a traceback), and ``[old]`` vanished from a path."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from lagadvisor.cli import app

from conftest import FIXTURES

BINLOG = FIXTURES / "single_minimal_metadata" / "binlog.000001"


@pytest.fixture
def odd(tmp_path):
    d = tmp_path / "a[/]b [old] :smile:"   # "a[" holding "]b [old] :smile:"
    d.mkdir(parents=True)
    shutil.copy(BINLOG, d / "binlog.000001")
    return d / "binlog.000001"


@pytest.mark.parametrize("command", [["analyze", "--no-progress"], ["simulate", "--no-progress", "--workers", "2"],
                                     ["advise", "--no-progress"], ["graph"]])
def test_a_path_with_markup_is_printed_verbatim(odd, command):
    r = CliRunner().invoke(app, [*command, str(odd)])
    assert r.exit_code == 0, r.output
    if command[0] == "analyze":
        # the heading: the file's name, then its directory broken after a '/' only (issue 72), so
        # the lines joined give the path back verbatim, markup characters and all
        lines = r.stdout.splitlines()
        assert lines[0] == "binlog.000001"
        heading = "".join(ln.lstrip().removeprefix("in ") for ln in lines[1:] if ln.startswith("  "))
        assert str(odd.parent) + "/" in heading and "a[/]b [old] :smile:/" in heading


def test_an_error_line_keeps_the_brackets(tmp_path):
    missing = tmp_path / "[old]" / "binlog.000001"
    r = CliRunner().invoke(app, ["analyze", "--no-progress", str(missing)])
    assert r.exit_code == 2
    assert str(missing) in r.stderr


def test_a_schema_statement_with_markup_is_quoted_verbatim(tmp_path):
    schema = tmp_path / "schema.sql"
    schema.write_text("CREATE TABLE t (id INT PRIMARY KEY);\nhello [/] world [bold];\n")
    r = CliRunner().invoke(app, ["analyze", "--no-progress", "--schema", str(schema), str(BINLOG)])
    assert r.exit_code == 0, r.output
    assert "'hello [/] world [bold]'" in r.stderr
