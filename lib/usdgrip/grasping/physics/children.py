"""Child interpreters for the physics: numpy, MuJoCo or CoACD and this package, never ``pxr``.

:func:`spawn` starts one (``python -c ENTRY`` with :data:`WORKER_ENV` set, a pipe each way
framed by :class:`~multiprocessing.connection.Connection`): the simulation workers
(:mod:`~usdgrip.grasping.physics.trial_workers`) and :func:`call`, which runs one long C
computation (a CoACD decomposition) in a child while this process waits in a poll that
signals interrupt, so Ctrl-C, SIGTERM and SIGHUP stop the command within a fraction of a
second, the child killed, instead of after the computation.

A child never outlives its parent: :func:`die_with_parent` (``PR_SET_PDEATHSIG``), it
exits when its task pipe closes, and Ctrl-C (sent to the whole process group) ends it at
once and quietly.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import subprocess
import sys
from multiprocessing.connection import Connection
from typing import Any

#: Set in a child's environment: ``import usdgrip`` does not load ``pxr`` there.
WORKER_ENV = "USDGRIP_SIMULATION_WORKER"
#: How often :func:`call` looks at its child while it waits, s.
POLL_S = 0.1

_CALL_ENTRY = (
    "import sys; from usdgrip.grasping.physics.children import serve_call; "
    "sys.exit(serve_call(sys.argv[1:]))"
)


def start_piped_child(
    argv: list[str], *, env: dict[str, str] | None = None, stderr: Any = None
) -> tuple[subprocess.Popen[bytes], Connection, Connection]:
    """``argv + [TASK_FD, RESULT_FD]`` in a child; its process, task and result pipes.

    The child reads tasks from ``TASK_FD`` and writes results to ``RESULT_FD``
    (:class:`~multiprocessing.connection.Connection` framing); its stdin and stdout are the
    null device. The batch workers and :func:`spawn`'s children start this way.
    """
    task_read, task_write = os.pipe()
    result_read, result_write = os.pipe()
    try:
        process = subprocess.Popen(
            [*argv, str(task_read), str(result_write)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            pass_fds=(task_read, result_write),
            env=env,
        )
    except BaseException:
        for fd in (task_write, result_read):
            os.close(fd)
        raise
    finally:
        os.close(task_read)
        os.close(result_write)
    return process, Connection(task_write, readable=False), Connection(result_read, writable=False)


def spawn(
    entry: str, *, one_thread: bool = True
) -> tuple[subprocess.Popen[bytes], Connection, Connection]:
    """A child running ``python -c entry TASK_FD RESULT_FD``; its process, task and result pipes.

    ``one_thread``: ``OMP_NUM_THREADS=1`` (a simulation worker: one core each); a CoACD
    run keeps the caller's setting, as it had in this process. ``MUJOCO_GL=disable``: no
    rendering back end is loaded.
    """
    env = {
        **os.environ,
        WORKER_ENV: "1",
        # MuJoCo's import otherwise loads GLFW, whose import starts a Python child to probe
        # the library's version (about 0.1 s); a child never renders.
        "MUJOCO_GL": "disable",
        **({"OMP_NUM_THREADS": "1"} if one_thread else {}),
    }
    process, tasks, results = start_piped_child([sys.executable, "-c", entry], env=env)
    _LIVE.add(process)
    return process, tasks, results


#: Every child started and not yet reaped (:func:`end_all` stops what a handle lost).
_LIVE: set[subprocess.Popen[bytes]] = set()


def end_all() -> None:
    """Kill and reap every child of this process still running (the CLI's last step)."""
    for process in list(_LIVE):
        end(process)


def end(process: subprocess.Popen[bytes], *pipes: Connection, grace: float = 0.0) -> None:
    """Close the pipes, give the child ``grace`` seconds to exit, then kill and reap it."""
    for pipe in pipes:
        with contextlib.suppress(OSError):
            pipe.close()
    if process.poll() is None:
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
    if process.poll() is not None:
        _LIVE.discard(process)


def die_with_parent() -> bool:
    """In a child: be killed when the parent dies; False when it already has (exit then).

    Ctrl-C (the whole process group) ends the child at once, without a traceback.
    """
    from usdgrip import interrupts

    alive = interrupts.die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return alive


def call(function: str, *args: Any, what: str | None = None) -> Any:
    """``module:function(*args)`` in a fresh child; its value, or its exception raised here.

    This process waits in short polls, so a signal's handler runs at once (the child is
    killed whatever ends the wait). Arguments and value travel pickled.

    Raises:
        ChildProcessError: the child died without an answer (killed, out of memory, a
            crash in C), naming ``what`` and how it ended.
    """
    from usdgrip import interrupts

    process, tasks, results = spawn(_CALL_ENTRY, one_thread=False)
    try:
        try:
            tasks.send((function, args))
        except OSError:  # the child died before it read its task (EPIPE)
            raise ChildProcessError(_ended(what or function, process.wait())) from None
        while not results.poll(POLL_S):
            interrupts.check()
            if process.poll() is not None and not results.poll():
                raise ChildProcessError(_ended(what or function, process.returncode))
        ok, value = results.recv()
    except EOFError:
        raise ChildProcessError(_ended(what or function, process.wait())) from None
    finally:
        end(process, tasks, results)
    if not ok:
        raise value
    return value


def _ended(what: str, code: int) -> str:
    how = f"exit {code}"
    if code < 0:
        try:
            how = f"killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"killed by signal {-code}"
    return f"{what}: the child process ended without an answer ({how})"


def serve_call(argv: list[str]) -> int:
    """The :func:`call` child: one ``(function, args)`` in, ``(ok, value or exception)`` out."""
    if not die_with_parent():
        return 0
    tasks = Connection(int(argv[0]), writable=False)
    results = Connection(int(argv[1]), readable=False)
    try:
        function, args = tasks.recv()
    except (EOFError, OSError):
        return 0
    module, name = function.split(":")
    try:
        answer: tuple[bool, Any] = (True, getattr(importlib.import_module(module), name)(*args))
    except Exception as exc:  # raised again in the parent
        answer = (False, exc)
    try:
        results.send(answer)
    except OSError:
        return 0
    except Exception as exc:  # an exception that does not pickle: its text
        results.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    return 0
