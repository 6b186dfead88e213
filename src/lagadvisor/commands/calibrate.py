"""``lagadvisor calibrate``: a cost model fitted from a replica's binlogs, or live from a running
replica (read-only)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..cpus import usable_cpus
from ..errors import LagAdvisorError
from .common import Progress, err_console, fail, input_files, output_path, pymysql_settings_of, server_options, warn, \
    write_output
from .options import ServerArgs, grouped


@grouped(host="Watch this running replica for --window seconds: its applied transactions, stages and "
              "fsyncs in performance_schema, and its own binlog (read-only; needs SELECT on performance_schema, "
              "REPLICATION CLIENT and REPLICATION SLAVE).")
def calibrate(
    files: Annotated[Optional[list[str]], typer.Argument(help="The replica's own binlog files "
                                                    "(log_replica_updates=ON), written while it "
                                                    "applied a backlog (--workers: with how many); or --host.")] = None,
    *,
    window: Annotated[Optional[float], typer.Option(
        "--window", help="With --host: seconds to watch the running replica (read-only: performance_schema "
                         "and its own binlog; any worker count). Default 60. The run ends within about twice "
                         "the window (at least the window + 5 s) plus the fit: the replica's binlog of the "
                         "window is read for at most as long as the window.", min=1.0, max=86400.0)] = None,
    nice: Annotated[int, typer.Option(min=0, max=19, help="With --host: lower this process's CPU priority by "
                                                          "this much (0: not), so that its polls, reads and fit "
                                                          "do not slow the applier on the replica's host.")] = 10,
    server: ServerArgs,
    durable: Annotated[bool, typer.Option("--durable/--relaxed",
        help="The replica's durability during that run (sync_binlog=1 and "
             "innodb_flush_log_at_trx_commit=1, or relaxed).")] = True,
    base: Annotated[Optional[str], typer.Option(help="For --durable: a cost model fitted on a relaxed "
                                                     "run, to split CPU from flush time.")] = None,
    cores: Annotated[Optional[int], typer.Option(help="CPU cores of the replica.", min=1, max=4096)] = None,
    workers: Annotated[int, typer.Option(
        "--workers", help="replica_parallel_workers while it applied the backlog in FILES: with 2 or more the "
                          "fit goes through the simulation of that many workers (the commit gaps of several "
                          "workers are not one transaction's time).", min=1, max=1024)] = 1,
    redo_share: Annotated[Optional[float], typer.Option(
        help="For --durable: the InnoDB redo fsync's share of the fsync time per commit (the rest "
             "is the binlog fsync); default: the --base model's split. Measure it from "
             "performance_schema.file_summary_by_event_name (SUM_TIMER_MISC of "
             "wait/io/file/innodb/innodb_log_file against wait/io/file/sql/binlog).",
        min=0.0, max=1.0)] = None,
    combine: Annotated[bool, typer.Option(
        "--combine", help="FILES are cost models of one replica calibrated at different times (calibrate "
                          "--host run again): pool them, each cost the median, the error band from their "
                          "spread.")] = False,
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="Write the model here.")] = None,
) -> None:
    """Fit the apply cost model (per transaction, per row by kind, per byte, flush) from a
    replica's commit timestamps; use it with `simulate --cost-model`."""
    from ..sim.calibrate import calibrate as fit
    from ..sim.model import CostModel, workers_text

    try:
        srv = server_options(server)
        if combine:
            if srv is not None or window is not None or workers != 1 or base or redo_share is not None:
                raise LagAdvisorError("--combine takes only cost model files (and -o)")
            return _combine(files or [], output)
        if srv is not None:
            if files:
                raise LagAdvisorError("give either binlog files or --host (a running replica), not both")
            if workers != 1:
                raise LagAdvisorError("--workers is for binlog files: with --host the replica's own worker count is read")
            return _calibrate_live(srv, window or 60.0, base, cores, output, nice)
        if window is not None:
            raise LagAdvisorError("--window needs --host (the running replica to watch)")
        if not files:
            raise LagAdvisorError("give the replica's binlog files, or --host to calibrate a running replica")
        files = input_files(files)
        output_path(output, files)
        with Progress(files, True) as bar:
            result = fit(files, durable=durable, base=CostModel.from_file(base) if base else None,
                         cores=cores or usable_cpus(), redo_share=redo_share,
                         on_transaction=bar.on_transaction, on_progress=bar.on_progress, workers=workers)
    except LagAdvisorError as err:
        raise fail(err) from None
    _emit(_cores_noted(result.model, cores), output)
    if cores is None:
        _assumed_cores(workers)
    if result.evidence is not None:
        e = result.evidence
        err_console.print(
            f"lagadvisor: fitted through the simulation of {e['workers']} workers on {e['pieces']} pieces of the "
            f"catch-up ({e['transactions']:,} transactions applied behind the source): CPU x{e['cpu_scale']:.3f} "
            f"of the base model, commit {_commit_text(e)}, fsync x{e['fsync_scale']:.3f}; piece time error "
            f"rms {e['piece_error_rms']:.1%}; error band of absolute times +-{e['error_band']:.1%} at "
            f"{workers_text(e['workers'])} (held-out checks: every other piece {e['held_out']['interleaved']:+.1%}, "
            f"second half {e['held_out']['time_split']:+.1%}{_stalls_text(e)}){_elsewhere(result.model)}",
            soft_wrap=True)
        _latencies_note(result.model, e)
    else:
        err_console.print(f"lagadvisor: fitted on {result.samples:,} commit gaps (mean {result.mean_gap_us:,.0f} us, "
                          f"R^2 {result.r2:.3f}; stalls left out of the fit, their time spread over the costs: "
                          f"x{result.stall_factor:.2f}); error band of absolute times +-{result.model.error_band:.1%} "
                          f"at 1 worker (held-out checks, in the model as error_band){_elsewhere(result.model)}",
                          soft_wrap=True)
    for n in result.notes:
        err_console.print(f"lagadvisor: note: {n}", soft_wrap=True)
    for w in result.warnings:
        warn(w)


