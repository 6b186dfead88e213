"""The pre-upgrade review (``advise --target-version V``): what the upgrade changes for this
workload, the lag before and after, what limits WRITESET, and the steps in order.

Every version fact comes from ``versions.RELEASES`` (each with its source; a fact not read in a
manual is named as unverified). Every number is one of advise's simulations (``Context.run``,
the same cost model and catch-up as the findings), and the limits are the findings' own
analyses (missing primary keys, foreign keys, DDL, hot rows): nothing is measured twice.
MySQL's upgrade checker (MySQL Shell ``util.checkForServerUpgrade()``) flags removed variables
only; the clock change and its lag are what this review adds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..analysis.results import WRITESET_POLICIES
from ..depgraph.policies import Fallback
from ..errors import ConfigError
from ..kinds import Applier, FindingId as Id, Policy, ReplicaMode, WhatIfChange, WhatIfKey
from ..versions import (FIELD_OF, GIPK_SINCE, NATIVE_PASSWORD_REMOVED, RELEASES, SOURCES, WRITESET_ONLY_SINCE,
                        Release, default_changes, known_release, known_targets, next_lts, release, removed_between,
                        short, upgrade_path)
from ..writeset.tracker import WhatIf
from .context import Context
from .plan import Config, Plan, clock_now, history_full, lag_p99, seconds

#: The findings that say what limits WRITESET, in the review's order.
LIMIT_FINDINGS = (Id.BINLOG_FORMAT, Id.TABLES_WITHOUT_PRIMARY_KEY, Id.FOREIGN_KEY_PARENT_TABLES, Id.DDL_BARRIERS,
                  Id.HOT_ROWS, Id.HOT_TABLE, Id.LARGE_TRANSACTIONS)


@dataclass(frozen=True)
class Row:
    """One line of the before/after table: a replica configuration and its simulated numbers."""

    label: str
    config: Config
    history_size: int
    ideal_speedup: float | None      # None: the clock was re-derived under a what-if (no depth kept)
    catch_up_seconds: float
    lag_p99_seconds: float
    not_computed: bool = False       # a WRITESET clock of a MINIMAL-metadata binlog without a schema
    applier: Applier = Applier.MTA   # the CSA row of a 26.7+ target (sim.engine, sim.model.CSA_MODEL)

    def as_json(self) -> dict:
        return {"label": self.label, "config": self.config.describe(), "clock": self.config.clock,
                "not_computed": self.not_computed,
                "workers": self.config.workers, "applier": self.applier, "history_size": self.history_size,
                "ideal_speedup": None if self.ideal_speedup is None else round(self.ideal_speedup, 4),
                "catch_up_seconds": round(self.catch_up_seconds, 6), "lag_p99_seconds": round(self.lag_p99_seconds, 6)}


@dataclass(frozen=True)
class Review:
    current: tuple[int, int, int]
    current_from: str            # binlog, --host or --current-version
    target: tuple[int, int, int]
    changes: tuple[str, ...]     # what the upgrade changes for this workload
    rows: tuple[Row, ...]        # now, at the target's defaults, at the advised settings
    limits: tuple[str, ...]      # what limits WRITESET here
    before: tuple[str, ...]      # steps before the upgrade, in order
    after: tuple[str, ...]       # steps after it
    unverified: tuple[str, ...]  # version facts used that no manual confirmed
    sources: tuple[str, ...]     # where the version facts used were read

    def as_json(self) -> dict:
        return {"current_version": short(self.current), "current_version_from": self.current_from,
                "target_version": short(self.target), "changes": list(self.changes),
                "before_after": [r.as_json() for r in self.rows], "limits": list(self.limits),
                "steps_before_upgrade": list(self.before), "steps_after_upgrade": list(self.after),
                "unverified": list(self.unverified), "sources": list(self.sources)}


def offer(ctx: Context) -> str | None:
    """The next LTS a COMMIT_ORDER source could be reviewed for (None: nothing to offer)."""
    p = ctx.analysis.policies
    if ctx.mariadb or p is None or p.written.name != Policy.COMMIT_ORDER or ctx.target_version is not None:
        return None
    if ctx.version < RELEASES[0].first:  # 5.7 and older upgrade to 8.0 first: not in the table
        return None
    lts = next_lts(ctx.version)
    return short(lts.first) if lts else None


def check_target(ctx: Context) -> None:
    """A review is of a MySQL upgrade: ``--target-version`` must be a release the table knows,
    newer than the source's version, and the source a MySQL server (ConfigError, one line,
    otherwise)."""
    t = ctx.target_version
    if t is None:
        return
    if known_release(tuple(t)) is None:
        raise ConfigError(f"--target-version {short(t)}: not a MySQL release this version of lagadvisor knows "
                          f"(known: {known_targets()}, or a patch release of one such as 8.4.3)")
    if ctx.mariadb:
        raise ConfigError(f"--target-version {short(t)}: the pre-upgrade review is of MySQL releases; these binlogs "
                          "were written by MariaDB")
    if tuple(t) <= tuple(ctx.version):
        raise ConfigError(f"--target-version {short(t)} is not newer than the source's {short(ctx.version)} "
                          f"(from {ctx.version_from}): the review is of an upgrade (--current-version names the "
                          "source's version)")


def review(ctx: Context, plan: Plan | None, findings: list) -> Review | None:
    """The review of an upgrade from ``ctx.version`` to ``ctx.target_version`` (None: not asked,
    MariaDB, or no transactions to simulate). Its advised column and its steps after the upgrade
    are the plan's (``advise.plan``: with a target, the plan is the upgraded servers')."""
    if ctx.target_version is None or ctx.mariadb or not ctx.facts or ctx.analysis.policies is None or plan is None:
        return None
    old, new = release(ctx.version), release(ctx.target_version)
    rows = _rows(ctx, plan, new)
    used = {"tracking", "history_size", "replica_parallel_workers", "replica_preserve_commit_order", "gipk"}
    if new.applier_options:
        used.add("applier")
    hops = upgrade_path(ctx.version, ctx.target_version)
    if len(hops) > 1:
        used.add("upgrade_path")
    if ctx.version < NATIVE_PASSWORD_REMOVED <= tuple(ctx.target_version):
        used.add("mysql_native_password")
    fields = {"history_size", "replica_parallel_workers", "replica_preserve_commit_order"}
    fields |= {FIELD_OF[name] for name, *_ in default_changes(ctx.version, ctx.target_version)}
    unverified = sorted({f"{f} ({r.label})" for r in (old, new) for f in r.unverified if f in fields})
    return Review(ctx.version, ctx.version_from, ctx.target_version, tuple(_changes(ctx, old, new, rows)),
                  tuple(rows), tuple(_limits(ctx, findings, new)), tuple(_before(ctx, old, new, findings, hops)),
                  tuple(_after(ctx, old, new, plan, rows)), tuple(unverified), tuple(SOURCES[k] for k in sorted(used)))


def _row(ctx: Context, label: str, c: Config) -> Row:
    history = c.history if c.history is not None else ctx.analysis.policies.history_size
    if c.clock == Policy.RECORDED:
        ideal: float | None = ctx.analysis.total.recorded.ideal_speedup
    else:
        stats = ctx.analysis.policies.clocks.get(c.clock)
        ideal = stats.ideal_speedup if stats is not None and c.history is None else None
    marked = bool(ctx.analysis.policies.not_computed()) and c.clock in WRITESET_POLICIES
    return Row(label, c, history, ideal, seconds(ctx, c), lag_p99(ctx, c), marked, c.applier)


def _rows(ctx: Context, plan: Plan, new: Release) -> list[Row]:
    """Now (the current settings), at the target's defaults, and the plan (the advised settings
    of the upgraded servers); for a target with the Change Stream Applier (26.7+), the plan under
    the other applier too, at the plan's worker count."""
    label = short(new.first)
    rows = [_row(ctx, f"now ({short(ctx.version)})", plan.current),
            _row(ctx, f"{label} defaults", plan.defaults),
            _row(ctx, f"{label} advised", plan.recommended)]
    if new.applier_options:
        other = Applier.MTA if plan.recommended.applier == Applier.CSA else Applier.CSA
        rows.append(_row(ctx, f"{label} advised, {other.upper()}", replace(plan.recommended, applier=other)))
    return rows


