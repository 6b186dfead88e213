"""Table definitions read from a live server's information_schema (read-only, SELECT only).

Uses mysql-connector-python (:func:`.connection.connect`). The definitions are the server's own (collations resolved, index
names as stored, foreign keys with their referenced columns), so they are preferred over the
schema file and the binlog's DDL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import SchemaError
from ..schema.model import Catalog, Column, ForeignKey, Key, KeyPart, TableSchema
from .connection import ServerOptions, as_text as _text, connect
from .cores import ExposedCores, HostCores, exposed_cores, host_cores, on_this_host, variable_sources

SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")


def _rows(cur, sql: str, args=()):
    cur.execute(sql, args)
    return cur.fetchall()


def load_catalog(conn, databases: list[str] | None = None) -> Catalog:
    """Read tables, columns, PRIMARY/UNIQUE indexes and foreign keys of user schemas."""
    import mysql.connector

    where = "TABLE_SCHEMA NOT IN (%s)" % ",".join(["%s"] * len(SYSTEM_SCHEMAS))
    args: list = list(SYSTEM_SCHEMAS)
    if databases:
        where += " AND TABLE_SCHEMA IN (%s)" % ",".join(["%s"] * len(databases))
        args += databases
    cat = Catalog()
    try:
        cur = conn.cursor()
        server_coll = _rows(cur, "SELECT @@collation_server")[0][0]
        cat.server_collation = server_coll
        listed = _rows(cur, "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_COLLATION, ENGINE, TABLE_ROWS FROM "
                            f"information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND {where}", args)
        tables = {(r[0], r[1]): (r[2], r[3]) for r in listed}
        sizes = {(r[0], r[1]): int(r[4] or 0) for r in listed}
        # any non-unique, non-fulltext index: the replica seeks rows through it, and writes its entries
        plain: dict[tuple[str, str], dict[str, list]] = {}
        plain_functional: set[tuple[str, str, str]] = set()
        for schema, table, index, col, sub, expr in _rows(
                cur, "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, COLUMN_NAME, SUB_PART, EXPRESSION FROM "
                     "information_schema.STATISTICS WHERE NON_UNIQUE = 1 AND INDEX_TYPE NOT IN ('FULLTEXT', "
                     f"'SPATIAL') AND {where} ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX", args):
            plain.setdefault((schema, table), {}).setdefault(index, []).append(
                KeyPart(col or "", int(sub) if sub is not None else None))
            if col is None or expr is not None:
                plain_functional.add((schema, table, index))
        cols: dict[tuple[str, str], list[Column]] = {k: [] for k in tables}
        for schema, table, name, dtype, clen, nullable, coll, cset, ctype, extra in _rows(
                cur, "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, "
                     "IS_NULLABLE, COLLATION_NAME, CHARACTER_SET_NAME, COLUMN_TYPE, EXTRA "
                     f"FROM information_schema.COLUMNS WHERE {where} "
                     "ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION", args):
            if (schema, table) not in cols:
                continue
            ctype = (ctype.decode() if isinstance(ctype, bytes) else ctype or "").lower()
            extra = (extra.decode() if isinstance(extra, bytes) else extra or "").upper()
            cols[(schema, table)].append(Column(
                name, str(dtype).lower(), int(clen) if clen is not None else None, "unsigned" in ctype,
                nullable == "YES", coll.lower() if coll else None, cset.lower() if cset else None,
                "GENERATED" in extra, "INVISIBLE" in extra))
        keys: dict[tuple[str, str], dict[str, list]] = {}
        functional: set[tuple[str, str, str]] = set()
        for schema, table, index, seq, col, sub, expr in _rows(
                cur, "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART, "
                     f"EXPRESSION FROM information_schema.STATISTICS WHERE NON_UNIQUE = 0 AND {where} "
                     "ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX", args):
            parts = keys.setdefault((schema, table), {}).setdefault(index, [])
            if col is None or expr is not None:
                functional.add((schema, table, index))
            parts.append(KeyPart(col or "", int(sub) if sub is not None else None))
        fks: dict[tuple[str, str], dict[str, list]] = {}
        for schema, table, name, col, rschema, rtable, rcol in _rows(
                cur, "SELECT TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_SCHEMA, "
                     "REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE "
                     f"WHERE REFERENCED_TABLE_NAME IS NOT NULL AND {where} "
                     "ORDER BY TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION", args):
            fks.setdefault((schema, table), {}).setdefault(name, []).append((col, rschema, rtable, rcol))
        cur.close()
    except mysql.connector.Error as err:
        raise SchemaError(f"cannot read information_schema: {err}") from err
    for (schema, table), (coll, engine) in sorted(tables.items()):
        kl = []
        for index, parts in keys.get((schema, table), {}).items():
            kl.append(Key(index, tuple(parts), index == "PRIMARY", (schema, table, index) in functional))
        # TABLE_SHARE order: PRIMARY first, then unique keys in definition order is not exposed;
        # the order does not change writesets (the tracker's capacity test is per transaction).
        kl.sort(key=lambda k: (not k.primary, k.name))
        fl = [ForeignKey(name, tuple(p[0] for p in ps), ps[0][1], ps[0][2], tuple(p[3] for p in ps))
              for name, ps in sorted(fks.get((schema, table), {}).items())]
        il = tuple(Key(index, tuple(parts), False, (schema, table, index) in plain_functional)
                   for index, parts in sorted(plain.get((schema, table), {}).items()))
        cat.put(TableSchema(schema, table, tuple(cols[(schema, table)]), tuple(kl), tuple(fl),
                            coll.lower() if coll else None, "server", True, (engine or "").lower() or None,
                            bool(il), il))
        # TABLE_ROWS is InnoDB's estimate (within tens of percent): enough to price a full scan
        cat.table_rows[(schema.lower(), table.lower())] = sizes.get((schema, table), 0)
    return cat


def catalog_from_server(opts: ServerOptions, databases: list[str] | None = None) -> Catalog:
    conn = connect(opts)
    try:
        cat = load_catalog(conn, databases)
        if not cat.tables:
            _require_select(conn, opts)
        return cat
    finally:
        conn.close()


def _require_select(conn, opts: ServerOptions) -> None:
    """information_schema shows a user only the tables it has privileges on: an empty catalog
    from a user without any SELECT grant is a missing grant, not an empty server."""
    import mysql.connector

    try:
        cur = conn.cursor()
        grants = [_text(r[0]) for r in _rows(cur, "SHOW GRANTS")]
        cur.close()
    except mysql.connector.Error:
        return
    if any(re.search(r"^GRANT\s+(.*\bSELECT\b|ALL PRIVILEGES)", g, re.I) for g in grants):
        return
    who = opts.user or "the current user"
    raise SchemaError(f"{opts.host}:{opts.port}: user {who} lacks the SELECT privilege, so information_schema "
                      "shows it no tables (GRANT SELECT ON db.* TO the user, or use --schema FILE)")


# Variables the advisor reads (old and new names; a server answers with the names it has).
SETTINGS = (
    "version", "version_comment", "server_id", "log_bin", "gtid_mode", "binlog_format", "binlog_row_image",
    "binlog_row_metadata", "binlog_transaction_compression", "binlog_transaction_dependency_tracking",
    "binlog_transaction_dependency_history_size", "transaction_write_set_extraction",
    "binlog_group_commit_sync_delay", "binlog_group_commit_sync_no_delay_count", "sync_binlog",
    "innodb_flush_log_at_trx_commit", "replica_parallel_workers", "slave_parallel_workers",
    "replica_parallel_type", "slave_parallel_type", "replica_preserve_commit_order",
    "slave_preserve_commit_order", "replica_pending_jobs_size_max", "slave_pending_jobs_size_max",
    "relay_log_recovery", "log_replica_updates", "log_slave_updates", "sql_generate_invisible_primary_key",
    "slave_parallel_mode", "slave_parallel_threads", "innodb_read_io_threads",
)
# Old name -> the name the advisor uses.
_ALIASES = {"slave_parallel_workers": "replica_parallel_workers", "slave_parallel_type": "replica_parallel_type",
            "slave_preserve_commit_order": "replica_preserve_commit_order",
            "slave_pending_jobs_size_max": "replica_pending_jobs_size_max",
            "log_slave_updates": "log_replica_updates", "slave_parallel_threads": "replica_parallel_workers"}


#: The replica's applier settings the advisor simulates (advise --replica-setting's names and the
#: applier's others): a source's own values of them are not an applier's.
REPLICA_SCOPE = ("replica_parallel_workers", "replica_preserve_commit_order", "sync_binlog",
                 "innodb_flush_log_at_trx_commit", "slave_parallel_mode", "replica_parallel_type",
                 "replica_pending_jobs_size_max")
#: Applier settings a running applier read when it started (START REPLICA SQL_THREAD): a new
#: value waits for the next start.
APPLIER_START = ("replica_parallel_workers", "replica_preserve_commit_order", "replica_parallel_type",
                 "replica_pending_jobs_size_max")


@dataclass(frozen=True)
class ServerSettings:
    """What a live server says about itself: variables (by their current names), and its
    replication status when it is a replica. Read with SELECT-level access plus REPLICATION
    CLIENT (for the replica status; without it the status is simply absent).

    :attr:`role` is ``"replica"`` where the server has a replication channel, ``"source"`` where
    it has none (``SHOW REPLICA STATUS`` and the channel tables empty), None where it could not
    tell. :meth:`get` answers the value in effect: a source has no applier settings; a running
    applier's worker count is its worker rows' (``replication_applier_status_by_worker``), not the
    variable a later ``SET`` changed; :meth:`origin` says where each came from and
    :meth:`pending` which values wait for the applier's next start or the server's restart."""

    host: str
    variables: dict
    replica: dict | None = None
    notes: tuple[str, ...] = ()
    #: The default channel's row of performance_schema.replication_connection_configuration and
    #: replication_applier_configuration, by column (AUTO_POSITION, GTID_ONLY, REQUIRE_ROW_FORMAT,
    #: DESIRED_DELAY, ...; on 26.7+ also APPLIER_VERSION, APPLIER_WORKER_COUNT); None: not read
    #: (not a replica, or no access to performance_schema).
    channel: dict | None = None
    #: performance_schema.variables_info's VARIABLE_SOURCE of the variables it was read for
    #: (:data:`SOURCED`; COMPILED: the default), by name; empty where the table is not (MariaDB).
    sources: dict = field(default_factory=dict)
    #: "source" | "replica" | None (not known: SHOW REPLICA STATUS not readable).
    role: str | None = None
    #: Values the running applier uses where they differ in kind from a variable (by name):
    #: replica_parallel_workers from its worker rows while the applier runs.
    running: dict = field(default_factory=dict)
    #: performance_schema.persisted_variables (SET PERSIST, SET PERSIST_ONLY), by current name.
    persisted: dict = field(default_factory=dict)
    #: The server's CPUs read on this host, where it runs here (server.cores.host_cores); None: not here.
    host_cores: HostCores | None = None

    def get(self, name: str) -> str | None:
        """The value in effect (see the class): None for a source's applier settings."""
        if self.role == "source" and name in REPLICA_SCOPE:
            return None
        if name in self.running:
            return str(self.running[name])
        v = self.variables.get(name)
        return None if v is None else str(v)

    def origin(self, name: str) -> str:
        """Where :meth:`get`'s value comes from, in words ("" where it has none)."""
        if self.get(name) is None:
            return ""
        if name in self.running:
            return (f"{self.host}: the running applier (performance_schema.replication_applier_status_by_worker: "
                    f"{self.running[name]} workers running)")
        if name in self.persisted and str(self.persisted[name]) == str(self.variables.get(name)):
            return f"{self.host}: @@GLOBAL.{name}, persisted"
        if self.sources.get(name, "").upper() == "COMPILED":
            return f"{self.host}: @@GLOBAL.{name}, its compiled default"
        return f"{self.host}: @@GLOBAL.{name}"

    def pending(self) -> tuple[str, ...]:
        """Values set but not yet in effect, one sentence each: an applier setting changed while
        the applier runs (in effect at its next START REPLICA SQL_THREAD), a SET PERSIST_ONLY
        (at the next restart)."""
        out = []
        for name in SETTINGS:
            if name in _ALIASES or (self.role == "source" and name in REPLICA_SCOPE):
                continue
            now, var, kept = self.running.get(name), self.variables.get(name), self.persisted.get(name)
            if now is not None and var is not None and str(var) != str(now):
                how = "persisted (SET PERSIST)" if kept is not None and str(kept) == str(var) else "set"
                out.append(f"{name} = {var} pending: {how} while the applier runs {now}; in effect at the next "
                           "START REPLICA SQL_THREAD")
            if kept is not None and var is not None and str(kept) != str(var):
                out.append(f"{name} = {kept} pending: persisted (SET PERSIST_ONLY), {var} now; in effect at the next "
                           "restart")
        return tuple(out)

    def lines(self) -> tuple[str, ...]:
        """What a report says about the server's role and its pending values."""
        out = []
        if self.role == "source":
            out.append(f"{self.host} is a source (no replication channel): its binlogs are advised for a replica; "
                       "the replica's settings are not this server's (assumed, or --replica-setting), and no replica "
                       "statements are printed")
        return (*out, *(f"{self.host}: {p}" for p in self.pending()))

    @property
    def version(self) -> str:
        return self.get("version") or ""

    @property
    def mariadb(self) -> bool:
        return "mariadb" in (self.version + " " + (self.get("version_comment") or "")).lower()

    def cores(self) -> HostCores | ExposedCores | None:
        """The server's logical processors: read on this host where it runs here, else what its
        defaults show (:mod:`.cores`), or None."""
        if self.host_cores is not None:
            return self.host_cores
        if self.mariadb:
            return None
        return exposed_cores(self.version, self.get("innodb_read_io_threads"), self.sources.get("innodb_read_io_threads"))


