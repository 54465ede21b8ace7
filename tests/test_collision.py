"""Collision scene (seed 002): hand-computable box cases, closed meshes, attach/detach,
exclusions and the retreat check.

Proxy gripper used throughout (``GripperCollisionModel.proxy(0.08, 0.02)``), in G:
fingers 0.01 x 0.02 x 0.05 with inner faces at x = -0.04 / +0.04 and z in
[-0.04, 0.01]; palm 0.10 x 0.02 x 0.02 with z in [-0.06, -0.04].
"""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from usdgrip.errors import GripperError
from usdgrip.frames import compute_axis_angle_rotation
from usdgrip.grasping.collision import (
    CollisionScene,
    Exclusion,
    ExclusionError,
    GripperCollisionModel,
    ObjectId,
    RobotShape,
    SceneExclusions,
    Shape,
)
from usdgrip.grasping.collision import queries as collision_queries


def pose(x: float = 0.0, y: float = 0.0, z: float = 0.0, rotation=None) -> np.ndarray:
    m = np.eye(4)
    if rotation is not None:
        m[:3, :3] = rotation
    m[:3, 3] = (x, y, z)
    return m


def rot(axis, degrees: float) -> np.ndarray:
    axis = np.asarray(axis, float)
    return compute_axis_angle_rotation(axis / np.linalg.norm(axis), np.radians(degrees))


@pytest.fixture
def gripper() -> GripperCollisionModel:
    return GripperCollisionModel.proxy(0.08, 0.02)


# ------------------------------------------------------------------ proxy model


def test_proxy_dimensions_are_as_documented(gripper):
    assert gripper.names == ("palm", "finger_left", "finger_right")
    assert gripper.finger_indices == (1, 2)
    palm, left, right = gripper.shapes
    np.testing.assert_allclose(2 * palm.shape.half_extents, (0.10, 0.02, 0.02))
    np.testing.assert_allclose(palm.frame_from_shape[:3, 3], (0, 0, -0.05))
    np.testing.assert_allclose(2 * left.shape.half_extents, (0.01, 0.02, 0.05))
    np.testing.assert_allclose(left.frame_from_shape[:3, 3], (-0.045, 0, -0.015))
    np.testing.assert_allclose(right.frame_from_shape[:3, 3], (0.045, 0, -0.015))


def test_proxy_from_example_site_uses_max_opening_and_pad_width(open_usda):
    from usdgrip.usd.sites import find_gripper_sites

    stage = open_usda(
        """
        def Xform "G" {
            def Xform "tcp" (prepend apiSchemas = ["GripperSiteAPI"]) {
                float gripper:maxOpening = 0.085
                double3 xformOp:translate = (0, 0, 0.13)
                uniform token[] xformOpOrder = ["xformOp:translate"]
                def BasisCurves "gripper_forward_axis" {
                    int[] curveVertexCounts = [2]
                    point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
                    uniform token type = "linear"
                }
                def BasisCurves "gripper_grip_line" {
                    int[] curveVertexCounts = [2]
                    point3f[] points = [(0, 0.011, 0), (0, -0.011, 0)]
                    uniform token type = "linear"
                }
            }
        }
        """
    )
    (site,) = find_gripper_sites(stage)
    model = GripperCollisionModel.from_site(site)
    assert model.source == "proxy"
    right = model.shapes[2]
    # Inner face at max_opening / 2, pad width along Y.
    inner = right.frame_from_shape[0, 3] - right.shape.half_extents[0]
    assert inner == pytest.approx(0.0425)
    assert 2 * right.shape.half_extents[1] == pytest.approx(0.022)


def test_from_site_without_max_opening_is_a_clear_error(open_usda):
    from usdgrip.usd.sites import find_gripper_sites

    stage = open_usda(
        """
        def Xform "tcp" (prepend apiSchemas = ["GripperSiteAPI"]) {
            def BasisCurves "gripper_forward_axis" {
                int[] curveVertexCounts = [2]
                point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
            }
        }
        """
    )
    (site,) = find_gripper_sites(stage)
    with pytest.raises(GripperError, match=r"</tcp>: gripper:maxOpening is None"):
        GripperCollisionModel.from_site(site)


def test_from_site_with_meshes_reexpresses_them_in_grasp_frame(open_usda):
    from usdgrip.usd.sites import find_gripper_sites

    stage = open_usda(
        """
        def Xform "tcp" (prepend apiSchemas = ["GripperSiteAPI"]) {
            float gripper:maxOpening = 0.08
            double3 xformOp:translate = (0, 0, 1)
            uniform token[] xformOpOrder = ["xformOp:translate"]
            def BasisCurves "gripper_forward_axis" {
                int[] curveVertexCounts = [2]
                point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
            }
            def BasisCurves "gripper_grip_line" {
                int[] curveVertexCounts = [2]
                point3f[] points = [(0, 0.01, 0), (0, -0.01, 0)]
            }
        }
        """
    )
    (site,) = find_gripper_sites(stage)
    cube = trimesh.creation.box((0.01, 0.02, 0.05))
    finger = Shape.mesh(cube.vertices, cube.faces)
    model = GripperCollisionModel.from_site(site, [("finger_a", finger, pose(0.045, 0, 1.0))])
    assert model.source == "meshes" and model.finger_indices == (0,)
    np.testing.assert_allclose(model.shapes[0].frame_from_shape[:3, 3], (0.045, 0, 0), atol=1e-12)
    scene = CollisionScene()
    scene.add_obstacle(Shape.box((0.01, 0.01, 0.01)), pose(0.045, 0, 0))
    assert scene.check_gripper(model, pose()).collides.tolist() == [True]
    assert scene.check_gripper(model, pose(0.1)).collides.tolist() == [False]


