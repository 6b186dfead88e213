"""A plan, not a list: the recommended configuration simulated as a whole.

Findings are each simulated alone against the baseline, so two of them can each promise a gain
that the other already took (relaxed durability removes the commit bottleneck that more workers
were meant to hide). The plan applies the configuration changes one at a time, greedily, each on
top of the ones before it: at every step the change with the largest simulated gain over the
configuration so far; the worker count is re-chosen (the knee of the speedup curve) under the
configuration it will run with. A change that gains less than :data:`MIN_MARGINAL_GAIN` on top of
the others is left out, and said so. Schema and application changes are not part of the plan:
they are what-ifs on the workload, reported by their findings.

Every number is a catch-up time (a stopped replica applying the whole input) from the same cost
model as ``simulate --catch-up``, so ``simulate`` with the plan's settings gives the same time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..kinds import FindingId as Id, Policy, ReplicaMode
from .context import Context

MIN_MARGINAL_GAIN = 0.02   # a step saving less than this share of the time before it is left out


@dataclass(frozen=True)
class Config:
    """A replica configuration the simulator can run (and ``simulate`` can be told)."""

    clock: Policy              # RECORDED (what the source wrote) or the policy the source would use
    workers: int
    durable: bool
    preserve: bool
    mode: ReplicaMode = ReplicaMode.LOGICAL_CLOCK   # ReplicaConfig.mode: MariaDB's slave_parallel_mode

    def describe(self) -> str:
        mariadb = ReplicaMode(self.mode).mariadb
        if mariadb:
            clock = f"slave_parallel_mode={ReplicaMode(self.mode).parallel_mode}"
        else:
            clock = "the recorded clock" if self.clock == Policy.RECORDED else f"a {self.clock} source"
        threads = "threads" if mariadb else "workers"
        return (f"{clock}, {self.workers} {threads if self.workers != 1 else threads[:-1]}, "
                f"{'durable' if self.durable else 'relaxed durability'}"
                + ("" if mariadb else
                   f", preserve_commit_order={'ON' if self.preserve else 'OFF'}"))

    def simulate_args(self) -> list[str]:
        """The ``lagadvisor simulate`` options that reproduce this configuration's catch-up."""
        return ["--catch-up", "--workers", str(self.workers), "--policy", self.clock,
                "--durable" if self.durable else "--relaxed",
                "--preserve-commit-order", "on" if self.preserve else "off", "--mode", self.mode]


@dataclass(frozen=True)
class Step:
    finding: Id                # the finding this change comes from
    setting: str
    before: str
    after: str
    seconds_before: float
    seconds_after: float
    catch_up_only: bool        # revert once the replica has caught up
    kept: bool                 # False: gains less than MIN_MARGINAL_GAIN on top of the others

    @property
    def marginal_gain(self) -> float:
        return (self.seconds_before - self.seconds_after) / self.seconds_before if self.seconds_before > 0 else 0.0

    def as_json(self) -> dict:
        return {"finding": self.finding, "setting": self.setting, "from": self.before, "to": self.after,
                "catch_up_seconds_before": round(self.seconds_before, 6),
                "catch_up_seconds_after": round(self.seconds_after, 6),
                "marginal_gain": round(self.marginal_gain, 4), "catch_up_only": self.catch_up_only,
                "kept": self.kept}


@dataclass(frozen=True)
class Plan:
    current: Config
    recommended: Config
    steps: tuple[Step, ...]
    current_seconds: float
    recommended_seconds: float
    current_lag_p99: float
    recommended_lag_p99: float

    @property
    def gain(self) -> float:
        c = self.current_seconds
        return (c - self.recommended_seconds) / c if c > 0 else 0.0

    def kept(self) -> list[Step]:
        return [s for s in self.steps if s.kept]

    def as_json(self) -> dict:
        return {"current": _config_json(self.current), "recommended": _config_json(self.recommended),
                "steps": [s.as_json() for s in self.steps],
                "current_catch_up_seconds": round(self.current_seconds, 6),
                "recommended_catch_up_seconds": round(self.recommended_seconds, 6),
                "current_lag_p99_seconds": round(self.current_lag_p99, 6),
                "recommended_lag_p99_seconds": round(self.recommended_lag_p99, 6),
                "gain": round(self.gain, 4),
                "simulate_args": self.recommended.simulate_args()}


