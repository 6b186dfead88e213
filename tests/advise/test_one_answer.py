"""One decision, rendered the same everywhere (issue 70): for every bundled fixture, and the
corpus's real MySQL 8.0.33 binlog when present, at 2 and 16 cores, with and without the schema,
without a target and at every target the source can upgrade to, each setting the plan decides has
one value across the plan, the findings, the review's columns and steps, the SQL, the my.cnf, the
text (80 columns), the HTML and the JSON; the plan is no slower (within its stated tolerance)
than any configuration the report shows under the same durability; what the my.cnf names exists
in the release it is for. ``contradictions`` lists every disagreement: the test asserts none."""

from __future__ import annotations

import html as htmlmod
import io
import json
import re
from dataclasses import replace
from functools import lru_cache

import pytest
from rich.console import Console

from conftest import CORPUS, FIXTURES, corpus_params, fixture_dirs
from lagadvisor.advise import advise_context
from lagadvisor.advise.context import gather
from lagadvisor.commands.common import clock_options
from lagadvisor.commands.options import ClockArgs
from lagadvisor.report.advice import advice_json, mycnf, render
from lagadvisor.report.advice_html import render_html
from lagadvisor.sim.model import CostModel
from lagadvisor.versions import RELEASES, accepts, known_release, release

CORES = (2, 16)
#: The sysbench fixture reviewed as an 8.0 source (--current-version): the upgrade from 8.0 to
#: every release, the path through 8.4 LTS included.
AS_80 = (8, 0, 36)


def _files(d) -> list[str]:
    """A fixture directory's binlogs, or the one file named."""
    if d.is_file():
        return [str(d)]
    return sorted(str(p) for p in d.iterdir() if p.suffix[1:].isdigit())


@lru_cache(maxsize=None)
def _gathered(directory: str, cores: int, schema: bool):
    from pathlib import Path

    d = Path(directory)
    sql = (d if d.is_dir() else d.parent) / "schema.sql"
    args = ClockArgs(schema=str(sql) if schema and sql.exists() else None)
    cost = replace(CostModel(), cores=cores)
    ctx = gather(_files(d), clock_options(args), cost, None)
    reproduce = (("--schema", args.schema) if args.schema else ()) + ("--cores", str(cores))
    return replace(ctx, reproduce=reproduce)


def _targets(version: tuple[int, int, int]) -> list:
    return [None] + [r.first for r in RELEASES if r.first[2] == 0 and r.first > tuple(version)
                     and known_release(r.first) is not None]


def _advice(directory, cores, schema, target, current=None):
    ctx = _gathered(str(directory), cores, schema)
    if current is not None:
        ctx = replace(ctx, version=current, version_from="--current-version")
    return advise_context(replace(ctx, target_version=target))


def _rendered(advice) -> dict:
    buf = io.StringIO()
    render(advice, Console(file=buf, width=80, color_system=None, force_terminal=False, legacy_windows=False))
    page = htmlmod.unescape(re.sub(r"<[^>]+>", " ", render_html(advice)))
    return {"json": advice_json(advice), "text": buf.getvalue(), "mycnf": mycnf(advice), "html": page}


def _numbers(pattern: str, text: str) -> set[str]:
    return set(re.findall(pattern, text))


