"""Progress of long work on stderr: a bar on a terminal, lines at a low rate otherwise.

One reporter per command (``evaluate``, ``plan --evaluate``, ``batch``):

- :class:`ProgressReporter` is called as ``reporter(message, fraction)`` (the progress
  callback the library takes) and :meth:`~ProgressReporter.note` prints a line that always
  shows (a decomposition's cache state and time);
- modes (:data:`MODES`, ``--progress``): ``bar`` one self-overwriting line; ``lines`` a
  line at once, then one when a stage starts (the message's first word: ``reading``,
  ``physics:``) and at most one every :data:`LINE_INTERVAL_S` within it (and the last); ``none``
  silent; ``auto`` is ``bar`` when the stream is a terminal, else ``lines`` whose first
  line waits :data:`LINE_INTERVAL_S` (a short command in a script says nothing more than
  its notes and summary), ``none`` with ``-q``;
- ``with reporter.active():`` makes it the one :func:`note` reaches, so code deep in the
  library (the decomposition) reports without a callback through every layer.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from typing import TextIO

#: ``--progress`` choices.
MODES = ("auto", "bar", "lines", "none")
#: ``lines`` mode: at most one progress line this often, s (notes always show).
LINE_INTERVAL_S = 5.0
#: Width of the bar's line, characters.
BAR_WIDTH = 110

_ACTIVE: contextvars.ContextVar[ProgressReporter | None] = contextvars.ContextVar(
    "usdgrip_progress", default=None
)


def resolve_mode(mode: str, stream: TextIO | None, quiet: bool = False) -> str:
    """``bar``, ``lines`` or ``none`` for ``mode`` (:data:`MODES`) on ``stream``.

    ``quiet`` (``-q``) silences ``auto`` only: an explicit mode is what was asked.
    """
    if mode not in MODES:
        raise ValueError(f"--progress {mode}: expected one of {', '.join(MODES)}")
    if stream is None:  # stderr closed (2>&-): nowhere to show it
        return "none"
    if mode != "auto":
        return mode
    if quiet:
        return "none"
    try:
        return "bar" if stream.isatty() else "lines"
    except (AttributeError, ValueError, OSError):
        return "lines"


class ProgressReporter:
    """``reporter(message, fraction)`` and ``reporter.note(line)`` on ``stream`` in ``mode``."""

    def __init__(
        self,
        stream: TextIO | None,
        mode: str = "auto",
        *,
        quiet: bool = False,
        prefix: str = "usdgrip",
        interval: float = LINE_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.mode = resolve_mode(mode, stream, quiet)
        # auto off a terminal: the first line after one interval; --progress lines: at once
        self.prefix = prefix
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self._width = 0
        self._last_line: float | None = None if mode == "lines" else self.started
        self._shown = False
        self._stage = ""
        self._bar: tuple[str, float] | None = None

    @property
    def enabled(self) -> bool:
        """Whether anything is shown."""
        return self.mode != "none"

    def __call__(self, message: str, fraction: float) -> None:
        fraction = max(0.0, min(1.0, float(fraction)))
        if self.mode == "bar":
            self._bar = (message, fraction)
            self._draw()
        elif self.mode == "lines":
            now = self.clock()
            stage = message.split(maxsplit=1)[0] if message.strip() else ""
            due = self._last_line is None or now - self._last_line >= self.interval
            # once lines show: a new stage (reading, physics) at once, the end of what was shown
            started = self._shown and stage != self._stage
            if due or (self._shown and fraction >= 1.0) or started:
                self._line(f"{message} ({100 * fraction:.0f}%, {now - self.started:.1f} s)")
                self._last_line, self._shown, self._stage = now, True, stage

    def note(self, text: str) -> None:
        """A line that always shows (but in ``none``), above the bar."""
        if not self.enabled:
            return
        self._clear()
        self._line(text)
        if self._bar is not None:
            self._draw()

    def close(self) -> None:
        """Clear the bar (the terminal line is left empty)."""
        if self.mode == "bar":
            self._clear()
        self._bar = None

    @contextlib.contextmanager
    def active(self) -> Iterator[ProgressReporter]:
        """This reporter is the one :func:`note` reaches (and closed at the end)."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)
            self.close()

    def _line(self, text: str) -> None:
        self.stream.write(f"{self.prefix}: {text}\n")
        self.stream.flush()

    def _draw(self) -> None:
        assert self._bar is not None
        message, fraction = self._bar
        filled = round(20 * fraction)
        line = f"[{'#' * filled}{'.' * (20 - filled)}] {100 * fraction:3.0f}% {message}"
        line = line[:BAR_WIDTH]
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def _clear(self) -> None:
        if self.mode == "bar" and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def note(text: str) -> None:
    """Say ``text`` on the active reporter (:meth:`ProgressReporter.active`); else nothing."""
    reporter = _ACTIVE.get()
    if reporter is not None:
        reporter.note(text)


def add_progress_argument(parser: argparse.ArgumentParser) -> None:
    """``--progress auto|bar|lines|none``."""
    parser.add_argument(
        "--progress",
        choices=MODES,
        default="auto",
        help="progress on stderr: bar (a terminal), lines (one every "
        f"{LINE_INTERVAL_S:g} s), none; auto: bar on a terminal, else lines, none with -q "
        "(default auto)",
    )
