"""``lagadvisor advise``: what to change, each finding with its evidence and simulated effect."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..depgraph.pipeline import ClockOptions
from ..schema.live import ServerSettings
from ..sim.model import CostModel
from .context import Context, gather
from .findings import SCHEMA_VERSION, Finding, Severity, ordered
from .plan import Plan, build_plan
from .rules import RULES


@dataclass
class Advice:
    findings: list[Finding]
    context: Context
    plan: Plan | None = None
    confirmed: list[Finding] = field(default_factory=list)   # checked: the current value is the right one

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)

    def counts(self) -> dict[str, int]:
        return {s.value: sum(1 for f in self.findings if f.severity == s) for s in Severity}


#: Findings the plan combines (configuration the simulator runs); the others are what-ifs on the
#: workload or the schema, reported on their own.
PLAN_FINDINGS = ("dependency_tracking", "replica_durability", "replica_parallel_workers", "slave_parallel_mode")


def advise(paths: list[str], options: ClockOptions, cost: CostModel | None = None,
           settings: ServerSettings | None = None, on_transaction=None, window_s: float | None = None,
           on_progress=None, jobs: int = 1) -> Advice:
    """``window_s``: the lag window of the summary's worst window (None: chosen from the span);
    ``jobs``: simulations run at once (the same advice)."""
    ctx = gather(list(paths), options, cost or CostModel(), settings, on_transaction, on_progress)
    ctx.window_s = window_s
    ctx.jobs = jobs
    return advise_context(ctx)


def advise_context(ctx: Context) -> Advice:
    """The rules and the plan over a gathered context (``fleet`` builds the context from per-file
    parts merged exactly, then calls this as ``advise`` does)."""
    if ctx.facts and ctx.jobs > 1:
        # what every report asks for: the recorded clock's worker curve, durable and relaxed
        from .context import WORKERS

        ctx.prefetch([("recorded", w, {"durable": d}) for d in (ctx.baseline.durable, not ctx.baseline.durable)
                      for w in WORKERS])
    findings: list[Finding] = []
    for rule in RULES:
        findings.extend(rule(ctx))
    n = ctx.analysis.total.transactions
    if n < MIN_TRANSACTIONS:  # a handful of transactions says little about a workload's speed
        findings = [replace(f, severity=Severity.info,
                            evidence=f"{f.evidence} (only {n} transactions: too few to judge the size of the effect)")
                    if f.id in _SPEED_FINDINGS else f for f in findings]
    # a finding whose suggestion is what is already set is a confirmation, not advice
    confirmed = [f for f in findings if f.current is not None and f.current == f.suggested]
    findings = [f for f in findings if not (f.current is not None and f.current == f.suggested)]
    plan = None
    if ctx.facts:
        plan = build_plan(ctx, {f.id: f.suggested for f in findings if f.id in PLAN_FINDINGS})
        findings = [_in_plan(f, plan) for f in findings]
    return Advice(ordered(findings), ctx, plan, sorted(confirmed, key=lambda f: f.id))


def _in_plan(f: Finding, plan: Plan) -> Finding:
    """A configuration finding the plan left out (it gains little on top of the others) is info,
    and says so; one the plan kept carries its marginal gain."""
    steps = [s for s in plan.steps if s.finding == f.id]
    if not steps:
        return f
    step = steps[-1]
    metrics = {**f.metrics, "plan_marginal_gain": round(step.marginal_gain, 4), "in_plan": step.kept}
    if step.kept:
        final = plan.recommended.workers
        if f.id == "replica_parallel_workers" and f.suggested != str(final):
            return replace(f, metrics=metrics, evidence=f"{f.evidence}. Combined with the plan's other changes the "
                           f"knee is {final}: the plan runs {final}")
        return replace(f, metrics=metrics)
    return replace(f, severity=Severity.info, metrics=metrics,
                   evidence=f"{f.evidence}. On top of the plan's other changes it gains {step.marginal_gain:.1%} "
                            f"({step.seconds_before:,.3f} s -> {step.seconds_after:,.3f} s): left out of the plan")


MIN_TRANSACTIONS = 200
_SPEED_FINDINGS = frozenset({"replica_durability", "replica_parallel_workers", "dependency_tracking",
                             "binlog_group_commit_sync_delay", "binlog_transaction_dependency_history_size",
                             "hot_rows", "hot_table", "replica_preserve_commit_order", "large_transactions"})


__all__ = ["Advice", "advise", "advise_context", "SCHEMA_VERSION", "Finding", "Severity"]
