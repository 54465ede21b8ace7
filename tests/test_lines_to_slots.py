"""`usdgrip migrate --lines-to-slots`: one GripperSlotAPI instance per grasp vector line."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES
from pxr import Usd

from usdgrip.cli import main
from usdgrip.migrate import LINE_SLOT_INPUT_ANGLE, LINE_SLOT_UP_RANGE, migrate_stage
from usdgrip.rules import validate
from usdgrip.sampling import sample_gripper_groups
from usdgrip.usd.slots import read_gripper_slots


def test_cli_authors_a_slot_per_usable_line(tmp_path, capsys):
    out = tmp_path / "prop.usda"
    argv = ["migrate", str(EXAMPLES / "graspable_prop.usda"), "--lines-to-slots", "-o", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "changed: </Block>: GripperSlotAPI:grasp_identifier_01 from grasp line" in text
    assert "left:    </Block/grasp_identifier_02>: grasp line misses its object (GP.001)" in text
    stage = Usd.Stage.Open(str(out))
    (slot,) = read_gripper_slots(stage.GetPrimAtPath("/Block"))
    assert slot.name == "grasp_identifier_01" and slot.lr_token == "left" and slot.group == ""
    np.testing.assert_allclose(slot.center, [0, 0, 0.1], atol=1e-9)
    np.testing.assert_allclose(slot.span_axis, [1, 0, 0], atol=1e-9)
    np.testing.assert_allclose(slot.forward, [0, 0, -1], atol=1e-9)
    assert slot.up_range == pytest.approx(LINE_SLOT_UP_RANGE)
    assert slot.slot_input_angle == LINE_SLOT_INPUT_ANGLE
    # the slot passes the slot rules, and its samples close along the line
    assert not [i for i in validate(out).issues if i.code.startswith("GS")]
    poses = sample_gripper_groups([slot], ee_ids=(0,), count=20, seed=1).poses[:, 0]
    np.testing.assert_allclose(np.abs(poses[:, 0, 0]), 1.0, atol=1e-9)
    assert np.all(poses[:, 2, 2] <= -np.cos(np.radians(45)) + 1e-9)  # within ±45° of down
    # without the flag nothing is converted; the source file is untouched
    assert (
        main(["migrate", str(EXAMPLES / "graspable_prop.usda"), "-o", str(tmp_path / "b.usda")])
        == 0
    )
    assert "nothing to migrate" in capsys.readouterr().out


def test_second_run_leaves_the_slot_and_scaled_objects_get_a_metre_band(open_usda):
    stage = open_usda(
        """
        def Xform "Crate" (
            prepend apiSchemas = ["PhysicsRigidBodyAPI"]
        )
        {
            double3 xformOp:scale = (2, 2, 2)
            uniform token[] xformOpOrder = ["xformOp:scale"]
            def Cube "body"
            {
                double size = 0.02
            }
            def BasisCurves "grasp_identifier_top"
            {
                point3f[] points = [(0, -0.02, 0), (0, 0.02, 0)]
            }
            def BasisCurves "grasp_identifier_flat"
            {
                point3f[] points = [(0, 0, 0), (0, 0, 0)]
            }
        }
        """
    )
    report = migrate_stage(stage, lines_to_slots=True)
    assert len(report.changes) == 1
    assert any("without two distinct finite points" in line for line in report.left)
    (slot,) = read_gripper_slots(stage.GetPrimAtPath("/Crate"))
    assert slot.up_range == pytest.approx(LINE_SLOT_UP_RANGE)  # 1 cm in the world, scale 2
    np.testing.assert_allclose(slot.span_axis, [0, 1, 0], atol=1e-9)
    again = migrate_stage(stage, lines_to_slots=True)
    assert again.changes == []
    assert any("already has slot 'grasp_identifier_top'" in line for line in again.left)
