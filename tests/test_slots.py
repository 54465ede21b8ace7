"""Grasp slot reading: schema instances, LambdaSim records (v1/v2, list/dict), world space."""

from __future__ import annotations

import json

import numpy as np
import pytest

from usdgrip.authoring import apply_gripper_slot
from usdgrip.errors import GripperError
from usdgrip.lambdasim import format_lambdasim_records, parse_lambdasim_records
from usdgrip.usd.authoring import write_slot_records
from usdgrip.usd.slots import read_gripper_slots

V2 = {
    "center": [0.1, 0, 0.2], "forward": [0, 0, -1], "span_axis": [1, 0, 0], "up_range": 0.3,
    "slot_input_angle": 30, "LR": 1, "GroupName": "carry", "version": 2,
}  # fmt: skip


@pytest.fixture
def box(open_usda):
    """Factory: a rotated, translated /Box whose customData lambdasim dictionary holds ``value``."""
    stages = []  # keep stages alive while the test uses their prims

    def make(value: str):
        stage = _open_box(open_usda, value)
        stages.append(stage)
        return stage.GetPrimAtPath("/Box")

    return make


def _open_box(open_usda, value: str):
    return open_usda(
        f"""
        def Xform "Box" (
            customData = {{
                dictionary lambdasim = {{
                    {value}
                }}
            }}
        ) {{
            double3 xformOp:translate = (1, 0, 0)
            float3 xformOp:rotateXYZ = (0, 0, 90)
            uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:rotateXYZ"]
        }}"""
    )


def _json_value(records) -> str:
    return "string gripper_slots = '" + json.dumps(records) + "'"


def test_v2_json_list_reads_in_world_space(box):
    (slot,) = read_gripper_slots(box(_json_value([V2])))
    assert (slot.name, slot.source, slot.version, slot.lr, slot.group) == (
        "slot_0",
        "lambdasim",
        2,
        1,
        "carry",
    )
    # Rotation 90° about Z then translation (1, 0, 0).
    np.testing.assert_allclose(slot.center, [1.0, 0.1, 0.2], atol=1e-9)
    np.testing.assert_allclose(slot.span_axis, [0, 1, 0], atol=1e-9)
    np.testing.assert_allclose(slot.forward, [0, 0, -1], atol=1e-9)
    np.testing.assert_allclose(slot.up_axis, np.cross(slot.forward, slot.span_axis), atol=1e-9)
    assert slot.up_range == pytest.approx(0.3)


def test_v1_up_vector_becomes_up_range(box):
    v1 = {k: v for k, v in V2.items() if k not in ("up_range", "version")} | {
        "up": [0, 0.15, 0],
        "version": 1,
    }
    (slot,) = read_gripper_slots(box(_json_value([v1])))
    assert slot.version == 1 and slot.up_range_local == pytest.approx(0.3)


def test_dictionary_of_records_with_double3_vectors(box):
    value = """
        dictionary gripper_slots = {
            dictionary left_edge = {
                double3 center = (0, 0, 0.2)
                double3 forward = (0, 0, -1)
                double3 span_axis = (1, 0, 0)
                double up_range = 0.2
                double slot_input_angle = 10
                int LR = 0
                string GroupName = ""
                int version = 2
            }
        }"""
    (slot,) = read_gripper_slots(box(value))
    assert slot.name == "left_edge" and slot.up_range == pytest.approx(0.2) and slot.group == ""


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ("[{", "not valid JSON"),
        (
            json.dumps([{**V2, "center": [0, 0]}]),
            r"gripper_slots\[0\]\.center: is \[0, 0\]; expected 3 numbers",
        ),
        (
            json.dumps([V2, {k: v for k, v in V2.items() if k != "LR"}]),
            r"gripper_slots\[1\]\.LR: missing",
        ),
        (json.dumps([{**V2, "up_range": "big"}]), r"\[0\]\.up_range: is 'big'; expected a number"),
        (json.dumps([{**V2, "GroupName": 3}]), r"\[0\]\.GroupName: is 3; expected a string"),
        (json.dumps([{**V2, "version": 7}]), r"\[0\]\.version: is 7; expected 1 or 2"),
        (json.dumps({"a": 1}), r"gripper_slots\['a'\]: expected a record dictionary"),
        (json.dumps(5), "expected a list of records"),
    ],
)
def test_malformed_records_raise_naming_prim_record_and_key(box, records, message):
    prim = box("string gripper_slots = '" + records + "'")
    with pytest.raises(GripperError, match=message) as info:
        read_gripper_slots(prim)
    assert "</Box>" in str(info.value) and ".usda: </Box>" in str(info.value)


def test_schema_slots_come_first_and_win_on_name_clash(box):
    prim = box(_json_value({"left": V2, "other": V2}))
    apply_gripper_slot(prim, "left", center=(0, 0, 1), up_range=0.5, lr="left", group="g")
    slots = read_gripper_slots(prim)
    assert [(s.name, s.source) for s in slots] == [("left", "schema"), ("other", "lambdasim")]
    assert slots[0].up_range == pytest.approx(0.5) and slots[0].lr == 0


def test_records_round_trip_through_customdata(box):
    prim = box(_json_value([V2, {**V2, "future_key": {"x": 1}}]))
    slots = read_gripper_slots(prim)
    write_slot_records(prim, slots)
    written = json.loads(prim.GetCustomDataByKey("lambdasim:gripper_slots"))
    assert all(r["version"] == 2 and "up" not in r for r in written)
    assert written[1]["future_key"] == {"x": 1} and "name" not in written[0]
    again = read_gripper_slots(prim)
    for a, b in zip(slots, again, strict=True):
        np.testing.assert_allclose(a.center, b.center)
        assert (a.name, a.up_range, a.lr, a.group) == (b.name, b.up_range, b.lr, b.group)


def test_format_writes_version_2_and_names_only_when_needed():
    records, problems = parse_lambdasim_records({"handle": V2})
    assert not problems
    (entry,) = json.loads(format_lambdasim_records(records))
    assert entry["name"] == "handle" and entry["version"] == 2
    assert set(entry) == {*V2, "name"}


def test_scaled_object_scales_up_range(open_usda):
    stage = open_usda(
        'def Xform "Box" {\n float3 xformOp:scale = (2, 2, 2)\n'
        'uniform token[] xformOpOrder = ["xformOp:scale"]\n}'
    )
    prim = stage.GetPrimAtPath("/Box")
    apply_gripper_slot(prim, "a", center=(0.1, 0, 0), up_range=0.3)
    (slot,) = read_gripper_slots(prim)
    assert slot.up_range == pytest.approx(0.6)
    np.testing.assert_allclose(slot.center, [0.2, 0, 0])
