"""``lagadvisor advise``: what to change, each finding with its evidence and simulated effect."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..depgraph.pipeline import ClockOptions
from ..kinds import FindingId as Id, Policy, ReplicaMode
from ..server.schema import ServerSettings
from ..sim.model import CostModel
from .context import Context, gather
from .findings import SCHEMA_VERSION, Alternative, Effect, Finding, Severity, ordered, severity_for
from .plan import Config, Plan, build_plan
from .review import Review, check_target, offer, review
from .rules import RULES, restate


@dataclass
class Advice:
    findings: list[Finding]
    context: Context
    plan: Plan | None = None
    confirmed: list[Finding] = field(default_factory=list)   # checked: the current value is the right one
    review: Review | None = None     # --target-version: the pre-upgrade review
    offer: str | None = None         # without it, on a COMMIT_ORDER binlog: the next LTS to review for

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)

    def counts(self) -> dict[str, int]:
        return {s.value: sum(1 for f in self.findings if f.severity == s) for s in Severity}


#: Findings the plan combines (configuration the simulator runs); the others are what-ifs on the
#: workload or the schema, reported on their own.
PLAN_FINDINGS = (Id.DEPENDENCY_TRACKING, Id.REPLICA_DURABILITY, Id.REPLICA_PARALLEL_WORKERS, Id.SLAVE_PARALLEL_MODE)


def advise(paths: list[str], options: ClockOptions, cost: CostModel | None = None,
           settings: ServerSettings | None = None, on_transaction=None, window_s: float | None = None,
           on_progress=None, jobs: int = 1, target_version: tuple[int, int, int] | None = None,
           current_version: tuple[int, int, int] | None = None, given: dict[str, str] | None = None,
           cores_given: bool | None = None) -> Advice:
    """``window_s``: the lag window of the summary's worst window (None: chosen from the span);
    ``jobs``: simulations run at once (the same advice); ``target_version``: review the upgrade
    to it; ``current_version``: the source's version instead of the binlog's (or --host's);
    ``given``: replica settings given by name (advise --replica-setting), over the server's;
    ``cores_given``: whether --cores named the replica's cores (the assumptions say so); when it
    did not, the cores ``settings`` show (a server of 8.4+ at its compiled defaults,
    ``server.cores``) replace the model's."""
    cost = cost or CostModel()
    exposed = settings.cores() if settings is not None and cores_given is False else None
    if exposed is not None:
        cost = replace(cost, cores=exposed.cores)
    ctx = gather(list(paths), options, cost, settings, on_transaction, on_progress)
    if given:
        from .context import baseline_from

        ctx = replace(ctx, baseline=baseline_from(ctx.settings, ctx.mariadb, ctx.version, given))
    version, version_from = ((ctx.version, ctx.version_from) if current_version is None
                             else (current_version, "--current-version"))
    ctx = replace(ctx, window_s=window_s, jobs=jobs, target_version=target_version, version=version,
                  version_from=version_from, cores_given=cores_given,
                  cores_read=exposed.sentence(settings.host) if exposed is not None else "")
    return advise_context(ctx)


def advise_context(ctx: Context) -> Advice:
    """The rules and the plan over a gathered context (``fleet`` builds the context from per-file
    parts merged exactly, then calls this as ``advise`` does)."""
    check_target(ctx)
    if ctx.facts and ctx.jobs > 1:
        # what every report asks for: the recorded clock's worker curve, durable and relaxed
        from .context import WORKERS

        ctx.prefetch([(Policy.RECORDED, w, {"durable": d}) for d in (ctx.baseline.durable, not ctx.baseline.durable)
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
        findings = [_in_plan(f, plan, ctx) for f in findings]
    findings = ordered(findings)
    return Advice(findings, ctx, plan, sorted(confirmed, key=lambda f: f.id), review(ctx, plan, findings), offer(ctx))


def _in_plan(f: Finding, plan: Plan, ctx: Context) -> Finding:
    """One answer per setting: a configuration finding says what the plan does with its setting.

    The plan changes it: the finding suggests the plan's value (title, statements and my.cnf
    follow), its simulated effect is the plan's steps for that setting and its severity their
    gain; a stand-alone optimum that differs is kept as the alternative, with its condition ("if
    you keep durable settings"). The plan leaves it as it is (the change gains little on top of
    the others, or nothing under the plan's configuration): the finding is info, and its
    suggestion states its condition."""
    if f.id not in PLAN_FINDINGS:
        return f
    steps = [s for s in plan.steps if s.finding == f.id]
    kept = [s for s in steps if s.kept]
    metrics = dict(f.metrics)
    if steps:
        metrics.update(plan_marginal_gain=round(steps[-1].marginal_gain, 4), in_plan=bool(kept))
    few = ctx.analysis.total.transactions < MIN_TRANSACTIONS
    if not kept:
        evidence = f.evidence
        if steps:
            s = steps[-1]
            # the plan tries its own value (the knee under its other changes), which may not be
            # the one this finding suggests alone: name it, or the two read as one contradiction
            what = "it" if s.after == f.suggested else f"{s.before} -> {s.after} (what the plan tried)"
            evidence += (f". On top of the plan's other changes {what} gains {s.marginal_gain:.1%} "
                         f"({s.seconds_before:,.3f} s -> {s.seconds_after:,.3f} s): left out of the plan")
        else:
            evidence += ". Under the plan's configuration it changes nothing: left out of the plan"
        return replace(f, severity=Severity.info, metrics=metrics, evidence=evidence,
                       condition=_condition(_alone(ctx, f), plan.recommended, plan.kept()))
    before = kept[0].seconds_before
    ratio = 1.0
    for s in kept:
        ratio *= s.seconds_after / s.seconds_before if s.seconds_before > 0 else 1.0
    gain = 1.0 - ratio
    metrics["plan_gain"] = round(gain, 4)
    numbers = {id(s): i for i, s in enumerate(plan.steps, 1)}
    parts = []
    for s in kept:
        earlier = [str(numbers[id(e)]) for e in plan.kept() if numbers[id(e)] < numbers[id(s)]]
        parts.append(f"step {numbers[id(s)]}: {s.before} -> {s.after}"
                     + (f", on top of step{'s' if len(earlier) > 1 else ''} {', '.join(earlier)}" if earlier else ""))
    effect = Effect("the plan's " + "; ".join(parts), before=before, after=before * ratio)
    alone = f.simulated_effect
    if alone is not None and len(kept) == 1 and alone.before is not None and alone.after is not None \
            and abs(alone.before - kept[0].seconds_before) < 1e-9 and abs(alone.after - kept[0].seconds_after) < 1e-9:
        # the plan's step is the finding's own simulation (its first change): its lag too
        effect = replace(effect, description=f"{effect.description} ({alone.description})",
                         lag_p99_before=alone.lag_p99_before, lag_p99_after=alone.lag_p99_after)
    g = replace(f, severity=Severity.info if few else severity_for(gain), simulated_effect=effect, metrics=metrics)
    value = _plan_value(f, plan)
    if value is None or value == f.suggested:
        return g
    condition = _condition(_alone(ctx, f), plan.recommended, plan.kept())
    g = restate(ctx, g, value)
    return replace(g, alternative=Alternative(f.suggested, condition, f.simulated_effect, f.statements),
                   evidence=f"{f.evidence}. With the plan's other changes it is {value}")


def _plan_value(f: Finding, plan: Plan) -> str | None:
    """The plan's value of a configuration finding's setting (None: not one the plan sets)."""
    rec = plan.recommended
    if f.id == Id.REPLICA_PARALLEL_WORKERS:
        return str(rec.workers)
    if f.id == Id.DEPENDENCY_TRACKING:
        return rec.clock if rec.clock != Policy.RECORDED else None
    if f.id == Id.SLAVE_PARALLEL_MODE:
        return ReplicaMode(rec.mode).parallel_mode
    return None  # replica_durability: one way to change it


def _alone(ctx: Context, f: Finding) -> Config:
    """The configuration a finding's stand-alone suggestion was simulated under."""
    b = ctx.baseline
    c = Config(Policy.RECORDED, max(b.workers, 1), b.durable, b.preserve_commit_order, b.mode)
    if f.id == Id.REPLICA_PARALLEL_WORKERS:
        return replace(c, clock=f.metrics.get("clock", Policy.RECORDED),
                       workers=int(f.suggested) if f.suggested.isdigit() else c.workers)
    return c


def _condition(alone: Config, planned: Config, kept: list) -> str:
    """When a stand-alone suggestion holds instead of the plan's: the differences between the
    configuration it was simulated under and the plan's, in a DBA's words."""
    parts = []
    if alone.durable != planned.durable:
        parts.append("keep durable settings" if alone.durable else "relax durability")
    if alone.clock != planned.clock:
        parts.append("keep the source's recorded clock" if alone.clock == Policy.RECORDED
                     else f"track {alone.clock} on the source")
    if alone.mode != planned.mode:
        parts.append(f"run slave_parallel_mode={ReplicaMode(alone.mode).parallel_mode}")
    if alone.preserve != planned.preserve:
        parts.append(f"keep replica_preserve_commit_order={'ON' if alone.preserve else 'OFF'}")
    if parts:
        return "if you " + " and ".join(parts)
    return "alone, without the plan's other changes" if kept else "alone"


MIN_TRANSACTIONS = 200
_SPEED_FINDINGS = frozenset({Id.REPLICA_DURABILITY, Id.REPLICA_PARALLEL_WORKERS, Id.DEPENDENCY_TRACKING,
                             Id.SYNC_DELAY, Id.HISTORY_SIZE, Id.HOT_ROWS, Id.HOT_TABLE,
                             Id.REPLICA_PRESERVE_COMMIT_ORDER, Id.LARGE_TRANSACTIONS,
                             Id.CHANGE_STREAM_APPLIER})


__all__ = ["Advice", "advise", "advise_context", "SCHEMA_VERSION", "Finding", "Severity"]
