"""Joint values in planned Isaac-Grasp files (issue 24): ``cspace_position`` and
``pregrasp_cspace_position`` for grippers with finger joints, read back as Isaac Sim's Grasp
Editor reads them, and a warning saying why a gripper without joints has none."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import usdgrip
from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef
from usdgrip.grasping.isaac_yaml import read_isaac_grasp, write_isaac_grasp

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GRIPPERS = {
    "franka": ("grippers/franka_hand/franka_hand.usda", "/FrankaHand/panda_hand/gripper_site"),
    "robotiq": ("grippers/robotiq_2f85/robotiq_2f85.usda", "/Robotiq_2F85/base/gripper_site"),
    "prismatic": ("grippers/prismatic_two_finger.usda", "/PrismaticGripper/palm/tcp"),
    "revolute": ("grippers/revolute_jaw.usda", "/RevoluteJawGripper/palm/tcp"),
}


def read_like_grasp_editor(path: Path) -> dict[str, dict]:
    """What Isaac Sim's Grasp Editor needs of a file (``import_grasps_from_file`` and its
    ``GraspSpec`` accessors, re-implemented from their public code and tests): the format
    keys, and per grasp ``confidence``, ``position``, ``orientation`` (``w``, ``xyz``),
    ``cspace_position`` and ``pregrasp_cspace_position`` (joint name -> float) — a missing
    one is the ``KeyError`` its window raised on usdgrip's files before."""
    data = yaml.safe_load(path.read_text())
    assert data["format"] == "isaac_grasp"
    assert float(data["format_version"]) == 1.0
    grasps = {}
    for name, grasp in data["grasps"].items():
        entry = {
            "confidence": float(grasp["confidence"]),
            "position": [float(v) for v in grasp["position"]],
            "orientation": {
                "w": float(grasp["orientation"]["w"]),
                "xyz": [float(v) for v in grasp["orientation"]["xyz"]],
            },
            "cspace_position": {str(k): float(v) for k, v in grasp["cspace_position"].items()},
            "pregrasp_cspace_position": {
                str(k): float(v) for k, v in grasp["pregrasp_cspace_position"].items()
            },
        }
        assert len(entry["position"]) == 3 and len(entry["orientation"]["xyz"]) == 3
        grasps[name] = entry
    return grasps


def _articulation(gripper: tuple[str, str]):
    from pxr import Usd

    from usdgrip.usd.articulation import read_gripper_articulation

    stage = Usd.Stage.Open(str(EXAMPLES / gripper[0]))
    return read_gripper_articulation(stage.GetPrimAtPath(gripper[1]), is_site=True)


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> dict[str, Path]:
    """Each real gripper's plan for the mug, written as usdgrip writes it."""
    folder = tmp_path_factory.mktemp("joint_values")
    files = {}
    for name, (asset, site) in GRIPPERS.items():
        request = GraspPlanningRequest(
            object=GraspObject(
                geometry=GeometryRef(asset_path=str(EXAMPLES / "mug.usda"), prim_path="/Mug")
            ),
            grippers=(GripperRef(asset_path=str(EXAMPLES / asset), prim_path=site),),
            max_candidates_per_gripper=4,
        )
        result = usdgrip.plan_grasps(request, methods=["antipodal"])
        files[name] = write_isaac_grasp(result, folder / f"{name}.yaml")
    return files


@pytest.mark.parametrize("name", list(GRIPPERS))
def test_grasp_editor_reads_joint_values_of_each_real_gripper(planned, name):
    grasps = read_like_grasp_editor(planned[name])
    assert grasps
    articulation = _articulation(GRIPPERS[name])
    joints = {j.name: j for j in articulation.joints if j.moving}
    driven = {articulation.joints[i].name for i in articulation.opening.driven}
    result = read_isaac_grasp(planned[name])
    for grasp_id, grasp in grasps.items():
        closed, opened = grasp["cspace_position"], grasp["pregrasp_cspace_position"]
        assert set(closed) == set(opened) and driven <= set(closed) <= set(joints)
        for joint, value in (*closed.items(), *opened.items()):
            limits = joints[joint].lower, joints[joint].upper
            if None not in limits:
                assert limits[0] - 1e-9 <= value <= limits[1] + 1e-9, (grasp_id, joint)
        # the open hand is the opening report's, the closed one reaches the grasp's width
        for joint, value in articulation.opening.open_positions.items():
            assert opened[joint.rsplit("/", 1)[-1]] == pytest.approx(value, abs=1e-9)
        candidate = result.grasps[grasp_id]
        assert candidate.cspace_position == pytest.approx(closed)
    # a grasp closes further than the open hand on at least one driven joint
    antipodal = list(result.grasps.values())
    assert antipodal, "the mug should give antipodal candidates"
    assert any(
        abs(g.cspace_position[j] - g.pregrasp_cspace_position[j]) > 1e-4
        for g in antipodal
        for j in driven
    )


def test_a_gripper_without_joints_says_why(tmp_path):
    request = GraspPlanningRequest(
        object=GraspObject(
            geometry=GeometryRef(asset_path=str(EXAMPLES / "mug.usda"), prim_path="/Mug")
        ),
        grippers=(GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp"),),
        max_candidates_per_gripper=3,
    )
    result = usdgrip.plan_grasps(request, methods=["slots"])
    assert result.grasps
    assert all(g.cspace_position is None for g in result.grasps.values())
    assert result.object_frame is None and result.gripper_frame is None
    warnings = [w for w in result.metadata.warnings if "cspace_position" in w]
    assert len(warnings) == 1 and "finger joints" in warnings[0]
    text = write_isaac_grasp(result, tmp_path / "g.yaml").read_text()
    assert "cspace_position:" not in text


def test_file_frames_name_the_object_and_a_site_that_is_its_grasp_frame(planned):
    prismatic = read_isaac_grasp(planned["prismatic"])
    assert prismatic.object_frame == "/Mug"
    assert prismatic.gripper_frame == GRIPPERS["prismatic"][1]
    # the Franka site's grasp frame is turned 90 degrees about its approach: no prim's
    # pose is the grasps' one, so no gripper_frame is named, and a warning says so
    franka = read_isaac_grasp(planned["franka"])
    assert franka.object_frame == "/Mug" and franka.gripper_frame is None
    assert any("no gripper_frame" in w for w in franka.metadata.warnings)
