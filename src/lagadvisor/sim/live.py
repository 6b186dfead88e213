"""Fitting the apply cost model from a replica in service (``calibrate --host``): the fit of
a :class:`LiveSample` (``server.calibrate`` reads it, read-only, and hands it here).

The sample: over a window the user chooses, with whatever worker count the replica runs:

* ``performance_schema.events_transactions_history_long`` (polled; rows of the applier
  worker threads, ``thread/sql/replica_worker``): each applied transaction's time in its
  worker, from its first event to its commit (``TIMER_END - TIMER_START``), and its GTID
  (``thread/sql/replica_sql`` too: the applier itself with no workers);
* ``performance_schema.events_stages_history_long`` (polled): the workers' stages "Waiting for an
  event from Coordinator" and "Waiting for preceding transaction to commit", taken out of the
  transaction they fall in (:func:`own_times`): a worker in service waits for the coordinator to
  read events as the receiver writes them, and for its turn to commit; neither is its own cost;
* the replica's own binlog (``log_replica_updates=ON``), streamed over the window: each GTID's
  rows by kind and bytes, and its ``original_commit_timestamp`` against its
  ``immediate_commit_timestamp`` (the lag it was applied with: the evidence says it);
* ``performance_schema.file_summary_by_event_name``: the redo log's and the binlog's fsync
  counts and time (``COUNT_MISC``/``SUM_TIMER_MISC`` of ``wait/io/file/innodb/innodb_log_file``
  and ``wait/io/file/sql/binlog``; MISC is fsync and friends) over the window;
* ``performance_schema.replication_applier_status_by_worker``: the worker count, and that the
  applier is running.

The per-transaction worker times are regressed on rows by kind (:func:`calibrate.fit_samples`,
stalls found by their residual; a window of one transaction shape scales the base model's
costs instead, :func:`calibrate.fit_scaled`); a worker's time with N >= 2 workers holds the
multi-worker CPU factor and cost per transaction (the model applies ``multi_worker_cpu`` and
``multi_worker_us`` itself), so they are taken out of the per-row costs and the intercept.
Relaxed, the intercept is the worker's fixed cost plus the commit, and the rest is
``commit_us``. A worker's time can also hold waits for other transactions (its turn to commit;
durable, other groups' fsyncs on the one device), so the fit is taken from the
transactions the replica applied alone when the window has at least 200 of them
(:func:`alone_gtids`, from the replica's binlog: nothing in flight when one arrived, nothing
arriving before it committed), durable less their own two fsyncs: with the optional
``events_waits`` consumers, the binlog and redo fsyncs each ran in its own thread (matched by
event ids, not times: :func:`fsync_waits`), whose medians are also the model's per-group fsync
times; else the instruments' mean latencies. The fit's costs are then scaled to the
transactions a worker applied back to back (started within 100 us of another's end, no other in
the workers while it ran: a backlog's conditions, no wake-up from idle) when there are at least
30 (their time over the fit's). Without enough transactions applied alone, a durable
``commit_us`` is the mean gap between commits while the next transaction was already waiting
(:func:`busy_gaps`) less the fsync time per transaction. The held-out checks of the fit
(:func:`calibrate.held_out_band`) give the model's ``error_band``.

Sources: storage/perfschema (pfs_events_transactions.cc), sql/rpl_rli_pdb.cc (worker threads).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, replace
from statistics import median

from ..errors import ConfigError
from .calibrate import fit_any, fit_scaled, held_out_band, replica_of, without_event_costs, without_schema_costs
from .model import CostModel, one_line, workers_text

#: Fsyncs started while one of the other file was running, needed to tell.
MIN_CONCURRENT_FSYNCS = 20
#: Optional, durable: the workers' commit stage (handler.cc ``ha_commit_trans``). With it, the
#: evidence says what a commit took beyond its own fsyncs (its CPU and lock waits: part of the
#: transaction's own time).
COMMIT_STAGE = "stage/sql/waiting for handler commit"
#: Optional: the coordinator asleep until the next transaction's dependencies commit
#: (rpl_mta_submode.cc ``wait_for_last_committed_trx``); with it, this replica's ``wakeup_us``.
DEPENDENCY_STAGE = "stage/sql/Waiting for dependent transaction to commit"
#: Transactions applied alone whose own fsync waits were read (:func:`fsync_waits`), needed to
#: take those out instead of the mean fsync latencies.
MIN_FSYNC_TIMED = 100

#: A transaction the replica started within this long after it finished another ran back to back,
#: as a backlog is applied (no wake-up from idle, warm caches).
WARM_PS = 100 * 1_000_000
#: Back-to-back transactions whose own fsyncs were read, needed for the model's fsync times to be
#: theirs (:func:`group_fsyncs`).
MIN_WARM_FSYNCS = 30
#: Hand-offs (or coordinator wake-ups) measured, needed for the model's ``handoff_us`` (or
#: ``wakeup_us``) to be this replica's (:func:`handoffs`, :func:`coordinator_wakeups`).
MIN_WAKEUPS = 20
#: A coordinator's wait whose next transaction started later than this after it ended was
#: followed by something else (the relay log ran dry): not a wake-up sample.
WAKEUP_CAP_PS = 5_000 * 1_000_000


@dataclass(frozen=True, slots=True)
class LiveCalibration:
    model: CostModel
    evidence: dict = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FsyncTotals:
    """``performance_schema.file_summary_by_event_name`` at one time: the redo log's and the
    binlog's (``COUNT_MISC``, ``SUM_TIMER_MISC`` picoseconds); MISC is fsync and friends."""

    redo: tuple[int, int] = (0, 0)
    binlog: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class LiveSample:
    """What calibrate --host read of a replica over its window (``server.calibrate`` reads it):
    keys (thread, EVENT_ID) of performance_schema, times in picoseconds."""

    window_s: float
    #: the replica's settings (``server.calibrate.check_setup``): workers, durable, fsync_waits,
    #: commit_stage...
    server: dict
    #: the window's committed transactions: key -> (GTID, TIMER_START, TIMER_END, END_EVENT_ID)
    transactions: dict
    #: the workers' wait stages read (from before the window too): key -> (TIMER_START, TIMER_END)
    waits: dict
    #: the workers' commit stages (empty: not timed): key -> (TIMER_START, TIMER_END)
    commit_stages: dict
    #: the window's fsyncs (empty: not timed): key -> (is redo, TIMER_START, TIMER_END)
    fsyncs: dict
    io_before: FsyncTotals
    io_after: FsyncTotals
    #: the replica's binlog over the window: GTID -> (inserts, updates, deletes, bytes, events)
    shapes: dict
    #: (original_commit_timestamp, immediate_commit_timestamp, GTID) in the replica's commit
    #: order, of the transactions whose two timestamps differ (replicated)
    commits: tuple
    binlog_files: tuple = ()
    #: the workers' commit-order waits ("Waiting for preceding transaction to commit"), a subset
    #: of ``waits``: key -> (TIMER_START, TIMER_END)
    order_waits: dict = field(default_factory=dict)
    #: the coordinator's dependency waits ("Waiting for dependent transaction to commit"; empty:
    #: not timed): key -> (TIMER_START, TIMER_END)
    coordinator_waits: dict = field(default_factory=dict)


