"""A lagging replica's backlog read for ``eta``: early, in part, and without taking its cores.

``eta`` must answer while the replica is still behind, so it does not wait for the whole
backlog to be read. Two readers run beside the applier, on threads of lower CPU priority
(:func:`lower_priority`; the estimates themselves keep theirs):

- :class:`SequentialReader` reads the backlog in binlog order from the applier's position
  (``Relay_Log_File``/``Relay_Log_Pos``, the coordinator's checkpoint) or from the start of the
  files, keeping the unapplied transactions' facts. Its prefix is what the applier applies
  first: the ETA's calibration on the applier's progress prices exactly these. When it is done,
  the estimate is over every transaction.
- :func:`read_strata` reads short windows of consecutive transactions spread evenly over the
  backlog's bytes, by seeking into local files (relay logs on the replica's host) and finding
  the next GTID event whose CRC32 footer checks (``Log_event_footer::event_checksum_test``).
  They show what the rest of the backlog costs before it is read.

A window is simulated alone; the backlog's simulated time is extrapolated from the windows by
count (transactions left x mean simulated time per transaction) and by bytes (the backlog's
bytes x simulated time per byte): they differ when the sample's transactions are larger or
smaller than the backlog's, and the difference widens the band (:func:`extrapolate`).
"""

from __future__ import annotations

import io
import os
import statistics
import struct
import threading
import time
import zlib
from dataclasses import dataclass, field

from ..binlog import FileSummary, read_transactions
from ..binlog.scan import Spliced, read_stream
from ..errors import BinlogError
from .build import TrxFacts

HEADER = 19
_FDE, _GTID_TYPES = 15, (33, 34, 42)   # FORMAT_DESCRIPTION, GTID_LOG, ANONYMOUS_GTID_LOG, GTID_TAGGED_LOG
#: Bytes read at each window's start to find a transaction boundary and its transactions.
WINDOW_BYTES = 512 * 1024
#: Transactions kept per window (its first and last are left out: the last may be cut).
WINDOW_TRANSACTIONS = 150


def facts_of(t, file_idx: int) -> TrxFacts:
    """What the simulation needs of one transaction: the recorded clock only (the replica
    schedules by it), rows counted by kind (no row image decoded)."""
    seq = t.sequence_number or 0
    last = t.last_committed if t.last_committed is not None else seq - 1
    return TrxFacts(file_idx, seq, (last, last, last, last), t.commit_ts_us or t.timestamp * 1_000_000,
                    sum(s.inserts for s in t.tables), sum(s.updates for s in t.tables),
                    sum(s.deletes for s in t.tables), t.bytes, tuple(sorted(t.databases)), t.commit_id,
                    t.mariadb_flags, events=t.event_count)


def _no_columns(_tm) -> frozenset:
    return frozenset()


def lower_priority(nice: int) -> None:
    """This thread's CPU priority lowered by ``nice`` (Linux: a thread's own nice value, set
    through its thread id; the rest of the process keeps its priority). Where that is refused,
    nothing changes."""
    if nice <= 0:
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except (AttributeError, OSError):
        pass


@dataclass
class Window:
    """Consecutive transactions of the backlog, simulated alone."""

    facts: list
    nbytes: int
    at: float          # where it starts, as a share of the backlog's bytes (0: the head)


def preamble(f) -> tuple[bytes, bool, int]:
    """A binlog file's bytes before its first transaction (magic, FDEs, Previous_gtids, a
    relay log's Rotate), whether its events carry CRC32 footers (the last FDE's algorithm), and
    the offset of the first GTID event (0: none in the first 64 KiB)."""
    from ..binlog.framing import fde_checksum_alg

    f.seek(0)
    head = f.read(64 * 1024)
    pos, crc = 4, False
    while pos + HEADER <= len(head):
        size = struct.unpack_from("<I", head, pos + 9)[0]
        if size < HEADER or pos + size > len(head):
            break
        t = head[pos + 4]
        if t in _GTID_TYPES:
            return head[:pos], crc, pos
        if t == _FDE:
            crc = fde_checksum_alg(head[pos:pos + size]) == 1
        pos += size
    return head[:pos], crc, 0


