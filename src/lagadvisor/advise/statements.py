"""What advise writes for a server to run: SET statements and my.cnf lines in the form the server's
release accepts (``versions.VARIABLES``: the variables each release has, and their names), so a
block pasted into the ``mysql`` client, or a my.cnf given to ``mysqld --validate-config``, runs as
printed (tests/advise/test_what_it_writes.py runs them on real MySQL 9.x and MariaDB 10.11).

Permanent settings are persisted (MySQL 8.0+: ``SET PERSIST``; MariaDB and 5.7: ``SET GLOBAL`` and
the my.cnf line); settings meant only while a replica catches up are ``SET GLOBAL``, never
persisted, and their revert is a comment. Every statement and every comment is one line.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..versions import Version, accepts, replica_name


@dataclass(frozen=True)
class Dialect:
    """The server a statement is for: its version, and whether it is MariaDB."""

    version: Version
    mariadb: bool = False

    @property
    def persists(self) -> bool:
        """SET PERSIST exists (MySQL 8.0+)."""
        return not self.mariadb and self.version >= (8, 0, 0)

    def has(self, name: str) -> bool:
        """Whether this server has the variable, under the name it gives it (``name``)."""
        return self.mariadb or accepts(self.version, self.name(name))

    def name(self, name: str) -> str:
        """A replica variable as this server names it (``slave_`` before MySQL 8.0.26)."""
        return name if self.mariadb else replica_name(self.version, name)

    def stop(self, sql_thread: bool = True) -> str:
        if self.mariadb or self.version < (8, 0, 22):
            return "STOP SLAVE SQL_THREAD;" if sql_thread else "STOP SLAVE;"
        return "STOP REPLICA SQL_THREAD;" if sql_thread else "STOP REPLICA;"

    def start(self, sql_thread: bool = True) -> str:
        return self.stop(sql_thread).replace("STOP", "START", 1)


Statements = tuple[str, ...]
MyCnf = tuple[tuple[str, str], ...]


def _value(value: str) -> str:
    return value if value.isdigit() or value.upper() in ("ON", "OFF") else f"'{value}'"


def persist(d: Dialect, name: str, value: str) -> Statements:
    """A permanent change of a dynamic variable (none when the release lacks it)."""
    if not d.has(name):
        return ()
    name = d.name(name)
    if d.persists:
        return (f"SET PERSIST {name} = {_value(value)};",)
    return (f"SET GLOBAL {name} = {_value(value)};", f"-- and {name} = {value} in my.cnf, to survive a restart")


def applier_change(d: Dialect, name: str, value: str) -> Statements:
    """A change of an applier setting, which takes effect when the applier restarts: MySQL stops
    the SQL thread around it; MariaDB refuses a change of slave_parallel_* while the slave runs
    (error 1198 on a real 10.11, which accepts it once the SQL thread is stopped): the whole slave
    is stopped (STOP SLAVE)."""
    sql_thread = not d.mariadb
    return (d.stop(sql_thread), *persist(d, name, value), d.start(sql_thread))


def catch_up_durability(d: Dialect) -> Statements:
    """Relaxed durability while the replica catches up: SET GLOBAL (not persisted), the crash
    safety it needs and the revert as comments, each on its own line."""
    autopos = ("CHANGE MASTER TO MASTER_USE_GTID = slave_pos;" if d.mariadb else
               "CHANGE REPLICATION SOURCE TO SOURCE_AUTO_POSITION = 1;" if d.version >= (8, 0, 23) else
               "CHANGE MASTER TO MASTER_AUTO_POSITION = 1;")
    return ("SET GLOBAL sync_binlog = 0;", "SET GLOBAL innodb_flush_log_at_trx_commit = 2;",
            f"-- crash safety first: {autopos}",
            "-- crash safety first: relay_log_recovery = ON in my.cnf (read at startup)",
            "-- once caught up: SET GLOBAL sync_binlog = 1;",
            "-- once caught up: SET GLOBAL innodb_flush_log_at_trx_commit = 1;")


def mycnf(d: Dialect, lines: MyCnf) -> tuple[MyCnf, tuple[str, ...]]:
    """(the lines this release accepts, with its names; the names it lacks)."""
    kept, dropped = [], []
    for name, value in lines:
        if d.has(name):
            kept.append((d.name(name), value))
        else:
            dropped.append(name)
    return tuple(kept), tuple(dropped)
