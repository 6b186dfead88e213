"""Command line: thin typer commands that build options, call the core and render.

Domain errors become one line on stderr and exit code 2 here, and only here.
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

from . import __version__
from .errors import LagAdvisorError

app = typer.Typer(
    name="lagadvisor",
    help="Why does my MySQL replica lag? Reads binlog files and answers from the dependency "
         "information MySQL wrote into them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True, highlight=False)

EXIT_BAD_INPUT = 2


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


def _fail(err: LagAdvisorError) -> typer.Exit:
    err_console.print(f"lagadvisor: error: {err}", soft_wrap=True)
    return typer.Exit(EXIT_BAD_INPUT)


class _Progress:
    """A byte-based progress bar over the input files, only when stderr is a terminal."""

    def __init__(self, paths: list[str], enabled: bool) -> None:
        import os

        self.enabled = enabled and err_console.is_terminal
        self.sizes = {p: getattr(p, "size", None) or (os.path.getsize(p) if os.path.exists(p) else 0)
                      for p in paths}
        self.done_before: dict[str, int] = {}
        acc = 0
        for p in paths:
            self.done_before[p] = acc
            acc += self.sizes[p]
        self.total = acc
        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                 TransferSpeedColumn(), TimeRemainingColumn(), console=err_console,
                                 transient=True, disable=not self.enabled)
        self.task = self.progress.add_task("reading", total=self.total)
        self._n = 0

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)

    def at(self, file: str, offset: int) -> None:
        """Progress by position (the native reader reports it every few thousand transactions)."""
        self.progress.update(self.task, completed=self.done_before.get(file, 0) + offset,
                             description=file.rsplit("/", 1)[-1])

    def update(self, summary, trx) -> None:
        if not self.enabled:
            return
        self._n += 1
        if self._n % 256 == 0:
            self.progress.update(self.task, completed=self.done_before.get(trx.file, 0) + trx.end_offset,
                                 description=trx.file.rsplit("/", 1)[-1])


def _policy_name(value):
    """--policy names are case-insensitive (writeset, Writeset-Session, RECORDED): normalised once,
    here, to MySQL's spelling; an unknown name is left for the command's own one-line error."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [_policy_name(v) for v in value]
    canonical = {"recorded": "recorded", "commit_order": "COMMIT_ORDER", "writeset": "WRITESET",
                 "writeset_session": "WRITESET_SESSION"}
    return canonical.get(value.strip().lower().replace("-", "_"), value)


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


class CommitOrder(str, Enum):
    auto = "auto"
    recorded = "recorded"
    serial = "serial"
    flush_groups = "flush-groups"


from .versions import describe_history_defaults  # noqa: E402  (import-free module)

HistoryOpt = Annotated[Optional[int], typer.Option(
    "--history-size", min=1, max=1_000_000,
    help="binlog_transaction_dependency_history_size of the source (default: the server "
         f"version's default: {describe_history_defaults()}).")]
CommitOrderOpt = Annotated[CommitOrder, typer.Option(
    "--commit-order",
    help="Commit-order parent fed to WRITESET: 'recorded' (binlog written under COMMIT_ORDER), "
         "'serial' (the previous transaction: the writeset-only answer), 'flush-groups' (estimate "
         "for binlogs written under WRITESET), or 'auto' (chosen from the detected policy).")]
SchemaOpt = Annotated[Optional[str], typer.Option(
    "--schema", help="Table definitions: a `mysqldump --no-data` file (or any file of CREATE TABLE "
                     "statements). Needed for tables created before the first binlog.")]
HostOpt = Annotated[Optional[str], typer.Option(
    "-h", "--host", help="Read table definitions from this server's information_schema (read-only; "
                         "needs SELECT). Options are read as the mysql client reads them: option "
                         "files ([client], [lagadvisor]), --login-path, then the command line. The "
                         "password comes from -p (prompt), LAGADVISOR_PASSWORD or MYSQL_PWD, an "
                         "option file or the login path; never from the command line.")]
PortOpt = Annotated[Optional[int], typer.Option("-P", "--port", help="Server port (default: option files, "
                                                                     "else 3306).")]
UserOpt = Annotated[Optional[str], typer.Option("-u", "--user", help="Server user.")]
AskPasswordOpt = Annotated[bool, typer.Option(
    "-p", "--password", "--ask-password",
    help="Prompt for the password (as the mysql client's -p; a password value on the command line "
         "is refused).")]
DefaultsFileOpt = Annotated[Optional[str], typer.Option(
    "--defaults-file", help="Read only this option file (and the login file) instead of the default ones.")]
SocketOpt = Annotated[Optional[str], typer.Option(
    "-S", "--socket", help="Unix socket to connect through (host localhost); also connects without --host.")]
LoginPathOpt = Annotated[Optional[str], typer.Option(
    "--login-path", help="Read this group of ~/.mylogin.cnf (mysql_config_editor; $MYSQL_TEST_LOGIN_FILE); "
                         "also connects without --host.")]
DefaultsExtraFileOpt = Annotated[Optional[str], typer.Option(
    "--defaults-extra-file", help="Read this option file after the global ones, before ~/.my.cnf.")]
NoDefaultsOpt = Annotated[bool, typer.Option("--no-defaults", help="Read no option files.")]
SslCaOpt = Annotated[Optional[str], typer.Option("--ssl-ca", help="CA certificate for TLS.")]
SslCertOpt = Annotated[Optional[str], typer.Option("--ssl-cert", help="Client certificate for TLS.")]
SslKeyOpt = Annotated[Optional[str], typer.Option("--ssl-key", help="Client key for TLS.")]
SslModeOpt = Annotated[Optional[str], typer.Option(
    "--ssl-mode", help="As the mysql client: DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY "
                       "(default: VERIFY_CA with --ssl-ca, else PREFERRED).")]