def _spans_by_thread(spans: dict) -> dict[int, list]:
    """key (thread, event) -> a value (a (start, end) span, an event id) regrouped as thread ->
    its values, sorted."""
    by_thread: dict[int, list[tuple[int, int]]] = {}
    for (tid, _eid), span in spans.items():
        by_thread.setdefault(tid, []).append(span)
    for v in by_thread.values():
        v.sort()
    return by_thread


def last_commits(trx: dict, commits: dict) -> dict:
    """Each transaction's commit, microseconds: ``trx`` maps a key (thread, event) to
    (TIMER_START, TIMER_END), ``commits`` a key to a commit stage's (TIMER_START, TIMER_END) on
    that thread, picoseconds. A row event's statement commits too; the transaction's commit is
    the last one to start inside it, up to the transaction's end (the stage ends later, when the
    thread's next stage begins). Returns key -> (its TIMER_START, us); keys without one are left
    out."""
    from bisect import bisect_left

    by_thread = _spans_by_thread(commits)
    out = {}
    for key, (a, b) in trx.items():
        spans = by_thread.get(key[0], [])
        k = bisect_left(spans, (b, -1)) - 1   # the last one started before the end
        if k >= 0 and spans[k][0] >= a:
            out[key] = (spans[k][0], (min(b, spans[k][1]) - spans[k][0]) / 1e6)
    return out


def fsync_overlap(fsyncs) -> tuple[float | None, int]:
    """Whether this storage runs a redo log fsync and a binlog fsync at once (InnoDB's log
    flusher fsyncs the next group's redo while the binlog's sync stage fsyncs the previous
    group's binlog: log0write.cc, binlog.cc ``ordered_commit``) or one after the other.
    ``fsyncs``: (is redo, start, end) in picoseconds. For each fsync started while one of the
    other file ran, its time over its kind's mean time when started with none running, in
    units of what was left of the other: 0 when they overlap, 1 when it waited for the other.
    Returns (the mean of that, how many such fsyncs); None with fewer than
    :data:`MIN_CONCURRENT_FSYNCS`."""
    from bisect import bisect_left

    spans = {True: sorted((a, b) for r, a, b in fsyncs if r), False: sorted((a, b) for r, a, b in fsyncs if not r)}
    alone: dict[bool, list[float]] = {True: [], False: []}
    concurrent: list[tuple[bool, float, float]] = []   # (kind, duration, left of the other)
    for kind in (True, False):
        other = spans[not kind]
        starts = [a for a, _ in other]
        for a, b in spans[kind]:
            k = bisect_left(starts, a) - 1   # the other file's last fsync started before this one
            left = other[k][1] - a if k >= 0 else 0
            if left > 0:
                concurrent.append((kind, b - a, left))
            else:
                alone[kind].append(b - a)
    mean = {k: sum(v) / len(v) for k, v in alone.items() if v}
    used = [(d - mean[k]) / left for k, d, left in concurrent if k in mean]
    if len(used) < MIN_CONCURRENT_FSYNCS:
        return None, len(used)
    return sum(min(1.5, max(-0.5, u)) for u in used) / len(used), len(used)


