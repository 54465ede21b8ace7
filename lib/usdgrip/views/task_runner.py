"""Run one library call off the UI thread, with progress and cancel.

The call receives a :class:`TaskContext`: ``report(done, total, text)`` drives
the progress bar and ``cancelled`` lets a call that loops stop early. A call
that cannot stop (one library function) still runs to its end after Cancel;
its result is then dropped and :attr:`TaskRunner.cancelled` is emitted instead
of :attr:`TaskRunner.finished`, so the UI never shows a stale result.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any

from usdgrip.views.qt import QtCore, Signal


class TaskCancelled(Exception):
    """Raised inside a task (e.g. from a progress callback) to stop it after Cancel."""


class TaskContext:
    """What a running task sees: progress reporting and the cancel flag."""

    def __init__(self, runner: TaskRunner) -> None:
        self._runner = runner
        self._event = threading.Event()

    @property
    def cancelled(self) -> bool:
        """True once the user pressed Cancel."""
        return self._event.is_set()

    def report(self, done: int, total: int, text: str = "") -> None:
        """Report progress (``total = 0`` shows a busy indicator)."""
        self._runner.progress.emit(int(done), int(total), str(text))


class _Thread(QtCore.QThread):
    def __init__(self, fn: Callable[[TaskContext], Any], context: TaskContext) -> None:
        super().__init__()
        self._fn = fn
        self._context = context
        self.result: Any = None
        self.error: str | None = None

    def run(self) -> None:
        try:
            self.result = self._fn(self._context)
        except Exception as exc:  # shown to the user, never lost in the thread
            self.error = str(exc) or type(exc).__name__
            self.details = traceback.format_exc()


class TaskRunner(QtCore.QObject):
    """Starts one task at a time in a QThread; signals arrive on the UI thread."""

    progress = Signal(int, int, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._thread: _Thread | None = None
        self._context: TaskContext | None = None

    @property
    def running(self) -> bool:
        """True while a task runs."""
        return self._thread is not None

    def start(self, fn: Callable[[TaskContext], Any]) -> None:
        """Run ``fn(context)`` in a worker thread.

        Raises:
            RuntimeError: a task is already running.
        """
        if self._thread is not None:
            raise RuntimeError("a task is already running; cancel it or wait for it to finish")
        self._context = TaskContext(self)
        self._thread = _Thread(fn, self._context)
        self._thread.finished.connect(self._on_done)
        self._thread.start()

    def cancel(self) -> None:
        """Ask the task to stop; its result, if any, will be dropped."""
        if self._context is not None:
            self._context._event.set()

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the worker thread ends (for shutdown); True if it ended."""
        return self._thread.wait(msecs) if self._thread is not None else True

    def _on_done(self) -> None:
        thread, context = self._thread, self._context
        self._thread = self._context = None
        if thread is None or context is None:
            return
        thread.wait()
        thread.deleteLater()
        if context.cancelled:
            self.cancelled.emit()
        elif thread.error is not None:
            self.failed.emit(thread.error)
        else:
            self.finished.emit(thread.result)
