"""A live catch-up ETA for a lagging replica (``lagadvisor eta``): the estimate, from the
replica's snapshots (:class:`Snapshot`) and its backlog's transactions that ``server.eta`` reads.

What is left to apply is ``GTID_SUBTRACT(RECEIVED_TRANSACTION_SET, @@gtid_executed)``
(performance_schema.replication_connection_status). Those transactions are read from the source's
binlogs (``--source``, streamed from the newest file whose Previous_gtids the replica has
executed) or from the replica's relay logs when they are readable here, and simulated with the
replica's settings. The simulator gives each transaction's relative cost; the applier's progress
over a short sample (transactions leaving the backlog) gives the seconds per simulated second on
this server, so the ETA is calibrated on the replica itself. The band is the spread of that ratio
across the sample's intervals. While the source writes, the received set's growth is the arrival
rate; a configuration whose apply rate is below it never catches up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from ..errors import ConfigError
from ..kinds import Policy
from .build import scheduler_input
from .engine import simulate
from .model import CostModel, ReplicaConfig, workers_text

# -- GTID sets ---------------------------------------------------------------------------------


def parse_gtid_set(text: str | None) -> dict[str, list[tuple[int, int]]]:
    """``uuid[:tag]:1-5:7,uuid2:...`` as {``uuid[:tag]``: [(lo, hi), ...]} (inclusive)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for part in (text or "").replace("\n", "").split(","):
        part = part.strip()
        if not part:
            continue
        fields = part.split(":")
        sid = fields[0].lower()
        for f in fields[1:]:
            if f and (f[0].isalpha() or f[0] == "_"):
                sid = f"{fields[0].lower()}:{f.lower()}"  # a tag: the intervals after it are tagged
                continue
            lo, _, hi = f.partition("-")
            try:
                out.setdefault(sid, []).append((int(lo), int(hi or lo)))
            except ValueError:
                raise ConfigError(f"bad GTID set {text!r}") from None
    return out


def gtid_count(s: dict[str, list[tuple[int, int]]]) -> int:
    return sum(hi - lo + 1 for iv in s.values() for lo, hi in iv)


def gtid_in(s: dict[str, list[tuple[int, int]]], gtid: str | None) -> bool:
    if not gtid:
        return False
    sid, _, n = gtid.rpartition(":")
    try:
        k = int(n)
    except ValueError:
        return False
    return any(lo <= k <= hi for lo, hi in s.get(sid.lower(), ()))


class GtidIndex:
    """The backlog's GTIDs (in binlog order) by source ``uuid[:tag]``: their sequence numbers and
    positions, so that the last position an executed set covers is found by bisection per
    interval instead of by testing every GTID (a million-transaction backlog, at every
    estimate). A source whose numbers do not rise in binlog order is tested one by one."""

    def __init__(self, gtids: list[str]) -> None:
        self.gtids = gtids
        self.by: dict[str, tuple[list[int], list[int]]] = {}
        for i, g in enumerate(gtids):
            sid, _, n = g.rpartition(":")
            ns, ps = self.by.setdefault(sid.lower(), ([], []))
            ns.append(int(n))
            ps.append(i)
        self.ordered = all(all(a < b for a, b in zip(ns, ns[1:])) for ns, _ in self.by.values())

    def last_done(self, executed: dict[str, list[tuple[int, int]]]) -> int | None:
        """The highest position whose GTID ``executed`` holds (None: none)."""
        if not self.ordered:
            done = [i for i, g in enumerate(self.gtids) if gtid_in(executed, g)]
            return max(done) if done else None
        import bisect

        best = None
        for sid, (ns, ps) in self.by.items():
            for lo, hi in executed.get(sid, ()):
                j = bisect.bisect_right(ns, hi) - 1
                if j >= 0 and ns[j] >= lo and (best is None or ps[j] > best):
                    best = ps[j]
        return best


