"""The advice as JSON (versioned, ``docs/advise-schema.json``), on the console, and as my.cnf."""

from __future__ import annotations

import json

from rich.text import Text

from .. import __version__
from ..advise import Advice
from ..analysis.results import WRITESET_POLICIES
from ..advise.findings import SCHEMA_VERSION, change_words
from ..advise.summary import summary
from .tables import compact_table, label_column, number_column
from ..kinds import Applier, Policy, ReplicaMode


def charts(advice: Advice) -> dict:
    """The numbers behind the HTML charts (also in the JSON, so they can be re-plotted)."""
    ctx = advice.context
    curves = {}
    for clock in (Policy.RECORDED,) + tuple(ctx.policies):
        c = ctx.curve(clock)
        one = c[1]
        curves[clock] = [{"workers": w, "catch_up_seconds": round(s, 6),
                          "speedup": round(one / s, 4) if s else 0.0} for w, s in c.items()]
    b = ctx.baseline
    lag = {}
    if ctx.facts:
        w = max(b.workers, 1)
        lag["current"] = _series(ctx.run(Policy.RECORDED, w, catch_up=False))
        plan = advice.plan
        if plan is not None and plan.recommended != plan.current:  # what the findings suggest, together
            r = plan.recommended
            lag[f"with the plan ({r.describe()})"] = _series(ctx.run(r.clock, r.workers, preserve=r.preserve,
                                                                     durable=r.durable, mode=r.mode, catch_up=False))
    hist = {}
    if ctx.analysis.policies:
        stats = {Policy.RECORDED: ctx.analysis.total.recorded, **ctx.analysis.policies.clocks}
        for name, s in stats.items():
            hist[name] = [{"distance": label, "transactions": n} for label, n in s.histogram_rows()]
    buckets = sorted({r["distance"] for rows in hist.values() for r in rows}, key=_bucket_order)
    hot = [{"table": t, "dependencies": n}
           for t, n in sorted(ctx.graph.hot_tables.items(), key=lambda kv: (-kv[1], kv[0]))[:10]]
    durability = ("durable replica: sync_binlog=1, innodb_flush_log_at_trx_commit=1" if b.durable else
                  "relaxed replica: sync_binlog=0, innodb_flush_log_at_trx_commit=2")
    return {"speedup": curves, "speedup_durability": durability, "lag": lag, "distance_histogram": hist,
            "distance_buckets": buckets, "hot_tables": hot}


def _bucket_order(label: str) -> float:
    """"1" < "2" < "3-4" < ... < ">1024"."""
    if label.startswith(">"):
        return float("inf")
    return float(label.split("-", 1)[0])


def _series(res) -> list[list[float]]:
    """About 200 (commit s, lag s) points in commit order (``sim.stream.SimSummary.chart``)."""
    return res.chart


def advice_json(advice: Advice) -> dict:
    ctx = advice.context
    p = ctx.analysis.policies
    b = ctx.baseline
    s = ctx.settings
    return {
        "schema_version": SCHEMA_VERSION,
        "generator": f"lagadvisor {__version__}",
        "input": {"files": ctx.paths, "transactions": ctx.analysis.total.transactions,
                  "server_version": p.written.server_version if p else "",
                  "written_policy": p.written.name if p else "none",
                  "settings_from": s.host if s else None,
                  "settings_notes": list(s.notes) if s else []},
        "baseline": {"clock": b.clock, "workers": b.workers, "preserve_commit_order": b.preserve_commit_order,
                     "durable": b.durable, "assumed_defaults": list(b.assumed),
                     **({"given": list(b.given)} if b.given else {})},
        "cost_model": json.loads(ctx.cost.to_json()),
        "summary": summary(advice),
        "plan": advice.plan.as_json() if advice.plan else None,
        "findings": [f.as_json() for f in advice.findings],
        "charts": charts(advice),
        **review_json(advice),
    }


def review_json(advice: Advice) -> dict:
    """``review``: the pre-upgrade review (--target-version), or the one offered (only then: the
    JSON of other inputs is as it was)."""
    if advice.review is not None:
        return {"review": advice.review.as_json()}
    if advice.offer is not None:
        return {"review": {"offered": advice.offer, "option": f"--target-version {advice.offer}"}}
    return {}