def own_times(trx: dict, waits: dict) -> dict:
    """Each transaction's own time in its worker, microseconds: ``trx`` maps a key to (GTID,
    thread, TIMER_START, TIMER_END), ``waits`` a key (thread, event) to a wait stage's (TIMER_START,
    TIMER_END), picoseconds. The transaction's time less the wait stages of its thread inside it
    (a thread's stages follow one another: they do not overlap). Returns key -> (GTID, us,
    applied back to back: no other worker's transaction ran during it, and one ended within
    :data:`WARM_PS` before it started, as a backlog is applied by one worker)."""
    by_thread = _spans_by_thread(waits)
    ends = sorted(end for _g, _t, _s, end in trx.values())
    starts = sorted(start for _g, _t, start, _e in trx.values())
    out = {}
    for key, (gtid, tid, a, b) in trx.items():
        waited = 0
        spans = by_thread.get(tid, ())
        k = bisect_left(spans, (a, -1))
        if k and spans[k - 1][1] > a:
            k -= 1
        while k < len(spans) and spans[k][0] < b:
            waited += max(0, min(b, spans[k][1]) - max(a, spans[k][0]))
            k += 1
        # the others: started before it ended, less those that ended before it started (and itself)
        overlapping = bisect_left(starts, b) - bisect_right(ends, a) - 1
        before = bisect_right(ends, a)
        warm = overlapping == 0 and before > 0 and a - ends[before - 1] <= WARM_PS
        out[key] = (gtid, max(0, b - a - waited) / 1e6, warm)
    return out


def fsync_waits(trx: dict, fsyncs: dict) -> dict:
    """How long each transaction waited for its own fsyncs, microseconds: ``trx`` maps a key
    (thread, EVENT_ID) to the transaction's END_EVENT_ID, ``fsyncs`` a key (thread, EVENT_ID) to
    (is redo, TIMER_START, TIMER_END). A commit's binlog fsync (the sync stage's leader:
    binlog.cc ``ordered_commit``) and its redo fsync (log0write.cc: the committing thread flushes
    the redo itself when no log flusher has) run in its own thread, between the transaction's
    EVENT_ID and END_EVENT_ID (performance_schema numbers a thread's events in order): they are
    matched by event ids, never by time. Wait events are timed on the CPU cycle counter, and
    transactions and stages on the nanosecond timer (WL#10986): their origins and rates differ
    (a binlog fsync 8.8 ms off its own commit stage on a server three seconds old), so no wait can
    be placed inside a transaction by its times. Returns key -> (binlog fsync us, redo fsync us) for the
    transactions that ran both fsyncs themselves; the others (a group's followers, a redo flushed
    by InnoDB's log flusher thread, fsyncs no longer in the history) are left out."""
    from bisect import bisect_right

    starts = _spans_by_thread({key: key[1] for key in trx})   # thread -> its transactions' EVENT_IDs
    sums: dict = {}
    for (tid, eid), (is_redo, a, b) in fsyncs.items():
        ids = starts.get(tid)
        if not ids:
            continue
        k = bisect_right(ids, eid) - 1
        if k < 0 or eid > trx[(tid, ids[k])]:
            continue
        got = sums.setdefault((tid, ids[k]), [0, 0])
        got[bool(is_redo)] += b - a
    return {key: (binlog / 1e6, redo / 1e6) for key, (binlog, redo) in sums.items() if binlog and redo}


def _gno(gtid: str) -> tuple[str, int] | None:
    sid, _, n = gtid.rpartition(":")
    return (sid, int(n)) if n.isdigit() else None


def handoffs(trx: dict, order_waits: dict) -> list[float]:
    """The commit-order hand-offs, microseconds (what ``CostModel.handoff_us`` is): of two
    consecutive transactions (GTIDs n and n+1 of one source) that both waited for their turn to
    commit, the second already asleep when the first woke, the time between their wake-ups
    (rpl_replica_commit_order_manager.cc: a transaction releases the next as it enters the binlog
    group commit). ``trx``: key (thread, event) -> (GTID, TIMER_START, TIMER_END, ...);
    ``order_waits``: key -> (TIMER_START, TIMER_END) on that thread, picoseconds."""
    spans = _spans_by_thread({key: (start, end, gtid) for key, (gtid, start, end, *_rest) in trx.items()})
    woke: dict[tuple[str, int], tuple[int, int]] = {}
    for (tid, _eid), (ws, we) in order_waits.items():
        rows = spans.get(tid, [])
        k = bisect_right(rows, (ws, float("inf"), "")) - 1
        if k >= 0 and rows[k][0] <= ws <= rows[k][1] and (g := _gno(rows[k][2])):
            woke[g] = (ws, we)
    out = []
    for (sid, n), (ws, we) in woke.items():
        prev = woke.get((sid, n - 1))
        if prev and ws < prev[1] <= we:
            out.append((we - prev[1]) / 1e6)
    return sorted(out)


def coordinator_wakeups(trx: dict, coordinator_waits: dict) -> list[float]:
    """From the commit that met the dependency the coordinator slept on (the last transaction end
    inside its wait) to the next transaction's start on a worker, microseconds (what
    ``CostModel.wakeup_us`` is: the model's worker starts when the coordinator wakes): the
    coordinator's wake-up (rpl_mta_submode.cc ``wait_for_last_committed_trx``), its read of the
    first events and the worker's wake-up. Waits followed by none within ``WAKEUP_CAP_PS`` are
    left out."""
    ends = sorted(v[2] for v in trx.values())
    starts = sorted(v[1] for v in trx.values())
    out = []
    for ws, we in coordinator_waits.values():
        k = bisect_right(ends, we) - 1
        j = bisect_left(starts, we)
        if k >= 0 and ends[k] >= ws and j < len(starts) and starts[j] - we <= WAKEUP_CAP_PS:
            out.append((starts[j] - ends[k]) / 1e6)
    return sorted(out)


