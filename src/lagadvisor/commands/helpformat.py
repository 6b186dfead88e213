"""``--help`` as a DBA's terminal shows it (issue 72): plain text in the layout of ``mysql --help``
and ``git``, one block per option, never a name cut in two.

Each option is ``-j, --jobs N`` followed by its help in a column that takes most of the width; an
option whose names do not fit before that column (``--preserve-commit-order {on|off}``) takes a
line of its own and its help starts on the next one; below :data:`TWO_COLUMNS_FROM` columns every
help starts on its own line. Text wraps at spaces only (``break_long_words`` and
``break_on_hyphens`` off), so an option name, a MySQL variable or a path is always whole on one
line, and the words are the same at every width: only the line breaks move.

A flag shows no value (``--catch-up``, ``-p``); a choice of a few short values shows them
(``--format {text|json}``), a longer choice a name and, unless its help already names every
value, ``[choices: …]``. Help strings are rich markup as typer reads them (``\\[client]`` prints
``[client]``); panels (``rich_help_panel``) print as headed sections in typer's order.

The typer app uses :class:`HelpGroup` and its commands :class:`HelpCommand`."""

from __future__ import annotations

import inspect
import shutil
import textwrap
from enum import Enum

from rich.text import Text
from typer.core import TyperCommand, TyperGroup

#: The widest help printed: wider terminals get lines of this length (long lines read badly).
MAX_WIDTH = 120
#: The narrowest layout: narrower terminals are printed as if this wide.
MIN_WIDTH = 40
#: From this width options and their help share a line; below it each help has its own lines.
TWO_COLUMNS_FROM = 64
#: Where the help column starts: at most this column, at most a third of the width.
HELP_COLUMN_MAX = 30
#: Help on its own line(s) is indented this much.
OWN_LINE_INDENT = 8
#: A choice whose values joined by "|" are at most this long prints them as its value.
SHORT_CHOICES = 24
#: Joins the words of a bracketed note (``[default: --durable]``) while lines are wrapped.
NBSP = "\u00a0"


def help_width() -> int:
    """The terminal's width (``COLUMNS`` when set, 80 when not a terminal), kept within
    [:data:`MIN_WIDTH`, :data:`MAX_WIDTH`]."""
    columns = shutil.get_terminal_size((80, 24)).columns
    return max(MIN_WIDTH, min(MAX_WIDTH, columns))


def _plain(text: str | None) -> str:
    """A help string as printed: rich markup read (``\\[`` is a literal ``[``), whitespace as one
    space per paragraph; paragraphs (blank-line separated) joined by newlines."""
    if not text:
        return ""
    text = inspect.cleandoc(text).partition("\f")[0]
    paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
    return "\n".join(Text.from_markup(p).plain for p in paragraphs if p)


def _wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """``text`` wrapped at spaces only: no word (name, variable, path) is ever split; a word longer
    than the line stands alone on its line. Each paragraph (newline) starts a new line."""
    lines: list[str] = []
    for k, paragraph in enumerate(text.split("\n")):
        lines += textwrap.wrap(paragraph, width=max(width, 1),
                               initial_indent=(first if first is not None and k == 0 else indent),
                               subsequent_indent=indent, break_long_words=False,
                               break_on_hyphens=False) or [indent.rstrip()]
    return lines


# Parameters are read by duck typing: typer up to 0.2x hands click's parameters (``param.type``:
# ``click.Choice``, ``IntRange``), later typer its own (``param.type_descriptor``, ``param.min``).

def _is_argument(param) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def _choices(param) -> list[str] | None:
    desc = getattr(param, "type_descriptor", None)
    choices = getattr(desc, "choices", None) if desc is not None else getattr(getattr(param, "type", None),
                                                                             "choices", None)
    return [str(c.value if isinstance(c, Enum) else c) for c in choices] if choices else None


def _number(param) -> type | None:
    """int or float where the option takes a number, else None."""
    desc = getattr(param, "type_descriptor", None)
    if desc is not None:
        annotation = desc.annotation
        return annotation if annotation in (int, float) else None
    name = getattr(getattr(param, "type", None), "name", "")
    return int if name.startswith("integer") else float if name.startswith("float") else None


def _bounds(param) -> tuple:
    t = getattr(param, "type", None)
    return (getattr(param, "min", getattr(t, "min", None)), getattr(param, "max", getattr(t, "max", None)))


def _is_flag(param) -> bool:
    return not _is_argument(param) and bool(getattr(param, "is_flag", False) or getattr(param, "count", False))


def metavar(param) -> str:
    """The value an option takes, as printed after its names ('' for a flag)."""
    if _is_flag(param):
        return ""
    if getattr(param, "metavar", None):
        return str(param.metavar)
    choices = _choices(param)
    if choices and len("|".join(choices)) <= SHORT_CHOICES:
        return "{" + "|".join(choices) + "}"
    if choices:
        return (param.name or "value").upper()
    number = _number(param)
    return "N" if number is int else "NUM" if number is float else "TEXT"


def _range(param) -> str:
    if _number(param) is None or (_is_flag(param)):
        return ""
    low, high = _bounds(param)
    if low is not None and high is not None:
        return f"[range: {low} to {high}]"
    if low is not None:
        return f"[at least {low}]"
    return f"[at most {high}]" if high is not None else ""