def _commit_text(e: dict) -> str:
    """The fitted commit stage's costs: per member, and per group where the model has one."""
    group = e.get("commit_group_us", 0.0)
    return (f"{group:,.1f} us a group + {e['commit_us']:,.1f} us a member" if group
            else f"{e['commit_us']:,.1f} us")


def _stalls_text(evidence: dict) -> str:
    """The band's stall term for the summary line (sim.calibrate ``fit_workers``' evidence)."""
    stalls = evidence.get("stalls") or {}
    return f"; the replica's stalls {stalls['share']:.1%} of its time" if stalls.get("count") else ""


def _latencies_note(model, evidence: dict | None = None) -> None:
    """The wake-up latencies a dependency chain pays on every transaction: ``calibrate --host``
    measures them on the replica when its window holds enough (sim.live ``handoffs``,
    ``coordinator_wakeups``; the evidence's ``wakeups``); ``calibrate --workers`` fits them through
    the simulation where the catch-up's dependency chains show them (the evidence's ``wake``:
    sim.calibrate ``wake_share``); one of one worker measures the coordinator's (sim.calibrate
    ``take_out_wakeups``); else they are the base model's (the built-in ones were measured on the
    16-core lab's per-transaction timelines, bench/manycore/timeline.py; with the earlier fitted
    ones, 55 and 79 us, a 2-core VM's pinned replica caught up conflict-heavy +43% to +61% off)."""
    fitted = (evidence or {}).get("wake") or {}
    if fitted.get("fitted"):
        err_console.print(f"lagadvisor: note: wake-up latencies fitted through the simulation: wakeup_us "
                          f"{fitted['wakeup_us']:g} us, handoff_us {fitted['handoff_us']:g} us (x{fitted['scale']:.3f} of "
                          f"the base model's; about {fitted['share']:.0%} of this catch-up's simulated time is its "
                          f"dependency chains' wake-ups)", soft_wrap=True)
        return
    wake = (evidence or {}).get("wakeups", {})
    measured = [f for f in ("wakeup_us", "handoff_us") if "median_us" in wake.get(f, {})]
    kept = [f for f in ("wakeup_us", "handoff_us") if f not in measured and getattr(model, f)]
    if measured:
        err_console.print("lagadvisor: note: wake-up latencies measured on this replica: " + ", ".join(
            f"{f} {wake[f]['median_us']:g} us ({wake[f]['samples']} samples)" for f in measured), soft_wrap=True)
    if kept:
        names = {"wakeup_us": "the coordinator's", "handoff_us": "the commit-order hand-off's"}
        err_console.print(f"lagadvisor: note: the wake-up latencies are the base model's, not fitted: "
                          + " and ".join(f"{names[f]} {getattr(model, f):g} us" for f in kept)
                          + f" ({', '.join(kept)}), paid by every transaction of a dependency chain; "
                          + ("too few in the window: " + "; ".join(wake[f]["why"] for f in kept if "why" in wake.get(f, {}))
                             + "; " if wake else "")
                          + (f"this catch-up's dependency chains hardly show them (about {fitted['share']:.0%} of its "
                             f"simulated time); " if fitted else "")
                          + "set this replica's in the model file if you know them", soft_wrap=True)


