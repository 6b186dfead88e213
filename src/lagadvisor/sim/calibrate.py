"""Fitting the apply cost model from a replica's own binlog (``log_replica_updates=ON``).

While a replica applies a backlog with one worker, the gap between two consecutive commits
(``immediate_commit_timestamp``, taken at the replica's flush) is the time the applier spent on
the second transaction. Regressing those gaps on each transaction's rows by kind and bytes gives
the per-transaction, per-row and per-byte costs. Gaps are kept only while the replica was behind
(its commit later than the source's by more than ``min_lag_us``), so idle time is not counted;
stalls are kept out of the slopes (:func:`fit_samples`). A gap after a dependency wait also
holds the coordinator's wake-up, measured apart (:func:`take_out_wakeups`). With ``durable`` the intercept holds
the two fsyncs; a ``base`` model from a relaxed run splits it into CPU and fsync time, and the
fsync time into the redo fsync (flush stage) and the binlog fsync (sync stage).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields, replace
from statistics import median, median_high
from typing import TYPE_CHECKING

from ..binlog import FileSummary
from ..binlog.framing import version_tuple
from ..cpus import usable_cpus
from ..errors import ConfigError
from ..kinds import CommitOrderInput, Policy
from .model import CostModel, one_line, workers_text

if TYPE_CHECKING:
    from ..native.results import NativeRecords


@dataclass(frozen=True, slots=True)
class Calibration:
    model: CostModel
    samples: int
    r2: float
    mean_gap_us: float
    stall_factor: float = 1.0
    warnings: tuple[str, ...] = ()   # what reading the files reported (a truncated tail...)
    evidence: dict | None = None     # an N-worker fit's (:func:`fit_workers`)
    notes: tuple[str, ...] = ()      # what the fit decided that the user should know (not a warning)


class Inseparable(ConfigError):
    """The samples cannot separate the cost terms (every transaction of one shape)."""


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-12:
            raise Inseparable("calibration data cannot separate the cost terms (every transaction has "
                              "the same shape?): use a workload with varied transaction sizes")
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


@dataclass(frozen=True, slots=True)
class Wakeups:
    """The coordinator's wake-up after a dependency wait, as a one-worker catch-up shows it
    (:func:`take_out_wakeups`): ``wakeup_us``, whether it was ``measured`` (else the base model's),
    the commit gaps that followed such a wait and those that did not, and ``how`` in words."""

    wakeup_us: float
    measured: bool
    waited: int
    free: int
    how: str


@dataclass(frozen=True, slots=True)
class GapFit:
    """Per-commit gap = intercept + insert*i + update*u + delete*d + byte*b (microseconds)."""

    intercept: float
    insert_us: float
    update_us: float
    delete_us: float
    byte_us: float
    samples: int
    r2: float
    mean_gap_us: float
    stall_factor: float = 1.0   # all gaps' time over the time the stall-free fit explains
    band: float = 0.0           # relative error band of a total time (:func:`held_out_band`)
    wakeups: Wakeups | None = None  # a one-worker binlog's: the dependency waits' wake-up (:func:`take_out_wakeups`)
    mean_rows: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the gaps' mean inserts, updates, deletes
    mean_bytes: float = 0.0     # the gaps' transactions' mean size
    gaps_read: int = 0          # commit gaps read behind the source; ``gaps_fitted`` of them were fitted
    gaps_fitted: int = 0        # (fewer on a long binlog: :data:`MAX_GAPS`)

    def thinned_note(self) -> str | None:
        """What a calibration says when it fitted fewer gaps than it read, else None."""
        if self.gaps_fitted >= self.gaps_read or not self.gaps_fitted:
            return None
        return (f"{self.gaps_read:,} commit gaps were read behind the source; the fit took {self.gaps_fitted:,} "
                f"of them, evenly spread over the binlog (about one in {self.gaps_read / self.gaps_fitted:.0f}), "
                "so that its memory stays bounded; the mean gap is all of them")

    def mean_us(self) -> float:
        """The fitted gap of the mean transaction: the gaps' mean (every fit keeps it, stalls
        included) less the wake-ups taken out of them (:func:`take_out_wakeups`)."""
        i, u, d = self.mean_rows
        return self.intercept + self.insert_us * i + self.update_us * u + self.delete_us * d

    def total(self, samples) -> float:
        """The fitted time of these samples, summed."""
        return sum(self.intercept + self.insert_us * i + self.update_us * u + self.delete_us * d
                   for _, i, u, d, _ in samples)


#: Transactions with rows read before deciding that the binlog was not written by a replica:
#: a replica's own binlog (log_replica_updates=ON) carries the source's original_commit_timestamp,
#: different from its immediate one; a source's has them equal (or none, before 8.0.1). A few
#: local transactions on a replica are tolerated; a whole file is not read to find that out.
SOURCE_PROOF_TRANSACTIONS = 64


class _Spread:
    """At most ``2 * keep`` of the items offered, spread evenly over all of them, in order: past
    that every other one held is dropped and from then on only every ``stride``-th offered is
    kept; :meth:`take` picks ``keep`` of them, evenly spread. Memory stays bounded however many
    are offered (a day of a busy replica's binlog)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.items: list = []
        self.offered = 0
        self.stride = 1     # an offered item is kept when its index is a multiple of this

    def add(self, item) -> None:
        if self.offered % self.stride == 0:
            self.items.append(item)
            if len(self.items) >= 2 * self.keep:
                self.items = self.items[::2]
                self.stride *= 2
        self.offered += 1

    def take(self) -> list:
        """``keep`` of the held items evenly spread (all of them when no more were held)."""
        items = self.items
        if len(items) <= self.keep:
            return items
        step = len(items) / self.keep
        return [items[int(k * step)] for k in range(self.keep)]


#: The most one-worker commit gaps a calibration fits (:meth:`_Gaps.take`): a day of a busy
#: replica's binlog holds tens of millions, which neither fit in memory nor change four costs'
#: least squares; an evenly spread share of them is kept instead (:class:`_Spread`; the held-out
#: band's bootstrap refits these 20 times: 10 s at this many).
MAX_GAPS = 1 << 16


class _Gaps:
    """The commit gaps of one-worker apply, transaction by transaction (see :func:`fit_gaps`),
    each with whether the one-worker coordinator slept on its dependency (:meth:`_waited`); at
    most ``2 * max_gaps`` of them held, spread evenly over the whole binlog (:class:`_Spread`)."""

    def __init__(self, min_lag_us: int, serial_byte_us: float, keep_applied: bool = False,
                 max_gaps: int = MAX_GAPS) -> None:
        self.min_lag_us = min_lag_us
        self.serial_byte_us = serial_byte_us
        #: (gap, inserts, updates, deletes, bytes), waited
        self.gaps = _Spread(max_gaps)
        self.read_us = 0.0     # every gap read, summed: the exact mean gap however many were kept
        self.local = self.replicated = 0
        self.untimed = 0       # of ``local``: with no commit timestamps at all (MariaDB, MySQL < 8.0.1)
        self.prev: int | None = None
        self.prev_seq = 0
        self.file = -1
        #: with ``keep_applied`` (an N-worker catch-up, :func:`fit_workers`): the pieces of it
        #: applied behind the source (bounded: :class:`_Pieces`), instead of one-worker gaps
        self.pieces: _Pieces | None = _Pieces(min_lag_us) if keep_applied else None

    def new_file(self) -> None:
        self.prev = None
        self.prev_seq = 0
        self.file += 1

    def _waited(self, lc: int, seq: int) -> bool:
        """Whether a one-worker applier's coordinator slept on this transaction's dependency: its
        ``last_committed`` reaches the transaction before it, or it is a barrier (the first of a
        file, ``last_committed`` 0, a gap in sequence numbers): sim.build ``logical_clock``'s rule,
        which the engine charges ``wakeup_us`` for (rpl_mta_submode.cc
        ``wait_for_last_committed_trx``). A binlog without a logical clock (MariaDB, 5.6) has no
        such wait."""
        from .build import is_barrier

        if seq <= 0:
            return False
        return is_barrier(lc, seq, self.prev_seq or None) or seq - lc <= 1

    def add(self, path: str, ts: int, orig: int, rows: int, ins: int, upd: int, dele: int, nbytes: int,
            lc: int, seq: int, events: int) -> None:
        if rows and not self.replicated:
            if ts and orig and orig != ts:
                self.replicated += 1
            else:
                self.local += 1
                self.untimed += not (ts and orig)
                if self.local >= SOURCE_PROOF_TRANSACTIONS:
                    if self.untimed == self.local:
                        raise ConfigError(
                            f"{path}: no commit timestamps (the first {self.local} transactions have no "
                            "original_commit_timestamp or immediate_commit_timestamp: a MariaDB binlog, or "
                            "MySQL's before 8.0.1): calibrate needs the binlog of a MySQL 8.0+ replica "
                            "(log_replica_updates=ON) that applied a backlog; or calibrate --host")
                    raise ConfigError(
                        f"{path}: not a replica's binlog (the first {self.local} transactions were committed "
                        "here, none replicated: original_commit_timestamp = immediate_commit_timestamp): "
                        "calibrate from the binlog of a replica (log_replica_updates=ON) that applied a "
                        "backlog")
        waited = self._waited(lc, seq)
        self.prev_seq = seq
        if not ts or not rows:
            self.prev = ts or None
            return
        if self.pieces is not None:
            self.pieces.add((self.file, lc, seq, orig, ts, ins, upd, dele, nbytes, events))
            return
        if self.prev is not None and ts - orig >= self.min_lag_us and ts > self.prev:
            gap = float(ts - self.prev) - self.serial_byte_us * nbytes
            self.gaps.add(((gap, ins, upd, dele, nbytes), waited))
            self.read_us += gap
        self.prev = ts

    @property
    def read(self) -> int:
        """Commit gaps read (kept or not)."""
        return self.gaps.offered

    def take(self) -> tuple[list[tuple[float, int, int, int, int]], list[bool]]:
        """The gaps to fit and their wait flags: at most ``max_gaps``, evenly spread over the
        held ones (all of them when the binlog had no more)."""
        taken = self.gaps.take()
        return [g for g, _ in taken], [w for _, w in taken]


def read_gaps(paths: list[str], min_lag_us: int = 100_000, serial_byte_us: float = 0.0,
              summaries: list[FileSummary] | None = None, on_transaction=None, on_progress=None,
              keep_applied: bool = False, max_gaps: int = MAX_GAPS) -> _Gaps:
    """Read a replica's binlog into :class:`_Gaps` (see :func:`fit_gaps`): a clock-free read
    (``ReadPolicy(clocks=False)``); the native core hands over its per-transaction columns
    file by file, the reference each transaction."""
    from ..depgraph.pipeline import ClockOptions, ClockRun, WrittenPolicy
    from ..depgraph.read import Collectors, ReadPolicy, ReadRequest, read

    gaps = [_Gaps(min_lag_us, serial_byte_us, keep_applied, max_gaps)]
    current: list = [-1, None]  # the native core's file index, the reference's file

    def per_file(i: int, path: str, r: NativeRecords) -> None:  # a chunk of file i's transactions
        if i != current[0]:
            current[0] = i
            gaps[0].new_file()
        for ts, orig, rows, ins, upd, dele, so, eo, lc, seq, ev in zip(
                r.immediate_commit_ts_us, r.original_commit_ts_us, r.rows, r.inserts, r.updates, r.deletes,
                r.start_offset, r.end_offset, r.last_committed, r.sequence_number, r.events):
            gaps[0].add(path, ts, orig, rows, ins, upd, dele, eo - so, lc, seq, ev)

    def observe(_s, t, _ws, _c) -> None:
        if t.file != current[1]:
            if current[1] is None:  # the reference reads the run (again): from no gap
                gaps[0] = _Gaps(min_lag_us, serial_byte_us, keep_applied, max_gaps)
            current[1] = t.file
            gaps[0].new_file()
        if on_transaction is not None:
            on_transaction(t)
        gaps[0].add(t.file, t.immediate_commit_timestamp, t.original_commit_timestamp, t.rows,
                    sum(s.inserts for s in t.tables), sum(s.updates for s in t.tables),
                    sum(s.deletes for s in t.tables), t.bytes, t.last_committed or 0, t.sequence_number or 0,
                    t.event_count)

    # no clock is derived here: the smallest history, the recorded commit order
    run = ClockRun(WrittenPolicy(Policy.NONE, ""), 1, CommitOrderInput.RECORDED)
    r = read(ReadRequest(tuple(paths), ClockOptions(), run, Collectors(records=per_file, observe=observe),
                         ReadPolicy(clocks=False), on_progress))
    if summaries is not None:
        summaries.extend(r.summaries)
    if r.native is None and current[1] is None:  # the reference read no transaction
        return _Gaps(min_lag_us, serial_byte_us, keep_applied, max_gaps)
    return gaps[0]


def fit_gaps(paths: list[str], min_lag_us: int = 100_000, serial_byte_us: float = 0.0,
             summaries: list[FileSummary] | None = None, on_transaction=None, on_progress=None,
             base: CostModel | None = None, max_gaps: int = MAX_GAPS) -> tuple[GapFit, bool]:
    """Regress the one-worker commit gaps of a replica's own binlog; ``serial_byte_us`` (the
    coordinator's measured cost per byte read, serial with the worker when there is one) is
    taken out of each gap first. Each file's :class:`FileSummary` (its warnings) is appended
    to ``summaries`` when given. A binlog not written by a replica is refused after its first
    :data:`SOURCE_PROOF_TRANSACTIONS` transactions with rows, not after the rest of its file.

    The native core reads the files when it can (per-transaction columns, file by file;
    ``on_progress(file, offset)`` now and then); else the reference (``on_transaction(t)`` for
    each transaction read: a progress bar). Both feed the same gaps to the fit.

    When every transaction has one shape (the rows by kind cannot separate the costs), ``base``'s
    costs are scaled by one factor instead (:func:`fit_scaled`, as ``calibrate --host`` does);
    the second value says so. The coordinator's wake-up after a dependency wait is measured and
    taken out of the gaps that hold it first (:func:`take_out_wakeups`; the fit's ``wakeups``):
    the simulation charges it apart. ``mean_gap_us`` is the gaps' own mean. A binlog of more
    than ``max_gaps`` gaps is fitted on an evenly spread share of them (:class:`_Gaps`)."""
    summaries = [] if summaries is None else summaries
    gaps = read_gaps(paths, min_lag_us, serial_byte_us, summaries, on_transaction, on_progress, max_gaps=max_gaps)
    samples, waited = gaps.take()
    if len(samples) < 50:
        raise ConfigError(f"only {len(samples)} usable commit gaps: calibrate from the binlog of a replica "
                          "(log_replica_updates=ON) that applied a backlog with one worker")
    base = base or CostModel()
    writeset_only = all(version_tuple(s.server_version) >= (8, 4, 0) for s in summaries
                        if s.server_version and "mariadb" not in s.server_version.lower())
    mean_gap = gaps.read_us / gaps.read
    samples, wakeups = take_out_wakeups(samples, waited, base, chain_is_dependency=writeset_only)
    fit, scaled = fit_any(samples, base)
    band, _checks = held_out_band(samples, fit=(lambda s, m: fit_scaled(s, base, m)) if scaled else None)
    n = len(samples)
    rows = tuple(sum(x[k] for x in samples) / n for k in (1, 2, 3))
    return replace(fit, band=band, wakeups=wakeups, mean_gap_us=mean_gap, mean_rows=rows,
                   mean_bytes=sum(x[4] for x in samples) / n, gaps_read=gaps.read, gaps_fitted=n), scaled


#: The fewest commit gaps of each kind (after a dependency wait, and not) from which
#: :func:`take_out_wakeups` measures the wake-up.
MIN_WAKE_GAPS = 50


def take_out_wakeups(samples: list[tuple[float, int, int, int, int]], waited: list[bool], base: CostModel, *,
                     chain_is_dependency: bool = True) -> tuple[list[tuple[float, int, int, int, int]], Wakeups]:
    """The one-worker gaps without the coordinator's wake-up, and that wake-up.

    With one worker, a transaction whose ``last_committed`` reaches the one before it waits for
    that commit: the coordinator sleeps (``wait_for_last_committed_trx``) and the gap holds its
    wake-up and the worker's; a transaction free of it was queued while its predecessor committed.
    The simulation charges that wake-up (``CostModel.wakeup_us``) on top of the transaction's
    costs, so the fitted costs must not hold it too (a conflict-heavy replica's calibration
    would pay it twice). With :data:`MIN_WAKE_GAPS` gaps of each kind it is measured: the median
    residual of the waited gaps less that of the free ones, both against the costs fitted on the
    free gaps alone (medians: a stall does not move it). With only waited gaps (a chain) the
    base model's is taken out, when ``chain_is_dependency`` (a replica whose clock comes from
    writesets, 8.4 and later: a replica tracking COMMIT_ORDER gives every transaction of a
    one-worker catch-up ``last_committed`` = the one before, chain or not); else nothing is."""
    n = len(samples)
    n_wait = sum(1 for w in waited if w)
    free = [s for s, w in zip(samples, waited) if not w]
    if n_wait >= MIN_WAKE_GAPS and len(free) >= MIN_WAKE_GAPS:
        fit, _ = fit_any(free, base)
        res = _residuals(samples, [fit.intercept, fit.insert_us, fit.update_us, fit.delete_us])
        wake = max(0.0, median(r for r, w in zip(res, waited) if w) - median(r for r, w in zip(res, waited) if not w))
        how = (f"measured: {n_wait:,} commit gaps after a dependency wait against {len(free):,} without, "
               f"{wake:.1f} us more (the base model's: {base.wakeup_us:g} us)")
        out = Wakeups(round(wake, 2), True, n_wait, len(free), how)
    elif n_wait and not free and chain_is_dependency:
        out = Wakeups(base.wakeup_us, False, n_wait, 0, f"every one of the {n:,} commit gaps followed a dependency "
                      f"wait (a chain): the base model's wake-up, {base.wakeup_us:g} us, was taken out of each, "
                      "not measured (a one-worker catch-up with free transactions too measures it)")
    else:
        why = ("the replica's clock may be its commit order, not the dependencies"
               if n_wait and not free else f"{n_wait:,} gaps after a dependency wait, {len(free):,} without")
        return samples, Wakeups(base.wakeup_us, False, n_wait, len(free),
                                f"not measured ({why}): the base model's, {base.wakeup_us:g} us, nothing taken out")
    wake = out.wakeup_us
    return [(g - wake, i, u, d, b) if w else (g, i, u, d, b)
            for (g, i, u, d, b), w in zip(samples, waited)], out


def _ols(rows: list[tuple[float, int, int, int, int]]) -> list[float]:
    """Least squares; a row kind no transaction has (no deletes at all) gets 0 and is left out."""
    xs = [(1.0, float(i), float(u), float(d)) for _, i, u, d, _ in rows]
    cols = [0] + [c for c in (1, 2, 3) if any(x[c] for x in xs)]
    ata = [[sum(x[r] * x[c] for x in xs) for c in cols] for r in cols]
    aty = [sum(x[r] * g for x, (g, *_) in zip(xs, rows)) for r in cols]
    coef = [0.0] * 4
    for c, v in zip(cols, _solve(ata, aty)):
        coef[c] = v
    return coef


def _residuals(rows: list[tuple[float, int, int, int, int]], coef: list[float]) -> list[float]:
    return [g - (coef[0] + coef[1] * i + coef[2] * u + coef[3] * d) for g, i, u, d, _ in rows]


def fit_samples(samples: list[tuple[float, int, int, int, int]], stall_mads: float = 4.0) -> GapFit:
    """Per-row costs from (gap, inserts, updates, deletes, bytes) samples.

    Stalls (a checkpoint, a page-cleaner burst) are gaps far above what the transaction's rows
    explain: they are found by their residual (more than ``stall_mads`` robust standard
    deviations above the median residual, over three refits), not by the gap itself, which
    would drop the largest transactions and bias the slopes down and the intercept up. The fit
    comes from the rest. Stalls are still time the replica spends, and background work (purge,
    page flushing, checkpoints) grows with the work applied: every coefficient is scaled by
    ``stall_factor`` (mean gap over mean fitted gap, all samples), so the fit's mean is the mean
    of every gap and the one-worker time of the calibration run is kept.

    Bytes grow with rows in practice (row images), so a byte term is not identifiable next to
    the per-row terms: it is left at 0 and the per-row costs carry the per-byte cost."""
    if len(samples) < 8:
        raise ConfigError(f"only {len(samples)} commit gaps: too few to fit")
    kept = samples
    coef = _ols(kept)
    for _ in range(3):
        res = _residuals(samples, coef)
        med = median_high(res)
        sigma = 1.4826 * median_high([abs(r - med) for r in res])
        kept = [s for s, r in zip(samples, res) if r <= med + stall_mads * sigma] if sigma > 0 else samples
        if len(kept) < 8:
            kept = samples
        coef = _ols(kept)
    res_kept = _residuals(kept, coef)
    mean_kept = sum(g for g, *_ in kept) / len(kept)
    ss_res = sum(r * r for r in res_kept)
    ss_tot = sum((g - mean_kept) ** 2 for g, *_ in kept) or 1.0
    coef = [max(0.0, c) for c in coef]
    n = len(samples)
    mean = sum(g for g, *_ in samples) / n
    fitted = sum(coef[0] + coef[1] * i + coef[2] * u + coef[3] * d for _, i, u, d, _ in samples) / n
    stall = mean / fitted if fitted > 0 else 1.0
    intercept, ins, upd, dele = (c * stall for c in coef)
    return GapFit(intercept, ins, upd, dele, 0.0, len(kept), 1 - ss_res / ss_tot, mean, stall)


def fixed_of(base: CostModel) -> float:
    """A model's per-transaction cost outside the rows in a one-worker commit gap: the worker's and
    the commit's (the coordinator's read overlaps the apply: sim/engine.py, issue 33)."""
    return base.trx_us + base.commit_alone_us()


def fit_scaled(samples: list[tuple[float, int, int, int, int]], base: CostModel, stall_mads: float = 4.0) -> GapFit:
    """When the samples cannot separate the costs (every transaction of one shape, as sysbench's
    oltp_write_only: 2 updates, 1 delete, 1 insert), ``base``'s costs scaled by one factor: the
    kept samples' mean over what ``base`` gives them. Stalls are left out by the ratio's robust
    spread and counted in ``stall_factor`` as :func:`fit_samples` does."""
    if len(samples) < 8:
        raise ConfigError(f"only {len(samples)} commit gaps: too few to fit")
    fixed = fixed_of(base)
    pred = [fixed + base.insert_us * i + base.update_us * u + base.delete_us * d for _, i, u, d, _ in samples]
    if min(pred) <= 0:
        raise ConfigError("the base model gives these transactions no cost: cannot scale it")
    ratios = [g / p for (g, *_), p in zip(samples, pred)]
    med = median_high(ratios)
    sigma = 1.4826 * median_high([abs(r - med) for r in ratios])
    kept = [k for k, r in enumerate(ratios) if sigma <= 0 or r <= med + stall_mads * sigma]
    scale = sum(samples[k][0] for k in kept) / sum(pred[k] for k in kept)
    mean = sum(g for g, *_ in samples) / len(samples)
    stall = mean / (scale * sum(pred) / len(pred))
    s = scale * stall
    return GapFit(fixed * s, base.insert_us * s, base.update_us * s, base.delete_us * s, 0.0, len(kept), 0.0, mean,
                  stall)


def fit_any(samples: list[tuple[float, int, int, int, int]], base: CostModel,
            stall_mads: float = 4.0) -> tuple[GapFit, bool]:
    """:func:`fit_samples`, or :func:`fit_scaled` when the shapes cannot separate the costs;
    and whether it was scaled."""
    try:
        return fit_samples(samples, stall_mads), False
    except Inseparable:
        return fit_scaled(samples, base, stall_mads), True


def _total_error(train: list, test: list, stall_mads: float, fit=None) -> float:
    """Relative error of the total time of ``test`` predicted by the fit of ``train``."""
    predicted = (fit or fit_samples)(train, stall_mads).total(test)
    measured = sum(g for g, *_ in test)
    return (predicted - measured) / measured if measured > 0 else 0.0


#: Bootstrap resamples of the band's coefficient term (seeded: the band is deterministic).
BAND_RESAMPLES = 20


def held_out_band(samples: list[tuple[float, int, int, int, int]], stall_mads: float = 4.0,
                  fit=None) -> tuple[float, dict]:
    """The error band of a total time predicted from these samples: the largest of three
    checks, as a fraction (0.12 = +-12%) and the checks themselves.

    * ``interleaved``: fit on every other sample, predict the total of the rest (how well the
      per-row costs carry over to other transactions of the same workload);
    * ``time_split``: fit on the first half in time, predict the second half (drift of the
      machine within the window: a disk's fsync latency, a neighbour's CPU);
    * ``bootstrap``: twice the relative standard deviation of the fitted total over
      :data:`BAND_RESAMPLES` resamples (the residuals' spread: a low R^2 widens it).

    It says how far the calibration's own data disagree with themselves; a workload of another
    shape, or another day of the machine, can be further off (docs/accuracy.md, "Live calibration checked")."""
    import random

    n = len(samples)
    if n < 32:
        return 0.0, {}
    fit = fit or fit_samples   # fit(samples, stall_mads) -> GapFit: fit_samples, or a scaled base
    checks = {"interleaved": _total_error(samples[0::2], samples[1::2], stall_mads, fit),
              "time_split": _total_error(samples[: n // 2], samples[n // 2:], stall_mads, fit)}
    rnd = random.Random(15)
    measured = sum(g for g, *_ in samples)
    totals = []
    for _ in range(BAND_RESAMPLES):
        totals.append(fit([samples[rnd.randrange(n)] for _ in range(n)], stall_mads).total(samples))
    mean = sum(totals) / len(totals)
    sd = (sum((t - mean) ** 2 for t in totals) / (len(totals) - 1)) ** 0.5
    checks["bootstrap"] = 2 * sd / measured if measured > 0 else 0.0
    return max(abs(v) for v in checks.values()), {k: round(v, 4) for k, v in checks.items()}


#: An N-worker catch-up is cut into pieces of this many consecutive lagging transactions, each
#: simulated as a catch-up of its own; at most :data:`MAX_PIECES` of them, spread over the run.
PIECE = 500
MAX_PIECES = 12
#: The fewest pieces a fit takes (its held-out checks split them in two twice), and the fewest
#: transactions a piece of a short episode keeps when its pieces are halved to reach that many.
MIN_PIECES = 4
MIN_PIECE = PIECE // 4


class _Pieces:
    """The pieces of a catch-up applied while the replica was behind (lag ``immediate -
    original`` >= ``min_lag_us``), collected as the binlog is read: runs of consecutive
    transactions of one file, cut into pieces of ``piece`` (a shorter rest of at least
    ``piece // 2`` is a piece too). Memory stays bounded: at most ``2 * keep`` pieces are held,
    spread evenly over the run (:class:`_Spread`); :meth:`take` picks ``keep`` of them, evenly
    spread. A transaction is
    (file, last_committed, sequence_number, original ts, immediate ts, inserts, updates,
    deletes, bytes, events)."""

    def __init__(self, min_lag_us: int, piece: int = PIECE, keep: int = MAX_PIECES) -> None:
        self.min_lag_us, self.piece = min_lag_us, piece
        self.cur: list[tuple] = []
        self.done = _Spread(keep)   # the closed pieces

    def add(self, a: tuple) -> None:
        cur = self.cur
        behind = a[4] - a[3] >= self.min_lag_us
        if cur and (not behind or a[0] != cur[-1][0] or a[4] < cur[-1][4]):
            self._close()
        if behind:
            self.cur.append(a)
            if len(self.cur) == self.piece:
                self._close()

    def _close(self) -> None:
        if len(self.cur) >= self.piece // 2:
            self.done.add(self.cur)
        self.cur = []

    def take(self) -> list[list[tuple]]:
        if self.cur:
            self._close()
        pieces = self.done.take()
        if len(pieces) < MIN_PIECES:
            # A short episode: its pieces halved, as long as each half keeps MIN_PIECE transactions
            # (the held-out checks need MIN_PIECES pieces).
            halves = [h for p in pieces for h in (p[:len(p) // 2], p[len(p) // 2:])]
            if len(halves) >= MIN_PIECES and all(len(h) >= MIN_PIECE for h in halves):
                pieces = halves
        return pieces


def lagging_pieces(applied, min_lag_us: int, piece: int = PIECE) -> list[list[tuple]]:
    """The pieces :class:`_Pieces` takes from these transactions."""
    out = _Pieces(min_lag_us, piece)
    for a in applied:
        out.add(a)
    return out.take()


class _Piece:
    """A piece ready to simulate: its transactions as facts (built once per fit) and the
    replica's commit times of them."""

    def __init__(self, trxs: list[tuple]) -> None:
        from array import array

        from .columns import FactColumns, FactList

        def col(k: int) -> array:
            return array("q", [a[k] for a in trxs])

        lc, zeros = col(1), array("q", bytes(8 * len(trxs)))
        # as columns, so the simulation's input is built by the native core when it is loaded
        # (sim.build.logical_clock: the same numbers; a fit simulates each piece thousands of times)
        self.facts = FactList(FactColumns(col(0), col(2), lc, lc, lc, lc, col(3), col(5), col(6), col(7), col(8),
                                          zeros, zeros, zeros, zeros, col(9), dbsets=[()]))
        self.imm = [a[4] for a in trxs]

    def commits(self, model: CostModel, workers: int, durable: bool):
        """The simulated commit times (us), as a catch-up with ``workers`` workers scheduled by
        the replica's own recorded clock."""
        from .build import logical_clock
        from .engine import simulate
        from .model import ReplicaConfig

        return simulate(logical_clock(self.facts, Policy.RECORDED, model, catch_up=True),
                        ReplicaConfig(workers, True, durable), model).commit_us

    @property
    def measured_us(self) -> int:
        return self.imm[-1] - self.imm[0]

    def take_out_stalls(self, model: CostModel, workers: int, durable: bool) -> list[tuple[int, int, float]]:
        """Take the replica's stalls out of this piece's commit times: a gap between two commits
        at least :data:`STALL_US` longer than ``model``'s simulated gap there and
        :data:`STALL_RATIO` times it (every commit held, not a large transaction the model
        prices a little short); the commits after it move back by the excess. Returns each
        stall's (transaction in the piece, measured gap, simulated gap), in microseconds."""
        sim = self.commits(model, workers, durable)
        out, shift, imm = [], 0, list(self.imm)
        for k in range(1, len(imm)):
            gap, want = self.imm[k] - self.imm[k - 1], max(0.0, sim[k] - sim[k - 1])
            if gap - want >= STALL_US and gap >= STALL_RATIO * want:
                out.append((k, gap, want))
                shift += gap - int(want)
            imm[k] = self.imm[k] - shift
        self.imm = imm
        return out


#: A stall of an N-worker catch-up (:meth:`_Piece.take_out_stalls`): a commit gap this much longer
#: than the fitted simulation's and :data:`STALL_RATIO` times it. The 16-core lab's were 100 ms
#: (InnoDB's GTID persister holding the binlog group commit for its timer, docs/accuracy.md) in
#: catch-ups of 15-60 us a commit; its largest transactions (2,000 rows, 41-51 ms) are priced
#: within a few ms of that.
STALL_US = 20_000
STALL_RATIO = 5.0


#: The workers' CPU costs: per transaction, row, byte, scanned row, foreign-key check, index
#: entry, event, durable byte, and the multi-worker costs, per transaction and per switch (what :func:`_scaled` and :func:`worker_share` scale as the
#: workers' CPU).
WORKER_COSTS = ("trx_us", "insert_us", "update_us", "delete_us", "byte_us", "scan_row_us", "fk_check_us",
                "index_entry_us", "event_us", "durable_byte_us", "multi_worker_us", "switch_us")


def _workers_scaled(model: CostModel, f: float, **more) -> CostModel:
    """``model`` with its :data:`WORKER_COSTS` times ``f`` (and the fields in ``more`` set)."""
    return replace(model, **{k: getattr(model, k) * f for k in WORKER_COSTS}, **more)


def _scaled(base: CostModel, cpu: float, commit: float, fsync: float, wake: float = 1.0) -> CostModel:
    """``base`` on a replica whose CPU is ``cpu`` times as slow: every CPU cost (the workers',
    the coordinator's, the commit stage's) scaled by it, the commit stage's by ``commit`` more,
    the fsyncs by ``fsync``, and the two thread wake-up latencies a dependency chain pays
    (``wakeup_us``, ``handoff_us``) by ``wake``. The base's structure (which share of the work is
    serial, what grows with concurrency) is kept: it is what carries a fit of one worker count to
    the others (issue 33)."""
    return _workers_scaled(base, cpu, dispatch_us=base.dispatch_us * cpu,
                           dispatch_event_us=base.dispatch_event_us * cpu, dispatch_byte_us=base.dispatch_byte_us * cpu,
                           commit_us=base.commit_us * cpu * commit,
                           commit_group_us=base.commit_group_us * cpu * commit,
                           redo_flush_us=base.redo_flush_us * fsync, flush_us=base.flush_us * fsync,
                           fsync_byte_us=base.fsync_byte_us * fsync,
                           wakeup_us=base.wakeup_us * wake, handoff_us=base.handoff_us * wake)


#: Transactions per block of a piece whose commit-to-commit times are matched: a block of heavy
#: transactions takes longer than one of light ones when the workers' CPU limits the catch-up,
#: not when the serial commit stage does; that is what tells the two costs apart.
BLOCK = 25


def _errors(pieces, params, base, workers, durable, blocks: bool = False) -> list[float]:
    """Each piece's relative time error (first commit to last), or with ``blocks`` each block's
    error relative to its piece's mean block time."""
    model = _scaled(base, *params)
    out = []
    for p in pieces:
        measured = p.measured_us
        if measured <= 0:
            continue
        sim = p.commits(model, workers, durable)
        if not blocks:
            out.append((sim[-1] - sim[0] - measured) / measured)
            continue
        last = len(p.imm) - 1
        ends = range(0, last, BLOCK)
        mean = measured / len(ends)
        for k in ends:
            j = min(k + BLOCK, last)
            out.append(((sim[j] - sim[k]) - (p.imm[j] - p.imm[k])) / mean)
    return out


#: How firmly the commit stage keeps ``base``'s share of the CPU (a penalty on the log of its own
#: scale): a catch-up of many workers barely tells the serial commit from the workers' CPU, and a
#: free fit traded one for the other (issue 33: fitted to a 16-worker catch-up, it predicted the
#: same replica's one-worker time +138%); an episode whose commit stage clearly differs still moves it.
COMMIT_PRIOR = 0.01

#: How firmly the CPU and fsync scales keep ``base``'s (the same penalty on their logs). Along the
#: valley where one trades for the other (a dependency-bound catch-up's time is its chain's CPU plus
#: fsyncs) the blocks' noise used to pick the point: fitted on the 16-core lab's hot-row durable
#: catch-up at 16 workers the CPU went to 0.28x and the fsyncs to 1.41x (bench/manycore_16core_calibrate.json
#: before this prior); a replica whose CPU or disk really differs (a 2x slower CPU misses its blocks by
#: tens of percent) still moves them.
SCALE_PRIOR = 0.01


def _search(pieces, base: CostModel, workers: int, durable: bool,
            threads: int | None = None, chains: bool | None = None) -> tuple[float, float, float, float]:
    """(CPU scale, commit-stage scale on top of it, fsync scale, wake-up scale) minimising the blocks'
    squared time errors: a grid over the first three at once (the costs trade against each other
    along a valley, which a search one cost at a time does not follow), then, when the catch-up's
    dependency chains show the wake-up latencies (:func:`wake_share`), a grid of them against the
    CPU, then finer grids around the best over all four (deterministic).
    A cost the catch-up cannot tell (the workers' CPU when the commit stage limits everything)
    stays near ``base``'s: a penalty on moving the scales away from 1 (:data:`SCALE_PRIOR`,
    :data:`COMMIT_PRIOR`). ``threads``: see :class:`_grid_threads`; ``chains``: whether the wake-ups
    are fitted (default: :func:`wake_share` of these pieces at least :data:`WAKE_SEEN`)."""
    import itertools

    def loss(p) -> float:
        errs = _errors(pieces, p, base, workers, durable, blocks=True)
        return (sum(e * e for e in errs) / max(1, len(errs))
                + SCALE_PRIOR * (math.log(p[0]) ** 2 + math.log(p[2]) ** 2 + math.log(p[3]) ** 2) + COMMIT_PRIOR * math.log(max(p[1], 1 / 64)) ** 2)

    cpus = [2 ** (k / 2) for k in range(-8, 7)]                    # 1/16 .. 8 x base
    commits = [0.0] + [2 ** (k / 2) for k in range(-10, 9)]       # 0, 1/32 .. 16 x base (after cpu)
    if base.commit_alone_us() <= 0:
        commits = [1.0]
    fsyncs = [2 ** (k / 2) for k in range(-4, 5)] if durable else [1.0]
    if chains is None:
        chains = wake_share(pieces, base, workers, durable) >= WAKE_SEEN
    with _grid_threads(threads) as run:
        best, params = min(run(loss, itertools.product(cpus, commits, fsyncs, [1.0])))
        if chains:   # then the wake-ups, with the CPU they trade against
            best, params = min([(best, params)] + run(loss, itertools.product(
                [params[0] * 2 ** (k / 4) for k in range(-4, 5)], [params[1]], [params[2]], WAKES)))
        for width in (1.41, 1.19, 1.09, 1.04):
            steps = [width ** (j / 2) for j in range(-2, 3)]
            grid = itertools.product([params[0] * f for f in steps],
                                     [params[1] * f for f in steps] if params[1] > 0 else [0.0, 1 / 64, 1 / 32],
                                     [params[2] * f for f in steps] if durable else [1.0],
                                     [params[3] * f for f in steps[1:4]] if chains else [1.0])
            best, params = min([(best, params)] + run(loss, grid))
    return params


def _anchored(pieces, params: tuple[float, float, float, float], base: CostModel, workers: int, durable: bool,
              wakes: bool) -> tuple[float, float, float, float]:
    """``params`` (:func:`_search`'s scales) with every time they set, the CPU (the commit stage's
    with it), the fsyncs and, when fitted, the wake-ups, times one factor, so that the pieces'
    simulated time, first commit to last, summed, is their measured time. The blocks' squared
    errors tell the costs apart but are not the catch-up's time: fitted to them, the 16-core lab's
    16-worker calibrations gave their own pieces a median 2.6% less time than they took, up to 21% (a block
    stretched by a large transaction or the machine's jitter weighs more than the many it
    outweighs). Each simulated time is piecewise linear in the factor; a few secant steps reach it."""
    def times(f: float) -> tuple[float, float, float, float]:
        return (params[0] * f, params[1], params[2] * f if durable else params[2], params[3] * f if wakes else params[3])

    def total(f: float) -> float:
        model = _scaled(base, *times(f))
        return sum(s[-1] - s[0] for s in (p.commits(model, workers, durable) for p in pieces))

    want = sum(p.measured_us for p in pieces)
    have = total(1.0)
    if want <= 0 or have <= 0:
        return params
    lo, f_lo, f = 1.0, have, want / have
    for _ in range(ANCHOR_STEPS):
        got = total(f)
        if abs(got - want) <= ANCHOR_TOLERANCE * want or got == f_lo:
            break
        lo, f_lo, f = f, got, max(f / 4, min(f * 4, f + (want - got) * (f - lo) / (got - f_lo)))
    return times(f)


#: :func:`_anchored`'s secant steps at most, and how close to the measured time it stops.
ANCHOR_STEPS = 6
ANCHOR_TOLERANCE = 0.002


#: The wake-up scales the fit tries (:func:`_search`): a quarter of the base's to twice it. The
#: 16-core lab's timelines put the coordinator's wake-up (a commit to the next start on a worker)
#: of one backlog at 36-77 us on five loans of the same VM type (bench/manycore/timeline.py), and a
#: dependency chain pays it on every transaction.
WAKES = [2 ** (k / 2) for k in range(-4, 3)]
#: A catch-up shows its wake-up latencies when doubling them moves its simulated time by this
#: share of a doubling or more (:func:`wake_share`); else they keep the base model's.
WAKE_SEEN = 0.05


def wake_share(pieces, model: CostModel, workers: int, durable: bool) -> float:
    """d log(time) / d log(wake-up latencies) of these pieces simulated with ``workers`` workers:
    what share of the catch-up a dependency chain's wake-ups are."""
    return _elasticity(pieces, model, _scaled(model, 1.0, 1.0, 1.0, 2.0), 2.0, workers, durable)


def _elasticity(pieces, model: CostModel, changed: CostModel, f: float, workers: int, durable: bool) -> float:
    """d log(time) / d log(f) of these pieces simulated with ``workers`` workers, where ``changed``
    is ``model`` with some of its costs times ``f`` (:func:`wake_share`, :func:`worker_share`)."""
    def total(m: CostModel) -> float:
        return sum(c[-1] - c[0] for c in (p.commits(m, workers, durable) for p in pieces))

    t0, t1 = total(model), total(changed)
    return math.log(t1 / t0) / math.log(f) if t0 > 0 and t1 > 0 else 0.0


class _grid_threads:
    """``run(loss, grid)`` -> ``[(loss(p), p) for p in grid]``, on a thread per core when the
    native engine is loaded: its ``sim_run`` lets go of the GIL, and a fit simulates each piece
    thousands of times. The losses are the same numbers in any order, so the fit is too.
    ``threads`` overrides the count (1: none)."""

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads

    def __enter__(self):
        from .engine import NATIVE

        n = self.threads or (min(8, usable_cpus()) if NATIVE is not None else 1)
        if n <= 1:
            self.pool = None
            return lambda loss, grid: [(loss(p), p) for p in grid]
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(n)

        def run(loss, grid):
            grid = list(grid)
            return list(zip(self.pool.map(loss, grid), grid))
        return run

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.shutdown()


#: How much a worker-CPU change moves a time: the :data:`WORKER_COSTS` times this, every serial
#: cost as it is (:func:`worker_share`).
WORKER_PROBE = 1.25
#: A calibration says so when the one-worker time leans on the workers' CPU by this much more than
#: the catch-up it fitted did (:func:`unseen_workers_note`): the 16-core lab's uniform backlog,
#: coordinator-bound at 16 workers, moved 0.05 with the workers' CPU against about 0.75 at one
#: worker, and its calibrations predicted 1-4 workers 24-33% fast (bench/manycore_16core*_calibrate.json).
UNSEEN_WORKERS = 0.4


def worker_share(pieces, model: CostModel, workers: int, durable: bool) -> float:
    """d log(time) / d log(workers' CPU) of these pieces simulated with ``workers`` workers: 1 when
    the workers' CPU is all a catch-up waits for, 0 when a serial stage (the coordinator, the commit
    stage, the fsyncs) or the dependencies bound it whatever the workers cost."""
    return _elasticity(pieces, model, _workers_scaled(model, WORKER_PROBE), WORKER_PROBE, workers, durable)


def unseen_workers_note(shares: dict) -> str | None:
    """The calibration's note when its catch-up barely showed the workers' CPU that the one-worker
    time rests on (``shares``: :func:`worker_share` at the calibrated count and at one worker), else None."""
    seen, alone = shares["calibrated"], shares["one_worker"]
    if alone - seen < UNSEEN_WORKERS:
        return None
    return (f"the catch-up hardly showed the workers' CPU: {WORKER_PROBE - 1:.0%} more of it moves its simulated "
            f"time by {WORKER_PROBE ** seen - 1:.0%}, a one-worker catch-up's by {WORKER_PROBE ** alone - 1:.0%}; "
            "the fit scaled the workers with the serial stages it was bound by, so times at fewer workers rest on "
            "the base model's ratio of the two (the 16-core lab's coordinator-bound backlog: 24-33% fast at 1-4 "
            "workers); for those, calibrate on a catch-up applied with fewer workers")


def fit_workers(pieces: list[list[tuple]], workers: int, *, durable: bool, base: CostModel,
                min_lag_us: int = 100_000) -> tuple[CostModel, dict]:
    """A cost model from a catch-up applied with ``workers`` >= 2 workers (issue 15 part 2).

    With several workers the commit gaps are not one transaction's apply time: the workers
    overlap, and what limits them (the serial commit stage, the cores, the dependencies) is what
    the simulation models. So the fit goes through the simulation: the catch-up's ``pieces``
    (:class:`_Pieces`; ``min_lag_us`` is only named in the error), each simulated with ``workers`` workers, scheduled by the
    replica's own recorded clock, and the model's worker CPU (per row, in ``base``'s
    proportions), its serial ``commit_us``, durable, its fsync times and, where its dependency
    chains show them, the wake-up latencies they pay (``wakeup_us``, ``handoff_us``: :func:`wake_share`)
    are scaled until the simulated times of the pieces match the measured ones (:func:`_search`: their
    blocks, which tell the costs apart), then together until the pieces' summed time is theirs
    (:func:`_anchored`: the catch-up's own time). The held-out checks
    (fit on every other piece, predict the rest; fit on the first half, predict the second) give
    the error band. Returns the model and the evidence."""
    if len(pieces) < MIN_PIECES:
        raise ConfigError(f"only {sum(map(len, pieces))} transactions applied while the replica was behind, in "
                          f"{len(pieces)} pieces of up to {PIECE}: calibrate from a longer lag episode (at least "
                          f"{2 * PIECE} transactions in a row applied at least {min_lag_us / 1e6:g} s behind the "
                          "source)")
    n = sum(map(len, pieces))
    pieces = [_Piece(p) for p in pieces]
    chain_share = wake_share(pieces, base, workers, durable)
    chains = chain_share >= WAKE_SEEN
    cpu, commit, fsync, wake = _search(pieces, base, workers, durable, chains=chains)
    spans = sum(p.measured_us for p in pieces)
    first = _scaled(base, cpu, commit, fsync, wake)
    stalls = [s for p in pieces for s in p.take_out_stalls(first, workers, durable)]
    if stalls:   # fitted again on the time between them (the first fit's scales found them)
        cpu, commit, fsync, wake = _search(pieces, base, workers, durable, chains=chains)
    cpu, commit, fsync, wake = _anchored(pieces, (cpu, commit, fsync, wake), base, workers, durable, chains)
    errs = _errors(pieces, (cpu, commit, fsync, wake), base, workers, durable)

    def held_out(train, test) -> float:
        p = _anchored(train, _search(train, base, workers, durable, chains=chains), base, workers, durable, chains)
        sim = sum((1 + e) * t.measured_us for e, t in zip(_errors(test, p, base, workers, durable), test))
        meas = sum(t.measured_us for t in test)
        return (sim - meas) / meas if meas else 0.0

    half = len(pieces) // 2
    checks = {"interleaved": held_out(pieces[0::2], pieces[1::2]), "time_split": held_out(pieces[:half], pieces[half:])}
    stalled_us = sum(g - w for _, g, w in stalls)
    stall_share = stalled_us / spans if spans else 0.0
    # The stalls are not in the fit, but a catch-up like this one may stall as it did: the band
    # holds their share of its time too (in quadrature with the held-out checks').
    band = math.hypot(max(abs(v) for v in checks.values()), stall_share)
    model = replace(_scaled(base, cpu, commit, fsync, wake), error_band=round(band, 4))
    mean = sum(errs) / len(errs)
    evidence = {"workers": workers, "pieces": len(pieces), "transactions": n,
                "cpu_scale": round(cpu, 4), "commit_scale": round(commit, 4),
                "commit_us": round(model.commit_us, 2), "commit_group_us": round(model.commit_group_us, 2),
                "fsync_scale": round(fsync, 4),
                "wake": {"scale": round(wake, 4), "share": round(chain_share, 3), "fitted": chains,
                         "wakeup_us": round(model.wakeup_us, 1), "handoff_us": round(model.handoff_us, 1)},
                "piece_error_mean": round(mean, 4),
                "piece_error_rms": round((sum(e * e for e in errs) / len(errs)) ** 0.5, 4),
                "held_out": {k: round(v, 4) for k, v in checks.items()}, "error_band": round(band, 4),
                "worker_cpu_share": {"calibrated": round(worker_share(pieces, model, workers, durable), 3),
                                     "one_worker": round(worker_share(pieces, model, 1, durable), 3)},
                "stalls": {"count": len(stalls), "gaps_ms": [round(g / 1e3, 1) for _, g, _ in stalls],
                           "seconds": round(stalled_us / 1e6, 4), "share": round(stall_share, 4)}}
    return model, evidence


def stalls_note(stalls: dict) -> str | None:
    """What a calibration says when the catch-up it fitted stalled (:meth:`_Piece.take_out_stalls`;
    the evidence's ``stalls``), else None."""
    if not stalls["count"]:
        return None
    gaps = stalls["gaps_ms"]
    shown = ", ".join(f"{g:g}" for g in gaps[:8]) + (f" and {len(gaps) - 8} more" if len(gaps) > 8 else "")
    times = "once" if len(gaps) == 1 else f"{len(gaps)} times"
    return (f"the replica stopped committing {times} in the catch-up "
            f"({shown} ms between two commits, every worker held; {stalls['seconds']:.3f} s, {stalls['share']:.0%} "
            "of the pieces' time): the fit is the rate between the stalls and the model's times do not include "
            "them; its error band holds their share (the 16-core lab's 100 ms ones were InnoDB's GTID persister holding the "
            "binlog group commit for its timer, at 16 and 32 workers on its fastest-committing backlog: "
            "docs/accuracy.md)")


def without_schema_costs(model: CostModel) -> CostModel:
    """A calibrated model: its foreign-key check and index entry costs at 0. A calibration reads the replica's binlog without a schema given
    (``TrxFacts.fk_checks`` and ``index_entries`` are 0 there unless the binlog's own DDL shows
    the tables), and its fits take rows, bytes and events, never the checks or entries (the
    pieces and the gaps do not carry them), so the checks and entries its replica wrote are in
    the fitted row and transaction costs; pricing them apart would count them twice when the
    same workload is simulated with its schema."""
    return replace(model, fk_check_us=0.0, index_entry_us=0.0)


def without_event_costs(model: CostModel) -> CostModel:
    """A model whose worker costs were regressed on rows and bytes alone (the one-worker gaps,
    ``calibrate --host``'s own times): its per-event worker cost at 0, the events' share being in
    the fitted row and transaction costs already (as the replica's workload has them)."""
    return replace(model, event_us=0.0)


def redo_share_of(model: CostModel) -> float:
    """The redo fsync's share of a model's durable fsync time (the built-in model's if it has
    none)."""
    total = model.redo_flush_us + model.flush_us
    if total <= 0:
        default = CostModel()
        return default.redo_flush_us / (default.redo_flush_us + default.flush_us)
    return model.redo_flush_us / total


def durable_excess(fit: GapFit, relaxed: CostModel) -> float:
    """A durable one-worker fit's fsync time per commit (``redo_flush_us`` + ``flush_us``): its
    mean gap over what the ``relaxed`` model of the same replica gives the mean transaction, less
    what the model charges a durable transaction per byte besides (its two fsyncs'
    ``fsync_byte_us`` and the worker's ``durable_byte_us``: at one worker every commit is a group
    of its own, sim.engine). The durable fit's own row costs are not kept (the model keeps the
    relaxed ones), so an excess its slopes, or a one-shape fit's one scale, put on the rows counts
    here too (the intercept's excess alone lost it: a one-shape chain's durable calibration
    predicted its own catch-up 28% fast)."""
    i, u, d = fit.mean_rows
    per_byte = 2.0 * relaxed.fsync_byte_us + relaxed.durable_byte_us
    return max(0.0, fit.mean_us() - (relaxed.apply_us(i, u, d, fit.mean_bytes) + relaxed.commit_alone_us()
                                     + per_byte * fit.mean_bytes))


def calibrate(paths: list[str], *, durable: bool, base: CostModel | None = None, cores: int | None = None,
              min_lag_us: int = 100_000, redo_share: float | None = None, on_transaction=None,
              on_progress=None, workers: int = 1, max_gaps: int = MAX_GAPS) -> Calibration:
    """A cost model from a one-worker replica binlog.

    Relaxed: the per-row and per-byte costs come from the fit; the per-transaction intercept
    (coordinator + worker fixed cost + commit) is split in the proportions of ``base`` (default:
    the built-in model, whose split was measured on this kind of machine; see
    bench/replica_catchup.py). Durable: with a relaxed ``base`` from the same replica, the mean
    gap's excess over what ``base`` gives the mean transaction is the two fsyncs per commit, split into ``redo_flush_us``
    and ``flush_us`` by ``redo_share`` (default: ``base``'s split; measure it on a replica from
    performance_schema.file_summary_by_event_name, innodb_log_file against binlog fsync time)."""
    model = base or CostModel()
    summaries: list[FileSummary] = []
    if workers >= 2:
        if cores:
            model = replace(model, cores=cores)
        gaps = read_gaps(paths, min_lag_us, summaries=summaries, on_transaction=on_transaction,
                         on_progress=on_progress, keep_applied=True)
        if not gaps.replicated and gaps.local:
            raise ConfigError(f"{paths[0]}: not a replica's binlog (no replicated transaction): calibrate from the "
                              "binlog of a replica (log_replica_updates=ON) that applied a backlog")
        fitted, ev = fit_workers(gaps.pieces.take(), workers, durable=durable, base=model, min_lag_us=min_lag_us)
        fitted = replace(without_schema_costs(fitted), calibrated_workers=workers,
                         measured_on=measured_on(summaries, paths, ev["transactions"], workers, durable, fitted.cores))
        note = unseen_workers_note(ev["worker_cpu_share"])
        stalled = stalls_note(ev["stalls"])
        return Calibration(fitted, ev["transactions"], 1.0 - ev["piece_error_rms"] ** 2, 0.0, 1.0,
                           tuple(w for s in summaries for w in s.warnings) + ((note,) if note else ()), ev,
                           notes=(stalled,) if stalled else ())
    fit, scaled = fit_gaps(paths, min_lag_us, serial_byte_us=0.0, summaries=summaries,
                           on_transaction=on_transaction, on_progress=on_progress, base=model, max_gaps=max_gaps)
    notes = []
    if scaled:
        notes.append(f"every transaction has the same rows by kind, so the per-row costs cannot be told apart: "
                     f"the base model's costs were scaled by one factor (x{fit.intercept / fixed_of(model):.3f}) "
                     "instead of fitted; calibrate on a workload with varied transactions for per-row costs")
    fixed = fixed_of(model)
    if durable and base is not None:
        excess = durable_excess(fit, model)
        share = redo_share_of(base) if redo_share is None else redo_share
        if not 0.0 <= share <= 1.0:
            raise ConfigError(f"the redo share must be within 0..1, not {share}")
        model = replace(model, redo_flush_us=excess * share, flush_us=excess * (1.0 - share))
    else:
        scale = fit.intercept / fixed if fixed else 1.0
        model = replace(model, dispatch_us=model.dispatch_us * scale, dispatch_event_us=model.dispatch_event_us * scale,
                        dispatch_byte_us=model.dispatch_byte_us * scale,
                        trx_us=model.trx_us * scale, multi_worker_us=model.multi_worker_us * scale,
                        commit_us=model.commit_us * scale, commit_group_us=model.commit_group_us * scale,
                        insert_us=fit.insert_us, update_us=fit.update_us,
                        delete_us=fit.delete_us, byte_us=fit.byte_us)
        if durable:
            # No relaxed base: the fsyncs cannot be told apart from the commit CPU.
            model = replace(model, flush_us=0.0, redo_flush_us=0.0, fsync_byte_us=0.0)
    model = replace(model, error_band=round(fit.band, 4))
    wake = fit.wakeups
    said: tuple[str, ...] = ()
    if wake is not None:
        if wake.measured:
            model = replace(model, wakeup_us=wake.wakeup_us)
        said = (f"the coordinator's wake-up after a dependency wait (wakeup_us): {wake.how}",)
    if thinned := fit.thinned_note():
        said += (thinned,)
    if cores:
        model = replace(model, cores=cores)
    model = replace(without_event_costs(without_schema_costs(model)), calibrated_workers=1,
                    measured_on=measured_on(summaries, paths, fit.samples, 1, durable, model.cores))
    return Calibration(model, fit.samples, fit.r2, fit.mean_gap_us, fit.stall_factor,
                       tuple(w for s in summaries for w in s.warnings) + tuple(notes),
                       notes=said)


def replica_of(versions: list[str]) -> str:
    """"a MySQL 9.7.4 replica" from FORMAT_DESCRIPTION_EVENTs' or @@version's ``server_version``:
    MySQL's carries no product name ("9.7.4"), MariaDB's does ("10.11.6-MariaDB-log")."""
    named = [v if "mariadb" in v.lower() else f"MySQL {v}" for v in sorted(set(versions)) if v]
    return f"a {' / '.join(named)} replica" if named else "a replica (server version unknown)"


def measured_on(summaries: list[FileSummary], paths: list[str], transactions: int, workers: int, durable: bool,
                cores: int) -> str:
    """The calibrated model's ``measured_on``: the replica (its server version, from the files'
    FORMAT_DESCRIPTION_EVENTs), the binlog files, what was fitted and the cores it was fitted on."""
    names = os.path.basename(paths[0]) + (f" to {os.path.basename(paths[-1])}" if len(paths) > 1 else "")
    return one_line(f"{names}, the binlog of {replica_of([s.server_version for s in summaries])}: {transactions:,} "
                    f"commits behind the source, {workers_text(workers)}, "
                    f"{'durable' if durable else 'relaxed'}; {cores} cores")


@dataclass(frozen=True, slots=True)
class Combined:
    """``calibrate --combine``: the models of several calibrations pooled into one."""

    model: CostModel
    evidence: dict


def _unit_us(m: CostModel, fsyncs: bool) -> float:
    """A transaction of one insert, one update and one delete, committed alone: what the spread of
    several calibrations is measured on (with its two fsyncs when the calibrations fitted them).
    Its 9 events: GTID, BEGIN, a table map and a rows event per statement, XID."""
    return (m.apply_us(1, 1, 1, 0, events=9) + m.coordinator_us(0, 9) + m.commit_alone_us()
            + ((m.flush_us + m.redo_flush_us) if fsyncs else 0.0))


def combine_models(models: list[CostModel]) -> Combined:
    """Several calibrations of one replica (windows at different times: ``calibrate --host`` run
    again, or catch-ups) pooled: each cost is the members' median, and the error band is the larger
    of the members' median held-out band and their spread (the largest relative distance of a
    member's one-insert-update-delete transaction from the pooled model's). A single window's band
    only says how steady that window was; how far a window taken minutes later lands is the spread
    (on a VM here, three relaxed calibrations within four minutes read 287-342 us a transaction).
    The fsyncs count in that spread when the members fitted them (they differ: a relaxed
    calibration keeps the base model's)."""
    if len(models) < 2:
        raise ConfigError("--combine pools two or more cost models (calibrations of one replica)")
    values = {}
    for f in fields(CostModel):
        if f.name not in ("error_band", "measured_on", "calibrated_workers"):
            vs = [getattr(m, f.name) for m in models]
            values[f.name] = median_high(vs) if f.type in (int, "int") else median(vs)   # cores, fsync_devices stay whole
    pooled = replace(CostModel(), **values)
    fsyncs = len({(m.flush_us, m.redo_flush_us) for m in models}) > 1
    unit = _unit_us(pooled, fsyncs)
    units = [_unit_us(m, fsyncs) for m in models]
    spread = max(abs(u - unit) / unit for u in units)
    own = median_high(m.error_band for m in models)
    band = round(max(spread, own), 4)
    seen = list(dict.fromkeys(m.measured_on or "not recorded" for m in models))
    where = one_line(f"pooled from {len(models)} calibrations: " + " | ".join(seen))
    workers = {m.calibrated_workers for m in models}
    return Combined(replace(pooled, error_band=band, measured_on=where,
                            calibrated_workers=workers.pop() if len(workers) == 1 else 0), {
        "members": len(models), "unit_transaction_us": [round(u, 1) for u in units],
        "pooled_unit_transaction_us": round(unit, 1), "fsyncs_in_spread": fsyncs,
        "spread": round(spread, 4), "median_member_band": own, "error_band": band})
