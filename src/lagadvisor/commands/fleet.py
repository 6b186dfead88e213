"""``lagadvisor fleet``."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Annotated, Optional

import typer

from ..errors import ConfigError, LagAdvisorError
from ..kinds import CORES_RANGE
from .common import EXIT_BAD_INPUT, console, err_console, fail, write_html
from .options import ClockArgs, OutputFormat, TargetVersionOpt, format_option, grouped, parse_version_option

#: fleet's ``--workers`` (issue 72): the Dask processes, renamed, as everywhere else ``--workers`` is
#: replica_parallel_workers; the old spelling is refused with this line.
RENAMED_WORKERS = ("fleet --workers is now --processes (Dask worker processes of the embedded cluster); "
                   "--workers means replica_parallel_workers in the other commands")

FleetFormatOpt = format_option("text (the fleet table) or json (schema: docs/fleet-schema.json: the table plus "
                               "each server's advice document).")


@grouped
def fleet(
    dirs: Annotated[Optional[list[str]], typer.Argument(help="Without --fleet: one binlog directory per "
                                                             "server (named by the directory).")] = None,
    *,
    fleet_file: Annotated[Optional[str], typer.Option("--fleet", metavar="FILE", help="Fleet file (TOML, or YAML by its "
        ".yaml/.yml name): one entry per server with its binlogs (a directory, a glob, an .index file or "
        "an fsspec URL such as s3://bucket/prefix/), optionally --host-style settings, its replica's "
        "settings and cost model (README: lagadvisor fleet).")] = None,
    scheduler: Annotated[Optional[str], typer.Option("--scheduler", metavar="ADDRESS", help="An existing Dask cluster's "
        "scheduler (tcp://HOST:8786); default: an embedded local cluster.")] = None,
    processes: Annotated[Optional[int], typer.Option("--processes", metavar="N", min=1, help="Dask worker "
        "processes of the embedded cluster (default: one per core).")] = None,
    old_workers: Annotated[Optional[str], typer.Option("--workers", hidden=True)] = None,
    output_format: FleetFormatOpt = OutputFormat.text,
    html: Annotated[Optional[str], typer.Option("--html", metavar="FILE", help="Also write one self-contained HTML page: "
        "the fleet overview and a section per server.")] = None,
    cost_model: Annotated[Optional[str], typer.Option("--cost-model", metavar="FILE",
        help="JSON file of apply cost coefficients for every DIR server.")] = None,
    cores: Annotated[Optional[int], typer.Option(metavar="N", help="CPU cores of the replicas (DIR servers).",
                                                 min=CORES_RANGE[0], max=CORES_RANGE[1])] = None,
    clock: ClockArgs,
    target_version: TargetVersionOpt = None,
) -> None:
    """advise for every server of a fleet, on Dask: files read in parallel across the cluster,
    each server's simulation chained over its files; a table, JSON or one HTML page. A server
    whose files cannot be read is reported with its error (exit 2) and the others complete."""
    from ..fleet import connect, entries_from_dirs, fleet as run_fleet, load_fleet
    from ..report.fleet import fleet_json, render_console, render_html

    try:
        if old_workers is not None:
            raise ConfigError(RENAMED_WORKERS)
        if fleet_file and dirs:
            raise ConfigError("give either --fleet FILE or directories, not both")
        parse_version_option("--target-version", target_version)
        if fleet_file:
            entries = load_fleet(fleet_file)
        elif dirs:
            entries = entries_from_dirs(dirs, cost_model=cost_model, cores=cores, history_size=clock.history_size,
                                        commit_order=clock.commit_order, schema=clock.schema)
        else:
            raise ConfigError("give a --fleet FILE or one binlog directory per server")
        if target_version:  # every server that does not name its own
            entries = [replace(e, target_version=e.target_version or target_version) for e in entries]
        client, cluster = connect(scheduler, processes)
        try:
            doc = fleet_json(run_fleet(entries, client).results)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
        if html:
            write_html(html, render_html(doc))
    except LagAdvisorError as err:
        raise fail(err) from None
    if output_format == OutputFormat.json:
        print(json.dumps(doc, indent=2, sort_keys=True))
    else:
        render_console(doc, console())
    for s in doc["servers"]:
        for w in s["warnings"]:
            err_console.print(f"lagadvisor: warning: {s['name']}: {w}", soft_wrap=True)
        if s["error"] and output_format == OutputFormat.json:  # the table already shows it
            err_console.print(f"lagadvisor: error: {s['name']}: {s['error']}", soft_wrap=True)
    if doc["fleet"]["failed"]:
        raise typer.Exit(EXIT_BAD_INPUT)
