"""Every command's ``--help`` (issue 35): as in ``tests/golden/help.json`` at 80 and 120 columns,
no help text lost to rich markup (``[client]`` read as a style tag leaves "()"), no option's help
cut off with "…" (at 80 columns long names fold), and one line per command in the command list.

An intended change of help regenerates the golden file (``python tests/help_golden.py --write``)
in the same commit, which says why."""

from __future__ import annotations

import json
import re

import pytest
import typer.main
from rich.text import Text

import help_golden
from lagadvisor.cli import SUMMARIES, app

GOLDEN = json.loads(help_golden.GOLDEN.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def now() -> dict:
    return help_golden.run_all()


def _cases():
    return [(w, c) for w in sorted(GOLDEN, key=int) for c in sorted(GOLDEN[w])]


@pytest.mark.parametrize("width,case", _cases())
def test_help_as_in_the_golden_file(now, width, case):
    assert now[width][case] == GOLDEN[width][case]


def test_every_command_has_golden_help_at_both_widths(now):
    assert sorted(now) == sorted(str(w) for w in help_golden.WIDTHS)
    for width in now:
        assert sorted(now[width]) == sorted(GOLDEN[width])


def test_no_help_cut_off_at_any_width(now):
    """At 120 columns every option's help fits; at 80 a name longer than its column (a MySQL
    variable) is folded onto the next line, never cut with "…"."""
    cut = [(width, case, line.strip()) for width, helps in now.items() for case, text in helps.items()
           for line in text.splitlines() if "…" in line]
    assert cut == []


def test_no_markup_eaten_from_any_help(now):
    """An empty "()" or "( )" in the output is text that rich took for a style tag."""
    for width, helps in now.items():
        for case, text in helps.items():
            assert not re.search(r"\(\s*(,\s*)*\)", text), (width, case)


def _helps():
    group = typer.main.get_command(app)
    for name, cmd in group.commands.items():
        yield name, "(command)", cmd.help or ""
        for p in cmd.params:
            yield name, p.name, getattr(p, "help", None) or ""


@pytest.mark.parametrize("command,param,text", list(_helps()))
def test_help_strings_render_as_written(command, param, text):
    """Every help string, read as rich markup, prints as written (a literal "[" is escaped)."""
    assert Text.from_markup(text).plain == text.replace("\\[", "[")


def test_command_list_has_one_sentence_per_command():
    group = typer.main.get_command(app)
    assert sorted(group.commands) == sorted(c.__name__ for c in SUMMARIES)
    for name, cmd in group.commands.items():
        assert cmd.short_help and "\n" not in cmd.short_help, name


def test_each_command_says_what_host_reads():
    """--host's first sentence is the command's own: what it reads from the server."""
    group = typer.main.get_command(app)
    first = {}
    for name, cmd in group.commands.items():
        host = [p for p in cmd.params if p.name == "host"]
        if host:
            first[name] = host[0].help.split(" Options are read", 1)[0]
    assert {"analyze", "advise", "calibrate", "eta"} <= set(first)
    assert len({first["analyze"], first["advise"], first["calibrate"], first["eta"]}) == 4
    assert "information_schema" not in first["eta"] and "information_schema" not in first["calibrate"]
