"""Scale: migrate authors N records in one change block; sample bounds count x slots (item 11)."""

from __future__ import annotations

import json

from pxr import Tf, Usd

import usdgrip as usd_io  # the public names
from usdgrip.cli import main
from usdgrip.migration import migrate_stage
from usdgrip.sampling import MAX_TARGETS


def _records(count: int) -> str:
    return json.dumps(
        [
            {
                "center": [0.001 * i, 0.0, 0.05],
                "forward": [-1.0, 0.0, 0.0],
                "span_axis": [0.0, 1.0, 0.0],
                "up_range": 0.04,
                "slot_input_angle": 20.0,
                "LR": i % 2,
                "GroupName": "",
                "name": f"s{i}",
            }
            for i in range(count)
        ]
    )


def _object(write_usda, count: int):
    return write_usda(
        f"""
        def Xform "Obj" (
            customData = {{
                dictionary lambdasim = {{
                    string gripper_slots = '{_records(count)}'
                }}
            }}
        )
        {{
        }}
        """
    )


def test_migrate_authors_every_record_in_one_change(write_usda):
    stage = usd_io.open_stage(_object(write_usda, 300))
    notices = []
    listener = Tf.Notice.Register(
        Usd.Notice.ObjectsChanged, lambda notice, sender: notices.append(notice), stage
    )
    report = migrate_stage(stage)
    listener.Revoke()
    assert len(notices) == 1  # one recomposition, not one per ApplyAPI / attribute
    assert report.left == [] and len(report.changes) == 301
    spec = stage.GetRootLayer().GetPrimAtPath("/Obj")
    assert len(spec.GetInfo("apiSchemas").prependedItems) == 300
    assert "lambdasim" not in spec.customData
    prim = stage.GetPrimAtPath("/Obj")
    slots = usd_io.read_gripper_slots(prim, names=["s0", "s299"])
    assert [(s.name, s.lr, tuple(s.center_local)) for s in slots] == [
        ("s0", 0, (0.0, 0.0, 0.05)),
        ("s299", 1, (0.299, 0.0, 0.05)),
    ]


def test_migrated_records_keep_values_the_rules_fail(write_usda):
    records = json.loads(_records(1))
    records[0]["center"] = [1e308, 0, 0]
    records[0]["up_range"] = -1
    path = write_usda(
        'def Xform "Obj" (\n customData = {\n dictionary lambdasim = {\n'
        f"string gripper_slots = '{json.dumps(records)}'\n}}\n}}\n)\n{{\n}}\n"
    )
    stage = usd_io.open_stage(path)
    migrate_stage(stage)
    prim = stage.GetPrimAtPath("/Obj")
    assert prim.GetAttribute("gripperSlot:s0:upRange").Get() == -1  # moved as authored
    assert tuple(prim.GetAttribute("gripperSlot:s0:center").Get()) == (1e308, 0, 0)


def test_sample_bounds_count_times_slots_before_allocating(write_usda, capsys):
    slots = MAX_TARGETS // 100 + 1
    path = _object(write_usda, slots)
    argv = ["sample", str(path), "--prim", "/Obj", "--count", "100", "-o", "out.json"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        f"</Obj>: --count 100 x {slots} slots is {100 * slots:,} targets; expected at most "
        f"{MAX_TARGETS:,} per run (memory): lower --count to 99 or pick slots with --slots"
    ) in err