def _server_options(host, port, user, ask_password, defaults_file, ssl_ca, ssl_cert=None, ssl_key=None,
                    ssl_mode=None, *, socket=None, login_path=None, defaults_extra_file=None, no_defaults=False):
    """The server to read from, resolved as the mysql client would (connection.resolve), or None
    when none was asked for: -h, -S or --login-path asks; a host in an option file alone does not
    (so a ~/.my.cnf never turns an offline analysis into a connection); a host or socket in a
    --defaults-file or --defaults-extra-file named on the command line asks too."""
    from .connection import ClientArgs, resolve
    from .schema.live import ServerOptions, password_from_env, prompt_password
    from .tls import Tls

    if not (host or socket or login_path or defaults_file or defaults_extra_file):
        return None
    ssl = {k: v for k, v in (("ssl-ca", ssl_ca), ("ssl-cert", ssl_cert), ("ssl-key", ssl_key),
                             ("ssl-mode", ssl_mode)) if v is not None}
    args = ClientArgs(host, port, user, socket, password_from_env(), login_path, defaults_file,
                      defaults_extra_file, no_defaults, ssl)
    r = resolve(args)
    named = [f for f in (defaults_file, defaults_extra_file) if f]
    if not (host or socket or login_path) and not any(
            r.sources.get(k, "").startswith(f"{f} [") for k in ("host", "socket") for f in named):
        return None  # an option file named on the command line without a host or socket in it
    tls = Tls.from_options(r.ssl.get("ssl-mode"), r.ssl.get("ssl-ca"), r.ssl.get("ssl-cert"), r.ssl.get("ssl-key"))
    password = r.password
    if ask_password:
        password = prompt_password(r.user, r.socket or r.host)
    return ServerOptions(r.host, r.port, r.user, password, None, tls, socket=r.socket)


def _clock_options(history_size, commit_order, schema, server=None):
    from .depgraph.pipeline import ClockOptions
    from .errors import ConfigError
    from .schema.ddl import read_schema_path
    from .schema.live import catalog_from_server

    catalog = None
    if server is not None:
        if schema:
            raise ConfigError("give either --schema or a server (--host, --socket, --login-path) for the "
                              "table definitions, not both")
        catalog = catalog_from_server(server)
    elif schema:
        loaded = read_schema_path(schema)
        for w in loaded.warnings(schema):
            err_console.print(f"lagadvisor: warning: {w}", soft_wrap=True)
        catalog = loaded.catalog
    return ClockOptions(history_size=history_size, commit_order=commit_order.value, catalog=catalog)


_FILES_HELP = ("Binlog or relay-log files in order (.gz/.zst too), a directory, a binlog.index or relay-log "
               ".index file, or a glob.")

StartPositionOpt = Annotated[Optional[int], typer.Option(
    "--start-position", help="As mysqlbinlog: start at the first transaction at or after this byte offset of the "
                             "first file.")]
StopPositionOpt = Annotated[Optional[int], typer.Option(
    "--stop-position", help="As mysqlbinlog: stop at the first event at or after this byte offset of the last file "
                            "(a transaction begun before it is read to its end).")]
StartDatetimeOpt = Annotated[Optional[str], typer.Option(
    "--start-datetime", help="As mysqlbinlog: start at the first transaction at or after the first event stamped "
                             "at or after this local time ('2026-11-22 02:00:00').")]
StopDatetimeOpt = Annotated[Optional[str], typer.Option(
    "--stop-datetime", help="As mysqlbinlog: stop at the first event stamped at or after this local time.")]


def _windowed(opts, files, start_position, stop_position, start_datetime, stop_datetime, live: bool = False):
    """The clock options with mysqlbinlog's window options applied to ``files``."""
    from .binlog.window import windows_for
    from .errors import ConfigError

    w = windows_for(list(files), start_position, stop_position, start_datetime, stop_datetime)
    if w is not None and live:
        raise ConfigError("--start-position/--stop-position/--start-datetime/--stop-datetime apply to binlog files, "
                          "not to --from streaming")
    opts.windows = w
    return opts


FromOpt = Annotated[Optional[str], typer.Option(
    "--from", help="With --host: stream the server's binlogs from this file (e.g. binlog.000042) to the "
                   "newest, over the replication protocol (needs REPLICATION SLAVE and REPLICATION CLIENT).")]
ToOpt = Annotated[Optional[str], typer.Option("--to", help="With --from: the last file to stream.")]


def _distinct(files) -> list[str]:
    """The input files (:func:`.inputs.resolve`: files, directories, index files, globs), each
    once: a file named twice (also through a link or another path) is refused in one line."""
    from .inputs import resolve

    return resolve(files)


def _output_path(output, inputs) -> None:
    """-o/--output: refused in one line before anything is read when it names a directory, sits in
    a missing directory, or is one of the input files (writing would truncate it)."""
    import os

    from .errors import ConfigError

    if not output:
        return
    if os.path.isdir(output):
        raise ConfigError(f"--output {output}: is a directory")
    parent = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(parent):
        raise ConfigError(f"--output {output}: the directory {parent} does not exist")
    if os.path.exists(output):
        st = os.stat(output)
        for f in inputs:
            try:
                fs = os.stat(f)
            except OSError:
                continue
            if (fs.st_dev, fs.st_ino) == (st.st_dev, st.st_ino):
                raise ConfigError(f"--output {output}: is the input file {f} (it would be overwritten)")


def _inputs(files, from_file, to_file, server):
    """Local files, or the server's binlogs streamed from --from (live mode)."""
    from .errors import ConfigError

    if from_file is None:
        if to_file is not None:
            raise ConfigError("--to needs --from")
        if not files:
            raise ConfigError("give binlog files, or --host with --from FILE to stream from a server")
        return _distinct(files)
    if server is None:
        raise ConfigError("--from needs --host (the server to stream binlogs from)")
    if files:
        raise ConfigError("give either binlog files or --from, not both")
    from .binlog.stream import list_files, pymysql_settings

    settings = pymysql_settings(server.host, server.port, server.user, server.password,
                                option_file=server.option_file, tls=server.tls, socket=server.socket)
    return list_files(settings, from_file, to_file)