def _default(param) -> str:
    """``[default: …]`` where there is a default worth showing (a flag pair names its default
    flag; a lone flag, off by default, shows none)."""
    show = getattr(param, "show_default", True)
    if show is False:
        return ""
    if isinstance(show, str):
        return f"[default: {show}]"
    if _is_flag(param):
        if not param.secondary_opts or param.default is None or getattr(param, "count", False):
            return ""
        names = param.opts if param.default else param.secondary_opts
        return f"[default: {([o for o in names if o.startswith('--')] or names)[0]}]"
    value = param.default
    if value is None or callable(value) or value == () or value == [] or value == "":
        return ""
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v.value if isinstance(v, Enum) else v) for v in value)
    elif isinstance(value, Enum):
        value = value.value
    return f"[default: {value}]"


def _param_help(param) -> str:
    """The help of one option or argument: its text, then its choices, range, default, required."""
    text = _plain(getattr(param, "help", None))
    extra = []
    choices = _choices(param)
    if choices and not metavar(param).startswith("{") and not all(c in text for c in choices):
        extra.append("[choices: " + ", ".join(choices) + "]")
    # a range, a default or "required" is kept on one line (joined by no-break spaces until wrapped)
    extra += [e.replace(" ", NBSP) for e in (_range(param), _default(param), "[required]" if param.required else "")]
    tail = " ".join(e for e in extra if e)
    return f"{text} {tail}".strip() if tail else text


def invocation(param) -> str:
    """``-j, --jobs N``, ``--durable / --relaxed``, ``FILES...``: short names first, as mysql and
    git print them."""
    if _is_argument(param):
        name = (param.metavar or param.name or "arg").upper()
        return name + ("..." if param.nargs != 1 else "")
    short = [o for o in param.opts if not o.startswith("--")]
    long = [o for o in param.opts if o.startswith("--")]
    names = ", ".join(short + long)
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    value = metavar(param)
    return f"{names} {value}" if value else names


def _column(rows: list[tuple[str, str]], width: int) -> int:
    """Where the help column starts: just past the longest invocation that fits before
    ``min(HELP_COLUMN_MAX, width // 3)``; the longer ones take their own line."""
    cap = min(HELP_COLUMN_MAX, width // 3)
    return max([len(name) + 4 for name, _ in rows if len(name) + 4 <= cap], default=cap)


def _rows(rows: list[tuple[str, str]], width: int, column: int) -> list[str]:
    """Each (invocation, help) as one block: two columns from :data:`TWO_COLUMNS_FROM` columns,
    the invocation alone on its line where it reaches into the help column."""
    if width < TWO_COLUMNS_FROM:
        out = []
        for name, text in rows:
            out.append("  " + name)
            if text:
                out += _wrap(text, width, " " * OWN_LINE_INDENT)
        return out
    out = []
    for name, text in rows:
        lead = "  " + name
        if len(lead) + 2 > column:
            out.append(lead)
            out += _wrap(text, width, " " * column) if text else []
        elif text:
            out += _wrap(text, width, " " * column, first=lead.ljust(column))
        else:
            out.append(lead)
    return out


def _panels(command, ctx) -> list[tuple[str, list]]:
    """The parameters in typer's panels and order: the default Arguments panel, other argument
    panels, the default Options panel, then other option panels in order of first appearance."""
    args: dict[str, list] = {"Arguments": []}
    opts: dict[str, list] = {"Options": []}
    for p in command.get_params(ctx):
        if getattr(p, "hidden", False):
            continue
        into = args if _is_argument(p) else opts
        into.setdefault(getattr(p, "rich_help_panel", None) or next(iter(into)), []).append(p)
    return [(name, ps) for name, ps in [*args.items(), *opts.items()] if ps]


def _usage(command, ctx) -> str:
    pieces = ["[OPTIONS]"]
    for p in command.get_params(ctx):
        if _is_argument(p):
            name = invocation(p)
            pieces.append(name if p.required else f"[{name}]")
    if hasattr(command, "list_commands"):
        pieces.append("COMMAND [ARGS]...")
    return f"Usage: {ctx.command_path} " + " ".join(pieces)


def render(command, ctx, width: int | None = None) -> str:
    """The whole ``--help`` of ``command`` at ``width`` columns (default :func:`help_width`)."""
    width = width or help_width()
    out = _wrap(_usage(command, ctx), width, "    ", first="")
    description = _plain(command.help)
    if description:
        out += [""] + _wrap(description, width, "  ")
    panels = [(name, [(invocation(p), _param_help(p)) for p in params]) for name, params in _panels(command, ctx)]
    column = _column([row for _, rows in panels for row in rows], width)
    for name, rows in panels:
        out += ["", f"{name}:"] + _rows(rows, width, column)
    if hasattr(command, "list_commands"):
        rows = []
        for sub in command.list_commands(ctx):
            cmd = command.get_command(ctx, sub)
            if cmd is not None and not cmd.hidden:
                rows.append((sub, _plain(cmd.short_help or cmd.help).split("\n")[0]))
        if rows:
            out += ["", "Commands:"] + _rows(rows, width, _column(rows, width))
    return "\n".join(line.rstrip().replace(NBSP, " ") for line in out) + "\n"


class HelpCommand(TyperCommand):
    """A typer command whose ``--help`` is :func:`render`'s."""

    def format_help(self, ctx, formatter) -> None:
        formatter.write(render(self, ctx))


class HelpGroup(TyperGroup):
    """The typer app's group: its ``--help`` is :func:`render`'s."""

    def format_help(self, ctx, formatter) -> None:
        formatter.write(render(self, ctx))
