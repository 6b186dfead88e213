"""``lagadvisor fleet``'s outputs: the fleet document (versioned, ``docs/fleet-schema.json``: the
fleet table plus, per server, advise's own advice document or the one-line error), the console
table, and one self-contained HTML page (overview table, then a section per server with its
summary, findings and a speedup chart drawn by an inline script from the embedded document;
``data-servers-rendered`` on ``<body>`` counts the charts drawn, for the browser test)."""

from __future__ import annotations

import html
import json

from .. import __version__
from ..kinds import Policy

FLEET_SCHEMA_VERSION = "1.0"


def fleet_json(results) -> dict:
    """Deterministic: no timings, servers in the fleet file's order."""
    rows = [r.row for r in results if r.row is not None]
    return {
        "schema_version": FLEET_SCHEMA_VERSION,
        "generator": f"lagadvisor {__version__}",
        "fleet": {"servers": len(results), "completed": len(rows),
                  "failed": [{"server": r.name, "error": r.error} for r in results if r.error is not None],
                  "rows": rows},
        "servers": [{"name": r.name, "files": r.files, "status": "error" if r.error else "ok",
                     "error": r.error, "warnings": r.warnings, "advice": r.advice} for r in results],
    }


def _x(v) -> str:
    return "-" if v is None else f"{v:,.1f}"


def _s(v) -> str:
    return "-" if v is None else f"{v:,.3f}"


def _version(v: str) -> str:
    """``10.11.19-MariaDB-0+deb12u1-log`` -> ``10.11.19-MariaDB``: the table's short form."""
    head, _, rest = v.partition("-")
    return head + ("-MariaDB" if "mariadb" in rest.lower() else "")


def table_rows(doc: dict) -> list[list[str]]:
    """One row per server: server, version, policy written, transactions, the parallelism of the
    recorded / WRITESET / COMMIT_ORDER clocks, lag p99 now and with the plan, the top finding."""
    rows = {r["server"]: r for r in doc["fleet"]["rows"]}
    out = []
    for s in doc["servers"]:
        r = rows.get(s["name"])
        if r is None:
            out.append([s["name"], "error", "", "", "", "", ""])
            continue
        p, lag, top = r["parallelism"], r["lag_p99_seconds"], r["top_finding"]
        out.append([r["server"], _version(r["server_version"]), r["written_policy"], f"{r['transactions']:,}",
                    f"{_x(p[Policy.RECORDED])} / {_x(p[Policy.WRITESET])} / {_x(p[Policy.COMMIT_ORDER])}",
                    f"{_s(lag['current'])} -> {_s(lag['suggested'])}",
                    f"{top['severity']}: {top['id']}" if top else "none"])
    return out


HEADERS = ("server", "version", "written by", "trx", "parallelism rec / WS / CO", "lag p99 s now -> plan",
           "top finding")
_NUMERIC = (3, 4, 5)
#: The console table's headers, on two lines where that keeps the column narrow.
_HEAD_LINES = ("server", "version", "written\nby", "trx", "parallelism\nrec / WS / CO", "lag p99 s\nnow -> plan",
               "top finding")
CAPTION = ("parallelism: what the recorded, WRITESET and COMMIT_ORDER clocks allow with unlimited workers; "
           "lag p99: simulated at the replica's settings now and with the plan")


def _table_width(rows: list[list[str]]) -> int:
    """The width of the one-line-per-server table: every cell whole (no column wraps), a header
    wraps at its spaces, one space between columns."""
    widths = [max([*(len(x) for x in _HEAD_LINES[i].split("\n")), *(len(r[i]) for r in rows)])
              for i in range(len(HEADERS))]
    return sum(widths) + len(widths) - 1


def render_console(doc: dict, console) -> None:
    """The fleet table, one line per server, where it fits the terminal whole; else one block per
    server (its name on a line of its own, then its values by name): a server name, a version or a
    finding id is never cut or wrapped (issue 72)."""
    from rich.text import Text

    rows = table_rows(doc)
    title = f"lagadvisor fleet: {doc['fleet']['completed']} of {doc['fleet']['servers']} servers"
    if _table_width(rows) <= console.width:
        console.print(_one_line_table(title, rows))
    else:
        console.print(Text(title, style="bold"), soft_wrap=True)
        for line in _blocks(rows, console.width):
            console.print(Text(line), soft_wrap=True, highlight=False)
        console.print()
    for line in _wrap(CAPTION, console.width):
        console.print(Text(line), soft_wrap=True, highlight=False)
    for f in doc["fleet"]["failed"]:
        for line in _wrap(f"{f['server']}: {f['error']}", console.width):
            console.print(Text(line), soft_wrap=True, highlight=False)


