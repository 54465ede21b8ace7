"""Extended Isaac-Grasp YAML: round-trip, plain types, atomic writes, and the real loaders.

The two loader functions below re-implement the acceptance logic of:
- Isaac Sim's grasp importer (isaacsim.robot_setup.grasp_editor, ``DataWriter.safe_load_yaml``
  + ``import_grasps_from_file`` + ``GraspSpec``): yaml.safe_load, cast every string value that
  parses as a float, then require ``format == "isaac_grasp"``, a ``grasps`` key, and
  ``format_version`` within 1e-10 of 1.0 (else a warning); poses are read as
  ``[orientation.w, *orientation.xyz]`` and ``position``.
- GraspGen's ``load_from_isaac_grasp_format`` (grasp_gen/dataset/eval_utils.py): yaml.safe_load,
  ``data["grasps"]``, per entry ``g["confidence"]``, ``tra.translation_matrix(g["position"])`` and
  ``tra.quaternion_matrix([g["orientation"]["w"]] + g["orientation"]["xyz"])`` (a list concat,
  so ``xyz`` must load as a list).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest
import trimesh.transformations as tra
import yaml

from usdgrip.contracts import (
    GraspCandidate,
    GraspPlanningMetadata,
    GraspPlanningResult,
    GripperRef,
)
from usdgrip.errors import GripperError
from usdgrip.frames import compute_quaternion_wxyz
from usdgrip.grasping.isaac_yaml import (
    compute_candidate_poses,
    format_isaac_grasp,
    parse_isaac_grasp,
    read_isaac_grasp,
    write_isaac_grasp,
)

GRIPPER = GripperRef(asset_path="examples/gripper.usda", prim_path="/Gripper/tcp")
OTHER = GripperRef(asset_path="other.usda", prim_path="/Hand/site")


# --- loader re-implementations ------------------------------------------------------------


def _isaac_recursive_cast_to_float(d: dict) -> None:
    for k, v in d.items():
        if isinstance(v, str):
            with contextlib.suppress(ValueError):
                d[k] = float(v)
        elif isinstance(v, dict):
            _isaac_recursive_cast_to_float(v)
        elif isinstance(v, Iterable):
            items = []
            for item in v:
                if isinstance(item, str):
                    with contextlib.suppress(ValueError):
                        item = float(item)
                items.append(item)
            d[k] = items


def isaac_sim_import(path: Path) -> tuple[str, list[str], dict]:
    """Return (error message or "", warnings, grasps) like Isaac Sim's importer."""
    warnings = []
    try:
        x = yaml.safe_load(path.read_text())
    except yaml.YAMLError:
        x = {}
    if not x:
        return "not a valid YAML file", warnings, {}
    _isaac_recursive_cast_to_float(x)
    if x.get("format") != "isaac_grasp":
        return "not in the 'isaac_grasp' YAML format", warnings, {}
    if "grasps" not in x:
        return "does not contain any grasps", warnings, {}
    if "format_version" not in x or abs(x["format_version"] - 1.0) > 1e-10:
        warnings.append("format version mismatch")
    return "", warnings, x["grasps"]


def isaac_sim_pose(grasp: dict) -> np.ndarray:
    quat = np.array([grasp["orientation"]["w"], *grasp["orientation"]["xyz"]])
    return tra.translation_matrix(np.array(grasp["position"])) @ tra.quaternion_matrix(quat)


