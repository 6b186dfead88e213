"""Per-transaction timelines of an instrumented catch-up, and the wake-up latencies they show.

Stdlib only (it runs on the device, inside bench/manycore/lab.py). The instrumented round keeps
performance_schema's history of transactions (``events_transactions_history_long``: the worker
thread, the GTID and the start and end of every applied transaction) and of two stages
(``events_stages_history_long``):

* ``Waiting for preceding transaction to commit``: a worker that finished applying sleeps until
  its predecessor has entered the binlog group commit (replica_preserve_commit_order,
  Commit_order_manager::wait_on_graph; the predecessor releases it when it enrolls in the flush
  stage, Commit_stage_manager::enroll_for);
* ``Waiting for dependent transaction to commit``: the coordinator sleeps until the transaction
  it must schedule next has its dependencies committed (Mts_submode_logical_clock::
  wait_for_last_committed_trx).

From them, the two latencies the cost model cannot see in catch-up times alone
(``CostModel.handoff_us`` and ``wakeup_us``):

* **hand-off**: of two consecutive transactions that both waited for commit order, where the
  second was already asleep when the first woke, the time between their wake-ups. In the model
  that is exactly ``handoff_us`` (a successor enters the commit stage ``handoff_us`` after its
  predecessor entered it); here it also holds the first's few microseconds from waking to
  enrolling in the flush stage.
* **coordinator wake-up**: from the last transaction commit before the coordinator's
  dependency wait ended (inside that wait) to its end (``wakeup_us``), and from that end to the
  start of the next transaction on a worker (the dispatch and the worker's own wake-up).

Times are nanoseconds from the first transaction's start (performance_schema's picoseconds / 1000).
"""

from __future__ import annotations

import bisect
import statistics

WAIT_ORDER = "stage/sql/Waiting for preceding transaction to commit"
WAIT_DEPENDENCY = "stage/sql/Waiting for dependent transaction to commit"
WORKER, COORDINATOR = "thread/sql/replica_worker", "thread/sql/replica_sql"


