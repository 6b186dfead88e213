"""Imports go one way (issue 21): cli -> fleet -> report/advise -> analysis -> server -> sim -> depgraph
-> native -> writeset -> schema -> binlog, parsed from the source (module-level and function-level
imports alike), and no two modules import each other; the extension ``lagadvisor._native`` is imported
by ``native.loader`` alone, a shared module any layer may use; a database driver by ``server`` alone
(issue 37: sim is the model and engines, it takes samples, not connections). The read pipeline
(``depgraph.read``, issue 37) sits in depgraph: above the native reader it drives, below everything
that reads."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import lagadvisor

PKG = Path(lagadvisor.__file__).resolve().parent
#: Top to bottom; a package may import those below it, or its own level (report and advise
#: render each other's results), never those above.
#: ``commands``: the CLI's commands, one module each, and their shared options (typer): the CLI's level.
#: ``analysis``: the ``analyze`` engine and its result types, which report renders and advise builds on.
#: ``server``: everything that talks to a server (the connection, TLS, the live schema and settings,
#: the binlog stream, calibrate --host's and eta's polling): it reads binlogs and schemas as binlog and
#: schema do and builds sim's samples; the commands, fleet and advise call it.
#: ``depgraph``: the policies, the clocks, the graph, and the read pipeline (``depgraph.read.read``, the one
#: way a command reads binlogs): the lowest layer that can use both readers (``native.run.read_run`` below
#: it, the reference's writesets and clocks) and the graph builder; sim, analysis, advise and the commands
#: read runs through it, handing their reference folds down as ``Collectors.observe``.
#: ``native``: the native core's Python side (``native.run.read_run``, the read pipeline's native reader,
#: and the ``Bridge`` the Rust reader calls back): it stands on writeset, schema and binlog.
LAYERS = [("cli", "__main__", "commands"), ("fleet",), ("report", "advise"), ("analysis",), ("server",), ("sim",),
          ("depgraph",), ("native",), ("writeset",), ("schema",), ("binlog",)]
#: Modules every layer may use: no lagadvisor imports of their own but these. ``inputs`` (the
#: input-path resolver) imports only ``errors``; the commands and ``fleet`` use it. ``native.loader``
#: (the one import of ``lagadvisor._native``) imports nothing of lagadvisor: binlog and sim use it.
#: ``connection`` and ``tls`` were shared modules before issue 37; they are ``server``'s now.
SHARED = {"errors", "versions", "kinds", "native.loader", "inputs", "cpus"}
#: The database drivers: imported under ``server`` alone.
DRIVERS = ("mysql", "pymysql", "pymysqlreplication")
#: Known debt, to be paid (issue 21): an edge here is tolerated, a new one is not. Paid (issue 14
#: part 6): depgraph.graph takes the apply-time weights as plain numbers (no sim.model), and the
#: native reader (native.run.read_run) imports neither report nor sim; (issue 37) the read pipeline
#: (depgraph.read) imports no layer above it: the facts, analysis and records folds are the callers'.
TOLERATED: set[tuple[str, str]] = set()


def _modules():
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG.parent).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        yield name, f


def _imports(name: str, f: Path) -> set[str]:
    pkg = name if f.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                names = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
            else:
                names = [node.module or ""]
            out.update(n for n in names if n.startswith("lagadvisor"))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("lagadvisor"))
    return out


def _shared(module: str) -> bool:
    """``module`` (``lagadvisor.x.y``) is, or is part of, a SHARED module or package."""
    rel = module.split(".", 1)[1] if "." in module else ""
    return any(rel == s or rel.startswith(s + ".") for s in SHARED)


def _layer(module: str) -> int | None:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if _shared(module) or top.startswith("_"):
        return None
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    return None


def _graph() -> dict[str, set[str]]:
    mods = dict(_modules())
    graph = {}
    for name, f in mods.items():
        targets = set()
        for t in _imports(name, f):
            if t.startswith("lagadvisor._native"):
                continue  # the extension, no module here (test_only_the_loader_imports_the_extension)
            while t not in mods and "." in t:  # `from .x import y` names y, a symbol of module x
                t = t.rsplit(".", 1)[0]
            if t in mods and t != name:
                targets.add(t)
        graph[name] = targets
    return graph


def test_layers_import_downward():
    bad = []
    for m, targets in _graph().items():
        lm = _layer(m)
        for t in targets:
            lt = _layer(t)
            if lm is not None and lt is not None and lt < lm and (m, t) not in TOLERATED:
                bad.append(f"{m} imports {t}")
    assert not bad, "imports pointing up a layer:\n" + "\n".join(sorted(bad))


def test_shared_modules_stay_at_the_bottom():
    for m, targets in _graph().items():
        if _shared(m):
            assert all(_shared(t) for t in targets), (m, targets)


def test_no_two_modules_import_each_other():
    g = _graph()
    pairs = sorted({tuple(sorted((a, b))) for a, ts in g.items() for b in ts if a in g.get(b, set())})
    # analysis.analyze calls analysis.native, which imports only analysis.results (issue 14)
    assert not pairs, pairs


def _extension_imports(name: str, f: Path) -> bool:
    """Whether module ``name`` imports the extension ``lagadvisor._native`` (any spelling:
    ``from .. import _native``, ``from lagadvisor import _native``, ``import lagadvisor._native``,
    ``from lagadvisor._native import x``, ``importlib.import_module("lagadvisor._native")``)."""
    pkg = name if f.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "lagadvisor._native" or target.startswith("lagadvisor._native."):
                return True
            if target == "lagadvisor" and any(a.name == "_native" for a in node.names):
                return True
        elif isinstance(node, ast.Import):
            if any(a.name == "lagadvisor._native" or a.name.startswith("lagadvisor._native.") for a in node.names):
                return True
        elif isinstance(node, ast.Constant) and node.value == "lagadvisor._native":
            return True
    return False


def test_only_the_loader_imports_the_extension():
    """The fallback (``LAGADVISOR_PUREPYTHON``, an extension that fails to import) is decided by
    ``native.loader`` alone: no other module imports ``lagadvisor._native`` itself."""
    importers = sorted(name for name, f in _modules() if _extension_imports(name, f))
    assert importers == ["lagadvisor.native.loader"], importers


def test_the_loader_imports_nothing_else():
    """Importing ``native.loader`` (as binlog does) loads no other lagadvisor module: the package
    imports ``native.bridge`` and ``native.run`` (and the layers they stand on) on first use."""
    code = ("import sys, lagadvisor.native.loader\n"
            "print(sorted(m for m in sys.modules if m.startswith('lagadvisor')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["['lagadvisor',", "'lagadvisor.native',", "'lagadvisor.native.loader']"], out


def _driver_imports(f: Path) -> set[str]:
    """The database drivers module ``f`` imports (module-level and function-level alike)."""
    out = set()
    for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
        names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else
                 [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        out.update(n.split(".")[0] for n in names if n.split(".")[0] in DRIVERS)
    return out


def test_sim_imports_no_driver_and_no_server():
    """sim/ is the model and engines (issue 37): its fitting and its estimate take samples, which
    ``server`` reads; no module under sim/ imports a database driver or the server package."""
    bad = sorted(f"{name} imports {d}" for name, f in _modules() if name.startswith("lagadvisor.sim")
                 for d in _driver_imports(f))
    assert not bad, bad
    g = _graph()
    bad = sorted(f"{m} imports {t}" for m, ts in g.items() if m.startswith("lagadvisor.sim")
                 for t in ts if t.startswith("lagadvisor.server"))
    assert not bad, bad


def test_only_the_server_package_imports_a_driver():
    importers = sorted(name for name, f in _modules() if _driver_imports(f))
    assert importers and all(n.startswith("lagadvisor.server.") for n in importers), importers
