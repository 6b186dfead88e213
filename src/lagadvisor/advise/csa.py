"""The Change Stream Applier (CSA) of MySQL 26.7+: its simulated gain on this binlog, its
prerequisites and the SQL to switch a channel to it, for an upgrade review whose target is 26.7 or
later (``Context.target_version``).

What the rule reads, all from the MySQL 26.7 Reference Manual: 19.2.4 "Change Stream Applier"
(the semantics; ``sim.engine`` schedules as the MySQL source does, ``sim.model.CSA_MODEL``), 19.2.4.1 "Configuring the Change Stream Applier" (the
prerequisites and the ``CHANGE REPLICATION SOURCE TO APPLIER_VERSION = 2, APPLIER_WORKER_COUNT =
N`` statement between ``STOP REPLICA`` and ``START REPLICA``), 19.2.4.2 "Change Stream Applier
Limitations" (no ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS) and 19.2.4.3 "Monitoring" (the channel's
APPLIER_VERSION in performance_schema.replication_applier_configuration). No 26.x server runs
here: the simulated effect is the model, and the finding says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..kinds import Applier, FindingId, Policy
from ..sim.model import CSA_MODEL
from .context import Context
from .plan import CSA_SINCE

#: What the CSA's simulated numbers stand on, in the finding's metrics.
CSA_SOURCE_WORDS = "scheduled as in the MySQL source (mysql-server commit 312d9ed); no 26.x server measured"
from .findings import Effect, Finding, Severity, change_words



@dataclass(frozen=True)
class Prerequisite:
    """One requirement of 19.2.4.1/19.2.4.2: what it needs, what was read and from where
    (``current`` None: not read, to check)."""

    name: str
    required: str
    current: str | None = None
    read_from: str = ""
    met: bool | None = None

    def as_json(self) -> dict:
        return {"name": self.name, "required": self.required, "current": self.current,
                "read_from": self.read_from, "met": self.met}

    def words(self) -> str:
        if self.current is None:
            return f"{self.name}: to check (needs {self.required})"
        mark = "met" if self.met else "NOT met"
        return f"{self.name}: {self.current} ({mark}; {self.read_from})"


def _channel_value(ctx: Context, column: str, status_column: str | None = None) -> tuple[str | None, str]:
    """A column of the default channel's performance_schema configuration (``--host``), else the
    same setting in SHOW REPLICA STATUS, else None."""
    s = ctx.settings
    if s is None:
        return None, ""
    if s.channel and s.channel.get(column) is not None:
        return str(s.channel[column]), "performance_schema"
    if status_column and s.replica and s.replica.get(status_column) is not None:
        return str(s.replica[status_column]), "SHOW REPLICA STATUS"
    return None, ""


def prerequisites(ctx: Context) -> list[Prerequisite]:
    """The CSA's requirements, each read from the binlog or the server where it can be."""
    out = []
    sbr = ctx.analysis.total.statement_based
    if sbr:
        out.append(Prerequisite("row-based binary logging", "ROW", f"statement-based events in {sbr:,} transactions",
                                "the binlog", False))
    else:
        out.append(Prerequisite("row-based binary logging", "ROW", "ROW", "the binlog: every transaction row-based",
                                True))
    mode = ctx.settings.get("gtid_mode") if ctx.settings else None
    anonymous = sum(f.summary.events.get("ANONYMOUS_GTID_LOG_EVENT", 0) for f in ctx.analysis.files)
    if mode is not None:
        out.append(Prerequisite("gtid_mode", "ON", mode, "the server's global variables", mode.upper() == "ON"))
    elif anonymous:
        out.append(Prerequisite("gtid_mode", "ON", f"not ON on the source ({anonymous:,} anonymous transactions)",
                                "the binlog", False))
    else:
        out.append(Prerequisite("gtid_mode", "ON"))
    for option, column, status, required, ok in (
            ("SOURCE_AUTO_POSITION", "AUTO_POSITION", "Auto_Position", "1", ("1",)),
            ("GTID_ONLY", "GTID_ONLY", None, "1", ("1",)),
            ("REQUIRE_ROW_FORMAT", "REQUIRE_ROW_FORMAT", None, "1", ("1", "YES")),
            ("SOURCE_DELAY", "DESIRED_DELAY", "SQL_Delay", "0", ("0",)),
            ("ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS", "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_TYPE", None, "OFF",
             ("OFF",))):
        v, where = _channel_value(ctx, column, status)
        out.append(Prerequisite(option, required, v, where, None if v is None else v.upper() in ok))
    return out


