"""Benchmark tables written into the documentation, so that the pages under docs/ say what the
last run measured.

A page holds each table between two marker comments::

    <!-- bench:throughput -->
    ...the table the last run wrote...
    <!-- /bench:throughput -->

:func:`write_table` replaces what is between them (the markers stay); a page without the
markers is left alone and the caller is told (a renamed section should not be overwritten by
guesswork). Every bench that prints a table calls it with its table, the command line and the
date, unless it is run with ``--no-docs``.
"""

from __future__ import annotations

import re
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def conditions(extra: str = "") -> str:
    """One line saying when and how a table was made: the date, the command line, and ``extra``
    (the machine, the input)."""
    cmd = "python3 " + " ".join(shlex.quote(a) for a in [f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    return f"Written by `{cmd}` on {time.strftime('%Y-%m-%d %H:%M')}" + (f"; {extra}" if extra else "") + "."


def write_table(page: str, name: str, table: str, note: str = "") -> bool:
    """Put ``note`` (a line of conditions) and ``table`` (markdown) between the ``bench:name``
    markers of ``docs/page``; False (and a line on stderr) when the page has no such markers."""
    path = DOCS / page
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        print(f"{path}: no {start} ... {end} markers: the table was not written there", file=sys.stderr)
        return False
    body = "\n".join(part for part in (note.strip(), table.strip()) if part)
    path.write_text(pattern.sub(lambda _m: f"{start}\n{body}\n{end}", text, count=1), encoding="utf-8")
    print(f"wrote the table into {path.relative_to(ROOT)} ({name})", file=sys.stderr)
    return True