def graspgen_load(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with open(path) as f:
        data = yaml.safe_load(f)
    grasps = data["grasps"]
    confidences = [g["confidence"] for _, g in grasps.items()]
    positions = [tra.translation_matrix(g["position"]) for _, g in grasps.items()]
    rotations = [
        tra.quaternion_matrix([g["orientation"]["w"]] + g["orientation"]["xyz"])
        for _, g in grasps.items()
    ]
    poses = [p @ r for p, r in zip(positions, rotations, strict=True)]
    return np.array(poses), np.array(confidences)


# --- fixtures -------------------------------------------------------------------------------


def random_pose(rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=4)
    pose = tra.quaternion_matrix(q / np.linalg.norm(q))
    pose[:3, 3] = rng.uniform(-0.2, 0.2, 3)
    return pose


def make_result(poses, gripper_of=lambda i: GRIPPER, warnings=()) -> GraspPlanningResult:
    grasps = {}
    q = compute_quaternion_wxyz(np.asarray(poses).reshape(-1, 4, 4))
    for i, pose in enumerate(poses):
        cid = f"g_{i:03d}"
        grasps[cid] = GraspCandidate(
            candidate_id=cid,
            gripper=gripper_of(i),
            confidence=1.0 - i / (len(poses) + 1),
            generation_method="antipodal" if i % 2 else "slots",
            position=pose[:3, 3].tolist(),
            orientation={"w": float(q[i, 0]), "xyz": q[i, 1:].tolist()},
            width=0.05,
            exclusions=("robot(object, 1)", "obstacle(object, support)"),
        )
    metadata = GraspPlanningMetadata(
        upstream_revision="usdgrip 0.1.0",
        seed=5,
        runtime_seconds=0.25,
        pose_frame="/Mug",
        generation_mode="methods=antipodal,slots",
        warnings=warnings,
    )
    return GraspPlanningResult(grasps=grasps, metadata=metadata)


@pytest.fixture
def poses():
    rng = np.random.default_rng(0)
    return np.array([random_pose(rng) for _ in range(6)])


@pytest.fixture
def result(poses):
    return make_result(poses, gripper_of=lambda i: GRIPPER if i < 4 else OTHER)


# --- tests ----------------------------------------------------------------------------------


def test_round_trip_is_exact(tmp_path, result):
    path = write_isaac_grasp(result, tmp_path / "grasps.yaml")
    assert read_isaac_grasp(path) == result
    assert list(read_isaac_grasp(path).grasps) == list(result.grasps)


def test_file_layout_is_plain_isaac_grasp(tmp_path, result):
    path = write_isaac_grasp(result, tmp_path / "grasps.yaml")
    text = path.read_text()
    assert "!!" not in text  # no python/numpy tags
    data = yaml.safe_load(text)
    assert list(data) == ["format", "format_version", "grasps", "metadata"]
    assert data["format"] == "isaac_grasp"
    assert type(data["format_version"]) is float and data["format_version"] == 1.0
    entry = next(iter(data["grasps"].values()))
    assert list(entry)[:3] == ["confidence", "position", "orientation"]
    assert all(type(v) is float for v in entry["position"])
    assert type(entry["orientation"]["w"]) is float
    assert isinstance(entry["orientation"]["xyz"], list)
    assert all(isinstance(k, str) for k in data["grasps"])
    assert "position: [" in text  # numbers inline, text lists one item per line
    assert "  warnings:\n" in text or "warnings: []" in text


def test_isaac_sim_importer_accepts_the_file(tmp_path, result, poses):
    path = write_isaac_grasp(result, tmp_path / "grasps.yaml")
    error, warnings, grasps = isaac_sim_import(path)
    assert error == "" and warnings == []
    assert list(grasps) == list(result.grasps)
    for pose, grasp in zip(poses, grasps.values(), strict=True):
        np.testing.assert_allclose(isaac_sim_pose(grasp), pose, atol=1e-12)


def test_graspgen_loader_reads_poses_and_confidences(tmp_path, result, poses):
    path = write_isaac_grasp(result, tmp_path / "grasps.yaml")
    loaded, confidences = graspgen_load(path)
    np.testing.assert_allclose(loaded, poses, atol=1e-12)
    np.testing.assert_allclose(loaded, compute_candidate_poses(result), atol=1e-12)
    assert confidences.tolist() == [c.confidence for c in result.grasps.values()]
    for pose in loaded:
        assert np.linalg.det(pose[:3, :3]) == pytest.approx(1.0)


def test_loader_checks_reject_a_foreign_format(tmp_path):
    # The re-implemented acceptance logic must be able to fail.
    bad = tmp_path / "bad.yaml"
    bad.write_text("format: grasp_list\ngrasps: {}\n")
    assert isaac_sim_import(bad)[0] == "not in the 'isaac_grasp' YAML format"
    bad.write_text("format: isaac_grasp\nformat_version: 2.0\ngrasps: {}\n")
    assert isaac_sim_import(bad)[1] == ["format version mismatch"]


def test_text_lists_are_block_style(tmp_path):
    result = make_result([], warnings=("first: a, b", "second 'quoted'"))
    text = format_isaac_grasp(result)
    assert "  warnings:\n  - 'first: a, b'\n" in text
    assert read_isaac_grasp(write_isaac_grasp(result, tmp_path / "w.yaml")) == result


def test_empty_result_is_still_a_valid_file(tmp_path):
    result = make_result([], warnings=("antipodal: no mesh under </Mug>",))
    path = write_isaac_grasp(result, tmp_path / "none.yaml")
    error, _, grasps = isaac_sim_import(path)
    assert error == "" and grasps == {}
    assert read_isaac_grasp(path).metadata.warnings == ("antipodal: no mesh under </Mug>",)


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path, result, monkeypatch):
    target = tmp_path / "grasps.yaml"
    target.write_text("previous\n")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_isaac_grasp(result, target)
    assert target.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grasps.yaml"]


def test_write_into_missing_folder_names_it(tmp_path, result):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_isaac_grasp(result, tmp_path / "nope" / "g.yaml")


