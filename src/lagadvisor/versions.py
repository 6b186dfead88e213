"""Server-version facts shared by the clocks, the rules, the help texts and the README (one source).

One table, :data:`RELEASES`: per MySQL release, the defaults that matter to the applier and to the
dependency clock, the variables removed, and the applier options. Each fact names where it was
read (:data:`SOURCES`); a fact not read in a manual or a release note is listed in the release's
``unverified`` and every output that uses it says so.

Imports only ``kinds`` (no engine), so the CLI can quote it in ``--help`` without loading the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .kinds import Policy

Version = tuple[int, int, int]

#: Where each fact was read (keys are the :class:`Release` fields and the variables they name).
SOURCES: dict[str, str] = {
    "tracking": "binlog_transaction_dependency_tracking: COMMIT_ORDER by default in 5.7/8.0 (sys_vars.cc); "
                "deprecated in 8.0.35 and 8.2.0, removed in 8.4.0, from which the server uses WRITESET "
                "(MySQL Shell 9.4 manual, 'Configuring the Parallel Replication Applier'; MySQL Server "
                "Version Reference, 'Option and Variable Changes for MySQL 8.4': removed in version 8.4.0)",
    "history_size": "binlog_transaction_dependency_history_size: 25,000 up to 9.4 (sys_vars.cc, and 8.4's "
                    "manual); 1,000,000 from 9.5.0 (9.5.0 release notes: 'increased from 25000 to 1000000', "
                    "Bug #38178087; 9.7 manual, What Is New); 10,000,000 read off a real 9.7.4 server",
    "replica_parallel_workers": "replica_parallel_workers: 0 before 8.0.27, 4 from 8.0.27 (MySQL 8.0 manual, "
                                "Replica Server Options and Variables, as quoted in bugs.mysql.com #113236; "
                                "MySQL Shell 9.4 and 9.5 manuals, 'Configuring the Parallel Replication Applier': "
                                "'set to 4' by default)",
    "replica_preserve_commit_order": "replica_preserve_commit_order: ON the default from 8.0.27 (MySQL 8.0 "
                                     "manual, 'Replication and Transaction Inconsistencies')",
    "replica_parallel_type": "replica_parallel_type: LOGICAL_CLOCK from 8.0.27 (not read: the manual text "
                             "found stops before the value)",
    "gipk": "sql_generate_invisible_primary_key: since 8.0.30, OFF by default (MySQL blog 'Generated "
            "Invisible Primary Key'; 'Generated Invisible Primary Keys' in the 8.4, 9.0, 9.4, 9.5 and 26.10 "
            "manuals)",
    "lts": "LTS series 8.4.x and 9.7.x (9.5 manual, 1.3 'MySQL Releases: Innovation and LTS'); from 26.7, "
           "calendar versions, and 'release maturity remains an explicit property of each release' "
           "(26.7 manual, 1.3): no 26.x release is documented as LTS here",
    "upgrade_path": "upgrades go from one LTS series to the next (8.0 -> 8.4 -> 9.7), or to an innovation "
                    "release before the next LTS (MySQL 8.4, 9.5 and 9.7 manuals, 3.2 'Upgrade Paths', Table 3.1)",
    "mysql_native_password": "mysql_native_password: deprecated in 8.0.34, disabled by default in 8.4, removed "
                             "in 9.0.0 (MySQL 8.4 manual, 8.4.1.1 'Native Pluggable Authentication'); a replica "
                             "of 9.x cannot authenticate to its source as a user of that plugin",
    "applier": "the Change Stream Applier: APPLIER_VERSION (1 the MTA, the default for a new channel; 2 the "
               "CSA, from 26.7.0), APPLIER_WORKER_COUNT, APPLIER_EVENT_MEMORY_LIMIT (26.7 and 26.10 manuals, "
               "19.2.4 'Change Stream Applier', 19.2.4.1 'Configuring', 19.2.4.2 'Limitations': no "
               "replica_pending_jobs_size_max); the defaults of the last two are not read",
}


@dataclass(frozen=True)
class Release:
    """The defaults of one MySQL release (and the ones after it, up to the next row)."""

    first: Version
    label: str
    lts: bool
    tracking: Policy | None       # binlog_transaction_dependency_tracking's default; None: removed (WRITESET)
    history_size: int             # binlog_transaction_dependency_history_size
    replica_parallel_workers: int
    replica_preserve_commit_order: bool
    replica_parallel_type: str    # LOGICAL_CLOCK (DATABASE before 8.0.27)
    gipk: bool | None             # sql_generate_invisible_primary_key's default; None: no such variable
    removed: tuple[str, ...] = ()           # variables that matter to the applier, removed in this release
    applier_options: tuple[str, ...] = ()   # CHANGE REPLICATION SOURCE TO options of the applier
    unverified: frozenset[str] = frozenset()  # fields assumed (carried over), not read for this release

    @property
    def writeset_only(self) -> bool:
        """Sources of this release track WRITESET only (no binlog_transaction_dependency_tracking)."""
        return self.tracking is None

    def default(self, name: str) -> str:
        """A variable's default as SHOW VARIABLES spells it ('' when the release has no such variable)."""
        v = {"binlog_transaction_dependency_tracking": self.tracking,
             "binlog_transaction_dependency_history_size": self.history_size,
             "replica_parallel_workers": self.replica_parallel_workers,
             "replica_preserve_commit_order": self.replica_preserve_commit_order,
             "replica_parallel_type": self.replica_parallel_type,
             "sql_generate_invisible_primary_key": self.gipk}[name]
        if v is None:
            return ""
        return ("ON" if v else "OFF") if isinstance(v, bool) else str(v)