def offer_text(version: str) -> str:
    """The line that offers the review for the next LTS."""
    return (f"this source records COMMIT_ORDER: rerun with --target-version {version} for the pre-upgrade review "
            f"(what {version} LTS changes for this workload: the clock becomes WRITESET, the lag before and after)")


def render_review(r, console) -> None:
    """The pre-upgrade review: what changes, the before/after table, limits, steps."""
    from rich.table import Table

    from ..versions import short

    console.print(Text.assemble("\n", ("pre-upgrade review", "bold"),
                                f": {short(r.current)} (from {r.current_from}) -> {short(r.target)}"))
    kv = Table(show_header=False, box=None, pad_edge=False)
    kv.add_column(style="bold", no_wrap=True)
    kv.add_column(overflow="fold")
    for head, lines in (("what changes", r.changes), ("limits WRITESET", r.limits)):
        for i, line in enumerate(lines):
            kv.add_row(head if i == 0 else "", f"- {line}")
    console.print(kv)
    console.print(review_table(r.rows))
    steps = Table(show_header=False, box=None, pad_edge=False)
    steps.add_column(style="bold", no_wrap=True)
    steps.add_column(overflow="fold")
    for head, lines in (("before the upgrade", r.before), ("after the upgrade", r.after)):
        for i, line in enumerate(lines, 1):
            steps.add_row(head if i == 1 else "", f"{i}. {line}")
    if r.unverified:
        steps.add_row("not verified", "version facts assumed, not read in a manual: " + ", ".join(r.unverified))
    console.print(steps)


def review_table(rows):
    """The before/after table, one column per configuration (now, the target's defaults, advised)
    and one row per setting and result, so that it reads at 80 columns."""
    from rich.table import Table

    marked = any(row.not_computed for row in rows)
    tab = compact_table("before / after: catch-up of the whole input",
                        "* WRITESET not computed: no schema names the tables (--schema or --host)" if marked else None)
    lines = {"clock": [], "applier": [], "workers": [], "durability": [], "commit order": [], "history size": [],
             "ideal speedup": [], "catch-up (s)": [], "lag p99 (s)": []}
    for row in rows:
        c, mode = row.config, ReplicaMode(row.config.mode)
        lines["applier"].append(row.applier.upper())
        lines["clock"].append(f"{c.clock}{'*' if row.not_computed else ''}")
        lines["workers"].append(str(c.workers))
        lines["durability"].append("durable" if c.durable else "relaxed")
        lines["commit order"].append(mode.parallel_mode if mode.mariadb else ("ON" if c.preserve else "OFF"))
        lines["history size"].append(f"{row.history_size:,}")
        lines["ideal speedup"].append("-" if row.ideal_speedup is None else f"{row.ideal_speedup:,.2f}x")
        lines["catch-up (s)"].append(f"{row.catch_up_seconds:,.3f}")
        lines["lag p99 (s)"].append(f"{row.lag_p99_seconds:,.3f}")
    if all(row.applier is Applier.MTA for row in rows):
        del lines["applier"]
    label_column(tab, "", lines)
    for row in rows:
        number_column(tab, row.label)
    for name, cells in lines.items():
        tab.add_row(name, *cells)
    return tab


