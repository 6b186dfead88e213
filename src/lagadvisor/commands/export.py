"""``lagadvisor export``."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated, Optional

import typer

from ..errors import ConfigError, LagAdvisorError
from .common import Progress, err_console, fail, read_inputs, warn
from .options import ClockArgs, RequiredFilesArg, ServerArgs, WindowArgs, grouped


class ExportFormat(str, Enum):
    jsonl = "jsonl"
    csv = "csv"


@grouped
def export(
    files: RequiredFilesArg,
    *,
    output_format: Annotated[ExportFormat, typer.Option("--format", help="jsonl or csv.")] = ExportFormat.jsonl,
    output: Annotated[Optional[str], typer.Option("--output", "-o", metavar="FILE",
                                                  help="Write here instead of stdout.")] = None,
    keys: Annotated[bool, typer.Option("--keys", help="Include every row image's unique-key columns, named as "
                                                      "the binlog's row metadata or the schema names them "
                                                      "(JSONL only).")] = False,
    clock: ClockArgs,
    window: WindowArgs,
    server: ServerArgs,
) -> None:
    """Write one record per transaction, in binlog order, with the recorded clock and every
    policy's re-derived last_committed ("computed") and WRITESET's fallback reason."""
    from ..depgraph.read import prepare
    from ..analysis.records import export_records
    from ..report.records import CsvWriter, jsonl_line

    try:
        if keys and output_format == ExportFormat.csv:
            raise ConfigError("--keys: key values are written in JSONL only (CSV has one column per field, "
                              "no place for a row's keys); use --format jsonl")
        inp = read_inputs(files, clock, window, server, output=output)
    except LagAdvisorError as err:
        raise fail(err) from None
    try:
        out = open(output, "w", encoding="utf-8", errors="backslashreplace") if output else sys.stdout
    except OSError as err:
        raise fail(LagAdvisorError(f"--output {output}: cannot write: {err.strerror or err}")) from None
    try:
        run = prepare(inp.files, inp.options)
        writer = CsvWriter(out) if output_format == ExportFormat.csv else None
        write = out.write
        emit = writer.write if writer is not None else (lambda rec: write(jsonl_line(rec) + "\n"))
        # no bar over records written to the same terminal
        with Progress(inp.files, out is not sys.stdout or not out.isatty()) as bar:
            notes = export_records(inp.files, inp.options, run, emit, keys=keys and writer is None,
                                   on_progress=bar.on_progress, on_transaction=bar.on_transaction)
    except LagAdvisorError as err:
        out.flush()
        raise fail(err) from None
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
        warn(w)
