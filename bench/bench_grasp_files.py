"""Benchmark: reading Isaac-Grasp files of every writer against a plain YAML load of them.

In one run, for a usdgrip file (``usdgrip plan`` layout) and an Isaac Sim Grasp Editor
file (its hand-written layout, joint keys) of ``--count`` grasps each (default 5,000):

- **yaml**: ``yaml.load(text, Loader=yaml.CSafeLoader)``, the baseline (what every
  Isaac-Grasp reader does first);
- **loader**: usdgrip's grasp loader alone (keys as the file's text, Python's ``1e-05``
  a number; ``usdgrip.grasping.isaac_yaml.make_grasp_loader``);
- **read**: ``parse_isaac_grasp`` (loader + the contract check), what ``evaluate --grasps``,
  ``render --grasps`` and Load Grasps… run.

Printed as seconds (best of ``--repeat``) and ratios to the baseline. With
``--compare CHECKOUT`` the usdgrip file is also read by that checkout's
``parse_isaac_grasp`` (e.g. a worktree of main) in a child process, for the ratio
this checkout / that one. Usage::

    .venv/bin/python bench/bench_grasp_files.py
    .venv/bin/python bench/bench_grasp_files.py --count 5000 --compare /tmp/main
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from usdgrip.grasping.isaac_yaml import make_grasp_loader, parse_isaac_grasp
from usdgrip.yamltext import LOADER

ENTRY = (
    "  g_{i:06d}_antipodal_{i:04d}:\n    confidence: {c}\n    position: [0.01, -0.02, {z}]\n"
    "    orientation: {{w: 0.5, xyz: [0.5, -0.5, 0.5]}}\n"
    "    candidate_id: g_{i:06d}_antipodal_{i:04d}\n"
    "    gripper: {{asset_path: gripper.usda, prim_path: /Gripper/tcp}}\n"
    "    generation_method: antipodal\n    width: 0.05\n    exclusions: ['robot(object, 1)']\n"
    "    group: {g}\n"
)
EDITOR = (
    '   "grasp_{i}":\n      confidence: 1.0\n      position: [0.01, -0.02, {z}]\n'
    "      orientation: {{w: 0.5, xyz: [0.5, -0.5, 0.5]}}\n      cspace_position:\n"
    "         finger_joint: 0.4363322854042053\n      pregrasp_cspace_position:\n"
    "         finger_joint: 1e-05\n\n"
)


def usdgrip_text(count: int) -> str:
    body = "".join(
        ENTRY.format(i=i, c=1.0 - i / (count + 1), z=0.05 + 1e-7 * i, g=i % 50)
        for i in range(count)
    )
    return (
        "format: isaac_grasp\nformat_version: 1.0\ngrasps:\n" + body + "metadata:\n"
        "  upstream_revision: bench\n  seed: 1\n  runtime_seconds: 0.1\n  pose_frame: /Mug\n"
    )


def editor_text(count: int) -> str:
    head = (
        "format: isaac_grasp\nformat_version: 1.0\n\nobject_frame: /mug/Mug\n"
        "gripper_frame: /Robotiq_2F_85/base_link\n\ngrasps:\n"
    )
    return head + "".join(EDITOR.format(i=i, z=0.05 + 1e-7 * i) for i in range(count))


def best(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def compare(checkout: Path, path: Path, repeat: int) -> float:
    code = (
        "import sys, time\n"
        f"sys.path.insert(0, {str(checkout / 'lib')!r})\n"
        "from usdgrip.grasping.isaac_yaml import parse_isaac_grasp\n"
        f"text = open({str(path)!r}).read()\n"
        "times = []\n"
        f"for _ in range({repeat}):\n"
        "    t = time.perf_counter()\n"
        "    parse_isaac_grasp(text)\n"
        "    times.append(time.perf_counter() - t)\n"
        "print(min(times))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT")
    args = parser.parse_args()
    loader = make_grasp_loader(LOADER)
    for name, text in (("usdgrip", usdgrip_text(args.count)), ("editor", editor_text(args.count))):
        base = best(lambda t=text: yaml.load(t, Loader=yaml.CSafeLoader), args.repeat)
        ours = best(lambda t=text: yaml.load(t, Loader=loader), args.repeat)
        read = best(lambda t=text: parse_isaac_grasp(t), args.repeat)
        print(
            f"{name:8s} {args.count} grasps: yaml {base:.3f} s, loader {ours:.3f} s "
            f"({ours / base:.2f}x), read {read:.3f} s ({read / base:.2f}x)"
        )
        if args.compare and name == "usdgrip":
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "g.yaml"
                path.write_text(text)
                theirs = compare(args.compare.resolve(), path, args.repeat)
            print(
                f"         vs {args.compare}: read {theirs:.3f} s; this / that {read / theirs:.2f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