#: The fields each variable's default is read from (for ``unverified``).
FIELD_OF = {"binlog_transaction_dependency_tracking": "tracking",
            "binlog_transaction_dependency_history_size": "history_size",
            "replica_parallel_workers": "replica_parallel_workers",
            "replica_preserve_commit_order": "replica_preserve_commit_order",
            "replica_parallel_type": "replica_parallel_type", "sql_generate_invisible_primary_key": "gipk"}
#: The variables a review compares between two releases, in this order.
REVIEWED = tuple(FIELD_OF)

_80 = Release((8, 0, 0), "8.0", False, Policy.COMMIT_ORDER, 25_000, 0, False, "DATABASE", None,
              unverified=frozenset({"replica_parallel_type"}))
_8027 = replace(_80, first=(8, 0, 27), label="8.0.27", replica_parallel_workers=4,
                replica_preserve_commit_order=True, replica_parallel_type="LOGICAL_CLOCK")
_8030 = replace(_8027, first=(8, 0, 30), label="8.0.30", gipk=False)
_84 = replace(_8030, first=(8, 4, 0), label="8.4", lts=True, tracking=None,
              removed=("binlog_transaction_dependency_tracking",))
_9 = replace(_84, lts=False, removed=(), unverified=frozenset({"replica_parallel_type", "replica_preserve_commit_order"}))
_26 = replace(_9, first=(26, 7, 0), label="26.7", history_size=10_000_000,
              applier_options=("APPLIER_VERSION", "APPLIER_WORKER_COUNT", "APPLIER_EVENT_MEMORY_LIMIT"),
              unverified=_9.unverified | {"history_size"})

#: Oldest first. 8.0 also stands for older servers. replica_preserve_commit_order in 9.x and 26.x
#: is carried over from 8.4 (not read as a value: unverified), as is 26.x's history size.
RELEASES: tuple[Release, ...] = (
    _80, _8027, _8030, _84,
    *(replace(_9, first=(9, m, 0), label=f"9.{m}") for m in range(0, 5)),
    replace(_9, first=(9, 5, 0), label="9.5", history_size=1_000_000),
    replace(_9, first=(9, 6, 0), label="9.6", history_size=1_000_000, unverified=_9.unverified | {"history_size"}),
    replace(_9, first=(9, 7, 0), label="9.7", lts=True, history_size=10_000_000),
    _26,
    replace(_26, first=(26, 10, 0), label="26.10"),
)

#: The first release whose sources track WRITESET only.
WRITESET_ONLY_SINCE: Version = next(r.first for r in RELEASES if r.writeset_only)
#: The first release with ``sql_generate_invisible_primary_key``.
GIPK_SINCE: Version = next(r.first for r in RELEASES if r.gipk is not None)


def release(version: Version) -> Release:
    """The row of ``version``: the newest release at or before it (8.0 for older or unknown)."""
    return next((r for r in reversed(RELEASES) if version >= r.first), RELEASES[0])


def writeset_only(version: Version) -> bool:
    """Whether a source of this version tracks WRITESET only (8.4+: the variable is removed)."""
    return release(version).writeset_only


def short(version: Version) -> str:
    """``(8, 4, 0)`` -> ``8.4``; a patch level other than 0 is kept (``8.0.27``)."""
    return ".".join(str(p) for p in (version if version[2] else version[:2]))


def writeset_only_note(server: str) -> str:
    """The sentence a detection gives when the server alone decides the clock."""
    return f"server {server}: {short(WRITESET_ONLY_SINCE)}+ tracks dependencies with WRITESET only"


