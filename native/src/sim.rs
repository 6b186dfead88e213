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
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

// `need_kind` values (engine.py PREFIX, SPECIFIC, ENTERED).
const PREFIX: u8 = 0;
const SPECIFIC: u8 = 1;

// Event kinds (engine.py): DISPATCH_DONE, APPLY_DONE, FLUSH_DONE, WAKE, SYNC_DONE, CPU_DONE, HANDOFF,
// REDO_DONE.
const DISPATCH_DONE: u8 = 0;
const APPLY_DONE: u8 = 1;
const FLUSH_DONE: u8 = 2;
const WAKE: u8 = 3;
const SYNC_DONE: u8 = 4;
const CPU_DONE: u8 = 5;
const HANDOFF: u8 = 6;
const REDO_DONE: u8 = 7;

/// One queue entry: `key` is a time (event queue) or a virtual finish (processor sharing).
/// `i` is a transaction index, or the version for CPU_DONE; `lo..hi` is a commit group, as a
/// range of `Sim::arena`.
#[derive(Clone, Copy)]
struct Ev {
    key: f64,
    seq: u64,
    kind: u8,
    i: i64,
    lo: u32,
    hi: u32,
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

/// The cost-model numbers the engine reads (CostModel fields, microseconds).
#[derive(Clone, Copy)]
pub struct Costs {
    pub dispatch_us: f64,
    pub dispatch_byte_us: f64,
    pub commit_us: f64,
    pub flush_us: f64,
    pub redo_flush_us: f64,
    pub handoff_us: f64,
    pub cores: f64,
    pub fsync_devices: i64,
}

/// The replica settings the engine reads (ReplicaConfig fields).
#[derive(Clone, Copy)]
pub struct Config {
    pub workers: i64,
    pub preserve_commit_order: bool,
    pub durable: bool,
    pub pending_jobs_size_max: i64,
}

/// The columns of a SimInput.
pub struct Input<'a> {
    pub arrival_us: &'a [f64],
    pub work_us: &'a [f64],
    pub nbytes: &'a [i64],
    pub need: &'a [i64],
    pub need_kind: &'a [u8],
}

pub struct Output {
    pub apply_us: f64,
    pub commit_us: Vec<f64>,
    pub busy_us: f64,
    pub dependency_wait_us: f64,
    pub worker_wait_us: f64,
    pub flushes: i64,
}

struct Sim<'a> {
    x: &'a Input<'a>,
    n: usize,
    cfg: Config,
    cost: Costs,
    sync_us: f64,
    redo_us: f64,
    shared_disk: bool,
    disk_busy: bool,
    disk_queue: VecDeque<(u8, u32, u32)>,
    heap: BinaryHeap<Ev>,
    ps_heap: BinaryHeap<Ev>,
    counter: u64,
    committed: Vec<bool>,
    entered: Vec<bool>,
    applied: Vec<bool>,
    commit_t: Vec<f64>,
    start_t: Vec<f64>,
    lwm: i64,
    entered_upto: i64,
    next_entry: usize,
    free_workers: i64,
    vnow: f64,
    vlast_t: f64,
    ps_version: i64,
    spinning: bool,
    coord_next: usize,
    coord_busy: bool,
    coord_blocked_since: Option<f64>,
    blocked_on_dep: bool,
    pending: i64,
    flush_busy: bool,
    // Every transaction enters the flush queue once, and a flush takes the whole queue: the
    // queue is always the tail of `arena` from `flush_start`, and a group is a range of it.
    arena: Vec<u32>,
    flush_start: usize,
    sync_busy: bool,
    sync_queue: VecDeque<(u32, u32)>,
    busy_us: f64,
    dependency_wait_us: f64,
    worker_wait_us: f64,
    flushes: i64,
}

impl<'a> Sim<'a> {
    fn push(&mut self, t: f64, kind: u8, i: i64, lo: u32, hi: u32) {
        self.counter += 1;
        self.heap.push(Ev { key: t, seq: self.counter, kind, i, lo, hi });
    }

