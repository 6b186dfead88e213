//! The dependency trackers and the analyze statistics, ported from the reference
//! (`lagadvisor.depgraph.policies`, `lagadvisor.depgraph.clock`, `lagadvisor.analysis.analyze`)
//! line for line so that every counter, parent and fallback is the same.
//! Server side: mysql-server `sql/rpl_trx_tracking.cc` (`Commit_order_trx_dependency_tracker`,
//! `Writeset_trx_dependency_tracker`, `Writeset_session_trx_dependency_tracker`).

use std::collections::{BTreeMap, HashMap};

pub const FALLBACK_NAMES: [&str; 12] = [
    "no_primary_key", "ddl", "statement_based", "fk_parent", "writeset_limit", "history_full",
    "empty", "ctas", "unknown_schema", "incomplete", "too_large", "empty_writeset",
];
pub const NO_PRIMARY_KEY: u8 = 0;
pub const DDL: u8 = 1;
pub const STATEMENT: u8 = 2;
pub const FK_PARENT: u8 = 3;
pub const WRITESET_LIMIT: u8 = 4;
pub const HISTORY_FULL: u8 = 5;
pub const EMPTY: u8 = 6;
pub const CTAS: u8 = 7;
pub const UNKNOWN_SCHEMA: u8 = 8;
pub const INCOMPLETE: u8 = 9;
pub const TOO_LARGE: u8 = 10;
pub const EMPTY_WRITESET: u8 = 11;

/// `CommitOrderSource` implementations: 0 recorded, 1 serial, 2 flush-groups.
pub struct CommitOrder {
    pub kind: u8,
    group_ts: Option<i64>,
    group_first: i64,
}

impl CommitOrder {
    pub fn new(kind: u8) -> Self {
        CommitOrder { kind, group_ts: None, group_first: 1 }
    }
    pub fn reset_file(&mut self) {
        self.group_ts = None;
        self.group_first = 1;
    }
    pub fn parent(&mut self, last_committed: Option<i64>, immediate_ts: i64, seq: i64) -> i64 {
        match self.kind {
            0 => last_committed.unwrap_or(seq - 1),
            1 => seq - 1,
            _ => {
                // FlushGroupCommitOrder, gap_us = 100
                match self.group_ts {
                    Some(g) if !(immediate_ts - g > 100 || immediate_ts < g) => {}
                    _ => self.group_first = seq,
                }
                self.group_ts = Some(immediate_ts);
                let recorded = last_committed.unwrap_or(0);
                recorded.max(self.group_first - 1)
            }
        }
    }
}

/// `WritesetTracker`.
pub struct WritesetTracker {
    pub history_size: i64,
    pub history: HashMap<i64, i64>,
    pub history_start: i64,
    pub resets: u64,
}

pub struct WsFlags {
    pub has_missing_keys: bool,
    pub has_related_foreign_keys: bool,
}

impl WritesetTracker {
    pub fn reset_file(&mut self) {
        self.history.clear();
        self.history_start = 1;
    }
    pub fn dependency(&mut self, seq: i64, co: i64, hashes: &[i64], ws: &WsFlags, mut reason: Option<u8>) -> (i64, Option<u8>) {
        if reason.is_none() {
            if ws.has_related_foreign_keys {
                reason = Some(FK_PARENT);
            } else if hashes.len() as i64 > self.history_size {
                reason = Some(WRITESET_LIMIT);
            } else if hashes.is_empty() && !ws.has_missing_keys {
                reason = Some(EMPTY_WRITESET);
            }
        }
        let usable = reason.is_none() || reason == Some(EMPTY);
        let mut parent = co;
        let mut exceeds = false;
        if usable {
            exceeds = (self.history.len() + hashes.len()) as i64 > self.history_size;
            let mut last_parent = self.history_start;
            for &h in hashes {
                match self.history.get_mut(&h) {
                    Some(v) => {
                        if last_parent < *v && *v < seq {
                            last_parent = *v;
                        }
                        *v = seq;
                    }
                    None => {
                        if !exceeds {
                            self.history.insert(h, seq);
                        }
                    }
                }
            }
            if !ws.has_missing_keys {
                parent = last_parent.min(co);
            } else if reason.is_none() {
                reason = Some(NO_PRIMARY_KEY);
            }
        }
        if exceeds || !usable {
            self.history.clear();
            self.history_start = seq;
            self.resets += 1;
            if exceeds && reason.is_none() {
                reason = Some(HISTORY_FULL);
            }
        }
        (parent, reason)
    }
}

