"""Test-only batch job with fault hooks (never part of the shipped jobs).

Passed to the batch layer by path (``--job tests/batch_hooks.py:validate_with_hooks``
or ``run_batch(..., job=...)``). It behaves like the shipped validation job,
except for files named by a hook, taken from the job params or, for CLI runs,
from the environment:

- ``crash_on`` / ``USDGRIP_TEST_CRASH_ON``: segfault the worker (a real SIGSEGV
  from native code);
- ``slow_on`` / ``USDGRIP_TEST_SLOW_ON``: sleep far past any test timeout;
- ``delay`` / ``USDGRIP_TEST_DELAY``: sleep this many seconds on every file.

It also holds the corpus the batch tests share (``write_library``).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from usdgrip.batch.jobs import validate_file

HOURS = 3600.0
REPO = Path(__file__).resolve().parent.parent
HOOKS = f"{Path(__file__).resolve()}:validate_with_hooks"
USDGRIP = [sys.executable, "-m", "usdgrip"]


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


def kill_parent(path: str, kill_on: str) -> dict[str, Any]:
    """Kill the process that started this worker (a Dask worker) on the named file."""
    if os.path.basename(path) == kill_on:
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(HOURS)
    return validate_file(path)


def evaluate_then_change(path: str, **params: Any) -> dict[str, Any]:
    """``batch evaluate``'s job, then the object file changes (as if edited during the run)."""
    from usdgrip.batch.grasp_jobs import evaluate_file

    result = evaluate_file(path, **params)
    with open(path, "a", encoding="utf-8") as stream:
        stream.write("# edited while the batch ran\n")
    return result


def not_json(path: str) -> dict[str, Any]:
    """A job whose row cannot be written as JSON."""
    return {"status": "ok", "counts": {}, "output": {"a set": {1, 2}}}


# --- the corpus the batch tests share ------------------------------------------

HEADER = '#usda 1.0\n(\n    defaultPrim = "Gripper"\n    metersPerUnit = 1\n    upAxis = "Z"\n)\n'
SITE = """
def Xform "Gripper"
{{
    def Xform "tcp" (prepend apiSchemas = ["GripperSiteAPI"])
    {{
        float gripper:maxOpening = {opening}
        def BasisCurves "gripper_forward_axis"
        {{
            uniform token type = "linear"
            int[] curveVertexCounts = [2]
            point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
        }}
        def BasisCurves "gripper_grip_line"
        {{
            uniform token type = "linear"
            int[] curveVertexCounts = [{count}]
            point3f[] points = [{points}]
        }}
    }}
}}
"""
GOOD = HEADER + SITE.format(opening=0.085, count=2, points="(0, -0.01, 0), (0, 0.01, 0)")
ONE_POINT_GRIP_LINE = HEADER + SITE.format(opening=0.085, count=1, points="(0, 0, 0)")


def write_library(root: Path, good: int = 6) -> dict[str, str]:
    """A small library: clean grippers, one GR.003 failure, one unreadable file,
    the crash and slow files of the hooks, a nested file and a non-USD file.

    Returns:
        Expected status per row key.
    """
    expected = {}
    for i in range(good):
        (root / f"good_{i:02d}.usda").write_text(GOOD)
        expected[f"good_{i:02d}.usda"] = "ok"
    (root / "sub").mkdir()
    (root / "sub" / "nested.usda").write_text(GOOD)
    expected["sub/nested.usda"] = "ok"
    (root / "grip_line.usda").write_text(ONE_POINT_GRIP_LINE)
    expected["grip_line.usda"] = "findings"
    (root / "unreadable.usda").write_text("this is not USD {\n")
    expected["unreadable.usda"] = "error"
    (root / "crash.usda").write_text(GOOD)
    expected["crash.usda"] = "crashed"
    (root / "slow.usda").write_text(GOOD)
    expected["slow.usda"] = "timeout"
    (root / "notes.txt").write_text("not matched by the glob\n")
    return expected


HOOK_PARAMS = {"crash_on": "crash.usda", "slow_on": "slow.usda"}
TIMEOUT = 2.0


def normalize(rows: list[dict]) -> list[dict]:
    """Rows sorted by path without the wall-clock field."""
    return sorted(
        ({k: v for k, v in row.items() if k != "duration_s"} for row in rows),
        key=lambda row: row["path"],
    )


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]