    fn run_cpu(&mut self, work: f64, kind: u8, i: i64, lo: u32, hi: u32) {
        self.counter += 1;
        self.ps_heap.push(Ev { key: self.vnow + work, seq: self.counter, kind, i, lo, hi });
    }

    fn rate(&self) -> f64 {
        let m = (self.ps_heap.len() + usize::from(self.spinning)) as f64;
        if m <= self.cost.cores {
            1.0
        } else {
            self.cost.cores / m
        }
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
        let need = self.x.need[i];
        if need < 0 {
            return true;
        }
        match self.x.need_kind[i] {
            PREFIX => self.lwm >= need,
            SPECIFIC => self.committed[need as usize],
            _ => self.entered_upto >= need,
        }
    }

    fn try_coordinator(&mut self, now: f64) {
        self.spinning = false;
        if self.coord_busy || self.coord_next >= self.n {
            return;
        }
        let i = self.coord_next;
        let arrival = self.x.arrival_us[i];
        if arrival > now {
            self.push(arrival, WAKE, -1, 0, 0);
            return;
        }
        // 0: none, 1: dependency, 2: no free worker (or pending-jobs memory).
        let reason = if !self.ready(i) {
            1
        } else if self.free_workers == 0
            || (self.pending != 0 && self.pending + self.x.nbytes[i] > self.cfg.pending_jobs_size_max)
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
            return;
        }
        if let Some(since) = self.coord_blocked_since.take() {
            if self.blocked_on_dep {
                self.dependency_wait_us += now - since;
            } else {
                self.worker_wait_us += now - since;
            }
        }
        self.free_workers -= 1;
        self.coord_busy = true;
        let d = self.cost.dispatch_us + self.cost.dispatch_byte_us * self.x.nbytes[i] as f64;
        self.run_cpu(d, DISPATCH_DONE, i as i64, 0, 0);
    }

    fn start_flush(&mut self, now: f64) {
        if self.flush_busy || self.flush_start == self.arena.len() {
            return;
        }
        self.flush_busy = true;
        let (lo, hi) = (self.flush_start, self.arena.len());
        self.flush_start = hi;
        if self.redo_us > 0.0 {
            // The leader waits for the group's redo fsync (no CPU), then writes and commits.
            self.fsync(now, REDO_DONE, lo as u32, hi as u32);
        } else {
            self.run_cpu(self.cost.commit_us * (hi - lo) as f64, FLUSH_DONE, -1, lo as u32, hi as u32);
        }
    }

    fn start_sync(&mut self, now: f64) {
        if self.sync_busy {
            return;
        }
        if let Some((lo, hi)) = self.sync_queue.pop_front() {
            self.sync_busy = true;
            self.fsync(now, SYNC_DONE, lo, hi);
        }
    }

    fn fsync_us(&self, kind: u8) -> f64 {
        if kind == REDO_DONE {
            self.redo_us
        } else {
            self.sync_us
        }
    }

    /// engine.py `fsync`: one fsync at a time when the redo log and the binlog share a device.
    fn fsync(&mut self, now: f64, kind: u8, lo: u32, hi: u32) {
        let us = self.fsync_us(kind);
        if !self.shared_disk || us <= 0.0 {
            self.push(now + us, kind, -1, lo, hi);
        } else if self.disk_busy {
            self.disk_queue.push_back((kind, lo, hi));
        } else {
            self.disk_busy = true;
            self.push(now + us, kind, -1, lo, hi);
        }
    }

    /// engine.py `fsync_done`.
    fn fsync_done(&mut self, now: f64, kind: u8) {
        if !self.shared_disk || self.fsync_us(kind) <= 0.0 {
            return;
        }
        self.disk_busy = false;
        if let Some((k, lo, hi)) = self.disk_queue.pop_front() {
            self.disk_busy = true;
            let us = self.fsync_us(k);
            self.push(now + us, k, -1, lo, hi);
        }
    }

    fn enter_commit(&mut self, i: usize, now: f64) {
        self.entered[i] = true;
        while ((self.entered_upto + 1) as usize) < self.n && self.entered[(self.entered_upto + 1) as usize] {
            self.entered_upto += 1;
        }
        self.arena.push(i as u32);
        self.start_flush(now);
    }

    fn commit(&mut self, i: usize, now: f64) {
        self.committed[i] = true;
        self.commit_t[i] = now;
        self.busy_us += now - self.start_t[i];
        self.free_workers += 1;
        while ((self.lwm + 1) as usize) < self.n && self.committed[(self.lwm + 1) as usize] {
            self.lwm += 1;
        }
    }

    fn enter_in_order(&mut self, now: f64) {
        loop {
            self.enter_commit(self.next_entry, now);
            self.next_entry += 1;
            if self.next_entry >= self.n || !self.applied[self.next_entry] {
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
                self.pending += self.x.nbytes[i];
                self.start_t[i] = now;
                self.coord_next = i + 1;
                self.run_cpu(self.x.work_us[i], APPLY_DONE, ev.i, 0, 0);
            }
            APPLY_DONE => {
                let i = ev.i as usize;
                self.pending -= self.x.nbytes[i];
                self.applied[i] = true;
                if self.cfg.preserve_commit_order {
                    if i == self.next_entry {
                        self.enter_in_order(now);
                    }
                } else {
                    self.enter_commit(i, now);
                }
            }
            HANDOFF => self.enter_in_order(now),
            REDO_DONE => {
                self.fsync_done(now, ev.kind);
                let members = (ev.hi - ev.lo) as f64;
                self.run_cpu(self.cost.commit_us * members, FLUSH_DONE, -1, ev.lo, ev.hi);
            }
            FLUSH_DONE => {
                self.flush_busy = false;
                self.sync_queue.push_back((ev.lo, ev.hi));
                self.start_sync(now);
                self.start_flush(now);
            }
            SYNC_DONE => {
                self.fsync_done(now, ev.kind);
                self.flushes += 1;
                for k in ev.lo as usize..ev.hi as usize {
                    let j = self.arena[k] as usize;
                    self.commit(j, now);
                }
                self.sync_busy = false;
                self.start_sync(now);
            }
            _ => {}
        }
    }

    fn run(&mut self) -> Result<(), String> {
        let mut done: Vec<Ev> = Vec::new(); // jobs finishing at one CPU_DONE
        self.try_coordinator(0.0);
        self.reschedule(0.0);
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
                for d in done.drain(..) {
                    self.handle(d, t);
                }
            } else if ev.kind == SYNC_DONE || ev.kind == HANDOFF || ev.kind == REDO_DONE {
                self.handle(ev, t);
            }
            self.try_coordinator(t);
            self.reschedule(t);
        }
        if self.coord_next < self.n {
            return Err(format!("simulation stalled at transaction {} of {}", self.coord_next, self.n));
        }
        Ok(())
    }
}

