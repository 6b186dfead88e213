//! The native reader path of `lagadvisor analyze` (issue 7).
//!
//! One [`Analyzer`] reads a run of binlog files in order and does, natively, what the reference
//! does per event and per transaction: framing and CRC32 (`framing.rs`), the hot events
//! (`events.rs`), rows events and row images (`rows` below), writeset hashes identical to the
//! reference's (`writeset.rs`), the three policies' trackers and the analyze statistics
//! (`clock.rs`). Python keeps what is rare or needs the reference's knowledge, called back
//! from here: FORMAT_DESCRIPTION and rare control events are decoded (and validated) by the
//! reference decoders; each distinct TABLE_MAP is decoded by the reference, which also returns
//! the row-image column layout and, per catalog version, the table's key plan (`KeyTracker`);
//! statements other than BEGIN/COMMIT are classified by the reference; DDL transactions are
//! applied to the catalog by `KeyTracker.observe`.
//!
//! Exactness rule: whenever the input leaves the subset handled here (an error, a truncated
//! tail, a compressed payload, MariaDB, a key part that is not an integer column, ...) the
//! reader stops with `NativeFallback` and the caller reads the whole run again with the
//! reference. Nothing is approximated.

pub mod clock;
pub mod events;
pub mod framing;
pub mod writeset;

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::rc::Rc;

use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use clock::{ClockStats, CommitOrder, SessionTracker, Totals, WritesetTracker, WsFlags};
use events::{decode_fde, decode_gtid, decode_query, uuid_text, Fde, Gtid};
use framing::{Abort, Cursor, Framer, RawEvent, Res, HEADER_LEN};
use writeset::{fk_check_count, index_entry_count, row_hashes, FkPlan, FkProbe, KeyPlan, Part, Plan, TablePlan, Val};

/// `transactions.STATEMENT_HEAD`: the bytes of a longer statement handed over to be classified.
const STATEMENT_HEAD: usize = 1 << 16;

create_exception!(_native, NativeFallback, pyo3::exceptions::PyException);

const MAX_ROW_CHANGES: usize = 500_000;
const DETECT_DONE: &str = "detection sample complete";
const STMT_END_F: u16 = 1;
const NO_FOREIGN_KEY_CHECKS_F: u16 = 2;

/// Types the reference knows and deliberately does not decode (`decoder.KNOWN_UNDECODED`).
const KNOWN_UNDECODED: [u8; 16] = [5, 13, 14, 17, 9, 11, 28, 36, 37, 41, 7, 8, 10, 12, 6, 43];
/// Types with a reference decoder (`decoder.DECODERS`) or special handling.
const DECODED: [u8; 19] = [4, 3, 33, 34, 42, 35, 2, 16, 38, 19, 26, 18, 29, 160, 27, 40, 162, 163, 161];

/// Open `path` for reading: through `fd` when the caller holds the file open already (the read
/// pipeline's `depgraph.read.OpenFiles`: the policy detection's sample and the read that follows
/// share one open of each file, issue 21), read from the start; else by its path. The handle is
/// a duplicate: the caller's stays open, and its own.
fn open_input(path: &str, fd: Option<i32>) -> Res<File> {
    use std::io::{Seek, SeekFrom};
    use std::os::fd::BorrowedFd;
    match fd {
        Some(fd) if fd >= 0 => {
            // SAFETY: the caller keeps `fd` open for the length of this call (it owns the file).
            let owned = unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned()
                .map_err(|e| Abort(format!("cannot open: {e}")))?;
            let mut f = File::from(owned);
            f.seek(SeekFrom::Start(0)).map_err(|e| Abort(format!("cannot open: {e}")))?;
            Ok(f)
        }
        _ => File::open(path).map_err(|e| Abort(format!("cannot open: {e}"))),
    }
}

/// A `("plan", ...)` tuple of `Bridge._plan` as the native side hashes it.
fn known_plan(tup: &Bound<'_, PyTuple>, tm: &TmInfo) -> Res<PlanEntry> {
    type KeyT = (i64, i64, i64, u8, Vec<(usize, i64, i64)>, bool, String);
    type FkT = (i64, i64, i64, Vec<(usize, i64)>, bool, String, String, String);
    let get = |i: usize| tup.get_item(i).map_err(py_abort);
    let missing_keys: bool = get(1)?.extract().map_err(py_abort)?;
    let fk_parent: bool = get(2)?.extract().map_err(py_abort)?;
    let partial: Option<String> = get(3)?.extract().map_err(py_abort)?;
    let columns: Vec<usize> = get(4)?.extract().map_err(py_abort)?;
    let keys: Vec<KeyT> = get(5)?.extract().map_err(py_abort)?;
    let fks: Vec<FkT> = get(6)?.extract().map_err(py_abort)?;
    let handle: PyObject = get(7)?.extract().map_err(py_abort)?;
    let scans: bool = get(8)?.extract().map_err(py_abort)?;
    let table_rows: i64 = get(9)?.extract().map_err(py_abort)?;
    let drop_name: String = get(10)?.extract().map_err(py_abort)?;
    let probes: Vec<(bool, Vec<usize>, String)> = get(11)?.extract().map_err(py_abort)?;
    let pk_cols: Vec<usize> = get(12)?.extract().map_err(py_abort)?;
    let index_cols: Vec<Vec<usize>> = get(13)?.extract().map_err(py_abort)?;
    let mut slot_of_col = vec![-1i32; tm.ncols];
    let mut int_slots: Vec<Option<bool>> = vec![None; columns.len()];
    for (s, c) in columns.iter().enumerate() {
        if *c < tm.ncols {
            slot_of_col[*c] = s as i32;
            if let Some(cp) = tm.colplans.as_ref() {
                if is_int_kind(cp[*c].kind) {
                    int_slots[s] = Some(cp[*c].unsigned);
                }
            }
        }
    }
    let slot_of = |c: usize| -> Res<usize> {
        columns.iter().position(|x| *x == c).ok_or_else(|| Abort::new("key part outside the plan's columns"))
    };
    let mut kplans = Vec::new();
    for (a, b, c, hashes, parts, py_key, label) in keys {
        let mut ps = Vec::new();
        for (col, kt, pt) in parts {
            let slot = slot_of(col)?;
            if !py_key && col < tm.ncols && int_slots[slot].is_none() {
                return Err(Abort::new("native key part on a non-integer column"));
            }
            ps.push(Part { slot, key_tag: kt, pack_tag: pt });
        }
        kplans.push(KeyPlan { head: [a, b, c], hashes, label, parts: ps, py: py_key });
    }
    let mut fplans = Vec::new();
    for (a, b, c, parts, py_key, label, label_tail, ref_name) in fks {
        let mut ps = Vec::new();
        for (col, pt) in parts {
            let slot = slot_of(col)?;
            if !py_key && col < tm.ncols && int_slots[slot].is_none() {
                return Err(Abort::new("native key part on a non-integer column"));
            }
            ps.push(Part { slot, key_tag: pt, pack_tag: pt });
        }
        fplans.push(FkPlan { head: [a, b, c], parts: ps, py: py_key, label, label_tail, ref_tag: label_key(&ref_name) });
    }
    let mut fk_probes = Vec::new();
    for (parent, cols, ref_name) in probes {
        let slots = cols.into_iter().map(slot_of).collect::<Res<Vec<usize>>>()?;
        fk_probes.push(FkProbe { parent, slots, ref_tag: label_key(&ref_name) });
    }
    let pk_slots = pk_cols.into_iter().map(slot_of).collect::<Res<Vec<usize>>>()?;
    let index_slots = index_cols.into_iter().map(|cols| cols.into_iter().map(slot_of).collect::<Res<Vec<usize>>>())
        .collect::<Res<Vec<Vec<usize>>>>()?;
    let nslots = columns.len();
    Ok(PlanEntry {
        plan: Plan::Known(TablePlan { keys: kplans, fks: fplans, fk_parent, missing_keys, partial, columns, int_slots,
                                      scans, table_rows, fk_probes, pk_slots, index_slots }),
        handle: Some(handle),
        slot_of_col,
        nslots,
        drop_tag: label_key(&drop_name),
        shadow: None,
    })
}

/// The hashes (and, `labelled`, the readable key) of one key the reference hashes
/// (`Bridge.key_hashes` / `key_hashes_labelled`), from the raw bytes of its parts.
fn bridge_keys(py: Python<'_>, cb: &PyObject, handle: Option<&PyObject>, labelled: bool, fk: bool, idx: usize,
               values: &[Option<&[u8]>]) -> Res<(Vec<i64>, Option<String>)> {
    let Some(h) = handle else { return Err(Abort::new("no plan handle")) };
    let vals: Vec<Option<Bound<'_, PyBytes>>> = values.iter().map(|v| v.map(|b| PyBytes::new_bound(py, b))).collect();
    if labelled {
        cb.call_method1(py, "key_hashes_labelled", (h.clone_ref(py), fk, idx, vals))
            .and_then(|r| r.extract::<(Vec<i64>, String)>(py))
            .map(|(hs, l)| (hs, Some(l)))
            .map_err(py_abort)
    } else {
        cb.call_method1(py, "key_hashes", (h.clone_ref(py), fk, idx, vals))
            .and_then(|r| r.extract::<Vec<i64>>(py))
            .map(|hs| (hs, None))
            .map_err(py_abort)
    }
}

/// The hashes of one row change (`transaction_writeset`'s row part): an UPDATE's after image
/// completed from its before image when it lacks plan columns, then both images; else the one
/// image (`img_a` for a WRITE, `img_b` for a DELETE). False if a key column is absent.
#[allow(clippy::too_many_arguments)]
fn change_hashes(tp: &TablePlan, kind: usize, img_a: &mut [Val], img_b: &[Val], data: &[u8], out: &mut Vec<i64>,
                 fk_checks: bool, pykeys: &mut writeset::PyKeys, mut labels: Option<&mut Vec<String>>,
                 mut tags: Option<&mut Vec<i64>>) -> Res<bool> {
    match kind {
        1 => {
            let present_after = img_a.iter().filter(|v| **v != Val::Absent).count();
            if present_after < tp.columns.len() {
                for (a, b) in img_a.iter_mut().zip(img_b.iter()) {
                    if *a == Val::Absent {
                        *a = *b;
                    }
                }
            }
            let ok_a = row_hashes(tp, img_a, data, out, fk_checks, pykeys, labels.as_deref_mut(), tags.as_deref_mut())?;
            let ok_b = row_hashes(tp, img_b, data, out, fk_checks, pykeys, labels, tags)?;
            Ok(ok_a && ok_b)
        }
        0 => row_hashes(tp, img_a, data, out, fk_checks, pykeys, labels, tags),
        _ => row_hashes(tp, img_b, data, out, fk_checks, pykeys, labels, tags),
    }
}

fn py_abort(e: PyErr) -> Abort {
    Abort(format!("reference callback raised: {e}"))
}

/// A row-image column layout (`rows.ColumnPlan`): fixed `size`, or a `prefix`-byte length.
#[derive(Clone, Copy)]
struct ColPlan {
    size: i64,
    prefix: u8,
    kind: u8,
    unsigned: bool,
}

fn is_int_kind(k: u8) -> bool {
    matches!(k, 1 | 2 | 3 | 8 | 9)
}

struct TmInfo {
    id: usize,
    table_id: u64,
    name: usize,
    /// The table's database (`TableMap.database_name`), interned in `Facts::db_names`.
    db: usize,
    ncols: usize,
    colplans: Option<Vec<ColPlan>>,
    optional_types: Vec<u8>,
    handle: PyObject,
}

struct PlanEntry {
    plan: Plan,
    /// The bridge's handle for reference-hashed keys.
    handle: Option<PyObject>,
    /// table-map column -> plan slot, -1 when the plan does not read it.
    slot_of_col: Vec<i32>,
    nslots: usize,
    /// `label_key` of the lower-case `db.table` (what `WhatIf.plan` matches), 0 when unknown.
    drop_tag: i64,
    /// A table without a primary key: its plan under `WhatIf(add_primary_key={it})`, hashed
    /// alongside for the writeset log (`label_key` of the name the what-if matches; None:
    /// the native side cannot hash it, the what-if reads again).
    shadow: Option<(i64, Option<Rc<PlanEntry>>)>,
}

/// A QUERY_EVENT's (thread id, database, statement).
type Query<'a> = (u32, &'a [u8], &'a [u8]);

/// A transaction being assembled (`transactions._Open`).
struct Open {
    start: u64,
    timestamp: u32,
    server_id: u32,
    truncated: bool,
    gtid: Option<Gtid>,
    thread_id: Option<u32>,
    /// Per table: rows written, updated, deleted, and UPDATE/DELETE rows events.
    stats: Vec<(usize, [u64; 4])>,
    events: u64,
    ddl: bool,
    sbr: bool,
    xa: bool,
    incident: bool,
    rows: u64,
    in_begin: bool,
    blocks: bool,
    other_kind: bool, // a statement other than BEGIN/COMMIT/ROLLBACK
    ddl_statements: Vec<(String, Vec<u8>, Vec<u8>)>,
    selected: Vec<(u64, Rc<PlanEntry>)>,
    current: Vec<(usize, Rc<PlanEntry>)>,
    kept: usize,
    hashes: Vec<i64>,
    incomplete_tables: Vec<usize>,
    /// `_Open.dbs`: databases of its statements and table maps, first seen first (kept only
    /// when facts are collected).
    dbs: Vec<usize>,
    /// A TRANSACTION_PAYLOAD event or an event from inside one belongs to it.
    compressed: bool,
    /// One readable key per hash (when labels are asked for).
    labels: Vec<String>,
    /// With the writeset log: per hash its table (interned name) and foreign-key tag
    /// (`row_hashes`' tags), and the keyless tables' hashes under their shadow plan.
    hash_tab: Vec<usize>,
    hash_fk: Vec<i64>,
    shadow: Vec<(usize, i64)>,
    shadow_kept: usize,
    /// A shadow plan the native side cannot hash was met: the add-primary-key what-if reads again.
    shadow_unsafe: bool,
    /// The foreign-key checks of its kept row changes, by referenced table (`fk_check_count`).
    fk_counts: Vec<(i64, i64)>,
    /// The secondary index entries of its kept row changes (`index_entry_count`).
    index_entries: i64,
    /// Its TRANSACTION_PAYLOAD events: where the last ends in the file, their sizes on disk, and
    /// the sizes of the events inside them (`_Open.payload_end` ...): the transaction ends where
    /// its payload does, and its bytes are its events' uncompressed.
    payload_end: u64,
    payload_size: u64,
    inner_bytes: u64,
}