def mycnf(advice: Advice) -> str:
    """The suggested settings as my.cnf snippets, for the server the plan is for (the target
    release with --target-version): source and replica apart, only variables that release has
    (``advise.statements``), and the settings meant only while the replica catches up as
    comments (SET GLOBAL, then revert), never as settings."""
    from ..advise.statements import mycnf as accepted
    from ..kinds import FindingId
    from ..versions import short

    ctx = advice.context
    d = ctx.dialect()
    sections: dict[str, list[str]] = {"source": [], "replica": [], "catch_up": []}
    seen: set[str] = set()
    dropped: list[str] = []
    for f in advice.findings:
        if not f.mycnf or f.current == f.suggested:
            continue
        lines, gone = accepted(d, f.mycnf)
        dropped += [g for g in gone if g not in dropped]
        for name, value in lines:
            if name in seen:
                continue
            seen.add(name)
            temporary = f.id == FindingId.REPLICA_DURABILITY and name in ("sync_binlog", "innodb_flush_log_at_trx_commit")
            key = "catch_up" if temporary else ("source" if f.where == "source" else "replica")
            sections[key].append(f"{name} = {value}    # {f.id} ({f.severity.value})")
    server = ("MariaDB" if ctx.mariadb else f"MySQL {short(tuple(ctx.target_version or ctx.version))}")
    out = [f"# lagadvisor advise: suggested settings for {server} (review each against its finding)"]
    if dropped:
        out.append(f"# not written: {', '.join(dropped)} (no such variable in {server})")
    if sections["source"]:
        out += ["", "# on the source", "[mysqld]"] + sections["source"]
    if sections["replica"]:
        out += ["", "# on the replica (permanent)", "[mysqld]"] + sections["replica"]
    if sections["catch_up"]:
        out += ["", "# on the replica, ONLY while it catches up: apply with SET GLOBAL and set back to 1 once",
                "# caught up (a replica that may be promoted must be durable); not for my.cnf:"]
        out += ["# " + line for line in sections["catch_up"]]
    return "\n".join(out) + "\n"


def _band(part: dict) -> str:
    """`` (a .. b s)``: a calibrated cost model's error band of a catch-up time, else nothing."""
    b = part.get("catch_up_seconds_band")
    return "" if not b else f" ({b[0]:,.3f} .. {b[1]:,.3f})"


def render_summary(advice: Advice, console) -> None:
    """The summary block: plan, counts, bottleneck, assumptions (fits 80 columns: it wraps)."""
    from rich.table import Table

    doc = summary(advice)
    tab = Table(title="summary", title_justify="left", show_header=False, box=None, pad_edge=False)
    tab.add_column(style="bold", no_wrap=True)
    tab.add_column(overflow="fold")
    c = doc["findings"]
    tab.add_row("findings", f"{c['critical']} critical, {c['warning']} warning, {c['info']} info")
    if doc["current"]:
        cur, rec = doc["current"], doc["recommended"]
        tab.add_row("now", f"{cur['catch_up_seconds']:,.3f} s{_band(cur)} catch-up, lag p99 "
                    f"{cur['lag_p99_seconds']:,.3f} s ({cur['config']})")
        tab.add_row("with the plan", f"{rec['catch_up_seconds']:,.3f} s{_band(rec)} catch-up "
                    f"({change_words(cur['catch_up_seconds'], rec['catch_up_seconds'])}), lag p99 "
                    f"{rec['lag_p99_seconds']:,.3f} s ({rec['config']})")
        mark = "*" if doc.get("not_computed") else ""
        plan = advice.plan
        for i, step in enumerate(plan.steps, 1):
            star = mark if step.after in WRITESET_POLICIES else ""
            how = "the upgrade" if step.by_upgrade else f"without it {step.seconds_before:,.3f} s"
            tab.add_row(f"  change {i}", f"{step.setting}: {step.before} -> {step.after}{star} ({how})")
        tab.add_row("searched", plan_words(plan.as_json()))
        for alt in plan.alternatives:
            if alt.gain >= 0.02:
                tab.add_row("alternative" if alt.key != "catch_up_durability" else "catch-up only",
                            f"{alt.label}: {alt.seconds:,.3f} s ({change_words(alt.plan_seconds, alt.seconds)} than "
                            f"the plan), {alt.condition}")
        if mark:
            tab.add_row("not computed", "* " + doc["not_computed"])
        tab.add_row("lag target", lag_target_words(plan.as_json()))
        tab.add_row("bottleneck", doc["bottleneck"]["sentence"])
        ww = doc.get("worst_window")
        if ww:
            plan_lag = ww["lag_p99_seconds_with_plan"]
            tab.add_row("worst window", f"{ww['label']} UTC ({ww['transactions']:,} transactions): lag p99 "
                        f"{ww['lag_p99_seconds']:,.3f} s now" + (f", {plan_lag:,.3f} s with the plan"
                                                                 if plan_lag is not None else "") +
                        f" (the worst of {ww['windows']} windows of {ww['window_seconds']:g} s)")
    for line in doc["confirmed"]:
        tab.add_row("checked", f"{line} (no change needed)")
    for i, line in enumerate(doc["assumptions"]):   # they hold the model file's measured_on: not markup
        tab.add_row("assumed" if i == 0 else "", Text(line))
    console.print(tab)


