"""The fleet table at 80 columns (folded, never cut) and the HTML page's escaping, from a
fleet document (no cluster)."""

from __future__ import annotations

import io

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


def test_the_table_folds_at_80_columns_and_names_every_server():
    doc = _doc()
    buf = io.StringIO()
    render_console(doc, Console(file=buf, width=80, highlight=False, color_system=None))
    out = buf.getvalue()
    assert "…" not in out and max(len(ln) for ln in out.splitlines()) <= 80
    columns: dict[int, str] = {}
    for ln in out.splitlines():
        if ln.startswith("│"):
            for i, cell in enumerate(ln.split("│")[1:-1]):
                columns[i] = columns.get(i, "") + cell.strip()
    for i, s in ((0, "orders-eu-west-1-primary-<b>users-[b]" + "x" * 50), (1, "10.11.19-MariaDBerror"),
                 (3, "12,345,678"), (4, "1.0/123.5/-"), (5, "1,234.500->0.001"),
                 (6, "critical:binlog_transaction_dependency_history_size")):
        assert columns[i].replace(" ", "") == s, (i, columns[i])
    assert "CRC32 checksum mismatch" in " ".join(out.split())  # the failed server's line, below the table
    assert doc["fleet"]["completed"] == 1 and doc["fleet"]["failed"][0]["server"].startswith("users-")


def test_html_escapes_names_and_errors():
    page = render_html(_doc())
    assert "primary-<b>" not in page.split("<script type='application/json'")[0]
    assert "primary-&lt;b&gt;" in page and "CRC32 checksum mismatch" in page
    import json
    import re

    data = re.search(r"<script type='application/json' id='fleet-data'>(.*?)</script>", page, re.S).group(1)
    assert json.loads(data) == _doc()  # embedded whole, and nothing in it closed the script element
