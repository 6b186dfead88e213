"""A deterministic discrete-event simulation of the replica applier.

LOGICAL_CLOCK (sql/rpl_mta_submode.cc ``Mts_submode_logical_clock``): one coordinator takes
transactions in relay-log order; a transaction is handed to a free worker once every
transaction with ``sequence_number <= last_committed`` of its file is committed (the prefix
low-water mark, §4.2 of the spec); ``last_committed = 0``, a new file or a gap in sequence
numbers is a barrier (wait for everything before). The coordinator blocks on the head of the
queue: on a dependency it sleeps (``wait_for_last_committed_trx``, a condition wait) and runs
again ``wakeup_us`` after the commit that met it; for a free worker it spins. The worker is
assigned at the transaction's first event and applies the events as the coordinator reads
them (``dispatch_us`` + ``dispatch_event_us`` per event + ``dispatch_byte_us`` per byte: the read
is per event, docs/accuracy.md "The coordinator reads per event"), so the read and the apply run at once
and the apply ends no earlier than the read. Workers hold their transaction until it commits; with ``replica_preserve_commit_order``
a transaction enters the commit pipeline only after its predecessor did. The pipeline is the
replica's binlog group commit (MYSQL_BIN_LOG::ordered_commit), three serial stages that pipeline,
each under its own lock: the flush stage (LOCK_log), where the group's leader waits for the InnoDB
redo fsync of the whole group (``redo_flush_us`` per group when durable: ``ha_flush_logs(true)``
in process_flush_stage_queue) and writes the members' binlog caches; the sync stage (LOCK_sync:
the binlog fsync, ``flush_us`` per group when durable); the commit stage (LOCK_commit,
binlog_order_commits: the leader commits every member in InnoDB in order, CPU, ``commit_us`` per
member and ``commit_group_us`` per group, and the members are committed when it ends; its groups
are ``SimResult.commit_groups``). Transactions arriving while the flush stage
is busy form the next group; a leader entering a busy stage queues there (change_stage), and the
stage's next leader takes everything queued (fetch_queue_for), so groups merge at the sync and
commit stages when those are the slower ones: the binlog fsyncs (``SimResult.flushes``) are the
sync stage's groups. The redo fsync of one group overlaps the binlog fsync of the one before and
the InnoDB commits of the one before that. CPU is shared by processor sharing
(the Linux scheduler's fair share): every runnable thread — workers applying, the coordinator
dispatching, the flush leader — progresses at ``min(1, cores / runnable)``, divided by the
contention of that many threads running at once (``CostModel.contention``: InnoDB's shared
latches and cache lines, and past the cores the context switches; measured on 16 cores). The coordinator
busy-waiting for a free worker (``get_least_occupied_worker`` loops on ``my_thread_yield``)
holds a whole core when one is idle (measured on a real 9.7 replica at 100% of a core), yields
its core to the threads that share it (CFS ``yield_task_fair``), and counts as one thread when
the scheduler balances threads over cores: it takes CPU from the others only when placed alone
on a core (:func:`simulate_python`'s ``rate``; on one core it takes none: measured on a 9.7
replica pinned to one core, 4 and 8 workers caught up faster than 1). When durable, an fsync is
first ``fsync_cpu`` of its time in CPU by the thread that waits for it (the kernel's part and
InnoDB's redo-flush wait loop, log0write.cc ``log_wait_for_flush``; bench/fsync_cpu.py), shared
like any other CPU, then the device's rest: on a busy core fsyncs take longer. Events are ordered by
``(time, sequence)`` so results are the same bytes for the same input. Each transaction's worker CPU
is first multiplied by its factor of the cost model's ``apply_spread`` (:func:`spread_across_workers`):
fixed per transaction by its index, so still the same bytes. Workers have numbers: the
coordinator gives each transaction the lowest-numbered free worker (rpl_mta_submode.cc
``get_free_worker``: the first worker with no events assigned), and a transaction given another
worker than its predecessor's pays ``switch_us`` at its start, on top of its apply
(:meth:`CostModel.switch_add_us`: 0 in the built-in model); a chain, each transaction waiting for
the one before to commit, stays on the worker its predecessor freed (``SimResult.switches``
counts the others).

The Change Stream Applier (``ReplicaConfig.applier = Applier.CSA``; MySQL 26.7+, ``CHANGE
REPLICATION SOURCE TO APPLIER_VERSION=2``) follows its scheduler in the public MySQL source,
mysql/mysql-server commit 312d9ed741ea (``CSA_SOURCE``). The reader (sql/changestreams/apply/
service/csa_service.cpp ``Csa_service::run``) takes transactions in relay-log order, each
``dispatch_us`` of serial CPU; before it enqueues one it calls ``Scheduler::ensure_space``
(libs/mysql/scheduler/scheduler.cpp), a yield loop (it spins, as the MTA's coordinator does for a
free worker) until fewer than ``min(4 * workers, 2048)`` transactions are in flight
(``tune::scheduler_max_task_number_factor`` = 4 times ``n_workers``, at most
``tune::csa_session_default_cache_size``, context/tune.h; :func:`csa_in_flight_limit`): a
transaction is in flight from its enqueue until its last phase ends (``Repeatable_task_state``'s
destructor, scheduled_task.cpp), here until it commits. Its start is a low-water mark:
``Dependency_adapter_lwm::solve`` (sql/changestreams/apply/scheduler/dependency_adapter_lwm.h)
gives it a delay, the LWM it needs: ``last_committed`` 0 or a break in ``sequence_number`` is a
barrier (delay = its own task id: every transaction before it complete), else the task id of its
``last_committed`` plus one, not below the last barrier's. The input's ``need`` (PREFIX) is that
delay minus one (sim/build.py ``logical_clock``, floored at the last barrier as ``solve`` floors
it), except for a ``last_committed`` not below its own ``sequence_number``, which the builder
keeps a barrier for that one transaction (the MTA's rule, ``schedule_next_event``) where the CSA
falls back to the last barrier: more cautious for that transaction only. The LWM
(``Clock_lwm_registry::tick``, clock_lwm_registry.cpp) counts the transactions completed in order,
ticked in ``Scheduler::callback`` (scheduler_impl.hpp) when a task's last phase ends: its commit,
``lwm`` here. Enqueued transactions wait in a queue ordered by (delay, task id) (``m_tasks``,
``Task_schedule::has_higher_priority``); ``Scheduler::run_main_thread`` hands every one whose delay
the LWM has reached to the worker pool, in that order, so a transaction that waits does not hold
back those behind it (the MTA's coordinator does); the pool's workers take them first in, first
out. The scheduler thread sleeps on a condition (``m_cv_scheduler``): a commit that moves the LWM
wakes it (``notify_scheduler``) and it hands out what became ready ``wakeup_us`` later, as the
MTA's coordinator wakes from ``wait_for_last_committed_trx``; a transaction whose delay is reached
when it is enqueued goes to the pool at once. With replica_preserve_commit_order ON a transaction
is a ``Transaction_order_schedule`` (transaction_order_schedule.cpp) of two phases: the apply
(``Job_applier::run_phase``, which stops at the commit event and detaches) frees the worker, and
the commit phase follows the commit order (``Commit_order_clock``; ``enter_in_order``, unchanged);
with it OFF a ``Delayed_schedule`` of one phase: the worker holds the transaction through its
commit. The worker reads its transaction's events itself (``Job_applier::run_phase`` fetches them),
so the read (``dispatch_event_us * events + dispatch_byte_us * nbytes``) is in the worker's CPU
job, before its apply. The reader's wait at the limit counts as ``dependency_wait_us`` when some
transaction in flight waits for the LWM as it begins, else as ``worker_wait_us``. Not modelled: the
commit phase is dispatched to a pool thread again (``Job_applier::commit``; here the group commit's
leader commits, no worker is taken), the scheduler thread's own CPU, APPLIER_EVENT_MEMORY_LIMIT
(``Resource_map``); no replica_pending_jobs_size_max (MySQL 26.7 Reference Manual 19.2.4.2). The
commit pipeline is the MTA's group commit. The CSA takes PREFIX needs only (LOGICAL_CLOCK: simulate
refuses other modes; a SPECIFIC or ENTERED need, which no CSA input has, is handed out once met, in
index order, after the PREFIX ones).

This module is the reference. ``native/src/sim.rs`` replays it event for event (same queue
order, same float operations in the same order) and :func:`simulate` uses it when the
extension is built; a change here must be made there too (tests/native/test_sim_engine.py compares
the two exactly). Input is :class:`SimInput`, columns of typed arrays, so a million
transactions cross into Rust as six buffers, with the settings and costs as one
:class:`SimArgs` (and, from :func:`simulate`, the work unscaled: sim.rs does
:func:`spread_across_workers` itself, as for ``StreamSim``). :func:`simulate_python` mirrors sim.rs's ``Sim`` line by line and stays one
function, longer than 100 lines, on purpose: split, the two would no longer read side by side.
"""

