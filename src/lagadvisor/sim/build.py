"""From transactions and their clocks to the applier's view (:class:`SimTrx` lists)."""

from __future__ import annotations

from dataclasses import dataclass

from .engine import ENTERED, PREFIX, SPECIFIC, SimTrx
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


def logical_clock(facts: list[TrxFacts], clock: str, cost: CostModel, *, catch_up: bool) -> list[SimTrx]:
    """LOGICAL_CLOCK scheduling input for one clock (``recorded`` or a policy name)."""
    k = CLOCKS.index(clock)
    out = []
    arrivals = _arrivals(facts, catch_up)
    prev_file = -1
    prev_seq = 0
    seg_start = 0
    for i, f in enumerate(facts):
        lc = f.clocks[k]
        if f.file_idx != prev_file:
            seg_start = i
            barrier = True  # source rotation: start_new_group()
        else:
            barrier = lc <= 0 or f.seq != prev_seq + 1 or f.seq <= lc
        prev_file, prev_seq = f.file_idx, f.seq
        if barrier or i == 0:
            need = i - 1
        else:
            need = max(seg_start - 1, i - (f.seq - lc))
        out.append(SimTrx(arrivals[i], cost.apply_us(f.inserts, f.updates, f.deletes, f.nbytes), f.nbytes,
                          need, PREFIX))
    return out


def database_partitioned(facts: list[TrxFacts], cost: CostModel, *, catch_up: bool) -> list[SimTrx]:
    """5.6 DATABASE mode: transactions on different databases run in parallel; a transaction
    waits for the previous one on (any of) its databases; none or more than 16 databases is a
    barrier (``OVER_MAX_DBS_IN_EVENT_MTS``)."""
    out = []
    last: dict[str, int] = {}
    arrivals = _arrivals(facts, catch_up)
    for i, f in enumerate(facts):
        arrival = arrivals[i]
        work = cost.apply_us(f.inserts, f.updates, f.deletes, f.nbytes)
        if not f.dbs or len(f.dbs) > 16:
            out.append(SimTrx(arrival, work, f.nbytes, i - 1, PREFIX))
            last = {}
            for d in f.dbs:
                last[d] = i
            continue
        need = max((last.get(d, -1) for d in f.dbs), default=-1)
        out.append(SimTrx(arrival, work, f.nbytes, need, SPECIFIC))
        for d in f.dbs:
            last[d] = i
    return out


def mariadb_conservative(facts: list[TrxFacts], cost: CostModel, *, catch_up: bool) -> list[SimTrx]:
    """MariaDB ``slave_parallel_mode=conservative``: a group commit (same commit_id) applies in
    parallel; the next group starts once the previous one has started to commit
    (rpl_parallel.cc ``rpl_parallel::do_event``)."""
    out = []
    arrivals = _arrivals(facts, catch_up)
    prev_group_last = -1
    prev_cid: object = object()
    for i, f in enumerate(facts):
        if f.commit_id is None or f.commit_id != prev_cid:
            prev_group_last = i - 1
        prev_cid = f.commit_id
        out.append(SimTrx(arrivals[i], cost.apply_us(f.inserts, f.updates, f.deletes, f.nbytes), f.nbytes,
                          prev_group_last, ENTERED))
    return out