/// Python's `min(arrivals, default=0.0)`.
fn first_arrival(arrival: &[f64]) -> f64 {
    let mut it = arrival.iter();
    let Some(&first) = it.next() else { return 0.0 };
    it.fold(first, |m, &v| if v < m { v } else { m })
}

/// engine.py `_single_threaded`: replica_parallel_workers=0.
fn single_threaded(x: &Input, cfg: &Config, cost: &Costs) -> Output {
    let n = x.arrival_us.len();
    let mut commit_t = vec![0.0; n];
    let mut t = 0.0;
    let mut busy = 0.0;
    let flush = if cfg.durable { cost.redo_flush_us + cost.flush_us } else { 0.0 };
    for (((c, &arrival), &w), &nb) in commit_t.iter_mut().zip(x.arrival_us).zip(x.work_us).zip(x.nbytes) {
        t = py_max(t, arrival);
        let work = (cost.dispatch_us + cost.dispatch_byte_us * nb as f64) + w + cost.commit_us + flush;
        t += work;
        busy += work;
        *c = t;
    }
    let first = first_arrival(x.arrival_us);
    Output {
        apply_us: if n > 0 { t - first } else { 0.0 },
        commit_us: commit_t,
        busy_us: busy,
        dependency_wait_us: 0.0,
        worker_wait_us: 0.0,
        flushes: if cfg.durable { n as i64 } else { 0 },
    }
}

