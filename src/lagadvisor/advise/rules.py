"""The advisor's rules: each looks at the :class:`Context` and returns findings.

Rules are independent pieces (``RULES``); each finding carries the evidence from the binlog and a
simulated effect measured against the baseline replica (its settings from ``--host``, else MySQL's
defaults). Thresholds are named constants so a reader can argue with them.
"""

from __future__ import annotations

from array import array
from dataclasses import replace
from typing import Callable

from ..depgraph.policies import Fallback
from ..kinds import (KEYS_UNKNOWN, MARIADB_MODES, WRITESET_BASED, CaveatKind, FindingId as Id, Policy, ReplicaMode,
                     WhatIfChange, WhatIfKey)
from ..sim.build import fact_column, first_commit_ts
from ..versions import GIPK_SINCE, WRITESET_ONLY_SINCE, short, writeset_only
from ..writeset.tracker import WhatIf
from .context import WORKERS, Context
from .csa import change_stream_applier
from .findings import MIN_GAIN, Alternative, Effect, Finding, Severity, change_words
from .plan import Config, curve, lag_p99, seconds as plan_seconds
from .statements import Dialect, applier_change, catch_up_durability, persist

Rule = Callable[[Context], list[Finding]]

LARGE_TRX_ROWS = 10_000          # rows in one transaction
LARGE_TRX_BYTES = 16 << 20       # bytes of one transaction
LARGE_TRX_SHARE = 0.05           # or: one transaction is this share of the whole apply time
LARGE_TRX_MIN_US = 50_000        # ... and takes at least this long to apply
#: Invisible columns (ALTER TABLE ... INVISIBLE): MySQL 8.0.23 (8.0 manual, 13.1.20.10 'Invisible Columns').
INVISIBLE_COLUMNS_SINCE = (8, 0, 23)
HOT_ROW_SHARE = 0.05             # a row key behind this share of all row conflicts


def _ws_since() -> str:
    """``8.4``: the first release whose sources track WRITESET only (versions.py)."""
    return short(WRITESET_ONLY_SINCE)


def _fmt_s(v: float) -> str:
    return f"{v:,.3f} s"


def _current(ctx: Context, name: str, default: str) -> tuple[str, bool]:
    """A setting's current value as every rule reads it (``Context.setting``: --replica-setting,
    then the server's), else ``default`` (assumed: True)."""
    v, _ = ctx.setting(name)
    return (v, False) if v is not None else (default, True)


def _sev(ctx: Context, gain: float, floor: Severity = Severity.info) -> Severity:
    return ctx.severity(gain, floor)


def dialect(ctx: Context, before_upgrade: bool = False) -> Dialect:
    return ctx.dialect(before_upgrade)


def _step(ctx: Context, fid: Id):
    """The plan's step for a finding's setting (None: the plan keeps it as it is)."""
    return next((s for s in ctx.plan.steps if s.finding == fid), None) if ctx.plan is not None else None


def _step_effect(ctx: Context, step, without: Config, description: str) -> Effect:
    """A plan step's effect: the plan without this change against the plan."""
    plan = ctx.plan
    return Effect(description, before=step.seconds_before, after=step.seconds_after,
                  lag_p99_before=lag_p99(ctx, without), lag_p99_after=plan.recommended_lag_p99)


def _plan_words(ctx: Context) -> str:
    plan = ctx.plan
    return (f"the plan searched {plan.searched} configurations and runs the one with the fewest changes within "
            f"{plan.tolerance:.0%} of the fastest ({plan.fastest_seconds:,.3f} s)")


def dependency_tracking(ctx: Context) -> list[Finding]:
    """binlog_transaction_dependency_tracking: the clock the plan runs (5.7/8.0 sources choose it;
    8.4+ sources, and an upgrade to them, track WRITESET: no variable to set)."""
    if ctx.mariadb or not ctx.facts or ctx.plan is None:
        return []
    pol = ctx.analysis.policies
    written = pol.written.name if pol else "unknown"
    stats = pol.clocks if pol else {}
    ideal = {p: (s.transactions / s.depth if s.depth else 0.0) for p, s in stats.items()}
    evidence = (f"binlog written under {written}; clock depth (longest chain) per policy: "
                + ", ".join(f"{p} {stats[p].depth:,} of {stats[p].transactions:,} transactions "
                            f"(ideal {ideal[p]:.1f}x)" for p in stats))
    note = pol.not_computed_note(ctx.analysis.total.transactions) if pol else None
    if note:
        evidence += f"; {note}"
    rec = ctx.plan.recommended
    now = ctx.plan.current.clock  # the recorded clock, or the policy --current-version's release runs
    cur, assumed = _current(ctx, "binlog_transaction_dependency_tracking",
                            written if now == Policy.RECORDED else str(now))
    metrics = {"ideal_parallelism": ideal}
    step = _step(ctx, Id.DEPENDENCY_TRACKING)
    target = ctx.target_version
    if writeset_only(ctx.version) or (target is not None and writeset_only(target)):
        when = (f"after the upgrade to {short(target)}" if not writeset_only(ctx.version) else f"{_ws_since()}+")
        eff = None
        if step is not None:
            eff = _step_effect(ctx, step, replace(rec, clock=ctx.plan.current.clock, history=None),
                               f"the plan under the {written} clock against the WRITESET clock {when}")
        title = (f"The upgrade to {short(target)} tracks dependencies with WRITESET"
                 if not writeset_only(ctx.version) else f"Dependency tracking is WRITESET ({_ws_since()}+)")
        return [Finding(Id.DEPENDENCY_TRACKING, Severity.info, title, "binlog_transaction_dependency_tracking",
                        cur if not writeset_only(ctx.version) else Policy.WRITESET, Policy.WRITESET,
                        evidence + f"; {when} the variable is removed: nothing to set, in SQL or in my.cnf",
                        eff, where="source", current_assumed=assumed and not writeset_only(ctx.version),
                        metrics=metrics)]
    if step is None:
        if note:
            return [Finding(Id.DEPENDENCY_TRACKING, Severity.info, "WRITESET not computed: the clock is not judged",
                            "binlog_transaction_dependency_tracking", cur,
                            f"{cur} (rerun with --schema FILE or --host to judge WRITESET)", evidence, None,
                            where="source", current_assumed=assumed, metrics=metrics)]
        # the plan keeps the source's clock: a confirmation (current == suggested)
        return [Finding(Id.DEPENDENCY_TRACKING, Severity.info, f"Keep {written} on the source",
                        "binlog_transaction_dependency_tracking", cur, cur,
                        evidence + f"; {_plan_words(ctx)}", None, where="source", current_assumed=assumed,
                        metrics=metrics)]
    eff = _step_effect(ctx, step, replace(rec, clock=Policy.RECORDED, history=None),
                       f"the plan under the recorded {written} clock against {rec.clock} tracked on the source")
    d = dialect(ctx)
    return [Finding(Id.DEPENDENCY_TRACKING, _sev(ctx, eff.gain), f"Track dependencies with {rec.clock} on the source",
                    "binlog_transaction_dependency_tracking", cur, str(rec.clock), evidence + f"; {_plan_words(ctx)}",
                    eff, where="source", statements=persist(d, "binlog_transaction_dependency_tracking", rec.clock),
                    mycnf=(("binlog_transaction_dependency_tracking", str(rec.clock)),), current_assumed=assumed,
                    metrics=metrics)]


