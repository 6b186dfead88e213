"""What every command does the same way: the shared options turned into inputs (files, clock
options, server), the progress bar, the one-line error, warnings on stderr."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress as RichProgress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

from ..errors import ConfigError, LagAdvisorError
from .options import ClockArgs, ServerArgs, WindowArgs

if TYPE_CHECKING:  # the commands import the layers below them when a command runs
    from ..depgraph.pipeline import ClockOptions
    from ..server.connection import ServerOptions

class _Console(Console):
    def on_broken_pipe(self) -> None:
        """A reader that left (``| head``): the CLI's own handler ends quietly with 0, as for
        JSON output (rich's own exits 1)."""
        self.quiet = True
        raise BrokenPipeError


def console(**kw) -> Console:
    """A console for what the commands print: names from binlogs, schemas, paths and model files
    are printed as they are, never read as rich markup (``[/x]`` in a table name raised
    MarkupError) or emoji codes (``:x:``); renderers style with ``Text``."""
    c = _Console(highlight=False, markup=False, emoji=False, **kw)
    if c.width <= 0:   # COLUMNS=0: rich printed nothing at all, errors included
        c.width = 80
    return c


err_console = console(stderr=True)

EXIT_BAD_INPUT = 2


def fail(err: LagAdvisorError) -> typer.Exit:
    """A domain error as one line on stderr; raise the returned exit (code 2)."""
    err_console.print(f"lagadvisor: error: {err}", soft_wrap=True)
    return typer.Exit(EXIT_BAD_INPUT)


def warn(text: str) -> None:
    err_console.print(f"lagadvisor: warning: {text}", soft_wrap=True)


def read_warnings(summaries) -> None:
    """What reading the files reported (a truncated tail: the partial result was used)."""
    for s in summaries:
        for w in s.warnings:
            warn(w)


class Progress:
    """A byte-based progress bar over the input files, only when stderr is a terminal."""

    def __init__(self, paths: list[str], enabled: bool) -> None:
        self.enabled = enabled and err_console.is_terminal
        self.sizes = {p: getattr(p, "size", None) or (os.path.getsize(p) if os.path.exists(p) else 0)
                      for p in paths}
        self.done_before: dict[str, int] = {}
        acc = 0
        for p in paths:
            self.done_before[p] = acc
            acc += self.sizes[p]
        self.total = acc
        self.progress = RichProgress(TextColumn("[bold]{task.description}"), BarColumn(),
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

    def steps(self, what: str, total: int):
        """A second bar over ``total`` steps of work after the read (the simulations of a
        sweep); returns the callback to call after each one, or None without a bar."""
        if not self.enabled:
            return None
        self.progress.update(self.task, completed=self.total)
        task = self.progress.add_task(what, total=total)
        return lambda: self.progress.advance(task)

    @property
    def on_progress(self):
        """``on_progress(file, offset)`` for the core, or None without a bar."""
        return self.at if self.enabled else None

    @property
    def on_transaction(self):
        """``on_transaction(trx)`` for the core, or None without a bar."""
        return (lambda t: self.update(None, t)) if self.enabled else None


def server_options(a: ServerArgs):
    """The server to read from, resolved as the mysql client would (server.connection.resolve), or None
    when none was asked for: -h, -S or --login-path asks; a host in an option file alone does not
    (so a ~/.my.cnf never turns an offline analysis into a connection); a host or socket in a
    --defaults-file or --defaults-extra-file named on the command line asks too."""
    from ..server.connection import ClientArgs, ServerOptions, password_from_env, prompt_password, resolve
    from ..server.tls import Tls

    if not (a.host or a.socket or a.login_path or a.defaults_file or a.defaults_extra_file):
        return None
    ssl = {k: v for k, v in (("ssl-ca", a.ssl_ca), ("ssl-cert", a.ssl_cert), ("ssl-key", a.ssl_key),
                             ("ssl-mode", a.ssl_mode)) if v is not None}
    r = resolve(ClientArgs(a.host, a.port, a.user, a.socket, password_from_env(), a.login_path, a.defaults_file,
                           a.defaults_extra_file, a.no_defaults, ssl))
    named = [f for f in (a.defaults_file, a.defaults_extra_file) if f]
    if not (a.host or a.socket or a.login_path) and not any(
            r.sources.get(k, "").startswith(f"{f} [") for k in ("host", "socket") for f in named):
        return None  # an option file named on the command line without a host or socket in it
    tls = Tls.from_options(r.ssl.get("ssl-mode"), r.ssl.get("ssl-ca"), r.ssl.get("ssl-cert"), r.ssl.get("ssl-key"))
    password = r.password
    if a.ask_password:
        password = prompt_password(r.user, r.socket or r.host)
    return ServerOptions(r.host, r.port, r.user, password, None, tls, socket=r.socket)


def pymysql_settings_of(server):
    """The replication-protocol connection settings of a resolved server."""
    from ..server.connection import pymysql_settings

    return pymysql_settings(server.host, server.port, server.user, server.password,
                            option_file=server.option_file, tls=server.tls, socket=server.socket)


def clock_options(c: ClockArgs, server=None):
    """The clock options, with the table definitions from ``--schema`` or the server."""
    from ..depgraph.pipeline import ClockOptions
    from ..schema.ddl import read_schema_path
    from ..server.schema import catalog_from_server

    catalog = None
    if server is not None:
        if c.schema:
            raise ConfigError("give either --schema or a server (--host, --socket, --login-path) for the "
                              "table definitions, not both")
        catalog = catalog_from_server(server)
    elif c.schema:
        loaded = read_schema_path(c.schema)
        for w in loaded.warnings(c.schema):
            warn(w)
        catalog = loaded.catalog
    return ClockOptions(history_size=c.history_size, commit_order=c.commit_order, catalog=catalog)


def output_path(output, inputs, option: str = "--output") -> None:
    """-o/--output (or ``option``: --html, --graphml, --dot): refused in one line before anything
    is read when it names a directory, sits in a missing directory, or is one of the input files
    (writing would truncate it)."""
    if not output:
        return
    if os.path.isdir(output):
        raise ConfigError(f"{option} {output}: is a directory")
    parent = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(parent):
        raise ConfigError(f"{option} {output}: the directory {parent} does not exist")
    if os.path.exists(output):
        st = os.stat(output)
        for f in inputs:
            try:
                fs = os.stat(f)
            except OSError:
                continue
            if (fs.st_dev, fs.st_ino) == (st.st_dev, st.st_ino):
                raise ConfigError(f"{option} {output}: is the input file {f} (it would be overwritten)")


def write_output(output: str, text: str) -> None:
    """``text`` and a newline to -o FILE; a failure is one line."""
    try:
        with open(output, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text + "\n")
    except OSError as err:
        raise fail(LagAdvisorError(f"--output {output}: cannot write: {err.strerror or err}")) from None


def write_html(path: str, page: str) -> None:
    """An HTML report to ``path``; a file name that is not UTF-8 (the surrogates ``os.fsdecode``
    gives its bytes) is written as those bytes. A failure is a LagAdvisorError naming the file."""
    try:
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(page)
    except OSError as err:
        raise LagAdvisorError(f"{path}: cannot write the HTML report: {err.strerror}") from None


def input_files(files, from_file=None, to_file=None, server=None) -> list:
    """Local files (:func:`lagadvisor.inputs.resolve`: files, directories, index files, globs,
    each once; a byte-identical copy of one of them read once, with a warning:
    :func:`lagadvisor.inputs.distinct_files`), or the server's binlogs streamed from --from (live mode)."""
    from ..inputs import distinct_files, resolve

    if from_file is None:
        if to_file is not None:
            raise ConfigError("--to needs --from")
        if not files:
            raise ConfigError("give binlog files, or --host with --from FILE to stream from a server")
        kept, copies = distinct_files(resolve(files))
        for w in copies:
            warn(w)
        return kept
    if server is None:
        raise ConfigError("--from needs --host (the server to stream binlogs from)")
    if files:
        raise ConfigError("give either binlog files or --from, not both")
    from ..server.stream import list_files

    return list_files(pymysql_settings_of(server), from_file, to_file)


@dataclass(frozen=True)
class Inputs:
    """What a command reads: the files, the clock options (windows applied, the writer of the
    clock detected once for every pass that follows), the server (None: none asked for)."""

    files: list[str]
    options: ClockOptions
    server: ServerOptions | None


def read_inputs(files, clock: ClockArgs, window: WindowArgs | None, server: ServerArgs | None = None, *,
                from_file=None, to_file=None, output: str | None = None, labels: bool = False) -> Inputs:
    """The shared options turned into inputs, checked in this order: the server (the live mode
    lists its files), the files, ``output`` against them, the table definitions, the windows;
    then the policy that wrote the clock is detected, once (``ClockOptions.written``: prepare
    and every later pass over the same files take it from there instead of reading a sample
    again; the files it opened stay open for the read, ``ClockOptions.opened``)."""
    from ..binlog.window import windows_for
    from ..depgraph.pipeline import OpenFiles
    from ..depgraph.read import detect_written_policy

    srv = server_options(server) if server is not None else None
    paths = input_files(files, from_file, to_file, srv)
    output_path(output, paths)
    opts = clock_options(clock, srv)
    w = None
    if window is not None:
        w = windows_for(list(paths), window.start_position, window.stop_position, window.start_datetime,
                        window.stop_datetime)
        if w is not None and from_file is not None:
            raise ConfigError("--start-position/--stop-position/--start-datetime/--stop-datetime apply to "
                              "binlog files, not to --from streaming")
    opened = OpenFiles()  # what the detection opens, the read that follows reads through
    written = detect_written_policy(paths, files=opened)
    return Inputs(paths, replace(opts, labels=labels, windows=w, opened=opened, written=written), srv)


def int_list(text: str, what: str) -> list[int]:
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


def finite(value: float, what: str) -> None:
    import math

    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{what} {value}: expected a finite number of seconds >= 0")


def server_cores(cost, cores: int | None, srv):
    """The cost model on the cores of the server ``srv`` (None: none asked for) where --cores is
    not given: read on its host where it runs here, else what its defaults show
    (:func:`..server.cores.replica_cores`); a note on stderr says where they came from, or what
    is assumed (issue 71: every --host command states the cores it used)."""
    if cores is not None or srv is None:
        return cost
    from ..server.cores import cores_of_server

    where = srv.socket or f"{srv.host}:{srv.port}"
    read = cores_of_server(srv)
    if read is None:
        err_console.print(f"lagadvisor: note: the replica's cores: {cost.cores}, assumed: the cost model's ({where} "
                          "does not show them; give the replica's with --cores)", soft_wrap=True)
        return cost
    err_console.print(f"lagadvisor: note: the replica's cores: {read.cores}, {read.sentence(where)}", soft_wrap=True)
    return replace(cost, cores=read.cores)


def cost_model(path: str | None, cores: int | None):
    """The cost model from ``--cost-model`` (else the default), with ``--cores``."""
    from dataclasses import replace

    from ..sim.model import CostModel

    cost = CostModel.from_file(path) if path else CostModel()
    return replace(cost, cores=cores) if cores else cost
