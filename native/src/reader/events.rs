//! Decoders for the events on the hot path: FORMAT_DESCRIPTION (post-header lengths), GTID /
//! ANONYMOUS_GTID, QUERY and XID. Layouts follow `lagadvisor.binlog.events` (the reference),
//! itself from mysql-server `libs/mysql/binlog/event/{control_events,statement_events}.cpp`.
//! Every other event type is decoded (and validated) by the reference through a callback.

use super::framing::{Abort, Cursor, RawEvent, Res, HEADER_LEN};

/// What the reader needs of a FORMAT_DESCRIPTION event.
#[derive(Clone)]
pub struct Fde {
    pub post_header_len: Vec<u8>,
}

impl Fde {
    pub fn default_fde() -> Self {
        Fde { post_header_len: Vec::new() }
    }
    /// `FormatDescription.post_header`.
    pub fn post_header(&self, type_code: u8, default: usize) -> usize {
        let i = type_code as usize;
        if i >= 1 && i - 1 < self.post_header_len.len() {
            self.post_header_len[i - 1] as usize
        } else {
            default
        }
    }
}

/// `events.decode_fde` (validation beyond this is done by the reference callback).
pub fn decode_fde(raw: &RawEvent) -> Res<Fde> {
    let mut c = Cursor::new(raw.data, HEADER_LEN, raw.body_end);
    let v = c.uint(2, "binlog_version")?;
    if v != 4 {
        return Err(Abort::new("binlog version != 4"));
    }
    c.skip(50, "server_version")?;
    c.skip(4, "create_timestamp")?;
    let hl = c.u8("common_header_len")?;
    if (hl as usize) < HEADER_LEN {
        return Err(Abort::new("common header length < 19"));
    }
    Ok(Fde { post_header_len: c.rest().to_vec() })
}

/// GTID_LOG_EVENT / ANONYMOUS_GTID_LOG_EVENT fields (`events.Gtid`).
#[derive(Clone, Default)]
pub struct Gtid {
    pub anonymous: bool,
    pub sid: [u8; 16],
    pub gno: u64,
    pub tag: Option<String>,
    /// The GTID text when the reference decoded the event (tagged GTIDs).
    pub text: Option<String>,
    pub last_committed: Option<i64>,
    pub sequence_number: Option<i64>,
    pub immediate_commit_timestamp: i64,
    pub original_commit_timestamp: i64,
    pub transaction_length: u64,
    pub immediate_server_version: u32,
    pub original_server_version: u32,
}

/// `Gtid_event::Gtid_event(const char*, const Format_description_event*)`, as
/// `events.decode_gtid`: optional trailing fields gated on the bytes left.
pub fn decode_gtid(raw: &RawEvent) -> Res<Gtid> {
    let mut c = Cursor::new(raw.data, HEADER_LEN, raw.body_end);
    c.u8("gtid_flags")?;
    let sid_b = c.bytes(16, "sid")?;
    let mut sid = [0u8; 16];
    sid.copy_from_slice(sid_b);
    let gno = c.uint(8, "gno")?;
    let mut g = Gtid { anonymous: raw.type_code == 34, sid, gno, ..Default::default() };
    if c.remaining() >= 17 {
        let lt = c.u8("lt_type")?;
        if lt != 2 {
            return Err(Abort::new("unknown logical timestamp typecode"));
        }
        // Python ints: u64 values above i64::MAX cannot be kept exactly here.
        let lc = c.uint(8, "last_committed")?;
        let sn = c.uint(8, "sequence_number")?;
        if lc > i64::MAX as u64 || sn > i64::MAX as u64 {
            return Err(Abort::new("logical clock beyond 2^63"));
        }
        g.last_committed = Some(lc as i64);
        g.sequence_number = Some(sn as i64);
    }
    if c.remaining() > 0 {
        let mut imm = c.uint(7, "immediate_commit_timestamp")?;
        let orig;
        if imm & (1 << 55) != 0 {
            imm &= !(1u64 << 55);
            orig = c.uint(7, "original_commit_timestamp")?;
        } else {
            orig = imm;
        }
        g.immediate_commit_timestamp = imm as i64;
        g.original_commit_timestamp = orig as i64;
        if c.remaining() > 0 {
            g.transaction_length = c.packed("transaction_length")?;
        }
        if c.remaining() >= 4 {
            let mut iv = c.uint(4, "immediate_server_version")? as u32;
            let ov;
            if iv & (1 << 31) != 0 {
                iv &= !(1u32 << 31);
                ov = c.uint(4, "original_server_version")? as u32;
            } else {
                ov = iv;
            }
            g.immediate_server_version = iv;
            g.original_server_version = ov;
        }
        if c.remaining() >= 8 {
            c.uint(8, "commit_group_ticket")?;
        }
    }
    if c.remaining() != 0 {
        return Err(Abort::new("GTID event: unexpected trailing bytes"));
    }
    Ok(g)
}

/// Lower-case hyphenated UUID text, as `str(uuid.UUID(bytes=sid))`.
pub fn uuid_text(sid: &[u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(36);
    for (i, b) in sid.iter().enumerate() {
        if i == 4 || i == 6 || i == 8 || i == 10 {
            s.push('-');
        }
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// QUERY_EVENT: `(thread_id, db, query)` as `events.decode_query` reads them.
pub fn decode_query<'a>(raw: &RawEvent<'a>, post: usize) -> Res<(u32, &'a [u8], &'a [u8])> {
    let mut c = Cursor::new(raw.data, HEADER_LEN, raw.body_end);
    let thread_id = c.uint(4, "thread_id")? as u32;
    c.uint(4, "exec_time")?;
    let db_len = c.u8("db_len")? as usize;
    c.uint(2, "error_code")?;
    let status_len = if post >= 13 { c.uint(2, "status_vars_len")? as usize } else { 0 };
    if post > 13 {
        c.skip(post - 13, "post-header")?;
    }
    c.skip(status_len, "status_vars")?;
    let db = c.bytes(db_len, "db")?;
    c.skip(1, "db terminator")?;
    Ok((thread_id, db, c.rest()))
}