def next_boundary(data: bytes, start: int, crc: bool) -> int | None:
    """The offset in ``data`` (from ``start``) of the first GTID event whose length and CRC32
    footer check, or whose two following event headers are plausible (files without checksums)."""
    pos = start
    while True:
        # an event's type byte is its fifth: a candidate at p has its type at p + 4
        hits = [h - 4 for h in (data.find(bytes([t]), pos + 4) for t in _GTID_TYPES) if h >= 0]
        if not hits:
            return None
        p = min(hits)
        pos = p + 1
        if p + HEADER > len(data):
            continue
        size = struct.unpack_from("<I", data, p + 9)[0]
        if not HEADER + 20 <= size <= 1024 or p + size > len(data):
            continue
        event = data[p:p + size]
        if crc:
            if zlib.crc32(event[:-4]) == struct.unpack_from("<I", event, size - 4)[0]:
                return p
        elif _plausible_chain(data, p + size, 2):
            return p


def _plausible_chain(data: bytes, pos: int, n: int) -> bool:
    for _ in range(n):
        if pos + HEADER > len(data):
            return False
        size = struct.unpack_from("<I", data, pos + 9)[0]
        if size < HEADER or data[pos + 4] == 0 or data[pos + 4] > 45:
            return False
        pos += size
    return True


def read_window(path: str, offset: int, is_wanted, idx: int) -> list | None:
    """Up to :data:`WINDOW_TRANSACTIONS` consecutive transactions of ``path`` from the first
    transaction boundary at or after ``offset`` (None: no boundary found, or the bytes there do
    not read as a binlog). ``is_wanted(gtid)`` keeps the unapplied ones."""
    try:
        with open(path, "rb") as f:
            pre, crc, first = preamble(f)
            if not first:
                return None
            f.seek(max(offset, first))
            data = f.read(WINDOW_BYTES)
            p = next_boundary(data, 0, crc)
            if p is None:
                return None
            spliced = Spliced(pre, f, max(offset, first) + p, WINDOW_BYTES - p)
            stream = io.BufferedReader(spliced)
            out = []
            try:
                for t in read_stream(path, stream, FileSummary(path), _no_columns, splice=spliced.splice):
                    if t.incomplete:
                        break
                    if is_wanted(t.gtid):
                        out.append(facts_of(t, idx))
                    if len(out) > WINDOW_TRANSACTIONS:
                        break
            except BinlogError:
                pass
            return out[1:-1] if len(out) > 2 else None
    except OSError:
        return None


def van_der_corput(k: int) -> float:
    """The ``k``-th point (from 1) of the base-2 van der Corput sequence: 0.5, 0.25, 0.75, 0.125,
    ...: each new set of strata falls between the ones before."""
    x, f = 0.0, 0.5
    while k:
        x += f * (k & 1)
        k >>= 1
        f /= 2
    return x


def read_strata(files: list[str], start: tuple[int, int], count: int, is_wanted, phase: float = 0.5) -> list[Window]:
    """``count`` windows spread evenly over the backlog's bytes, from ``start`` (file index,
    offset) to the end of the last file (local files only), the ``k``-th at ``(k + phase) /
    count`` of them."""
    sizes = []
    for i, p in enumerate(files):
        try:
            size = os.path.getsize(p)
        except OSError:
            size = 0
        lo = start[1] if i == start[0] else 0
        sizes.append((i, lo, max(lo, size)) if i >= start[0] else (i, 0, 0))
    total = sum(hi - lo for _, lo, hi in sizes)
    if total <= 0:
        return []
    out = []
    for k in range(count):
        at = (k + phase) / count
        target = total * at
        for i, lo, hi in sizes:
            if target < hi - lo:
                facts = read_window(files[i], lo + int(target), is_wanted, 1_000_000 + k)
                if facts:
                    out.append(Window(facts, sum(f.nbytes for f in facts), at))
                break
            target -= hi - lo
    return out