def parse_version(text: str) -> Version:
    """``8.4``, ``9.7``, ``26.7`` or ``8.4.3`` (a suffix such as ``-log`` is not accepted here)."""
    parts = text.strip().split(".")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"{text!r} is not a MySQL version (8.4, 9.7, 26.7 or 8.4.3)")
    nums = [int(p) for p in parts] + [0] * (3 - len(parts))
    return (nums[0], nums[1], nums[2])


def next_lts(version: Version) -> Release | None:
    """The first LTS release of a later series than ``version`` (8.0 -> 8.4, 8.4 -> 9.7)."""
    return next((r for r in RELEASES if r.lts and r.first[:2] > version[:2]), None)


def removed_between(old: Version, new: Version) -> list[tuple[str, Release]]:
    """The variables removed by the releases after ``old`` up to ``new``, with the release."""
    return [(name, r) for r in RELEASES if old < r.first <= new for name in r.removed]


def default_changes(old: Version, new: Version) -> list[tuple[str, str, str, bool]]:
    """(variable, default at ``old``, default at ``new``, verified) for every reviewed variable
    whose default differs; a removed variable's new default is ''."""
    a, b = release(old), release(new)
    out = []
    for name in REVIEWED:
        if a.default(name) != b.default(name):
            field = FIELD_OF[name]
            out.append((name, a.default(name), b.default(name), field not in a.unverified | b.unverified))
    return out


def _history_table() -> tuple[tuple[Version, int], ...]:
    """(first version, default) newest first, one row per change of the default."""
    rows: list[tuple[Version, int]] = []
    for r in RELEASES:
        if not rows or rows[-1][1] != r.history_size:
            rows.append((r.first, r.history_size))
    rows[0] = ((0, 0, 0), rows[0][1])
    return tuple(reversed(rows))


#: ``binlog_transaction_dependency_history_size`` defaults, newest first: (first version, default),
#: from :data:`RELEASES`. 9.6 is assumed to be 1,000,000 (not verified): pass ``--history-size``
#: when it matters. MariaDB has no writeset history; its clock is re-derived with the 25,000 of 8.0.
HISTORY_SIZE_DEFAULTS: tuple[tuple[Version, int], ...] = _history_table()


def history_size_default(version: Version, mariadb: bool = False) -> int:
    """The default history size of a server version (:data:`HISTORY_SIZE_DEFAULTS`)."""
    if mariadb:
        return HISTORY_SIZE_DEFAULTS[-1][1]
    return next(size for first, size in HISTORY_SIZE_DEFAULTS if version >= first)


def describe_history_defaults() -> str:
    """The defaults in words, for help texts and the README (one source)."""
    parts = []
    for i, (first, size) in enumerate(HISTORY_SIZE_DEFAULTS):
        newer = HISTORY_SIZE_DEFAULTS[i - 1][0] if i else None
        if newer is None:
            span = f"from {first[0]}.{first[1]}"
        elif first == (0, 0, 0):
            span = f"before {newer[0]}.{newer[1]} (and MariaDB)"
        else:
            span = f"{first[0]}.{first[1]} to {newer[0]}.{newer[1] - 1}"
        parts.append(f"{size:,} {span}")
    return "; ".join(reversed(parts))


# -- what a release accepts ------------------------------------------------------------------

@dataclass(frozen=True)
class Variable:
    """A server variable advise writes (SET statements, my.cnf): the MySQL versions that have it
    under this name (``since`` inclusive, ``removed`` exclusive; None: still there), where that
    was read, and whether SET PERSIST may set it (all of these are dynamic)."""

    name: str
    since: Version
    removed: Version | None
    source: str

    def in_release(self, version: Version) -> bool:
        return version >= self.since and (self.removed is None or version < self.removed)


