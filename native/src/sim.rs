//! The applier simulation (`lagadvisor.sim.engine`) in Rust: the same discrete-event model,
//! operation for operation, so results are the same floats as the Python reference.
//!
//! What keeps it bit-identical:
//! * both event queues are ordered by `(time, counter)` with one counter shared by both, as
//!   the Python `heapq` tuples are; the counter is unique, so the pop order is fully
//!   determined and does not depend on the heap implementation;
//! * every float expression keeps the Python evaluation order (`a + b * c` stays that, sums
//!   accumulate in the same order, `max`/`min` pick the same operand on ties);
//! * stale CPU-completion events and repeated wake-ups are pushed and popped exactly as in
//!   Python, because each push consumes a counter value.
//!
//! Input crosses the boundary as native-endian byte strings (`array.tobytes()`): the stable
//! ABI of Python 3.10 (abi3-py310) has no buffer protocol, and one copy of 8 bytes per
//! transaction costs far less than one Python object per transaction.
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

// `need_kind` values (engine.py PREFIX, SPECIFIC, ENTERED).
const PREFIX: u8 = 0;
const SPECIFIC: u8 = 1;

// Event kinds (engine.py): DISPATCH_DONE, APPLY_DONE, COMMIT_DONE, WAKE, SYNC_DONE, CPU_DONE, HANDOFF,
// REDO_DONE, FSYNC_CPU.
const DISPATCH_DONE: u8 = 0;
const APPLY_DONE: u8 = 1;
const COMMIT_DONE: u8 = 2;
const WAKE: u8 = 3;
const SYNC_DONE: u8 = 4;
const CPU_DONE: u8 = 5;
const HANDOFF: u8 = 6;
const REDO_DONE: u8 = 7;
const FSYNC_CPU: u8 = 8;

/// One queue entry: `key` is a time (event queue) or a virtual finish (processor sharing).
/// `i` is a transaction index, or the version for CPU_DONE; `lo..hi` is a commit group, as a
/// range of positions in `Sim::arena` (global positions: the arena's consumed head is dropped).
#[derive(Clone, Copy)]
struct Ev {
    key: f64,
    seq: u64,
    kind: u8,
    i: i64,
    lo: u64,
    hi: u64,
}

impl Ev {
    /// Python's tuple order: `key` first (with `==` ties, so 0.0 and -0.0 tie), then `seq`.
    fn order(&self, other: &Self) -> Ordering {
        if self.key < other.key {
            Ordering::Less
        } else if self.key > other.key {
            Ordering::Greater
        } else {
            self.seq.cmp(&other.seq)
        }
    }
}

impl PartialEq for Ev {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}
impl Eq for Ev {}
impl PartialOrd for Ev {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ev {
    // BinaryHeap is a max-heap: reverse for a min-heap.
    fn cmp(&self, other: &Self) -> Ordering {
        other.order(self)
    }
}

/// Python's `max(a, b)`: `b` only if it is strictly greater.
#[inline]
fn py_max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// The cost-model numbers the engine reads: `CostModel`'s attributes, taken by name.
#[derive(Clone, Copy, FromPyObject)]
pub struct Costs {
    pub dispatch_us: f64,
    pub dispatch_event_us: f64,
    pub dispatch_byte_us: f64,
    pub commit_us: f64,
    pub commit_group_us: f64,
    pub flush_us: f64,
    pub redo_flush_us: f64,
    pub handoff_us: f64,
    pub wakeup_us: f64,
    #[pyo3(from_py_with = "cores_of")]
    pub cores: f64,
    pub fsync_devices: i64,
    pub fsync_cpu: f64,
    pub fsync_byte_us: f64,
    pub concurrency_cpu: f64,
    pub oversubscribed_cpu: f64,
}

impl Costs {
    /// `CostModel.coordinator_us`: the coordinator's serial time for one transaction of `nbytes`
    /// bytes in `events` binlog events (dispatch, read per event and per byte), in its order.
    #[inline]
    fn coordinator_us(&self, nbytes: i64, events: i64) -> f64 {
        self.dispatch_us + self.dispatch_event_us * events as f64 + self.dispatch_byte_us * nbytes as f64
    }
}

/// `CostModel.cores` (an int), at least one.
fn cores_of(v: &Bound<'_, PyAny>) -> PyResult<f64> {
    Ok(v.extract::<i64>()?.max(1) as f64)
}

/// The replica settings the engine reads: `ReplicaConfig`'s attributes, taken by name.
#[derive(Clone, Copy, FromPyObject)]
pub struct Config {
    pub workers: i64,
    pub preserve_commit_order: bool,
    pub durable: bool,
    pub pending_jobs_size_max: i64,
    /// The Change Stream Applier (engine.py's module docstring, after the MySQL source's
    /// `Csa_service::run`, `Dependency_adapter_lwm::solve` and `Scheduler`): at most
    /// `csa_in_flight_limit` transactions in flight, each started once the low-water mark reaches
    /// its need, in (need, index) order; workers read their transaction's events, no
    /// pending-jobs limit, and with commit order preserved a worker is free once it has applied
    /// its transaction. Read from `ReplicaConfig.applier`.
    #[pyo3(attribute("applier"), from_py_with = "applier_of")]
    pub csa: bool,
}

/// engine.py `csa_in_flight_limit`: `std::min(4 * n_workers, 2048)` (csa_service.cpp
/// `Csa_service::run`; context/tune.h `scheduler_max_task_number_factor`,
/// `csa_session_default_cache_size`).
fn csa_in_flight_limit(workers: i64) -> i64 {
    (4 * workers).min(2048)
}

impl Config {
    /// engine.py `release_at_apply`.
    fn release_at_apply(&self) -> bool {
        self.csa && self.preserve_commit_order
    }
}

/// `applier` as the bindings take it (kinds.Applier's values): true for "csa".
fn applier_csa(applier: &str) -> PyResult<bool> {
    match applier {
        "mta" => Ok(false),
        "csa" => Ok(true),
        _ => Err(PyValueError::new_err(format!("applier: expected mta or csa, got {applier:?}"))),
    }
}

/// `ReplicaConfig.applier` (a kinds.Applier, a str): true for the Change Stream Applier.
fn applier_of(v: &Bound<'_, PyAny>) -> PyResult<bool> {
    applier_csa(&v.extract::<String>()?)
}

/// The columns of a SimInput (or of one chunk of it).
pub struct Input<'a> {
    pub arrival_us: &'a [f64],
    pub work_us: &'a [f64],
    pub nbytes: &'a [i64],
    pub need: &'a [i64],
    pub need_kind: &'a [u8],
    /// Each transaction's binlog events (`Transaction.event_count`): what the coordinator reads.
    pub events: &'a [i64],
}

pub struct Output {
    pub apply_us: f64,
    pub commit_us: Vec<f64>,
    pub busy_us: f64,
    pub dependency_wait_us: f64,
    pub worker_wait_us: f64,
    pub flushes: i64,
    pub commit_groups: i64,
    pub switches: i64,
}

/// Where commits go: every commit time kept by index (`sim_run`), or a lag accumulator
/// (`StreamSim`: exact up to its cap, then a sketch).
enum Sink {
    Full(Vec<f64>),
    Acc(Box<LagAcc>),
}

