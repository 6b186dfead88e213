"""Every command's ``--help`` (issues 35, 72): as in ``tests/golden/help.json`` at 80 and 120
columns, no help text lost to rich markup (``[client]`` read as a style tag leaves "()"), no
option's help cut off with "…", and one line per command in the command list.

At 80 columns as at 120 (issue 72): every option name, MySQL/MariaDB variable and path of the
help strings (as the source declares them, before any wrapping) is whole on one line; the words
are the same at both widths (only line breaks differ); a flag shows no value; the help column
takes most of the width.

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
    """No option's help is cut with "…" at any width."""
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


def _command(case: str):
    """The click command of a golden case ("lagadvisor simulate --help"), and its parameters."""
    group = typer.main.get_command(app)
    words = case.split()[1:-1]
    return group.commands[words[0]] if words else group


def _params(cmd) -> list:
    """Every parameter as the help shows it, click's --help included."""
    return cmd.get_params(cmd.context_class(cmd))


def _source_texts(cmd) -> list[str]:
    """The command's help strings as declared (markup read, whitespace as one space)."""
    texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in _params(cmd)]
    if hasattr(cmd, "commands"):
        texts += [c.short_help or "" for c in cmd.commands.values()]
    return [" ".join(Text.from_markup(t).plain.split()) for t in texts]


#: A variable, option, path or file name in a help string: a word holding "_", "/", "." or "$"
#: between letters, or starting with "-" (innodb_flush_log_at_trx_commit, APPLIER_WORKER_COUNT,
#: performance_schema.file_summary_by_event_name, ~/.mylogin.cnf, docs/advise-schema.json).
NAME = re.compile(r"(?<![\w.$~/-])(?:--?[A-Za-z][\w-]*|[\w.$~/:-]*\w[_/.$][\w.$~/:-]*\w)")


def _names(cmd) -> set[str]:
    names = {n for t in _source_texts(cmd) for n in NAME.findall(t)}
    for p in _params(cmd):
        if not getattr(p, "hidden", False) and getattr(p, "param_type_name", "") == "option":
            names |= set(p.opts) | set(p.secondary_opts)
    return names


@pytest.mark.parametrize("width,case", _cases())
def test_every_name_whole_on_one_line(now, width, case):
    """Every option name of the command and every name in its help strings (variables, paths,
    files) appears whole on one line: none is split across lines."""
    lines = now[width][case].splitlines()
    names = _names(_command(case))
    assert {"--help"} <= names
    split = sorted(n for n in names if not any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", line)
                                               for line in lines))
    assert split == [], (width, case)


def test_variable_names_in_help_are_checked():
    """The names the check above looks for include the MySQL variables the issue saw split."""
    names = set().union(*(_names(c) for c in typer.main.get_command(app).commands.values()))
    assert {"replica_preserve_commit_order", "innodb_flush_log_at_trx_commit", "APPLIER_WORKER_COUNT",
            "binlog_transaction_dependency_history_size", "--preserve-commit-order",
            "docs/fleet-schema.json"} <= names


@pytest.mark.parametrize("case", sorted(GOLDEN["80"]))
def test_same_words_at_80_and_120_columns(now, case):
    """The help says the same at both widths: only where lines break differs."""
    assert now["80"][case].split() == now["120"][case].split()


@pytest.mark.parametrize("case", sorted(GOLDEN["80"]))
def test_flags_show_no_value(now, case):
    """A flag's row is its names alone (no "<bool>", no TEXT); an option that takes a value shows
    one after its names."""
    text = now["80"][case]
    assert "<bool>" not in text
    for p in _params(_command(case)):
        if getattr(p, "hidden", False) or getattr(p, "param_type_name", "") != "option":
            continue
        long = [o for o in p.opts if o.startswith("--")][0]
        rows = [line for line in text.splitlines() if re.match(rf"  (?:-\w, )*{re.escape(long)}(?![\w-])", line)]
        assert len(rows) == 1, (case, long)
        after = rows[0].split(long, 1)[1]
        after = re.sub(r"^(?:, --[\w-]+| / (?:-\w, )*--?[\w-]+)*", "", after)
        if p.is_flag:
            assert after == "" or after.startswith("  "), (case, long, rows[0])
        else:
            assert re.match(r" \S", after), (case, long, rows[0])


@pytest.mark.parametrize("case", sorted(GOLDEN["80"]))
def test_help_takes_most_of_80_columns(now, case):
    """At 80 columns no line is wider than 80, and the help column starts by column 30 (at least
    50 columns for the descriptions): an option too long for that takes its own line."""
    lines = now["80"][case].splitlines()
    assert max(len(line) for line in lines) <= 80
    starts = {len(line) - len(line.lstrip()) for line in lines if line.startswith("    ")}
    assert starts and max(starts) <= 30, (case, starts)