impl Open {
    /// `Transaction.ctas`: CREATE TABLE ... SELECT, the DDL then the new table's rows.
    fn ctas(&self) -> bool {
        self.ddl && self.rows > 0
    }

    fn new(start: u64, server_id: u32, timestamp: u32) -> Self {
        Open { start, timestamp, server_id, truncated: false, gtid: None, thread_id: None, stats: Vec::new(),
               events: 0, ddl: false, sbr: false, xa: false, incident: false, rows: 0, in_begin: false,
               blocks: false, other_kind: false, ddl_statements: Vec::new(), selected: Vec::new(),
               current: Vec::new(), kept: 0, hashes: Vec::new(), incomplete_tables: Vec::new(), dbs: Vec::new(),
               compressed: false, labels: Vec::new(), hash_tab: Vec::new(), hash_fk: Vec::new(),
               shadow: Vec::new(), shadow_kept: 0, shadow_unsafe: false, fk_counts: Vec::new(),
               index_entries: 0, payload_end: 0, payload_size: 0, inner_bytes: 0 }
    }
}

/// Per-file results that become the reference's `FileSummary` and per-file `Totals`.
#[derive(Default)]
struct FileState {
    counts: Vec<u64>,
    count_order: Vec<u8>,
    unknown: Vec<u64>,
    saw_gtid: bool,
    saw_logical_clock: bool,
    saw_tagged: bool,
    saw_optional: Vec<u8>,
    saw_compression: bool,
    rotate_to: Option<String>,
    truncated: Option<framing::Truncation>,
    transactions: u64,
    index: u64,
    totals: Totals,
    /// Rows inserted minus deleted per table since the file's start (`sim.run.ScanSizes`).
    net_rows: HashMap<usize, i64>,
}

/// Per-transaction simulation facts (`sim.run.facts_of`), one column per field, in binlog
/// order. Databases are interned twice: names (raw bytes; the reference decodes them with
/// `surrogateescape`, which is injective) and sets of names, so a transaction costs one index.
#[derive(Default)]
struct Facts {
    /// file_idx, seq, recorded, COMMIT_ORDER, WRITESET, WRITESET_SESSION, commit_ts_us,
    /// inserts, updates, deletes, nbytes, dbset, scan_rows, fk_checks, index_entries, events.
    cols: [Vec<i64>; 16],
    db_names: Vec<Vec<u8>>,
    db_ids: HashMap<Vec<u8>, usize>,
    dbsets: Vec<Vec<usize>>,
    dbset_ids: HashMap<Vec<usize>, usize>,
}

const FACT_COLUMNS: [&str; 16] = ["file_idx", "seq", "recorded", "commit_order", "writeset", "writeset_session",
                                   "commit_ts_us", "inserts", "updates", "deletes", "nbytes", "dbset", "scan_rows",
                                   "fk_checks", "index_entries", "events"];

impl Facts {
    fn db(&mut self, name: &[u8]) -> usize {
        if let Some(i) = self.db_ids.get(name) {
            return *i;
        }
        let i = self.db_names.len();
        self.db_names.push(name.to_vec());
        self.db_ids.insert(name.to_vec(), i);
        i
    }

    fn dbset(&mut self, mut dbs: Vec<usize>) -> usize {
        dbs.sort_unstable();
        if let Some(i) = self.dbset_ids.get(&dbs) {
            return *i;
        }
        let i = self.dbsets.len();
        self.dbsets.push(dbs.clone());
        self.dbset_ids.insert(dbs, i);
        i
    }
}

fn push_db(dbs: &mut Vec<usize>, id: usize) {
    if !dbs.contains(&id) {
        dbs.push(id);
    }
}

/// `None` in the record columns.
const NONE: i64 = i64::MIN;

/// Per-transaction export records (`analysis.records.transaction_record` plus the computed
/// clocks), one column per field, taken per file (`take_records`).
#[derive(Default)]
struct Records {
    /// file_idx, start_offset, end_offset, last_committed, sequence_number, thread_id,
    /// commit_ts_us, immediate_commit_ts_us, rows, flags (ddl, statement_based, xa, incident,
    /// incomplete, compressed: bits 0..5), COMMIT_ORDER, WRITESET, WRITESET_SESSION, fallback,
    /// original_commit_ts_us, inserts, updates, deletes, nbytes (`Transaction.bytes`), events
    /// (`Transaction.event_count`).
    cols: [Vec<i64>; 20],
    gtids: Vec<Option<String>>,
    table_ends: Vec<i64>,
    tables: Vec<i64>,
}

const RECORD_COLUMNS: [&str; 20] = ["file_idx", "start_offset", "end_offset", "last_committed", "sequence_number",
                                     "thread_id", "commit_ts_us", "immediate_commit_ts_us", "rows", "flags",
                                     "commit_order", "writeset", "writeset_session", "fallback",
                                     "original_commit_ts_us", "inserts", "updates", "deletes", "nbytes", "events"];

/// `depgraph.graph.GraphBuilder.add`, transaction by transaction, with the same float
/// operations in the same order; the apply-time weights come as plain numbers.
struct Graph {
    /// 0 recorded, 1 COMMIT_ORDER, 2 WRITESET, 3 WRITESET_SESSION.
    policy: u8,
    /// trx_us, insert_us, update_us, delete_us, byte_us, commit_us, event_us.
    w: [f64; 7],
    keep: (i64, i64),
    transactions: i64,
    depth: i64,
    critical_path_us: f64,
    serial_us: f64,
    width: i64,
    conflicts: i64,
    hot_rows: HashMap<u32, i64>,
    /// Conflicts by the table part of the row label (`(label or "?").split(" ", 1)[0]`).
    hot_tables: HashMap<String, i64>,
    /// `depgraph.graph.GraphBuilder._bound`: at most `hot_max` rows counted; the sum over the
    /// cuts of the largest count each dropped (a row's count may be short by at most this).
    hot_max: usize,
    hot_rows_error: i64,
    file: Option<usize>,
    levels: Vec<i64>,
    finish: Vec<f64>,
    level_count: HashMap<i64, i64>,
    /// hash -> (writer index, insertion order): a Python dict's insertion order kept for the
    /// eviction below (the writer's label is never read back: a conflict is named by the
    /// label of the transaction that meets it).
    last_writer: HashMap<i64, (i64, u64)>,
    inserted: u64,
    index: i64,
    offset: i64,
    labels: Vec<String>,
    label_ids: HashMap<String, u32>,
    /// Kept range: nodes (index, gtid, seq, last_committed, rows, file_idx, cost) and edges
    /// (source, target, 0 clock / 1 conflict, label id) in the order the builder adds them.
    nodes: Vec<(i64, String, i64, Option<i64>, i64, usize, f64)>,
    edges: Vec<(i64, i64, u8, String)>,
}

const LAST_WRITER_MAX: usize = 2_000_000;

impl Graph {
    fn label(&mut self, l: &str) -> u32 {
        if let Some(i) = self.label_ids.get(l) {
            return *i;
        }
        let i = self.labels.len() as u32;
        self.labels.push(l.to_string());
        self.label_ids.insert(l.to_string(), i);
        i
    }

    /// `depgraph.graph.GraphBuilder.add`: one transaction placed on the clock, its conflicts
    /// with the hashes' last writers counted, and (in the kept range) its node and edges.
    #[allow(clippy::too_many_arguments)]
    fn add(&mut self, file_idx: usize, lc_in: Option<i64>, seq: i64, rows3: [i64; 3], nbytes: i64, events: i64,
           rows: i64, gtid: &Option<String>, hashes: &[i64], labels: &[String]) {
        self.index += 1;
        let idx = self.index;
        self.enter_file(file_idx);
        let cost = self.cost(rows3, nbytes, events);
        let lc = self.place(lc_in, seq, cost);
        let keep = idx >= self.keep.0 && idx < self.keep.1;
        if keep {
            self.nodes.push((idx, gtid.clone().unwrap_or_default(), seq, lc, rows, file_idx, cost));
        }
        let parents = self.meet_writers(idx, hashes, labels);
        self.forget_writers();
        if keep {
            self.keep_edges(idx, seq, lc, parents);
        }
        self.bound();
    }

    /// A new file starts the clock's levels afresh from the depth and the path reached so far,
    /// and forgets the last writers.
    #[inline]
    fn enter_file(&mut self, file_idx: usize) {
        if self.file != Some(file_idx) {
            self.file = Some(file_idx);
            self.levels = vec![self.depth];
            self.finish = vec![self.critical_path_us];
            self.offset = 0;
            self.last_writer.clear();
        }
    }

    /// The cost model's estimate of one transaction (`w` over its rows by kind, its bytes and
    /// its binlog events, then its commit alone).
    #[inline]
    fn cost(&self, rows3: [i64; 3], nbytes: i64, events: i64) -> f64 {
        let w = &self.w;
        (w[0] + w[1] * rows3[0] as f64 + w[2] * rows3[1] as f64 + w[3] * rows3[2] as f64
         + w[4] * nbytes as f64 + w[6] * events as f64) + w[5]
    }

    /// Place one transaction on the logical clock: its level and finish time, and the totals
    /// (depth, critical path, serial time, width). A sequence number out of step restarts the
    /// levels and the transaction counts as independent; the last_committed used is returned.
    #[inline]
    fn place(&mut self, lc_in: Option<i64>, seq: i64, cost: f64) -> Option<i64> {
        let mut lc = lc_in;
        if seq - self.offset != self.levels.len() as i64 {
            self.offset = seq - 1;
            self.levels = vec![self.depth];
            self.finish = vec![self.critical_path_us];
            lc = Some(0);
        }
        let k0 = lc.unwrap_or(0) - self.offset;
        let (level, start) = match lc {
            Some(l) if l > 0 && k0 > 0 => {
                let k = (k0 as usize).min(self.levels.len() - 1);
                (self.levels[k] + 1, self.finish[k])
            }
            _ => (self.depth + 1, self.critical_path_us),
        };
        let finish = start + cost;
        let last_level = *self.levels.last().unwrap();
        let last_finish = *self.finish.last().unwrap();
        self.levels.push(level.max(last_level));
        self.finish.push(if finish > last_finish { finish } else { last_finish });
        self.depth = self.depth.max(level);
        if finish > self.critical_path_us {
            self.critical_path_us = finish;
        }
        self.serial_us += cost;
        self.transactions += 1;
        let n = self.level_count.entry(level).or_insert(0);
        *n += 1;
        let n = *n;
        self.width = self.width.max(n);
        lc
    }

    /// Meet the last writer of each hash: count each (writer, row) conflict once, and return the
    /// distinct writers (each with the first row met) in the order met; then this transaction is
    /// the hashes' last writer.
    #[inline]
    fn meet_writers(&mut self, idx: i64, hashes: &[i64], labels: &[String]) -> Vec<(i64, u32)> {
        let mut parents: Vec<(i64, u32)> = Vec::new();
        let mut counted: Vec<(i64, u32)> = Vec::new();
        for (h, l) in hashes.iter().zip(labels.iter()) {
            let prev = self.last_writer.get(h).map(|p| p.0);
            if let Some(p) = prev.filter(|p| *p != idx) {
                let label = self.label(l);
                if !counted.contains(&(p, label)) {
                    counted.push((p, label));
                    self.count_conflict(label, l);
                    if !parents.iter().any(|(q, _)| *q == p) {
                        parents.push((p, label));
                    }
                }
            }
            let order = self.inserted;
            match self.last_writer.get_mut(h) {
                Some(e) => e.0 = idx,
                None => {
                    self.inserted += 1;
                    self.last_writer.insert(*h, (idx, order));
                }
            }
        }
        parents
    }

    /// One conflict on the row `l` (interned as `label`): counted for the row and for its table.
    #[inline]
    fn count_conflict(&mut self, label: u32, l: &str) {
        self.conflicts += 1;
        *self.hot_rows.entry(label).or_insert(0) += 1;
        let table = if l.is_empty() { "?" } else { l.split(' ').next().unwrap_or("") };
        match self.hot_tables.get_mut(table) {
            Some(n) => *n += 1,
            None => {
                self.hot_tables.insert(table.to_string(), 1);
            }
        }
    }

    /// Past `LAST_WRITER_MAX` hashes, forget the oldest half, as `sorted(..., key=writer)`
    /// (stable over insertion order).
    #[inline]
    fn forget_writers(&mut self) {
        if self.last_writer.len() > LAST_WRITER_MAX {
            let mut items: Vec<(i64, (i64, u64))> = self.last_writer.drain().collect();
            items.sort_by_key(|(_, v)| *v);
            let half = items.len() / 2;
            self.inserted = 0;
            for (h, (i, _)) in items.into_iter().skip(half) {
                self.last_writer.insert(h, (i, self.inserted));
                self.inserted += 1;
            }
        }
    }

    /// The kept transaction's edges: its clock parent (when last_committed names one) and its
    /// conflict parents in writer order, each only when the parent is kept too.
    #[inline]
    fn keep_edges(&mut self, idx: i64, seq: i64, lc: Option<i64>, mut parents: Vec<(i64, u32)>) {
        if let Some(l) = lc {
            if l > 0 && seq - l >= 1 {
                let src = idx - (seq - l);
                if src >= self.keep.0 && src < self.keep.1 {
                    self.edges.push((src, idx, 0, String::new()));
                }
            }
        }
        parents.sort();
        for (p, label) in parents {
            if p >= self.keep.0 && p < self.keep.1 {
                let text = self.labels[label as usize].clone();
                self.edges.push((p, idx, 1, text));
            }
        }
    }