/// The engine, fed its input in chunks (`feed`) and run until it needs the next transaction
/// (`run`): the result is the same, float for float, as one run over the whole input, because
/// it pauses exactly where the coordinator would look at a transaction not yet given, and only
/// the coordinator reads new transactions. Per-transaction state is kept from the oldest
/// transaction still needed (`base`: the lowest of the committed, entered and in-order
/// watermarks), so memory follows the transactions in flight and the chunk, not the input.
struct Sim {
    cfg: Config,
    cost: Costs,
    work_scale: f64,
    /// engine.py ``spread_across_workers``: worker CPU per byte added before the scale (the
    /// durable commit's share, ``CostModel.durable_byte_us``; 0 when relaxed).
    work_byte: f64,
    /// engine.py ``spread_across_workers``: worker CPU per transaction added after the scale
    /// (``CostModel.worker_add_us``: ``multi_worker_us`` with two or more workers on two or more cores).
    work_add: f64,
    /// engine.py ``switch_us``: worker CPU added to a transaction given another worker than its
    /// predecessor's (``CostModel.switch_add_us``, given: ``SimArgs.switch_add``).
    switch_add: f64,
    /// engine.py ``free_ids``: the free workers by number (the coordinator takes the lowest;
    /// none free when empty).
    free_ids: BinaryHeap<Reverse<i64>>,
    /// engine.py ``worker_of``: each transaction's worker, in the window from `base`.
    worker_of: Vec<i64>,
    /// engine.py ``prev_worker``: the last dispatched transaction's worker (-1: none yet).
    prev_worker: i64,
    /// engine.py ``limit``: the CSA's transactions in flight at most (`csa_in_flight_limit`).
    limit: i64,
    /// engine.py ``in_flight``: the CSA's transactions enqueued and not committed.
    in_flight: i64,
    /// engine.py ``held``: the transaction the CSA's reader has read and not enqueued (-1: none).
    held: i64,
    /// engine.py ``waiting``: the CSA's enqueued transactions the LWM has not reached, by
    /// (need, global index).
    waiting: BinaryHeap<Reverse<(i64, u64)>>,
    /// engine.py ``waiting_other``: enqueued SPECIFIC/ENTERED needs not met, in index order.
    waiting_other: Vec<u64>,
    /// engine.py ``pool``: handed to the CSA's worker pool, first in first out (global indices).
    pool: VecDeque<u64>,
    /// engine.py ``sched_wake``: when the scheduler thread hands out what a commit made ready
    /// (-1: no wake-up pending).
    sched_wake: f64,
    /// engine.py ``SimResult.switches``.
    switches: i64,
    /// engine.py ``ScaledWork``'s ``spread``: each transaction's worker CPU times the factor its
    /// global index's `spread_slot` names (``CostModel.spread_factors``; empty: none).
    spread: Vec<f64>,
    sync_us: f64,
    redo_us: f64,
    /// engine.py ``fsync_byte``: device time per byte of the group's transactions, added to each
    /// fsync when durable (``CostModel.fsync_byte_us``; 0 when relaxed).
    fsync_byte: f64,
    shared_disk: bool,
    disk_busy: bool,
    disk_queue: VecDeque<(u8, u64, u64)>,
    heap: BinaryHeap<Ev>,
    ps_heap: BinaryHeap<Ev>,
    counter: u64,
    // the window of per-transaction columns and state, from global index `base`
    base: usize,
    n: usize,
    last: bool,
    arrival: Vec<f64>,
    work: Vec<f64>,
    nbytes: Vec<i64>,
    events: Vec<i64>,
    need: Vec<i64>,
    need_kind: Vec<u8>,
    committed: Vec<bool>,
    entered: Vec<bool>,
    applied: Vec<bool>,
    start_t: Vec<f64>,
    lwm: i64,
    entered_upto: i64,
    next_entry: usize,
    vnow: f64,
    vlast_t: f64,
    ps_version: i64,
    spinning: bool,
    coord_next: usize,
    coord_busy: bool,
    coord_blocked_since: Option<f64>,
    blocked_on_dep: bool,
    /// engine.py ``dep_sleep`` / ``wake_at``: the coordinator sleeps on a dependency and, once
    /// it is met, runs again ``wakeup_us`` later (-1: no wake-up pending).
    dep_sleep: bool,
    wake_at: f64,
    pending: i64,
    flush_busy: bool,
    // Every transaction enters the flush queue once, and a flush takes the whole queue: the
    // queue is always the tail of `arena` from `flush_start`, and a group is a range of it.
    // Groups commit in order, so everything before `arena_done` can be dropped.
    arena: Vec<u64>,
    /// Beside `arena`: the bytes of the transactions queued before each entry (a running total,
    /// `arena_bytes` after the last), so a group's bytes are one subtraction (`group_bytes`).
    arena_before: Vec<i64>,
    arena_bytes: i64,
    arena_base: u64,
    arena_done: u64,
    flush_start: u64,
    sync_busy: bool,
    /// engine.py ``sync_queue``: the flush groups waiting for the sync stage, merged (groups move
    /// through the stages in order, so the merge is one range of the arena; empty: lo == hi).
    sync_queue: (u64, u64),
    commit_busy: bool,
    /// engine.py ``commit_queue``: the sync groups waiting for the commit stage, merged.
    commit_queue: (u64, u64),
    busy_us: f64,
    dependency_wait_us: f64,
    worker_wait_us: f64,
    flushes: i64,
    /// engine.py ``SimResult.commit_groups``: the commit stage's groups.
    commit_groups: i64,
    started: bool,
    paused_at: Option<f64>,
    first_arrival: Option<f64>,
    max_commit: Option<f64>,
    st_t: f64, // the single-threaded applier's clock
    sink: Sink,
}

impl Sim {
    #[allow(clippy::too_many_arguments)]
    fn new(cfg: Config, cost: Costs, work_scale: f64, work_byte: f64, work_add: f64, switch_add: f64, spread: Vec<f64>,
           sink: Sink) -> Self {
        Sim {
            cfg,
            cost,
            work_scale,
            work_byte,
            work_add,
            switch_add,
            free_ids: (0..cfg.workers).map(Reverse).collect(),
            worker_of: Vec::new(),
            prev_worker: -1,
            limit: csa_in_flight_limit(cfg.workers),
            in_flight: 0,
            held: -1,
            waiting: BinaryHeap::new(),
            waiting_other: Vec::new(),
            pool: VecDeque::new(),
            sched_wake: -1.0,
            switches: 0,
            spread,
            sync_us: if cfg.durable { cost.flush_us } else { 0.0 },
            redo_us: if cfg.durable { cost.redo_flush_us } else { 0.0 },
            fsync_byte: if cfg.durable { cost.fsync_byte_us } else { 0.0 },
            shared_disk: cost.fsync_devices == 1,
            disk_busy: false,
            disk_queue: VecDeque::new(),
            heap: BinaryHeap::new(),
            ps_heap: BinaryHeap::new(),
            counter: 0,
            base: 0,
            n: 0,
            last: false,
            arrival: Vec::new(),
            work: Vec::new(),
            nbytes: Vec::new(),
            events: Vec::new(),
            need: Vec::new(),
            need_kind: Vec::new(),
            committed: Vec::new(),
            entered: Vec::new(),
            applied: Vec::new(),
            start_t: Vec::new(),
            lwm: -1,
            entered_upto: -1,
            next_entry: 0,
            vnow: 0.0,
            vlast_t: 0.0,
            ps_version: 0,
            spinning: false,
            coord_next: 0,
            coord_busy: false,
            coord_blocked_since: None,
            blocked_on_dep: false,
            dep_sleep: false,
            wake_at: -1.0,
            pending: 0,
            flush_busy: false,
            arena: Vec::new(),
            arena_before: Vec::new(),
            arena_bytes: 0,
            arena_base: 0,
            arena_done: 0,
            flush_start: 0,
            sync_busy: false,
            sync_queue: (0, 0),
            commit_busy: false,
            commit_queue: (0, 0),
            busy_us: 0.0,
            dependency_wait_us: 0.0,
            worker_wait_us: 0.0,
            flushes: 0,
            commit_groups: 0,
            started: false,
            paused_at: None,
            first_arrival: None,
            max_commit: None,
            st_t: 0.0,
            sink,
        }
    }

    /// Add the next transactions (global indices `n..n+len`); `need` may name any earlier one.
    fn feed(&mut self, x: &Input, last: bool) -> Result<(), String> {
        let len = x.arrival_us.len();
        if self.last && len > 0 {
            return Err("sim: input after the last chunk".into());
        }
        for (k, &nd) in x.need.iter().enumerate() {
            if nd < -1 || nd >= (self.n + len) as i64 {
                return Err(format!("sim: need[{}] = {nd} out of range", self.n + k));
            }
        }
        if x.arrival_us.iter().chain(x.work_us.iter()).any(|v| v.is_nan()) {
            return Err("sim: NaN arrival or work".into());
        }
        self.compact();
        for &a in x.arrival_us {
            self.first_arrival = Some(match self.first_arrival {
                None => a,
                Some(m) => if a < m { a } else { m },
            });
        }
        self.arrival.extend_from_slice(x.arrival_us);
        let (f, b, m) = (self.work_scale, self.work_byte, self.work_add);
        let from = self.work.len();
        if b != 0.0 {
            self.work.extend(x.work_us.iter().zip(x.nbytes.iter()).map(|(w, &nb)| (w + b * nb as f64) * f + m));
        } else if f == 1.0 && m == 0.0 {
            self.work.extend_from_slice(x.work_us);
        } else {
            self.work.extend(x.work_us.iter().map(|w| w * f + m));
        }
        if !self.spread.is_empty() {
            for (k, w) in self.work[from..].iter_mut().enumerate() {
                *w *= self.spread[spread_slot((self.n + k) as u64)];
            }
        }
        self.nbytes.extend_from_slice(x.nbytes);
        self.events.extend_from_slice(x.events);
        self.need.extend_from_slice(x.need);
        self.need_kind.extend_from_slice(x.need_kind);
        self.committed.resize(self.committed.len() + len, false);
        self.entered.resize(self.entered.len() + len, false);
        self.applied.resize(self.applied.len() + len, false);
        self.start_t.resize(self.start_t.len() + len, 0.0);
        self.worker_of.resize(self.worker_of.len() + len, 0);
        match &mut self.sink {
            Sink::Full(v) => v.resize(v.len() + len, 0.0),
            Sink::Acc(a) => a.fed(self.n, x.arrival_us),
        }
        self.n += len;
        self.last = last;
        if self.cfg.workers <= 0 {
            self.single_threaded();
            Ok(())
        } else {
            self.run()
        }
    }

