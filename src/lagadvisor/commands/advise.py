"""``lagadvisor advise``."""

from __future__ import annotations

import json
from dataclasses import replace
from enum import Enum
from typing import Annotated, Optional

import typer

from ..cpus import usable_cpus
from ..errors import LagAdvisorError
from .common import Progress, console, finite, cost_model as cost_model_of, fail, output_path, read_inputs, warn, write_html
from .options import (ClockArgs, CoresOpt, CostModelOpt, FilesArg, FromOpt, OutputFormat, ProgressOpt, ServerArgs,
                      TargetVersionOpt, ToOpt, WindowArgs, format_option, grouped, parse_version_option)


class FailOn(str, Enum):
    never = "never"
    warning = "warning"
    critical = "critical"


EXIT_FINDINGS = 1
AdviseFormatOpt = format_option("text or json (schema: docs/advise-schema.json).")


@grouped(host="Read the current settings (SHOW GLOBAL VARIABLES, SHOW REPLICA STATUS) and the table "
              "definitions (information_schema) from this server (read-only; needs SELECT and REPLICATION "
              "CLIENT); with --from, also stream its binlogs.")
def advise(
    files: FilesArg = None,
    *,
    from_file: FromOpt = None,
    to_file: ToOpt = None,
    output_format: AdviseFormatOpt = OutputFormat.text,
    html: Annotated[Optional[str], typer.Option("--html", help="Also write a self-contained HTML report "
                                                               "with charts to this file.")] = None,
    mycnf: Annotated[bool, typer.Option("--mycnf", help="Print the suggested settings as my.cnf "
                                                        "snippets (source and replica) instead of the report.")] = False,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Exit with 1 when a finding of this "
                                            "severity or worse is found (pre-upgrade gates).")] = FailOn.never,
    cost_model: CostModelOpt = None,
    cores: CoresOpt = None,
    replica_setting: Annotated[Optional[list[str]], typer.Option(
        "--replica-setting", help="NAME=VALUE: the replica's setting when no --host reads it (or over what it "
                                  "reads): replica_parallel_workers, replica_preserve_commit_order, sync_binlog, "
                                  "innodb_flush_log_at_trx_commit, slave_parallel_mode. Repeatable.")] = None,
    clock: ClockArgs,
    binlog_window: WindowArgs,
    server: ServerArgs,
    progress: ProgressOpt = True,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, max=1024, help="Run this many simulations at "
                                      "once, on threads (0 = one per CPU core); the files are still read "
                                      "in one pass; the report is the same.")] = 1,
    window: Annotated[str, typer.Option(help="The summary's worst lag window on the source's timeline: a "
                                             "duration (15m, 1h, 1d), off, or auto (for inputs longer "
                                             "than 2 hours).")] = "auto",
    target_version: TargetVersionOpt = None,
    lag_target: Annotated[float, typer.Option(
        "--lag-target", metavar="SECONDS", help="The replica's lag p99 target: a finding is critical only when the "
                                                "replica, as it runs now, misses it (simulated against the source's "
                                                "timeline) and the change saves 15% or more.")] = 1.0,
    current_version: Annotated[Optional[str], typer.Option(
        "--current-version", help="The source's MySQL version for --target-version, instead of the one in the "
                                  "binlog (or --host's): e.g. 8.0.33 to review a binlog as an 8.0 source's, its "
                                  "clock re-derived from the file (--commit-order).")] = None,
) -> None:
    """What to change: findings ordered by expected gain, each with the setting, its current and
    suggested value, the evidence from the binlog and the simulated effect. With --host, current
    values are read from that server (read-only: SELECT, REPLICATION CLIENT)."""
    from ..advise import Severity
    from ..advise import advise as run
    from ..report.advice import advice_json, mycnf as render_mycnf, render
    from ..report.advice_html import render_html
    from ..server.schema import settings_from_server
    from ..sim.windows import parse_window

    try:
        target = parse_version_option("--target-version", target_version)
        current = parse_version_option("--current-version", current_version)
        cost = cost_model_of(cost_model, cores)
        given = parse_replica_settings(replica_setting or [])
        window_s = parse_window(window)
        finite(lag_target, "--lag-target")
        if lag_target <= 0:
            raise LagAdvisorError(f"--lag-target {lag_target:g}: expected a number of seconds above 0")
        inp = read_inputs(files, clock, binlog_window, server, from_file=from_file, to_file=to_file)
        output_path(html, inp.files, "--html")
        settings = settings_from_server(inp.server) if inp.server is not None else None
        with Progress(inp.files, progress) as bar:
            advice = run(inp.files, inp.options, cost, settings, on_transaction=lambda s, t, c: bar.update(s, t),
                         window_s=window_s, on_progress=bar.on_progress, jobs=jobs or usable_cpus(),
                         target_version=target, current_version=current, given=given,
                         cores_given=cores is not None, lag_target_s=lag_target,
                         reproduce=reproduce_args(clock, binlog_window, cost_model, inp.files))
        if settings is not None and settings.role == "source":
            # issue 71: a source has no applier to run replica statements on (summary: one line says so)
            advice.findings = [replace(f, statements=()) if f.where == "replica" else f for f in advice.findings]
        if html:
            write_html(html, render_html(advice))
    except LagAdvisorError as err:
        raise fail(err) from None
    if mycnf:
        print(render_mycnf(advice), end="")
    elif output_format == OutputFormat.json:
        print(json.dumps(advice_json(advice), indent=2, sort_keys=True))
    else:
        render(advice, console())
    for w in advice.context.analysis.warnings:
        warn(w)
    worst = advice.worst()
    if fail_on != FailOn.never and worst is not None and worst.rank >= Severity(fail_on.value).rank:
        raise typer.Exit(EXIT_FINDINGS)


def parse_replica_settings(items: list[str]) -> dict[str, str]:
    """``--replica-setting NAME=VALUE`` items, checked: a known name (what the baseline reads)
    and a value of its kind."""
    from ..advise.context import REPLICA_SETTINGS, replica_setting_problem

    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name, value = name.strip().lower(), value.strip()
        if not eq or name not in REPLICA_SETTINGS:
            raise LagAdvisorError(f"--replica-setting {item!r}: expected NAME=VALUE with NAME one of "
                                  f"{', '.join(REPLICA_SETTINGS)}")
        problem = replica_setting_problem(name, value)
        if problem is not None:
            raise LagAdvisorError(f"--replica-setting {item!r}: {problem}")
        out[name] = value
    return out


def reproduce_args(clock, window, cost_model: str | None, files: list[str]) -> tuple[str, ...]:
    """The ``simulate`` options besides a configuration's that give this run's numbers: the
    files, the clock's inputs, the window, the cost model (advise adds ``--cores``)."""
    out: list[str] = []
    if clock.schema:
        out += ["--schema", clock.schema]
    if clock.commit_order != "auto":
        out += ["--commit-order", str(clock.commit_order.value if hasattr(clock.commit_order, "value")
                                      else clock.commit_order)]
    if clock.history_size is not None:
        out += ["--history-size", str(clock.history_size)]
    for opt, v in (("--start-position", window.start_position), ("--stop-position", window.stop_position),
                   ("--start-datetime", window.start_datetime), ("--stop-datetime", window.stop_datetime)):
        if v is not None:
            out += [opt, str(v)]
    if cost_model:
        out += ["--cost-model", cost_model]
    return tuple(out)
