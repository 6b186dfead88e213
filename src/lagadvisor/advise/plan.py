"""The plan: one decision, searched, that everything advise prints renders.

The plan is computed before any finding. It searches every configuration of the settings that
matter for this source and target (:func:`space`): the applier's worker count; the source's
dependency tracking where its release has the variable; the writeset history size where the
history filled up; on a 26.7+ target the applier (MTA or the Change Stream Applier); on MariaDB
the parallel mode and threads. The replica's durability and its commit order are constraints: a
durable replica's plan stays durable, and a replica that commits in source order keeps doing so.
Relaxed durability while catching up, and commit order OFF, are offered apart as labelled
alternatives (:class:`Alternative`): the plan with that one change, with its own numbers.

Among the configurations within :data:`PLAN_TOLERANCE` of the fastest, the plan is the smallest
change: fewest settings touched, then fewest workers. With ``--target-version`` the plan is the
configuration of the upgraded servers (the clock the target's source writes, its defaults where
they apply); without it, of the servers as they run.

Every number is a catch-up time (a stopped replica applying the whole input) from the cost model
``simulate --catch-up`` uses: :attr:`Plan.simulate_args` reproduces the plan's time exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..depgraph.policies import Fallback
from ..kinds import MARIADB_MODES, WRITESET_BASED, Applier, FindingId as Id, Policy, ReplicaMode, WhatIfChange, WhatIfKey
from ..versions import Release, release
from ..writeset.tracker import WhatIf
from .context import WORKERS, Context

#: The plan is the smallest change among the configurations this close to the fastest searched.
PLAN_TOLERANCE = 0.03
#: A larger writeset history tried where the analysed one filled up: this many times it, at least
#: :data:`HISTORY_FLOOR` (``binlog_transaction_dependency_history_size`` allows up to 1,000,000).
HISTORY_FACTOR = 4
HISTORY_FLOOR = 100_000
HISTORY_MAX = 1_000_000
#: The first release with the Change Stream Applier (MySQL 26.7 manual, 19.2.4).
CSA_SINCE = (26, 7, 0)


@dataclass(frozen=True)
class Config:
    """A replica configuration the simulator runs (and ``simulate`` can be told)."""

    clock: Policy              # RECORDED (what the source wrote) or the policy the source would use
    workers: int
    durable: bool
    preserve: bool
    mode: ReplicaMode = ReplicaMode.LOGICAL_CLOCK   # ReplicaConfig.mode: MariaDB's slave_parallel_mode
    applier: Applier = Applier.MTA
    history: int | None = None  # the writeset history the clock is re-derived with; None: the analysed one

    def describe(self) -> str:
        mariadb = ReplicaMode(self.mode).mariadb
        if mariadb:
            clock = f"slave_parallel_mode={ReplicaMode(self.mode).parallel_mode}"
        else:
            clock = "the recorded clock" if self.clock == Policy.RECORDED else f"a {self.clock} source"
            if self.history is not None:
                clock += f" (history {self.history:,})"
        threads = "threads" if mariadb else "workers"
        applier = ", the Change Stream Applier" if self.applier == Applier.CSA else ""
        return (f"{clock}{applier}, {self.workers} {threads if self.workers != 1 else threads[:-1]}, "
                f"{'durable' if self.durable else 'relaxed durability'}"
                + ("" if mariadb else f", preserve_commit_order={'ON' if self.preserve else 'OFF'}"))

    def args(self) -> list[str]:
        """The ``lagadvisor simulate`` options of this configuration's catch-up."""
        out = ["--catch-up", "--workers", str(self.workers), "--policy", self.clock,
               "--durable" if self.durable else "--relaxed",
               "--preserve-commit-order", "on" if self.preserve else "off", "--mode", self.mode]
        if self.applier != Applier.MTA:
            out += ["--applier", self.applier]
        if self.history is not None:
            out += ["--history-size", str(self.history)]
        return out