def contradictions(advice) -> list[str]:
    """Every place the report disagrees with its plan, in words (empty: one answer)."""
    out: list[str] = []
    plan = advice.plan
    if plan is None:
        return out
    r = _rendered(advice)
    doc, text, cnf, page = r["json"], r["text"], r["mycnf"], r["html"]
    rec = plan.recommended
    ctx = advice.context
    w = str(rec.workers)
    every = {"text": text, "html": page, "mycnf": cnf, "json": json.dumps(doc)}
    workers_name = ("slave_parallel_threads" if ctx.mariadb else
                    "slave_parallel_workers" if tuple(ctx.target_version or ctx.version) < (8, 0, 26)
                    else "replica_parallel_workers")
    for where, body in every.items():
        for n in _numbers(rf"{workers_name} = (\d+)", body) - {w}:
            if f"{workers_name} = {n} (no change needed)" in body and n == w:
                continue
            out.append(f"{where}: {workers_name} = {n}, the plan runs {w}")
        for n in _numbers(r"APPLIER_WORKER_COUNT = (\d+)", body) - {w}:
            out.append(f"{where}: APPLIER_WORKER_COUNT = {n}, the plan runs {w}")
        for n in _numbers(r"Run (\d+) applier (?:workers|threads)", body) - {w}:
            out.append(f"{where}: 'Run {n} applier workers', the plan runs {w}")
        signed = re.search(r".{0,40}(?:\((?:gain )?[-+]\d+\.\d%\)|gains? -\d|gains too little)", body)
        if signed:
            out.append(f"{where}: a signed or contradictory gain: {signed.group(0)!r}")
    by_id = {f.id: f for f in advice.findings}
    conf = {f.id: f for f in advice.confirmed}
    f = by_id.get("replica_parallel_workers") or conf.get("replica_parallel_workers")
    if f is not None and f.suggested != w:
        out.append(f"finding replica_parallel_workers suggests {f.suggested}, the plan runs {w}")
    f = by_id.get("change_stream_applier") or conf.get("change_stream_applier")
    if f is not None and f.suggested != ("2" if rec.applier == "csa" else "1"):
        out.append(f"finding change_stream_applier suggests {f.suggested}, the plan's applier is {rec.applier}")
    f = by_id.get("dependency_tracking")
    if f is not None and f.statements and rec.clock not in f.suggested:
        out.append(f"finding dependency_tracking suggests {f.suggested}, the plan's clock is {rec.clock}")
    for step in plan.steps:  # every change the plan makes is a finding that says so, not a confirmation
        if step.by_upgrade:
            continue
        f = by_id.get(step.finding)
        if f is None:
            out.append(f"the plan changes {step.setting} ({step.before} -> {step.after}); no finding says so")
        elif step.after.replace(",", "").split(" ")[0] not in f.suggested.replace(",", ""):
            out.append(f"the plan changes {step.setting} to {step.after}; its finding suggests {f.suggested}")
    if rec.durable != ctx.baseline.durable or rec.preserve != ctx.baseline.preserve_commit_order:
        out.append("the plan changed a constraint (durability or commit order)")
    permanent = cnf.split("ONLY while it catches up")[0]
    if re.search(r"^sync_binlog = 0|^innodb_flush_log_at_trx_commit = 2", permanent, re.M):
        out.append("my.cnf: relaxed durability outside the catch-up-only comments")
    server = tuple(ctx.target_version or ctx.version)
    if not ctx.mariadb:
        for line in cnf.splitlines():
            name = line.split("=", 1)[0].strip()
            if line and not line.startswith(("#", "[")) and not accepts(server, name):
                out.append(f"my.cnf: {name} does not exist in MySQL {server}")
        for fnd in advice.findings:
            for st in fnd.statements:
                if not st.strip():
                    out.append(f"SQL of {fnd.id}: an empty statement")
                m = re.match(r"SET (?:PERSIST|GLOBAL) (\w+)", st)
                if m and not accepts(server, m.group(1)):
                    out.append(f"SQL of {fnd.id}: {m.group(1)} does not exist in MySQL {server}")
    rv = advice.review
    if rv is not None:
        adv = rv.rows[2]
        if adv.config != rec or abs(adv.catch_up_seconds - plan.recommended_seconds) > 1e-9:
            out.append(f"review: advised column {adv.config} is not the plan {rec}")
        for row in rv.rows[1:]:
            if row.config.durable == rec.durable and plan.recommended_seconds > row.catch_up_seconds * (1 + plan.tolerance) + 1e-9:
                out.append(f"review: {row.label} ({row.catch_up_seconds:.3f} s) is faster than the plan "
                           f"({plan.recommended_seconds:.3f} s) beyond the tolerance")
        for step in rv.after:
            for n in _numbers(r"replica_parallel_workers = (\d+)", step) - {w}:
                out.append(f"review step after the upgrade sets {n} workers, the plan runs {w}")
        if rec.applier == "csa" and not any("Change Stream Applier" in s for s in rv.after):
            out.append("review: the plan runs the CSA, the steps do not say so")
        if rec.applier != "csa" and any("Change Stream Applier" in s for s in rv.after):
            out.append("review: the steps switch to the CSA, the plan does not")
        if release(server).writeset_only and "binlog_transaction_dependency_tracking =" in permanent:
            out.append("my.cnf for a writeset-only target sets binlog_transaction_dependency_tracking")
    if plan.recommended_seconds > plan.fastest_seconds * (1 + plan.tolerance) + 1e-9:
        out.append("the plan is slower than the fastest configuration searched beyond the tolerance")
    wf = by_id.get("replica_parallel_workers") or conf.get("replica_parallel_workers")
    if wf is not None:
        curve = wf.metrics.get("curve_seconds", {})
        if curve and plan.recommended_seconds > min(curve.values()) * (1 + plan.tolerance) + 1e-9:
            out.append("the workers curve shows a count faster than the plan beyond the tolerance")
    for fnd in advice.findings:
        e = fnd.simulated_effect
        if fnd.severity.value == "critical" and not plan.misses_target:
            out.append(f"{fnd.id} is critical while the replica meets its lag target")
        if e is not None and e.before is not None and e.after is not None and e.after > e.before * 1.0005 \
                and fnd.severity.value != "info":
            out.append(f"{fnd.id} is {fnd.severity.value} for a change that makes the replica slower")
    p = ctx.analysis.policies
    if p is not None and p.not_computed() and not ctx.mariadb and not release(tuple(ctx.version)).writeset_only:
        if any(c.id == "dependency_tracking" for c in advice.confirmed):
            out.append("dependency tracking confirmed as 'no change needed' though WRITESET was not computed")
    return out


