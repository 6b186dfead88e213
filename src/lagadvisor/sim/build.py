"""From transactions and their clocks to the applier's view (:class:`SimInput` columns).

The builders return columns, not one object per transaction: a sweep over a million
transactions builds them once per clock, and the native engine reads them as buffers.
"""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass
from itertools import islice, repeat

from ..kinds import CLOCKS, Policy, ReplicaMode
from .engine import ENTERED, PREFIX, SPECIFIC, SimInput
from .model import CostModel

_CLOCK_COLUMNS = tuple(c.column for c in CLOCKS)  # sim.facts.FactColumns


def _arrivals(facts: list["TrxFacts"], catch_up: bool) -> list[float]:
    """Arrival on the replica = the source's commit time (relative); 0 for all in catch-up."""
    if catch_up:
        return [0.0] * len(facts)
    first = first_commit_ts(facts)
    return [float(f.commit_ts_us - first) if f.commit_ts_us else 0.0 for f in facts]


@dataclass(frozen=True, slots=True)
class TrxFacts:
    """What the simulation needs of one transaction (kept for every transaction: small)."""

    file_idx: int
    seq: int
    clocks: tuple[int, int, int, int]   # recorded, COMMIT_ORDER, WRITESET, WRITESET_SESSION
    commit_ts_us: int
    inserts: int
    updates: int
    deletes: int
    nbytes: int
    dbs: tuple[str, ...]
    commit_id: int | None
    mariadb_flags: int = 0              # MariaDB Gtid_log_event flags2 (FL_WAITED, FL_DDL, ...)
    scan_rows: int = 0                  # table rows the replica scans for it (tables without an index)
    fk_checks: int = 0                  # foreign-key checks the replica's InnoDB runs for it
                                        # (writeset.extract.fk_check_count)
    index_entries: int = 0              # secondary index entries it writes (writeset.extract.index_entry_count)
    events: int = 0                     # its binlog events (Transaction.event_count): the coordinator reads
                                        # each (CostModel.dispatch_event_us); every reader sets it


#: The optional columns of MariaDB's fields (``sim.columns.FactColumns.of_facts``), after ``FACT_COLUMNS``;
#: here, below the columns module, so that ``fact_rows`` reads them without importing it.
MARIADB_COLUMNS = ("commit_id", "mariadb")
#: ``mariadb``'s bit saying the transaction has a ``commit_id`` (the low byte is its GTID's flags2).
HAS_COMMIT_ID = 0x100


def mariadb_column_values(commit_id: int | None, flags: int) -> tuple[int, int]:
    """(``commit_id`` column, ``mariadb`` column) of one transaction: the commit id as a signed
    64-bit value (the event's u64, two's complement), and its GTID flags2 with
    :data:`HAS_COMMIT_ID` when there is one."""
    if not 0 <= flags <= 0xFF:
        raise ValueError(f"MariaDB GTID flags2 {flags} is not one byte")
    if commit_id is None:
        return 0, flags
    return commit_id - (1 << 64) if commit_id >= 1 << 63 else commit_id, flags | HAS_COMMIT_ID


def mariadb_fields(value: int, mariadb: int) -> tuple[int | None, int]:
    """The ``(commit_id, mariadb_flags)`` that :func:`mariadb_column_values` stored."""
    if not mariadb & HAS_COMMIT_ID:
        return None, mariadb & 0xFF
    return value + (1 << 64) if value < 0 else value, mariadb & 0xFF


