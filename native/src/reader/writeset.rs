//! Row writesets with the reference's own hash values.
//!
//! The reference (`lagadvisor.writeset.extract.row_hashes`) appends, per key of a row image,
//! `hash((key_name, db, table, ((value, tag), ...)))` with CPython's `hash`. This module
//! computes the very same 64-bit numbers for keys whose parts are integer columns: CPython's
//! integer hash (value modulo the Mersenne prime 2**61 - 1, sign kept, -1 mapped to -2) and its
//! tuple hash (the xxHash-style accumulation of `Objects/tupleobject.c`, re-implemented here from
//! the algorithm's description). String hashes (names, tags, `None`) are salted per process, so
//! Python hands them over with the plan. Because the numbers are identical, histories built by
//! either path agree entry for entry. Keys with string, temporal or decimal parts (collations,
//! prefixes) are not hashed natively: such a plan is refused and the run is read by Python.
//! Server side: `add_pke` in mysql-server `sql/rpl_write_set_handler.cc`.

use std::fmt::Write;

const P: u128 = (1u128 << 61) - 1;
const XXPRIME_1: u64 = 11400714785074694791;
const XXPRIME_2: u64 = 14029467366897019727;
const XXPRIME_5: u64 = 2870177450012600261;

/// CPython `hash(int)` for integers that fit an i128.
#[inline]
pub fn int_hash(v: i128) -> i64 {
    let m = (v.unsigned_abs() % P) as i64;
    let h = if v < 0 { -m } else { m };
    if h == -1 {
        -2
    } else {
        h
    }
}

/// CPython `hash(tuple)` from the items' hashes.
#[inline]
pub fn tuple_hash(items: &[i64]) -> i64 {
    let mut acc = XXPRIME_5;
    for &lane in items {
        acc = acc.wrapping_add((lane as u64).wrapping_mul(XXPRIME_2));
        acc = acc.rotate_left(31);
        acc = acc.wrapping_mul(XXPRIME_1);
    }
    acc = acc.wrapping_add((items.len() as u64) ^ (XXPRIME_5 ^ 3527539));
    if acc == u64::MAX {
        return 1546275796;
    }
    acc as i64
}

/// One part of a key: which plan column (index into `TablePlan::columns`) and the hash of its
/// tag in each pass (`None`, `"key"` or `"pack"` as the reference writes them).
#[derive(Clone)]
pub struct Part {
    pub slot: usize,
    pub key_tag: i64,
    pub pack_tag: i64,
}

#[derive(Clone)]
pub struct KeyPlan {
    /// hash(name), hash(db), hash(table) of the reference's key tuple.
    pub head: [i64; 3],
    pub parts: Vec<Part>,
    pub hashes: u8,
    /// The readable label's head, `db.table name=(` (`extract._label`).
    pub label: String,
    /// Hashed by the reference (string, temporal, decimal or prefix parts): the native side
    /// decides skip/absent, the bridge returns the hashes of the part values.
    pub py: bool,
}

#[derive(Clone)]
pub struct FkPlan {
    pub head: [i64; 3],
    pub parts: Vec<Part>, // pack_tag used
    pub py: bool,
    /// Label head `ref_db.ref_table ref_key=(` and tail `) (foreign key of db.table)`.
    pub label: String,
    pub label_tail: String,
    /// `label_key` of the referenced table's lower-case name (what `WhatIf.plan` drops by).
    pub ref_tag: i64,
}

/// A table's resolved plan (`extract.TablePlan`) or the reason it is unknown.
pub enum Plan {
    Unknown(String),
    Known(TablePlan),
}

pub struct TablePlan {
    pub keys: Vec<KeyPlan>,
    pub fks: Vec<FkPlan>,
    pub fk_parent: bool,
    pub missing_keys: bool,
    pub partial: Option<String>,
    /// Sorted column indexes the plan reads (`TablePlan.columns`).
    pub columns: Vec<usize>,
    /// Per slot: `Some(unsigned)` for integer columns (TINY..LONGLONG, INT24), else None.
    pub int_slots: Vec<Option<bool>>,
    /// No index at all: the replica scans the table for every UPDATE/DELETE rows event.
    pub scans: bool,
    /// The table's size when a server told it (`Catalog.rows_of`).
    pub table_rows: i64,
    /// `TablePlan.fk_probes`: the foreign-key checks its row changes make InnoDB run.
    pub fk_probes: Vec<FkProbe>,
    /// `extract.primary_columns` as plan slots (given with probes only): an UPDATE that changes
    /// them rewrites every index entry, so every child-side foreign key is checked.
    pub pk_slots: Vec<usize>,
    /// `TablePlan.index_probes` as plan slots: each secondary index's columns.
    pub index_slots: Vec<Vec<usize>>,
}