def backlog_bytes(files: list[str], start: tuple[int, int]) -> int:
    """Bytes from ``start`` (file index, offset) to the end of the last file."""
    total = 0
    for i, p in enumerate(files[start[0]:], start[0]):
        try:
            total += max(0, os.path.getsize(p) - (start[1] if i == start[0] else 0))
        except OSError:
            pass
    return total


def _gtid_at(path: str, pos: int) -> bool:
    """Whether a transaction starts at ``pos`` of ``path`` (a GTID event's header is there)."""
    try:
        with open(path, "rb") as f:
            f.seek(pos)
            h = f.read(HEADER)
    except OSError:
        return False
    return len(h) == HEADER and h[4] in _GTID_TYPES


@dataclass
class SequentialReader:
    """The backlog read in binlog order on a thread of its own: ``facts``/``gtids`` grow as it
    reads (appends are atomic under the GIL; readers take a snapshot of the length). Files before
    ``start`` are skipped; the first is read from ``start``'s offset (a transaction boundary: the
    applier's checkpoint). ``stop()`` ends it early."""

    files: list
    is_wanted: object
    start: tuple[int, int] = (0, 0)
    limit: int | None = None      # stop after this many transactions (a backlog too large to read)
    pause_at: int | None = None   # wait for resume() after this many (the strata read meanwhile)
    nice: int = 0                 # this reader's thread runs at a lower CPU priority
    facts: list = field(default_factory=list)
    gtids: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    done: bool = False
    error: str | None = None
    started_at: float = 0.0
    finished_at: float | None = None

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._go_on = threading.Event()
        self.paused = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lagadvisor-backlog", daemon=True)

    def resume(self) -> None:
        self._go_on.set()

    def begin(self) -> SequentialReader:
        self.started_at = time.time()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._go_on.set()

    def _transactions(self, i: int, path):
        if i == self.start[0] and self.start[1] > 4 and isinstance(path, str) and _gtid_at(path, self.start[1]):
            with open(path, "rb") as f:
                pre, _crc, _first = preamble(f)
                spliced = Spliced(pre, f, self.start[1])
                summary = FileSummary(path)
                yield from read_stream(path, io.BufferedReader(spliced, 1 << 20), summary, _no_columns,
                                       splice=spliced.splice)
        else:
            summary = FileSummary(str(path))
            yield from read_transactions(path, summary, selector=_no_columns)
        self.warnings += summary.warnings

    def _run(self) -> None:
        lower_priority(self.nice)
        try:
            for i, path in enumerate(self.files):
                if i < self.start[0]:
                    continue
                for t in self._transactions(i, path):
                    if self._stop.is_set():
                        return
                    if self.is_wanted(t.gtid):
                        self.facts.append(facts_of(t, i))
                        self.gtids.append(t.gtid.lower())
                        if self.limit is not None and len(self.facts) >= self.limit:
                            return
                        if len(self.facts) == self.pause_at:
                            self.paused.set()
                            self._go_on.wait()
            self.done = True
        except (BinlogError, OSError) as err:
            self.error = str(err)
        finally:
            self.finished_at = time.time()
            self.paused.set()   # a backlog shorter than pause_at: the strata go on


def _sim_s(facts, cfg, cost, commit_times) -> float:
    times = commit_times(facts, cfg, cost)
    return times[-1] / 1e6 if times else 0.0


@dataclass(frozen=True)
class Extrapolation:
    """The simulated seconds of what is left of the backlog under one configuration."""

    sim_s: float
    at_applier_trx_s: float   # simulated seconds per transaction where the applier is now
    band: float               # relative half-width from the sample alone
    by_count_s: float
    by_bytes_s: float | None
    sampled: int              # transactions simulated
    windows: int              # strata beyond the head