    /// `depgraph.graph.GraphBuilder._bound`: keep the counted rows and the per-level counts
    /// within their limits, the same way and at the same moments as the reference.
    fn bound(&mut self) {
        if self.hot_rows.len() > self.hot_max {
            let mut items: Vec<(String, i64)> =
                self.hot_rows.iter().map(|(l, n)| (self.labels[*l as usize].clone(), *n)).collect();
            items.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let keep = self.hot_max / 2;
            self.hot_rows_error += items[keep].1; // each cut loses a row at most its largest drop
            items.truncate(keep);
            self.labels.clear();
            self.label_ids.clear();
            self.hot_rows.clear();
            for (l, n) in items {
                let id = self.label(&l);
                self.hot_rows.insert(id, n);
            }
        }
        if self.level_count.len() > LEVELS_MAX {
            let floor = self.depth - (LEVELS_MAX / 2) as i64;
            self.level_count.retain(|level, _| *level >= floor);
        }
    }
}

/// Levels whose transaction counts are kept for the width (`depgraph.graph.LEVELS_MAX`).
const LEVELS_MAX: usize = 1_000_000;

#[pyclass(unsendable)]
pub struct Analyzer {
    /// `binlog.window.gate` for the next file read: start position, stop position, start time,
    /// stop time (-1: unset); cleared after each file.
    window: [i64; 4],
    cb: PyObject,
    co: CommitOrder,
    ws: WritesetTracker,
    session: SessionTracker,
    last_file: Option<usize>,
    seq: i64,
    blocking: i64,
    fallbacks: [u64; clock::FALLBACK_NAMES.len()],
    fallback_tables: HashMap<(u8, usize), u64>,
    unknown: HashMap<String, u64>,
    caveats: HashMap<String, u64>,
    total: Totals,
    clocks: [ClockStats; 3],
    names: Vec<String>,
    name_ids: HashMap<String, usize>,
    catalog_version: i64,
    progress_every: u64,
    n_tm: usize,
    /// Detection pass (`pipeline.detect_written_policy`): only the recorded clocks of the
    /// first `detect_limit` clocked transactions are kept, nothing is hashed or counted.
    detect_limit: u64,
    detected: Vec<(i64, i64, Option<u32>)>,
    /// Simulation facts, when asked for (`collect_facts`).
    facts: Option<Facts>,
    /// What the WRITESET tracker was given for each transaction of the facts (`collect_ws_log`),
    /// for the advisor's what-ifs replayed without reading the files again (`WsReplay`).
    ws_log: Option<Vec<i64>>,
    ws_log_unsafe: u64,
    ws_log_chunk: usize,
    /// Tables without any index: UPDATE/DELETE rows events and table rows scanned, per table.
    scan_tables: HashMap<usize, (i64, i64)>,
    /// Readable keys per hash (`collect_labels`), and the keys a what-if ignores.
    labels_on: bool,
    ignore: std::collections::HashSet<String>,
    /// Export records (`collect_records`) and the dependency graph (`collect_graph`).
    records: Option<Records>,
    records_chunk: u64,
    graph: Option<Graph>,
    in_payload: bool,
    // per file
    fde: Fde,
    table_maps: HashMap<u64, Rc<TmInfo>>,
    tm_cache: HashMap<Vec<u8>, Rc<TmInfo>>,
    plan_cache: HashMap<usize, Rc<PlanEntry>>,
    file_path: String,
    file_idx: usize,
    fs: FileState,
}

fn bump(v: &mut Vec<u64>, i: usize) -> bool {
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] += 1;
    v[i] == 1
}

#[pymethods]
impl Analyzer {
    /// Per-file state back to a file's start (the run's totals and clocks carry on).
    fn start_file(&mut self, path: &str, file_idx: usize) {
        self.file_path = path.to_string();
        self.file_idx = file_idx;
        self.fs = FileState::default();
        self.fde = Fde::default_fde();
        self.table_maps.clear();
        self.tm_cache.clear();
        self.plan_cache.clear();
    }

    /// `commit_order`: 0 recorded, 1 serial, 2 flush-groups. `cb` is the Python bridge
    /// (`lagadvisor._native_bridge.Bridge`).
    #[new]
    fn new(history_size: i64, commit_order: u8, catalog_version: i64, cb: PyObject, progress_every: u64) -> Self {
        Analyzer {
            cb,
            co: CommitOrder::new(commit_order),
            ws: WritesetTracker { history_size, history: HashMap::new(), history_start: 1, resets: 0 },
            session: SessionTracker::default(),
            last_file: None,
            seq: 0,
            blocking: 0,
            fallbacks: [0; clock::FALLBACK_NAMES.len()],
            fallback_tables: HashMap::new(),
            unknown: HashMap::new(),
            caveats: HashMap::new(),
            total: Totals::default(),
            clocks: [ClockStats::default(), ClockStats::default(), ClockStats::default()],
            names: Vec::new(),
            name_ids: HashMap::new(),
            catalog_version,
            progress_every,
            n_tm: 0,
            detect_limit: 0,
            window: [-1; 4],
            detected: Vec::new(),
            facts: None,
            ws_log: None,
            ws_log_unsafe: 0,
            ws_log_chunk: 0,
            scan_tables: HashMap::new(),
            labels_on: false,
            ignore: std::collections::HashSet::new(),
            records: None,
            records_chunk: 0,
            graph: None,
            in_payload: false,
            fde: Fde::default_fde(),
            table_maps: HashMap::new(),
            tm_cache: HashMap::new(),
            plan_cache: HashMap::new(),
            file_path: String::new(),
            file_idx: 0,
            fs: FileState::default(),
        }
    }

    /// Read one file; returns its summary dict. Raises `NativeFallback` when the run must be
    /// read by the reference instead.
    /// The window of the next `read_file` (`binlog.window.Window.native_args`).
    fn set_window(&mut self, start_position: i64, stop_position: i64, start_time: i64, stop_time: i64) {
        self.window = [start_position, stop_position, start_time, stop_time];
    }

    /// `fd`: the file, when the caller holds it open (see `open_input`).
    #[pyo3(signature = (path, file_idx, fd=None))]
    fn read_file(&mut self, py: Python<'_>, path: String, file_idx: usize, fd: Option<i32>) -> PyResult<PyObject> {
        self.start_file(&path, file_idx);
        // A panic here would be a bug of this module, never an answer: it becomes a fallback
        // to the reference like any other input this reader does not handle.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.read_inner(py, &path, fd)));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(Abort(msg))) => return Err(NativeFallback::new_err(msg)),
            Err(_) => return Err(NativeFallback::new_err("internal error in the native reader")),
        }
        self.file_result(py)
    }

    /// Detection pass over one file: `(last_committed, sequence_number, thread_id)` of its
    /// clocked transactions, at most `limit` of them (the reference's reader with an empty
    /// column selection; stops early like the reference's loop).
    #[pyo3(signature = (path, file_idx, limit, fd=None))]
    fn detect(&mut self, py: Python<'_>, path: String, file_idx: usize, limit: u64, fd: Option<i32>)
              -> PyResult<Vec<(i64, i64, Option<u32>)>> {
        self.detect_limit = limit.max(1);
        self.detected.clear();
        self.start_file(&path, file_idx);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.read_inner(py, &path, fd)));
        self.detect_limit = 0;
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(Abort(msg))) if msg == DETECT_DONE => {}
            Ok(Err(Abort(msg))) => return Err(NativeFallback::new_err(msg)),
            Err(_) => return Err(NativeFallback::new_err("internal error in the native reader")),
        }
        Ok(std::mem::take(&mut self.detected))
    }

    /// From now on, also keep every transaction's simulation facts (see `take_facts`).
    fn collect_facts(&mut self) {
        if self.facts.is_none() {
            self.facts = Some(Facts::default());
        }
    }

    /// The facts collected so far, and stop collecting: a dict with one `bytes` of native
    /// int64 per column (`FACT_COLUMNS`, for `array('q')`), `db_names` (raw bytes) and
    /// `dbsets` (per set, indices into `db_names`; `dbset` column values index it).
    /// With `keep`, go on collecting: only the columns are taken, the database names and sets
    /// stay (the `dbset` values of later chunks index the same, grown, lists).
    #[pyo3(signature = (keep=false))]
    fn take_facts(&mut self, py: Python<'_>, keep: bool) -> PyResult<PyObject> {
        let kept;
        let f: &Facts = if keep {
            let g = self.facts.get_or_insert_with(Facts::default);
            kept = Facts {
                cols: std::array::from_fn(|k| std::mem::take(&mut g.cols[k])),
                db_names: g.db_names.clone(),
                db_ids: HashMap::new(),
                dbsets: g.dbsets.clone(),
                dbset_ids: HashMap::new(),
            };
            &kept
        } else {
            kept = self.facts.take().unwrap_or_default();
            &kept
        };
        let d = PyDict::new_bound(py);
        for (name, col) in FACT_COLUMNS.iter().zip(f.cols.iter()) {
            let mut b = Vec::with_capacity(col.len() * 8);
            for v in col {
                b.extend_from_slice(&v.to_ne_bytes());
            }
            d.set_item(*name, PyBytes::new_bound(py, &b))?;
        }
        let names = PyList::empty_bound(py);
        for n in &f.db_names {
            names.append(PyBytes::new_bound(py, n))?;
        }
        d.set_item("db_names", names)?;
        d.set_item("dbsets", f.dbsets.clone())?;
        if let Some(log) = self.ws_log.as_mut() {
            d.set_item("ws_log_unsafe", std::mem::take(&mut self.ws_log_unsafe))?;
            d.set_item("ws_log", PyBytes::new_bound(py, i64_slice_bytes(log)))?;
            log.clear();
            if !keep {
                self.ws_log = None;
            }
        }
        let scans: Vec<(String, i64, i64)> =
            self.scan_tables.iter().map(|(n, (e, r))| (self.names[*n].clone(), *e, *r)).collect();
        d.set_item("scans", scans)?;
        Ok(d.into())
    }

    /// With the facts, also keep what the WRITESET tracker is given for each transaction
    /// (records: `ws_record`). `take_facts` hands over what is left as `ws_log`; with `chunk`
    /// > 0, every `chunk` int64s also go to the callback's `ws_log(bytes)` as they fill (the log
    /// of a 1 GB file stays out of memory).
    #[pyo3(signature = (chunk=0))]
    fn collect_ws_log(&mut self, chunk: usize) {
        self.labels_on = true;
        self.ws_log_chunk = chunk;
        if self.ws_log.is_none() {
            self.ws_log = Some(Vec::new());
        }
    }

    /// From now on, keep a readable key per hash (`extract._label`); with `ignore`, leave out
    /// the hashes whose key is in it (`WhatIf.ignore_rows`, as `KeyTracker.writeset`).
    fn collect_labels(&mut self, ignore: Vec<String>) {
        self.labels_on = true;
        self.ignore = ignore.into_iter().collect();
    }

    /// From now on, keep every transaction's export record (see `take_records`); with
    /// `chunk` > 0, hand them to the bridge's `records` every `chunk` transactions (memory
    /// bounded by the chunk, not the file).
    fn collect_records(&mut self, chunk: u64) {
        if self.records.is_none() {
            self.records = Some(Records::default());
        }
        self.records_chunk = chunk;
    }

    /// The records kept since the last call: one `bytes` of native int64 per column
    /// (`RECORD_COLUMNS`; `NONE` = i64::MIN for None), `gtids` (str or None each),
    /// `table_ends` (cumulative ends into `tables`) and `tables` (indices into `names`), and
    /// `names` (every table name interned so far).
    fn take_records(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let r = match self.records.as_mut() {
            Some(r) => std::mem::take(r),
            None => Records::default(),
        };
        let d = PyDict::new_bound(py);
        for (name, col) in RECORD_COLUMNS.iter().zip(r.cols.iter()) {
            d.set_item(*name, PyBytes::new_bound(py, &i64_bytes(col)))?;
        }
        d.set_item("table_ends", PyBytes::new_bound(py, &i64_bytes(&r.table_ends)))?;
        d.set_item("tables", PyBytes::new_bound(py, &i64_bytes(&r.tables)))?;
        d.set_item("gtids", r.gtids)?;
        d.set_item("names", self.names.clone())?;
        Ok(d.into())
    }

    /// Build the dependency graph of `policy` (0 recorded, 1 COMMIT_ORDER, 2 WRITESET,
    /// 3 WRITESET_SESSION) while reading: `weights` = (trx_us, insert_us, update_us, delete_us,
    /// byte_us, commit_us, event_us) of the apply-time estimate; transactions `keep_start..keep_end`
    /// are kept as nodes and edges. Needs labels (`collect_labels`).
    fn collect_graph(&mut self, policy: u8, weights: [f64; 7], keep_start: i64, keep_end: i64, hot_max: usize) {
        self.labels_on = true;
        self.graph = Some(Graph {
            policy, w: weights, keep: (keep_start, keep_end), transactions: 0, depth: 0, critical_path_us: 0.0,
            serial_us: 0.0, width: 0, conflicts: 0, hot_rows: HashMap::new(), hot_tables: HashMap::new(),
            hot_max: hot_max.max(2), hot_rows_error: 0, file: None, levels: vec![0],
            finish: vec![0.0], level_count: HashMap::new(), last_writer: HashMap::new(), inserted: 0, index: -1,
            offset: 0, labels: Vec::new(), label_ids: HashMap::new(), nodes: Vec::new(), edges: Vec::new(),
        });
    }

    /// The graph's summary: a dict of the `GraphSummary` numbers, `hot_rows` as
    /// `(label, dependencies)` pairs, and the kept `nodes` and `edges` (edge labels as text).
    fn take_graph(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let Some(g) = self.graph.take() else { return Ok(py.None()) };
        let d = PyDict::new_bound(py);
        d.set_item("transactions", g.transactions)?;
        d.set_item("depth", g.depth)?;
        d.set_item("critical_path_us", g.critical_path_us)?;
        d.set_item("serial_us", g.serial_us)?;
        d.set_item("width", g.width)?;
        d.set_item("conflicts", g.conflicts)?;
        let hot: Vec<(String, i64)> = g.hot_rows.iter().map(|(l, n)| (g.labels[*l as usize].clone(), *n)).collect();
        d.set_item("hot_rows", hot)?;
        let tables: Vec<(String, i64)> = g.hot_tables.iter().map(|(t, n)| (t.clone(), *n)).collect();
        d.set_item("hot_tables", tables)?;
        d.set_item("hot_rows_error", g.hot_rows_error)?;
        d.set_item("nodes", g.nodes.clone())?;
        let edges: Vec<(i64, i64, u8, String)> = g.edges.clone();
        d.set_item("edges", edges)?;
        Ok(d.into())
    }

    /// Transactions seen in the last file read (also by `detect`).
    fn file_transactions(&self) -> u64 {
        self.fs.transactions
    }

    /// The run's totals and policy results.
    fn finish(&self, py: Python<'_>) -> PyResult<PyObject> {
        let d = PyDict::new_bound(py);
        d.set_item("total", self.totals_py(py, &self.total, true)?)?;
        let clocks = PyList::empty_bound(py);
        for c in &self.clocks {
            clocks.append(clock_py(py, c)?)?;
        }
        d.set_item("clocks", clocks)?;
        let fb = PyDict::new_bound(py);
        for (i, n) in self.fallbacks.iter().enumerate() {
            if *n > 0 {
                fb.set_item(clock::FALLBACK_NAMES[i], *n)?;
            }
        }
        d.set_item("fallbacks", fb)?;
        let ft = PyList::empty_bound(py);
        for ((r, t), n) in &self.fallback_tables {
            let name = if *t == usize::MAX { "-".to_string() } else { self.names[*t].clone() };
            ft.append((clock::FALLBACK_NAMES[*r as usize], name, *n))?;
        }
        d.set_item("fallback_tables", ft)?;
        d.set_item("unknown", self.unknown.clone().into_iter().collect::<Vec<_>>())?;
        d.set_item("caveats", self.caveats.clone().into_iter().collect::<Vec<_>>())?;
        d.set_item("resets", self.ws.resets)?;
        Ok(d.into())
    }
}