def _config_json(c: Config) -> dict:
    return {"clock": c.clock, "workers": c.workers, "durable": c.durable, "preserve_commit_order": c.preserve,
            "mode": c.mode}


def _seconds(ctx: Context, c: Config) -> float:
    return ctx.seconds(c.clock, c.workers, preserve=c.preserve, durable=c.durable, mode=c.mode)


def _lag_p99(ctx: Context, c: Config) -> float:
    return ctx.lag_p99(c.clock, c.workers, preserve=c.preserve, durable=c.durable, mode=c.mode)


def _knee(ctx: Context, c: Config) -> int:
    return ctx.knee(c.clock, preserve=c.preserve, durable=c.durable, mode=c.mode)


def build_plan(ctx: Context, suggested: dict[str, str]) -> Plan:
    """Greedy combination of the configuration findings in ``suggested`` (finding id -> value).

    Candidates: the source's dependency tracking (``dependency_tracking``: a policy name), the
    replica's durability (``replica_durability``, catch-up only) and its worker count
    (``replica_parallel_workers``, re-chosen under the configuration of the moment)."""
    b = ctx.baseline
    current = Config(Policy.RECORDED, max(b.workers, 1), b.durable, b.preserve_commit_order, b.mode)
    config = current
    steps: list[Step] = []
    remaining = {k for k in (Id.DEPENDENCY_TRACKING, Id.REPLICA_DURABILITY, Id.REPLICA_PARALLEL_WORKERS,
                             Id.SLAVE_PARALLEL_MODE) if k in suggested}
    while remaining:
        best = None
        for fid in sorted(remaining):
            cand = _apply(ctx, config, fid, suggested[fid])
            if cand is None or cand == config:
                continue
            after = _seconds(ctx, cand)
            if best is None or after < best[2] - 1e-9:
                best = (fid, cand, after)
        if best is None:
            break
        fid, cand, after = best
        remaining.discard(fid)
        before = _seconds(ctx, config)
        setting, was, now = _change(config, cand)
        kept = before > 0 and (before - after) / before >= MIN_MARGINAL_GAIN
        steps.append(Step(fid, setting, was, now, before, after, fid == Id.REPLICA_DURABILITY, kept))
        if kept:
            config = cand
    # the knee once more under the final configuration (a later step may have moved it)
    if Id.REPLICA_PARALLEL_WORKERS in suggested:
        knee = _knee(ctx, config)
        if knee != config.workers:
            cand = replace(config, workers=knee)
            before, after = _seconds(ctx, config), _seconds(ctx, cand)
            if before > 0 and (before - after) / before >= MIN_MARGINAL_GAIN:
                steps.append(Step(Id.REPLICA_PARALLEL_WORKERS, "replica_parallel_workers", str(config.workers),
                                  str(knee), before, after, False, True))
                config = cand
    return Plan(current, config, tuple(steps), _seconds(ctx, current), _seconds(ctx, config),
                _lag_p99(ctx, current), _lag_p99(ctx, config))


def _apply(ctx: Context, c: Config, fid: Id, value: str) -> Config | None:
    if fid == Id.DEPENDENCY_TRACKING:
        return replace(c, clock=Policy(value)) if value in ctx.policies else None
    if fid == Id.REPLICA_DURABILITY:
        return replace(c, durable=False) if c.durable else None
    if fid == Id.REPLICA_PARALLEL_WORKERS:
        return replace(c, workers=_knee(ctx, c))
    if fid == Id.SLAVE_PARALLEL_MODE:
        return replace(c, mode=ReplicaMode.of_mariadb(value)) if ReplicaMode(c.mode).mariadb else None
    return None


def _change(a: Config, b: Config) -> tuple[str, str, str]:
    if a.mode != b.mode:
        return ("slave_parallel_mode", ReplicaMode(a.mode).parallel_mode, ReplicaMode(b.mode).parallel_mode)
    if a.clock != b.clock:
        return ("binlog_transaction_dependency_tracking (source)",
                "recorded clock" if a.clock == Policy.RECORDED else a.clock, b.clock)
    if a.durable != b.durable:
        return ("sync_binlog / innodb_flush_log_at_trx_commit", "1 / 1", "0 / 2 (while catching up)")
    name = "slave_parallel_threads" if ReplicaMode(a.mode).mariadb else "replica_parallel_workers"
    return (name, str(a.workers), str(b.workers))
