"""Fitting the apply cost model from a replica's own binlog (``log_replica_updates=ON``).

While a replica applies a backlog with one worker, the gap between two consecutive commits
(``immediate_commit_timestamp``, taken at the replica's flush) is the time the applier spent on
the second transaction. Regressing those gaps on each transaction's rows by kind and bytes gives
the per-transaction, per-row and per-byte costs. Gaps are kept only while the replica was behind
(its commit later than the source's by more than ``min_lag_us``), so idle time is not counted;
stalls are kept out of the slopes (:func:`fit_samples`). With ``durable`` the intercept holds
the two fsyncs; a ``base`` model from a relaxed run splits it into CPU and fsync time, and the
fsync time into the redo fsync (flush stage) and the binlog fsync (sync stage).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import median_high

from ..binlog import FileSummary, read_transactions
from ..errors import ConfigError
from .model import CostModel


@dataclass(frozen=True, slots=True)
class Calibration:
    model: CostModel
    samples: int
    r2: float
    mean_gap_us: float
    stall_factor: float = 1.0
    warnings: tuple[str, ...] = ()   # what reading the files reported (a truncated tail...)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-12:
            raise ConfigError("calibration data cannot separate the cost terms (every transaction has "
                              "the same shape?): use a workload with varied transaction sizes")
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


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


#: Transactions with rows read before deciding that the binlog was not written by a replica:
#: a replica's own binlog (log_replica_updates=ON) carries the source's original_commit_timestamp,
#: different from its immediate one; a source's has them equal (or none, before 8.0.1). A few
#: local transactions on a replica are tolerated; a whole file is not read to find that out.
SOURCE_PROOF_TRANSACTIONS = 64


def fit_gaps(paths: list[str], min_lag_us: int = 100_000, serial_byte_us: float = 0.0,
             summaries: list[FileSummary] | None = None, on_transaction=None) -> GapFit:
    """Regress the one-worker commit gaps of a replica's own binlog; ``serial_byte_us`` (the
    coordinator's measured cost per byte read, serial with the worker when there is one) is
    taken out of each gap first. Each file's :class:`FileSummary` (its warnings) is appended
    to ``summaries`` when given; ``on_transaction(t)`` is called for each transaction read
    (a progress bar). A binlog not written by a replica is refused after its first
    :data:`SOURCE_PROOF_TRANSACTIONS` transactions with rows, not after the whole file."""
    samples: list[tuple[float, int, int, int, int]] = []
    local = replicated = 0
    for path in paths:
        prev = None
        summary = FileSummary(path)
        if summaries is not None:
            summaries.append(summary)
        for t in read_transactions(path, summary, selector=lambda tm: frozenset()):
            if on_transaction is not None:
                on_transaction(t)
            ts = t.immediate_commit_timestamp
            if t.rows and not replicated:
                if ts and t.original_commit_timestamp and t.original_commit_timestamp != ts:
                    replicated += 1
                elif (local := local + 1) >= SOURCE_PROOF_TRANSACTIONS:
                    raise ConfigError(
                        f"{path}: not a replica's binlog (the first {local} transactions were committed "
                        "here, none replicated: original_commit_timestamp = immediate_commit_timestamp): "
                        "calibrate from the binlog of a replica (log_replica_updates=ON) that applied a "
                        "backlog with one worker")
            if not ts or not t.rows:
                prev = ts or None
                continue
            if prev is not None and ts - t.original_commit_timestamp >= min_lag_us and ts > prev:
                ins = sum(s.inserts for s in t.tables)
                upd = sum(s.updates for s in t.tables)
                dele = sum(s.deletes for s in t.tables)
                samples.append((float(ts - prev) - serial_byte_us * t.bytes, ins, upd, dele, t.bytes))
            prev = ts
    if len(samples) < 50:
        raise ConfigError(f"only {len(samples)} usable commit gaps: calibrate from the binlog of a replica "
                          "(log_replica_updates=ON) that applied a backlog with one worker")
    return fit_samples(samples)


def _ols(rows: list[tuple[float, int, int, int, int]]) -> list[float]:
    xs = [(1.0, float(i), float(u), float(d)) for _, i, u, d, _ in rows]
    ata = [[sum(x[r] * x[c] for x in xs) for c in range(4)] for r in range(4)]
    aty = [sum(x[r] * g for x, (g, *_) in zip(xs, rows)) for r in range(4)]
    return _solve(ata, aty)


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


def redo_share_of(model: CostModel) -> float:
    """The redo fsync's share of a model's durable fsync time (the built-in model's if it has
    none)."""
    total = model.redo_flush_us + model.flush_us
    if total <= 0:
        default = CostModel()
        return default.redo_flush_us / (default.redo_flush_us + default.flush_us)
    return model.redo_flush_us / total


def calibrate(paths: list[str], *, durable: bool, base: CostModel | None = None, cores: int | None = None,
              min_lag_us: int = 100_000, redo_share: float | None = None, on_transaction=None) -> Calibration:
    """A cost model from a one-worker replica binlog.

    Relaxed: the per-row and per-byte costs come from the fit; the per-transaction intercept
    (coordinator + worker fixed cost + commit) is split in the proportions of ``base`` (default:
    the built-in model, whose split was measured on this kind of machine; see
    bench/replica_catchup.py). Durable: with a relaxed ``base`` from the same replica, the
    intercept's excess over ``base`` is the two fsyncs per commit, split into ``redo_flush_us``
    and ``flush_us`` by ``redo_share`` (default: ``base``'s split; measure it on a replica from
    performance_schema.file_summary_by_event_name, innodb_log_file against binlog fsync time)."""
    model = base or CostModel()
    summaries: list[FileSummary] = []
    fit = fit_gaps(paths, min_lag_us, serial_byte_us=model.dispatch_byte_us, summaries=summaries,
                   on_transaction=on_transaction)
    fixed = model.dispatch_us + model.trx_us + model.commit_us
    if durable and base is not None:
        excess = max(0.0, fit.intercept - fixed)
        share = redo_share_of(base) if redo_share is None else redo_share
        if not 0.0 <= share <= 1.0:
            raise ConfigError(f"the redo share must be within 0..1, not {share}")
        model = replace(model, redo_flush_us=excess * share, flush_us=excess * (1.0 - share))
    else:
        scale = fit.intercept / fixed if fixed else 1.0
        model = replace(model, dispatch_us=model.dispatch_us * scale, trx_us=model.trx_us * scale,
                        commit_us=model.commit_us * scale, insert_us=fit.insert_us, update_us=fit.update_us,
                        delete_us=fit.delete_us, byte_us=fit.byte_us)
        if durable:
            # No relaxed base: the fsyncs cannot be told apart from the commit CPU.
            model = replace(model, flush_us=0.0, redo_flush_us=0.0)
    if cores:
        model = replace(model, cores=cores)
    return Calibration(model, fit.samples, fit.r2, fit.mean_gap_us, fit.stall_factor,
                       tuple(w for s in summaries for w in s.warnings))
