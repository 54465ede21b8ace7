"""Benchmark: gripper-vs-mesh checks through CollisionScene vs a direct python-fcl loop.

One run, same poses, same fcl geometry:

- **scene API**: ``CollisionScene.check_gripper(model, poses)`` — AABB culling,
  the closed-mesh containment test (which the direct loop does not do) and
  fcl for the rest, reusing fcl objects;
- **direct loop**: for each pose, for each gripper shape, set the transform on a
  prebuilt ``fcl.CollisionObject`` and ``fcl.collide`` it with the mesh, stopping
  at the first hit (the lean loop a user would write by hand).

Gripper: the documented proxy (3 boxes) for a 0.085 m opening, and the example
gripper's meshes (3 closed boxes as BVH) read as triangle meshes. Object: an
icosphere of 20,480 triangles, radius 0.05 m. Poses: G origins in a shell around
the object (0.02 to 0.12 m from the centre), approach towards the centre with
noise, random roll: a mix of free and colliding poses.

Target (issue 5): the scene API within 1.5x of the direct loop. Usage::

    .venv/bin/python bench/bench_collision.py            # 5,000 poses
    .venv/bin/python bench/bench_collision.py --poses 20000
"""

from __future__ import annotations

import argparse
import time

import fcl
import numpy as np
import trimesh

from usdgrip.frames import compute_grasp_frame
from usdgrip.grasping.collision import (
    CollisionScene,
    GripperCollisionModel,
    RobotShape,
    Shape,
    queries,
)
from usdgrip.grasping.collision import scene as collision_scene

TARGET_RATIO = 1.5


def make_poses(n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, 4, 4) world_from_G poses around the origin."""
    directions = rng.normal(size=(n, 3))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    radii = rng.uniform(0.02, 0.12, n)
    poses = np.empty((n, 4, 4))
    for i in range(n):
        origin = directions[i] * radii[i]
        forward = -directions[i] + rng.normal(scale=0.2, size=3)
        poses[i] = compute_grasp_frame(origin, forward, rng.normal(size=3)).matrix
    return poses


def direct_loop(model: GripperCollisionModel, mesh: trimesh.Trimesh, poses: np.ndarray) -> tuple:
    """Hand-written python-fcl loop; returns (collides, seconds)."""
    bvh = fcl.BVHModel()
    bvh.beginModel(len(mesh.vertices), len(mesh.faces))
    bvh.addSubModel(np.asarray(mesh.vertices), np.asarray(mesh.faces))
    bvh.endModel()
    target = fcl.CollisionObject(bvh, fcl.Transform())
    objects = []
    for s in model.shapes:
        if s.shape.kind == "box":
            geometry = fcl.Box(*(2 * s.shape.half_extents))
        else:
            geometry = fcl.BVHModel()
            geometry.beginModel(len(s.shape.vertices), len(s.shape.faces))
            geometry.addSubModel(s.shape.vertices, s.shape.faces)
            geometry.endModel()
        objects.append(fcl.CollisionObject(geometry, fcl.Transform()))
    placements = [s.frame_from_shape for s in model.shapes]
    request, result = fcl.CollisionRequest(), fcl.CollisionResult()
    collides = np.zeros(len(poses), dtype=bool)
    start = time.perf_counter()
    for i, pose in enumerate(poses):
        for obj, placement in zip(objects, placements, strict=True):
            m = pose @ placement
            obj.setRotation(m[:3, :3])
            obj.setTranslation(m[:3, 3])
            if fcl.collide(obj, target, request, result):
                result.contacts.clear()
                collides[i] = True
                break
    return collides, time.perf_counter() - start


def scene_api(model: GripperCollisionModel, mesh: trimesh.Trimesh, poses: np.ndarray) -> tuple:
    """The same checks through CollisionScene; returns (result, build seconds, check seconds)."""
    start = time.perf_counter()
    scene = CollisionScene()
    scene.add_obstacle(Shape.mesh(mesh.vertices, mesh.faces), name="object")
    built = time.perf_counter() - start
    scene.check_gripper(model, poses[:10])  # warm the containment structures
    start = time.perf_counter()
    result = scene.check_gripper(model, poses)
    return result, built, time.perf_counter() - start


def example_gripper_model() -> GripperCollisionModel:
    """The example gripper's palm and fingers (examples/gripper.usda) as closed box meshes in G."""
    tcp_z = 0.13
    boxes = {
        "palm": ((-0.045, -0.012, 0.0), (0.045, 0.012, 0.06)),
        "finger_left": ((-0.0545, -0.011, 0.06), (-0.0425, 0.011, 0.145)),
        "finger_right": ((0.0425, -0.011, 0.06), (0.0545, 0.011, 0.145)),
    }
    shapes = []
    for name, (lo, hi) in boxes.items():
        lo, hi = np.array(lo), np.array(hi)
        box = trimesh.creation.box(hi - lo)
        placement = np.eye(4)
        placement[:3, 3] = (lo + hi) / 2 - (0, 0, tcp_z)
        shapes.append(RobotShape(name, Shape.mesh(box.vertices, box.faces, name=name), placement))
    return GripperCollisionModel(shapes, source="meshes", finger_indices=(1, 2))


