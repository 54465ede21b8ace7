"""usd.geometry: meshes and primitives read from real stages in tmp_path."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import trimesh
from pxr import Usd, UsdGeom

from usdgrip.errors import GripperError
from usdgrip.usd.geometry import (
    TriangleMesh,
    check_manifold,
    compute_fan_triangles,
    compute_shape_mesh,
    read_collision_shapes,
    read_object_mesh,
)
from usdgrip.usd.stage import open_stage

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# A unit cube as 6 quads, counter-clockwise seen from outside.
CUBE = """
        int[] faceVertexCounts = [4, 4, 4, 4, 4, 4]
        int[] faceVertexIndices = [0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7]
        point3f[] points = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]
"""
# The same cube wound clockwise seen from outside, as a leftHanded mesh authors it.
CUBE_CW = CUBE.replace(
    "[0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7]",
    "[0, 1, 2, 3, 4, 7, 6, 5, 0, 4, 5, 1, 1, 5, 6, 2, 2, 6, 7, 3, 3, 7, 4, 0]",
)


def _mesh(name: str, body: str = CUBE, extra: str = "") -> str:
    return f'def Mesh "{name}"\n    {{\n{body}\n{extra}\n    }}'


def _volume(mesh: TriangleMesh) -> float:
    # Divergence theorem: V = sum over triangles of v0 . (v1 x v2) / 6.
    v0, v1, v2 = (mesh.vertices[mesh.faces[:, i]] for i in range(3))
    return float(np.einsum("ij,ij->", v0, np.cross(v1, v2)) / 6.0)


def test_fan_triangulation_of_triangle_quad_and_pentagon():
    counts = np.array([3, 4, 5])
    indices = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    tris = compute_fan_triangles(counts, indices)
    assert tris.tolist() == [
        [0, 1, 2],
        [3, 4, 5],
        [3, 5, 6],
        [7, 8, 9],
        [7, 9, 10],
        [7, 10, 11],
    ]


def test_quads_and_pentagon_read_with_outward_winding(open_usda):
    # A square pyramid: a quad base and four triangles; then a pentagonal prism.
    pyramid = """
        int[] faceVertexCounts = [4, 3, 3, 3, 3]
        int[] faceVertexIndices = [0, 3, 2, 1, 0, 1, 4, 1, 2, 4, 2, 3, 4, 3, 0, 4]
        point3f[] points = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0.5, 0.5, 1)]
    """
    angles = np.arange(5) * 2 * math.pi / 5
    ring = [(math.cos(a), math.sin(a)) for a in angles]
    pts = [(x, y, 0.0) for x, y in ring] + [(x, y, 1.0) for x, y in ring]
    faces = [[4, 3, 2, 1, 0], [5, 6, 7, 8, 9]]
    faces += [[i, (i + 1) % 5, 5 + (i + 1) % 5, 5 + i] for i in range(5)]
    prism = (
        f"int[] faceVertexCounts = {[len(f) for f in faces]}\n"
        f"int[] faceVertexIndices = {[i for f in faces for i in f]}\n"
        f"point3f[] points = [{', '.join(str(p) for p in pts)}]\n"
    )
    stage = open_usda(
        f"""
        def Xform "Obj"
        {{
            {_mesh("pyramid", pyramid)}
            def Xform "far" {{
                double3 xformOp:translate = (5, 0, 0)
                uniform token[] xformOpOrder = ["xformOp:translate"]
                {_mesh("prism", prism)}
            }}
        }}
        """
    )
    mesh = read_object_mesh(stage.GetPrimAtPath("/Obj"))
    assert mesh.source_paths == ("/Obj/pyramid", "/Obj/far/prism")
    assert mesh.faces.shape == (6 + 3 * 2 + 5 * 2, 3)
    assert mesh.faces.dtype == np.int64 and mesh.vertices.dtype == np.float64
    assert np.bincount(mesh.face_source).tolist() == [6, 16]
    pentagon_area = 5 / 2 * math.sin(2 * math.pi / 5)
    assert _volume(mesh) == pytest.approx(1 / 3 + pentagon_area, rel=1e-6)
    assert check_manifold(mesh) == []
    assert mesh.vertices[:, 0].max() == pytest.approx(6.0)


def test_nested_rotated_scaled_transforms_object_and_world_frames(open_usda):
    stage = open_usda(
        f"""
        def Xform "World" {{
            double3 xformOp:translate = (10, 0, 0)
            uniform token[] xformOpOrder = ["xformOp:translate"]
            def Xform "Obj" {{
                double3 xformOp:rotateXYZ = (0, 0, 90)
                uniform token[] xformOpOrder = ["xformOp:rotateXYZ"]
                def Xform "part" {{
                    double3 xformOp:translate = (1, 0, 0)
                    float3 xformOp:scale = (2, 3, 4)
                    uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
                    {_mesh("box")}
                }}
            }}
        }}
        """
    )
    obj = stage.GetPrimAtPath("/World/Obj")
    local = read_object_mesh(obj)
    np.testing.assert_allclose(local.vertices.min(0), [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(local.vertices.max(0), [3, 3, 4], atol=1e-12)
    assert _volume(local) == pytest.approx(24.0)
    world = read_object_mesh(obj, frame="world")
    # Rotated 90 deg about Z: object x -> world y, object y -> world -x; then +10 in x.
    np.testing.assert_allclose(world.vertices.min(0), [10 - 3, 1, 0], atol=1e-9)
    np.testing.assert_allclose(world.vertices.max(0), [10, 3, 4], atol=1e-9)
    assert _volume(world) == pytest.approx(24.0)


def test_centimetre_stage_reads_metres_and_mirror_keeps_outward_normals(open_usda):
    body = f"""#usda 1.0