def _segments(head: Window, strata: list[Window], head_share: float, sims: list[float]):
    """The backlog as segments ``(lo, hi, s/trx, s/byte)`` over its share 0..1 (by count): the
    head read in order covers ``[0, head_share]``; each stratum beyond it the part of the rest
    nearer to it than to its neighbours (none: the rest is priced like the head, and the band
    says so)."""
    def rate(w, s):
        return s / len(w.facts), (s / w.nbytes if w.nbytes else 0.0)

    segs = [(0.0, head_share, *rate(head, sims[0]))] if head.facts else []
    rest = sorted(((w, s) for w, s in zip(strata, sims[1:]) if w.at >= head_share and w.facts),
                  key=lambda ws: ws[0].at)
    if head_share >= 1.0:
        return segs
    if not rest:
        base = segs[0][2:] if segs else (0.0, 0.0)
        return segs + [(head_share, 1.0, *base)]
    cuts = [head_share] + [(a.at + b.at) / 2 for (a, _), (b, _) in zip(rest, rest[1:])] + [1.0]
    return segs + [(cuts[k], cuts[k + 1], *rate(w, s)) for k, (w, s) in enumerate(rest)]


def _mean_over(segs, lo: float, k: int) -> float:
    """Segment value ``k`` (2: per transaction, 3: per byte) averaged over ``[lo, 1]``."""
    lo = min(lo, segs[-1][1] - 1e-9)
    total = sum((min(hi, 1.0) - max(a, lo)) * seg[k] for seg in segs for a, hi in [seg[:2]] if hi > lo)
    return total / (1.0 - lo) if lo < 1.0 else segs[-1][k]


def extrapolate(head: Window, strata: list[Window], left_start: int, left_now: int, applied_share: float,
                bytes_per_trx: float | None, cfg, cost, commit_times) -> Extrapolation:
    """What is left to apply, in simulated seconds: the head (the backlog read in order from the
    applier's position) and the strata (windows spread over the rest) each simulated alone, as
    segments of the backlog; the segments from ``applied_share`` (what the applier has applied)
    to the end priced per transaction (x ``left_now``) and per byte (x the backlog's bytes per
    transaction x ``left_now``), the two averaged. The band: the strata's standard error (their
    per-transaction costs' spread over the square root of their number, weighted by their share
    of what is left), half of what is left that no window saw (priced like the head), and half
    the disagreement of the two extrapolations, together (root of the sum of squares)."""
    windows = [head, *strata]
    sims = [_sim_s(w.facts, cfg, cost, commit_times) if w.facts else 0.0 for w in windows]
    head_share = min(1.0, len(head.facts) / max(1, left_start))
    segs = _segments(head, strata, head_share, sims)
    if not segs:
        return Extrapolation(0.0, 0.0, 1.0, 0.0, None, 0, 0)
    a = min(max(applied_share, 0.0), 1.0)
    per_trx = _mean_over(segs, a, 2)
    by_count = left_now * per_trx
    per_byte = _mean_over(segs, a, 3)
    by_bytes = left_now * bytes_per_trx * per_byte if bytes_per_trx and per_byte > 0 else None
    at_applier = next((seg[2] for seg in segs if seg[0] <= a < seg[1]), segs[-1][2])
    beyond_head = [(w, s) for w, s in zip(strata, sims[1:]) if w.at >= head_share and w.facts]
    rest = [s / len(w.facts) for w, s in beyond_head]
    left_share = max(1e-9, 1.0 - max(a, 0.0))
    beyond = max(0.0, 1.0 - max(a, head_share)) / left_share   # share of what is left beyond the head
    if len(rest) >= 2 and statistics.fmean(rest) > 0:
        spread = statistics.stdev(rest) / statistics.fmean(rest) / len(rest) ** 0.5 * beyond
    else:  # at most one window beyond the head: what is left there is hardly known
        spread = 0.5 * beyond
    disagree = abs(by_bytes / by_count - 1) / 2 if by_bytes and by_count > 0 else 0.0
    sim_s = (by_count + by_bytes) / 2 if by_bytes is not None else by_count
    return Extrapolation(sim_s, at_applier, (spread ** 2 + disagree ** 2) ** 0.5, by_count, by_bytes,
                         len(head.facts) + sum(len(w.facts) for w, _ in beyond_head), len(rest))