def _changes(ctx: Context, old: Release, new: Release, rows: list[Row]) -> list[str]:
    """What the upgrade changes for this workload: the clock, the defaults, removed settings."""
    p = ctx.analysis.policies
    out = []
    now, at = rows[0], rows[1]
    if not old.writeset_only and new.writeset_only:
        ideal = (f": ideal speedup {now.ideal_speedup:,.2f}x -> {at.ideal_speedup:,.2f}x"
                 if now.ideal_speedup and at.ideal_speedup else "")
        out.append(f"the clock: binlog_transaction_dependency_tracking is removed in {short(WRITESET_ONLY_SINCE)}, "
                   f"the source tracks WRITESET; {_clock_words(ctx, now.config.clock)} is replaced by WRITESET, "
                   f"re-derived here{ideal}")
    elif new.writeset_only:
        out.append("the clock: the source tracks WRITESET before and after the upgrade")
    note = p.not_computed_note(ctx.analysis.total.transactions)
    if note and new.writeset_only:
        out.append(f"* {note}")
    for name, a, b, verified in default_changes(ctx.version, ctx.target_version):
        if name == "binlog_transaction_dependency_tracking":
            continue
        yours = ctx.settings.get(name) if ctx.settings else None
        if name == "binlog_transaction_dependency_history_size":
            full = history_full(ctx)
            a, b = f"{int(a):,}", f"{int(b):,}"
            out.append(f"default {name}: {a} -> {b} ("
                       + (f"the history filled up for {full:,} transactions of this workload: the rows at the "
                          "target re-derive WRITESET with the new size" if full else
                          "it never filled up on this workload: no effect here") + ")")
            continue
        out.append(f"default {name}: {a or 'none'} -> {b or 'removed'}"
                   + (f" (your server: {yours}, read from {ctx.settings.host})" if yours is not None else
                      " (this replica is assumed at the old default)")
                   + ("" if verified else " (not verified in a manual)"))
    for name, r in removed_between(ctx.version, ctx.target_version):
        out.append(f"removed in {r.label}: {name} (a my.cnf that sets it stops the upgraded server from starting)")
    if ctx.version < NATIVE_PASSWORD_REMOVED <= tuple(ctx.target_version):
        out.append("removed in 9.0: the mysql_native_password authentication plugin (a replica cannot log in to its "
                   "source as a user of that plugin)")
    if new.applier_options and not old.applier_options:
        out.append(f"applier: {short(new.first)} adds the Change Stream Applier (CHANGE REPLICATION SOURCE TO "
                   f"{', '.join(new.applier_options)}; APPLIER_VERSION=1, the multi-threaded applier, stays the "
                   "default of a new channel); modelled here from the MySQL source's scheduler (commit 312d9ed) and "
                   "its manual: no 26.x server ran")
    if not out:
        out.append("nothing that matters to the applier or the clock changes between these versions")
    return out


