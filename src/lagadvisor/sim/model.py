"""Inputs of the applier simulation: the replica's settings and the apply cost model.

The cost of a transaction on the replica is CPU work (per transaction, per row by kind, per
byte) plus its commit, which with full durability (``sync_binlog=1`` and
``innodb_flush_log_at_trx_commit=1`` on the replica) waits for a flush shared by every
transaction that reaches the commit stage while the previous flush is in progress (the
replica's own group commit). CPU work runs on at most ``cores`` threads at a time; the
coordinator's dispatch is serial.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace

from ..errors import ConfigError


@dataclass(frozen=True, slots=True)
class CostModel:
    """Microseconds. Defaults are measured on a real MySQL 9.7 replica on this kind of machine
    (2 cores); see ``bench/replica_catchup.py`` and the README for the method and the numbers."""

    trx_us: float = 150.0          # per transaction: begin, GTID, table maps, commit bookkeeping
    insert_us: float = 25.0        # per row written
    update_us: float = 30.0        # per row updated
    delete_us: float = 25.0        # per row deleted
    byte_us: float = 0.02          # per byte of the transaction's events
    dispatch_us: float = 15.0      # coordinator work per transaction (read, schedule, hand over)
    commit_us: float = 40.0        # CPU of the commit itself (no flush)
    flush_us: float = 1500.0       # one durable flush (binlog fsync + redo fsync) of a commit group
    cores: int = 2

    def apply_us(self, inserts: int, updates: int, deletes: int, nbytes: int) -> float:
        return (self.trx_us + self.insert_us * inserts + self.update_us * updates
                + self.delete_us * deletes + self.byte_us * nbytes + self.commit_us)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_file(cls, path: str) -> "CostModel":
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as err:
            raise ConfigError(f"{path}: cannot read the cost model: {err}") from err
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{path}: unknown cost model keys {unknown}; known: {sorted(known)}")
        try:
            model = replace(cls(), **{k: (int(v) if k == "cores" else float(v)) for k, v in data.items()})
        except (TypeError, ValueError) as err:
            raise ConfigError(f"{path}: bad value: {err}") from err
        if model.cores < 1 or any(getattr(model, f.name) < 0 for f in fields(cls)):
            raise ConfigError(f"{path}: costs must be >= 0 and cores >= 1")
        return model


@dataclass(frozen=True, slots=True)
class ReplicaConfig:
    """The replica's applier settings."""

    workers: int = 4                     # replica_parallel_workers; 0 = single-threaded applier
    preserve_commit_order: bool = True   # replica_preserve_commit_order
    durable: bool = True                 # sync_binlog=1 and innodb_flush_log_at_trx_commit=1
    pending_jobs_size_max: int = 128 * 1024 * 1024   # replica_parallel_pending_jobs_size_max... bytes
    mode: str = "logical_clock"          # logical_clock | database | mariadb_conservative | mariadb_optimistic
