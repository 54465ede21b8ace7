"""Planning backend `lines`: grasps from SimReady grasp vector lines, through plan_grasps and the CLI."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import EXAMPLES
from test_planning import GRIPPER, assert_rigid, make_request

from usdgrip.cli import main
from usdgrip.errors import GripperError
from usdgrip.grasping.isaac_yaml import compute_candidate_poses
from usdgrip.grasping.planner import plan_grasps

PROP = EXAMPLES / "graspable_prop.usda"
LINE_ID = re.compile(r"^g_[0-9a-f]{8}_lines_grasp_identifier_01_\d{4}$")


@pytest.fixture(scope="module")
def lines_result():
    return plan_grasps(make_request(PROP, "/Block", count=12), methods="lines")


def test_lines_close_along_the_line_at_its_symmetrised_midpoint(lines_result):
    assert len(lines_result.grasps) == 12
    poses = compute_candidate_poses(lines_result)
    assert_rigid(poses)
    for candidate, pose in zip(lines_result.grasps.values(), poses, strict=True):
        assert candidate.generation_method == "lines"
        assert LINE_ID.match(candidate.candidate_id), candidate.candidate_id
        assert candidate.width == pytest.approx(0.05)  # the block's faces at x = ±0.025
        np.testing.assert_allclose(pose[:3, 3], [0, 0, 0.1], atol=1e-9)
        assert abs(pose[0, 0]) == pytest.approx(1.0)  # +X (closing) along the line
        assert abs(pose[:3, 2] @ [1, 0, 0]) < 1e-9  # approach perpendicular to it
    confidences = [c.confidence for c in lines_result.grasps.values()]
    assert confidences == sorted(confidences, reverse=True)
    # the line that misses the block gives nothing, and says so
    assert any("'grasp_identifier_02' skipped: it does not meet the object" in w
               for w in lines_result.metadata.warnings)  # fmt: skip


def test_best_line_grasp_comes_from_above(lines_result):
    best = compute_candidate_poses(lines_result)[0]
    assert best[2, 2] < -0.9  # the example stage is Z-up: approach straight down


def test_lines_are_on_by_default_when_the_object_has_them():
    result = plan_grasps(make_request(PROP, "/Block", count=40))
    methods = {c.generation_method for c in result.grasps.values()}
    assert methods == {"antipodal", "lines"}
    mug = plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug", count=5))
    assert "lines" not in {c.generation_method for c in mug.grasps.values()}


def test_same_seed_same_line_grasps(lines_result):
    again = plan_grasps(make_request(PROP, "/Block", count=12), methods="lines")
    assert list(again.grasps) == list(lines_result.grasps)
    np.testing.assert_array_equal(
        compute_candidate_poses(again), compute_candidate_poses(lines_result)
    )


def test_lines_asked_for_an_object_without_lines_is_bad_input():
    with pytest.raises(GripperError, match=r"<\/Mug> has no usable grasp vector line"):
        plan_grasps(make_request(EXAMPLES / "mug.usda", "/Mug", count=5), methods="lines")


def test_a_line_wider_than_the_gripper_is_dropped_by_the_fit_step(write_usda):
    wide = write_usda(
        """
        def Xform "Crate" (
            prepend apiSchemas = ["PhysicsRigidBodyAPI"]
        )
        {
            def Mesh "body"
            {
                int[] faceVertexCounts = [4, 4, 4, 4, 4, 4]
                int[] faceVertexIndices = [0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7]
                point3f[] points = [(-0.1, -0.1, 0), (0.1, -0.1, 0), (0.1, 0.1, 0), (-0.1, 0.1, 0), (-0.1, -0.1, 0.2), (0.1, -0.1, 0.2), (0.1, 0.1, 0.2), (-0.1, 0.1, 0.2)]
            }
            def BasisCurves "grasp_identifier_01"
            {
                point3f[] points = [(-0.15, 0, 0.1), (0.15, 0, 0.1)]
                token type = "linear"
            }
        }
        """
    )
    result = plan_grasps(make_request(wide, "/Crate", count=5), methods="lines")
    assert result.grasps == {}
    assert any("wider than max opening 0.085 m dropped" in w for w in result.metadata.warnings)


def test_cli_method_lines(tmp_path, capsys):
    out = tmp_path / "lines.yaml"
    argv = ["plan", str(PROP), "--object", "/Block", "--gripper", f"{GRIPPER.asset_path}:/Gripper/tcp",
            "--method", "lines", "--max-candidates", "4", "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    text = out.read_text()
    assert text.count("generation_method: lines") == 4
    capsys.readouterr()
    argv = ["plan", str(EXAMPLES / "mug.usda"), "--object", "/Mug", "--gripper",
            f"{GRIPPER.asset_path}:/Gripper/tcp", "--method", "lines", "-o", str(tmp_path / "m.yaml")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no usable grasp vector line" in err[0]
    assert not (tmp_path / "m.yaml").exists()