/// `extract.index_entry_count`: the secondary index entries of one row change (0 write, 1
/// update, 2 delete; `after` before an UPDATE's completion): one per index for a write or a
/// delete, two per index whose columns changed (other bytes) for an update, every index's when
/// the primary key changed.
pub fn index_entry_count(plan: &TablePlan, kind: usize, before: &[Val], after: &[Val], data: &[u8]) -> i64 {
    let n = plan.index_slots.len() as i64;
    if kind != 1 {
        return n;
    }
    if slots_changed(&plan.pk_slots, before, after, data) {
        return 2 * n;
    }
    2 * plan.index_slots.iter().filter(|s| slots_changed(s, before, after, data)).count() as i64
}

/// A column of `slots` the after image holds with other bytes than the before image (or one the
/// before image lacks): `extract._changed`.
fn slots_changed(slots: &[usize], before: &[Val], after: &[Val], data: &[u8]) -> bool {
    let bytes = |v: Val| match v {
        Val::Raw(s, l) => data.get(s as usize..(s as usize + l as usize)),
        _ => None,
    };
    slots.iter().any(|&s| {
        after[s] != Val::Absent && (before[s] == Val::Absent || bytes(after[s]) != bytes(before[s])
                                    || (after[s] == Val::Null) != (before[s] == Val::Null))
    })
}

/// One foreign key as `extract.fk_check_count` counts its checks: the child's columns
/// (`parent` false) or the referenced columns of a table referenced by it (`parent` true), as
/// plan slots, and the referenced table's `label_key` (what `WhatIf` drops by).
pub struct FkProbe {
    pub parent: bool,
    pub slots: Vec<usize>,
    pub ref_tag: i64,
}

/// `extract.fk_check_count`: the foreign-key checks of one row change (0 write, 1 update,
/// 2 delete; `after` as the event holds it, before an UPDATE's completion from `before`), added
/// to `counts` by referenced table. Changed means other bytes, as InnoDB's
/// `row_upd_changes_ord_field_binary` compares them; a column absent from the before image
/// counts as changed when the after image has it.
pub fn fk_check_count(plan: &TablePlan, kind: usize, before: &[Val], after: &[Val], data: &[u8],
                      counts: &mut Vec<(i64, i64)>) {
    let set = |v: Val| !matches!(v, Val::Absent | Val::Null);
    let changed = |slots: &[usize]| slots_changed(slots, before, after, data);
    let mut moved: Option<bool> = None;
    for p in &plan.fk_probes {
        let hit = match kind {
            0 => !p.parent && p.slots.iter().all(|&s| set(after[s])),
            2 => p.parent && p.slots.iter().all(|&s| set(before[s])),
            _ => {
                let hit = changed(&p.slots) || (!p.parent && *moved.get_or_insert_with(|| changed(&plan.pk_slots)));
                hit && p.slots.iter().all(|&s| {
                    if p.parent { set(before[s]) } else if after[s] != Val::Absent { set(after[s]) } else { set(before[s]) }
                })
            }
        };
        if hit {
            match counts.iter_mut().find(|(t, _)| *t == p.ref_tag) {
                Some(c) => c.1 += 1,
                None => counts.push((p.ref_tag, 1)),
            }
        }
    }
}

/// A value of one plan column in one row image: absent from the image, NULL, or its bytes
/// (`start`, `len` in the rows event's row data).
#[derive(Clone, Copy, PartialEq)]
pub enum Val {
    Absent,
    Null,
    Raw(u32, u32),
}

/// Little-endian integer of 1..8 bytes, signed unless `unsigned` (`int.from_bytes`).
#[inline]
pub fn le_int(b: &[u8], unsigned: bool) -> i128 {
    let mut v: u64 = 0;
    for (k, x) in b.iter().enumerate().take(8) {
        v |= (*x as u64) << (8 * k);
    }
    let bits = 8 * b.len().min(8);
    if !unsigned && bits > 0 && bits < 64 && v & (1 << (bits - 1)) != 0 {
        v as i128 - (1i128 << bits)
    } else if !unsigned && bits == 64 {
        v as i64 as i128
    } else {
        v as i128
    }
}

