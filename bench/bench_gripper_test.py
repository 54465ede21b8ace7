"""``usdgrip evaluate --gripper-test`` wall time per example gripper (SimReady's FET028).

Each gripper's full test (cube and sphere, ``--trials 3``, in this process) is timed against
a baseline measured in the same run on the same file: reading the site and its articulation
once (what every usdgrip command on that gripper pays). Prints seconds and the ratio.

    .venv/bin/python bench/bench_gripper_test.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from usdgrip.contracts import GripperRef
from usdgrip.grasping.gripper_check import check_gripper
from usdgrip.grasping.gripper_inputs import read_gripper, read_simulated_articulation
from usdgrip.grasping.stage_source import StageSource

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "grippers"
GRIPPERS = {
    "prismatic two-finger": ("prismatic_two_finger.usda", "/PrismaticGripper/palm/tcp"),
    "revolute jaw": ("revolute_jaw.usda", "/RevoluteJawGripper/palm/tcp"),
    "Franka hand": ("franka_hand/franka_hand.usda", "/FrankaHand/panda_hand/gripper_site"),
    "Robotiq 2F-85": ("robotiq_2f85/robotiq_2f85.usda", "/Robotiq_2F85/base/gripper_site"),
}


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    print(f"{'gripper':22s} {'read (s)':>9s} {'test (s)':>9s} {'ratio':>7s}  verdict")
    for name, (asset, site) in GRIPPERS.items():
        ref = GripperRef(asset_path=str(EXAMPLES / asset), prim_path=site)

        def read(ref=ref) -> None:
            stages = StageSource()
            read_gripper(ref, stages)
            read_simulated_articulation(ref, stages)

        baseline = best(read, args.repeat)
        report = {}

        def test(ref=ref, report=report) -> None:
            report.update(check_gripper(ref, trials=args.trials))

        wall = best(test, args.repeat)
        verdict = "PASS" if report["passed"] else "FAIL"
        print(f"{name:22s} {baseline:9.3f} {wall:9.3f} {wall / baseline:6.1f}x  {verdict}")


if __name__ == "__main__":
    main()
