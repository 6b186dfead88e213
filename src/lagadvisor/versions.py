"""Server-version facts shared by the clocks, the help texts and the README (one source).

Kept free of imports so the CLI can quote it in ``--help`` without loading the engine.
"""

from __future__ import annotations

#: ``binlog_transaction_dependency_history_size`` defaults, newest first: (first version, default).
#: 25,000 up to 9.4 (sys_vars.cc, and 8.4's manual); 1,000,000 from 9.5.0 (release notes:
#: "increased from 25000 to 1000000", Bug #38178087); 10,000,000 read off a real 9.7.4 server.
#: 9.6 is assumed to be 1,000,000 (not verified): pass ``--history-size`` when it matters.
#: MariaDB has no writeset history; its clock is re-derived with the 25,000 of MySQL 8.0.
HISTORY_SIZE_DEFAULTS: tuple[tuple[tuple[int, int, int], int], ...] = (
    ((9, 7, 0), 10_000_000),
    ((9, 5, 0), 1_000_000),
    ((0, 0, 0), 25_000),
)


def history_size_default(version: tuple[int, int, int], mariadb: bool = False) -> int:
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
