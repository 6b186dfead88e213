"""Options shared between commands, declared once: typer ``Annotated`` aliases, and option
groups (the clock, the window and the server/TLS options) a command takes as one value.

A command declares a group as one parameter (``server: ServerArgs``); :func:`grouped` puts the
group's options in its signature in that place, and hands the command the group as one frozen
dataclass."""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import typing
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, ClassVar, Optional

import typer

from ..kinds import CLOCKS, CORES_RANGE, HISTORY_SIZE_RANGE, CommitOrderInput
from ..versions import WRITESET_ONLY_SINCE, describe_history_defaults, parse_version, short


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


#: ``--commit-order``'s choices (typer shows their values).
CommitOrder = CommitOrderInput


def policy_name(value):
    """--policy names are case-insensitive (writeset, Writeset-Session, RECORDED): normalised once,
    here, to MySQL's spelling; an unknown name is left for the command's own one-line error."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [policy_name(v) for v in value]
    canonical = {p.value.lower(): p for p in CLOCKS}
    return canonical.get(value.strip().lower().replace("-", "_"), value)


#: The help panels: a command's own options first, then the shared groups, each in its own table
#: (rich sizes the columns of each panel apart, so a long metavar in one group does not squeeze
#: the help of another into "…").
CLOCK_PANEL = "Dependency clock"
WINDOW_PANEL = "Binlog window (as mysqlbinlog)"
SERVER_PANEL = "Server (live mode)"

FILES_HELP = ("Binlog or relay-log files in order (.gz/.zst too), a directory, a binlog.index or relay-log "
              ".index file, or a glob.")
FilesArg = Annotated[Optional[list[str]], typer.Argument(help=FILES_HELP)]
RequiredFilesArg = Annotated[list[str], typer.Argument(help=FILES_HELP)]


def format_option(help: str):
    """``--format`` (text or json) with a command's own help."""
    return Annotated[OutputFormat, typer.Option("--format", help=help)]


FormatOpt = format_option("text or json.")
JobsOpt = Annotated[int, typer.Option("--jobs", "-j", metavar="N", min=0, max=1024, help="Read the files on this many "
                                      "processes (0 = one per CPU core); the result is the same.")]
ProgressOpt = Annotated[bool, typer.Option(help="Show a progress bar on a terminal.")]
CostModelOpt = Annotated[Optional[str], typer.Option(
    "--cost-model", metavar="FILE", help="JSON file of apply cost coefficients (see `lagadvisor calibrate`).")]
CoresOpt = Annotated[Optional[int], typer.Option(metavar="N", help="CPU cores of the replica (default: the cost "
                                                     "model's).", min=CORES_RANGE[0], max=CORES_RANGE[1])]
FromOpt = Annotated[Optional[str], typer.Option(
    "--from", metavar="FILE", rich_help_panel=SERVER_PANEL,
    help="With --host: stream the server's binlogs from this file (e.g. binlog.000042) to the newest, over "
         "the replication protocol (needs REPLICATION SLAVE and REPLICATION CLIENT).")]
ToOpt = Annotated[Optional[str], typer.Option("--to", metavar="FILE", rich_help_panel=SERVER_PANEL,
                                              help="With --from: the last file to stream.")]
HistoryOpt = Annotated[Optional[int], typer.Option(
    "--history-size", metavar="N", min=HISTORY_SIZE_RANGE[0], max=HISTORY_SIZE_RANGE[1],
    help="binlog_transaction_dependency_history_size of the source (default: the server "
         f"version's default: {describe_history_defaults()}).")]
CommitOrderOpt = Annotated[CommitOrder, typer.Option(
    "--commit-order",
    help="Commit-order parent fed to WRITESET: 'recorded' (binlog written under COMMIT_ORDER), "
         "'serial' (the previous transaction: the writeset-only answer), 'flush-groups' (estimate "
         "for binlogs written under WRITESET), or 'auto' (chosen from the detected policy).")]