(
    metersPerUnit = 0.01
    upAxis = "Z"
)
def Xform "Obj" {{
    def Xform "mirror" {{
        float3 xformOp:scale = (-1, 1, 1)
        uniform token[] xformOpOrder = ["xformOp:scale"]
        {_mesh("box")}
    }}
    {_mesh("left", CUBE_CW, 'uniform token orientation = "leftHanded"')}
}}
"""
    stage = open_usda(body)
    mesh = read_object_mesh(stage.GetPrimAtPath("/Obj"), frame="world")
    np.testing.assert_allclose(mesh.vertices.min(0), [-0.01, 0, 0], atol=1e-12)
    np.testing.assert_allclose(mesh.vertices.max(0), [0.01, 0.01, 0.01], atol=1e-12)
    # Mirror and left-handed winding both flipped back: positive volume for each cube.
    assert _volume(mesh) == pytest.approx(2e-6)
    assert check_manifold(mesh) == []


def test_hole_faces_dropped_guide_and_inactive_meshes_skipped(open_usda):
    stage = open_usda(
        f"""
        def Xform "Obj" {{
            {_mesh("box", CUBE, "int[] holeIndices = [1]")}
            {_mesh("guide", CUBE, 'uniform token purpose = "guide"')}
            def Xform "annotations" {{
                uniform token purpose = "guide"
                {_mesh("inherits_guide")}
            }}
            def Xform "off" (active = false) {{
                {_mesh("inactive")}
            }}
        }}
        """
    )
    mesh = read_object_mesh(stage.GetPrimAtPath("/Obj"))
    assert mesh.source_paths == ("/Obj/box",)
    assert len(mesh.faces) == 10
    problems = check_manifold(mesh)
    assert len(problems) == 1
    assert problems[0].startswith("</Obj/box>: not watertight: 4 boundary edge(s)")


def test_no_mesh_is_an_error_naming_the_prim(open_usda):
    stage = open_usda('def Xform "Obj" {\n def BasisCurves "c" {\n }\n}')
    with pytest.raises(GripperError, match=r"<\/Obj>: no UsdGeom.Mesh with faces"):
        read_object_mesh(stage.GetPrimAtPath("/Obj"))


def test_bad_frame_argument():
    with pytest.raises(ValueError, match="frame is 'local'; expected 'object' or 'world'"):
        read_object_mesh(None, frame="local")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            """int[] faceVertexCounts = [3]
            int[] faceVertexIndices = [0, 1, 7]
            point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]""",
            r"<\/Obj\/bad>: faceVertexIndices\[2\] is 7; expected 0 to 2 \(the mesh has 3 points\)",
        ),
        (
            """int[] faceVertexCounts = [4]
            int[] faceVertexIndices = [0, 1, 2]
            point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]""",
            r"<\/Obj\/bad>: faceVertexCounts sum to 4 but faceVertexIndices has 3 entries",
        ),
        (
            """int[] faceVertexCounts = [3, 2]
            int[] faceVertexIndices = [0, 1, 2, 0, 1]
            point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]""",
            r"<\/Obj\/bad>: faceVertexCounts\[1\] is 2; expected >= 3",
        ),
        (
            """int[] faceVertexCounts = [3]
            int[] faceVertexIndices = [0, 1, 2]
            point3f[] points = [(0, 0, 0), (1, 0, 0), (0, nan, 0)]""",
            r"<\/Obj\/bad>: points\[2\] is \[0.0, nan, 0.0\]; expected finite",
        ),
    ],
    ids=["index-out-of-range", "counts-sum", "face-too-small", "nan-point"],
)
def test_bad_topology_errors(open_usda, body, message):
    stage = open_usda(f'def Xform "Obj" {{\n{_mesh("bad", body)}\n}}')
    with pytest.raises(GripperError, match=message):
        read_object_mesh(stage.GetPrimAtPath("/Obj"))
    with pytest.raises(GripperError, match=message):
        read_collision_shapes(stage)


def test_check_manifold_open_fin_flipped_and_split_seams():
    box = trimesh.creation.box(extents=[1, 1, 1])
    closed = TriangleMesh(box.vertices, box.faces, ("/box",))
    assert check_manifold(closed) == []
    # Split every triangle's corners (a mesh exported with per-face vertices): still closed.
    split = TriangleMesh(box.vertices[box.faces.reshape(-1)], np.arange(36).reshape(12, 3), ("/s",))
    assert check_manifold(split) == []
    open_box = TriangleMesh(box.vertices, box.faces[:-1], ("/open",))
    assert check_manifold(open_box) == [
        "</open>: not watertight: 3 boundary edge(s) used by only one triangle; expected a "
        "closed surface (close the holes or add the missing faces)"
    ]
    fin = np.vstack([box.faces, [[0, 1, 2], [0, 2, 1]]])
    problems = check_manifold(TriangleMesh(box.vertices, fin, ("/fin",)))
    assert any("not manifold" in p and "shared by more than two triangles" in p for p in problems)
    flipped_faces = box.faces.copy()
    flipped_faces[0] = flipped_faces[0][::-1]
    problems = check_manifold(TriangleMesh(box.vertices, flipped_faces, ("/flip",)))
    assert problems == [
        "</flip>: inconsistent winding: 3 edge(s) walked in the same direction by both faces; "
        "expected all faces wound counter-clockwise seen from outside"
    ]


def test_examples_are_closed():
    for name, path in (("mug.usda", "/Mug"), ("tote.usda", "/Tote")):
        stage = open_stage(EXAMPLES / name)
        mesh = read_object_mesh(stage.GetPrimAtPath(path))
        assert check_manifold(mesh) == [], name


PRIMITIVES = """
def Xform "Scene" {
    def Cube "table" {
        double size = 1
        double3 xformOp:translate = (0, 0, -0.5)
        float3 xformOp:scale = (2, 1, 0.1)
        uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
    }
    def Sphere "ball" {
        double radius = 0.5
        double3 xformOp:translate = (1, 2, 3)
        float3 xformOp:scale = (2, 2, 2)
        uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
    }
    def Sphere "egg" {
        double radius = 1
        float3 xformOp:scale = (1, 1, 2)
        uniform token[] xformOpOrder = ["xformOp:scale"]
    }
    def Cylinder "post" {
        double radius = 0.1
        double height = 2
        uniform token axis = "X"
        double3 xformOp:rotateXYZ = (0, 0, 90)
        float3 xformOp:scale = (3, 2, 2)
        uniform token[] xformOpOrder = ["xformOp:rotateXYZ", "xformOp:scale"]
    }
    def Capsule "pill" {
        double radius = 0.25
        double height = 1
        uniform token axis = "Y"
    }
    def Mesh "guide" (
    ) {
        uniform token purpose = "guide"
    }
    def Xform "deco" (active = false) {
        def Cube "c" {
        }
    }
"""


def test_primitives_keep_analytic_form_with_scale_folded_in(open_usda):
    stage = open_usda(PRIMITIVES + _mesh("wall") + "\n}")
    shapes = {s.path: s for s in read_collision_shapes(stage)}
    assert list(shapes) == [
        "/Scene/table",
        "/Scene/ball",
        "/Scene/egg",
        "/Scene/post",
        "/Scene/pill",
        "/Scene/wall",
    ]
    table = shapes["/Scene/table"]
    assert table.kind == "box" and table.mesh is None
    np.testing.assert_allclose(table.params["size"], [2, 1, 0.1])
    np.testing.assert_allclose(
        table.pose,
        np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, -0.5], [0, 0, 0, 1]]),
        atol=1e-12,
    )
    ball = shapes["/Scene/ball"]
    assert ball.kind == "sphere" and ball.params == {"radius": pytest.approx(1.0)}
    np.testing.assert_allclose(ball.pose[:3, 3], [1, 2, 3])
    post = shapes["/Scene/post"]
    assert post.kind == "cylinder" and post.params["axis"] == "X"
    assert post.params["radius"] == pytest.approx(0.2) and post.params["height"] == pytest.approx(6)
    np.testing.assert_allclose(post.pose[:3, 0], [0, 1, 0], atol=1e-12)  # local X -> world Y
    assert np.linalg.det(post.pose[:3, :3]) == pytest.approx(1.0)
    pill = shapes["/Scene/pill"]
    assert pill.kind == "capsule"
    assert pill.params == {"radius": 0.25, "height": 1.0, "axis": "Y"}
    wall = shapes["/Scene/wall"]
    assert wall.kind == "mesh" and wall.params == {} and len(wall.mesh.faces) == 12


def test_non_uniform_sphere_is_tessellated_in_shape_frame(open_usda):
    stage = open_usda(PRIMITIVES + "}")
    egg = {s.path: s for s in read_collision_shapes(stage)}["/Scene/egg"]
    assert egg.kind == "mesh" and egg.params == {"tessellated_from": "sphere"}
    np.testing.assert_allclose(egg.pose, np.eye(4), atol=1e-12)
    extent = np.ptp(egg.mesh.vertices, axis=0)
    np.testing.assert_allclose(extent, [2, 2, 4], rtol=1e-2)
    assert check_manifold(egg.mesh) == []
    assert _volume(egg.mesh) == pytest.approx(4 / 3 * math.pi * 2, rel=0.03)


def test_tessellated_capsule_and_cylinder_follow_axis(open_usda):
    stage = open_usda(PRIMITIVES + "}")
    shapes = {s.path: s for s in read_collision_shapes(stage)}
    pill = compute_shape_mesh(shapes["/Scene/pill"])
    np.testing.assert_allclose(np.ptp(pill.vertices, axis=0), [0.5, 1.5, 0.5], rtol=1e-3)
    post = compute_shape_mesh(shapes["/Scene/post"])
    np.testing.assert_allclose(np.ptp(post.vertices, axis=0), [6, 0.4, 0.4], rtol=1e-3)
    assert _volume(post) > 0


def test_collision_api_prims_are_preferred_when_present(open_usda):
    stage = open_usda(
        """
        def Xform "Scene" {
            def Cube "visual" {}
            def Cube "collider" (prepend apiSchemas = ["PhysicsCollisionAPI"]) {}
            def Sphere "disabled" (prepend apiSchemas = ["PhysicsCollisionAPI"]) {
                bool physics:collisionEnabled = 0
            }
        }
        """
    )
    assert [s.path for s in read_collision_shapes(stage)] == ["/Scene/collider"]
    everything = read_collision_shapes(stage, prefer_collision=False)
    assert [s.path for s in everything] == ["/Scene/visual", "/Scene/collider", "/Scene/disabled"]
    # Scoped to a prim: the rule looks only inside the scope.
    assert [s.path for s in read_collision_shapes(stage.GetPrimAtPath("/Scene/visual"))] == [
        "/Scene/visual"
    ]


def test_object_prim_that_is_itself_a_mesh(open_usda):
    translate = (
        "double3 xformOp:translate = (0, 0, 2)\n"
        'uniform token[] xformOpOrder = ["xformOp:translate"]'
    )
    body = _mesh("Obj", CUBE, translate)
    stage = open_usda(f'def Xform "Root" {{\n{body}\n}}')
    prim = stage.GetPrimAtPath("/Root/Obj")
    local = read_object_mesh(prim)
    world = read_object_mesh(prim, frame="world")
    assert local.source_paths == ("/Root/Obj",)
    np.testing.assert_allclose(local.vertices.min(0), [0, 0, 0])
    np.testing.assert_allclose(world.vertices.min(0), [0, 0, 2])


@pytest.mark.parametrize("width", [0, 3, 15, 16, 17, 40])
def test_shapes_keep_the_prim_range_order_on_either_side_of_the_hand_walk(width: int) -> None:
    """Small subtrees are walked by hand, larger ones by one PrimRange: the same shapes in the
    same order either way, guides, inactive prims and their subtrees left out."""
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.Xform.Define(stage, "/Obj")
    for n in range(width):
        part = UsdGeom.Xform.Define(stage, f"/Obj/part_{n}")
        UsdGeom.Cube.Define(stage, f"/Obj/part_{n}/cube")
        UsdGeom.Sphere.Define(stage, f"/Obj/part_{n}/nested/ball")
        if n % 5 == 1:
            part.CreatePurposeAttr(UsdGeom.Tokens.guide)
        if n % 7 == 3:
            stage.GetPrimAtPath(f"/Obj/part_{n}/nested").SetActive(False)
    expected = [
        str(prim.GetPath())
        for prim in Usd.PrimRange(stage.GetPrimAtPath("/Obj"))
        if prim.IsA(UsdGeom.Gprim)
        and UsdGeom.Imageable(prim).ComputePurpose() != UsdGeom.Tokens.guide
    ]
    shapes = read_collision_shapes(stage.GetPrimAtPath("/Obj"), prefer_collision=False)
    assert [shape.path for shape in shapes] == expected
    assert len(expected) == 2 * width - sum(1 for n in range(width) if n % 5 == 1) * 2 - sum(
        1 for n in range(width) if n % 7 == 3 and n % 5 != 1
    )
