"""Benchmark: ``usdgrip suggest slots`` on the example mug with the default budget.

Times the library call (``suggest_slots``, defaults: 40 antipodal candidates, 2 trials,
6 proof samples per slot) and splits it into plan / evaluate / prove, against a baseline
measured in the same run: ``usdgrip plan --evaluate`` of the same candidate count and
trials (what suggest does before clustering and proving). Rounds are interleaved, best of
``--repeat``; the first (cold) round is reported on its own.

Usage::

    .venv/bin/python bench/bench_suggest.py              # best of 2
    .venv/bin/python bench/bench_suggest.py --repeat 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUG = str(ROOT / "examples" / "mug.usda")
GRIPPER = f"{ROOT / 'examples' / 'gripper.usda'}:/Gripper/tcp"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="best of N (default 2)")
    parser.add_argument("--table", action="store_true", help="the mug rests on a table")
    args = parser.parse_args()

    from usdgrip.cli import main as cli
    from usdgrip.contracts import GripperRef
    from usdgrip.suggest import DEFAULT_CANDIDATES, DEFAULT_TRIALS, SuggestOptions, suggest_slots

    file, site = GRIPPER.rsplit(":", 1)
    gripper = GripperRef(asset_path=file, prim_path=site)
    options = SuggestOptions(table=args.table)
    folder = tempfile.mkdtemp(prefix="usdgrip-bench-suggest-")

    def suggest() -> object:
        return suggest_slots(MUG, "/Mug", gripper, options)

    def baseline() -> int:
        argv = ["plan", MUG, "--object", "/Mug", "--gripper", GRIPPER]
        argv += ["--max-candidates", str(DEFAULT_CANDIDATES), "--seed", "0", "--quiet"]
        argv += ["-o", f"{folder}/mug_grasps.yaml", "--evaluate", "--trials", str(DEFAULT_TRIALS)]
        argv += ["--table"] if args.table else []
        with contextlib.redirect_stdout(io.StringIO()):
            return cli(argv)

    rows: list[tuple[float, float, dict[str, float], int]] = []
    for _ in range(max(args.repeat, 1)):
        start = time.perf_counter()
        found = suggest()
        wall = time.perf_counter() - start
        start = time.perf_counter()
        code = baseline()
        base = time.perf_counter() - start
        if code != 0:
            print(f"baseline `usdgrip plan --evaluate` exited {code}")
            return 1
        rows.append((wall, base, dict(found.seconds), len(found.slots)))
    cold = rows[0]
    best = min(rows, key=lambda row: row[0])
    base_best = min(row[1] for row in rows)
    for label, (wall, _base, split, slots) in (("cold", cold), ("best", best)):
        parts = ", ".join(f"{key} {value:.2f} s" for key, value in split.items())
        print(f"suggest slots (mug, defaults) {label}: {wall:.2f} s ({parts}); {slots} slot(s)")
    print(
        f"baseline plan --evaluate ({DEFAULT_CANDIDATES} x {DEFAULT_TRIALS} trials): "
        f"{base_best:.2f} s"
    )
    print(f"ratio suggest / baseline: {best[0] / base_best:.2f}x (target: suggest < 60 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
