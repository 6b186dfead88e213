"""The fleet table at 80 and 200 columns (names whole, never cut or folded) and the HTML page's escaping, from a
fleet document (no cluster)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from lagadvisor.report.fleet import fleet_json, render_console, render_html
from lagadvisor.fleet.tasks import ServerResult


def _doc():
    row = {"server": "orders-eu-west-1-primary-<b>", "server_version": "10.11.19-MariaDB-0+deb12u1-log",
           "written_policy": "MariaDB", "transactions": 12_345_678,
           "parallelism": {"recorded": 1.0, "WRITESET": 123.456, "COMMIT_ORDER": None},
           "lag_p99_seconds": {"current": 1234.5, "suggested": 0.001},
           "top_finding": {"id": "binlog_transaction_dependency_history_size", "severity": "critical", "title": "t"}}
    ok = ServerResult(row["server"], ["s3://bucket/a/binlog.000001"], advice=None, row=row)
    bad = ServerResult("users-[b]" + "x" * 50, [], error="s3://bucket/users/binlog.000002 at offset 78947 "
                       "(QUERY_EVENT): CRC32 checksum mismatch")
    return fleet_json([ok, bad])


def _render(doc, width: int) -> str:
    buf = io.StringIO()
    render_console(doc, Console(file=buf, width=width, highlight=False, color_system=None))
    return buf.getvalue()


@pytest.mark.parametrize("width", [80, 200])
def test_every_name_whole_on_one_line_at_80_and_200_columns(width):
    """Server names, versions, finding ids and the failed server's file name each appear whole on
    one line (issue 72: at 80 columns they were chopped every 9 characters); nothing is cut with
    "…"; at 80 columns no line is wider than the terminal."""
    doc = _doc()
    out = _render(doc, width)
    lines = out.splitlines()
    assert "…" not in out and max(len(ln) for ln in lines) <= width
    for name in ("orders-eu-west-1-primary-<b>", "users-[b]" + "x" * 50, "10.11.19-MariaDB", "12,345,678",
                 "binlog_transaction_dependency_history_size", "s3://bucket/users/binlog.000002", "1,234.500"):
        assert any(name in ln for ln in lines), (width, name)
    assert "CRC32 checksum mismatch" in " ".join(out.split())  # the failed server's line, below the table
    assert doc["fleet"]["completed"] == 1 and doc["fleet"]["failed"][0]["server"].startswith("users-")


def test_one_line_per_server_where_the_table_fits():
    """At 200 columns the fleet is a table: the server's row holds its version and top finding."""
    row = next(ln for ln in _render(_doc(), 200).splitlines() if ln.startswith("orders-"))
    assert "10.11.19-MariaDB" in row and "critical: binlog_transaction_dependency_history_size" in row


def test_html_escapes_names_and_errors():
    page = render_html(_doc())
    assert "primary-<b>" not in page.split("<script type='application/json'")[0]
    assert "primary-&lt;b&gt;" in page and "CRC32 checksum mismatch" in page
    import json
    import re

    data = re.search(r"<script type='application/json' id='fleet-data'>(.*?)</script>", page, re.S).group(1)
    assert json.loads(data) == _doc()  # embedded whole, and nothing in it closed the script element
