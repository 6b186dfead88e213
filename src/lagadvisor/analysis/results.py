"""What ``analyze`` computes: per-file and total statistics and the re-derived clocks (filled
by the reference in :mod:`.analyze` or from the native counters in :mod:`.native`)."""

from __future__ import annotations

import heapq
import math
import os
from array import array
from collections import Counter
from dataclasses import dataclass, field

from ..binlog import FileSummary, Transaction
from ..depgraph.clock import ClockStats
from ..depgraph.pipeline import WrittenPolicy
from ..depgraph.policies import Fallback
from ..kinds import Policy
from ..native.results import LagState, LagSummary
from ..sim.run import percentile

TOP_N = 5
#: Observed lags kept exactly per run before the sketch takes over (``LAGADVISOR_EXACT_LAGS``,
#: the knob the simulator's lags use).
DEFAULT_EXACT_LAGS = 1 << 20
LAG_ALPHA = 0.001  # the sketch's relative error (sim.stream.SKETCH_ALPHA)


def exact_lags() -> int:
    v = os.environ.get("LAGADVISOR_EXACT_LAGS", "")
    return int(v) if v.isdigit() else DEFAULT_EXACT_LAGS


class LagDigest:
    """The lags a replica's own binlog records (immediate minus original commit timestamp, us,
    integers, negative under clock skew), in bounded memory: exact up to ``cap`` values, then a
    signed log-bucket sketch (DDSketch: a value ``|x| > 1`` in bucket ``ceil(ln|x| / ln g)``,
    ``g = (1+a)/(1-a)``; -1, 0 and 1 counted exactly), whose quantiles are within ``LAG_ALPHA``
    of the exact ones; count and max stay exact. Merging gives what one digest fed every value
    gives (bucket counts add). The native core's ``LagDigest`` (``reader/clock.rs``) is the same."""

    __slots__ = ("cap", "values", "n", "min", "max", "neg", "small", "pos", "sketch", "_summary")

    def __init__(self, cap: int | None = None) -> None:
        self.cap = exact_lags() if cap is None else cap
        self.values = array("q")
        self.n = 0
        self.min = self.max = 0
        self.neg: dict[int, int] = {}
        self.small = [0, 0, 0]          # -1, 0, 1
        self.pos: dict[int, int] = {}
        self.sketch = False
        self._summary: dict | None = None

    def __len__(self) -> int:
        return self.n

    def add(self, v: int) -> None:
        if self.n == 0 or v < self.min:
            self.min = v
        if self.n == 0 or v > self.max:
            self.max = v
        self.n += 1
        if self.sketch:
            self._bucket(v, 1)
            return
        self.values.append(v)
        if len(self.values) > self.cap:
            self._to_sketch()

    def _bucket(self, v: int, count: int) -> None:
        if -1 <= v <= 1:
            self.small[v + 1] += count
            return
        side = self.pos if v > 0 else self.neg
        k = math.ceil(math.log(abs(v)) / _LG)
        side[k] = side.get(k, 0) + count

    def _to_sketch(self) -> None:
        self.sketch = True
        for v in self.values:
            self._bucket(v, 1)
        self.values = array("q")

    def merge(self, other: "LagDigest") -> None:
        if other.n == 0:
            return
        self.min = other.min if self.n == 0 else min(self.min, other.min)
        self.max = other.max if self.n == 0 else max(self.max, other.max)
        self.n += other.n
        if not self.sketch and not other.sketch and len(self.values) + len(other.values) <= self.cap:
            self.values.extend(other.values)
            return
        if not self.sketch:
            self._to_sketch()
        for v in other.values:
            self._bucket(v, 1)
        for i in range(3):
            self.small[i] += other.small[i]
        for side, theirs in ((self.neg, other.neg), (self.pos, other.pos)):
            for k, c in theirs.items():
                side[k] = side.get(k, 0) + c

    def _quantile(self, p: float) -> float:
        last = self.n - 1
        rank = min(last, max(0, int(round(p / 100.0 * last))))
        cum = 0
        g = math.exp(_LG)
        buckets = ([(-2.0 * math.exp(k * _LG) / (g + 1.0), c) for k, c in sorted(self.neg.items(), reverse=True)]
                   + [(float(v), self.small[v + 1]) for v in (-1, 0, 1)]
                   + [(2.0 * math.exp(k * _LG) / (g + 1.0), c) for k, c in sorted(self.pos.items())])
        for value, c in buckets:
            cum += c
            if rank < cum:
                return min(max(value, float(self.min)), float(self.max))
        return float(self.max)

    def summary(self) -> dict[str, float] | None:
        """``transactions``, ``p50_seconds``, ``p99_seconds``, ``max_seconds`` (and
        ``relative_error`` when the percentiles come from the sketch); None without lags."""
        if self._summary is not None or self.n == 0:
            return self._summary
        if self.sketch:
            p50, p99 = self._quantile(50), self._quantile(99)
        else:
            v = sorted(self.values)
            p50, p99 = percentile(v, 50), percentile(v, 99)
        out = {"transactions": self.n, "p50_seconds": p50 / 1e6, "p99_seconds": p99 / 1e6,
               "max_seconds": self.max / 1e6}
        if self.sketch:
            out["relative_error"] = LAG_ALPHA
        return out

    def freeze(self) -> None:
        """Keep the summary only (a finished file's lags: memory stays flat over many files)."""
        self._summary = self.summary()
        self.values, self.neg, self.pos = array("q"), {}, {}

    @classmethod
    def from_native(cls, d: LagState | LagSummary | None) -> "LagDigest":
        """The native core's digest: its state (the run's total), or a finished file's summary
        (None: the file has no lags)."""
        if not isinstance(d, LagState):
            out = cls(0)
            if d is not None:
                out._summary = {"transactions": d.n, "p50_seconds": d.p50_us / 1e6, "p99_seconds": d.p99_us / 1e6,
                                "max_seconds": d.max_us / 1e6, **({"relative_error": LAG_ALPHA} if d.sketch else {})}
                out.n, out.max = d.n, d.max_us
            return out
        out = cls(d.cap)
        out.n, out.min, out.max, out.sketch = d.n, d.min, d.max, d.sketch
        out.values.frombytes(d.values)
        out.small = list(d.small)
        out.neg, out.pos = dict(d.neg), dict(d.pos)
        return out