@app.command()
def analyze(
    files: Annotated[Optional[list[str]], typer.Argument(help=_FILES_HELP)] = None,
    *,
    from_file: FromOpt = None,
    to_file: ToOpt = None,
    output_format: Annotated[OutputFormat, typer.Option("--format", help="text or json.")] = OutputFormat.text,
    history_size: HistoryOpt = None,
    commit_order: CommitOrderOpt = CommitOrder.auto,
    schema: SchemaOpt = None,
    start_position: StartPositionOpt = None,
    stop_position: StopPositionOpt = None,
    start_datetime: StartDatetimeOpt = None,
    stop_datetime: StopDatetimeOpt = None,
    host: HostOpt = None,
    port: PortOpt = None,
    user: UserOpt = None,
    ask_password: AskPasswordOpt = False,
    defaults_file: DefaultsFileOpt = None,
    socket: SocketOpt = None,
    login_path: LoginPathOpt = None,
    defaults_extra_file: DefaultsExtraFileOpt = None,
    no_defaults: NoDefaultsOpt = False,
    ssl_ca: SslCaOpt = None,
    ssl_cert: SslCertOpt = None,
    ssl_key: SslKeyOpt = None,
    ssl_mode: SslModeOpt = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, help="Read the files on this many "
                                      "processes (0 = one per CPU core); the result is the same.")] = 1,
    progress: Annotated[bool, typer.Option(help="Show a progress bar on a terminal.")] = True,
) -> None:
    """Summarise binlog files: server, transactions, events, time span, the parallelism the
    recorded clock allows, and what COMMIT_ORDER, WRITESET and WRITESET_SESSION would allow."""
    from .report.analysis import analyze as run
    from .report.console import render_analysis
    from .report.jsonout import analysis_json

    try:
        server = _server_options(host, port, user, ask_password, defaults_file, ssl_ca, ssl_cert, ssl_key,
                                     ssl_mode, socket=socket, login_path=login_path,
                                     defaults_extra_file=defaults_extra_file, no_defaults=no_defaults)
        files = _inputs(files, from_file, to_file, server)
        opts = _windowed(_clock_options(history_size, commit_order, schema, server), files, start_position, stop_position, start_datetime, stop_datetime,
                         live=from_file is not None)
        if jobs != 1 and len(files) > 1 and not from_file:
            from .report.parallel import analyze_parallel

            result = analyze_parallel(files, opts, jobs)
        else:
            with _Progress(files, progress) as bar:
                result = run(files, opts, on_progress=bar.at if bar.enabled else None)
    except LagAdvisorError as err:
        raise _fail(err) from None
    if output_format == OutputFormat.json:
        print(json.dumps(analysis_json(result), indent=2, sort_keys=True))
    else:
        render_analysis(result, Console(highlight=False))
    for w in result.warnings:
        err_console.print(f"lagadvisor: warning: {w}", soft_wrap=True)
    from .native import unavailable_notice

    notice = unavailable_notice()
    if notice:
        err_console.print(f"lagadvisor: note: {notice}", soft_wrap=True)


class ExportFormat(str, Enum):
    jsonl = "jsonl"
    csv = "csv"


@app.command()
def export(
    files: Annotated[list[str], typer.Argument(help=_FILES_HELP)],
    *,
    output_format: Annotated[ExportFormat, typer.Option("--format", help="jsonl or csv.")] = ExportFormat.jsonl,
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
    keys: Annotated[bool, typer.Option("--keys", help="Include the key values of every row image "
                                                      "(JSONL only).")] = False,
    history_size: HistoryOpt = None,
    commit_order: CommitOrderOpt = CommitOrder.auto,
    schema: SchemaOpt = None,
    start_position: StartPositionOpt = None,
    stop_position: StopPositionOpt = None,
    start_datetime: StartDatetimeOpt = None,
    stop_datetime: StopDatetimeOpt = None,
    host: HostOpt = None,
    port: PortOpt = None,
    user: UserOpt = None,
    ask_password: AskPasswordOpt = False,
    defaults_file: DefaultsFileOpt = None,
    socket: SocketOpt = None,
    login_path: LoginPathOpt = None,
    defaults_extra_file: DefaultsExtraFileOpt = None,
    no_defaults: NoDefaultsOpt = False,
    ssl_ca: SslCaOpt = None,
    ssl_cert: SslCertOpt = None,
    ssl_key: SslKeyOpt = None,
    ssl_mode: SslModeOpt = None,
) -> None:
    """Write one record per transaction, in binlog order, with the recorded clock and every
    policy's re-derived last_committed ("computed") and WRITESET's fallback reason."""
    from .depgraph.pipeline import prepare
    from .errors import ConfigError
    from .report.records import CsvWriter, export_records, jsonl_line

    try:
        if keys and output_format == ExportFormat.csv:
            raise ConfigError("--keys: key values are written in JSONL only (CSV has one column per field, "
                              "no place for a row's keys); use --format jsonl")
        files = _distinct(files)
        _output_path(output, files)
        out = open(output, "w", encoding="utf-8") if output else sys.stdout
    except OSError as err:
        raise _fail(LagAdvisorError(f"--output {output}: cannot write: {err.strerror or err}")) from None
    except LagAdvisorError as err:
        raise _fail(err) from None
    try:
        opts = _clock_options(history_size, commit_order, schema, _server_options(
            host, port, user, ask_password, defaults_file, ssl_ca, ssl_cert, ssl_key, ssl_mode, socket=socket,
            login_path=login_path, defaults_extra_file=defaults_extra_file, no_defaults=no_defaults))
        opts = _windowed(opts, files, start_position, stop_position, start_datetime, stop_datetime)
        run = prepare(files, opts)
        writer = CsvWriter(out) if output_format == ExportFormat.csv else None
        write = out.write
        emit = writer.write if writer is not None else (lambda rec: write(jsonl_line(rec) + "\n"))
        # no bar over records written to the same terminal
        with _Progress(files, out is not sys.stdout or not out.isatty()) as bar:
            notes = export_records(files, opts, run, emit, keys=keys and writer is None,
                                   on_progress=bar.at if bar.enabled else None,
                                   on_transaction=(lambda t: bar.update(None, t)) if bar.enabled else None)
    except LagAdvisorError as err:
        out.flush()
        raise _fail(err) from None
    except BrokenPipeError:
        sys.stderr.close()
        raise typer.Exit(0)
    finally:
        if output:
            out.close()
    err_console.print(f"lagadvisor: clock written by {run.written.name} ({run.written.evidence}); "
                      f"history size {run.history_size:,}; commit-order input {run.commit_order}",
                      soft_wrap=True)
    for w in notes:
        err_console.print(f"lagadvisor: warning: {w}", soft_wrap=True)


