"""Benchmark: vectorised slot sampling vs a straightforward per-candidate Python loop.

Slots: the example tote's two grouped edges (``left_edge``/``right_edge``,
group "carry"), read from ``examples/tote.usda``. In one run:

- **usdgrip**: ``sample_gripper_groups(slots, count=N)`` (default N = 1,000,000);
  best of ``--repeat`` runs, plus its peak traced memory (tracemalloc) against
  the size of the arrays it returns;
- **loop**: for each candidate draw (offset, tilt, flip) with ``rng.uniform`` /
  ``rng.integers`` and build each target's 4x4 with numpy (rotation of forward
  about the span axis, one matrix per target), as one would write it by hand;
  timed on ``--loop-count`` candidates and scaled to N.

Targets (issue 4): N = 1,000,000 in under 1 s, and >= 50x the loop. Usage::

    .venv/bin/python bench/bench_sampling.py
    .venv/bin/python bench/bench_sampling.py --count 200000 --loop-count 5000
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path

import numpy as np

from usdgrip import read_gripper_slots, sample_gripper_groups
from usdgrip.frames import compute_axis_angle_rotation
from usdgrip.usd.stage import open_stage

TARGET_SECONDS = 1.0
TARGET_RATIO = 50.0
TOTE = Path(__file__).resolve().parent.parent / "examples" / "tote.usda"


def loop_sample(slots, count: int, seed: int) -> np.ndarray:
    """The straightforward version: one Python iteration (and one set of draws) per candidate."""
    rng = np.random.default_rng(seed)
    half_up = min(s.up_range for s in slots) / 2
    half_angle = min(s.slot_input_angle for s in slots) / 2
    frames = [s.frame for s in slots]
    out = np.empty((count, len(slots), 4, 4))
    for i in range(count):
        offset = rng.uniform(-half_up, half_up)
        tilt = np.deg2rad(rng.uniform(-half_angle, half_angle))
        flip = bool(rng.integers(2))
        for j, frame in enumerate(frames):
            x, y, z = frame[:3, 0], frame[:3, 1], frame[:3, 2]
            if flip:
                x, y = -x, -y
            tilted = compute_axis_angle_rotation(x, tilt) @ np.column_stack([x, y, z])
            pose = np.eye(4)
            pose[:3, :3] = tilted
            pose[:3, 3] = frame[:3, 3] + offset * frame[:3, 1]
            out[i, j] = pose
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--loop-count", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    stage = open_stage(TOTE)
    slots = read_gripper_slots(stage.GetPrimAtPath("/Tote"))
    print(f"slots: {', '.join(f'{s.name} (group {s.group!r})' for s in slots)}")

    times, cpu_times = [], []
    for _ in range(args.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        samples = sample_gripper_groups(slots, ee_ids=(0, 1), count=args.count, seed=7)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu)
        del samples
    fast = min(times)

    tracemalloc.start()
    samples = sample_gripper_groups(slots, ee_ids=(0, 1), count=args.count, seed=7)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    output = sum(
        a.nbytes for a in (samples.poses, samples.offsets, samples.tilts_deg, samples.flipped)
    )

    start = time.perf_counter()
    loop_poses = loop_sample(slots, args.loop_count, seed=7)
    loop_time = time.perf_counter() - start
    loop_scaled = loop_time * args.count / args.loop_count
    rot = loop_poses[..., :3, :3]
    assert np.allclose(np.linalg.det(rot), 1.0)  # the baseline builds proper rotations too

    ratio = loop_scaled / fast
    print(f"usdgrip  {args.count:>9,} candidates  {fast:7.3f} s  (best of {args.repeat}; "
          f"all: {', '.join(f'{t:.3f}' for t in times)})  target < {TARGET_SECONDS:g} s  "
          f"{'OK' if fast < TARGET_SECONDS else 'MISSED'}")  # fmt: skip
    print(
        f"         process CPU time {min(cpu_times):.3f} s "
        "(single-threaded: ~ wall time on an idle core)"
    )
    print(f"loop     {args.loop_count:>9,} candidates  {loop_time:7.3f} s  "
          f"-> {loop_scaled:.1f} s scaled to {args.count:,}")  # fmt: skip
    print(f"ratio    {ratio:.0f}x faster than the loop  target >= {TARGET_RATIO:g}x  "
          f"{'OK' if ratio >= TARGET_RATIO else 'MISSED'}")  # fmt: skip
    print(f"memory   peak {peak / 2**20:.1f} MiB traced for {output / 2**20:.1f} MiB of output "
          f"arrays ({peak / output:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
