"""Public API argument checks: TypeError/ValueError naming the argument (issue 13, item 14)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import EXAMPLES
from pxr import Usd
from test_isaac_yaml import make_result

import usdgrip
import usdgrip as usd_io  # the public names
from usdgrip.sampling import MAX_ID


@pytest.fixture(scope="module")
def tote():
    stage = usd_io.open_stage(EXAMPLES / "tote.usda")
    prim = stage.GetPrimAtPath("/Tote")
    return stage, prim, usdgrip.read_gripper_slots(prim)


@pytest.fixture
def xform():
    stage = Usd.Stage.CreateInMemory()
    prim = stage.DefinePrim("/A", "Xform")
    yield prim
    del stage


def test_read_gripper_slots_checks_prim_and_names(tote):
    stage, prim, _ = tote
    with pytest.raises(TypeError, match=r"^prim is None; expected a Usd.Prim"):
        usdgrip.read_gripper_slots(None)
    with pytest.raises(ValueError, match=r"^prim is a null Usd.Prim"):
        usdgrip.read_gripper_slots(stage.GetPrimAtPath("/Nope"))
    with pytest.raises(
        TypeError, match=r"^names is 'left_edge'; expected a collection .*\['left_edge'\]"
    ):
        usdgrip.read_gripper_slots(prim, names="left_edge")
    assert [s.name for s in usdgrip.read_gripper_slots(prim, names=("left_edge",))] == ["left_edge"]


def test_a_prim_of_a_released_stage_is_named():
    prim = usd_io.open_stage(EXAMPLES / "tote.usda").GetPrimAtPath("/Tote")  # stage released
    with pytest.raises(
        ValueError, match=r"^prim </Tote> is no longer valid: its stage was released"
    ):
        usdgrip.read_gripper_slots(prim)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: usdgrip.validate("x.usda", params=[1, 2]), TypeError, "params is list"),
        (lambda: usdgrip.validate(None), TypeError, "stage_or_path is NoneType"),
        (lambda: usdgrip.plan_grasps(None), TypeError, "request is NoneType; expected a Grasp"),
        (lambda: usdgrip.migrate_stage(None), TypeError, "stage is None; expected a Usd.Stage"),
        (lambda: usdgrip.migrate_stage("a.usda"), TypeError, "stage is a str ('a.usda')"),
        (lambda: usdgrip.check_slot(None), TypeError, "slot is NoneType; expected a GripperSlot"),
        (lambda: usdgrip.find_gripper_sites(None), TypeError, "stage is None"),
        (lambda: usdgrip.read_gripper_site(None), TypeError, "prim is None"),
        (lambda: usdgrip.set_gripper_site(None), TypeError, "prim is None"),
        (lambda: usdgrip.write_slot_records(None, []), TypeError, "prim is None"),
        (lambda: usdgrip.sample_gripper_groups(None), TypeError, "slots is NoneType"),
        (lambda: usdgrip.sample_gripper_groups([None], (0,)), TypeError, "slots[0] is NoneType"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_wrong_types_name_the_argument(call, error, message):
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value).startswith(message), raised.value


def test_write_isaac_grasp_checks_result_and_path(tmp_path):
    with pytest.raises(TypeError, match=r"^result is NoneType; expected a GraspPlanningResult"):
        usdgrip.write_isaac_grasp(None, tmp_path / "g.yaml")
    result = make_result(np.eye(4)[None])
    with pytest.raises(ValueError, match=r"is a folder; expected a file path, e\.g\. grasps\.yaml"):
        usdgrip.write_isaac_grasp(result, tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert usdgrip.write_isaac_grasp(result, tmp_path / "g.yaml").is_file()


def test_define_gripper_site_checks_stage_path_and_values():
    stage = Usd.Stage.CreateInMemory()
    with pytest.raises(
        ValueError, match=r"^site path is 'G3'; expected an absolute prim path, e\.g\. '/G3'"
    ):
        usdgrip.define_gripper_site(stage, "G3", 0.085)
    with pytest.raises(TypeError, match=r"^site path is None"):
        usdgrip.define_gripper_site(stage, None, 0.085)
    with pytest.raises(TypeError, match=r"^max_opening is None; expected a number"):
        usdgrip.define_gripper_site(stage, "/G", None)
    with pytest.raises(TypeError, match=r"^stage is None"):
        usdgrip.define_gripper_site(None, "/G", 0.085)
    assert not stage.GetPseudoRoot().GetChildren()  # nothing authored by a refused call
    assert usdgrip.define_gripper_site(stage, "/G3", 0.085).GetPath() == "/G3"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"center": (math.nan, 0, 0)}, "GS.001 slot-axes (failure): slot 's' (GripperSlotAPI): "
         "center is [nan, 0.0, 0.0]; expected 3 finite numbers"),
        ({"up_range": 0}, "GS.002 slot-up-range (failure): slot 's' (GripperSlotAPI): upRange is 0 m"
         "; expected a finite value > 0 m"),
        ({"up_range": -1}, "upRange is -1 m; expected a finite value > 0 m"),
        ({"up_range": math.inf}, "upRange is inf m"),
        ({"forward": (0, 0, 0)}, "forward is [0.0, 0.0, 0.0] (zero); expected a non-zero vector"),
        ({"slot_input_angle": 400}, "GS.003 slot-input-angle (failure): slot 's' (GripperSlotAPI): "
         "slotInputAngle is 400°"),
        ({"lr": "middle"}, "GS.004 slot-lr (failure): slot 's' (GripperSlotAPI): lr is 'middle'"),
    ],
)  # fmt: skip
def test_apply_gripper_slot_refuses_values_the_rules_fail(xform, values, message):
    with pytest.raises(ValueError) as raised:
        usdgrip.apply_gripper_slot(xform, "s", **values)
    assert str(raised.value).startswith("</A> slot 's': "), raised.value
    assert message in str(raised.value) and "nothing was authored" in str(raised.value)
    assert xform.GetAppliedSchemas() == [] and not xform.GetAuthoredProperties()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ee_ids": (-1, 1)}, "ee_ids [-1, 1]: id -1 is outside 0 to"),
        ({"ee_ids": (0, 2**63)}, f"ee_ids [0, {2**63}]: id {2**63} is outside 0 to {MAX_ID}"),
        ({"seed": 2**63}, f"seed is {2**63}; expected an integer from 0 to {MAX_ID}"),
        ({"seed": -1}, "seed is -1; expected an integer from 0 to"),
        (
            {"count": 10**9},
            "count 1000000000 x 2 slots is 2,000,000,000 targets; expected at most 10,000,000 per call",
        ),
    ],
)
def test_sample_gripper_groups_checks_ids_seed_and_array_size(tote, kwargs, message):
    with pytest.raises(ValueError, match="^" + message.replace("[", r"\[").replace("]", r"\]")):
        usdgrip.sample_gripper_groups(tote[2], **{"ee_ids": (0, 1), **kwargs})
    samples = usdgrip.sample_gripper_groups(tote[2], ee_ids=(0, MAX_ID), count=2, seed=MAX_ID)
    assert samples.poses.shape == (2, 2, 4, 4)