# ------------------------------------------------------------ box vs box cases

# Obstacle cube of edge 0.02 under the right fingertip (x = 0.045), beyond the tip
# (tip at z = 0.01): centre z = 0.01 + 0.01 + gap.


@pytest.mark.parametrize(
    ("gap", "expected"),
    [(-0.001, True), (0.0, True), (0.001, False), (0.05, False)],
    ids=["overlap 1 mm", "touching", "1 mm apart", "5 cm apart"],
)
def test_fingertip_against_box_at_known_distance(gripper, gap, expected):
    scene = CollisionScene()
    box = scene.add_obstacle(Shape.box((0.02, 0.02, 0.02)), pose(0.045, 0, 0.02 + gap), name="box")
    result = scene.check_gripper(gripper, pose())
    assert result.collides.tolist() == [expected]
    contact = result.first_contact[0]
    if expected:
        assert (contact.subject_kind, contact.subject) == ("robot", 2)
        assert (contact.partner_kind, contact.partner) == ("obstacle", box)
        assert not contact.inside
        assert contact.describe() == "robot shape 2 'finger_right' vs obstacle #1 'box'"
    else:
        assert contact is None


@pytest.mark.parametrize(("width", "expected"), [(0.078, False), (0.08, True), (0.082, True)])
def test_box_between_open_fingers(gripper, width, expected):
    # Inner faces at x = +-0.04: a 0.078 wide box fits with 1 mm either side.
    scene = CollisionScene()
    scene.add_obstacle(Shape.box((width, 0.02, 0.03)), pose(0, 0, -0.01))
    assert scene.check_gripper(gripper, pose()).collides.tolist() == [expected]


def test_palm_behind_the_fingers(gripper):
    scene = CollisionScene()
    scene.add_obstacle(Shape.box((0.02, 0.02, 0.02)), pose(0, 0, -0.06 - 0.01 - 0.001))
    scene.add_obstacle(Shape.box((0.02, 0.02, 0.02)), pose(0.3, 0, 0))
    result = scene.check_gripper(gripper, np.stack([pose(), pose(z=-0.0011)]))
    assert result.collides.tolist() == [False, True]
    assert result.first_contact[1].subject_name == "palm"


def test_rotated_gripper_and_batch(gripper):
    scene = CollisionScene()
    scene.add_obstacle(Shape.box((0.02, 0.02, 0.02)), pose(0, 0.045, 0.0))
    poses = np.stack(
        [
            pose(),  # fingers along X: the box at y = 0.045 is clear of them (y half 0.01)
            pose(rotation=rot((0, 0, 1), 90)),  # fingers now at y = +-0.045: hit
            pose(rotation=rot((0, 0, 1), 180)),  # back along X
            pose(z=0.2, rotation=rot((0, 0, 1), 90)),  # far above
        ]
    )
    result = scene.check_gripper(gripper, poses)
    assert result.collides.tolist() == [False, True, False, False]
    assert result.first_contact[1].subject_name == "finger_right"  # G's +X is world +Y


def test_results_are_invariant_under_a_common_rigid_motion(gripper):
    rng = np.random.default_rng(3)
    scene_a, scene_b = CollisionScene(), CollisionScene()
    motion = pose(0.3, -0.2, 0.5, rot((1, 2, 3), 37))
    cube = trimesh.creation.box((0.05, 0.05, 0.05))
    for scene, m in ((scene_a, np.eye(4)), (scene_b, motion)):
        scene.add_obstacle(Shape.box((0.03, 0.04, 0.05)), m @ pose(0.02, 0, 0))
        scene.add_obstacle(Shape.mesh(cube.vertices, cube.faces), m @ pose(-0.1, 0.05, 0))
    axes = rng.normal(size=(200, 3))
    poses = np.stack(
        [pose(*rng.uniform(-0.1, 0.1, 3), r) for r in rot_batch(axes, rng.uniform(0, 6, 200))]
    )
    a = scene_a.check_gripper(gripper, poses).collides
    b = scene_b.check_gripper(gripper, motion @ poses).collides
    assert 20 < a.sum() < 190  # a real mix of outcomes
    np.testing.assert_array_equal(a, b)


def rot_batch(axes, angles):
    axes = np.asarray(axes, float)
    return compute_axis_angle_rotation(axes / np.linalg.norm(axes, axis=1)[:, None], angles)


