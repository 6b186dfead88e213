"""``export``'s writers: the records of :func:`lagadvisor.analysis.records.export_records` as
JSONL lines or CSV rows."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ..kinds import Policy

CSV_FIELDS = ("file", "start_offset", "end_offset", "gtid", "sequence_number", "last_committed",
              "thread_id", "commit_ts_us", "immediate_commit_ts_us", "rows", "bytes", "tables",
              "ddl", "statement_based", "xa", "incident", "incomplete", "compressed", "commit_id",
              "computed_commit_order", "computed_writeset", "computed_writeset_session", "fallback")


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
        row["computed_commit_order"] = computed.get(Policy.COMMIT_ORDER)
        row["computed_writeset"] = computed.get(Policy.WRITESET)
        row["computed_writeset_session"] = computed.get(Policy.WRITESET_SESSION)
        self._w.writerow({k: _cell(row.get(k)) for k in CSV_FIELDS})


def _cell(value: Any) -> Any:
    """A CSV cell: None empty, a boolean ``true``/``false`` (as JSON and SQL tools read it, not
    Python's ``True``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value
