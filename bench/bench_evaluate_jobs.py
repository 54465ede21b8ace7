"""Benchmark: one whole ``usdgrip evaluate`` command, ``--jobs 2`` against ``--jobs 1``.

Issue 25's case: the example mug's 50 planned candidates × 4 trials on a table, each
command a fresh process (start-up, reading, models, simulation, writing: what a user
waits for). Runs alternate (1, 2, 1, 2, ...) after one warm-up of each (the CoACD cache
and the page cache warm), so a drift of the shared machine's speed hits both; prints each
one's median wall time, the ratio of the medians, the serial part the jobs=1 run reports
(everything but the simulation) and the load average before and after.

Usage::

    .venv/bin/python bench/bench_evaluate_jobs.py            # 3 pairs
    .venv/bin/python bench/bench_evaluate_jobs.py --pairs 5 --trials 4
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUG = str(ROOT / "examples" / "mug.usda")
GRIPPER = f"{ROOT / 'examples' / 'gripper.usda'}:/Gripper/tcp"
TARGET = 1.7


def run(command: list[str]) -> tuple[float, str]:
    """Wall seconds of one command and what it printed."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="timed pairs (default 3)")
    parser.add_argument("--candidates", type=int, default=50, help="planned candidates")
    parser.add_argument("--trials", type=int, default=4, help="trials per candidate")
    args = parser.parse_args()
    base = [sys.executable, "-m", "usdgrip"]
    with tempfile.TemporaryDirectory() as folder:
        grasps = str(Path(folder) / "mug.yaml")
        subprocess.run(
            [*base, "plan", MUG, "--object", "/Mug", "--gripper", GRIPPER, "--table",
             "--max-candidates", str(args.candidates), "-o", grasps, "-q"],
            check=True,
        )  # fmt: skip
        evaluate = [*base, "evaluate", MUG, "--object", "/Mug", "--gripper", GRIPPER,
                    "--grasps", grasps, "--table", "--trials", str(args.trials),
                    "-o", str(Path(folder) / "out.yaml"), "--show", "0"]  # fmt: skip
        load = os.getloadavg()[0]
        for jobs in (1, 2):  # warm-up
            run([*evaluate, "--jobs", str(jobs)])
        walls: dict[int, list[float]] = {1: [], 2: []}
        serial = []
        for _ in range(args.pairs):
            for jobs in (1, 2):
                seconds, out = run([*evaluate, "--jobs", str(jobs)])
                walls[jobs].append(seconds)
                if jobs == 1:
                    simulation = float(re.search(r"simulation ([\d.]+) s", out).group(1))
                    serial.append(seconds - simulation)
    one, two = statistics.median(walls[1]), statistics.median(walls[2])
    print(
        f"usdgrip evaluate, {args.candidates} mug candidates x {args.trials} trials, whole "
        f"command, {args.pairs} pairs: --jobs 1 median {one:.2f} s, --jobs 2 median {two:.2f} s"
    )
    print(
        f"ratio of medians {one / two:.2f}x (target >= {TARGET}x); serial part of a jobs=1 "
        f"run (start-up, reading, models, writing) median {statistics.median(serial):.2f} s; "
        f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after (2 cores shared: a "
        "load above ~1 leaves the second job no core of its own)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
