"""Regenerate the example meshes and assets: ``python examples/make_examples.py``.

The assets are small and checked in; this script documents how they were
made (through usdgrip's own authoring helpers) and keeps them reproducible.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from pxr import Gf, Usd, UsdGeom, UsdPhysics, UsdShade, Vt

import usdgrip  # noqa: F401  (registers the schema before any stage is opened)
from usdgrip.authoring import apply_gripper_slot, define_gripper_site

HERE = Path(__file__).resolve().parent


def _stage(path: Path, default_prim: str) -> Usd.Stage:
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    root = UsdGeom.Xform.Define(stage, f"/{default_prim}")
    stage.SetDefaultPrim(root.GetPrim())
    return stage


def _mesh(stage: Usd.Stage, path: str, points: np.ndarray, faces: list[list[int]]) -> None:
    mesh = UsdGeom.Mesh.Define(stage, path)
    mesh.CreatePointsAttr(Vt.Vec3fArray([Gf.Vec3f(*map(float, p)) for p in points]))
    mesh.CreateFaceVertexCountsAttr(Vt.IntArray([len(f) for f in faces]))
    mesh.CreateFaceVertexIndicesAttr(Vt.IntArray([i for f in faces for i in f]))
    mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
    mesh.CreateExtentAttr(UsdGeom.PointBased.ComputeExtent(mesh.GetPointsAttr().Get()))


def box_mesh(lo, hi) -> tuple[np.ndarray, list[list[int]]]:
    """Closed axis-aligned box, outward quads."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    pts = np.array(
        [[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0],
         [x0, y0, z1], [x1, y0, z1], [x1, y1, z1], [x0, y1, z1]]
    )  # fmt: skip
    faces = [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]]
    return pts, faces


def merge(*parts) -> tuple[np.ndarray, list[list[int]]]:
    points, faces, offset = [], [], 0
    for p, f in parts:
        points.append(p)
        faces.extend([[i + offset for i in face] for face in f])
        offset += len(p)
    return np.vstack(points), faces


def cylinder_mesh(radius: float, height: float, segments: int = 32):
    """Closed cylinder along +Z from z=0, outward faces."""
    a = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ring = np.stack([radius * np.cos(a), radius * np.sin(a)], axis=1)
    bottom = np.column_stack([ring, np.zeros(segments)])
    top = np.column_stack([ring, np.full(segments, height)])
    pts = np.vstack([bottom, top])
    faces = [
        [i, (i + 1) % segments, segments + (i + 1) % segments, segments + i]
        for i in range(segments)
    ]
    faces.append(list(range(segments - 1, -1, -1)))
    faces.append(list(range(segments, 2 * segments)))
    return pts, faces


def make_gripper() -> None:
    stage = _stage(HERE / "gripper.usda", "Gripper")
    # Palm and two fingers of a 2F-85-like parallel-jaw gripper, approach along +Z.
    _mesh(stage, "/Gripper/palm", *box_mesh((-0.045, -0.012, 0.0), (0.045, 0.012, 0.06)))
    for side, sign in (("finger_left", -1), ("finger_right", 1)):
        inner, outer = sign * 0.0425, sign * 0.0545
        lo, hi = (min(inner, outer), -0.011, 0.06), (max(inner, outer), 0.011, 0.145)
        _mesh(stage, f"/Gripper/{side}", *box_mesh(lo, hi))
    # Max payload 5 kg and grip force 235 N (the top of its 20-235 N range): the Robotiq
    # 2F-85's datasheet figures (2F-85 & 2F-140 instruction manual, technical specifications).
    define_gripper_site(
        stage, "/Gripper/tcp", 0.085, forward=(0, 0, 1), grip_line=(0, -1, 0),
        pad_width=0.022, max_payload=5.0, max_grip_force=235.0, translate=(0, 0, 0.13),
    )  # fmt: skip
    stage.GetPrimAtPath("/Gripper/tcp").SetDocumentation(
        "Grasp centre between the finger pads; +Z approach, +X closing."
    )
    stage.GetRootLayer().Save()


def make_tote() -> None:
    stage = _stage(HERE / "tote.usda", "Tote")
    lx, ly, h, t = 0.2, 0.15, 0.15, 0.01
    walls = merge(
        box_mesh((-lx, -ly, 0), (lx, ly, t)),
        box_mesh((-lx, -ly, 0), (-lx + t, ly, h)),
        box_mesh((lx - t, -ly, 0), (lx, ly, h)),
        box_mesh((-lx + t, -ly, 0), (lx - t, -ly + t, h)),
        box_mesh((-lx + t, ly - t, 0), (lx - t, ly, h)),
    )
    UsdGeom.Xform(stage.GetPrimAtPath("/Tote")).AddTranslateOp().Set(Gf.Vec3d(0.6, 0.0, 0.0))
    _mesh(stage, "/Tote/body", *walls)
    tote = stage.GetPrimAtPath("/Tote")
    # Slot centre 3 cm below the rim: the pads (5 cm deep, tip 1 cm past the centre) cover
    # the wall over 4 cm and the palm clears the rim by 1 cm (6 mm tilted by 15°). With the
    # centre on the rim only a fifth of each pad touched the wall and no grasp held.
    grip_height = 0.12  # h - 3 cm
    for name, x, span, lr in (
        ("left_edge", -lx + t / 2, (-1, 0, 0), 0),
        ("right_edge", lx - t / 2, (-1, 0, 0), 1),
    ):
        apply_gripper_slot(
            tote, name, center=(x, 0, grip_height), forward=(0, 0, -1), span_axis=span,
            up_range=0.2, slot_input_angle=30.0, lr=lr, group="carry",
        )  # fmt: skip
    stage.GetRootLayer().Save()