    /// Drop the state of transactions nothing can look at again.
    fn compact(&mut self) {
        // next_entry moves only when commit order is preserved
        let in_order = if self.cfg.preserve_commit_order { self.next_entry } else { usize::MAX };
        let lo = ((self.lwm + 1).min(self.entered_upto + 1) as usize).min(in_order).min(self.coord_next);
        let k = lo.saturating_sub(self.base);
        if k >= 65536 && 2 * k >= self.arrival.len() {
            for v in [&mut self.arrival, &mut self.work, &mut self.start_t] {
                v.drain(..k);
            }
            self.nbytes.drain(..k);
            self.events.drain(..k);
            self.need.drain(..k);
            self.need_kind.drain(..k);
            self.worker_of.drain(..k);
            for v in [&mut self.committed, &mut self.entered, &mut self.applied] {
                v.drain(..k);
            }
            self.base = lo;
        }
        let a = (self.arena_done - self.arena_base) as usize;
        if a >= 65536 && 2 * a >= self.arena.len() {
            self.arena.drain(..a);
            self.arena_before.drain(..a);
            self.arena_base = self.arena_done;
        }
    }

    #[inline]
    fn at(&self, g: usize) -> usize {
        g - self.base
    }

    fn emit(&mut self, g: usize, t: f64) {
        self.max_commit = Some(match self.max_commit {
            None => t,
            Some(m) => py_max(m, t),
        });
        let a = self.arrival[g - self.base];
        match &mut self.sink {
            Sink::Full(v) => v[g] = t,
            Sink::Acc(acc) => acc.commit(g, t, a),
        }
    }

    fn push(&mut self, t: f64, kind: u8, i: i64, lo: u64, hi: u64) {
        self.counter += 1;
        self.heap.push(Ev { key: t, seq: self.counter, kind, i, lo, hi });
    }

    fn run_cpu(&mut self, work: f64, kind: u8, i: i64, lo: u64, hi: u64) {
        self.counter += 1;
        self.ps_heap.push(Ev { key: self.vnow + work, seq: self.counter, kind, i, lo, hi });
    }

    /// engine.py ``rate``: processor sharing; the busy-waiting coordinator yields its core
    /// and takes CPU from the workers only when placed alone on a core.
    fn rate(&self) -> f64 {
        let cores = self.cost.cores;
        let j = self.ps_heap.len() as f64;
        // Contention (CostModel.contention): the same operations as engine.py.
        let slow = if j <= 1.0 {
            1.0
        } else {
            1.0 + self.cost.concurrency_cpu * (f64::min(j, cores) - 1.0)
                + self.cost.oversubscribed_cpu * f64::max(0.0, j - cores)
        };
        if !self.spinning {
            return (if j <= cores { 1.0 } else { cores / j }) / slow;
        }
        let r = j + 1.0;
        if r <= cores {
            return 1.0 / slow;
        }
        let alone = if r < 2.0 * cores { (2.0 * cores - r) / r } else { 0.0 };
        f64::min(1.0, (cores - alone) / j) / slow
    }

    fn advance(&mut self, now: f64) {
        if !self.ps_heap.is_empty() || self.spinning {
            self.vnow += (now - self.vlast_t) * self.rate();
        } else {
            self.vnow = 0.0;
        }
        self.vlast_t = now;
    }

    fn reschedule(&mut self, now: f64) {
        self.ps_version += 1;
        if let Some(top) = self.ps_heap.peek() {
            let d = top.key - self.vnow;
            let d = if d > 0.0 { d } else { 0.0 }; // max(0.0, d)
            let t = now + d / self.rate();
            self.push(t, CPU_DONE, self.ps_version, 0, 0);
        }
    }

    fn ready(&self, i: usize) -> bool {
        let need = self.need[self.at(i)];
        if need < 0 {
            return true;
        }
        match self.need_kind[self.at(i)] {
            PREFIX => self.lwm >= need,
            // below `base` everything has committed (base <= lwm + 1)
            SPECIFIC => (need as usize) < self.base || self.committed[self.at(need as usize)],
            _ => self.entered_upto >= need,
        }
    }

    /// engine.py `take_worker`: give transaction `i` the lowest-numbered free worker; the
    /// switch's CPU (0 on its predecessor's worker, or for the first transaction).
    fn take_worker(&mut self, i: usize) -> f64 {
        let w = self.free_ids.pop().map_or(0, |Reverse(w)| w);
        let li = self.at(i);
        self.worker_of[li] = w;
        let switched = self.prev_worker >= 0 && w != self.prev_worker;
        self.prev_worker = w;
        if switched {
            self.switches += 1;
            self.switch_add
        } else {
            0.0
        }
    }

    /// engine.py `release`: every waiting transaction the LWM has reached goes to the pool, in
    /// (need, index) order (`Scheduler::run_main_thread`).
    fn release(&mut self) {
        while let Some(&Reverse((nd, i))) = self.waiting.peek() {
            if nd > self.lwm {
                break;
            }
            self.waiting.pop();
            self.pool.push_back(i);
        }
        if !self.waiting_other.is_empty() {
            let others = std::mem::take(&mut self.waiting_other);
            for &j in &others {
                if self.ready(j as usize) {
                    self.pool.push_back(j);
                }
            }
            self.waiting_other = others.into_iter().filter(|&j| !self.ready(j as usize)).collect();
        }
    }

    /// engine.py: whether the scheduler has something to hand out.
    fn csa_any_ready(&self) -> bool {
        if let Some(&Reverse((nd, _))) = self.waiting.peek() {
            if nd <= self.lwm {
                return true;
            }
        }
        self.waiting_other.iter().any(|&j| self.ready(j as usize))
    }

    /// engine.py `try_csa`: the scheduler thread's hand-out, the workers taking from the pool,
    /// then the reader (`Csa_service::run`: `ensure_space`, enqueue, read the next); true when
    /// the reader would read a transaction not given yet.
    fn try_csa(&mut self, now: f64) -> bool {
        self.spinning = false;
        if self.csa_any_ready() {
            if self.cost.wakeup_us <= 0.0 {
                self.release();
            } else if self.sched_wake < 0.0 {
                self.sched_wake = now + self.cost.wakeup_us;
                self.push(self.sched_wake, WAKE, -1, 0, 0);
            } else if now >= self.sched_wake {
                self.sched_wake = -1.0;
                self.release();
            }
        }
        if self.held >= 0 && !self.coord_busy {
            if self.in_flight >= self.limit {
                // ensure_space: a yield loop
                if self.coord_blocked_since.is_none() {
                    // a wait on the clock if any task waits for it
                    self.coord_blocked_since = Some(now);
                    self.blocked_on_dep = !self.waiting.is_empty() || !self.waiting_other.is_empty();
                }
                self.spinning = true;
            } else {
                if let Some(since) = self.coord_blocked_since.take() {
                    if self.blocked_on_dep {
                        self.dependency_wait_us += now - since;
                    } else {
                        self.worker_wait_us += now - since;
                    }
                }
                self.in_flight += 1;
                let h = self.held as usize;
                let nd = self.need[self.at(h)];
                if self.ready(h) && self.sched_wake < 0.0 {
                    self.pool.push_back(h as u64);
                } else if self.need_kind[self.at(h)] == PREFIX {
                    self.waiting.push(Reverse((nd, h as u64)));
                } else {
                    self.waiting_other.push(h as u64);
                }
                self.held = -1;
            }
        }
        while !self.free_ids.is_empty() {
            let Some(g) = self.pool.pop_front() else { break };
            let i = g as usize;
            let extra = self.take_worker(i);
            let li = self.at(i);
            self.start_t[li] = now;
            let w = self.cost.dispatch_event_us * self.events[li] as f64
                + self.cost.dispatch_byte_us * self.nbytes[li] as f64
                + (self.work[li] + extra);
            self.run_cpu(w, APPLY_DONE, i as i64, 0, 0);
        }
        if self.held >= 0 || self.coord_busy {
            return false;
        }
        if self.coord_next >= self.n {
            return !self.last;
        }
        let i = self.coord_next;
        let arrival = self.arrival[self.at(i)];
        if arrival > now {
            self.push(arrival, WAKE, -1, 0, 0);
            return false;
        }
        self.coord_busy = true;
        self.run_cpu(self.cost.dispatch_us, DISPATCH_DONE, i as i64, 0, 0);
        false
    }

