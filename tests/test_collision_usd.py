"""Collision scenes and gripper models read from real USD stages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from usdgrip.grasping.collision import CollisionScene, GripperCollisionModel, SceneExclusions, Shape
from usdgrip.usd.geometry import read_collision_shapes
from usdgrip.usd.sites import find_gripper_sites
from usdgrip.usd.stage import open_stage

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

SCENE = """
def Xform "World" {
    def Cube "box" {
        double size = 0.1
        double3 xformOp:translate = (0.5, 0, 0)
        float3 xformOp:scale = (1, 2, 1)
        uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
    }
    def Sphere "ball" {
        double radius = 0.05
        double3 xformOp:translate = (0, 0.5, 0)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }
    def Capsule "rod" {
        double radius = 0.01
        double height = 0.4
        uniform token axis = "X"
        double3 xformOp:translate = (0, -0.5, 0)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }
    def Mesh "room" {
        int[] faceVertexCounts = [4, 4, 4, 4, 4, 4]
        int[] faceVertexIndices = [0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7]
        point3f[] points = [(-1, -1, 4), (1, -1, 4), (1, 1, 4), (-1, 1, 4), (-1, -1, 6), (1, -1, 6), (1, 1, 6), (-1, 1, 6)]
    }
}
"""


def pose(x: float = 0.0, y: float = 0.0, z: float = 0.0) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


@pytest.fixture
def scene(open_usda) -> CollisionScene:
    return CollisionScene.from_usd(open_usda(SCENE))


def test_from_usd_names_obstacles_by_prim_path(scene):
    assert [scene.name_of(i) for i in scene.ids] == [
        "/World/box",
        "/World/ball",
        "/World/rod",
        "/World/room",
    ]
    assert scene.attached_ids == ()
    np.testing.assert_allclose(
        2 * scene.shape_of(scene.find("/World/box")).half_extents, (0.1, 0.2, 0.1)
    )
    with pytest.raises(ValueError, match=r"no object named '/World/nope'.*'/World/box'"):
        scene.find("/World/nope")


# Proxy gripper (0.08 opening): palm x in [G.x - 0.05, G.x + 0.05], z in [G.z - 0.06, G.z - 0.04];
# fingers x in +-[0.04, 0.05] about G.x, z in [G.z - 0.04, G.z + 0.01]; |y - G.y| <= 0.01.
# Box x in [0.45, 0.55], y in [-0.1, 0.1], z in [-0.05, 0.05] (size 0.1, Y scaled by 2).
@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (pose(0.401), "/World/box"),  # right finger reaches x = 0.451
        (pose(0.399), None),  # 1 mm short of the box face
        (pose(0.5, 0.109), "/World/box"),  # Y scale honoured: box reaches y = 0.1
        (pose(0.5, 0.111), None),
        (pose(0.0, 0.5), "/World/ball"),  # r = 0.05 ball between pads 0.04 from the centre
        (pose(0.259, -0.5), "/World/rod"),  # capsule along X reaches x = 0.21
        (pose(0.261, -0.5), None),
        (pose(0.0, 0.0, 5.0), "/World/room"),  # wholly inside the closed mesh
    ],
    ids=[
        "box x hit",
        "box x 1 mm",
        "box y hit",
        "box y 1 mm",
        "ball",
        "rod hit",
        "rod 1 mm",
        "room",
    ],
)
def test_gripper_against_usd_obstacles(scene, where, expected):
    gripper = GripperCollisionModel.proxy(0.08, 0.02)
    contact = scene.check_gripper(gripper, where).first_contact[0]
    if expected is None:
        assert contact is None
    else:
        assert contact.partner_name == expected
        assert contact.inside == (expected == "/World/room")


def test_example_gripper_meshes_become_the_model():
    stage = open_stage(EXAMPLES / "gripper.usda")
    (site,) = find_gripper_sites(stage)
    shapes = read_collision_shapes(stage.GetPrimAtPath("/Gripper"))
    model = GripperCollisionModel.from_site(site, shapes)
    assert model.source == "meshes"
    assert model.names == ("/Gripper/palm", "/Gripper/finger_left", "/Gripper/finger_right")
    assert model.finger_indices == (1, 2)
    # In G the right finger's inner face is at x = 0.0425 and its tip at z = 0.015.
    right = model.shapes[2]
    verts = right.shape.vertices @ right.frame_from_shape[:3, :3].T + right.frame_from_shape[:3, 3]
    assert verts[:, 0].min() == pytest.approx(0.0425, abs=1e-6)
    assert verts[:, 2].max() == pytest.approx(0.015, abs=1e-6)
    # A box between the pads fits at 0.084 and hits at 0.086 (max opening 0.085).
    for width, hit in ((0.084, False), (0.086, True)):
        scene = CollisionScene()
        scene.add_obstacle(Shape.box((width, 0.01, 0.02)))
        assert scene.check_gripper(model, pose()).collides.tolist() == [hit]
    # Exclusions index the model's shapes: 3 shapes, index 3 is rejected.
    scene = CollisionScene()
    part = scene.add_attached(0, Shape.sphere(0.01))
    with pytest.raises(ValueError, match="robot shape index 3 does not exist; the robot has 3"):
        scene.check_gripper(model, pose(), SceneExclusions().robot(part, 3))
