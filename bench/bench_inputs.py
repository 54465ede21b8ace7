"""Benchmark: reading `--grasps` YAML and `--targets` JSON at their size limits, time and memory.

Writes an extended Isaac-Grasp file of :data:`usdgrip.grasping.isaac_yaml.MAX_GRASPS`
grasps and a ``usdgrip sample``-style JSON file of
:data:`usdgrip.grasping.target_evaluation.MAX_TARGET_SAMPLES` targets (two hands per candidate),
then reads each in a child process limited to 3 GB of address space (``ulimit -v``, the
issue's measurement): the baseline is PyYAML's libyaml safe loader / ``json.loads`` alone,
against usdgrip's readers (size bound, duplicate keys, depth limit, the contract check).
Prints seconds, peak memory and the ratio to the baseline; fails when a file at the limit
does not read within 3 GB.

Issue 21: inputs at the documented limits must read within 3 GB; the duplicate-key and
depth checks should cost little against the parse itself. Usage::

    .venv/bin/python bench/bench_inputs.py
    .venv/bin/python bench/bench_inputs.py --grasps 20000 --candidates 50000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from usdgrip.grasping.isaac_yaml import MAX_GRASPS
from usdgrip.grasping.target_evaluation import MAX_TARGET_SAMPLES

MEMORY_LIMIT = 3 << 30

READERS = {
    "yaml-baseline": "import yaml; yaml.load(open(PATH).read(), Loader=yaml.CSafeLoader)",
    "yaml-usdgrip": (
        "from usdgrip.grasping.isaac_yaml import read_isaac_grasp; read_isaac_grasp(PATH)"
    ),
    "json-baseline": "import json; json.loads(open(PATH).read())",
    "json-usdgrip": (
        "from usdgrip.grasping.target_evaluation import read_target_samples, parse_target_samples\n"
        "parse_target_samples(read_target_samples(PATH))"
    ),
}
MEASURE = """
import resource, sys, time
PATH = sys.argv[1]
start = time.perf_counter()
{code}
seconds = time.perf_counter() - start
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def write_grasps(path: Path, count: int) -> None:
    entry = (
        "  g_{i}:\n    confidence: 0.5\n    position: [0.01, 0.0, 0.05]\n"
        "    orientation: {{w: 1.0, xyz: [0.0, 0.0, 0.0]}}\n    candidate_id: g_{i}\n"
        "    gripper: {{asset_path: gripper.usda, prim_path: /Gripper/tcp}}\n"
        "    generation_method: antipodal\n    width: 0.05\n"
        "    physics: {{success_rate: 1.0, trials: 1, outcome: held, outcomes: {{held: 1}}}}\n"
    )
    path.write_text(
        "format: isaac_grasp\nformat_version: 1.0\ngrasps:\n"
        + "".join(entry.format(i=i) for i in range(count))
        + "metadata:\n  upstream_revision: bench\n  seed: 1\n  runtime_seconds: 0.1\n"
        "  pose_frame: /Mug\n"
    )


def write_targets(path: Path, candidates: int) -> None:
    def target(ee: int) -> dict:
        return {
            "ee_id": ee,
            "slot": f"edge_{ee}",
            "position": [0.405, 0.025, 0.12],
            "orientation_wxyz": [0.0509, -0.9987, 0.0, 0.0],
            "matrix": [
                [1.0, 0.0, 0.0, 0.405],
                [0.0, -0.9948203536938744, 0.1016487278641228, 0.025019093320933383],
                [0.0, -0.1016487278641228, -0.9948203536938744, 0.12],
                [0.0, 0.0, 0.0, 1.0],
            ],
            "offset": 0.025019093320933383,
            "tilt_deg": 5.834119473846336,
            "flipped": True,
        }

    one = json.dumps({"targets": [target(0), target(1)]})
    path.write_text('{"seed": 7, "candidates": [' + ", ".join([one] * candidates) + "]}")


def measure(name: str, path: Path) -> tuple[float, float]:
    """(seconds, peak MB) of reader ``name`` on ``path`` in a child limited to 3 GB."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    done = subprocess.run(
        [sys.executable, "-c", MEASURE.format(code=READERS[name]), str(path)],
        capture_output=True,
        text=True,
        preexec_fn=limit,
    )
    if done.returncode:
        raise SystemExit(f"{name} failed within 3 GB: {done.stderr.strip()[-400:]}")
    seconds, peak_kb = done.stdout.split()
    return float(seconds), int(peak_kb) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grasps", type=int, default=MAX_GRASPS)
    parser.add_argument("--candidates", type=int, default=MAX_TARGET_SAMPLES // 2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="usdgrip-bench-") as folder:
        grasps, targets = Path(folder) / "g.yaml", Path(folder) / "t.json"
        write_grasps(grasps, args.grasps)
        write_targets(targets, args.candidates)
        for kind, path, count in (
            ("yaml", grasps, f"{args.grasps:,} grasps"),
            ("json", targets, f"{2 * args.candidates:,} targets"),
        ):
            base_s, base_mb = measure(f"{kind}-baseline", path)
            ours_s, ours_mb = measure(f"{kind}-usdgrip", path)
            size = path.stat().st_size / 1e6
            print(
                f"{kind}: {count} ({size:.0f} MB): baseline {base_s:.2f} s {base_mb:.0f} MB, "
                f"usdgrip {ours_s:.2f} s {ours_mb:.0f} MB; time ratio {ours_s / base_s:.2f}, "
                f"memory ratio {ours_mb / base_mb:.2f} (both within 3 GB)"
            )


if __name__ == "__main__":
    main()
