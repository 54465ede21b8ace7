"""Bad input the validator and the readers must judge alike (re-audit: bounds, frames, scenes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pxr import Usd

import usdgrip
from usdgrip.cli import main
from usdgrip.sampling import check_slot, sample_gripper_groups
from usdgrip.usd.slots import read_gripper_slots

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

SITE = """
def Xform "G" ( prepend apiSchemas = ["GripperSiteAPI"] )
{{
    float gripper:maxOpening = {opening}
    def BasisCurves "gripper_forward_axis"
    {{
        int[] curveVertexCounts = [2]
        point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
        uniform token type = "linear"
    }}
    def BasisCurves "gripper_grip_line"
    {{
        int[] curveVertexCounts = {counts}
        point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
        uniform token type = "linear"
    }}
}}
"""


def tote(up_range: str = "0.2", ops: str = "") -> str:
    """A tote with one left/right slot pair; ``ops`` is extra xformOp lines."""
    return f"""
def Xform "Tote" (
    prepend apiSchemas = ["GripperSlotAPI:left_edge", "GripperSlotAPI:right_edge"]
)
{{
    point3d gripperSlot:left_edge:center = (-0.195, 0, 0.15)
    vector3d gripperSlot:left_edge:forward = (0, 0, -1)
    string gripperSlot:left_edge:groupName = "carry"
    uniform token gripperSlot:left_edge:lr = "left"
    double gripperSlot:left_edge:slotInputAngle = 30
    vector3d gripperSlot:left_edge:spanAxis = (1, 0, 0)
    double gripperSlot:left_edge:upRange = {up_range}
    point3d gripperSlot:right_edge:center = (0.195, 0, 0.15)
    vector3d gripperSlot:right_edge:forward = (0, 0, -1)
    string gripperSlot:right_edge:groupName = "carry"
    uniform token gripperSlot:right_edge:lr = "right"
    double gripperSlot:right_edge:slotInputAngle = 30
    vector3d gripperSlot:right_edge:spanAxis = (-1, 0, 0)
    double gripperSlot:right_edge:upRange = 0.2
    {ops}
}}
"""


def codes(path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for issue in usdgrip.validate(str(path)).issues:
        found.setdefault(issue.code, []).append(issue.message)
    return found


# --- 3: implausible magnitudes ---------------------------------------------------------


def test_huge_max_opening_fails_gr004_and_the_planner_refuses_it(write_usda, tmp_path, capsys):
    gripper = write_usda(SITE.format(opening="1e15", counts="[2]"), "g.usda")
    assert any("at most 2 m" in m for m in codes(gripper)["GR.004"])
    assert "GR.004" not in codes(write_usda(SITE.format(opening="2", counts="[2]"), "ok.usda"))
    # The planner used to hang inside libccd on this gripper; now it refuses at once.
    out = tmp_path / "o.yaml"
    args = [str(EXAMPLES / "mug.usda"), "--object", "/Mug", "--gripper", f"{gripper}:/G"]
    assert main(["plan", *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "g.usda: </G>: gripper:maxOpening is 1e+15 m; expected at most 2 m" in err
    assert not out.exists()


def test_max_opening_bound_is_a_parameter(write_usda):
    gripper = write_usda(SITE.format(opening="3", counts="[2]"), "g.usda")
    report = usdgrip.validate(str(gripper), params={"max_opening_max_m": 5})
    assert "GR.004" not in {i.code for i in report.issues}
    with pytest.raises(ValueError, match="max_opening_max_m is 0"):
        usdgrip.validate(str(gripper), params={"max_opening_max_m": 0})


def test_huge_up_range_fails_gs002_and_sampling_refuses_it(write_usda, capsys):
    path = write_usda(tote(up_range="1e300"), "t.usda")
    assert any("upRange is 1e+300 m; expected at most 10 m" in m for m in codes(path)["GS.002"])
    assert main(["sample", str(path), "--prim", "/Tote", "--format", "text"]) == 2
    assert "up_range is 1e+300 m; expected at most 10 m" in capsys.readouterr().err
    ok = write_usda(tote(up_range="10"), "ok.usda")
    assert "GS.002" not in codes(ok)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            ["--retreat", "1e308"],
            "retreat distance is 1e+308 m; expected a finite value in (0, 10]",
        ),
        (["--retreat", "11"], "expected a finite value in (0, 10] m"),
    ],
)
def test_plan_refuses_an_absurd_retreat(tmp_path, capsys, option, message):
    gripper = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"
    args = [str(EXAMPLES / "mug.usda"), "--object", "/Mug", "--gripper", gripper, *option]
    assert main(["plan", *args, "-o", str(tmp_path / "o.yaml")]) == 2
    assert message in capsys.readouterr().err


# --- 1: "validates without failures" means the readers accept ------------------------


@pytest.mark.parametrize(
    ("scale", "fragment"),
    [
        ("(0, 1, 1)", "collapses spanAxis to zero"),
        ("(1, 0, 1)", "collapses Up to zero"),
        ("(1, 1, 0)", "collapses forward to zero"),
        ("(2, 3, 0.5)", None),
        ("(-1, 2, 1)", None),
    ],
)
def test_gs001_checks_the_world_frame_as_sampling_does(write_usda, capsys, scale, fragment):
    ops = f'float3 xformOp:scale = {scale}\n    uniform token[] xformOpOrder = ["xformOp:scale"]'
    path = write_usda(tote(ops=ops), "t.usda")
    found = codes(path).get("GS.001", [])
    stage = Usd.Stage.Open(str(path))
    problems = [
        str(p) for s in read_gripper_slots(stage.GetPrimAtPath("/Tote")) for p in check_slot(s)
    ]
    rc = main(["sample", str(path), "--prim", "/Tote", "--format", "text"])
    err = capsys.readouterr().err
    if fragment is None:
        assert not found and not problems and rc == 0
    else:
        assert any(fragment in m for m in found), found
        assert any(fragment.replace("spanAxis", "span_axis") in p for p in problems)
        assert rc == 2 and "expected a non-singular transform" in err


# --- 2: a mirroring object transform mirrors the slot, frames stay right-handed --------


def test_mirrored_object_mirrors_the_slot_with_a_right_handed_frame(write_usda):
    ops = (
        "double3 xformOp:translate = (0.6, 0, 0)\n    float3 xformOp:scale = (-1, 2, 1)\n"
        '    uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]'
    )
    path = write_usda(tote(ops=ops), "t.usda")
    assert "GS.001" not in codes(path)
    stage = Usd.Stage.Open(str(path))
    slots = read_gripper_slots(stage.GetPrimAtPath("/Tote"))
    left = slots[0]
    assert left.mirrored
    np.testing.assert_allclose(left.center, [0.795, 0, 0.15], atol=1e-9)  # mirrored centre
    np.testing.assert_allclose(left.span_axis, [-1, 0, 0], atol=1e-9)  # mirrored (1, 0, 0)
    for slot in slots:
        frame = slot.frame
        assert np.linalg.det(frame[:3, :3]) == pytest.approx(1.0)
        np.testing.assert_allclose(frame[:3, 0], slot.span_axis, atol=1e-9)
        np.testing.assert_allclose(np.cross(slot.forward, slot.span_axis), slot.up_axis, atol=1e-9)
    samples = sample_gripper_groups(slots, count=8, seed=3)
    for targets in samples.candidates:
        for target, slot in zip(targets, slots, strict=True):
            sigma = -1.0 if target.flipped else 1.0
            np.testing.assert_allclose(target.pose[:3, 0], sigma * slot.span_axis, atol=1e-9)
            assert np.linalg.det(target.pose[:3, :3]) == pytest.approx(1.0)


# --- 5: a scene holding the object does not make the object its own obstacle ----------

CELL = """
def Xform "World"
{
    def Xform "Block"
    {
        double3 xformOp:translate = (0, 0, 0.5)
        uniform token[] xformOpOrder = ["xformOp:translate"]
        def Mesh "body"
        {
            int[] faceVertexCounts = [4, 4, 4, 4, 4, 4]
            int[] faceVertexIndices = [0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7]
            point3f[] points = [(-0.02, -0.02, 0), (0.02, -0.02, 0), (0.02, 0.02, 0), (-0.02, 0.02, 0), (-0.02, -0.02, 0.04), (0.02, -0.02, 0.04), (0.02, 0.02, 0.04), (-0.02, 0.02, 0.04)]
        }
    }
    def Cube "Table"
    {
        double size = 1
        double3 xformOp:translate = (0, 0, 0)
        uniform token[] xformOpOrder = ["xformOp:translate"]
    }
}
"""


def test_plan_leaves_the_object_out_of_a_scene_that_contains_it(write_usda, tmp_path, capsys):
    cell = write_usda(CELL, "cell.usda")
    gripper = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"
    args = [str(cell), "--object", "/World/Block", "--gripper", gripper, "--scene", str(cell)]
    out = tmp_path / "o.yaml"
    assert main(["plan", *args, "--support", "/World/Table", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "1 shape(s) at or under the object </World/Block> left out" in err
    assert "/World/Block/body" not in err


# --- 1b: a value only warning rules report does not make the readers refuse -----------


@pytest.mark.parametrize(
    ("opening", "counts", "extra", "warning"),
    [
        ("0.085", '"2"', "", "curveVertexCounts"),
        ("0.085", "[2]", 'string gripper:maxPayload = "heavy"', "gripper:maxPayload"),
    ],
)
def test_no_validation_failure_means_the_readers_accept_the_site(
    write_usda, tmp_path, capsys, opening, counts, extra, warning
):
    body = SITE.format(opening=opening, counts=counts)
    body = body.replace('int[] curveVertexCounts = "2"', 'string curveVertexCounts = "2"')
    body = body.replace("float gripper:maxOpening", f"{extra}\n    float gripper:maxOpening")
    path = write_usda(body, "g.usda")
    report = usdgrip.validate(str(path))
    assert report.ok, [i.describe() for i in report.issues]
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert warning in out and "read as not authored" in out
    png = tmp_path / "g.png"
    assert main(["render", str(path), "-o", str(png)]) == 0
    assert png.exists()


def test_unusable_points_still_fail_and_refuse(write_usda, capsys):
    body = SITE.format(opening="0.085", counts="[2]").replace(
        "point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]", 'string points = "oops"'
    )
    path = write_usda(body, "g.usda")
    assert not usdgrip.validate(str(path)).ok
    assert main(["info", str(path)]) == 2
    assert "gripper_grip_line: points" in capsys.readouterr().err


# --- 4: render --grasps without --prim uses the grasps' pose frame, which must exist ---


def test_render_refuses_grasps_whose_pose_frame_is_missing(write_usda, tmp_path, capsys):
    grasps = tmp_path / "mug.yaml"
    gripper = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"
    args = [str(EXAMPLES / "mug.usda"), "--object", "/Mug", "--gripper", gripper]
    assert main(["plan", *args, "--max-candidates", "3", "-o", str(grasps), "-q"]) == 0
    tote_file = write_usda(tote(), "t.usda")
    png = tmp_path / "t.png"
    assert main(["render", str(tote_file), "--grasps", str(grasps), "-o", str(png)]) == 2
    err = capsys.readouterr().err
    assert "t.usda: the grasps are relative to '/Mug' (metadata.pose_frame)" in err
    assert "pass --prim" in err and not png.exists()
    # Naming the prim overrides the pose frame.
    args = [str(tote_file), "--grasps", str(grasps), "--prim", "/Tote", "-o", str(png)]
    assert main(["render", *args]) == 0
    assert "3 grasp(s)" in capsys.readouterr().out


# --- 6 / 8: no numpy warnings, real reasons, skipped things said -----------------------

INFINITE_CENTRE = """
def Xform "O" (
    customData = {
        dictionary lambdasim = {
            string gripper_slots = '[{"name": "a", "center": [Infinity, 0, 0.05], "forward": [-1, 0, 0], "span_axis": [0, 1, 0], "up_range": 0.04, "slot_input_angle": 20, "LR": 1, "GroupName": ""}]'
        }
    }
)
{
}
"""


def test_infinite_lambdasim_centre_gives_the_real_reason_and_no_numpy_warning(write_usda, tmp_path):
    path = write_usda(INFINITE_CENTRE, "l.usda")
    run = [sys.executable, "-W", "default", "-m", "usdgrip"]
    info = subprocess.run([*run, "info", str(path)], capture_output=True, text=True)
    assert info.returncode == 0 and "RuntimeWarning" not in info.stderr, info.stderr
    png = tmp_path / "l.png"
    render = subprocess.run(
        [*run, "render", str(path), "--slots", "-o", str(png)], capture_output=True, text=True
    )
    assert render.returncode == 2
    assert "l.usda: </O> slot 'a': center is [inf, 0.0, 0.05]; expected 3 finite numbers" in (
        render.stderr
    )
    assert "parallel" not in render.stderr and "Traceback" not in render.stderr


NO_FRAME_SITE = """
def Xform "Cell"
{
    def Xform "good" ( prepend apiSchemas = ["GripperSiteAPI"] )
    {
        float gripper:maxOpening = 0.08
        def BasisCurves "gripper_forward_axis"
        {
            int[] curveVertexCounts = [2]
            point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
            uniform token type = "linear"
        }
    }
    def Xform "bare" ( prepend apiSchemas = ["GripperSiteAPI"] )
    {
        float gripper:maxOpening = 0.08
    }
}
"""


def test_render_says_which_site_it_skipped_and_why(write_usda, tmp_path):
    from usdgrip.render import render_view

    stage = Usd.Stage.Open(str(write_usda(NO_FRAME_SITE, "n.usda")))
    summary = render_view(stage, tmp_path / "n.png")
    assert summary.sites == ["/Cell/good"]
    assert summary.skipped == [
        "site </Cell/bare> not drawn: it has no grasp frame (no usable forward axis: "
        "gripper_forward_axis with 2 distinct finite points)"
    ]
    bare = Usd.Stage.Open(
        str(
            write_usda(
                NO_FRAME_SITE.replace('"good"', '"gone"').replace(
                    "point3f[] points = [(0, 0, 0), (0, 0, 0.05)]", "point3f[] points = [(0, 0, 0)]"
                ),
                "b.usda",
            )
        )
    )
    with pytest.raises(usdgrip.GripperError, match=r"nothing to draw.*site </Cell/bare> not drawn"):
        render_view(bare, tmp_path / "b.png")


# --- 7: malformed records name the file, and a keyed record its key --------------------

KEYED_RECORDS = """
def Xform "Mug" (
    customData = {
        dictionary lambdasim = {
            dictionary gripper_slots = {
                dictionary x = {
                    double3 center = (0, 0, 0.05)
                    double3 forward = (-1, 0, 0)
                }
            }
        }
    }
)
{
}
"""


def test_malformed_record_messages_name_the_file_and_the_record_key(write_usda, capsys):
    path = write_usda(KEYED_RECORDS, "keyed.usda")
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: </Mug>: customData lambdasim:gripper_slots['x'].span_axis: missing" in err
    messages = codes(path)["GS.006"]
    assert any("gripper_slots['x'].span_axis" in m for m in messages), messages


# --- 9: only the selected slots are read and checked ---------------------------------


def test_reading_selected_slots_ignores_a_bad_other_slot(write_usda):
    body = tote().replace(
        "double gripperSlot:right_edge:upRange = 0.2",
        'string gripperSlot:right_edge:upRange = "0.2"',
    )
    body = body.replace(
        '"GripperSlotAPI:right_edge"]',
        '"GripperSlotAPI:right_edge"]\n    customData = {\n        dictionary lambdasim = {\n'
        '            string gripper_slots = \'[{"name": "r", "center": [0, 0]}]\'\n'
        "        }\n    }",
    )
    stage = Usd.Stage.Open(str(write_usda(body, "t.usda")))
    prim = stage.GetPrimAtPath("/Tote")
    with pytest.raises(usdgrip.GripperError, match="right_edge"):
        read_gripper_slots(prim)
    (left,) = read_gripper_slots(prim, names=["left_edge"])
    assert left.name == "left_edge"
    with pytest.raises(usdgrip.GripperError, match=r"gripper_slots\[0\]\.center"):
        read_gripper_slots(prim, names=["left_edge", "r"])


def test_render_cli_warns_about_each_skipped_site(write_usda, tmp_path, capsys):
    from usdgrip.cli import main

    path = write_usda(NO_FRAME_SITE, "n.usda")
    assert main(["render", str(path), "-o", str(tmp_path / "n.png")]) == 0
    out, err = capsys.readouterr()
    assert "1 site(s)" in out
    assert "warning: site </Cell/bare> not drawn: it has no grasp frame" in err


def test_info_says_why_a_slot_is_unusable_instead_of_printing_nan(write_usda, capsys):
    from test_badinput_readers import INFINITE_CENTER_MUG

    from usdgrip.cli import main

    path = write_usda(INFINITE_CENTER_MUG)
    assert main(["info", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "unusable: center is [0.0, 0.0, inf]; expected 3 finite numbers" in out
    assert "nan" not in out and "RuntimeWarning" not in err
    assert main(["info", str(path), "--json"]) == 0
    (slot,) = json.loads(capsys.readouterr().out)["slots"]
    assert slot["problems"] == ["center is [0.0, 0.0, inf]; expected 3 finite numbers"]
