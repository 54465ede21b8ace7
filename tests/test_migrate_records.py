"""`usdgrip migrate` and LambdaSim records: nothing a record holds is lost or silently dropped."""

from __future__ import annotations

import json

import pytest

from usdgrip.cli import main
from usdgrip.usd.slots import read_gripper_slots
from usdgrip.usd.stage import open_stage

RECORD = {
    "name": "h",
    "center": [0.5, 0, 0],
    "forward": [-1, 0, 0],
    "span_axis": [0, 1, 0],
    "up_range": 0.1,
    "slot_input_angle": 5,
    "LR": 1,
    "GroupName": "g",
    "version": 2,
}


def _box(records: list[dict], schema: str = "") -> str:
    """A /Box prim with LambdaSim ``records`` and, if given, GripperSlotAPI:h authoring."""
    api = 'prepend apiSchemas = ["GripperSlotAPI:h"]' if schema else ""
    return f"""
def Xform "Box" (
    {api}
    customData = {{
        dictionary lambdasim = {{
            string gripper_slots = '{json.dumps(records)}'
        }}
    }}
)
{{
    {schema}
}}
"""


def _slot(stage, name: str = "h"):
    (slot,) = [s for s in read_gripper_slots(stage.GetPrimAtPath("/Box")) if s.name == name]
    return slot


def test_record_merges_into_a_schema_slot_that_authors_only_some_values(write_usda, capsys):
    source = write_usda(_box([RECORD], "point3d gripperSlot:h:center = (0.5, 0, 0)"))
    assert main(["migrate", str(source)]) == 0
    out = capsys.readouterr().out
    stage = open_stage(source.with_name("asset.migrated.usda"))
    box = stage.GetPrimAtPath("/Box")
    assert box.GetCustomDataByKey("lambdasim:gripper_slots") is None
    slot = _slot(stage)
    assert slot.source == "schema"
    assert slot.forward_local.tolist() == [-1, 0, 0] and slot.span_axis_local.tolist() == [0, 1, 0]
    assert (slot.up_range_local, slot.slot_input_angle, slot.lr, slot.group) == (0.1, 5, 1, "g")
    assert "record [0] 'h' merged into GripperSlotAPI:h (authored forward, spanAxis" in out


def test_record_that_conflicts_with_the_schema_slot_is_kept_and_reported(write_usda, capsys):
    schema = (
        "point3d gripperSlot:h:center = (0.5, 0, 0)\n vector3d gripperSlot:h:forward = (0, 0, 1)"
    )
    source = write_usda(_box([RECORD], schema))
    assert main(["migrate", str(source)]) == 0
    out = capsys.readouterr().out
    assert (
        "record [0] 'h' left: GripperSlotAPI:h already authors forward (0, 0, 1) ≠ (-1, 0, 0)"
        in out
    )
    assert "nothing converted" in out and "no file written" in out
    assert not source.with_name("asset.migrated.usda").exists()


def test_conflicting_record_keeps_the_list_while_other_records_convert(write_usda, capsys):
    other = dict(RECORD, name="k")
    schema = "vector3d gripperSlot:h:forward = (0, 0, 1)"
    source = write_usda(_box([other, RECORD], schema))
    assert main(["migrate", str(source), "--in-place"]) == 0
    out = capsys.readouterr().out
    stage = open_stage(source)
    records = json.loads(stage.GetPrimAtPath("/Box").GetCustomDataByKey("lambdasim:gripper_slots"))
    assert records == [other, RECORD]  # every record kept as authored
    assert _slot(stage, "k").source == "schema"
    assert _slot(stage).forward_local.tolist() == [0, 0, 1]  # the schema value stays
    assert not stage.GetPrimAtPath("/Box").GetAttribute("gripperSlot:h:center").HasAuthoredValue()
    assert "record [0] 'k' → GripperSlotAPI:k" in out and "record [1] 'h' left" in out


def test_records_with_the_same_name_and_different_values_are_all_kept(write_usda, capsys):
    second = dict(RECORD, forward=[0, 0, 1])
    source = write_usda(_box([RECORD, second]))
    assert main(["migrate", str(source), "--in-place"]) == 0
    out = capsys.readouterr().out
    stage = open_stage(source)
    box = stage.GetPrimAtPath("/Box")
    assert json.loads(box.GetCustomDataByKey("lambdasim:gripper_slots")) == [RECORD, second]
    assert box.GetAppliedSchemas() == []
    assert "record [1] 'h' left: same name as record [0], which has forward (-1, 0, 0)" in out
    assert "record [0] 'h' left: same name as record [1]" in out
    assert "→ GripperSlotAPI" not in out


@pytest.mark.parametrize("angle", [5, float("nan")])
def test_identical_records_with_one_name_convert_to_one_slot(write_usda, capsys, angle):
    record = dict(RECORD, slot_input_angle=angle)
    source = write_usda(_box([record, dict(record)]))
    assert main(["migrate", str(source), "--in-place"]) == 0
    out = capsys.readouterr().out
    stage = open_stage(source)
    assert stage.GetPrimAtPath("/Box").GetCustomDataByKey("lambdasim") is None
    assert _slot(stage).forward_local.tolist() == [-1, 0, 0]
    assert "records [0], [1] 'h' → GripperSlotAPI:h" in out


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"LR": 2}, "LR is 2; the schema's lr holds only 0 (left) or 1 (right)"),
        ({"name": "center"}, "slot name 'center' is reserved"),
    ],
)
def test_record_without_a_schema_form_is_kept_and_named(write_usda, capsys, change, why):
    record = dict(RECORD, **change)
    source = write_usda(_box([record]))
    assert main(["migrate", str(source), "--in-place"]) == 0
    out = capsys.readouterr().out
    stage = open_stage(source)
    box = stage.GetPrimAtPath("/Box")
    assert json.loads(box.GetCustomDataByKey("lambdasim:gripper_slots")) == [record]
    assert f"record [0] {record['name']!r} left: {why}" in out