def test_matches_a_direct_fcl_loop(gripper):
    import fcl

    rng = np.random.default_rng(5)
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=0.05)
    scene = CollisionScene()
    scene.add_obstacle(Shape.mesh(sphere.vertices, sphere.faces), pose(0.01, 0, 0))
    poses = np.stack(
        [pose(*rng.uniform(-0.12, 0.12, 3), r) for r in rot_batch(rng.normal(size=(150, 3)), rng.uniform(0, 6, 150))]
    )  # fmt: skip
    ours = scene.check_gripper(gripper, poses).collides
    bvh = fcl.BVHModel()
    bvh.beginModel(len(sphere.vertices), len(sphere.faces))
    bvh.addSubModel(sphere.vertices, sphere.faces)
    bvh.endModel()
    target = fcl.CollisionObject(bvh, fcl.Transform(np.array([0.01, 0, 0])))
    boxes = [fcl.CollisionObject(fcl.Box(*(2 * s.shape.half_extents))) for s in gripper.shapes]
    direct = []
    for p in poses:
        hit = False
        for s, obj in zip(gripper.shapes, boxes, strict=True):
            m = p @ s.frame_from_shape
            obj.setTransform(fcl.Transform(m[:3, :3], m[:3, 3]))
            hit = hit or fcl.collide(obj, target) > 0
        direct.append(hit)
    direct = np.array(direct)
    # Every surface hit is ours too; ours adds only shapes wholly inside the closed ball.
    assert np.all(ours[direct])
    extra = ours & ~direct
    for i in np.flatnonzero(extra):
        centres = [(poses[i] @ s.frame_from_shape)[:3, 3] for s in gripper.shapes]
        assert any(np.linalg.norm(c - (0.01, 0, 0)) < 0.05 for c in centres)


# ---------------------------------------------------------------- closed meshes


def test_finger_wholly_inside_closed_mesh_collides(gripper):
    big = trimesh.creation.box((1.0, 1.0, 1.0))
    scene = CollisionScene()
    block = scene.add_obstacle(Shape.mesh(big.vertices, big.faces), name="block")
    # The whole gripper well inside a 1 m closed box: no surface within 0.4 m.
    result = scene.check_gripper(gripper, np.stack([pose(), pose(z=2.0)]))
    assert result.collides.tolist() == [True, False]
    contact = result.first_contact[0]
    assert contact.inside and contact.partner == block
    assert "inside closed mesh" in contact.describe()


def test_single_finger_inside_closed_mesh_collides(gripper):
    # A slab x in [0.03, 0.06], y in [-0.02, 0.02], z in [-0.1, 0.1] encloses the right
    # finger (x in [0.04, 0.05], y in [-0.01, 0.01], z in [-0.04, 0.01]) without touching it.
    slab = trimesh.creation.box((0.03, 0.04, 0.2))
    scene = CollisionScene()
    scene.add_obstacle(Shape.mesh(slab.vertices, slab.faces), pose(0.045, 0, 0))
    result = scene.check_gripper(gripper, pose())
    assert result.collides.tolist() == [True]
    assert result.first_contact[0].subject_name == "finger_right"
    assert result.first_contact[0].inside


def test_open_mesh_is_a_surface_only(gripper):
    big = trimesh.creation.box((1.0, 1.0, 1.0))
    open_faces = big.faces[:-2]  # drop one side: no longer closed
    scene = CollisionScene()
    scene.add_obstacle(Shape.mesh(big.vertices, open_faces))
    assert scene.check_gripper(gripper, pose()).collides.tolist() == [False]


def test_small_mesh_inside_a_solid_finger_collides(gripper):
    tiny = trimesh.creation.box((0.002, 0.002, 0.002))
    scene = CollisionScene()
    scene.add_obstacle(Shape.mesh(tiny.vertices, tiny.faces), pose(0.045, 0, -0.01))
    assert scene.check_gripper(gripper, pose()).collides.tolist() == [True]


def test_closed_mesh_gripper_contains_a_small_obstacle():
    cube = trimesh.creation.box((0.01, 0.02, 0.05))
    model = GripperCollisionModel(
        [RobotShape("finger", Shape.mesh(cube.vertices, cube.faces), pose(0.045, 0, -0.015))],
        source="meshes",
    )
    scene = CollisionScene()
    scene.add_obstacle(Shape.sphere(0.001), pose(0.045, 0, -0.015))
    result = scene.check_gripper(model, pose())
    assert result.collides.tolist() == [True]
    assert result.first_contact[0].inside


# ---------------------------------------------------------- attach and detach


