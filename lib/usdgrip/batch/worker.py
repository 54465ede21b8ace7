"""One sandboxed worker process: runs jobs file by file, dies alone.

:class:`WorkerProcess` starts ``python -m usdgrip.batch.worker`` with
:mod:`subprocess` (a fresh interpreter, like multiprocessing's ``spawn``;
``fork`` of a process that has loaded USD and its thread pools is unsafe) and
talks to it over two private pipes with :class:`multiprocessing.connection.Connection`
framing, so nothing the job prints can corrupt the protocol. A worker stays
alive across files (USD and usdgrip are imported once, about 0.4 s here); only
a worker that crashed or overran its timeout is killed and replaced.

:mod:`subprocess` rather than :mod:`multiprocessing` because Dask's worker
processes are daemonic, and daemonic processes may not start multiprocessing
children; one mechanism serves both executors, so their rows are identical.
Unix only (file-descriptor pipes).
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from usdgrip.batch.jobs import (
    compute_file_facts,
    compute_input_hashes,
    make_row,
    preload_job,
    run_job,
)

_STDERR_TAIL = 800  # characters of a dead worker's stderr kept in its row
_READY = "ready"
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')


class WorkerProcess:
    """Parent-side handle of one worker process.

    Args:
        preload: job spec to import before the worker announces itself, so
            the first file does not pay for the job's imports.
        threads: USD work threads in the worker (0: USD's default, one per
            core; ignored when the user set ``PXR_WORK_THREAD_LIMIT``).

    The worker announces itself once its imports are done: wait until
    :attr:`connection` is readable and call :meth:`receive_ready` (or call
    :meth:`wait_ready`). Then send tasks with :meth:`send` (several may be
    queued: the worker runs them in order without waiting for the parent),
    wait on :attr:`connection` (readable when a row is ready *or* the worker
    died) and call :meth:`receive`. The timeout clock of a task starts when
    the worker can start it (sent to an idle worker, or the previous row
    arrived), so a slow start-up or a queue never counts against a file.
    """

    def __init__(self, preload: str | None = None, threads: int = 0) -> None:
        from usdgrip.grasping.physics.children import start_piped_child

        # The worker's stderr (USD warnings, faulthandler dumps) goes to a private
        # file, emptied at each task, so a crash row can quote what the worker said.
        fd, name = tempfile.mkstemp(prefix="usdgrip-batch-worker-", suffix=".log")
        os.close(fd)
        self._stderr = open(name, "a+b")  # noqa: SIM115  (lives as long as the worker)
        os.unlink(name)
        # ``main``'s arguments: threads, the preloaded job (optional), then the two pipes
        argv = [
            sys.executable,
            "-m",
            "usdgrip.batch.worker",
            str(threads),
            *([preload] if preload else []),
        ]
        self.process, self._tasks, self.connection = start_piped_child(argv, stderr=self._stderr)
        self.tasks: deque[tuple[str, str, str, dict[str, Any]]] = deque()
        self.started = 0.0
        self._stopping = False

    def receive_ready(self) -> None:
        """Take the worker's start-up message.

        Raises:
            OSError: the worker died while starting (the message quotes its stderr).
        """
        try:
            message = self.connection.recv()
        except (EOFError, OSError):
            message = None
        if message != _READY:
            self.kill()
            code = self.process.returncode
            raise OSError(
                f"usdgrip batch worker process could not start (exit code {code}): "
                f"{self._stderr_tail() or 'no output'}"
            )

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Block until the worker has started.

        Raises:
            OSError: it died while starting or did not start within ``timeout`` seconds.
        """
        if not self.connection.poll(timeout):
            self.kill()
            raise OSError(f"usdgrip batch worker process did not start within {timeout:g} s")
        self.receive_ready()

    @property
    def pid(self) -> int:
        """Process id of the worker."""
        return self.process.pid

    @property
    def task(self) -> tuple[str, str, str, dict[str, Any]] | None:
        """``(key, path, job, params)`` of the file the worker is on, None when idle."""
        return self.tasks[0] if self.tasks else None

    def send(self, key: str, path: str, job: str, params: Mapping[str, Any]) -> None:
        """Queue one file on the worker."""
        if not self.tasks:
            self._start_clock()
        self.tasks.append((key, path, job, dict(params)))
        self._tasks.send((path, job, self.tasks[-1][3]))

    def _start_clock(self) -> None:
        self.started = time.perf_counter()
        self._stderr.truncate(0)

    def receive(self) -> dict[str, Any]:
        """The row of the current task; a crash row when the worker died.

        Call when :attr:`connection` is readable. After a crash row the worker
        is dead: take the files still queued on it with :meth:`take_queued`,
        :meth:`close` it and start a new one.
        """
        key = self.tasks[0][0]
        try:
            row = self.connection.recv()
        except (EOFError, OSError):
            row = self.failure_row("crashed", self._death_message())
        else:
            row["path"] = key
        self.tasks.popleft()
        if self.tasks:
            self._start_clock()
        return row

    def take_queued(self) -> list[tuple[str, str, str, dict[str, Any]]]:
        """Forget (and return) the files queued behind a crash or a timeout, to run elsewhere."""
        queued = list(self.tasks)
        self.tasks.clear()
        return queued

    def failure_row(self, status: str, message: str) -> dict[str, Any]:
        """Row for the current task when the worker gave none (crash or timeout)."""
        key, path, job, params = self.tasks[0]
        try:
            facts = compute_file_facts(path)
        except OSError:
            facts = None
        try:
            inputs = compute_input_hashes(job, path, params)
        except ValueError:
            inputs = None
        elapsed = time.perf_counter() - self.started
        return make_row(key, facts, {"status": status, "error": message}, elapsed, inputs)

    def kill_for_timeout(self, timeout: float) -> dict[str, Any]:
        """Kill the worker that overran ``timeout`` seconds; return the timeout row."""
        self.kill()
        row = self.failure_row(
            "timeout",
            f"no result after {timeout:g} s (--timeout); the worker process was killed "
            "and replaced",
        )
        self.tasks.popleft()
        return row

    def _death_message(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.returncode
        if code is not None and code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        message = f"worker process {how} while processing this file; it was replaced"
        tail = self._stderr_tail()
        return f"{message}. Worker stderr: {tail}" if tail else message

    def _stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            self._stderr.seek(0)
            return summarize_stderr(self._stderr.read().decode("utf-8", "replace"))
        return ""

    def kill(self) -> None:
        """Kill the worker at once (SIGKILL) and reap it."""
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)

    def request_stop(self) -> None:
        """Ask an idle worker to exit; it finishes on its own (no waiting here)."""
        if not self.tasks and not self._stopping:
            self._stopping = True
            with contextlib.suppress(OSError):
                self._tasks.send(None)

    def close(self) -> None:
        """Stop the worker (politely when idle, else kill), reap it and release its pipes."""
        if self.process.poll() is None:
            if self.tasks:
                self.kill()
            else:
                self.request_stop()
                try:
                    self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.kill()
        for resource in (self._tasks, self.connection, self._stderr):
            with contextlib.suppress(OSError):
                resource.close()


