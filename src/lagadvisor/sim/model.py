"""Inputs of the applier simulation: the replica's settings and the apply cost model.

A transaction costs the coordinator ``dispatch_us`` (serial), then a worker applies it
(``trx_us`` + per row by kind + per byte: CPU that runs in parallel, on at most ``cores``
threads), then it commits through the replica's binlog group commit (MYSQL_BIN_LOG::
ordered_commit), three serial stages that pipeline: the flush stage, where the group's leader
waits ``redo_flush_us`` for the group's InnoDB redo fsync (innodb_flush_log_at_trx_commit=1); the
sync stage, ``flush_us`` per group (the binlog fsync of sync_binlog=1); the commit stage,
``commit_us`` of CPU per member (InnoDB commit in order, binlog write, replication info and GTID
bookkeeping) and ``commit_group_us`` per group (0 in the built-in model: docs/accuracy.md, "The
replica's commit rate against the model's commit stage"). Each fsync also takes ``fsync_byte_us`` per byte of its group's transactions (the
device writes what the group wrote). Both fsyncs are ~0 when relaxed. With ``fsync_devices = 1``
(redo log and binlog on one device that serializes them) the device does one fsync at a time: a
group's redo fsync waits for the previous group's binlog fsync. Transactions that reach the flush
stage while it is busy form the next group, and groups queued at a busy later stage merge, so
concurrent workers share the stages: the simulated groups match the real replica's binlog fsyncs
(bench/manycore/compare.py). The commit part dominates small transactions and is what limits a
relaxed replica's speedup.
"""

from __future__ import annotations

import functools
import json
import math
import os
import stat
import statistics
from dataclasses import asdict, dataclass, fields, replace

from ..errors import ConfigError
from ..kinds import Applier, ReplicaMode


#: The machine the built-in defaults were measured on (bench/manycore_16core.json's and
#: bench/manycore_16core_run2.json's ``machine``: two runs on two loans of the same VM type), and
#: where its two per-byte costs were (bench/doc_twins_2core.json's) and its index-entry and
#: foreign-key-check costs (bench/index_cost_2core.json's, bench/index_cost_2core_fktwin.json's).
MACHINE = ("16 cores, Intel(R) Xeon(R) Processor (a VM), kernel 6.18.44, ext4 on a virtual disk, 125.9 GiB; "
           "MySQL 9.7.4 replica, 2026-11-26 (two runs); the per-byte costs on a 2-core Intel Xeon VM, 2026-11-28; "
           "the index-entry and foreign-key-check costs on a 2-core AMD EPYC VM, 2026-11-27, scaled to the 16-core one")



#: The secondary index entries the per-row costs hold, per row by kind (:func:`extra_index_entries`):
#: one for an inserted or a deleted row, two for an updated one (one changed index).
ROW_ENTRIES = (1, 2, 1)


def extra_index_entries(index_entries: int, inserts: int, updates: int, deletes: int) -> int:
    """The secondary index entries a transaction writes past what the per-row costs hold
    (:data:`ROW_ENTRIES`), the ones ``CostModel.index_entry_us`` prices; 0 when it writes fewer.
    The per-row costs were fitted on the many-core lab's backlogs, read with their schemas, and
    none of their 40,172 transactions writes more than one entry per inserted or deleted row and
    two per updated row (uniform: 4 for 4 rows; mixed: each update changes one indexed column),
    so the lab's predictions are unchanged, and so is a binlog read without its schema (no entry
    is counted: ``writeset.extract.index_entry_count`` needs the indexes). The same integer
    operations as sim.rs ``sim_base_columns``."""
    return max(0, index_entries - (ROW_ENTRIES[0] * inserts + ROW_ENTRIES[1] * updates + ROW_ENTRIES[2] * deletes))


def extra_fk_checks(fk_checks: int, inserts: int) -> int:
    """The foreign-key checks a transaction makes InnoDB run past one per inserted row, the ones
    ``CostModel.fk_check_us`` prices (0 when fewer): in the lab's foreign-key backlog every check
    is an insert's, one each, and the fitted per-row costs predict its one-worker time within 5%
    (docs/accuracy.md), so they hold that much; a child with two parents, or an update that
    re-parents a row, is what they do not. The same integer operations as sim.rs."""
    return max(0, fk_checks - inserts)


#: :meth:`CostModel.apply_us`'s costs in its order (:meth:`CostModel.work_weights`).
WORK_TERMS = ("trx_us", "insert_us", "update_us", "delete_us", "byte_us", "scan_row_us", "fk_check_us",
              "index_entry_us", "event_us")