from __future__ import annotations

import heapq
import threading
from array import array
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from ..kinds import Applier
from ..native.loader import extension, require
from .model import CostModel, ReplicaConfig

PREFIX, SPECIFIC, ENTERED = 0, 1, 2

#: The MySQL source the CSA's scheduling follows (module docstring): repository and commit.
CSA_SOURCE = "mysql/mysql-server@312d9ed741eada25dc95432484ef492311aa5c9c"
#: sql/changestreams/apply/context/tune.h: ``scheduler_max_task_number_factor`` (tasks in flight
#: per worker) and ``csa_session_default_cache_size`` (the cap on that product).
CSA_TASKS_PER_WORKER = 4
CSA_MAX_TASKS = 2048


def csa_in_flight_limit(workers: int) -> int:
    """The CSA's transactions in flight at most (csa_service.cpp ``Csa_service::run``: the
    scheduler's ``allowed_task_count``, ``std::min(4 * n_workers, 2048)``)."""
    return min(CSA_TASKS_PER_WORKER * workers, CSA_MAX_TASKS)


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
    events: int = 0     # its binlog events (Transaction.event_count): what the coordinator reads


@dataclass(frozen=True, slots=True)
class SimInput:
    """The applier's input as columns, one entry per transaction (the fields of :class:`SimTrx`):
    what the builders produce and the engines read. Columns are typed arrays so the native
    engine gets them as one buffer each. Indexing gives a :class:`SimTrx` (for tests and small
    inputs; the engines never do)."""

    arrival_us: array   # 'd'
    work_us: array      # 'd'
    nbytes: array       # 'q'
    need: array         # 'q'
    need_kind: array    # 'b'
    events: array       # 'q'

    @classmethod
    def of(cls, trxs: Iterable[SimTrx]) -> "SimInput":
        trxs = list(trxs)
        return cls(array("d", [x.arrival_us for x in trxs]), array("d", [x.work_us for x in trxs]),
                   array("q", [x.nbytes for x in trxs]), array("q", [x.need for x in trxs]),
                   array("b", [x.need_kind for x in trxs]), array("q", [x.events for x in trxs]))

    def __len__(self) -> int:
        return len(self.arrival_us)

    def __getitem__(self, i: int) -> SimTrx:
        return SimTrx(self.arrival_us[i], self.work_us[i], self.nbytes[i], self.need[i], self.need_kind[i],
                      self.events[i])