def summarize_stderr(text: str, frames: int = 3) -> str:
    """One line from a dead worker's stderr: faulthandler's error and innermost frames.

    Without a faulthandler dump, the last lines. Addresses and thread ids are
    left out so the same crash reads the same on every run and executor.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    fatal = next((i for i, line in enumerate(lines) if line.startswith("Fatal Python error")), None)
    if fatal is None:
        return " | ".join(lines[-3:])[-_STDERR_TAIL:]
    calls = []
    for line in lines[fatal + 1 :]:
        match = _FRAME.match(line)
        if match:
            calls.append(f"{match['func']} ({Path(match['file']).name}:{match['line']})")
        elif calls:
            break
    where = f"; innermost calls: {', '.join(calls[:frames])}" if calls else ""
    return f"{lines[fatal]}{where}"[-_STDERR_TAIL:]


# --- the worker process itself ---------------------------------------------


def main(argv: list[str]) -> int:
    """Serve tasks ``(path, job, params)`` from the task pipe until it closes."""
    from usdgrip.interrupts import die_with_parent

    if not die_with_parent():  # a killed batch leaves no orphans (here: already killed)
        return 0
    # Ctrl-C goes to the whole process group; the parent decides, the worker ignores it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    faulthandler.enable()
    tasks = Connection(int(argv[-2]), writable=False)
    rows = Connection(int(argv[-1]), readable=False)
    # usdgrip (and pxr, the schema) is loaded: ``-m usdgrip.batch.worker`` imported it.
    threads = int(argv[0])
    if threads and "PXR_WORK_THREAD_LIMIT" not in os.environ:
        from usdgrip.usd.stage import set_work_thread_limit

        set_work_thread_limit(threads)
    if len(argv) > 3:
        preload_job(argv[1])
    rows.send(_READY)

    while True:
        try:
            task = tasks.recv()
        except (EOFError, OSError):
            task = None
        if task is None:
            # Skip interpreter teardown (unloading USD takes a while); nothing is left to flush.
            sys.stderr.flush()
            os._exit(0)
        path, job, params = task
        rows.send(run_job(path, job, params))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
