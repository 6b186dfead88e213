"""The fleet on Dask distributed: an embedded ``LocalCluster`` by default, an existing cluster by
address (``--scheduler tcp://HOST:8786``).

The graph, per server: ``verdict`` → one ``read_part`` per file (so N workers read N files at
once, whichever servers they belong to) → ``advise_server`` (the merge and the chained
simulation). Dask retries a task whose worker died on another worker (the scheduler's
``allowed-failures``); the tasks are pure functions of their inputs, so the result is the same.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field

from ..cpus import usable_cpus
from ..errors import ConfigError
from .tasks import ServerJob, ServerResult, advise_server, map_on_cluster, read_part, remove_cache, verdict

CONNECT_TIMEOUT_S = 5


@dataclass
class FleetRun:
    results: list[ServerResult]
    workers: int
    scheduler: str
    seconds: float
    tasks: int
    task_stream: list[dict] = field(default_factory=list, repr=False)


def connect(scheduler: str | None, workers: int | None):
    """A Dask client: to ``scheduler``, or to a new embedded ``LocalCluster`` of ``workers``
    single-threaded worker processes (default: one per core). Returns ``(client, cluster)``."""
    import logging

    from distributed import Client, LocalCluster

    if scheduler:
        try:
            _handshake(scheduler)
            client = Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s")
        except Exception as err:  # noqa: BLE001 - whatever answered (or did not): one line naming it
            raise ConfigError(f"cannot reach the Dask scheduler at {scheduler}: {_why(err)}") from None
        return client, None
    import dask

    n = workers or usable_cpus()
    # The workers' statistical profiler holds sampled frames and frees them on the event loop's
    # thread; a native reader object (PyO3, bound to the thread that made it) freed there is
    # reported and leaked. Off (the nanny hands this config to its worker process).
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=logging.ERROR)
    return Client(cluster), cluster


def _handshake(address: str) -> None:
    """Open a comm to ``address`` and take its Dask handshake within ``CONNECT_TIMEOUT_S``, then
    close it (so at most twice that). ``Client`` bounds the TCP connect but then waits for the handshake without a
    limit (an HTTP server never sends one), and reads whatever a server that speaks first sends
    as frame lengths (an SSH banner: a MemoryError)."""
    from distributed.comm import connect as open_comm

    async def shake() -> None:
        # the connect's own limit first (its retries name a refused port), then the handshake's
        comm = await asyncio.wait_for(open_comm(address, timeout=CONNECT_TIMEOUT_S), 2 * CONNECT_TIMEOUT_S)
        await comm.close()

    asyncio.run(shake())


def _why(err: BaseException) -> str:
    if isinstance(err, (TimeoutError, asyncio.TimeoutError)):
        return f"no Dask handshake within {2 * CONNECT_TIMEOUT_S} s (is it a Dask scheduler?)"
    if isinstance(err, MemoryError):
        return "not a Dask scheduler (it answered with something else)"
    return " ".join(str(err).split()) or type(err).__name__


def run_fleet(jobs: list[ServerJob], client, *, stream: bool = False) -> FleetRun:
    """Submit every server's tasks at once and wait for every server's result."""
    start = time.perf_counter()
    tok = uuid.uuid4().hex[:8]
    futures = []
    ntasks = 0
    ctx = None
    if stream:
        from distributed import get_task_stream

        ctx = get_task_stream(client)
        ctx.__enter__()
    try:
        for n, job in enumerate(jobs):
            key = f"{n}-{tok}"
            v = client.submit(verdict, job, key=f"verdict-{key}", pure=False)
            parts = [client.submit(read_part, job, i, v, key=f"read-{key}-{i}", pure=False)
                     for i in range(len(job.files))]
            futures.append(client.submit(advise_server, job, v, *parts, key=f"advise-{key}", pure=False))
            ntasks += 2 + len(parts)
        results = client.gather(futures)
    finally:
        if ctx is not None:
            ctx.__exit__(None, None, None)
        run_ids = sorted({j.run_id for j in jobs})
        try:
            for rid in run_ids:
                client.run(remove_cache, rid)
        except Exception:  # noqa: BLE001 - cleaning a worker's copies is best effort
            pass
    workers = len(client.scheduler_info().get("workers", {}))
    addr = client.scheduler.address if client.scheduler else ""
    return FleetRun(list(results), workers, addr, time.perf_counter() - start, ntasks,
                    list(ctx.data) if ctx is not None else [])


__all__ = ["FleetRun", "connect", "map_on_cluster", "run_fleet"]