class Mode(str, Enum):
    logical_clock = "logical_clock"
    database = "database"
    mariadb_conservative = "mariadb_conservative"
    mariadb_optimistic = "mariadb_optimistic"
    mariadb_aggressive = "mariadb_aggressive"


def _int_list(text: str, what: str) -> list[int]:
    from .errors import ConfigError

    items = text.split(",")
    for k, x in enumerate(items, 1):
        if not x.strip():
            raise ConfigError(f"{what} {text}: item {k} of {len(items)} is empty")
    try:
        vals = [int(x) for x in items]
    except ValueError:
        raise ConfigError(f"{what}: expected a comma-separated list of integers, got {text!r}") from None
    if any(v < 0 or v > 1024 for v in vals):
        raise ConfigError(f"{what} {text}: values must be between 0 and 1024")
    return vals


@app.command()
def simulate(
    files: Annotated[list[str], typer.Argument(help=_FILES_HELP)],
    *,
    workers: Annotated[str, typer.Option(help="replica_parallel_workers values to simulate "
                                              "(0 = single-threaded applier).")] = "1,2,4,8,16",
    policy: Annotated[Optional[list[str]], typer.Option(
        callback=_policy_name,
        help="Clocks to simulate: COMMIT_ORDER, WRITESET, WRITESET_SESSION (re-derived) or 'recorded'; "
             "any case. "
             "Repeat the option for several. Default: the three policies.")] = None,
    preserve_commit_order: Annotated[str, typer.Option(help="replica_preserve_commit_order: on or off.")] = "on",
    durable: Annotated[bool, typer.Option("--durable/--relaxed",
        help="Replica durability: --durable = sync_binlog=1 and innodb_flush_log_at_trx_commit=1 "
             "(every commit group pays a flush); --relaxed = 0 and 2.")] = True,
    cost_model: Annotated[Optional[str], typer.Option("--cost-model",
        help="JSON file of apply cost coefficients (see `lagadvisor calibrate`).")] = None,
    cores: Annotated[Optional[int], typer.Option(help="CPU cores of the replica (default: the cost "
                                                     "model's).", min=1, max=4096)] = None,
    catch_up: Annotated[bool, typer.Option("--catch-up",
        help="All transactions are already in the relay log (a stopped replica catching up); "
             "default: they arrive at the source's commit timestamps.")] = False,
    lag_threshold: Annotated[float, typer.Option(help="Seconds; report time spent above it.")] = 1.0,
    window: Annotated[str, typer.Option(help="Lag per time window of the source's timeline: a duration "
                                             "(15m, 1h, 1d), off, or auto (1h-style windows for inputs "
                                             "longer than 2 hours).")] = "auto",
    mode: Annotated[Mode, typer.Option(help="Applier: logical_clock (MySQL), database (5.6 "
                                            "DATABASE mode), mariadb_conservative, mariadb_optimistic (MariaDB's default since 10.5) or "
                                            "mariadb_aggressive.")] = Mode.logical_clock,
    output_format: Annotated[OutputFormat, typer.Option("--format", help="text or json.")] = OutputFormat.text,
    history_size: HistoryOpt = None,
    commit_order: CommitOrderOpt = CommitOrder.auto,
    schema: SchemaOpt = None,
    start_position: StartPositionOpt = None,
    stop_position: StopPositionOpt = None,
    start_datetime: StartDatetimeOpt = None,
    stop_datetime: StopDatetimeOpt = None,
    host: HostOpt = None,
    port: PortOpt = None,
    user: UserOpt = None,
    ask_password: AskPasswordOpt = False,
    defaults_file: DefaultsFileOpt = None,
    socket: SocketOpt = None,
    login_path: LoginPathOpt = None,
    defaults_extra_file: DefaultsExtraFileOpt = None,
    no_defaults: NoDefaultsOpt = False,
    ssl_ca: SslCaOpt = None,
    ssl_cert: SslCertOpt = None,
    ssl_key: SslKeyOpt = None,
    ssl_mode: SslModeOpt = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, max=1024, help="Read the files on this many "
                                      "processes (0 = one per CPU core); the result is the same.")] = 1,
) -> None:
    """Simulate the replica's multi-threaded applier for each policy and worker count: apply
    time, speedup, lag against the source's commit timeline, worker utilisation."""
    from dataclasses import replace as dc_replace

    from .depgraph.pipeline import prepare
    from .depgraph.policies import POLICIES
    from .errors import ConfigError
    from .sim.facts import read_facts
    from .sim.model import CostModel, ReplicaConfig
    from .sim.run import sweep, window_for
    from .sim.windows import parse_window

    try:
        wl = _int_list(workers, "--workers")
        files = _distinct(files)
        _finite(lag_threshold, "--lag-threshold")
        if mode.value.startswith("mariadb"):
            # MariaDB schedules by its group-commit ids: the policy clocks do not apply
            if policy and set(policy) != {"recorded"}:
                raise ConfigError(f"--policy has no effect with --mode {mode.value} (MariaDB schedules by "
                                  "commit_id groups)")
            policy = ["recorded"]
        pols = policy or list(POLICIES)
        for p in pols:
            if p not in ("recorded", *POLICIES):
                raise ConfigError(f"--policy {p}: expected one of recorded, {', '.join(POLICIES)}")
        if preserve_commit_order not in ("on", "off"):
            raise ConfigError("--preserve-commit-order: expected on or off")
        cost = CostModel.from_file(cost_model) if cost_model else CostModel()
        if cores:
            cost = dc_replace(cost, cores=cores)
        opts = _clock_options(history_size, commit_order, schema, _server_options(
            host, port, user, ask_password, defaults_file, ssl_ca, ssl_cert, ssl_key, ssl_mode, socket=socket,
            login_path=login_path, defaults_extra_file=defaults_extra_file, no_defaults=no_defaults))
        opts = _windowed(opts, files, start_position, stop_position, start_datetime, stop_datetime)
        run = prepare(files, opts)
        if jobs != 1 and len(files) > 1:
            from .sim.parallel import read_facts_parallel

            facts = read_facts_parallel(files, opts, run, jobs)
        else:
            facts = read_facts(files, opts, run)
        cfg = ReplicaConfig(0, preserve_commit_order == "on", durable, mode=mode.value)
        window_s = window_for(facts, parse_window(window))
        rows = sweep(facts, pols, wl, cfg, cost, catch_up=catch_up, threshold_s=lag_threshold,
                     window_s=window_s)
        if mode.value.startswith("mariadb"):
            for r in rows:  # one row per worker count, named by the mode that schedules it
                r.policy = mode.value
    except LagAdvisorError as err:
        raise _fail(err) from None
    from .report.commands import render_simulate, simulate_doc

    if output_format == OutputFormat.json:
        print(json.dumps(simulate_doc(rows, transactions=len(facts), catch_up=catch_up, durable=durable,
                                      mode=mode.value, cost=cost, window_s=window_s, written_by=run.written.name),
                         indent=2, sort_keys=True))
    else:
        render_simulate(rows, Console(highlight=False), transactions=len(facts), durable=durable,
                        preserve_commit_order=preserve_commit_order, cores=cost.cores, catch_up=catch_up)
    _read_warnings(run.summaries)


