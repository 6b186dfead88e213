"""``lagadvisor fleet``: ``advise`` for every source server of a fleet, on Dask distributed.

:mod:`.spec` reads the fleet file and lists each server's binlogs (local directories, globs,
``.index`` files, fsspec URLs); :mod:`.tasks` holds the per-file and per-server tasks;
:mod:`.cluster` schedules them on an embedded ``LocalCluster`` or an existing cluster. A server's
advice equals ``advise`` on that server's files alone (byte-identical JSON: tests/fleet).
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from ..errors import LagAdvisorError
from .cluster import FleetRun, connect, run_fleet
from .spec import ServerEntry, entries_from_dirs, list_binlogs, load_fleet, setting_text
from .tasks import ServerJob, ServerResult, _error
from ..kinds import CommitOrderInput
from ..report.fleet import FLEET_SCHEMA_VERSION
from ..versions import parse_version


def build_job(entry: ServerEntry, run_id: str) -> ServerJob:
    """What the tasks of one server need, built on the client: its files listed, its schema and
    settings read (``--host``-style settings as ``advise`` reads them), its cost model loaded."""
    from ..depgraph.pipeline import ClockOptions
    from ..errors import ConfigError, SchemaError
    from ..inputs import distinct_files
    from ..schema.ddl import read_schema_path
    from ..server.connection import ClientArgs, ServerOptions, password_from_env, resolve
    from ..server.schema import ServerSettings, catalog_from_server, settings_from_server
    from ..server.tls import Tls
    from ..sim.model import CostModel

    files, copies = distinct_files(list_binlogs(entry.binlogs))
    settings = None
    catalog = None
    resolved = None
    if entry.host or entry.socket or entry.login_path or entry.defaults_file:
        # resolved as `advise --host` resolves its options (connection.resolve): option files,
        # the login path, then the fleet entry's own keys
        ssl = {k: v for k, v in (("ssl-ca", entry.ssl_ca), ("ssl-cert", entry.ssl_cert),
                                 ("ssl-key", entry.ssl_key), ("ssl-mode", entry.ssl_mode)) if v is not None}
        r = resolve(ClientArgs(entry.host, entry.port, entry.user, entry.socket, password_from_env(),
                               entry.login_path, entry.defaults_file, None, False, ssl))
        # a defaults file alone connects when it names the host or socket (as the CLI's rule)
        if entry.host or entry.socket or entry.login_path or any(
                r.sources.get(k, "").startswith(f"{entry.defaults_file} [") for k in ("host", "socket")):
            resolved = r
    if resolved is not None:
        r = resolved
        server = ServerOptions(r.host, r.port, r.user, r.password, None,
                               Tls.from_options(r.ssl.get("ssl-mode"), r.ssl.get("ssl-ca"), r.ssl.get("ssl-cert"),
                                                r.ssl.get("ssl-key")), socket=r.socket)
        settings = settings_from_server(server)
        catalog = catalog_from_server(server)
    elif entry.schema:
        loaded = read_schema_path(entry.schema)
        if not loaded.catalog.tables:  # a fleet entry's schema that gives nothing is a mistake in the file
            raise SchemaError(loaded.warnings(entry.schema)[-1])
        catalog = loaded.catalog
    if entry.replica:
        variables = {k: setting_text(v) for k, v in entry.replica.items()}
        if settings is None:
            settings = ServerSettings("fleet file", variables, None, ("replica settings from the fleet file",))
        else:
            settings = replace(settings, variables={**settings.variables, **variables},
                               notes=settings.notes + ("replica settings from the fleet file",))
    cost = CostModel.from_file(entry.cost_model) if entry.cost_model else CostModel()
    exposed = settings.cores() if settings is not None and not entry.cores else None
    if entry.cores or exposed is not None:
        cost = replace(cost, cores=entry.cores or exposed.cores)
    if entry.commit_order not in tuple(CommitOrderInput):
        raise ConfigError(f"commit_order must be auto, recorded, serial or flush-groups, not {entry.commit_order}")
    opts = ClockOptions(history_size=entry.history_size, commit_order=entry.commit_order, catalog=catalog)
    target = parse_version(entry.target_version) if entry.target_version else None
    return ServerJob(entry.name, tuple(files), opts, cost, settings, run_id, target, cores_given=bool(entry.cores),
                     cores_read=exposed.sentence(settings.host) if exposed is not None else "", copies=tuple(copies),
                     reproduce=(("--schema", entry.schema) if entry.schema and resolved is None else ())
                     + (("--cost-model", entry.cost_model) if entry.cost_model else ()))


def fleet(entries: list[ServerEntry], client) -> FleetRun:
    """Every server's advice (in the entries' order); a server whose files cannot be listed or
    whose settings cannot be read is a one-line error, and the others still run."""
    run_id = uuid.uuid4().hex[:12]
    jobs: list[ServerJob] = []
    early: dict[int, ServerResult] = {}
    for n, e in enumerate(entries):
        try:
            jobs.append(build_job(e, run_id))
        except (LagAdvisorError, OSError) as err:  # this server's input: its line, the others still run
            early[n] = ServerResult(e.name, [], error=_error(err, shown=e.binlogs))
    run = run_fleet(jobs, client)
    done = iter(run.results)
    run.results = [early[n] if n in early else next(done) for n in range(len(entries))]
    return run


__all__ = ["FLEET_SCHEMA_VERSION", "FleetRun", "ServerEntry", "ServerResult", "connect", "entries_from_dirs",
           "fleet", "load_fleet", "run_fleet"]
