"""``lagadvisor simulate``."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from ..cpus import usable_cpus
from ..errors import ConfigError, LagAdvisorError
from ..kinds import Applier, Policy, ReplicaMode
from .common import (Progress, console, cost_model as cost_model_of, fail, finite, int_list, read_inputs, read_warnings,
                     server_cores)
from .options import (ClockArgs, CoresOpt, CostModelOpt, FormatOpt, JobsOpt, OutputFormat, ProgressOpt,
                      RequiredFilesArg, ServerArgs, WindowArgs, grouped, policy_name)


#: ``--mode``'s choices (typer shows their values).
Mode = ReplicaMode


@grouped
def simulate(
    files: RequiredFilesArg,
    *,
    workers: Annotated[str, typer.Option(metavar="N,N,...", help="replica_parallel_workers values to simulate "
                                              "(0 = single-threaded applier).")] = "1,2,4,8,16",
    policy: Annotated[Optional[list[str]], typer.Option(
        callback=policy_name, metavar="POLICY",
        help="Clocks to simulate: COMMIT_ORDER, WRITESET, WRITESET_SESSION (re-derived) or 'recorded'; "
             "any case. "
             "Repeat the option for several. Default: the three policies.")] = None,
    preserve_commit_order: Annotated[str, typer.Option(metavar="{on|off}", help="replica_preserve_commit_order: on or off.")] = "on",
    durable: Annotated[bool, typer.Option("--durable/--relaxed",
        help="Replica durability: --durable = sync_binlog=1 and innodb_flush_log_at_trx_commit=1 "
             "(every commit group pays a flush); --relaxed = 0 and 2.")] = True,
    cost_model: CostModelOpt = None,
    cores: CoresOpt = None,
    catch_up: Annotated[bool, typer.Option("--catch-up",
        help="All transactions are already in the relay log (a stopped replica catching up); "
             "default: they arrive at the source's commit timestamps.")] = False,
    lag_threshold: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds; report time spent above it.")] = 1.0,
    window: Annotated[str, typer.Option(metavar="DURATION", help="Lag per time window of the source's timeline: a duration "
                                             "(15m, 1h, 1d), off, or auto (1h-style windows for inputs "
                                             "longer than 2 hours).")] = "auto",
    mode: Annotated[Mode, typer.Option(help="Applier: logical_clock (MySQL), database (5.6 "
                                            "DATABASE mode), mariadb_conservative, mariadb_optimistic (MariaDB's "
                                            "default since 10.5) or mariadb_aggressive.")] = Mode.LOGICAL_CLOCK,
    applier: Annotated[Applier, typer.Option(
        help="mta (the multi-threaded applier of 5.7 to 9.x) or csa: MySQL 26.7+'s Change Stream Applier "
             "(APPLIER_VERSION=2; --workers = APPLIER_WORKER_COUNT), scheduled as the MySQL source does "
             "(mysql-server commit 312d9ed; no 26.x server measured).")] = Applier.MTA,
    output_format: FormatOpt = OutputFormat.text,
    clock: ClockArgs,
    binlog_window: WindowArgs,
    server: ServerArgs,
    jobs: JobsOpt = 1,
    progress: ProgressOpt = True,
) -> None:
    """Simulate the replica's multi-threaded applier for each policy and worker count: apply
    time, speedup, lag against the source's commit timeline, worker utilisation."""
    from ..depgraph.read import prepare
    from ..depgraph.policies import POLICIES
    from ..analysis.results import not_computed_note
    from ..report.commands import render_simulate, simulate_doc
    from ..sim.facts import read_facts
    from ..sim.model import ReplicaConfig
    from ..sim.run import sweep, window_for
    from ..sim.windows import parse_window

    try:
        wl = int_list(workers, "--workers")
        finite(lag_threshold, "--lag-threshold")
        if mode.mariadb:
            # MariaDB schedules by its group-commit ids: the policy clocks do not apply
            if policy and set(policy) != {Policy.RECORDED}:
                raise ConfigError(f"--policy has no effect with --mode {mode.value} (MariaDB schedules by "
                                  "commit_id groups)")
            policy = [Policy.RECORDED]
        pols = policy or list(POLICIES)
        for p in pols:
            if p not in (Policy.RECORDED, *POLICIES):
                raise ConfigError(f"--policy {p}: expected one of recorded, {', '.join(POLICIES)}")
        if preserve_commit_order not in ("on", "off"):
            raise ConfigError("--preserve-commit-order: expected on or off")
        _check_applier(applier, mode, wl)
        cost = cost_model_of(cost_model, cores)
        inp = read_inputs(files, clock, binlog_window, server)
        cost = server_cores(cost, cores, inp.server)
        run = prepare(inp.files, inp.options)
        _check_mode_fits(mode, run)
        with Progress(inp.files, progress) as bar:
            if jobs != 1 and len(inp.files) > 1:
                from ..sim.parallel import read_facts_parallel

                got = read_facts_parallel(inp.files, inp.options, run, jobs)
            else:
                got = read_facts(inp.files, inp.options, run, on_progress=bar.on_progress)
            facts = got.facts
            cfg = ReplicaConfig(0, preserve_commit_order == "on", durable, mode=mode, applier=applier)
            window_s = window_for(facts, parse_window(window))
            cells = len(pols) * (len(set(wl)) + (1 if wl and wl[0] != 1 else 0))
            rows = sweep(facts, pols, wl, cfg, cost, catch_up=catch_up, threshold_s=lag_threshold,
                         window_s=window_s, jobs=jobs or usable_cpus(),
                         on_cell=bar.steps("simulating", cells))
        if mode.mariadb:
            for r in rows:  # one row per worker count, named by the mode that schedules it
                r.policy = mode.value
    except LagAdvisorError as err:
        raise fail(err) from None
    note = not_computed_note(getattr(got, "not_computed", 0), len(facts))
    if output_format == OutputFormat.json:
        print(json.dumps(simulate_doc(rows, transactions=len(facts), catch_up=catch_up, durable=durable,
                                      mode=mode.value, cost=cost, window_s=window_s, written_by=run.written.name,
                                      applier=applier, not_computed=note),
                         indent=2, sort_keys=True))
    else:
        render_simulate(rows, console(), transactions=len(facts), durable=durable,
                        preserve_commit_order=preserve_commit_order, cost=cost, catch_up=catch_up, applier=applier,
                        not_computed=note)
    read_warnings(got.summaries)


def _check_applier(applier, mode, wl) -> None:
    if applier is Applier.CSA and mode is not Mode.LOGICAL_CLOCK:
        raise ConfigError(f"--applier csa schedules by last_committed/sequence_number: it has no "
                          f"--mode {mode.value}")
    if applier is Applier.CSA and 0 in wl:
        raise ConfigError("--applier csa: --workers are APPLIER_WORKER_COUNT values, at least 1 "
                          "(0 is the MTA's single-threaded applier)")


def _check_mode_fits(mode, run) -> None:
    """A MariaDB mode on a MySQL source's binlogs simulated 1.00x as if it meant something: they
    carry no commit ids or MariaDB GTID flags to schedule by."""
    if mode.mariadb and not run.written.mariadb:
        raise ConfigError(f"--mode {mode.value} schedules by a MariaDB source's commit ids and GTID flags: "
                          f"these binlogs were written by MySQL {run.written.server_version} (use --mode "
                          f"logical_clock or database)")