/// The hash of the reference's `number_key(v)`: the tuple of the two 32-bit halves of
/// `v + 2**63`. Hashing the integer itself (`int_hash`) is `v mod (2**61 - 1)`, which made
/// BIGINT UNSIGNED 7 and 2**64 - 1 (and -1 and -2) one key; the halves are below 2**61, hash to
/// themselves, and tell every 64-bit value of either signedness apart, as the server's
/// `make_sort_key` bytes do.
#[inline]
pub fn number_key_hash(v: i128) -> i64 {
    let u = v + (1i128 << 63);
    tuple_hash(&[int_hash(u >> 32), int_hash(u & 0xFFFF_FFFF)])
}

/// Callback for reference-hashed keys: (fk?, key index, part values (None = NULL)) -> hashes,
/// and the key's label when labels are asked for.
pub type PyKeys<'a> = dyn FnMut(bool, usize, &[Option<&[u8]>]) -> Result<(Vec<i64>, Option<String>), super::framing::Abort> + 'a;

fn int_label(head: &str, ints: &[i128], tail: &str) -> String {
    let mut s = String::with_capacity(head.len() + tail.len() + 8 * ints.len() + 1);
    s.push_str(head);
    for (i, v) in ints.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{v}");
    }
    s.push(')');
    s.push_str(tail);
    s
}

/// Scratch of one image's keys, reused key after key: the integer values (for labels), the
/// hashes of the parts in the `key` pass and in the `pack` pass.
struct Scratch {
    ints: Vec<i128>,
    vals: Vec<i64>,
    full: Vec<i64>,
}

/// How a key's parts read in an image: all there, one NULL (no key), or one absent.
#[derive(PartialEq)]
enum Parts {
    Present,
    Null,
    Absent,
}

/// The bytes of a value in the rows event's row data.
#[inline]
fn raw(data: &[u8], start: u32, len: u32) -> &[u8] {
    &data[start as usize..(start + len) as usize]
}

/// The raw bytes of some image slots, for keys hashed by the reference (None: NULL/absent).
#[inline]
fn raw_values<'d>(image: &[Val], data: &'d [u8], parts: &[Part]) -> Vec<Option<&'d [u8]>> {
    parts
        .iter()
        .map(|p| match image[p.slot] {
            Val::Raw(s, l) => Some(raw(data, s, l)),
            _ => None,
        })
        .collect()
}

/// Read a key's parts from an image into `sc` (integer parts only, unless `py`); `pack` also
/// hashes each part with its `pack` tag (`sc.full`), `key_pass` with its `key` tag
/// (`sc.vals`; otherwise `sc.vals` takes the `pack` tags, as a foreign key's hash does). A
/// NULL part stops the read when `null_stops` (a key's), and is skipped otherwise (a foreign
/// key's). Always inlined: each caller's constant flags fold away, as in one loop per kind.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn read_parts(plan: &TablePlan, image: &[Val], data: &[u8], parts: &[Part], py: bool, key_pass: bool,
              pack: bool, null_stops: bool, sc: &mut Scratch) -> Parts {
    sc.vals.clear();
    sc.full.clear();
    sc.ints.clear();
    for p in parts {
        match image[p.slot] {
            Val::Absent => return Parts::Absent,
            Val::Null => {
                if null_stops {
                    return Parts::Null;
                }
            }
            Val::Raw(s, l) => {
                if !py {
                    let unsigned = plan.int_slots[p.slot].unwrap_or(false);
                    let iv = le_int(raw(data, s, l), unsigned);
                    sc.ints.push(iv);
                    let hv = number_key_hash(iv);
                    sc.vals.push(tuple_hash(&[hv, if key_pass { p.key_tag } else { p.pack_tag }]));
                    if pack {
                        sc.full.push(tuple_hash(&[hv, p.pack_tag]));
                    }
                }
            }
        }
    }
    Parts::Present
}

/// A key hashed by the reference: its hashes (and its label once per hash); the number added.
#[allow(clippy::too_many_arguments)]
#[inline]
fn py_key_hashes(pykeys: &mut PyKeys, fk: bool, index: usize, image: &[Val], data: &[u8], parts: &[Part],
                 out: &mut Vec<i64>, labels: Option<&mut Vec<String>>) -> Result<usize, super::framing::Abort> {
    let values = raw_values(image, data, parts);
    let (hs, label) = pykeys(fk, index, &values)?;
    if let Some(l) = labels {
        let label = label.ok_or_else(|| super::framing::Abort::new("no key label"))?;
        l.extend(std::iter::repeat(label).take(hs.len()));
    }
    let n = hs.len();
    out.extend(hs);
    Ok(n)
}

