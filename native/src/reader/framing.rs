//! Event framing: the 19-byte common header, event sizes and CRC32 footers.
//!
//! Mirrors `lagadvisor.binlog.framing` (the reference) for well-formed input. Anything the
//! reference reports as an error or warning (truncation, bad sizes, checksum mismatch) is not
//! reported here: the native reader stops with [`Abort`] and the caller re-reads the whole run
//! with the Python reference, so messages, offsets and partial results are the reference's own.
//! References: mysql-server `libs/mysql/binlog/event/binlog_event.h` (`Log_event_header`,
//! `Log_event_footer`), `Log_event_footer::event_checksum_test` (the FDE's CRC is computed with
//! `LOG_EVENT_BINLOG_IN_USE_F` cleared).

use std::io::Read;

pub const HEADER_LEN: usize = 19;
pub const CHECKSUM_LEN: usize = 4;
pub const MAX_EVENT_SIZE: u64 = 1024 * 1024 * 1024 + 19 + 4 + 1024;
/// Bytes read at a time for an event body (`framing.READ_CHUNK`).
pub const READ_CHUNK: usize = 1 << 20;
pub const FDE: u8 = 15;
pub const START_V3: u8 = 1;
pub const ALG_OFF: u8 = 0;
pub const ALG_CRC32: u8 = 1;
pub const ALG_UNDEF: u8 = 255;

/// Why the native reader stopped: the whole run is redone by the Python reference.
#[derive(Debug)]
pub struct Abort(pub String);

impl Abort {
    pub fn new(msg: impl Into<String>) -> Self {
        Abort(msg.into())
    }
}

pub type Res<T> = Result<T, Abort>;

/// Checked little-endian reads over `data[pos..end]` (style rule 2: every read is checked).
pub struct Cursor<'a> {
    pub data: &'a [u8],
    pub pos: usize,
    pub end: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8], pos: usize, end: usize) -> Self {
        Cursor { data, pos, end: end.min(data.len()) }
    }
    #[inline]
    pub fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }
    #[inline]
    pub fn need(&self, n: usize, what: &str) -> Res<()> {
        if n > self.remaining() {
            return Err(Abort(format!("{what}: needs {n} bytes, {} left", self.remaining())));
        }
        Ok(())
    }
    #[inline]
    pub fn uint(&mut self, n: usize, what: &str) -> Res<u64> {
        self.need(n, what)?;
        let mut v: u64 = 0;
        for (k, b) in self.data[self.pos..self.pos + n].iter().enumerate() {
            v |= (*b as u64) << (8 * k);
        }
        self.pos += n;
        Ok(v)
    }
    #[inline]
    pub fn u8(&mut self, what: &str) -> Res<u8> {
        self.need(1, what)?;
        let v = self.data[self.pos];
        self.pos += 1;
        Ok(v)
    }
    pub fn bytes(&mut self, n: usize, what: &str) -> Res<&'a [u8]> {
        self.need(n, what)?;
        let v = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(v)
    }
    pub fn skip(&mut self, n: usize, what: &str) -> Res<()> {
        self.need(n, what)?;
        self.pos += n;
        Ok(())
    }
    pub fn rest(&mut self) -> &'a [u8] {
        let v = &self.data[self.pos.min(self.end)..self.end];
        self.pos = self.end;
        v
    }
    /// `net_field_length`: 1, 3, 4 or 9 bytes; 251 (SQL NULL) is invalid here.
    pub fn packed(&mut self, what: &str) -> Res<u64> {
        let first = self.u8(what)?;
        match first {
            0..=250 => Ok(first as u64),
            252 => self.uint(2, what),
            253 => self.uint(3, what),
            254 => self.uint(8, what),
            _ => Err(Abort(format!("{what}: invalid packed integer prefix {first}"))),
        }
    }
}