def load_settings(conn, host: str, *, here: bool = False) -> ServerSettings:
    """The server's settings (``here``: it runs on this host, whose CPUs are read too)."""
    import mysql.connector

    notes = []
    variables: dict = {}
    try:
        cur = conn.cursor()
        names = ",".join(["%s"] * len(SETTINGS))
        for name, value in _rows(cur, f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})", SETTINGS):
            name, value = _text(name).lower(), _text(value)
            variables.setdefault(_ALIASES.get(name, name), value)
        replica = None
        for stmt in ("SHOW REPLICA STATUS", "SHOW SLAVE STATUS"):
            try:
                cur.execute(stmt)
                row = cur.fetchone()
                cols = [d[0] for d in cur.description or ()]
                cur.fetchall()
                replica = {c: _text(v) for c, v in zip(cols, row)} if row else None
                break
            except mysql.connector.Error as err:
                if getattr(err, "errno", None) in (1227, 1142):  # ER_SPECIFIC_ACCESS_DENIED_ERROR
                    notes.append("no REPLICATION CLIENT privilege: replica status not read")
                    break
                continue
        channel = _channel(cur, notes)
        sources = variable_sources(cur, SOURCED, mysql.connector.Error)
        role = _role(cur, replica, channel, notes, mariadb="mariadb" in " ".join(
            (variables.get("version", ""), variables.get("version_comment", ""))).lower())
        running = _running(cur) if role == "replica" else {}
        persisted = _persisted(cur)
        cores = host_cores(cur, mysql.connector.Error) if here else None
        cur.close()
    except mysql.connector.Error as err:
        raise SchemaError(f"cannot read server variables: {err}") from err
    return ServerSettings(host, variables, replica, tuple(notes), channel, sources, role, running, persisted,
                          cores)


