"""Binlog files streamed from a live server, read by the same decoders as files on disk.

The replication protocol (COM_REGISTER_SLAVE, ``@master_binlog_checksum``, COM_BINLOG_DUMP)
is python-mysql-replication's ``BinLogStreamReader``; lagadvisor only takes the raw event
bytes from its connection (each packet is ``0x00`` + one whole event, checksum included), so
a streamed file decodes exactly as the file would. Artificial events the dump thread adds
(the fake ROTATE at the start, the FORMAT_DESCRIPTION re-sent with ``log_pos = 0`` after a
resume, heartbeats) are dropped; what remains is the file's byte stream from offset 4.

One file is exactly that file: it ends at its last event, a ROTATE (a rotation) or a STOP (the
server shut down and started the next file when it came back), at the fake ROTATE naming another
file (a file a crash left without either), or at the end of the stream (the active file). The
dump thread itself streams on into the next files; those are streamed on their own.

Needs REPLICATION SLAVE (the dump) and REPLICATION CLIENT (SHOW BINARY LOGS); writes nothing.
A lost connection is resumed from the end of the last event received (file and position), up
to ``retries`` times. Sources: ``sql/rpl_binlog_sender.cc`` (``Binlog_sender::fake_rotate_event``,
``send_format_description_event`` clears ``log_pos`` when not starting at 4).
"""

from __future__ import annotations

import os
import struct
import time
from typing import Iterator

from ..binlog.constants import BINLOG_MAGIC, LOG_EVENT_HEADER_LEN, EventType
from ..binlog.scan import FileSummary, read_stream
from ..binlog.transactions import ColumnSelector, Transaction
from ..errors import BinlogError
from .tls import one_line

LOG_EVENT_ARTIFICIAL_F = 0x20
_SKIP_TYPES = frozenset({int(EventType.HEARTBEAT_LOG_EVENT), int(EventType.HEARTBEAT_LOG_EVENT_V2)})
#: Events that end a binlog file (sql/binlog.cc: MYSQL_BIN_LOG::close writes a STOP_EVENT
#: at shutdown, new_file_impl a ROTATE_EVENT at a rotation).
_LAST_TYPES = frozenset({int(EventType.ROTATE_EVENT), int(EventType.STOP_EVENT)})
_LOST = (2006, 2013, 2055)  # server gone away, lost connection, lost connection (SSL)


def dump_server_id() -> int:
    """A server_id for the dump connection, unlikely to clash with real replicas."""
    return 0x6C000000 + (os.getpid() & 0xFFFFF)


class LiveFile(str):
    """One binlog file on a server; the string is ``host:port/name`` (what reports show).
    ``read_transactions`` streams it once; files are listed with :func:`list_files`."""

    def __new__(cls, label: str, *_args, **_kw):
        return super().__new__(cls, label)

    def __init__(self, label: str, name: str, size: int, settings: dict, *, server_version: str = "",
                 mariadb: bool = False, retries: int = 5, server_id: int | None = None) -> None:
        self.name = name
        self.size = size
        self.settings = settings
        self.server_version = server_version
        self.mariadb = mariadb
        self.retries = retries
        self.server_id = server_id or dump_server_id()
        self.reconnects = 0

    def read_transactions(self, summary: FileSummary | None = None, selector: ColumnSelector | None = None,
                          *, strict_tail: bool = False) -> Iterator[Transaction]:
        summary = summary if summary is not None else FileSummary(str(self))
        summary.size = self.size
        stream = _DumpStream(self)
        try:
            yield from read_stream(str(self), stream, summary, selector, strict_tail=strict_tail)
        finally:
            stream.close()
            self.reconnects += stream.reconnects
        if stream.reconnects:
            summary.warnings.append(f"{self}: connection lost and resumed {stream.reconnects} time(s)")