/// `SessionTracker`: never reset at rotation.
#[derive(Default)]
pub struct SessionTracker {
    last: HashMap<u32, i64>,
}

impl SessionTracker {
    pub fn dependency(&mut self, seq: i64, mut parent: i64, session: Option<u32>) -> i64 {
        let Some(s) = session else { return parent };
        let prev = self.last.get(&s).copied().unwrap_or(0);
        if prev != 0 && prev < seq {
            parent = parent.max(prev);
        }
        self.last.insert(s, seq);
        parent
    }
}

pub const DISTANCE_BUCKETS: [i64; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 1024];

/// `ClockStats`: files are identified by their index in the run's path list (the reference
/// compares path strings; the caller refuses runs that name a file twice).
#[derive(Clone)]
pub struct ClockStats {
    pub transactions: u64,
    pub barriers: u64,
    pub parallel: u64,
    pub distance_sum: i128,
    pub histogram: [u64; 11], // index = bucket position, 10 = "above the last bucket"
    pub depth: i64,
    levels: Vec<i64>,
    file: Option<usize>,
    offset: i64,
}

impl Default for ClockStats {
    fn default() -> Self {
        ClockStats { transactions: 0, barriers: 0, parallel: 0, distance_sum: 0, histogram: [0; 11], depth: 0,
                     levels: vec![0], file: None, offset: 0 }
    }
}

impl ClockStats {
    pub fn add(&mut self, file: usize, mut lc: Option<i64>, seq: Option<i64>) {
        self.transactions += 1;
        if self.file != Some(file) {
            self.file = Some(file);
            self.levels.clear();
            self.levels.push(self.depth);
            self.offset = 0;
        }
        if let Some(s) = seq {
            if s - self.offset != self.levels.len() as i64 {
                self.offset = s - 1;
                self.levels.clear();
                self.levels.push(self.depth);
                lc = lc.map(|_| 0);
            }
        }
        let level;
        match (lc, seq) {
            (Some(l), Some(s)) => {
                let distance = s - l;
                self.distance_sum += distance as i128;
                let b = DISTANCE_BUCKETS.iter().position(|u| distance <= *u).unwrap_or(10);
                self.histogram[b] += 1;
                if distance > 1 {
                    self.parallel += 1;
                }
                let k = l - self.offset;
                if l == 0 || k <= 0 {
                    self.barriers += 1;
                    level = self.depth + 1;
                } else {
                    let idx = (k as usize).min(self.levels.len() - 1);
                    level = self.levels[idx] + 1;
                }
                let last = *self.levels.last().unwrap_or(&0);
                self.levels.push(level.max(last));
            }
            _ => {
                self.barriers += 1;
                level = self.depth + 1;
                self.levels.push(level);
            }
        }
        if level > self.depth {
            self.depth = level;
        }
    }
}

/// One entry of the largest-transactions list: (bytes, rows, gtid text, "file@offset").
pub type Largest = (i64, i64, String, String);

/// `Totals` (analysis/results.py).
#[derive(Default)]
pub struct Totals {
    pub transactions: u64,
    pub rows: u64,
    pub bytes: i64,
    pub ddl: u64,
    pub statement_based: u64,
    pub xa: u64,
    pub incidents: u64,
    pub incomplete: u64,
    pub first_ts_us: Option<i64>,
    pub last_ts_us: Option<i64>,
    pub recorded: ClockStats,
    pub largest: Vec<Largest>,
    pub tables: Vec<u64>,          // rows per interned table name (index)
    pub tables_order: Vec<usize>,  // first-seen order of table names
    pub lags: LagDigest,
}

/// `LagDigest` (analysis/results.py): a replica binlog's observed lags, exact up to `cap` values
/// (`LAGADVISOR_EXACT_LAGS`), then a signed log-bucket sketch within `LAG_ALPHA`.
pub struct LagDigest {
    pub cap: usize,
    pub values: Vec<i64>,
    pub n: u64,
    pub min: i64,
    pub max: i64,
    pub neg: BTreeMap<i32, u64>,
    pub small: [u64; 3],
    pub pos: BTreeMap<i32, u64>,
    pub sketch: bool,
    /// ln((1 + a) / (1 - a)): the log of the buckets' growth factor.
    lg: f64,
}

pub const LAG_ALPHA: f64 = 0.001;

pub enum Quantile {
    Exact(i64),
    Approx(f64),
}

