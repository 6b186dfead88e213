"""Console tables that fit an 80-column terminal without cutting what tells rows apart.

Rich shortens a cell that does not fit with an ellipsis, which made ``WRITESET`` and
``WRITESET_SESSION`` rows read the same (``WRITES…``). Here nothing that names a row is ever
cut: labels keep their full width (``WRITESET_SESSION`` is written ``WS_SESSION`` where a table
has many numeric columns, said in the table's caption), long identifiers (GTIDs, keys, file
names) wrap onto a second line instead of being shortened, numbers never wrap and seconds are
given with fewer decimals as they grow.
"""

from __future__ import annotations

from rich import box
from rich.table import Table

from ..kinds import Policy

#: Deliberate abbreviations of policy names in wide numeric tables.
POLICY_SHORT = {Policy.WRITESET_SESSION: "WS_SESSION"}


def compact_table(title: str | None = None, caption: str | None = None) -> Table:
    """A borderless table (a rule under the header) that spends its width on the cells."""
    return Table(title=title, caption=caption, title_justify="left", caption_justify="left",
                 box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))


def label_column(tab: Table, header: str, labels) -> None:
    """A column that names rows: as wide as its longest label, never wrapped, never cut."""
    width = max([len(header), *(len(str(x)) for x in labels)])
    tab.add_column(header, no_wrap=True, min_width=width)


def text_column(tab: Table, header: str, *, justify: str = "left") -> None:
    """A column of long identifiers: wrapped (folded) rather than cut."""
    tab.add_column(header, overflow="fold", justify=justify)


def number_column(tab: Table, header: str) -> None:
    """A right-aligned numeric column; a header may wrap at spaces or at ``\\n``, a number never."""
    tab.add_column(header, justify="right", no_wrap=True)


def path_lines(path: str, width: int) -> list[str]:
    """A file name as a heading: the whole path on one line where it fits; else the file's own
    name on the first line and its directory on the next ones, broken after a ``/`` only, so no
    name in it is ever split (a single name longer than the line stands alone)."""
    if len(path) <= width or "/" not in path.rstrip("/"):
        return [path]
    head, _, name = path.rstrip("/").rpartition("/")
    lines, line = [], "  in "
    for part in [p + "/" for p in head.split("/")]:
        if len(line) + len(part) > width and line.strip() not in ("", "in"):
            lines.append(line)
            line = "     "
        line += part
    return [name] + lines + [line]


def seconds(value: float) -> str:
    """Seconds with three decimals below 100 s, one below 10,000 s, none above."""
    a = abs(value)
    if a < 100:
        return f"{value:,.3f}"
    if a < 10_000:
        return f"{value:,.1f}"
    return f"{value:,.0f}"


def policy_label(name: str, short: bool) -> str:
    return POLICY_SHORT.get(name, name) if short else name


def policy_caption(names) -> str | None:
    """The caption that spells out the abbreviations used for ``names``."""
    return "; ".join(f"{POLICY_SHORT[n]} = {n}" for n in sorted(set(names)) if n in POLICY_SHORT) or None


def simulate_table(rows, title: str, bands: list[float] | None = None, *, catch_up: bool = True,
                   not_computed: str | None = None) -> Table:
    """``simulate``'s result: one row per policy and worker count (``bands``: a calibrated cost
    model's relative error bands of the apply times at the rows' worker counts, the narrowest and
    the widest shown in their column's head). The speedup (against the same policy's one worker)
    only in catch-up mode: where transactions arrive at the source's commit times, the apply time
    is bounded by the source's own timeline and every speedup reads about 1.00x (issue 72); the
    caption says so. ``not_computed``: the sentence that marks the WRITESET rows ``*`` (their
    writesets not computed: the rows repeat the commit-order input)."""
    from ..analysis.results import WRITESET_POLICIES

    def label(policy) -> str:
        return policy_label(policy, True) + ("*" if not_computed and policy in WRITESET_POLICIES else "")

    notes = [policy_caption(r.policy for r in rows)]
    if not_computed and any(r.policy in WRITESET_POLICIES for r in rows):
        notes.append(f"* {not_computed}")
    if not catch_up:
        notes.append("no speedup column: transactions arrive at the source's commit times, so the apply time "
                     "is bounded by the source's own timeline; --catch-up simulates a backlog")
    tab = compact_table(title, "; ".join(n for n in notes if n) or None)
    label_column(tab, "policy", (label(r.policy) for r in rows))
    pct = sorted({round(b * 100) for b in bands or () if b > 0})
    apply_head = ("apply\ns" if not pct else f"apply s\n+-{pct[0]}%" if len(pct) == 1
                  else f"apply s\n+-{pct[0]}-{pct[-1]}%")
    speedup = ["speedup vs\n1 worker"] if catch_up else []
    for header in ("workers", apply_head, *speedup, "lag p99\ns", "lag max\ns", "util.", "dep.\nwait s"):
        number_column(tab, header)
    for r in rows:
        cells = [f"{r.speedup:.2f}x"] if catch_up else []
        tab.add_row(label(r.policy), str(r.workers), seconds(r.apply_seconds), *cells,
                    seconds(r.lag_p99_seconds), seconds(r.lag_max_seconds), f"{r.utilisation:.0%}",
                    seconds(r.dependency_wait_seconds))
    return tab


def window_table(rows, k: int = 5) -> Table | None:
    """Lag p99 by time window for the first policy's rows (one column per worker count), the
    ``k`` worst windows first (by the fewest workers' lag), or None without windows."""
    from ..sim.windows import worst

    first = [r for r in rows if r.policy == rows[0].policy and r.windows] if rows else []
    if not first:
        return None
    ref = first[0].windows
    span = ref[0].end_us - ref[0].start_us
    unit = next((f"{span // d}{u}" for d, u in ((86_400_000_000, "d"), (3_600_000_000, "h"), (60_000_000, "min"))
                 if span % d == 0), f"{span / 1e6:g}s")
    shown = worst(ref, k)
    tab = compact_table(f"lag p99 by {unit} window (UTC), {policy_label(rows[0].policy, True)}: the {len(shown)} "
                        f"worst of {len(ref)}")
    text_column(tab, "window")
    number_column(tab, "trx")
    for r in first:
        number_column(tab, f"{r.workers}\nworkers" if r.workers != 1 else "1\nworker")
    for win in shown:
        cells = []
        for r in first:
            match = next((x for x in r.windows if x.start_us == win.start_us), None)
            cells.append(seconds(match.lag_p99_seconds) if match else "-")
        tab.add_row(win.label(), f"{win.transactions:,}", *cells)
    return tab


def hot_table(title: str, items: list[dict], column: str) -> Table:
    """``graph``'s hot rows or hot tables: the key wraps, it is never shortened."""
    tab = compact_table(title)
    text_column(tab, column)
    number_column(tab, "dependencies")
    for it in items:
        tab.add_row(it[column], f"{it['dependencies']:,}")
    return tab