#: The MySQL variables advise writes, each with the versions that accept it. A my.cnf or SET
#: statement for a release names only variables whose row holds there (tests/advise/
#: test_what_it_writes.py runs them on a real 9.x server: ``mysqld --validate-config``).
VARIABLES: dict[str, Variable] = {v.name: v for v in (
    Variable("binlog_transaction_dependency_tracking", (5, 7, 22), WRITESET_ONLY_SINCE, SOURCES["tracking"]),
    Variable("binlog_transaction_dependency_history_size", (5, 7, 22), None,
             "binlog_transaction_dependency_history_size: added in 5.7.22; present in 8.4 and 9.7 "
             "(read off a real 9.7.4 server: 10,000,000)"),
    Variable("transaction_write_set_extraction", (5, 7, 6), (8, 0, 0),
             "transaction_write_set_extraction: written for 5.7 sources only (XXHASH64 is the default from "
             "8.0, WL#10477; deprecated in 8.0.26)"),
    Variable("replica_parallel_workers", (8, 0, 26), None,
             "replica_parallel_workers: the name since 8.0.26 (slave_parallel_workers before; MySQL 8.0 "
             "manual, 'Replica Server Options and Variables')"),
    Variable("slave_parallel_workers", (5, 6, 0), (8, 0, 26), "slave_parallel_workers: renamed in 8.0.26"),
    Variable("replica_preserve_commit_order", (8, 0, 26), None,
             "replica_preserve_commit_order: the name since 8.0.26 (slave_preserve_commit_order before)"),
    Variable("slave_preserve_commit_order", (5, 7, 5), (8, 0, 26), "slave_preserve_commit_order: renamed in 8.0.26"),
    Variable("sync_binlog", (5, 0, 0), None, "sync_binlog: every release"),
    Variable("innodb_flush_log_at_trx_commit", (5, 0, 0), None, "innodb_flush_log_at_trx_commit: every release"),
    Variable("relay_log_recovery", (5, 5, 0), None, "relay_log_recovery: every release since 5.5"),
    Variable("binlog_group_commit_sync_delay", (5, 7, 5), None, "binlog_group_commit_sync_delay: since 5.7.5"),
    Variable("binlog_group_commit_sync_no_delay_count", (5, 7, 5), None,
             "binlog_group_commit_sync_no_delay_count: since 5.7.5"),
    Variable("binlog_row_metadata", (8, 0, 1), None, "binlog_row_metadata: since 8.0.1"),
    Variable("binlog_row_image", (5, 6, 2), None, "binlog_row_image: since 5.6.2"),
    Variable("binlog_format", (5, 1, 0), None,
             "binlog_format: deprecated in 8.0.34, present in 9.7 (read off a real 9.7.4 server)"),
    Variable("sql_generate_invisible_primary_key", GIPK_SINCE, None, SOURCES["gipk"]),
)}


def accepts(version: Version, name: str) -> bool:
    """Whether a MySQL server of ``version`` has the variable ``name`` (an unlisted name: yes)."""
    v = VARIABLES.get(name)
    return v is None or v.in_release(version)


def replica_name(version: Version, name: str) -> str:
    """``replica_parallel_workers`` as a server of ``version`` names it (``slave_`` before 8.0.26)."""
    if version < (8, 0, 26) and name.startswith("replica_"):
        return "slave_" + name[len("replica_"):]
    return name


#: The authentication plugin removed in 9.0.0 (MySQL 8.0 and 8.4 manuals, 8.4.1.1 'Native Pluggable
#: Authentication': deprecated as of 8.0.34, disabled by default in 8.4, removed as of 9.0.0; a replica
#: of 9.x cannot authenticate to its source as a user of that plugin).
NATIVE_PASSWORD_REMOVED: Version = (9, 0, 0)


def known_release(version: Version) -> Release | None:
    """The release row whose series ``version`` belongs to (8.4.3 -> 8.4; 8.0.36 -> 8.0.30), or
    None when no row of :data:`RELEASES` is of that major.minor series (99.1, 9.8)."""
    series = [r for r in RELEASES if r.first[:2] == version[:2]]
    if not series:
        return None
    return next((r for r in reversed(series) if version >= r.first), series[0])


def known_targets() -> str:
    """The releases a review can target, in words (for the error that names them)."""
    return ", ".join(r.label for r in RELEASES if r.first[2] == 0 and r.first[:2] != (8, 0))


def upgrade_path(old: Version, new: Version) -> list[Release]:
    """The hops of a supported upgrade from ``old`` to ``new``: through each LTS series between
    them (8.0 -> 8.4 LTS -> 9.7 LTS -> 26.x), then ``new``'s release (MySQL 8.4, 9.5 and 9.7 manuals,
    3.2 'Upgrade Paths', Table 3.1: from an LTS series to the next LTS series, or to an innovation
    release before the next LTS; an innovation release after the next LTS takes two steps)."""
    hops = [r for r in RELEASES if r.lts and old[:2] < r.first[:2] < new[:2]]
    if old[0] < 8 and new[:2] > (8, 0):  # 5.7: "upgrade first to a MySQL 8.0 bugfix release (8.0.34 or later)"
        hops.insert(0, replace(release((8, 0, 34)), first=(8, 0, 34), label="8.0.34"))
    return [*hops, release(new)]
