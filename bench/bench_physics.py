"""Benchmark: grasp-and-lift trials per second in MuJoCo, and the CoACD decomposition cache.

One run, two measurements:

- **trials/s**: 50 grasp candidates on a mug-size object (a cup of outer radius
  4 cm, 10 cm tall, 5 mm wall, 64 sections, plus a ring handle; 0.3 kg,
  friction 0.8) with the proxy gripper (8.5 cm opening, 50 N per finger):
  25 rim grasps around the top (one pad inside the cup) and 25 horizontal
  grasps across the body at different heights and directions, on a table,
  ``--trials`` each, with ``jobs=1`` and ``jobs=2`` (same seed, results checked
  identical). Timed from the call to the last result, pool start-up included;
  the decomposition is done (and cached) before timing;
- **machine ceiling**: the same jobs=1 evaluation in one plain process, then in two
  independent processes at once: their throughput ratio is what two processes can get
  from this machine right now (a shared machine may give one session a fixed share);
- **articulation vs proxy**: the same jobs=1 evaluation with each real gripper of
  ``examples/grippers`` simulated from its own articulation (``--gripper-model
  articulation``: links, joints, drives, mimics) against the proxy, measured back to back
  in this run (target issue 24: the articulation at least half the proxy's trials/s);
- **decomposition**: a non-convex torus of 20,000 triangles decomposed by CoACD
  with the default parameters into a fresh cache folder, then again (cache hit).

With ``--engine mjwarp`` it measures the batched engine instead (issue 25): the same
candidates × trials with the CPU engine (``mujoco``, jobs=1) and then twice as MuJoCo Warp
worlds stepped together (the first call may compile Warp's kernels, about 20 s on 2 cores,
then cached; the second is the warm figure): trials/s of each, the speed-up of the warm
MuJoCo Warp run over the CPU engine, and the share of candidates whose held / not held
agrees. The device is Warp's preferred one (``USDGRIP_WARP_DEVICE`` to choose) and is
printed.

Targets (issue 15): ≥ 20 trials/s per core, ≥ 1.7× with two jobs. The default 6 trials
(~5 s of work with jobs=1) make the jobs=2 ratio meaningful: at 2 trials (~2 s) the
first workers' start-up (~0.3 s: a fresh interpreter loads numpy and MuJoCo, no pxr)
alone caps a cold jobs=2 near 2 s / ((2 + 0.3 s) / 2) ≈ 1.7×. Usage::

    .venv/bin/python bench/bench_physics.py [--trials 6] [--skip-decomposition]
    .venv/bin/python bench/bench_physics.py --engine mjwarp [--trials 6] [--candidates 50]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from usdgrip.grasping.physics import (
    EvaluationParams,
    PhysicsGripper,
    decompose_mesh,
    evaluate_candidates,
    make_physics_object,
    make_physics_scene,
)

#: WORKER_NOTE: every worker process re-runs this script's top-level imports (CPython 3.11's
#: forkserver does not preload a ``__main__`` run from a path), so they stay light: trimesh at
#: the top cost each worker 0.46 s of start-up; ``usdgrip`` is preloaded by the fork server.
TARGET_TRIALS_PER_CORE = 20.0
TARGET_RATIO = 1.7


def revolve(profile: list[tuple[float, float]], sections: int) -> tuple[np.ndarray, np.ndarray]:
    """Closed surface of revolution about Z of an (r, z) polyline from the axis back to it."""
    angles = np.linspace(0, 2 * np.pi, sections, endpoint=False)
    rings = [
        np.column_stack([r * np.cos(angles), r * np.sin(angles), np.full(sections, z)])
        for r, z in profile
    ]
    faces = []
    for k in range(len(profile) - 1):
        for j in range(sections):
            a, b = k * sections + j, k * sections + (j + 1) % sections
            faces += [[a, b, b + sections], [a, b + sections, a + sections]]
    return np.concatenate(rings), np.array(faces)


def mug() -> tuple[np.ndarray, np.ndarray]:
    import trimesh  # here, not at the top: see WORKER_NOTE

    cup_v, cup_f = revolve(
        [(0, 0), (0.04, 0), (0.04, 0.1), (0.035, 0.1), (0.035, 0.005), (0, 0.005)], 64
    )
    handle = trimesh.creation.torus(0.025, 0.006, major_sections=32, minor_sections=12)
    handle.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, (1, 0, 0)))
    handle.apply_translation((0.055, 0, 0.05))
    return (
        np.concatenate([cup_v, handle.vertices]),
        np.concatenate([cup_f, np.asarray(handle.faces) + len(cup_v)]),
    )


def frame(approach: np.ndarray, closing: np.ndarray, origin: np.ndarray) -> np.ndarray:
    z = approach / np.linalg.norm(approach)
    x = closing - z * (closing @ z)
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    m[:3, 3] = origin
    return m


def candidates(count: int) -> np.ndarray:
    poses = []
    rim = count // 2
    for k in range(rim):
        a = 2 * np.pi * (k + 0.5) / rim
        radial = np.array([math.cos(a), math.sin(a), 0.0])
        poses.append(frame(np.array([0, 0, -1.0]), radial, radial * 0.0375 + (0, 0, 0.09)))
    for k in range(count - rim):
        a = 2 * np.pi * k / (count - rim) + 0.3
        approach = -np.array([math.cos(a), math.sin(a), 0.0])
        closing = np.array([-approach[1], approach[0], 0.0])
        height = 0.03 + 0.04 * (k % 5) / 4
        poses.append(frame(approach, closing, np.array([0, 0, height])))
    return np.stack(poses)


def bench_trials(trials: int, count: int, cache: str) -> None:
    vertices, faces = mug()
    start = time.perf_counter()
    obj = make_physics_object(vertices, faces, mass=0.3, friction=0.8, cache_dir=cache)
    decompose_seconds = time.perf_counter() - start
    methods = [p.method for p in obj.decomposition.parts]
    print(
        f"mug: {len(faces)} triangles, parts {methods}, {len(obj.pieces)} convex pieces, "
        f"decomposed in {decompose_seconds:.1f} s"
    )
    gripper = PhysicsGripper.proxy(0.085, 0.02, 50.0)
    scene = make_physics_scene(table=True)
    params = EvaluationParams(trials=trials)
    poses = candidates(count)
    runs = {}
    # jobs=2 twice: the first call starts the worker (cold), the second reuses it (warm).
    for label, jobs in (("jobs=1", 1), ("jobs=2 cold", 2), ("jobs=2 warm", 2)):
        start = time.perf_counter()
        results = evaluate_candidates(obj, gripper, poses, scene=scene, params=params, jobs=jobs)
        seconds = time.perf_counter() - start
        runs[label] = (results, seconds)
        rate = count * trials / seconds
        print(
            f"{label}: {count} candidates x {trials} trials in {seconds:.2f} s "
            f"= {rate:.1f} trials/s"
        )
    one = runs["jobs=1"]
    same = all(
        [r.trial_outcomes for r in one[0]] == [r.trial_outcomes for r in runs[k][0]]
        and np.array_equal(
            [r.displacement for r in one[0]], [r.displacement for r in runs[k][0]], equal_nan=True
        )
        for k in runs
    )
    counts: dict[str, int] = {}
    for r in one[0]:
        for name, n in r.outcomes.items():
            counts[name] = counts.get(name, 0) + n
    print(
        f"outcomes: { {k: v for k, v in counts.items() if v} }; jobs=2 identical to jobs=1: {same}"
    )
    per_core = count * trials / one[1]
    cold, warm = one[1] / runs["jobs=2 cold"][1], one[1] / runs["jobs=2 warm"][1]
    verdict = "met" if max(cold, warm) >= TARGET_RATIO else "NOT met"
    print(
        f"trials/s per core {per_core:.1f} (target >= {TARGET_TRIALS_PER_CORE:.0f}: "
        f"{'met' if per_core >= TARGET_TRIALS_PER_CORE else 'NOT met'}); "
        f"jobs=2 speed-up {cold:.2f}x cold, {warm:.2f}x warm "
        f"(target >= {TARGET_RATIO}: {verdict}); "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )


def plain_run(trials: int, count: int, cache: str) -> None:
    """One jobs=1 evaluation; prints its start and end wall-clock times as JSON."""
    vertices, faces = mug()
    obj = make_physics_object(vertices, faces, mass=0.3, friction=0.8, cache_dir=cache)
    gripper = PhysicsGripper.proxy(0.085, 0.02, 50.0)
    scene = make_physics_scene(table=True)
    poses = candidates(count)
    start = time.time()
    evaluate_candidates(obj, gripper, poses, scene=scene, params=EvaluationParams(trials=trials))
    print(json.dumps({"start": start, "end": time.time()}))


def bench_ceiling(trials: int, count: int, cache: str) -> None:
    """Throughput of two independent plain processes relative to one (cache already filled)."""
    command = [sys.executable, __file__, "--plain-run", "--trials", str(trials)]
    command += ["--candidates", str(count), "--cache", cache]

    def spans(processes: int) -> list[dict[str, float]]:
        running = [
            subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(processes)
        ]
        return [json.loads(p.communicate()[0]) for p in running]

    (one,) = spans(1)
    two = spans(2)
    single = one["end"] - one["start"]
    window = max(t["end"] for t in two) - min(t["start"] for t in two)
    print(
        f"machine ceiling: one plain process {single:.2f} s; two at once {window:.2f} s "
        f"for twice the work: {2 * single / window:.2f}x the throughput of one"
    )


def bench_decomposition() -> None:
    import trimesh

    torus = trimesh.creation.torus(0.05, 0.015, major_sections=200, minor_sections=50)
    with tempfile.TemporaryDirectory(prefix="usdgrip-bench-coacd-") as cache:
        start = time.perf_counter()
        first = decompose_mesh(torus.vertices, torus.faces, cache_dir=cache)
        first_seconds = time.perf_counter() - start
        start = time.perf_counter()
        second = decompose_mesh(torus.vertices, torus.faces, cache_dir=cache)
        second_seconds = time.perf_counter() - start
    print(
        f"torus {len(torus.faces)} triangles: first decomposition {first_seconds:.2f} s "
        f"({first.parts[0].method}, {len(first.pieces)} pieces); second {second_seconds:.3f} s "
        f"({second.parts[0].method}); {first_seconds / second_seconds:.0f}x faster"
    )


#: The real grippers (file, site) of examples/grippers.
REAL_GRIPPERS = {
    "franka_hand": ("franka_hand/franka_hand.usda", "/FrankaHand/panda_hand/gripper_site"),
    "prismatic_two_finger": ("prismatic_two_finger.usda", "/PrismaticGripper/palm/tcp"),
    "revolute_jaw": ("revolute_jaw.usda", "/RevoluteJawGripper/palm/tcp"),
    "robotiq_2f85": ("robotiq_2f85/robotiq_2f85.usda", "/Robotiq_2F85/base/gripper_site"),
}
TARGET_ARTICULATION_RATIO = 0.5


def bench_articulation(trials: int, count: int, cache: str) -> None:
    """Trials/s of each real gripper's articulation against the proxy, jobs=1, this run."""
    from pxr import Usd

    from usdgrip.usd.articulation import read_gripper_articulation

    vertices, faces = mug()
    obj = make_physics_object(vertices, faces, mass=0.3, friction=0.8, cache_dir=cache)
    scene = make_physics_scene(table=True)
    params = EvaluationParams(trials=trials)
    poses = candidates(count)
    folder = Path(__file__).resolve().parent.parent / "examples" / "grippers"

    def rate(gripper: PhysicsGripper) -> tuple[float, dict[str, int]]:
        start = time.perf_counter()
        results = evaluate_candidates(obj, gripper, poses, scene=scene, params=params)
        seconds = time.perf_counter() - start
        counts: dict[str, int] = {}
        for r in results:
            for name, n in r.outcomes.items():
                if n:
                    counts[name] = counts.get(name, 0) + n
        return count * trials / seconds, counts

    proxy, _ = rate(PhysicsGripper.proxy(0.085, 0.02, 50.0))
    print(f"proxy: {proxy:.1f} trials/s (jobs=1)")
    for name, (path, site) in REAL_GRIPPERS.items():
        stage = Usd.Stage.Open(str(folder / path))
        articulation = read_gripper_articulation(stage.GetPrimAtPath(site), is_site=True)
        gripper = PhysicsGripper(
            articulation.opening.opening_open, grip_force=50.0, articulation=articulation
        )
        value, counts = rate(gripper)
        ratio = value / proxy
        verdict = "met" if ratio >= TARGET_ARTICULATION_RATIO else "NOT met"
        print(
            f"articulation {name}: {value:.1f} trials/s = {ratio:.2f}x the proxy "
            f"(target >= {TARGET_ARTICULATION_RATIO}: {verdict}); outcomes {counts}"
        )


