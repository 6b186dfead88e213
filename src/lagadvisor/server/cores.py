"""The replica's CPU cores, as far as a server's settings show them (issue 33: ``advise`` reads
what a server exposes before it assumes).

MySQL reports no processor count over SQL. From 8.4.0, though, ``innodb_read_io_threads``
defaults to "the number of available logical processors on the system divided by 2, with a
minimum default value of 4" (MySQL 8.4, 9.x and 26.x Reference Manuals, 17.8.5 "Configuring the
Number of Background InnoDB I/O Threads"; 8.0's default is a fixed 4), within its range 1-64. So a
server of 8.4 or later whose value is still the compiled default
(``performance_schema.variables_info.VARIABLE_SOURCE = 'COMPILED'``, readable without privileges)
bounds its logical processors: 2v or 2v+1 for 4 < v < 64, at most 9 for v = 4, 128 or more for
v = 64. What it counts is what the server counts: a container's CPU quota may be below it.
MariaDB's variable means something else (its asynchronous I/O slots): nothing is read there.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..binlog.framing import version_tuple
from .connection import as_text

#: The first release whose innodb_read_io_threads default follows the processors.
SINCE = (8, 4, 0)
MINIMUM, MAXIMUM = 4, 64


@dataclass(frozen=True, slots=True)
class ExposedCores:
    """Logical processors bounded by a server's compiled default: ``low``..``high`` (``high``
    None: no upper bound), and ``cores``, the count assumed within them (the lower of an exact
    pair, the upper bound of a capped range, the lower bound of an open one)."""

    read_io_threads: int
    low: int
    high: int | None
    cores: int

    def sentence(self, where: str = "the replica") -> str:
        """Where the count comes from, for the assumptions line (``where``: the server read, as
        ``advise --host`` may name the source)."""
        how = (f"innodb_read_io_threads={self.read_io_threads} at its compiled default (half the logical "
               f"processors MySQL counts, at least {MINIMUM})")
        if self.high is None:
            span = f"{self.low} or more"
        elif self.low == 1:
            span = f"at most {self.high}"
        else:
            span = f"{self.low} or {self.high}"
        return (f"read from {where}: {how}: {span}, {self.cores} assumed (a container's CPU limit is not in "
                "it; --cores to give them)")


def exposed_cores(version: str, read_io_threads: str | None, source: str | None) -> ExposedCores | None:
    """The server's logical processors from ``@@version``, ``@@innodb_read_io_threads`` and its
    ``VARIABLE_SOURCE``, or None when they do not show them (before 8.4.0, MariaDB, a value set in
    a file or on the command line, or one not read)."""
    if not version or "mariadb" in version.lower() or version_tuple(version) < SINCE:
        return None
    if source is None or source.upper() != "COMPILED" or read_io_threads is None:
        return None
    try:
        v = int(read_io_threads)
    except ValueError:
        return None
    if not MINIMUM <= v <= MAXIMUM:
        return None
    if v == MINIMUM:
        return ExposedCores(v, 1, 2 * MINIMUM + 1, 2 * MINIMUM + 1)
    if v == MAXIMUM:
        return ExposedCores(v, 2 * MAXIMUM, None, 2 * MAXIMUM)
    return ExposedCores(v, 2 * v, 2 * v + 1, 2 * v)


def variable_sources(cur, names: tuple[str, ...], error: type[Exception]) -> dict[str, str]:
    """performance_schema.variables_info's VARIABLE_SOURCE of ``names`` (COMPILED: the default),
    by lowercase name, over either driver's cursor (``error``: its error class); {} where the
    table is not (MariaDB, 5.7)."""
    try:
        cur.execute("SELECT VARIABLE_NAME, VARIABLE_SOURCE FROM performance_schema.variables_info WHERE "
                    "VARIABLE_NAME IN (" + ",".join(["%s"] * len(names)) + ")", names)
        return {as_text(n).lower(): as_text(v) for n, v in cur.fetchall()}
    except error:
        return {}


def shown_by(cur, error: type[Exception]) -> ExposedCores | None:
    """:func:`exposed_cores` of the server behind ``cur`` (either driver; ``error``: its error
    class): its version, innodb_read_io_threads and that variable's source."""
    try:
        cur.execute("SELECT @@version, @@innodb_read_io_threads")
        (version, threads), = cur.fetchall()
    except error:   # a server without the variable: nothing shown
        return None
    source = variable_sources(cur, ("innodb_read_io_threads",), error).get("innodb_read_io_threads")
    return exposed_cores(as_text(version), as_text(threads), source)
