"""The closed sets of values that cross layers, defined once: a layer tests these values, never
the sentences or strings that render them (output formatting spells them).

Each enum is ``str``-valued and renders as its value (``str``, ``format``, JSON), so output
keeps the exact text the strings had.

Kept free of lagadvisor imports so every layer may use it (tests/test_layers.py: SHARED).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


#: The replica's cores and the source's writeset history size, as every command and the fleet
#: file take them (inclusive ranges). The history size reaches 9.7's default, 10,000,000
#: (``versions.py``): a 9.7 source's own value was refused at 1,000,000.
CORES_RANGE = (1, 4096)
HISTORY_SIZE_RANGE = (1, 10_000_000)


class _Value(str, Enum):
    """A closed set of strings: compares, hashes and renders as its value."""

    def __str__(self) -> str:
        return self.value


class Applier(_Value):
    """The replica's applier. ``mta``: the multi-threaded applier of 5.7 to 9.x (a coordinator
    dispatches to ``replica_parallel_workers``; rpl_rli_pdb.cc, rpl_mta_submode.cc). ``csa``: the
    Change Stream Applier of 26.7+ (``CHANGE REPLICATION SOURCE TO APPLIER_VERSION=2``), scheduled
    as the MySQL source does (``sim.model.CSA_MODEL``): no 26.x server runs here."""

    MTA = "mta"
    CSA = "csa"


class Policy(_Value):
    """A dependency clock: the one the source recorded in the binlog (``last_committed`` /
    ``sequence_number`` as written), or one of ``binlog_transaction_dependency_tracking``'s
    values re-derived (sql/rpl_trx_tracking.h: Commit_order_trx_dependency_tracker,
    Writeset_trx_dependency_tracker, Writeset_session_trx_dependency_tracker)."""

    RECORDED = "recorded"
    COMMIT_ORDER = "COMMIT_ORDER"
    WRITESET = "WRITESET"
    WRITESET_SESSION = "WRITESET_SESSION"
    # what the source wrote when it is none of them (``depgraph.pipeline.WrittenPolicy``)
    MARIADB = "MariaDB"            # group commit ids, no logical clock
    NONE = "none"                  # no logical clock (MySQL < 5.7, or no GTID events)

    @property
    def column(self) -> str:
        """The fact column (``sim.columns.FACT_COLUMNS``) holding this clock."""
        return self.value.lower()


#: The policies lagadvisor re-derives (the source's settings), in MySQL's order.
POLICIES = (Policy.COMMIT_ORDER, Policy.WRITESET, Policy.WRITESET_SESSION)
#: The policies that read the writeset history.
WRITESET_BASED = frozenset({Policy.WRITESET, Policy.WRITESET_SESSION})
#: Every clock: the recorded one, then the policies (``graph --policy``'s numbering).
CLOCKS = (Policy.RECORDED, *POLICIES)


class ReplicaMode(_Value):
    """How the replica's applier schedules (``ReplicaConfig.mode``): MySQL's LOGICAL_CLOCK or
    5.6's DATABASE ``replica_parallel_type``, or MariaDB's ``slave_parallel_mode``."""

    LOGICAL_CLOCK = "logical_clock"
    DATABASE = "database"
    MARIADB_CONSERVATIVE = "mariadb_conservative"
    MARIADB_OPTIMISTIC = "mariadb_optimistic"
    MARIADB_AGGRESSIVE = "mariadb_aggressive"

    @property
    def mariadb(self) -> bool:
        return self.value.startswith("mariadb_")

    @property
    def speculative(self) -> bool:
        """MariaDB's optimistic and aggressive modes: run ahead, roll back on conflict."""
        return self in (ReplicaMode.MARIADB_OPTIMISTIC, ReplicaMode.MARIADB_AGGRESSIVE)

    @property
    def parallel_mode(self) -> str:
        """MariaDB's ``slave_parallel_mode`` value (``optimistic``); MySQL's modes as they are."""
        return self.value.removeprefix("mariadb_")

    @classmethod
    def of_mariadb(cls, parallel_mode: str) -> "ReplicaMode":
        """``slave_parallel_mode``'s value as a mode; minimal and none schedule at most group
        commits in parallel: conservative."""
        return {m.parallel_mode: m for m in MARIADB_MODES}.get(parallel_mode, cls.MARIADB_CONSERVATIVE)


#: MariaDB's parallel modes, in ``slave_parallel_mode``'s order.
MARIADB_MODES = (ReplicaMode.MARIADB_CONSERVATIVE, ReplicaMode.MARIADB_OPTIMISTIC, ReplicaMode.MARIADB_AGGRESSIVE)


class CommitOrderInput(_Value):
    """The commit-order parent fed to the WRITESET trackers (``--commit-order``): as recorded,
    the previous transaction, or flush groups estimated from the timestamps; ``auto`` chooses
    from the detected policy. The native core numbers the three chosen ones (:attr:`code`)."""

    AUTO = "auto"
    RECORDED = "recorded"
    SERIAL = "serial"
    FLUSH_GROUPS = "flush-groups"

    @property
    def code(self) -> int:
        """The native reader's number for it (``Analyzer``'s ``commit_order``)."""
        return {CommitOrderInput.RECORDED: 0, CommitOrderInput.SERIAL: 1, CommitOrderInput.FLUSH_GROUPS: 2}[self]