@dataclass
class SimResult:
    workers: int
    apply_us: float                      # first arrival to last commit
    commit_us: Sequence[float] = field(repr=False)   # array('d')
    arrival_us: Sequence[float] = field(repr=False)  # array('d')
    busy_us: float = 0.0                 # worker time holding a transaction
    dependency_wait_us: float = 0.0      # coordinator time blocked on the clock or commit order
    worker_wait_us: float = 0.0          # coordinator time blocked on no free worker
    flushes: int = 0                     # the sync stage's groups: the binlog fsyncs when durable
    commit_groups: int = 0               # the commit stage's groups (each pays commit_group_us)
    switches: int = 0                    # transactions given another worker than their predecessor's

    @property
    def utilisation(self) -> float:
        slots = max(1, self.workers) * self.apply_us
        return self.busy_us / slots if slots > 0 else 0.0

    def lags_us(self) -> list[float]:
        return [c - a for c, a in zip(self.commit_us, self.arrival_us)]


#: The native engine (``native/src/sim.rs`` in ``lagadvisor._native``), or None: not built, or
#: ``LAGADVISOR_PUREPYTHON`` set (to anything but 0).
NATIVE = extension("sim_run")


def simulate(trxs: SimInput | Sequence[SimTrx], cfg: ReplicaConfig, cost: CostModel, *,
             scaled: "ScaledWork | None" = None) -> SimResult:
    """Simulate the applier on *trxs*: the native engine when it is available, else the Python
    reference. Both give the same result, to the bit (tests/native/test_sim_engine.py). A caller
    that simulates the same input at many worker counts passes its own ``scaled`` (per run)."""
    inp = trxs if isinstance(trxs, SimInput) else SimInput.of(trxs)
    if NATIVE is not None:
        return simulate_native(inp, cfg, cost, spread=True)
    inp, cost = spread_across_workers(inp, cfg, cost, scaled)
    return simulate_python(inp, cfg, cost)


def spread_across_workers(inp: SimInput, cfg: ReplicaConfig, cost: CostModel,
                          scaled: "ScaledWork | None" = None) -> tuple[SimInput, CostModel]:
    """With more than one worker, consecutive transactions run on different threads (and cores)
    than the one that ran their predecessor, with colder caches: each transaction's worker CPU
    gains ``cost.multi_worker_us`` (:meth:`CostModel.worker_add_us`), and the workers' CPU (apply
    and commit) is ``cost.multi_worker_cpu`` times what one worker needs (1 in the built-in model:
    the lab's fit put the cost per transaction, not in proportion to the work). On one core there
    is one cache: neither (:meth:`CostModel.worker_cpu`). A durable replica's workers also pay
    ``durable_byte_us`` per byte (:meth:`CostModel.work_byte_us`), added before the factor:
    ``(work + b * nbytes) * f + m`` (sim.rs ``feed`` does the same for ``StreamSim``). Then, at
    any worker count, each transaction's worker CPU is times its factor of the cost model's
    ``apply_spread`` (:meth:`CostModel.spread_factors`, by :func:`spread_slot` of its index):
    transactions of the same statements do not take the same time, and with commit order
    preserved the slower ones hold the rest back."""
    f = cost.worker_cpu(cfg.workers)
    b = cost.work_byte_us(cfg.durable)
    m = cost.worker_add_us(cfg.workers)
    t = cost.spread_factors()
    if f == 1.0 and b == 0.0 and m == 0.0 and not t:
        return inp, cost
    work = (scaled or ScaledWork())(inp.work_us, f, inp.nbytes, b, m, t)
    return (SimInput(inp.arrival_us, work, inp.nbytes, inp.need, inp.need_kind, inp.events),
            cost.commit_scaled(f))