    /// engine.py `try_coordinator`; true when it would look at a transaction not given yet
    /// (the run pauses there until the next chunk).
    fn try_coordinator(&mut self, now: f64) -> bool {
        if self.cfg.csa {
            return self.try_csa(now);
        }
        self.spinning = false;
        if self.coord_busy {
            return false;
        }
        if self.coord_next >= self.n {
            return !self.last;
        }
        let i = self.coord_next;
        let arrival = self.arrival[self.at(i)];
        if arrival > now {
            self.push(arrival, WAKE, -1, 0, 0);
            return false;
        }
        let nb = self.nbytes[self.at(i)];
        // 0: none, 1: dependency, 2: no free worker (or pending-jobs memory).
        let reason = if !self.ready(i) {
            1
        } else if self.free_ids.is_empty()
            || (self.pending != 0 && self.pending + nb > self.cfg.pending_jobs_size_max)
        {
            2
        } else {
            0
        };
        if reason != 0 {
            if self.coord_blocked_since.is_none() {
                self.coord_blocked_since = Some(now);
                self.blocked_on_dep = reason == 1;
            }
            self.spinning = reason == 2;
            self.dep_sleep = reason == 1 && self.need_kind[self.at(i)] == PREFIX;
            return false;
        }
        if self.dep_sleep && self.cost.wakeup_us > 0.0 {
            if self.wake_at < 0.0 {
                self.wake_at = now + self.cost.wakeup_us;
                self.push(self.wake_at, WAKE, -1, 0, 0);
                return false;
            }
            if now < self.wake_at {
                return false;
            }
        }
        self.dep_sleep = false;
        self.wake_at = -1.0;
        if let Some(since) = self.coord_blocked_since.take() {
            if self.blocked_on_dep {
                self.dependency_wait_us += now - since;
            } else {
                self.worker_wait_us += now - since;
            }
        }
        let extra = self.take_worker(i);
        self.coord_busy = true;
        // engine.py: the MTA's worker applies the events as the coordinator reads them; the
        // apply cannot end before the read.
        let read = self.cost.coordinator_us(nb, self.events[self.at(i)]);
        self.run_cpu(read, DISPATCH_DONE, i as i64, 0, 0);
        let li = self.at(i);
        self.pending += nb;
        self.start_t[li] = now;
        let w = py_max(read, self.work[li] + extra);
        self.run_cpu(w, APPLY_DONE, i as i64, 0, 0);
        false
    }

    fn start_flush(&mut self, now: f64) {
        let end = self.arena_base + self.arena.len() as u64;
        if self.flush_busy || self.flush_start == end {
            return;
        }
        self.flush_busy = true;
        let (lo, hi) = (self.flush_start, end);
        self.flush_start = hi;
        if self.redo_us > 0.0 {
            // The leader waits for the group's redo fsync (no CPU).
            self.fsync(now, REDO_DONE, lo, hi);
        } else {
            self.flush_done(now, lo, hi);
        }
    }

    /// A merge of the group `lo..hi` into a stage's queue (engine.py `queue.extend(group)`).
    fn merged(queue: (u64, u64), lo: u64, hi: u64) -> (u64, u64) {
        if queue.0 == queue.1 { (lo, hi) } else { (queue.0, hi) }
    }

    /// engine.py `flush_done`.
    fn flush_done(&mut self, now: f64, lo: u64, hi: u64) {
        self.flush_busy = false;
        self.sync_queue = Self::merged(self.sync_queue, lo, hi);
        self.start_sync(now);
        self.start_flush(now);
    }

    fn start_sync(&mut self, now: f64) {
        let (lo, hi) = self.sync_queue;
        if self.sync_busy || lo == hi {
            return;
        }
        self.sync_busy = true;
        self.sync_queue = (hi, hi);
        if self.sync_us > 0.0 || self.fsync_byte > 0.0 {
            self.fsync(now, SYNC_DONE, lo, hi);
        } else {
            self.sync_done(now, lo, hi);
        }
    }

    /// engine.py `sync_done`.
    fn sync_done(&mut self, now: f64, lo: u64, hi: u64) {
        self.sync_busy = false;
        self.flushes += 1;
        self.commit_queue = Self::merged(self.commit_queue, lo, hi);
        self.start_sync(now);
        self.start_commit();
    }

    /// engine.py `start_commit`: the commit stage's leader commits every queued member (CPU).
    fn start_commit(&mut self) {
        let (lo, hi) = self.commit_queue;
        if self.commit_busy || lo == hi {
            return;
        }
        self.commit_busy = true;
        self.commit_queue = (hi, hi);
        self.commit_groups += 1;
        self.run_cpu(self.cost.commit_group_us + self.cost.commit_us * (hi - lo) as f64, COMMIT_DONE, -1, lo, hi);
    }

    /// engine.py `fsync_us`: the fsync's time for the group `lo..hi` of the arena: per fsync,
    /// plus per byte of the group's transactions.
    fn fsync_us(&self, kind: u8, lo: u64, hi: u64) -> f64 {
        let per = if kind == REDO_DONE { self.redo_us } else { self.sync_us };
        if self.fsync_byte <= 0.0 {
            return per;
        }
        per + self.fsync_byte * self.group_bytes(lo, hi) as f64
    }

    /// The bytes of the arena's group `lo..hi` (engine.py: `sum(nbytes[g] for g in group)`).
    fn group_bytes(&self, lo: u64, hi: u64) -> i64 {
        let before = |k: u64| {
            let p = (k - self.arena_base) as usize;
            if p < self.arena_before.len() { self.arena_before[p] } else { self.arena_bytes }
        };
        before(hi) - before(lo)
    }

    /// engine.py `fsync_start`: the calling thread's CPU share of the fsync (`fsync_cpu` of
    /// `us`, processor-shared), then the device's rest of it.
    fn fsync_start(&mut self, now: f64, kind: u8, lo: u64, hi: u64) {
        let us = self.fsync_us(kind, lo, hi);
        if self.cost.fsync_cpu > 0.0 && us > 0.0 {
            self.run_cpu(self.cost.fsync_cpu * us, FSYNC_CPU, kind as i64, lo, hi);
        } else {
            self.push(now + us, kind, -1, lo, hi);
        }
    }

    /// engine.py `fsync`: one fsync at a time when the redo log and the binlog share a device.
    fn fsync(&mut self, now: f64, kind: u8, lo: u64, hi: u64) {
        let us = self.fsync_us(kind, lo, hi);
        if !self.shared_disk || us <= 0.0 {
            self.fsync_start(now, kind, lo, hi);
        } else if self.disk_busy {
            self.disk_queue.push_back((kind, lo, hi));
        } else {
            self.disk_busy = true;
            self.fsync_start(now, kind, lo, hi);
        }
    }

    /// engine.py `fsync_done`.
    fn fsync_done(&mut self, now: f64, kind: u8, lo: u64, hi: u64) {
        if !self.shared_disk || self.fsync_us(kind, lo, hi) <= 0.0 {
            return;
        }
        self.disk_busy = false;
        if let Some((k, lo, hi)) = self.disk_queue.pop_front() {
            self.disk_busy = true;
            self.fsync_start(now, k, lo, hi);
        }
    }

    fn enter_commit(&mut self, i: usize, now: f64) {
        let li = self.at(i);
        self.entered[li] = true;
        while ((self.entered_upto + 1) as usize) < self.n && self.entered[self.at((self.entered_upto + 1) as usize)] {
            self.entered_upto += 1;
        }
        self.arena.push(i as u64);
        self.arena_before.push(self.arena_bytes);
        self.arena_bytes += self.nbytes[li];
        self.start_flush(now);
    }

    fn commit(&mut self, i: usize, now: f64) {
        let li = self.at(i);
        self.committed[li] = true;
        self.in_flight -= 1;
        if !self.cfg.release_at_apply() {
            self.busy_us += now - self.start_t[li];
            self.free_ids.push(Reverse(self.worker_of[li]));
        }
        self.emit(i, now);
        while ((self.lwm + 1) as usize) < self.n && self.committed[self.at((self.lwm + 1) as usize)] {
            self.lwm += 1;
        }
    }

