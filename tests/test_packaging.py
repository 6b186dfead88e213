"""What the project imports is what it declares.

Every module imported under ``src/`` must come from the standard library, the project itself
or a distribution listed in ``[project] dependencies``; under ``tests/`` and ``scripts/`` it may
also come from the ``test`` extra. The test command installs only the wheel and its ``[test]``
extra into a new virtualenv, so a missing entry fails there too; this test names it.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import os
import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT

tomllib = pytest.importorskip("tomllib") if sys.version_info < (3, 11) else __import__("tomllib")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(req: str) -> str:
    return _norm(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req).group(1))


def _declared() -> tuple[set[str], set[str]]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_requirement_name(r) for r in meta["dependencies"]}
    test = {_requirement_name(r) for r in meta["optional-dependencies"]["test"]}
    return runtime, runtime | test


def _imports(paths: list[Path]) -> dict[str, str]:
    """Top-level module name -> one file that imports it (absolute imports only)."""
    found: dict[str, str] = {}
    for path in paths:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
                found.setdefault(name.split(".")[0], str(where))
    return found


def _local_modules() -> set[str]:
    """Modules that are files of this checkout (tests' helpers, scripts, the package)."""
    local = {"lagadvisor"}
    for folder in ("tests", "scripts", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            local.add(path.stem)
    return local


def _third_party(paths: list[Path]) -> dict[str, str]:
    skip = set(sys.stdlib_module_names) | _local_modules() | {"__future__"}
    return {m: f for m, f in _imports(paths).items() if m not in skip}


def _distributions(module: str) -> set[str]:
    return {_norm(d) for d in md.packages_distributions().get(module, [])}


def _check(paths: list[Path], allowed: set[str]) -> list[str]:
    problems = []
    for module, where in sorted(_third_party(paths).items()):
        dists = _distributions(module)
        if not dists:
            problems.append(f"{module} (imported by {where}) is not installed from any distribution")
        elif not dists & allowed:
            problems.append(f"{module} (imported by {where}) comes from {sorted(dists)}, not declared")
    return problems


def test_package_imports_only_declared_dependencies():
    runtime, _ = _declared()
    assert _check(sorted((ROOT / "src").rglob("*.py")), runtime) == []


def test_tests_and_scripts_import_only_declared_test_extras():
    _, with_test = _declared()
    paths = sorted((ROOT / "tests").rglob("*.py")) + sorted((ROOT / "scripts").glob("*.py"))
    assert _check(paths, with_test) == []


def test_the_check_names_an_undeclared_import(tmp_path):
    """The checker itself: a file importing an installed but undeclared distribution is named."""
    mod = tmp_path / "x.py"
    mod.write_text("import json\nimport pytest\nfrom typer import Typer\n")
    problems = _check([mod], allowed={"typer"})
    assert len(problems) == 1 and problems[0].startswith("pytest (imported by x.py)")


def test_imports_come_from_the_installed_wheel_under_the_test_command():
    """Under the test command the package is the installed wheel, not the checkout's src/."""
    import lagadvisor

    if os.environ.get("LAGADVISOR_REQUIRE_INSTALLED") != "1":
        pytest.skip("only meaningful under scripts/test.sh")
    assert not Path(lagadvisor.__file__).resolve().is_relative_to(ROOT / "src")