class _DumpStream:
    """A read-only file-like object over one file's event stream (binary magic first)."""

    def __init__(self, f: LiveFile) -> None:
        self.f = f
        self.buf = bytearray(BINLOG_MAGIC)
        self.pos = 4               # end of the last event passed on (the resume point)
        self.done = False
        self.reconnects = 0
        self.reader = None
        self.conn = None

    # -- connection ------------------------------------------------------------------------
    def _connect(self) -> None:
        from pymysqlreplication import BinLogStreamReader

        settings = dict(self.f.settings)
        r = BinLogStreamReader(connection_settings=settings, server_id=self.f.server_id,
                               log_file=self.f.name, log_pos=self.pos, resume_stream=True, blocking=False,
                               enable_logging=False)
        try:
            r._BinLogStreamReader__connect_to_stream()  # the dump handshake only; we read raw packets
        except Exception as err:  # pymysql errors and socket errors: one line
            try:
                r.close()
            except Exception:
                pass
            raise _ConnectionLost(_describe(err)) from err
        self.reader, self.conn = r, r._stream_connection

    def close(self) -> None:
        if self.reader is not None:
            try:
                self.reader.close()
            except Exception:
                pass
        self.reader = self.conn = None

    def _packet(self) -> bytes | None:
        """The next event's bytes, or None at the end of the stream."""
        import pymysql

        while True:
            if self.conn is None:
                self._connect()
            try:
                pkt = self.conn._read_packet()
            except (pymysql.err.OperationalError, pymysql.err.InterfaceError, OSError, struct.error) as err:
                code = err.args[0] if getattr(err, "args", None) else None
                if isinstance(err, pymysql.err.OperationalError) and code not in _LOST:
                    raise _ConnectionLost(_describe(err)) from err
                self._lost(err)
                continue
            if pkt.is_eof_packet():
                return None
            data = pkt.get_all_data()
            if not data or data[0] != 0:
                continue
            return bytes(data[1:])

    def _lost(self, err) -> None:
        self.close()
        self.reconnects += 1
        if self.reconnects > self.f.retries:
            raise _ConnectionLost(f"connection lost {self.reconnects} times, last: {_describe(err)}")
        time.sleep(min(4.0, 0.25 * 2 ** (self.reconnects - 1)))

    # -- file-like -------------------------------------------------------------------------
    def _fill(self, n: int) -> None:
        while len(self.buf) < n and not self.done:
            try:
                ev = self._packet()
            except _ConnectionLost as err:
                raise BinlogError(f"streaming from the server: {err}", file=str(self.f), offset=self.pos) from None
            if ev is None:
                self.done = True
                break
            if len(ev) < LOG_EVENT_HEADER_LEN:
                raise BinlogError("streamed event shorter than its header", file=str(self.f), offset=self.pos)
            type_code = ev[4]
            log_pos, flags = struct.unpack_from("<IH", ev, 13)
            if type_code == EventType.ROTATE_EVENT and flags & LOG_EVENT_ARTIFICIAL_F \
                    and not _rotates_to(ev, self.f.name):
                # The dump thread opens the next file with a fake ROTATE naming it: this file
                # ended without a ROTATE of its own (a crash), and nothing after is this file's.
                self.done = True
                break
            if type_code in _SKIP_TYPES or flags & LOG_EVENT_ARTIFICIAL_F or log_pos == 0:
                continue  # fake rotate, FDE re-sent on resume, heartbeat
            if type_code == EventType.FORMAT_DESCRIPTION_EVENT and self.pos > 4:
                continue
            self.buf += ev
            self.pos = log_pos
            if type_code in _LAST_TYPES:
                # The file's last event: a ROTATE (FLUSH BINARY LOGS, size) or a STOP (the server
                # shut down; it starts the next file when it comes back). The dump thread goes on
                # into the next file; that one is streamed on its own.
                self.done = True

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            while not self.done:
                self._fill(len(self.buf) + (1 << 20))
            out, self.buf = bytes(self.buf), bytearray()
            return out
        self._fill(n)
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)


class _ConnectionLost(Exception):
    pass


def _rotates_to(ev: bytes, name: str) -> bool:
    """Whether the ROTATE event ``ev`` (header, 8-byte position, file name, maybe a CRC32)
    names ``name``."""
    target = ev[LOG_EVENT_HEADER_LEN + 8:]
    want = name.encode()
    return target == want or target[:-4] == want


def _describe(err: Exception) -> str:
    """A driver error on one line; an access-denied error names the grant it lacks."""
    args = getattr(err, "args", ())
    if len(args) >= 2 and isinstance(args[0], int):
        text = f"({args[0]}) {one_line(args[1])}"
        if args[0] in (1227, 1045) and "REPLICATION SLAVE" in str(args[1]).upper():
            text = f"the user lacks the REPLICATION SLAVE privilege: {text}"
        return text
    return one_line(err) or type(err).__name__


def _log_index(name: str) -> int | None:
    """The number of ``binlog.000042`` (None for a name without one)."""
    tail = name.rsplit(".", 1)[-1]
    return int(tail) if tail.isdigit() and "." in name else None


def list_files(settings: dict, start: str, stop: str | None = None, **kw) -> list[LiveFile]:
    """The server's binlog files from ``start`` (through ``stop``), via SHOW BINARY LOGS."""
    import pymysql

    server = settings.get("unix_socket") or f"{settings.get('host')}:{settings.get('port')}"
    try:
        conn = pymysql.connect(**settings)
    except Exception as err:
        raise BinlogError(f"cannot connect: {_describe(err)}", file=server) from None
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@version, @@version_comment")
            version, comment = cur.fetchone()
            try:
                cur.execute("SHOW BINARY LOGS")
            except pymysql.err.MySQLError as err:
                raise BinlogError(f"SHOW BINARY LOGS failed (needs REPLICATION CLIENT): {_describe(err)}", file=server) from None
            logs = [(r[0], int(r[1])) for r in cur.fetchall()]
    finally:
        conn.close()
    names = [n for n, _ in logs]
    if start not in names:
        if names and _log_index(start) is not None and _log_index(names[0]) is not None \
                and start.rsplit(".", 1)[0] == names[0].rsplit(".", 1)[0] and _log_index(start) < _log_index(names[0]):
            raise BinlogError(f"--from {start}: purged from the server; the first binary log it still has is "
                              f"{names[0]}", file=server)
        raise BinlogError(f"--from {start}: not among the server's binary logs ({names[0] if names else 'none'} .. "
                          f"{names[-1] if names else 'none'})", file=server)
    out = []
    host = f"{settings.get('host')}:{settings.get('port')}"
    mariadb = "mariadb" in f"{version} {comment}".lower()
    for name, size in logs[names.index(start):]:
        out.append(LiveFile(f"{host}/{name}", name, size, settings, server_version=version, mariadb=mariadb, **kw))
        if stop is not None and name == stop:
            break
    return out
