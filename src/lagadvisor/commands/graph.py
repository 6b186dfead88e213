"""``lagadvisor graph``."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from ..binlog.window import MAX_POSITION
from ..errors import ConfigError, LagAdvisorError
from .common import Progress, console, fail, output_path, read_inputs, read_warnings
from ..kinds import CLOCKS, Policy
from .options import ClockArgs, FormatOpt, OutputFormat, ServerArgs, WindowArgs, grouped, policy_name

GRAPH_POLICIES = CLOCKS


def keep_range(text: str) -> range:
    """``--range START:END``."""
    try:
        a, b = (int(x) for x in text.split(":"))
    except ValueError:
        raise ConfigError(f"--range {text}: expected START:END") from None
    if a < 0 or b <= a or b > MAX_POSITION:
        raise ConfigError(f"--range {text}: expected 0 <= START < END <= {MAX_POSITION} (transactions START to "
                          f"END-1)")
    return range(a, b)


@grouped
def graph(
    files: Annotated[list[str], typer.Argument(help="Binlog files, in order.")],
    *,
    policy: Annotated[str, typer.Option(callback=policy_name, help="Clock: recorded, COMMIT_ORDER, WRITESET or "
                                                                   "WRITESET_SESSION (any case).")] = Policy.WRITESET,
    top: Annotated[int, typer.Option(help="How many hot rows and tables to list.", min=1)] = 10,
    range_: Annotated[str, typer.Option("--range", help="Transactions (0-based, in binlog order) kept for "
                                                        "export, as START:END.")] = "0:2000",
    graphml: Annotated[Optional[str], typer.Option(help="Write the kept range as GraphML.")] = None,
    dot: Annotated[Optional[str], typer.Option(help="Write the kept range as Graphviz DOT.")] = None,
    output_format: FormatOpt = OutputFormat.text,
    clock: ClockArgs,
    window: WindowArgs,
    server: ServerArgs,
) -> None:
    """The dependency graph: critical path (transactions and estimated apply time), width, the
    rows and tables that create the most dependencies, export to GraphML/DOT."""
    from ..depgraph.graph import hot_rows_max, write_graph
    from ..depgraph.read import prepare
    from ..depgraph.read import build_graph
    from ..analysis.results import not_computed_note
    from ..report.commands import graph_doc, render_graph
    from ..sim.model import CostModel

    try:
        if policy not in GRAPH_POLICIES:
            raise ConfigError(f"--policy {policy}: expected recorded, COMMIT_ORDER, WRITESET or WRITESET_SESSION")
        kept = keep_range(range_)
        inp = read_inputs(files, clock, window, server, labels=True)
        output_path(graphml, inp.files, "--graphml")
        output_path(dot, inp.files, "--dot")
        run = prepare(inp.files, inp.options)
        with Progress(inp.files, True) as bar:
            s, summaries, unknown = build_graph(inp.files, run, inp.options, policy, CostModel().graph_weights(), kept,
                            on_progress=bar.on_progress, on_transaction=bar.on_transaction)
        for option, path, as_dot in (("--graphml", graphml, False), ("--dot", dot, True)):
            if path:
                try:
                    write_graph(s.graph, path, dot=as_dot)
                except OSError as err:
                    raise LagAdvisorError(f"{option} {path}: cannot write the graph: {err.strerror or err}") from None
    except LagAdvisorError as err:
        raise fail(err) from None
    from ..analysis.results import WRITESET_POLICIES

    note = not_computed_note(unknown, s.transactions) if policy in WRITESET_POLICIES else None
    doc = graph_doc(s, policy, top, note)
    if output_format == OutputFormat.json:
        print(json.dumps(doc, indent=2, sort_keys=True))
    else:
        render_graph(doc, s, console(), hot_rows_max())
    read_warnings(summaries)
