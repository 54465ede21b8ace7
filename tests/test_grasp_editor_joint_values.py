"""Joint values in planned Isaac-Grasp files, read as Isaac Sim's Grasp Editor reads them.

:func:`grasp_editor_select` re-implements, from reading its public code, what the Grasp
Editor (``isaacsim.robot_setup.grasp_editor``) does with a file: ``DataWriter.
safe_load_yaml`` (``yaml.safe_load``, then every string that parses as a float cast to one),
``import_grasps_from_file`` (``format == "isaac_grasp"``, a ``grasps`` key, ``format_version``
within 1e-10 of 1.0) and the UI's ``on_grasp_selection`` / ``load_grasp``: an
``ArticulationSubset`` of the ``cspace_position`` keys (each must be a DOF name of the
articulation), per DOF ``pregrasp_cspace_position[dof]`` (a missing key is its
``KeyError``) and the closing direction from ``cspace - pregrasp``, then the rigid body
placed from ``orientation`` (``[w, *xyz]``) and ``position``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest
import yaml
from pxr import Usd

import usdgrip
from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef
from usdgrip.grasping.isaac_yaml import read_isaac_grasp, write_isaac_grasp
from usdgrip.gripper_joint_values import (
    JointValueTable,
    compute_joint_value_table,
    compute_joint_values,
    find_joint_value_problem,
)
from usdgrip.gripper_kinematics import compute_configuration
from usdgrip.gripper_opening import compute_gap
from usdgrip.usd.articulation import read_gripper_articulation

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GRIPPERS = {
    "prismatic": ("grippers/prismatic_two_finger.usda", "/PrismaticGripper/palm/tcp"),
    "revolute": ("grippers/revolute_jaw.usda", "/RevoluteJawGripper/palm/tcp"),
    "franka": ("grippers/franka_hand/franka_hand.usda", "/FrankaHand/panda_hand/gripper_site"),
}


# --- the Grasp Editor's reader, re-implemented --------------------------------------------


def _cast_to_float(d: dict) -> None:
    for k, v in d.items():
        if isinstance(v, str):
            with contextlib.suppress(ValueError):
                d[k] = float(v)
        elif isinstance(v, dict):
            _cast_to_float(v)
        elif isinstance(v, Iterable):
            items = []
            for item in v:
                if isinstance(item, str):
                    with contextlib.suppress(ValueError):
                        item = float(item)
                items.append(item)
            d[k] = items


def grasp_editor_import(path: Path) -> dict:
    """``DataWriter.import_grasps_from_file``: the file's data, or AssertionError with its text."""
    try:
        x = yaml.safe_load(path.read_text())
    except yaml.YAMLError:
        x = {}
    assert x, "not a valid YAML file"
    _cast_to_float(x)
    assert x.get("format") == "isaac_grasp", "not in the 'isaac_grasp' YAML format"
    assert "grasps" in x, "does not contain any grasps"
    assert "format_version" in x and abs(x["format_version"] - 1.0) <= 1e-10
    return x


def grasp_editor_select(grasp: dict, dof_names: list[str], lower, upper) -> dict:
    """``on_grasp_selection``: the joint targets the editor sets and the object's pose."""
    names = list(grasp["cspace_position"].keys())
    for name in names:  # ArticulationSubset(articulation, names)
        if name not in dof_names:
            raise KeyError(f"{name} is not a DOF of the articulation")
    closing, positions = {}, []
    for name in names:
        grasping = grasp["cspace_position"][name]
        opened = grasp["pregrasp_cspace_position"][name]
        if abs(grasping - opened) < 1e-10:
            closing[name] = opened
        elif grasping - opened < 0:
            closing[name] = lower[dof_names.index(name)]
        else:
            closing[name] = upper[dof_names.index(name)]
        positions.append(grasping)
    quat = np.array([grasp["orientation"]["w"], *grasp["orientation"]["xyz"]], dtype=float)
    trans = np.array(grasp["position"], dtype=float)
    assert quat.shape == (4,) and trans.shape == (3,)
    return {"positions": np.array(positions), "close_to": closing, "quat": quat}


# --- fixtures ---------------------------------------------------------------------------------


def plan(tmp_path: Path, *grippers: str, n: int = 4) -> tuple[Path, usdgrip.GraspPlanningResult]:
    request = GraspPlanningRequest(
        object=GraspObject(
            geometry=GeometryRef(asset_path=str(EXAMPLES / "mug.usda"), prim_path="/Mug")
        ),
        grippers=tuple(
            GripperRef(asset_path=str(EXAMPLES / GRIPPERS[g][0]), prim_path=GRIPPERS[g][1])
            if g in GRIPPERS
            else GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp")
            for g in grippers
        ),
        max_candidates_per_gripper=n,
        seed=0,
    )
    result = usdgrip.plan_grasps(request)
    path = write_isaac_grasp(result, tmp_path / "grasps.yaml")
    return path, result


def articulation_of(name: str):
    asset, site = GRIPPERS[name]
    stage = Usd.Stage.Open(str(EXAMPLES / asset))
    return read_gripper_articulation(stage.GetPrimAtPath(site))


def dof_limits(articulation) -> tuple[list[str], list[float], list[float]]:
    moving = [j for j in articulation.joints if j.moving]
    return [j.name for j in moving], [j.lower for j in moving], [j.upper for j in moving]