class CaveatKind(_Value):
    """Why a writeset may miss hashes (each caveat carries its kinds; a rule tests them)."""

    KEYS_UNKNOWN = "keys_unknown"                  # the table's unique keys are unknown
    FUNCTIONAL_INDEX = "functional_index"          # a functional unique index cannot be hashed
    COLLATION_APPROXIMATED = "collation_approximated"  # values outside a collation's weight table
    ROW_IMAGE_KEYS_MISSING = "row_image_keys_missing"  # MINIMAL row images without the key columns
    SCHEMA_UNKNOWN = "schema_unknown"              # no definition of the table at all
    SCHEMA_STALE = "schema_stale"                  # a definition the row images contradict


class Caveat(str):
    """One caveat line: the text output prints (it is that string, so it counts, sorts and
    renders as before), with what rules test: its kinds and the table it is about."""

    kinds: frozenset[CaveatKind]
    table: str | None

    def __new__(cls, text: str, kinds=(), table: str | None = None) -> "Caveat":
        self = super().__new__(cls, text)
        self.kinds = frozenset(kinds)
        self.table = table
        return self

    def __getnewargs__(self) -> tuple:
        return (str(self), self.kinds, self.table)

    @classmethod
    def joined(cls, parts: "list[Caveat]") -> "Caveat":
        """Several caveats of one table as one line (``; ``-separated), with all their kinds."""
        return cls("; ".join(parts), frozenset().union(*(p.kinds for p in parts)), parts[0].table)


#: The caveats that say a table's unique keys are unknown (its WRITESET may overstate parallelism).
KEYS_UNKNOWN = frozenset({CaveatKind.KEYS_UNKNOWN, CaveatKind.SCHEMA_UNKNOWN})


class FindingId(_Value):
    """What an advisor finding is about: a setting, or a fact of the workload or schema."""

    DEPENDENCY_TRACKING = "dependency_tracking"
    REPLICA_PARALLEL_WORKERS = "replica_parallel_workers"
    SLAVE_PARALLEL_MODE = "slave_parallel_mode"
    REPLICA_PRESERVE_COMMIT_ORDER = "replica_preserve_commit_order"
    HISTORY_SIZE = "binlog_transaction_dependency_history_size"
    SYNC_DELAY = "binlog_group_commit_sync_delay"
    TABLES_WITHOUT_PRIMARY_KEY = "tables_without_primary_key"
    FOREIGN_KEY_PARENT_TABLES = "foreign_key_parent_tables"
    HOT_ROWS = "hot_rows"
    HOT_TABLE = "hot_table"
    SECONDARY_INDEXES = "secondary_indexes"
    LARGE_TRANSACTIONS = "large_transactions"
    DDL_BARRIERS = "ddl_barriers"
    RESOURCE_GROUPS = "resource_groups"
    REPLICA_DURABILITY = "replica_durability"
    BINLOG_ROW_METADATA = "binlog_row_metadata"
    BINLOG_ROW_IMAGE = "binlog_row_image"
    BINLOG_FORMAT = "binlog_format"
    TABLE_DEFINITIONS = "table_definitions"
    CHANGE_STREAM_APPLIER = "change_stream_applier"


class WhatIfChange(_Value):
    """A change to the workload or the source that the advisor simulates."""

    HISTORY = "history"            # a larger writeset history
    SYNC_DELAY = "delay"           # binlog_group_commit_sync_delay
    ADD_PRIMARY_KEY = "add_pk"
    DROP_FOREIGN_KEYS = "drop_fk"
    HOT_ROWS = "hot_rows"          # the hot rows stop conflicting
    HOT_TABLE = "hot_table"        # the hot table's rows stop conflicting


@dataclass(frozen=True)
class WhatIfKey:
    """The simulation cache's name for the facts a what-if produced: the change and its value
    (the history size, the delay); ``WhatIfKey()`` is the facts as read."""

    change: WhatIfChange | None = None
    value: int = 0


@dataclass(frozen=True)
class HotRowKey:
    """A row key counted as a conflict in the dependency graph: its readable label when the
    reader kept one, else the writeset hash alone (rendered ``hash 0x…`` only at output)."""

    label: str | None
    hash: int = 0

    @property
    def readable(self) -> bool:
        return self.label is not None

    @property
    def table(self) -> str | None:
        """``db.table`` of a readable key (its label starts with it)."""
        return self.label.split(" ", 1)[0] if self.label is not None else None

    def __lt__(self, other: "HotRowKey") -> bool:
        """Ordered as rendered (reports rank ties by the text)."""
        return str(self) < str(other)

    def __str__(self) -> str:
        return self.label if self.label is not None else f"hash {self.hash:#x}"
