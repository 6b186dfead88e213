"""Per-transaction export records, in binlog order (written as JSONL or CSV by
:mod:`lagadvisor.report.records`).

:func:`export_records` reads the run with the native core when it can (one column per field,
``Analyzer.collect_records``) and with the reference otherwise; the records are the same
(``tests/native/test_commands.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..binlog import Transaction
from ..depgraph.pipeline import ClockOptions, ClockRun
from ..depgraph.read import Collectors, ReadPolicy, ReadRequest, read
from ..depgraph.policies import Fallback
from ..kinds import Policy
from .results import caveat_line

if TYPE_CHECKING:
    from ..native.results import NativeRecords


def _plain(v: Any) -> Any:
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return "0x" + v.hex()
    return v


def transaction_record(t: Transaction, *, keys: bool = False,
                       key_columns: dict[str, tuple[tuple[int, str], ...]] | None = None) -> dict[str, Any]:
    """One transaction's export record. With ``keys``, each row image's key columns by name
    (``key_columns``: per table, the (index, name) of its unique keys' columns, as the writeset
    read them from the binlog's row metadata or the schema; a table without a unique key has an
    empty image); a table whose definition is not known gets ``before``/``after`` null and
    ``"keys_known": false``."""
    rec: dict[str, Any] = {
        "file": t.file,
        "start_offset": t.start_offset,
        "end_offset": t.end_offset,
        "gtid": t.gtid,
        "sequence_number": t.sequence_number,
        "last_committed": t.last_committed,
        "thread_id": t.thread_id,
        "commit_ts_us": t.commit_ts_us or None,
        "immediate_commit_ts_us": t.immediate_commit_timestamp or None,
        "rows": t.rows,
        "bytes": t.bytes,
        "tables": [s.table for s in t.tables],
        "ddl": t.ddl,
        "statement_based": t.statement_based,
        "xa": t.xa,
        "incident": t.incident,
        "incomplete": t.incomplete,
        "compressed": t.compressed,
    }
    if t.commit_id is not None or t.domain_id is not None:
        rec["commit_id"] = t.commit_id
        rec["domain_id"] = t.domain_id
    if keys:
        known = key_columns or {}
        rec["row_keys"] = [_row_keys(c, known.get(c.table)) for c in t.row_changes]
    return rec


def _row_keys(c, columns: tuple[tuple[int, str], ...] | None) -> dict[str, Any]:
    def image(values):
        if values is None or columns is None:
            return None
        return {name: _plain(values[i]) for i, name in columns if i in values}

    out = {"table": c.table, "kind": c.kind.name, "before": image(c.before), "after": image(c.after)}
    if columns is None:
        out["keys_known"] = False
    return out


_NONE = -(1 << 63)  # None in a native record column
_FALLBACKS = [f.value for f in Fallback]  # the native reason codes, in the enum's order


def native_records(path: str, r: NativeRecords):
    """The export records of one file from ``Analyzer.take_records``, as
    :func:`transaction_record` plus ``computed`` and ``fallback`` build them."""
    names, tables, fallbacks = r.names, r.tables, _FALLBACKS
    first = 0
    for (so, eo, lc, sn, th, cts, imm, rows, nbytes, flags, co, ws, wss, fb, gtid, end) in zip(
            r.start_offset, r.end_offset, r.last_committed, r.sequence_number, r.thread_id, r.commit_ts_us,
            r.immediate_commit_ts_us, r.rows, r.nbytes, r.flags, r.commit_order, r.writeset, r.writeset_session,
            r.fallback, r.gtids, r.table_ends):
        yield {
            "file": path, "start_offset": so, "end_offset": eo, "gtid": gtid,
            "sequence_number": None if sn == _NONE else sn,
            "last_committed": None if lc == _NONE else lc,
            "thread_id": None if th == _NONE else th,
            "commit_ts_us": cts or None, "immediate_commit_ts_us": imm or None,
            "rows": rows, "bytes": nbytes, "tables": [names[k] for k in tables[first:end]],
            "ddl": bool(flags & 1), "statement_based": bool(flags & 2), "xa": bool(flags & 4),
            "incident": bool(flags & 8), "incomplete": bool(flags & 16), "compressed": bool(flags & 32),
            "computed": {Policy.COMMIT_ORDER: co, Policy.WRITESET: ws, Policy.WRITESET_SESSION: wss},
            "fallback": None if fb < 0 else fallbacks[fb],
        }
        first = end


def export_records(paths: list[str], options: ClockOptions, run: ClockRun, emit: Callable[[dict], None], *,
                   keys: bool = False, on_progress=None, on_transaction=None) -> list[str]:
    """Call ``emit`` with every transaction's record, in binlog order; return the read's
    warnings (truncated tails, unknown schemas, caveats) as ``export`` prints them.

    The native core reads the run when it can (not with ``keys``: the reference decodes the
    row images), handing records over file by file; if it gives the run back after some
    files, the reference reads the run again and the records already emitted are skipped (the
    two give the same records, so the output is the reference's, whole)."""
    emitted = 0

    def per_file(_i: int, path: str, d: dict) -> None:
        nonlocal emitted
        for rec in native_records(path, d):
            emit(rec)
            emitted += 1

    skip = [0]  # the records already emitted when the reference reads after the native core

    def observe(_s, t, ws, c) -> None:
        if on_transaction is not None:
            on_transaction(t)
        if skip[0] < emitted:
            skip[0] += 1
            return
        rec = transaction_record(t, keys=keys, key_columns=ws.key_columns if ws is not None else None)
        rec["computed"] = c.as_dict()
        rec["fallback"] = c.fallback.value if c.fallback else None
        emit(rec)

    r = read(ReadRequest(tuple(paths), options, run, Collectors(records=per_file, observe=observe),
                         ReadPolicy(native=not keys), on_progress))
    notes = [w for s in r.summaries for w in s.warnings]
    return notes + _notes(r.notes.unknown, r.notes.caveats)


def _notes(unknown, caveats) -> list[str]:
    out = [f"{what} ({n} transactions fell back)" for what, n in sorted(unknown)]
    out += [caveat_line(what, n) for what, n in sorted(caveats)]
    return out