# --- tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["prismatic", "revolute"])
def test_grasp_editor_reads_every_planned_grasp(tmp_path, name):
    path, result = plan(tmp_path, name)
    data = grasp_editor_import(path)
    assert list(data)[:5] == ["format", "format_version", "object_frame", "gripper_frame", "grasps"]
    assert data["object_frame"] == "/Mug"
    assert data["gripper_frame"] == GRIPPERS[name][1]
    articulation = articulation_of(name)
    names, lower, upper = dof_limits(articulation)
    assert data["grasps"]
    for key, grasp in data["grasps"].items():
        assert list(grasp)[:5] == [
            "confidence", "position", "orientation", "cspace_position", "pregrasp_cspace_position"
        ]  # fmt: skip
        chosen = grasp_editor_select(grasp, names, lower, upper)
        assert set(grasp["cspace_position"]) == set(names)  # the mimic follower too
        assert all(type(v) is float for v in grasp["cspace_position"].values())
        width = result.grasps[key].width
        opened = articulation.opening.opening_open
        if width < opened - 1e-6:  # it closes: towards the closed limit, never past it
            assert chosen["close_to"] != grasp["pregrasp_cspace_position"]
        for value, low, high in zip(chosen["positions"], lower, upper, strict=True):
            assert low - 1e-9 <= value <= high + 1e-9


@pytest.mark.parametrize("name", ["prismatic", "revolute", "franka"])
def test_cspace_position_closes_the_pads_to_the_grasp_width(tmp_path, name):
    _, result = plan(tmp_path, name, n=6)
    articulation = articulation_of(name)
    report = articulation.opening
    index = {j.name: i for i, j in enumerate(articulation.joints)}
    checked = 0
    for candidate in result.grasps.values():
        values = {index[k]: v for k, v in candidate.cspace_position.items()}
        config = compute_configuration(articulation, values)
        gap = compute_gap(
            articulation, report.fingers, config.link_poses, report.closing_axis,
            report.approach_axis,
        )  # fmt: skip
        expected = min(candidate.width, report.opening_open)
        assert gap == pytest.approx(expected, abs=5e-4)
        opened = {index[k]: v for k, v in candidate.pregrasp_cspace_position.items()}
        open_config = compute_configuration(articulation, opened)
        open_gap = compute_gap(
            articulation, report.fingers, open_config.link_poses, report.closing_axis,
            report.approach_axis,
        )  # fmt: skip
        assert open_gap == pytest.approx(report.opening_open, abs=1e-9)
        checked += 1
    assert checked


def test_usdgrip_reads_its_file_back_with_joint_values(tmp_path):
    path, result = plan(tmp_path, "prismatic")
    back = read_isaac_grasp(path)
    assert back.gripper_frame == result.gripper_frame == GRIPPERS["prismatic"][1]
    for key, candidate in result.grasps.items():
        assert back.grasps[key].cspace_position == candidate.cspace_position
        assert back.grasps[key].pregrasp_cspace_position == candidate.pregrasp_cspace_position


def test_a_site_whose_axes_are_not_g_gets_no_gripper_frame(tmp_path):
    path, result = plan(tmp_path, "franka")
    data = grasp_editor_import(path)
    assert "gripper_frame" not in data and data["object_frame"] == "/Mug"
    assert any("no gripper_frame written" in w for w in result.metadata.warnings)
    assert all(g["cspace_position"] for g in data["grasps"].values())


def test_gripper_without_joints_says_why_no_joint_values(tmp_path):
    path, result = plan(tmp_path, "proxy")
    data = yaml.safe_load(path.read_text())
    assert "object_frame" not in data and "gripper_frame" not in data
    assert all("cspace_position" not in g for g in data["grasps"].values())
    assert any(
        "no cspace_position / pregrasp_cspace_position written" in w
        for w in result.metadata.warnings
    )


def test_two_grippers_name_no_gripper_frame(tmp_path):
    path, result = plan(tmp_path, "prismatic", "revolute", n=2)
    data = grasp_editor_import(path)
    assert "gripper_frame" not in data
    assert any("holds 2 grippers' grasps" in w for w in result.metadata.warnings)


def test_table_lookups_at_and_past_the_ends():
    table = compute_joint_value_table(articulation_of("prismatic"))
    opened, where = compute_joint_values(table, 1.0)
    assert where == "open" and opened == table.open_values
    closed, where = compute_joint_values(table, 0.0)
    assert where == "closed"
    assert closed["finger_left_joint"] == pytest.approx(0.035)
    _, where = compute_joint_values(table, 0.045)
    assert where == "between"
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError, match="finite"):
            compute_joint_values(table, bad)
    # a gap that is unknown (NaN) at the open end reads as the open hand
    unknown = JointValueTable(table.names, np.full_like(table.gaps, np.nan), table.positions)
    assert compute_joint_values(unknown, 0.03)[1] == "open"


def test_repeated_joint_names_and_no_joints_are_refused():
    articulation = articulation_of("prismatic")
    from dataclasses import replace

    joints = list(articulation.joints)
    joints[1] = replace(joints[1], path=joints[0].path.rsplit("/", 2)[0] + "/x/finger_left_joint")
    twin = replace(articulation, joints=tuple(joints))
    assert "several finger joints are named finger_left_joint" in find_joint_value_problem(twin)
    with pytest.raises(ValueError, match="several finger joints"):
        compute_joint_value_table(twin)
    assert "no finger joints" in find_joint_value_problem(None)
