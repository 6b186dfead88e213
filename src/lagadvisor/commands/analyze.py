"""``lagadvisor analyze``."""

from __future__ import annotations

import json


from ..errors import LagAdvisorError
from .common import Progress, console, err_console, fail, read_inputs, warn
from .options import (ClockArgs, FilesArg, FormatOpt, FromOpt, JobsOpt, OutputFormat, ProgressOpt, ServerArgs,
                      ToOpt, WindowArgs, grouped)


@grouped(host="Read table definitions and sizes from this server's information_schema (read-only; needs "
              "SELECT); with --from, also stream its binlogs (REPLICATION SLAVE and REPLICATION CLIENT).")
def analyze(
    files: FilesArg = None,
    *,
    from_file: FromOpt = None,
    to_file: ToOpt = None,
    output_format: FormatOpt = OutputFormat.text,
    clock: ClockArgs,
    window: WindowArgs,
    server: ServerArgs,
    jobs: JobsOpt = 1,
    progress: ProgressOpt = True,
) -> None:
    """Summarise binlog files: server, transactions, events, time span, the parallelism the
    recorded clock allows, and what COMMIT_ORDER, WRITESET and WRITESET_SESSION would allow."""
    from ..analysis.analyze import analyze as run
    from ..native import unavailable_notice
    from ..report.console import render_analysis
    from ..report.jsonout import analysis_json

    try:
        inp = read_inputs(files, clock, window, server, from_file=from_file, to_file=to_file)
        if jobs != 1 and len(inp.files) > 1 and not from_file:
            from ..analysis.parallel import analyze_parallel

            result = analyze_parallel(inp.files, inp.options, jobs)
        else:
            with Progress(inp.files, progress) as bar:
                result = run(inp.files, inp.options, on_progress=bar.on_progress)
    except LagAdvisorError as err:
        raise fail(err) from None
    if output_format == OutputFormat.json:
        print(json.dumps(analysis_json(result), indent=2, sort_keys=True))
    else:
        render_analysis(result, console())
    for w in result.warnings:
        warn(w)
    notice = unavailable_notice()
    if notice:
        err_console.print(f"lagadvisor: note: {notice}", soft_wrap=True)