@dataclass(frozen=True, slots=True)
class CostModel:
    """Microseconds. The defaults are a real MySQL 9.7.4 replica's on a 16-core machine (Intel Xeon
    VM, kernel 6.18, ext4 on a virtual disk: ``MACHINE``), measured and fitted by the many-core lab
    (bench/manycore/, docs/accuracy.md "Many cores"); give a replica's own with ``calibrate``."""

    # The events (docs/accuracy.md "What an event costs"): the
    # coordinator's read and the workers' apply are priced per binlog event (TrxFacts.events), as
    # measured on the statement twins (gen_backlogs.py stmt1/stmt16: the same 16 row updates a
    # transaction in 1 or 16 statements, 5 or 35 events; lab.py --quick on the 2-core VM,
    # bench/stmt_twins_2core.json): the coordinator's read stage 2.5 us more an event, the workers'
    # /proc CPU 10.2 us more. The per-event costs were then fitted with the workers' per-row and
    # per-transaction costs and the coordinator's, on the model's own two 16-core runs, the rest held
    # (fit.py bench/manycore_16core.json.gz bench/manycore_16core_run2.json.gz --startup-s
    # 0.030744,0.032072 --groups-weight 1 --free dispatch_us,dispatch_event_us,trx_us,insert_us,
    # update_us,event_us: loss 0.0345 against 0.0360; held-out runs 3-7 0.2809 against 0.2823): the
    # workers 3.91 us an event (the lab's backlogs, whose statements are mostly of one row, cannot
    # tell a statement's cost from its row's as well as the twins: held at the twins' 10.2 the fit
    # was worse, 0.0383, with the insert and delete costs at 0), the coordinator 15.1 us a
    # transaction and 1.75 an event (its instrumented read, 4.3 us an event on 16 cores and 2.5 on
    # the twins, is inflated by the timers: the instrumented catch-ups took 0.03-0.30 s longer).
    # The coordinator and the bytes (docs/accuracy.md "The coordinator reads per event,
    # not per byte"): dispatch_byte_us and byte_us are measured on the doc twins (bench/manycore/
    # gen_backlogs.py doc5/doc500: the same 11 events a transaction, 1.0 and 36.7 kB; lab.py
    # --quick on the 2-core VM, bench/doc_twins_2core.json): the coordinator's "Reading event from
    # the relay log" grew 0.00026-0.00072 us a byte (0.0005 taken), the workers' /proc CPU 0.0048
    # us a byte (one worker, relaxed, medians of 5 rounds). Then dispatch_us and the workers'
    # trx_us, insert_us and update_us (delete tied) were refitted on both runs, the rest held (fit.py
    # bench/manycore_16core.json.gz bench/manycore_16core_run2.json.gz --startup-s 0.030744,0.032072
    # --groups-weight 1 --free dispatch_us,trx_us,insert_us,update_us --set dispatch_byte_us=0.0005
    # --set byte_us=0.0048: loss 0.0360 against 0.0378; held-out runs 3-7 0.2821 against 0.2888).
    # (Then: the coordinator's 32.2 us a transaction stood for the instrumented rounds' read stage,
    # 4.3 us an event, 6-15 events a transaction over the five backlogs: coordinator_read.py.)
    # Before: measured on that machine by bench/manycore/lab.py (bench/manycore_16core.json, 2026-11-26):
    # - dispatch_us, dispatch_byte_us (replaced, above): the coordinator's /proc CPU per transaction at
    #   16 and 32 workers, regressed on the transactions' bytes over the five backlogs (18 us + 0.016
    #   us/byte); that CPU follows the wall time (it spins on sched_yield for a free worker), so
    #   its slope on bytes was the workers' time on them, charged to the serial coordinator;
    # - fsync_cpu: the workers' /proc CPU durable less relaxed at one worker, over the two fsyncs'
    #   time (file_summary_by_event_name): 0.37-0.56, 0.45 taken;
    # - fsync_devices 2: the redo and binlog fsync times add up to more than the 16-worker
    #   catch-up's wall time, so the device runs them at once (refit with 1, the fsyncs taking
    #   turns, the loss below was 3% higher);
    # - handoff_us, wakeup_us: the instrumented runs' per-transaction timelines (performance_schema
    #   transaction and stage histories, bench/manycore/timeline.py; bench/manycore_16core_run2.json,
    #   18 runs): the hand-off is the time between the wake-ups of two consecutive transactions that
    #   both waited for commit order, the second already asleep (median of the runs' medians 19.2
    #   us, 13-44 us per run); the coordinator's is from the commit that met its dependency to the
    #   next transaction's start on a worker (its own wake-up, 12-42 us, the first events' read and
    #   the worker's wake-up: 67.6 us, the median of the 12 runs with 100+ such waits), which is
    #   when the model's worker starts. Fitting them with the rest had put them at 79 and 55 us (84
    #   and 36 on both runs): the fit spent them on other serial time. Five loans' timelines (runs 2,
    #   3, 4, 5, 7b) give 58.4-101.7 us a loan, whose median is run 2's 67.6; a replica's own is what
    #   calibrate --workers fits where its chains show it (sim.calibrate wake_share).
    # Fitted before (the per-row and per-transaction worker costs since refitted, above)
    # (bench/manycore/fit.py, Nelder-Mead on the log time and speedup errors of both lab
    # runs' 120 medians: 5 backlogs x 1-32 workers x relaxed/durable, each run less its own start;
    # the latencies and the durable costs held: fit.py bench/manycore_16core.json
    # bench/manycore_16core_run2.json --set handoff_us=19.2 --set wakeup_us=67.6 --set
    # redo_flush_us=90.6 --set flush_us=153.5 --set fsync_byte_us=0.0026 --set
    # durable_byte_us=0.0086): the per-row and per-transaction worker costs (delete tied to insert
    # x25.5/21.6, the 2-core regression's ratio), the serial commit_us, the contention and
    # multi_worker_us, the multi-worker cost per transaction (loss 0.0340; 0.0393 with the
    # multi-worker cost as a CPU factor, 1.19, instead: with both free the factor came to 1.02,
    # so it is held at 1; the timelines: a chain's transaction on another worker than its
    # predecessor's took 41-106 us longer than one on the same worker, timeline.py switches). The
    # durable costs and commit_us were then fitted again on both runs for the three-stage group
    # commit (2026-11-27: fit.py bench/manycore_16core.json bench/manycore_16core_run2.json --free
    # commit_us,redo_flush_us,flush_us,fsync_byte_us,durable_byte_us --groups-weight 1, the rest
    # held; loss 0.0411 with the groups' term): the measured commit groups (binlog fsyncs) are in
    # the loss beside the times and speedups, so the fsyncs' cost sits in groups of the size the
    # server formed (the two-stage engine before had them 1.7-2.2x too big at 16-32 workers on the
    # uniform backlog). One worker's durable time less its relaxed time grows with the
    # transactions' bytes (215 us a transaction at 0.7 kB, 308 at 1.8 kB, 468 at 3.9 kB over the
    # five backlogs): the fsyncs' 0.0061 us a byte each and the workers' durable_byte_us; the redo
    # fsync 76.9 us and the binlog's 155.7 (the file instruments: 69-145 and 93-195 us per fsync).
    # Held out: the third and fourth runs (2026-11-27, a later loan) and the 2-core check-back,
    # docs/accuracy.md. Every measured time is taken less its run's replica start (30.7 and 32.1
    # ms: START REPLICA SQL_THREAD to the first commit, from the kept runs' own binlogs), which
    # the simulation does not model and a real backlog does not notice. That start was taken off
    # every worker count alike; it grows with the workers (3 coordinator commits each: 7 ms at one
    # worker, 57 at 32), and bench/manycore/compare.py now takes off each count's own. Refitted so
    # (fit.py on both runs, the two latencies held, every other fitted cost free, the commit groups
    # in the loss: 0.0340, against 0.0362 for the same fit with one start), the costs scored no
    # better on the four held-out runs, so these stand (docs/accuracy.md "The replica's start grows
    # with its workers").
    # apply_spread (2026-11-27) is measured, not fitted: the timelines' per-transaction apply times of
    # the uniform backlog (timeline.py), whose transactions are all the same statements; added after
    # the fits above and not refitted with it (docs/accuracy.md "The spread of one transaction").
    # scan_row_us is bench/keyless_apply.py's (2 cores: the lab has no table without an index).
    # fk_check_us and index_entry_us (docs/accuracy.md
    # "Index entries and foreign-key checks, priced past the lab's"): the lab cannot fit them (in
    # its one foreign-key backlog every check is an insert's, and its per-row costs carry its
    # shapes' index work; refits with them, 29.9 us a check, 19.4 and 2.38 us an entry, scored no
    # better on the held-out runs: bench/schema_costs_fit_16core.json), so they are priced only past
    # what the per-row costs hold (extra_index_entries, extra_fk_checks: no lab transaction has
    # any, so every lab prediction is unchanged) at what the twins measured apart: on the 2-core
    # AMD EPYC VM, 1.91 us of worker CPU an entry (the idx0/2/4/8 backlogs, relaxed, one worker)
    # and 44-51 a check (fkr/kr, fkfk/fkkey; bench/index_cost_2core*.json), times 1.55, the 16-core
    # VM's one-worker relaxed worker CPU a transaction over the 2-core VM's on the same fk backlog
    # (152.1 us, the median of the seven runs' 25 rounds, against fkfk's 98.3): 2.96 and 68-79
    # (the 16-core fk backlog's worker CPU over the model's apply and commit, 38 us a transaction
    # at 0.51 checks, gives 75).
    # Checked back on 2 cores: docs/accuracy.md.
    trx_us: float = 10.6           # worker, per transaction (parallel)
    insert_us: float = 31.1        # worker, per row written
    update_us: float = 16.4        # worker, per row updated
    delete_us: float = 36.7        # worker, per row deleted
    event_us: float = 3.91         # worker, per binlog event of the transaction (a statement's table
                                   # map and rows event are applied apart: open, lock, set up)
    byte_us: float = 0.0048        # worker, per byte of the transaction's events (measured: the doc
                                   # twins, bench/doc_twins_2core.json; the lab's bytes go with its rows)
    durable_byte_us: float = 0.0048  # worker, per byte, when durable: the commit's redo and binlog writes
                                   # it waits for (/proc worker CPU, durable less relaxed, grows with bytes)
    dispatch_us: float = 15.1      # coordinator, per transaction (schedule, hand over)
    dispatch_event_us: float = 1.75  # coordinator, per binlog event of the transaction (reading it)
    dispatch_byte_us: float = 0.0005  # coordinator, per byte of the transaction's events (reading them;
                                      # measured: the doc twins' read stage, bench/doc_twins_2core.json)
    commit_us: float = 48.6        # commit stage, per member (serial: InnoDB commits in order)
    commit_group_us: float = 0.0   # commit stage, per group (serial: the leader's stage changes, its
                                   # binlog write and the members' wake-up, whatever the members)
    flush_us: float = 155.7        # sync stage, per group (serial), when durable: binlog fsync
    fsync_byte_us: float = 0.0061  # each fsync, per byte of its group's transactions, when durable
    redo_flush_us: float = 76.9    # flush stage, per group (serial), when durable: redo fsync
    handoff_us: float = 19.2       # commit-order wake-up of a worker that waited for its turn
                                   # (measured: wake-up to wake-up of consecutive waiters)
    wakeup_us: float = 67.6        # from the commit that met the dependency the coordinator slept on
                                   # (wait_for_last_committed_trx: a condition wait, signalled by the
                                   # commit) to the next transaction's start on a worker (measured)
    scan_row_us: float = 0.259    # worker, per table row scanned to find the rows of an UPDATE/DELETE
                                   # event on a table without any index (bench/keyless_apply.py:
                                   # MySQL 9.7.4, tables of 2k-40k rows, R^2 0.9999)
    fk_check_us: float = 75.0      # worker, per foreign-key check InnoDB runs (a child row's parent
                                   # searched and locked, a parent row's children searched:
                                   # writeset.extract.fk_check_count) past one per inserted row
                                   # (extra_fk_checks; measured apart, see the comment above)
    index_entry_us: float = 3.0    # worker, per secondary index entry written (an insert's, a delete's
                                   # delete-mark, an update's two per changed index:
                                   # writeset.extract.index_entry_count) past one per inserted or
                                   # deleted row and two per updated row (extra_index_entries)
    apply_spread: float = 0.2      # how much one transaction's apply CPU varies from the model's
                                   # (cache misses, page splits, the threads beside it): the sigma of
                                   # a lognormal factor of mean 1, fixed per transaction
                                   # (:meth:`spread_factors`). Measured, not fitted: the uniform
                                   # backlog's transactions are all the same statements, and the
                                   # interquartile range of their apply times (start to the
                                   # commit-order wait, bench/manycore/timeline.py) gives 0.17-0.28
                                   # over the three runs' timelines at 8-32 workers, median 0.2.
                                   # With commit order preserved a worker waits for the slowest of
                                   # the transactions before it: worker-bound catch-ups lose to it
                                   # (the lab's uniform backlog at 4 workers: 2.45-2.96x, 3.24x
                                   # without it, 2.85x with it); 0 = every transaction exactly
                                   # its mean
    multi_worker_cpu: float = 1.0   # worker CPU factor with >= 2 workers on >= 2 cores (worker_cpu):
                                   # fitted at 1.02 beside multi_worker_us, so held at 1
    multi_worker_us: float = 39.3  # worker CPU per transaction added with >= 2 workers on >= 2 cores
                                   # (worker_add_us): a transaction on another core than its
                                   # predecessor's, with that core's caches cold for its rows
    switch_us: float = 0.0         # worker CPU added with >= 2 workers on >= 2 cores to a transaction
                                   # the coordinator gives to another worker than its predecessor's
                                   # (switch_add_us; the engines number the workers as MySQL's
                                   # get_free_worker does): the same cost charged per switch
                                   # instead of per transaction. 0: fitted per switch on the lab's
                                   # runs 1-2, it held out no better (docs/accuracy.md "Charged per
                                   # switch"); calibrate and a model file can set it
    concurrency_cpu: float = 0.0088  # CPU jobs slow down by this per thread running at once, past the
                                     # first and up to the cores (contention)
    oversubscribed_cpu: float = 0.0118  # and by this per runnable thread past the cores (contention)
    cores: int = 16
    fsync_devices: int = 2         # 1: redo log and binlog fsyncs one at a time (one device or
                                   # filesystem that serializes them); 2: they overlap (separate
                                   # devices, or storage that runs both at once: calibrate --host)
    fsync_cpu: float = 0.45        # when durable: CPU the committing threads use while an fsync
                                   # runs, as a fraction of its time (InnoDB's redo-flush wait
                                   # loop, os_event_wait_for, and the fsync call's own work):
                                   # 0.34-0.50 at 1/2/8 workers on 2 cores (bench/fsync_cpu.py),
                                   # 0.37-0.56 at one worker on 16 cores (the lab; /proc worker CPU
                                   # durable less relaxed, MySQL 9.7.4); calibrate --host
                                   # cannot see it (no CPU timer) and keeps the base model's
    error_band: float = 0.0        # not a cost: the relative half-width of an absolute time predicted
                                   # with this model, from its calibration's held-out checks
                                   # (sim.calibrate.held_out_band); 0 = not calibrated (built-in or by hand)
    calibrated_workers: int = 0    # not a cost: the worker count of the catch-up its calibration
                                   # fitted, where error_band was checked; 0 = not recorded (built-in,
                                   # by hand, before the field, or pooled over several worker counts)
    measured_on: str = MACHINE     # not a cost: the machine and replica its numbers were measured on
                                   # (calibrate writes the replica's: server version, its binlog or
                                   # host, workers, durability, cores); "" = not recorded (a file
                                   # written by hand or before the field)

    def apply_us(self, inserts: int, updates: int, deletes: int, nbytes: int, scan_rows: int = 0,
                 fk_checks: int = 0, index_entries: int = 0, events: int = 0) -> float:
        """Worker CPU before the commit (``scan_rows``: rows of tables without an index scanned
        to find the changed rows, ``TrxFacts.scan_rows``; ``fk_checks``: the foreign-key checks
        InnoDB runs for it, ``TrxFacts.fk_checks``; ``index_entries``: the secondary index
        entries it writes, ``TrxFacts.index_entries``; ``events``: its binlog events,
        ``TrxFacts.events``: each statement's table map and rows event are applied apart). The
        checks and entries are priced past what the per-row costs already hold
        (:func:`extra_fk_checks`, :func:`extra_index_entries`)."""
        return (self.trx_us + self.insert_us * inserts + self.update_us * updates
                + self.delete_us * deletes + self.byte_us * nbytes + self.scan_row_us * scan_rows
                + self.fk_check_us * extra_fk_checks(fk_checks, inserts)
                + self.index_entry_us * extra_index_entries(index_entries, inserts, updates, deletes)
                + self.event_us * events)

    def apply_of(self, facts) -> float:
        """:meth:`apply_us` of one transaction's facts (``sim.build.TrxFacts``, or anything with
        its row, byte, scan, check, entry and event fields)."""
        return self.apply_us(facts.inserts, facts.updates, facts.deletes, facts.nbytes, facts.scan_rows,
                             facts.fk_checks, facts.index_entries, facts.events)

    def coordinator_us(self, nbytes: int, events: float) -> float:
        """The coordinator's serial time for one transaction of ``nbytes`` bytes in ``events``
        binlog events (a mean is taken too): its dispatch, and its read per event and per byte
        (the engines' read; sim.rs ``Costs::coordinator_us`` does the same operations in the
        same order)."""
        return self.dispatch_us + self.dispatch_event_us * events + self.dispatch_byte_us * nbytes

    def work_weights(self) -> tuple[float, ...]:
        """:meth:`apply_us`'s terms in its order, as the native core takes them
        (``sim_base_columns``)."""
        return tuple(getattr(self, name) for name in WORK_TERMS)

    def spread_factors(self) -> tuple[float, ...]:
        """The apply CPU factors of :attr:`apply_spread` (:data:`SPREAD_SLOTS` of them, mean 1):
        a lognormal's values at the slots' middle quantiles, taken by each transaction by its
        index's hash (sim.engine ``spread_slot``). () when the spread is 0. Computed here once
        for both engines, which only multiply by them (sim.rs takes them as given)."""
        return _spread_factors(self.apply_spread)

    def worker_cpu(self, workers: int) -> float:
        """The workers' CPU factor with ``workers`` workers: ``multi_worker_cpu`` when consecutive
        transactions change threads and cores (colder caches), 1 with one worker or one core
        (every thread on the one core's caches: measured on a 9.7 replica pinned to one core,
        4 and 8 workers were no slower than 1). What grows with the threads that run at once is
        the engine's (:meth:`contention`)."""
        return self.multi_worker_cpu if self._changes_cores(workers) else 1.0

    def worker_add_us(self, workers: int) -> float:
        """Worker CPU added to every transaction with ``workers`` workers: ``multi_worker_us``
        with two or more workers on two or more cores, else 0 (as :meth:`worker_cpu`). A fixed
        cost per transaction, not a factor: the many-core lab's fit put it at 39 us and the
        factor at 1.02 (loss 0.0340 against 0.0393 with the factor alone), as the per-transaction
        timelines show: a chain's transaction on another worker than its predecessor's took
        41-106 us longer than one on the same worker, whatever its size (bench/manycore/
        timeline.py ``switches``; issue 33)."""
        return self.multi_worker_us if self._changes_cores(workers) else 0.0

    def switch_add_us(self, workers: int) -> float:
        """Worker CPU added to a transaction given another worker than its predecessor's (the
        engines charge it at dispatch: sim/engine.py ``take_worker``): ``switch_us`` with two or
        more workers on two or more cores, else 0 (as :meth:`worker_add_us`). The 16-core
        timelines: a chain's transaction on another worker than its predecessor's took 41-106
        us longer than one on the same worker, and about half of the hot-row and foreign-key
        backlogs' transactions ran on their predecessor's worker (bench/manycore/timeline.py
        ``switches``; issue 33)."""
        return self.switch_us if self._changes_cores(workers) else 0.0

    def _changes_cores(self, workers: int) -> bool:
        """Consecutive transactions run on other threads and cores: two or more workers on two or
        more cores (what both multi-worker costs apply to)."""
        return workers >= 2 and self.cores >= 2

    def contention(self, running: int) -> float:
        """How much slower each CPU job runs while ``running`` jobs (workers applying, the
        coordinator, the commit leader, fsync CPU) share the replica's cores: ``concurrency_cpu``
        per thread past the first, up to the cores (InnoDB's shared latches, trx_sys, cache
        lines), and ``oversubscribed_cpu`` per thread past the cores (context switches, latch
        holders preempted). The engines divide their processor-sharing rate by it (engine.py
        ``rate``; sim.rs ``rate``, the same operations)."""
        if running <= 1:
            return 1.0
        return (1.0 + self.concurrency_cpu * (min(running, float(max(1, self.cores))) - 1.0)
                + self.oversubscribed_cpu * max(0.0, running - float(max(1, self.cores))))

    def commit_alone_us(self) -> float:
        """The commit stage's CPU for a transaction committed in a group of its own (one worker,
        or the single-threaded applier): its per-group and per-member costs."""
        return self.commit_group_us + self.commit_us

    def commit_scaled(self, f: float) -> "CostModel":
        """This model with the commit stage's CPU, per group and per member, times ``f`` (the
        workers' CPU factor, :meth:`worker_cpu`: the members' threads run it)."""
        if f == 1.0:
            return self
        return replace(self, commit_us=self.commit_us * f, commit_group_us=self.commit_group_us * f)

    def work_byte_us(self, durable: bool) -> float:
        """Worker CPU per byte that only a durable replica pays (``durable_byte_us``), else 0."""
        return self.durable_byte_us if durable else 0.0

    def graph_weights(self) -> tuple[float, float, float, float, float, float, float]:
        """The dependency graph's apply-time weights (``depgraph.graph.Weights``): ``apply_us``'s
        coefficients for what a transaction's own binlog events say (rows by kind, bytes, events),
        the commit of a transaction alone (:meth:`commit_alone_us`: a chain's transactions commit
        one at a time) before the events' weight, as plain numbers. The schema's terms (rows scanned
        in tables without an index, foreign-key checks, index entries) are left out: they need
        the tables' sizes and plans that the simulation's facts carry (``sim.run.ScanSizes``,
        above the graph's layer); the simulation and advise price them (a keyless table's scans
        are advise's finding of their own)."""
        return (self.trx_us, self.insert_us, self.update_us, self.delete_us, self.byte_us, self.commit_alone_us(),
                self.event_us)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    def origin(self) -> str:
        """Where this model comes from, in words, for the reports (issue 15: say when the times
        rest on the built-in default, and give a calibrated model's error band)."""
        default = CostModel()
        costs = replace(self, measured_on=default.measured_on)
        if costs == default:
            return (f"built-in default (measured on a {default.cores}-core MySQL 9.7 replica; it assumes your "
                    f"replica has {default.cores} cores: --cores N gives yours; not calibrated to yours: "
                    "`lagadvisor calibrate`)")
        if replace(costs, cores=default.cores) == default:
            return (f"built-in default with cores set to {self.cores} (measured on {default.cores} cores; not "
                    "calibrated to your replica)")
        if self.error_band > 0:
            return f"given with --cost-model, calibrated: {self.band_words()}; {self.measured()}"
        return f"given with --cost-model; {self.measured()}"

    def measured(self) -> str:
        """``measured on ...`` from :attr:`measured_on`, or that the file does not say."""
        return f"measured on {self.measured_on}" if self.measured_on else "where it was measured is not recorded"

    def band_at(self, workers: int) -> float:
        """The relative error band of an absolute time at ``workers`` workers: ``error_band`` at
        the worker count the calibration fitted (its held-out checks were made there), else that
        and :data:`EXTRAPOLATION_BAND` in quadrature (what one catch-up does not show of the
        others); 0 when the model is not calibrated."""
        if self.calibrated_workers and self.calibrated_workers == workers:
            return self.error_band
        return self.band_elsewhere()

    def band_elsewhere(self) -> float:
        """The error band away from the calibrated worker count: ``error_band`` and
        :data:`EXTRAPOLATION_BAND` in quadrature; 0 when the model is not calibrated."""
        return math.hypot(self.error_band, EXTRAPOLATION_BAND) if self.error_band > 0 else 0.0

    def band_words(self) -> str:
        """Where the error band holds, for the reports: at the calibrated worker count, wider at
        the others."""
        other = self.band_elsewhere()
        if self.calibrated_workers:
            return (f"absolute times +-{self.error_band:.1%} at {workers_text(self.calibrated_workers)}, where it "
                    f"was calibrated (its held-out checks), +-{other:.1%} at other worker counts")
        return (f"absolute times +-{other:.1%} (its held-out checks, +-{self.error_band:.1%}, at a worker count "
                "the model file does not record, widened for the others)")

    def time_band(self, seconds: float, workers: int) -> tuple[float, float] | None:
        """An absolute time's error band at ``workers`` workers (:meth:`band_at`), or None when
        the model is not calibrated."""
        band = self.band_at(workers)
        if band <= 0:
            return None
        return seconds * (1 - band), seconds * (1 + band)

    def time_band_json(self, seconds: float, workers: int) -> list[float] | None:
        """:meth:`time_band` as the JSON reports give it (rounded to the microsecond)."""
        b = self.time_band(seconds, workers)
        return None if b is None else [round(b[0], 6), round(b[1], 6)]

    @classmethod
    def from_file(cls, path: str) -> "CostModel":
        """Read and validate a cost model written by ``calibrate`` (or by hand)."""
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):  # a FIFO would block, a directory is not a model
                kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
                raise ConfigError(f"{path}: cannot read the cost model: {kind}")
            with open(path, encoding="utf-8") as f:
                text = f.read(1 << 20)
                if f.read(1):
                    raise ConfigError(f"{path}: not a cost model: larger than 1 MiB")
        except UnicodeDecodeError as err:
            raise ConfigError(f"{path}: not a cost model: not UTF-8 text ({err.reason} at byte {err.start})") from err
        except OSError as err:
            raise ConfigError(f"{path}: cannot read the cost model: {err.strerror or err}") from err
        try:
            data = json.loads(text, parse_constant=_refuse_constant)
        except ValueError as err:
            raise ConfigError(f"{path}: not a cost model: {err}") from err
        except RecursionError:
            raise ConfigError(f"{path}: not a cost model: JSON nested too deeply") from None
        return cls.from_dict(data, path)

    @classmethod
    def from_dict(cls, data: object, where: str = "cost model") -> "CostModel":
        """Validate a cost model's keys and values against :data:`COST_MODEL_SCHEMA`: numbers only
        (no booleans, strings or null), finite, in range, but ``measured_on``, one line of text;
        unset keys keep their defaults, except ``multi_worker_us``, 0 in a model that names
        ``multi_worker_cpu`` without it (one written before the term, whose factor held the whole
        multi-worker cost), the terms of :data:`UNWRITTEN_BEFORE` (the spread, the per-event
        costs), 0 in a whole model written without them (one that names every term of
        :data:`WRITTEN_MODEL_KEYS`, as ``calibrate`` writes them: written before the terms, its
        costs fitted without them; a file naming a few costs by hand keeps the built-in's), and
        ``measured_on``, "" (not recorded: the numbers'
        machine is not the built-in's)."""
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: a cost model is a JSON object of numbers, got {_json_kind(data)}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{where}: unknown cost model key {unknown[0]!r}; known: {', '.join(sorted(known))}")
        values: dict = {"measured_on": _measured_on(data.get("measured_on", ""), where)}
        for key in sorted(data):
            if key == "measured_on":
                continue
            v = data[key]
            kind, lo, hi, unit = COST_MODEL_SCHEMA[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"{where}: {key}: expected a number, got {_json_kind(v)}")
            if isinstance(v, int) and abs(v) > 1 << 64:   # no float holds it, and no range takes it
                raise ConfigError(f"{where}: {key}: a {len(str(abs(v)))}-digit integer is outside {lo:g}..{hi:g} "
                                  f"{unit}".rstrip())
            if isinstance(v, float) and not math.isfinite(v):
                raise ConfigError(f"{where}: {key}: expected a finite number, got {v}")
            if kind is int and v != int(v):
                raise ConfigError(f"{where}: {key}: expected an integer, got {v}")
            if not lo <= v <= hi:
                raise ConfigError(f"{where}: {key}: {v:g} is outside {lo:g}..{hi:g} {unit}".rstrip())
            values[key] = int(v) if kind is int else float(v)
        if values.get("fsync_devices", 1) not in (1, 2):
            raise ConfigError(f"{where}: fsync_devices: 1 (redo log and binlog on one device) or 2, "
                              f"got {values['fsync_devices']}")
        if WRITTEN_MODEL_KEYS <= set(values):
            # a whole model written before a term was fitted without it: its costs hold that work
            for key in UNWRITTEN_BEFORE:
                values.setdefault(key, 0.0)
        if "multi_worker_cpu" in values and "multi_worker_us" not in values:
            # written before multi_worker_us: its factor held the whole multi-worker cost
            values["multi_worker_us"] = 0.0
        return replace(cls(), **values)


