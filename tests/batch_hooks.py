"""Test-only batch job with fault hooks (never part of the shipped jobs).

Passed to the batch layer by path (``--job tests/batch_hooks.py:validate_with_hooks``
or ``run_batch(..., job=...)``). It behaves like the shipped validation job,
except for files named by a hook, taken from the job params or, for CLI runs,
from the environment:

- ``crash_on`` / ``USDGRIP_TEST_CRASH_ON``: segfault the worker (a real SIGSEGV
  from native code);
- ``slow_on`` / ``USDGRIP_TEST_SLOW_ON``: sleep far past any test timeout;
- ``delay`` / ``USDGRIP_TEST_DELAY``: sleep this many seconds on every file.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

from usdgrip.batch.jobs import validate_file

HOURS = 3600.0


def validate_with_hooks(
    path: str,
    crash_on: str | None = None,
    slow_on: str | None = None,
    delay: float | None = None,
    **params: Any,
) -> dict[str, Any]:
    name = os.path.basename(path)
    crash_on = crash_on or os.environ.get("USDGRIP_TEST_CRASH_ON")
    slow_on = slow_on or os.environ.get("USDGRIP_TEST_SLOW_ON")
    delay = delay if delay is not None else float(os.environ.get("USDGRIP_TEST_DELAY", "0"))
    if name == crash_on:
        ctypes.string_at(0)  # reads address 0: SIGSEGV in native code
    if name == slow_on:
        time.sleep(HOURS)
    if delay:
        time.sleep(delay)
    return validate_file(path, **params)