    fn enter_in_order(&mut self, now: f64) {
        loop {
            self.enter_commit(self.next_entry, now);
            self.next_entry += 1;
            if self.next_entry >= self.n || !self.applied[self.at(self.next_entry)] {
                return;
            }
            if self.cost.handoff_us > 0.0 {
                self.push(now + self.cost.handoff_us, HANDOFF, -1, 0, 0);
                return;
            }
        }
    }

    fn handle(&mut self, ev: Ev, now: f64) {
        match ev.kind {
            DISPATCH_DONE => {
                let i = ev.i as usize;
                self.coord_busy = false;
                self.coord_next = i + 1;
                if self.cfg.csa {
                    // read: enqueued once there is room (try_csa)
                    self.held = ev.i;
                }
            }
            APPLY_DONE => {
                let i = ev.i as usize;
                let li = self.at(i);
                if !self.cfg.csa {
                    self.pending -= self.nbytes[li];
                }
                self.applied[li] = true;
                if self.cfg.release_at_apply() {
                    // CSA: the worker takes the next ready transaction
                    self.busy_us += now - self.start_t[li];
                    self.free_ids.push(Reverse(self.worker_of[li]));
                }
                if self.cfg.preserve_commit_order {
                    if i == self.next_entry {
                        self.enter_in_order(now);
                    }
                } else {
                    self.enter_commit(i, now);
                }
            }
            HANDOFF => self.enter_in_order(now),
            FSYNC_CPU => {
                let kind = ev.i as u8;
                let rest = (1.0 - self.cost.fsync_cpu) * self.fsync_us(kind, ev.lo, ev.hi);
                self.push(now + rest, kind, -1, ev.lo, ev.hi);
            }
            REDO_DONE => {
                self.fsync_done(now, ev.kind, ev.lo, ev.hi);
                self.flush_done(now, ev.lo, ev.hi);
            }
            SYNC_DONE => {
                self.fsync_done(now, ev.kind, ev.lo, ev.hi);
                self.sync_done(now, ev.lo, ev.hi);
            }
            COMMIT_DONE => {
                // the commit stage: its InnoDB commits are done
                self.commit_busy = false;
                for k in ev.lo..ev.hi {
                    let j = self.arena[(k - self.arena_base) as usize] as usize;
                    self.commit(j, now);
                }
                self.arena_done = ev.hi;
                self.start_commit();
            }
            _ => {}
        }
    }

    /// Run until the coordinator needs a transaction not given yet, or to the end after the
    /// last chunk.
    fn run(&mut self) -> Result<(), String> {
        let resume = if !self.started {
            self.started = true;
            Some(0.0)
        } else {
            self.paused_at.take()
        };
        if let Some(t) = resume {
            if self.try_coordinator(t) {
                self.paused_at = Some(t);
                return Ok(());
            }
            self.reschedule(t);
        } else if !self.last {
            return Ok(());
        }
        let mut done: Vec<Ev> = Vec::new(); // jobs finishing at one CPU_DONE
        while let Some(ev) = self.heap.pop() {
            let t = ev.key;
            self.advance(t);
            if ev.kind == CPU_DONE {
                if ev.i != self.ps_version {
                    continue; // stale: the rate changed since it was armed
                }
                if let Some(top) = self.ps_heap.peek() {
                    self.vnow = py_max(self.vnow, top.key);
                }
                let a = self.vnow.abs();
                let limit = self.vnow + 1e-9 * py_max(1.0, a);
                done.clear();
                while let Some(top) = self.ps_heap.peek() {
                    if top.key <= limit {
                        done.push(self.ps_heap.pop().unwrap());
                    } else {
                        break;
                    }
                }
                for d in std::mem::take(&mut done) {
                    self.handle(d, t);
                }
            } else if ev.kind == SYNC_DONE || ev.kind == HANDOFF || ev.kind == REDO_DONE {
                self.handle(ev, t);
            }
            if self.try_coordinator(t) {
                self.paused_at = Some(t);
                return Ok(());
            }
            self.reschedule(t);
        }
        if self.last && self.coord_next < self.n {
            return Err(format!("simulation stalled at transaction {} of {}", self.coord_next, self.n));
        }
        Ok(())
    }

    /// engine.py `_single_threaded`: replica_parallel_workers=0, over the chunk just fed.
    fn single_threaded(&mut self) {
        let flush = if self.cfg.durable { self.cost.redo_flush_us + self.cost.flush_us } else { 0.0 };
        let from = self.coord_next;
        for g in from..self.n {
            let li = self.at(g);
            let (arrival, w, nb, ev) = (self.arrival[li], self.work[li], self.nbytes[li], self.events[li]);
            self.st_t = py_max(self.st_t, arrival);
            // one trx per group: each of its two fsyncs writes its bytes
            let fsyncs = if self.cfg.durable { flush + 2.0 * self.fsync_byte * nb as f64 } else { 0.0 };
            let work = self.cost.coordinator_us(nb, ev) + w + (self.cost.commit_group_us + self.cost.commit_us) + fsyncs;
            self.st_t += work;
            self.busy_us += work;
            let t = self.st_t;
            self.emit(g, t);
            self.lwm = g as i64;
            self.entered_upto = g as i64;
        }
        self.coord_next = self.n;
        self.next_entry = self.n;
        self.commit_groups = self.n as i64;
        if self.cfg.durable {
            self.flushes = self.n as i64;
        }
    }

    /// First arrival to last commit (0 without transactions).
    fn apply_us(&self) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let first = self.first_arrival.unwrap_or(0.0);
        if self.cfg.workers <= 0 {
            return self.st_t - first;
        }
        self.max_commit.unwrap_or(0.0) - first
    }
}

/// The apply spread's factors as sim.rs takes them: none, or one per `spread_slot` value (64).
fn check_spread(spread: &[f64], what: &str) -> PyResult<()> {
    if spread.is_empty() || spread.len() == 64 {
        return Ok(());
    }
    Err(PyValueError::new_err(format!("{what}: spread has {} factors, not 64", spread.len())))
}

/// engine.py `spread_slot`: the top six bits of SplitMix64 of the transaction's global index,
/// which of the 64 apply factors it takes.
fn spread_slot(i: u64) -> usize {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 58) as usize
}

/// engine.py `simulate` over a whole input, its work scaled and spread as `feed` does
/// (`work_scale` 1, `work_byte` 0, `work_add` 0 and no `spread`: the work as given), a switch of
/// worker charged `switch_add`.
#[allow(clippy::too_many_arguments)]
pub fn simulate(x: &Input, cfg: Config, cost: Costs, work_scale: f64, work_byte: f64, work_add: f64,
                switch_add: f64, spread: Vec<f64>) -> Result<Output, String> {
    let mut s = Sim::new(cfg, cost, work_scale, work_byte, work_add, switch_add, spread, Sink::Full(Vec::new()));
    s.feed(x, true)?;
    let apply_us = s.apply_us();
    let commit_us = match std::mem::replace(&mut s.sink, Sink::Full(Vec::new())) {
        Sink::Full(v) => v,
        Sink::Acc(_) => unreachable!(),
    };
    Ok(Output {
        apply_us,
        commit_us,
        busy_us: s.busy_us,
        dependency_wait_us: s.dependency_wait_us,
        worker_wait_us: s.worker_wait_us,
        flushes: s.flushes,
        commit_groups: s.commit_groups,
        switches: s.switches,
    })
}

// ------------------------------------------------------------------ lag statistics in one pass

/// Relative accuracy of the lag sketch: a quantile read from it is within this fraction of the
/// exact one (lags under `SKETCH_MIN_US` are within that many microseconds).
pub const SKETCH_ALPHA: f64 = 0.001;
pub const SKETCH_MIN_US: f64 = 1.0;

/// A log-bucket quantile sketch (the DDSketch construction): value `x > SKETCH_MIN_US` goes to
/// bucket `ceil(ln x / ln gamma)`, gamma = (1 + a) / (1 - a); the bucket's representative
/// `2 gamma^k / (gamma + 1)` is within `a` of every value in it. Sparse, so a window holds only
/// the buckets its lags reach (at most ~15,000 for lags from 1 us to 100 days).
#[derive(Default)]
struct Sketch {
    zeros: u64,
    zero_max: f64,
    buckets: BTreeMap<i32, u64>,
    n: u64,
    min: f64,
    max: f64,
}

