"""plan_grasps end to end on real usd-core stages: backends, frames, collisions, determinism."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import usdgrip
from usdgrip.contracts import (
    GeometryRef,
    GraspObject,
    GraspPlanningRequest,
    GripperRef,
)
from usdgrip.errors import GripperError, PrimNotFoundError, StageOpenError
from usdgrip.grasping.backends.registry import parse_methods
from usdgrip.grasping.backends.slot_proposals import compute_slot_scores
from usdgrip.grasping.isaac_yaml import compute_candidate_poses, read_isaac_grasp, write_isaac_grasp
from usdgrip.grasping.planner import plan_grasps
from usdgrip.grasping.proposals import compute_gripper_key

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GRIPPER = GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp")
ID_PATTERN = re.compile(r"^g_[0-9a-f]{8}_(antipodal_\d{4}|slots_[A-Za-z0-9_.\-]+_\d{4})$")

#: A 4 cm cube centred 2 cm above the origin of /Block, translated and rotated in the world.
BLOCK = """
def Xform "Block"
{
    double3 xformOp:translate = (0.3, -0.2, 0.1)
    float3 xformOp:rotateXYZ = (0, 0, 30)
    uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:rotateXYZ"]
    def Cube "solid_for_reference" ( active = false ) {}
    def Mesh "body"
    {
        int[] faceVertexCounts = [4, 4, 4, 4, 4, 4]
        int[] faceVertexIndices = [0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7]
        point3f[] points = [(-0.02, -0.02, 0), (0.02, -0.02, 0), (0.02, 0.02, 0), (-0.02, 0.02, 0), (-0.02, -0.02, 0.04), (0.02, -0.02, 0.04), (0.02, 0.02, 0.04), (-0.02, 0.02, 0.04)]
    }
}
"""


def make_request(asset, prim, *, grippers=(GRIPPER,), count=10, seed=0):
    return GraspPlanningRequest(
        object=GraspObject(geometry=GeometryRef(asset_path=str(asset), prim_path=prim)),
        grippers=grippers,
        max_candidates_per_gripper=count,
        seed=seed,
    )


def assert_rigid(poses):
    rotations = poses[:, :3, :3]
    identity = np.broadcast_to(np.eye(3), rotations.shape)
    np.testing.assert_allclose(rotations @ rotations.transpose(0, 2, 1), identity, atol=1e-9)
    np.testing.assert_allclose(np.linalg.det(rotations), 1.0, atol=1e-9)


@pytest.fixture(scope="module")
def mug_result():
    return plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug", count=15))


def test_public_name():
    assert usdgrip.plan_grasps is plan_grasps


def test_mug_plan_has_ranked_valid_candidates(mug_result):
    grasps = list(mug_result.grasps.values())
    assert len(grasps) == 15
    assert all(c.gripper == GRIPPER for c in grasps)
    confidences = [c.confidence for c in grasps]
    assert confidences == sorted(confidences, reverse=True)
    assert all(0.0 <= c <= 1.0 for c in confidences)
    assert all(ID_PATTERN.match(c.candidate_id) for c in grasps)
    assert all(c.width is not None and 0 < c.width <= 0.085 for c in grasps)
    poses = compute_candidate_poses(mug_result)
    assert_rigid(poses)
    # Grasp centres lie on the mug (body radius 0.035 + handle to x=0.07, height 0.1).
    positions = poses[:, :3, 3]
    assert np.all(positions >= [-0.036, -0.036, -0.001]) and np.all(
        positions <= [0.071, 0.036, 0.101]
    )


def test_mug_metadata(mug_result):
    meta = mug_result.metadata
    assert meta.pose_frame == "/Mug"
    assert meta.seed == 0 and meta.runtime_seconds > 0
    assert meta.length_unit == "metre" and meta.grasp_frame_convention == "graspgenx"
    assert meta.upstream_revision == f"usdgrip {usdgrip.__version__}"
    assert "methods=antipodal,slots" in meta.generation_mode
    assert "gripper_models=proxy" in meta.generation_mode  # no UsdPhysics collision prims


def test_antipodal_widths_match_a_block_in_a_moved_frame(write_usda):
    asset = write_usda(BLOCK, "block.usda")
    result = plan_grasps(make_request(asset, "/Block", count=20), methods="antipodal")
    assert len(result.grasps) == 20
    poses = compute_candidate_poses(result)
    assert_rigid(poses)
    for candidate, pose in zip(result.grasps.values(), poses, strict=True):
        assert candidate.generation_method == "antipodal"
        # Opposite faces of the 4 cm cube, expressed in the block's own frame M.
        assert candidate.width == pytest.approx(0.04, abs=1e-6)
        assert np.all(np.abs(pose[:2, 3]) <= 0.02 + 1e-9)
        assert -1e-9 <= pose[2, 3] <= 0.04 + 1e-9
        closing = pose[:3, 0]
        assert np.isclose(np.abs(closing).max(), 1.0, atol=1e-6)  # along a face normal of M


def test_slots_only_follow_the_slot_ranges(tmp_path):
    # The tote's slots without their group: each is a single-gripper slot.
    text = (EXAMPLES / "tote.usda").read_text().replace('groupName = "carry"', 'groupName = ""')
    (tmp_path / "tote.usda").write_text(text)
    result = plan_grasps(make_request(tmp_path / "tote.usda", "/Tote", count=12), methods="slots")
    assert len(result.grasps) == 12
    poses = compute_candidate_poses(result)
    for candidate, pose in zip(result.grasps.values(), poses, strict=True):
        assert candidate.generation_method == "slots"
        assert candidate.width == pytest.approx(0.085)
        assert "_slots_left_edge_" in candidate.candidate_id or "_slots_right_edge_" in (
            candidate.candidate_id
        )
        # Object frame M (the tote's translate removed): x = ±0.195, z = 0.12, |y| <= 0.1.
        assert abs(pose[0, 3]) == pytest.approx(0.195) and pose[2, 3] == pytest.approx(0.12)
        assert abs(pose[1, 3]) <= 0.1 + 1e-9
        # Approach = forward (0, 0, -1) tilted by at most 15 degrees.
        assert pose[2, 2] <= -np.cos(np.radians(15)) + 1e-9


def test_grouped_slots_are_left_out_of_single_gripper_planning():
    # The tote's two slots are the hands of group 'carry': one gripper on one edge does not
    # hold the tote, so they are not ranked as single-gripper grasps.
    request = make_request(EXAMPLES / "tote.usda", "/Tote", count=30)
    result = plan_grasps(request)
    assert result.grasps
    assert {c.generation_method for c in result.grasps.values()} == {"antipodal"}
    notes = [w for w in result.metadata.warnings if "group 'carry'" in w]
    assert len(notes) == 1 and "'left_edge', 'right_edge' left out" in notes[0]
    with pytest.raises(GripperError, match=r"no single-gripper slot for method 'slots'.*carry"):
        plan_grasps(request, methods="slots")


def test_slot_score_formula():
    scores = compute_slot_scores([0.0, 0.05, 0.1, 0.0], [0.0, 0.0, 15.0, -15.0], 0.2, 30.0)
    np.testing.assert_allclose(scores, [1.0, 0.75, 0.0, 0.5])
    np.testing.assert_allclose(compute_slot_scores([0.0], [3.0], 0.2, 0.0), [1.0])


def test_same_request_and_seed_give_identical_results(write_usda):
    request = make_request(EXAMPLES / "tote.usda", "/Tote", count=8, seed=4)
    first, second = plan_grasps(request), plan_grasps(request)
    assert first.grasps == second.grasps
    assert first.metadata.warnings == second.metadata.warnings
    other = plan_grasps(make_request(EXAMPLES / "tote.usda", "/Tote", count=8, seed=5))
    assert list(other.grasps) != list(first.grasps) or other.grasps != first.grasps


def test_ids_do_not_depend_on_the_collision_outcome(write_usda):
    # Same proposals with and without an obstacle: surviving ids name the same poses.
    scene = write_usda(
        """
        def Cube "Wall"
        {
            double size = 0.1
            double3 xformOp:translate = (0.12, 0, 0.05)
            uniform token[] xformOpOrder = ["xformOp:translate"]
        }
        """,
        "wall.usda",
    )
    request = make_request(EXAMPLES / "mug.usda", "/Mug", count=200)
    free = plan_grasps(request)
    walled = plan_grasps(request, scene=scene)
    assert 0 < len(walled.grasps) < len(free.grasps)
    shared = set(walled.grasps) & set(free.grasps)
    assert len(shared) >= 10
    for cid in shared:
        candidate = walled.grasps[cid]
        assert free.grasps[cid].position == candidate.position
        assert free.grasps[cid].orientation == candidate.orientation
    assert any("collide at the grasp pose" in w and "/Wall" in w for w in walled.metadata.warnings)


def test_candidate_ids_are_per_gripper_and_request_ordered(write_usda):
    other_file = write_usda((EXAMPLES / "gripper.usda").read_text(), "other_gripper.usda")
    other = GripperRef(asset_path=str(other_file), prim_path="/Gripper/tcp")
    result = plan_grasps(
        make_request(EXAMPLES / "mug.usda", "/Mug", grippers=(other, GRIPPER), count=5)
    )
    assert result.grippers == (other, GRIPPER)
    keys = {compute_gripper_key(other), compute_gripper_key(GRIPPER)}
    assert len(keys) == 2
    for candidate in result.grasps.values():
        assert candidate.candidate_id.startswith(f"g_{compute_gripper_key(candidate.gripper)}_")


def test_result_round_trips_through_yaml(tmp_path, mug_result):
    path = write_isaac_grasp(mug_result, tmp_path / "mug.yaml")
    assert read_isaac_grasp(path) == mug_result


TABLE = """
def Cube "Table"
{
    double size = 1
    double3 xformOp:translate = (0, 0, -0.495)
    float3 xformOp:scale = (1, 1, 1)
    uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
}
"""


def test_support_exclusion_lets_side_grasps_retreat(write_usda):
    # The table top is 5 mm into the mug's base: the mug rests on it. Handle-slot grasps
    # approach sideways (tilted at most 10 degrees), so the first retreat steps slide the mug
    # along the table: they collide unless the support contact is excluded.
    scene = write_usda(TABLE, "table.usda")
    request = make_request(EXAMPLES / "mug.usda", "/Mug", count=20)
    without = plan_grasps(request, scene=scene, methods="slots", retreat_distance=0.05)
    with_support = plan_grasps(
        request, scene=scene, methods="slots", support="/Table", retreat_distance=0.05
    )
    assert without.grasps == {}
    assert any(
        "collide while retreating" in w and "vs obstacle #1 '/Table'" in w
        for w in without.metadata.warnings
    )
    assert len(with_support.grasps) == 20
    for candidate in with_support.grasps.values():
        assert "obstacle(/Mug, /Table)" in candidate.exclusions
        assert candidate.candidate_id in {
            f"g_{compute_gripper_key(GRIPPER)}_slots_handle_{i:04d}" for i in range(60)
        }
    assert "support=/Table" in with_support.metadata.generation_mode


def test_unknown_support_is_an_error(write_usda):
    scene = write_usda(TABLE, "table.usda")
    with pytest.raises(ValueError, match=r"table\.usda: support </Floor>: no such prim"):
        plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug"), scene=scene, support="/Floor")


def test_enclosed_object_leaves_nothing_and_says_why(write_usda):
    scene = write_usda('def Cube "Crate"\n{\n    double size = 0.5\n}', "crate.usda")
    result = plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug", count=5), scene=scene)
    assert result.grasps == {}
    warnings = " | ".join(result.metadata.warnings)
    assert "/Crate" in warnings and "no candidate survived" in warnings


def test_object_with_slots_but_no_mesh_plans_slots_and_warns(write_usda):
    asset = write_usda(
        """
        def Xform "Handle" (
            prepend apiSchemas = ["GripperSlotAPI:grip"]
        )
        {
            point3d gripperSlot:grip:center = (0, 0, 0)
            vector3d gripperSlot:grip:forward = (0, 0, -1)
            vector3d gripperSlot:grip:spanAxis = (1, 0, 0)
            double gripperSlot:grip:upRange = 0.1
            double gripperSlot:grip:slotInputAngle = 0
        }
        """,
        "handle.usda",
    )
    result = plan_grasps(make_request(asset, "/Handle", count=4))
    assert len(result.grasps) == 4
    assert {c.generation_method for c in result.grasps.values()} == {"slots"}
    assert any("antipodal skipped (no mesh)" in w for w in result.metadata.warnings)
    with pytest.raises(GripperError, match=r"no UsdGeom\.Mesh"):
        plan_grasps(make_request(asset, "/Handle"), methods="antipodal")


def test_gripper_without_axes_is_skipped_with_a_warning(write_usda):
    gripper_file = write_usda(
        """
        def Xform "Hand" {
            def Xform "site" ( prepend apiSchemas = ["GripperSiteAPI"] ) {
                float gripper:maxOpening = 0.08
            }
        }
        """,
        "hand.usda",
    )
    bare = GripperRef(asset_path=str(gripper_file), prim_path="/Hand/site")
    result = plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug", grippers=(bare, GRIPPER)))
    assert result.grippers == (GRIPPER,)
    assert any(
        "/Hand/site: skipped: the site has no usable forward axis" in w
        for w in result.metadata.warnings
    )


@pytest.mark.parametrize(
    ("body", "prim", "error", "message"),
    [
        ('def Xform "Empty" {}', "/Empty", GripperError, "no mesh and no GripperSlots"),
        (
            'def Mesh "Sheet"\n{\n    int[] faceVertexCounts = [4]\n'
            "    int[] faceVertexIndices = [0, 1, 2, 3]\n"
            "    point3f[] points = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]\n}",
            "/Sheet",
            GripperError,
            "does not bound a solid.*not watertight",
        ),
        ('def Xform "Empty" {}', "/Missing", PrimNotFoundError, "no prim at </Missing>"),
    ],
)
def test_bad_objects_raise(write_usda, body, prim, error, message):
    asset = write_usda(body, "object.usda")
    with pytest.raises(error, match=message):
        plan_grasps(make_request(asset, prim))


def test_bad_gripper_raises(write_usda, tmp_path):
    request = make_request(
        EXAMPLES / "mug.usda",
        "/Mug",
        grippers=(
            GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/palm"),
        ),
    )
    with pytest.raises(
        GripperError, match=r"</Gripper/palm> is not a gripper site.*</Gripper/tcp>"
    ):
        plan_grasps(request)
    missing = GripperRef(asset_path=str(tmp_path / "nope.usda"), prim_path="/G/tcp")
    with pytest.raises(StageOpenError, match="no such file"):
        plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug", grippers=(missing,)))


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "no method given"), ("grasp", "unknown method 'grasp'"), ("slots,slots", "repeats")],
)
def test_parse_methods_rejects_bad_lists(text, message):
    with pytest.raises(ValueError, match=message):
        parse_methods(text)
    assert parse_methods(" slots , antipodal") == ("slots", "antipodal")


def test_gripper_collision_model_modes(write_usda):
    geometry = plan_grasps(
        make_request(EXAMPLES / "mug.usda", "/Mug", count=5), gripper_model="geometry"
    )
    assert "gripper_models=meshes" in geometry.metadata.generation_mode
    # A gripper whose meshes carry UsdPhysics.CollisionAPI uses them in auto mode.
    text = (EXAMPLES / "gripper.usda").read_text()
    text = text.replace(
        'def Mesh "palm"', 'def Mesh "palm" ( prepend apiSchemas = ["PhysicsCollisionAPI"] )'
    )
    marked = write_usda(text, "marked_gripper.usda")
    ref = GripperRef(asset_path=str(marked), prim_path="/Gripper/tcp")
    auto = plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug", grippers=(ref,), count=5))
    assert "gripper_models=meshes" in auto.metadata.generation_mode
    with pytest.raises(ValueError, match="gripper model 'fancy'"):
        plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug"), gripper_model="fancy")


def test_gripper_too_weak_for_the_object_is_skipped():
    request = GraspPlanningRequest(
        object=GraspObject(
            geometry=GeometryRef(asset_path=str(EXAMPLES / "mug.usda"), prim_path="/Mug"),
            mass_kg=7.5,
        ),
        grippers=(GRIPPER,),
        max_candidates_per_gripper=3,
    )
    result = plan_grasps(request)
    assert result.grasps == {}
    assert any(
        "object mass 7.5 kg exceeds the gripper's max payload 5 kg (gripper:maxPayload)" in w
        for w in result.metadata.warnings
    )
    light = request.model_copy(
        update={"object": request.object.model_copy(update={"mass_kg": 0.3})}
    )
    assert len(plan_grasps(light).grasps) == 3


def test_centimetre_stage_gives_metres(write_usda):
    body = BLOCK.replace("(0.3, -0.2, 0.1)", "(30, -20, 10)")
    for old, new in (("0.02", "2"), ("0.04", "4")):
        body = body.replace(old, new)
    asset = write_usda(
        '#usda 1.0\n(\n    metersPerUnit = 0.01\n    upAxis = "Z"\n)\n' + body, "cm.usda"
    )
    result = plan_grasps(make_request(asset, "/Block", count=5), methods="antipodal")
    assert len(result.grasps) == 5
    for candidate in result.grasps.values():
        assert candidate.width == pytest.approx(0.04, abs=1e-6)
        assert max(abs(v) for v in candidate.position) <= 0.04 + 1e-9


# ------------------------------------------------------------- ranking and ray backend


def test_mug_best_antipodal_candidates_are_distinct_grasps():
    result = plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug", count=30), methods="antipodal")
    grasps = list(result.grasps.values())
    best = grasps[:6]
    # Six best: six different grasp centres (contact pairs), no repeated confidence.
    centres = {tuple(np.round(c.position, 9)) for c in best}
    assert len(centres) == 6
    assert len({c.confidence for c in best}) == 6
    # The stage's up axis (+Z, authored) is the support normal: within every contact pair
    # (grasp centre), each approach from above ranks before each approach from beneath.
    poses = compute_candidate_poses(result)
    by_centre: dict = {}
    for rank, pose in enumerate(poses):  # best first
        by_centre.setdefault(tuple(np.round(pose[:3, 3], 9)), []).append((rank, pose[2, 2]))
    compared = 0
    for approaches in by_centre.values():
        above = [rank for rank, z in approaches if z < -0.5]
        beneath = [rank for rank, z in approaches if z > 0.5]
        if above and beneath:
            compared += 1
            assert max(above) < min(beneath), approaches
    assert compared >= 1


def test_results_do_not_depend_on_where_the_files_live(tmp_path):
    for name in ("mug.usda", "gripper.usda"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    here = plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug", count=20))
    moved_gripper = GripperRef(asset_path=str(tmp_path / "gripper.usda"), prim_path="/Gripper/tcp")
    there = plan_grasps(
        make_request(tmp_path / "mug.usda", "/Mug", grippers=(moved_gripper,), count=20)
    )
    a, b = list(here.grasps.values()), list(there.grasps.values())
    assert len(a) == len(b) == 20
    assert [c.confidence for c in a] == [c.confidence for c in b]
    np.testing.assert_array_equal(compute_candidate_poses(here), compute_candidate_poses(there))


def test_stage_up_axis_is_read_only_when_authored(write_usda):
    from usdgrip.grasping.inputs import read_object

    plain = write_usda("#usda 1.0\n" + BLOCK, "plain.usda")
    assert read_object(plain, "/Block", need_mesh=True, check_closed=True).up is None
    authored = write_usda('#usda 1.0\n(\n    upAxis = "Z"\n)\n' + BLOCK, "z_up.usda")
    up = read_object(authored, "/Block", need_mesh=True, check_closed=True).up
    # World +Z in M: /Block is rotated 30 degrees about Z, so +Z stays +Z.
    np.testing.assert_allclose(up, [0, 0, 1], atol=1e-12)


def test_slow_ray_fallback_is_a_warning(write_usda, monkeypatch):
    import trimesh.ray

    asset = write_usda(BLOCK, "block.usda")
    request = make_request(asset, "/Block", count=8)
    forced = plan_grasps(request, methods="antipodal", ray_backend="triangle")
    warnings = [w for w in forced.metadata.warnings if "fallback" in w]
    assert warnings == [
        "antipodal: ray_backend 'triangle' was asked, so ray casting used trimesh's slower "
        "pure-python fallback (about 25x slower than Embree); install the 'plan' extra "
        "(embreex) for speed"
    ]
    assert len(forced.grasps) == 8
    # 'auto' without Embree falls back too, and says why.
    monkeypatch.setattr(trimesh.ray, "has_embree", False)
    auto = plan_grasps(request, methods="antipodal")
    assert any(
        "Embree is unavailable (embreex is not importable)" in w for w in auto.metadata.warnings
    )
    monkeypatch.undo()
    if trimesh.ray.has_embree:
        fast = plan_grasps(request, methods="antipodal")
        assert not any("fallback" in w for w in fast.metadata.warnings)
    with pytest.raises(ValueError, match="ray backend is 'gpu'; expected 'auto', 'embree'"):
        plan_grasps(request, ray_backend="gpu")
    with pytest.raises(ValueError, match=r"pair decay is 1.5; expected a value in \(0, 1\]"):
        plan_grasps(request, pair_decay=1.5)


def test_each_file_is_opened_once_and_given_stages_not_at_all(monkeypatch):
    # The object, the gripper site and the gripper's collision model (auto) all read from
    # one stage per file; stages the caller passes are not opened again.
    from usdgrip.usd import stage as usd_stage

    opened = []
    real_open = usd_stage.open_stage

    def spy(path):
        opened.append(str(path))
        return real_open(path)

    monkeypatch.setattr(usd_stage, "open_stage", spy)
    request = make_request(str(EXAMPLES / "mug.usda"), "/Mug", count=2)
    first = plan_grasps(request, methods="slots", gripper_model="auto")
    assert sorted(opened) == sorted([str(EXAMPLES / "mug.usda"), GRIPPER.asset_path])
    stages = {path: real_open(path) for path in opened}
    opened.clear()
    again = plan_grasps(request, methods="slots", gripper_model="auto", stages=stages)
    assert opened == []
    assert list(again.grasps) == list(first.grasps)
    assert [g.position for g in again.grasps.values()] == [
        g.position for g in first.grasps.values()
    ]