def mariadb_columns(c) -> tuple:
    """Every transaction's ``commit_id`` and ``mariadb_flags`` of fact columns ``c``
    (``sim.columns.FactColumns``): as stored, or None and 0 where it has no MariaDB columns."""
    if c.commit_id is None:
        return repeat(None, len(c)), repeat(0, len(c))
    pairs = [mariadb_fields(v, m) for v, m in zip(c.commit_id, c.mariadb)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


#: The fact columns the engine's base columns are built from (:func:`native_base`), in its order.
BASE_COLUMNS = ("commit_ts_us", "inserts", "updates", "deletes", "nbytes", "scan_rows", "fk_checks", "index_entries",
                "events")


def native_base(native, c, weights: tuple[float, ...], catch_up: bool, first: int | None = None) -> tuple[bytes, bytes]:
    """The native core's arrival and work columns (bytes of ``array('d')``) of fact columns ``c``
    (``sim_base_columns``, the float operations of :meth:`CostModel.apply_us`); ``first``: the
    run's earliest commit time when ``c`` is one chunk of it."""
    return native.sim_base_columns(*(getattr(c, n).tobytes() for n in BASE_COLUMNS), weights, catch_up, first)


Base = tuple[array, array, array, array]   # arrival_us ('d'), work_us ('d'), nbytes ('q'), events ('q')


def fact_column(facts, name: str):
    """The ``array('q')`` column ``name`` of facts read natively (``sim.facts.FactList``), else
    None: iterate the ``TrxFacts``."""
    cols = getattr(facts, "columns", None)
    return getattr(cols, name) if cols is not None and len(cols) == len(facts) else None


def fact_sum(facts, name: str) -> int:
    """The sum of fact ``name`` over the input, whatever holds it: a spilled ``FactStore`` chunk
    by chunk (reading that column alone back from the spill file), native columns, or
    ``TrxFacts``."""
    if getattr(facts, "chunks", None) is not None and getattr(facts, "columns", None) is None:
        return sum(sum(getattr(c, name)) for _, c in facts.chunks((name,)))
    col = fact_column(facts, name)
    if col is not None:
        return sum(col)
    return sum(getattr(f, name) for f in facts)


def fact_rows(facts, names: tuple[str, ...]):
    """``(fact, ...)`` of each transaction in binlog order for the ``TrxFacts`` fields in
    ``names`` (a clock by its column: ``recorded``, ``commit_order``, ``writeset``,
    ``writeset_session``): from the columns when the facts are columns (a ``FactStore`` chunk by
    chunk, reading only those), without building a ``TrxFacts`` per transaction."""
    if getattr(facts, "chunks", None) is not None:
        wanted = ("seq",) + tuple(c for n in names for c in (MARIADB_COLUMNS if n in ("commit_id", "mariadb_flags")
                                                            else ("dbset",) if n == "dbs" else (n,)))  # seq: the length
        chunks = facts.chunks(wanted)
    else:
        cols = getattr(facts, "columns", None)
        chunks = [(0, cols)] if cols is not None and len(cols) == len(facts) else None
    if chunks is None:
        get = [(lambda f, k=_CLOCK_COLUMNS.index(n): f.clocks[k]) if n in _CLOCK_COLUMNS else
               (lambda f, n=n: getattr(f, n)) for n in names]
        for f in facts:
            yield tuple(g(f) for g in get)
        return
    mariadb = {"commit_id", "mariadb_flags"}.intersection(names)
    for _, c in chunks:
        fields = mariadb_columns(c) if mariadb else None
        yield from zip(*(_column_values(c, n, fields) for n in names))


def _column_values(c, name: str, mariadb):
    """Fact ``name`` of every transaction of columns ``c`` (:func:`fact_rows`; ``mariadb``: its
    :func:`mariadb_columns`)."""
    if name == "dbs":
        return [c.dbsets[k] for k in c.dbset]
    if name in ("commit_id", "mariadb_flags"):
        return mariadb[name == "mariadb_flags"]
    return getattr(c, name)


def first_commit_ts(facts) -> int:
    """The earliest known source commit time (0 when none is known)."""
    if getattr(facts, "first_ts", None) is not None:  # a FactStore tracked it as it filled
        return facts.first_ts
    col = fact_column(facts, "commit_ts_us")
    values = (v for v in col if v) if col is not None else (f.commit_ts_us for f in facts if f.commit_ts_us)
    return min(values, default=0)


def _native_columns(facts):
    """``facts.columns`` when the facts came from native columns and the native core is loaded."""
    cols = getattr(facts, "columns", None)
    if cols is None or len(cols) != len(facts):
        return None, None
    from .engine import NATIVE

    if NATIVE is None or not hasattr(NATIVE, "sim_clock_needs"):
        return None, None
    return cols, NATIVE


def base_columns(facts: list[TrxFacts], cost: CostModel, *, catch_up: bool) -> Base:
    """The columns that do not depend on the clock: arrival, apply work, size in bytes and in
    events (natively from the fact columns when there are some: the same float operations)."""
    cols, native = _native_columns(facts)
    if cols is not None:
        a, w = native_base(native, cols, cost.work_weights(), catch_up)
        arrival, work = array("d"), array("d")
        arrival.frombytes(a)
        work.frombytes(w)
        return arrival, work, array("q", cols.nbytes), array("q", cols.events)
    from .engine import NATIVE

    if getattr(facts, "chunks", None) is not None and NATIVE is not None:   # a spilled store, chunk by chunk
        arrival, work, nbytes, events = array("d"), array("d"), array("q"), array("q")
        first, weights = first_commit_ts(facts), cost.work_weights()
        for _, c in facts.chunks(BASE_COLUMNS):
            a, w = native_base(NATIVE, c, weights, catch_up, first)
            arrival.frombytes(a)
            work.frombytes(w)
            nbytes.extend(c.nbytes)
            events.extend(c.events)
        return arrival, work, nbytes, events
    return (array("d", _arrivals(facts, catch_up)),
            array("d", [cost.apply_of(f) for f in facts]),
            array("q", [f.nbytes for f in facts]), array("q", [f.events for f in facts]))


def sets_barrier(lc: int, seq: int, prev_seq: int | None) -> bool:
    """Whether a transaction is a barrier that later ones cannot look past: the first of a file
    (``prev_seq`` None: ``start_new_group``), ``last_committed`` 0 or a break in sequence numbers.
    The CSA's ``Dependency_adapter_lwm::solve`` (dependency_adapter_lwm.h) sets
    ``id_after_barrier`` there, so a later ``last_committed`` that points before it waits for it
    (:func:`logical_clock`'s floor)."""
    return prev_seq is None or lc <= 0 or seq != prev_seq + 1


def is_barrier(lc: int, seq: int, prev_seq: int | None) -> bool:
    """Whether the logical clock makes a transaction wait for every one before it: a barrier
    (:func:`sets_barrier`) or a ``last_committed`` not below its own sequence number
    (rpl_mta_submode.cc ``schedule_next_event`` makes that one a new group: its clock is
    ``SEQ_UNINIT``). The CSA's ``solve`` does not find such a parent and falls back to the last
    barrier; the need column serves both appliers, so this one transaction keeps the MTA's rule
    (a later one's floor is the CSA's: this is no barrier for them)."""
    return sets_barrier(lc, seq, prev_seq) or seq <= lc


def logical_clock(facts: list[TrxFacts], clock: str, cost: CostModel, *, catch_up: bool,
                  base: Base | None = None) -> SimInput:
    """LOGICAL_CLOCK scheduling input for one clock (``recorded`` or a policy name); *base*
    reuses :func:`base_columns` across clocks. A barrier (:func:`is_barrier`) needs every
    transaction before it; another needs the one its ``last_committed`` names, counted back
    from its own sequence number, floored at the last barrier (:func:`sets_barrier`): the
    CSA's delay less one (``Dependency_adapter_lwm::solve``). The MTA hands transactions out in
    order, so for it the floor changes nothing."""
    k = CLOCKS.index(clock)
    cols, native = _native_columns(facts)
    if cols is not None:
        needs = array("q")
        needs.frombytes(native.sim_clock_needs(cols.file_idx.tobytes(), cols.seq.tobytes(),
                                               getattr(cols, _CLOCK_COLUMNS[k]).tobytes())[0])
        arrival, work, nbytes, events = base or base_columns(facts, cost, catch_up=catch_up)
        return SimInput(arrival, work, nbytes, needs, array("b", bytes(len(facts))), events)
    needs = array("q", bytes(8 * len(facts)))
    prev_file = -1
    prev_seq = 0
    seg_start = 0
    for i, f in enumerate(facts):
        lc = f.clocks[k]
        seq = f.seq
        prev = prev_seq if f.file_idx == prev_file else None   # a new file: start_new_group()
        if sets_barrier(lc, seq, prev):
            seg_start = i  # the last barrier (solve's id_after_barrier): the floor of those after it
        barrier = is_barrier(lc, seq, prev)
        prev_file, prev_seq = f.file_idx, seq
        if barrier or i == 0:
            needs[i] = i - 1
        else:
            needs[i] = max(seg_start - 1, i - (seq - lc))
    arrival, work, nbytes, events = base or base_columns(facts, cost, catch_up=catch_up)
    return SimInput(arrival, work, nbytes, needs, array("b", bytes(len(facts))), events)  # all PREFIX (0)


def database_partitioned(facts: list[TrxFacts], cost: CostModel, *, catch_up: bool,
                         base: Base | None = None) -> SimInput:
    """5.6 DATABASE mode (:func:`database_needs`)."""
    return with_needs(database_needs(facts), base or base_columns(facts, cost, catch_up=catch_up))


def database_needs(facts):
    """5.6 DATABASE mode: transactions on different databases run in parallel; a transaction
    waits for the previous one on (any of) its databases; none or more than 16 databases is a
    barrier (``OVER_MAX_DBS_IN_EVENT_MTS``). Each transaction's ``(need, kind, retried)``, in
    binlog order (:func:`with_needs`)."""
    last: dict[str, int] = {}
    for i, (dbs,) in enumerate(fact_rows(facts, ("dbs",))):
        if not dbs or len(dbs) > 16:
            yield i - 1, PREFIX, False
            last = {d: i for d in dbs}
            continue
        yield max((last.get(d, -1) for d in dbs), default=-1), SPECIFIC, False
        for d in dbs:
            last[d] = i


def mariadb_conservative(facts: list[TrxFacts], cost: CostModel, *, catch_up: bool,
                         base: Base | None = None) -> SimInput:
    """MariaDB ``slave_parallel_mode=conservative`` (:func:`conservative_needs`)."""
    return with_needs(conservative_needs(facts), base or base_columns(facts, cost, catch_up=catch_up))


def conservative_needs(facts):
    """MariaDB ``slave_parallel_mode=conservative``: a group commit (same commit_id) applies in
    parallel; the next group starts once the previous one has started to commit
    (rpl_parallel.cc ``rpl_parallel::do_event``). ``(need, kind, retried)`` as :func:`database_needs`."""
    prev_group_last = -1
    prev_cid: object = object()
    for i, (cid,) in enumerate(fact_rows(facts, ("commit_id",))):
        if cid is None or cid != prev_cid:
            prev_group_last = i - 1
        prev_cid = cid
        yield prev_group_last, ENTERED, False


# MariaDB Gtid_log_event flags2 (log_event.h)
FL_TRANSACTIONAL, FL_ALLOW_PARALLEL, FL_WAITED, FL_DDL = 4, 8, 16, 32
#: Share of a transaction's work lost when a speculative attempt is rolled back and retried: the
#: conflicting row is, on average, halfway through it (an assumption; MariaDB counts retries in
#: ``slave_retried_transactions``, which a calibration could compare with).
RETRY_WASTE = 0.5


def mariadb_speculative(facts: list[TrxFacts], cost: CostModel, workers: int, *, aggressive: bool,
                        catch_up: bool, base: Base | None = None) -> SimInput:
    """MariaDB ``optimistic`` and ``aggressive`` (:func:`speculative_needs`)."""
    return with_needs(speculative_needs(facts, workers, aggressive),
                      base or base_columns(facts, cost, catch_up=catch_up))


def speculative_needs(facts, workers: int, aggressive: bool):
    """MariaDB ``slave_parallel_mode=optimistic`` (the default since 10.5) and ``aggressive``
    (rpl_parallel.cc ``rpl_parallel::do_event``, speculation modes): transactional event groups
    start at once, in parallel, and commit in order. A transaction waits for every earlier one
    to commit first when it is DDL, non-transactional, not allowed to run in parallel, or, in
    optimistic mode only, when it waited for a row lock on the source (``FL_WAITED``).

    A speculative transaction that conflicts with an earlier one still in flight (its row is in
    the earlier one's writeset: the re-derived WRITESET clock names the latest such transaction)
    is killed and retried once that one has committed: it waits for it, and pays
    :data:`RETRY_WASTE` of its work again (``retried``). Workers hold a transaction until it commits and
    commits are in order, so when transaction ``i`` starts everything up to ``i - workers`` has
    committed: only conflicts with the ``workers - 1`` before it can be in flight.
    ``(need, kind, retried)`` as :func:`database_needs`."""
    k = CLOCKS.index(Policy.WRITESET)
    prev_file, seg_start = -1, 0
    recent: deque = deque(maxlen=max(workers, 1))   # the commit ids of the transactions just before
    rows = fact_rows(facts, ("mariadb_flags", "file_idx", "seq", _CLOCK_COLUMNS[k], "commit_id"))
    for i, (flags, file_idx, seq, lc, cid) in enumerate(rows):
        if file_idx != prev_file:
            seg_start = i
        prev_file = file_idx
        serial = (flags & FL_DDL or not flags & FL_TRANSACTIONAL or not flags & FL_ALLOW_PARALLEL
                  or (not aggressive and flags & FL_WAITED))
        if serial or i == 0:
            yield i - 1, PREFIX, False
        else:
            j = max(seg_start - 1, i - (seq - lc)) if 0 < lc < seq else i - 1
            yield j, SPECIFIC, j >= 0 and i - j < max(workers, 1) and recent[j - i] != cid
        recent.append(cid)


def with_needs(rows, base: Base) -> SimInput:
    """The engine's input from a mode's ``(need, kind, retried)`` rows and the base columns."""
    arrival, work, nbytes, events = base
    work = array("d", work)
    return SimInput(arrival, work, nbytes, *take_needs(rows, len(work), work), events)


def take_needs(rows, n: int, work: array) -> tuple[array, array]:
    """The next ``n`` of a mode's ``(need, kind, retried)`` rows as the need and kind columns;
    a retried transaction's ``work`` (the same ``n``, in place) grows by :data:`RETRY_WASTE`."""
    needs, kinds = array("q"), array("b")
    for i, (need, kind, retried) in enumerate(islice(rows, n)):
        needs.append(need)
        kinds.append(kind)
        if retried:
            work[i] += RETRY_WASTE * work[i]
    return needs, kinds


def mode_needs(mode: ReplicaMode, facts, workers: int):
    """The ``(need, kind, retried)`` rows of a mode other than ``logical_clock``, in binlog order
    (a generator: ``sim.stream`` takes them chunk by chunk)."""
    if mode == ReplicaMode.DATABASE:
        return database_needs(facts)
    if mode == ReplicaMode.MARIADB_CONSERVATIVE:
        return conservative_needs(facts)
    return speculative_needs(facts, workers, mode == ReplicaMode.MARIADB_AGGRESSIVE)


def scheduler_input(mode: ReplicaMode, facts: list[TrxFacts], clock: Policy, cost: CostModel, workers: int, *,
                    catch_up: bool, base: Base | None = None) -> SimInput:
    """The applier's input under a scheduling ``mode`` (``ReplicaConfig.mode``): the swappable
    piece between facts and the engine. Only the speculative MariaDB modes depend on
    ``workers``; only ``logical_clock`` on ``clock``."""
    if mode == ReplicaMode.DATABASE:
        return database_partitioned(facts, cost, catch_up=catch_up, base=base)
    if mode == ReplicaMode.MARIADB_CONSERVATIVE:
        return mariadb_conservative(facts, cost, catch_up=catch_up, base=base)
    if mode in WORKER_DEPENDENT:
        return mariadb_speculative(facts, cost, workers, aggressive=mode == ReplicaMode.MARIADB_AGGRESSIVE,
                                   catch_up=catch_up, base=base)
    return logical_clock(facts, clock, cost, catch_up=catch_up, base=base)


#: Modes whose input depends on the worker count (built per worker count).
WORKER_DEPENDENT = frozenset({ReplicaMode.MARIADB_OPTIMISTIC, ReplicaMode.MARIADB_AGGRESSIVE})