_LG = math.log((1.0 + LAG_ALPHA) / (1.0 - LAG_ALPHA))


@dataclass
class Totals:
    """Statistics of a set of transactions (one file, or all files)."""

    transactions: int = 0
    rows: int = 0
    bytes: int = 0
    ddl: int = 0
    statement_based: int = 0
    xa: int = 0
    incidents: int = 0
    incomplete: int = 0
    first_ts_us: int | None = None
    last_ts_us: int | None = None
    recorded: ClockStats = field(default_factory=ClockStats)
    largest: list[tuple[int, int, str, str]] = field(default_factory=list)  # (bytes, rows, gtid, file@offset)
    tables: Counter = field(default_factory=Counter)          # rows per table
    # Replica binlogs (log_replica_updates): original (source) vs immediate (this server) commit.
    lags: LagDigest = field(default_factory=LagDigest)
    #: MariaDB group commits: runs of consecutive transactions of one file sharing a ``commit_id``
    #: (a group's transactions are written together: binlog.cc ``trx_group_commit_leader``)
    commit_groups: int = 0
    _last_group: tuple | None = field(default=None, repr=False)

    def add(self, t: Transaction) -> None:
        self.transactions += 1
        self.rows += t.rows
        self.bytes += t.bytes
        self.ddl += t.ddl
        self.statement_based += t.statement_based
        self.xa += t.xa
        self.incidents += t.incident
        self.incomplete += t.incomplete
        ts = t.commit_ts_us or t.timestamp * 1_000_000
        if ts:
            if self.first_ts_us is None or ts < self.first_ts_us:
                self.first_ts_us = ts
            if self.last_ts_us is None or ts > self.last_ts_us:
                self.last_ts_us = ts
        self.recorded.add(t.file, t.last_committed, t.sequence_number)
        item = (t.bytes, t.rows, t.gtid or f"#{t.index}", f"{t.file}@{t.start_offset}")
        if len(self.largest) < TOP_N:
            heapq.heappush(self.largest, item)
        elif item > self.largest[0]:
            heapq.heapreplace(self.largest, item)
        for st in t.tables:
            self.tables[st.table] += st.rows
        if (t.original_commit_timestamp and t.immediate_commit_timestamp
                and t.original_commit_timestamp != t.immediate_commit_timestamp):
            self.lags.add(t.immediate_commit_timestamp - t.original_commit_timestamp)
        group = (t.file, t.commit_id) if t.commit_id is not None else None
        if group is not None and group != self._last_group:
            self.commit_groups += 1
        self._last_group = group

    def freeze(self) -> None:
        """The file these totals count is done: its lags become their summary and the clock's
        per-file state goes (what stays is the size of a summary, not of the file)."""
        self.lags.freeze()
        self.recorded.end_file()

    @property
    def span_seconds(self) -> float:
        if self.first_ts_us is None or self.last_ts_us is None:
            return 0.0
        return (self.last_ts_us - self.first_ts_us) / 1e6

    @property
    def tps(self) -> float:
        span = self.span_seconds
        return self.transactions / span if span > 0 else 0.0

    def observed_lag(self) -> dict[str, float] | None:
        """Lag seen by this server when the file is a replica's own binlog (p50/p99/max s;
        ``relative_error`` when the percentiles are the sketch's, see :class:`LagDigest`)."""
        return self.lags.summary()

    def largest_sorted(self) -> list[tuple[int, int, str, str]]:
        return sorted(self.largest, reverse=True)