def _assumed_cores(workers: int) -> None:
    """No --cores: the fit assumed this machine's, said on stderr once it succeeded (the
    replica's cores decide how its workers' CPU overlaps, so a fit of several workers under the
    wrong count misplaces the costs). ``workers`` 0: calibrate --host, whose replica may run on
    another host."""
    n = usable_cpus()
    if workers >= 2:
        why = f"; a fit of {workers} workers depends on them: give the replica's --cores"
    elif workers == 0:
        why = "; the replica's host may have others: give its --cores"
    else:
        why = ""
    warn(f"the replica's CPU cores were not given (--cores): assumed {n}, this machine's{why}")


def _cores_noted(model, cores: int | None, read: str | None = None):
    """The model with its ``measured_on`` saying where the cores came from when --cores was not
    given: ``read`` from the server's settings (calibrate --host), else assumed (the file
    outlives this run's stderr)."""
    if cores is not None:
        return model
    from dataclasses import replace

    from ..sim.model import one_line

    how = f"({read})" if read else "(assumed: the calibrating machine's, --cores not given)"
    return replace(model, measured_on=one_line(f"{model.measured_on} {how}"))


def _elsewhere(model) -> str:
    """The calibrated band away from the worker count it was checked at (``band_elsewhere``)."""
    return f", +-{model.band_elsewhere():.1%} at other worker counts"


def _emit(model, output: str | None) -> None:
    """The fitted model as JSON: to ``-o``, else stdout."""
    text = model.to_json()
    if output:
        write_output(output, text)
    else:
        print(text)


def _combine(files: list[str], output: str | None) -> None:
    """calibrate --combine: several calibrations' models pooled (sim.calibrate.combine_models)."""
    from ..sim.calibrate import combine_models
    from ..sim.model import CostModel, workers_text

    from ..inputs import resolve

    try:
        output_path(output, files)
        files = resolve(files)   # one model given twice (or through a link) pooled as two: refused
        result = combine_models([CostModel.from_file(f) for f in files])
    except LagAdvisorError as err:
        raise fail(err) from None
    _emit(result.model, output)
    e = result.evidence
    err_console.print(
        f"lagadvisor: pooled {e['members']} calibrations (each cost the median); a transaction of one insert, "
        f"update and delete costs {', '.join(f'{u:,.0f}' for u in e['unit_transaction_us'])} us in them, "
        f"{e['pooled_unit_transaction_us']:,.0f} us pooled: spread +-{e['spread']:.1%}, the windows' own median "
        f"band +-{e['median_member_band']:.1%}; error band of absolute times +-{e['error_band']:.1%}"
        + (f" at {workers_text(result.model.calibrated_workers)}" if result.model.calibrated_workers else "")
        + _elsewhere(result.model), soft_wrap=True)