TargetVersionOpt = Annotated[Optional[str], typer.Option(
    "--target-version", metavar="VERSION", help="Review an upgrade of the source and replica to this MySQL version (8.4, 9.7, 26.7, "
                             "8.4.3): what it changes for this workload (the clock, the defaults, removed "
                             f"settings; the {short(WRITESET_ONLY_SINCE)}+ sources track WRITESET only), the lag "
                             "before and after, what limits WRITESET, and the steps in order.")]


def parse_version_option(option: str, text: str | None) -> tuple[int, int, int] | None:
    """A version option's value (None: not given); a bad value is a one-line usage error."""
    from ..errors import ConfigError

    if text is None:
        return None
    try:
        return parse_version(text)
    except ValueError:
        raise ConfigError(f"{option} {text}: expected a MySQL version such as 8.4, 9.7, 26.7 or 8.4.3") from None


SchemaOpt = Annotated[Optional[str], typer.Option(
    "--schema", metavar="FILE", help="Table definitions: a `mysqldump --no-data` file (or any file of CREATE TABLE "
                     "statements). Needed for tables created before the first binlog.")]


#: What ``--host`` reads, for the commands that read table definitions (each command that reads
#: something else says so with :func:`grouped`'s ``host``).
HOST_READS_SCHEMA = ("Read table definitions and sizes from this server's information_schema (read-only; "
                     "needs SELECT).")


def host_help(reads: str) -> str:
    """``--host``'s help: what the command reads from the server, then how the connection options
    are found (the same for every command). Square brackets are escaped: help is rich markup."""
    return (f"{reads} Options are read as the mysql client reads them: option files (\\[client], "
            "\\[lagadvisor]), --login-path, then the command line. The password comes from -p (prompt), "
            "LAGADVISOR_PASSWORD or MYSQL_PWD, an option file or the login path; never from the command line.")


@dataclass(frozen=True)
class ClockArgs:
    """How the clocks are re-derived: history size, commit-order input, table definitions."""

    PANEL: ClassVar[str] = CLOCK_PANEL

    history_size: HistoryOpt = None
    commit_order: CommitOrderOpt = CommitOrder.AUTO
    schema: SchemaOpt = None


@dataclass(frozen=True)
class WindowArgs:
    """mysqlbinlog's window options."""

    PANEL: ClassVar[str] = WINDOW_PANEL

    start_position: Annotated[Optional[int], typer.Option(
        "--start-position", metavar="POS", help="As mysqlbinlog: start at the first transaction at or after this byte offset "
                                 "of the first file.")] = None
    stop_position: Annotated[Optional[int], typer.Option(
        "--stop-position", metavar="POS", help="As mysqlbinlog: stop at the first event at or after this byte offset of the "
                                "last file (a transaction begun before it is read to its end).")] = None
    start_datetime: Annotated[Optional[str], typer.Option(
        "--start-datetime", metavar="TIME", help="As mysqlbinlog: start at the first transaction at or after the first event "
                                 "stamped at or after this local time ('2026-11-22 02:00:00').")] = None
    stop_datetime: Annotated[Optional[str], typer.Option(
        "--stop-datetime", metavar="TIME", help="As mysqlbinlog: stop at the first event stamped at or after this local "
                                "time.")] = None


