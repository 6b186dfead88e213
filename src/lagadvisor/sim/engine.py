"""A deterministic discrete-event simulation of the replica applier.

LOGICAL_CLOCK (sql/rpl_mta_submode.cc ``Mts_submode_logical_clock``): one coordinator takes
transactions in relay-log order; a transaction is handed to a free worker once every
transaction with ``sequence_number <= last_committed`` of its file is committed (the prefix
low-water mark, §4.2 of the spec); ``last_committed = 0``, a new file or a gap in sequence
numbers is a barrier (wait for everything before). The coordinator blocks on the head of the
queue. Workers hold their transaction until it commits; with ``replica_preserve_commit_order``
a transaction enters the commit stage only after its predecessor did, and commits that reach
the stage while a flush is in progress share the next one (group commit). CPU work runs on at
most ``cores`` threads (FIFO, the coordinator first). Events are ordered by
``(time, sequence)`` so results are the same bytes for the same input.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field

from .model import CostModel, ReplicaConfig

PREFIX, SPECIFIC, ENTERED = 0, 1, 2


@dataclass(frozen=True, slots=True)
class SimTrx:
    """One transaction as the applier sees it. ``need`` is the index the transaction waits for
    (-1: nothing), interpreted per ``need_kind``: PREFIX (all transactions up to it committed),
    SPECIFIC (that one committed), ENTERED (all up to it have entered the commit stage)."""

    arrival_us: float
    work_us: float
    nbytes: int
    need: int
    need_kind: int = PREFIX


@dataclass
class SimResult:
    workers: int
    apply_us: float                      # first arrival to last commit
    commit_us: list[float] = field(repr=False)
    arrival_us: list[float] = field(repr=False)
    busy_us: float = 0.0                 # worker time holding a transaction
    dependency_wait_us: float = 0.0      # coordinator time blocked on the clock or commit order
    worker_wait_us: float = 0.0          # coordinator time blocked on no free worker
    flushes: int = 0

    @property
    def utilisation(self) -> float:
        slots = max(1, self.workers) * self.apply_us
        return self.busy_us / slots if slots > 0 else 0.0

    def lags_us(self) -> list[float]:
        return [c - a for c, a in zip(self.commit_us, self.arrival_us)]


def simulate(trxs: list[SimTrx], cfg: ReplicaConfig, cost: CostModel) -> SimResult:
    if cfg.workers <= 0:
        return _single_threaded(trxs, cfg, cost)
    n = len(trxs)
    heap: list = []
    counter = 0

    def push(t: float, kind: int, i: int = -1, data=None) -> None:
        nonlocal counter
        counter += 1
        heapq.heappush(heap, (t, counter, kind, i, data))

    DISPATCH_DONE, APPLY_DONE, FLUSH_DONE, WAKE = 0, 1, 2, 3
    committed = bytearray(n)
    entered = bytearray(n)
    applied = bytearray(n)
    commit_t = [0.0] * n
    lwm = -1                 # all indices <= lwm committed
    entered_upto = -1        # all indices <= entered_upto entered the commit stage
    next_entry = 0           # preserve order: next index allowed into the commit stage
    free_workers = cfg.workers
    cores_free = max(1, cost.cores)
    core_queue: deque[int] = deque()
    coord_next = 0
    coord_busy = False
    coord_waiting_core = False
    coord_blocked_since: float | None = None
    blocked_on = ""
    pending = 0
    flush_busy = False
    flush_queue: list[int] = []
    res = SimResult(cfg.workers, 0.0, commit_t, [x.arrival_us for x in trxs])
    start_t = [0.0] * n
    t = 0.0

    def ready(i: int) -> bool:
        x = trxs[i]
        if x.need < 0:
            return True
        if x.need_kind == PREFIX:
            return lwm >= x.need
        if x.need_kind == SPECIFIC:
            return bool(committed[x.need])
        return entered_upto >= x.need

    def try_coordinator(now: float) -> None:
        nonlocal coord_busy, coord_waiting_core, cores_free, free_workers, coord_blocked_since, blocked_on
        if coord_busy or coord_waiting_core or coord_next >= n:
            return
        x = trxs[coord_next]
        if x.arrival_us > now:
            push(x.arrival_us, WAKE)
            return
        reason = ""
        if not ready(coord_next):
            reason = "dep"
        elif free_workers == 0:
            reason = "worker"
        elif pending and pending + x.nbytes > cfg.pending_jobs_size_max:
            reason = "worker"
        if reason:
            if coord_blocked_since is None:
                coord_blocked_since, blocked_on = now, reason
            return
        if coord_blocked_since is not None:
            if blocked_on == "dep":
                res.dependency_wait_us += now - coord_blocked_since
            else:
                res.worker_wait_us += now - coord_blocked_since
            coord_blocked_since = None
        free_workers -= 1
        coord_busy = True
        if cores_free > 0:
            cores_free -= 1
            push(now + cost.dispatch_us, DISPATCH_DONE, coord_next)
        else:
            coord_waiting_core = True

    def grant_cores(now: float) -> None:
        nonlocal cores_free, coord_waiting_core
        while cores_free > 0 and (coord_waiting_core or core_queue):
            cores_free -= 1
            if coord_waiting_core:
                coord_waiting_core = False
                push(now + cost.dispatch_us, DISPATCH_DONE, coord_next)
            else:
                i = core_queue.popleft()
                push(now + trxs[i].work_us, APPLY_DONE, i)

    def enter_commit(i: int, now: float) -> None:
        nonlocal entered_upto, flush_busy, flush_queue
        entered[i] = 1
        while entered_upto + 1 < n and entered[entered_upto + 1]:
            entered_upto += 1
        if cfg.durable:
            flush_queue.append(i)
            if not flush_busy:
                flush_busy = True
                push(now + cost.flush_us, FLUSH_DONE, -1, flush_queue)
                flush_queue = []
        else:
            commit(i, now)

    def commit(i: int, now: float) -> None:
        nonlocal lwm, free_workers
        committed[i] = 1
        commit_t[i] = now
        res.busy_us += now - start_t[i]
        free_workers += 1
        while lwm + 1 < n and committed[lwm + 1]:
            lwm += 1

    try_coordinator(0.0)
    while heap:
        t, _, kind, i, data = heapq.heappop(heap)
        if kind == DISPATCH_DONE:
            coord_busy = False
            cores_free += 1
            pending += trxs[i].nbytes
            start_t[i] = t
            coord_next = i + 1
            core_queue.append(i)
        elif kind == APPLY_DONE:
            cores_free += 1
            pending -= trxs[i].nbytes
            applied[i] = 1
            if cfg.preserve_commit_order:
                while next_entry < n and applied[next_entry]:
                    enter_commit(next_entry, t)
                    next_entry += 1
            else:
                enter_commit(i, t)
        elif kind == FLUSH_DONE:
            res.flushes += 1
            for j in data:
                commit(j, t)
            flush_busy = False
            if flush_queue:
                flush_busy = True
                push(t + cost.flush_us, FLUSH_DONE, -1, flush_queue)
                flush_queue = []
        grant_cores(t)
        try_coordinator(t)
        grant_cores(t)
    if coord_next < n:
        raise RuntimeError(f"simulation stalled at transaction {coord_next} of {n}")
    first = min((x.arrival_us for x in trxs), default=0.0)
    res.apply_us = (max(commit_t) - first) if n else 0.0
    return res


def _single_threaded(trxs: list[SimTrx], cfg: ReplicaConfig, cost: CostModel) -> SimResult:
    """replica_parallel_workers=0: the SQL thread reads, applies and commits one at a time."""
    n = len(trxs)
    commit_t = [0.0] * n
    t = 0.0
    busy = 0.0
    for i, x in enumerate(trxs):
        t = max(t, x.arrival_us)
        work = cost.dispatch_us + x.work_us + (cost.flush_us if cfg.durable else 0.0)
        t += work
        busy += work
        commit_t[i] = t
    first = min((x.arrival_us for x in trxs), default=0.0)
    res = SimResult(0, (t - first) if n else 0.0, commit_t, [x.arrival_us for x in trxs], busy_us=busy,
                    flushes=n if cfg.durable else 0)
    return res