def _own_fsyncs(e: dict) -> str:
    """The evidence's fsyncs read per transaction (durable, waits consumers on), for the summary line."""
    f = e.get("fsync_waits_timed") or {}
    if not e["durable"] or not f.get("of_timed"):
        return ""
    text = f"; own binlog and redo fsyncs read for {f['transactions']:,} of {f['of_timed']:,} transactions"
    if f.get("alone_median_binlog_us") is not None:
        text += (f" (the model's: medians of those applied alone, binlog {f['alone_median_binlog_us']:,.0f} us, "
                 f"redo {f['alone_median_redo_us']:,.0f} us)")
    return text


def _calibrate_live(server, window: float, base: str | None, cores: int | None, output: str | None,
                    nice: int = 10) -> None:
    """calibrate --host: the fit from a running replica (server.calibrate samples it, sim.live fits
    the sample), the model on stdout or -o, the evidence on stderr."""
    from ..server.calibrate import calibrate_live
    from ..sim.model import CostModel, workers_text

    try:
        output_path(output, [])
        result = calibrate_live(pymysql_settings_of(server), window, base=CostModel.from_file(base) if base else None,
                                cores=cores, nice=nice, on_start=lambda s: err_console.print(
                                    f"lagadvisor: watching the replica for {window:g} s (read-only; "
                                    f"{s['workers']} workers)"))
    except LagAdvisorError as err:
        raise fail(err) from None
    e = result.evidence
    read = e["cores"]["how"] if e["cores"]["from"] == "server" else None
    _emit(_cores_noted(result.model, cores, read), output)
    err_console.print(
        f"lagadvisor: fitted live on {e['samples_kept']:,} of {e['samples']:,} applied transactions "
        f"({e['workers']} workers, {'durable' if e['durable'] else 'relaxed'}; "
        f"{'one transaction shape, the base costs scaled together; ' if e['per_row_costs'].startswith('one') else ''}"
        f"mean worker time "
        f"{e['mean_worker_us']:,.0f} us after {e['waits_taken_out_us_per_transaction']:,.0f} us of waits for the "
        f"coordinator and the commit order taken out, R^2 {e['r2']:.3f}, stalls x{e['stall_factor']:.2f}; redo fsyncs "
        f"{e['redo_fsyncs']:,} mean {e['redo_fsync_mean_us']:,.0f} us, binlog fsyncs {e['binlog_fsyncs']:,} mean "
        f"{e['binlog_fsync_mean_us']:,.0f} us; lag median {(e['lag_median_us'] or 0) / 1e3:,.1f} ms; commit from "
        f"{e['commit_us_from']}; error band of absolute times +-{e['error_band']:.1%} at "
        f"{workers_text(e['workers'])}{_elsewhere(result.model)}"
        f"{'; redo and binlog fsyncs ' + e['fsync_overlap'] if e['durable'] else ''}{_own_fsyncs(e)})",
        soft_wrap=True)
    if e.get("binlog_read_cut"):
        err_console.print(f"lagadvisor: note: {e['binlog_read_cut']}", soft_wrap=True)
    for missing in e["optional_missing"]:
        err_console.print(f"lagadvisor: note: not read: {missing}", soft_wrap=True)
    _latencies_note(result.model, e)
    if read is not None:
        err_console.print(f"lagadvisor: note: the replica's cores: {result.model.cores}, {read}", soft_wrap=True)
    elif cores is None:
        _assumed_cores(0)
