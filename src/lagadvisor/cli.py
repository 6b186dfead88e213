"""Command line: the typer app, its commands (one module each under :mod:`lagadvisor.commands`)
and the entry point.

Domain errors become one line on stderr and exit code 2 in the commands; usage errors (click's)
become one line here.
"""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from . import __version__
from .commands.advise import advise
from .commands.analyze import analyze
from .commands.calibrate import calibrate
from .commands.common import EXIT_BAD_INPUT, err_console
from .commands.eta import eta
from .commands.export import export
from .commands.fleet import fleet
from .commands.graph import graph
from .commands.helpformat import HelpCommand, HelpGroup
from .commands.simulate import simulate

app = typer.Typer(
    name="lagadvisor",
    cls=HelpGroup,
    help="Why does my MySQL replica lag? Reads binlog files and answers from the dependency "
         "information MySQL wrote into them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
#: Each command's line in the command list: one sentence (the docstring's first paragraph is the
#: command's own --help; typer keeps its line breaks in the list, which then wraps mid-sentence).
SUMMARIES = {
    analyze: "Summarise binlogs: transactions, time span, and the parallelism each dependency policy allows.",
    export: "One record per transaction (JSONL or CSV) with the recorded and every re-derived clock.",
    simulate: "Simulate the replica's applier per policy and worker count: apply time, speedup, lag.",
    graph: "The dependency graph: critical path, width, hot rows and tables; GraphML/DOT export.",
    advise: "What to change, by expected gain: each setting's value, SET statement and simulated effect.",
    fleet: "advise for every server of a fleet, in parallel on Dask: one table, JSON or HTML page.",
    calibrate: "Fit the apply cost model from a replica's binlogs, or live from a running replica.",
    eta: "When will this replica catch up? A live estimate, calibrated on the applier (read-only).",
}
for _command, _summary in SUMMARIES.items():
    app.command(cls=HelpCommand, short_help=_summary)(_command)


def _version(value: bool) -> None:
    if value:
        print(f"lagadvisor {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[Optional[bool], typer.Option("--version", callback=_version, is_eager=True,
                                                    help="Print the version and exit.")] = None,
) -> None:
    """lagadvisor: binlog dependency analysis for MySQL and MariaDB replicas."""


def _password_on_argv(argv: list[str]) -> bool:
    """-pSECRET / --password=SECRET: refused, as a password on argv is visible to every local user
    (ps, /proc) and shell history; the mysql client only warns, this tool does not take it."""
    for a in argv:
        if a == "--":
            break
        if (a.startswith("-p") and len(a) > 2 and not a.startswith("--")) or \
                a.startswith(("--password=", "--ask-password=")):
            return True
    return False


#: Flag pairs where the last one given would silently win: both given is a mistake worth a line.
_OPPOSITE_FLAGS = (("--durable", "--relaxed"), ("--progress", "--no-progress"))


def _opposite_flags(argv: list[str]) -> str | None:
    given = set()
    for a in argv:
        if a == "--":
            break
        given.add(a.split("=", 1)[0])
    for a, b in _OPPOSITE_FLAGS:
        if a in given and b in given:
            return f"{a} and {b} contradict each other: give one"
    return None


def _usage_error_line(err) -> str:
    """A click usage error as one line: ``--format: 'bogus' is not one of 'text', 'json'`` plus where
    to look, instead of the boxed usage block."""
    param = getattr(err, "param", None)
    message = str(getattr(err, "message", None) or err).removeprefix("Value error, ")  # pydantic's wording
    hint = getattr(err, "param_hint", None)
    if param is not None and hasattr(err, "param_hint"):
        opts = [o for o in getattr(param, "opts", []) if o.startswith("--")] or list(getattr(param, "opts", []))
        name = opts[0] if opts and getattr(param, "param_type_name", "") == "option" else \
            (hint if isinstance(hint, str) else (getattr(param, "human_readable_name", None) or ""))
        if name:
            message = f"{name}: {message}"
    message = " ".join(str(message).split())
    ctx = getattr(err, "ctx", None)
    where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    return f"{message}{where}"


def _click_exceptions() -> tuple[type, type, type]:
    """(ClickException, UsageError, Abort) of the click that typer runs on (recent typer carries
    its own copy, older typer uses click): found through typer's own BadParameter."""
    mro = typer.BadParameter.__mro__
    click_exception = next(c for c in mro if c.__name__ == "ClickException")
    usage_error = next(c for c in mro if c.__name__ == "UsageError")
    return click_exception, usage_error, typer.Abort


def main() -> None:
    argv = sys.argv[1:]
    if _password_on_argv(argv):
        err_console.print("lagadvisor: error: a password on the command line is refused (visible in ps): use "
                          "-p to be prompted, LAGADVISOR_PASSWORD or MYSQL_PWD, an option file or --login-path",
                          soft_wrap=True)
        sys.exit(EXIT_BAD_INPUT)
    clash = _opposite_flags(argv)
    if clash:
        err_console.print(f"lagadvisor: error: {clash}", soft_wrap=True)
        sys.exit(EXIT_BAD_INPUT)
    click_exception, usage_error, abort = _click_exceptions()
    try:
        rv = app(standalone_mode=False)
        sys.stdout.flush()   # a full disk here is this one line, not an ignored error at exit
    except (KeyboardInterrupt, abort):
        err_console.print("lagadvisor: interrupted")
        sys.exit(130)
    except click_exception as err:
        if type(err).__name__ == "NoArgsIsHelpError":  # no arguments: the help, on stdout, exit 2
            try:
                print(err.format_message(), flush=True)
            except BrokenPipeError:
                _quiet_stdout()
            sys.exit(EXIT_BAD_INPUT)
        err_console.print(f"lagadvisor: error: {_usage_error_line(err)}", soft_wrap=True, markup=False)
        sys.exit(EXIT_BAD_INPUT if isinstance(err, usage_error) else err.exit_code)
    except BrokenPipeError:  # e.g. `lagadvisor simulate --help | head`
        _quiet_stdout()
        sys.exit(0)
    except OSError as err:   # what no command expected: the output's disk full, a device gone
        _quiet_stdout()
        err_console.print(f"lagadvisor: error: {_os_error_line(err)}", soft_wrap=True)
        sys.exit(1)
    if rv == 130:   # typer turns KeyboardInterrupt into Exit(130), which standalone_mode=False returns
        err_console.print("lagadvisor: interrupted")
    sys.exit(rv if isinstance(rv, int) else 0)


def _os_error_line(err: OSError) -> str:
    where = f"{err.filename}: " if err.filename else "writing the output: "
    return where + (err.strerror or str(err))


def _quiet_stdout() -> None:
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