def _clock_words(ctx: Context, clock: Policy) -> str:
    """The current clock in words: the recorded one, or a policy re-derived from the file."""
    p = ctx.analysis.policies
    if clock == Policy.RECORDED:
        return f"this binlog's clock ({p.written.name})"
    return f"the {clock} clock (re-derived from this {p.written.name} binlog, commit-order input {p.commit_order})"


def _limits(ctx: Context, findings: list, new: Release) -> list[str]:
    """What limits WRITESET here: the findings that say so, and the fallbacks behind them."""
    p = ctx.analysis.policies
    by_id = {f.id: f for f in findings}
    out = []
    for fid in LIMIT_FINDINGS:
        f = by_id.get(fid)
        if f is not None:
            out.append(f"{f.title} (finding {fid}, {f.severity.value})")
    if p.fallbacks.get(Fallback.NO_PRIMARY_KEY.value):
        gipk = new.default("sql_generate_invisible_primary_key")
        out.append(f"sql_generate_invisible_primary_key (since {short(GIPK_SINCE)}) is {gipk or 'absent'} by default "
                   f"in {short(new.first)}: tables created without a primary key keep getting no writeset")
    counts = {r: n for r, n in sorted(p.fallbacks.items()) if n}
    if counts:
        out.append("transactions that fell back to the commit-order parent: "
                   + ", ".join(f"{r} {n:,}" for r, n in counts.items()))
    return out or ["nothing found: every transaction had a writeset and no row was hot"]