def make_mug() -> None:
    stage = _stage(HERE / "mug.usda", "Mug")
    body = cylinder_mesh(0.035, 0.1)
    handle = box_mesh((0.035, -0.006, 0.025), (0.07, 0.006, 0.075))
    _mesh(stage, "/Mug/body", *body)
    _mesh(stage, "/Mug/handle", *handle)
    # The handle slot is authored as a LambdaSim record (JSON list, version 2).
    record = {
        "center": [0.0625, 0.0, 0.05], "forward": [-1.0, 0.0, 0.0], "span_axis": [0.0, 1.0, 0.0],
        "up_range": 0.04, "slot_input_angle": 20.0, "LR": 1, "GroupName": "", "version": 2,
        "name": "handle",
    }  # fmt: skip
    stage.GetPrimAtPath("/Mug").SetCustomDataByKey("lambdasim:gripper_slots", json.dumps([record]))
    stage.GetRootLayer().Save()


def _grasp_line(stage: Usd.Stage, path: str, p0, p1, doc: str) -> None:
    """A SimReady grasp vector line, authored as SimReady's FET005 authoring helper does."""
    curve = UsdGeom.BasisCurves.Define(stage, path)
    curve.CreateTypeAttr(UsdGeom.Tokens.linear)
    curve.CreateCurveVertexCountsAttr(Vt.IntArray([2]))
    curve.CreatePointsAttr(Vt.Vec3fArray([Gf.Vec3f(*p0), Gf.Vec3f(*p1)]))
    curve.CreateWidthsAttr(Vt.FloatArray([0.004]))
    curve.SetWidthsInterpolation(UsdGeom.Tokens.constant)
    curve.CreateDisplayColorAttr(Vt.Vec3fArray([Gf.Vec3f(0.1, 0.85, 0.2)]))
    curve.CreatePurposeAttr(UsdGeom.Tokens.guide)
    curve.CreateExtentAttr(UsdGeom.Curves.ComputeExtent(curve.GetPointsAttr().Get(), [0.004]))
    curve.GetPrim().SetDocumentation(doc)


def make_graspable_prop() -> None:
    """A SimReady-style graspable prop: rigid body, collider, physics material, two grasp lines."""
    stage = _stage(HERE / "graspable_prop.usda", "Block")
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    block = stage.GetPrimAtPath("/Block")
    UsdPhysics.RigidBodyAPI.Apply(block)
    UsdPhysics.MassAPI.Apply(block).CreateMassAttr(0.2)
    # A 5 x 5 x 12 cm block standing on z = 0: render mesh and an invisible collision mesh.
    hx, h = 0.025, 0.12
    UsdGeom.Scope.Define(stage, "/Block/visuals")
    _mesh(stage, "/Block/visuals/body", *box_mesh((-hx, -hx, 0.0), (hx, hx, h)))
    UsdGeom.Scope.Define(stage, "/Block/colliders")
    _mesh(stage, "/Block/colliders/body", *box_mesh((-hx, -hx, 0.0), (hx, hx, h)))
    collider = stage.GetPrimAtPath("/Block/colliders/body")
    UsdPhysics.CollisionAPI.Apply(collider)
    UsdPhysics.MeshCollisionAPI.Apply(collider).CreateApproximationAttr("convexHull")
    UsdGeom.Imageable(collider).CreateVisibilityAttr(UsdGeom.Tokens.invisible)
    material = UsdShade.Material.Define(stage, "/Block/PhysicsMaterial")
    physics = UsdPhysics.MaterialAPI.Apply(material.GetPrim())
    physics.CreateStaticFrictionAttr(0.8)
    physics.CreateDynamicFrictionAttr(0.6)
    physics.CreateRestitutionAttr(0.0)
    UsdShade.MaterialBindingAPI.Apply(collider).Bind(
        material, UsdShade.Tokens.weakerThanDescendants, "physics"
    )
    _grasp_line(
        stage, "/Block/grasp_identifier_01", (-0.05, 0.0, 0.1), (0.05, 0.0, 0.1),
        "Across the block 2 cm below its top: the pads start 2.5 cm off each side face.",
    )  # fmt: skip
    _grasp_line(
        stage, "/Block/grasp_identifier_02", (-0.05, 0.1, 0.1), (0.05, 0.1, 0.1),
        "Deliberately wrong: 10 cm beside the block, it meets nothing (GP.001).",
    )  # fmt: skip
    stage.GetRootLayer().Save()


def make_bar() -> None:
    """A bare object: a 1 m bar, 4 x 4 cm, lying on z = 0, with no slots and no grasp lines.

    ``make demo`` authors a dual-arm carry on it with ``usdgrip author`` (an edits layer).
    """
    stage = _stage(HERE / "bar.usda", "Bar")
    _mesh(stage, "/Bar/body", *box_mesh((-0.5, -0.02, 0.0), (0.5, 0.02, 0.04)))
    stage.GetRootLayer().Save()


if __name__ == "__main__":
    make_gripper()
    make_tote()
    make_mug()
    make_graspable_prop()
    make_bar()
