"""``usdgrip suggest slots``: from a bare mesh to physics-proven slots (issue 22)."""

from __future__ import annotations

import json
import os
import shutil
import stat

import numpy as np
import pytest
from conftest import EXAMPLES
from pxr import Usd

from usdgrip.cli import main
from usdgrip.contracts import GripperRef
from usdgrip.rules import validate
from usdgrip.suggest import (
    EVIDENCE_KEY,
    SuggestionCancelled,
    SuggestOptions,
    suggest_slots,
)
from usdgrip.suggest.regions import compute_slot_regions, name_region
from usdgrip.usd.slots import list_slot_instances, read_gripper_slots

GRIPPER = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"
FAST = ["--trials", "1", "--table"]


@pytest.fixture
def pan(tmp_path):
    path = tmp_path / "pan.usda"
    shutil.copy(EXAMPLES / "pan.usda", path)
    return path


def _suggest(*args: object) -> int:
    try:
        return main(["suggest", "slots", *map(str, args)])
    except SystemExit as exc:  # argparse's own usage errors
        return int(exc.code)


def test_a_bare_pan_gets_slots_on_its_handle_that_validate(pan, tmp_path, capsys):
    before = pan.read_bytes()
    edits = tmp_path / "pan.edits.usda"
    code = _suggest(pan, "--object", "/Pan", "--gripper", GRIPPER, *FAST, "--layer", edits)
    out = capsys.readouterr().out
    assert code == 0, out
    assert pan.read_bytes() == before  # the asset is untouched: the slots are in EDITS
    stage = Usd.Stage.Open(str(edits))
    prim = stage.GetPrimAtPath("/Pan")
    names = list_slot_instances(prim)
    assert names and all(name in out for name in names)
    slots = read_gripper_slots(prim)
    # the pan's body ends at x = 0.1: every slot it proposes is on the handle bar
    assert all(0.1 < slot.center[0] < 0.27 for slot in slots)
    assert validate(stage).ok
    evidence = prim.GetCustomDataByKey(f"{EVIDENCE_KEY}:{names[0]}")
    assert evidence["trials"] == 1 and evidence["success_rate"] >= 0.8
    assert evidence["gripper"].endswith("gripper.usda:/Gripper/tcp")


def test_suggestions_are_deterministic_and_dry_run_writes_nothing(pan, tmp_path, capsys):
    out = tmp_path / "out.usda"
    runs = []
    for _ in range(2):
        code = _suggest(
            pan, "--object", "/Pan", "--gripper", GRIPPER, *FAST, "-o", out, "--dry-run"
        )
        assert code == 0
        runs.append(capsys.readouterr().out)
    assert runs[0] == runs[1] and "GripperSlotAPI:" in runs[0]
    assert not out.exists()


def test_json_summary(pan, tmp_path, capsys):
    out = tmp_path / "out.usda"
    code = _suggest(
        pan, "--object", "/Pan", "--gripper", GRIPPER, *FAST, "-o", out, "--format", "json"
    )
    assert code == 0
    text = capsys.readouterr().out
    summary = json.loads(text[: text.rindex("}") + 1])
    assert summary["slots"] and summary["held"] <= summary["planned"]
    assert set(summary["seconds"]) == {"plan", "evaluate", "prove"}
    assert out.exists()


def test_nothing_held_is_exit_1_and_writes_nothing(tmp_path, capsys):
    heavy = tmp_path / "heavy.usda"
    heavy.write_text((EXAMPLES / "pan.usda").read_text().replace("mass = 0.6", "mass = 400"))
    edits = tmp_path / "e.usda"
    code = _suggest(heavy, "--object", "/Pan", "--gripper", GRIPPER, *FAST, "--layer", edits)
    captured = capsys.readouterr()
    assert code == 1
    assert "no slot held; nothing written" in captured.err
    assert not edits.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--object", "/Nope"], "/Nope"),
        (["--object", "/Pan", "--min-success", "0"], "min_success 0.0"),
        (["--object", "/Pan", "--trials", "0"], "trials 0"),
        (["--object", "/Pan", "--candidates", "200000"], "candidates 200000"),
        (["--object", "/Pan", "--seed", "-1"], "--seed -1"),
        (["--object", ""], "--object ''"),
        (["--object", "/Pan", "--min-success", "nan"], "min_success nan"),
    ],
)
def test_bad_input_is_one_line_exit_2(pan, tmp_path, capsys, extra, message):
    out = tmp_path / "out.usda"
    code = _suggest(pan, "--gripper", GRIPPER, *extra, "-o", out)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_in_place_is_refused_before_any_work(pan, capsys):
    pan.chmod(stat.S_IRUSR)
    code = _suggest(pan, "--object", "/Pan", "--gripper", GRIPPER, *FAST, "--in-place")
    assert code == 2 and "read-only" in capsys.readouterr().err