fn ln_gamma() -> f64 {
    ((1.0 + SKETCH_ALPHA) / (1.0 - SKETCH_ALPHA)).ln()
}

impl Sketch {
    fn add(&mut self, x: f64, lg: f64) {
        if self.n == 0 || x < self.min {
            self.min = x;
        }
        if self.n == 0 || x > self.max {
            self.max = x;
        }
        self.n += 1;
        if x <= SKETCH_MIN_US {
            if self.zeros == 0 || x > self.zero_max {
                self.zero_max = x;
            }
            self.zeros += 1;
        } else {
            *self.buckets.entry((x.ln() / lg).ceil() as i32).or_insert(0) += 1;
        }
    }

    /// run.py `percentile`'s rank (round half to even of p/100 * (n-1)), read from the buckets.
    fn quantile(&self, p: f64, lg: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let last = self.n - 1;
        let k = (p / 100.0 * last as f64).round_ties_even();
        let rank = if k < 0.0 { 0 } else { (k as u64).min(last) };
        if rank < self.zeros {
            return self.zero_max;
        }
        let mut cum = self.zeros;
        let gamma = lg.exp();
        for (&key, &c) in &self.buckets {
            cum += c;
            if rank < cum {
                let v = 2.0 * (key as f64 * lg).exp() / (gamma + 1.0);
                return v.max(self.min).min(self.max);
            }
        }
        self.max
    }
}

/// The lag of one window (or of the whole run) in commit order: count, sketch, time above the
/// threshold between consecutive commits.
#[derive(Default)]
struct LagPart {
    sketch: Sketch,
    above: f64,
    prev: Option<(f64, f64)>, // (commit, lag) of the previous commit
}

impl LagPart {
    fn add(&mut self, c: f64, lag: f64, threshold: f64, lg: f64) {
        if let Some((pc, pl)) = self.prev {
            if pl > threshold {
                self.above += c - pc;
            }
        }
        self.prev = Some((c, lag));
        self.sketch.add(lag, lg);
    }
}

/// Lag statistics of one simulation, fed its commits as they happen. Up to `cap` transactions
/// it keeps every commit time and arrival (the caller computes the exact statistics from them,
/// as for a whole run); past that it replays what it holds, in commit order (ties in binlog
/// order), into sketches and goes on in one pass: percentiles within SKETCH_ALPHA, maximum,
/// count and time above the threshold exact, a lag series of 200 to 400 points.
pub struct LagAcc {
    cap: usize,
    threshold: f64,
    window_us: i64,
    origin_us: i64,
    lg: f64,
    exact: Option<(Vec<f64>, Vec<f64>)>, // commit (NaN until committed), arrival; by index
    total: LagPart,
    windows: BTreeMap<i64, LagPart>,
    series: Vec<(u64, f64, f64)>,
    step: u64,
    k: u64,
    tie_t: f64,
    ties: Vec<(usize, f64, f64)>, // (index, commit, arrival) committed at tie_t
}

impl LagAcc {
    pub fn new(cap: usize, threshold: f64, window_us: i64, origin_us: i64) -> Self {
        LagAcc {
            cap,
            threshold,
            window_us,
            origin_us,
            lg: ln_gamma(),
            exact: Some((Vec::new(), Vec::new())),
            total: LagPart::default(),
            windows: BTreeMap::new(),
            series: Vec::new(),
            step: ((cap / 200).max(1)) as u64,
            k: 0,
            tie_t: f64::NEG_INFINITY,
            ties: Vec::new(),
        }
    }

    fn fed(&mut self, from: usize, arrival: &[f64]) {
        let over = match &mut self.exact {
            Some((c, a)) => {
                debug_assert_eq!(a.len(), from);
                a.extend_from_slice(arrival);
                c.resize(a.len(), f64::NAN);
                a.len() > self.cap
            }
            None => false,
        };
        if over {
            self.to_sketch();
        }
    }

    /// Replay the commits so far in (commit, index) order; the last tie group stays open.
    fn to_sketch(&mut self) {
        let (c, a) = self.exact.take().unwrap();
        let mut done: Vec<(f64, usize)> =
            c.iter().enumerate().filter(|(_, t)| !t.is_nan()).map(|(i, &t)| (t, i)).collect();
        done.sort_unstable_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        for (t, i) in done {
            self.commit_sketch(i, t, a[i]);
        }
    }

    fn commit(&mut self, i: usize, t: f64, arrival: f64) {
        match &mut self.exact {
            Some((c, _)) => c[i] = t,
            None => self.commit_sketch(i, t, arrival),
        }
    }

    fn commit_sketch(&mut self, i: usize, t: f64, arrival: f64) {
        if t != self.tie_t {
            self.flush_ties();
            self.tie_t = t;
        }
        self.ties.push((i, t, arrival));
    }

    fn flush_ties(&mut self) {
        let mut ties = std::mem::take(&mut self.ties);
        ties.sort_unstable_by_key(|x| x.0);
        for &(_, c, a) in &ties {
            self.take(c, a);
        }
        ties.clear();
        self.ties = ties;
    }

    fn take(&mut self, c: f64, a: f64) {
        let lag = c - a;
        self.total.add(c, lag, self.threshold, self.lg);
        if self.window_us > 0 {
            let w = self.window_us;
            let start = ((a.trunc() as i64) + self.origin_us).div_euclid(w) * w;
            self.windows.entry(start).or_default().add(c, lag, self.threshold, self.lg);
        }
        if self.k % self.step == 0 {
            self.series.push((self.k, c, lag));
            if self.series.len() > 400 {
                let s2 = self.step * 2;
                self.series.retain(|p| p.0 % s2 == 0);
                self.step = s2;
            }
        }
        self.k += 1;
    }
}

/// `StreamSim(cfg, cost, work_scale, work_byte, work_add, switch_add, cap, threshold_us, window_us, origin_us, spread=[])`: one simulation
/// fed in chunks (`feed`), with its lag statistics gathered as it commits (`finish`). `cfg` and
/// `cost` are read by attribute (`ReplicaConfig`, `CostModel`: `Config`, `Costs`).
#[pyclass(module = "lagadvisor._native")]
pub struct StreamSim {
    sim: Sim,
}

#[pymethods]
impl StreamSim {
    #[new]
    #[pyo3(signature = (cfg, cost, work_scale, work_byte, work_add, switch_add, cap, threshold_us, window_us,
                        origin_us, spread = Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn new(cfg: Config, cost: Costs, work_scale: f64, work_byte: f64, work_add: f64, switch_add: f64, cap: usize,
           threshold_us: f64, window_us: i64, origin_us: i64, spread: Vec<f64>) -> PyResult<Self> {
        check_spread(&spread, "StreamSim")?;
        let acc = LagAcc::new(cap, threshold_us, window_us, origin_us);
        Ok(StreamSim {
            sim: Sim::new(cfg, cost, work_scale, work_byte, work_add, switch_add, spread, Sink::Acc(Box::new(acc))),
        })
    }

    /// The next chunk's columns (bytes of array 'd', 'd', 'q', 'q', 'b', 'q'; `need` in global
    /// indices); `last` when no more will come. Runs as far as the input allows.
    #[allow(clippy::too_many_arguments)]
    fn feed(&mut self, py: Python<'_>, arrival_us: &[u8], work_us: &[u8], nbytes: &[u8], need: &[u8],
            need_kind: &[u8], events: &[u8], last: bool) -> PyResult<()> {
        let arrival = f64s(arrival_us, "arrival_us")?;
        let work = f64s(work_us, "work_us")?;
        let nb = i64s(nbytes, "nbytes")?;
        let nd = i64s(need, "need")?;
        let ev = i64s(events, "events")?;
        let n = arrival.len();
        if work.len() != n || nb.len() != n || nd.len() != n || need_kind.len() != n || ev.len() != n {
            return Err(PyValueError::new_err("StreamSim.feed: columns of different lengths"));
        }
        let input = Input { arrival_us: &arrival, work_us: &work, nbytes: &nb, need: &nd, need_kind, events: &ev };
        let sim = &mut self.sim;
        py.allow_threads(|| sim.feed(&input, last)).map_err(PyRuntimeError::new_err)
    }

    /// What it holds now: (transactions with per-transaction state, arena entries, commit
    /// times kept for exact statistics, sketch buckets): memory, for tests of its bounds.
    fn held(&self) -> (usize, usize, usize, usize) {
        let s = &self.sim;
        let (kept, buckets) = match &s.sink {
            Sink::Acc(a) => (
                a.exact.as_ref().map_or(0, |(c, _)| c.len()),
                a.total.sketch.buckets.len() + a.windows.values().map(|p| p.sketch.buckets.len()).sum::<usize>(),
            ),
            Sink::Full(v) => (v.len(), 0),
        };
        (s.arrival.len(), s.arena.len(), kept, buckets)
    }

