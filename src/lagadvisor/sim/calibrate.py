"""Fitting the apply cost model from a replica's own binlog (``log_replica_updates=ON``).

While a replica applies a backlog with one worker, the gap between two consecutive commits
(``immediate_commit_timestamp``, taken at the replica's flush) is the time the applier spent on
the second transaction. Regressing those gaps on each transaction's rows by kind and bytes gives
the per-transaction, per-row and per-byte costs. Gaps are kept only while the replica was behind
(its commit later than the source's by more than ``min_lag_us``), so idle time is not counted;
the slowest 10% (checkpoint or flush stalls) are dropped. With ``durable`` the intercept holds
the flush; a ``base`` model from a relaxed run splits it into CPU and flush time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..binlog import read_transactions
from ..errors import ConfigError
from .model import CostModel


@dataclass(frozen=True, slots=True)
class Calibration:
    model: CostModel
    samples: int
    r2: float
    mean_gap_us: float


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


def fit_gaps(paths: list[str], min_lag_us: int = 100_000, serial_byte_us: float = 0.0) -> GapFit:
    """Regress the one-worker commit gaps; ``serial_byte_us`` (the coordinator's measured cost per
    byte read, serial with the worker when there is one) is taken out of each gap first."""
    samples: list[tuple[float, int, int, int, int]] = []
    for path in paths:
        prev = None
        for t in read_transactions(path, selector=lambda tm: frozenset()):
            ts = t.immediate_commit_timestamp
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
    samples.sort()
    samples = samples[: max(50, int(len(samples) * 0.9))]
    # Bytes grow with rows in practice (row images), so a byte term is not identifiable next to
    # the per-row terms: it is left at 0 and the per-row costs carry the per-byte cost.
    xs = [(1.0, float(i), float(u), float(d)) for _, i, u, d, _ in samples]
    ys = [g for g, *_ in samples]
    k = 4
    ata = [[sum(x[r] * x[c] for x in xs) for c in range(k)] for r in range(k)]
    aty = [sum(x[r] * y for x, y in zip(xs, ys)) for r in range(k)]
    coef = _solve(ata, aty) + [0.0]
    mean = sum(ys) / len(ys)
    pred = [sum(c * v for c, v in zip(coef, x)) for x in xs]
    ss_res = sum((y - p) ** 2 for y, p in zip(ys, pred))
    ss_tot = sum((y - mean) ** 2 for y in ys) or 1.0
    intercept, ins, upd, dele, byte = (max(0.0, c) for c in coef)
    return GapFit(intercept, ins, upd, dele, byte, len(samples), 1 - ss_res / ss_tot, mean)


def calibrate(paths: list[str], *, durable: bool, base: CostModel | None = None, cores: int | None = None,
              min_lag_us: int = 100_000) -> Calibration:
    """A cost model from a one-worker replica binlog.

    Relaxed: the per-row and per-byte costs come from the fit; the per-transaction intercept
    (coordinator + worker fixed cost + commit) is split in the proportions of ``base`` (default:
    the built-in model, whose split was measured on this kind of machine; see
    bench/replica_catchup.py). Durable: with a relaxed ``base`` from the same replica, the
    intercept's excess over ``base`` is the sync stage (``flush_us``)."""
    model = base or CostModel()
    fit = fit_gaps(paths, min_lag_us, serial_byte_us=model.dispatch_byte_us)
    fixed = model.dispatch_us + model.trx_us + model.commit_us
    if durable and base is not None:
        model = replace(model, flush_us=max(0.0, fit.intercept - fixed))
    else:
        scale = fit.intercept / fixed if fixed else 1.0
        model = replace(model, dispatch_us=model.dispatch_us * scale, trx_us=model.trx_us * scale,
                        commit_us=model.commit_us * scale, insert_us=fit.insert_us, update_us=fit.update_us,
                        delete_us=fit.delete_us, byte_us=fit.byte_us)
        if durable:
            # No relaxed base: the flush cannot be told apart from the commit CPU.
            model = replace(model, flush_us=0.0)
    if cores:
        model = replace(model, cores=cores)
    return Calibration(model, fit.samples, fit.r2, fit.mean_gap_us)