def _wakeups_of(sample: LiveSample, model: CostModel) -> tuple[dict, dict]:
    """This replica's measured wake-up latencies (the model's fields) and the evidence."""
    measured, evidence = {}, {}
    timed = sample.server.get("dependency_stage", True)
    for name, field_name, values, why in (
            ("commit-order hand-off", "handoff_us", handoffs(sample.transactions, sample.order_waits),
             "hand-offs (consecutive transactions that both waited for commit order)"),
            ("coordinator wake-up", "wakeup_us", coordinator_wakeups(sample.transactions, sample.coordinator_waits),
             "coordinator wake-ups (dependency waits met by a commit)")):
        if field_name == "wakeup_us" and not timed:
            evidence[field_name] = {"samples": 0, "kept_us": model.wakeup_us, "what": name,
                                    "why": "the coordinator's dependency waits are not timed: the base model's kept"}
        elif len(values) >= MIN_WAKEUPS:
            measured[field_name] = round(median(values), 1)
            evidence[field_name] = {"samples": len(values), "median_us": measured[field_name],
                                    "p25_us": round(values[len(values) // 4], 1),
                                    "p75_us": round(values[3 * len(values) // 4], 1), "what": name}
        else:
            evidence[field_name] = {"samples": len(values), "kept_us": getattr(model, field_name), "what": name,
                                    "why": f"{why}: {len(values)} of the {MIN_WAKEUPS} needed, the base model's kept"}
    return measured, evidence


def busy_gaps(commits: list[tuple[int, int]]) -> tuple[float, int]:
    """The serial commit path's time per transaction while the replica was busy, from its binlog:
    ``commits`` are (original_commit_timestamp, immediate_commit_timestamp) in the replica's
    commit order. Transaction i was already waiting when i-1 committed when it had reached the
    replica (its source commit plus the 5th percentile of the window's lags: the transfer, the
    clocks' offset and the quickest apply) before i-1's commit; the mean of those commits' gaps
    (0 for a member of the same group) is the serial time per transaction under load. Returns
    (mean microseconds, how many gaps)."""
    if len(commits) < 2:
        return 0.0, 0
    lags = sorted(imm - orig for orig, imm in commits)
    base = lags[len(lags) // 20]
    gaps = [imm - prev for (orig, imm), (_, prev) in zip(commits[1:], commits) if orig + base < prev <= imm]
    return (sum(gaps) / len(gaps) if gaps else 0.0), len(gaps)


def alone_gtids(commits: list[tuple[int, int, str]]) -> set[str]:
    """The GTIDs of transactions the replica applied alone: ``commits`` are (original commit
    timestamp, immediate commit timestamp, GTID) in the replica's commit order; transaction i was
    alone when it was committed on the source after i-1 was committed here, and i+1 after i was
    (so it reached the replica with nothing in flight, and nothing came while it was). The
    clocks' offset is taken from the lags: a negative smallest lag means the replica's clock is
    behind by at least that much."""
    if len(commits) < 3:
        return set()
    offset = min(0, min(imm - orig for orig, imm, _ in commits))
    out = set()
    for (_, prev_imm, _), (orig, imm, gtid), (next_orig, _, _) in zip(commits, commits[1:], commits[2:]):
        if orig + offset >= prev_imm and next_orig + offset >= imm:
            out.add(gtid)
    return out


def group_fsyncs(alone: list[tuple[float, float]], warm: list[tuple[float, float]]) -> tuple[float, float, str] | None:
    """The model's binlog and redo fsync times (``flush_us``, ``redo_flush_us``) from the
    (binlog, redo) microseconds that transactions waited for their own fsyncs (:func:`fsync_waits`):
    the medians over those applied back to back (a backlog's conditions: an fsync right after the
    previous commit's) when at least :data:`MIN_WARM_FSYNCS` were read, else over those applied
    alone. The median, not the mean: in service an fsync's tail is long. Back to back the redo fsync
    is quicker (durable oltp replica here: median 184 us back to back, 242 alone, 164 in a one-worker
    catch-up; the binlog's 235, 236 and 208). Returns (binlog, redo, which) or None."""
    if len(warm) >= MIN_WARM_FSYNCS:
        return (*_medians(warm), "back to back")
    if alone:
        return (*_medians(alone), "applied alone")
    return None


def _medians(pairs: list[tuple[float, float]]) -> tuple[float, float] | None:
    """The medians of (binlog, redo) fsync waits, or None for none."""
    if not pairs:
        return None
    return median(b for b, _r in pairs), median(r for _b, r in pairs)


def _mean(values) -> float | None:
    v = list(values)
    return round(sum(v) / len(v), 1) if v else None


@dataclass(frozen=True, slots=True)
class _Own:
    """The window's transactions, each's own time (:func:`own_times`): GTID -> us, those applied
    back to back, the worker time before the waits were taken out, (us, ins, upd, del, bytes)
    of each timed one found in the binlog."""

    timed: dict
    warm: set
    raw_us: float
    all_samples: list


def _own_of(sample: LiveSample) -> _Own:
    """Each transaction's own time: its time in the worker less its waits for the coordinator and
    for its turn to commit; and whether it ran back to back with another."""
    window, shapes = sample.transactions, sample.shapes
    own = own_times({k: (g, k[0], a, b) for k, (g, a, b, _e) in window.items()}, sample.waits)
    timed = {g: us for g, us, _warm in own.values()}
    warm = {g for g, _us, w in own.values() if w}
    raw_us = sum((b - a) / 1e6 for g, a, b, _e in window.values())
    all_samples = [(us, *shapes[g][:3], shapes[g][3]) for g, us in timed.items() if g in shapes]
    if len(all_samples) < 50:
        raise ConfigError(f"only {len(all_samples)} replicated transactions timed in the {sample.window_s:g} s window "
                          f"({len(timed)} in performance_schema, {len(shapes)} in the binlog): choose a longer "
                          "--window, or a time when the replica applies more")
    return _Own(timed, warm, raw_us, all_samples)


@dataclass(frozen=True, slots=True)
class _MeanFsyncs:
    """The file instruments over the window: (count, ps) of the redo log's and the binlog's
    fsyncs, their mean latencies (us), their time per transaction and per commit (durable)."""

    d_redo: list
    d_bin: list
    redo_us: float
    bin_us: float
    per_trx: float
    own: float


def _mean_fsyncs(sample: LiveSample) -> _MeanFsyncs:
    durable = sample.server["durable"]
    a, b = sample.io_after, sample.io_before
    d_redo = [x - y for x, y in zip(a.redo, b.redo)]
    d_bin = [x - y for x, y in zip(a.binlog, b.binlog)]
    redo_us = d_redo[1] / d_redo[0] / 1e6 if d_redo[0] else 0.0
    bin_us = d_bin[1] / d_bin[0] / 1e6 if d_bin[0] else 0.0
    per_trx = (d_redo[1] + d_bin[1]) / 1e6 / len(sample.shapes) if durable else 0.0
    # a transaction applied alone waited for its own group's two fsyncs: their mean latencies
    return _MeanFsyncs(d_redo, d_bin, redo_us, bin_us, per_trx, (redo_us + bin_us) if durable else 0.0)


@dataclass(frozen=True, slots=True)
class _Picked:
    """Which transactions the fit is taken from, with what they waited for their own fsyncs."""

    waited_split: dict     # GTID -> (binlog, redo) own fsync waits, us (:func:`fsync_waits`)
    waited_fsync: dict     # GTID -> their sum
    alone: set             # GTIDs applied alone (narrowed to those with own fsyncs when measured)
    measured: bool         # own fsync waits used instead of the mean latencies
    beyond: list           # alone: commit stage beyond its own fsyncs, us, sorted
    alone_by: dict         # GTID -> sample, applied alone
    warm_samples: list     # samples applied back to back
    from_alone: bool
    samples: list          # what the fit is taken from


def _pick(sample: LiveSample, own: _Own, io: _MeanFsyncs) -> _Picked:
    """A transaction applied alone (nothing else in flight on the replica when it arrived, nothing
    arriving before it committed) waited for no other: its worker time is its own apply and
    commit, and durable its own group's two fsyncs (their mean latency, taken out). The fit comes
    from those when the window has enough of them; else from every transaction. With the fsyncs
    timed, each transaction's own waits for them are taken out instead (:func:`fsync_waits`):
    what it waited, not what an fsync takes on average."""
    window, shapes, timed = sample.transactions, sample.shapes, own.timed
    waited_split = {window[k][0]: w for k, w in fsync_waits(
        {k: e for k, (_g, _a, _b, e) in window.items()}, sample.fsyncs).items()} if sample.fsyncs else {}
    waited_fsync = {g: bw + rw for g, (bw, rw) in waited_split.items()}
    alone = alone_gtids(list(sample.commits))
    # enough transactions applied alone to fit from (counted before the fsync reads narrow them)
    enough_alone = len(alone & timed.keys() & shapes.keys()) >= 200
    # performance_schema keeps the last events_waits_history_long_size waits of every kind: at a
    # high rate some fsyncs are gone before a poll reads them. With enough transactions whose own
    # fsyncs were read, only those are used (a mix would be biased towards the mean latencies).
    measured = len(alone & waited_fsync.keys()) >= MIN_FSYNC_TIMED
    if measured:
        alone &= waited_fsync.keys()
    # With the commit stage timed too: what a commit took beyond its own fsyncs (evidence: the
    # commit's CPU and its waits for the binlog's and InnoDB's locks; it stays in the own time).
    commit_stage = last_commits({k: (a, b) for k, (_g, a, b, _e) in window.items()},
                                sample.commit_stages) if sample.commit_stages else {}
    commit_stage_us = {window[k][0]: us for k, (_a, us) in commit_stage.items()}
    beyond = sorted(commit_stage_us[g] - waited_fsync[g] for g in alone if g in commit_stage_us) if measured else []
    alone_by = {g: (max(0.0, us - waited_fsync.get(g, io.own)), *shapes[g][:3], shapes[g][3])
                for g, us in timed.items() if g in shapes and g in alone}
    alone_samples = list(alone_by.values())
    # applied back to back by one worker, nothing else in its workers (performance_schema's
    # timeline, :func:`own_times`): a backlog's conditions, whether or not it arrived alone
    warm_samples = [(max(0.0, timed[g] - waited_fsync.get(g, io.own)), *shapes[g][:3], shapes[g][3])
                    for g in own.warm if g in shapes and (not measured or g in waited_fsync)]
    from_alone = enough_alone and len(alone_samples) >= MIN_FSYNC_TIMED
    samples = alone_samples if from_alone else own.all_samples
    return _Picked(waited_split, waited_fsync, alone, measured, beyond, alone_by, warm_samples, from_alone,
                   samples)


@dataclass(frozen=True, slots=True)
class _Fitted:
    fit: object            # calibrate.GapFit, scaled to back to back and without the stalls
    scaled: bool           # one transaction shape: the base model's costs scaled together
    band: float
    checks: dict
    back: float            # the back-to-back factor


def _fit(picked: _Picked, model: CostModel) -> _Fitted:
    """The regression (or the base model scaled) and its held-out band, the costs scaled to the
    transactions applied back to back and cleared of the stalls."""
    samples, warm_samples = picked.samples, picked.warm_samples
    fit, scaled = fit_any(samples, model)
    band, checks = held_out_band(samples, fit=(lambda s, m: fit_scaled(s, model, m)) if scaled else None)
    # A backlog is applied back to back. The transactions a worker started within WARM_PS of
    # another's end with no other transaction in the workers (no wake-up from idle, warm caches:
    # on a replica in service, most transactions start after an idle gap, and cost more the
    # longer the gap) set the level: the fit's costs are scaled by their time over what the fit
    # gives them (a ratio of two sums: from 30 of them), never up:
    # back to back is no slower for the replica itself, and when it measures slower, what came
    # in the same burst (other work on the host) was the cause, which a catch-up does not have.
    warm_fitted = fit.total(warm_samples) if len(warm_samples) >= 30 else 0.0
    back = min(1.0, sum(x[0] for x in warm_samples) / warm_fitted) if warm_fitted > 0 else 1.0
    # fit_samples spreads the outliers' time over the costs (right for a one-worker catch-up, where
    # every gap is the applier's own time). Here an outlier is mostly a worker waiting: for its
    # turn to commit (replica_preserve_commit_order), or for a core the server's other threads
    # hold; neither is apply cost, and the simulation adds commit-order waits itself: the
    # coefficients of the outlier-free fit are used, and the factor is reported as evidence.
    unstall = 1.0 / fit.stall_factor if fit.stall_factor > 0 else 1.0
    fit = replace(fit, intercept=fit.intercept * back * unstall, insert_us=fit.insert_us * back * unstall,
                  update_us=fit.update_us * back * unstall, delete_us=fit.delete_us * back * unstall)
    return _Fitted(fit, scaled, band, checks, back)


def _commit_us(sample: LiveSample, picked: _Picked, fitted: _Fitted, io: _MeanFsyncs,
               model: CostModel, add: float = 0.0) -> tuple[float, float, int]:
    """The model's ``commit_us``, and the busy commit gaps (:func:`busy_gaps`): (us, mean gap, gaps).
    ``add``: what the model adds to each transaction's worker CPU at this worker count
    (:meth:`CostModel.worker_add_us`), which the intercept holds and the model adds back."""
    fit = fitted.fit
    # A worker's own time per transaction holds its apply and its commit, not the coordinator's
    # read, which overlaps the apply (sim/engine.py; issue 33).
    if picked.from_alone:
        commit = fit.intercept - model.trx_us - add
    else:
        commit = max(0.0, fit.intercept - io.per_trx) - model.trx_us - add
    busy_us, busy_n = busy_gaps([c[:2] for c in sample.commits])
    if sample.server["durable"] and busy_n >= 50 and not picked.from_alone:
        # A durable worker's time holds its waits in the group commit (behind other groups'
        # fsyncs on the one device, for its turn to commit): the intercept overstates the commit
        # CPU by them. The serial stage's own time per transaction is what the replica's commits
        # are apart while the next one is already waiting; the fsync time per transaction out of it.
        events = sum(s[4] for s in sample.shapes.values()) / len(sample.shapes)
        commit = busy_us - io.per_trx - model.coordinator_us(0, events)
    return commit, busy_us, busy_n


def _commit_split(model: CostModel, commit: float) -> dict[str, float]:
    """A measured commit time per transaction as the model's per-member and per-group commit
    costs, in the base model's proportion of a transaction committed alone
    (:meth:`CostModel.commit_alone_us`): a window's gaps give their sum, not the split."""
    alone = model.commit_alone_us()
    share = model.commit_group_us / alone if alone > 0 else 0.0
    return {"commit_us": commit * (1.0 - share), "commit_group_us": commit * share}


@dataclass(frozen=True, slots=True)
class _GroupFsyncs:
    """A group's fsyncs in the model (binlog, redo us) and where they came from; the own fsyncs
    of the transactions applied back to back and their medians, and those of the alone ones."""

    bin_us: float
    redo_us: float
    source: str
    warm: list
    alone_medians: tuple | None
    warm_medians: tuple | None


def _group_fsyncs_of(picked: _Picked, own: _Own, io: _MeanFsyncs) -> _GroupFsyncs:
    """The medians of the own fsyncs of the transactions applied back to back, or alone, when they
    were read (:func:`group_fsyncs`), else the instruments' mean latencies (which also count the
    log flusher's fsyncs nobody waited for)."""
    split = picked.waited_split
    warm_fsyncs = [split[g] for g in sorted(own.warm) if g in split] if picked.measured else []
    alone_fsyncs = [split[g] for g in sorted(picked.alone_by)] if picked.measured else []
    grouped = group_fsyncs(alone_fsyncs, warm_fsyncs)
    alone_medians, warm_medians = _medians(alone_fsyncs), _medians(warm_fsyncs)
    if grouped is not None:
        bin_us, redo_us, source = grouped
    else:
        bin_us, redo_us, source = io.bin_us, io.redo_us, "the file instruments' mean latencies"
    return _GroupFsyncs(bin_us, redo_us, source, warm_fsyncs, alone_medians, warm_medians)


def _fsyncs_of(grouped: _GroupFsyncs, picked: _Picked, model: CostModel) -> dict[str, float]:
    """The model's per-fsync times: the measured ones (:func:`_group_fsyncs_of`, fsyncs of one
    transaction each) less what ``model.fsync_byte_us`` adds for a transaction of the picked
    transactions' median size, which the engines add back per byte of each group."""
    per_byte = model.fsync_byte_us * (median(s[4] for s in picked.samples) if picked.samples else 0.0)
    return {"redo_flush_us": max(0.0, grouped.redo_us - per_byte), "flush_us": max(0.0, grouped.bin_us - per_byte)}


def fit_live(sample: LiveSample, *, base: CostModel | None = None, cores: int | None = None) -> LiveCalibration:
    """A cost model from what a replica in service applied over a window (see the module
    docstring), with the evidence it was fitted from."""
    model = base or CostModel()
    server = sample.server
    own = _own_of(sample)
    workers = max(1, int(server["workers"]))
    on_cores = replace(model, cores=cores or model.cores)
    cpu, add = on_cores.worker_cpu(workers), on_cores.worker_add_us(workers)
    io = _mean_fsyncs(sample)
    picked = _pick(sample, own, io)
    fitted = _fit(picked, model)
    commit, busy_us, busy_n = _commit_us(sample, picked, fitted, io, model, add)
    grouped = _group_fsyncs_of(picked, own, io)
    fit = fitted.fit
    # a kind never applied keeps base's cost (scaled: every kind was scaled with the rest)
    seen_kind = [fitted.scaled or any(s[k] for s in picked.samples) for k in (1, 2, 3)]
    model = replace(model, insert_us=fit.insert_us / cpu if seen_kind[0] else model.insert_us,
                    update_us=fit.update_us / cpu if seen_kind[1] else model.update_us,
                    delete_us=fit.delete_us / cpu if seen_kind[2] else model.delete_us,
                    byte_us=0.0, **_commit_split(model, max(0.0, commit)), error_band=round(fitted.band, 4),
                    **(_fsyncs_of(grouped, picked, model) if server["durable"] else {}))
    if cores:
        model = replace(model, cores=cores)
    wakeups, wakeup_evidence = _wakeups_of(sample, model)
    model = replace(model, **wakeups)
    # Durable: one fsync at a time on this storage, or the redo's and the binlog's at once.
    waited, concurrent = fsync_overlap(list(sample.fsyncs.values())) if sample.fsyncs else (None, 0)
    if waited is not None:
        model = replace(model, fsync_devices=1 if waited >= 0.5 else 2)
    host = server.get("hostname") or ""
    model = replace(without_event_costs(without_schema_costs(model)), calibrated_workers=workers, measured_on=one_line(
        f"{replica_of([server.get('version') or ''])}{' on ' + host if host else ''}, watched live: "
        f"{fit.samples:,} of its applied transactions in {sample.window_s:g} s, {workers_text(workers)}, "
        f"{'durable' if server['durable'] else 'relaxed'}; {model.cores} cores"))
    evidence = {
        "optional_missing": _optional_missing(server),
        "window_seconds": sample.window_s, "workers": workers, "durable": server["durable"],
        "transactions_in_binlog": len(sample.shapes), "transactions_timed": len(own.timed),
        "samples": len(picked.samples), **_fit_evidence(fitted, cpu, io), "multi_worker_us_taken_out": add,
        "fsync_waits_timed": _fsync_evidence(sample, own, picked, io, grouped),
        "commit_stage": _commit_stage_evidence(server, picked.beyond),
        "fsync_overlap": _overlap_evidence(server, waited, concurrent),
        "fsync_devices": model.fsync_devices,
        "busy_commit_gaps": busy_n, "busy_commit_gap_mean_us": round(busy_us, 1),
        **_own_evidence(sample, own, picked, fitted, busy_n),
        "error_band": round(fitted.band, 4), "held_out": fitted.checks, "wakeups": wakeup_evidence,
        **_lag_evidence(sample.commits), "binlog_files": list(sample.binlog_files),
    }
    return LiveCalibration(model, evidence)


def _optional_missing(server: dict) -> list[str]:
    """What a durable calibration could also have read, each with how to turn it on."""
    out = []
    if server["durable"] and not server["fsync_waits"]:
        out.append(
            "each fsync's time (whether the storage runs the redo log and binlog fsyncs at once, and what each "
            "transaction waited for them; fsync_devices kept, mean latencies used): UPDATE "
            "performance_schema.setup_consumers SET ENABLED='YES' WHERE NAME IN ('events_waits_current', "
            "'events_waits_history_long')")
    if not server.get("dependency_stage", True):
        out.append(
            "the coordinator's dependency waits (this replica's wake-up latency, wakeup_us; the base model's "
            "kept): UPDATE performance_schema.setup_instruments SET ENABLED='YES', TIMED='YES' "
            f"WHERE NAME='{DEPENDENCY_STAGE}'")
    if server["durable"] and not server["commit_stage"]:
        out.append(
            "the workers' commit stage (the evidence's commit time beyond its fsyncs): UPDATE "
            "performance_schema.setup_instruments SET ENABLED='YES', TIMED='YES' "
            f"WHERE NAME='{COMMIT_STAGE}'")
    return out


def _fit_evidence(fitted: _Fitted, cpu: float, io: _MeanFsyncs) -> dict:
    fit = fitted.fit
    return {
        "samples_kept": fit.samples, "r2": round(fit.r2, 4), "mean_worker_us": round(fit.mean_gap_us, 1),
        "stall_factor": round(fit.stall_factor, 3),
        "per_row_costs": ("one transaction shape: the base model's costs scaled together" if fitted.scaled
                          else "regressed on rows by kind"), "multi_worker_cpu_taken_out": cpu,
        "redo_fsyncs": io.d_redo[0], "redo_fsync_mean_us": round(io.redo_us, 1),
        "binlog_fsyncs": io.d_bin[0], "binlog_fsync_mean_us": round(io.bin_us, 1),
        "fsync_us_per_transaction": round(io.per_trx, 1)}


def _fsync_evidence(sample: LiveSample, own: _Own, picked: _Picked, io: _MeanFsyncs, grouped: _GroupFsyncs) -> dict:
    """The own fsync waits read, and which the model's fsync times came from."""
    server, split = sample.server, picked.waited_split
    alone_medians, warm_medians = grouped.alone_medians, grouped.warm_medians
    time_fsyncs = server["fsync_waits"] and server["durable"]
    return {"transactions": len(picked.waited_fsync), "of_timed": len(own.timed) if time_fsyncs else 0,
            "used": picked.measured,
            "alone_median_binlog_us": round(alone_medians[0], 1) if alone_medians else None,
            "alone_median_redo_us": round(alone_medians[1], 1) if alone_medians else None,
            "alone_mean_binlog_us": _mean(split[g][0] for g in picked.alone_by if g in split),
            "alone_mean_redo_us": _mean(split[g][1] for g in picked.alone_by if g in split),
            "instead_of_mean_latencies_us": round(io.own, 1),
            "back_to_back": len(grouped.warm),
            "back_to_back_median_binlog_us": round(warm_medians[0], 1) if warm_medians else None,
            "back_to_back_median_redo_us": round(warm_medians[1], 1) if warm_medians else None,
            "model_fsyncs_from": grouped.source if server["durable"] else "not durable"}


def _commit_stage_evidence(server: dict, beyond: list):
    if not server["durable"]:
        return "not durable"
    if not server["commit_stage"]:
        return "not timed: instrument stage/sql/waiting for handler commit is off"
    if len(beyond) < 10:
        return "too few alone transactions with it read"
    return {"transactions": len(beyond), "beyond_own_fsyncs_us": {
        "p10": round(beyond[len(beyond) // 10], 1), "median": round(beyond[len(beyond) // 2], 1),
        "p90": round(beyond[len(beyond) * 9 // 10], 1)}}


def _overlap_evidence(server: dict, waited: float | None, concurrent: int) -> str:
    if not server["durable"]:
        return "not durable"
    if not server["fsync_waits"]:
        return "not measured: consumers events_waits_current and events_waits_history_long are off"
    if waited is None:
        return f"too few fsyncs started while the other file's ran ({concurrent})"
    return (f"{'one after the other' if waited >= 0.5 else 'at once'}: of {concurrent} fsyncs "
            f"started while the other file's ran, the time waited for it was {waited:.0%} of what "
            "was left of it")


def _own_evidence(sample: LiveSample, own: _Own, picked: _Picked, fitted: _Fitted, busy_n: int) -> dict:
    """The waits taken out, the back-to-back scaling, and where commit_us came from."""
    timed, back, from_alone = own.timed, fitted.back, picked.from_alone
    return {
        "waits_taken_out_us_per_transaction": round((own.raw_us - sum(timed.values())) / max(1, len(timed)), 1),
        "wait_stages": len(sample.waits),
        "samples_back_to_back": len(picked.warm_samples), "back_to_back_factor": round(back, 4),
        "mean_own_us": {"back_to_back": _mean(s[0] for s in picked.warm_samples),
                        "alone_after_idle": _mean(x[0] for g, x in picked.alone_by.items() if g not in own.warm)},
        "commit_us_from": ("transactions applied alone, scaled to the back-to-back ones" if back < 1.0 and from_alone else
                           "every transaction, scaled to the back-to-back ones" if back < 1.0 else
                           "transactions applied alone" if from_alone else
                           "busy commit gaps" if sample.server["durable"] and busy_n >= 50 else
                           "worker-time intercept"),
        "samples_alone": len(picked.alone_by) if from_alone else 0}


def _lag_evidence(commits) -> dict:
    """The lag the window's transactions were applied with (immediate less original commit)."""
    lags = sorted(imm - orig for orig, imm, _g in commits)
    return {"lag_median_us": lags[len(lags) // 2] if lags else None, "lag_max_us": lags[-1] if lags else None}
