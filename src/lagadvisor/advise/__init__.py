"""``lagadvisor advise``: what to change, each finding with its evidence and simulated effect."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..depgraph.pipeline import ClockOptions
from ..schema.live import ServerSettings
from ..sim.model import CostModel
from .context import Context, gather
from .findings import SCHEMA_VERSION, Finding, Severity, ordered
from .rules import RULES


@dataclass
class Advice:
    findings: list[Finding]
    context: Context

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)


def advise(paths: list[str], options: ClockOptions, cost: CostModel | None = None,
           settings: ServerSettings | None = None, on_transaction=None) -> Advice:
    ctx = gather(list(paths), options, cost or CostModel(), settings, on_transaction)
    findings: list[Finding] = []
    for rule in RULES:
        findings.extend(rule(ctx))
    n = ctx.analysis.total.transactions
    if n < MIN_TRANSACTIONS:  # a handful of transactions says little about a workload's speed
        findings = [replace(f, severity=Severity.info,
                            evidence=f"{f.evidence} (only {n} transactions: too few to judge the size of the effect)")
                    if f.id in _SPEED_FINDINGS else f for f in findings]
    return Advice(ordered(findings), ctx)


MIN_TRANSACTIONS = 200
_SPEED_FINDINGS = frozenset({"replica_durability", "replica_parallel_workers", "dependency_tracking",
                             "binlog_group_commit_sync_delay", "binlog_transaction_dependency_history_size",
                             "hot_rows", "replica_preserve_commit_order", "large_transactions"})


__all__ = ["Advice", "advise", "SCHEMA_VERSION", "Finding", "Severity"]
