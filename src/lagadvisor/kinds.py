"""The closed sets of values that cross layers, defined once: a layer tests these values, never
the sentences or strings that render them (output formatting spells them).

Kept free of lagadvisor imports so every layer may use it (tests/test_layers.py: SHARED).
"""

from __future__ import annotations

from enum import Enum


class Applier(str, Enum):
    """The replica's applier. ``mta``: the multi-threaded applier of 5.7 to 9.x (a coordinator
    dispatches to ``replica_parallel_workers``; rpl_rli_pdb.cc, rpl_mta_submode.cc). ``csa``: the
    Change Stream Applier of 26.7+ (``CHANGE REPLICATION SOURCE TO APPLIER_VERSION=2``), modelled
    from its documented semantics only: no 26.x server runs here."""

    MTA = "mta"
    CSA = "csa"
