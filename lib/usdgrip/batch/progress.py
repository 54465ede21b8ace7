"""A batch's progress message: files done/total, rate and ETA."""

from __future__ import annotations


def format_duration(seconds: float) -> str:
    """``75`` → ``"1m15s"``; ``3725`` → ``"1h02m"``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def format_progress(done: int, total: int, elapsed_s: float) -> str:
    """The progress message of a batch, e.g. ``files 120/400  35.1 files/s  ETA 8s``.

    Shown by :class:`usdgrip.progress_reporter.ProgressReporter` (``--progress``): a bar
    on a terminal, a line every few seconds otherwise.
    """
    rate = done / elapsed_s if elapsed_s > 0 else 0.0
    eta = format_duration((total - done) / rate) if rate > 0 else "?"
    return f"files {done}/{total}  {rate:.1f} files/s  ETA {eta}"
