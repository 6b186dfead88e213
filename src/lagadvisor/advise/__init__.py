"""``lagadvisor advise``: what to change, each finding with its evidence and simulated effect."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..depgraph.pipeline import ClockOptions
from ..kinds import FindingId as Id, Policy, ReplicaMode
from ..server.schema import ServerSettings
from ..sim.model import CostModel
from .context import Context, gather
from .findings import SCHEMA_VERSION, Finding, Severity, ordered
from .plan import Plan, build_plan
from .review import Review, check_target, offer, review
from .rules import RULES


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


#: Findings that render the plan's settings (their suggestion is the plan's value, or its labelled
#: alternative); the others are what-ifs on the workload or the schema, measured at the plan's workers.
PLAN_FINDINGS = (Id.DEPENDENCY_TRACKING, Id.REPLICA_DURABILITY, Id.REPLICA_PARALLEL_WORKERS, Id.SLAVE_PARALLEL_MODE,
                 Id.HISTORY_SIZE, Id.REPLICA_PRESERVE_COMMIT_ORDER, Id.CHANGE_STREAM_APPLIER)


def advise(paths: list[str], options: ClockOptions, cost: CostModel | None = None,
           settings: ServerSettings | None = None, on_transaction=None, window_s: float | None = None,
           on_progress=None, jobs: int = 1, target_version: tuple[int, int, int] | None = None,
           current_version: tuple[int, int, int] | None = None, given: dict[str, str] | None = None,
           cores_given: bool | None = None, lag_target_s: float | None = None,
           reproduce: tuple[str, ...] = ()) -> Advice:
    """``window_s``: the lag window of the summary's worst window (None: chosen from the span);
    ``jobs``: simulations run at once (the same advice); ``target_version``: review the upgrade
    to it; ``current_version``: the source's version instead of the binlog's (or --host's);
    ``given``: replica settings given by name (advise --replica-setting), over the server's;
    ``cores_given``: whether --cores named the replica's cores (the assumptions say so); when it
    did not, the cores ``settings`` show (a server of 8.4+ at its compiled defaults,
    ``server.cores``) replace the model's; ``lag_target_s``: the lag p99 the replica must stay
    under (advise --lag-target); ``reproduce``: the simulate options besides a configuration's
    that reproduce this run's numbers (--schema, --cores, --cost-model, ...)."""
    cost = cost or CostModel()
    exposed = settings.cores() if settings is not None and cores_given is False else None
    if exposed is not None:
        cost = replace(cost, cores=exposed.cores)
    ctx = gather(list(paths), options, cost, settings, on_transaction, on_progress)
    if given:
        from .context import baseline_from

        ctx = replace(ctx, baseline=baseline_from(ctx.settings, ctx.mariadb, ctx.version, given), given=dict(given))
    version, version_from = ((ctx.version, ctx.version_from) if current_version is None
                             else (current_version, "--current-version"))
    ctx = replace(ctx, window_s=window_s, jobs=jobs, target_version=target_version, version=version,
                  version_from=version_from, cores_given=cores_given,
                  cores_read=exposed.sentence(settings.host) if exposed is not None else "",
                  reproduce=tuple(reproduce) + ("--cores", str(cost.cores)),
                  **({"lag_target_s": lag_target_s} if lag_target_s is not None else {}))
    return advise_context(ctx)


def advise_context(ctx: Context) -> Advice:
    """The plan, then the rules over a gathered context (``fleet`` builds the context from per-file
    parts merged exactly, then calls this as ``advise`` does). The plan is the one decision:
    every finding about a setting it decides states its value (``advise.rules``)."""
    check_target(ctx)
    if ctx.facts and ctx.jobs > 1:
        # what every report asks for: the recorded clock's worker curve, durable and relaxed
        from .context import WORKERS

        ctx.prefetch([(Policy.RECORDED, w, {"durable": d}) for d in (ctx.baseline.durable, not ctx.baseline.durable)
                      for w in WORKERS])
    plan = build_plan(ctx) if ctx.facts else None
    ctx = replace(ctx, plan=plan)
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
    findings = ordered([f for f in findings if not (f.current is not None and f.current == f.suggested)])
    return Advice(findings, ctx, plan, sorted(confirmed, key=lambda f: f.id), review(ctx, plan, findings), offer(ctx))


MIN_TRANSACTIONS = 200
_SPEED_FINDINGS = frozenset({Id.REPLICA_DURABILITY, Id.REPLICA_PARALLEL_WORKERS, Id.DEPENDENCY_TRACKING,
                             Id.SYNC_DELAY, Id.HISTORY_SIZE, Id.HOT_ROWS, Id.HOT_TABLE,
                             Id.REPLICA_PRESERVE_COMMIT_ORDER, Id.LARGE_TRANSACTIONS,
                             Id.CHANGE_STREAM_APPLIER})


__all__ = ["Advice", "advise", "advise_context", "SCHEMA_VERSION", "Finding", "Plan", "Severity"]
