"""SIGTERM and SIGHUP end a command like Ctrl-C: unwound, children stopped, exit 128 + N.

:func:`install` sets the handlers (the CLI does, first thing in ``main``). The handler
records the signal and raises :class:`Terminated`, a :class:`BaseException` (as
:class:`KeyboardInterrupt`) so that no ``except Exception`` takes it for an error. Python
runs a handler between bytecodes of the main thread, also inside a ``__del__`` or a
third party's bare ``except:``, where the raise can be lost (Python's report of such a
lost raise is silenced: the command says it was terminated); the signal stays recorded,
so :func:`check` (called between candidates, decomposed parts and worker starts) raises
it again and the CLI never reports success after it. Long C calls run where the main
thread still reacts (CoACD in a child process: :mod:`usdgrip.grasping.physics.children`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Any

#: The signals :func:`install` handles.
HANDLED = (signal.SIGTERM, signal.SIGHUP)

_received: list[int] = []


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (every ``finally`` stops its child processes)."""

    def __init__(self, number: int) -> None:
        super().__init__(signal.Signals(number).name)
        self.signal = number

    @property
    def exit_code(self) -> int:
        """``128 + N``, as a shell reports a command a signal ended."""
        return 128 + self.signal


def _handler(number: int, frame: Any) -> None:
    _received.append(number)
    raise interruption(number)


def interruption(number: int) -> BaseException:
    """What a handled signal raises: KeyboardInterrupt for SIGINT, else :class:`Terminated`."""
    return KeyboardInterrupt() if number == signal.SIGINT else Terminated(number)


def _quiet_lost_raise(unraisable: Any) -> None:
    """A signal's raise lost in a ``__del__`` or a callback: said by the command, not here."""
    if _received and isinstance(unraisable.exc_value, Terminated | KeyboardInterrupt):
        return
    _previous_hook(unraisable)


_previous_hook = sys.unraisablehook


def install() -> None:
    """Handle SIGTERM and SIGHUP in this process, and record Ctrl-C (main thread; idempotent).

    SIGINT still raises :class:`KeyboardInterrupt`, and is recorded like the others. A
    SIGHUP ignored by the caller (``nohup``) and a SIGINT ignored (a background job) stay
    ignored; a handler an embedding program set is kept.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if sys.unraisablehook is not _quiet_lost_raise:
        global _previous_hook
        _previous_hook = sys.unraisablehook
        sys.unraisablehook = _quiet_lost_raise
    for number in (*HANDLED, signal.SIGINT):
        with contextlib.suppress(ValueError, OSError):
            current = signal.getsignal(number)
            if current is _handler or (number == signal.SIGHUP and current == signal.SIG_IGN):
                continue
            if number == signal.SIGINT and current is not signal.default_int_handler:
                continue  # ignored (a background job) or the embedder's own
            if current in (signal.SIG_DFL, signal.SIG_IGN, signal.default_int_handler):
                signal.signal(number, _handler)


def ignore() -> None:
    """Ignore the handled signals from now on (while the command cleans up and exits)."""
    if threading.current_thread() is threading.main_thread():
        for number in (*HANDLED, signal.SIGINT):
            with contextlib.suppress(ValueError, OSError):
                signal.signal(number, signal.SIG_IGN)


def received() -> int | None:
    """The first handled signal (SIGINT included) that arrived in this process, else None."""
    return _received[0] if _received else None


def check() -> None:
    """Raise again what the first handled signal raised (that raise may have been lost)."""
    if _received:
        raise interruption(_received[0])


def die_with_parent() -> bool:
    """In a child process: be SIGKILLed when the parent dies (Linux's ``PR_SET_PDEATHSIG``).

    False when the parent has already gone (the child should exit): a batch worker, a
    simulation worker or a CoACD child never outlives the command that started it.
    """
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    return os.getppid() == parent