def plan_words(plan: dict) -> str:
    """How the plan was chosen, in one sentence (text and HTML)."""
    return (f"{plan['searched']} configurations simulated; the plan is the one with the fewest changes within "
            f"{plan['tolerance']:.0%} of the fastest ({plan['fastest_catch_up_seconds']:,.3f} s); durability and "
            "commit order kept as they are")


def lag_target_words(plan: dict) -> str:
    """The lag target and whether the replica meets it now and with the plan (text and HTML)."""
    t = plan["lag_target_seconds"]
    now, after = plan["current_lag_p99_seconds"], plan["recommended_lag_p99_seconds"]
    return (f"lag p99 {now:,.3f} s now, {after:,.3f} s with the plan, against a target of {t:g} s (--lag-target): "
            + ("missed now: findings that gain 15% or more are critical" if plan["misses_lag_target"] else
               "met now: no finding is critical"))


def effect_text(e) -> str:
    """A simulated effect in one line: its description, then the numbers."""
    nums = ""
    if e.before is not None and e.after is not None:
        nums = f" — {e.metric}: {e.before:,.3f} -> {e.after:,.3f} ({change_words(e.before, e.after)})"
    elif e.before is not None:
        nums = f" — {e.metric}: {e.before:,.3f}"
    if e.lag_p99_before is not None and e.lag_p99_after is not None:
        nums += f"; lag p99 {e.lag_p99_before:,.3f} s -> {e.lag_p99_after:,.3f} s"
    return e.description + nums


def alternative_text(a) -> str:
    """``OFF only if readers ... (the plan -> ...: 0.5 -> 0.4 (20.0% faster))``."""
    return f"{a.suggested} {a.condition}" + (f" ({effect_text(a.simulated_effect)})"
                                              if a.simulated_effect is not None else "")


def render(advice: Advice, console) -> None:
    from rich.table import Table

    ctx = advice.context
    p = ctx.analysis.policies
    b = ctx.baseline
    console.print(Text.assemble(("lagadvisor advise", "bold"), f": {ctx.analysis.total.transactions:,} transactions, "
                                f"written by {p.written.name if p else '?'} ({p.written.server_version if p else ''})"))
    render_summary(advice, console)
    if advice.offer is not None:
        console.print(offer_text(advice.offer))
    if advice.review is not None:
        render_review(advice.review, console)
    if not advice.findings:
        console.print("No findings.")
        return
    colors = {"critical": "red", "warning": "yellow", "info": "cyan"}
    for i, f in enumerate(advice.findings, 1):
        tab = Table(show_header=False, box=None, pad_edge=False)
        tab.add_column(style="bold", no_wrap=True)
        tab.add_column(overflow="fold")  # a long path in the evidence folds, never ends in '…'
        tab.add_row("setting", Text.assemble(f.setting, (f"  ({f.where})", "dim")))
        tab.add_row("current", Text.assemble(f.current or "unknown", ("  (default, not read from a server)"
                                                                      if f.current_assumed else "", "dim")))
        tab.add_row("suggested", Text.assemble(f.suggested, (f"  ({f.condition})" if f.condition else "", "dim")))
        if f.alternative is not None:
            tab.add_row("alternative", alternative_text(f.alternative))
        tab.add_row("evidence", f.evidence)
        e = f.simulated_effect
        if e is not None:
            tab.add_row("simulated", effect_text(e))
        console.print(Text.assemble("\n", (f"{i}. [{f.severity.value.upper()}]", colors[f.severity.value]), " ",
                                    (f.title, "bold")))
        console.print(tab)
        for st in f.statements:  # never wrapped: a pasted block runs as printed
            console.print(Text("  " + st, style="green"), soft_wrap=True)


__all__ = ["advice_json", "alternative_text", "charts", "effect_text", "mycnf", "offer_text", "render", "render_review",
           "render_summary", "review_json"]