/// The int64s as native-endian bytes, without a copy (for one copy into a `PyBytes`).
fn i64_slice_bytes(col: &[i64]) -> &[u8] {
    // SAFETY: i64 has no padding and u8 has alignment 1; the slice covers the same memory.
    unsafe { std::slice::from_raw_parts(col.as_ptr() as *const u8, std::mem::size_of_val(col)) }
}

fn i64_bytes(col: &[i64]) -> Vec<u8> {
    let mut b = Vec::with_capacity(col.len() * 8);
    for v in col {
        b.extend_from_slice(&v.to_ne_bytes());
    }
    b
}

fn clock_py(py: Python<'_>, c: &ClockStats) -> PyResult<PyObject> {
    let d = PyDict::new_bound(py);
    d.set_item("transactions", c.transactions)?;
    d.set_item("barriers", c.barriers)?;
    d.set_item("parallel", c.parallel)?;
    d.set_item("distance_sum", c.distance_sum)?;
    d.set_item("depth", c.depth)?;
    let h = PyDict::new_bound(py);
    for (i, n) in c.histogram.iter().enumerate() {
        if *n > 0 {
            let key = if i < 10 { clock::DISTANCE_BUCKETS[i] } else { 0 };
            h.set_item(key, *n)?;
        }
    }
    d.set_item("histogram", h)?;
    Ok(d.into())
}

impl Analyzer {
    fn totals_py(&self, py: Python<'_>, t: &Totals, lag_state: bool) -> PyResult<PyObject> {
        let d = PyDict::new_bound(py);
        d.set_item("transactions", t.transactions)?;
        d.set_item("rows", t.rows)?;
        d.set_item("bytes", t.bytes)?;
        d.set_item("ddl", t.ddl)?;
        d.set_item("statement_based", t.statement_based)?;
        d.set_item("xa", t.xa)?;
        d.set_item("incidents", t.incidents)?;
        d.set_item("incomplete", t.incomplete)?;
        d.set_item("first_ts_us", t.first_ts_us)?;
        d.set_item("last_ts_us", t.last_ts_us)?;
        d.set_item("recorded", clock_py(py, &t.recorded)?)?;
        d.set_item("largest", t.largest.clone())?;
        let tables: Vec<(String, u64)> = t.tables_order.iter().map(|i| (self.names[*i].clone(), t.tables[*i])).collect();
        d.set_item("tables", tables)?;
        let l = &t.lags;
        let lags = PyDict::new_bound(py);
        if !lag_state {
            // a finished file: its summary only (memory stays flat over many files)
            if l.n > 0 {
                let q = |x: &clock::Quantile| -> PyObject {
                    match x {
                        clock::Quantile::Exact(v) => v.into_py(py),
                        clock::Quantile::Approx(v) => v.into_py(py),
                    }
                };
                let (n, p50, p99, max, sketch) = l.summary();
                lags.set_item("summary", (n, q(&p50), q(&p99), max, sketch))?;
            } else {
                lags.set_item("summary", py.None())?;
            }
            d.set_item("lags", lags)?;
            return Ok(d.into());
        }
        lags.set_item("cap", l.cap)?;
        lags.set_item("values", PyBytes::new_bound(py, &i64_bytes(&l.values)))?;
        lags.set_item("n", l.n)?;
        lags.set_item("min", l.min)?;
        lags.set_item("max", l.max)?;
        lags.set_item("sketch", l.sketch)?;
        lags.set_item("small", l.small.to_vec())?;
        lags.set_item("neg", l.neg.iter().map(|(k, c)| (*k, *c)).collect::<Vec<(i32, u64)>>())?;
        lags.set_item("pos", l.pos.iter().map(|(k, c)| (*k, *c)).collect::<Vec<(i32, u64)>>())?;
        d.set_item("lags", lags)?;
        Ok(d.into())
    }

    fn file_result(&self, py: Python<'_>) -> PyResult<PyObject> {
        let fs = &self.fs;
        let d = PyDict::new_bound(py);
        let counts: Vec<(u8, u64)> = fs.count_order.iter().map(|c| (*c, fs.counts[*c as usize])).collect();
        d.set_item("events", counts)?;
        let unknown: Vec<(usize, u64)> = fs.unknown.iter().enumerate().filter(|(_, n)| **n > 0).map(|(c, n)| (c, *n)).collect();
        d.set_item("unknown", unknown)?;
        d.set_item("gtids", fs.saw_gtid)?;
        d.set_item("logical_clock", fs.saw_logical_clock)?;
        d.set_item("tagged_gtids", fs.saw_tagged)?;
        d.set_item("compression", fs.saw_compression)?;
        d.set_item("optional_metadata", fs.saw_optional.clone())?;
        d.set_item("next_file", fs.rotate_to.clone())?;
        d.set_item("truncated", fs.truncated.map(|t| (t.offset, t.got, t.size_and_type)))?;
        d.set_item("transactions", fs.transactions)?;
        d.set_item("totals", self.totals_py(py, &fs.totals, false)?)?;
        Ok(d.into())
    }

    /// One transaction's writeset log record (`collect_ws_log`): `file_idx, seq, co, reason
    /// (-1 none), session (-1 none), n hashes, n tables, unsafe, n foreign-key counts`, then per
    /// hash `hash, label key, table slot, foreign-key tag`, then per table `drop tag, add tag (0:
    /// no shadow), flags (1 missing keys, 2 foreign-key parent, 4 shadow missing keys, 8 shadow
    /// parent), scan rows, shadow scan rows, n shadow hashes`, then the tables' shadow hashes in
    /// order, then per referenced table `its tag, the foreign-key checks` (`fk_check_count`).
    /// `unsafe`: the what-if of a primary key would not hash this transaction as a second
    /// read would (too many rows, a shadow plan the native side cannot hash).
    fn ws_record(&self, o: &Open, seq: i64, co: i64, reason: Option<u8>) -> Res<(Vec<i64>, bool)> {
        if o.labels.len() != o.hashes.len() || o.hash_tab.len() != o.hashes.len() || o.hash_fk.len() != o.hashes.len() {
            return Err(Abort::new("labels, tags and hashes disagree"));
        }
        let mut tables: Vec<(usize, [i64; 6])> = Vec::new();
        for (name, st) in &o.stats {
            if st[0] + st[1] + st[2] == 0 {
                continue;
            }
            let Some(entry) = o.current.iter().find(|(n, _)| n == name).map(|(_, p)| p.clone()) else { continue };
            let Plan::Known(p) = &entry.plan else { continue };
            let net = self.fs.net_rows.get(name).copied().unwrap_or(0).max(0);
            let scan = |scans: bool, rows: i64| if scans && st[3] > 0 { st[3] as i64 * rows.max(net) } else { 0 };
            let mut flags = p.missing_keys as i64 | (p.fk_parent as i64) << 1;
            let mut add_tag = 0;
            let mut shadow_scan = 0;
            if let Some((tag, Some(sp))) = &entry.shadow {
                if let Plan::Known(q) = &sp.plan {
                    add_tag = *tag;
                    flags |= (q.missing_keys as i64) << 2 | (q.fk_parent as i64) << 3;
                    shadow_scan = scan(q.scans, q.table_rows);
                }
            }
            let nshadow = o.shadow.iter().filter(|(t, _)| t == name).count() as i64;
            tables.push((*name, [entry.drop_tag, add_tag, flags, scan(p.scans, p.table_rows), shadow_scan, nshadow]));
        }
        let unsafe_ = o.truncated || o.shadow_unsafe || o.kept + o.shadow_kept > MAX_ROW_CHANGES;
        let mut rec = vec![self.file_idx as i64, seq, co, reason.map_or(-1, |r| r as i64),
                           o.thread_id.map_or(-1, |t| t as i64), o.hashes.len() as i64, tables.len() as i64,
                           unsafe_ as i64, o.fk_counts.len() as i64];
        for i in 0..o.hashes.len() {
            let slot = match tables.iter().position(|(n, _)| *n == o.hash_tab[i]) {
                Some(k) => k as i64,
                None => return Err(Abort::new("a hash of a table outside the transaction's tables")),
            };
            rec.extend_from_slice(&[o.hashes[i], label_key(&o.labels[i]), slot, o.hash_fk[i]]);
        }
        for (_, t) in &tables {
            rec.extend_from_slice(t);
        }
        for (name, _) in &tables {
            rec.extend(o.shadow.iter().filter(|(t, _)| t == name).map(|(_, h)| *h));
        }
        for (tag, n) in &o.fk_counts {
            rec.extend_from_slice(&[*tag, *n]);
        }
        Ok((rec, unsafe_))
    }

    fn intern(&mut self, name: &str) -> usize {
        if let Some(i) = self.name_ids.get(name) {
            return *i;
        }
        let i = self.names.len();
        self.names.push(name.to_string());
        self.name_ids.insert(name.to_string(), i);
        i
    }

    fn read_inner(&mut self, py: Python<'_>, path: &str, fd: Option<i32>) -> Res<()> {
        if path.ends_with(".gz") {
            return Err(Abort::new("gzip input is read by the reference"));
        }
        let f = open_input(path, fd)?;
        let sized = f.try_clone().ok().filter(|c| c.metadata().map(|m| m.is_file()).unwrap_or(false));
        let mut framer = Framer::new(BufReader::with_capacity(1 << 20, f), 4);
        framer.sized = sized;
        framer.check_magic()?;
        let mut cur: Option<Open> = None;
        let w = std::mem::replace(&mut self.window, [-1; 4]);
        let windowed = w.iter().any(|v| *v >= 0);
        let (start_pos, start_ts) = (w[0].max(0) as u64, w[2].max(0));
        let (mut triggered, mut started, mut stopping) = (false, false, false);
        loop {
            let ev = match framer.next_event()? {
                Some(ev) => ev,
                None => break,
            };
            if windowed && ev.type_code != 15 {
                // `binlog.window.gate`, event for event
                let opener = matches!(ev.type_code, 33 | 34 | 42 | 162);
                if !stopping && ((w[1] >= 0 && ev.offset >= w[1] as u64) || (w[3] >= 0 && ev.timestamp as i64 >= w[3])) {
                    stopping = true;
                }
                if stopping && (opener || !started) {
                    break;
                }
                if !started {
                    triggered = triggered || (ev.offset >= start_pos && ev.timestamp as i64 >= start_ts);
                    if !(triggered && opener) {
                        continue;
                    }
                    started = true;
                }
            }
            self.event(py, &ev, &mut cur)?;
        }
        // `_tail_tolerant`: a truncated tail ends the file; the open transaction ends where
        // reading stopped.
        let end = match framer.truncated {
            Some(t) => {
                self.fs.truncated = Some(t);
                t.offset
            }
            None => framer.offset,
        };
        self.close_incomplete(py, &mut cur, end)
    }

    /// One event: the reader's decode step (`EventReader._decode`) then the assembler's
    /// (`TransactionAssembler.transactions`).
    fn event(&mut self, py: Python<'_>, e: &RawEvent, cur: &mut Option<Open>) -> Res<()> {
        let code = e.type_code;
        if bump(&mut self.fs.counts, code as usize) {
            self.fs.count_order.push(code);
        }
        if self.outside_event(py, e, cur)? {
            return Ok(());
        }
        let (query, tm) = self.decode_step(py, e)?;
        // Assembler step.
        if cur.is_none() {
            *cur = Some(Open::new(e.offset, e.server_id, e.timestamp));
        }
        let Some(o) = cur.as_mut() else { return Ok(()) };
        o.events += 1;
        o.compressed |= self.in_payload;
        let mut end = e.offset + e.size;
        if self.in_payload {
            o.inner_bytes += e.size;
            end = end.max(o.payload_end);
        }
        if let Some(query) = query {
            return self.assemble_query(py, query, cur, end);
        }
        if let Some(tm) = tm {
            if self.facts.is_some() {
                push_db(&mut o.dbs, tm.db);
            }
            for t in &tm.optional_types {
                if !self.fs.saw_optional.contains(t) {
                    self.fs.saw_optional.push(*t);
                }
            }
            return Ok(());
        }
        self.assemble_event(py, e, cur, end)
    }