def test_attach_detach_keeps_ids_and_moves_with_frame(gripper):
    scene = CollisionScene()
    wall = scene.add_obstacle(Shape.box((0.02, 1.0, 1.0)), pose(0.5), name="wall")
    part = scene.add_obstacle(Shape.box((0.05, 0.05, 0.05)), pose(0, 0, 0.3), name="part")
    assert scene.obstacle_ids == (wall, part)
    # Carry the part 0.1 in front of the grasp centre (clear of the fingers).
    g_from_part = pose(z=0.1)
    scene.attach(part, 0, g_from_part)
    assert scene.attached_ids == (part,) and scene.frame_of(part) == 0
    np.testing.assert_allclose(scene.pose_of(part, pose(0.2)), pose(0.2, 0, 0.1))
    # The wall's near face is x = 0.49; the part reaches x = G.x + 0.025; fingers x + 0.05.
    # G turned so that its +Z is world +X: the part (0.1 ahead) reaches x = G.x + 0.125, the
    # fingertips only x = G.x + 0.01.
    ahead = rot((0, 1, 0), 90)
    at = np.stack([pose(0.40), pose(0.45), pose(0.30, 0, 0, ahead), pose(0.38, 0, 0, ahead)])
    result = scene.check_gripper(gripper, at)
    assert result.collides.tolist() == [False, True, False, True]
    assert (
        result.first_contact[1][0:4:2] == ("robot", "obstacle")
        and result.first_contact[1].partner == wall
    )
    assert result.first_contact[3][:4] == ("attached", part, "obstacle", wall)
    scene.detach(part, pose(-0.3))
    assert scene.obstacle_ids == (wall, part) and scene.attached_ids == ()
    np.testing.assert_allclose(scene.pose_of(part), pose(-0.3))
    # Back in the world at x = -0.3: the right finger (G.x + 0.045) hits it; at 0.4 all is free.
    assert scene.check_gripper(gripper, np.stack([pose(-0.345), pose(0.4)])).collides.tolist() == [
        True,
        False,
    ]


def test_attached_part_moves_with_gripper_pose(gripper):
    scene = CollisionScene()
    shelf = scene.add_obstacle(Shape.box((1.0, 1.0, 0.02)), pose(z=0.5), name="shelf")
    part = scene.add_attached(0, Shape.sphere(0.05), pose(z=0.1), name="ball")
    result = scene.check_gripper(gripper, np.stack([pose(z=0.3), pose(z=0.36)]))
    # Ball top at G.z + 0.15; shelf bottom at 0.49; gripper top (tips) at G.z + 0.01.
    assert result.collides.tolist() == [False, True]
    assert result.first_contact[1] == (
        "attached", part, "obstacle", shelf, "ball", "shelf", False
    )  # fmt: skip


def test_ids_are_stable_and_never_reused():
    scene = CollisionScene()
    a = scene.add_obstacle(Shape.sphere(0.1))
    b = scene.add_obstacle(Shape.sphere(0.1), pose(1))
    c = scene.add_attached(None, Shape.sphere(0.1))
    scene.remove(a)
    d = scene.add_obstacle(Shape.sphere(0.1))
    assert len({a, b, c, d}) == 4 and d.value > c.value
    assert scene.ids == (b, c, d)
    np.testing.assert_allclose(scene.pose_of(b), pose(1))
    with pytest.raises(ValueError, match=r"remove\(ObjectId\(value=1\)\): no such object"):
        scene.remove(a)


def test_update_attached_shape_and_placement(gripper):
    scene = CollisionScene()
    scene.add_obstacle(Shape.box((1.0, 1.0, 0.02)), pose(z=0.3))
    tool = scene.add_attached(0, Shape.sphere(0.01), pose(z=0.1))
    assert scene.check_gripper(gripper, pose()).collides.tolist() == [False]
    scene.update_attached(tool, shape=Shape.sphere(0.25))
    assert scene.check_gripper(gripper, pose()).collides.tolist() == [True]
    scene.update_attached(tool, frame_from_shape=pose(z=-0.5))
    assert scene.check_gripper(gripper, pose()).collides.tolist() == [False]
    assert scene.ids == (ObjectId(1), tool)


def test_base_attached_shape_is_checked_against_the_gripper(gripper):
    scene = CollisionScene(base_pose=pose(z=1.0))
    post = scene.add_attached(None, Shape.cylinder(0.01, 0.2), name="post")
    result = scene.check_gripper(gripper, np.stack([pose(0.045, 0, 1.0), pose(0.2, 0, 1.0)]))
    assert result.collides.tolist() == [True, False]
    assert result.first_contact[0].partner == post


def test_attach_detach_misuse_is_a_clear_error():
    scene = CollisionScene()
    part = scene.add_obstacle(Shape.sphere(0.1), name="part")
    with pytest.raises(ValueError, match=r"detach\(#1\): #1 \(part\) is not attached"):
        scene.detach(part, np.eye(4))
    scene.attach(part, 0, np.eye(4))
    with pytest.raises(ValueError, match=r"attach\(#1\): #1 \(part\) is already attached"):
        scene.attach(part, 0, np.eye(4))
    with pytest.raises(ValueError, match="frame is -1; expected a robot frame index"):
        scene.attach(scene.add_obstacle(Shape.sphere(0.1)), -1, np.eye(4))


def test_attached_to_a_frame_the_gripper_lacks(gripper):
    scene = CollisionScene()
    scene.add_attached(5, Shape.sphere(0.01))
    with pytest.raises(ValueError, match="bound to frame 5; the gripper model has frame 0"):
        scene.check_gripper(gripper, pose())


# ------------------------------------------------------------------ exclusions


