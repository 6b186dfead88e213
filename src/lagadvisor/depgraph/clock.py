"""Parallelism a logical clock allows, computed in one streaming pass.

For each transaction, ``distance = sequence_number - last_committed``: 1 means it must wait for
its predecessor, larger values mean it may start alongside that many predecessors. The replica's
LOGICAL_CLOCK coordinator (sql/rpl_mta_submode.cc ``Mts_submode_logical_clock``) treats
``last_committed = 0`` and every new file as a barrier (wait for everything before), and otherwise
lets a transaction start once every transaction with ``sequence_number <= last_committed`` is done.
``depth`` is the length of the longest chain under those rules with unlimited workers and equal
costs; ``transactions / depth`` is the ideal speedup the clock allows.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..native.results import NativeClock

#: Histogram buckets of ``sequence_number - last_committed`` (upper bounds, inclusive).
DISTANCE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024)


def bucket_label(upper: int | None, lower: int) -> str:
    if upper is None:
        return f">{lower}"
    return str(upper) if upper == lower + 1 or upper == 1 else f"{lower + 1}-{upper}"


@dataclass
class ClockStats:
    """Streaming statistics of one clock (recorded or computed) over one or more files."""

    transactions: int = 0
    barriers: int = 0              # last_committed == 0 (or no clock): waits for all before it
    parallel: int = 0              # distance > 1: may overlap its predecessor
    distance_sum: int = 0
    histogram: Counter = field(default_factory=Counter)
    depth: int = 0
    _levels: array = field(default_factory=lambda: array("q", [0]), repr=False)
    _file: str | None = field(default=None, repr=False)
    _offset: int = field(default=0, repr=False)

    @classmethod
    def from_native(cls, n: NativeClock) -> "ClockStats":
        """The statistics the native reader kept (``clock.rs``'s ``ClockStats``)."""
        return cls(n.transactions, n.barriers, n.parallel, n.distance_sum, Counter(dict(n.histogram)), n.depth)

    def add(self, file: str, last_committed: int | None, sequence_number: int | None) -> None:
        self.transactions += 1
        if file != self._file:
            # New file: numbering restarts and the replica treats the boundary as a barrier.
            self._file = file
            self._levels = array("q", [self.depth])
            self._offset = 0
        levels = self._levels
        if sequence_number is not None and sequence_number - self._offset != len(levels):
            # A gap or a step back in sequence numbers: the coordinator treats it as a barrier
            # (gap_successor); index the new run from here.
            self._offset = sequence_number - 1
            self._levels = levels = array("q", [self.depth])
            last_committed = 0 if last_committed is not None else None
        if last_committed is None or sequence_number is None:
            self.barriers += 1
            level = self.depth + 1
            levels.append(level)
        else:
            distance = sequence_number - last_committed
            self.distance_sum += distance
            self.histogram[self._bucket(distance)] += 1
            if distance > 1:
                self.parallel += 1
            k = last_committed - self._offset
            if last_committed == 0 or k <= 0:
                self.barriers += 1
                level = self.depth + 1
            else:
                level = levels[min(k, len(levels) - 1)] + 1
            # levels[i] = highest level among sequence numbers <= i + offset (a prefix maximum).
            levels.append(max(level, levels[-1]))
        if level > self.depth:
            self.depth = level

    def end_file(self) -> None:
        """The current file is done: drop its per-sequence-number levels (a new file starts
        from a barrier anyway)."""
        self._file, self._levels, self._offset = None, array("q", [self.depth]), 0

    @staticmethod
    def _bucket(distance: int) -> int:
        for upper in DISTANCE_BUCKETS:
            if distance <= upper:
                return upper
        return 0  # 0 stands for "above the last bucket"

    @property
    def mean_distance(self) -> float:
        n = self.transactions - (self.transactions - sum(self.histogram.values()))
        return self.distance_sum / n if n else 0.0

    @property
    def parallel_share(self) -> float:
        return self.parallel / self.transactions if self.transactions else 0.0

    @property
    def ideal_speedup(self) -> float:
        return self.transactions / self.depth if self.depth else 0.0

    def histogram_rows(self) -> list[tuple[str, int]]:
        rows = []
        lower = 0
        for upper in DISTANCE_BUCKETS:
            rows.append((bucket_label(upper, lower), self.histogram.get(upper, 0)))
            lower = upper
        rows.append((bucket_label(None, lower), self.histogram.get(0, 0)))
        return rows
