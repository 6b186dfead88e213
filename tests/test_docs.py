"""The README is for users and the evidence is in docs/ (issue 35): the README stays short, in
the order a DBA reads it, with no dated run logs, and links every docs page; every link between
them resolves (file and anchor); the benchmark scripts' tables have their markers in the page
each script writes, and ``bench/docs_tables.write_table`` replaces only what is between them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = ("accuracy.md", "performance.md", "calibration.md", "internals.md")
sys.path.insert(0, str(ROOT / "bench"))

import docs_tables  # noqa: E402


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    out, fence = set(), False
    for line in _text(path).splitlines():
        if line.startswith("```"):
            fence = not fence
        if not fence and re.match(r"#{1,6} ", line):
            out.add(_slug(line.lstrip("#")))
    return out


def test_readme_is_short_and_in_a_dbas_order():
    text = _text(README)
    assert len(text.splitlines()) < 400
    order = ["## Install", "## First run", "## A tour", "## The commands", "## Live mode and safety",
             "## Accuracy", "## Tests"]
    at = [text.index(h) for h in order]
    assert at == sorted(at), order
    # issue 72: the first run apart from the tests; the wheel comes from the release workflow
    first_run = text[text.index("## First run"):text.index("## A tour")]
    assert "lagadvisor analyze fixtures/sysbench_oltp_write_only/binlog.000001" in first_run
    assert "scripts/test.sh" not in first_run and "bash scripts/test.sh" in text
    install = text[text.index("## Install"):text.index("## First run")]
    assert "(.github/workflows/release.yml)" in install and "python3 -m pip install ." in install


def test_readme_accuracy_cells_are_short_claims():
    """Issue 72: no cell of the README's accuracy table over 300 characters (the evidence is in
    docs/, linked); the absolute-time caveat is said outside the table."""
    text = _text(README)
    section = text[text.index("## Accuracy"):text.index("## Tests")]
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and not ln.startswith("|---")]
    assert len(rows) > 5
    long = [c.strip()[:60] for ln in rows for c in ln.strip().strip("|").split(" | ") if len(c.strip()) > 300]
    assert long == []
    assert "until\n`calibrate`" in section or "until `calibrate`" in " ".join(section.split())


def test_readme_has_no_dated_run_logs():
    """A date in an option's example value ('2026-11-22 02:00:00') is fine; a dated run is not."""
    text = re.sub(r"'[^'\n]*'", "''", _text(README))
    assert not re.findall(r"\b20\d\d-\d\d-\d\d\b", text)
    assert not re.findall(r"bench/\w+\.json", text), "raw results belong in docs/"


def test_readme_links_every_docs_page():
    text = _text(README)
    for page in PAGES:
        assert f"(docs/{page}" in text, page
        assert (DOCS / page).is_file(), page


@pytest.mark.parametrize("page", [README] + [DOCS / p for p in PAGES], ids=lambda p: p.name)
def test_links_resolve(page):
    for target in re.findall(r"\]\(([^)\s]+)\)", _text(page)):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        assert dest.exists(), (page.name, target)
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), (page.name, target)


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
#: What a heading of the evidence pages must not name (issue 73: docs describe what is; the runs,
#: sessions and machine loans that produced a figure are history, kept in git).
_HISTORY = re.compile(r"\d{4}-\d{2}-\d{2}|\b(?:%s)\b|(?i:session|\bruns? \d|loan|device)" % "|".join(_MONTHS))


def _headings(path: Path) -> list[str]:
    out, fence = [], False
    for line in _text(path).splitlines():
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("#"):
            out.append(line)
    return out


def test_accuracy_is_a_statement_not_a_lab_notebook():
    """Issue 73: docs/accuracy.md states what is checked, against what, the current result, how to
    rerun it and the limits, in under 600 lines; no heading of it or of docs/calibration.md names a
    date, a session, a run, a machine loan or the device."""
    assert len(_text(DOCS / "accuracy.md").splitlines()) < 600
    for page in ("accuracy.md", "calibration.md"):
        dated = [h for h in _headings(DOCS / page) if _HISTORY.search(h)]
        assert dated == [], (page, dated)


def test_the_history_pattern_catches_what_it_should():
    for heading in ("### The seventh device run (2026-11-28): held out", "### Runs of November",
                    "### A note (fifteenth session)", "## Run 5 against run 6", "### Held out on another loan"):
        assert _HISTORY.search(heading), heading
    for heading in ("## Many cores: the 16-core lab", "### The built-in model on the seven runs",
                    "### What a unique index costs: its duplicate scan, not its entries", "### Where it may be off"):
        assert not _HISTORY.search(heading), heading


def _bench_writes() -> list[tuple[str, str, str]]:
    """(script, page, marker) of every write_table call in bench/."""
    out = []
    for script in sorted((ROOT / "bench").glob("*.py")):
        for page, name in re.findall(r'write_table\(\s*"([\w.]+)",\s*(?:"([\w-]+)"|[^,]+)', _text(script)):
            out.append((script.name, page, name))
    return out


def test_every_bench_table_has_its_markers():
    writes = _bench_writes()
    scripts = {s for s, _, _ in writes}
    assert {"throughput.py", "fleet.py", "live_calibrate.py", "replica_catchup.py", "scale.py"} <= scripts
    names = {(p, n) for _, p, n in writes if n} | {("performance.md", "scale"), ("performance.md", "scale-replica")}
    for page, name in names:
        text = _text(DOCS / page)
        assert text.count(f"<!-- bench:{name} -->") == 1 and text.count(f"<!-- /bench:{name} -->") == 1, \
            (page, name)


def test_write_table_replaces_only_between_the_markers(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("# Page\n\nbefore\n<!-- bench:t -->\nold table\n<!-- /bench:t -->\nafter\n", encoding="utf-8")
    monkeypatch.setattr(docs_tables, "DOCS", tmp_path)
    monkeypatch.setattr(docs_tables, "ROOT", tmp_path)
    assert docs_tables.write_table("page.md", "t", "| a |\n|---|\n| 1 |", "Written by x.")
    assert _text(page) == ("# Page\n\nbefore\n<!-- bench:t -->\nWritten by x.\n| a |\n|---|\n| 1 |\n"
                           "<!-- /bench:t -->\nafter\n")
    assert not docs_tables.write_table("page.md", "other", "| b |")
    assert "| b |" not in _text(page)