impl Default for LagDigest {
    fn default() -> Self {
        let cap = std::env::var("LAGADVISOR_EXACT_LAGS").ok()
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse::<usize>().ok()).unwrap_or(1 << 20);
        LagDigest { cap, values: Vec::new(), n: 0, min: 0, max: 0, neg: BTreeMap::new(), small: [0; 3],
                    pos: BTreeMap::new(), sketch: false, lg: ((1.0 + LAG_ALPHA) / (1.0 - LAG_ALPHA)).ln() }
    }
}

impl LagDigest {
    pub fn add(&mut self, v: i64) {
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        if self.n == 0 || v > self.max {
            self.max = v;
        }
        self.n += 1;
        if self.sketch {
            self.bucket(v);
            return;
        }
        self.values.push(v);
        if self.values.len() > self.cap {
            self.sketch = true;
            let vals = std::mem::take(&mut self.values);
            for x in vals {
                self.bucket(x);
            }
        }
    }

    /// `LagDigest.summary` without the division: (n, p50, p99, max, sketch), the percentiles as
    /// integers when exact (nearest rank, `sim.run.percentile`), else the sketch's floats.
    pub fn summary(&self) -> (u64, Quantile, Quantile, i64, bool) {
        if self.sketch {
            return (self.n, Quantile::Approx(self.quantile(50.0)), Quantile::Approx(self.quantile(99.0)),
                    self.max, true);
        }
        let mut v = self.values.clone();
        v.sort_unstable();
        let at = |p: f64| {
            let last = v.len() - 1;
            let k = (p / 100.0 * last as f64).round_ties_even();
            v[if k < 0.0 { 0 } else { (k as usize).min(last) }]
        };
        (self.n, Quantile::Exact(at(50.0)), Quantile::Exact(at(99.0)), self.max, false)
    }

    fn quantile(&self, p: f64) -> f64 {
        let last = self.n - 1;
        let k = (p / 100.0 * last as f64).round_ties_even();
        let rank = if k < 0.0 { 0 } else { (k as u64).min(last) };
        let lg = self.lg;
        let g = lg.exp();
        let (lo, hi) = (self.min as f64, self.max as f64);
        let mut cum = 0u64;
        for (&k, &c) in self.neg.iter().rev() {
            cum += c;
            if rank < cum {
                return (-2.0 * (k as f64 * lg).exp() / (g + 1.0)).max(lo).min(hi);
            }
        }
        for (i, &c) in self.small.iter().enumerate() {
            cum += c;
            if rank < cum {
                return (i as f64 - 1.0).max(lo).min(hi);
            }
        }
        for (&k, &c) in self.pos.iter() {
            cum += c;
            if rank < cum {
                return (2.0 * (k as f64 * lg).exp() / (g + 1.0)).max(lo).min(hi);
            }
        }
        hi
    }

    fn bucket(&mut self, v: i64) {
        if (-1..=1).contains(&v) {
            self.small[(v + 1) as usize] += 1;
            return;
        }
        let k = ((v.unsigned_abs() as f64).ln() / self.lg).ceil() as i32;
        let side = if v > 0 { &mut self.pos } else { &mut self.neg };
        *side.entry(k).or_insert(0) += 1;
    }
}

impl Totals {
    pub fn add_ts(&mut self, ts: i64) {
        if ts != 0 {
            if self.first_ts_us.map_or(true, |f| ts < f) {
                self.first_ts_us = Some(ts);
            }
            if self.last_ts_us.map_or(true, |l| ts > l) {
                self.last_ts_us = Some(ts);
            }
        }
    }
    /// Heap of the 5 largest, as `heapq` keeps them (only the set matters: it is sorted later).
    pub fn offer_largest(&mut self, bytes: i64, rows: i64, make: &mut dyn FnMut() -> (String, String)) {
        if self.largest.len() < 5 {
            let (g, w) = make();
            self.largest.push((bytes, rows, g, w));
            return;
        }
        let mut mi = 0;
        for i in 1..self.largest.len() {
            if self.largest[i] < self.largest[mi] {
                mi = i;
            }
        }
        let min = &self.largest[mi];
        if (bytes, rows) < (min.0, min.1) {
            return;
        }
        let (g, w) = make();
        let item = (bytes, rows, g, w);
        if item > *min {
            self.largest[mi] = item;
        }
    }
    pub fn add_table_rows(&mut self, name: usize, rows: u64) {
        if name >= self.tables.len() {
            self.tables.resize(name + 1, u64::MAX);
        }
        if self.tables[name] == u64::MAX {
            self.tables[name] = 0;
            self.tables_order.push(name);
        }
        self.tables[name] += rows;
    }
}
