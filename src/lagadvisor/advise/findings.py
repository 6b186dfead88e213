"""What the advisor says: findings with their evidence and simulated effect.

The JSON form is versioned (``SCHEMA_VERSION``) and described by ``docs/advise-schema.json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..kinds import FindingId

SCHEMA_VERSION = "2.0"


class Severity(str, Enum):
    info = "info"
    warning = "warning"
    critical = "critical"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "critical": 2}[self.value]


@dataclass(frozen=True)
class Effect:
    """A simulated before/after of one change, on the same binlog and cost model.

    ``metric`` is what the numbers measure: ``catch_up_seconds`` (time to apply the whole
    binlog from a stopped replica) unless stated otherwise."""

    description: str
    metric: str = "catch_up_seconds"
    before: float | None = None
    after: float | None = None
    lag_p99_before: float | None = None
    lag_p99_after: float | None = None

    @property
    def gain(self) -> float:
        """Fraction of ``before`` saved: negative when ``after`` is slower (0 when not simulated)."""
        if self.before is None or self.after is None or self.before <= 0:
            return 0.0
        return (self.before - self.after) / self.before

    def as_json(self) -> dict:
        return {"description": self.description, "metric": self.metric,
                "before": _r(self.before), "after": _r(self.after), "gain": round(self.gain, 4),
                "lag_p99_before_seconds": _r(self.lag_p99_before),
                "lag_p99_after_seconds": _r(self.lag_p99_after)}


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 6)


@dataclass(frozen=True)
class Alternative:
    """Another value for a finding's setting and the condition it holds under: the setting's
    stand-alone optimum where the plan, combining it with other changes, sets another value
    (``if you keep durable settings``: 8 workers, where the relaxed plan runs 2)."""

    suggested: str
    condition: str                    # "if you keep durable settings"
    simulated_effect: Effect | None   # the stand-alone simulation (against the baseline)
    statements: tuple[str, ...] = ()

    def as_json(self) -> dict:
        return {"suggested": self.suggested, "condition": self.condition,
                "simulated_effect": self.simulated_effect.as_json() if self.simulated_effect else None,
                "statements": list(self.statements)}


@dataclass(frozen=True)
class Finding:
    id: FindingId
    severity: Severity
    title: str
    setting: str                      # the setting or schema change, e.g. "replica_parallel_workers"
    current: str | None               # None when unknown (no --host)
    suggested: str
    evidence: str                     # the numbers from the binlog, in words
    simulated_effect: Effect | None   # None when the change cannot be simulated (said in evidence)
    where: str = "replica"            # source | replica | schema | application
    statements: tuple[str, ...] = ()  # SQL to apply, when there is one
    mycnf: tuple[tuple[str, str], ...] = ()   # (variable, value) for --mycnf
    tables: tuple[str, ...] = ()
    metrics: dict = field(default_factory=dict)
    current_assumed: bool = False     # current is the server default, not read from a server
    #: A configuration setting the plan leaves as it is: when ``suggested`` would hold (e.g.
    #: "alone, without the plan's other changes"); None when ``suggested`` is the plan's value
    #: or the finding is not about the plan's settings.
    condition: str | None = None
    #: A setting the plan changes to another value than its stand-alone optimum: that optimum.
    alternative: Alternative | None = None

    @property
    def gain(self) -> float:
        return self.simulated_effect.gain if self.simulated_effect else 0.0

    def as_json(self) -> dict:
        return {"id": self.id, "severity": self.severity.value, "title": self.title,
                "setting": self.setting, "current": self.current, "current_assumed": self.current_assumed,
                "suggested": self.suggested, "where": self.where, "evidence": self.evidence,
                "simulated_effect": self.simulated_effect.as_json() if self.simulated_effect else None,
                "statements": list(self.statements), "tables": list(self.tables),
                "metrics": self.metrics, "condition": self.condition,
                "alternative": self.alternative.as_json() if self.alternative else None}


#: A change saving less than this share of the catch-up time is info, whatever the lag.
MIN_GAIN = 0.02
#: A change saving at least this share is a warning; critical where the replica misses its lag target.
WARNING_GAIN = 0.15


def severity_for(gain: float, floor: Severity = Severity.info, misses_target: bool = False) -> Severity:
    """The one severity rule: critical only when the replica, as it runs now, misses the lag
    target (``advise --lag-target``) and the change saves at least :data:`WARNING_GAIN` of the
    catch-up time; warning when it saves that much, or at least :data:`MIN_GAIN` where the target
    is missed; info otherwise (``floor`` at least)."""
    if gain >= WARNING_GAIN:
        s = Severity.critical if misses_target else Severity.warning
    elif gain >= MIN_GAIN and misses_target:
        s = Severity.warning
    else:
        s = Severity.info
    return s if s.rank >= floor.rank else floor


def ordered(findings: list[Finding]) -> list[Finding]:
    """By severity, then expected gain, then id (deterministic)."""
    return sorted(findings, key=lambda f: (-f.severity.rank, -round(f.gain, 6), f.id))


def change_words(before: float | None, after: float | None) -> str:
    """A before/after in the report's one sign convention: ``34.2% faster``, ``1.6% slower`` or
    ``no change`` (to 0.1%)."""
    if before is None or after is None or before <= 0:
        return "not simulated"
    g = (before - after) / before
    if abs(g) < 0.0005:
        return "no change"
    return f"{abs(g):.1%} {'faster' if g > 0 else 'slower'}"
