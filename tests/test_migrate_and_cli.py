"""`usdgrip migrate`, `usdgrip info`, `usdgrip env`: round trips, output and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pxr import Usd

from usdgrip.cli import main
from usdgrip.usd.sites import find_gripper_sites
from usdgrip.usd.slots import read_gripper_slots
from usdgrip.usd.stage import open_stage

LEGACY = """
def Xform "Robot"
{
    def Xform "site" (
        customData = { string note = "keep me" }
    )
    {
        double3 xformOp:translate = (0, 0, 0.1)
        uniform token[] xformOpOrder = ["xformOp:translate"]
        custom float gripper_maxOpening = 0.085
        custom float gripper_maxPayload = 5
        custom token simready:attachment:socketType = "Gripper"
        custom string author_note = "hand-tuned"
        def BasisCurves "forward_axis"
        {
            point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
            int[] curveVertexCounts = [2]
            uniform token type = "linear"
        }
        def BasisCurves "grip_line"
        {
            point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
            int[] curveVertexCounts = [2]
            uniform token type = "linear"
        }
    }
}
def Xform "Box" (
    customData = {
        dictionary lambdasim = {
            string gripper_slots = '[{"center": [0, 0, 0.1], "forward": [0, 0, -1], "span_axis": [1, 0, 0], "up": [0, 0.1, 0], "slot_input_angle": 10, "LR": 0, "GroupName": "g", "version": 1}]'
            string other = "x"
        }
    }
)
{
}
"""


def _snapshot(stage):
    sites = [
        (s.path, s.max_opening, s.max_payload, s.grasp_frame.round(9).tolist(), s.grip_line.length)
        for s in find_gripper_sites(stage)
    ]
    slots = [
        (
            s.name,
            s.center.round(9).tolist(),
            s.up_axis.round(9).tolist(),
            round(s.up_range, 9),
            s.lr,
            s.group,
        )
        for s in read_gripper_slots(stage.GetPrimAtPath("/Box"))
    ]
    return sites, slots


def test_migrate_round_trip_loses_nothing(write_usda, capsys):
    source = write_usda(LEGACY)
    before_text = source.read_text()
    before = _snapshot(open_stage(source))
    assert main(["migrate", str(source)]) == 0
    assert source.read_text() == before_text  # not in place: the original is untouched
    migrated = source.with_name("asset.migrated.usda")
    stage = open_stage(migrated)
    assert _snapshot(stage) == before
    site = stage.GetPrimAtPath("/Robot/site")
    assert "GripperSiteAPI" in site.GetAppliedSchemas()
    assert not site.GetAttribute("gripper_maxOpening") and site.GetChild("gripper_grip_line")
    assert site.GetAttribute("author_note").Get() == "hand-tuned"
    assert site.GetCustomDataByKey("note") == "keep me"
    box = stage.GetPrimAtPath("/Box")
    assert box.GetAppliedSchemas() == ["GripperSlotAPI:slot_0"]
    assert box.GetCustomDataByKey("lambdasim") == {"other": "x"}
    out = capsys.readouterr().out
    assert "gripper_maxOpening → gripper:maxOpening = 0.085" in out and "up_range 0.2" in out
    # A second migration has nothing left to do.
    assert main(["migrate", str(migrated), "--in-place"]) == 0
    assert "nothing to migrate" in capsys.readouterr().out


def test_migrate_in_place_and_keeps_what_cannot_convert(write_usda, capsys):
    text = LEGACY.replace('"version": 1}', '"version": 1, "future": 1}').replace(
        'def BasisCurves "grip_line"',
        'def BasisCurves "gripper_grip_line"\n{\npoint3f[] points = [(0,0,0),(0,1,0)]\n}\ndef BasisCurves "grip_line"',
    )
    source = write_usda(text)
    assert main(["migrate", str(source), "--in-place"]) == 0
    out = capsys.readouterr().out
    stage = Usd.Stage.Open(str(source))
    box = stage.GetPrimAtPath("/Box")
    assert box.GetCustomDataByKey("lambdasim:gripper_slots")  # extra keys: records kept
    assert "GripperSlotAPI:slot_0" in box.GetAppliedSchemas()
    assert stage.GetPrimAtPath("/Robot/site/grip_line")  # prefixed exists: unprefixed kept
    assert "future" in out and "prefixed child wins" in out


def test_info_json_contract(capsys):
    repo = Path(__file__).resolve().parent.parent
    assert main(["info", str(repo / "examples/gripper.usda"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (site,) = data["sites"]
    assert site["path"] == "/Gripper/tcp" and site["max_opening"] == 0.085
    assert site["max_opening_source"] == "gripper:maxOpening"
    assert site["forward_axis"] == {"child": "gripper_forward_axis", "direction": [0.0, 0.0, 1.0]}
    assert site["grip_line"]["child"] == "gripper_grip_line"
    assert site["grip_line"]["length"] == pytest.approx(0.022)
    assert np.allclose(np.array(site["grasp_frame"])[:3, 3], [0, 0, 0.13])
    assert site["warnings"] == []
    assert main(["info", str(repo / "examples/tote.usda"), "--json"]) == 0
    slots = json.loads(capsys.readouterr().out)["slots"]
    assert {s["name"] for s in slots} == {"left_edge", "right_edge"}
    keys = {"prim", "name", "source", "center", "forward", "span_axis", "up_axis", "up_range",
            "slot_input_angle", "lr", "group"}  # fmt: skip
    assert keys <= set(slots[0]) and slots[0]["group"] == "carry"


def test_info_table_shows_sites_and_slots(capsys):
    repo = Path(__file__).resolve().parent.parent
    assert main(["info", str(repo / "examples/mug.usda")]) == 0
    out = capsys.readouterr().out
    assert "1 grasp slot(s)" in out and "'handle' [lambdasim]" in out


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.usda", "missing.usda: no such file"),
        (lambda d: (d / "notes.txt").write_text("hi") and d / "notes.txt", "not a USD file"),
        (
            lambda d: (d / "bad.usda").write_text("#usda 1.0\ndef X {") and d / "bad.usda",
            "cannot be opened as USD",
        ),
        (lambda d: d, "is a directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, make, message):
    path = make(tmp_path)
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_malformed_records_exit_2(write_usda, capsys):
    path = write_usda(LEGACY.replace('"LR": 0, ', ""))
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert "</Box>" in err and "gripper_slots[0].LR: missing" in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["info"])
    assert info.value.code == 2
    assert main([]) == 2


def test_env_lines_make_a_fresh_process_see_the_schema(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "usdgrip", "env"], capture_output=True, text=True, check=True
    ).stdout
    script = (
        out
        + f'\n"{sys.executable}" -c "from pxr import Usd; print(Usd.SchemaRegistry.IsMultipleApplyAPISchema(\'GripperSlotAPI\'))"\n'
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PXR_PLUGINPATH_NAME", "PYTHONPATH")}
    proc = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, env=env, check=True, cwd=tmp_path
    )
    assert proc.stdout.strip() == "True"