#: What a calibration on one catch-up does not see of the same replica's catch-ups at other worker
#: counts (the catch-up's own luck on a shared machine, and the model's error across worker
#: counts), as a relative half-width added in quadrature to its held-out band there. The 16-core
#: lab: calibrate --workers 16 on each of the 20 kept 16-worker catch-ups (two device runs, five
#: workloads, relaxed and durable) then every other worker count from 1 to 32 against the rounds'
#: medians: the held-out bands alone held 25 and 28 of 50 times; with 0.15, 37 and 39 of 50 (the
#: median error there was 11-14%, with no trend in the distance from 16 workers;
#: bench/manycore_16core_calibrate.json, bench/manycore_16core_run2_calibrate.json, issue 33).
#: With the three-stage group commit (2026-11-27), 38 and 43 of 50, and on the two later runs
#: it was not chosen on, 37 of 50 and 25 of 40 (bench/manycore_16core_run{3,4}_calibrate.json);
#: with the apply spread, 39, 42, 38 of 50 and 24 of 40; with each measured time less the replica's
#: start at its own worker count (bench/manycore/compare.py ``Start``), 43, 41, 38 of 50 and 26 of 40.
EXTRAPOLATION_BAND = 0.15

#: The cost terms every model file lagadvisor has written names (``calibrate`` writes every
#: field): a file with all of them but no ``apply_spread`` was written before that term.
WRITTEN_MODEL_KEYS = frozenset({"trx_us", "insert_us", "update_us", "delete_us", "dispatch_us", "commit_us",
                                "flush_us"})

