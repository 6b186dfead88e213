"""The one import of the native core, ``lagadvisor._native`` (Rust, ``native/src/lib.rs``).

Every module that uses the extension asks here: :func:`load` for the reader
(``native/src/reader/mod.rs``: ``Analyzer``, ``WsReplay``), :func:`extension` for one feature
of it (``sim_run``, ``StreamSim``...), :func:`require` where the native implementation is
asked for explicitly. ``LAGADVISOR_PUREPYTHON=1`` (:func:`forced_pure`) turns the first two
off; an extension that fails to import turns them off too, and ``analyze`` prints one notice
(:func:`unavailable_notice`). This module imports nothing of lagadvisor: any layer may use it,
``binlog`` included.
"""

from __future__ import annotations

import os
from types import ModuleType

# load()'s verdict on the extension: the reader needs a build from the current sources
_module: ModuleType | None = None
_import_error: str | None = None
_tried = False
# the extension as imported, whatever it was built from
_built: ModuleType | None = None
_built_error: str | None = None
_built_tried = False


def forced_pure() -> bool:
    """``LAGADVISOR_PUREPYTHON`` is set (to anything but 0): the reference everywhere."""
    return os.environ.get("LAGADVISOR_PUREPYTHON", "") not in ("", "0")


def require() -> ModuleType:
    """The extension, whatever ``LAGADVISOR_PUREPYTHON`` says: for a caller that asked for the
    native implementation explicitly (``sim.engine.simulate_native``). ImportError if it is
    not built or fails to import."""
    global _built, _built_error, _built_tried
    if not _built_tried:
        _built_tried = True
        try:
            from .. import _native  # type: ignore[attr-defined]

            _built = _native
        except ImportError as err:
            _built_error = str(err)
    if _built is None:
        raise ImportError(_built_error or "lagadvisor._native is not built")
    return _built


def extension(feature: str) -> ModuleType | None:
    """The extension if it has ``feature`` (one of its functions or classes), else None: forced
    off, not built, or built from sources without it."""
    if forced_pure():
        return None
    try:
        mod = require()
    except ImportError:
        return None
    return mod if hasattr(mod, feature) else None


def load() -> ModuleType | None:
    """The native module, or None (forced off, or it failed to import)."""
    global _module, _import_error, _tried
    if forced_pure():
        return None
    if not _tried:
        _tried = True
        try:
            native = require()
            if not hasattr(getattr(native, "Analyzer", None), "collect_graph"):
                # an extension built from older sources (a copied .so): the reference reads
                raise ImportError("lagadvisor._native is a stale build (no Analyzer.collect_graph)")
            _module = native
        except ImportError as err:
            _import_error = str(err)
    return _module


def unavailable_notice() -> str | None:
    """The one-line notice for ``analyze`` when the extension failed to import."""
    if forced_pure():
        return None
    load()
    return "native core unavailable: pure Python" if _module is None else None


__all__ = ["extension", "forced_pure", "load", "require", "unavailable_notice"]
