"""Slot sampling on real stages: storage forms agree, moving objects, the examples, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pxr import Gf, Usd, UsdGeom

import usdgrip
from usdgrip.authoring import apply_gripper_slot
from usdgrip.cli import main
from usdgrip.lambdasim import CUSTOM_DATA_PATH
from usdgrip.usd.slots import read_gripper_slots
from usdgrip.usd.stage import gf_to_numpy, open_stage

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _new_stage(path: Path, meters_per_unit: float = 1.0) -> Usd.Stage:
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageMetersPerUnit(stage, meters_per_unit)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    return stage


def _object(stage: Usd.Stage, path: str, translate=(0.3, -0.2, 0.1), rotate=(10, 20, 30)):
    xform = UsdGeom.Xform.Define(stage, path)
    xform.AddTranslateOp().Set(Gf.Vec3d(*translate))
    xform.AddRotateXYZOp().Set(Gf.Vec3f(*rotate))
    return xform.GetPrim()


def _sample_all(prim, count=25, seed=3):
    slots = read_gripper_slots(prim)
    return usdgrip.sample_gripper_groups(slots, ee_ids=range(len(slots)), count=count, seed=seed)


# --- the same slot in every storage form ---------------------------------------------------

slot_values = st.fixed_dictionaries(
    {
        "center": st.tuples(*[st.floats(-1, 1)] * 3),
        "quaternion": st.tuples(*[st.floats(-1, 1)] * 4).filter(lambda q: np.linalg.norm(q) > 0.3),
        "up_range": st.floats(0.001, 0.5),
        "angle": st.floats(0.0, 360.0),
        "group": st.sampled_from(["", "carry"]),
    }
)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=st.lists(slot_values, min_size=1, max_size=2))
def test_schema_lambdasim_v2_v1_and_dictionary_forms_sample_identically(tmp_path_factory, values):
    from usdgrip.frames import compute_rotation_from_quaternion

    path = tmp_path_factory.mktemp("forms") / "forms.usda"
    stage = _new_stage(path)
    prims = {form: _object(stage, f"/{form}") for form in ("schema", "v2", "v1", "dictionary")}
    v2, v1, dictionary = [], [], {}
    for i, v in enumerate(values):
        rot = compute_rotation_from_quaternion(v["quaternion"])
        forward, span = rot[:, 2].tolist(), rot[:, 0].tolist()
        name = f"slot{i}"
        apply_gripper_slot(
            prims["schema"],
            name,
            center=v["center"],
            forward=forward,
            span_axis=span,
            up_range=v["up_range"],
            slot_input_angle=v["angle"],
            lr=i % 2,
            group=v["group"],
        )
        record = {
            "center": list(v["center"]),
            "forward": forward,
            "span_axis": span,
            "up_range": v["up_range"],
            "slot_input_angle": v["angle"],
            "LR": i % 2,
            "GroupName": v["group"],
            "version": 2,
            "name": name,
        }
        v2.append(record)
        old = {k: val for k, val in record.items() if k != "up_range"}
        old.update(version=1, up=(np.asarray(rot[:, 1]) * v["up_range"] / 2).tolist())
        v1.append(old)
        dictionary[name] = {k: val for k, val in record.items() if k != "name"}
    prims["v2"].SetCustomDataByKey(CUSTOM_DATA_PATH, json.dumps(v2))
    prims["v1"].SetCustomDataByKey(CUSTOM_DATA_PATH, json.dumps(v1))
    prims["dictionary"].SetCustomDataByKey(CUSTOM_DATA_PATH, dictionary)
    stage.GetRootLayer().Save()

    reopened = open_stage(path)
    results = {form: _sample_all(reopened.GetPrimAtPath(f"/{form}")) for form in prims}
    reference = results["schema"]
    assert reference.slot_names == tuple(f"slot{i}" for i in range(len(values)))
    assert read_gripper_slots(reopened.GetPrimAtPath("/v1"))[0].version == 1
    for form in ("v2", "dictionary"):
        assert results[form].slot_names == reference.slot_names
        np.testing.assert_array_equal(results[form].poses, reference.poses)
        np.testing.assert_array_equal(results[form].offsets, reference.offsets)
    # v1 stores a vector: up_range = 2 |up| is equal up to rounding.
    np.testing.assert_allclose(results["v1"].poses, reference.poses, atol=1e-12)
    np.testing.assert_allclose(results["v1"].offsets, reference.offsets, atol=1e-12)
    np.testing.assert_array_equal(results["v1"].tilts_deg, reference.tilts_deg)
    np.testing.assert_array_equal(results["v1"].flipped, reference.flipped)


# --- world snapshots -------------------------------------------------------------------------


def test_moving_the_prim_moves_the_samples_by_its_transform(tmp_path):
    stage = _new_stage(tmp_path / "move.usda")
    prim = _object(stage, "/Obj")
    apply_gripper_slot(prim, "a", center=(0.1, 0, 0), forward=(0, 0, -1), span_axis=(1, 0, 0),
                       up_range=0.2, slot_input_angle=40, group="g")  # fmt: skip
    apply_gripper_slot(prim, "b", center=(-0.1, 0, 0), forward=(0, 0, -1), span_axis=(-1, 0, 0),
                       up_range=0.3, slot_input_angle=20, group="g")  # fmt: skip
    cache = UsdGeom.XformCache()
    before_world = gf_to_numpy(cache.GetLocalToWorldTransform(prim))
    before = _sample_all(prim)
    xform = UsdGeom.Xformable(prim)
    xform.GetOrderedXformOps()[0].Set(Gf.Vec3d(-1.0, 2.0, 0.5))
    xform.GetOrderedXformOps()[1].Set(Gf.Vec3f(-40, 5, 170))
    after_world = gf_to_numpy(UsdGeom.XformCache().GetLocalToWorldTransform(prim))
    after = _sample_all(prim)
    move = after_world @ np.linalg.inv(before_world)
    np.testing.assert_allclose(after.poses, move @ before.poses, atol=1e-9)
    np.testing.assert_array_equal(after.flipped, before.flipped)


def test_stage_units_scale_positions_but_not_up_range(tmp_path):
    stage = _new_stage(tmp_path / "cm.usda", meters_per_unit=0.01)
    prim = _object(stage, "/Obj", translate=(100, 0, 0), rotate=(0, 0, 0))
    apply_gripper_slot(prim, "a", center=(10, 0, 0), forward=(0, 0, -1), span_axis=(1, 0, 0),
                       up_range=0.2, slot_input_angle=0)  # fmt: skip
    s = _sample_all(prim, count=200)
    # Centre (110 cm) in metres; offsets in metres along Up = (0, -1, 0).
    np.testing.assert_allclose(s.poses[:, 0, 0, 3], 1.1)
    np.testing.assert_allclose(s.poses[:, 0, 1, 3], -s.offsets[:, 0], atol=1e-15)
    assert 0.09 < np.abs(s.offsets).max() <= 0.1


def test_tote_group_pairs_share_draws_and_mug_handle_samples():
    tote_stage = open_stage(EXAMPLES / "tote.usda")
    tote = tote_stage.GetPrimAtPath("/Tote")
    s = _sample_all(tote, count=50, seed=7)
    assert s.slot_names == ("left_edge", "right_edge") and s.groups == ("carry", "carry")
    np.testing.assert_array_equal(s.offsets[:, 0], s.offsets[:, 1])
    assert np.abs(s.offsets).max() <= 0.1 and np.abs(s.tilts_deg).max() <= 15
    # Both edges approach from above (forward -Z tilted about X) at their own centres.
    assert np.all(s.poses[..., 2, 2] < -0.96)
    np.testing.assert_allclose(s.poses[:, 0, 0, 3], 0.405)
    np.testing.assert_allclose(s.poses[:, 1, 0, 3], 0.795)
    # Both edges share Up (+Y), so each pair of grasp points stays aligned across the tote.
    np.testing.assert_allclose(s.poses[:, 0, 1, 3], s.poses[:, 1, 1, 3], atol=1e-12)
    mug_stage = open_stage(EXAMPLES / "mug.usda")
    mug = mug_stage.GetPrimAtPath("/Mug")
    m = _sample_all(mug, count=10, seed=7)
    assert m.slot_names == ("handle",) and m.poses.shape == (10, 1, 4, 4)
    assert m.flipped.sum() == 5


# --- CLI ------------------------------------------------------------------------------------------

TOTE = str(EXAMPLES / "tote.usda")


def _read_tote_slots():
    stage = open_stage(TOTE)
    return read_gripper_slots(stage.GetPrimAtPath("/Tote"))


def run_cli(capsys, *args):
    code = main(["sample", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_matches_the_library(capsys):
    code, out, err = run_cli(capsys, TOTE, "--prim", "/Tote", "--count", 4, "--seed", 11)
    assert (code, err) == (0, "")
    data = json.loads(out)
    slots = _read_tote_slots()
    expected = usdgrip.sample_gripper_groups(slots, ee_ids=(0, 1), count=4, seed=11)
    assert data == json.loads(json.dumps(expected.to_dict()))
    assert (data["seed"], data["count"], data["ee_ids"]) == (11, 4, [0, 1])
    target = data["candidates"][2]["targets"][1]
    assert set(target) == {
        "ee_id", "slot", "position", "orientation_wxyz", "matrix", "offset", "tilt_deg", "flipped"
    }  # fmt: skip
    assert (target["ee_id"], target["slot"]) == (1, "right_edge")
    matrix = np.array(target["matrix"])
    np.testing.assert_allclose(matrix, expected.poses[2, 1], atol=0)
    assert matrix[:3, 3].tolist() == target["position"]  # translation in the last column


def test_cli_slots_pick_and_order_and_ee_ids(capsys):
    args = (TOTE, "--prim", "/Tote", "--slots", "right_edge,left_edge", "--ee-ids", "5,3")
    code, out, _ = run_cli(capsys, *args, "--count", 2)
    assert code == 0
    targets = json.loads(out)["candidates"][0]["targets"]
    assert [(t["ee_id"], t["slot"]) for t in targets] == [(5, "right_edge"), (3, "left_edge")]
    code, out, _ = run_cli(capsys, TOTE, "--prim", "/Tote", "--slots", "left_edge", "--count", 2)
    assert code == 0 and json.loads(out)["ee_ids"] == [0]


def test_cli_npz_and_text_outputs_are_written_atomically(tmp_path, capsys):
    out_npz = tmp_path / "samples.npz"
    out_npz.write_bytes(b"old")
    code, out, _ = run_cli(capsys, TOTE, "--prim", "/Tote", "--count", 6, "-o", out_npz)
    assert code == 0 and "wrote 6 candidates x 2 targets (npz)" in out
    with np.load(out_npz, allow_pickle=False) as data:
        slots = _read_tote_slots()
        expected = usdgrip.sample_gripper_groups(slots, count=6, seed=7)
        np.testing.assert_array_equal(data["poses"], expected.poses)
        np.testing.assert_array_equal(data["offsets"], expected.offsets)
        np.testing.assert_array_equal(data["tilts_deg"], expected.tilts_deg)
        np.testing.assert_array_equal(data["flipped"], expected.flipped)
        assert data["ee_ids"].tolist() == [0, 1]
        assert data["slots"].tolist() == ["left_edge", "right_edge"]
        assert int(data["seed"]) == 7 and int(data["count"]) == 6
    out_txt = tmp_path / "samples.txt"
    code, _, _ = run_cli(capsys, TOTE, "--prim", "/Tote", "--count", 2, "--format", "text",
                         "-o", out_txt)  # fmt: skip
    text = out_txt.read_text()
    assert code == 0 and "candidate 1" in text and "ee 1 right_edge" in text
    assert 'group "carry"' in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["samples.npz", "samples.txt"]


def test_cli_same_seed_same_output(capsys):
    runs = [run_cli(capsys, TOTE, "--prim", "/Tote", "--count", 3)[1] for _ in range(2)]
    assert runs[0] == runs[1]
    other = run_cli(capsys, TOTE, "--prim", "/Tote", "--count", 3, "--seed", 8)[1]
    assert other != runs[0]


BAD_RECORD = """
def Xform "Obj" (
    customData = {
        dictionary lambdasim = {
            string gripper_slots = '[{"center": [0, 0, 0], "forward": "up"}]'
        }
    }
)
{
}
"""

ZERO_FORWARD = """
def Xform "Obj" (
    prepend apiSchemas = ["GripperSlotAPI:edge"]
)
{
    vector3d gripperSlot:edge:forward = (0, 0, 0)
    vector3d gripperSlot:edge:spanAxis = (1, 0, 0)
    double gripperSlot:edge:upRange = 0.1
}
"""


@pytest.mark.parametrize(
    ("body", "args", "message"),
    [
        (None, ("missing.usda", "--prim", "/Tote"), "missing.usda: no such file"),
        ("tote", ("--prim", "/Nope"), "no prim at </Nope> (root prims: </Tote>)"),
        ("tote", ("--prim", "/Tote/body"), "</Tote/body> has no grasp slots"),
        ("tote", ("--prim", "/Tote", "--slots", "lid"),
         "</Tote>: no slot named 'lid'; available: left_edge, right_edge"),
        ("tote", ("--prim", "/Tote", "--slots", "left_edge,left_edge"), "is listed twice"),
        ("tote", ("--prim", "/Tote", "--ee-ids", "0"),
         "2 slots ('left_edge', 'right_edge') but 1 ee_ids [0]"),
        ("tote", ("--prim", "/Tote", "--ee-ids", "0,x"),
         "--ee-ids '0,x': expected comma-separated integers"),
        ("tote", ("--prim", "/Tote", "--ee-ids", "1,1"), "repeat an id"),
        ("tote", ("--prim", "/Tote", "--count", "0"), "count is 0; expected an integer >= 1"),
        ("tote", ("--prim", "/Tote", "--seed", "-3"), "seed is -3; expected an integer from 0 to"),
        ("tote", ("--prim", "/Tote", "--format", "npz"), "--format npz writes a binary file"),
        ("tote", ("--prim", "/Tote", "-o", "no/such/dir/out.json"), "does not exist; create it"),
        (BAD_RECORD, ("--prim", "/Obj"), "gripper_slots[0].forward: is 'up'; expected 3 numbers"),
        (ZERO_FORWARD, ("--prim", "/Obj"),
         "slot 0 'edge' on </Obj> cannot be sampled: forward is [0.0, 0.0, 0.0] (zero)"),
    ],
)  # fmt: skip
def test_cli_bad_input_is_one_line_and_exit_2(write_usda, capsys, monkeypatch, body, args, message):
    monkeypatch.chdir(write_usda('def Xform "Unused" {}').parent)
    if body == "tote":
        args = (TOTE, *args)
    elif body is not None:
        args = (write_usda(body, "bad.usda"), *args)
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("usdgrip sample: ")
    assert message in err


def test_cli_entry_point_reports_without_traceback(tmp_path):
    exe = Path(sys.executable).parent / "usdgrip"
    proc = subprocess.run(
        [str(exe), "sample", TOTE, "--prim", "/Tote", "--slots", "nope"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("no slot named 'nope'; available: left_edge, right_edge")
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_cli_slots_are_read_without_the_broken_slot_not_asked_for(tmp_path, capsys):
    good = """
        point3d gripperSlot:{n}:center = (0, 0, 0)
        vector3d gripperSlot:{n}:forward = (0, 0, -1)
        vector3d gripperSlot:{n}:spanAxis = (1, 0, 0)
        double gripperSlot:{n}:upRange = 0.1
    """
    path = tmp_path / "obj.usda"
    path.write_text(
        '#usda 1.0\ndef Xform "Obj" (prepend apiSchemas = ["GripperSlotAPI:t", '
        '"GripperSlotAPI:s"])\n{\n'
        + good.format(n="t")
        + '    string gripperSlot:s:center = "x"\n}\n'
    )
    code, out, _ = run_cli(capsys, path, "--prim", "/Obj", "--slots", "t", "--count", 2)
    targets = json.loads(out)["candidates"][0]["targets"]
    assert code == 0 and [target["slot"] for target in targets] == ["t"]
    code, _, err = run_cli(capsys, path, "--prim", "/Obj", "--count", 2)  # every slot: refused
    assert code == 2 and "gripperSlot:s:center" in err
    code, _, err = run_cli(capsys, path, "--prim", "/Obj", "--slots", "u", "--count", 2)
    assert code == 2 and "no slot named 'u'; available: t, s" in err
