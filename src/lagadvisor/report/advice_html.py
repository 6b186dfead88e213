"""``advise --html FILE``: one self-contained page (no network), findings plus four charts drawn
as SVG by a small inline script from the embedded JSON: speedup by workers per policy, lag over
time, dependency-distance histogram, hot tables. When every chart is drawn the script sets
``data-charts-rendered`` on ``<body>`` (what the browser test checks)."""

from __future__ import annotations

import html
import json

from ..advise import Advice
from ..advise.findings import change_words
from .advice import advice_json, lag_target_words, plan_words

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em} .meta{color:#555}
.finding{border-left:5px solid #888;padding:.4em .9em;margin:1em 0;background:#fafafa}
.critical{border-color:#c62828}.warning{border-color:#f9a825}.info{border-color:#1e88e5}
.sev{font-weight:bold;text-transform:uppercase;font-size:.8em;margin-right:.5em}
table.kv td{vertical-align:top;padding:.1em .6em .1em 0} table.kv td:first-child{font-weight:600;white-space:nowrap}
code{background:#eee;padding:0 .25em;border-radius:3px;display:block;margin:.15em 0;white-space:pre-wrap}
.charts{display:grid;grid-template-columns:1fr 1fr;gap:1.2em} figure{margin:0;border:1px solid #ddd;padding:.5em}
figcaption{font-weight:600;margin-bottom:.3em} svg{width:100%;height:auto}
.legend span{display:inline-block;margin-right:1em;font-size:.85em}
"""

_JS = r"""
(function(){
const D = JSON.parse(document.getElementById('advice-data').textContent);
const C = D.charts, NS = 'http://www.w3.org/2000/svg';
const COLORS = ['#1e88e5','#e53935','#43a047','#fb8c00','#8e24aa','#00897b'];
const W = 520, H = 300; let M = {l: 56, r: 12, t: 12, b: 40};
function el(tag, attrs, parent, text){ const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e); return e; }
function tick(v){ const a = Math.abs(v); if (a === 0) return '0';
  if (a >= 1000) return Math.round(v).toLocaleString('en');
  if (a >= 10) return String(Math.round(v * 10) / 10);
  if (a >= 1) return String(Math.round(v * 100) / 100);
  return String(+v.toPrecision(2)); }
function nice(raw){ if (!(raw > 0)) return 1; const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / p; return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p; }
function top(v){ const st = nice(v / 4); return Math.ceil(v / st - 1e-9) * st || 1; }
function frame(id){ const fig = document.getElementById(id);
  const svg = el('svg', {viewBox: `0 0 ${W} ${H}`, class: 'chart', 'data-chart': id.replace('chart-','')}, fig);
  return svg; }
let ticksOff = false;
function axes(svg, xs, ys, xlabel, ylabel, xlog){
  const x0 = M.l, x1 = W - M.r, y0 = H - M.b, y1 = M.t;
  const [xmin, xmax] = xs, [ymin, ymax] = ys;
  const fx = v => { if (xlog){ const a = Math.log2(xmin), b = Math.log2(xmax);
      return x0 + (b > a ? (Math.log2(v) - a) / (b - a) : 0) * (x1 - x0); }
    return x0 + (xmax > xmin ? (v - xmin) / (xmax - xmin) : 0) * (x1 - x0); };
  const fy = v => y0 - (ymax > ymin ? (v - ymin) / (ymax - ymin) : 0) * (y0 - y1);
  el('line', {x1: x0, y1: y0, x2: x1, y2: y0, stroke: '#333'}, svg);
  el('line', {x1: x0, y1: y0, x2: x0, y2: y1, stroke: '#333'}, svg);
  const ystep = nice((ymax - ymin) / 4);
  for (let v = ymin; v <= ymax + ystep * 1e-9; v += ystep){ const y = fy(v);
    el('line', {x1: x0 - 4, y1: y, x2: x1, y2: y, stroke: '#eee'}, svg);
    el('text', {x: x0 - 6, y: y + 4, 'text-anchor': 'end', 'font-size': 10, class: 'ytick'}, svg, tick(v)); }
  el('text', {x: (x0 + x1) / 2, y: H - 6, 'text-anchor': 'middle', 'font-size': 11}, svg, xlabel);
  if (!xlog && !ticksOff) for (let i = 0; i <= 4; i++){ const v = xmin + (xmax - xmin) * i / 4;
    el('text', {x: fx(v), y: y0 + 14, 'text-anchor': 'middle', 'font-size': 10}, svg, tick(v)); }
  el('text', {x: 12, y: (y0 + y1) / 2, 'text-anchor': 'middle', 'font-size': 11,
              transform: `rotate(-90 12 ${(y0 + y1) / 2})`}, svg, ylabel);
  return {fx, fy, x0, x1, y0, y1}; }
function legend(id, names){ const d = document.createElement('div'); d.className = 'legend';
  names.forEach((n, i) => { const s = document.createElement('span');
    s.innerHTML = `<b style="color:${COLORS[i % COLORS.length]}">&#9632;</b> `; s.appendChild(document.createTextNode(n));
    d.appendChild(s); }); document.getElementById(id).appendChild(d); }
function lines(id, series, xlabel, ylabel, xlog){
  const svg = frame(id); const names = Object.keys(series);
  const pts = names.flatMap(n => series[n]);
  if (!pts.length){ el('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle'}, svg, 'no data'); return 0; }
  const xs = pts.map(p => p[0]), ys = pts.map(p => p[1]);
  const a = axes(svg, [Math.min(...xs), Math.max(...xs)], [0, top(Math.max(...ys))], xlabel, ylabel, xlog);
  if (xlog) [...new Set(xs)].forEach(v => el('text', {x: a.fx(v), y: a.y0 + 14, 'text-anchor': 'middle',
                                                      'font-size': 10}, svg, v));
  names.forEach((n, i) => { const c = COLORS[i % COLORS.length];
    el('polyline', {points: series[n].map(p => `${a.fx(p[0]).toFixed(1)},${a.fy(p[1]).toFixed(1)}`).join(' '),
                    fill: 'none', stroke: c, 'stroke-width': 2 + (names.length - 1 - i),
                    'stroke-dasharray': i ? `${6 + 2 * i},${4 + i}` : '', 'stroke-opacity': 0.85,
                    class: 'series', 'data-name': n}, svg);
    if (series[n].length <= 12) series[n].forEach(p => el('circle', {cx: a.fx(p[0]), cy: a.fy(p[1]), r: 3,
                                                                      fill: c}, svg)); });
  legend(id, names); return pts.length; }
function bars(id, groups, cats, xlabel, ylabel, empty){
  M = {l: 56, r: 12, t: 12, b: 78}; ticksOff = true;
  const svg = frame(id); const names = Object.keys(groups);
  const vals = names.flatMap(n => cats.map(c => groups[n][c] || 0));
  if (!cats.length){ el('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty'}, svg,
                        empty || 'no data'); M = {l: 56, r: 12, t: 12, b: 40}; ticksOff = false; return 0; }
  const a = axes(svg, [0, cats.length], [0, top(Math.max(...vals))], xlabel, ylabel, false);
  const bw = (a.x1 - a.x0) / cats.length, inner = bw * 0.8 / Math.max(1, names.length);
  cats.forEach((c, j) => { const tx = a.x0 + bw * (j + .5), ty = a.y0 + 10;
    el('text', {x: tx, y: ty, 'text-anchor': 'end', 'font-size': 9, transform: `rotate(-35 ${tx} ${ty})`},
       svg, String(c).slice(0, 28));
    names.forEach((n, i) => { const v = groups[n][c] || 0, y = a.fy(v);
      el('rect', {x: a.x0 + bw * j + bw * .1 + inner * i, y: y, width: inner, height: a.y0 - y,
                  fill: COLORS[i % COLORS.length], class: 'bar'}, svg); }); });
  legend(id, names); M = {l: 56, r: 12, t: 12, b: 40}; ticksOff = false; return vals.length; }
let drawn = 0;
const sp = {}; for (const k in C.speedup) sp[k] = C.speedup[k].map(p => [p.workers, p.speedup]);
if (lines('chart-speedup', sp, 'replica_parallel_workers', 'speedup over 1 worker', true) >= 0) drawn++;
if (lines('chart-lag', C.lag, 'replica time (s)', 'lag (s)', false) >= 0) drawn++;
const cats = C.distance_buckets; const hg = {};
for (const k in C.distance_histogram){ hg[k] = {}; C.distance_histogram[k].forEach(r => {
  hg[k][r.distance] = r.transactions; }); }
if (bars('chart-histogram', hg, cats, 'sequence_number - last_committed', 'transactions') >= 0) drawn++;
const ht = {dependencies: {}}; C.hot_tables.forEach(r => { ht.dependencies[r.table] = r.dependencies; });
if (bars('chart-hot-tables', ht, C.hot_tables.map(r => r.table), 'table', 'row conflicts',
         'no row conflicts under WRITESET: no table is hot') >= 0) drawn++;
document.body.setAttribute('data-charts-rendered', String(drawn));
})();
"""


def _summary_html(sm: dict, plan: dict | None) -> str:
    """The summary first: counts, now vs with the plan, its steps, the bottleneck, assumptions."""
    esc = html.escape
    c = sm["findings"]
    rows = [("findings", f"{c['critical']} critical, {c['warning']} warning, {c['info']} info")]
    if sm["current"]:
        cur, rec = sm["current"], sm["recommended"]
        rows.append(("now", f"{cur['catch_up_seconds']:,.3f} s catch-up, lag p99 {cur['lag_p99_seconds']:,.3f} s "
                            f"({cur['config']})"))
        rows.append(("with the plan", f"{rec['catch_up_seconds']:,.3f} s catch-up "
                                      f"({change_words(cur['catch_up_seconds'], rec['catch_up_seconds'])}), lag p99 "
                                      f"{rec['lag_p99_seconds']:,.3f} s ({rec['config']})"))
        for i, st in enumerate(plan["steps"] if plan else [], 1):
            how = "the upgrade" if st["by_upgrade"] else f"without it {st['catch_up_seconds_before']:,.3f} s"
            rows.append((f"change {i}", f"{st['setting']}: {st['from']} → {st['to']} ({how})"))
        if plan:
            rows.append(("searched", plan_words(plan)))
            for a in plan["alternatives"]:
                if a["gain_over_plan"] >= 0.02:
                    rows.append(("catch-up only" if a["key"] == "catch_up_durability" else "alternative",
                                 f"{a['label']}: {a['catch_up_seconds']:,.3f} s "
                                 f"({change_words(plan['recommended_catch_up_seconds'], a['catch_up_seconds'])} than "
                                 f"the plan), {a['condition']}"))
        if sm.get("not_computed"):
            rows.append(("not computed", sm["not_computed"]))
        if plan:
            rows.append(("lag target", lag_target_words(plan)))
        rows.append(("bottleneck", sm["bottleneck"]["sentence"]))
    rows += [("checked", f"{line} (no change needed)") for line in sm["confirmed"]]
    rows += [("assumed" if i == 0 else "", a) for i, a in enumerate(sm["assumptions"])]
    body = "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in rows)
    return f"<section id='summary'><h2>Summary</h2><table class='kv'>{body}</table></section>"


def review_html(rv: dict | None) -> str:
    """The pre-upgrade review (JSON ``review``): what changes, before/after, limits, steps; or
    the line that offers it."""
    esc = html.escape
    if not rv:
        return ""
    if "offered" in rv:
        return (f"<section id='review'><h2>Pre-upgrade review</h2><p>This source records COMMIT_ORDER: rerun with "
                f"<code>{esc(rv['option'])}</code> for what {esc(rv['offered'])} LTS changes.</p></section>")

    def items(lines: list[str], tag: str = "ul") -> str:
        return f"<{tag}>" + "".join(f"<li>{esc(x)}</li>" for x in lines) + f"</{tag}>"

    head = "<tr><th></th><th>configuration</th><th>history</th><th>ideal speedup</th><th>catch-up s</th><th>lag p99 s</th></tr>"
    rows = "".join(
        f"<tr><td>{esc(r['label'])}</td><td>{esc(r['config'])}{' (CSA)' if r['applier'] == 'csa' else ''}{'*' if r['not_computed'] else ''}</td><td>{r['history_size']:,}</td>"
        f"<td>{'-' if r['ideal_speedup'] is None else format(r['ideal_speedup'], ',.2f') + 'x'}</td>"
        f"<td>{r['catch_up_seconds']:,.3f}</td><td>{r['lag_p99_seconds']:,.3f}</td></tr>" for r in rv["before_after"])
    return (f"<section id='review'><h2>Pre-upgrade review: {esc(rv['current_version'])} → {esc(rv['target_version'])}</h2>"
            f"<h3>What changes</h3>{items(rv['changes'])}"
            f"<h3>Before and after</h3><table class='kv'>{head}{rows}</table>"
            f"<h3>What limits WRITESET</h3>{items(rv['limits'])}"
            f"<h3>Before the upgrade</h3>{items(rv['steps_before_upgrade'], 'ol')}"
            f"<h3>After the upgrade</h3>{items(rv['steps_after_upgrade'], 'ol')}"
            + (f"<p><i>Not verified in a manual: {esc(', '.join(rv['unverified']))}</i></p>" if rv["unverified"] else "")
            + f"<h3>Sources</h3>{items(rv['sources'])}</section>")


def _effect(e: dict) -> str:
    """A simulated effect (JSON form) in one line, as the text report writes it."""
    out = e["description"]
    if e["before"] is not None and e["after"] is not None:
        out += f" — {e['metric']}: {e['before']:,.3f} → {e['after']:,.3f} ({change_words(e['before'], e['after'])})"
    if e["lag_p99_before_seconds"] is not None and e["lag_p99_after_seconds"] is not None:
        out += f"; lag p99 {e['lag_p99_before_seconds']:,.3f} s → {e['lag_p99_after_seconds']:,.3f} s"
    return out


def _alternative(a: dict) -> str:
    """A finding's stand-alone alternative with its condition, as the text report writes it."""
    return f"{a['suggested']} {a['condition']}" + (f" ({_effect(a['simulated_effect'])})"
                                                    if a["simulated_effect"] else "")


def render_html(advice: Advice) -> str:
    doc = advice_json(advice)
    data = json.dumps(doc, sort_keys=True).replace("</", "<\\/")
    inp = doc["input"]
    b = doc["baseline"]
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>lagadvisor advise: {esc(', '.join(f.rsplit('/', 1)[-1] for f in inp['files'][:3]))}</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>lagadvisor advise</h1>",
        f"<p class='meta'>{inp['transactions']:,} transactions from {esc(', '.join(inp['files']))}; written by "
        f"{esc(inp['written_policy'])} ({esc(inp['server_version'])}). Baseline replica: {b['workers']} workers, "
        f"preserve_commit_order={'ON' if b['preserve_commit_order'] else 'OFF'}, "
        f"{'durable' if b['durable'] else 'relaxed'}"
        + (f" (assumed defaults: {esc(', '.join(b['assumed_defaults']))})" if b["assumed_defaults"] else "")
        + f". {esc(doc['generator'])}, schema {esc(doc['schema_version'])}.</p>",
        _summary_html(doc["summary"], doc["plan"]),
        review_html(doc.get("review")),
        "<h2>Findings</h2>",
    ]
    if not doc["findings"]:
        parts.append("<p>No findings.</p>")
    for i, f in enumerate(doc["findings"], 1):
        eff = esc(_effect(f["simulated_effect"])) if f["simulated_effect"] else "not simulated"
        cur = esc(f["current"] or "unknown") + (" <i>(default, not read from a server)</i>"
                                                if f["current_assumed"] else "")
        stmts = "".join(f"<code>{esc(s)}</code>" for s in f["statements"])
        parts.append(
            f"<div class='finding {f['severity']}' data-finding='{esc(f['id'])}'>"
            f"<div><span class='sev'>{esc(f['severity'])}</span><b>{i}. {esc(f['title'])}</b></div>"
            "<table class='kv'>"
            f"<tr><td>setting</td><td>{esc(f['setting'])} ({esc(f['where'])})</td></tr>"
            f"<tr><td>current</td><td>{cur}</td></tr>"
            f"<tr><td>suggested</td><td>{esc(f['suggested'])}"
            + (f" <i>({esc(f['condition'])})</i>" if f.get("condition") else "") + "</td></tr>"
            + (f"<tr><td>alternative</td><td>{esc(_alternative(f['alternative']))}</td></tr>"
               if f.get("alternative") else "") +
            f"<tr><td>evidence</td><td>{esc(f['evidence'])}</td></tr>"
            f"<tr><td>simulated</td><td>{eff}</td></tr>"
            + (f"<tr><td>apply</td><td>{stmts}</td></tr>" if stmts else "")
            + "</table></div>")
    parts += [
        "<h2>Charts</h2><div class='charts'>",
        "<figure id='chart-speedup'><figcaption>Simulated speedup by workers, per clock (catch-up, "
        f"{esc(doc['charts']['speedup_durability'])})</figcaption></figure>",
        "<figure id='chart-lag'><figcaption>Simulated lag over time (arrivals at source commit times)</figcaption></figure>",
        "<figure id='chart-histogram'><figcaption>Dependency distance (sequence_number - last_committed)</figcaption></figure>",
        "<figure id='chart-hot-tables'><figcaption>Hot tables: row conflicts under WRITESET</figcaption></figure>",
        "</div>",
    ]
    parts.append(f"<script type='application/json' id='advice-data'>{data}</script>")
    parts.append(f"<script>{_JS}</script></body></html>")
    return "\n".join(parts)
