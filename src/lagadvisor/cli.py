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
        self.sizes = {p: (os.path.getsize(p) if os.path.exists(p) else 0) for p in paths}
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

    def update(self, summary, trx) -> None:
        if not self.enabled:
            return
        self._n += 1
        if self._n % 256 == 0:
            self.progress.update(self.task, completed=self.done_before.get(trx.file, 0) + trx.end_offset,
                                 description=trx.file.rsplit("/", 1)[-1])


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


@app.command()
def analyze(
    files: Annotated[list[str], typer.Argument(help="Binlog or relay-log files, in order.")],
    *,
    output_format: Annotated[OutputFormat, typer.Option("--format", help="text or json.")] = OutputFormat.text,
    progress: Annotated[bool, typer.Option(help="Show a progress bar on a terminal.")] = True,
) -> None:
    """Summarise binlog files: server, transactions, events, time span, and the parallelism the
    recorded logical clock allows."""
    from .report.analysis import analyze as run
    from .report.console import render_analysis
    from .report.jsonout import analysis_json

    try:
        with _Progress(files, progress) as bar:
            result = run(files, on_transaction=bar.update)
    except LagAdvisorError as err:
        raise _fail(err) from None
    if output_format == OutputFormat.json:
        print(json.dumps(analysis_json(result), indent=2, sort_keys=True))
    else:
        render_analysis(result, Console(highlight=False))
    for w in result.warnings:
        err_console.print(f"lagadvisor: warning: {w}", soft_wrap=True)


class ExportFormat(str, Enum):
    jsonl = "jsonl"
    csv = "csv"


@app.command()
def export(
    files: Annotated[list[str], typer.Argument(help="Binlog or relay-log files, in order.")],
    *,
    output_format: Annotated[ExportFormat, typer.Option("--format", help="jsonl or csv.")] = ExportFormat.jsonl,
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
    keys: Annotated[bool, typer.Option("--keys", help="Include primary-key values of every row image "
                                                      "(JSONL only).")] = False,
) -> None:
    """Write one record per transaction, in binlog order."""
    from .binlog import FileSummary, read_transactions
    from .report.records import CsvWriter, jsonl_line, transaction_record

    out = open(output, "w", encoding="utf-8") if output else sys.stdout
    warnings: list[str] = []
    try:
        writer = CsvWriter(out) if output_format == ExportFormat.csv else None
        for path in files:
            summary = FileSummary(path)
            for t in read_transactions(path, summary):
                rec = transaction_record(t, keys=keys and writer is None)
                if writer is not None:
                    writer.write(rec)
                else:
                    out.write(jsonl_line(rec) + "\n")
            warnings.extend(summary.warnings)
    except LagAdvisorError as err:
        out.flush()
        raise _fail(err) from None
    except BrokenPipeError:
        sys.stderr.close()
        raise typer.Exit(0)
    finally:
        if output:
            out.close()
    for w in warnings:
        err_console.print(f"lagadvisor: warning: {w}", soft_wrap=True)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("lagadvisor: interrupted")
        sys.exit(130)