@dataclass
class FileAnalysis:
    summary: FileSummary
    totals: Totals


@dataclass
class PolicyResults:
    """The re-derived clocks: one :class:`ClockStats` per policy, fallbacks and what stayed unknown."""

    written: WrittenPolicy
    history_size: int
    commit_order: str
    clocks: dict[str, ClockStats]
    fallbacks: dict[str, int]
    fallback_tables: list[tuple[str, str, int]]   # (reason, table, transactions)
    unknown: list[tuple[str, int]]                # (what is unknown, transactions affected)
    caveats: list[tuple[str, int]]
    resets: int

    def not_computed(self) -> int:
        """Transactions whose writeset could not be computed: tables of a MINIMAL-metadata binlog
        with no schema given (the fallback resets the history, so the WRITESET and
        WRITESET_SESSION clocks equal their commit-order input for them)."""
        return self.fallbacks.get(Fallback.UNKNOWN_SCHEMA.value, 0)

    def not_computed_note(self, total: int) -> str | None:
        """The sentence that marks the WRITESET rows, with how to get them (None: computed)."""
        return not_computed_note(self.not_computed(), total)


def not_computed_note(n: int, total: int) -> str | None:
    """The sentence that marks the WRITESET rows of a read where ``n`` of ``total`` transactions'
    writesets were not computed, with how to get them (None: all computed)."""
    if not n:
        return None
    return (f"WRITESET and WRITESET_SESSION not computed for {n:,} of {total:,} transactions: their "
            f"tables' keys are unknown (row metadata below FULL, no schema names them), so these rows repeat the "
            f"commit-order input; {NOT_COMPUTED_HOW}")


#: How to get the WRITESET clocks of a MINIMAL-metadata binlog.
NOT_COMPUTED_HOW = "pass --schema FILE (mysqldump --no-data) or --host to compute them"
#: The policies whose clocks are marked when writesets are not computed.
WRITESET_POLICIES = (Policy.WRITESET, Policy.WRITESET_SESSION)


def caveat_line(what: str, n: int) -> str:
    """A writeset caveat as its warning line, with what ``n`` counts: transactions, or for the
    collations' approximated values (``writeset.extract.approximated_since``) those values."""
    if "weight table cannot decide" in what:
        return f"{what} ({n:,} values)"
    if "WRITESET may" in what:
        return f"{what} ({n} transactions)"
    return f"{what}: WRITESET may overstate parallelism ({n} transactions)"


@dataclass
class Analysis:
    files: list[FileAnalysis]
    total: Totals
    policies: PolicyResults | None = None
    ddl: list = field(default_factory=list, repr=False)  # (db, statement) followed, in order

    @property
    def warnings(self) -> list[str]:
        out = [w for f in self.files for w in f.summary.warnings]
        if self.policies is not None:
            out += [f"{what} ({n} transactions fell back)" for what, n in self.policies.unknown]
            out += [caveat_line(what, n) for what, n in self.policies.caveats]
        return out


__all__ = ["TOP_N", "LagDigest", "Analysis", "FileAnalysis", "PolicyResults", "Totals", "caveat_line"]