/// `"8.0.32-debug"` -> `(8, 0, 32)`, as `framing.version_tuple`.
pub fn version_tuple(v: &str) -> (u64, u64, u64) {
    let head = v.split('-').next().unwrap_or("");
    let mut parts = [0u64; 3];
    for (i, piece) in head.split('.').take(3).enumerate() {
        let digits: String = piece.chars().take_while(|c| c.is_ascii_digit()).collect();
        parts[i] = if digits.is_empty() { 0 } else { digits.parse::<u64>().unwrap_or(u64::MAX) };
    }
    (parts[0], parts[1], parts[2])
}

/// The server version text of an FDE (bytes 21..71, NUL-terminated, latin-1).
pub fn fde_version_text(data: &[u8]) -> String {
    let raw = &data[HEADER_LEN + 2..(HEADER_LEN + 52).min(data.len())];
    let raw = raw.split(|b| *b == 0).next().unwrap_or(&[]);
    raw.iter().map(|b| *b as char).collect()
}

/// `framing.fde_checksum_alg`.
pub fn fde_checksum_alg(data: &[u8]) -> u8 {
    if data.len() < HEADER_LEN + 2 + 50 {
        return ALG_UNDEF;
    }
    let version = fde_version_text(data);
    let split = if version.to_lowercase().contains("mariadb") { (5, 3, 0) } else { (5, 6, 1) };
    if version_tuple(&version) < split {
        return ALG_UNDEF;
    }
    data[data.len() - CHECKSUM_LEN - 1]
}

fn crc_ok(data: &[u8], type_code: u8) -> bool {
    let n = data.len();
    let stored = u32::from_le_bytes([data[n - 4], data[n - 3], data[n - 2], data[n - 1]]);
    let mut h = crc32fast::Hasher::new();
    if type_code == FDE && data[17] & 1 != 0 {
        h.update(&data[..17]);
        h.update(&[data[17] & !1]);
        h.update(&data[18..n - 4]);
    } else {
        h.update(&data[..n - 4]);
    }
    h.finalize() == stored
}

/// Where the input ended inside an event (`TruncatedEventError`): the offset, the bytes read,
/// and for a truncated body the event's size and type (the reference formats the warning).
#[derive(Clone, Copy, Debug)]
pub struct Truncation {
    pub offset: u64,
    pub got: usize,
    pub size_and_type: Option<(u64, u8)>,
}

/// One framed event; `data` is the whole event and `body_end` excludes the footer.
pub struct RawEvent<'a> {
    pub offset: u64,
    pub timestamp: u32,
    pub type_code: u8,
    pub server_id: u32,
    pub size: u64,
    pub data: &'a [u8],
    pub body_end: usize,
}

/// Cuts a file into events (`framing.EventFramer` for a binlog file: checksums learnt from
/// each FORMAT_DESCRIPTION event).
pub struct Framer<R: Read> {
    src: R,
    buf: Vec<u8>,
    pub offset: u64,
    pub checksum_alg: u8,
    positioned: bool,
    /// Set when the input ended inside an event (a binlog still being written).
    pub truncated: Option<Truncation>,
    /// The regular file being read, when it is one: its size says how many bytes are left, so
    /// an event length past them is known before anything is allocated (`framing.bytes_left`).
    pub sized: Option<std::fs::File>,
}

/// Fill `buf` from `src`: fewer bytes only at its end.
pub fn read_full<R: Read>(src: &mut R, buf: &mut [u8]) -> Res<usize> {
    let mut got = 0;
    while got < buf.len() {
        match src.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Abort(format!("read error: {e}"))),
        }
    }
    Ok(got)
}

impl<R: Read> Framer<R> {
    pub fn new(src: R, base_offset: u64) -> Self {
        Framer { src, buf: Vec::with_capacity(1 << 16), offset: base_offset, checksum_alg: ALG_UNDEF, positioned: true, truncated: None, sized: None }
    }

