"""UsdGeom primitives tessellated once: every reader sees the same closed triangles."""

from __future__ import annotations

import numpy as np
import pytest

from usdgrip.errors import GripperError
from usdgrip.usd.geometry import check_manifold, read_collision_shapes, read_object_mesh


@pytest.mark.parametrize(
    ("body", "low", "high"),
    [
        ('def Cube "p"\n{\n double size = 0.2\n}', (-0.1, -0.1, -0.1), (0.1, 0.1, 0.1)),
        ('def Sphere "p"\n{\n double radius = 0.1\n}', (-0.1, -0.1, -0.1), (0.1, 0.1, 0.1)),
        (
            'def Cylinder "p"\n{\n double radius = 0.1\n double height = 0.4\n uniform token axis = "X"\n}',
            (-0.2, -0.1, -0.1),
            (0.2, 0.1, 0.1),
        ),
        (
            'def Capsule "p"\n{\n double radius = 0.1\n double height = 0.4\n}',
            (-0.1, -0.1, -0.3),
            (0.1, 0.1, 0.3),
        ),
        (
            'def Cone "p"\n{\n double radius = 0.1\n double height = 0.4\n uniform token axis = "Y"\n}',
            (-0.1, -0.2, -0.1),
            (0.1, 0.2, 0.1),
        ),
    ],
)
def test_each_primitive_reads_as_a_closed_mesh_of_its_size(open_usda, body, low, high):
    stage = open_usda(f'def Xform "Obj"\n{{\n {body}\n}}')
    mesh = read_object_mesh(stage.GetPrimAtPath("/Obj"))
    assert mesh.source_paths == ("/Obj/p",)
    assert check_manifold(mesh) == []  # closed, manifold, outward: antipodal and inside tests
    np.testing.assert_allclose(mesh.vertices.min(axis=0), low, atol=2e-3)
    np.testing.assert_allclose(mesh.vertices.max(axis=0), high, atol=2e-3)


def test_a_cone_points_along_its_axis_as_usd_defines_it(open_usda):
    stage = open_usda('def Cone "c"\n{\n double radius = 0.1\n double height = 0.4\n}')
    mesh = read_object_mesh(stage.GetPrimAtPath("/c"))
    apex = mesh.vertices[np.argmax(mesh.vertices[:, 2])]
    np.testing.assert_allclose(apex, (0, 0, 0.2), atol=1e-12)  # apex at +height/2, centred
    base = mesh.vertices[np.isclose(mesh.vertices[:, 2], -0.2)]
    assert np.allclose(np.linalg.norm(base[:, :2], axis=1).max(), 0.1)


def test_the_collision_scene_tessellates_a_cone_with_the_same_triangles(open_usda):
    stage = open_usda('def Cone "c"\n{\n double radius = 0.1\n double height = 0.4\n}')
    (shape,) = read_collision_shapes(stage)
    assert shape.kind == "mesh" and shape.params == {"tessellated_from": "cone"}
    mesh = read_object_mesh(stage.GetPrimAtPath("/c"), frame="world")
    np.testing.assert_allclose(shape.mesh.vertices, mesh.vertices, atol=1e-12)


def test_meshes_and_primitives_combine_and_scale(open_usda):
    stage = open_usda(
        'def Xform "Obj"\n{\n'
        ' def Cube "a"\n {\n double size = 1\n float3 xformOp:scale = (0.1, 0.2, 0.3)\n'
        '  uniform token[] xformOpOrder = ["xformOp:scale"]\n }\n'
        ' def Sphere "b"\n {\n double radius = 0.05\n double3 xformOp:translate = (1, 0, 0)\n'
        '  uniform token[] xformOpOrder = ["xformOp:translate"]\n }\n}'
    )
    mesh = read_object_mesh(stage.GetPrimAtPath("/Obj"))
    assert mesh.source_paths == ("/Obj/a", "/Obj/b")
    np.testing.assert_allclose(mesh.vertices.min(axis=0), (-0.05, -0.1, -0.15), atol=1e-9)
    np.testing.assert_allclose(mesh.vertices.max(axis=0)[0], 1.05, atol=1e-3)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            'def Cube "p"\n{\n double size = 0\n}',
            r"</Obj/p>: size is 0\.0; expected a finite value > 0",
        ),
        (
            'def Sphere "p"\n{\n double radius = -1\n}',
            r"radius is -1\.0; expected a finite value > 0",
        ),
        ('def Cube "p"\n{\n string size = "big"\n}', r"size is 'big'; expected a finite value > 0"),
        ('def Capsule "p"\n{\n uniform token axis = "W"\n}', r"axis is 'W'; expected X, Y or Z"),
        (
            'def Cube "p"\n{\n double size.timeSamples = { 1: 0.2 }\n}',
            r"</Obj/p>: size is time-sampled \(1 sample\(s\)\) with no default value",
        ),
    ],
)
def test_bad_primitive_dimensions_are_refused_naming_the_prim(open_usda, body, message):
    stage = open_usda(f'def Xform "Obj"\n{{\n {body}\n}}')
    with pytest.raises(GripperError, match=message):
        read_object_mesh(stage.GetPrimAtPath("/Obj"))