def gtid_subset(a: dict, b: dict) -> bool:
    """Every interval of ``a`` inside one of ``b``'s (``b`` merged by the server: no adjacent ones)."""
    return all(any(blo <= lo and hi <= bhi for blo, bhi in b.get(sid, ())) for sid, iv in a.items()
               for lo, hi in iv)


# -- the replica at one time (server.eta reads it) ------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    at: float                 # time.time()
    received: str
    executed: str
    unapplied: str
    receiver_on: bool
    applier_on: bool

    @property
    def left(self) -> int:
        return gtid_count(parse_gtid_set(self.unapplied))

    @property
    def received_count(self) -> int:
        return gtid_count(parse_gtid_set(self.received))


# -- the estimate ------------------------------------------------------------------------------


def commit_times(facts, cfg: ReplicaConfig, cost: CostModel) -> list[float]:
    """Simulated catch-up commit time of each backlog transaction (us from the start)."""
    if not facts:
        return []
    inp = scheduler_input(cfg.mode, facts, Policy.RECORDED, cost, cfg.workers, catch_up=True)
    res = simulate(inp, cfg, cost)
    t0 = min(res.arrival_us)
    return [c - t0 for c in res.commit_us]


@dataclass
class Option:
    name: str
    config: ReplicaConfig
    sim_s: float                 # simulated seconds for the backlog
    eta_s: float | None          # None: never catches up
    low_s: float | None = None
    high_s: float | None = None
    current: bool = False

    def describe(self) -> str:
        c = self.config
        return (f"{workers_text(c.workers)}, {'durable' if c.durable else 'relaxed'}, "
                f"preserve_commit_order={'ON' if c.preserve_commit_order else 'OFF'}")


@dataclass(frozen=True)
class Estimate:
    """One estimate, built whole (a later step derives a new one with ``dataclasses.replace``)."""

    at: float
    left: int
    applied_in_sample: int
    arrival_rate: float          # transactions/s received during the sample
    apply_rate: float            # transactions/s applied during the sample
    ratio: float | None          # real seconds per simulated second (None: not measured)
    options: list[Option]
    notes: list[str] = field(default_factory=list)
    waits: list[dict] = field(default_factory=list)
    basis: dict = field(default_factory=dict)    # what the estimate was made from (see server.eta.run)
    cpu_s: float | None = None                   # this process's CPU seconds so far

    @property
    def current(self) -> Option:
        return next(o for o in self.options if o.current)

    def to_json(self) -> dict:
        return {"at": self.at, "transactions_left": self.left, "arrival_rate_trx_s": self.arrival_rate,
                "apply_rate_trx_s": self.apply_rate, "seconds_per_simulated_second": self.ratio,
                "options": [{"setting": o.describe(), "workers": o.config.workers, "durable": o.config.durable,
                             "preserve_commit_order": o.config.preserve_commit_order, "current": o.current,
                             "eta_seconds": o.eta_s, "eta_low_seconds": o.low_s, "eta_high_seconds": o.high_s,
                             "done_at": None if o.eta_s is None else self.at + o.eta_s} for o in self.options],
                "applier_threads": self.waits, "notes": self.notes, "basis": self.basis,
                "cpu_seconds": None if self.cpu_s is None else round(self.cpu_s, 3)}


def alternatives(cur: ReplicaConfig) -> list[tuple[str, ReplicaConfig]]:
    """The current settings and what the advisor would try: more workers, relaxed durability,
    preserve order off."""
    out = [("current", cur)]
    for w in sorted({max(1, cur.workers) * 2, max(1, cur.workers) * 4, 8, 16}):
        if w > cur.workers:
            out.append((f"workers={w}", ReplicaConfig(w, cur.preserve_commit_order, cur.durable)))
    if cur.durable:
        out.append(("relaxed", ReplicaConfig(cur.workers, cur.preserve_commit_order, False)))
    if cur.preserve_commit_order and cur.workers > 1:
        out.append(("preserve off", ReplicaConfig(cur.workers, False, cur.durable)))
    return out


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def _thin(snaps: list[Snapshot], most: int = 16) -> list[Snapshot]:
    """At most ``most`` of the snapshots, evenly spread, the first and the last kept (a long
    --watch gathers hundreds; each costs a pass over the backlog's GTIDs)."""
    if len(snaps) <= most:
        return snaps
    step = (len(snaps) - 1) / (most - 1)
    return [snaps[round(k * step)] for k in range(most)]


