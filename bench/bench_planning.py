"""Benchmark: end-to-end antipodal planning of 1,000 collision-checked candidates.

Object: an icosphere of 20,480 triangles (radius 0.03 m) written as a
``UsdGeom.Mesh`` into a temporary ``.usda``; gripper: ``examples/gripper.usda``
(site ``/Gripper/tcp``). Its meshes carry no ``UsdPhysics.CollisionAPI``, so the
default collision model is the proxy (palm + two finger boxes); the run also
times ``gripper_model="geometry"`` (its palm and finger meshes as BVHs).
``plan_grasps`` reads both files, samples 3,000 antipodal proposals (3x
oversampling), checks them at the grasp pose and along a 0.1 m retreat with
the object attached, ranks and keeps 1,000.

Baseline in the same run: the antipodal sampler alone on the same mesh and
proposal count (no USD, no collision), so the printed ratio is the cost of the
whole pipeline relative to proposal generation; and, for the gripper's meshes,
the plan with the retreat check's first finger-touch test (an fcl distance query
per pose, ``bench_collision.distance_only_touch``) patched back in. Target (issue 5): the full
plan under 3 s on this machine. Usage::

    .venv/bin/python bench/bench_planning.py [--candidates 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import trimesh
from bench_collision import distance_only_touch

from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef
from usdgrip.grasping.backends.antipodal import sample_antipodal_grasps
from usdgrip.grasping.collision import scene as collision_scene
from usdgrip.grasping.planner import OVERSAMPLE, plan_grasps

REPO = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 3.0


def write_sphere(path: Path, radius: float = 0.03, subdivisions: int = 5) -> int:
    mesh = trimesh.creation.icosphere(subdivisions=subdivisions, radius=radius)
    points = ", ".join(f"({x:.7g}, {y:.7g}, {z + radius:.7g})" for x, y, z in mesh.vertices)
    indices = ", ".join(str(int(i)) for i in mesh.faces.ravel())
    counts = ", ".join("3" for _ in range(len(mesh.faces)))
    path.write_text(
        '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\n\n'
        'def Xform "Ball"\n{\n    def Mesh "surface"\n    {\n'
        f"        int[] faceVertexCounts = [{counts}]\n"
        f"        int[] faceVertexIndices = [{indices}]\n"
        f"        point3f[] points = [{points}]\n"
        '        uniform token subdivisionScheme = "none"\n    }\n}\n'
    )
    return len(mesh.faces)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asset = Path(folder) / "ball.usda"
        triangles = write_sphere(asset)
        request = GraspPlanningRequest(
            object=GraspObject(geometry=GeometryRef(asset_path=str(asset), prim_path="/Ball")),
            grippers=(
                GripperRef(
                    asset_path=str(REPO / "examples/gripper.usda"), prim_path="/Gripper/tcp"
                ),
            ),
            max_candidates_per_gripper=args.candidates,
            seed=0,
        )
        sphere = trimesh.creation.icosphere(subdivisions=5, radius=0.03)
        baseline, full, meshes, meshes_before = [], [], [], []
        result = None
        for _ in range(args.repeat):
            start = time.perf_counter()
            sample_antipodal_grasps(
                sphere.vertices,
                sphere.faces,
                0.085,
                rng=np.random.default_rng(0),
                count=OVERSAMPLE * args.candidates,
            )
            baseline.append(time.perf_counter() - start)
            start = time.perf_counter()
            result = plan_grasps(request, methods="antipodal")
            full.append(time.perf_counter() - start)
            start = time.perf_counter()
            last_meshes = plan_grasps(request, methods="antipodal", gripper_model="geometry")
            meshes.append(time.perf_counter() - start)
            # Before: the retreat check's finger-touch test by fcl distance for every pose.
            current, collision_scene.find_touching = (
                collision_scene.find_touching,
                distance_only_touch,
            )
            try:
                start = time.perf_counter()
                before = plan_grasps(request, methods="antipodal", gripper_model="geometry")
                meshes_before.append(time.perf_counter() - start)
            finally:
                collision_scene.find_touching = current
    sampler, plan, plan_meshes = min(baseline), min(full), min(meshes)
    plan_before = min(meshes_before)
    print(f"mesh: {triangles} triangles; best of {args.repeat}")
    print(f"antipodal sampler alone ({OVERSAMPLE * args.candidates} proposals): {sampler:.2f} s")
    print(
        f"plan_grasps, proxy gripper (read USD, propose, rank, grasp-pose + retreat checks): "
        f"{plan:.2f} s "
        f"-> {len(result.grasps)} candidates kept"
    )
    print(f"ratio plan / sampler: {plan / sampler:.2f}x")
    print(
        f"plan_grasps with the gripper's meshes (gripper_model='geometry'): {plan_meshes:.2f} s "
        f"({plan_meshes / plan:.2f}x the proxy)"
    )
    print(
        f"  before (finger-touch by fcl distance for every pose): {plan_before:.2f} s; "
        f"speed-up {plan_before / plan_meshes:.1f}x; same candidates: "
        f"{list(before.grasps) == list(last_meshes.grasps)}"
    )
    worst = max(plan, plan_meshes)
    verdict = "met" if worst < TARGET_SECONDS else "NOT met"
    print(f"target: plan under {TARGET_SECONDS:g} s with either gripper model: {verdict}")
    for warning in result.metadata.warnings:
        print(f"  warning: {warning}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