def _before(ctx: Context, old: Release, new: Release, findings: list, hops: list[Release]) -> list[str]:
    """The steps before the upgrade, in order: what the source and schema need, then each hop of
    the supported path with what breaks at it (removed variables, the authentication plugin)."""
    from .rules import _set_statement

    p = ctx.analysis.policies
    ids = {f.id: f for f in findings}
    out = []
    if p.not_computed():
        out.append("rerun this review with --schema FILE or --host: the WRITESET numbers are not computed")
    if Id.BINLOG_FORMAT in ids:
        out.append(f"{_set_statement(ctx, 'binlog_format', 'ROW')} on the source (finding binlog_format): from "
                   f"{short(WRITESET_ONLY_SINCE)} no transaction of a session logging STATEMENT or MIXED gets a writeset")
    if Id.TABLES_WITHOUT_PRIMARY_KEY in ids:
        out.append("add primary keys to " + ", ".join(ids[Id.TABLES_WITHOUT_PRIMARY_KEY].tables or ("the tables",))
                   + " (finding tables_without_primary_key)"
                   + (", and SET PERSIST sql_generate_invisible_primary_key = ON for tables created later"
                      if ctx.version >= GIPK_SINCE else ""))
    if Id.FOREIGN_KEY_PARENT_TABLES in ids:
        out.append("review the foreign keys of finding foreign_key_parent_tables: WRITESET cannot parallelize "
                   "writes to their parent tables")
    assumed = set(ctx.baseline.assumed)
    for name, a, _b, _v in default_changes(ctx.version, ctx.target_version):
        if name in assumed and a and name != "binlog_transaction_dependency_tracking":
            out.append(f"set {name} explicitly if you rely on its current default ({a})")
    prev = ctx.version
    for n, hop in enumerate(hops, 1):
        removed = [f"remove {name} from my.cnf (removed in {r.label}: a my.cnf that sets it stops the server)"
                   for name, r in removed_between(prev, hop.first)]
        what = removed + ([_native_password(ctx)] if prev < NATIVE_PASSWORD_REMOVED <= hop.first else [])
        where = (f"hop {n} of {len(hops)}: " if len(hops) > 1 else "") + \
            f"upgrade {short(prev)} -> {hop.label}{' LTS' if hop.lts else ''}"
        if len(hops) > 1 and n == 1:
            where += (" (5.7 upgrades to an 8.0 bugfix release first, then through each LTS series)"
                      if prev < (8, 0, 0) else " (the supported path goes through each LTS series)")
        out.append(where + ("; before it: " + "; ".join(what) if what else "")
                   + ("; MySQL's upgrade checker (util.checkForServerUpgrade) flags removed variables, not what the "
                      "new clock does to lag" if removed else ""))
        prev = hop.first
    out.append("at each hop, upgrade the replicas before the source: a replica may run a newer release than its "
               "source, not an older one")
    return out


def _native_password(ctx: Context) -> str:
    """The step for the authentication plugin 9.0 removes: a replica of 9.x cannot log in to its
    source as a mysql_native_password user."""
    user = None
    if ctx.settings is not None and ctx.settings.replica:
        user = ctx.settings.replica.get("Source_User") or ctx.settings.replica.get("Master_User")
    who = f"the replication user {user!s}" if user else "no replication user"
    verb = "must not authenticate" if user else "may authenticate"
    return (f"{who} {verb} with mysql_native_password (removed in 9.0.0): on the source, "
            "SELECT user, host FROM mysql.user WHERE plugin = 'mysql_native_password'; then ALTER USER ... "
            "IDENTIFIED WITH caching_sha2_password BY '...'; and give the replica SOURCE_SSL = 1 or "
            "GET_SOURCE_PUBLIC_KEY = 1")


def _after(ctx: Context, old: Release, new: Release, plan: Plan, rows: list[Row]) -> list[str]:
    """The steps after the upgrade, in order: the plan's settings where they differ from the
    target's defaults, each as the statements the target runs."""
    from .statements import applier_change, persist

    at, adv = plan.defaults, plan.recommended
    d = ctx.dialect()
    out = []
    if adv.workers != at.workers and adv.applier == Applier.MTA:
        out.append(" ".join(applier_change(d, "replica_parallel_workers", str(adv.workers)))
                   + f" (the plan's {adv.workers} workers)")
    if adv.preserve != at.preserve:
        out.append(" ".join(applier_change(d, "replica_preserve_commit_order", "ON" if adv.preserve else "OFF"))
                   + " (this replica's commit order, kept by the plan)")
    if adv.history is not None and adv.history != new.history_size:
        out.append(" ".join(persist(d, "binlog_transaction_dependency_history_size", str(adv.history)))
                   + " on the source (finding history_size)")
    if adv.applier == Applier.CSA:
        out.append(f"switch the channel to the Change Stream Applier with {adv.workers} workers (finding "
                   "change_stream_applier: its statements and prerequisites)")
    alt = plan.alternative("catch_up_durability")
    if alt is not None and alt.gain >= 0.02:
        out.append("optionally, only while the replica catches up: SET GLOBAL sync_binlog = 0; SET GLOBAL "
                   "innodb_flush_log_at_trx_commit = 2; (finding replica_durability), back to 1 / 1 once caught up")
    if not old.writeset_only and new.writeset_only:
        out.append("check the new clock: `lagadvisor analyze` a binlog the upgraded source wrote (written by WRITESET)")
    out.append("rerun `lagadvisor advise` on the upgraded servers (with --host) to confirm the numbers above")
    return out
