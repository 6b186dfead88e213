"""The top of every advice report: current vs recommended, the assumptions, the bottleneck.

In the style of the MySQL Shell upgrade checker's summary: what a reader needs before the
findings. Every assumption is stated once here (cores, durability, workers, cost model default
or given) and every number uses one baseline: the recorded clock at the replica's workers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..kinds import Policy, ReplicaMode
from ..sim.model import CostModel, workers_text
from . import Advice
from .plan import Config


@dataclass(frozen=True)
class Bottleneck:
    """Where the simulated catch-up time goes, resource by resource (seconds, not additive:
    the stages overlap; ``dependencies``: the simulated coordinator's time asleep on them), and
    which one bounds it: with several workers ``Context.bound_by`` (the largest part of the
    simulated coordinator's time, as the many-core lab reads a real one's), with one the largest
    resource."""

    name: str                  # "commit and fsync" | "worker CPU" | "coordinator" | "dependencies"
    seconds: dict[str, float]
    total: float               # the simulated catch-up
    ideal_speedup: float       # the clock's: transactions / depth (unlimited workers, free commits)
    speedup: float             # simulated, against one worker with the same settings

    def sentence(self, config: Config, cores: int) -> str:
        used = self.seconds[self.name]
        others = ", ".join(f"{k} {v:,.3f} s" for k, v in self.seconds.items() if k != self.name)
        if config.workers <= 1:
            return (f"With one applier thread everything is serial, whatever the clock allows "
                    f"({self.ideal_speedup:,.2f}x with unlimited workers); the largest part is {self.name} "
                    f"({used:,.3f} s of the {self.total:,.3f} s)" + (f"; other resources: {others}" if others else "")
                    + ".")
        if self.name == "dependencies":
            why = (f"the transactions depend on each other: the clock's longest chain bounds it "
                   f"({self.ideal_speedup:,.2f}x at best)")
        else:
            what = {"commit and fsync": "commit and fsync, the replica's serial commit stage",
                    "worker CPU": f"worker CPU on {cores} cores",
                    "coordinator": "the coordinator reading and dispatching events"}[self.name]
            why = f"the replica is bound by {what} ({used:,.3f} s of the {self.total:,.3f} s), not by dependencies"
        return (f"The clock allows {self.ideal_speedup:,.2f}x with unlimited workers (dependency-bound); the "
                f"simulation gives {self.speedup:,.2f}x at {config.workers} workers because {why}"
                + (f"; other resources: {others}" if others else "") + ".")


def bottleneck(advice: Advice, config: Config) -> Bottleneck:
    ctx = advice.context
    res = ctx.run(config.clock, config.workers, preserve=config.preserve, durable=config.durable)
    one = ctx.seconds(config.clock, 1, preserve=config.preserve, durable=config.durable)
    seconds = ctx.resource_seconds(res, config.workers, config.durable)
    ideal = _ideal(advice, config)
    if config.workers > 1:
        seconds["dependencies"] = res.dependency_wait_us / 1e6
        name = ctx.bound_by(res, config.workers, config.durable)
    else:
        name = max(seconds, key=lambda k: (seconds[k], k))
    total = res.apply_us / 1e6
    return Bottleneck(name, seconds, total, ideal, one / total if total > 0 else 0.0)


def _ideal(advice: Advice, config: Config) -> float:
    """The dependency-bound speedup of what schedules the replica: the clock's transactions over
    its depth; MariaDB's conservative mode: transactions per group commit; its speculative modes:
    the re-derived WRITESET clock (the conflicts)."""
    a = advice.context.analysis
    clock = config.clock
    if config.mode == ReplicaMode.MARIADB_CONSERVATIVE:
        groups = len({f.commit_id if f.commit_id is not None else ("alone", i)
                      for i, f in enumerate(advice.context.facts)})
        return len(advice.context.facts) / groups if groups else 0.0
    if ReplicaMode(config.mode).speculative:
        clock = Policy.WRITESET
    if clock == Policy.RECORDED:
        return a.total.recorded.ideal_speedup
    stats = a.policies.clocks.get(clock) if a.policies else None
    return stats.ideal_speedup if stats else 0.0


def cost_model_origin(cost: CostModel) -> str:
    return cost.origin()


def cores_assumption(ctx) -> str:
    """The replica's cores and where they came from: the knee and the bottleneck depend on them,
    and MySQL does not report its host's cores over SQL (8.4+ at its compiled defaults bounds them:
    server.cores), so an assumed count says so (issue 33)."""
    n = ctx.cost.cores
    if ctx.cores_given:
        return f"replica: {n} cores (--cores)"
    if ctx.cores_read:
        return f"replica: {n} cores, {ctx.cores_read}"
    if ctx.cores_given is False:
        server = "MariaDB" if ctx.mariadb else "MySQL"
        why = (("its settings do not show them" + ("" if ctx.mariadb else
                                                    ": MySQL before 8.4, or innodb_read_io_threads not at its default"))
               if ctx.settings is not None else
               f"{server} does not report its host's cores" + ("" if ctx.mariadb else "; --host on 8.4+ may show them"))
        return f"replica: {n} cores, assumed: the cost model's ({why}; give the replica's with --cores)"
    return f"replica: {n} cores (the cost model's; --cores to change)"


def schema_costs_assumption(ctx) -> str:
    """What the workers' secondary index entries and foreign-key checks were priced from: counted
    from the schema (the binlog's DDL, ``--schema``, ``--host``) and priced past the cost model's
    per-row share (``sim.model.extra_index_entries``, ``extra_fk_checks``), or none counted, so
    the per-row share alone (a schema with more indexes is slower than that)."""
    c = ctx.cost
    n = ctx.schema_counts()
    entries, checks, extra_entries, extra_checks = n["entries"], n["checks"], n["extra_entries"], n["extra_checks"]
    share = "one secondary index entry an inserted or deleted row, two an updated one, one foreign-key check an insert"
    if c.index_entry_us <= 0 and c.fk_check_us <= 0:
        return ("secondary indexes and foreign keys: in the cost model's per-row costs (it prices neither apart: "
                "a calibrated model holds its replica's)")
    if not entries and not checks:
        how = ("the schema given shows none for the tables written" if ctx.options.catalog is not None else
               "no table's indexes known: give --schema or --host")
        return (f"secondary indexes and foreign keys: none counted ({how}); priced as the cost model's per-row share "
                f"({share}): a schema with more is slower")
    return (f"secondary indexes and foreign keys: counted from the schema, {entries:,} index entries and {checks:,} "
            f"foreign-key checks; past the cost model's per-row share ({share}): {extra_entries:,} entries at "
            f"{c.index_entry_us:g} us and {extra_checks:,} checks at {c.fk_check_us:g} us")


def _mariadb_name(name: str) -> str:
    """A replica setting as MariaDB names it."""
    return {"replica_parallel_workers": "slave_parallel_threads"}.get(name, name)


def assumptions(advice: Advice) -> list[str]:
    ctx = advice.context
    b = ctx.baseline
    w = max(b.workers, 1)
    out = [cores_assumption(ctx)]
    durability = ("durable (sync_binlog=1, innodb_flush_log_at_trx_commit=1)" if b.durable else "relaxed durability")
    if ctx.mariadb:  # MariaDB's names: its parallel applier always commits in order
        from ..kinds import ReplicaMode

        settings = (f"slave_parallel_threads={b.workers}, slave_parallel_mode={ReplicaMode(b.mode).parallel_mode}, "
                    f"{durability}")
    else:
        settings = (f"{b.workers} workers, {durability}, "
                    f"preserve_commit_order={'ON' if b.preserve_commit_order else 'OFF'}")
    named = [_mariadb_name(n) if ctx.mariadb else n for n in b.assumed]
    if b.given:
        rest = (f"; {', '.join(named)} assumed at {'MariaDB' if ctx.mariadb else 'MySQL'}'s defaults"
                if b.assumed else "")
        src = f"read from {ctx.settings.host}" if ctx.settings is not None else "not read from a server"
        out.append(f"replica settings: {settings}; {', '.join(b.given)} given with --replica-setting; the rest "
                   f"{src}{rest}")
    elif ctx.settings is not None and not b.assumed:
        out.append(f"replica settings read from {ctx.settings.host}: {settings}")
    else:
        src = "MariaDB" if ctx.mariadb else "MySQL"
        out.append(f"replica settings: {settings}; {', '.join(named) or 'all'} assumed at {src}'s defaults "
                   "(--host reads them)")
    # issue 71: the server's role (a source has no applier) and its values not yet in effect
    if ctx.settings is not None:
        out.extend(ctx.settings.lines())
    if b.workers == 0:
        out.append(("slave_parallel_threads=0" if ctx.mariadb else "0 workers")
                   + " is the single-threaded applier: simulated as one worker (the same time in this model)")
    out.append(f"cost model: {cost_model_origin(ctx.cost)}")
    out.append(schema_costs_assumption(ctx))
    if ctx.scans:
        cat = ctx.options.catalog
        how = ("their sizes from the server's TABLE_ROWS" if cat is not None and cat.table_rows else
               "their sizes unknown without --host, counted as the rows the binlog inserted (a lower bound)")
        out.append(f"tables without any index ({', '.join(sorted(ctx.scans))}): the replica scans them for "
                   f"each UPDATE/DELETE at {ctx.cost.scan_row_us:g} us per row, {how}")
    from ..sim.stream import SKETCH_ALPHA, exact_lags

    if len(ctx.facts) > exact_lags():
        out.append(f"lag percentiles streamed over {len(ctx.facts):,} transactions: each within {SKETCH_ALPHA:.1%} "
                   "of the exact value (the maximum is exact)")
    out.append(f"baseline: the clock the source recorded, at {workers_text(w)}; every time is a "
               "catch-up time (a stopped replica applying the whole input)")
    return out


def worst_window(advice: Advice) -> dict | None:
    """The window of the source's timeline where the replica falls furthest behind now (lag p99,
    arrivals at the source's commit times), and the same window with the plan; None for inputs
    too short to split (``sim.windows.auto_window``) or without commit times."""
    from ..sim.run import window_for
    from ..sim.windows import worst

    ctx, plan = advice.context, advice.plan
    win = window_for(ctx.facts, ctx.window_s)
    if not win or plan is None:
        return None

    def windows(c: Config):
        return ctx.run(c.clock, c.workers, preserve=c.preserve, durable=c.durable, mode=c.mode,
                       catch_up=False).windows

    now = windows(plan.current)
    if not now:
        return None
    w = worst(now, 1)[0]
    later = {x.start_us: x for x in windows(plan.recommended)}
    after = later.get(w.start_us)
    return {"window_seconds": win, "windows": len(now), **w.as_json(), "label": w.label(),
            "lag_p99_seconds_with_plan": round(after.lag_p99_seconds, 6) if after else None}


def summary(advice: Advice) -> dict:
    """The report's summary as data (JSON ``summary``; the text and HTML render it)."""
    plan = advice.plan
    out: dict = {"findings": advice.counts(), "assumptions": assumptions(advice),
                 "confirmed": [f"{f.setting} = {f.current}" for f in advice.confirmed]}
    p = advice.context.analysis.policies
    note = p.not_computed_note(advice.context.analysis.total.transactions) if p else None
    if note:  # only then: the marked outputs change, no other
        out["not_computed"] = note
    if plan is None:
        out.update(current=None, recommended=None, bottleneck=None, gain=0.0)
        return out
    cost = advice.context.cost
    cores = cost.cores
    cur_b = bottleneck(advice, plan.current)

    out.update(
        current={"config": plan.current.describe(), "catch_up_seconds": round(plan.current_seconds, 6),
                 "catch_up_seconds_band": cost.time_band_json(plan.current_seconds, plan.current.workers),
                 "lag_p99_seconds": round(plan.current_lag_p99, 6)},
        recommended={"config": plan.recommended.describe(), "catch_up_seconds": round(plan.recommended_seconds, 6),
                     "catch_up_seconds_band": cost.time_band_json(plan.recommended_seconds, plan.recommended.workers),
                     "lag_p99_seconds": round(plan.recommended_lag_p99, 6),
                     "changes": [f"{s.setting}: {s.before} -> {s.after}" for s in plan.steps]},
        gain=round(plan.gain, 4),
        worst_window=worst_window(advice),
        bottleneck={"name": cur_b.name, "sentence": cur_b.sentence(plan.current, cores),
                    "seconds": {k: round(v, 6) for k, v in cur_b.seconds.items()},
                    "ideal_speedup": round(cur_b.ideal_speedup, 4), "simulated_speedup": round(cur_b.speedup, 4)},
    )
    return out
