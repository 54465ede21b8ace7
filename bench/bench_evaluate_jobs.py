"""Benchmark: one whole ``usdgrip evaluate`` command, ``--jobs 2`` against ``--jobs 1``.

Issue 25's case: the example mug's 50 planned candidates × 4 trials on a table, each
command a fresh process (start-up, reading, models, simulation, writing: what a user
waits for). Runs alternate (1, 2, 1, 2, ...) after one warm-up of each (the CoACD cache
and the page cache warm), so a drift of the shared machine's speed hits both; prints each
one's median wall time, the ratio of the medians and the median of the pairs' ratios, the
serial part the jobs=1 run reports (everything but the simulation) and the load average
before, at most and after. ``--baseline OTHER/lib`` runs another checkout's code (the last
release's) in the same rounds, so a slowdown of either jobs value shows.

The commands run with Python's bytecode cache, as a user's do (an installed wheel is
compiled at install; a checkout's first run writes ``__pycache__``): the cache lives in
the run's temporary folder (``PYTHONPYCACHEPREFIX``; nothing is written into either
checkout) and the warm-up fills it, also where the environment sets
``PYTHONDONTWRITEBYTECODE`` (this sandbox does: every command then compiles usdgrip's
modules from source, about 0.1-0.15 s of each one's serial part). ``--no-bytecode-cache``
measures that way instead.

Usage::

    .venv/bin/python bench/bench_evaluate_jobs.py            # 3 pairs
    .venv/bin/python bench/bench_evaluate_jobs.py --pairs 5 --trials 4
    git worktree add /tmp/prev e3b5944
    .venv/bin/python bench/bench_evaluate_jobs.py --baseline /tmp/prev/lib
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


def run(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall seconds of one command and what it printed."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    return time.perf_counter() - started, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="timed pairs (default 3)")
    parser.add_argument("--candidates", type=int, default=50, help="planned candidates")
    parser.add_argument("--trials", type=int, default=4, help="trials per candidate")
    parser.add_argument(
        "--baseline",
        metavar="LIB",
        help="another checkout's lib/ folder (e.g. the last release's): its commands run in "
        "the same rounds (PYTHONPATH=LIB), each jobs value compared with it",
    )
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="run the commands as the environment says (no cache when PYTHONDONTWRITEBYTECODE "
        "is set: every module compiled from source in every command)",
    )
    args = parser.parse_args()
    base = [sys.executable, "-m", "usdgrip"]
    with tempfile.TemporaryDirectory() as folder:
        common = dict(os.environ)
        if not args.no_bytecode_cache:
            common.pop("PYTHONDONTWRITEBYTECODE", None)
            common["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
        variants: dict[str, dict[str, str]] = {"this": common}
        if args.baseline:
            lib = str(Path(args.baseline).resolve())
            variants["baseline"] = {**common, "PYTHONPATH": lib}
        grasps = str(Path(folder) / "mug.yaml")
        subprocess.run(
            [*base, "plan", MUG, "--object", "/Mug", "--gripper", GRIPPER, "--table",
             "--max-candidates", str(args.candidates), "-o", grasps, "-q"],
            check=True,
            env=common,
        )  # fmt: skip
        evaluate = [*base, "evaluate", MUG, "--object", "/Mug", "--gripper", GRIPPER,
                    "--grasps", grasps, "--table", "--trials", str(args.trials),
                    "-o", str(Path(folder) / "out.yaml"), "--show", "0"]  # fmt: skip
        loads = [os.getloadavg()[0]]
        for env in variants.values():  # warm-up
            for jobs in (1, 2):
                run([*evaluate, "--jobs", str(jobs)], env)
        walls: dict[tuple[str, int], list[float]] = {(v, j): [] for v in variants for j in (1, 2)}
        serial = []
        for _ in range(args.pairs):
            for name, env in variants.items():
                for jobs in (1, 2):
                    seconds, out = run([*evaluate, "--jobs", str(jobs)], env)
                    walls[name, jobs].append(seconds)
                    if jobs == 1 and name == "this":
                        simulation = float(re.search(r"simulation ([\d.]+) s", out).group(1))
                        serial.append(seconds - simulation)
            loads.append(os.getloadavg()[0])
    median = {key: statistics.median(values) for key, values in walls.items()}
    pairs = [a / b for a, b in zip(walls["this", 1], walls["this", 2], strict=True)]
    print(
        f"usdgrip evaluate, {args.candidates} mug candidates x {args.trials} trials, whole "
        f"command, {args.pairs} rounds: --jobs 1 median {median['this', 1]:.2f} s, --jobs 2 "
        f"median {median['this', 2]:.2f} s"
    )
    print(
        f"--jobs 2 / --jobs 1: ratio of medians {median['this', 1] / median['this', 2]:.2f}x, "
        f"median of the pairs' ratios {statistics.median(pairs):.2f}x (target >= {TARGET}x); "
        f"serial part of a jobs=1 run (start-up, reading, models, writing, exit) median "
        f"{statistics.median(serial):.2f} s; "
        + ("no bytecode cache" if args.no_bytecode_cache else "bytecode cached")
    )
    if args.baseline:
        for jobs in (1, 2):
            ratio = [
                a / b for a, b in zip(walls["this", jobs], walls["baseline", jobs], strict=True)
            ]
            print(
                f"--jobs {jobs} against the baseline ({args.baseline}): median "
                f"{median['this', jobs]:.2f} s vs {median['baseline', jobs]:.2f} s, "
                f"{statistics.median(ratio):.2f}x the time (median of the rounds' ratios)"
            )
    print(
        f"load average {loads[0]:.1f} before, {max(loads):.1f} at most, {loads[-1]:.1f} after "
        "(2 cores shared: a load above ~1 leaves the second job no core of its own; a figure "
        "at a load above 1.5 is no evidence)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