@dataclass(frozen=True)
class Step:
    """One setting the plan changes from the current configuration, and what the plan loses
    without it (the plan with this one setting as it is now: ``seconds_before``)."""

    finding: Id
    setting: str
    before: str
    after: str
    seconds_before: float      # the plan without this change
    seconds_after: float       # the plan
    by_upgrade: bool = False   # the upgrade makes this change (the clock a writeset-only target writes)

    @property
    def marginal_gain(self) -> float:
        return (self.seconds_before - self.seconds_after) / self.seconds_before if self.seconds_before > 0 else 0.0

    def as_json(self) -> dict:
        return {"finding": self.finding, "setting": self.setting, "from": self.before, "to": self.after,
                "catch_up_seconds_before": round(self.seconds_before, 6),
                "catch_up_seconds_after": round(self.seconds_after, 6),
                "marginal_gain": round(self.marginal_gain, 4), "catch_up_only": False, "kept": True,
                "by_upgrade": self.by_upgrade}


@dataclass(frozen=True)
class Alternative:
    """The plan with one constraint lifted, with its own numbers: relaxed durability while the
    replica catches up, or commit order OFF where readers tolerate it."""

    key: str                   # catch_up_durability | commit_order_off
    label: str
    condition: str
    config: Config
    seconds: float
    lag_p99: float
    plan_seconds: float

    @property
    def gain(self) -> float:
        """The share of the plan's catch-up time this alternative saves (negative: slower)."""
        return (self.plan_seconds - self.seconds) / self.plan_seconds if self.plan_seconds > 0 else 0.0

    def as_json(self) -> dict:
        return {"key": self.key, "label": self.label, "condition": self.condition,
                "config": _config_json(self.config), "describe": self.config.describe(),
                "catch_up_seconds": round(self.seconds, 6), "lag_p99_seconds": round(self.lag_p99, 6),
                "gain_over_plan": round(self.gain, 4)}


@dataclass(frozen=True)
class Plan:
    current: Config
    recommended: Config
    steps: tuple[Step, ...]
    current_seconds: float
    recommended_seconds: float
    current_lag_p99: float
    recommended_lag_p99: float
    fastest: Config | None = None
    fastest_seconds: float = 0.0
    searched: int = 0
    tolerance: float = PLAN_TOLERANCE
    alternatives: tuple[Alternative, ...] = ()
    defaults: Config | None = None        # the target's defaults (--target-version), else None
    lag_target_s: float = 1.0
    reproduce: tuple[str, ...] = field(default=())   # the options besides the configuration's

    @property
    def gain(self) -> float:
        c = self.current_seconds
        return (c - self.recommended_seconds) / c if c > 0 else 0.0

    @property
    def misses_target(self) -> bool:
        """The replica as it runs now misses the lag target (lag p99 above it)."""
        return self.current_lag_p99 > self.lag_target_s

    def alternative(self, key: str) -> Alternative | None:
        return next((a for a in self.alternatives if a.key == key), None)

    @property
    def simulate_args(self) -> list[str]:
        """``lagadvisor simulate FILES`` + these gives the plan's catch-up time (the options of the
        run's clock, window, cost model and cores included; the plan's history size over one given)."""
        extra, skip = [], False
        for i, a in enumerate(self.reproduce):
            if skip:
                skip = False
                continue
            if a == "--history-size" and self.recommended.history is not None:
                skip = True
                continue
            extra.append(a)
        return [*self.recommended.args(), *extra]

    def as_json(self) -> dict:
        return {"current": _config_json(self.current), "recommended": _config_json(self.recommended),
                "steps": [s.as_json() for s in self.steps],
                "current_catch_up_seconds": round(self.current_seconds, 6),
                "recommended_catch_up_seconds": round(self.recommended_seconds, 6),
                "current_lag_p99_seconds": round(self.current_lag_p99, 6),
                "recommended_lag_p99_seconds": round(self.recommended_lag_p99, 6),
                "gain": round(self.gain, 4), "tolerance": self.tolerance, "searched": self.searched,
                "fastest": _config_json(self.fastest) if self.fastest else None,
                "fastest_catch_up_seconds": round(self.fastest_seconds, 6),
                "lag_target_seconds": self.lag_target_s, "misses_lag_target": self.misses_target,
                "target_defaults": _config_json(self.defaults) if self.defaults else None,
                "alternatives": [a.as_json() for a in self.alternatives],
                "simulate_args": self.simulate_args}