def _finite(value: float, what: str) -> None:
    import math

    from .errors import ConfigError

    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{what} {value}: expected a finite number of seconds >= 0")


def _read_warnings(summaries) -> None:
    """What reading the files reported (a truncated tail: the partial result was used)."""
    for s in summaries:
        for w in s.warnings:
            err_console.print(f"lagadvisor: warning: {w}", soft_wrap=True)


@app.command()
def graph(
    files: Annotated[list[str], typer.Argument(help="Binlog files, in order.")],
    *,
    policy: Annotated[str, typer.Option(callback=_policy_name, help="Clock: recorded, COMMIT_ORDER, WRITESET or "
                                                                    "WRITESET_SESSION (any case).")] = "WRITESET",
    top: Annotated[int, typer.Option(help="How many hot rows and tables to list.", min=1)] = 10,
    range_: Annotated[str, typer.Option("--range", help="Transactions (0-based, in binlog order) kept for "
                                                        "export, as START:END.")] = "0:2000",
    graphml: Annotated[Optional[str], typer.Option(help="Write the kept range as GraphML.")] = None,
    dot: Annotated[Optional[str], typer.Option(help="Write the kept range as Graphviz DOT.")] = None,
    output_format: Annotated[OutputFormat, typer.Option("--format", help="text or json.")] = OutputFormat.text,
    history_size: HistoryOpt = None,
    commit_order: CommitOrderOpt = CommitOrder.auto,
    schema: SchemaOpt = None,
    start_position: StartPositionOpt = None,
    stop_position: StopPositionOpt = None,
    start_datetime: StartDatetimeOpt = None,
    stop_datetime: StopDatetimeOpt = None,
    host: HostOpt = None,
    port: PortOpt = None,
    user: UserOpt = None,
    ask_password: AskPasswordOpt = False,
    defaults_file: DefaultsFileOpt = None,
    socket: SocketOpt = None,
    login_path: LoginPathOpt = None,
    defaults_extra_file: DefaultsExtraFileOpt = None,
    no_defaults: NoDefaultsOpt = False,
    ssl_ca: SslCaOpt = None,
    ssl_cert: SslCertOpt = None,
    ssl_key: SslKeyOpt = None,
    ssl_mode: SslModeOpt = None,
) -> None:
    """The dependency graph: critical path (transactions and estimated apply time), width, the
    rows and tables that create the most dependencies, export to GraphML/DOT."""
    from .depgraph.graph import build_graph, hot_rows_max, write_graph
    from .depgraph.pipeline import prepare
    from .errors import ConfigError
    from .sim.model import CostModel

    try:
        if policy not in ("recorded", "COMMIT_ORDER", "WRITESET", "WRITESET_SESSION"):
            raise ConfigError(f"--policy {policy}: expected recorded, COMMIT_ORDER, WRITESET or WRITESET_SESSION")
        try:
            a, b = (int(x) for x in range_.split(":"))
        except ValueError:
            raise ConfigError(f"--range {range_}: expected START:END") from None
        if a < 0 or b <= a:
            raise ConfigError(f"--range {range_}: expected 0 <= START < END (transactions START to END-1)")
        files = _distinct(files)
        opts = _clock_options(history_size, commit_order, schema, _server_options(
            host, port, user, ask_password, defaults_file, ssl_ca, ssl_cert, ssl_key, ssl_mode, socket=socket,
            login_path=login_path, defaults_extra_file=defaults_extra_file, no_defaults=no_defaults))
        opts = _windowed(opts, files, start_position, stop_position, start_datetime, stop_datetime)
        opts.labels = True
        run = prepare(files, opts)
        with _Progress(files, True) as bar:
            s = build_graph(files, run, opts, policy, CostModel().graph_weights(), range(a, b),
                            on_progress=bar.at if bar.enabled else None,
                            on_transaction=(lambda t: bar.update(None, t)) if bar.enabled else None)
        if graphml:
            write_graph(s.graph, graphml)
        if dot:
            write_graph(s.graph, dot if dot.endswith((".dot", ".gv")) else dot + ".dot")
    except OSError as err:
        raise _fail(LagAdvisorError(f"cannot write the graph: {err}")) from None
    except LagAdvisorError as err:
        raise _fail(err) from None
    from .report.commands import graph_doc, render_graph

    doc = graph_doc(s, policy, top)
    if output_format == OutputFormat.json:
        print(json.dumps(doc, indent=2, sort_keys=True))
    else:
        render_graph(doc, s, Console(highlight=False), hot_rows_max())
    _read_warnings(run.summaries)


class FailOn(str, Enum):
    never = "never"
    warning = "warning"
    critical = "critical"


EXIT_FINDINGS = 1


