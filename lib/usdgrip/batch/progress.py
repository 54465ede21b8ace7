"""A one-line progress bar: files done/total, rate and ETA, redrawn at most 10 times a second."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def format_duration(seconds: float) -> str:
    """``75`` → ``"1m15s"``; ``3725`` → ``"1h02m"``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def format_progress(done: int, total: int, elapsed_s: float, width: int = 24) -> str:
    """The bar text, e.g. ``[#######.......] 120/400  35.1 files/s  ETA 8s``."""
    fraction = done / total if total else 1.0
    filled = int(fraction * width)
    rate = done / elapsed_s if elapsed_s > 0 else 0.0
    eta = format_duration((total - done) / rate) if rate > 0 else "?"
    bar = "#" * filled + "." * (width - filled)
    return f"[{bar}] {done}/{total}  {rate:.1f} files/s  ETA {eta}"


class Progress:
    """Progress on a terminal; silent when disabled or when the stream is not a tty.

    Args:
        total: number of files to run.
        stream: where to draw (stderr by default).
        enabled: False for ``--quiet``; even when True, nothing is drawn unless
            ``stream`` is a terminal.
    """

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = enabled and bool(isatty and isatty())
        self.done = 0
        self._start = time.perf_counter()
        self._drawn = 0.0

    def advance(self, count: int = 1) -> None:
        """Count finished files and redraw if due."""
        self.done += count
        now = time.perf_counter()
        if self.enabled and (now - self._drawn >= 0.1 or self.done >= self.total):
            self._drawn = now
            text = format_progress(self.done, self.total, now - self._start)
            self.stream.write(f"\r{text}\x1b[K")
            self.stream.flush()

    def close(self) -> None:
        """Erase the bar so the summary starts on a clean line."""
        if self.enabled and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