def parallel_workers(ctx: Context) -> list[Finding]:
    """replica_parallel_workers (MariaDB: slave_parallel_threads): the plan's count, with the
    curve under the plan's other settings as evidence."""
    if not ctx.facts or ctx.plan is None:
        return []
    plan, b = ctx.plan, ctx.baseline
    rec = plan.recommended
    c = curve(ctx, rec)
    name = "slave_parallel_threads" if ctx.mariadb else dialect(ctx).name("replica_parallel_workers")
    cur, assumed = _current(ctx, name if ctx.mariadb else "replica_parallel_workers", str(b.workers))
    one = c[1]
    fastest = min(c, key=lambda w: (round(c[w], 9), w))
    evidence = (f"simulated catch-up under the plan's other settings ({rec.describe()}) by workers: "
                + ", ".join(f"{w}: {_fmt_s(s)} ({one / s:.2f}x)" for w, s in c.items() if s > 0)
                + f"; the fastest is {fastest} ({_fmt_s(c[fastest])}); {_plan_words(ctx)}; "
                f"replica cores in the cost model: {ctx.cost.cores}")
    metrics = {"curve_seconds": {str(w): s for w, s in c.items()}, "plan_workers": rec.workers}
    step = _step(ctx, Id.REPLICA_PARALLEL_WORKERS)
    if step is None:
        return [Finding(Id.REPLICA_PARALLEL_WORKERS, Severity.info, f"Keep {cur} applier workers", name, cur, cur,
                        evidence, None, current_assumed=assumed, metrics=metrics)]
    eff = _step_effect(ctx, step, replace(rec, workers=plan.current.workers),
                       f"{cur} -> {rec.workers} {'threads' if ctx.mariadb else 'workers'}, the plan's other settings "
                       "as planned")
    d = dialect(ctx)
    return [Finding(Id.REPLICA_PARALLEL_WORKERS, _sev(ctx, eff.gain), f"Run {rec.workers} applier "
                    f"{'threads' if ctx.mariadb else 'workers'}", name, cur, str(rec.workers), evidence, eff,
                    statements=applier_change(d, "slave_parallel_threads" if ctx.mariadb else "replica_parallel_workers",
                                              str(rec.workers)), mycnf=((name, str(rec.workers)),),
                    current_assumed=assumed, metrics=metrics)]


def parallel_mode(ctx: Context) -> list[Finding]:
    """MariaDB's slave_parallel_mode: conservative (group commits in parallel), optimistic (the
    default since 10.5: speculative apply, conflicts rolled back and retried; transactions that
    waited for a lock on the source wait) or aggressive (speculates on those too): the plan's."""
    if not ctx.facts or not ctx.mariadb or ctx.plan is None:
        return []
    rec = ctx.plan.recommended
    times = {m.parallel_mode: plan_seconds(ctx, replace(rec, mode=m)) for m in MARIADB_MODES}
    cur_mode = ReplicaMode(ctx.baseline.mode).parallel_mode
    cur, assumed = _current(ctx, "slave_parallel_mode", cur_mode)
    best = ReplicaMode(rec.mode).parallel_mode
    evidence = (f"simulated catch-up with the plan's {rec.workers} threads by mode: "
                + ", ".join(f"{m} {_fmt_s(t)}" for m, t in times.items())
                + "; optimistic and aggressive apply speculatively and retry on a conflict (conflicts from the "
                "re-derived writesets; a retried transaction is assumed to lose half its work); " + _plan_words(ctx))
    metrics = {"catch_up_seconds": times, "threads": rec.workers}
    step = _step(ctx, Id.SLAVE_PARALLEL_MODE)
    if step is None:
        return [Finding(Id.SLAVE_PARALLEL_MODE, Severity.info, f"Keep slave_parallel_mode {cur}",
                        "slave_parallel_mode", cur, cur, evidence, None, current_assumed=assumed, metrics=metrics)]
    eff = _step_effect(ctx, step, replace(rec, mode=ctx.baseline.mode), f"{rec.workers} threads: {cur_mode} -> {best}")
    return [Finding(Id.SLAVE_PARALLEL_MODE, _sev(ctx, eff.gain), f"Parallel mode {best}", "slave_parallel_mode",
                    cur, best, evidence, eff, statements=applier_change(dialect(ctx), "slave_parallel_mode", best),
                    mycnf=(("slave_parallel_mode", best),), current_assumed=assumed, metrics=metrics)]


def preserve_commit_order(ctx: Context) -> list[Finding]:
    """replica_preserve_commit_order: a constraint the plan keeps; OFF is its labelled
    alternative, with its own numbers, where it gains."""
    if not ctx.facts or ctx.mariadb or ctx.plan is None:
        return []
    rec = ctx.plan.recommended
    on = "ON" if rec.preserve else "OFF"
    cur, assumed = _current(ctx, "replica_preserve_commit_order", on)
    alt = ctx.plan.alternative("commit_order_off")
    if alt is None or alt.gain < MIN_GAIN:
        why = ("with one worker there is no order to keep" if rec.workers <= 1 else
               f"OFF would gain {alt.gain:.1%}" if alt is not None else "the replica already commits out of order")
        return [Finding(Id.REPLICA_PRESERVE_COMMIT_ORDER, Severity.info, "Commit order on the replica",
                        "replica_preserve_commit_order", cur, cur, f"the plan keeps {cur}: {why}", None,
                        current_assumed=assumed)]
    eff = Effect(f"the plan with commit order OFF: {rec.workers} workers", before=alt.plan_seconds, after=alt.seconds,
                 lag_p99_before=ctx.plan.recommended_lag_p99, lag_p99_after=alt.lag_p99)
    return [Finding(Id.REPLICA_PRESERVE_COMMIT_ORDER, Severity.info, "Commit order on the replica: OFF is faster",
                    "replica_preserve_commit_order", cur, f"{cur} (the plan keeps it)",
                    f"with the plan's {rec.workers} workers: ON {_fmt_s(alt.plan_seconds)}, OFF {_fmt_s(alt.seconds)} "
                    f"({change_words(alt.plan_seconds, alt.seconds)} OFF). OFF lets transactions commit out of "
                    "source order: gaps in gtid_executed while applying, readers of the replica may see states the "
                    "source never had; so the plan keeps it, and OFF is an alternative", eff,
                    current_assumed=assumed, alternative=_alternative(ctx, alt, ("replica_preserve_commit_order", "OFF")))]