@app.command()
def advise(
    files: Annotated[Optional[list[str]], typer.Argument(help=_FILES_HELP)] = None,
    *,
    from_file: FromOpt = None,
    to_file: ToOpt = None,
    output_format: Annotated[OutputFormat, typer.Option("--format", help="text or json (schema: "
                                                        "docs/advise-schema.json).")] = OutputFormat.text,
    html: Annotated[Optional[str], typer.Option("--html", help="Also write a self-contained HTML report "
                                                               "with charts to this file.")] = None,
    mycnf: Annotated[bool, typer.Option("--mycnf", help="Print the suggested settings as my.cnf "
                                                        "snippets (source and replica) instead of the report.")] = False,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Exit with 1 when a finding of this "
                                            "severity or worse is found (pre-upgrade gates).")] = FailOn.never,
    cost_model: Annotated[Optional[str], typer.Option("--cost-model",
        help="JSON file of apply cost coefficients (see `lagadvisor calibrate`).")] = None,
    cores: Annotated[Optional[int], typer.Option(help="CPU cores of the replica (default: the cost "
                                                     "model's).", min=1, max=4096)] = None,
    history_size: HistoryOpt = None,
    commit_order: CommitOrderOpt = CommitOrder.auto,
    schema: SchemaOpt = None,
    start_position: StartPositionOpt = None,
    stop_position: StopPositionOpt = None,
    start_datetime: StartDatetimeOpt = None,
    stop_datetime: StopDatetimeOpt = None,
    host: HostOpt = None,
    port: PortOpt = None,
    user: UserOpt = None,
    ask_password: AskPasswordOpt = False,
    defaults_file: DefaultsFileOpt = None,
    socket: SocketOpt = None,
    login_path: LoginPathOpt = None,
    defaults_extra_file: DefaultsExtraFileOpt = None,
    no_defaults: NoDefaultsOpt = False,
    ssl_ca: SslCaOpt = None,
    ssl_cert: SslCertOpt = None,
    ssl_key: SslKeyOpt = None,
    ssl_mode: SslModeOpt = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar on a terminal.")] = True,
    window: Annotated[str, typer.Option(help="The summary's worst lag window on the source's timeline: a "
                                             "duration (15m, 1h, 1d), off, or auto (for inputs longer "
                                             "than 2 hours).")] = "auto",
) -> None:
    """What to change: findings ordered by expected gain, each with the setting, its current and
    suggested value, the evidence from the binlog and the simulated effect. With --host, current
    values are read from that server (read-only: SELECT, REPLICATION CLIENT)."""
    from dataclasses import replace as dc_replace

    from .advise import Severity
    from .advise import advise as run
    from .report.advice import advice_json, mycnf as render_mycnf, render
    from .report.advice_html import render_html
    from .schema.live import settings_from_server
    from .sim.model import CostModel

    try:
        server = _server_options(host, port, user, ask_password, defaults_file, ssl_ca, ssl_cert, ssl_key,
                                     ssl_mode, socket=socket, login_path=login_path,
                                     defaults_extra_file=defaults_extra_file, no_defaults=no_defaults)
        inputs = _inputs(files, from_file, to_file, server)
        settings = settings_from_server(server) if server is not None else None
        opts = _windowed(_clock_options(history_size, commit_order, schema, server), inputs, start_position, stop_position, start_datetime, stop_datetime,
                         live=from_file is not None)
        cost = CostModel.from_file(cost_model) if cost_model else CostModel()
        if cores:
            cost = dc_replace(cost, cores=cores)
        from .sim.windows import parse_window

        window_s = parse_window(window)
        with _Progress(inputs, progress) as bar:
            advice = run(inputs, opts, cost, settings, on_transaction=lambda s, t, c: bar.update(s, t),
                         window_s=window_s, on_progress=bar.at if bar.enabled else None)
        if html:
            try:
                with open(html, "w", encoding="utf-8") as f:
                    f.write(render_html(advice))
            except OSError as err:
                raise LagAdvisorError(f"{html}: cannot write the HTML report: {err.strerror}") from None
    except LagAdvisorError as err:
        raise _fail(err) from None
    if mycnf:
        print(render_mycnf(advice), end="")
    elif output_format == OutputFormat.json:
        print(json.dumps(advice_json(advice), indent=2, sort_keys=True))
    else:
        render(advice, Console(highlight=False))
    for w in advice.context.analysis.warnings:
        err_console.print(f"lagadvisor: warning: {w}", soft_wrap=True)
    worst = advice.worst()
    if fail_on != FailOn.never and worst is not None and worst.rank >= Severity(fail_on.value).rank:
        raise typer.Exit(EXIT_FINDINGS)


@app.command()
def fleet(
    dirs: Annotated[Optional[list[str]], typer.Argument(help="Without --fleet: one binlog directory per "
                                                             "server (named by the directory).")] = None,
    *,
    fleet_file: Annotated[Optional[str], typer.Option("--fleet", help="Fleet file (TOML, or YAML by its "
        ".yaml/.yml name): one entry per server with its binlogs (a directory, a glob, an .index file or "
        "an fsspec URL such as s3://bucket/prefix/), optionally --host-style settings, its replica's "
        "settings and cost model (README: lagadvisor fleet).")] = None,
    scheduler: Annotated[Optional[str], typer.Option("--scheduler", help="An existing Dask cluster's "
        "scheduler (tcp://HOST:8786); default: an embedded local cluster.")] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", min=1, help="Worker processes of the "
        "embedded cluster (default: one per core).")] = None,
    output_format: Annotated[OutputFormat, typer.Option("--format", help="text (the fleet table) or json "
        "(schema: docs/fleet-schema.json: the table plus each server's advice document).")] = OutputFormat.text,
    html: Annotated[Optional[str], typer.Option("--html", help="Also write one self-contained HTML page: "
        "the fleet overview and a section per server.")] = None,
    cost_model: Annotated[Optional[str], typer.Option("--cost-model",
        help="JSON file of apply cost coefficients for every DIR server.")] = None,
    cores: Annotated[Optional[int], typer.Option(help="CPU cores of the replicas (DIR servers).", min=1,
                                                 max=4096)] = None,
    history_size: HistoryOpt = None,
    commit_order: CommitOrderOpt = CommitOrder.auto,
    schema: SchemaOpt = None,
) -> None:
    """advise for every server of a fleet, on Dask: files read in parallel across the cluster,
    each server's simulation chained over its files; a table, JSON or one HTML page. A server
    whose files cannot be read is reported with its error (exit 2) and the others complete."""
    from .errors import ConfigError
    from .fleet import connect, entries_from_dirs, fleet as run_fleet, load_fleet
    from .report.fleet import fleet_json, render_console, render_html

    try:
        if fleet_file and dirs:
            raise ConfigError("give either --fleet FILE or directories, not both")
        if fleet_file:
            entries = load_fleet(fleet_file)
        elif dirs:
            entries = entries_from_dirs(dirs, cost_model=cost_model, cores=cores, history_size=history_size,
                                        commit_order=commit_order.value, schema=schema)
        else:
            raise ConfigError("give a --fleet FILE or one binlog directory per server")
        client, cluster = connect(scheduler, workers)
        try:
            doc = fleet_json(run_fleet(entries, client).results)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
        if html:
            try:
                with open(html, "w", encoding="utf-8") as f:
                    f.write(render_html(doc))
            except OSError as err:
                raise LagAdvisorError(f"{html}: cannot write the HTML report: {err.strerror}") from None
    except LagAdvisorError as err:
        raise _fail(err) from None
    if output_format == OutputFormat.json:
        print(json.dumps(doc, indent=2, sort_keys=True))
    else:
        render_console(doc, Console(highlight=False))
    for s in doc["servers"]:
        for w in s["warnings"]:
            err_console.print(f"lagadvisor: warning: {s['name']}: {w}", soft_wrap=True)
        if s["error"] and output_format == OutputFormat.json:  # the table already shows it
            err_console.print(f"lagadvisor: error: {s['name']}: {s['error']}", soft_wrap=True)
    if doc["fleet"]["failed"]:
        raise typer.Exit(EXIT_BAD_INPUT)


