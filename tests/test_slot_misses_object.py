"""GS.009 on real stages: the same findings as GP.001's surface and cast, whichever path runs.

The rule checks an object of Cubes without triangles when every slot surely passes
(``check_slots_meet_boxes``) and casts otherwise; every primitive type and a mesh, under
rotated, scaled, sheared, mirrored, tiny and huge transforms, with slots that hit, miss,
graze and lie off the bounds, must give what the cast of the tessellated surface gives.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pxr import Gf, Sdf, Usd, UsdGeom

import usdgrip.rules.slot_rules as slot_rules
import usdgrip.usd.geometry as geometry
from usdgrip.rules import validate
from usdgrip.slot_checks import compute_slot_surface_problems
from usdgrip.usd.geometry import read_axis_aligned_box, read_collision_shapes
from usdgrip.usd.grasp_lines import read_object_surface
from usdgrip.usd.stage import compute_world_transform

KINDS = ("Cube", "Sphere", "Cylinder", "Capsule", "Cone", "Mesh")
TRANSFORMS = ("identity", "rotated", "scaled", "sheared", "mirrored", "tiny", "huge")
BOX_POINTS = [(x, y, z) for z in (-0.5, 0.5) for y in (-0.5, 0.5) for x in (-0.5, 0.5)]
BOX_FACES = [0, 2, 3, 1, 4, 5, 7, 6, 0, 1, 5, 4, 2, 6, 7, 3, 0, 4, 6, 2, 1, 3, 7, 5]


def _rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else q @ np.diag([-1.0, 1.0, 1.0])


def _linear(rng: np.random.Generator, how: str) -> np.ndarray:
    return {
        "identity": np.eye(3),
        "rotated": _rotation(rng),
        "scaled": _rotation(rng) @ np.diag(rng.uniform(0.3, 3, size=3)),
        "sheared": _rotation(rng) @ (np.eye(3) + np.triu(rng.normal(size=(3, 3)), 1)),
        "mirrored": np.diag([-1.0, 1.0, 1.0]) @ _rotation(rng),
        "tiny": 1e-5 * _rotation(rng),
        "huge": 1e3 * _rotation(rng),
    }[how]


def _set_transform(prim: Usd.Prim, linear: np.ndarray, shift) -> None:
    matrix = np.eye(4)
    matrix[:3, :3], matrix[:3, 3] = linear, shift
    # Gf matrices act on row vectors: the transpose of the column convention.
    UsdGeom.Xformable(prim).AddTransformOp().Set(Gf.Matrix4d(matrix.T.tolist()))


def _write_stage(path: Path, kind: str, how: str, seed: int, near: bool = False) -> list[str]:
    """An object with one ``kind`` child and slots drawn around it; the slot names.

    ``near``: two slots along a face plane, lifted off it by 0 to 1e-3 of the half edge (by
    ``seed``: the certified pass's edge, where the cast's slack of 1e-9 decides).
    """
    rng = np.random.default_rng(seed)
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageMetersPerUnit(stage, [1.0, 0.01][seed % 2])
    UsdGeom.SetStageUpAxis(stage, "Z")
    obj = UsdGeom.Xform.Define(stage, "/Obj").GetPrim()
    _set_transform(obj, _linear(rng, how), rng.normal(size=3))
    body = stage.DefinePrim("/Obj/body", kind)
    body_linear = [np.eye(3), _rotation(rng), np.diag(rng.uniform(0.5, 2, size=3))][seed % 3]
    body_shift = rng.normal(scale=0.05, size=3)
    _set_transform(body, body_linear, body_shift)
    extent = 0.3
    if kind == "Cube":
        body.GetAttribute("size").Set(extent)
    elif kind == "Mesh":
        mesh = UsdGeom.Mesh(body)
        mesh.GetPointsAttr().Set([Gf.Vec3f(*(extent * np.array(p))) for p in BOX_POINTS])
        mesh.GetFaceVertexCountsAttr().Set([4] * 6)
        mesh.GetFaceVertexIndicesAttr().Set(BOX_FACES)
    else:
        body.GetAttribute("radius").Set(extent / 2)
        if kind != "Sphere":
            body.GetAttribute("height").Set(extent)
            body.GetAttribute("axis").Set(str(rng.choice(["X", "Y", "Z"])))
    names = []
    for i in range(2 if near else 6):
        name = f"s{i}"
        names.append(name)
        obj.AddAppliedSchema(f"GripperSlotAPI:{name}")
        draw = 2 if near else i % 3
        if draw == 0:  # through the body
            center = body_linear @ rng.uniform(-0.1, 0.1, size=3) + body_shift
        elif draw == 1:  # anywhere near it
            center = rng.normal(scale=0.3, size=3)
        else:  # on a face plane of the body, along the face (a Cube's: grazing)
            local = rng.uniform(-0.1, 0.1, size=3)
            axis = rng.integers(3)
            local[axis] = rng.choice([-extent, extent]) / 2
            if near:
                local[axis] *= 1 + [0.0, 1e-12, 1e-9, 1e-6, 1e-3][seed % 5]
            center = body_linear @ local + body_shift
        span = rng.normal(size=3)
        if draw == 2:
            span = body_linear @ np.where(np.arange(3) == axis, 0.0, rng.normal(size=3))
        for prop, type_, value in (
            ("center", Sdf.ValueTypeNames.Point3d, Gf.Vec3d(*center.tolist())),
            ("spanAxis", Sdf.ValueTypeNames.Vector3d, Gf.Vec3d(*span.tolist())),
            ("upRange", Sdf.ValueTypeNames.Double, float(rng.choice([0.2, 0.02, 1e-3]))),
        ):
            obj.CreateAttribute(f"gripperSlot:{name}:{prop}", type_).Set(value)
    stage.Save()
    return names


def _cast_findings(path: Path, names: list[str]) -> set[tuple[str, str]]:
    """What GS.009 found before its certified pass: read the surface, cast every slot."""
    stage = Usd.Stage.Open(str(path))
    prim = stage.GetPrimAtPath("/Obj")
    mpu = UsdGeom.GetStageMetersPerUnit(stage)
    surface = read_object_surface(prim)
    get = prim.GetAttribute
    centers = [get(f"gripperSlot:{n}:center").Get() for n in names]
    spans = [get(f"gripperSlot:{n}:spanAxis").Get() for n in names]
    ups = [get(f"gripperSlot:{n}:upRange").Get() for n in names]
    world = compute_world_transform(prim, meters_per_unit=mpu)
    misses, outside = compute_slot_surface_problems(
        np.array(centers), np.array(spans), ups, world, mpu, surface.vertices, surface.faces
    )
    found = {(n, "meet") for n, m in zip(names, misses, strict=True) if m}
    return found | {(n, "outside") for n, o in zip(names, outside, strict=True) if o}


def _rule_findings(path: Path) -> set[tuple[str, str]]:
    issues = validate(str(path), rules=["GS.009"]).issues
    assert all(i.severity == "failure" for i in issues), [i.message for i in issues]
    return {
        (i.message.split("'")[1], "meet" if "does not meet" in i.message else "outside")
        for i in issues
    }


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_rule_finds_what_the_cast_finds(tmp_path: Path, kind: str, how: str, seed: int) -> None:
    path = tmp_path / "obj.usda"
    names = _write_stage(path, kind, how, seed + 10 * KINDS.index(kind))
    assert _rule_findings(path) == _cast_findings(path, names)


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("seed", range(10))
def test_rule_finds_what_the_cast_finds_near_a_cube_face(
    tmp_path: Path, how: str, seed: int
) -> None:
    path = tmp_path / "obj.usda"
    names = _write_stage(path, "Cube", how, 100 + seed, near=True)
    assert _rule_findings(path) == _cast_findings(path, names)


def test_rule_casts_no_triangles_for_cubes_that_pass(tmp_path: Path, monkeypatch) -> None:
    """The benchmark's case: slots along a Cube's top face, centimetres; no triangles built."""
    path = tmp_path / "obj.usda"
    path.write_text(
        '#usda 1.0\n(\n    metersPerUnit = 0.01\n    upAxis = "Z"\n)\n'
        'def Xform "Obj" (\n    prepend apiSchemas = ["GripperSlotAPI:a", "GripperSlotAPI:b"]\n)\n'
        "{\n    point3d gripperSlot:a:center = (-0.195, 0, 0.15)\n"
        "    vector3d gripperSlot:a:spanAxis = (1, 0, 0)\n"
        "    point3d gripperSlot:b:center = (0.195, 0, 0.15)\n"
        "    vector3d gripperSlot:b:spanAxis = (-1, 0, 0)\n"
        "    double3 xformOp:translate = (3.27, 1, 0)\n"
        '    uniform token[] xformOpOrder = ["xformOp:translate"]\n'
        '    def Cube "body"\n    {\n        double size = 0.3\n    }\n}\n'
    )
    built = []

    def counting(prim, shapes):
        built.append(prim.GetPath())
        return compute_object_surface(prim, shapes)

    compute_object_surface = slot_rules.compute_object_surface
    monkeypatch.setattr(slot_rules, "compute_object_surface", counting)
    assert validate(str(path), rules=["GS.009"]).issues == [] and built == []
    # Lifted off the cube: the cast decides, and finds both lines missing.
    path.write_text(path.read_text().replace(", 0.15)", ", 0.16)"))
    issues = validate(str(path), rules=["GS.009"]).issues
    assert [
        i.message.count("does not meet the surface of </Obj> (12 triangles") for i in issues
    ] == [1, 1]
    assert len(built) == 1


@pytest.mark.parametrize("mpu", [1.0, 0.01, 0.0254])
def test_box_shapes_are_the_collision_readers_floats(
    tmp_path: Path, mpu: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """read_axis_aligned_box gives the general path's sizes and poses, bit for bit."""
    rng = np.random.default_rng(int(mpu * 1000))
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(stage, mpu)
    obj = UsdGeom.Xform.Define(stage, "/Obj")
    obj.AddTranslateOp().Set(Gf.Vec3d(*rng.normal(scale=100, size=3).tolist()))
    obj.AddScaleOp().Set(Gf.Vec3d(*rng.uniform(0.1, 10, size=3).tolist()))
    for n in range(3):
        cube = UsdGeom.Cube.Define(stage, f"/Obj/part_{n}/cube")
        cube.GetSizeAttr().Set(float(rng.uniform(0.01, 3)))
        cube.AddTranslateOp().Set(Gf.Vec3d(*rng.normal(size=3).tolist()))
        cube.AddScaleOp().Set(Gf.Vec3f(*rng.uniform(0.1, 10, size=3).tolist()))
    UsdGeom.Cube.Define(stage, "/Obj/guide").GetPurposeAttr().Set(UsdGeom.Tokens.guide)
    prim = stage.GetPrimAtPath("/Obj")
    cubes = [stage.GetPrimAtPath(f"/Obj/part_{n}/cube") for n in range(3)]
    boxes = [read_axis_aligned_box(cube) for cube in cubes]
    fast = read_collision_shapes(prim, prefer_collision=False)
    monkeypatch.setattr(geometry, "read_axis_aligned_box", lambda prim, cache=None: None)
    shapes = read_collision_shapes(prim, prefer_collision=False)  # the general path only
    assert len(boxes) == len(fast) == len(shapes) == 3 and None not in boxes
    for box, quick, shape in zip(boxes, fast, shapes, strict=True):
        assert box.kind == quick.kind == shape.kind == "box" and box.path == shape.path
        assert box.params == quick.params == shape.params
        assert np.array_equal(box.pose, shape.pose) and np.array_equal(quick.pose, shape.pose)


@pytest.mark.parametrize(
    "edit",
    ["rotated", "mirrored", "sphere", "mesh", "zero size", "far", "nan"],
)
def test_box_shapes_leave_anything_else_to_the_full_reader(edit: str) -> None:
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.Xform.Define(stage, "/Obj")
    cube = UsdGeom.Cube.Define(stage, "/Obj/cube")
    if edit == "rotated":
        cube.AddRotateZOp().Set(30.0)
    elif edit == "mirrored":
        cube.AddScaleOp().Set(Gf.Vec3d(-1, 1, 1))
    elif edit == "sphere":
        UsdGeom.Sphere.Define(stage, "/Obj/ball")
    elif edit == "mesh":
        UsdGeom.Mesh.Define(stage, "/Obj/mesh")
    elif edit == "zero size":
        cube.GetSizeAttr().Set(0.0)
    else:
        cube.AddTranslateOp().Set(Gf.Vec3d(1e12 if edit == "far" else float("nan"), 0, 0))
    declined = {"sphere": "/Obj/ball", "mesh": "/Obj/mesh"}.get(edit, "/Obj/cube")
    assert read_axis_aligned_box(stage.GetPrimAtPath(declined)) is None