def _config_json(c: Config) -> dict:
    return {"clock": c.clock, "workers": c.workers, "durable": c.durable, "preserve_commit_order": c.preserve,
            "mode": c.mode, "applier": c.applier, "history_size": c.history}


# -- simulating a configuration ----------------------------------------------------------------

def _kw(ctx: Context, c: Config) -> dict:
    kw = {"preserve": c.preserve, "durable": c.durable, "mode": c.mode, "applier": c.applier}
    if c.history is not None and c.clock != Policy.RECORDED:
        kw.update(facts=ctx.what_if_facts(WhatIf(), history_size=c.history),
                  key=WhatIfKey(WhatIfChange.HISTORY, c.history))
    return kw


def seconds(ctx: Context, c: Config) -> float:
    """The catch-up time of configuration ``c`` (``Context.seconds``, history what-if included)."""
    return ctx.seconds(c.clock, c.workers, **_kw(ctx, c))


def lag_p99(ctx: Context, c: Config) -> float:
    return ctx.lag_p99(c.clock, c.workers, **_kw(ctx, c))


def curve(ctx: Context, c: Config) -> dict[int, float]:
    """Catch-up seconds by worker count, every other setting as in ``c``."""
    return {w: seconds(ctx, replace(c, workers=w)) for w in WORKERS}


# -- the space searched ------------------------------------------------------------------------

def history_full(ctx: Context) -> int:
    """Transactions that fell back because the writeset history was full (or too small)."""
    p = ctx.analysis.policies
    return sum(p.fallbacks.get(r.value, 0) for r in (Fallback.HISTORY_FULL, Fallback.WRITESET_LIMIT)) if p else 0


def history_differs(ctx: Context, history: int) -> bool:
    """Whether WRITESET under ``history`` may differ from the analysed clock: a smaller history,
    or a larger one where the analysed history filled up."""
    size = ctx.analysis.policies.history_size
    return history < size or (history > size and history_full(ctx) > 0)


def clock_now(ctx: Context) -> Policy:
    """The clock of the source as it runs now: the recorded one, unless ``--current-version``
    names a release whose default tracking differs from what wrote the file (then that policy,
    re-derived from the file with the commit-order input)."""
    written = ctx.analysis.policies.written.name
    default = release(ctx.version).tracking or Policy.WRITESET
    if ctx.version_from == "--current-version" and written != default:
        return Policy(default)
    return Policy.RECORDED


def clock_at(ctx: Context, new: Release) -> tuple[Policy, int | None]:
    """(clock, history) a source of release ``new`` writes for this workload: the recorded clock
    when it already is WRITESET under the same history, else WRITESET re-derived (under the
    target's history where it differs)."""
    now = clock_now(ctx)
    written = ctx.analysis.policies.written.name
    if not new.writeset_only:
        return now, None
    differs = history_differs(ctx, new.history_size)
    if now == Policy.RECORDED and written == Policy.WRITESET and not differs:
        return Policy.RECORDED, None
    return Policy.WRITESET, (new.history_size if differs else None)