def _wrap(text: str, width: int) -> list[str]:
    """``text`` wrapped at spaces only (a name or path longer than the line stands alone)."""
    import textwrap

    return textwrap.wrap(text, width=width, subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False)


def _one_line_table(title: str, rows: list[list[str]]):
    from rich.table import Table
    from rich.text import Text

    from .tables import compact_table

    tab = compact_table(title)
    for i, h in enumerate(_HEAD_LINES):
        tab.add_column(h, no_wrap=True, justify="right" if i in _NUMERIC else "left",
                       min_width=max(len(r[i]) for r in rows) if rows else None)
    for row in rows:
        tab.add_row(*(Text(c) for c in row))  # names and versions are data, not rich markup
    return tab


def _blocks(rows: list[list[str]], width: int) -> list[str]:
    """One block per server: ``name: version, written by POLICY, N transactions`` (wrapped at
    spaces after the name), then the parallelism, lag and top finding on their own lines (a value
    too long for its label's line on the next)."""
    labels = ("parallelism rec / WS / CO", "lag p99 s now -> plan", "top finding")
    pad = max(len(x) for x in labels) + 2
    out: list[str] = []
    for server, version, written, trx, par, lag, top in rows:
        if version == "error":
            out += ["", f"{server}: error (below)"]
            continue
        out += [""] + _wrap(f"{server}: {version}, written by {written}, {trx} transactions", width)
        for label, value in zip(labels, (par, lag, top)):
            line = f"  {label.ljust(pad)}{value}"
            out += [line] if len(line) <= width else [f"  {label}", f"    {value}"]
    return out


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
table.fleet{border-collapse:collapse;width:100%} table.fleet th,table.fleet td{border-bottom:1px solid #ddd;
padding:.25em .5em;text-align:left} td.num{text-align:right}
section.server{border-top:3px solid #1e88e5;margin-top:2em} section.error{border-color:#c62828}
.err{color:#c62828;font-family:monospace} .finding{border-left:5px solid #888;padding:.3em .8em;margin:.6em 0;
background:#fafafa} .critical{border-color:#c62828}.warning{border-color:#f9a825}.info{border-color:#1e88e5}
figure{margin:.5em 0;border:1px solid #ddd;padding:.5em;max-width:560px} svg{width:100%;height:auto}
"""

_JS = r"""
(function(){
const D = JSON.parse(document.getElementById('fleet-data').textContent);
const NS = 'http://www.w3.org/2000/svg', COLORS = ['#1e88e5','#e53935','#43a047','#fb8c00'];
const W = 520, H = 240, M = {l: 48, r: 110, t: 10, b: 34};
function el(tag, a, p, text){ const e = document.createElementNS(NS, tag); for (const k in a) e.setAttribute(k, a[k]);
  if (text !== undefined) e.textContent = text; if (p) p.appendChild(e); return e; }
let drawn = 0;
D.servers.forEach(function(s, idx){
  if (!s.advice) return;
  const fig = document.getElementById('speedup-' + idx); if (!fig) return;
  const curves = s.advice.charts.speedup, names = Object.keys(curves);
  let ymax = 1; names.forEach(n => curves[n].forEach(p => { ymax = Math.max(ymax, p.speedup); }));
  const ws = curves[names[0]].map(p => p.workers), lx = ws.map(w => Math.log2(w));
  const x0 = M.l, x1 = W - M.r, y0 = H - M.b, y1 = M.t, lmax = Math.max(...lx) || 1;
  const fx = w => x0 + Math.log2(w) / lmax * (x1 - x0), fy = v => y0 - v / ymax * (y0 - y1);
  const svg = el('svg', {viewBox: `0 0 ${W} ${H}`, 'data-server': s.name}, fig);
  el('line', {x1: x0, y1: y0, x2: x1, y2: y0, stroke: '#333'}, svg);
  el('line', {x1: x0, y1: y0, x2: x0, y2: y1, stroke: '#333'}, svg);
  ws.forEach(w => el('text', {x: fx(w), y: y0 + 14, 'text-anchor': 'middle', 'font-size': 10}, svg, String(w)));
  [0, ymax / 2, ymax].forEach(v => el('text', {x: x0 - 6, y: fy(v) + 4, 'text-anchor': 'end', 'font-size': 10},
                                      svg, v.toFixed(1)));
  el('text', {x: (x0 + x1) / 2, y: H - 4, 'text-anchor': 'middle', 'font-size': 11}, svg, 'workers');
  names.forEach(function(n, i){
    const pts = curves[n].map(p => `${fx(p.workers).toFixed(1)},${fy(p.speedup).toFixed(1)}`).join(' ');
    el('polyline', {points: pts, fill: 'none', stroke: COLORS[i % 4], 'stroke-width': 2, class: 'series'}, svg);
    el('text', {x: x1 + 6, y: y1 + 14 + 14 * i, 'font-size': 11, fill: COLORS[i % 4]}, svg, n);
  });
  drawn++;
});
document.body.setAttribute('data-servers-rendered', String(drawn));
})();
"""


def render_html(doc: dict) -> str:
    from .advice_html import review_html

    esc = html.escape
    data = json.dumps(doc, sort_keys=True).replace("</", "<\\/")
    head = "".join(f"<th>{esc(h)}</th>" for h in HEADERS)
    body = []
    for s, row in zip(doc["servers"], table_rows(doc)):
        if s["error"]:
            row = row[:2] + [s["error"]] + row[3:]
        cells = "".join(f"<td class='num'>{esc(c)}</td>" if i in _NUMERIC else f"<td>{esc(c)}</td>"
                        for i, c in enumerate(row))
        body.append(f"<tr data-server='{esc(s['name'])}'><td><a href='#server-{esc(s['name'])}'>"
                    f"{esc(row[0])}</a></td>{cells[cells.index('</td>') + 5:]}</tr>")
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             f"<title>lagadvisor fleet: {doc['fleet']['servers']} servers</title>",
             f"<style>{_CSS}</style></head><body>",
             "<h1>lagadvisor fleet</h1>",
             f"<p>{doc['fleet']['completed']} of {doc['fleet']['servers']} servers advised; "
             f"{esc(doc['generator'])}, fleet schema {esc(doc['schema_version'])}. Parallelism: what each clock "
             "allows with unlimited workers; lag p99: simulated, at the replica's settings now and with the plan.</p>",
             f"<table class='fleet' id='fleet-table'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"]
    for idx, s in enumerate(doc["servers"]):
        sid = esc(s["name"])
        if s["advice"] is None:
            parts.append(f"<section class='server error' id='server-{sid}'><h2>{sid}</h2>"
                         f"<p class='err'>{esc(s['error'] or '')}</p></section>")
            continue
        a = s["advice"]
        sm = a["summary"]
        inp = a["input"]
        lines = [f"<p>{inp['transactions']:,} transactions in {len(inp['files'])} file(s), written by "
                 f"{esc(inp['written_policy'])} ({esc(inp['server_version'])}).</p>"]
        if sm.get("current"):
            cur, rec = sm["current"], sm["recommended"]
            lines.append(f"<p>Now: {cur['catch_up_seconds']:,.3f} s catch-up, lag p99 {cur['lag_p99_seconds']:,.3f} s "
                         f"({esc(cur['config'])}). With the plan: {rec['catch_up_seconds']:,.3f} s, lag p99 "
                         f"{rec['lag_p99_seconds']:,.3f} s ({esc(rec['config'])}).</p>")
            lines.append(f"<p>{esc(sm['bottleneck']['sentence'])}</p>")
        for f in a["findings"]:
            lines.append(f"<div class='finding {esc(f['severity'])}' data-finding='{esc(f['id'])}'><b>"
                         f"{esc(f['severity'].upper())}: {esc(f['title'])}</b><br>{esc(f['setting'])}: "
                         f"{esc(f['current'] or 'unknown')} → {esc(f['suggested'])}"
                         + (f" ({esc(f['condition'])})" if f.get("condition") else "")
                         + (f"; {esc(f['alternative']['condition'])}: {esc(f['alternative']['suggested'])}"
                            if f.get("alternative") else "")
                         + f"<br>{esc(f['evidence'])}</div>")
        lines.append(review_html(a.get("review")))
        for w in s["warnings"]:
            lines.append(f"<p class='err'>warning: {esc(w)}</p>")
        parts.append(f"<section class='server' id='server-{sid}'><h2>{sid}</h2>{''.join(lines)}"
                     f"<figure id='speedup-{idx}'><figcaption>Simulated speedup by workers, per clock"
                     "</figcaption></figure></section>")
    parts.append(f"<script type='application/json' id='fleet-data'>{data}</script>")
    parts.append(f"<script>{_JS}</script></body></html>")
    return "\n".join(parts)


__all__ = ["FLEET_SCHEMA_VERSION", "fleet_json", "render_console", "render_html", "table_rows"]