    /// After the last chunk: `(apply_us, busy_us, dependency_wait_us, worker_wait_us, flushes,
    /// commit_groups, transactions, exact, approx, switches)`: `exact` = (commit_us bytes, arrival_us bytes) in binlog
    /// order when the run fits the cap (else None); `approx` = None, or (p50, p99, max, above
    /// (us), series [(commit, lag)], windows [(start_us, transactions, p99, max, above)]).
    #[allow(clippy::type_complexity)]
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<PyObject> {
        let s = &mut self.sim;
        if !s.last {
            s.feed(&Input { arrival_us: &[], work_us: &[], nbytes: &[], need: &[], need_kind: &[], events: &[] }, true)
                .map_err(PyRuntimeError::new_err)?;
        }
        let apply = s.apply_us();
        let Sink::Acc(acc) = &mut s.sink else { unreachable!() };
        let out: PyObject = match acc.exact.take() {
            Some((c, a)) => {
                let exact = (PyBytes::new_bound(py, &f64_bytes(&c)), PyBytes::new_bound(py, &f64_bytes(&a)));
                (apply, s.busy_us, s.dependency_wait_us, s.worker_wait_us, s.flushes, s.commit_groups, s.n, exact, py.None(), s.switches)
                    .into_py(py)
            }
            None => {
                acc.flush_ties();
                let lg = acc.lg;
                let t = &acc.total.sketch;
                let series: Vec<(f64, f64)> = acc.series.iter().map(|&(_, c, l)| (c, l)).collect();
                let windows: Vec<(i64, u64, f64, f64, f64)> = acc
                    .windows
                    .iter()
                    .map(|(&start, p)| (start, p.sketch.n, p.sketch.quantile(99.0, lg), p.sketch.max, p.above))
                    .collect();
                let approx = (t.quantile(50.0, lg), t.quantile(99.0, lg), t.max, acc.total.above, series, windows);
                (apply, s.busy_us, s.dependency_wait_us, s.worker_wait_us, s.flushes, s.commit_groups, s.n, py.None(), approx, s.switches)
                    .into_py(py)
            }
        };
        Ok(out)
    }
}

/// run.py `percentile` on sorted values, with Python's `round` (half to even).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let last = sorted.len() - 1;
    let k = (p / 100.0 * last as f64).round_ties_even();
    let k = if k < 0.0 { 0 } else { (k as usize).min(last) };
    sorted[k]
}

pub struct LagStats {
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub above_us: f64,
    pub series: Vec<i64>,
}

/// run.py `_lag_stats` before its unit conversions: lag percentiles, time above the threshold
/// (between consecutive commits, in commit order; ties in binlog order), and which
/// transactions the ~200-point lag series samples.
pub fn lag_stats(commit: &[f64], arrival: &[f64], threshold_us: f64) -> LagStats {
    let n = commit.len();
    let lags: Vec<f64> = commit.iter().zip(arrival).map(|(c, a)| c - a).collect();
    let mut sorted = lags.clone();
    sorted.sort_unstable_by(f64::total_cmp);
    // Python's stable sort by commit time = sort by (commit time, index).
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_unstable_by(|&a, &b| {
        commit[a as usize].total_cmp(&commit[b as usize]).then(a.cmp(&b))
    });
    let step = (n / 200).max(1);
    let mut above = 0.0;
    let mut series = Vec::with_capacity(n / step + 1);
    for (k, &i) in order.iter().enumerate() {
        let i = i as usize;
        if k % step == 0 {
            series.push(i as i64);
        }
        if lags[i] > threshold_us && k + 1 < n {
            above += commit[order[k + 1] as usize] - commit[i];
        }
    }
    LagStats {
        p50_us: percentile(&sorted, 50.0),
        p99_us: percentile(&sorted, 99.0),
        max_us: sorted.last().copied().unwrap_or(0.0),
        above_us: above,
        series,
    }
}

// ------------------------------------------------------------------ Python bindings

fn f64s(b: &[u8], what: &str) -> PyResult<Vec<f64>> {
    if !b.len().is_multiple_of(8) {
        return Err(PyValueError::new_err(format!("{what}: length {} is not a multiple of 8", b.len())));
    }
    Ok(b.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap())).collect())
}

fn i64s(b: &[u8], what: &str) -> PyResult<Vec<i64>> {
    if !b.len().is_multiple_of(8) {
        return Err(PyValueError::new_err(format!("{what}: length {} is not a multiple of 8", b.len())));
    }
    Ok(b.chunks_exact(8).map(|c| i64::from_ne_bytes(c.try_into().unwrap())).collect())
}

fn f64_bytes(v: &[f64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 8);
    for x in v {
        out.extend_from_slice(&x.to_ne_bytes());
    }
    out
}

/// What `sim_run` takes, by attribute (`sim.engine.NativeRun`): the columns of a SimInput as
/// bytes of array('d'), ('d'), ('q'), ('q'), ('b'), ('q'), the replica's settings and the cost model.
#[derive(FromPyObject)]
struct RunArgs<'py> {
    arrival_us: Bound<'py, PyBytes>,
    work_us: Bound<'py, PyBytes>,
    nbytes: Bound<'py, PyBytes>,
    need: Bound<'py, PyBytes>,
    need_kind: Bound<'py, PyBytes>,
    events: Bound<'py, PyBytes>,
    cfg: Config,
    cost: Costs,
    /// engine.py ``SimArgs``: ``spread_across_workers`` done here (`Sim::feed`), 1/0/0/[] none.
    work_scale: f64,
    work_byte: f64,
    work_add: f64,
    spread: Vec<f64>,
    /// engine.py ``SimArgs.switch_add`` (``CostModel.switch_add_us``).
    switch_add: f64,
}

/// `sim_run(run)` (a `RunArgs`): returns `(apply_us, busy_us, dependency_wait_us,
/// worker_wait_us, flushes, commit_groups, commit_us bytes of array('d'), switches)`.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn sim_run<'py>(py: Python<'py>, run: RunArgs<'py>) -> PyResult<(f64, f64, f64, f64, i64, i64, Bound<'py, PyBytes>, i64)> {
    let arrival = f64s(run.arrival_us.as_bytes(), "arrival_us")?;
    let work = f64s(run.work_us.as_bytes(), "work_us")?;
    let nb = i64s(run.nbytes.as_bytes(), "nbytes")?;
    let nd = i64s(run.need.as_bytes(), "need")?;
    let need_kind = run.need_kind.as_bytes();
    let ev = i64s(run.events.as_bytes(), "events")?;
    let n = arrival.len();
    if work.len() != n || nb.len() != n || nd.len() != n || need_kind.len() != n || ev.len() != n {
        return Err(PyValueError::new_err("sim_run: columns of different lengths"));
    }
    if let Some(bad) = nd.iter().position(|&v| v < -1 || v >= n as i64) {
        return Err(PyValueError::new_err(format!("sim_run: need[{bad}] = {} out of range", nd[bad])));
    }
    if arrival.iter().chain(work.iter()).any(|v| v.is_nan()) {
        return Err(PyValueError::new_err("sim_run: NaN arrival or work"));
    }
    check_spread(&run.spread, "sim_run")?;
    let input = Input { arrival_us: &arrival, work_us: &work, nbytes: &nb, need: &nd, need_kind, events: &ev };
    let (cfg, cost) = (run.cfg, run.cost);
    let (f, b, m, sw, spread) = (run.work_scale, run.work_byte, run.work_add, run.switch_add, run.spread);
    let out = py.allow_threads(|| simulate(&input, cfg, cost, f, b, m, sw, spread)).map_err(PyRuntimeError::new_err)?;
    let commit = PyBytes::new_bound(py, &f64_bytes(&out.commit_us));
    Ok((out.apply_us, out.busy_us, out.dependency_wait_us, out.worker_wait_us, out.flushes, out.commit_groups, commit,
        out.switches))
}