/// engine.py `simulate`.
pub fn simulate(x: &Input, cfg: Config, cost: Costs) -> Result<Output, String> {
    if cfg.workers <= 0 {
        return Ok(single_threaded(x, &cfg, &cost));
    }
    let n = x.arrival_us.len();
    let mut s = Sim {
        x,
        n,
        cfg,
        cost,
        sync_us: if cfg.durable { cost.flush_us } else { 0.0 },
        redo_us: if cfg.durable { cost.redo_flush_us } else { 0.0 },
        shared_disk: cost.fsync_devices == 1,
        disk_busy: false,
        disk_queue: VecDeque::new(),
        heap: BinaryHeap::new(),
        ps_heap: BinaryHeap::new(),
        counter: 0,
        committed: vec![false; n],
        entered: vec![false; n],
        applied: vec![false; n],
        commit_t: vec![0.0; n],
        start_t: vec![0.0; n],
        lwm: -1,
        entered_upto: -1,
        next_entry: 0,
        free_workers: cfg.workers,
        vnow: 0.0,
        vlast_t: 0.0,
        ps_version: 0,
        spinning: false,
        coord_next: 0,
        coord_busy: false,
        coord_blocked_since: None,
        blocked_on_dep: false,
        pending: 0,
        flush_busy: false,
        arena: Vec::with_capacity(n),
        flush_start: 0,
        sync_busy: false,
        sync_queue: VecDeque::new(),
        busy_us: 0.0,
        dependency_wait_us: 0.0,
        worker_wait_us: 0.0,
        flushes: 0,
    };
    s.run()?;
    let first = first_arrival(x.arrival_us);
    let apply_us = match s.commit_t.split_first() {
        None => 0.0,
        Some((&c0, rest)) => rest.iter().fold(c0, |m, &v| py_max(m, v)) - first,
    };
    Ok(Output {
        apply_us,
        commit_us: s.commit_t,
        busy_us: s.busy_us,
        dependency_wait_us: s.dependency_wait_us,
        worker_wait_us: s.worker_wait_us,
        flushes: s.flushes,
    })
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

/// `sim_run(arrival_us, work_us, nbytes, need, need_kind, workers, preserve_commit_order,
/// durable, pending_jobs_size_max, dispatch_us, dispatch_byte_us, commit_us, flush_us, handoff_us,
/// cores, redo_flush_us, fsync_devices)`:
/// columns as bytes of array('d'), ('d'), ('q'), ('q'), ('b'). Returns `(apply_us, busy_us,
/// dependency_wait_us, worker_wait_us, flushes, commit_us bytes of array('d'))`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn sim_run<'py>(
    py: Python<'py>,
    arrival_us: &[u8],
    work_us: &[u8],
    nbytes: &[u8],
    need: &[u8],
    need_kind: &[u8],
    workers: i64,
    preserve_commit_order: bool,
    durable: bool,
    pending_jobs_size_max: i64,
    dispatch_us: f64,
    dispatch_byte_us: f64,
    commit_us: f64,
    flush_us: f64,
    handoff_us: f64,
    cores: i64,
    redo_flush_us: f64,
    fsync_devices: i64,
) -> PyResult<(f64, f64, f64, f64, i64, Bound<'py, PyBytes>)> {
    let arrival = f64s(arrival_us, "arrival_us")?;
    let work = f64s(work_us, "work_us")?;
    let nb = i64s(nbytes, "nbytes")?;
    let nd = i64s(need, "need")?;
    let n = arrival.len();
    if work.len() != n || nb.len() != n || nd.len() != n || need_kind.len() != n {
        return Err(PyValueError::new_err("sim_run: columns of different lengths"));
    }
    if let Some(bad) = nd.iter().position(|&v| v < -1 || v >= n as i64) {
        return Err(PyValueError::new_err(format!("sim_run: need[{bad}] = {} out of range", nd[bad])));
    }
    if arrival.iter().chain(work.iter()).any(|v| v.is_nan()) {
        return Err(PyValueError::new_err("sim_run: NaN arrival or work"));
    }
    let input = Input { arrival_us: &arrival, work_us: &work, nbytes: &nb, need: &nd, need_kind };
    let cfg = Config { workers, preserve_commit_order, durable, pending_jobs_size_max };
    let cost = Costs {
        dispatch_us,
        dispatch_byte_us,
        commit_us,
        flush_us,
        redo_flush_us,
        handoff_us,
        cores: cores.max(1) as f64,
        fsync_devices,
    };
    let out = py.allow_threads(|| simulate(&input, cfg, cost)).map_err(PyRuntimeError::new_err)?;
    let commit = PyBytes::new_bound(py, &f64_bytes(&out.commit_us));
    Ok((out.apply_us, out.busy_us, out.dependency_wait_us, out.worker_wait_us, out.flushes, commit))
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
/// `CostModel.apply_us`'s float operations in its order: ((((trx + ins) + upd) + del) + bytes) + scan.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn sim_base_columns<'py>(
    py: Python<'py>,
    commit_ts_us: &[u8],
    inserts: &[u8],
    updates: &[u8],
    deletes: &[u8],
    nbytes: &[u8],
    scan_rows: &[u8],
    w: [f64; 6],
    catch_up: bool,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let ts = i64s(commit_ts_us, "commit_ts_us")?;
    let cols = [i64s(inserts, "inserts")?, i64s(updates, "updates")?, i64s(deletes, "deletes")?,
                i64s(nbytes, "nbytes")?, i64s(scan_rows, "scan_rows")?];
    let n = ts.len();
    if cols.iter().any(|c| c.len() != n) {
        return Err(pyo3::exceptions::PyValueError::new_err("sim_base_columns: columns of different lengths"));
    }
    let first = ts.iter().copied().filter(|t| *t != 0).min().unwrap_or(0);
    let mut arrival = Vec::with_capacity(n * 8);
    let mut work = Vec::with_capacity(n * 8);
    for i in 0..n {
        let a = if catch_up || ts[i] == 0 { 0.0 } else { (ts[i] - first) as f64 };
        arrival.extend_from_slice(&a.to_ne_bytes());
        let u = w[0] + w[1] * cols[0][i] as f64 + w[2] * cols[1][i] as f64 + w[3] * cols[2][i] as f64
            + w[4] * cols[3][i] as f64 + w[5] * cols[4][i] as f64;
        work.extend_from_slice(&u.to_ne_bytes());
    }
    Ok((PyBytes::new_bound(py, &arrival), PyBytes::new_bound(py, &work)))
}