    /// Consume and check the 4-byte magic.
    pub fn check_magic(&mut self) -> Res<()> {
        let mut m = [0u8; 4];
        let n = read_full(&mut self.src, &mut m)?;
        if n != 4 || m != [0xfe, b'b', b'i', b'n'] {
            return Err(Abort::new("not a binlog (or truncated magic)"));
        }
        Ok(())
    }

    /// The next event, `None` at a clean end of file.
    pub fn next_event(&mut self) -> Res<Option<RawEvent<'_>>> {
        let offset = self.offset;
        let mut header = [0u8; HEADER_LEN];
        let n = read_full(&mut self.src, &mut header)?;
        if n == 0 {
            return Ok(None);
        }
        if n < HEADER_LEN {
            self.truncated = Some(Truncation { offset, got: n, size_and_type: None });
            return Ok(None);
        }
        let timestamp = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let type_code = header[4];
        let server_id = u32::from_le_bytes([header[5], header[6], header[7], header[8]]);
        let size = u32::from_le_bytes([header[9], header[10], header[11], header[12]]) as u64;
        let log_pos = u32::from_le_bytes([header[13], header[14], header[15], header[16]]) as u64;
        if size < HEADER_LEN as u64 || size > MAX_EVENT_SIZE {
            return Err(Abort::new("impossible event length"));
        }
        let size_us = size as usize;
        let want = size_us - HEADER_LEN;
        if self.buf.capacity() > (64 << 20) && size_us <= READ_CHUNK {
            // The buffer of a huge event is not kept for the small ones that follow.
            self.buf = Vec::with_capacity(1 << 16);
        }
        // The bytes left in a regular file: a length past them is a truncation (or corruption)
        // known before the body is read or its buffer sized.
        let left = match (&self.sized, want > READ_CHUNK) {
            (Some(f), true) => f.metadata().ok().map(|m| m.len().saturating_sub(offset + HEADER_LEN as u64)),
            _ => None,
        };
        self.buf.clear();
        self.buf.extend_from_slice(&header);
        let short = matches!(left, Some(l) if l < want as u64);
        let mut got = if short { left.unwrap_or(0) as usize } else { 0 };
        if left.is_some() && !short {
            self.buf.reserve_exact(want); // the bytes are there: one allocation, no regrowth
        }
        // Otherwise the body is read a chunk at a time: a corrupt length never sizes an
        // allocation, the buffer grows only with the bytes actually there (`framing.read_event`).
        while !short && got < want {
            let chunk = (want - got).min(READ_CHUNK);
            let at = self.buf.len();
            self.buf.resize(at + chunk, 0);
            let n = read_full(&mut self.src, &mut self.buf[at..])?;
            got += n;
            if n < chunk {
                self.buf.truncate(at + n);
                break;
            }
        }
        if log_pos != offset + size {
            if self.positioned && got < size_us - HEADER_LEN {
                return Err(Abort::new("event runs past the end and disagrees with its end position"));
            }
            self.positioned = false;
        }
        if got < size_us - HEADER_LEN {
            self.truncated = Some(Truncation { offset, got: HEADER_LEN + got, size_and_type: Some((size, type_code)) });
            return Ok(None);
        }
        if type_code == FDE {
            self.checksum_alg = fde_checksum_alg(&self.buf);
        } else if type_code == START_V3 {
            self.checksum_alg = ALG_UNDEF;
        }
        let alg = self.checksum_alg;
        let mut body_end = size_us;
        if alg == ALG_CRC32 || (type_code == FDE && alg == ALG_OFF) {
            if size_us < HEADER_LEN + CHECKSUM_LEN {
                return Err(Abort::new("no room for the checksum"));
            }
            body_end = size_us - CHECKSUM_LEN;
            if type_code == FDE {
                body_end -= 1;
            }
            if alg == ALG_CRC32 && !crc_ok(&self.buf, type_code) {
                return Err(Abort::new("CRC32 checksum mismatch"));
            }
        }
        self.offset = offset + size;
        Ok(Some(RawEvent { offset, timestamp, type_code, server_id, size, data: &self.buf, body_end }))
    }
}