/// `sim_lag_stats(commit_us, arrival_us, threshold_us)` (bytes of array('d')): returns
/// `(p50_us, p99_us, max_us, above_us, series_indices)`.
#[pyfunction]
fn sim_lag_stats(
    py: Python<'_>,
    commit_us: &[u8],
    arrival_us: &[u8],
    threshold_us: f64,
) -> PyResult<(f64, f64, f64, f64, Vec<i64>)> {
    let commit = f64s(commit_us, "commit_us")?;
    let arrival = f64s(arrival_us, "arrival_us")?;
    if commit.len() != arrival.len() {
        return Err(PyValueError::new_err("sim_lag_stats: columns of different lengths"));
    }
    let s = py.allow_threads(|| lag_stats(&commit, &arrival, threshold_us));
    Ok((s.p50_us, s.p99_us, s.max_us, s.above_us, s.series))
}

/// `sim.build.base_columns` over fact columns (native int64 bytes each): arrival (the source's
/// commit time relative to the first one, or 0 in catch-up) and the worker's apply time, with
/// `CostModel.apply_us`'s float operations in its order:
/// (((((((trx + ins) + upd) + del) + bytes) + scan) + foreign-key checks) + index entries) + events,
/// the checks and entries counted past what the per-row costs hold (`CostModel.apply_us`).
#[pyfunction]
#[pyo3(signature = (commit_ts_us, inserts, updates, deletes, nbytes, scan_rows, fk_checks, index_entries, events, w,
                    catch_up, first=None))]
#[allow(clippy::too_many_arguments)]
fn sim_base_columns<'py>(
    py: Python<'py>,
    commit_ts_us: &[u8],
    inserts: &[u8],
    updates: &[u8],
    deletes: &[u8],
    nbytes: &[u8],
    scan_rows: &[u8],
    fk_checks: &[u8],
    index_entries: &[u8],
    events: &[u8],
    w: [f64; 9],
    catch_up: bool,
    first: Option<i64>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let ts = i64s(commit_ts_us, "commit_ts_us")?;
    let cols = [i64s(inserts, "inserts")?, i64s(updates, "updates")?, i64s(deletes, "deletes")?,
                i64s(nbytes, "nbytes")?, i64s(scan_rows, "scan_rows")?, i64s(fk_checks, "fk_checks")?,
                i64s(index_entries, "index_entries")?, i64s(events, "events")?];
    let n = ts.len();
    if cols.iter().any(|c| c.len() != n) {
        return Err(pyo3::exceptions::PyValueError::new_err("sim_base_columns: columns of different lengths"));
    }
    // `first`: the run's earliest commit time, given when the columns are one chunk of it
    let first = first.unwrap_or_else(|| ts.iter().copied().filter(|t| *t != 0).min().unwrap_or(0));
    let mut arrival = Vec::with_capacity(n * 8);
    let mut work = Vec::with_capacity(n * 8);
    for i in 0..n {
        let a = if catch_up || ts[i] == 0 { 0.0 } else { (ts[i] - first) as f64 };
        arrival.extend_from_slice(&a.to_ne_bytes());
        // the checks and entries past what the per-row costs hold (sim.model extra_fk_checks,
        // extra_index_entries: the same integer operations)
        let (ins, upd, del) = (cols[0][i], cols[1][i], cols[2][i]);
        let checks = (cols[5][i] - ins).max(0);
        let entries = (cols[6][i] - (ins + 2 * upd + del)).max(0);
        let u = w[0] + w[1] * ins as f64 + w[2] * upd as f64 + w[3] * del as f64
            + w[4] * cols[3][i] as f64 + w[5] * cols[4][i] as f64 + w[6] * checks as f64
            + w[7] * entries as f64 + w[8] * cols[7][i] as f64;
        work.extend_from_slice(&u.to_ne_bytes());
    }
    Ok((PyBytes::new_bound(py, &arrival), PyBytes::new_bound(py, &work)))
}

/// `sim.build.logical_clock`'s needs over fact columns: for each transaction the last one it
/// waits for (a barrier at a file change, a gap or step back in sequence numbers, or a
/// last_committed of 0, or a last_committed not below its own sequence number; otherwise the
/// transaction last_committed names, not before the last barrier: the segment).
/// For one chunk of a run: `offset` is the chunk's first global index and `state` (previous
/// file, previous sequence number, segment start) carries over from the chunk before;
/// returns the needs and the state after the chunk.
#[pyfunction]
#[pyo3(signature = (file_idx, seq, last_committed, offset=0, state=(-1, 0, 0)))]
fn sim_clock_needs<'py>(py: Python<'py>, file_idx: &[u8], seq: &[u8], last_committed: &[u8], offset: i64,
                        state: (i64, i64, i64)) -> PyResult<(Bound<'py, PyBytes>, (i64, i64, i64))> {
    let (fi, sq, lcs) = (i64s(file_idx, "file_idx")?, i64s(seq, "seq")?, i64s(last_committed, "last_committed")?);
    let n = sq.len();
    if fi.len() != n || lcs.len() != n {
        return Err(pyo3::exceptions::PyValueError::new_err("sim_clock_needs: columns of different lengths"));
    }
    let mut out = Vec::with_capacity(n * 8);
    let (mut prev_file, mut prev_seq, mut seg_start) = state;
    for k in 0..n {
        let i = offset + k as i64;
        let (lc, s) = (lcs[k], sq[k]);
        // `sets_barrier`: a new file, last_committed 0 or a break in sequence numbers moves the
        // floor (solve's id_after_barrier); a last_committed not below its own sequence number
        // is a barrier for itself only (`is_barrier`)
        let sets = fi[k] != prev_file || lc <= 0 || s != prev_seq + 1;
        if sets {
            seg_start = i;
        }
        let barrier = sets || s <= lc;
        prev_file = fi[k];
        prev_seq = s;
        let need = if barrier || i == 0 { i - 1 } else { (seg_start - 1).max(i - (s - lc)) };
        out.extend_from_slice(&need.to_ne_bytes());
    }
    Ok((PyBytes::new_bound(py, &out), (prev_file, prev_seq, seg_start)))
}

/// `advise.rules.delayed_recorded` (the source's commit groups had it waited
/// `binlog_group_commit_sync_delay`): each transaction's recorded last_committed capped at the
/// last sequence number before its delayed group, a group being the transactions that commit
/// within `delay_us` of its first one (within one binlog file); a last_committed of 0 or less is
/// kept. For one chunk of a run: `state` (file, a group started, its first commit time, the last
/// sequence number before it, the previous sequence number) carries over from the chunk before;
/// returns the column and the state after the chunk.
#[pyfunction]
#[pyo3(signature = (file_idx, seq, commit_ts_us, recorded, delay_us, state=(-1, 0, 0, 0, 0)))]
fn sim_delayed_recorded<'py>(py: Python<'py>, file_idx: &[u8], seq: &[u8], commit_ts_us: &[u8], recorded: &[u8],
                             delay_us: i64, state: (i64, i64, i64, i64, i64))
                             -> PyResult<(Bound<'py, PyBytes>, (i64, i64, i64, i64, i64))> {
    let (fi, sq, ts, lcs) = (i64s(file_idx, "file_idx")?, i64s(seq, "seq")?, i64s(commit_ts_us, "commit_ts_us")?,
                             i64s(recorded, "recorded")?);
    let n = sq.len();
    if fi.len() != n || ts.len() != n || lcs.len() != n {
        return Err(pyo3::exceptions::PyValueError::new_err("sim_delayed_recorded: columns of different lengths"));
    }
    let (mut file, mut started, mut group_start, mut prev_group_last, mut last_seq) = state;
    let mut out = Vec::with_capacity(n * 8);
    for k in 0..n {
        if fi[k] != file {
            (file, started, group_start, prev_group_last, last_seq) = (fi[k], 0, 0, 0, 0);
        }
        if started == 0 || ts[k] - group_start > delay_us {
            (prev_group_last, group_start, started) = (last_seq, ts[k], 1);
        }
        let lc = lcs[k];
        let new = if lc > 0 { lc.min(prev_group_last) } else { lc };
        out.extend_from_slice(&new.to_ne_bytes());
        last_seq = sq[k];
    }
    Ok((PyBytes::new_bound(py, &out), (file, started, group_start, prev_group_last, last_seq)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim_run, m)?)?;
    m.add_function(wrap_pyfunction!(sim_lag_stats, m)?)?;
    m.add_function(wrap_pyfunction!(sim_base_columns, m)?)?;
    m.add_function(wrap_pyfunction!(sim_clock_needs, m)?)?;
    m.add_function(wrap_pyfunction!(sim_delayed_recorded, m)?)?;
    m.add_class::<StreamSim>()?;
    m.add("SKETCH_ALPHA", SKETCH_ALPHA)?;
    m.add("SKETCH_MIN_US", SKETCH_MIN_US)?;
    Ok(())
}