@app.command()
def calibrate(
    files: Annotated[Optional[list[str]], typer.Argument(help="The replica's own binlog files "
                                                    "(log_replica_updates=ON), written while it "
                                                    "applied a backlog with one worker; or --host.")] = None,
    *,
    window: Annotated[Optional[float], typer.Option(
        "--window", help="With --host: seconds to watch the running replica (read-only: performance_schema "
                         "and its own binlog; any worker count). Default 60.", min=1.0, max=86400.0)] = None,
    host: HostOpt = None,
    port: PortOpt = None,
    user: UserOpt = None,
    ask_password: AskPasswordOpt = False,
    defaults_file: DefaultsFileOpt = None,
    socket: SocketOpt = None,
    login_path: LoginPathOpt = None,
    defaults_extra_file: DefaultsExtraFileOpt = None,
    no_defaults: NoDefaultsOpt = False,
    ssl_ca: SslCaOpt = None,
    ssl_cert: SslCertOpt = None,
    ssl_key: SslKeyOpt = None,
    ssl_mode: SslModeOpt = None,
    durable: Annotated[bool, typer.Option("--durable/--relaxed",
        help="The replica's durability during that run (sync_binlog=1 and "
             "innodb_flush_log_at_trx_commit=1, or relaxed).")] = True,
    base: Annotated[Optional[str], typer.Option(help="For --durable: a cost model fitted on a relaxed "
                                                     "run, to split CPU from flush time.")] = None,
    cores: Annotated[Optional[int], typer.Option(help="CPU cores of the replica.", min=1, max=4096)] = None,
    redo_share: Annotated[Optional[float], typer.Option(
        help="For --durable: the InnoDB redo fsync's share of the fsync time per commit (the rest "
             "is the binlog fsync); default: the --base model's split. Measure it from "
             "performance_schema.file_summary_by_event_name (SUM_TIMER_MISC of "
             "wait/io/file/innodb/innodb_log_file against wait/io/file/sql/binlog).",
        min=0.0, max=1.0)] = None,
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="Write the model here.")] = None,
) -> None:
    """Fit the apply cost model (per transaction, per row by kind, per byte, flush) from a
    replica's commit timestamps; use it with `simulate --cost-model`."""
    import os

    from .sim.calibrate import calibrate as fit
    from .sim.model import CostModel

    try:
        server = _server_options(host, port, user, ask_password, defaults_file, ssl_ca, ssl_cert, ssl_key,
                                 ssl_mode, socket=socket, login_path=login_path,
                                 defaults_extra_file=defaults_extra_file, no_defaults=no_defaults)
        if server is not None:
            if files:
                raise LagAdvisorError("give either binlog files or --host (a running replica), not both")
            return _calibrate_live(server, window or 60.0, base, cores, output)
        if window is not None:
            raise LagAdvisorError("--window needs --host (the running replica to watch)")
        if not files:
            raise LagAdvisorError("give the replica's binlog files, or --host to calibrate a running replica")
        files = _distinct(files)
        _output_path(output, files)
        with _Progress(files, True) as bar:
            result = fit(files, durable=durable, base=CostModel.from_file(base) if base else None,
                         cores=cores or os.cpu_count() or 1, redo_share=redo_share,
                         on_transaction=(lambda t: bar.update(None, t)) if bar.enabled else None,
                         on_progress=bar.at if bar.enabled else None)
    except LagAdvisorError as err:
        raise _fail(err) from None
    text = result.model.to_json()
    if output:
        try:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError as err:
            raise _fail(LagAdvisorError(f"--output {output}: cannot write: {err.strerror or err}")) from None
    else:
        print(text)
    err_console.print(f"lagadvisor: fitted on {result.samples:,} commit gaps (mean {result.mean_gap_us:,.0f} us, "
                      f"R^2 {result.r2:.3f}; stalls left out of the fit, their time spread over the costs: "
                      f"x{result.stall_factor:.2f})")
    for w in result.warnings:
        err_console.print(f"lagadvisor: warning: {w}", soft_wrap=True)


