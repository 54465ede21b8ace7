"""Benchmark: antipodal sampling of 1,000 candidates on a 20,480-triangle mesh.

Object: an icosphere (5 subdivisions, 20,480 triangles) scaled into an
ellipsoid of 0.07 x 0.05 x 0.12 m, resting on a table at z = 0; gripper max
opening 0.085 m, clearance 0.005 m, 8 approaches per contact pair. Widths
across the long axis (0.12 m) do not fit, so the sampler has real rejections.

Figures printed (best of ``--repeat`` runs, same seed every run):

1. the sampler with Embree (trimesh + embreex), the default;
2. baseline in the same run: the same sampler with trimesh's pure-python
   rtree intersector (``ray_backend="triangle"``); the ratio is baseline /
   Embree, and both must return identical grasps;
3. when ``usdgrip.grasping.collision`` is importable: sampling plus the grasp-pose
   collision check of all candidates against the object (20k-triangle BVH)
   and the table, with the proxy gripper (palm + two finger boxes), scene
   construction included. Target (issue 5): under 3 s.

Usage::

    .venv/bin/python bench/bench_antipodal.py [--candidates 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import trimesh

from usdgrip.grasping.backends.antipodal import sample_antipodal_grasps

TARGET_SECONDS = 3.0
MAX_OPENING = 0.085
PAD_WIDTH = 0.02
RADII = (0.035, 0.025, 0.06)


def make_object() -> trimesh.Trimesh:
    mesh = trimesh.creation.icosphere(subdivisions=5, radius=1.0)
    mesh.vertices = mesh.vertices * np.asarray(RADII) + [0.0, 0.0, RADII[2]]
    return mesh


def best_of(repeat: int, run):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def sample(mesh: trimesh.Trimesh, count: int, backend: str):
    return sample_antipodal_grasps(
        mesh.vertices,
        mesh.faces,
        MAX_OPENING,
        rng=np.random.default_rng(0),
        count=count,
        ray_backend=backend,
    )


def collision_run(mesh: trimesh.Trimesh, count: int):
    from usdgrip.grasping.collision import CollisionScene, GripperCollisionModel, Shape

    grasps = sample(mesh, count, "auto")
    scene = CollisionScene()
    scene.add_obstacle(Shape.mesh(mesh.vertices, mesh.faces), name="object")
    table = np.eye(4)
    table[2, 3] = -0.01
    scene.add_obstacle(Shape.box((0.6, 0.6, 0.02)), table, name="table")
    model = GripperCollisionModel.proxy(MAX_OPENING, PAD_WIDTH)
    result = scene.check_gripper(model, grasps.poses)
    return grasps, np.asarray(result.collides)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    mesh = make_object()
    count = args.candidates
    print(f"mesh: {len(mesh.faces)} triangles, ellipsoid {2 * np.asarray(RADII)} m")
    print(f"candidates: {count}, max opening {MAX_OPENING} m, best of {args.repeat}")

    embree_s, grasps = best_of(args.repeat, lambda: sample(mesh, count, "embree"))
    print(f"antipodal sampler, Embree: {embree_s:.3f} s -> {len(grasps.widths)} candidates")
    base_s, baseline = best_of(1, lambda: sample(mesh, count, "triangle"))
    same = len(baseline.widths) == len(grasps.widths) and np.allclose(
        baseline.poses, grasps.poses, atol=1e-9
    )
    print(f"baseline, trimesh python/rtree intersector: {base_s:.3f} s (same grasps: {same})")
    print(f"ratio baseline / Embree: {base_s / embree_s:.1f}x")

    try:
        import usdgrip.grasping.collision  # noqa: F401
    except ImportError as exc:
        print(f"collision check skipped: {exc}")
        return 0
    full_s, (checked, collides) = best_of(args.repeat, lambda: collision_run(mesh, count))
    free = int(np.count_nonzero(~collides))
    print(
        f"sampler + grasp-pose collision check (proxy gripper vs object BVH + table, scene "
        f"built each run): {full_s:.3f} s -> {free} of {len(checked.widths)} collision-free"
    )
    print(f"collision share: {full_s - embree_s:.3f} s ({(full_s - embree_s) / full_s:.0%})")
    verdict = "met" if full_s < TARGET_SECONDS else "NOT met"
    print(f"target: 1,000 collision-checked candidates under {TARGET_SECONDS:.0f} s: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