@dataclass(frozen=True)
class Space:
    """What the plan searches: (clock, history) pairs, appliers, MariaDB modes, worker counts;
    durability and commit order fixed; what counts as a change (``base``)."""

    clocks: tuple[tuple[Policy, int | None], ...]
    appliers: tuple[Applier, ...]
    modes: tuple[ReplicaMode, ...]
    workers: tuple[int, ...]
    base: Config               # no setting touched (the clock the source, or the target, writes)

    def configs(self, durable: bool, preserve: bool):
        for clock, history in self.clocks:
            for applier in self.appliers:
                for mode in self.modes:
                    for w in self.workers:
                        yield Config(clock, w, durable, preserve, mode, applier, history)

    def changes(self, c: Config) -> int:
        b = self.base
        return sum(((c.clock, c.history) != (b.clock, b.history), c.applier != b.applier, c.mode != b.mode,
                    c.workers != b.workers))


def current_config(ctx: Context) -> Config:
    b = ctx.baseline
    now = clock_now(ctx) if ctx.analysis.policies is not None else Policy.RECORDED
    return Config(now, max(b.workers, 1), b.durable, b.preserve_commit_order, b.mode)


def target_release(ctx: Context) -> Release:
    return release(ctx.target_version if ctx.target_version is not None else ctx.version)


def space(ctx: Context) -> Space:
    cur = current_config(ctx)
    p = ctx.analysis.policies
    if ctx.mariadb or p is None:
        return Space(((Policy.RECORDED, None),), (Applier.MTA,),
                     MARIADB_MODES if ReplicaMode(cur.mode).mariadb else (cur.mode,), WORKERS, cur)
    new = target_release(ctx)
    if ctx.target_version is not None and new.writeset_only:
        base_clock, base_history = clock_at(ctx, new)
        clocks = [(base_clock, base_history)]
    else:
        base_clock, base_history = cur.clock, None
        clocks = [(cur.clock, None)] + [(pol, None) for pol in _switchable(ctx, cur.clock)]
    full = history_full(ctx)
    if full and not p.not_computed():
        size = base_history or p.history_size
        bigger = min(max(size * HISTORY_FACTOR, HISTORY_FLOOR), HISTORY_MAX)
        if bigger > size:
            for clock, _ in list(clocks):
                pol = Policy.WRITESET if clock == Policy.RECORDED and p.written.name in WRITESET_BASED else clock
                if pol in WRITESET_BASED and (pol, bigger) not in clocks:
                    clocks.append((pol, bigger))
    appliers = (Applier.MTA, Applier.CSA) if tuple(ctx.target_version or ctx.version) >= CSA_SINCE else (Applier.MTA,)
    base = replace(cur, clock=base_clock, history=base_history)
    return Space(tuple(clocks), appliers, (cur.mode,), WORKERS, base)


def _switchable(ctx: Context, now: Policy) -> list[Policy]:
    """The policies the source could switch to (its release has the variable), other than the
    one it runs now (``now``: the recorded clock, or the one --current-version's release
    writes); none where WRITESET cannot be computed (no schema names the tables)."""
    p = ctx.analysis.policies
    if p.not_computed():
        return []
    running = p.written.name if now == Policy.RECORDED else now
    return [pol for pol in ctx.policies if pol != running]


# -- the search ---------------------------------------------------------------------------------

def build_plan(ctx: Context) -> Plan:
    """The plan (module docstring): search, then the smallest change within the tolerance."""
    sp = space(ctx)
    cur = current_config(ctx)
    timed = [(c, seconds(ctx, c)) for c in sp.configs(cur.durable, cur.preserve)]
    fastest, best = min(timed, key=lambda cs: (round(cs[1], 9), sp.changes(cs[0]), cs[0].workers))
    near = [(c, s) for c, s in timed if s <= best * (1 + PLAN_TOLERANCE) + 1e-12]
    rec, rec_s = min(near, key=lambda cs: (sp.changes(cs[0]), cs[0].workers, round(cs[1], 9)))
    steps = tuple(_steps(ctx, cur, rec, rec_s, sp))
    alts = tuple(_alternatives(ctx, rec, rec_s))
    defaults = _defaults(ctx, sp) if ctx.target_version is not None else None
    return Plan(cur, rec, steps, seconds(ctx, cur), rec_s, lag_p99(ctx, cur), lag_p99(ctx, rec), fastest, best,
                len(timed), PLAN_TOLERANCE, alts, defaults, ctx.lag_target_s, tuple(ctx.reproduce))