class ScaledWork:
    """``work`` times ``f`` (plus ``m``), remembered for the last few arrays: state of one run (a
    sweep or an advice report simulates the same input at many worker counts), owned by its caller
    and locked, as the caller may simulate from several threads."""

    def __init__(self, keep: int = 4) -> None:
        self._keep = keep
        self._seen: list[tuple[object, float, float, float, tuple[float, ...], array]] = []
        self._lock = threading.Lock()

    def __call__(self, work, f: float, nbytes=None, b: float = 0.0, m: float = 0.0,
                 spread: tuple[float, ...] = ()) -> array:
        """``(work + b * nbytes) * f + m``, times ``spread[spread_slot(i)]`` for transaction ``i``
        when a spread is given (sim.rs ``feed``: the same operations)."""
        with self._lock:
            for w, g, bb, mm, tt, out in self._seen:
                if w is work and g == f and bb == b and mm == m and tt == spread:
                    return out
        if spread:
            slots = spread_slots(len(work))
            if b != 0.0:
                out = array("d", [((w + b * nb) * f + m) * spread[k] for w, nb, k in zip(work, nbytes, slots)])
            else:
                out = array("d", [(w * f + m) * spread[k] for w, k in zip(work, slots)])
        elif b != 0.0:
            out = array("d", [(w + b * nb) * f + m for w, nb in zip(work, nbytes)])
        else:
            out = array("d", [w * f + m for w in work])
        with self._lock:
            self._seen.insert(0, (work, f, b, m, spread, out))
            del self._seen[self._keep:]
        return out


_MASK64 = (1 << 64) - 1


_slots = b""
_slots_lock = threading.Lock()


def spread_slots(n: int) -> bytes:
    """:func:`spread_slot` of ``0..n-1``: a prefix of one table that grows to the longest input
    seen (a sweep, or calibrate's thousands of runs over its pieces, asks for the same again)."""
    global _slots
    if len(_slots) < n:
        with _slots_lock:
            if len(_slots) < n:
                _slots = _slots + bytes(spread_slot(i) for i in range(len(_slots), n))
    return _slots[:n]


