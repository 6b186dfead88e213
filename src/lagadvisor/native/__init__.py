"""The optional native core (``lagadvisor._native``, Rust: ``native/src/``) seen from Python.

- :mod:`.loader`: the only import of the extension (``load``, ``extension``, ``require``,
  ``forced_pure``, ``unavailable_notice``); it imports nothing of lagadvisor, so any layer uses it.
- :mod:`.bridge`: what the native reader (``native/src/reader/mod.rs``) calls back in the
  reference while it reads (``Bridge``), and a file's summary from its counters.
- :mod:`.run`: the native side of the read pipeline (``depgraph.read``, the one way a command
  reads binlogs, which alone decides between the native core and the pure-Python reference).

The pure-Python modules are the reference; ``LAGADVISOR_PUREPYTHON=1`` forces them. The names
of :mod:`.bridge` and :mod:`.run` are imported on first use, so importing the loader (from
``binlog``, below ``writeset``) does not import the layers they stand on. The read's tunables
(``RECORDS_CHUNK``, ``WS_LOG_CHUNK``...) are :mod:`.run`'s own: set them there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .loader import extension, forced_pure, load, require, unavailable_notice

if TYPE_CHECKING:
    from .bridge import Bridge, Unsupported, native_summary, statement_blocks
    from .run import NativeRun, readable, reader

_BRIDGE = frozenset({"Bridge", "Unsupported", "native_summary", "statement_blocks"})
_RUN = frozenset({"NativeRun", "readable", "reader"})


def __getattr__(name: str):
    if name in _BRIDGE:
        from . import bridge as module
    elif name in _RUN:
        from . import run as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


__all__ = ["Bridge", "NativeRun", "Unsupported", "extension", "forced_pure", "load", "native_summary",
           "readable", "reader", "require", "statement_blocks", "unavailable_notice"]