def _cases() -> list:
    out = []
    for d in fixture_dirs():
        ctx = _gathered(str(d), 2, False)
        for t in _targets(ctx.version) if not ctx.mariadb else [None]:
            out.append(pytest.param(d, t, None, id=f"{d.name}-{'none' if t is None else '.'.join(map(str, t[:2]))}"))
    sysbench = FIXTURES / "sysbench_oltp_write_only"
    for t in _targets(AS_80):
        out.append(pytest.param(sysbench, t, AS_80, id=f"sysbench-as-8.0-{'none' if t is None else '.'.join(map(str, t[:2]))}"))
    return out


@pytest.mark.parametrize("directory,target,current", _cases())
@pytest.mark.parametrize("schema", [True, False], ids=["schema", "no-schema"])
@pytest.mark.parametrize("cores", CORES)
def test_one_answer_per_setting(directory, target, current, schema, cores):
    advice = _advice(directory, cores, schema, target, current)
    assert contradictions(advice) == []


def _im_cases():
    """The real 8.0.33 binlog (im_service, with its schema) and a 5.7.21 one (connector_java):
    every target each can upgrade to."""
    out = []
    d = CORPUS / "im_service"
    if (d / "binlog.000009").exists():
        out += [(d, t) for t in _targets((8, 0, 33))]
    f = CORPUS / "connector_java" / "mysql-bin.checksum-crc32"
    if f.exists():
        out += [(f, t) for t in _targets((5, 7, 21))]
    return out


@pytest.mark.parametrize("case", corpus_params(_im_cases(), ids=lambda c: c[0].name.split(".")[0] + "-" + (
    "none" if c[1] is None else ".".join(map(str, c[1][:2])))))
@pytest.mark.parametrize("schema", [True, False], ids=["schema", "no-schema"])
@pytest.mark.parametrize("cores", CORES)
def test_one_answer_on_the_real_8_0_binlog(case, schema, cores):
    d, target = case
    assert contradictions(_advice(d, cores, schema, target)) == []


def test_the_check_finds_a_contradiction():
    """The checker itself can fail: a report whose workers finding says another count than the
    plan is one contradiction or more."""
    advice = _advice(FIXTURES / "sysbench_oltp_write_only", 2, True, None)
    f = next(x for x in advice.findings + advice.confirmed if x.id == "replica_parallel_workers")
    other = str(advice.plan.recommended.workers * 2)
    bad = replace(advice, findings=[replace(f, suggested=other, title=f"Run {other} applier workers")]
                  + [x for x in advice.findings if x is not f])
    assert any("replica_parallel_workers" in c or "applier workers" in c for c in contradictions(bad))
