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


# --- two hands (--hands 2 --group), the support, names by meaning ---------------------------

TOTE_50N = ["--trials", "1", "--table", "--force", "50", "--candidates", "60"]


@pytest.fixture
def tote(tmp_path):
    path = tmp_path / "tote.usda"
    shutil.copy(EXAMPLES / "tote.usda", path)
    return path


def test_one_hand_cannot_lift_the_tote_and_is_told_to_use_two(tote, tmp_path, capsys):
    edits = tmp_path / "e.usda"
    code = _suggest(tote, "--object", "/Tote", "--gripper", GRIPPER, *TOTE_50N, "--layer", edits)
    err = capsys.readouterr().err
    assert code == 1, err
    assert "one hand cannot lift it" in err and "--hands 2 --group NAME" in err
    assert not edits.exists()


def test_two_hands_author_a_left_right_group_that_validates_and_holds(tote, tmp_path, capsys):
    edits = tmp_path / "tote.edits.usda"
    code = _suggest(
        tote, "--object", "/Tote", "--gripper", GRIPPER, *TOTE_50N, "--hands", "2",
        "--group", "lift", "--layer", edits, "--format", "json",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    summary = json.loads(out[: out.rindex("}") + 1])
    assert [(s["lr"], s["group"]) for s in summary["slots"]] == [
        ("left", "lift"),
        ("right", "lift"),
    ]
    assert "two-handed group 'lift'" in out
    stage = Usd.Stage.Open(str(edits))
    prim = stage.GetPrimAtPath("/Tote")
    slots = {s.name: s for s in read_gripper_slots(prim) if s.group == "lift"}
    assert len(slots) == 2, out
    left, right = sorted(slots.values(), key=lambda s: s.lr)
    assert (left.lr, right.lr) == (0, 1)
    assert all(name.endswith(("_left", "_right")) for name in slots)
    # opposite sides of the centre of mass (the tote's middle, across up)
    a, b = (
        np.asarray(prim.GetAttribute(f"gripperSlot:{s.name}:center").Get())[:2]
        for s in (left, right)
    )  # the authored centres, in the tote's frame
    assert a @ b < 0
    assert validate(stage).ok
    evidence = prim.GetCustomDataByKey(f"{EVIDENCE_KEY}:{left.name}")
    assert evidence["hands"] == 2 and evidence["group"] == "lift"
    assert evidence["partner"] == right.name and evidence["success_rate"] >= 0.8
    assert evidence["force"] == 50.0
    # and `usdgrip evaluate --targets` holds it with both hands at 50 N
    samples, report = tmp_path / "s.json", tmp_path / "r.json"
    names = f"{left.name},{right.name}"
    assert main(["sample", str(edits), "--prim", "/Tote", "--slots", names, "--count", "4",
                 "-o", str(samples)]) == 0  # fmt: skip
    code = main(
        ["evaluate", str(edits), "--object", "/Tote", "--gripper", GRIPPER, "--targets",
         str(samples), "--table", "--trials", "1", "--force", "50", "-o", str(report), "-q"]
    )  # fmt: skip
    assert code == 0
    assert json.loads(report.read_text())["summary"]["held_candidates"] >= 3


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--hands", "3", "--group", "g"], "hands 3: expected 1"),
        (["--hands", "0"], "hands 0: expected 1"),
        (["--hands", "-1"], "hands -1: expected 1"),
        (["--group", "g"], "only with hands 2"),
        (["--hands", "2"], "needs a group name"),
        (["--hands", "2", "--group", ""], "needs a group name"),
        (["--hands", "2", "--group", "1lift"], "expected a USD identifier"),
        (["--hands", "2", "--group", "a b"], "expected a USD identifier"),
        (["--hands", "2", "--group", "poignée"], "expected a USD identifier"),
        (["--hands", "2", "--group", "carry"], "already has a slot group 'carry'"),
        (["--hands", "2", "--group", "\udcff"], "not UTF-8 text"),
        (["--hands", "2", "--group", "g" * 256], "expected at most 255"),
        (["--hands", "2", "--group", "g", "--max-slots", "1"], "a two-handed group is 2"),
        (["--support", "/Tote", "--scene", "SELF"], "is the object"),
        (["--support", "/Tote"], "--support /Tote: needs --scene"),
        (["--scene", "SELF"], "needs --support PRIM"),
        (["--table", "--scene", "SELF", "--support", "/Floor"], "--table and --support"),
        (["--force", "-5"], "--force -5"),
        (["--force", "nan"], "--force nan"),
    ],
)
def test_bad_hands_group_and_support_are_one_line_exit_2(tote, tmp_path, capsys, extra, message):
    out = tmp_path / "out.usda"
    extra = [str(tote) if value == "SELF" else value for value in extra]
    code = _suggest(tote, "--object", "/Tote", "--gripper", GRIPPER, "--trials", "1", *extra,
                    "-o", out)  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_an_object_with_no_room_for_two_hands_is_exit_1(tmp_path, capsys):
    out = tmp_path / "out.usda"
    code = _suggest(
        EXAMPLES / "graspable_prop.usda", "--object", "/Block", "--gripper", GRIPPER,
        "--table", "--trials", "1", "--candidates", "20", "--hands", "2", "--group", "g",
        "-o", out,
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1
    assert "no room for two hands" in captured.out
    assert "no two-handed group held; nothing written" in captured.err
    assert not out.exists()


def _box_points(boxes):
    points, indices = [], []
    for lo, hi in boxes:
        base = len(points)
        points += [
            (x, y, z) for z in (lo[2], hi[2]) for y in (lo[1], hi[1]) for x in (lo[0], hi[0])
        ]
        for quad in (
            (0, 2, 3, 1),
            (4, 5, 7, 6),
            (0, 1, 5, 4),
            (2, 6, 7, 3),
            (0, 4, 6, 2),
            (1, 3, 7, 5),
        ):
            indices += [base + i for i in quad]
    return points, indices


def _support_scene(path, boxes):
    from pxr import UsdGeom

    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, "Z")
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    points, indices = _box_points(boxes)
    mesh = UsdGeom.Mesh.Define(stage, "/Floor")
    mesh.CreatePointsAttr(points)
    mesh.CreateFaceVertexCountsAttr([4] * (len(indices) // 4))
    mesh.CreateFaceVertexIndicesAttr(indices)
    stage.GetRootLayer().Save()
    return path


@pytest.mark.parametrize("what", ["slots", "lines"])
def test_a_support_that_blocks_one_side_moves_the_suggestion(tmp_path, capsys, what):
    floor = ((-1.0, -0.5, -0.05), (1.0, 0.5, 0.0))
    # a channel 5 mm wider than the bar on each side along its -x half: no finger fits there
    walls = [((-0.6, 0.025, 0.0), (0.0, 0.1, 0.06)), ((-0.6, -0.1, 0.0), (0.0, -0.025, 0.06))]
    centres = {}
    for name, boxes in (("floor", [floor]), ("channel", [floor, *walls])):
        scene = _support_scene(tmp_path / f"{name}.usda", boxes)
        out = tmp_path / f"bar.{name}.usda"
        code = main(
            ["suggest", what, str(EXAMPLES / "bar.usda"), "--object", "/Bar", "--gripper",
             GRIPPER, "--scene", str(scene), "--support", "/Floor", "--trials", "1",
             "--candidates", "100", "-o", str(out), "--format", "json"]
        )  # fmt: skip
        text = capsys.readouterr().out
        assert code == 0, text
        summary = json.loads(text[: text.rindex("}") + 1])
        made = summary[what]
        centres[name] = [
            item["center"][0] if what == "slots" else (item["p0"][0] + item["p1"][0]) / 2
            for item in made
        ]
    assert min(centres["floor"]) < 0  # on the floor alone, the -x half is grasped too
    assert all(x > 0 for x in centres["channel"])  # in the channel, only the free half
    assert centres["channel"] != centres["floor"]


def _mesh_of(boxes):
    points, indices = _box_points(boxes)
    quads = np.asarray(indices).reshape(-1, 4)
    faces = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
    return np.asarray(points, float), faces


def test_names_by_meaning_handle_rim_middle_side():
    from usdgrip.suggest.regions import RegionPlace, is_on_handle

    up = np.array([0.0, 0.0, 1.0])
    # a pan: a 0.2 m body and a thin handle bar sticking out along +x
    pan_v, pan_f = _mesh_of(
        [((-0.1, -0.1, 0), (0.1, 0.1, 0.03)), ((0.1, -0.01, 0.01), (0.26, 0.01, 0.03))]
    )
    bounds = (pan_v.min(axis=0), pan_v.max(axis=0))
    handle = np.array([0.2, 0.0, 0.02])
    assert is_on_handle(handle, pan_v, pan_f)
    assert not is_on_handle(np.array([-0.09, 0.0, 0.02]), pan_v, pan_f)  # the body's edge
    place = RegionPlace(pan_v, pan_f, np.array([0, 1.0, 0]), 0.02)
    assert name_region(handle, bounds, up, set(), place) == "handle"
    assert name_region(handle, bounds, up, {"handle"}, place) == "handle_2"
    assert name_region(handle, bounds, up, set()) == "side_px"  # no mesh given: by side
    # a tote: thin walls; pads across the -x wall at its top are on a rim
    tote_v, tote_f = _mesh_of(
        [((-0.2, -0.15, 0), (0.2, 0.15, 0.01)), ((-0.2, -0.15, 0), (-0.19, 0.15, 0.15)),
         ((0.19, -0.15, 0), (0.2, 0.15, 0.15)), ((-0.19, -0.15, 0), (0.19, -0.14, 0.15)),
         ((-0.19, 0.14, 0), (0.19, 0.15, 0.15))]
    )  # fmt: skip
    tote_bounds = (tote_v.min(axis=0), tote_v.max(axis=0))
    rim = RegionPlace(tote_v, tote_f, np.array([1.0, 0, 0]), 0.01)
    assert name_region(np.array([-0.195, 0, 0.13]), tote_bounds, up, set(), rim) == "rim_nx"
    front = RegionPlace(tote_v, tote_f, np.array([0, -1.0, 0]), 0.01)
    assert name_region(np.array([0, 0.145, 0.13]), tote_bounds, up, set(), front) == "rim_py"
    # a bar: no thin part, no wall; the middle and the ends by side
    bar_v, bar_f = _mesh_of([((-0.5, -0.02, 0), (0.5, 0.02, 0.04))])
    bar_bounds = (bar_v.min(axis=0), bar_v.max(axis=0))
    across = RegionPlace(bar_v, bar_f, np.array([0, 1.0, 0]), 0.04)
    assert name_region(np.array([0.05, 0, 0.02]), bar_bounds, up, set(), across) == "middle"
    assert name_region(np.array([0.4, 0, 0.02]), bar_bounds, up, set(), across) == "side_px"
    assert not is_on_handle(np.array([0.45, 0, 0.02]), bar_v, bar_f)


def _region(centre, forward=(0, 0, -1.0), span=(1.0, 0, 0), success=1.0):
    from usdgrip.suggest.regions import SlotRegion

    return SlotRegion(
        (0, 1), np.asarray(centre, float), np.asarray(forward, float), np.asarray(span, float),
        0.02, 10.0, success,
    )  # fmt: skip


def test_pairs_lie_on_opposite_sides_of_the_centre_of_mass_with_room():
    from usdgrip.suggest.group_suggestions import member_name
    from usdgrip.suggest.regions import align_partner_span, pair_regions

    up, com = np.array([0, 0, 1.0]), np.zeros(3)
    regions = [
        _region((0.195, 0, 0.13)),
        _region((0.15, 0.1, 0.13)),  # same side as the first
        _region((-0.195, 0.01, 0.13), span=(-1.0, 0, 0)),
        _region((0.02, 0, 0.13)),  # opposite the third but too close for two hands
    ]
    pairs = pair_regions(regions, com, up, 0.085)
    assert [(p.left, p.right) for p in pairs] == [(2, 0)]  # left: the smaller x
    assert pairs[0].separation == pytest.approx(0.39, abs=1e-3)
    assert pair_regions(regions[:2], com, up, 0.085) == []
    assert pair_regions(regions, com, np.zeros(3), 0.085) == []
    assert pair_regions([_region((0, 0, 0)), _region((0, 0, 0))], com, up, 0.0) == []
    # the partner's span is flipped so both Up axes (forward x span) agree
    span = align_partner_span(regions[0], regions[2])
    assert np.allclose(span, (1.0, 0, 0))
    assert [member_name(b, "left") for b in ("rim_nx", "side_py", "handle", "top")] == [
        "rim_left",
        "side_left",
        "handle_left",
        "top_left",
    ]
