"""``LagDigest``: a replica binlog's observed lags in bounded memory. Exact up to its cap (the
nearest-rank percentiles ``analyze`` always printed), then a sketch whose percentiles are within
``LAG_ALPHA`` of the exact ones, with negative lags (clock skew) on their own side; merging
digests gives what one digest fed every value gives (``--jobs`` and per-file parts)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lagadvisor.analysis.results import LAG_ALPHA, LagDigest
from lagadvisor.sim.run import percentile

lags = st.lists(st.one_of(st.integers(-5_000_000, 5_000_000), st.integers(-3, 3),
                          st.integers(0, 2 ** 40)), min_size=1, max_size=400)


def _fed(values, cap):
    d = LagDigest(cap)
    for v in values:
        d.add(v)
    return d


def _exact(values):
    v = sorted(values)
    return {"transactions": len(v), "p50_seconds": percentile(v, 50) / 1e6,
            "p99_seconds": percentile(v, 99) / 1e6, "max_seconds": v[-1] / 1e6}


@settings(max_examples=300, deadline=None)
@given(lags)
def test_exact_below_the_cap(values):
    assert _fed(values, len(values)).summary() == _exact(values)


@settings(max_examples=300, deadline=None)
@given(lags, st.integers(0, 50))
def test_sketch_within_its_bound(values, cap):
    d = _fed(values, cap)
    got, want = d.summary(), _exact(values)
    assert d.sketch == (len(values) > cap)
    assert got["transactions"] == want["transactions"] and got["max_seconds"] == want["max_seconds"]
    if d.sketch:
        assert got["relative_error"] == LAG_ALPHA
        for k in ("p50_seconds", "p99_seconds"):
            # within the bound of the exact value (values in -1..1 are counted exactly)
            assert abs(got[k] - want[k]) <= LAG_ALPHA * abs(want[k]) + 1e-12, (k, got[k], want[k])
    else:
        assert "relative_error" not in got


@settings(max_examples=200, deadline=None)
@given(lags, lags, st.integers(0, 500))
def test_merge_is_one_digest(a, b, cap):
    one = _fed(a + b, cap)
    merged = _fed(a, cap)
    merged.merge(_fed(b, cap))
    assert merged.summary() == one.summary()


def test_memory_stays_bounded_past_the_cap():
    d = LagDigest(1000)
    for i in range(200_000):
        d.add((i * 7919) % 3_000_000 - 1000)
    assert d.sketch and len(d.values) == 0
    # a few thousand log buckets at 0.1% cover 1 us .. 3 s, whatever the count
    assert len(d.pos) + len(d.neg) < 20_000
    frozen = d.summary()
    d.freeze()
    assert d.summary() == frozen and not d.pos and not d.neg