def _alternative(ctx: Context, alt, setting: tuple[str, str]) -> Alternative:
    d = dialect(ctx)
    stmts = (catch_up_durability(d) if alt.key == "catch_up_durability" else
             applier_change(d, setting[0], setting[1]))
    return Alternative(setting[1], alt.condition,
                       Effect(f"the plan ({ctx.plan.recommended.describe()}) -> {alt.config.describe()}",
                              before=alt.plan_seconds, after=alt.seconds,
                              lag_p99_before=ctx.plan.recommended_lag_p99, lag_p99_after=alt.lag_p99), stmts)


def history_size(ctx: Context) -> list[Finding]:
    """binlog_transaction_dependency_history_size where the history filled up: the plan's size."""
    p = ctx.analysis.policies
    if p is None or ctx.mariadb or ctx.plan is None:
        return []
    full = p.fallbacks.get(Fallback.HISTORY_FULL.value, 0) + p.fallbacks.get(Fallback.WRITESET_LIMIT.value, 0)
    if not full:
        return []
    rec = ctx.plan.recommended
    cur, assumed = _current(ctx, "binlog_transaction_dependency_history_size", str(p.history_size))
    evidence = (f"{full:,} transactions fell back because the history was full or a writeset was larger than it "
                f"({p.resets:,} history resets)")
    step = _step(ctx, Id.HISTORY_SIZE)
    if step is None:
        return [Finding(Id.HISTORY_SIZE, Severity.info, "The writeset history filled up",
                        "binlog_transaction_dependency_history_size", cur, f"{cur} (the plan keeps it)",
                        evidence + f"; a larger history gains too little under the plan: {_plan_words(ctx)}", None,
                        where="source", current_assumed=assumed)]
    eff = _step_effect(ctx, step, replace(rec, history=ctx.plan.current.history),
                       f"the plan with history {step.before} -> {step.after}")
    return [Finding(Id.HISTORY_SIZE, _sev(ctx, eff.gain), "The writeset history filled up",
                    "binlog_transaction_dependency_history_size", cur, str(rec.history), evidence, eff, where="source",
                    statements=persist(dialect(ctx), "binlog_transaction_dependency_history_size", str(rec.history)),
                    mycnf=(("binlog_transaction_dependency_history_size", str(rec.history)),),
                    current_assumed=assumed)]


def group_commit_delay(ctx: Context) -> list[Finding]:
    """binlog_group_commit_sync_delay for COMMIT_ORDER sources: larger groups, at a commit-latency cost."""
    p = ctx.analysis.policies
    if p is None or ctx.mariadb or writeset_only(ctx.version) or p.written.name != Policy.COMMIT_ORDER:
        return []
    if not first_commit_ts(ctx.facts):
        return []
    w = max(ctx.baseline.workers, 2)
    before = ctx.seconds(Policy.RECORDED, w)
    best = None
    for delay in (100, 500, 1000, 2000, 5000):
        facts = delayed_facts(ctx.facts, delay)
        after = ctx.seconds(Policy.RECORDED, w, facts=facts, key=WhatIfKey(WhatIfChange.SYNC_DELAY, delay))
        if best is None or after < best[1] * 0.97:
            best = (delay, after)
    delay, after = best
    cur, assumed = _current(ctx, "binlog_group_commit_sync_delay", "0")
    stats = p.clocks.get(Policy.COMMIT_ORDER)
    eff = Effect(f"estimated from the commit timestamps: transactions committing within {delay} us of a "
                 f"group's first join it; {w} workers", before=before, after=after)
    if eff.gain < MIN_GAIN:
        return []
    return [Finding(Id.SYNC_DELAY, _sev(ctx, eff.gain), "Larger commit groups on the source",
                    "binlog_group_commit_sync_delay", cur, str(delay),
                    f"COMMIT_ORDER clock: {stats.parallel_share:.1%} of transactions may overlap their "
                    f"predecessor, mean distance {stats.mean_distance:.2f}. Cost: every commit on the source "
                    f"waits up to {delay} us, so one session can commit at most {1e6 / delay:,.0f} times per "
                    "second; binlog_group_commit_sync_no_delay_count ends the wait once that many "
                    "transactions joined.", eff, where="source",
                    statements=(f"SET GLOBAL binlog_group_commit_sync_delay = {delay};",),
                    mycnf=(("binlog_group_commit_sync_delay", str(delay)),
                           ("binlog_group_commit_sync_no_delay_count", "64")), current_assumed=assumed)]


def delayed_facts(facts, delay_us: int):
    """The facts with their recorded clock as the source would have written it with
    ``binlog_group_commit_sync_delay`` = ``delay_us``: a view computed chunk by chunk
    (:class:`DelayedGroups`) where the facts are columns and the native core is here, so memory
    stays bounded however long the input; else :func:`delayed_groups`' list."""
    from ..sim import engine
    from ..sim.stream import chunks_of

    native = engine.NATIVE
    if chunks_of(facts) is None or not hasattr(native, "sim_delayed_recorded") or not hasattr(native, "StreamSim"):
        return delayed_groups(facts, delay_us)
    return DelayedGroups(facts, delay_us)


#: The columns :func:`delayed_recorded` reads.
_DELAY_COLUMNS = ("file_idx", "seq", "commit_ts_us", "recorded")


class DelayedGroups:
    """A what-if's facts without a copy: ``base``'s, the recorded clock delayed
    (:func:`delayed_recorded`, natively: ``sim_delayed_recorded``) chunk by chunk as the
    simulations read them, the other columns ``base``'s own. What the simulations read of a
    store (``chunks``, the commit-time bounds, an input cache of its own) it has."""

    def __init__(self, base, delay_us: int) -> None:
        from ..sim.stream import first_ts_of

        self.base, self.delay_us = base, delay_us
        self.sim_inputs: dict = {}
        self.first_ts = first_ts_of(base)
        self.last_ts = getattr(base, "last_ts", None)
        self.nbytes_total = getattr(base, "nbytes_total", None)

    @property
    def spilled(self) -> bool:
        return bool(getattr(self.base, "spilled", False))

    def __len__(self) -> int:
        return len(self.base)

    def chunks(self, names: tuple[str, ...] | None = None):
        from ..sim import engine
        from ..sim.stream import chunks_of

        native = engine.NATIVE
        want = None if names is None else tuple(dict.fromkeys((*names, *_DELAY_COLUMNS)))
        state = (-1, 0, 0, 0, 0)
        for off, c in chunks_of(self.base, want):
            b, state = native.sim_delayed_recorded(c.file_idx.tobytes(), c.seq.tobytes(), c.commit_ts_us.tobytes(),
                                                   c.recorded.tobytes(), self.delay_us, state)
            col = array("q")
            col.frombytes(b)
            yield off, replace(c, recorded=col)