def _window(snaps: list[Snapshot]) -> list[Snapshot]:
    """The snapshots the applier's rate is measured over: after the first (the backlog is read
    while the first is taken), thinned."""
    return _thin(snaps[1:] if len(snaps) > 2 else snaps)


def _rates(window: list[Snapshot], progress: list[float]) -> tuple[float | None, float, float]:
    """Real seconds per simulated second over the window (``progress``: simulated seconds of the
    work applied by each snapshot), and its lowest and highest over the window's intervals."""
    span = max(1e-6, window[-1].at - window[0].at)
    if progress[-1] <= progress[0]:
        return None, 1.0, 1.0
    ratio = span / (progress[-1] - progress[0])
    parts = [(b.at - a.at) / (sb - sa) for a, b, sa, sb in zip(window, window[1:], progress, progress[1:]) if sb > sa]
    lo, hi = (min(parts), max(parts)) if len(parts) >= 2 else (ratio, ratio)
    return ratio, lo, hi


def _stalled(last: Snapshot, span: float) -> str:
    if not last.applier_on:
        return ("the applier (SQL thread) is stopped: the ETA is the cost model's, not measured on this replica, "
                "and counts from START REPLICA SQL_THREAD")
    return f"the applier finished no backlog transaction in {span:.1f} s: the ETA is the cost model's, not measured " \
           "on this replica"


def _options(cfg: ReplicaConfig, rest: int, arrival: float, ratio: float | None, lo_r: float, hi_r: float,
             sim_of) -> list[Option]:
    """The current settings and the alternatives: ``sim_of(config)`` gives (simulated seconds of
    what is left, relative band of that number); while the source writes (``arrival`` trx/s), a
    setting that applies no faster never catches up and the others drain at the difference."""
    r = ratio or 1.0
    options = []
    for name, c in alternatives(cfg):
        sim_s, band = sim_of(c)
        eta = sim_s * r
        opt = Option(name, c, sim_s, eta, sim_s * min(lo_r, r) * (1 - band), sim_s * max(hi_r, r) * (1 + band),
                     name == "current")
        if arrival > 0 and rest:
            cap = rest / eta if eta > 0 else float("inf")   # transactions/s this setting applies
            if cap <= arrival:
                opt.eta_s = opt.low_s = opt.high_s = None
            else:
                k = cap / (cap - arrival)   # the backlog drains at cap - arrival
                opt.eta_s, opt.low_s, opt.high_s = eta * k, opt.low_s * k, opt.high_s * k
        options.append(opt)
    return options


def estimate(snaps: list[Snapshot], facts, gtids: list[str], cfg: ReplicaConfig, cost: CostModel) -> Estimate:
    """The ETA over every transaction of the backlog (``facts``/``gtids``, read at the first
    snapshot): the simulated time of what the applier applied over the window against the real
    time it took gives the seconds per simulated second."""
    last = snaps[-1]
    window = _window(snaps)
    span = max(1e-6, last.at - window[0].at)
    times = commit_times(facts, cfg, cost)
    index = GtidIndex(gtids)

    def done_upto(s: Snapshot) -> float:
        """Simulated time of the work the replica applied since the first snapshot."""
        pos = index.last_done(parse_gtid_set(s.executed))
        return times[pos] / 1e6 if pos is not None else 0.0

    left_now = parse_gtid_set(last.unapplied)
    rest = [f for f, g in zip(facts, gtids) if gtid_in(left_now, g)]
    ratio, lo_r, hi_r = _rates(window, [done_upto(s) for s in window])
    applied = window[0].left - last.left
    arrival = max(0, last.received_count - window[0].received_count) / span
    notes = [] if ratio is not None else [_stalled(last, span)]
    options = _options(cfg, len(rest), arrival, ratio, lo_r, hi_r,
                       lambda c: ((commit_times(rest, c, cost)[-1] / 1e6) if rest else 0.0, 0.0))
    return Estimate(last.at, len(rest), applied, arrival, applied / span, ratio, options, notes)