    /// The events that are no transaction's own (format description, GTIDs, rotate, previous
    /// GTIDs, stop, heartbeats, and the payload, which reads its inner events itself) and those
    /// refused to the reference; true when `e` was one of them.
    #[inline]
    fn outside_event(&mut self, py: Python<'_>, e: &RawEvent, cur: &mut Option<Open>) -> Res<bool> {
        let code = e.type_code;
        match code {
            15 => self.fde_event(py, e, cur)?,
            33 | 34 | 42 => {
                let g = if code == 42 { self.tagged_gtid(py, e)? } else { decode_gtid(e)? };
                self.close_incomplete(py, cur, e.offset)?;
                let mut o = Open::new(e.offset, e.server_id, e.timestamp);
                o.events = 1;
                self.fs.saw_gtid |= !g.anonymous;
                self.fs.saw_logical_clock |= g.sequence_number.is_some();
                self.fs.saw_tagged |= g.tag.as_deref().map_or(false, |t| !t.is_empty());
                o.gtid = Some(g);
                *cur = Some(o);
            }
            4 => {
                let r = self.cb.call_method1(py, "event", (code, PyBytes::new_bound(py, e.data), e.body_end)).map_err(py_abort)?;
                self.fs.rotate_to = Some(r.extract::<String>(py).map_err(py_abort)?);
            }
            35 => {
                self.cb.call_method1(py, "event", (code, PyBytes::new_bound(py, e.data), e.body_end)).map_err(py_abort)?;
            }
            3 => self.close_incomplete(py, cur, e.offset)?,
            27 | 41 => {}
            40 => self.payload(py, e, cur)?,
            1 | 20 | 21 | 22 | 39 | 172 | 164 | 165 => {
                return Err(Abort(format!("event type {code} is read by the reference")));
            }
            c if c >= 160 => return Err(Abort::new("MariaDB events are read by the reference")),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// FORMAT_DESCRIPTION_EVENT: the post-header lengths, the server's flavour, and a fresh
    /// start of the table maps; an open transaction ends here.
    fn fde_event(&mut self, py: Python<'_>, e: &RawEvent, cur: &mut Option<Open>) -> Res<()> {
        self.fde = decode_fde(e)?;
        // The bridge sees the FDE first, MariaDB's too: detection learns the server from
        // the read it started (one open of the file), even when the run goes back to the
        // reference.
        self.cb
            .call_method1(py, "fde", (PyBytes::new_bound(py, e.data), e.body_end, framing_alg(e)))
            .map_err(py_abort)?;
        let ver = framing::fde_version_text(e.data);
        if ver.to_lowercase().contains("mariadb") {
            return Err(Abort::new("MariaDB binlogs are read by the reference"));
        }
        self.table_maps.clear();
        self.tm_cache.clear();
        self.plan_cache.clear();
        self.close_incomplete(py, cur, e.offset)
    }

    /// The decode step for the events that belong to transactions: a query's (thread id,
    /// database, statement), a table map, or only the checks the reference's decoders make.
    #[inline]
    fn decode_step<'a>(&mut self, py: Python<'_>, e: &RawEvent<'a>) -> Res<(Option<Query<'a>>, Option<Rc<TmInfo>>)> {
        let code = e.type_code;
        let mut query: Option<Query> = None;
        let mut tm: Option<Rc<TmInfo>> = None;
        match code {
            2 => {
                let post = self.fde.post_header(2, 13);
                let q = decode_query(e, post)?;
                if q.2.first().map_or(true, |b| *b == 0) {
                    // `decoder.not_sql`: the reference counts and locates it in a warning.
                    return Err(Abort::new("a statement that is not SQL text"));
                }
                query = Some(q);
            }
            16 => {
                Cursor::new(e.data, HEADER_LEN, e.body_end).uint(8, "xid")?;
            }
            19 => tm = Some(self.table_map(py, e)?),
            29 => {
                Cursor::new(e.data, HEADER_LEN, e.body_end).skip(1, "length byte")?;
            }
            18 | 26 | 38 => {
                self.cb.call_method1(py, "event", (code, PyBytes::new_bound(py, e.data), e.body_end)).map_err(py_abort)?;
            }
            23..=25 | 30..=32 => {}
            c => {
                if !DECODED.contains(&c) && !KNOWN_UNDECODED.contains(&c) {
                    bump(&mut self.fs.unknown, c as usize);
                }
            }
        }
        Ok((query, tm))
    }

    /// The callback's `statement_facts` of a statement: a longer one than `STATEMENT_HEAD` bytes is
    /// first handed over by its head alone (its first words decide it; a statement of up to 1 GiB
    /// is not copied into Python and decoded whole), and whole only when the head does not decide.
    fn statement_facts(&mut self, py: Python<'_>, q: &[u8]) -> Res<(String, bool, bool)> {
        if q.len() > STATEMENT_HEAD {
            let head: Option<(String, bool, bool)> = self
                .cb
                .call_method1(py, "statement", (PyBytes::new_bound(py, &q[..STATEMENT_HEAD]), false))
                .and_then(|r| r.extract(py))
                .map_err(py_abort)?;
            if let Some(facts) = head {
                return Ok(facts);
            }
        }
        self.cb
            .call_method1(py, "statement", (PyBytes::new_bound(py, q), true))
            .and_then(|r| r.extract(py))
            .map_err(py_abort)
    }

    /// The assembler on a QUERY_EVENT: BEGIN opens, COMMIT/ROLLBACK and XA END close, DDL and
    /// statement-based DML mark the transaction, and a statement outside BEGIN is its own.
    fn assemble_query(&mut self, py: Python<'_>, query: Query, cur: &mut Option<Open>, end: u64) -> Res<()> {
        let (thread_id, db, q) = query;
        let Some(o) = cur.as_mut() else { return Ok(()) };
        if o.thread_id.is_none() {
            o.thread_id = Some(thread_id);
        }
        if !db.is_empty() {
            if let Some(f) = self.facts.as_mut() {
                push_db(&mut o.dbs, f.db(db));
            }
        }
        let (kind, blocks, xa_end): (String, bool, bool) = match q {
            b"BEGIN" => ("BEGIN".into(), false, false),
            b"COMMIT" => ("COMMIT".into(), false, false),
            _ => self.statement_facts(py, q)?,
        };
        o.blocks |= blocks;
        if !matches!(kind.as_str(), "BEGIN" | "COMMIT" | "ROLLBACK") {
            o.other_kind = true;
        }
        match kind.as_str() {
            "BEGIN" => {
                o.in_begin = true;
                return Ok(());
            }
            "COMMIT" | "ROLLBACK" => return self.close_open(py, cur, end),
            "XA" => {
                o.xa = true;
                if xa_end && !o.in_begin {
                    return self.close_open(py, cur, end);
                }
                return Ok(());
            }
            "DDL" => {
                o.ddl = true;
                o.ddl_statements.push((kind.clone(), db.to_vec(), q.to_vec()));
            }
            "DML" | "OTHER" => o.sbr = true,
            _ => {}
        }
        if !o.in_begin {
            return self.close_open(py, cur, end);
        }
        Ok(())
    }

    /// The assembler on the other events of a transaction: rows events (a statement's end
    /// outside BEGIN and without a GTID closes), EXECUTE_LOAD_QUERY (statement-based LOAD DATA),
    /// XID, XA_PREPARE and INCIDENT.
    #[inline]
    fn assemble_event(&mut self, py: Python<'_>, e: &RawEvent, cur: &mut Option<Open>, end: u64) -> Res<()> {
        let Some(o) = cur.as_mut() else { return Ok(()) };
        match e.type_code {
            23..=25 | 30..=32 => {
                let flags = self.rows(py, e, o)?;
                if flags & STMT_END_F != 0 && !o.in_begin && o.gtid.is_none() {
                    return self.close_open(py, cur, end);
                }
            }
            18 => {
                o.sbr = true;
                if !o.in_begin {
                    return self.close_open(py, cur, end);
                }
            }
            16 => return self.close_open(py, cur, end),
            38 => {
                o.xa = true;
                return self.close_open(py, cur, end);
            }
            26 => {
                o.incident = true;
                if !o.in_begin {
                    return self.close_open(py, cur, end);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The assembler's yield: the open transaction ends, complete, at `end`.
    #[inline]
    fn close_open(&mut self, py: Python<'_>, cur: &mut Option<Open>, end: u64) -> Res<()> {
        let o = cur.take().unwrap_or_else(|| Open::new(0, 0, 0));
        self.close(py, o, end, false)
    }

    /// An open transaction, if any, ends incomplete at `at` (a new GTID, FDE or stop event, or
    /// the end of the file).
    #[inline]
    fn close_incomplete(&mut self, py: Python<'_>, cur: &mut Option<Open>, at: u64) -> Res<()> {
        if let Some(o) = cur.take() {
            self.close(py, o, at, true)?;
        }
        Ok(())
    }

    /// TRANSACTION_PAYLOAD_EVENT (`payload.decode_transaction_payload` + `EventReader._inner`):
    /// the payload event itself, then its inner events (no checksums), each reported at the
    /// payload event's offset as the reference does.
    fn payload(&mut self, py: Python<'_>, e: &RawEvent, cur: &mut Option<Open>) -> Res<()> {
        let (fields, payload) = payload_fields(e)?;
        let ctype = fields[2].unwrap_or(0);
        // The reference's assembler: the payload event opens (or joins) the transaction.
        if cur.is_none() {
            *cur = Some(Open::new(e.offset, e.server_id, e.timestamp));
        }
        if let Some(o) = cur.as_mut() {
            o.events += 1;
            o.compressed = true;
            o.payload_end = e.offset + e.size;
            o.payload_size += e.size;
        }
        self.fs.saw_compression = true;
        // The inner events are decompressed as they are read (`payload.DeclaredSize`): one
        // inner event at a time in `ibuf`, never the whole transaction, and never more than
        // one byte beyond the declared uncompressed size.
        let declared = fields[3];
        let src: Box<dyn std::io::Read + '_> = match ctype {
            255 => Box::new(payload),
            0 => Box::new(zstd::stream::read::Decoder::with_buffer(payload).map_err(|e| Abort(format!("zstd: {e}")))?),
            _ => return Err(Abort::new("unsupported payload compression")),
        };
        use std::io::Read;
        let mut src = src.take(declared.map_or(u64::MAX, |d| d.saturating_add(1)));
        let mut produced: u64 = 0;
        let mut ibuf: Vec<u8> = Vec::new();
        loop {
            let mut h = [0u8; HEADER_LEN];
            let n = framing::read_full(&mut src, &mut h)?;
            produced += n as u64;
            if n == 0 {
                break;
            }
            if n < HEADER_LEN {
                return Err(Abort::new("truncated inner event header"));
            }
            let type_code = h[4];
            let size = u32::from_le_bytes([h[9], h[10], h[11], h[12]]) as usize;
            if size < HEADER_LEN || size as u64 > framing::MAX_EVENT_SIZE {
                return Err(Abort::new("bad inner event size"));
            }
            if let Some(d) = declared {
                // Past the declared size: known before the body's buffer is sized.
                if (size - HEADER_LEN) as u64 > d.saturating_sub(produced) {
                    return Err(Abort::new("inner event runs past the declared uncompressed size"));
                }
            }
            if type_code == 15 || type_code == 40 {
                return Err(Abort::new("FDE or payload inside a payload"));
            }
            if ibuf.capacity() > (64 << 20) && size <= framing::READ_CHUNK {
                ibuf = Vec::new(); // a huge inner event's buffer is not kept for small ones
            }
            ibuf.clear();
            ibuf.extend_from_slice(&h);
            // Without a declared size the body grows a chunk at a time with what is there.
            let mut got = 0usize;
            while got < size - HEADER_LEN {
                let chunk = (size - HEADER_LEN - got).min(framing::READ_CHUNK);
                let at = ibuf.len();
                ibuf.resize(at + chunk, 0);
                let k = framing::read_full(&mut src, &mut ibuf[at..])?;
                got += k;
                if k < chunk {
                    return Err(Abort::new("truncated inner event"));
                }
            }
            produced += got as u64;
            let ev = RawEvent {
                offset: e.offset,
                timestamp: u32::from_le_bytes([h[0], h[1], h[2], h[3]]),
                type_code,
                server_id: u32::from_le_bytes([h[5], h[6], h[7], h[8]]),
                size: size as u64,
                data: &ibuf,
                body_end: size,
            };
            self.in_payload = true;
            let r = self.event(py, &ev, cur);
            self.in_payload = false;
            r?;
        }
        if declared.is_some_and(|d| d != produced) {
            return Err(Abort::new("payload does not decompress to its declared uncompressed size"));
        }
        Ok(())
    }

    fn tagged_gtid(&mut self, py: Python<'_>, e: &RawEvent) -> Res<Gtid> {
        let r = self.cb.call_method1(py, "event", (42u8, PyBytes::new_bound(py, e.data), e.body_end)).map_err(py_abort)?;
        let (text, tag, lc, sn, imm, orig, tlen, iv, ov): (String, String, i64, i64, i64, i64, u64, u32, u32) =
            r.extract(py).map_err(py_abort)?;
        Ok(Gtid {
            anonymous: false,
            sid: [0; 16],
            gno: 0,
            tag: Some(tag),
            text: Some(text),
            last_committed: Some(lc),
            sequence_number: Some(sn),
            immediate_commit_timestamp: imm,
            original_commit_timestamp: orig,
            transaction_length: tlen,
            immediate_server_version: iv,
            original_server_version: ov,
        })
    }

    fn table_map(&mut self, py: Python<'_>, e: &RawEvent) -> Res<Rc<TmInfo>> {
        let body = &e.data[HEADER_LEN..e.body_end.max(HEADER_LEN)];
        let info = match self.tm_cache.get(body) {
            Some(i) => i.clone(),
            None => {
                let r = self.cb.call_method1(py, "table_map", (PyBytes::new_bound(py, e.data), e.body_end)).map_err(py_abort)?;
                let (table_id, name, ncols, opt, colplans, handle, db): (u64, String, usize, Vec<u8>, Option<Vec<(i64, u8, u8, bool)>>, PyObject, Vec<u8>) =
                    r.extract(py).map_err(py_abort)?;
                let name = self.intern(&name);
                let db = self.facts.as_mut().map_or(0, |f| f.db(&db));
                self.n_tm += 1;
                let info = Rc::new(TmInfo {
                    id: self.n_tm,
                    table_id,
                    name,
                    db,
                    ncols,
                    colplans: colplans.map(|v| v.into_iter().map(|(size, prefix, kind, unsigned)| ColPlan { size, prefix, kind, unsigned }).collect()),
                    optional_types: opt,
                    handle,
                });
                if self.tm_cache.len() > 4096 {
                    self.tm_cache.clear();
                }
                self.tm_cache.insert(body.to_vec(), info.clone());
                info
            }
        };
        self.table_maps.insert(info.table_id, info.clone());
        Ok(info)
    }

    /// `KeyTracker.select` through the bridge, cached per table map and catalog version.
    fn plan_for(&mut self, py: Python<'_>, tm: &TmInfo) -> Res<Rc<PlanEntry>> {
        if let Some(p) = self.plan_cache.get(&tm.id) {
            return Ok(p.clone());
        }
        let r = self.cb.call_method1(py, "select", (tm.handle.clone_ref(py),)).map_err(py_abort)?;
        let tup = r.downcast_bound::<PyTuple>(py).map_err(|e| Abort(format!("bad plan: {e}")))?;
        let tag: String = tup.get_item(0).and_then(|x| x.extract()).map_err(py_abort)?;
        let entry = match tag.as_str() {
            "unknown" => {
                let reason: String = tup.get_item(1).and_then(|x| x.extract()).map_err(py_abort)?;
                PlanEntry { plan: Plan::Unknown(reason), handle: None, slot_of_col: vec![-1; tm.ncols], nslots: 0,
                            drop_tag: 0, shadow: None }
            }
            "plan" => {
                let mut entry = known_plan(tup, tm)?;
                if tup.len() > 14 {
                    let item = tup.get_item(14).map_err(py_abort)?;
                    let (name, sub): (String, Option<Bound<'_, PyTuple>>) = item.extract().map_err(py_abort)?;
                    let shadow = match sub {
                        Some(t) => Some(Rc::new(known_plan(&t, tm)?)),
                        None => None,
                    };
                    entry.shadow = Some((label_key(&name), shadow));
                }
                entry
            }
            other => return Err(Abort(format!("plan not handled natively: {other}"))),
        };
        let entry = Rc::new(entry);
        self.plan_cache.insert(tm.id, entry.clone());
        Ok(entry)
    }

    /// `decode_rows` + `TransactionAssembler._rows` + the row part of `transaction_writeset`.
    fn rows(&mut self, py: Python<'_>, e: &RawEvent, o: &mut Open) -> Res<u16> {
        let h = rows_header(&self.fde, e)?;
        let tm = match self.table_maps.get(&h.table_id) {
            Some(t) => t.clone(),
            None => return Err(Abort::new("rows event without a preceding TABLE_MAP")),
        };
        let plan = self.rows_plan(py, &tm, h.table_id, o)?;
        let Some(colplans) = tm.colplans.as_ref() else {
            return Err(Abort::new("table map columns not decodable"));
        };
        if h.ncols > tm.ncols {
            return Err(Abort::new("rows event has more columns than its table map"));
        }
        let present = |bm: &[u8]| -> Vec<usize> { (0..h.ncols).filter(|i| bm[i >> 3] & (1 << (i & 7)) != 0).collect() };
        let cols_b = present(h.before_bm);
        let cols_a = if h.kind == 1 { present(h.after_bm) } else { Vec::new() };
        let log_on = self.ws_log.is_some() && self.facts.is_some();
        let shadow = if log_on { shadow_plan(&plan, o) } else { None };
        let rs = RowSet { kind: h.kind, data: h.data, cols_b: &cols_b, cols_a: &cols_a, colplans, table: tm.name,
                          fk_checks: h.flags & NO_FOREIGN_KEY_CHECKS_F == 0, log_on };
        let mut img_b = vec![Val::Absent; plan.nslots];
        let mut img_a = vec![Val::Absent; plan.nslots];
        let mut shadow_imgs = ShadowImages::new(shadow.as_ref().map_or(0, |sp| sp.nslots));
        let (mut pos, mut n, mut incomplete) = (0usize, 0u64, false);
        while pos < rs.data.len() {
            let start = pos;
            let keep = !o.truncated && matches!(&plan.plan, Plan::Known(p) if !p.columns.is_empty());
            pos = rs.image(start, &plan.slot_of_col, &mut img_b, &mut img_a)?;
            if pos <= start {
                // A row image of no columns consumes no bytes: the row data would never be
                // used up (style rule 13). The reference names the corruption.
                return Err(Abort::new("rows event: a row image consumes no bytes"));
            }
            n += 1;
            if let Some(sp) = shadow.as_ref() {
                self.shadow_row(py, &rs, sp, start, pos, &mut shadow_imgs, o)?;
            }
            if keep {
                incomplete |= !self.keep_row(py, &rs, &plan, &mut img_a, &img_b, o)?;
            }
        }
        rows_tally(o, tm.name, h.kind, n, incomplete);
        Ok(h.flags)
    }

    /// The plan of a rows event's table in this transaction: the one it already holds, none in
    /// a detection read, else `plan_for`'s (one plan per table name in a transaction).
    fn rows_plan(&mut self, py: Python<'_>, tm: &Rc<TmInfo>, table_id: u64, o: &mut Open) -> Res<Rc<PlanEntry>> {
        if let Some((_, p)) = o.selected.iter().find(|(id, _)| *id == table_id) {
            return Ok(p.clone());
        }
        if self.detect_limit > 0 {
            let p = Rc::new(PlanEntry { plan: Plan::Unknown(String::new()), handle: None, slot_of_col: vec![-1; tm.ncols],
                                       nslots: 0, drop_tag: 0, shadow: None });
            o.selected.push((table_id, p.clone()));
            return Ok(p);
        }
        let p = self.plan_for(py, tm)?;
        o.selected.push((table_id, p.clone()));
        match o.current.iter_mut().find(|(n, _)| *n == tm.name) {
            Some(slot) => {
                if !Rc::ptr_eq(&slot.1, &p) {
                    return Err(Abort::new("two plans for one table name in a transaction"));
                }
            }
            None => o.current.push((tm.name, p.clone())),
        }
        Ok(p)
    }

    /// One row change of a keyless table under its shadow plan (a primary key the what-if
    /// adds), hashed for the writeset log only: the same row bytes, the shadow's slots.
    #[allow(clippy::too_many_arguments)]
    fn shadow_row(&self, py: Python<'_>, rs: &RowSet<'_>, sp: &PlanEntry, start: usize, end: usize,
                  imgs: &mut ShadowImages, o: &mut Open) -> Res<()> {
        o.shadow_kept += 1;
        let Plan::Known(stp) = &sp.plan else {
            o.shadow_unsafe = true;
            return Ok(());
        };
        if o.truncated || o.kept + o.shadow_kept > MAX_ROW_CHANGES {
            return Ok(());
        }
        if rs.image(start, &sp.slot_of_col, &mut imgs.before, &mut imgs.after)? != end {
            return Err(Abort::new("shadow plan read a row image differently"));
        }
        let (cb, handle) = (&self.cb, sp.handle.as_ref());
        let mut pykeys = |fk: bool, idx: usize, values: &[Option<&[u8]>]| bridge_keys(py, cb, handle, false, fk, idx, values);
        let before = imgs.hashes.len();
        change_hashes(stp, rs.kind, &mut imgs.after, &imgs.before, rs.data, &mut imgs.hashes, rs.fk_checks, &mut pykeys,
                      None, None)?;
        o.shadow.extend(imgs.hashes.drain(before..).map(|h| (rs.table, h)));
        Ok(())
    }

    /// One row change kept for the transaction's writeset (at most `MAX_ROW_CHANGES`): its
    /// hashes, labels and log tags. False when a key column is absent from the images.
    fn keep_row(&self, py: Python<'_>, rs: &RowSet<'_>, plan: &PlanEntry, img_a: &mut [Val], img_b: &[Val],
                o: &mut Open) -> Res<bool> {
        o.kept += 1;
        let Plan::Known(tp) = &plan.plan else { return Ok(true) };
        if o.kept > MAX_ROW_CHANGES || tp.columns.is_empty() {
            return Ok(true);
        }
        let (cb, handle, labels_on) = (&self.cb, plan.handle.as_ref(), self.labels_on);
        let mut pykeys = |fk: bool, idx: usize, values: &[Option<&[u8]>]| {
            bridge_keys(py, cb, handle, labels_on, fk, idx, values)
        };
        let lab = if labels_on { Some(&mut o.labels) } else { None };
        if rs.fk_checks && !tp.fk_probes.is_empty() {
            fk_check_count(tp, rs.kind, img_b, img_a, rs.data, &mut o.fk_counts);
        }
        if !tp.index_slots.is_empty() {
            o.index_entries += index_entry_count(tp, rs.kind, img_b, img_a, rs.data);
        }
        let tags = if rs.log_on { Some(&mut o.hash_fk) } else { None };
        let before = o.hashes.len();
        let ok = change_hashes(tp, rs.kind, img_a, img_b, rs.data, &mut o.hashes, rs.fk_checks, &mut pykeys, lab, tags)?;
        if rs.log_on {
            o.hash_tab.resize(o.hash_tab.len() + (o.hashes.len() - before), rs.table);
        }
        Ok(ok)
    }

    /// `_close` + `KeyTracker.writeset` + `ClockComputer.step` + `Totals.add` + the policy
    /// clocks + `KeyTracker.observe`.
    fn close(&mut self, py: Python<'_>, mut o: Open, end: u64, incomplete: bool) -> Res<()> {
        self.fs.index += 1;
        self.fs.transactions += 1;
        if self.detect_limit > 0 {
            return self.close_detected(&o);
        }
        let gtid = o.gtid.take();
        let g = gtid.as_ref();
        let last_committed = g.and_then(|g| g.last_committed);
        let sequence_number = g.and_then(|g| g.sequence_number);
        let imm = g.map_or(0, |g| g.immediate_commit_timestamp);
        let orig = g.map_or(0, |g| g.original_commit_timestamp);
        let flags = self.table_flags(&o);
        let (seq, co) = self.clock_step(&o, last_committed, sequence_number, imm);
        let reason = fallback_reason(&o, incomplete, flags.unknown_any);
        self.drop_ignored(&mut o);
        self.log_writeset(py, &o, seq, co, reason)?;
        let (wparent, reason) = self.ws.dependency(seq, co, &o.hashes, &flags.ws, reason);
        let sparent = self.session.dependency(seq, wparent, o.thread_id);
        let scan_rows = flags.scan_rows;
        if let Some(r) = reason {
            self.count_fallback(r, flags, &o);
        }
        let commit_ts = if orig != 0 { orig } else { imm };
        let mut rows3 = [0i64; 3];
        for (_, st) in &o.stats {
            for k in 0..3 {
                rows3[k] += st[k] as i64;
            }
        }
        let c = Closed {
            last_committed, sequence_number, imm, orig, seq, co, wparent, sparent, reason, incomplete, end, commit_ts,
            rows3,
            bytes: end as i64 - o.start as i64 - o.payload_size as i64 + o.inner_bytes as i64,
            ts: if commit_ts != 0 { commit_ts } else { o.timestamp as i64 * 1_000_000 },
        };
        self.add_totals(&o, &c, g);
        self.add_facts(&o, &c, scan_rows);
        for (name, st) in &o.stats {
            let d = st[0] as i64 - st[2] as i64;
            if d != 0 {
                *self.fs.net_rows.entry(*name).or_insert(0) += d;
            }
        }
        if self.records.is_some() || self.graph.is_some() {
            self.add_record(py, &o, &c, g)?;
        }
        if o.ddl {
            self.observe_ddl(py, &o)?;
        }
        if self.progress_every > 0 && self.fs.transactions % self.progress_every == 0 {
            self.cb.call_method1(py, "progress", (self.file_path.clone(), end)).map_err(py_abort)?;
        }
        Ok(())
    }

    /// A detection read's transaction: its recorded clock, until the sample is complete.
    fn close_detected(&mut self, o: &Open) -> Res<()> {
        if let Some(g) = o.gtid.as_ref() {
            if let (Some(lc), Some(sn)) = (g.last_committed, g.sequence_number) {
                self.detected.push((lc, sn, o.thread_id));
                if self.detected.len() as u64 >= self.detect_limit {
                    return Err(Abort::new(DETECT_DONE));
                }
            }
        }
        Ok(())
    }

    /// `transaction_writeset`'s per-table flags, the unknown schemas and caveats counted, and
    /// the rows the transaction's lookups scan (`sim.run.ScanSizes`).
    fn table_flags(&mut self, o: &Open) -> TableFlags {
        // CREATE TABLE ... SELECT: its rows are of the table it creates, unknown until its DDL is
        // followed, and its writeset is never used (the `ctas` fallback resets): no caveat
        let ctas = o.ctas();
        let mut f = TableFlags {
            ws: WsFlags { has_missing_keys: false, has_related_foreign_keys: false },
            missing: Vec::new(),
            fk_parent: Vec::new(),
            unknown_any: false,
            scan_rows: 0,
        };
        for (name, st) in &o.stats {
            if st[0] + st[1] + st[2] == 0 {
                continue;
            }
            let plan = o.current.iter().find(|(n, _)| n == name).map(|(_, p)| p.clone());
            match plan.as_deref().map(|p| &p.plan) {
                None | Some(Plan::Unknown(_)) if ctas => {}
                None => {
                    f.unknown_any = true;
                    *self.unknown.entry(format!("schema of {} unknown", self.names[*name])).or_insert(0) += 1;
                }
                Some(Plan::Unknown(reason)) => {
                    f.unknown_any = true;
                    *self.unknown.entry(reason.clone()).or_insert(0) += 1;
                }
                Some(Plan::Known(p)) => self.known_table_flags(p, *name, st, ctas, &mut f),
            }
        }
        for name in &o.incomplete_tables {
            let c = format!("key columns of {} are missing from the row images (binlog_row_image=MINIMAL or NOBLOB?)", self.names[*name]);
            *self.caveats.entry(c).or_insert(0) += 1;
        }
        f
    }

    /// `table_flags` for a table of known plan.
    fn known_table_flags(&mut self, p: &TablePlan, name: usize, st: &[u64; 4], ctas: bool, f: &mut TableFlags) {
        if p.missing_keys {
            f.ws.has_missing_keys = true;
            f.missing.push(name);
        }
        if p.fk_parent {
            f.ws.has_related_foreign_keys = true;
            f.fk_parent.push(name);
        }
        if let (Some(c), false) = (&p.partial, ctas) {
            *self.caveats.entry(c.clone()).or_insert(0) += 1;
        }
        if p.scans && st[3] > 0 {
            // `sim.run.ScanSizes`: each event scans the larger of the table's known
            // size and the rows this file added so far
            let net = self.fs.net_rows.get(&name).copied().unwrap_or(0).max(0);
            f.scan_rows += st[3] as i64 * p.table_rows.max(net);
            // per table over the run (`advise.context.gather`'s `scans`)
            let acc = self.scan_tables.entry(name).or_insert((0, 0));
            acc.0 += st[3] as i64;
            acc.1 += st[3] as i64 * p.table_rows.max(net);
        }
    }

    /// `ClockComputer.step`'s sequence number and commit-order parent (a new file restarts
    /// the clocks; a blocking transaction holds back those after it).
    fn clock_step(&mut self, o: &Open, last_committed: Option<i64>, sequence_number: Option<i64>, imm: i64) -> (i64, i64) {
        if self.last_file != Some(self.file_idx) {
            self.last_file = Some(self.file_idx);
            self.seq = 0;
            self.blocking = 0;
            self.ws.reset_file();
            self.co.reset_file();
        }
        self.seq += 1;
        let seq = match sequence_number {
            Some(s) if s != 0 => s,
            _ => self.seq,
        };
        self.seq = seq;
        let mut co = self.co.parent(last_committed, imm, seq);
        if co != 0 && self.blocking > co {
            co = self.blocking;
        }
        if o.incident || o.blocks {
            self.blocking = seq;
        }
        (seq, co)
    }

    /// `KeyTracker.writeset`: the what-if leaves these row keys out.
    fn drop_ignored(&self, o: &mut Open) {
        if self.ignore.is_empty() || o.hashes.is_empty() {
            return;
        }
        let ignore = &self.ignore;
        let mut k = 0;
        let tagged = o.hash_tab.len() == o.hashes.len() && o.hash_fk.len() == o.hashes.len();
        for i in 0..o.hashes.len() {
            if !ignore.contains(&o.labels[i]) {
                o.hashes.swap(k, i);
                o.labels.swap(k, i);
                if tagged {
                    o.hash_tab.swap(k, i);
                    o.hash_fk.swap(k, i);
                }
                k += 1;
            }
        }
        o.hashes.truncate(k);
        o.labels.truncate(k);
        if tagged {
            o.hash_tab.truncate(k);
            o.hash_fk.truncate(k);
        }
        if k == 0 {
            // every row it wrote was taken out: it still writes rows, shared with no one
            o.hashes.push(own_rows_hash(o.start as i64));
            o.labels.push(String::new());
            if tagged {
                o.hash_tab.push(0);
                o.hash_fk.push(0);
            }
        }
    }

    /// The transaction's record in the writeset log (with the facts), handed over in chunks.
    fn log_writeset(&mut self, py: Python<'_>, o: &Open, seq: i64, co: i64, reason: Option<u8>) -> Res<()> {
        if self.facts.is_none() || self.ws_log.is_none() {
            return Ok(());
        }
        let (rec, unsafe_) = self.ws_record(o, seq, co, reason)?;
        self.ws_log_unsafe += unsafe_ as u64;
        let log = self.ws_log.as_mut().unwrap();
        log.extend_from_slice(&rec);
        if self.ws_log_chunk > 0 && log.len() >= self.ws_log_chunk {
            let b = PyBytes::new_bound(py, i64_slice_bytes(log));
            log.clear();
            self.cb.call_method1(py, "ws_log", (b,)).map_err(py_abort)?;
        }
        Ok(())
    }

    /// A WRITESET fallback, counted by reason and by (reason, table).
    fn count_fallback(&mut self, r: u8, flags: TableFlags, o: &Open) {
        self.fallbacks[r as usize] += 1;
        let mut tables: Vec<usize> = match r {
            clock::NO_PRIMARY_KEY => flags.missing,
            clock::FK_PARENT => flags.fk_parent,
            _ => Vec::new(),
        };
        if tables.is_empty() {
            tables = o.stats.iter().map(|(n, _)| *n).collect();
        }
        if tables.is_empty() {
            tables.push(usize::MAX);
        }
        for t in tables {
            *self.fallback_tables.entry((r, t)).or_insert(0) += 1;
        }
    }

    /// `Totals.add` (file and run) and the policy clocks.
    fn add_totals(&mut self, o: &Open, c: &Closed, g: Option<&Gtid>) {
        let file_idx = self.file_idx;
        let index = self.fs.index;
        let path = self.file_path.clone();
        let start = o.start;
        let gtid_text = |g: Option<&Gtid>| -> String {
            match g {
                Some(g) if !g.anonymous => match &g.text {
                    Some(t) => t.clone(),
                    None => format!("{}:{}", uuid_text(&g.sid), g.gno),
                },
                _ => format!("#{index}"),
            }
        };
        for which in 0..2 {
            let t = if which == 0 { &mut self.fs.totals } else { &mut self.total };
            t.transactions += 1;
            t.rows += o.rows;
            t.bytes += c.bytes;
            t.ddl += o.ddl as u64;
            t.statement_based += o.sbr as u64;
            t.xa += o.xa as u64;
            t.incidents += o.incident as u64;
            t.incomplete += c.incomplete as u64;
            t.add_ts(c.ts);
            t.recorded.add(file_idx, c.last_committed, c.sequence_number);
            t.offer_largest(c.bytes, o.rows as i64, &mut || (gtid_text(g), format!("{path}@{start}")));
            for (name, st) in &o.stats {
                t.add_table_rows(*name, st[0] + st[1] + st[2]);
            }
            if c.orig != 0 && c.imm != 0 && c.orig != c.imm {
                t.lags.add(c.imm - c.orig);
            }
        }
        let sn = Some(c.seq);
        self.clocks[0].add(file_idx, Some(c.co), sn);
        self.clocks[1].add(file_idx, Some(c.wparent), sn);
        self.clocks[2].add(file_idx, Some(c.sparent), sn);
    }

    /// `sim.run.facts_of`: rows by kind over the transaction's tables (0 write, 1 update,
    /// 2 delete), the recorded clock or else the commit-order one.
    fn add_facts(&mut self, o: &Open, c: &Closed, scan_rows: i64) {
        let Some(f) = self.facts.as_mut() else { return };
        let dbset = f.dbset(o.dbs.clone()) as i64;
        let vals = [self.file_idx as i64, c.seq, c.last_committed.unwrap_or(c.co), c.co, c.wparent, c.sparent, c.ts,
                    c.rows3[0], c.rows3[1], c.rows3[2], c.bytes, dbset, scan_rows,
                    o.fk_counts.iter().map(|(_, n)| n).sum(), o.index_entries, o.events as i64];
        for (col, v) in f.cols.iter_mut().zip(vals) {
            col.push(v);
        }
    }

    /// The transaction into the dependency graph and the export records (handed over in chunks).
    fn add_record(&mut self, py: Python<'_>, o: &Open, c: &Closed, g: Option<&Gtid>) -> Res<()> {
        let file_idx = self.file_idx;
        let gtid = g.and_then(|g| {
            if g.anonymous {
                None
            } else {
                Some(g.text.clone().unwrap_or_else(|| format!("{}:{}", uuid_text(&g.sid), g.gno)))
            }
        });
        if let Some(gr) = self.graph.as_mut() {
            if self.labels_on && o.labels.len() != o.hashes.len() {
                return Err(Abort::new("labels and hashes disagree"));
            }
            let lc = match gr.policy {
                0 => c.last_committed,
                1 => Some(c.co),
                2 => Some(c.wparent),
                _ => Some(c.sparent),
            };
            gr.add(file_idx, lc, c.seq, c.rows3, c.bytes, o.events as i64, o.rows as i64, &gtid, &o.hashes, &o.labels);
        }
        let Some(r) = self.records.as_mut() else { return Ok(()) };
        let flags = (o.ddl as i64) | (o.sbr as i64) << 1 | (o.xa as i64) << 2 | (o.incident as i64) << 3
            | (c.incomplete as i64) << 4 | (o.compressed as i64) << 5;
        let vals = [file_idx as i64, o.start as i64, c.end as i64, c.last_committed.unwrap_or(NONE),
                    c.sequence_number.unwrap_or(NONE), o.thread_id.map_or(NONE, |t| t as i64), c.commit_ts,
                    c.imm, o.rows as i64, flags, c.co, c.wparent, c.sparent, c.reason.map_or(-1, |r| r as i64),
                    c.orig, c.rows3[0], c.rows3[1], c.rows3[2], c.bytes, o.events as i64];
        for (col, v) in r.cols.iter_mut().zip(vals) {
            col.push(v);
        }
        r.gtids.push(gtid);
        for (name, _) in &o.stats {
            r.tables.push(*name as i64);
        }
        r.table_ends.push(r.tables.len() as i64);
        if self.records_chunk > 0 && r.gtids.len() as u64 >= self.records_chunk {
            let d = self.take_records(py).map_err(py_abort)?;
            self.cb.call_method1(py, "records", (d,)).map_err(py_abort)?;
        }
        Ok(())
    }

    /// `KeyTracker.observe`: a DDL transaction's statements applied to the catalog by the
    /// reference; a new catalog version drops the cached plans.
    fn observe_ddl(&mut self, py: Python<'_>, o: &Open) -> Res<()> {
        let stmts: Vec<(String, Py<PyBytes>, Py<PyBytes>)> = o
            .ddl_statements
            .iter()
            .map(|(k, d, q)| (k.clone(), PyBytes::new_bound(py, d).unbind(), PyBytes::new_bound(py, q).unbind()))
            .collect();
        let v: i64 = self
            .cb
            .call_method1(py, "observe", (self.file_path.clone(), o.start, stmts))
            .and_then(|r| r.extract(py))
            .map_err(py_abort)?;
        if v != self.catalog_version {
            self.catalog_version = v;
            self.plan_cache.clear();
        }
        Ok(())
    }
}

/// A rows event's post-header and column bitmaps (`binlog.rows.decode_rows`): the change kind
/// (0 write, 1 update, 2 delete), the table id, the flags, the column count, the bitmaps and
/// the row data.
struct RowsHeader<'a> {
    kind: usize,
    table_id: u64,
    flags: u16,
    ncols: usize,
    before_bm: &'a [u8],
    after_bm: &'a [u8],
    data: &'a [u8],
}

fn rows_header<'a>(fde: &Fde, e: &RawEvent<'a>) -> Res<RowsHeader<'a>> {
    let code = e.type_code;
    let (kind, version) = match code {
        23 => (0usize, 1),
        24 => (1, 1),
        25 => (2, 1),
        30 => (0, 2),
        31 => (1, 2),
        _ => (2, 2),
    };
    let mut c = Cursor::new(e.data, HEADER_LEN, e.body_end);
    let default_post = if version == 2 { 10 } else { 8 };
    let post = fde.post_header(code, default_post);
    let table_id = c.uint(if post == 6 { 4 } else { 6 }, "table_id")?;
    let flags = c.uint(2, "flags")? as u16;
    let consumed;
    if version == 2 && post >= 10 {
        let extra = c.uint(2, "extra_data_length")? as usize;
        if extra < 2 {
            return Err(Abort::new("rows extra data length < 2"));
        }
        c.skip(extra - 2, "extra data")?;
        consumed = 10;
    } else {
        consumed = if post != 6 { 8 } else { 6 };
    }
    if post > consumed {
        c.skip(post - consumed, "post-header")?;
    }
    let ncols = c.packed("column count")? as usize;
    if ncols > 4096 {
        return Err(Abort::new("impossible column count"));
    }
    let nbytes = (ncols + 7) / 8;
    let before_bm = c.bytes(nbytes, "columns bitmap")?;
    let after_bm = if kind == 1 { c.bytes(nbytes, "after-image columns bitmap")? } else { &[][..] };
    Ok(RowsHeader { kind, table_id, flags, ncols, before_bm, after_bm, data: c.rest() })
}

/// What every row change of one rows event shares: the change kind, the row data, the
/// columns present in each image, the table's column plans and name, whether foreign keys
/// are checked, whether the writeset log is kept.
struct RowSet<'a> {
    kind: usize,
    data: &'a [u8],
    cols_b: &'a [usize],
    cols_a: &'a [usize],
    colplans: &'a [ColPlan],
    table: usize,
    fk_checks: bool,
    log_on: bool,
}

impl RowSet<'_> {
    /// Read the row change at `pos` into the images (both for an UPDATE; the after image for a
    /// WRITE, the before image for a DELETE), cleared first; the position after it.
    fn image(&self, pos: usize, slot_of_col: &[i32], img_b: &mut [Val], img_a: &mut [Val]) -> Res<usize> {
        for v in img_b.iter_mut().chain(img_a.iter_mut()) {
            *v = Val::Absent;
        }
        match self.kind {
            1 => {
                let p1 = read_image(self.data, pos, self.cols_b, self.colplans, slot_of_col, img_b)?;
                read_image(self.data, p1, self.cols_a, self.colplans, slot_of_col, img_a)
            }
            0 => read_image(self.data, pos, self.cols_b, self.colplans, slot_of_col, img_a),
            _ => read_image(self.data, pos, self.cols_b, self.colplans, slot_of_col, img_b),
        }
    }
}