def _calibrate_live(server, window: float, base: str | None, cores: int | None, output: str | None) -> None:
    """calibrate --host: the fit from a running replica (sim.live), the model on stdout or -o,
    the evidence on stderr."""
    import os

    from .binlog.stream import pymysql_settings
    from .sim.live import calibrate_live
    from .sim.model import CostModel

    try:
        _output_path(output, [])
        settings = pymysql_settings(server.host, server.port, server.user, server.password,
                                    option_file=server.option_file, tls=server.tls, socket=server.socket)
        result = calibrate_live(settings, window, base=CostModel.from_file(base) if base else None,
                                cores=cores or os.cpu_count() or 1, on_start=lambda s: err_console.print(
                                    f"lagadvisor: watching the replica for {window:g} s (read-only; "
                                    f"{s['workers']} workers)"))
    except LagAdvisorError as err:
        raise _fail(err) from None
    text = result.model.to_json()
    if output:
        try:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError as err:
            raise _fail(LagAdvisorError(f"--output {output}: cannot write: {err.strerror or err}")) from None
    else:
        print(text)
    e = result.evidence
    err_console.print(
        f"lagadvisor: fitted live on {e['samples_kept']:,} of {e['samples']:,} applied transactions "
        f"({e['workers']} workers, {'durable' if e['durable'] else 'relaxed'}; mean worker time "
        f"{e['mean_worker_us']:,.0f} us, R^2 {e['r2']:.3f}, stalls x{e['stall_factor']:.2f}; redo fsyncs "
        f"{e['redo_fsyncs']:,} mean {e['redo_fsync_mean_us']:,.0f} us, binlog fsyncs {e['binlog_fsyncs']:,} mean "
        f"{e['binlog_fsync_mean_us']:,.0f} us; lag median {(e['lag_median_us'] or 0) / 1e3:,.1f} ms)", soft_wrap=True)


@app.command()
def eta(
    *,
    source: Annotated[Optional[str], typer.Option(
        "--source", help="The source's host: stream the unapplied transactions from its binlogs (needs "
                         "REPLICATION SLAVE and REPLICATION CLIENT there; same user and TLS options); "
                         "default: the replica's relay logs, when readable here.")] = None,
    source_port: Annotated[Optional[int], typer.Option("--source-port", help="The source's port.")] = None,
    sample: Annotated[str, typer.Option(help="Watch the applier this long before the first estimate "
                                             "(its rate calibrates the simulation): 5s, 1m.")] = "5s",
    watch: Annotated[Optional[str], typer.Option(help="Re-estimate every N (10s, 1m) until caught up, "
                                                      "with the earlier predictions' errors.")] = None,
    max_eta: Annotated[Optional[str], typer.Option("--max-eta", help="Exit 1 when the ETA (current settings; with "
                                                                      "--watch the last one) is longer than this "
                                                                      "(10m), or never.")] = None,
    cost_model: Annotated[Optional[str], typer.Option("--cost-model",
        help="JSON file of apply cost coefficients (see `lagadvisor calibrate`).")] = None,
    output_format: Annotated[OutputFormat, typer.Option("--format", help="text or json (one line each "
                                                                          "estimate).")] = OutputFormat.text,
    host: HostOpt = None,
    port: PortOpt = None,
    user: UserOpt = None,
    ask_password: AskPasswordOpt = False,
    defaults_file: DefaultsFileOpt = None,
    socket: SocketOpt = None,
    login_path: LoginPathOpt = None,
    defaults_extra_file: DefaultsExtraFileOpt = None,
    no_defaults: NoDefaultsOpt = False,
    ssl_ca: SslCaOpt = None,
    ssl_cert: SslCertOpt = None,
    ssl_key: SslKeyOpt = None,
    ssl_mode: SslModeOpt = None,
) -> None:
    """When will this replica catch up? The backlog simulated with the replica's settings and the
    advisor's alternatives, calibrated on the applier's own progress (read-only)."""
    from dataclasses import replace as dc_replace

    from .errors import ConfigError
    from .sim import eta as E
    from .sim.model import CostModel

    try:
        server = _server_options(host, port, user, ask_password, defaults_file, ssl_ca, ssl_cert, ssl_key,
                                 ssl_mode, socket=socket, login_path=login_path,
                                 defaults_extra_file=defaults_extra_file, no_defaults=no_defaults)
        if server is None:
            raise ConfigError("eta needs the replica: --host, --socket or --login-path")
        sample_s = E.parse_duration(sample)
        watch_s = E.parse_duration(watch) if watch is not None else None
        limit = E.parse_duration(max_eta) if max_eta is not None else None
        cost = CostModel.from_file(cost_model) if cost_model else CostModel()
        conn = E.open_replica(server)
        cfg = E.replica_config(conn)
        first = E.snapshot(conn)
        if source:
            files = E.source_files(dc_replace(server, host=source, port=source_port or server.port, socket=None),
                                   first.executed)
        else:
            files = E.relay_files(conn) if first.unapplied else []

        def emit(e, earlier):
            if output_format == OutputFormat.json:
                print(json.dumps({**e.to_json(), "earlier_predictions": earlier}, sort_keys=True), flush=True)
                return
            for line in E.render(e):
                print(line)
            for p in earlier:
                said = E.fmt_s(p["eta_seconds"])
                err = "n/a" if p["error"] is None else f"{p['error']:+.1%}"
                what = "took" if "actual_seconds" in p else "now expected"
                got = p.get("actual_seconds", p.get("expected_now_seconds"))
                print(f"  earlier prediction {e.at - p['made_at']:.0f} s ago: {said}; {what} {E.fmt_s(got)}: "
                      f"error {err}")
            print(flush=True)

        last, _ = E.run(conn, files, cfg, cost, sample_s=sample_s, watch_s=watch_s, emit=emit)
    except LagAdvisorError as err:
        raise _fail(err) from None
    eta_s = last.current.eta_s
    if limit is not None and (eta_s is None or eta_s > limit):
        print(f"lagadvisor: ETA {E.fmt_s(eta_s)} is over --max-eta {max_eta}", file=sys.stderr)
        raise typer.Exit(1)


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
    except (KeyboardInterrupt, abort):
        err_console.print("lagadvisor: interrupted")
        sys.exit(130)
    except click_exception as err:
        if type(err).__name__ == "NoArgsIsHelpError":  # the help was printed already
            sys.exit(EXIT_BAD_INPUT)
        err_console.print(f"lagadvisor: error: {_usage_error_line(err)}", soft_wrap=True, markup=False)
        sys.exit(EXIT_BAD_INPUT if isinstance(err, usage_error) else err.exit_code)
    except BrokenPipeError:  # e.g. `lagadvisor simulate --help | head`
        _quiet_stdout()
        sys.exit(0)
    sys.exit(rv if isinstance(rv, int) else 0)


def _quiet_stdout() -> None:
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