def distance_only_touch(a, b, n, request, result):
    """Baseline finger-touch test (the first implementation): an fcl distance query for
    every pose whose bounds come within the tolerance. Same answers as ``queries.find_touching``."""
    hit, _ = queries.run_pairs([a, b], [(0, 1)], n, request, result)
    (lo_a, hi_a), (lo_b, hi_b) = queries._world_aabb(a, n), queries._world_aabb(b, n)
    tol = queries.TOUCH_TOLERANCE
    near = np.all((lo_a <= hi_b + tol) & (lo_b <= hi_a + tol), axis=1)
    dreq = fcl.DistanceRequest()
    for r in np.flatnonzero(~hit & near):
        for body in (a, b):
            g = (body.world[r] if body.world.ndim == 3 else body.world) @ body.geom.shape_from_geom
            body.obj.setRotation(g[:3, :3])
            body.obj.setTranslation(g[:3, 3])
        if fcl.distance(a.obj, b.obj, dreq, fcl.DistanceResult()) <= tol:
            hit[r] = True
    return hit


def time_retreat(model: GripperCollisionModel, mesh: trimesh.Trimesh, poses: np.ndarray) -> tuple:
    """check_retreat with the object attached; (result, seconds) for the current finger-touch
    test and for the distance-only baseline, same scene and poses."""
    scene = CollisionScene()
    part = scene.add_obstacle(Shape.mesh(mesh.vertices, mesh.faces), name="object")
    free = ~scene.check_gripper(model, poses).collides
    poses = poses[free]
    out = []
    for touch in (queries.find_touching, distance_only_touch):
        current = collision_scene.find_touching  # the name CollisionScene.check_retreat calls
        collision_scene.find_touching = touch
        try:
            start = time.perf_counter()
            result = scene.check_retreat(model, poses, part, 0.1, steps=5)
            out.append((result, time.perf_counter() - start))
        finally:
            collision_scene.find_touching = current
    return len(poses), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    mesh = trimesh.creation.icosphere(subdivisions=5, radius=0.05)
    poses = make_poses(args.poses, rng)
    print(f"object: icosphere {len(mesh.faces)} triangles; {len(poses)} gripper poses")
    worst = 0.0
    for label, model in (
        ("proxy (3 boxes)", GripperCollisionModel.proxy(0.085, 0.022)),
        ("example meshes (3 BVH)", example_gripper_model()),
    ):
        direct, t_direct = direct_loop(model, mesh, poses)
        result, t_build, t_scene = scene_api(model, mesh, poses)
        ours = result.collides
        inside = sum(1 for c in result.first_contact if c is not None and c.inside)
        ratio = t_scene / t_direct
        worst = max(worst, ratio)
        print(f"\n{label}: {int(ours.sum())} of {len(poses)} poses collide ({inside} found by the")
        print(f"  closed-mesh containment test; direct loop finds {int(direct.sum())})")
        print(
            f"  direct python-fcl loop : {len(poses) / t_direct:10.0f} checks/s ({t_direct:.3f} s)"
        )
        print(f"  CollisionScene API     : {len(poses) / t_scene:10.0f} checks/s ({t_scene:.3f} s)")
        print(f"  ratio scene/direct     : {ratio:10.2f}x  (scene built in {t_build:.3f} s)")
        missing = int((direct & ~ours).sum())
        if missing:
            print(f"  WARNING: {missing} poses collide in the direct loop but not in the scene API")
        count, ((new, t_new), (old, t_old)) = time_retreat(model, mesh, poses)
        same = bool(
            np.array_equal(new.collides, old.collides)
            and new.exclusions_used == old.exclusions_used
        )
        print(f"  retreat check ({count} collision-free poses, object attached, 5 steps):")
        print(f"    finger-touch by fcl distance (baseline): {t_old:.3f} s")
        print(f"    inflated-solid cull, then distance     : {t_new:.3f} s")
        print(f"    speed-up {t_old / t_new:.1f}x; same results: {same}")
    verdict = "meets" if worst <= TARGET_RATIO else "MISSES"
    print(f"\nworst ratio {worst:.2f}x {verdict} the target (<= {TARGET_RATIO}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