@pytest.fixture
def carried(gripper):
    """Scene with a part attached between the fingers, overlapping the right finger."""
    scene = CollisionScene()
    table = scene.add_obstacle(Shape.box((1.0, 1.0, 0.02)), pose(z=-0.2), name="table")
    # x in [-0.035, 0.045]: overlaps the right finger (x >= 0.04) only.
    part = scene.add_obstacle(Shape.box((0.08, 0.02, 0.02)), pose(0.005, 0, -0.01), name="part")
    scene.attach(part, 0, pose(0.005, 0, -0.01))
    return scene, table, part


def test_attached_part_touching_a_finger_collides_until_excluded(gripper, carried):
    scene, _, part = carried
    result = scene.check_gripper(gripper, pose())
    assert result.collides.tolist() == [True]
    assert result.first_contact[0][:4] == ("robot", 2, "attached", part)
    excl = SceneExclusions().robot(part, 2)
    result = scene.check_gripper(gripper, pose(), excl)
    assert result.collides.tolist() == [False]
    assert result.exclusions_used == (Exclusion.robot(part, 2),)
    # Excluding the other finger does not help: exclude as little as possible.
    assert scene.check_gripper(gripper, pose(), SceneExclusions().robot(part, 1)).collides[0]


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_attached_exclusion_is_symmetric(gripper, order):
    scene = CollisionScene()
    a = scene.add_attached(0, Shape.sphere(0.02), pose(z=0.2), name="a")
    b = scene.add_attached(None, Shape.sphere(0.02), pose(z=0.21), name="b")
    assert scene.check_gripper(gripper, pose()).first_contact[0][:4] == (
        "attached",
        a,
        "attached",
        b,
    )
    excl = SceneExclusions().attached(a, b) if order == "ab" else SceneExclusions().attached(b, a)
    result = scene.check_gripper(gripper, pose(), excl)
    assert result.collides.tolist() == [False]
    assert len(result.exclusions_used) == 1


def test_obstacle_exclusion(gripper):
    scene = CollisionScene()
    fixture = scene.add_obstacle(Shape.box((0.2, 0.2, 0.02)), pose(z=0.2), name="fixture")
    part = scene.add_attached(0, Shape.sphere(0.02), pose(z=0.2), name="part")
    assert scene.check_gripper(gripper, pose()).collides[0]
    assert not scene.check_gripper(
        gripper, pose(), SceneExclusions().obstacle(part, fixture)
    ).collides[0]
    # The exclusion covers the part only: the gripper itself still hits the fixture.
    assert scene.check_gripper(
        gripper, pose(z=0.2), SceneExclusions().obstacle(part, fixture)
    ).collides[0]


def test_exclusion_unknown_id(gripper, carried):
    scene, _table, part = carried
    ghost = scene.add_attached(0, Shape.sphere(0.01), pose(z=1))
    excl = SceneExclusions().attached(part, ghost)
    excl.validate(scene, gripper.shape_count)
    scene.remove(ghost)
    # Validated at every check, not only up front.
    with pytest.raises(
        ExclusionError, match=r"exclusion attached\(#2, #3\): partner #3 is not in the scene"
    ):
        scene.check_gripper(gripper, pose(), excl)
    with pytest.raises(
        ExclusionError, match=r"subject #9 is not in the scene.*#1 obstacle 'table'"
    ):
        SceneExclusions().robot(ObjectId(9), 0).validate(scene, 3)


def test_exclusion_self_reference(carried):
    _, _, part = carried
    with pytest.raises(ExclusionError, match=r"attached\(#2, #2\): references itself"):
        SceneExclusions().attached(part, part)
    with pytest.raises(ExclusionError, match=r"obstacle\(#2, #2\): references itself"):
        SceneExclusions().obstacle(part, part)


@pytest.mark.parametrize("index", [3, -1])
def test_exclusion_bad_robot_shape_index(gripper, carried, index):
    scene, _, part = carried
    excl = SceneExclusions().robot(part, index)
    message = rf"robot\(#2, {index}\): robot shape index {index} does not exist; the robot has 3"
    with pytest.raises(ExclusionError, match=message):
        excl.validate(scene, gripper.shape_count)
    with pytest.raises(ExclusionError, match=message):
        scene.check_gripper(gripper, pose(), excl)


def test_exclusion_subject_must_be_attached(gripper, carried):
    scene, table, part = carried
    with pytest.raises(
        ExclusionError, match=r"subject #1 \(table\) is an obstacle, not an attached"
    ):
        scene.check_gripper(gripper, pose(), SceneExclusions().robot(table, 0))
    # Detached after the exclusion was published: the next check fails.
    excl = SceneExclusions().robot(part, 2)
    scene.detach(part, pose(z=1))
    with pytest.raises(ExclusionError, match=r"subject #2 \(part\) is an obstacle"):
        scene.check_gripper(gripper, pose(), excl)


def test_exclusion_partner_of_wrong_kind(gripper, carried):
    scene, table, part = carried
    other = scene.add_attached(None, Shape.sphere(0.01), pose(z=3))
    with pytest.raises(ExclusionError, match=r"partner #1 \(table\) is an obstacle; use obstacle"):
        SceneExclusions().attached(part, table).validate(scene, 3)
    with pytest.raises(
        ExclusionError, match=r"partner #3 .* is attached, not an obstacle; use attached"
    ):
        SceneExclusions().obstacle(part, other).validate(scene, 3)


