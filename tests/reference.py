"""Reduce the reference readers' text output to one record per transaction.

The fixtures under ``fixtures/`` carry a ``reference.tsv`` made by these
functions from the output of the servers' own readers, so lagadvisor's decoder
can be checked against them without running a server:

* ``mysqlbinlog`` (MySQL 9.x, no ``-v``): for each GTID, ANONYMOUS_GTID or tagged
  GTID event the header comment line::

      #261122  4:10:05 server id 1  end_log_pos 235 CRC32 0x9b4591a1 \tGTID\tlast_committed=0\tsequence_number=1\t...

  followed (a few lines later) by ``SET @@SESSION.GTID_NEXT= 'uuid:N'/*!*/;``
  (``'uuid:tag:N'`` for a tagged GTID, ``'ANONYMOUS'`` without GTIDs).  The GTID
  event sits outside a compressed Transaction_Payload, so compressed binlogs
  read the same way.
* ``mariadb-binlog`` (MariaDB 10.11): the GTID event header line::

      #261122  4:09:46 server id 1  end_log_pos 300 CRC32 0x... \tGTID 0-1-5 cid=12 trans

  where ``cid=N`` (the group-commit id) is present only for group commits.

Stdlib only.  ``format_tsv`` / ``read_tsv`` write and read ``reference.tsv``:
a header line, then one tab-separated line per transaction in binlog order:
``file  gtid  last_committed  sequence_number`` (MySQL; gtid ``ANONYMOUS`` for
None) or ``file  gtid  commit_id`` (MariaDB; commit_id ``-`` for None).
"""

from __future__ import annotations

import os
import re

__all__ = [
    "MYSQL_HEADER", "MARIADB_HEADER", "ReferenceFormatError",
    "mysqlbinlog_transactions", "mariadb_transactions", "format_tsv", "read_tsv",
]

MYSQL_HEADER = ("file", "gtid", "last_committed", "sequence_number")
MARIADB_HEADER = ("file", "gtid", "commit_id")

# An event header comment starts with "#YYMMDD" (a digit); "###" row dumps of -v
# output never do, so column values that happen to contain "last_committed="
# cannot be mistaken for a GTID event.
_MYSQL_GTID_LINE = re.compile(
    r"^#\d.*\tlast_committed=(?P<lc>\d+)\tsequence_number=(?P<seq>\d+)(?:\t|$)")
_GTID_NEXT = re.compile(r"^SET @@SESSION\.GTID_NEXT= '(?P<gtid>[^']*)'")
_MARIADB_GTID_LINE = re.compile(
    r"^#\d.*\tGTID (?P<gtid>\d+-\d+-\d+)(?: cid=(?P<cid>\d+))?(?:\s|$)")


class ReferenceFormatError(ValueError):
    """The reference reader's output does not have the expected shape."""


def mysqlbinlog_transactions(text: str) -> list[tuple[str | None, int, int]]:
    """``(gtid, last_committed, sequence_number)`` per transaction in ``mysqlbinlog`` output.

    *gtid* is ``"uuid:N"`` or ``"uuid:tag:N"`` exactly as printed in
    ``SET @@SESSION.GTID_NEXT``, or None for an ANONYMOUS_GTID event.
    """
    records: list[tuple[str | None, int, int]] = []
    pending: tuple[int, int] | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            m = _MYSQL_GTID_LINE.match(line)
            if m:
                if pending is not None:
                    raise ReferenceFormatError(f"line {lineno}: GTID event without GTID_NEXT before it")
                pending = (int(m.group("lc")), int(m.group("seq")))
            continue
        if pending is not None and line.startswith("SET @@SESSION.GTID_NEXT"):
            m = _GTID_NEXT.match(line)
            if not m:
                raise ReferenceFormatError(f"line {lineno}: unreadable GTID_NEXT: {line!r}")
            gtid = m.group("gtid")
            if gtid == "AUTOMATIC":
                raise ReferenceFormatError(f"line {lineno}: GTID event followed by AUTOMATIC")
            records.append((None if gtid == "ANONYMOUS" else gtid, *pending))
            pending = None
    if pending is not None:
        raise ReferenceFormatError("output ends after a GTID event without its GTID_NEXT")
    return records


def mariadb_transactions(text: str) -> list[tuple[str, int | None]]:
    """``(gtid, commit_id)`` per transaction in ``mariadb-binlog`` output.

    *gtid* is ``"domain-server-seq"``; *commit_id* is the ``cid=N`` of a group
    commit, else None.
    """
    records: list[tuple[str, int | None]] = []
    for line in text.splitlines():
        if line.startswith("#"):
            m = _MARIADB_GTID_LINE.match(line)
            if m:
                cid = m.group("cid")
                records.append((m.group("gtid"), None if cid is None else int(cid)))
    return records


def _cell(value: object) -> str:
    text = str(value)
    if "\t" in text or "\n" in text:
        raise ValueError(f"TSV cell contains a tab or newline: {text!r}")
    return text


def format_tsv(records) -> str:
    """Reference TSV text for records ``(file, gtid|None, last_committed, sequence_number)``
    (MySQL) or ``(file, gtid, commit_id|None)`` (MariaDB); all records must have one shape.
    """
    records = list(records)
    widths = {len(r) for r in records}
    if len(widths) > 1:
        raise ValueError(f"records of mixed shapes: {sorted(widths)}")
    width = widths.pop() if widths else 4
    if width == 4:
        lines = ["\t".join(MYSQL_HEADER)]
        for file, gtid, lc, seq in records:
            lines.append("\t".join(_cell(v) for v in (
                file, "ANONYMOUS" if gtid is None else gtid, int(lc), int(seq))))
    elif width == 3:
        lines = ["\t".join(MARIADB_HEADER)]
        for file, gtid, cid in records:
            lines.append("\t".join(_cell(v) for v in (file, gtid, "-" if cid is None else int(cid))))
    else:
        raise ValueError(f"records must have 4 (MySQL) or 3 (MariaDB) fields, not {width}")
    return "\n".join(lines) + "\n"


def read_tsv(path: str | os.PathLike) -> list[tuple]:
    """Read a reference TSV written by :func:`format_tsv` back into typed tuples."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not lines:
        raise ReferenceFormatError(f"{path}: empty file")
    header = tuple(lines[0].split("\t"))
    out: list[tuple] = []
    for n, line in enumerate(lines[1:], 2):
        cells = line.split("\t")
        if len(cells) != len(header):
            raise ReferenceFormatError(f"{path}:{n}: {len(cells)} fields, expected {len(header)}")
        if header == MYSQL_HEADER:
            file, gtid, lc, seq = cells
            out.append((file, None if gtid == "ANONYMOUS" else gtid, int(lc), int(seq)))
        elif header == MARIADB_HEADER:
            file, gtid, cid = cells
            out.append((file, gtid, None if cid == "-" else int(cid)))
        else:
            raise ReferenceFormatError(f"{path}: unknown header {lines[0]!r}")
    return out
