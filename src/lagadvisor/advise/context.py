"""Everything the rules look at: one analysis pass, the dependency graph, the simulation facts,
the server's settings when known, and a cached simulator for what-ifs.

All simulated effects are catch-up times (a stopped replica applying the whole input) from
``sim.engine`` with the same cost model, plus p99 lag against the source's commit timeline for
the baseline and the suggested configuration.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from ..analysis.analyze import Stats
from ..analysis.native import analysis_of
from ..analysis.results import Analysis
from ..depgraph.graph import GraphSummary, hot_rows_max
from ..depgraph.pipeline import ClockOptions
from ..depgraph.read import Collectors, GraphRequest, ReadRequest, prepare, read
from ..depgraph.policies import POLICIES
from ..kinds import Policy, ReplicaMode, WhatIfKey
from ..binlog.framing import version_tuple
from ..kinds import Applier
from ..server.schema import ServerSettings
from ..sim.build import BASE_COLUMNS, TrxFacts, base_columns, fact_rows, fact_sum
from ..sim.facts import FactColumns, ReferenceFacts, read_facts
from ..sim.model import WORK_TERMS, CostModel, ReplicaConfig
from ..sim.run import window_for
from ..sim.store import FactStore, LogStore, ReplayedFacts
from ..sim.stream import SimSummary, chunks_of, first_ts_of, run_summary
from ..versions import release, writeset_only
from ..writeset.tracker import WhatIf

if TYPE_CHECKING:
    from ..native.results import NativeFacts

WORKERS = (1, 2, 4, 8, 16, 32)
REPLICA_DEFAULTS = release((8, 0, 27))   # the replica's defaults assumed without --host: MySQL's since 8.0.27
DEFAULT_WORKERS = REPLICA_DEFAULTS.replica_parallel_workers
#: The default lag target (advise --lag-target): a finding is critical only when the replica, as it
#: runs now, has a simulated lag p99 above it.
LAG_TARGET_S = 1.0


@dataclass(frozen=True)
class Baseline:
    """The replica as it is (read from --host, else MySQL's defaults)."""

    clock: Policy              # RECORDED (what the source wrote) or a policy
    workers: int
    preserve_commit_order: bool
    durable: bool
    assumed: tuple[str, ...]   # settings not read from a server
    mode: ReplicaMode = ReplicaMode.LOGICAL_CLOCK  # the applier's scheduling (ReplicaConfig.mode): MariaDB's slave_parallel_mode
    given: tuple[str, ...] = ()  # settings given with advise --replica-setting (over the server's)


@dataclass(frozen=True)
class Context:
    """What the rules look at, built whole (``context_of``; a variant is a ``dataclasses.replace``)."""

    paths: list[str]
    analysis: Analysis
    graph: GraphSummary
    facts: list[TrxFacts]
    cost: CostModel
    settings: ServerSettings | None
    options: ClockOptions
    baseline: Baseline
    version: tuple[int, int, int]
    mariadb: bool
    # tables without any index: table -> [UPDATE/DELETE rows events, table rows scanned]
    scans: dict = field(default_factory=dict)
    window_s: float | None = None   # lag windows: None = chosen from the span (sim.run.window_for)
    target_version: tuple[int, int, int] | None = None  # advise --target-version: the pre-upgrade review
    version_from: str = "binlog"    # where ``version`` was read: binlog, --host or --current-version
    jobs: int = 1                   # simulations run at once (advise --jobs)
    cores_given: bool | None = None  # advise --cores given (True) or not (False); None: not said (fleet)
    cores_read: str = ""            # not given: how the server's settings showed them (server.cores), or ""
    ws_log: LogStore | None = None  # the main pass's writeset log (native): what-ifs replay it
    # the what-if facts computed elsewhere (``fleet``: per-file passes on the cluster), cached here
    what_ifs: Callable[[WhatIf, int | None], list[TrxFacts]] | None = field(default=None, repr=False)
    lag_target_s: float = LAG_TARGET_S  # advise --lag-target: the lag p99 a replica must stay under
    reproduce: tuple[str, ...] = ()     # the simulate options besides a configuration's (--schema, --cores, ...)
    given: dict = field(default_factory=dict)  # advise --replica-setting NAME=VALUE, over the server's
    plan: Any = None                    # the plan (advise.plan.Plan), computed before the rules
    # The caches: per-object state, the only fields that change after construction (filled as the
    # rules ask). A ``dataclasses.replace`` copy shares them: the copies made here change the paths
    # shown, the settings, the target or the window before any simulation is cached, never the facts
    # or the cost model they are keyed under.
    _trx_cache: dict = field(default_factory=dict, repr=False, compare=False)
    _sim_cache: dict = field(default_factory=dict, repr=False, compare=False)
    _what_if_cache: dict = field(default_factory=dict, repr=False, compare=False)

    # -- simulation -------------------------------------------------------------------------
    def run(self, clock: Policy, workers: int, *, preserve: bool | None = None, durable: bool | None = None,
            facts: list[TrxFacts] | None = None, key: WhatIfKey = WhatIfKey(), catch_up: bool = True,
            mode: ReplicaMode | None = None, applier: Applier = Applier.MTA) -> SimSummary:
        """One simulation's summary (cached): one pass over the facts (``sim.stream``), with the
        lag per window of the source's timeline when it is not a catch-up. ``key`` names the
        what-if that gave ``facts``."""
        b = self.baseline
        preserve = b.preserve_commit_order if preserve is None else preserve
        durable = b.durable if durable is None else durable
        mode = mode or b.mode
        k = (clock, workers, preserve, durable, key, catch_up, mode, applier)
        if k not in self._sim_cache:
            f = self.facts if facts is None else facts
            window = 0.0 if catch_up else window_for(self.facts, self.window_s)
            cfg = ReplicaConfig(workers, preserve, durable, mode=mode, applier=applier)
            self._sim_cache[k] = run_summary(f, clock, cfg, self.cost,
                                             catch_up=catch_up, threshold_s=1.0, window_s=window,
                                             origin_us=first_ts_of(self.facts), chart=not catch_up)
        return self._sim_cache[k]

    def prefetch(self, requests: list[tuple[str, int, dict]]) -> None:
        """Run these simulations (``run``'s arguments) on ``jobs`` threads ahead of the rules
        (the native engine runs without the GIL; the results are the same as one by one)."""
        if self.jobs <= 1:
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for f in [pool.submit(self.run, clock, w, **kw) for clock, w, kw in requests]:
                f.result()

    def seconds(self, clock: Policy, workers: int, **kw) -> float:
        return self.run(clock, workers, **kw).apply_us / 1e6

    def with_cost(self, cost: CostModel) -> "Context":
        """This context priced by another cost model (a what-if on the workers' costs: the same
        facts, so no pass over the files), with caches of its own: the simulations and sums
        cached here are this cost model's."""
        return replace(self, cost=cost, _trx_cache={}, _sim_cache={}, _what_if_cache={})

    def work_us_total(self) -> float:
        """The workers' apply time of every transaction, summed in binlog order (the sum of
        ``cost.apply_us`` over the facts, from the simulation's cached work column)."""
        if "work" not in self._trx_cache:
            self._trx_cache["work"] = self._work_sum(self.cost)
        return self._trx_cache["work"]

    def _work_sum(self, cost: CostModel) -> float:
        """``cost.apply_us`` summed over every transaction in binlog order, natively from the fact
        columns where there are some (chunk by chunk, one running sum: the same float as one sum
        over the run)."""
        chunks = chunks_of(self.facts, ("seq", *BASE_COLUMNS))
        if chunks is None:
            return sum(base_columns(self.facts, cost, catch_up=True)[1])
        from ..sim.facts import FactList

        total = 0.0
        for _, c in chunks:
            total = sum(base_columns(FactList(c), cost, catch_up=True)[1], total)
        return total

    def schema_counts(self) -> dict[str, int]:
        """The secondary index entries and foreign-key checks of the whole input (``TrxFacts``
        ``index_entries``, ``fk_checks``) and those past the cost model's per-row share
        (``sim.model.extra_index_entries``, ``extra_fk_checks``): the extra ones summed as the
        apply time of a model that prices one of them at 1 us and nothing else (natively from
        the fact columns: no Python loop over tens of millions of transactions), a pass each
        only where there are some (none without a schema)."""
        if "schema" not in self._trx_cache:
            zero = dict.fromkeys(WORK_TERMS, 0.0)
            counts = {"entries": fact_sum(self.facts, "index_entries"), "checks": fact_sum(self.facts, "fk_checks")}
            for name, total, term in (("extra_entries", "entries", "index_entry_us"),
                                      ("extra_checks", "checks", "fk_check_us")):
                counts[name] = (int(round(self._work_sum(replace(self.cost, **{**zero, term: 1.0}))))
                                if counts[total] else 0)
            self._trx_cache["schema"] = counts
        return self._trx_cache["schema"]

    def resource_seconds(self, res: SimSummary, workers: int, durable: bool) -> dict[str, float]:
        """What each resource of the replica costs over the whole input, in seconds (not additive:
        the stages overlap), for a simulation ``res`` at ``workers`` workers: the commit stage, the
        workers' CPU spread over the cores they can use, and the coordinator's reads (summed once,
        cached). The commit stage is the binlog group commit's pipeline (sim/engine.py) over the
        simulated groups: the flush stage (each group's redo fsync), the sync stage (each group's
        binlog fsync) and the commit stage (``commit_us`` per member, ``commit_group_us`` per commit group:
        ``res.commit_groups``) run at once, so the longest
        of the three; on one fsync device the two fsyncs take turns, so they add up. Each fsync
        also writes its group's bytes (``fsync_byte_us``). The redo fsyncs are counted at the
        binlog fsyncs' number (``res.flushes``; a flush group can be smaller, merged at the sync
        stage), a lower bound."""
        cost = self.cost
        if "coordinator" not in self._trx_cache:  # one pass over the sizes, none kept
            coordinator, total = 0.0, 0
            for b, ev in fact_rows(self.facts, ("nbytes", "events")):
                coordinator += cost.coordinator_us(b, ev)
                total += b
            self._trx_cache["coordinator"], self._trx_cache["bytes"] = coordinator, total
        commit_cpu = len(self.facts) * cost.commit_us + res.commit_groups * cost.commit_group_us
        if not durable:
            stage = commit_cpu
        else:
            per_byte = cost.fsync_byte_us * self._trx_cache["bytes"]
            redo = res.flushes * cost.redo_flush_us + per_byte
            binlog = res.flushes * cost.flush_us + per_byte
            stage = max(commit_cpu, redo + binlog) if cost.fsync_devices == 1 else max(commit_cpu, redo, binlog)
        return {"commit and fsync": stage / 1e6,
                "worker CPU": (self.work_us_total() * cost.worker_cpu(workers)
                               + len(self.facts) * cost.worker_add_us(workers)
                               + res.switches * cost.switch_add_us(workers))
                / max(1, min(max(workers, 1), cost.cores)) / 1e6,
                "coordinator": self._trx_cache["coordinator"] / 1e6}

    def bound_by(self, res: SimSummary, workers: int, durable: bool) -> str:
        """What limits a simulated catch-up of several workers ``res``: the largest part of the
        simulated coordinator's time, as the many-core lab reads a real one's performance_schema
        stages (bench/manycore/advise_check.py): reading events (``coordinator``), asleep on a
        dependency (``dependencies``), or waiting for a free worker, which then names the workers'
        larger cost, their commit stage (``commit and fsync``) or their CPU (``worker CPU``)."""
        seconds = self.resource_seconds(res, workers, durable)
        split = {"coordinator": seconds["coordinator"], "dependencies": res.dependency_wait_us / 1e6,
                 "workers": res.worker_wait_us / 1e6}
        name = max(split, key=lambda k: (split[k], k))
        if name == "workers":
            name = "commit and fsync" if seconds["commit and fsync"] >= seconds["worker CPU"] else "worker CPU"
        return name

    def lag_p99(self, clock: Policy, workers: int, **kw) -> float:
        return self.run(clock, workers, catch_up=False, **kw).lag_p99_us / 1e6

    def curve(self, clock: Policy, **kw) -> dict[int, float]:
        """Simulated catch-up seconds by worker count."""
        return {w: self.seconds(clock, w, **kw) for w in WORKERS}

    @property
    def policies(self) -> tuple[Policy, ...]:
        """Policies the source can use: 8.4+ has WRITESET only (versions.py); MariaDB none of them."""
        if self.mariadb:
            return ()
        if writeset_only(self.version):
            return (Policy.WRITESET,)
        return POLICIES

    def setting(self, name: str) -> tuple[str | None, str]:
        """A replica or source setting as every rule reads it: (value, where it came from):
        ``--replica-setting`` first, then the server's, else (None, "")."""
        if name in self.given:
            return self.given[name], "--replica-setting"
        v = self.settings.get(name) if self.settings else None
        if v is None:
            return None, ""
        origin = getattr(self.settings, "origin", None)
        return v, (origin(name) if callable(origin) else self.settings.host)

    def severity(self, gain: float, floor=None):
        """The severity rule (``findings.severity_for``) with this replica's lag against its target."""
        from .findings import Severity, severity_for

        return severity_for(gain, floor or Severity.info, bool(self.plan is not None and self.plan.misses_target))

    def dialect(self, before_upgrade: bool = False):
        """The server statements are for (``statements.Dialect``): the target release after an
        upgrade (the plan is the upgraded servers'), else the source's own."""
        from .statements import Dialect

        target = self.target_version if self.target_version is not None and not before_upgrade else self.version
        return Dialect(tuple(target), self.mariadb)

    def plan_workers(self) -> int:
        """The worker count the plan runs (the baseline's where there is no plan)."""
        return self.plan.recommended.workers if self.plan is not None else max(self.baseline.workers, 1)

    # -- what-ifs -------------------------------------------------------------------------
    def what_if_facts(self, what_if: WhatIf, history_size: int | None = None) -> list[TrxFacts]:
        """The facts under a what-if, replayed from the main pass's writeset log (no file is
        read again): a larger history, rows that stop conflicting, foreign keys dropped, and a
        primary key on keyless tables (whose hashes the main pass took alongside). One more
        pass over the files when the log cannot replay it exactly (a primary key on a
        transaction of more than 500,000 rows, a key the native side does not hash), and
        always on the reference path."""
        k = (what_if, history_size)
        if k in self._what_if_cache:
            return self._what_if_cache[k]
        schema_change = bool(what_if.add_primary_key or what_if.drop_foreign_keys_to)
        if self.what_ifs is not None:
            self._what_if_cache[k] = self.what_ifs(what_if, history_size)
        elif (self.ws_log is not None and isinstance(self.facts, FactStore) and self.analysis.policies is not None
                and not (schema_change and self.ws_log.unsafe)):
            self._what_if_cache[k] = ReplayedFacts(self.facts, self.ws_log,
                                                   history_size or self.analysis.policies.history_size, what_if)
        else:
            opts = replace(self.options, what_if=what_if, labels=bool(what_if.ignore_rows),
                           catalog=copy.deepcopy(self.options.catalog),
                           history_size=history_size or self.options.history_size)
            self._what_if_cache[k] = read_facts(self.paths, opts, prepare(self.paths, opts)).facts
        return self._what_if_cache[k]


MARIADB_DEFAULT_THREADS = 0  # slave_parallel_threads: MariaDB's default is the single-threaded applier


#: What advise --replica-setting may give: the settings the baseline reads.
REPLICA_SETTINGS = ("replica_parallel_workers", "replica_preserve_commit_order", "sync_binlog",
                    "innodb_flush_log_at_trx_commit", "slave_parallel_mode")
#: The largest number a numeric replica setting may be given as.
REPLICA_SETTING_MAX = 1024


def replica_setting_problem(name: str, value: str) -> str | None:
    """Why ``value`` cannot be the replica's ``name`` (one of :data:`REPLICA_SETTINGS`), or None:
    the one rule for advise --replica-setting and the fleet file's replica table."""
    if name in ("replica_parallel_workers", "sync_binlog", "innodb_flush_log_at_trx_commit"):
        if not (value.isascii() and value.isdigit() and int(value) <= REPLICA_SETTING_MAX):
            return f"{name} is a whole number (0..{REPLICA_SETTING_MAX})"
    elif name == "replica_preserve_commit_order" and value.upper() not in ("ON", "OFF", "1", "0"):
        return f"{name} is ON or OFF"
    return None


def baseline_from(settings: ServerSettings | None, mariadb: bool = False,
                  version: tuple[int, int, int] = (0, 0, 0), given: dict[str, str] | None = None) -> Baseline:
    """The replica's settings: ``given`` (advise --replica-setting) first, then the server's,
    else the defaults of the source's server family (MySQL 8.0.27+: 4 workers with commit order
    preserved; MariaDB: ``slave_parallel_threads=0``, and its parallel applier always commits in
    order)."""
    assumed = []
    given = given or {}

    def var(name: str, default: str) -> str:
        if name in given:
            return given[name]
        v = settings.get(name) if settings else None
        if v is None:
            assumed.append(name)
            return default
        return v

    default_workers = MARIADB_DEFAULT_THREADS if mariadb else DEFAULT_WORKERS
    workers = int(var("replica_parallel_workers", str(default_workers)) or 0)
    preserve = True if mariadb else var("replica_preserve_commit_order", REPLICA_DEFAULTS.default("replica_preserve_commit_order")).upper() in ("ON", "1")
    sync = var("sync_binlog", "1")
    flush = var("innodb_flush_log_at_trx_commit", "1")
    durable = sync != "0" and flush == "1"
    mode = ReplicaMode.LOGICAL_CLOCK
    if mariadb:  # slave_parallel_mode: optimistic by default since 10.5.1, conservative before
        default_mode = (ReplicaMode.MARIADB_OPTIMISTIC if version >= (10, 5, 1) or version == (0, 0, 0)
                        else ReplicaMode.MARIADB_CONSERVATIVE)
        mode = ReplicaMode.of_mariadb(var("slave_parallel_mode", default_mode.parallel_mode).lower())
    return Baseline(Policy.RECORDED, workers, preserve, durable, tuple(assumed), mode,
                    tuple(k for k in REPLICA_SETTINGS if k in given))


def gather(paths: list[str], options: ClockOptions, cost: CostModel, settings: ServerSettings | None,
           on_transaction=None, on_progress=None) -> Context:
    """One pass: the analysis, the WRITESET dependency graph with labelled hot rows, the facts.
    The native core collects all three while it reads (``on_progress(file, offset)`` now and
    then); when it gives the run back, the reference reads it (``on_transaction`` for each)."""
    opts = replace(options, labels=True, catalog=copy.deepcopy(options.catalog))
    run = prepare(paths, opts)
    store = FactStore()
    log = LogStore()

    def take(f: NativeFacts) -> None:
        store.add(FactColumns.from_native(f))
        log.add(f.ws_log, f.ws_log_unsafe)

    ref = ReferenceFacts(paths, FactStore())   # the reference's facts, in bounded memory as the native core's
    scans: dict[str, list[int]] = {}

    def observe(t, ws, c):
        sizes = ref.scans
        before = dict(sizes.net) if ws.scans and sizes.file == t.file else {}
        ref.observe(None, t, ws, c)
        for table, events, known in ws.scans:
            acc = scans.setdefault(table, [0, 0])
            acc[0] += events
            acc[1] += events * max(known, before.get(table, 0))

    stats = Stats(on_transaction, observe)
    graph = GraphRequest(Policy.WRITESET, cost.graph_weights(), None, hot_rows_max())
    r = read(ReadRequest(tuple(paths), opts, run, Collectors(facts=True, on_facts=take, ws_log=log.add, graph=graph,
                                                             observe=stats.observe), on_progress=on_progress))
    if r.native is not None:
        scans = {table: [events, rows] for table, events, rows in sorted(r.native.facts.scans)}
        ref.store.close()
        return context_of(list(paths), analysis_of(r), r.graph, store, cost, settings, options, scans, log)
    store.close()
    log.close()
    return context_of(list(paths), stats.analysis(r, list(paths)), r.graph, ref.done(), cost, settings, options,
                      scans)


def context_of(paths: list[str], result: Analysis, graph: GraphSummary, facts: list[TrxFacts], cost: CostModel,
               settings: ServerSettings | None, options: ClockOptions, scans: dict | None = None,
               ws_log: LogStore | None = None) -> Context:
    """The context from a finished pass (``gather``'s, with its writeset log when the native core
    read, or ``fleet``'s merged per-file parts)."""
    written = result.policies.written if result.policies else None
    version = version_tuple(written.server_version if written else "")
    mariadb = bool(written and written.mariadb)
    version_from = "binlog"
    if (written is None or not written.server_version) and settings is not None and settings.version:
        version = version_tuple(settings.version)  # the files do not say: the server does
        version_from = "--host"
    if settings is not None and settings.version:
        mariadb = mariadb or settings.mariadb
    return Context(list(paths), result, graph, facts, cost, settings, options,
                   baseline_from(settings, mariadb, version), version, mariadb, dict(scans or {}),
                   version_from=version_from, ws_log=ws_log)
