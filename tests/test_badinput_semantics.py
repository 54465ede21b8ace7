"""Bad input the validator and the readers must judge alike (re-audit: bounds, frames, scenes)."""

from __future__ import annotations

from pathlib import Path

import pytest

import usdgrip
from usdgrip.cli import main

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
