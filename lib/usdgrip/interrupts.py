"""SIGTERM and SIGHUP end a command like Ctrl-C: unwound, children stopped, exit 128 + N.

:func:`install` sets the handlers (the CLI does, first thing in ``main``). The handler
records the signal and raises :class:`Terminated`, a :class:`BaseException` (as
:class:`KeyboardInterrupt`) so that no ``except Exception`` takes it for an error. Python
runs a handler between bytecodes of the main thread, also inside a ``__del__`` or a
third party's bare ``except:``, where the raise can be lost; the signal stays recorded,
so :func:`check` (called between candidates, decomposed parts and worker starts) raises
it again and the CLI never reports success after it. Long C calls run where the main
thread still reacts (CoACD in a child process: :mod:`usdgrip.grasping.physics.children`).
"""

from __future__ import annotations

import contextlib
import signal
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
    raise Terminated(number)


def install() -> None:
    """Handle SIGTERM and SIGHUP in this process (main thread only; idempotent).

    A SIGHUP ignored by the caller (``nohup``) stays ignored; a handler an embedding
    program set is kept.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for number in HANDLED:
        with contextlib.suppress(ValueError, OSError):
            current = signal.getsignal(number)
            if current is _handler or (number == signal.SIGHUP and current == signal.SIG_IGN):
                continue
            if current in (signal.SIG_DFL, signal.SIG_IGN):
                signal.signal(number, _handler)


def ignore() -> None:
    """Ignore the handled signals from now on (while the command cleans up and exits)."""
    if threading.current_thread() is threading.main_thread():
        for number in HANDLED:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(number, signal.SIG_IGN)


def received() -> int | None:
    """The first handled signal that arrived in this process, else None."""
    return _received[0] if _received else None


def check() -> None:
    """Raise :class:`Terminated` when a handled signal arrived (its raise may have been lost)."""
    if _received:
        raise Terminated(_received[0])