def delayed_recorded(file_idx, seq, commit_ts_us, recorded, delay_us: int,
                     state: tuple[int, int, int, int, int] = (-1, 0, 0, 0, 0)):
    """A COMMIT_ORDER clock with ``binlog_group_commit_sync_delay``, over columns (any
    iterables; the native ``sim_delayed_recorded``'s reference): a transaction that commits within
    ``delay_us`` of its group's first commit (in one binlog file) joins the group and may start
    after the previous group, so its recorded last_committed is capped at the last sequence number
    before the group (an estimate from commit timestamps; the source's timing would shift).
    Returns the column and the state (file, a group started, its first commit time, the last
    sequence number before it, the previous sequence number) that carries over to the next chunk."""
    file, started, group_start, prev_group_last, last_seq = state
    out = array("q")
    for fi, sq, ts, lc in zip(file_idx, seq, commit_ts_us, recorded):
        if fi != file:
            file, started, group_start, prev_group_last, last_seq = fi, 0, 0, 0, 0
        if not started or ts - group_start > delay_us:
            prev_group_last, group_start, started = last_seq, ts, 1
        out.append(min(lc, prev_group_last) if lc > 0 else lc)
        last_seq = sq
    return out, (file, started, group_start, prev_group_last, last_seq)


def delayed_groups(facts, delay_us: int):
    """:func:`delayed_recorded`'s clock on facts as a list (the reference's, or a run without the
    native core): the ``TrxFacts`` with their recorded clock replaced; :func:`delayed_facts`
    streams the columns otherwise."""
    facts = list(facts)
    recorded, _ = delayed_recorded((f.file_idx for f in facts), (f.seq for f in facts),
                                   (f.commit_ts_us for f in facts), (f.clocks[0] for f in facts), delay_us)
    return [replace(f, clocks=(new,) + f.clocks[1:]) for f, new in zip(facts, recorded)]


def _fallback_tables(ctx: Context, reason: str) -> list[tuple[str, int]]:
    p = ctx.analysis.policies
    return [(t, n) for r, t, n in (p.fallback_tables if p else []) if r == reason]


def missing_primary_keys(ctx: Context) -> list[Finding]:
    tables = _fallback_tables(ctx, Fallback.NO_PRIMARY_KEY.value)
    if not tables:
        return []
    names = tuple(sorted(t for t, _ in tables))
    w = ctx.plan_workers()
    before_ws = ctx.seconds(Policy.WRITESET, w)
    facts = ctx.what_if_facts(WhatIf(add_primary_key=frozenset(n.lower() for n in names)))
    after_ws = ctx.seconds(Policy.WRITESET, w, facts=facts, key=WhatIfKey(WhatIfChange.ADD_PRIMARY_KEY))
    before, after, how = _on_baseline(ctx, w, before_ws, after_ws)
    scanned = {t: ctx.scans[t] for t in names if t in ctx.scans}
    eff = Effect(f"{how}, {w} workers, with a primary key on {', '.join(names)} (estimated as the "
                 "rows' NOT NULL columns)" + (
                     "; it also ends the full scans a row-based replica makes to find the rows of each "
                     f"UPDATE/DELETE on a table without any index ({ctx.cost.scan_row_us:g} us per row "
                     "scanned, bench/keyless_apply.py)" if scanned else ""), before=before, after=after)
    d = dialect(ctx, before_upgrade=True)
    gipk = (("-- MariaDB: no generated invisible primary keys; add a key to new tables",) if ctx.mariadb else
            persist(d, "sql_generate_invisible_primary_key", "ON"))
    invisible = "INVISIBLE " if not ctx.mariadb and ctx.version >= INVISIBLE_COLUMNS_SINCE else ""
    stmts = tuple(f"ALTER TABLE {_q(n)} ADD COLUMN my_row_id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT "
                  f"{invisible}PRIMARY KEY FIRST;" for n in names) + gipk
    return [Finding(Id.TABLES_WITHOUT_PRIMARY_KEY, _sev(ctx, eff.gain, Severity.warning),
                    f"{len(names)} table(s) without a primary key: " + ", ".join(names),
                    "PRIMARY KEY", "none", "add a primary key (or a generated invisible one)",
                    "transactions writing to a table without a primary key get no writeset and keep the "
                    "commit-order parent: " + ", ".join(f"{t} ({n:,} transactions)" for t, n in tables)
                    + (_scan_evidence(ctx, scanned) if scanned else
                       "; each has an index, so a row-based replica still seeks its rows"
                       if all(_known_indexed(ctx, t) for t in names) else
                       "; a row-based replica searches a table without any index by full scan"),
                    eff, where="schema",
                    statements=stmts, tables=names)]


def _scan_evidence(ctx: Context, scanned: dict) -> str:
    known = ctx.options.catalog is not None and bool(ctx.options.catalog.table_rows)
    size = ("sizes: the larger of the server's TABLE_ROWS and the rows the binlog added" if known else
            "sizes unknown without --host: counted as the rows this binlog inserted minus deleted, a lower "
            "bound")
    parts = [f"{t}: {ev:,} UPDATE/DELETE events scanned {rows:,} rows" for t, (ev, rows) in sorted(scanned.items())]
    return "; without any index, a row-based replica scans the whole table for each UPDATE/DELETE " \
           f"event: {', '.join(parts)} ({size})"


def _known_indexed(ctx: Context, name: str) -> bool:
    cat = ctx.options.catalog
    if cat is None or "." not in name:
        return False
    db, table = name.split(".", 1)
    t = cat.get(db, table)
    return t is not None and (t.indexed or bool(t.keys) or bool(t.foreign_keys))


def fk_parents(ctx: Context) -> list[Finding]:
    tables = _fallback_tables(ctx, Fallback.FK_PARENT.value)
    if not tables:
        return []
    names = tuple(sorted(t for t, _ in tables))
    w = ctx.plan_workers()
    before_ws = ctx.seconds(Policy.WRITESET, w)
    facts = ctx.what_if_facts(WhatIf(drop_foreign_keys_to=frozenset(n.lower() for n in names)))
    after_ws = ctx.seconds(Policy.WRITESET, w, facts=facts, key=WhatIfKey(WhatIfChange.DROP_FOREIGN_KEYS))
    before, after, how = _on_baseline(ctx, w, before_ws, after_ws)
    eff = Effect(f"{how}, {w} workers, without the foreign keys referencing {', '.join(names)}",
                 before=before, after=after)
    return [Finding(Id.FOREIGN_KEY_PARENT_TABLES, _sev(ctx, eff.gain, Severity.warning),
                    f"{len(names)} foreign-key parent table(s) disable writesets: " + ", ".join(names),
                    "FOREIGN KEY", "referenced by foreign keys",
                    "enforce the relation in the application, or accept the serialization",
                    "a change to a table referenced by a foreign key empties the writeset history and keeps "
                    "the commit-order parent: " + ", ".join(f"{t} ({n:,} transactions)" for t, n in tables)
                    + _fk_check_evidence(ctx),
                    eff, where="schema", tables=names)]