/// `sim.build.logical_clock`'s needs over fact columns: for each transaction the last one it
/// waits for (a barrier at a file change, a gap or step back in sequence numbers, or a
/// last_committed of 0; otherwise the transaction last_committed names, within its segment).
#[pyfunction]
fn sim_clock_needs<'py>(py: Python<'py>, file_idx: &[u8], seq: &[u8], last_committed: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let (fi, sq, lcs) = (i64s(file_idx, "file_idx")?, i64s(seq, "seq")?, i64s(last_committed, "last_committed")?);
    let n = sq.len();
    if fi.len() != n || lcs.len() != n {
        return Err(pyo3::exceptions::PyValueError::new_err("sim_clock_needs: columns of different lengths"));
    }
    let mut out = Vec::with_capacity(n * 8);
    let (mut prev_file, mut prev_seq, mut seg_start) = (-1i64, 0i64, 0i64);
    for i in 0..n {
        let (lc, s) = (lcs[i], sq[i]);
        let barrier = if fi[i] != prev_file {
            seg_start = i as i64;
            true
        } else {
            lc <= 0 || s != prev_seq + 1 || s <= lc
        };
        prev_file = fi[i];
        prev_seq = s;
        let need = if barrier || i == 0 { i as i64 - 1 } else { (seg_start - 1).max(i as i64 - (s - lc)) };
        out.extend_from_slice(&need.to_ne_bytes());
    }
    Ok(PyBytes::new_bound(py, &out))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim_run, m)?)?;
    m.add_function(wrap_pyfunction!(sim_lag_stats, m)?)?;
    m.add_function(wrap_pyfunction!(sim_base_columns, m)?)?;
    m.add_function(wrap_pyfunction!(sim_clock_needs, m)?)?;
    Ok(())
}
