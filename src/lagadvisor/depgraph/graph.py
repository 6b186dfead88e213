"""The transaction dependency graph: critical path, width, hot rows and tables, export.

Two kinds of edges: the clock's (a transaction may start only after the transaction its
``last_committed`` names, and everything before it) and the writeset conflicts behind them
(the previous writer of each row key the transaction writes). The whole stream is summarised in
one pass with bounded state; a chosen range is kept as a networkx DiGraph for GraphML/DOT.

Transactions are weighted by an estimated apply time given as plain numbers (:data:`Weights`:
the cost model lives above, in ``sim``; ``CostModel.graph_weights()`` gives them). The native
core builds the same summary while it reads (``Analyzer.collect_graph``, same float operations
in the same order); :meth:`GraphSummary.from_native` turns its result into this one.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import networkx as nx

from ..binlog import Transaction
from ..kinds import POLICIES, HotRowKey, Policy
from ..writeset.extract import Writeset
from .policies import Computed

if TYPE_CHECKING:
    from ..native.results import NativeGraph

#: Apply-time weights, us: per transaction, per inserted, updated and deleted row, per byte,
#: the commit, and per binlog event (``sim.model.CostModel``: apply_us(...) + commit_us).
Weights = tuple[float, float, float, float, float, float, float]

_POLICY_FIELD = {p: p.column for p in POLICIES}


@dataclass
class GraphSummary:
    policy: Policy
    transactions: int = 0
    depth: int = 0                       # longest chain, in transactions
    critical_path_us: float = 0.0        # longest chain, in estimated apply time
    serial_us: float = 0.0               # everything one after the other
    width: int = 0                       # most transactions on one level
    conflicts: int = 0
    hot_rows: Counter = field(default_factory=Counter)   # HotRowKey -> dependencies
    hot_tables: Counter = field(default_factory=Counter)
    graph: nx.DiGraph = field(default_factory=nx.DiGraph, repr=False)
    hot_rows_error: int = 0              # a hot row's count may be short by at most this (0: exact)

    @property
    def parallelism(self) -> float:
        return self.serial_us / self.critical_path_us if self.critical_path_us else 0.0

    @classmethod
    def from_native(cls, policy: str, d: NativeGraph, paths: list[str]) -> "GraphSummary":
        """From ``Analyzer.take_graph``: the kept nodes and edges are added in the builder's
        order, so attributes merge as :meth:`GraphBuilder.add` merges them."""
        s = cls(policy, d.transactions, d.depth, d.critical_path_us, d.serial_us, d.width, d.conflicts)
        for label, n in d.hot_rows:
            s.hot_rows[HotRowKey(label)] = n
        for table, n in d.hot_tables:
            s.hot_tables[table] = n
        s.hot_rows_error = d.hot_rows_error
        g = s.graph
        nodes = iter(d.nodes)
        node = next(nodes, None)
        for a, b, kind, key in d.edges:
            while node is not None and node[0] <= b:
                _add_node(g, node, paths)
                node = next(nodes, None)
            if kind == 0:
                g.add_edge(a, b, kind="clock")
            else:
                g.add_edge(a, b, kind="conflict", key=key)
        while node is not None:
            _add_node(g, node, paths)
            node = next(nodes, None)
        return s


def _add_node(g: nx.DiGraph, node, paths: list[str]) -> None:
    idx, gtid, seq, lc, rows, file_idx, cost = node
    g.add_node(idx, gtid=gtid, seq=seq, last_committed=lc, rows=rows,
               file=paths[file_idx].rsplit("/", 1)[-1], cost_us=round(cost, 1))


#: Rows counted for the hot-row report at most (``LAGADVISOR_HOT_ROWS_MAX`` to change): when
#: more rows have conflicted, the less frequent half is dropped; a row dropped at a cut loses at
#: most the largest count that cut dropped, so the sum of those over the cuts bounds how short
#: any reported count can be (``GraphSummary.hot_rows_error``; the top rows are exact when their
#: counts exceed it by the gap to the next).
HOT_ROWS_MAX = 100_000
#: Levels whose transaction counts are kept for the width; older levels (more than half of this
#: below the current depth) are forgotten: a transaction that still joins one would be counted
#: from zero there.
LEVELS_MAX = 1_000_000


def hot_rows_max() -> int:
    import os

    try:
        return max(2, int(os.environ.get("LAGADVISOR_HOT_ROWS_MAX", HOT_ROWS_MAX)))
    except ValueError:
        return HOT_ROWS_MAX


class GraphBuilder:
    """Feed transactions (with labelled writesets) in binlog order. Memory stays bounded: the
    last writers (2,000,000 keys), the counted hot rows (:data:`HOT_ROWS_MAX`) and the per-level
    counts (:data:`LEVELS_MAX`) are each cut back when they pass their limit."""

    def __init__(self, policy: str, weights: Weights, keep: range | None = None) -> None:
        self.s = GraphSummary(policy)
        self.field = _POLICY_FIELD.get(policy)
        self.weights = weights
        self.keep = keep
        self._file: str | None = None
        self._levels = array("q", [0])
        self._finish = array("d", [0.0])
        self._base_level = 0
        self._base_finish = 0.0
        self._level_count: Counter = Counter()
        self._last_writer: dict[int, tuple[int, str]] = {}
        self._index = -1
        self._offset = 0
        self._hot_max = hot_rows_max()

    def _bound(self) -> None:
        s = self.s
        if len(s.hot_rows) > self._hot_max:
            items = sorted(s.hot_rows.items(), key=lambda kv: (-kv[1], kv[0]))
            keep = self._hot_max // 2
            s.hot_rows_error += items[keep][1]  # a row dropped now loses at most this; again later, more
            s.hot_rows = Counter(dict(items[:keep]))
        if len(self._level_count) > LEVELS_MAX:
            floor = s.depth - LEVELS_MAX // 2
            self._level_count = Counter({k: v for k, v in self._level_count.items() if k >= floor})

    def add(self, t: Transaction, ws: Writeset, c: Computed) -> None:
        s = self.s
        self._index += 1
        idx = self._index
        if t.file != self._file:
            self._file = t.file
            self._base_level, self._base_finish = s.depth, s.critical_path_us
            self._levels = array("q", [self._base_level])
            self._finish = array("d", [self._base_finish])
            self._offset = 0
            self._last_writer = {}
        lc = t.last_committed if self.field is None else getattr(c, self.field)
        seq = c.sequence_number
        ins = sum(x.inserts for x in t.tables)
        upd = sum(x.updates for x in t.tables)
        dele = sum(x.deletes for x in t.tables)
        w = self.weights
        cost = (w[0] + w[1] * ins + w[2] * upd + w[3] * dele + w[4] * t.bytes + w[6] * t.event_count) + w[5]
        if seq - self._offset != len(self._levels):
            # Gap or step back in sequence numbers: a barrier; index the new run from here.
            self._offset = seq - 1
            self._levels = array("q", [s.depth])
            self._finish = array("d", [s.critical_path_us])
            lc = 0
        k = (lc or 0) - self._offset
        if lc is None or lc <= 0 or k <= 0:
            level, start = s.depth + 1, s.critical_path_us
        else:
            k = min(k, len(self._levels) - 1)
            level, start = self._levels[k] + 1, self._finish[k]
        finish = start + cost
        self._levels.append(max(level, self._levels[-1]))
        self._finish.append(max(finish, self._finish[-1]))
        s.depth = max(s.depth, level)
        s.critical_path_us = max(s.critical_path_us, finish)
        s.serial_us += cost
        s.transactions += 1
        self._level_count[level] += 1
        s.width = max(s.width, self._level_count[level])
        keep = self.keep is not None and idx in self.keep
        g = s.graph
        if keep:
            g.add_node(idx, gtid=t.gtid or "", seq=seq, last_committed=lc, rows=t.rows,
                       file=t.file.rsplit("/", 1)[-1], cost_us=round(cost, 1))
        parents: dict[int, str] = {}
        counted: set[tuple[int, str]] = set()  # a key's two hashes are one dependency
        for h, label in zip(ws.hashes, ws.labels or [""] * len(ws.hashes)):
            prev = self._last_writer.get(h)
            if prev is not None and prev[0] != idx and (prev[0], label) not in counted:
                counted.add((prev[0], label))
                s.conflicts += 1
                s.hot_rows[HotRowKey(label) if label else HotRowKey(None, h)] += 1
                s.hot_tables[(label or "?").split(" ", 1)[0]] += 1
                parents.setdefault(prev[0], label)
            self._last_writer[h] = (idx, label)
        if len(self._last_writer) > 2_000_000:  # bound memory: forget the oldest half
            items = sorted(self._last_writer.items(), key=lambda kv: kv[1][0])
            self._last_writer = dict(items[len(items) // 2:])
        if keep:
            if lc and lc > 0 and seq - lc >= 1:
                src = idx - (seq - lc)
                if src in g:
                    g.add_edge(src, idx, kind="clock")
            for p, label in sorted(parents.items()):
                if p in g:
                    g.add_edge(p, idx, kind="conflict", key=label)
        self._bound()


def write_graph(g: nx.DiGraph, path: str, dot: bool) -> None:
    """Graphviz DOT when ``dot``, else GraphML, to ``path`` exactly as named."""
    if dot:
        with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write("digraph dependencies {\n  rankdir=LR;\n")
            for n, d in sorted(g.nodes(data=True)):
                f.write(f'  {n} [label="{d["seq"]}\\n{d["rows"]} rows"];\n')
            for a, b, d in sorted(g.edges(data=True)):
                style = "solid" if d.get("kind") == "conflict" else "dashed"
                key = d.get("key", "").replace('"', "'")
                f.write(f'  {a} -> {b} [style={style}, tooltip="{key}"];\n')
            f.write("}\n")
    else:
        nx.write_graphml(g, path)
