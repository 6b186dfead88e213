"""The facts of a long run in bounded memory: column chunks, spilled to a file past a limit.

The native reader hands the facts over one file at a time (``Analyzer.take_facts(keep=True)``);
a :class:`FactStore` keeps up to :func:`spill_limit` transactions in memory and writes the rest,
column by column, to an unlinked temporary file under the cache directory
(``$LAGADVISOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/lagadvisor``, else ``~/.cache/lagadvisor``;
the system's temporary directory when none is writable). Simulations read it back chunk by
chunk (:meth:`FactStore.chunks`, ``sim.stream``), so a day of binlogs costs disk, not memory:
112 bytes per transaction on disk, the chunk being simulated in memory.

A store that never spilled is also a :class:`~.columns.FactList` over one set of columns, so every
consumer written for those (``fact_column``) reads it unchanged.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import replace

from .build import MARIADB_COLUMNS, mariadb_fields
from .columns import FACT_COLUMNS, FactColumns

#: Transactions kept in memory before the store spills (about 110 MB of columns, plus the
#: simulation inputs cached while it has not spilled, about 56 bytes per transaction).
DEFAULT_SPILL = 1_048_576


def spill_limit() -> int:
    """``LAGADVISOR_SPILL_TRANSACTIONS`` (tests make it small), else :data:`DEFAULT_SPILL`."""
    v = os.environ.get("LAGADVISOR_SPILL_TRANSACTIONS", "")
    return int(v) if v.isdigit() else DEFAULT_SPILL


def cache_dir() -> str | None:
    """Where a spill file goes: the first writable of the cache directories (None: the
    system's temporary directory)."""
    cands = [os.environ.get("LAGADVISOR_CACHE_DIR", "")]
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    cands.append(os.path.join(xdg, "lagadvisor") if xdg else "")
    cands.append(os.path.join(os.path.expanduser("~"), ".cache", "lagadvisor"))
    for d in cands:
        if not d:
            continue
        try:
            os.makedirs(d, exist_ok=True)
        except OSError:
            continue
        if os.access(d, os.W_OK):
            return d
    return None


class SpillFile:
    """An unlinked file under :func:`cache_dir` that byte runs are appended to and read back
    with ``pread`` (simulations may read it on several threads at once)."""

    def __init__(self, prefix: str, what: str) -> None:
        self._what = what
        self._f = tempfile.TemporaryFile(prefix=f"lagadvisor-{prefix}-", dir=cache_dir())

    def append(self, *blobs: bytes) -> int:
        """Write ``blobs`` one after the other at the end; the offset of the first."""
        f = self._f
        f.seek(0, os.SEEK_END)
        pos = f.tell()
        for b in blobs:
            f.write(b)
        f.flush()
        return pos

    def read(self, pos: int, n: int, chunk: int) -> bytes:
        """``n`` bytes at ``pos`` (of the run written at ``chunk``, for the error)."""
        b = os.pread(self._f.fileno(), n, pos)
        if len(b) != n:
            raise OSError(f"{self._what} spill file: short read at {chunk}")
        return b

    def close(self) -> None:
        self._f.close()


class FactStore(Sequence):
    """The facts of a run in binlog order, as chunks of :class:`FactColumns`: in memory while
    small, spilled to disk past :func:`spill_limit`. Also tracks what the simulations need of
    the whole before reading it again: the earliest and latest known commit times."""

    def __init__(self, limit: int | None = None) -> None:
        self._limit = spill_limit() if limit is None else limit
        self._mem: list[FactColumns] = []
        self._disk: list[tuple[int, int, bool]] = []   # (file offset, transactions, MariaDB's columns) per spilled chunk
        self._file = None
        self._n = 0
        self._dbsets: list[tuple[str, ...]] = []
        self._dbset_ids: dict[tuple[str, ...], int] = {}
        self._whole: FactColumns | None = None
        #: the simulation inputs built from the columns while they are in memory (sim.stream)
        self.sim_inputs: dict = {}
        self.first_ts = 0       # earliest non-zero source commit time (us)
        self.last_ts = 0        # latest
        self.nbytes_total = 0

    # -- filling ------------------------------------------------------------------------------
    def add(self, cols: FactColumns) -> None:
        """Append the next transactions (their ``dbset`` values index ``cols.dbsets``, which
        later chunks may extend)."""
        n = len(cols)
        cols = self._global_dbsets(cols)
        if not n:
            return
        ts = [v for v in cols.commit_ts_us if v]
        if ts:
            lo, hi = min(ts), max(ts)
            self.first_ts = lo if not self.first_ts else min(self.first_ts, lo)
            self.last_ts = max(self.last_ts, hi)
        self.nbytes_total += sum(cols.nbytes)
        self._whole = None
        self._n += n
        if self._file is None and self._n <= self._limit:
            self._mem.append(cols)
            return
        if self._file is None:
            self._file = SpillFile("facts", "fact")
            for c in self._mem:
                self._write(c)
            self._mem = []
        self._write(cols)

    def _global_dbsets(self, cols: FactColumns) -> FactColumns:
        """The chunk with its ``dbset`` values in the store's one list of database sets (the
        native reader's chunks already share it; parts read apart, ``--jobs``, do not)."""
        ids = self._dbset_ids
        local = []
        for d in cols.dbsets:
            if d not in ids:
                ids[d] = len(self._dbsets)
                self._dbsets.append(d)
            local.append(ids[d])
        if local == list(range(len(local))):
            return cols
        return replace(cols, dbset=array("q", (local[k] for k in cols.dbset)), dbsets=self._dbsets)

    def _write(self, cols: FactColumns) -> None:
        names = cols.names()
        self._disk.append((self._file.append(*(getattr(cols, name).tobytes() for name in names)), len(cols),
                           len(names) > len(FACT_COLUMNS)))

    @property
    def spilled(self) -> bool:
        return self._file is not None

    # -- reading ------------------------------------------------------------------------------
    def chunks(self, names: tuple[str, ...] | None = None) -> Iterator[tuple[int, FactColumns]]:
        """``(first index, columns)`` of each chunk, in order; ``names``: only those columns are
        read back from a spill file (the others are empty)."""
        offset = 0
        if self._file is None:
            for c in self._mem:
                yield offset, c if c.dbsets is self._dbsets else _with_dbsets(c, self._dbsets)
                offset += len(c)
            return
        for pos, n, mariadb in self._disk:
            cols = {}
            for k, name in enumerate(FACT_COLUMNS + (MARIADB_COLUMNS if mariadb else ())):
                a = array("q")
                if names is None or name in names:
                    a.frombytes(self._file.read(pos + 8 * n * k, 8 * n, pos))
                cols[name] = a
            yield offset, FactColumns(**cols, dbsets=self._dbsets)
            offset += n

    @property
    def columns(self) -> FactColumns | None:
        """All the columns at once while the store has not spilled (else None: read
        :meth:`chunks`)."""
        if self._file is not None:
            return None
        if self._whole is None:
            if len(self._mem) == 1:
                self._whole = _with_dbsets(self._mem[0], self._dbsets)
            else:
                names = FACT_COLUMNS + (MARIADB_COLUMNS if any(c.commit_id is not None for c in self._mem) else ())
                self._whole = FactColumns(**{name: _concat(_column(c, name) for c in self._mem) for name in names},
                                          dbsets=self._dbsets)
        return self._whole

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        for off, c in self.chunks():
            if i < off + len(c):
                return _one(c, i - off)
        raise IndexError(i)

    def __iter__(self):
        for _, c in self.chunks():
            yield from c.build()

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FactStore({self._n} transactions{', spilled' if self.spilled else ''})"

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def _with_dbsets(c: FactColumns, dbsets) -> FactColumns:
    return replace(c, dbsets=dbsets)


def _column(c: FactColumns, name: str) -> array:
    """Column ``name`` of ``c``; MariaDB's as zeros where ``c`` has none (no commit id, no flags)."""
    col = getattr(c, name)
    return array("q", bytes(8 * len(c))) if col is None else col


def _concat(parts) -> array:
    out = array("q")
    for p in parts:
        out.extend(p)
    return out


def _one(c: FactColumns, i: int):
    from .build import TrxFacts

    cid, flags = mariadb_fields(c.commit_id[i], c.mariadb[i]) if c.mariadb is not None else (None, 0)
    return TrxFacts(c.file_idx[i], c.seq[i], (c.recorded[i], c.commit_order[i], c.writeset[i], c.writeset_session[i]),
                    c.commit_ts_us[i], c.inserts[i], c.updates[i], c.deletes[i], c.nbytes[i], c.dbsets[c.dbset[i]],
                    cid, flags, c.scan_rows[i], c.fk_checks[i], c.index_entries[i], c.events[i])


__all__ = ["DEFAULT_SPILL", "FactStore", "cache_dir", "spill_limit"]


class LogStore:
    """Byte chunks in order (the native reader's writeset log, handed over in chunks of at most
    ``native.run.WS_LOG_CHUNK`` int64s), in memory up to ``limit`` bytes, then in a
    :class:`SpillFile` like the facts."""

    def __init__(self, limit: int | None = None) -> None:
        self._limit = spill_limit() * 64 if limit is None else limit
        self._mem: list[bytes] = []
        self._disk: list[tuple[int, int]] = []
        self._file = None
        self._bytes = 0
        #: transactions whose primary-key what-if the log cannot replay exactly (see
        #: ``Analyzer.collect_ws_log``): that what-if reads the files again
        self.unsafe = 0

    def add(self, chunk: bytes, unsafe: int = 0) -> None:
        self.unsafe += unsafe
        if not chunk:
            return
        self._bytes += len(chunk)
        if self._file is None and self._bytes <= self._limit:
            self._mem.append(chunk)
            return
        if self._file is None:
            self._file = SpillFile("wslog", "writeset log")
            for c in self._mem:
                self._disk.append((self._file.append(c), len(c)))
            self._mem = []
        self._disk.append((self._file.append(chunk), len(chunk)))

    @property
    def spilled(self) -> bool:
        return self._file is not None

    def chunks(self) -> Iterator[bytes]:
        if self._file is None:
            yield from self._mem
            return
        for pos, n in self._disk:
            yield self._file.read(pos, n, pos)

    def __len__(self) -> int:
        return self._bytes

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


class ReplayedFacts:
    """A what-if's facts without reading the files again: the main pass's facts with the
    WRITESET, WRITESET_SESSION, scan-rows and foreign-key-check columns re-derived, chunk by chunk, from its
    writeset log (``native.WsReplay``: the same trackers with another history size, the ignored
    rows' hashes left out, the keyless tables given a primary key hashed by the shadow plans the
    main pass hashed alongside, the foreign keys to dropped parents left out). What the
    simulations read of a store (``chunks``, the commit-time bounds, the input cache) it has;
    the other columns are the store's own (a what-if changes nothing else)."""

    def __init__(self, base: FactStore, log: LogStore, history_size: int, what_if) -> None:
        self.base, self.log = base, log
        self.history_size = history_size
        self.what_if = what_if
        self.sim_inputs: dict = {}
        self.first_ts, self.last_ts, self.nbytes_total = base.first_ts, base.last_ts, base.nbytes_total

    @property
    def spilled(self) -> bool:
        return self.base.spilled

    def __len__(self) -> int:
        return len(self.base)

    def chunks(self, names: tuple[str, ...] | None = None) -> Iterator[tuple[int, FactColumns]]:
        from dataclasses import replace

        from ..native.loader import load

        w = self.what_if
        replay = load().WsReplay(self.history_size, sorted(w.ignore_rows), sorted(w.add_primary_key),
                                 sorted(w.drop_foreign_keys_to))
        logs = self.log.chunks()
        cols = ("writeset", "writeset_session", "scan_rows", "fk_checks")
        pending = {name: array("q") for name in cols}
        for off, c in self.base.chunks(names):
            n = len(c)
            while len(pending["writeset"]) < n:
                chunk = next(logs, None)
                if chunk is None:
                    raise RuntimeError("the writeset log is shorter than the facts")
                for name, b in zip(cols, replay.feed(chunk)):
                    pending[name].frombytes(b)
            taken = {}
            for name in cols:
                taken[name], pending[name] = pending[name][:n], pending[name][n:]
            yield off, replace(c, **taken)
        if pending["writeset"] or next(logs, None) is not None:
            raise RuntimeError("the writeset log is longer than the facts")

    def __iter__(self):
        for _, c in self.chunks():
            yield from c.build()