def _role(cur, replica: dict | None, channel: dict | None, notes: list, *, mariadb: bool) -> str | None:
    """"replica" where the server has any replication channel, "source" where it has none, None
    where the replica status could not be read (a note says why)."""
    import mysql.connector

    if replica is not None or channel is not None:
        return "replica"
    if any("REPLICATION CLIENT" in n for n in notes):
        return None
    # SHOW REPLICA STATUS lists every channel on MySQL; MariaDB's names its default connection only
    stmt = ("SHOW ALL SLAVES STATUS" if mariadb else
            "SELECT COUNT(*) FROM performance_schema.replication_connection_configuration")
    try:
        cur.execute(stmt)
        rows = cur.fetchall()
    except mysql.connector.Error:
        return "source"   # SHOW REPLICA STATUS, readable, was empty
    if mariadb:
        return "replica" if rows else "source"
    return "replica" if rows and int(rows[0][0] or 0) else "source"


def _running(cur) -> dict:
    """The running applier's values (:attr:`ServerSettings.running`): replica_parallel_workers,
    the default channel's worker rows that run (a stopped applier keeps its last run's rows, OFF:
    it starts with the variable's value then, so nothing here); {} where the table is not
    readable (MariaDB, no access to performance_schema)."""
    import mysql.connector

    try:
        cur.execute("SELECT WORKER_ID, SERVICE_STATE FROM performance_schema.replication_applier_status_by_worker "
                    "WHERE CHANNEL_NAME = ''")
        rows = [(int(w or 0), _text(st)) for w, st in cur.fetchall()]
    except mysql.connector.Error:
        return {}
    on = [w for w, st in rows if st == "ON"]
    if not on:
        return {}
    # worker 0 alone: the single-threaded applier (replica_parallel_workers = 0, before 8.0.27's default)
    return {"replica_parallel_workers": sum(1 for w in on if w > 0)}


