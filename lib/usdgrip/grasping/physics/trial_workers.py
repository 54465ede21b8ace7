"""Simulation worker processes: numpy, MuJoCo and this package, never ``pxr``.

``evaluate_candidates(jobs=N)`` shares candidates between the calling process and
``N - 1`` of these workers. Each one is a fresh interpreter
(:func:`~usdgrip.grasping.physics.children.spawn` running
:func:`~usdgrip.grasping.physics.trial_worker_main.main`; :mod:`subprocess`: no fork of
a process holding USD's threads, no fork server) with :data:`WORKER_ENV` set, so importing
``usdgrip`` skips registering the USD schema and the worker loads only what simulation
needs (about 0.3 s instead of a fork server's 0.6 s with ``pxr``). It is handed the
already-built object, gripper and scene (their convex pieces: no decomposition, no
stage), builds the engine once per world and runs chunks of candidates.

Workers start as soon as a command knows it may simulate (:func:`prestart`: ``evaluate``
right after parsing its options, before it reads any file), so their start-up overlaps
the command's own imports, the reading of the stage and the decomposition, and they are
kept for the process's life (one command, or one batch worker's many files). Importing
this module loads no MuJoCo (the package's names load lazily).

A worker never outlives its parent: Linux kills it when the parent dies
(``PR_SET_PDEATHSIG``), it exits when its task pipe closes, and Ctrl-C (sent to the
whole process group) ends it at once and quietly; the parent's ``finally`` and
:func:`stop_workers` (at exit, and after SIGTERM/SIGHUP in the CLI) reap it.
"""

from __future__ import annotations

import atexit
import contextlib
import os

from usdgrip import interrupts
from usdgrip.grasping.physics import children
from usdgrip.grasping.physics.children import WORKER_ENV as WORKER_ENV

#: Raises the :func:`max_workers` cap (``USDGRIP_MAX_JOBS=8``), for a machine the CPU count
#: misjudges; never above :data:`HARD_MAX_JOBS`.
MAX_JOBS_ENV = "USDGRIP_MAX_JOBS"
#: Most simulation processes one evaluation may use, whatever the machine.
HARD_MAX_JOBS = 256
#: Resident memory of one worker with a compiled model, bytes (measured: about 90 MB).
WORKER_MEMORY = 150 * 1024 * 1024
#: Below this many trials (candidates x trials x hands) one process is faster than starting
#: workers (a worker starts in about 0.3 s; a trial takes about 15 ms).
MIN_PARALLEL_TRIALS = 40
READY = "ready"


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask; else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _available_memory() -> int | None:
    with contextlib.suppress(OSError, ValueError), open("/proc/meminfo") as stream:
        for line in stream:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return None


def max_workers() -> tuple[int, str]:
    """The most simulation processes (caller included) this machine should run, and why.

    One per usable CPU (simulation is CPU-bound: more only compete), fewer when the
    available memory holds fewer workers of :data:`WORKER_MEMORY`; :data:`MAX_JOBS_ENV`
    sets the CPU part instead.

    Raises:
        ValueError: :data:`MAX_JOBS_ENV` is set to something else than a whole number >= 1.
    """
    cpus, why = usable_cpus(), "CPUs"
    override = os.environ.get(MAX_JOBS_ENV, "").strip()
    if override:
        if not (override.isascii() and override.isdigit() and int(override) >= 1):
            raise ValueError(
                f"environment variable {MAX_JOBS_ENV} is {override!r}: expected a whole "
                "number >= 1 (the most simulation processes), or unset it"
            )
        cpus, why = int(override), MAX_JOBS_ENV
    limit = min(cpus, HARD_MAX_JOBS)
    memory = _available_memory()
    if memory is not None and memory // WORKER_MEMORY + 1 < limit:
        size = f"{WORKER_MEMORY // 2**20} MB"
        return max(1, memory // WORKER_MEMORY + 1), f"available memory ({size} a worker)"
    return limit, why


def check_jobs(jobs: int) -> str | None:
    """Why ``jobs`` simulation processes are too many here (None: they are not)."""
    limit, why = max_workers()
    if jobs <= limit:
        return None
    hint = f"; set {MAX_JOBS_ENV} to allow more" if why == "CPUs" else ""
    return f"expected at most {limit} here ({why}: more only compete){hint}"


def worth_workers(jobs: int, candidates: int, trials: int, hands: int = 1) -> bool:
    """Whether ``jobs`` > 1 processes pay off for this much work (:data:`MIN_PARALLEL_TRIALS`)."""
    return jobs > 1 and candidates > 1 and candidates * trials * hands >= MIN_PARALLEL_TRIALS


def prestart(jobs: int, candidates: int | None = None, trials: int = 1, hands: int = 1) -> None:
    """Start the workers an evaluation of this size will use (none when one process is faster).

    They load their modules while the caller reads its inputs. ``candidates`` None: the
    size is not known yet (a command that has not read its grasp file): start them now,
    and a second call with the size stops them if one process is faster after all.
    """
    if candidates is not None and not worth_workers(jobs, candidates, trials, hands):
        stop_workers(grace=0)
    elif jobs > 1:
        start_workers(min(jobs, max_workers()[0]) - 1)


class TrialWorker:
    """Parent-side handle of one simulation worker (a pipe each way, framed by Connection)."""

    def __init__(self) -> None:
        self.process, self.tasks, self.connection = children.spawn(_ENTRY)
        self.ready = False
        self.world: object = None
        """The world it holds (its ``(engine, obj, ...)`` tuple, compared by identity)."""
        self.chunks: dict[int, list[tuple[int, int, int]]] = {}
        """Chunks sent and not answered, by tag (a finished call's answers are dropped)."""

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.process.poll() is None

    def close(self, grace: float = 0.2) -> None:
        """Stop the worker: close its task pipe, then kill it if it does not exit in ``grace`` s.

        A worker busy with a chunk, or not ready yet (still loading its modules: a command
        that failed early), is killed at once.
        """
        busy = self.chunks or not self.ready
        children.end(self.process, self.tasks, self.connection, grace=0 if busy else grace)


#: The worker's command (``-c``, not ``-m``: this module is already loaded by its package).
_ENTRY = (
    "import sys; from usdgrip.grasping.physics.trial_worker_main import serve; "
    "sys.exit(serve(sys.argv[1:]))"
)
_POOL: list[TrialWorker] = []


def start_workers(count: int) -> list[TrialWorker]:
    """At least ``count`` live workers, started now if missing.

    Returns at once: they load their modules in the background and say ``ready``.
    """
    interrupts.check()  # never a new worker once SIGTERM/SIGHUP arrived
    _POOL[:] = [w for w in _POOL if w.alive()]
    while len(_POOL) < count:
        _POOL.append(TrialWorker())
    return _POOL[:count]


def stop_workers(grace: float = 0.2) -> None:
    """End every worker of this process (idempotent; also at exit); ``grace=0``: kill now."""
    while _POOL:
        _POOL.pop().close(grace)


def drop_worker(worker: TrialWorker) -> None:
    """Close a worker that failed and forget it (a later call starts a fresh one)."""
    with contextlib.suppress(ValueError):
        _POOL.remove(worker)
    worker.close()


atexit.register(stop_workers)