#: Terms added after ``calibrate`` first wrote whole models, which such a model file, fitted before
#: them, reads as 0 rather than the built-in's: the apply spread, and the per-event costs (the
#: fifteenth session, 2026-11-28: a calibration before them fitted its per-transaction and per-row
#: costs with the statements' work in them; the built-in's 3.91 + 1.75 us an event on top would
#: count it twice, some 40 us more of worker CPU and 19 of the coordinator's a sysbench
#: transaction of 11 events).
UNWRITTEN_BEFORE = ("apply_spread", "event_us", "dispatch_event_us")

#: How many apply CPU factors a spread has (``CostModel.spread_factors``): a transaction takes
#: the one its index's hash names, so the factors repeat in no order a schedule could follow.
SPREAD_SLOTS = 64


@functools.lru_cache(maxsize=16)
def _spread_factors(sigma: float) -> tuple[float, ...]:
    """``exp(sigma * z - sigma^2 / 2)`` at the standard normal's quantiles (k + 1/2) / SPREAD_SLOTS,
    divided by their mean (exactly 1 on average over the slots)."""
    if sigma <= 0:
        return ()
    dist = statistics.NormalDist()
    raw = [math.exp(sigma * dist.inv_cdf((k + 0.5) / SPREAD_SLOTS) - sigma * sigma / 2) for k in range(SPREAD_SLOTS)]
    mean = math.fsum(raw) / SPREAD_SLOTS
    return tuple(x / mean for x in raw)