def test_cancel_stops_the_pipeline():
    gripper = GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp")
    with pytest.raises(SuggestionCancelled):
        suggest_slots(
            str(EXAMPLES / "pan.usda"),
            "/Pan",
            gripper,
            SuggestOptions(trials=1),
            cancel=lambda: True,
        )


def _pose(centre, approach, closing):
    pose = np.eye(4)
    z = np.asarray(approach, float) / np.linalg.norm(approach)
    x = np.asarray(closing, float) / np.linalg.norm(closing)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = x, np.cross(z, x), z, centre
    return pose


def test_regions_cluster_by_place_and_approach():
    down, side = (0, 0, -1), (-1, 0, 0)
    poses = np.array(
        [
            _pose((0.20, 0, 0.02), down, (0, 1, 0)),
            _pose((0.21, 0, 0.02), down, (0, -1, 0)),  # the other jaw first: same closing
            _pose((0.20, 0, 0.04), down, (0, 1, 0)),
            _pose((-0.2, 0, 0.02), side, (0, 1, 0)),
            _pose((-0.2, 0, 0.03), side, (0, 1, 0)),
            _pose((0.0, 0.3, 0.0), side, (0, 0, 1)),  # alone: no region
        ]
    )
    success = np.array([1.0, 1.0, 0.9, 1.0, 1.0, 1.0])
    regions = compute_slot_regions(poses, success, np.ones(6), 0.085)
    assert [sorted(r.members) for r in regions] == [[3, 4], [0, 1, 2]]
    handle = regions[1]
    assert np.allclose(handle.forward, down) and abs(handle.span_axis @ (0, 1, 0)) == 1
    assert handle.up_range == pytest.approx(0.02 + 0.01 * 0, abs=0.011)
    bounds = (np.array([-0.3, -0.3, 0.0]), np.array([0.3, 0.3, 0.05]))
    assert name_region(handle.center, bounds, np.array([0, 0, 1.0]), set()) == "side_px"
    assert name_region(handle.center, bounds, np.array([0, 0, 1.0]), {"side_px"}) == "side_px_2"
    assert compute_slot_regions(poses[:0], success[:0], np.ones(0), 0.085) == []


def test_a_bare_prop_gets_grasp_lines_that_validate_and_hold(tmp_path, capsys):
    from usdgrip.contracts import GeometryRef
    from usdgrip.grasping.line_evaluation import evaluate_grasp_lines
    from usdgrip.grasping.options import EvaluationOptions

    prop = tmp_path / "prop.usda"
    shutil.copy(EXAMPLES / "bare_prop.usda", prop)
    out = tmp_path / "prop.lines.usda"
    code = main(
        ["suggest", "lines", str(prop), "--object", "/Block", "--gripper", GRIPPER,
         "--candidates", "16", "--trials", "1", "--max-lines", "2", "-o", str(out)]
    )  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0, text
    stage = Usd.Stage.Open(str(out))
    lines = [
        p
        for p in stage.GetPrimAtPath("/Block").GetChildren()
        if p.GetName().startswith("grasp_identifier_")
    ]
    assert [p.GetName() for p in lines] == ["grasp_identifier_01", "grasp_identifier_02"]
    assert lines[0].GetCustomDataByKey(EVIDENCE_KEY)["success_rate"] >= 0.8
    assert validate(stage).ok  # GSP.001 and GP.* pass
    report = evaluate_grasp_lines(
        GeometryRef(asset_path=str(out), prim_path="/Block"),
        GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp"),
        options=EvaluationOptions(trials=1, table=True),
        candidates_per_line=6,
    )
    assert report["summary"]["every_line_held"]