def _defaults(ctx: Context, sp: Space) -> Config:
    """The target's defaults: its clock, its default workers and commit order, this replica's
    durability."""
    new = target_release(ctx)
    b = sp.base
    return replace(b, workers=max(new.replica_parallel_workers, 1), preserve=new.replica_preserve_commit_order,
                   applier=Applier.MTA, durable=ctx.baseline.durable)


def _steps(ctx: Context, cur: Config, rec: Config, rec_s: float, sp: Space) -> list[Step]:
    """The settings ``rec`` changes from ``cur``, each with the plan's time without it."""
    out = []
    mariadb = ReplicaMode(cur.mode).mariadb
    if (rec.clock, rec.history) != (cur.clock, cur.history):
        by_upgrade = (rec.clock, rec.history) == (sp.base.clock, sp.base.history) and ctx.target_version is not None
        if rec.clock != cur.clock:
            without = replace(rec, clock=cur.clock, history=None)
            out.append(Step(Id.DEPENDENCY_TRACKING, "binlog_transaction_dependency_tracking (source)",
                            _clock_name(ctx, cur.clock), _clock_name(ctx, rec.clock), seconds(ctx, without), rec_s,
                            by_upgrade))
        if rec.history is not None and rec.history != (sp.base.history or ctx.analysis.policies.history_size):
            without = replace(rec, history=sp.base.history)
            out.append(Step(Id.HISTORY_SIZE, "binlog_transaction_dependency_history_size (source)",
                            f"{sp.base.history or ctx.analysis.policies.history_size:,}", f"{rec.history:,}",
                            seconds(ctx, without), rec_s))
    if rec.mode != cur.mode:
        out.append(Step(Id.SLAVE_PARALLEL_MODE, "slave_parallel_mode", ReplicaMode(cur.mode).parallel_mode,
                        ReplicaMode(rec.mode).parallel_mode, seconds(ctx, replace(rec, mode=cur.mode)), rec_s))
    if rec.applier != cur.applier:
        out.append(Step(Id.CHANGE_STREAM_APPLIER, "APPLIER_VERSION", "1 (MTA)", "2 (CSA)",
                        seconds(ctx, replace(rec, applier=cur.applier)), rec_s))
    if rec.workers != cur.workers:
        name = "slave_parallel_threads" if mariadb else "replica_parallel_workers"
        out.append(Step(Id.REPLICA_PARALLEL_WORKERS, name, str(ctx.baseline.workers), str(rec.workers),
                        seconds(ctx, replace(rec, workers=cur.workers)), rec_s))
    return out


def _clock_name(ctx: Context, clock: Policy) -> str:
    return f"{ctx.analysis.policies.written.name} (recorded)" if clock == Policy.RECORDED else str(clock)


def _alternatives(ctx: Context, rec: Config, rec_s: float) -> list[Alternative]:
    out = []
    if rec.durable:
        c = replace(rec, durable=False)
        out.append(Alternative("catch_up_durability", "relax durability while catching up",
                               "only while the replica catches up; back to sync_binlog=1, "
                               "innodb_flush_log_at_trx_commit=1 once caught up", c, seconds(ctx, c),
                               lag_p99(ctx, c), rec_s))
    if rec.preserve and not ReplicaMode(rec.mode).mariadb and rec.workers > 1:
        c = replace(rec, preserve=False)
        out.append(Alternative("commit_order_off", "replica_preserve_commit_order = OFF",
                               "only if readers of the replica tolerate commits out of source order",
                               c, seconds(ctx, c), lag_p99(ctx, c), rec_s))
    return out