/// The images and hashes of the rows read under a shadow plan.
struct ShadowImages {
    before: Vec<Val>,
    after: Vec<Val>,
    hashes: Vec<i64>,
}

impl ShadowImages {
    fn new(slots: usize) -> Self {
        ShadowImages { before: vec![Val::Absent; slots], after: vec![Val::Absent; slots], hashes: Vec::new() }
    }
}

/// The shadow plan of a keyless table given a primary key, hashed for the writeset log only;
/// a shadow the native side cannot hash makes the log unsafe to replay.
fn shadow_plan(plan: &PlanEntry, o: &mut Open) -> Option<Rc<PlanEntry>> {
    match &plan.shadow {
        Some((_, Some(sp))) => Some(sp.clone()),
        Some((_, None)) => {
            o.shadow_unsafe = true;
            None
        }
        None => None,
    }
}

/// A rows event's counts into its transaction: the row changes kept, the tables whose key
/// columns were missing, the rows by kind and the lookup events per table.
fn rows_tally(o: &mut Open, table: usize, kind: usize, n: u64, incomplete: bool) {
    if o.kept > MAX_ROW_CHANGES {
        o.kept = MAX_ROW_CHANGES;
        o.truncated = true;
    }
    if incomplete && !o.incomplete_tables.contains(&table) {
        o.incomplete_tables.push(table);
    }
    let search = (kind != 0) as u64; // an UPDATE or DELETE event: the replica looks its rows up
    match o.stats.iter_mut().find(|(nm, _)| *nm == table) {
        Some((_, st)) => {
            st[kind] += n;
            st[3] += search;
        }
        None => {
            let mut st = [0u64; 4];
            st[kind] = n;
            st[3] = search;
            o.stats.push((table, st));
        }
    }
    o.rows += n;
}

