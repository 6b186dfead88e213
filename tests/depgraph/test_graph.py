"""The dependency graph on a fixture: hot rows are the rows the workload hammers, the critical
path is bounded by the clock, and the exports are readable."""

from __future__ import annotations

import json
import subprocess
import sys

import networkx as nx

from conftest import FIXTURES


def run(*args):
    r = subprocess.run([sys.executable, "-m", "lagadvisor", "graph", *args], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_graph_summary_and_exports(tmp_path):
    f = str(FIXTURES / "single_full" / "binlog.000001")
    gml, dot = tmp_path / "g.graphml", tmp_path / "g.dot"
    doc = json.loads(run(f, "--format", "json", "--range", "0:200", "--graphml", str(gml), "--dot", str(dot)))
    assert doc["transactions"] == 1375
    assert 1 < doc["depth"] < 1375 and doc["width"] >= 2
    assert doc["critical_path_seconds"] < doc["serial_seconds"]
    # The workload's hot-row table (four rows updated over and over) tops the list.
    assert doc["hot_rows"][0]["key"].startswith("wl.t_hot PRIMARY=")
    assert doc["hot_tables"][0]["table"] == "wl.t_hot"
    g = nx.read_graphml(gml)
    assert g.number_of_nodes() == 200 and g.number_of_edges() > 0
    assert dot.read_text().startswith("digraph")
    co = json.loads(run(f, "--format", "json", "--policy", "COMMIT_ORDER", "--commit-order", "serial"))
    assert co["depth"] == 1375  # one client, serial commit order: a chain