def _fk_check_evidence(ctx: Context) -> str:
    """The foreign-key checks the replica's InnoDB runs (``TrxFacts.fk_checks``), when the schema
    shows any, and what the cost model charges its workers for them: ``fk_check_us`` for each
    check past one per inserted row (``sim.model.extra_fk_checks``: the per-row costs hold those;
    the effect above drops them all), which is said."""
    counts = ctx.schema_counts()
    checks, extra = counts["checks"], counts["extra_checks"]
    if not checks:
        return ""
    n = max(ctx.analysis.total.transactions, 1)
    text = f"; the replica's InnoDB also runs {checks:,} foreign-key checks ({checks / n:.2f} a transaction"
    if ctx.cost.fk_check_us <= 0:
        return text + ", not priced apart by this cost model: its row costs hold them)"
    if not extra:
        return text + ", none past one per inserted row: this cost model's row costs hold them)"
    share = extra * ctx.cost.fk_check_us / (ctx.work_us_total() or 1.0)
    return (text + f"; {extra:,} past one per inserted row, which the row costs hold, at {ctx.cost.fk_check_us:g} us "
            f"each: {share:.0%} of the workers' apply time)")


#: The share of the workers' apply time the secondary index entries past the per-row costs' own
#: must take for advise to name them (:func:`secondary_indexes`).
INDEX_ENTRY_SHARE = 0.10
#: Tables with at least this many secondary indexes (unique and non-unique) are named.
INDEXES_NAMED = 3


def secondary_indexes(ctx: Context) -> list[Finding]:
    """Secondary index entries past what the cost model's per-row costs hold
    (``sim.model.extra_index_entries``: the many-core lab's tables had at most one secondary index
    an inserted row), when the schema shows them (the binlog's DDL, ``--schema``, ``--host``) and
    they take :data:`INDEX_ENTRY_SHARE` or more of the workers' apply time: their cost at
    ``index_entry_us``, the tables written with :data:`INDEXES_NAMED` or more secondary indexes
    (:func:`_many_indexed`), and the catch-up without those entries (the same facts priced with the term at 0:
    the workers' CPU is all that changes, not the clock)."""
    if ctx.cost.index_entry_us <= 0:
        return []
    extra = ctx.schema_counts()["extra_entries"]
    share = extra * ctx.cost.index_entry_us / (ctx.work_us_total() or 1.0)
    if not extra or share < INDEX_ENTRY_SHARE:
        return []
    w = ctx.plan_workers()
    before = ctx.seconds(Policy.RECORDED, w)
    after = ctx.with_cost(replace(ctx.cost, index_entry_us=0.0)).seconds(Policy.RECORDED, w)
    eff = Effect(f"recorded clock, {w} workers, without the {extra:,} secondary index entries past one an "
                 "inserted or deleted row and two an updated row (the tables' indexes beyond one)",
                 before=before, after=after)
    named = _many_indexed(ctx)
    where = (": " + ", ".join(f"{t} ({k} secondary indexes, {n:,} rows written)" for t, k, n in named)
             if named else "")
    return [Finding(Id.SECONDARY_INDEXES, _sev(ctx, eff.gain), "Secondary index entries slow the workers"
                    + (": " + ", ".join(t for t, _, _ in named[:3]) if named else ""),
                    "secondary indexes", ", ".join(f"{t}: {k}" for t, k, _ in named[:3]) or None,
                    "drop the indexes no query uses (sys.schema_unused_indexes on the source and the replica), "
                    "or keep on the replica only those its readers need",
                    f"the replica's InnoDB writes {extra:,} secondary index entries past the cost model's per-row "
                    f"share ({ctx.cost.index_entry_us:g} us each: {share:.0%} of the workers' apply time){where}",
                    eff, where="schema", tables=tuple(t for t, _, _ in named),
                    metrics={"extra_index_entries": extra, "share": round(share, 4)})]


def _many_indexed(ctx: Context) -> list[tuple[str, int, int]]:
    """(table, secondary indexes, rows the binlog wrote) of the tables with :data:`INDEXES_NAMED`
    or more secondary indexes, the most rows first: the schema given (``--schema``, ``--host``)
    with the binlog's own DDL applied in order (``Analysis.ddl``), as the read followed it."""
    import copy

    from ..schema.ddl import UnsupportedDDL, apply_statement
    from ..schema.model import Catalog
    from ..writeset.extract import plan_table

    cat = copy.deepcopy(ctx.options.catalog) if ctx.options.catalog is not None else Catalog()
    for db, sql in ctx.analysis.ddl:
        try:
            apply_statement(cat, sql, db)
        except UnsupportedDDL:
            pass  # the read reported it
    out = []
    for name, n in ctx.analysis.total.tables.items():
        db, _, table = name.partition(".")
        t = cat.get(db, table) if table else None
        if t is None:
            continue
        k = len(plan_table(t, cat).index_probes)  # the indexes whose entries are counted
        if k >= INDEXES_NAMED:
            out.append((name, k, n))
    return sorted(out, key=lambda x: (-x[2], x[0]))[:5]


