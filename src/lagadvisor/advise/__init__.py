"""``lagadvisor advise``: what to change, each finding with its evidence and simulated effect."""

from __future__ import annotations

from dataclasses import dataclass

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
    return Advice(ordered(findings), ctx)


__all__ = ["Advice", "advise", "SCHEMA_VERSION", "Finding", "Severity"]
