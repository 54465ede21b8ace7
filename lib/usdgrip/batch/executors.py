"""Executors: run one job over many files and yield a row as each file completes.

Both executors isolate every file the same way, with
:class:`~usdgrip.batch.worker.WorkerProcess`: a file that segfaults the
worker, hangs past ``timeout`` or raises becomes a ``crashed``, ``timeout``
or ``error`` row, and the run goes on with a fresh worker. Their rows are
identical; only where the workers live differs.

- :class:`LocalExecutor` keeps ``jobs`` worker processes on this machine and
  multiplexes them with :func:`multiprocessing.connection.wait`.
- :class:`DaskExecutor` submits one task per file to a ``distributed``
  cluster (an existing scheduler, or a ``LocalCluster`` it starts); each Dask
  worker thread keeps its own sandbox worker process. Workers open files by
  path, so they must see the same file system as the client.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any
from urllib.parse import urlsplit

from usdgrip.batch.jobs import make_row
from usdgrip.batch.worker import WorkerProcess

EXECUTORS = ("local", "dask")
#: Longest per-file timeout, seconds (one week; the waits take at most ~24 days).
MAX_TIMEOUT = 7 * 24 * 3600.0
#: Most worker processes per CPU: each takes about 50 MB, and more than a few per core only
#: competes for the cores (``--jobs`` above ``MAX_JOBS_PER_CPU`` x CPUs is refused).
MAX_JOBS_PER_CPU = 4
_SCHEDULER_ADDRESS = re.compile(r"^(tcp|tls|ucx|ws|wss|inproc)://\S+$")


@dataclass(frozen=True)
class Task:
    """One file to process: ``key`` names it in the results, ``path`` opens it."""

    key: str
    path: str
    job: str
    params: Mapping[str, Any] = field(default_factory=dict)


def max_jobs() -> int:
    """Most worker processes this machine may start: :data:`MAX_JOBS_PER_CPU` x its CPUs."""
    return MAX_JOBS_PER_CPU * (os.cpu_count() or 1)


def check_jobs(jobs: int, local: bool = True) -> int:
    """Return ``jobs`` if this machine may start that many worker processes.

    Args:
        jobs: the worker processes asked for.
        local: they start on this machine (False: a remote cluster decides, only
            ``jobs >= 1`` is checked).

    Raises:
        ValueError: ``jobs`` is below 1, or (``local``) above :func:`max_jobs`.
    """
    if jobs < 1:
        raise ValueError(f"--jobs is {jobs}; expected an integer >= 1")
    if local and jobs > max_jobs():
        cpus = os.cpu_count() or 1
        raise ValueError(
            f"--jobs is {jobs}; at most {max_jobs()} here ({MAX_JOBS_PER_CPU} x {cpus} CPUs): "
            "each worker process takes about 50 MB and more only compete for the cores"
        )
    return jobs


def check_timeout(timeout: float | None) -> None:
    """Refuse a per-file timeout that is not None, > 0 and at most :data:`MAX_TIMEOUT`."""
    if timeout is not None and not 0 < timeout <= MAX_TIMEOUT:
        raise ValueError(
            f"--timeout is {timeout:g} s; expected a number > 0 and at most {MAX_TIMEOUT:g} "
            "(one week; 0 for no limit)"
        )


class LocalExecutor:
    """A pool of ``jobs`` sandboxed worker processes on this machine.

    Each worker holds the file it runs plus at most ``prefetch - 1`` queued
    ones, so it never waits for the parent between files; files queued behind
    a crash or a timeout go back to the pool.

    Args:
        jobs: number of worker processes (1 to :func:`max_jobs`; no more than
            the files of a run are started).
        timeout: seconds one file may take before its worker is killed
            (None: no limit; else > 0 and at most :data:`MAX_TIMEOUT`).
        prefetch: files handed to a worker at once (>= 1).
    """

    name = "local"

    def __init__(self, jobs: int = 1, timeout: float | None = None, prefetch: int = 2) -> None:
        check_jobs(jobs)
        check_timeout(timeout)
        if prefetch < 1:
            raise ValueError(f"prefetch is {prefetch}; expected an integer >= 1")
        self.jobs = jobs
        self.timeout = timeout
        self.prefetch = prefetch

    def run(self, tasks: Iterable[Task]) -> Iterator[dict[str, Any]]:
        """Yield one row per task, in completion order.

        Raises:
            OSError: a worker process could not start (a broken environment,
                not a bad file).
        """
        pending = deque(tasks)
        starting: dict[Any, WorkerProcess] = {}
        ready: dict[Any, WorkerProcess] = {}
        preload = pending[0].job if pending else None

        # One process per core does the parallel work; USD's threads would only compete.
        threads = max(1, (os.cpu_count() or 1) // self.jobs)

        def start_worker() -> None:
            worker = WorkerProcess(preload, threads)
            starting[worker.connection] = worker

        def retire(connection: Any) -> None:
            worker = ready.pop(connection)
            pending.extendleft(Task(*task) for task in reversed(worker.take_queued()))
            worker.close()
            start_worker()

        for _ in range(min(self.jobs, len(pending))):
            start_worker()
        try:
            while True:
                for connection, worker in list(ready.items()):
                    # Queue more only while others are not left idle at the tail of the run.
                    depth = self.prefetch if len(pending) > len(ready) else 1
                    try:
                        while pending and len(worker.tasks) < depth:
                            task = pending.popleft()
                            worker.send(task.key, task.path, task.job, task.params)
                    except OSError:  # died while idle (killed from outside): replace it
                        retire(connection)
                busy = [worker for worker in ready.values() if worker.tasks]
                if not busy and not pending:
                    break
                waiting = [*starting, *(worker.connection for worker in busy)]
                for connection in wait(waiting, timeout=self._wait_time(busy)):
                    if connection in starting:
                        worker = starting.pop(connection)
                        worker.receive_ready()
                        ready[connection] = worker
                        continue
                    row = ready[connection].receive()
                    if row["status"] == "crashed":
                        retire(connection)
                    yield row
                if self.timeout is not None:
                    now = time.perf_counter()
                    for connection, worker in list(ready.items()):
                        overdue = worker.tasks and now - worker.started > self.timeout
                        if overdue and not connection.poll():
                            row = worker.kill_for_timeout(self.timeout)
                            retire(connection)
                            yield row
        finally:
            workers = [*starting.values(), *ready.values()]
            for worker in workers:
                worker.request_stop()
            for worker in workers:
                worker.close()

    def _wait_time(self, workers: Iterable[WorkerProcess]) -> float | None:
        workers = list(workers)
        if self.timeout is None or not workers:
            return None
        now = time.perf_counter()
        return max(0.0, min(w.started + self.timeout - now for w in workers) + 0.001)

    def start(self) -> None:
        """Nothing to start ahead (workers start with :meth:`run` and live for it)."""

    def close(self) -> None:
        """Nothing to release between runs (workers live for one :meth:`run`)."""


# --- Dask --------------------------------------------------------------------

_SANDBOX = threading.local()


def run_in_sandbox(tasks: list[Task], timeout: float | None) -> list[dict[str, Any]]:
    """Run tasks one by one in this thread's sandbox worker process (the Dask task body).

    The sandbox outlives the Dask task, so a Dask worker pays USD's import
    once; it is replaced after a crash or a timeout, exactly as in the local
    pool, and the remaining files of the chunk go on in the new one.
    """
    return [_run_one_in_sandbox(task, timeout) for task in tasks]


def _run_one_in_sandbox(task: Task, timeout: float | None) -> dict[str, Any]:
    worker: WorkerProcess | None = getattr(_SANDBOX, "worker", None)
    if worker is None or worker.process.poll() is not None:
        worker = WorkerProcess(task.job, threads=1)
        worker.wait_ready()
        _SANDBOX.worker = worker
    worker.send(task.key, task.path, task.job, task.params)
    if worker.connection.poll(timeout):
        row = worker.receive()
        if row["status"] != "crashed":
            return row
    else:
        row = worker.kill_for_timeout(timeout)
    worker.close()
    _SANDBOX.worker = None
    return row


def _make_ignore_interrupt_plugin() -> Any:
    """A Dask worker plugin that makes our LocalCluster's worker processes ignore SIGINT.

    A Ctrl-C at the terminal then reaches only the client, which shuts the
    cluster down (no worker tracebacks). Workers the nanny restarts get it too.
    """
    from distributed.diagnostics.plugin import WorkerPlugin

    class IgnoreInterrupt(WorkerPlugin):
        def setup(self, worker: Any) -> None:
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, signal.SIG_IGN)

    return IgnoreInterrupt()


def check_scheduler_address(address: str) -> str:
    """Return ``address`` if it looks like a Dask scheduler address.

    Raises:
        ValueError: not of the form ``tcp://host:port`` (or tls://, ucx://, ws://, inproc://).
    """
    if not _SCHEDULER_ADDRESS.match(address):
        raise ValueError(
            f"--scheduler {address!r}: expected a Dask scheduler address such as "
            "tcp://scheduler-host:8786"
        )
    return address


def _probe_scheduler(address: str, timeout: float) -> None:
    """Fail fast on a refused TCP connection (distributed would retry until its timeout)."""
    parts = urlsplit(address)
    if parts.scheme != "tcp":
        return
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        raise ValueError(
            f"--scheduler {address!r}: expected tcp://host:port, e.g. tcp://scheduler-host:8786"
        )
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(
            f"--scheduler {address}: cannot reach the Dask scheduler ({reason})"
        ) from exc


class DaskExecutor:
    """Run tasks on a ``distributed`` cluster, streaming rows with ``as_completed``.

    Args:
        jobs: worker processes of the LocalCluster started when ``scheduler``
            is None (one thread each; 1 to :func:`max_jobs`); with a scheduler,
            it becomes the cluster's thread count once connected.
        timeout: seconds per file, enforced inside the worker's sandbox.
        scheduler: address of an existing scheduler (``tcp://host:port``).
        connect_timeout: seconds to wait for the scheduler.
        chunk_size: files per Dask task (None: up to 32, fewer for small runs
            so that every worker thread gets about 8 chunks). A chunk's rows
            arrive together: an interrupted client loses at most the chunks
            in flight, which ``--resume`` runs again.

    Raises:
        ValueError: bad address, or the scheduler cannot be reached.
    """

    name = "dask"

    def __init__(
        self,
        jobs: int = 1,
        timeout: float | None = None,
        scheduler: str | None = None,
        connect_timeout: float = 10.0,
        chunk_size: int | None = None,
    ) -> None:
        check_jobs(jobs, local=scheduler is None)  # a LocalCluster starts --jobs processes
        check_timeout(timeout)
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"chunk_size is {chunk_size}; expected an integer >= 1")
        self.chunk_size = chunk_size
        self.jobs = jobs
        self.timeout = timeout
        self.scheduler = check_scheduler_address(scheduler) if scheduler else None
        self.connect_timeout = connect_timeout
        self._client: Any = None
        self._cluster: Any = None

    def start(self) -> None:
        """Connect to the scheduler, or start the LocalCluster (a few seconds).

        Raises:
            ValueError: the scheduler cannot be reached.
        """
        self._connect()

    def _connect(self) -> Any:
        if self._client is not None:
            return self._client
        from distributed import Client, LocalCluster

        if self.scheduler is None:
            self._cluster = LocalCluster(
                n_workers=self.jobs,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                # Rows report what went wrong; Dask's shutdown chatter after Ctrl-C
                # (cancelled tasks, lost workers) is not for the user.
                silence_logs=logging.ERROR,
            )
            self._client = Client(self._cluster)
            # Ctrl-C reaches the whole process group: only this process answers it.
            self._client.register_plugin(_make_ignore_interrupt_plugin(), name="usdgrip-sigint")
        else:
            _probe_scheduler(self.scheduler, self.connect_timeout)
            try:
                self._client = Client(self.scheduler, timeout=self.connect_timeout)
            except (OSError, TimeoutError) as exc:
                raise ValueError(
                    f"--scheduler {self.scheduler}: cannot reach the Dask scheduler "
                    f"within {self.connect_timeout:g} s ({type(exc).__name__})"
                ) from exc
            # The cluster decides the parallelism; report it, not --jobs.
            self.jobs = sum(self._client.nthreads().values()) or self.jobs
        return self._client

    def run(self, tasks: Iterable[Task]) -> Iterator[dict[str, Any]]:
        """Yield one row per task, as each chunk of files completes.

        Files go to Dask in chunks (one Dask task each, see ``chunk_size``),
        which keeps the scheduler's per-task cost off small files; at most
        four chunks per worker thread are in flight, so a library of 100,000
        files does not flood the scheduler. Every file of a chunk whose Dask
        worker itself was lost (``KilledWorker`` after ``allowed_failures``
        retries) gets a ``crashed`` row.
        """
        from distributed import as_completed

        client = self._connect()
        pending = deque(tasks)
        if not pending:
            return
        threads = sum(client.nthreads().values()) or 1
        window = 4 * threads
        # Enough chunks for every thread to stay busy until the end (8 per thread).
        size = self.chunk_size or max(1, min(32, len(pending) // (8 * threads)))
        started: dict[Any, tuple[list[Task], float]] = {}

        def submit(stream: as_completed | None = None) -> Any:
            chunk = [pending.popleft() for _ in range(min(size, len(pending)))]
            future = client.submit(run_in_sandbox, chunk, self.timeout, pure=False)
            started[future] = (chunk, time.perf_counter())
            if stream is not None:
                stream.add(future)
            return future

        first = [submit() for _ in range(window) if pending]
        stream = as_completed(first)
        try:
            for future in stream:
                chunk, start = started.pop(future)
                try:
                    rows = future.result()
                except Exception as exc:  # the Dask worker itself died or the task was lost
                    message = " ".join(str(exc).split())
                    failure = {
                        "status": "crashed",
                        "error": f"Dask task failed ({type(exc).__name__}: {message})",
                    }
                    elapsed = time.perf_counter() - start
                    rows = [make_row(task.key, None, failure, elapsed) for task in chunk]
                if pending:
                    submit(stream)
                yield from rows
        finally:
            for future in started:
                future.cancel()

    def close(self) -> None:
        """Disconnect; shut down the LocalCluster if this executor started it."""
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()
        self._client = self._cluster = None


def make_executor(
    name: str,
    jobs: int = 1,
    timeout: float | None = None,
    scheduler: str | None = None,
) -> LocalExecutor | DaskExecutor:
    """Build an executor by name (``local`` or ``dask``).

    Raises:
        ValueError: unknown name, bad ``jobs``/``timeout``, a scheduler given
            with the local executor, or a malformed scheduler address.
    """
    if name == "local":
        if scheduler:
            raise ValueError("--scheduler needs --executor dask")
        return LocalExecutor(jobs, timeout)
    if name == "dask":
        return DaskExecutor(jobs, timeout, scheduler)
    raise ValueError(f"executor {name!r}: expected one of {', '.join(EXECUTORS)}")