def hot_rows(ctx: Context) -> list[Finding]:
    g = ctx.graph
    if not g.conflicts:
        return []
    top = sorted(g.hot_rows.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    hot = [(k, n) for k, n in top if n / g.conflicts >= HOT_ROW_SHARE and k.readable]
    if not hot:
        return []
    w = ctx.plan_workers()
    before_ws = ctx.seconds(Policy.WRITESET, w)
    facts = ctx.what_if_facts(WhatIf(ignore_rows=frozenset(k.label for k, _ in hot)))
    after_ws = ctx.seconds(Policy.WRITESET, w, facts=facts, key=WhatIfKey(WhatIfChange.HOT_ROWS))
    before, after, how = _on_baseline(ctx, w, before_ws, after_ws)
    eff = Effect(f"{how}, {w} workers, if these rows stopped conflicting (an upper bound)",
                 before=before, after=after)
    tables = tuple(sorted({k.table for k, _ in hot}))
    return [Finding(Id.HOT_ROWS, _sev(ctx, eff.gain), "Hot rows serialize the stream",
                    "application / schema", None,
                    "spread the hot rows (sharded counters, batched updates, move them out of the transaction)",
                    f"{g.conflicts:,} row conflicts; " + ", ".join(f"{k}: {n:,} ({n / g.conflicts:.0%})"
                                                                  for k, n in hot)
                    + f"; critical path {g.depth:,} transactions ({g.critical_path_us / 1e6:,.3f} s of "
                    f"{g.serial_us / 1e6:,.3f} s serial)", eff, where="application", tables=tables,
                    metrics={"hot_rows": {k.label: n for k, n in hot}})]


#: The fact columns one transaction's apply time is priced from (``CostModel.apply_us``'s arguments).
_APPLY_COLUMNS = ("inserts", "updates", "deletes", "nbytes", "scan_rows", "fk_checks", "index_entries", "events")


def _largest_apply_us(ctx: Context, sizes: list[tuple[int, int]]) -> dict[tuple[int, int], float]:
    """The apply time of the first transaction of each (bytes, rows) in ``sizes`` (0 if none), in
    one pass over the facts that stops when every size is found (a spilled store: reading back
    only the columns the price needs)."""
    from ..sim.stream import chunks_of

    found = dict.fromkeys(sizes, 0.0)
    left = set(found)
    chunks = chunks_of(ctx.facts, ("seq", *_APPLY_COLUMNS))
    if chunks is None:
        for f in ctx.facts:
            key = (f.nbytes, f.inserts + f.updates + f.deletes)
            if key in left:
                found[key] = ctx.cost.apply_of(f)
                left.discard(key)
                if not left:
                    break
        return found
    for _, cols in chunks:  # columns (a spilled store: chunk by chunk)
        for nbytes, rows in sorted(left):
            col, start = cols.nbytes, 0
            while True:
                try:
                    i = col.index(nbytes, start)
                except ValueError:
                    break
                if cols.inserts[i] + cols.updates[i] + cols.deletes[i] == rows:
                    found[nbytes, rows] = ctx.cost.apply_us(*(getattr(cols, n)[i] for n in _APPLY_COLUMNS))
                    left.discard((nbytes, rows))
                    break
                start = i + 1
        if not left:
            break
    return found


def large_transactions(ctx: Context) -> list[Finding]:
    t = ctx.analysis.total
    total_us = ctx.work_us_total() or 1.0
    big = []
    largest = t.largest_sorted()
    apply_us = _largest_apply_us(ctx, [(nbytes, rows) for nbytes, rows, _, _ in largest])
    for nbytes, rows, gtid, where in largest:
        f_us = apply_us[nbytes, rows]
        if (rows >= LARGE_TRX_ROWS or nbytes >= LARGE_TRX_BYTES
                or (f_us / total_us >= LARGE_TRX_SHARE and f_us >= LARGE_TRX_MIN_US)):
            big.append((nbytes, rows, gtid, where, f_us))
    too_large = ctx.analysis.policies.fallbacks.get(Fallback.TOO_LARGE.value, 0) if ctx.analysis.policies else 0
    if not big and not too_large:
        return []
    worst = max((b[4] for b in big), default=0.0)
    eff = Effect("one worker applies each of them while transactions after it wait (with commit order "
                 "preserved); estimated apply time of the largest", metric="seconds_blocked",
                 before=worst / 1e6, after=None)
    return [Finding(Id.LARGE_TRANSACTIONS, Severity.warning if worst / total_us >= LARGE_TRX_SHARE else Severity.info,
                    f"{len(big)} oversized transaction(s)", "application batching", None,
                    f"commit in batches of at most {LARGE_TRX_ROWS // 10:,} rows",
                    "; ".join(f"{g} at {w}: {r:,} rows, {b / 1e6:,.1f} MB, ~{us / 1e6:,.3f} s to apply"
                              for b, r, g, w, us in big)
                    + (f"; {too_large} transaction(s) too large to analyse row by row" if too_large else ""),
                    eff, where="application")]


def ddl_barriers(ctx: Context) -> list[Finding]:
    t = ctx.analysis.total
    if not t.ddl:
        return []
    w = ctx.plan_workers()
    from ..sim.stream import chunks_of

    chunks = chunks_of(ctx.facts, ("file_idx", "seq", "inserts", "updates", "deletes", "nbytes"))
    if chunks is not None:
        ddl_seqs = {(fi, s) for _, cols in chunks
                    for fi, s, i, u, d, nb in zip(cols.file_idx, cols.seq, cols.inserts, cols.updates,
                                                  cols.deletes, cols.nbytes) if i + u + d == 0 and nb}
    else:
        ddl_seqs = {(f.file_idx, f.seq) for f in ctx.facts if f.inserts + f.updates + f.deletes == 0 and f.nbytes}
    before = ctx.seconds(Policy.RECORDED, w)
    written = ctx.analysis.policies.clocks if ctx.analysis.policies else {}
    barriers = ctx.analysis.total.recorded.barriers
    eff = Effect("DDL applies alone: it waits for every earlier transaction and blocks every later one; "
                 "the cost model does not price the DDL itself", before=before, after=before)
    return [Finding(Id.DDL_BARRIERS, Severity.info, f"{t.ddl:,} DDL statement(s) apply alone",
                    "schema changes", None, "run schema changes off-peak or with an online schema change tool",
                    f"{t.ddl:,} DDL transactions, each applied alone on the replica (the applier waits for every "
                    f"earlier transaction before it, and every later one waits for it); {len(ddl_seqs):,} "
                    f"transactions without row changes; in the recorded clock, {barriers:,} transaction"
                    f"{'s have' if barriers != 1 else ' has'} last_committed 0 (a wait for every earlier one)",
                    eff, where="application",
                    metrics={"ddl": t.ddl, "barriers": barriers, "policies": list(written)})]


def durability(ctx: Context) -> list[Finding]:
    """The replica's durability: a constraint the plan keeps. A durable replica is offered relaxed
    durability while it catches up, a labelled alternative with its own numbers (the plan with
    sync_binlog=0, innodb_flush_log_at_trx_commit=2), never part of the plan."""
    if not ctx.facts or ctx.plan is None:
        return []
    b = ctx.baseline
    sync, a1 = _current(ctx, "sync_binlog", "1")
    flush, a2 = _current(ctx, "innodb_flush_log_at_trx_commit", "1")
    cur = f"sync_binlog={sync}, innodb_flush_log_at_trx_commit={flush}"
    rec = ctx.plan.recommended
    if not b.durable:
        dur = plan_seconds(ctx, replace(rec, durable=True))
        eff = Effect("already relaxed", before=ctx.plan.recommended_seconds, after=ctx.plan.recommended_seconds)
        return [Finding(Id.REPLICA_DURABILITY, Severity.info, "Replica durability is relaxed",
                        "sync_binlog / innodb_flush_log_at_trx_commit", cur, cur,
                        f"durable would take {_fmt_s(dur)} instead of {_fmt_s(ctx.plan.recommended_seconds)}; keep "
                        f"{_autopos(ctx)} and relay_log_recovery=ON so a crash is recovered from the "
                        "source", eff, current_assumed=a1 or a2)]
    alt = ctx.plan.alternative("catch_up_durability")
    eff = Effect(f"while catching up, the plan ({rec.workers} {'threads' if ctx.mariadb else 'workers'}) durable "
                 f"{_fmt_s(alt.plan_seconds)} -> relaxed {_fmt_s(alt.seconds)}", before=alt.plan_seconds,
                 after=alt.seconds, lag_p99_before=ctx.plan.recommended_lag_p99, lag_p99_after=alt.lag_p99)
    return [Finding(Id.REPLICA_DURABILITY, _sev(ctx, eff.gain),
                    "Catch-up only: relax durability on the replica while it catches up",
                    "sync_binlog / innodb_flush_log_at_trx_commit", cur,
                    "sync_binlog=0, innodb_flush_log_at_trx_commit=2 while catching up",
                    "the plan stays durable; this is a separate, temporary option. Every commit group pays an "
                    f"fsync of the binlog and the redo log (cost model: {ctx.cost.redo_flush_us:.0f} + "
                    f"{ctx.cost.flush_us:.0f} us per group"
                    + (f", each plus {ctx.cost.fsync_byte_us:g} us per byte the group wrote" if ctx.cost.fsync_byte_us else "")
                    + "). Trade-off: after an OS crash the "
                    "replica loses its last transactions; it is safe to re-fetch them only with GTID "
                    f"auto-positioning ({_autopos(ctx)}) and relay_log_recovery=ON, and a replica that "
                    "may be promoted should go back to 1/1 first", eff,
                    statements=catch_up_durability(dialect(ctx)),
                    mycnf=(("sync_binlog", "0"), ("innodb_flush_log_at_trx_commit", "2"),
                           ("relay_log_recovery", "ON")), current_assumed=a1 or a2,
                    condition=alt.condition, metrics={"catch_up_only": True})]


def _set_statement(ctx: Context, name: str, value: str) -> str:
    """The permanent change of a source variable, in the form the source's release accepts (one
    line: MariaDB's and 5.7's SET GLOBAL with the my.cnf reminder as its comment)."""
    return " ".join(persist(dialect(ctx), name, value))


def row_format(ctx: Context) -> list[Finding]:
    """What keeps the analysis from being exact, each with the cause it can name: row metadata
    below FULL, row images without the key columns, or tables defined before the binlog (their
    unique keys are in no table map: only ``--schema`` or ``--host`` can say)."""
    p = ctx.analysis.policies
    if p is None:
        return []
    out = []
    meta = {f.summary.row_metadata for f in ctx.analysis.files if f.summary.events.get("TABLE_MAP_EVENT")}
    image_gaps = [(c, n) for c, n in p.caveats if CaveatKind.ROW_IMAGE_KEYS_MISSING in c.kinds]
    key_gaps = [(c, n) for c, n in (*p.unknown, *p.caveats) if c.kinds & KEYS_UNKNOWN]
    exactness = Severity.warning if (image_gaps or key_gaps) else Severity.info
    if meta and meta != {"FULL"}:
        cur = ctx.settings.get("binlog_row_metadata") if ctx.settings else None
        cur = cur or ", ".join(sorted(meta))
        has = ctx.mariadb or dialect(ctx, before_upgrade=True).has("binlog_row_metadata")
        if cur.upper() != "FULL":
            out.append(Finding(
                Id.BINLOG_ROW_METADATA, exactness, "Row metadata below FULL hides key definitions",
                "binlog_row_metadata", cur if has else f"none ({short(ctx.version)} has no binlog_row_metadata)",
                "FULL" if has else "FULL (MySQL 8.0.1+; until then --schema or --host)",
                f"row metadata in the files: {', '.join(sorted(meta))}; FULL table maps name the columns and "
                "the primary key, so writesets can be computed without a schema"
                + (": " + "; ".join(f"{c} ({n:,} transactions)" for c, n in key_gaps[:3]) if key_gaps else ""),
                None, where="source",
                statements=(_set_statement(ctx, "binlog_row_metadata", "FULL"),) if has else (),
                mycnf=(("binlog_row_metadata", "FULL"),) if has else (), current_assumed=ctx.settings is None))
    if image_gaps:
        cur = ctx.settings.get("binlog_row_image") if ctx.settings else None
        # NOBLOB leaves out a BLOB/TEXT column the row did not change, a unique key's too
        if (cur or "").upper() != "FULL":
            out.append(Finding(
                Id.BINLOG_ROW_IMAGE, Severity.warning, "Row images without their key columns",
                "binlog_row_image", cur or "MINIMAL or NOBLOB (seen in the row images)", "FULL",
                "; ".join(f"{c} ({n:,} transactions)" for c, n in image_gaps[:3])
                + "; the server hashes the full key, lagadvisor cannot", None, where="source",
                statements=(_set_statement(ctx, "binlog_row_image", "FULL"),),
                mycnf=(("binlog_row_image", "FULL"),), current_assumed=cur is None))
    defined_before = [(c, n) for c, n in key_gaps if meta == {"FULL"} or ctx.options.catalog is not None]
    if defined_before:
        given = ctx.options.catalog is not None
        out.append(Finding(
            Id.TABLE_DEFINITIONS, Severity.warning,
            "Tables defined before these binlogs: their unique keys are unknown",
            "lagadvisor --schema / --host",
            "the schema given lacks these tables" if given else "no schema given",
            "a schema dump with these tables (mysqldump --no-data) via --schema, or --host" if given
            else "rerun with --schema dump.sql (mysqldump --no-data) or --host (reads information_schema)",
            "; ".join(f"{c} ({n:,} transactions)" for c, n in defined_before[:3])
            + "; the binlog's table maps carry the primary key but not unique keys, so the WRITESET "
            "numbers for these tables may overstate parallelism", None, where="analysis",
            tables=tuple(sorted({c.table for c, _ in defined_before}))))
    return out


def binlog_format(ctx: Context) -> list[Finding]:
    """binlog_format: a transaction logged as statements has no writeset, a WRITESET reset
    (``Fallback.STATEMENT``); from 8.4 ``can_use_writesets`` (sql/rpl_trx_tracking.cc) also needs
    the session's binlog_format to be ROW, so under MIXED the transactions a session logs as rows
    reset too, which the binlog does not show (tests/depgraph/test_edge_oracle.py)."""
    t = ctx.analysis.total
    if ctx.mariadb or not t.statement_based:
        return []
    cur = ctx.settings.get("binlog_format") if ctx.settings else None
    evidence = (f"{t.statement_based:,} of {t.transactions:,} transactions logged as statements: each has no "
                "writeset, so WRITESET gives it the commit-order parent and every later transaction waits for it")
    if writeset_only(ctx.version) or (ctx.target_version is not None and writeset_only(ctx.target_version)):
        evidence += (f"; from {_ws_since()} a session whose binlog_format is not ROW gets no writeset for any "
                     "transaction, those it logs as rows too (MIXED logs a statement unsafe to repeat as rows), "
                     "and no binlog shows which those are: the WRITESET numbers here count only the transactions "
                     "logged as statements, and overstate the parallelism of a source that runs MIXED")
    return [Finding(Id.BINLOG_FORMAT, Severity.warning, "Statement-based logging keeps WRITESET from tracking",
                    "binlog_format", cur or "STATEMENT or MIXED (statements in the binlog)", "ROW",
                    evidence + "; not simulated: a statement's rows are not in the binlog", None, where="source",
                    statements=(_set_statement(ctx, "binlog_format", "ROW"),), mycnf=(("binlog_format", "ROW"),))]


HOT_TABLE_SHARE = 0.5           # one table behind this share of all row conflicts


def hot_tables(ctx: Context) -> list[Finding]:
    """One table behind most row conflicts serializes the stream (``graph``'s hot tables)."""
    g = ctx.graph
    if not g.conflicts or not g.hot_tables:
        return []
    table, n = max(g.hot_tables.items(), key=lambda kv: (kv[1], kv[0]))
    share = n / g.conflicts
    if share < HOT_TABLE_SHARE:
        return []
    keys = frozenset(k.label for k in g.hot_rows if k.table == table)
    w = ctx.plan_workers()
    eff = None
    if keys:
        before_ws = ctx.seconds(Policy.WRITESET, w)
        facts = ctx.what_if_facts(WhatIf(ignore_rows=keys))
        after_ws = ctx.seconds(Policy.WRITESET, w, facts=facts, key=WhatIfKey(WhatIfChange.HOT_TABLE))
        before, after, how = _on_baseline(ctx, w, before_ws, after_ws)
        eff = Effect(f"{how}, {w} workers, if the table's {len(keys):,} hottest rows stopped conflicting "
                     "(a lower bound of what spreading the table's writes gives)", before=before, after=after)
    others = sorted(g.hot_tables.items(), key=lambda kv: (-kv[1], kv[0]))[1:4]
    return [Finding(Id.HOT_TABLE, _sev(ctx, eff.gain) if eff else Severity.info,
                    f"One table is behind {share:.0%} of row conflicts: {table}", "application / schema", None,
                    "spread its writes (fewer updates of the same rows: sharded counters, batching, "
                    "a queue table per writer)",
                    f"{n:,} of {g.conflicts:,} row conflicts are on {table}"
                    + (" (next: " + ", ".join(f"{t} {m:,}" for t, m in others) + ")" if others else ""),
                    eff, where="application", tables=(table,), metrics={"share": round(share, 4)})]


def _on_baseline(ctx: Context, workers: int, before_ws: float, after_ws: float) -> tuple[float, float, str]:
    """A what-if measured on the re-derived WRITESET clock, stated against the report's one
    baseline (the recorded clock) when the source writes WRITESET: the baseline minus the
    what-if's saving. On a COMMIT_ORDER source a schema change alone changes nothing: the effect
    is stated for a source that tracks WRITESET, and says so."""
    written = ctx.analysis.policies.written.name if ctx.analysis.policies else ""
    if written in WRITESET_BASED:
        base = ctx.seconds(Policy.RECORDED, workers)
        return base, max(0.0, base - (before_ws - after_ws)), "recorded clock minus the saving on the WRITESET clock"
    return before_ws, after_ws, "with a source tracking WRITESET"


def resource_groups(ctx: Context) -> list[Finding]:
    """When the replica is CPU-bound (workers beyond the cores add nothing), pin the applier."""
    if not ctx.facts or ctx.mariadb:
        return []
    cores = ctx.cost.cores
    curve = ctx.curve(Policy.RECORDED)
    if cores not in curve or 2 * cores not in curve:
        return []
    at, beyond = curve[cores], curve[2 * cores]
    clock_allows = ctx.seconds(Policy.RECORDED, WORKERS[-1])
    if not (beyond >= at * 0.97 and curve[1] > 0 and curve[1] / at >= 1.2) or not _cpu_bound(ctx, cores):
        return []
    eff = Effect(f"simulated: {cores} workers {_fmt_s(at)}, {2 * cores} workers {_fmt_s(beyond)} — more "
                 "workers than cores add no throughput; resource groups give the applier CPU priority "
                 "over other work (not modelled)", before=at, after=at)
    return [Finding(Id.RESOURCE_GROUPS, Severity.info, "The replica is CPU-bound: give the applier its cores",
                    "resource groups", None, "a SYSTEM resource group for the applier threads",
                    f"the clock allows more parallelism ({_fmt_s(clock_allows)} at {WORKERS[-1]} workers is "
                    f"bounded by {cores} cores in the model)", eff,
                    statements=(f"CREATE RESOURCE GROUP replica_applier TYPE = SYSTEM VCPU = 0-{cores - 1} "
                                "THREAD_PRIORITY = -10;",
                                "-- for each applier thread: SELECT THREAD_ID FROM performance_schema.threads "
                                "WHERE NAME IN ('thread/sql/replica_worker','thread/sql/replica_sql');",
                                "SET RESOURCE GROUP replica_applier FOR <thread_id>, ...;",
                                "-- prerequisite: mysqld needs CAP_SYS_NICE (systemd: AmbientCapabilities="
                                "CAP_SYS_NICE) or thread priorities are ignored"))]


def _cpu_bound(ctx: Context, cores: int) -> bool:
    """At ``cores`` workers, the workers' CPU limits the simulated catch-up (``Context.bound_by``,
    the summary's bottleneck): what more cores, or the applier's priority on them, would help
    (issue 33: on 16 cores a coordinator- or commit-bound catch-up is flat past the cores too)."""
    return ctx.bound_by(ctx.run(Policy.RECORDED, cores), cores, ctx.baseline.durable) == "worker CPU"


RULES: tuple[Rule, ...] = (dependency_tracking, parallel_workers, parallel_mode, preserve_commit_order, history_size,
                           group_commit_delay, missing_primary_keys, fk_parents, secondary_indexes, hot_rows,
                           large_transactions, ddl_barriers, durability, row_format, binlog_format, hot_tables,
                           resource_groups, change_stream_applier)


def _autopos(ctx: Context) -> str:
    return "MASTER_USE_GTID=slave_pos" if ctx.mariadb else "SOURCE_AUTO_POSITION=1"


def _q(name: str) -> str:
    return ".".join(f"`{p}`" for p in name.split(".", 1))
