"""Rich console rendering of an :class:`~lagadvisor.analysis.results.Analysis`."""

from __future__ import annotations

import datetime as _dt
import os

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..analysis.results import WRITESET_POLICIES, Analysis, FileAnalysis, LagDigest, Totals
from ..kinds import Policy
from .tables import (compact_table, label_column, number_column, path_lines, policy_caption, policy_label,
                     text_column)


def _ts(us: int | None) -> str:
    if not us:
        return "-"
    return _dt.datetime.fromtimestamp(us / 1e6, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def _totals_table(title: str, t: Totals) -> Table:
    tab = Table(title=title, show_header=False, title_justify="left")
    tab.add_column("what", style="bold")
    tab.add_column("value")
    clock = t.recorded
    tab.add_row("transactions", f"{t.transactions:,}")
    tab.add_row("rows", f"{t.rows:,}")
    tab.add_row("bytes", f"{t.bytes:,}")
    tab.add_row("time span", f"{_ts(t.first_ts_us)} .. {_ts(t.last_ts_us)} ({t.span_seconds:,.3f} s)")
    tab.add_row("transactions/s", f"{t.tps:,.1f}")
    flags = [f"{n} {what}" for n, what in ((t.ddl, "DDL"), (t.statement_based, "statement-based"),
                                           (t.xa, "XA"), (t.incidents, "incident"),
                                           (t.incomplete, "incomplete")) if n]
    tab.add_row("special transactions", ", ".join(flags) or "none")
    lag = t.observed_lag()
    if lag:
        tab.add_row("observed replica lag", f"p50 {lag['p50_seconds']:,.3f} s, p99 {lag['p99_seconds']:,.3f} s, "
                    f"max {lag['max_seconds']:,.3f} s over {lag['transactions']:,} replicated transactions "
                    "(immediate vs original commit timestamps"
                    + (f"; percentiles within {lag['relative_error']:.1%}, from a sketch past "
                       f"{LagDigest().cap:,} transactions)" if "relative_error" in lag else ")"))
    if clock.transactions and clock.histogram:
        tab.add_row("recorded clock", f"mean seq-lc {clock.mean_distance:,.2f}; "
                    f"{clock.parallel_share:.1%} may start alongside their predecessor; "
                    f"{clock.barriers:,} {'barrier' if clock.barriers == 1 else 'barriers'} (last_committed=0)")
        tab.add_row("clock depth", f"{clock.depth:,} (ideal speedup with unlimited workers "
                    f"{clock.ideal_speedup:,.2f}x)")
    elif t.commit_groups:
        tab.add_row("group commits", f"{t.commit_groups:,} (runs of transactions sharing a MariaDB commit id)")
    else:
        tab.add_row("recorded clock", "none (no logical clock in this binlog)")
    return tab


def _file_header(fa: FileAnalysis) -> Table:
    s = fa.summary
    tab = Table(show_header=False)
    tab.add_column("what", style="bold")
    tab.add_column("value")
    tab.add_row("server", (s.server_version or "?") + (" (MariaDB)" if s.mariadb else ""))
    tab.add_row("file size", f"{s.size:,} bytes")
    tab.add_row("checksums", s.checksum or "?")
    tab.add_row("GTIDs", ("tagged " if s.tagged_gtids else "") + ("yes" if s.gtids else "no"))
    tab.add_row("compressed transactions", "yes" if s.compression else "no")
    tab.add_row("row metadata", s.row_metadata)
    if s.next_file:
        tab.add_row("rotates to", s.next_file)
    return tab


def _events_table(fa_list: list[FileAnalysis]) -> Table:
    from collections import Counter

    total: Counter = Counter()
    for fa in fa_list:
        total.update(fa.summary.events)
    tab = Table(title="events by type", title_justify="left")
    tab.add_column("type")
    tab.add_column("count", justify="right")
    for name, n in sorted(total.items(), key=lambda kv: (-kv[1], kv[0])):
        tab.add_row(name, f"{n:,}")
    return tab


def _histogram(t: Totals) -> Table:
    tab = Table(title="recorded sequence_number - last_committed", title_justify="left")
    tab.add_column("distance")
    tab.add_column("transactions", justify="right")
    tab.add_column("share", justify="right")
    n = max(1, sum(t.recorded.histogram.values()))
    for label, count in t.recorded.histogram_rows():
        tab.add_row(label, f"{count:,}", f"{count / n:.1%}")
    return tab


def _largest(t: Totals, width: int) -> Table:
    """The largest transactions: a GTID and a file@offset are never wrapped (issue 72); where the
    two do not fit side by side, the file@offset goes under the GTID. When every row ties in size
    the caption says so (which transactions of that size are listed is then arbitrary)."""
    rows = [(f"{b:,}", f"{r:,}", g, where) for b, r, g, where in t.largest_sorted()]
    if any(len(where) + 13 > width for _, _, _, where in rows):   # the file's own name (its header has the path)
        rows = [(b, r, g, os.path.basename(where)) for b, r, g, where in rows]
    sizes = {b for b, _, _, _ in t.largest}
    tie = (f"all {len(rows)} rows tie at {rows[0][0]} bytes: more transactions of that size may exist, "
           "and which of them are listed is arbitrary") if len(rows) > 1 and len(sizes) == 1 else None
    tab = compact_table("largest transactions", tie)
    number_column(tab, "bytes")
    number_column(tab, "rows")
    need = sum(max(len(head), *(len(row[i]) for row in rows)) + 1 for i, head in enumerate(("bytes", "rows", "gtid", "where")))
    if need <= width:
        tab.add_column("gtid", no_wrap=True)
        tab.add_column("where", no_wrap=True)
        for row in rows:
            tab.add_row(*row)
    else:
        tab.add_column("gtid\nwhere", no_wrap=True)
        for b, r, g, where in rows:
            tab.add_row(b, r, f"{g}\n{where}")
    return tab


def _policies(a: Analysis) -> list[Table]:
    p = a.policies
    if p is None:
        return []
    note = p.not_computed_note(a.total.transactions)
    caption = "; ".join(x for x in (policy_caption(p.clocks), note and f"* {note}") if x) or None
    tab = compact_table(f"dependency policies re-derived (written by {p.written.name}: {p.written.evidence}; "
                        f"history size {p.history_size:,}; commit-order input: {p.commit_order})", caption)
    rec = a.total.recorded
    rows = []
    if rec.histogram:
        rows.append((Policy.RECORDED, rec))
    rows += [(policy_label(name, True) + ("*" if note and name in WRITESET_POLICIES else ""), c)
             for name, c in p.clocks.items()]
    label_column(tab, "policy", (name for name, _ in rows))
    for col in ("mean\nseq-lc", "may overlap\npredecessor", "barriers", "depth", "ideal\nspeedup"):
        number_column(tab, col)
    for name, c in rows:
        tab.add_row(name, f"{c.mean_distance:,.2f}", f"{c.parallel_share:.1%}", f"{c.barriers:,}",
                    f"{c.depth:,}", f"{c.ideal_speedup:,.2f}x")
    out = [tab]
    if p.fallback_tables:
        fb = Table(title=f"WRITESET fallbacks ({sum(p.fallbacks.values()):,} transactions; "
                   f"{p.resets:,} history resets)", title_justify="left")
        label_column(fb, "reason", (reason for reason, _, _ in p.fallback_tables[:15]))
        text_column(fb, "table")
        number_column(fb, "transactions")
        for reason, table, n in p.fallback_tables[:15]:
            fb.add_row(reason, table, f"{n:,}")
        out.append(fb)
    return out


def render_analysis(a: Analysis, console: Console) -> None:
    for fa in a.files:
        # the file name on its own line, never wrapped (as a table's title it broke at any width)
        for line in path_lines(fa.summary.path, console.width):
            console.print(Text(line, style="bold cyan"), soft_wrap=True, highlight=False)
        console.print(_file_header(fa))
        console.print(_totals_table("", fa.totals))
    if len(a.files) > 1:
        console.print(_totals_table(f"total over {len(a.files)} files", a.total))
    if a.total.recorded.histogram:
        console.print(_histogram(a.total))
    for tab in _policies(a):
        console.print(tab)
    console.print(_events_table(a.files))
    if a.total.largest:
        console.print(_largest(a.total, console.width))
    warnings = a.warnings
    unknown = sum(sum(fa.summary.unknown_events.values()) for fa in a.files)
    if warnings or unknown:
        # The warnings themselves go to stderr, once, as every command prints them (issue 22):
        # printed here too they appeared twice on a terminal.
        console.print(Text.assemble(("warnings", "bold yellow"), f": {len(warnings)}, printed on stderr"
                                    + (f"; {unknown:,} unknown events (see the events table)" if unknown else "")),
                      highlight=False)
    else:
        console.print(Text("no warnings", style="green"))
