"""Benchmark: ``usdgrip suggest slots`` on the example mug with the default budget.

Times the library call (``suggest_slots``, defaults: 40 antipodal candidates, 2 trials,
6 proof samples per slot) and splits it into plan / evaluate / prove, against a baseline
measured in the same run: ``usdgrip plan --evaluate`` of the same candidate count and
trials (what suggest does before clustering and proving). Rounds are interleaved, best of
``--repeat``; the first (cold) round is reported on its own.

``--two-hands`` times ``suggest slots --hands 2`` on the example tote at 50 N per finger
instead (60 candidates, 2 trials, on a table; the group's 6 joint samples simulated with
both hands), against ``plan --evaluate`` of the same 60 × 2 at 50 N.

Usage::

    .venv/bin/python bench/bench_suggest.py              # best of 2
    .venv/bin/python bench/bench_suggest.py --repeat 3
    .venv/bin/python bench/bench_suggest.py --two-hands
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
TOTE = str(ROOT / "examples" / "tote.usda")
GRIPPER = f"{ROOT / 'examples' / 'gripper.usda'}:/Gripper/tcp"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="best of N (default 2)")
    parser.add_argument("--table", action="store_true", help="the mug rests on a table")
    parser.add_argument(
        "--two-hands", action="store_true", help="the tote at 50 N with --hands 2 instead"
    )
    args = parser.parse_args()

    from usdgrip.cli import main as cli
    from usdgrip.contracts import GripperRef
    from usdgrip.suggest import DEFAULT_CANDIDATES, DEFAULT_TRIALS, SuggestOptions, suggest_slots

    file, site = GRIPPER.rsplit(":", 1)
    gripper = GripperRef(asset_path=file, prim_path=site)
    candidates, name = DEFAULT_CANDIDATES, "mug, defaults"
    target, prim, extra = MUG, "/Mug", ["--table"] if args.table else []
    options = SuggestOptions(table=args.table)
    if args.two_hands:
        candidates, name = 60, "tote at 50 N, --hands 2"
        target, prim, extra = TOTE, "/Tote", ["--table", "--force", "50"]
        options = SuggestOptions(
            table=True, force=50.0, candidates=candidates, hands=2, group="lift"
        )
    folder = tempfile.mkdtemp(prefix="usdgrip-bench-suggest-")

    def suggest() -> object:
        return suggest_slots(target, prim, gripper, options)

    def baseline() -> int:
        argv = ["plan", target, "--object", prim, "--gripper", GRIPPER, *extra]
        argv += ["--max-candidates", str(candidates), "--seed", "0", "--quiet"]
        argv += ["-o", f"{folder}/grasps.yaml", "--evaluate", "--trials", str(DEFAULT_TRIALS)]
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
        if code != 0 and not args.two_hands:  # one hand lifts no tote at 50 N: exit 1
            print(f"baseline `usdgrip plan --evaluate` exited {code}")
            return 1
        rows.append((wall, base, dict(found.seconds), len(found.slots)))
    cold = rows[0]
    best = min(rows, key=lambda row: row[0])
    base_best = min(row[1] for row in rows)
    for label, (wall, _base, split, slots) in (("cold", cold), ("best", best)):
        parts = ", ".join(f"{key} {value:.2f} s" for key, value in split.items())
        print(f"suggest slots ({name}) {label}: {wall:.2f} s ({parts}); {slots} slot(s)")
    print(f"baseline plan --evaluate ({candidates} x {DEFAULT_TRIALS} trials): {base_best:.2f} s")
    print(f"ratio suggest / baseline: {best[0] / base_best:.2f}x (target: suggest < 60 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