def bench_engine(engine: str, trials: int, count: int, cache: str) -> None:
    """Trials/s of ``engine`` (batched) and of the CPU engine, measured in this one run."""
    from usdgrip.grasping.physics import get_engine

    get_engine(engine).check()  # one line when it cannot run here
    vertices, faces = mug()
    obj = make_physics_object(vertices, faces, mass=0.3, friction=0.8, cache_dir=cache)
    gripper = PhysicsGripper.proxy(0.085, 0.02, 50.0)
    scene = make_physics_scene(table=True)
    params = EvaluationParams(trials=trials)
    poses = candidates(count)
    device = get_engine(engine).describe(params).get("device", "cpu")
    runs = {}
    for label, name in (("mujoco", "mujoco"), (f"{engine} first", engine), (engine, engine)):
        start = time.perf_counter()
        results = evaluate_candidates(obj, gripper, poses, scene=scene, params=params, engine=name)
        seconds = time.perf_counter() - start
        runs[label] = (results, seconds)
        print(
            f"{label}: {count} candidates x {trials} trials in {seconds:.2f} s "
            f"= {count * trials / seconds:.1f} trials/s"
        )
    cpu, batched = runs["mujoco"], runs[engine]
    agree = sum(a.held == b.held for a, b in zip(cpu[0], batched[0], strict=True)) / count
    trials_agree = sum(
        x == y
        for a, b in zip(cpu[0], batched[0], strict=True)
        for x, y in zip(a.trial_outcomes, b.trial_outcomes, strict=True)
    ) / (count * trials)
    print(
        f"{engine} on {device}: {cpu[1] / batched[1]:.2f}x the CPU engine (jobs=1) warm, "
        f"{cpu[1] / runs[f'{engine} first'][1]:.2f}x on the first call; held agrees on "
        f"{100 * agree:.0f}% of candidates, outcomes on {100 * trials_agree:.0f}% of trials; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=6)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--skip-decomposition", action="store_true")
    parser.add_argument(
        "--articulation-only", action="store_true", help="only the articulation vs proxy part"
    )
    parser.add_argument(
        "--engine",
        choices=("mujoco", "mjwarp"),
        default="mujoco",
        help="mjwarp: only the batched engine against the CPU engine (trials/s, speed-up)",
    )
    parser.add_argument("--plain-run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.plain_run:
        plain_run(args.trials, args.candidates, args.cache)
        return
    with tempfile.TemporaryDirectory(prefix="usdgrip-bench-coacd-") as cache:
        if args.engine != "mujoco":
            try:
                bench_engine(args.engine, args.trials, args.candidates, cache)
            except ValueError as exc:
                sys.exit(f"bench_physics: {exc}")
            return
        if args.articulation_only:
            bench_articulation(args.trials, args.candidates, cache)
            return
        bench_trials(args.trials, args.candidates, cache)
        bench_ceiling(args.trials, args.candidates, cache)
        bench_articulation(args.trials, args.candidates, cache)
    if not args.skip_decomposition:
        bench_decomposition()


if __name__ == "__main__":
    main()