def test_exclusion_types_are_checked():
    with pytest.raises(TypeError, match="expected an ObjectId"):
        Exclusion.robot(2, 0)
    with pytest.raises(TypeError, match="shape index is '1'; expected an int"):
        Exclusion.robot(ObjectId(2), "1")
    with pytest.raises(TypeError, match="expected an ObjectId"):
        Exclusion.obstacle(ObjectId(2), 3)


# ------------------------------------------------------------------- retreat


def top_grasp(x: float = 0.0, y: float = 0.0, z: float = 0.02) -> np.ndarray:
    """G approaching straight down (+Z of G = world -Z), closing along world X."""
    return pose(x, y, z, np.diag([1.0, -1.0, -1.0]))


@pytest.fixture
def tabletop():
    scene = CollisionScene()
    table = scene.add_obstacle(Shape.box((1.0, 1.0, 0.1)), pose(z=-0.05), name="table")
    # A long bar 0.07 wide (fits the 0.08 opening), 0.3 long along Y, resting on the table.
    part = scene.add_obstacle(Shape.box((0.07, 0.3, 0.04)), pose(z=0.02), name="bar")
    return scene, table, part


def test_retreat_clear_lift_is_accepted(gripper, tabletop):
    scene, table, part = tabletop
    ex_before = scene.ids
    result = scene.check_retreat(gripper, top_grasp(), part, 0.2, steps=4, support_id=table)
    assert result.collides.tolist() == [False] and result.first_step.tolist() == [-1]
    # The part rested on the table: that exclusion was used; no finger touches a 0.07 bar.
    assert result.exclusions_used == ((Exclusion.obstacle(part, table),),)
    # Scene restored: same ids, part an obstacle again where it was.
    assert scene.ids == ex_before and not scene.is_attached(part)
    np.testing.assert_allclose(scene.pose_of(part), pose(z=0.02))


def test_retreat_rejects_lifted_part_hitting_overhead_obstacle(gripper, tabletop):
    scene, table, part = tabletop
    # A beam above one end of the bar (y in [0.1, 0.2]), well away from the gripper (|y| <= 0.01).
    beam = scene.add_obstacle(Shape.box((0.5, 0.1, 0.02)), pose(0, 0.15, 0.15), name="beam")
    grasps = np.stack([top_grasp(), top_grasp(y=-0.1)])
    result = scene.check_retreat(gripper, grasps, part, 0.2, steps=10, support_id=table)
    assert result.collides.tolist() == [True, True]
    contact = result.first_contact[0]
    assert (contact.subject_kind, contact.subject, contact.partner) == ("attached", part, beam)
    # Bar top at 0.04 + lift; beam bottom at 0.14: first hit when lift >= 0.10 (step 5 of 10).
    assert result.first_step.tolist() == [5, 5]
    assert scene.check_gripper(gripper, grasps).collides.tolist() == [False, False]
    # A short retreat that stays below the beam is fine.
    short = scene.check_retreat(gripper, grasps, part, 0.05, steps=5, support_id=table)
    assert short.collides.tolist() == [False, False]
    # Without the beam the same retreat is clear.
    scene.remove(beam)
    clear = scene.check_retreat(gripper, grasps, part, 0.2, steps=10, support_id=table)
    assert clear.collides.tolist() == [False, False]


def test_retreat_excludes_the_fingers_the_part_touches(gripper):
    scene = CollisionScene()
    table = scene.add_obstacle(Shape.box((1.0, 1.0, 0.1)), pose(z=-0.05), name="table")
    # 0.08 wide: touches both finger inner faces (x = +-0.04).
    part = scene.add_obstacle(Shape.box((0.08, 0.1, 0.04)), pose(z=0.02), name="part")
    result = scene.check_retreat(gripper, top_grasp(), part, 0.1, support_id=table)
    assert result.collides.tolist() == [False]
    assert set(result.exclusions_used[0]) == {
        Exclusion.robot(part, 1),
        Exclusion.robot(part, 2),
        Exclusion.obstacle(part, table),
    }


def test_retreat_without_support_exclusion_hits_the_support(gripper):
    # Side grasp: approach along world +X, so the retreat slides the part along the table.
    scene = CollisionScene()
    table = scene.add_obstacle(Shape.box((1.0, 1.0, 0.1)), pose(z=-0.05), name="table")
    part = scene.add_obstacle(Shape.box((0.04, 0.07, 0.04)), pose(z=0.02), name="part")
    # G: X = world Y (closing across the 0.07 side), Y = world Z, Z = world X (approach);
    # fingers and palm span world z in [0.02, 0.04], above the table top.
    side = pose(0, 0, 0.03, np.array([[0.0, 0, 1], [1, 0, 0], [0, 1, 0]]))
    assert scene.check_gripper(gripper, side).collides.tolist() == [False]
    with_support = scene.check_retreat(gripper, side, part, 0.1, support_id=table)
    without = scene.check_retreat(gripper, side, part, 0.1)
    assert with_support.collides.tolist() == [False]
    assert without.collides.tolist() == [True]
    assert without.first_contact[0].partner == table