/// `transaction_writeset`'s per-table flags of a transaction (`Analyzer::table_flags`): the
/// tables without a primary key, the foreign-key parents, whether a schema was unknown, the
/// rows its lookups scan.
struct TableFlags {
    ws: WsFlags,
    missing: Vec<usize>,
    fk_parent: Vec<usize>,
    unknown_any: bool,
    scan_rows: i64,
}

/// A closed transaction's clocks and sizes, as the statistics, facts, records and graph take
/// them.
struct Closed {
    last_committed: Option<i64>,
    sequence_number: Option<i64>,
    imm: i64,
    orig: i64,
    seq: i64,
    co: i64,
    wparent: i64,
    sparent: i64,
    reason: Option<u8>,
    incomplete: bool,
    end: u64,
    commit_ts: i64,
    rows3: [i64; 3],
    bytes: i64,
    ts: i64,
}

/// Why the WRITESET clock cannot track the transaction before its hashes are looked at
/// (`ClockComputer.step`'s reasons, in its order).
fn fallback_reason(o: &Open, incomplete: bool, unknown_any: bool) -> Option<u8> {
    if incomplete {
        Some(clock::INCOMPLETE)
    } else if o.truncated {
        Some(clock::TOO_LARGE)
    } else if o.ctas() {
        Some(clock::CTAS)
    } else if unknown_any {
        Some(clock::UNKNOWN_SCHEMA)
    } else if o.ddl {
        Some(clock::DDL)
    } else if o.sbr && o.rows == 0 {
        Some(clock::STATEMENT)
    } else if o.rows == 0 {
        if !o.other_kind && !o.xa {
            Some(clock::EMPTY)
        } else {
            Some(clock::EMPTY_WRITESET)
        }
    } else {
        None
    }
}

