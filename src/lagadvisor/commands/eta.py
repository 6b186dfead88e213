"""``lagadvisor eta``: when a replica will catch up (read-only)."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Optional

import typer

from ..errors import ConfigError, LagAdvisorError
from .common import fail, server_options
from .options import CoresOpt, CostModelOpt, OutputFormat, ServerArgs, format_option, grouped

EtaFormatOpt = format_option("text or json (one line each estimate).")


def _emitter(output_format: OutputFormat, first_notes: tuple[str, ...] = ()):
    """How each estimate is printed: one JSON line, or the text block with the earlier
    predictions' errors; ``first_notes`` join the first estimate's notes (said once)."""
    from dataclasses import replace as dc_replace

    from ..sim import eta as E

    pending = list(first_notes)

    def emit(e, earlier):
        if pending:
            e = dc_replace(e, notes=[*e.notes, *pending])
            pending.clear()
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

    return emit


def _with_cores(cost, cores: int | None, shown):
    """The cost model on the replica's cores: --cores, else what its defaults show
    (server.cores), else the model's; and the note that says which (the alternatives' worker
    counts depend on them)."""
    from dataclasses import replace as dc_replace

    if cores is not None:
        return dc_replace(cost, cores=cores), f"replica cores: {cores} (--cores)"
    if shown is not None:
        return dc_replace(cost, cores=shown.cores), f"replica cores: {shown.cores}, {shown.sentence()}"
    return cost, (f"replica cores: {cost.cores}, assumed: the cost model's (this server's settings do not show "
                  "them; give the replica's with --cores)")


@grouped(host="The lagging replica: its backlog (performance_schema.replication_connection_status), "
              "settings, applier progress and, when readable here, its relay logs (read-only; needs SELECT on "
              "performance_schema).")
def eta(
    *,
    source: Annotated[Optional[str], typer.Option(
        "--source", help="The source's host: stream the unapplied transactions from its binlogs (needs "
                         "REPLICATION SLAVE and REPLICATION CLIENT there; same user and TLS options); "
                         "default: the replica's relay logs, when readable here.")] = None,
    source_port: Annotated[Optional[int], typer.Option("--source-port", help="The source's port.")] = None,
    sample: Annotated[str, typer.Option(help="Watch the applier at most this long before the first "
                                             "estimate (its rate calibrates the simulation; the backlog is "
                                             "sampled meanwhile): 5s, 1m. Sooner once it applied 500 "
                                             "transactions over 2 s.")] = "5s",
    watch: Annotated[Optional[str], typer.Option(help="Re-estimate every N (10s, 1m) until caught up, "
                                                      "with the earlier predictions' errors.")] = None,
    max_eta: Annotated[Optional[str], typer.Option("--max-eta", help="Exit 1 when the ETA (current settings; with "
                                                                      "--watch the last one) is longer than this "
                                                                      "(10m), or never.")] = None,
    nice: Annotated[int, typer.Option(min=0, max=19, help="Lower the CPU priority of the threads that read "
                                                          "the backlog by this much (0: not), so that they do not "
                                                          "slow the applier on the replica's host.")] = 10,
    cost_model: CostModelOpt = None,
    cores: CoresOpt = None,
    output_format: EtaFormatOpt = OutputFormat.text,
    server: ServerArgs,
) -> None:
    """When will this replica catch up? The backlog simulated with the replica's settings and the
    advisor's alternatives, calibrated on the applier's own progress (read-only)."""
    from dataclasses import replace as dc_replace

    from ..server import eta as S
    from ..sim import eta as E
    from ..sim.model import CostModel

    try:
        srv = server_options(server)
        if srv is None:
            raise ConfigError("eta needs the replica: --host, --socket or --login-path")
        sample_s = E.parse_duration(sample)
        watch_s = E.parse_duration(watch) if watch is not None else None
        limit = E.parse_duration(max_eta) if max_eta is not None else None
        cost = CostModel.from_file(cost_model) if cost_model else CostModel()
        conn = S.open_replica(srv)
        cfg = S.replica_config(conn)
        cost, cores_note = _with_cores(cost, cores, S.replica_cores(conn, srv) if cores is None else None)
        first = S.snapshot(conn)
        start, local = (0, 0), False
        if source:
            files = S.source_files(dc_replace(srv, host=source, port=source_port or srv.port, socket=None),
                                   first.executed)
        else:
            files = S.relay_files(conn) if first.unapplied else []
            start, local = S.relay_start(conn, files), True
        last, _ = S.run(conn, files, cfg, cost, sample_s=sample_s, watch_s=watch_s,
                        emit=_emitter(output_format, (cores_note,)),
                        start=start, local=local, nice=nice, started_at=E.process_started_at())
    except LagAdvisorError as err:
        raise fail(err) from None
    eta_s = last.current.eta_s
    if limit is not None and (eta_s is None or eta_s > limit):
        print(f"lagadvisor: ETA {E.fmt_s(eta_s)} is over --max-eta {max_eta}", file=sys.stderr)
        raise typer.Exit(1)