def test_retreat_bad_arguments(gripper, tabletop):
    scene, _table, part = tabletop
    with pytest.raises(ValueError, match="retreat distance is -1"):
        scene.check_retreat(gripper, top_grasp(), part, -1)
    with pytest.raises(ValueError, match="retreat steps is 0"):
        scene.check_retreat(gripper, top_grasp(), part, 0.1, steps=0)
    with pytest.raises(ValueError, match="support #2 is the part itself"):
        scene.check_retreat(gripper, top_grasp(), part, 0.1, support_id=part)
    with pytest.raises(ValueError, match=r"check_retreat\(ObjectId\(value=42\)\): no such object"):
        scene.check_retreat(gripper, top_grasp(), ObjectId(42), 0.1)
    # A bad exclusion is reported and the scene is restored.
    with pytest.raises(ExclusionError, match="robot shape index 7"):
        scene.check_retreat(
            gripper, top_grasp(), part, 0.1, exclusions=SceneExclusions().robot(part, 7)
        )
    assert not scene.is_attached(part)


# ---------------------------------------------------------------- shape inputs


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Shape.sphere(-1), "sphere radius is -1; expected a finite value > 0 m"),
        (lambda: Shape.cylinder(0.1, 0.2, axis="W"), "axis is 'W'; expected one of X, Y, Z"),
        (lambda: Shape.box((0.1, 0, 0.1)), r"box half extents are \[0.05, 0.0, 0.05\]; expected"),
        (lambda: Shape.box(), "exactly one of size= or half_extents="),
        (lambda: Shape.mesh(np.zeros((3, 3)), [[0, 1, 5]]), r"face indices span \[0, 5\]"),
        (lambda: Shape.mesh(np.zeros((3, 2)), [[0, 1, 2]]), r"vertices have shape \(3, 2\)"),
    ],
)
def test_bad_shapes(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_poses(gripper):
    scene = CollisionScene()
    with pytest.raises(ValueError, match=r"obstacle pose has shape \(3, 3\)"):
        scene.add_obstacle(Shape.sphere(0.1), np.eye(3))
    with pytest.raises(ValueError, match="obstacle pose is not rigid"):
        scene.add_obstacle(Shape.sphere(0.1), np.diag([2.0, 1, 1, 1]))
    with pytest.raises(ValueError, match=r"poses have shape \(2, 3, 4\)"):
        scene.check_gripper(gripper, np.zeros((2, 3, 4)))
    bad = np.stack([np.eye(4), np.full((4, 4), np.nan)])
    with pytest.raises(ValueError, match=r"poses\[1\] has non-finite values"):
        scene.check_gripper(gripper, bad)
    scaled = np.stack([np.eye(4), np.diag([1.0, 1.0, 2.0, 1.0])])
    with pytest.raises(ValueError, match=r"poses\[1\] is not rigid"):
        scene.check_gripper(gripper, scaled)


@pytest.mark.parametrize("axis", ["X", "Y", "Z"])
def test_cylinder_and_capsule_axes(gripper, axis):
    # A long thin cylinder along `axis` through the right finger's centre (0.045, 0, -0.015).
    v = np.zeros(3)
    v["XYZ".index(axis)] = 1
    for make in (Shape.cylinder, Shape.capsule):
        scene = CollisionScene()
        scene.add_obstacle(make(0.002, 1.0, axis=axis), pose(0.045, 0, -0.015))
        assert scene.check_gripper(gripper, pose()).collides[0]
        # Shift across the axis by 0.1: clear.
        shift = np.array([0.0, 0.1, 0.0]) if axis != "Y" else np.array([0.0, 0.0, 0.1])
        assert not scene.check_gripper(gripper, pose(*shift)).collides[0]


def test_axis_aligned_boxes_match_interval_overlap(gripper):
    """Unrotated proxy vs random axis-aligned boxes: collide iff the intervals overlap."""
    rng = np.random.default_rng(11)
    boxes = [(2 * s.shape.half_extents, s.frame_from_shape[:3, 3]) for s in gripper.shapes]
    centres = rng.uniform(-0.08, 0.08, (300, 3))
    sizes = rng.uniform(0.005, 0.06, (300, 3))
    outcomes = []
    for c, size in zip(centres, sizes, strict=True):
        scene = CollisionScene()
        scene.add_obstacle(Shape.box(size), pose(*c))
        got = bool(scene.check_gripper(gripper, pose()).collides[0])
        want = any(bool(np.all(np.abs(c - at) <= (size + dims) / 2)) for dims, at in boxes)
        assert got == want, (c, size)
        outcomes.append(got)
    assert 30 < sum(outcomes) < 270  # both outcomes well represented


# ------------------------------------------------------- retreat: finger touch test


def mesh_finger_gripper(tilt_deg: float = 0.0) -> GripperCollisionModel:
    """The proxy's palm and fingers (opening 0.08) as closed box meshes (BVH, not primitives).

    With ``tilt_deg`` the mesh vertices are authored rotated in their shape frame and the
    placement turns them back: same gripper, but not axis-aligned in its own frame.
    """
    shapes = []
    turn = pose(rotation=rot((1, 2, 3), tilt_deg))
    for s in GripperCollisionModel.proxy(0.08, 0.02).shapes:
        box = trimesh.creation.box(2 * s.shape.half_extents)
        vertices = box.vertices @ turn[:3, :3].T
        placement = s.frame_from_shape @ np.linalg.inv(turn)
        shapes.append(RobotShape(s.name, Shape.mesh(vertices, box.faces), placement))
    return GripperCollisionModel(shapes, source="meshes", finger_indices=(1, 2))


def near_touch_poses(count: int, seed: int = 3) -> np.ndarray:
    """Grasp poses around a 0.035 m ball at the origin, left finger within ~0.5 mm of it."""
    rng = np.random.default_rng(seed)
    poses = []
    for _ in range(count):
        m = np.eye(4)
        m[:3, :3] = rot(rng.normal(size=3), rng.uniform(0, 360))
        # Shift G along its own +X so the left finger face (x = -0.04) nears the ball.
        m[:3, 3] = m[:3, 0] * rng.uniform(0.0045, 0.0055)
        poses.append(m)
    return np.stack(poses)


@pytest.mark.parametrize("model", ["proxy", "meshes", "tilted meshes"])
def test_retreat_finger_touch_matches_exact_distance(gripper, model):
    import fcl

    from usdgrip.grasping.collision import TOUCH_TOLERANCE

    models = {"proxy": gripper, "meshes": mesh_finger_gripper(), "tilted meshes": None}
    model = models[model] or mesh_finger_gripper(tilt_deg=35.0)
    ball = trimesh.creation.icosphere(subdivisions=3, radius=0.035)
    scene = CollisionScene()
    part = scene.add_obstacle(Shape.mesh(ball.vertices, ball.faces), name="ball")
    poses = near_touch_poses(60)
    result = scene.check_retreat(model, poses, part, 0.05, steps=2)
    # Reference: fcl distance between each finger and the ball, no culling.
    bvh = fcl.BVHModel()
    bvh.beginModel(len(ball.vertices), len(ball.faces))
    bvh.addSubModel(ball.vertices, ball.faces)
    bvh.endModel()
    target = fcl.CollisionObject(bvh, fcl.Transform())
    expected = []
    for p in poses:
        touched = set()
        for s in (1, 2):
            shape = model.shapes[s]
            if shape.shape.kind == "box":
                geometry = fcl.Box(*(2 * shape.shape.half_extents))
            else:
                geometry = fcl.BVHModel()
                geometry.beginModel(len(shape.shape.vertices), len(shape.shape.faces))
                geometry.addSubModel(shape.shape.vertices, shape.shape.faces)
                geometry.endModel()
            m = p @ shape.frame_from_shape
            finger = fcl.CollisionObject(geometry, fcl.Transform(m[:3, :3], m[:3, 3]))
            gap = fcl.distance(finger, target, fcl.DistanceRequest(), fcl.DistanceResult())
            if gap <= TOUCH_TOLERANCE:
                touched.add(Exclusion.robot(part, s))
        expected.append(touched)
    got = [set(e) for e in result.exclusions_used]
    assert got == expected
    # The sample has both outcomes, so the comparison means something.
    assert any(expected) and not all(expected)


def test_retreat_finger_touch_skips_distance_queries_for_clear_fingers(gripper, monkeypatch):
    """Fingers 5 mm from the part: a cheap inflated-shape overlap test settles every pose."""
    import fcl

    calls = []
    real = fcl.distance
    monkeypatch.setattr(fcl, "distance", lambda *a, **k: calls.append(1) or real(*a, **k))
    ball = trimesh.creation.icosphere(subdivisions=3, radius=0.035)
    for model in (gripper, mesh_finger_gripper(), mesh_finger_gripper(tilt_deg=35.0)):
        scene = CollisionScene()
        part = scene.add_obstacle(Shape.mesh(ball.vertices, ball.faces), name="ball")
        poses = near_touch_poses(40)
        poses[:, :3, 3] = 0.0  # centred: both fingers 5 mm from the ball
        result = scene.check_retreat(model, poses, part, 0.05, steps=2)
        assert not result.collides.any()
        assert all(e == () for e in result.exclusions_used)
    assert calls == []


def test_one_rigidity_check_for_every_pose_reader():
    from usdgrip.frames import find_rigid_poses

    good = np.eye(4)
    scaled = np.diag([2.0, 1.0, 1.0, 1.0])
    mirrored = np.diag([-1.0, 1.0, 1.0, 1.0])
    projective = np.eye(4)
    projective[3, 0] = 0.5
    nan = np.full((4, 4), np.nan)
    finite, rigid = find_rigid_poses([[good, scaled], [mirrored, projective], [nan, good]])
    assert finite.tolist() == [[True, True], [True, True], [False, True]]
    assert rigid.tolist() == [[True, False], [False, False], [False, True]]
    with pytest.raises(ValueError, match=r"poses\[1\] is not rigid .*last row"):
        collision_queries.as_poses([good, projective])