def test_same_result_gives_identical_bytes(result):
    assert format_isaac_grasp(result) == format_isaac_grasp(result.model_copy())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("format: [unclosed\n", "not valid YAML"),
        ("- 1\n- 2\n", "expected a YAML mapping"),
        ("format: grasp_list\ngrasps: {}\n", "format is 'grasp_list'; expected 'isaac_grasp'"),
        ("format: isaac_grasp\ngrasps: []\n", "'grasps' is list; expected a mapping"),
        ("", "found nothing \\(the file is empty\\)"),
        (
            "format: isaac_grasp\ngrasps:\n  g_0: [1, 2]\n",
            r"grasps\.g_0: is list; expected a mapping",
        ),
        (
            "format: isaac_grasp\nformat_version: 1.0\ngrasps:\n  grasp_0:\n    confidence: 1.0\n"
            "    position: [nan, 0, 0]\n    orientation: {w: 1.0, xyz: [0, 0, 0]}\n",
            r"grasps\.grasp_0\.position\.0: Input should be a valid number",
        ),
        (
            "format: isaac_grasp\nformat_version: 2.0\ngrasps: {}\n",
            r"format_version: format_version is 2\.0; expected 1\.0",
        ),
        (
            "format: isaac_grasp\ngrasps:\n  g_0:\n    position: [0, 0, 0]\n"
            "    orientation: {w: 1.0, xyz: [0, 0, 0]}\n    cspace_position: {finger: .inf}\n",
            r"grasps\.g_0\.cspace_position\.finger: Input should be a finite number",
        ),
        (
            "format: isaac_grasp\ngrasps:\n  g_0:\n    candidate_id: g_1\n    position: [0, 0, 0]"
            "\n    orientation: {w: 1.0, xyz: [0, 0, 0]}\n",
            "differs from its candidate_id",
        ),
        (
            "format: isaac_grasp\ngrasps:\n  g_0:\n    position: [0, 0, 0]\n"
            "    orientation: {w: 1.0, xyz: [0, 0, 0]}\n    note: !!set {a, b}\n",
            r"grasps\.g_0\.note: input was not a valid JSON value",
        ),
        (
            "format: isaac_grasp\ngrasps:\n  ? [a, b]\n  : {position: [0, 0, 0]}\n",
            "not valid YAML: .*unhashable key",
        ),
    ],
)
def test_bad_files_give_one_clear_error(text, message):
    with pytest.raises(GripperError, match=message):
        parse_isaac_grasp(text, source="in.yaml")


def test_read_missing_file(tmp_path):
    with pytest.raises(GripperError, match="no such file"):
        read_isaac_grasp(tmp_path / "missing.yaml")


def test_orientation_quaternion_matches_the_pose():
    pose = tra.rotation_matrix(math.pi / 3, [0, 1, 0])
    result = make_result([pose])
    candidate = next(iter(result.grasps.values()))
    assert candidate.orientation.w == pytest.approx(math.cos(math.pi / 6))
    assert candidate.orientation.xyz[1] == pytest.approx(math.sin(math.pi / 6))


def test_evaluated_file_stays_readable_by_both_loaders(tmp_path, result, poses):
    # `usdgrip evaluate` adds `physics` per entry and metadata.physics; the importer and the
    # loader read the same poses, ids and confidences as before.
    from usdgrip.contracts import GraspPhysics

    measured = {
        cid: c.model_copy(
            update={"physics": GraspPhysics(
                success_rate=0.5, trials=2, outcome="held", outcomes={"held": 1, "missed": 1}
            )}
        )
        for cid, c in result.grasps.items()
    }  # fmt: skip
    metadata = result.metadata.model_copy(
        update={
            "physics": {"engine": "mujoco", "parameters": {"trials": 2}, "ranking": "unchanged"}
        }
    )
    evaluated = result.model_copy(update={"grasps": measured, "metadata": metadata})
    path = write_isaac_grasp(evaluated, tmp_path / "evaluated.yaml")
    error, warnings, grasps = isaac_sim_import(path)
    assert error == "" and warnings == []
    assert list(grasps) == list(result.grasps)  # candidate ids stable
    for pose, grasp in zip(poses, grasps.values(), strict=True):
        np.testing.assert_allclose(isaac_sim_pose(grasp), pose, atol=1e-12)
    loaded, confidences = graspgen_load(path)
    np.testing.assert_allclose(loaded, poses, atol=1e-12)
    assert confidences.tolist() == [c.confidence for c in result.grasps.values()]
    data = yaml.safe_load(path.read_text())
    entry = next(iter(data["grasps"].values()))
    assert list(entry)[:3] == ["confidence", "position", "orientation"]
    assert entry["physics"]["outcomes"] == {"held": 1, "missed": 1}
    assert read_isaac_grasp(path) == evaluated
    # An unevaluated result writes no physics keys at all (files as before).
    plain = write_isaac_grasp(result, tmp_path / "plain.yaml").read_text()
    assert "physics" not in plain


def test_a_re_ranked_file_is_read_in_its_order(result):
    # `usdgrip plan --evaluate` orders by measured success; a later `evaluate` keeps that
    # order with ranking "unchanged": the file is read in any order and keeps it.
    from usdgrip.contracts import GraspPhysics

    rates = [0.0, 1.0, 0.5, 0.5, 0.0, 0.0]
    measured = {
        cid: c.model_copy(
            update={"physics": GraspPhysics(success_rate=r, trials=2, outcome="held")}
        )
        for (cid, c), r in zip(result.grasps.items(), rates, strict=True)
    }
    kept = {"physics": {"ranking": "unchanged"}}
    shuffled = dict(reversed(list(measured.items())))
    again = parse_isaac_grasp(
        format_isaac_grasp(
            result.model_copy(
                update={"grasps": shuffled, "metadata": result.metadata.model_copy(update=kept)}
            )
        )
    )
    assert list(again.grasps) == list(shuffled)