def _persisted(cur) -> dict:
    """performance_schema.persisted_variables of the settings read, by current name ({} where the
    table is not: MariaDB, 5.7)."""
    import mysql.connector

    try:
        cur.execute("SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.persisted_variables")
        rows = cur.fetchall()
    except mysql.connector.Error:
        return {}
    out: dict = {}
    for name, value in rows:
        name = _text(name).lower()
        if name in SETTINGS:
            out.setdefault(_ALIASES.get(name, name), _text(value))
    return out


#: Variables whose VARIABLE_SOURCE is read (readable without privileges on MySQL 8.0+):
#: whether they are at their compiled default.
SOURCED = ("innodb_read_io_threads",)


#: The replica's channel settings the Change Stream Applier's prerequisites name (MySQL 26.7
#: Reference Manual, 19.2.4.1): the default channel's rows of these tables, joined.
CHANNEL_TABLES = ("replication_connection_configuration", "replication_applier_configuration")


def _channel(cur, notes: list) -> dict | None:
    """The default channel's configuration (:data:`CHANNEL_TABLES`), or None when the server has
    no such channel or the user cannot read performance_schema (a note says which)."""
    import mysql.connector

    out: dict = {}
    for table in CHANNEL_TABLES:
        try:
            cur.execute(f"SELECT * FROM performance_schema.{table} WHERE CHANNEL_NAME = ''")
            row = cur.fetchone()
            cols = [d[0] for d in cur.description or ()]
            cur.fetchall()
        except mysql.connector.Error as err:
            notes.append(f"performance_schema.{table} not read: {err.msg if hasattr(err, 'msg') else err}")
            return None
        if row is None:
            return None
        out.update({c.upper(): _text(v) for c, v in zip(cols, row)})
    return out


def settings_from_server(opts: ServerOptions) -> ServerSettings:
    conn = connect(opts)
    try:
        return load_settings(conn, f"{opts.host}:{opts.port}", here=on_this_host(opts.host, opts.socket))
    finally:
        conn.close()