@dataclass(frozen=True)
class ServerArgs:
    """The server to read from and how to reach it, as the mysql client takes them."""

    PANEL: ClassVar[str] = SERVER_PANEL

    host: Annotated[Optional[str], typer.Option(
        "-h", "--host", metavar="HOST", help=host_help(HOST_READS_SCHEMA))] = None
    port: Annotated[Optional[int], typer.Option("-P", "--port", metavar="PORT", help="Server port (default: option files, "
                                                                     "else 3306).")] = None
    user: Annotated[Optional[str], typer.Option("-u", "--user", metavar="USER", help="Server user.")] = None
    ask_password: Annotated[bool, typer.Option(
        "-p", "--password", "--ask-password",
        help="Prompt for the password (as the mysql client's -p; a password value on the command line "
             "is refused).")] = False
    defaults_file: Annotated[Optional[str], typer.Option(
        "--defaults-file", metavar="FILE", help="Read only this option file (and the login file) instead of the default "
                                "ones.")] = None
    socket: Annotated[Optional[str], typer.Option(
        "-S", "--socket", metavar="PATH", help="Unix socket to connect through (host localhost); also connects without "
                               "--host.")] = None
    login_path: Annotated[Optional[str], typer.Option(
        "--login-path", metavar="NAME", help="Read this group of ~/.mylogin.cnf (mysql_config_editor; "
                             "$MYSQL_TEST_LOGIN_FILE); also connects without --host.")] = None
    defaults_extra_file: Annotated[Optional[str], typer.Option(
        "--defaults-extra-file", metavar="FILE", help="Read this option file after the global ones, before ~/.my.cnf.")] = None
    no_defaults: Annotated[bool, typer.Option("--no-defaults", help="Read no option files.")] = False
    ssl_ca: Annotated[Optional[str], typer.Option("--ssl-ca", metavar="FILE", help="CA certificate for TLS.")] = None
    ssl_cert: Annotated[Optional[str], typer.Option("--ssl-cert", metavar="FILE", help="Client certificate for TLS.")] = None
    ssl_key: Annotated[Optional[str], typer.Option("--ssl-key", metavar="FILE", help="Client key for TLS.")] = None
    ssl_mode: Annotated[Optional[str], typer.Option(
        "--ssl-mode", metavar="MODE", help="As the mysql client: DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY "
                           "(default: VERIFY_CA with --ssl-ca, else PREFERRED).")] = None


GROUPS = (ClockArgs, WindowArgs, ServerArgs)


def grouped(func=None, *, host: str | None = None):
    """``func`` as typer sees it: each parameter typed with a group of :data:`GROUPS` replaced, in
    place, by the group's options (shown in the group's help panel); called with the group built
    from their values. ``host``: what this command reads from the server, for ``--host``'s help
    (default :data:`HOST_READS_SCHEMA`)."""
    if func is None:
        return functools.partial(grouped, host=host)
    hints = typing.get_type_hints(func, include_extras=True)
    params: list[inspect.Parameter] = []
    groups: dict[str, tuple[type, list[str]]] = {}
    for p in inspect.signature(func).parameters.values():
        t = hints.get(p.name, p.annotation)
        if t in GROUPS:
            fields = typing.get_type_hints(t, include_extras=True)
            names = [f.name for f in dataclasses.fields(t)]
            params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                         annotation=_in_panel(fields[n], t.PANEL, host if n == "host" else None))
                       for n, f in zip(names, dataclasses.fields(t))]
            groups[p.name] = (t, names)
        else:
            params.append(p.replace(annotation=t))
    params = _server_options_together(params)

    @functools.wraps(func)
    def command(*args, **kwargs):
        for name, (cls, names) in groups.items():
            kwargs[name] = cls(**{n: kwargs.pop(n) for n in names})
        return func(*args, **kwargs)

    command.__signature__ = inspect.Signature(params, return_annotation=None)
    command.__annotations__ = {p.name: p.annotation for p in params}
    return command


def _in_panel(annotation, panel: str, reads: str | None):
    """A copy of an ``Annotated[T, typer.Option(...)]`` shown in ``panel``; with ``reads``, its help
    is :func:`host_help` of it (the group's own declaration is left as it is)."""
    base, *meta = typing.get_args(annotation)
    info = copy.copy(meta[0])
    info.rich_help_panel = panel
    if reads is not None:
        info.help = host_help(reads)
    return Annotated[(base, info, *meta[1:])]


def _server_options_together(params: list[inspect.Parameter]) -> list[inspect.Parameter]:
    """The command's own options of the server panel (--from, --to) moved to just before the
    server group's, so the panels print in the order: the command's, the clock, the window, the
    server (typer orders panels by their first option)."""
    def panel(p):
        meta = typing.get_args(p.annotation)[1:]
        return getattr(meta[0], "rich_help_panel", None) if meta else None

    own = [p for p in params if panel(p) == SERVER_PANEL and p.name not in ServerArgs.__dataclass_fields__]
    rest = [p for p in params if p not in own]
    at = next((k for k, p in enumerate(rest) if p.name == "host"), len(rest))
    return rest[:at] + own + rest[at:]