def estimate_sampled(snaps: list[Snapshot], head: list, strata: list, left_start: int, bytes_per_trx: float | None,
                     cfg: ReplicaConfig, cost: CostModel) -> Estimate:
    """The ETA before the backlog is read in full (:mod:`.backlog`): the head (read in order from
    the applier's position) and the strata (windows spread over the rest) simulated alone and
    extrapolated to what is left by count and bytes. The seconds per simulated second: the
    transactions the applier applied over the window, priced at the simulated cost per
    transaction where it applies now."""
    from .backlog import Window, extrapolate

    last = snaps[-1]
    window = _window(snaps)
    span = max(1e-6, last.at - window[0].at)
    done = [gtid_count(parse_gtid_set(s.executed)) for s in window]   # window[-1] is ``last``
    share = (done[-1] - gtid_count(parse_gtid_set(snaps[0].executed))) / max(1, left_start)
    hw = Window(head, sum(f.nbytes for f in head), 0.0)

    def ext(c):
        return extrapolate(hw, strata, left_start, last.left, share, bytes_per_trx, c, cost, commit_times)

    cur = ext(cfg)

    def sim_of(c) -> tuple[float, float]:
        x = cur if c == cfg else ext(c)
        return x.sim_s, x.band

    ratio, lo_r, hi_r = _rates(window, [(d - done[0]) * cur.at_applier_trx_s for d in done])
    arrival = max(0, last.received_count - window[0].received_count) / span
    notes = [] if ratio is not None else [_stalled(last, span)]
    options = _options(cfg, last.left, arrival, ratio, lo_r, hi_r, sim_of)
    basis = {"method": "sample", "transactions_simulated": cur.sampled, "head_transactions": len(head),
               "strata": cur.windows, "left_at_start": left_start, "sample_band": round(cur.band, 4),
               "by_count_seconds": round(cur.by_count_s * (ratio or 1.0), 3),
               "by_bytes_seconds": None if cur.by_bytes_s is None else round(cur.by_bytes_s * (ratio or 1.0), 3)}
    return Estimate(last.at, last.left, done[-1] - done[0], arrival, (done[-1] - done[0]) / span, ratio, options,
                    notes, basis=basis)


def fmt_s(s: float | None) -> str:
    if s is None:
        return "never"
    if s < 90:
        return f"{s:.1f} s"
    if s < 5400:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def render(e: Estimate) -> list[str]:
    cur = e.current
    if e.left == 0:
        return [f"caught up at {time.strftime('%H:%M:%S', time.localtime(e.at))}: nothing left to apply"
                f" (applied {e.apply_rate:.0f} trx/s)"] + [f"note: {n}" for n in e.notes if "caught up" not in n]
    clock = time.strftime("%H:%M:%S", time.localtime(e.at + cur.eta_s)) if cur.eta_s is not None else None
    lines = [f"{e.left:,} transactions left to apply; applying {e.apply_rate:.0f} trx/s, receiving "
             f"{e.arrival_rate:.0f} trx/s"]
    if cur.eta_s is None:
        deficit = e.arrival_rate - e.apply_rate
        lines.append(f"falling behind by {deficit:.0f} trx/s: never catches up with {cur.describe()}")
    else:
        lines.append(f"caught up in {fmt_s(cur.eta_s)} (band {fmt_s(cur.low_s)} .. {fmt_s(cur.high_s)}), at "
                     f"{clock}, with {cur.describe()}")
    for o in e.options:
        if not o.current:
            band = "" if o.eta_s is None else f" (band {fmt_s(o.low_s)} .. {fmt_s(o.high_s)})"
            lines.append(f"  {o.describe()}: {'in ' if o.eta_s is not None else ''}{fmt_s(o.eta_s)}{band}")
    threads = applier_threads(e.waits)
    if threads:
        lines.append(f"applier threads now: {threads}")
    lines += [f"note: {n}" for n in e.notes]
    lines += describe_basis(e)
    return lines


