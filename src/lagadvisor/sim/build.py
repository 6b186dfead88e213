"""From transactions and their clocks to the applier's view (:class:`SimInput` columns).

The builders return columns, not one object per transaction: a sweep over a million
transactions builds them once per clock, and the native engine reads them as buffers.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from .engine import ENTERED, PREFIX, SPECIFIC, SimInput
from .model import CostModel

CLOCKS = ("recorded", "COMMIT_ORDER", "WRITESET", "WRITESET_SESSION")


def _arrivals(facts: list["TrxFacts"], catch_up: bool) -> list[float]:
    """Arrival on the replica = the source's commit time (relative); 0 for all in catch-up."""
    if catch_up:
        return [0.0] * len(facts)
    first = min((f.commit_ts_us for f in facts if f.commit_ts_us), default=0)
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


Base = tuple[array, array, array]   # arrival_us ('d'), work_us ('d'), nbytes ('q')


def base_columns(facts: list[TrxFacts], cost: CostModel, *, catch_up: bool) -> Base:
    """The columns that do not depend on the clock: arrival, apply work, size."""
    return (array("d", _arrivals(facts, catch_up)),
            array("d", [cost.apply_us(f.inserts, f.updates, f.deletes, f.nbytes) for f in facts]),
            array("q", [f.nbytes for f in facts]))


def logical_clock(facts: list[TrxFacts], clock: str, cost: CostModel, *, catch_up: bool,
                  base: Base | None = None) -> SimInput:
    """LOGICAL_CLOCK scheduling input for one clock (``recorded`` or a policy name); *base*
    reuses :func:`base_columns` across clocks."""
    k = CLOCKS.index(clock)
    needs = array("q", bytes(8 * len(facts)))
    prev_file = -1
    prev_seq = 0
    seg_start = 0
    for i, f in enumerate(facts):
        lc = f.clocks[k]
        seq = f.seq
        if f.file_idx != prev_file:
            seg_start = i
            barrier = True  # source rotation: start_new_group()
        else:
            barrier = lc <= 0 or seq != prev_seq + 1 or seq <= lc
        prev_file, prev_seq = f.file_idx, seq
        if barrier or i == 0:
            needs[i] = i - 1
        else:
            needs[i] = max(seg_start - 1, i - (seq - lc))
    arrival, work, nbytes = base or base_columns(facts, cost, catch_up=catch_up)
    return SimInput(arrival, work, nbytes, needs, array("b", bytes(len(facts))))  # all PREFIX (0)


def database_partitioned(facts: list[TrxFacts], cost: CostModel, *, catch_up: bool,
                         base: Base | None = None) -> SimInput:
    """5.6 DATABASE mode: transactions on different databases run in parallel; a transaction
    waits for the previous one on (any of) its databases; none or more than 16 databases is a
    barrier (``OVER_MAX_DBS_IN_EVENT_MTS``)."""
    needs = array("q")
    kinds = array("b")
    last: dict[str, int] = {}
    for i, f in enumerate(facts):
        if not f.dbs or len(f.dbs) > 16:
            needs.append(i - 1)
            kinds.append(PREFIX)
            last = {}
            for d in f.dbs:
                last[d] = i
            continue
        needs.append(max((last.get(d, -1) for d in f.dbs), default=-1))
        kinds.append(SPECIFIC)
        for d in f.dbs:
            last[d] = i
    arrival, work, nbytes = base or base_columns(facts, cost, catch_up=catch_up)
    return SimInput(arrival, work, nbytes, needs, kinds)


def mariadb_conservative(facts: list[TrxFacts], cost: CostModel, *, catch_up: bool,
                         base: Base | None = None) -> SimInput:
    """MariaDB ``slave_parallel_mode=conservative``: a group commit (same commit_id) applies in
    parallel; the next group starts once the previous one has started to commit
    (rpl_parallel.cc ``rpl_parallel::do_event``)."""
    needs = array("q")
    prev_group_last = -1
    prev_cid: object = object()
    for i, f in enumerate(facts):
        if f.commit_id is None or f.commit_id != prev_cid:
            prev_group_last = i - 1
        prev_cid = f.commit_id
        needs.append(prev_group_last)
    arrival, work, nbytes = base or base_columns(facts, cost, catch_up=catch_up)
    return SimInput(arrival, work, nbytes, needs, array("b", [ENTERED]) * len(facts))