/// The hash of a key's tuple `(name, db, table, parts)` from the parts' hashes.
#[inline]
fn key_tuple_hash(head: &[i64; 3], parts: &[i64]) -> i64 {
    tuple_hash(&[head[0], head[1], head[2], tuple_hash(parts)])
}

/// `row_hashes`: append the hashes of one image (and with `labels`, one readable key per
/// hash, as `extract._label` writes it); false if a key column is absent.
/// With `tags`, one tag per hash too: 0 for a key's, the referenced table's `ref_tag` for a
/// foreign key's.
#[allow(clippy::too_many_arguments)]
pub fn row_hashes(plan: &TablePlan, image: &[Val], data: &[u8], out: &mut Vec<i64>, fk_checks: bool,
                  pykeys: &mut PyKeys, mut labels: Option<&mut Vec<String>>,
                  mut tags: Option<&mut Vec<i64>>) -> Result<bool, super::framing::Abort> {
    let before = out.len();
    let mut sc = Scratch { ints: Vec::with_capacity(4), vals: Vec::with_capacity(4), full: Vec::with_capacity(4) };
    let mut complete = key_hashes(plan, image, data, out, pykeys, labels.as_deref_mut(), &mut sc)?;
    if let Some(t) = tags.as_deref_mut() {
        t.resize(t.len() + (out.len() - before), 0);
    }
    if fk_checks {
        complete &= fk_hashes(plan, image, data, out, pykeys, labels, tags, &mut sc)?;
    }
    Ok(complete)
}

/// The unique keys' hashes of one image (`add_pke`'s PRIMARY/UNIQUE part): a key with a NULL
/// part gives none; false if a key column is absent.
#[inline]
fn key_hashes(plan: &TablePlan, image: &[Val], data: &[u8], out: &mut Vec<i64>, pykeys: &mut PyKeys,
              mut labels: Option<&mut Vec<String>>, sc: &mut Scratch) -> Result<bool, super::framing::Abort> {
    let mut complete = true;
    for (ki, k) in plan.keys.iter().enumerate() {
        match read_parts(plan, image, data, &k.parts, k.py, true, k.hashes == 2, true, sc) {
            Parts::Absent => {
                complete = false;
                continue;
            }
            Parts::Null => continue,
            Parts::Present => {}
        }
        if k.py {
            py_key_hashes(pykeys, false, ki, image, data, &k.parts, out, labels.as_deref_mut())?;
            continue;
        }
        out.push(key_tuple_hash(&k.head, &sc.vals));
        if k.hashes == 2 {
            out.push(key_tuple_hash(&k.head, &sc.full));
        }
        if let Some(l) = labels.as_deref_mut() {
            let label = int_label(&k.label, &sc.ints, "");
            if k.hashes == 2 {
                l.push(label.clone());
            }
            l.push(label);
        }
    }
    Ok(complete)
}

/// The foreign keys' hashes of one image (`add_pke`'s foreign key part, with
/// foreign_key_checks on), each tagged with the referenced table; false if a key column is
/// absent.
#[allow(clippy::too_many_arguments)]
#[inline]
fn fk_hashes(plan: &TablePlan, image: &[Val], data: &[u8], out: &mut Vec<i64>, pykeys: &mut PyKeys,
             mut labels: Option<&mut Vec<String>>, mut tags: Option<&mut Vec<i64>>,
             sc: &mut Scratch) -> Result<bool, super::framing::Abort> {
    let mut complete = true;
    for (fi, fk) in plan.fks.iter().enumerate() {
        if read_parts(plan, image, data, &fk.parts, fk.py, false, false, false, sc) == Parts::Absent {
            complete = false;
            continue;
        }
        if fk.py {
            let n = py_key_hashes(pykeys, true, fi, image, data, &fk.parts, out, labels.as_deref_mut())?;
            if let Some(t) = tags.as_deref_mut() {
                t.resize(t.len() + n, fk.ref_tag);
            }
            continue;
        }
        out.push(key_tuple_hash(&fk.head, &sc.vals));
        if let Some(l) = labels.as_deref_mut() {
            l.push(int_label(&fk.label, &sc.ints, &fk.label_tail));
        }
        if let Some(t) = tags.as_deref_mut() {
            t.push(fk.ref_tag);
        }
    }
    Ok(complete)
}