def spread_slot(i: int) -> int:
    """Which of the ``SPREAD_SLOTS`` apply factors transaction ``i`` (its index in the input)
    takes: the top six bits of SplitMix64 of ``i`` (sim.rs ``spread_slot``, the same bits), so
    neighbours, and a chain's links, draw independently of their place."""
    z = (i + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (z ^ (z >> 31)) >> 58


@dataclass(frozen=True, slots=True)
class SimArgs:
    """What ``native.sim_run`` takes, read by attribute (``RunArgs`` in native/src/sim.rs): the
    input's columns as bytes, the replica's settings and the cost model (``Config`` and
    ``Costs`` there take the fields they read by name)."""

    arrival_us: bytes
    work_us: bytes
    nbytes: bytes
    need: bytes
    need_kind: bytes
    events: bytes
    cfg: ReplicaConfig
    cost: CostModel
    # the switch's CPU (CostModel.switch_add_us): the engine charges it at dispatch, the work
    # spread or not
    switch_add: float
    # spread_across_workers done by sim.rs (``feed``, as for StreamSim): the workers' CPU factor,
    # per byte and per transaction, and the apply spread's 64 factors (() none)
    work_scale: float = 1.0
    work_byte: float = 0.0
    work_add: float = 0.0
    spread: tuple[float, ...] = ()

    @classmethod
    def of(cls, inp: SimInput, cfg: ReplicaConfig, cost: CostModel, spread: bool = False) -> "SimArgs":
        cols = (inp.arrival_us.tobytes(), inp.work_us.tobytes(), inp.nbytes.tobytes(), inp.need.tobytes(),
                inp.need_kind.tobytes(), inp.events.tobytes(), cfg)
        switch_add = cost.switch_add_us(cfg.workers)
        if not spread:
            return cls(*cols, cost, switch_add)
        scost, *work = native_work_args(cfg, cost)
        return cls(*cols, scost, switch_add, *work)


def native_work_args(cfg: ReplicaConfig, cost: CostModel) -> tuple[CostModel, float, float, float, tuple[float, ...]]:
    """What sim.rs takes to do :func:`spread_across_workers` itself (``sim_run``'s ``SimArgs`` and
    ``StreamSim``): the cost model with the commit stage's CPU scaled, the workers' CPU factor,
    the durable CPU per byte, the per-transaction cost and the apply spread's factors."""
    f = cost.worker_cpu(cfg.workers)
    return (cost.commit_scaled(f), f, cost.work_byte_us(cfg.durable),
            cost.worker_add_us(cfg.workers), cost.spread_factors())


def simulate_native(inp: SimInput, cfg: ReplicaConfig, cost: CostModel, *, spread: bool = False) -> SimResult:
    """The native engine (native/src/sim.rs); raises ImportError if it is not built. With
    *spread*, it does :func:`spread_across_workers` itself (the same operations, without a pass
    over the input in Python); else it takes the work as given."""
    native = NATIVE
    if native is None:
        native = require()  # ImportError if not built: asked for explicitly
    apply_us, busy, dep_wait, worker_wait, flushes, groups, commit, switches = native.sim_run(
        SimArgs.of(inp, cfg, cost, spread))
    commit_us = array("d")
    commit_us.frombytes(commit)
    return SimResult(max(0, cfg.workers), apply_us, commit_us, inp.arrival_us, busy_us=busy,
                     dependency_wait_us=dep_wait, worker_wait_us=worker_wait, flushes=flushes,
                     commit_groups=groups, switches=switches)


def simulate_python(inp: SimInput, cfg: ReplicaConfig, cost: CostModel) -> SimResult:
    """The reference engine."""
    if cfg.workers <= 0:
        return _single_threaded(inp, cfg, cost)
    n = len(inp)
    arrival_us, work_us, nbytes, events = inp.arrival_us, inp.work_us, inp.nbytes, inp.events
    need, need_kind = inp.need, inp.need_kind
    heap: list = []
    counter = 0

    def push(t: float, kind: int, i: int = -1, data=None) -> None:
        nonlocal counter
        counter += 1
        heapq.heappush(heap, (t, counter, kind, i, data))

    def rate() -> float:
        j = len(ps_heap)
        slow = contention(j)   # every job runs slower while others run with it
        if not spinning:
            return (1.0 if j <= cores else cores / j) / slow
        r = j + 1
        if r <= cores:
            return 1.0 / slow
        # The busy-waiting coordinator yields its core to the threads queued on it, but the
        # scheduler balances runnable threads over the cores by count: it is alone on a core
        # (holding all of it) in (2 * cores - r) of r even placements when r < 2 * cores.
        alone = (2.0 * cores - r) / r if r < 2.0 * cores else 0.0
        return min(1.0, (cores - alone) / j) / slow

    def advance(now: float) -> None:
        nonlocal vnow, vlast_t
        if ps_heap or spinning:
            vnow += (now - vlast_t) * rate()
        else:
            vnow = 0.0  # idle: restart virtual work from 0 (keeps precision over long timelines)
        vlast_t = now

    def reschedule(now: float) -> None:
        """(Re)arm the single pending CPU-completion event for the current rate."""
        nonlocal ps_version
        ps_version += 1
        if ps_heap:
            vf = ps_heap[0][0]
            push(now + max(0.0, vf - vnow) / rate(), CPU_DONE, ps_version)

    def run_cpu(now: float, work: float, kind: int, i: int = -1, data=None) -> None:
        nonlocal counter
        counter += 1
        heapq.heappush(ps_heap, (vnow + work, counter, kind, i, data))

    DISPATCH_DONE, APPLY_DONE, COMMIT_DONE, WAKE, SYNC_DONE, CPU_DONE, HANDOFF, REDO_DONE, FSYNC_CPU = range(9)
    sync_us = cost.flush_us if cfg.durable else 0.0
    redo_us = cost.redo_flush_us if cfg.durable else 0.0
    fsync_byte = cost.fsync_byte_us if cfg.durable else 0.0
    # The Change Stream Applier (module docstring): the reader enqueues while fewer than the
    # limit are in flight, the scheduler hands out what the LWM allows, the worker reads its
    # transaction's events and, with commit order preserved, is free again once it has applied it.
    csa = Applier(cfg.applier) is Applier.CSA
    release_at_apply = csa and cfg.preserve_commit_order
    limit = csa_in_flight_limit(cfg.workers)
    in_flight = 0            # enqueued, not committed (Scheduler::m_scheduled_tasks_cnt)
    held = -1                # read by the reader, not enqueued yet (ensure_space)
    waiting: list = []       # (need, i): enqueued, the LWM short of it (Scheduler::m_tasks)
    waiting_other: list = []  # enqueued SPECIFIC/ENTERED needs not met, in index order (not the CSA's)
    pool: deque = deque()    # handed to the worker pool, first in first out
    sched_wake = -1.0        # when the scheduler thread hands out what a commit made ready
    committed = bytearray(n)
    entered = bytearray(n)
    applied = bytearray(n)
    commit_t = [0.0] * n
    lwm = -1                 # all indices <= lwm committed
    entered_upto = -1        # all indices <= entered_upto entered the commit stage
    next_entry = 0           # preserve order: next index allowed into the commit stage
    # The free workers by number (as many as cfg.workers, >= 1 here): the coordinator gives a
    # transaction the lowest-numbered free one (rpl_mta_submode.cc get_free_worker), and one on
    # another worker than its predecessor's pays the switch (CostModel.switch_add_us).
    free_ids = list(range(cfg.workers))
    worker_of = [0] * n
    prev_worker = -1
    switch_us = cost.switch_add_us(cfg.workers)
    cores = float(max(1, cost.cores))
    contention = cost.contention
    # Processor sharing: jobs progress together in "virtual work" V; a job of w us started
    # at V0 ends when V reaches V0 + w. rate = min(1, cores / (jobs + spinning coordinator)).
    vnow = 0.0
    vlast_t = 0.0
    ps_heap: list = []        # (V_finish, seq, kind, i, data)
    ps_version = 0
    spinning = False
    coord_next = 0
    coord_busy = False
    coord_blocked_since: float | None = None
    blocked_on = ""
    dep_sleep = False        # blocked on a dependency at the last try (asleep, not spinning)
    wake_at = -1.0           # when it runs again once the dependency is met (-1: not yet met)
    pending = 0
    flush_busy = False
    flush_queue: list[int] = []
    sync_busy = False
    sync_queue: list[int] = []     # the flush groups waiting for the sync stage, merged
    commit_busy = False
    commit_queue: list[int] = []   # the sync groups waiting for the commit stage, merged
    # One fsync at a time when the redo log and the binlog share a device (one filesystem
    # journal, one device cache flush): a group's redo fsync waits for the previous group's
    # binlog fsync and the other way round. fsync_devices = 2: they overlap.
    shared_disk = cost.fsync_devices == 1
    disk_busy = False
    disk_queue: deque = deque()   # (kind, group) waiting for the device
    res = SimResult(cfg.workers, 0.0, commit_t, arrival_us)
    start_t = [0.0] * n
    t = 0.0

    def ready(i: int) -> bool:
        nd = need[i]
        if nd < 0:
            return True
        kind = need_kind[i]
        if kind == PREFIX:
            return lwm >= nd
        if kind == SPECIFIC:
            return bool(committed[nd])
        return entered_upto >= nd

    def end_wait(now: float) -> None:
        """The coordinator (the CSA's reader) stops waiting: its wait counts as a dependency
        wait or a wait for a worker (its slot), as it began."""
        nonlocal coord_blocked_since
        if coord_blocked_since is not None:
            if blocked_on == "dep":
                res.dependency_wait_us += now - coord_blocked_since
            else:
                res.worker_wait_us += now - coord_blocked_since
            coord_blocked_since = None

    def take_worker(i: int) -> float:
        """Give transaction ``i`` the lowest-numbered free worker; the switch's CPU (0 on its
        predecessor's worker, or for the first transaction)."""
        nonlocal prev_worker
        w = heapq.heappop(free_ids)
        worker_of[i] = w
        switched = prev_worker >= 0 and w != prev_worker
        prev_worker = w
        if switched:
            res.switches += 1
            return switch_us
        return 0.0

    def release() -> None:
        """Scheduler::run_main_thread: every waiting transaction the LWM has reached goes to the
        pool, in (delay, task id) order."""
        while waiting and waiting[0][0] <= lwm:
            pool.append(heapq.heappop(waiting)[1])
        if waiting_other:
            pool.extend(j for j in waiting_other if ready(j))
            waiting_other[:] = [j for j in waiting_other if not ready(j)]

    def try_csa(now: float) -> None:
        """The CSA: the scheduler thread's hand-out, the workers taking from the pool, then the
        reader (Csa_service::run: ensure_space, enqueue, read the next)."""
        nonlocal sched_wake, held, in_flight, coord_busy, coord_blocked_since, blocked_on, spinning
        spinning = False
        if (waiting and waiting[0][0] <= lwm) or any(ready(j) for j in waiting_other):
            if cost.wakeup_us <= 0:
                release()
            elif sched_wake < 0:
                sched_wake = now + cost.wakeup_us
                push(sched_wake, WAKE)
            elif now >= sched_wake:
                sched_wake = -1.0
                release()
        if held >= 0 and not coord_busy:
            if in_flight >= limit:   # ensure_space: a yield loop
                if coord_blocked_since is None:   # a wait on the clock if any task waits for it
                    coord_blocked_since, blocked_on = now, "dep" if waiting or waiting_other else "worker"
                spinning = True
            else:
                end_wait(now)
                in_flight += 1
                if ready(held) and sched_wake < 0:
                    pool.append(held)
                elif need_kind[held] == PREFIX:
                    heapq.heappush(waiting, (need[held], held))
                else:
                    waiting_other.append(held)
                held = -1
        while pool and free_ids:
            i = pool.popleft()
            extra = take_worker(i)
            start_t[i] = now
            run_cpu(now, cost.dispatch_event_us * events[i] + cost.dispatch_byte_us * nbytes[i]
                    + (work_us[i] + extra), APPLY_DONE, i)
        if held >= 0 or coord_busy or coord_next >= n:
            return
        if arrival_us[coord_next] > now:
            push(arrival_us[coord_next], WAKE)
            return
        coord_busy = True
        run_cpu(now, cost.dispatch_us, DISPATCH_DONE, coord_next)

    def try_coordinator(now: float) -> None:
        nonlocal coord_busy, coord_blocked_since, blocked_on, spinning, dep_sleep, wake_at, pending
        if csa:
            try_csa(now)
            return
        spinning = False
        if coord_busy or coord_next >= n:
            return
        if arrival_us[coord_next] > now:
            push(arrival_us[coord_next], WAKE)
            return
        reason = ""
        if not ready(coord_next):
            reason = "dep"
        elif not free_ids:
            reason = "worker"
        elif pending and pending + nbytes[coord_next] > cfg.pending_jobs_size_max:
            reason = "worker"
        if reason:
            if coord_blocked_since is None:
                coord_blocked_since, blocked_on = now, reason
            spinning = reason == "worker"
            # wait_for_last_committed_trx: the logical clock's wait (PREFIX); the other modes'
            # waits are the workers' (MariaDB's wait_for_prior_commit), not modelled as a wake-up
            dep_sleep = reason == "dep" and need_kind[coord_next] == PREFIX
            return
        # Asleep on a dependency (wait_for_last_committed_trx: a condition wait, not a spin),
        # the coordinator runs again wakeup_us after the commit that met it signalled it.
        if dep_sleep and cost.wakeup_us > 0:
            if wake_at < 0:
                wake_at = now + cost.wakeup_us
                push(wake_at, WAKE)
                return
            if now < wake_at:
                return
        dep_sleep, wake_at = False, -1.0
        end_wait(now)
        extra = take_worker(coord_next)
        coord_busy = True
        # The MTA's worker is assigned at the transaction's first event and applies each event as
        # the coordinator queues it: the read and the apply run at once, and the apply cannot end
        # before the read (one processor-shared rate: the longer of the two jobs ends last).
        read_us = cost.coordinator_us(nbytes[coord_next], events[coord_next])
        run_cpu(now, read_us, DISPATCH_DONE, coord_next)
        pending += nbytes[coord_next]
        start_t[coord_next] = now
        run_cpu(now, max(read_us, work_us[coord_next] + extra), APPLY_DONE, coord_next)

    def start_flush(now: float) -> None:
        nonlocal flush_busy, flush_queue
        if flush_busy or not flush_queue:
            return
        flush_busy = True
        group, flush_queue = flush_queue, []
        if redo_us > 0:
            fsync(now, REDO_DONE, group)  # the leader waits for the redo fsync (no CPU)
        else:
            flush_done(now, group)

    def flush_done(now: float, group: list[int]) -> None:
        """The flush stage's group moves on to the sync stage (queued there: merged with what
        waits) and the flush stage takes the next group."""
        nonlocal flush_busy
        flush_busy = False
        sync_queue.extend(group)
        start_sync(now)
        start_flush(now)

    def start_sync(now: float) -> None:
        nonlocal sync_busy, sync_queue
        if sync_busy or not sync_queue:
            return
        sync_busy = True
        group, sync_queue = sync_queue, []
        if sync_us > 0 or fsync_byte > 0:
            fsync(now, SYNC_DONE, group)
        else:
            sync_done(now, group)

    def sync_done(now: float, group: list[int]) -> None:
        nonlocal sync_busy
        sync_busy = False
        res.flushes += 1
        commit_queue.extend(group)
        start_sync(now)
        start_commit(now)

    def start_commit(now: float) -> None:
        """The commit stage's leader commits every queued member in InnoDB, in order (CPU)."""
        nonlocal commit_busy, commit_queue
        if commit_busy or not commit_queue:
            return
        commit_busy = True
        group, commit_queue = commit_queue, []
        res.commit_groups += 1
        run_cpu(now, cost.commit_group_us + cost.commit_us * len(group), COMMIT_DONE, -1, group)

    def fsync_us(kind: int, group: list[int]) -> float:
        """The fsync's time: per fsync, plus ``fsync_byte_us`` per byte of its group's
        transactions (the device writes what the group wrote: its redo and its binlog)."""
        per = redo_us if kind == REDO_DONE else sync_us
        if fsync_byte <= 0:
            return per
        return per + fsync_byte * sum(nbytes[g] for g in group)

    def fsync_start(now: float, kind: int, group: list[int]) -> None:
        """An fsync starts: first the calling thread's CPU share of it (``fsync_cpu`` of
        ``fsync_us``, processor-shared: the kernel's writeback, journal and completion work and
        InnoDB's flush wait loop), then the device's rest. With a free core it takes
        ``fsync_us``; on a busy one it stretches (measured: one pinned core, durable catch-up, redo
        fsync median 164/272/345/384 us at 1/2/4/8 workers while the core was 91-93% busy)."""
        us = fsync_us(kind, group)
        if cost.fsync_cpu > 0 and us > 0:
            run_cpu(now, cost.fsync_cpu * us, FSYNC_CPU, kind, group)
        else:
            push(now + us, kind, -1, group)

    def fsync(now: float, kind: int, group: list[int]) -> None:
        nonlocal disk_busy
        us = fsync_us(kind, group)
        if not shared_disk or us <= 0:
            fsync_start(now, kind, group)
        elif disk_busy:
            disk_queue.append((kind, group))
        else:
            disk_busy = True
            fsync_start(now, kind, group)

    def fsync_done(now: float, kind: int, group: list[int]) -> None:
        """An fsync ended: the device takes the next one waiting."""
        nonlocal disk_busy
        if not shared_disk or fsync_us(kind, group) <= 0:
            return
        disk_busy = False
        if disk_queue:
            k, g = disk_queue.popleft()
            disk_busy = True
            fsync_start(now, k, g)

    def enter_commit(i: int, now: float) -> None:
        nonlocal entered_upto
        entered[i] = 1
        while entered_upto + 1 < n and entered[entered_upto + 1]:
            entered_upto += 1
        flush_queue.append(i)
        start_flush(now)

    def commit(i: int, now: float) -> None:
        nonlocal lwm, in_flight
        committed[i] = 1
        in_flight -= 1
        commit_t[i] = now
        if not release_at_apply:
            res.busy_us += now - start_t[i]
            heapq.heappush(free_ids, worker_of[i])
        while lwm + 1 < n and committed[lwm + 1]:
            lwm += 1

    def enter_in_order(now: float) -> None:
        """replica_preserve_commit_order: the next transaction enters the commit stage; a
        successor that already finished applying sleeps on the commit-order queue and enters
        ``handoff_us`` later (it must be woken and scheduled: Commit_order_manager)."""
        nonlocal next_entry
        while True:
            enter_commit(next_entry, now)
            next_entry += 1
            if next_entry >= n or not applied[next_entry]:
                return
            if cost.handoff_us > 0:
                push(now + cost.handoff_us, HANDOFF)
                return

    def handle(kind: int, i: int, data, now: float) -> None:
        nonlocal coord_busy, pending, coord_next, commit_busy, held
        if kind == DISPATCH_DONE:
            coord_busy = False
            coord_next = i + 1
            if csa:  # read: enqueued once there is room (try_csa)
                held = i
        elif kind == APPLY_DONE:
            if not csa:
                pending -= nbytes[i]
            applied[i] = 1
            if release_at_apply:  # CSA: the worker takes the next ready transaction
                res.busy_us += now - start_t[i]
                heapq.heappush(free_ids, worker_of[i])
            if cfg.preserve_commit_order:
                if i == next_entry:
                    enter_in_order(now)
            else:
                enter_commit(i, now)
        elif kind == HANDOFF:
            enter_in_order(now)
        elif kind == FSYNC_CPU:
            push(now + (1.0 - cost.fsync_cpu) * fsync_us(i, data), i, -1, data)
        elif kind == REDO_DONE:
            fsync_done(now, kind, data)
            flush_done(now, data)
        elif kind == SYNC_DONE:
            fsync_done(now, kind, data)
            sync_done(now, data)
        elif kind == COMMIT_DONE:  # the commit stage: its InnoDB commits are done
            commit_busy = False
            for j in data:
                commit(j, now)
            start_commit(now)

    try_coordinator(0.0)
    reschedule(0.0)
    while heap:
        t, _, kind, i, data = heapq.heappop(heap)
        advance(t)
        if kind == CPU_DONE:
            if i != ps_version:
                continue  # stale: the rate changed since it was armed
            # The event was armed for the head job: it is done (vnow may lag it by rounding at
            # large times); complete it and every job finishing at the same point.
            if ps_heap:
                vnow = max(vnow, ps_heap[0][0])
            done = []
            while ps_heap and ps_heap[0][0] <= vnow + 1e-9 * max(1.0, abs(vnow)):
                _, _, k2, i2, d2 = heapq.heappop(ps_heap)
                done.append((k2, i2, d2))
            for k2, i2, d2 in done:
                handle(k2, i2, d2, t)
        elif kind in (SYNC_DONE, HANDOFF, REDO_DONE):
            handle(kind, i, data, t)
        try_coordinator(t)
        reschedule(t)
    if coord_next < n:
        raise RuntimeError(f"simulation stalled at transaction {coord_next} of {n}")
    first = min(arrival_us, default=0.0)
    res.apply_us = (max(commit_t) - first) if n else 0.0
    res.commit_us = array("d", commit_t)
    return res


def _single_threaded(inp: SimInput, cfg: ReplicaConfig, cost: CostModel) -> SimResult:
    """replica_parallel_workers=0: the SQL thread reads, applies and commits one at a time."""
    n = len(inp)
    commit_t = array("d", bytes(8 * n))
    t = 0.0
    busy = 0.0
    for i, (arrival, w, nb, ev) in enumerate(zip(inp.arrival_us, inp.work_us, inp.nbytes, inp.events)):
        t = max(t, arrival)
        # one transaction per group: each of its two fsyncs writes its bytes
        work = (cost.coordinator_us(nb, ev) + w + (cost.commit_group_us + cost.commit_us)
                + ((cost.redo_flush_us + cost.flush_us) + 2.0 * cost.fsync_byte_us * nb if cfg.durable else 0.0))
        t += work
        busy += work
        commit_t[i] = t
    first = min(inp.arrival_us, default=0.0)
    res = SimResult(0, (t - first) if n else 0.0, commit_t, inp.arrival_us, busy_us=busy,
                    flushes=n if cfg.durable else 0, commit_groups=n)
    return res
