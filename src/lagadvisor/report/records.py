"""Per-transaction export records (JSONL and CSV), in binlog order."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ..binlog import Transaction

CSV_FIELDS = ("file", "start_offset", "end_offset", "gtid", "sequence_number", "last_committed",
              "thread_id", "commit_ts_us", "immediate_commit_ts_us", "rows", "bytes", "tables",
              "ddl", "statement_based", "xa", "incident", "incomplete", "compressed", "commit_id",
              "computed_commit_order", "computed_writeset", "computed_writeset_session", "fallback")


def _plain(v: Any) -> Any:
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return "0x" + v.hex()
    return v


def transaction_record(t: Transaction, *, keys: bool = False) -> dict[str, Any]:
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
        rec["row_keys"] = [
            {"table": c.table, "kind": c.kind.name,
             "before": None if c.before is None else {str(k): _plain(v) for k, v in sorted(c.before.items())},
             "after": None if c.after is None else {str(k): _plain(v) for k, v in sorted(c.after.items())}}
            for c in t.row_changes]
    return rec


def jsonl_line(rec: dict[str, Any]) -> str:
    return json.dumps(rec, separators=(",", ":"), sort_keys=False, ensure_ascii=False)


class CsvWriter:
    def __init__(self, out: io.TextIOBase) -> None:
        self._w = csv.DictWriter(out, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
        self._w.writeheader()

    def write(self, rec: dict[str, Any]) -> None:
        row = dict(rec)
        row["tables"] = ";".join(rec["tables"])
        computed = rec.get("computed") or {}
        row["computed_commit_order"] = computed.get("COMMIT_ORDER")
        row["computed_writeset"] = computed.get("WRITESET")
        row["computed_writeset_session"] = computed.get("WRITESET_SESSION")
        self._w.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in CSV_FIELDS})
