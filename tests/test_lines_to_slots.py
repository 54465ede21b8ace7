"""`usdgrip migrate --lines-to-slots`: one GripperSlotAPI instance per grasp vector line."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES
from pxr import Tf, Usd

from usdgrip.cli import main
from usdgrip.migration import LINE_SLOT_INPUT_ANGLE, LINE_SLOT_UP_RANGE, migrate_stage
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


def test_many_lines_become_slots_in_one_change_and_a_repeated_name_is_left(open_usda):
    lines = "\n".join(
        f"""
            def BasisCurves "grasp_identifier_{i}"
            {{
                point3f[] points = [(-0.05, 0, {0.0009 * i}), (0.05, 0, {0.0009 * i})]
            }}"""
        for i in range(1, 41)
    )
    stage = open_usda(
        f"""
        def Xform "Block" (
            prepend apiSchemas = ["PhysicsRigidBodyAPI"]
        )
        {{
            def Cube "body"
            {{
                double size = 0.08
            }}
            {lines}
            def Xform "inner"
            {{
                def BasisCurves "grasp_identifier_1"
                {{
                    point3f[] points = [(-0.05, 0, 0.002), (0.05, 0, 0.002)]
                }}
            }}
        }}
        """
    )
    notices = []
    listener = Tf.Notice.Register(
        Usd.Notice.ObjectsChanged, lambda notice, sender: notices.append(notice), stage
    )
    report = migrate_stage(stage, lines_to_slots=True)
    listener.Revoke()
    assert len(notices) == 1  # one recomposition, not one per ApplyAPI / attribute
    assert len(report.changes) == 40
    assert report.left == [
        "</Block/inner/grasp_identifier_1>: </Block> already has slot 'grasp_identifier_1'; "
        "left as it is"
    ]
    slots = read_gripper_slots(stage.GetPrimAtPath("/Block"))
    assert len(slots) == 40 and {s.lr_token for s in slots} == {"left"}
    np.testing.assert_allclose(sorted(s.center[2] for s in slots), 0.0009 * np.arange(1, 41))
    assert not [i for i in validate(stage).issues if i.code.startswith("GS.")]


def test_migrate_to_another_file_leaves_the_input_layer_as_the_file_says(tmp_path, capsys):
    """A caller holding the input open (usdview, Kit, a test) still sees the file's content."""
    held = Usd.Stage.Open(str(EXAMPLES / "graspable_prop.usda"))
    argv = ["migrate", str(EXAMPLES / "graspable_prop.usda"), "--lines-to-slots"]
    assert main([*argv, "-o", str(tmp_path / "out.usda")]) == 0
    assert "GripperSlotAPI:grasp_identifier_01" in capsys.readouterr().out
    assert not held.GetRootLayer().dirty
    assert read_gripper_slots(held.GetPrimAtPath("/Block")) == []
    assert (
        len(read_gripper_slots(Usd.Stage.Open(str(tmp_path / "out.usda")).GetPrimAtPath("/Block")))
        == 1
    )