#: What a thread waiting on each kind is doing, in words (server.eta._WAIT_KINDS).
_DOING = {"coordinator": "waiting for the coordinator", "dependency": "waiting on a dependency",
          "commit order": "waiting for commit order", "lock": "waiting on a lock", "fsync": "in an fsync",
          "free worker": "waiting for a free worker", "working": "working", "idle": "idle"}


def applier_threads(waits: list[dict]) -> str:
    """The applier's threads as the server reports them (performance_schema.threads): the
    coordinator, then the workers by what they do ("1 coordinator (working), 4 workers: 2 working,
    2 waiting for the coordinator"); a row without its thread's role counts as a worker."""
    coordinators = [w for w in waits if w.get("thread") == "coordinator"]
    workers = [w for w in waits if w.get("thread") != "coordinator"]
    parts = []
    if coordinators:
        doing = sorted({_DOING.get(w["waiting_on"], w["waiting_on"]) for w in coordinators})
        parts.append(f"{len(coordinators)} coordinator ({', '.join(doing)})")
    if workers:
        kinds: dict[str, int] = {}
        for w in workers:
            k = _DOING.get(w["waiting_on"], w["waiting_on"])
            kinds[k] = kinds.get(k, 0) + 1
        parts.append(f"{len(workers)} worker{'s' if len(workers) > 1 else ''}: "
                     + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    return ", ".join(parts)


def describe_basis(e: Estimate) -> list[str]:
    """What the estimate was made from, and the CPU this process took."""
    b = e.basis
    out = []
    if b.get("method") == "sample":
        how = "by count and bytes" if b.get("by_bytes_seconds") is not None else "by count"
        where = (f"{b['head_transactions']:,} read in order from the applier's position"
                 + (f", {b['strata']} windows across the rest" if b.get("strata") else ", none beyond them"))
        full = b.get("full_read", "")
        sample = (f"+-{b['sample_band']:.0%}" if b["sample_band"] >= 0.005 else "under 1%")
        out.append(f"estimated from {b['transactions_simulated']:,} of the {b['left_at_start']:,} transactions "
                   f"left when the backlog was first read ({where}), extrapolated {how}: the extrapolation's own "
                   f"error is {sample} of that (the band above adds the applier's rate spread)"
                   + (f"; {full}" if full and full != "reading" else
                      f"; reading the rest ({b.get('transactions_read', 0):,} read)" if full == "reading" else ""))
    elif b.get("method") == "all":
        out.append(f"estimated over all {b['transactions_read']:,} transactions of the backlog "
                   f"(read in {b['read_seconds']:.1f} s)")
    if e.cpu_s is not None:
        out.append(f"lagadvisor used {e.cpu_s:.1f} s of CPU (its backlog readers niced, beside the applier)")
    return out


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``2h`` as seconds."""
    t = text.strip().lower()
    mult = {"s": 1, "m": 60, "h": 3600}.get(t[-1:], None)
    try:
        v = float(t[:-1] if mult else t) * (mult or 1)
    except ValueError:
        raise ConfigError(f"bad duration {text!r} (expected e.g. 90s, 10m, 2h)") from None
    if not v >= 0 or v == float("inf"):
        raise ConfigError(f"bad duration {text!r}")
    return v


@dataclass
class Prediction:
    made_at: float
    eta_s: float | None


def prediction_errors(preds: list[Prediction], done_at: float) -> list[dict]:
    """Each earlier prediction against the catch-up that happened: error = predicted/actual - 1."""
    out = []
    for p in preds:
        actual = done_at - p.made_at
        err = None if p.eta_s is None or actual <= 0 else p.eta_s / actual - 1
        out.append({"made_at": p.made_at, "eta_seconds": p.eta_s, "actual_seconds": actual, "error": err})
    return out


#: A backlog larger than this is not read in full while it is applied: the estimate stays a sample's.
FULL_READ_MAX = 1_000_000
#: Transactions of the head read in order when the backlog is not read in full.
HEAD_MAX = 20_000
#: Windows spread over the backlog (relay logs readable here), read after the head's first
#: HEAD_FIRST transactions; a backlog not read in full gets more, up to MAX_STRATA.
STRATA = 8
HEAD_FIRST = 300
MAX_STRATA = 64
#: The first estimate waits for at least this many transactions of the head and for the strata,
#: up to FIRST_BY_S seconds from the start.
MIN_HEAD = 50
FIRST_BY_S = 8.0


def cpu_seconds() -> float:
    """This process's CPU time so far (every thread: the readers too)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@dataclass
class Backlog:
    """The backlog's readers (:mod:`.backlog`) while ``eta`` runs."""

    reader: object                 # SequentialReader
    strata: list
    strata_read: object            # threading.Event: the first strata are read
    bytes_per_trx: float | None
    full: bool                     # the whole backlog is being read
    more: object = None            # () -> None: read more strata (a backlog not read in full)


def read_backlog(files, first: Snapshot, start: tuple[int, int], local: bool, nice: int) -> Backlog:
    """The readers of :mod:`.backlog`, started: the one in binlog order (all of the backlog, or
    its head when it is larger than :data:`FULL_READ_MAX`) and, for local files, the strata; a
    backlog not read in full gets :data:`STRATA` more of them at each later estimate, between
    the ones before (up to :data:`MAX_STRATA`)."""
    import threading

    from .backlog import SequentialReader, backlog_bytes, lower_priority, read_strata, van_der_corput

    want = parse_gtid_set(first.unapplied)

    def is_wanted(g) -> bool:
        return g is not None and gtid_in(want, g)

    full = first.left <= FULL_READ_MAX
    reader = SequentialReader(files, is_wanted, start, None if full else HEAD_MAX,
                              pause_at=HEAD_FIRST if local else None, nice=nice).begin()
    strata: list = []
    strata_read = threading.Event()
    busy = threading.Lock()
    sets = [0]

    def read_the_strata() -> None:
        # the head's first transactions, then the strata, then the rest in order: one reader at a
        # time (they share one interpreter lock), the first estimate's sample first
        lower_priority(nice)
        reader.paused.wait(FIRST_BY_S / 2)
        try:
            strata.extend(read_strata(files, start, STRATA, is_wanted))
        finally:
            strata_read.set()
            reader.resume()

    def read_more() -> None:
        with busy:
            lower_priority(nice)
            sets[0] += 1
            strata.extend(read_strata(files, start, STRATA, is_wanted, van_der_corput(sets[0] + 1)))

    def more() -> None:
        if local and not full and len(strata) < MAX_STRATA and not busy.locked():
            threading.Thread(target=read_more, name="lagadvisor-strata", daemon=True).start()

    if local:
        threading.Thread(target=read_the_strata, name="lagadvisor-strata", daemon=True).start()
    else:
        strata_read.set()
    bytes_per_trx = backlog_bytes(files, start) / first.left if local and first.left else None
    return Backlog(reader, strata, strata_read, bytes_per_trx, full, more)


def estimate_now(snaps, first: Snapshot, backlog: Backlog, cfg, cost) -> Estimate:
    """Over the whole backlog once it is read, else from the sample so far; says which."""
    reader = backlog.reader
    if reader.done:
        e = estimate(snaps, reader.facts, reader.gtids, cfg, cost)
        return replace(e, basis={"method": "all", "transactions_read": len(reader.facts), "left_at_start": first.left,
                                 "read_seconds": round((reader.finished_at or time.time()) - reader.started_at, 3)})
    e = estimate_sampled(snaps, reader.facts[:len(reader.facts)], list(backlog.strata), first.left,
                         backlog.bytes_per_trx, cfg, cost)
    full_read = ("stopped" if reader.error else
                 f"skipped: {first.left:,} transactions are too many to read while they are applied"
                 if not backlog.full else "reading")
    notes = e.notes + ([f"reading the backlog stopped ({reader.error}): the estimate stays a sample's"]
                       if reader.error else [])
    return replace(e, basis={**e.basis, "full_read": full_read, "transactions_read": len(reader.facts)}, notes=notes)


#: The first estimate may come before --sample ends, once the applier has applied this many
#: transactions over at least EARLY_S seconds (its rate is then measured to a few percent).
EARLY_APPLIED = 500
EARLY_S = 2.0


def first_due(snaps: list[Snapshot], done0: int, sample_s: float, reader, strata_read,
              started_at: float | None = None) -> bool:
    """Whether the first estimate is due after the snapshots so far (``snaps[0]`` the first, whose
    executed set counts ``done0``): at ``sample_s``, or sooner once the applier has applied
    :data:`EARLY_APPLIED` transactions over :data:`EARLY_S` (a fast applier would be done before a
    fixed sample ends); in either case with the head's first transactions and the strata read,
    waiting for them up to :data:`FIRST_BY_S` from the start: ``started_at`` (the command's
    process, :func:`process_started_at`: its start-up and connection count against the user's
    10 s) when it is within :data:`STARTUP_MAX_S` before the first snapshot, else that snapshot."""
    now = snaps[-1].at - snaps[0].at
    origin = snaps[0].at
    if started_at is not None and 0.0 <= snaps[0].at - started_at <= STARTUP_MAX_S:
        origin = started_at
    read = (len(reader.facts) >= MIN_HEAD or reader.finished_at is not None) and strata_read.is_set()
    applied = gtid_count(parse_gtid_set(snaps[-1].executed)) - done0
    return bool(not snaps[-1].unapplied or snaps[-1].at - origin >= FIRST_BY_S or read and now >= sample_s
                or read and now >= EARLY_S and applied >= EARLY_APPLIED and len(snaps) >= 4)


#: A process start more than this before the first snapshot is not the command's own (a library
#: caller's long-lived process): the first estimate's deadline then counts from that snapshot.
STARTUP_MAX_S = 30.0


def process_started_at(proc: str = "/proc/self") -> float | None:
    """This process's start as a wall-clock time (Linux: ``starttime`` of ``/proc/self/stat``,
    clock ticks after boot, against ``/proc/uptime``; 10 ms resolution); None where unreadable."""
    import os

    try:
        with open(f"{proc}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        return time.time() - (uptime - int(fields[19]) / ticks)
    except (OSError, IndexError, ValueError):
        return None


def caught_up(first: Snapshot, cfg: ReplicaConfig) -> Estimate:
    """The estimate of a replica with nothing left to apply."""
    e = Estimate(first.at, 0, 0, 0.0, 0.0, None, [Option("current", cfg, 0.0, 0.0, 0.0, 0.0, True)],
                 ["caught up: nothing left to apply"], cpu_s=cpu_seconds())
    return e


def note_read(e: Estimate, reader, first: Snapshot) -> Estimate:
    """Once the backlog is read: ``e`` with the reader's warnings, and the transactions it did not find."""
    notes = e.notes + list(reader.warnings)
    if len(reader.facts) < first.left:
        notes.append(f"{first.left - len(reader.facts)} of the {first.left} unapplied transactions were not "
                     "found in the binlogs read: the ETA counts only those found")
    return replace(e, notes=notes)


def earlier_predictions(preds: list[Prediction], e: Estimate, last: Snapshot) -> list[dict]:
    """The earlier predictions against the current expectation (while lagging)."""
    return [{"made_at": p.made_at, "eta_seconds": p.eta_s,
             "expected_now_seconds": None if e.current.eta_s is None else last.at + e.current.eta_s - p.made_at,
             "error": None if p.eta_s is None or e.current.eta_s is None else
             p.eta_s / (last.at + e.current.eta_s - p.made_at) - 1} for p in preds]