fn framing_alg(e: &RawEvent) -> u8 {
    framing::fde_checksum_alg(e.data)
}

/// `rows._read_image`: one row image at `pos`; fills the plan slots of `img`.
#[inline]
fn read_image(data: &[u8], mut pos: usize, cols: &[usize], plans: &[ColPlan], slot_of_col: &[i32], img: &mut [Val]) -> Res<usize> {
    let end = data.len();
    let nnull = (cols.len() + 7) / 8;
    if pos + nnull > end {
        return Err(Abort::new("row image: null bitmap runs past the event"));
    }
    let nulls = &data[pos..pos + nnull];
    pos += nnull;
    for (j, &col) in cols.iter().enumerate() {
        let slot = slot_of_col[col];
        if nulls[j >> 3] & (1 << (j & 7)) != 0 {
            if slot >= 0 {
                img[slot as usize] = Val::Null;
            }
            continue;
        }
        let p = plans[col];
        let mut size = p.size;
        if size < 0 {
            let pre = p.prefix as usize;
            if pos + pre > end {
                return Err(Abort::new("row image: column length runs past the event"));
            }
            let mut v: u64 = 0;
            for k in 0..pre {
                v |= (data[pos + k] as u64) << (8 * k);
            }
            size = v as i64;
            pos += pre;
        }
        let size = size as usize;
        if size > end - pos {
            return Err(Abort::new("row image: column value runs past the event"));
        }
        if slot >= 0 {
            if pos > u32::MAX as usize || size > u32::MAX as usize {
                return Err(Abort::new("row image beyond 4 GiB"));
            }
            img[slot as usize] = Val::Raw(pos as u32, size as u32);
        }
        pos += size;
    }
    Ok(pos)
}

/// CPython's `hash(v)` for an integer, as the native writesets compute it (for tests).
#[pyfunction]
fn int_hash(v: i128) -> i64 {
    writeset::int_hash(v)
}

/// `hash(number_key(v))` of the reference, as the native writesets compute it (for tests).
#[pyfunction]
fn number_key_hash(v: i128) -> i64 {
    writeset::number_key_hash(v)
}

/// A TRANSACTION_PAYLOAD event's header fields (1 payload_size, 2 compression type, 3
/// uncompressed size: `Transaction_payload_event`) and its payload, the size checked.
fn payload_fields<'a>(e: &RawEvent<'a>) -> Res<([Option<u64>; 4], &'a [u8])> {
    let mut c = Cursor::new(e.data, HEADER_LEN, e.body_end);
    let mut fields: [Option<u64>; 4] = [None; 4];
    loop {
        let ftype = c.packed("payload field type")?;
        if ftype == 0 {
            break;
        }
        let flen = c.packed("payload field length")? as usize;
        c.need(flen, "payload field")?;
        let end = c.pos + flen;
        if (1..=3).contains(&ftype) {
            fields[ftype as usize] = Some(Cursor::new(c.data, c.pos, end).packed("payload field value")?);
        }
        c.pos = end;
    }
    let payload = c.rest();
    if let Some(size) = fields[1] {
        if size != payload.len() as u64 {
            return Err(Abort::new("payload_size disagrees with the payload"));
        }
    }
    Ok((fields, payload))
}

/// `tracker.own_rows_hash`: the one hash a what-if leaves a transaction whose every row it took
/// out (left empty, it read as DDL and reset the history); unique per transaction of a file.
pub fn own_rows_hash(unique: i64) -> i64 {
    i64::MIN + 1 + unique
}

/// A readable row key as one int64 (FNV-1a over its UTF-8): what a what-if's ignored rows are
/// matched by in the writeset log.
pub fn label_key(l: &str) -> i64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in l.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h as i64
}

/// The WRITESET clock of a what-if replayed from the main pass's writeset log
/// (`Analyzer.collect_ws_log`): the same `WritesetTracker` with another history size, the
/// hashes of the ignored rows left out as `KeyTracker.writeset` leaves them out, the tables
/// given a primary key hashed by their shadow plans, the foreign keys to the dropped parents left
/// out (`WhatIf`); the WRITESET_SESSION clock on top of it and the scan rows of each
/// transaction. Fed the log in order, chunk by chunk.
#[pyclass]
struct WsReplay {
    ws: WritesetTracker,
    session: SessionTracker,
    last_file: i64,
    ignore: std::collections::HashSet<i64>,
    add_pk: std::collections::HashSet<i64>,
    drop_fk: std::collections::HashSet<i64>,
    hashes: Vec<i64>,
}

#[pymethods]
impl WsReplay {
    #[new]
    #[pyo3(signature = (history_size, ignore, add_primary_key=Vec::new(), drop_foreign_keys_to=Vec::new()))]
    fn new(history_size: i64, ignore: Vec<String>, add_primary_key: Vec<String>, drop_foreign_keys_to: Vec<String>) -> Self {
        WsReplay {
            ws: WritesetTracker { history_size, history: HashMap::new(), history_start: 1, resets: 0 },
            session: SessionTracker::default(),
            last_file: -1,
            ignore: ignore.iter().map(|l| label_key(l)).collect(),
            add_pk: add_primary_key.iter().map(|l| label_key(l)).collect(),
            drop_fk: drop_foreign_keys_to.iter().map(|l| label_key(l)).collect(),
            hashes: Vec::new(),
        }
    }

    /// The next chunk of the log: (WRITESET parents, WRITESET_SESSION parents, scan rows,
    /// foreign-key checks less those of the dropped foreign keys) as int64 bytes, one per
    /// transaction.
    #[allow(clippy::type_complexity)]
    fn feed<'py>(&mut self, py: Python<'py>, log: &[u8])
            -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        if log.len() % 8 != 0 {
            return Err(pyo3::exceptions::PyValueError::new_err("writeset log: not int64s"));
        }
        let v: Vec<i64> = log.chunks_exact(8).map(|c| i64::from_ne_bytes(c.try_into().unwrap())).collect();
        let (mut out, mut out_s, mut out_scan, mut out_fk) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let bad = || pyo3::exceptions::PyValueError::new_err("writeset log: truncated record");
        const H: usize = 9;
        const T: usize = 6;
        let mut i = 0;
        while i < v.len() {
            if i + H > v.len() {
                return Err(bad());
            }
            let (file, seq, co, reason, thread, n, nt) = (v[i], v[i + 1], v[i + 2], v[i + 3], v[i + 4], v[i + 5], v[i + 6]);
            let nfk = v[i + 8];
            if n < 0 || nt < 0 || nfk < 0 {
                return Err(bad());
            }
            let nfk = nfk as usize;
            let (n, nt) = (n as usize, nt as usize);
            let tabs_at = i + H + 4 * n;
            let shadow_at = tabs_at + T * nt;
            if shadow_at > v.len() {
                return Err(bad());
            }
            let tab = |k: usize| &v[tabs_at + T * k..tabs_at + T * (k + 1)];
            let nshadow: usize = (0..nt).map(|k| tab(k)[5].max(0) as usize).sum();
            let fk_at = shadow_at + nshadow;
            if fk_at + 2 * nfk > v.len() {
                return Err(bad());
            }
            if file != self.last_file {
                self.last_file = file;
                self.ws.reset_file();
            }
            let shadowed = |k: usize| tab(k)[1] != 0 && self.add_pk.contains(&tab(k)[1]);
            self.hashes.clear();
            let mut ignored = false;
            for k in 0..n {
                let at = i + H + 4 * k;
                let (h, l, slot, fk) = (v[at], v[at + 1], v[at + 2], v[at + 3]);
                if slot < 0 || slot as usize >= nt {
                    return Err(bad());
                }
                if self.ignore.contains(&l) && !shadowed(slot as usize) {
                    ignored = true;
                    continue;
                }
                if shadowed(slot as usize) || (fk != 0 && self.drop_fk.contains(&fk)) {
                    continue;
                }
                self.hashes.push(h);
            }
            let (mut missing, mut parent, mut scan) = (false, false, 0i64);
            let mut at = shadow_at;
            for k in 0..nt {
                let t = tab(k);
                let count = t[5].max(0) as usize;
                let dropped = self.drop_fk.contains(&t[0]);
                if shadowed(k) {
                    self.hashes.extend_from_slice(&v[at..at + count]);
                    missing |= t[2] & 4 != 0;
                    parent |= t[2] & 8 != 0 && !dropped;
                    scan += t[4];
                } else {
                    missing |= t[2] & 1 != 0;
                    parent |= t[2] & 2 != 0 && !dropped;
                    scan += t[3];
                }
                at += count;
            }
            if ignored && self.hashes.is_empty() {
                self.hashes.push(own_rows_hash(seq));   // as drop_ignored
            }
            let flags = WsFlags { has_missing_keys: missing, has_related_foreign_keys: parent };
            let reason = if reason < 0 { None } else { Some(reason as u8) };
            let (wparent, _) = self.ws.dependency(seq, co, &self.hashes, &flags, reason);
            let sparent = self.session.dependency(seq, wparent, if thread < 0 { None } else { Some(thread as u32) });
            out.push(wparent);
            out_s.push(sparent);
            out_scan.push(scan);
            out_fk.push((0..nfk).filter(|k| !self.drop_fk.contains(&v[fk_at + 2 * k])).map(|k| v[fk_at + 2 * k + 1]).sum());
            i = fk_at + 2 * nfk;
        }
        Ok((PyBytes::new_bound(py, &i64_bytes(&out)), PyBytes::new_bound(py, &i64_bytes(&out_s)),
            PyBytes::new_bound(py, &i64_bytes(&out_scan)), PyBytes::new_bound(py, &i64_bytes(&out_fk))))
    }
}

/// CPython's `hash(t)` for a tuple whose items hash to `items` (for tests).
#[pyfunction]
fn tuple_hash(items: Vec<i64>) -> i64 {
    writeset::tuple_hash(&items)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Analyzer>()?;
    m.add_class::<WsReplay>()?;
    m.add_function(wrap_pyfunction!(int_hash, m)?)?;
    m.add_function(wrap_pyfunction!(tuple_hash, m)?)?;
    m.add_function(wrap_pyfunction!(number_key_hash, m)?)?;
    m.add("NativeFallback", m.py().get_type_bound::<NativeFallback>())?;
    Ok(())
}