#: The longest ``measured_on`` a model file may hold (a pooled model names its members').
MEASURED_ON_MAX = 2000


def workers_text(n: int) -> str:
    """``n`` workers in words: "1 worker", "4 workers"."""
    return f"{n} worker{'s' if n != 1 else ''}"


def one_line(text: str) -> str:
    """``text`` as a ``measured_on`` a model file can hold and read back: control characters (a
    file name may have them) as "?", cut to :data:`MEASURED_ON_MAX` characters."""
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= MEASURED_ON_MAX else text[:MEASURED_ON_MAX - 3] + "..."


def _measured_on(v: object, where: str) -> str:
    """A model file's ``measured_on``: text of one line, at most :data:`MEASURED_ON_MAX` characters
    (it is printed in every report that uses the model)."""
    if not isinstance(v, str):
        raise ConfigError(f"{where}: measured_on: expected a string, got {_json_kind(v)}")
    if len(v) > MEASURED_ON_MAX:
        raise ConfigError(f"{where}: measured_on: longer than {MEASURED_ON_MAX} characters")
    if any(not c.isprintable() for c in v):
        raise ConfigError(f"{where}: measured_on: holds a control character")
    return v


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number a cost model can hold")


def _json_kind(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    return {dict: "an object", list: "an array", str: "a string"}.get(type(v), type(v).__name__) + (
        f" {v!r}" if isinstance(v, str) and len(v) < 40 else "")


#: key -> (type, min, max, unit). Costs are microseconds; at most one second per row, per
#: transaction or per group (a larger number is a unit mistake, and would overflow the clock).
COST_MODEL_SCHEMA: dict[str, tuple[type, float, float, str]] = {
    "trx_us": (float, 0, 1e6, "microseconds"),
    "insert_us": (float, 0, 1e6, "microseconds"),
    "update_us": (float, 0, 1e6, "microseconds"),
    "delete_us": (float, 0, 1e6, "microseconds"),
    "byte_us": (float, 0, 1e3, "microseconds per byte"),
    "event_us": (float, 0, 1e6, "microseconds per event"),
    "durable_byte_us": (float, 0, 1e3, "microseconds per byte"),
    "dispatch_us": (float, 0, 1e6, "microseconds"),
    "dispatch_event_us": (float, 0, 1e6, "microseconds per event"),
    "dispatch_byte_us": (float, 0, 1e3, "microseconds per byte"),
    "commit_us": (float, 0, 1e6, "microseconds"),
    "commit_group_us": (float, 0, 1e6, "microseconds"),
    "flush_us": (float, 0, 1e6, "microseconds"),
    "redo_flush_us": (float, 0, 1e6, "microseconds"),
    "handoff_us": (float, 0, 1e6, "microseconds"),
    "wakeup_us": (float, 0, 1e6, "microseconds"),
    "scan_row_us": (float, 0, 1e3, "microseconds per row scanned"),
    "fk_check_us": (float, 0, 1e6, "microseconds per foreign-key check past one per inserted row"),
    "index_entry_us": (float, 0, 1e6, "microseconds per secondary index entry past the rows' own"),
    "apply_spread": (float, 0, 2, "(a lognormal sigma)"),
    "multi_worker_cpu": (float, 0.1, 100, "(a CPU factor)"),
    "multi_worker_us": (float, 0, 1e6, "microseconds"),
    "switch_us": (float, 0, 1e6, "microseconds"),
    "concurrency_cpu": (float, 0, 1, "(a slowdown per thread running at once)"),
    "oversubscribed_cpu": (float, 0, 1, "(a slowdown per runnable thread past the cores)"),
    "cores": (int, 1, 4096, "cores"),
    "fsync_devices": (int, 1, 2, "devices"),
    "fsync_cpu": (float, 0, 1, "(a fraction of each fsync's time)"),
    "fsync_byte_us": (float, 0, 1e3, "microseconds per byte"),
    "error_band": (float, 0, 10, "(a fraction: 0.1 = +-10%)"),
    "calibrated_workers": (int, 0, 1024, "workers"),
}


@dataclass(frozen=True, slots=True)
class ReplicaConfig:
    """The replica's applier settings."""

    workers: int = 4                     # replica_parallel_workers; 0 = single-threaded applier
    preserve_commit_order: bool = True   # replica_preserve_commit_order
    durable: bool = True                 # sync_binlog=1 and innodb_flush_log_at_trx_commit=1
                                         # (the cost model's flush_us applies; else no sync cost)
    pending_jobs_size_max: int = 128 * 1024 * 1024   # replica_parallel_pending_jobs_size_max... bytes
    mode: ReplicaMode = ReplicaMode.LOGICAL_CLOCK  # how the applier schedules (kinds.ReplicaMode)
    applier: Applier = Applier.MTA       # mta: the multi-threaded applier; csa: the Change Stream
                                         # Applier of 26.7+ (sim.engine, CSA_MODEL)


#: Said wherever the Change Stream Applier's simulated numbers are shown (issue 36, 74): its
#: scheduling follows the MySQL source at a named commit (sim.engine's docstring, CSA_SOURCE),
#: not a measurement.
CSA_MODEL = ("Change Stream Applier (MySQL 26.7+, APPLIER_VERSION=2): its documented semantics (MySQL 26.7 "
             "Reference Manual, 19.2.4) scheduled as in the MySQL source, mysql/mysql-server commit 312d9ed "
             "(Dependency_adapter_lwm::solve, Csa_service::run: a transaction starts once the low-water mark "
             "of those committed in order reaches its last_committed; at most 4 x workers in flight); no 26.x "
             "server could be run to measure it")