def build(threads: dict[int, str], transactions: list[tuple[int, str, int, int]],
          stages: list[tuple[int, str, int, int]]) -> dict:
    """The timeline of one catch-up from performance_schema rows.

    *threads*: THREAD_ID -> NAME; *transactions*: (THREAD_ID, GTID, TIMER_START, TIMER_END) of
    committed transactions; *stages*: (THREAD_ID, EVENT_NAME, TIMER_START, TIMER_END) of the two
    waits. Returns columns sorted by GTID number: ``gno``, ``worker`` (0.. in order of first
    appearance), ``start``, ``end``, ``wait_start``, ``wait_end`` (-1: it did not wait for
    commit order), and ``coordinator_waits`` as [start, end] pairs."""
    trx = [(t, g, s, e) for t, g, s, e in transactions
           if threads.get(t) == WORKER and ":" in g and g.rsplit(":", 1)[1].isdigit()]
    if not trx:
        return {"transactions": 0}
    t0 = min(s for _, _, s, _ in trx)
    per_thread: dict[int, list[tuple[int, int, int]]] = {}
    for t, g, s, e in trx:
        per_thread.setdefault(t, []).append((s, e, int(g.rsplit(":", 1)[1])))
    for rows in per_thread.values():
        rows.sort()
    waits: dict[int, tuple[int, int]] = {}
    coord: list[list[int]] = []
    for t, name, s, e in stages:
        if name == WAIT_DEPENDENCY and threads.get(t) == COORDINATOR:
            coord.append([(s - t0) // 1000, (e - t0) // 1000])
        elif name == WAIT_ORDER and t in per_thread:
            rows = per_thread[t]
            k = bisect.bisect_right(rows, (s, float("inf"), 0)) - 1
            if k >= 0 and rows[k][0] <= s <= rows[k][1]:
                waits[rows[k][2]] = ((s - t0) // 1000, (e - t0) // 1000)
    order = {t: i for i, t in enumerate(sorted(per_thread, key=lambda t: per_thread[t][0][0]))}
    flat = sorted((gno, order[t], (s - t0) // 1000, (e - t0) // 1000)
                  for t, rows in per_thread.items() for s, e, gno in rows)
    out = {"transactions": len(flat), "workers_seen": len(per_thread),
           "gno": [r[0] for r in flat], "worker": [r[1] for r in flat],
           "start": [r[2] for r in flat], "end": [r[3] for r in flat],
           "wait_start": [waits.get(r[0], (-1, -1))[0] for r in flat],
           "wait_end": [waits.get(r[0], (-1, -1))[1] for r in flat],
           "coordinator_waits": sorted(coord)}
    return out


def _quartiles(xs: list[float]) -> dict:
    if not xs:
        return {"n": 0}
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0]] * 3
    return {"n": len(xs), "p25_us": round(q[0], 1), "median_us": round(q[1], 1), "p75_us": round(q[2], 1),
            "mean_us": round(statistics.fmean(xs), 1)}


def switches(tl: dict) -> dict:
    """What a transaction costs when it runs on another worker than its predecessor (the cost
    model's ``multi_worker_us``): of the transactions that started after their predecessor (the
    previous GTID) ended, a chain, those on the same worker and those on another, each with its own
    time (start to end less its commit-order wait) in quartiles; ``extra_us`` is the difference of
    the medians. Only a chain compares like with like: a transaction that overlapped its
    predecessor ran beside it, with the contention that brings. ``same_worker_share``: of every
    transaction after its predecessor (``consecutive``), chain or not, the share that ran on its
    predecessor's worker (the model charges ``multi_worker_us`` to all of them)."""
    gno, wk, s, e, ws, we = (tl[k] for k in ("gno", "worker", "start", "end", "wait_start", "wait_end"))
    same: list[float] = []
    other: list[float] = []
    consecutive = on_same = 0
    for k in range(1, len(gno)):
        if gno[k] != gno[k - 1] + 1:
            continue
        consecutive += 1
        on_same += wk[k] == wk[k - 1]
        if s[k] < e[k - 1]:
            continue
        own = ((e[k] - s[k]) - ((we[k] - ws[k]) if ws[k] >= 0 else 0)) / 1000
        (same if wk[k] == wk[k - 1] else other).append(own)
    a, b = _quartiles(same), _quartiles(other)
    return {"chain": len(same) + len(other), "same_worker": a, "other_worker": b,
            "extra_us": round(b["median_us"] - a["median_us"], 1) if a["n"] and b["n"] else None,
            "consecutive": consecutive, "same_worker_share": round(on_same / consecutive, 3) if consecutive else None}


def stalls(tl: dict, min_gap_us: float = 1000.0) -> dict:
    """Where the whole applier stood still: gaps of more than *min_gap_us* between consecutive
    commits during which two or more transactions were in flight and none of them was waiting
    for commit order (each stuck in its own apply or commit at once, not one long transaction
    that the others wait behind; with one worker, its one transaction). ``count``, ``total_us``, ``max_us``, their ``share`` of the
    catch-up (first start to last commit) and ``in_flight`` (median transactions stuck per
    stall). The cost model has no such pause: what it costs a catch-up is beside its error."""
    start, end, ws, we = tl["start"], tl["end"], tl["wait_start"], tl["wait_end"]
    ends = sorted(end)
    span = (ends[-1] - min(start)) / 1000 if ends else 0.0
    least = min(2, tl.get("workers_seen", 2))
    found: list[tuple[float, int]] = []
    for a, z in zip(ends, ends[1:]):
        if (z - a) / 1000 <= min_gap_us:
            continue
        stuck = sum(1 for k in range(len(start)) if start[k] <= a and end[k] >= z
                    and not (0 <= ws[k] <= a and we[k] >= z))
        if stuck >= least:
            found.append(((z - a) / 1000, stuck))
    total = sum(g for g, _ in found)
    return {"count": len(found), "total_us": round(total, 1), "max_us": round(max((g for g, _ in found), default=0.0), 1),
            "share": round(total / span, 4) if span > 0 else 0.0,
            "in_flight": statistics.median(k for _, k in found) if found else 0}


def latencies(tl: dict) -> dict:
    """The wake-up latencies of one timeline (microseconds; see the module docstring)."""
    if not tl.get("transactions"):
        return {"transactions": 0}
    gno, ws, we = tl["gno"], tl["wait_start"], tl["wait_end"]
    handoff = [(we[k] - we[k - 1]) / 1000 for k in range(1, len(gno))
               if gno[k] == gno[k - 1] + 1 and we[k] >= 0 and we[k - 1] >= 0 and ws[k] < we[k - 1] <= we[k]]
    ends = sorted(tl["end"])
    starts = sorted(tl["start"])
    wake, dispatch = [], []
    for s, e in tl["coordinator_waits"]:
        k = bisect.bisect_right(ends, e) - 1
        if k >= 0 and ends[k] >= s:
            wake.append((e - ends[k]) / 1000)
        j = bisect.bisect_left(starts, e)
        if j < len(starts):
            dispatch.append((starts[j] - e) / 1000)
    waited = sum(1 for x in we if x >= 0)
    return {"transactions": tl["transactions"], "workers_seen": tl["workers_seen"],
            "commit_order_waits": waited, "coordinator_waits": len(tl["coordinator_waits"]),
            "handoff": _quartiles(handoff), "coordinator_wakeup": _quartiles(wake),
            "dispatch_to_worker_start": _quartiles(dispatch), "switches": switches(tl), "stalls": stalls(tl),
            "trx_duration": _quartiles([(b - a) / 1000 for a, b in zip(tl["start"], tl["end"])])}