def change_stream_applier(ctx: Context) -> list[Finding]:
    """For a 26.7+ target: the applier the plan runs (the plan searched both, ``advise.plan``),
    against the other one at the plan's worker count under the clock the target writes, catch-up
    and lag, with the prerequisites and the switch."""
    from .plan import lag_p99, seconds

    t = ctx.target_version
    plan = ctx.plan
    if t is None or tuple(t) < CSA_SINCE or ctx.mariadb or not ctx.facts or plan is None:
        return []
    rec = plan.recommended
    mta_c, csa_c = replace(rec, applier=Applier.MTA), replace(rec, applier=Applier.CSA)
    mta, csa = seconds(ctx, mta_c), seconds(ctx, csa_c)
    w = rec.workers
    clock = "the recorded clock" if rec.clock == Policy.RECORDED else f"the {rec.clock} clock"
    eff = Effect(f"{clock}, the plan's {w} workers, replica_preserve_commit_order="
                 f"{'ON' if rec.preserve else 'OFF'}: MTA {mta:,.3f} s -> CSA {csa:,.3f} s ({CSA_MODEL})",
                 before=mta, after=csa, lag_p99_before=lag_p99(ctx, mta_c), lag_p99_after=lag_p99(ctx, csa_c))
    reqs = prerequisites(ctx)
    current, assumed = "1", True
    if ctx.settings and ctx.settings.channel and ctx.settings.channel.get("APPLIER_VERSION") is not None:
        current, assumed = str(ctx.settings.channel["APPLIER_VERSION"]), False
    unmet = [r for r in reqs if r.met is False]
    evidence = ("prerequisites (MySQL 26.7 manual 19.2.4.1): " + "; ".join(r.words() for r in reqs)
                + ". The CSA schedules from the same last_committed/sequence_number; with commit order "
                "preserved a worker that has applied a transaction takes the next one instead of waiting "
                "for its commit turn, and workers read the relay log in parallel")
    metrics = {"workers": w, "mta_seconds": round(mta, 6), "csa_seconds": round(csa, 6),
               "target_version": ".".join(map(str, t)), "model": CSA_SOURCE_WORDS,
               "prerequisites": [r.as_json() for r in reqs]}
    if rec.applier != Applier.CSA:
        why = (f"the CSA is {change_words(mta, csa)} at the plan's {w} workers: within the plan's "
               f"{plan.tolerance:.0%} tolerance, the smallest change keeps the MTA" if csa < mta else
               f"the CSA is {change_words(mta, csa)} at the plan's {w} workers")
        return [Finding(FindingId.CHANGE_STREAM_APPLIER, Severity.info,
                        f"After the upgrade to {'.'.join(map(str, t))}: keep the multi-threaded applier",
                        "APPLIER_VERSION", current, current if current == "1" else "1",
                        f"simulated: MTA {mta:,.3f} s, CSA {csa:,.3f} s; {why}; " + evidence, eff,
                        current_assumed=assumed, metrics=metrics)]
    stmts = tuple(f"-- first: {r.name} = {r.required} (now {r.current})" for r in unmet
                  if r.name in ("gtid_mode", "row-based binary logging")) + (
        ctx.dialect().stop(sql_thread=False),
        f"CHANGE REPLICATION SOURCE TO APPLIER_VERSION = 2, APPLIER_WORKER_COUNT = {w}, SOURCE_AUTO_POSITION = 1, "
        "GTID_ONLY = 1, REQUIRE_ROW_FORMAT = 1, SOURCE_DELAY = 0;",
        ctx.dialect().start(sql_thread=False))
    return [Finding(FindingId.CHANGE_STREAM_APPLIER, ctx.severity(eff.gain),
                    f"After the upgrade to {'.'.join(map(str, t))}: the Change Stream Applier, "
                    f"{change_words(mta, csa)}" + (f" ({len(unmet)} prerequisite(s) not met)" if unmet else ""),
                    "APPLIER_VERSION", current, "2", evidence, eff, statements=stmts,
                    current_assumed=assumed, metrics=metrics)]
