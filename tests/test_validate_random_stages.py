"""Random small stages: the C++ scan with its counting proofs finds what the Python scan finds.

Each stage mixes what discovery and reading must get right: sites declared or not, marker
properties and children in every spelling, overs, inactive prims, relationships named like
markers, time samples, blocked values, non-finite points, instancing, nested sites, slots.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from usdgrip.rules import validate
from usdgrip.usd.discovery import iter_site_prims
from usdgrip.usd.stage import open_stage

CURVE_NAMES = ["gripper_forward_axis", "forward_axis", "gripper_grip_line", "grip_line", "other"]


def _curve(rng: random.Random, name: str) -> list[str]:
    spec = rng.choice(["def BasisCurves", "def BasisCurves", "def Mesh", "def Scope", "over"])
    head = f'{spec} "{name}"' + (" (active = false)" if rng.random() < 0.1 else "")
    lines = [head, "{"]
    if rng.random() < 0.85:
        values = ["0", "-0.0", "0.01", "-0.02", "1", "inf", "nan", "0.05"]
        points = [
            "("
            + ", ".join(rng.choice(values[:4] if rng.random() < 0.7 else values) for _ in "xyz")
            + ")"
            for _ in range(rng.choice([0, 1, 2, 2, 2, 3]))
        ]
        lines.append(f"    point3f[] points = [{', '.join(points)}]")
    kind = rng.random()
    if kind < 0.6:
        lines.append(f'    uniform token type = "{rng.choice(["linear", "linear", "cubic"])}"')
    elif kind < 0.7:
        lines.append("    uniform token type")
    if rng.random() < 0.7:
        lines.append(f"    int[] curveVertexCounts = [{rng.choice([2, 2, 3, 1])}]")
    if rng.random() < 0.2:
        lines += [
            "    double3 xformOp:scale = (2, 2, 2)",
            '    uniform token[] xformOpOrder = ["xformOp:scale"]',
        ]
    return [*lines, "}"]


def _site(rng: random.Random, name: str, nested: bool = True) -> list[str]:
    meta = []
    if rng.random() < 0.6:
        schemas = ['"GripperSiteAPI"'] + (['"GripperSlotAPI:a"'] if rng.random() < 0.2 else [])
        meta.append(f"prepend apiSchemas = [{', '.join(schemas)}]")
    if rng.random() < 0.1:
        meta.append("active = false")
    spec = rng.choice(["def Xform", "def Xform", "def Mesh", "def Scope", "over"])
    joined = "\n".join(meta)
    lines = [f'{spec} "{name}"' + (f" ({joined})" if meta else ""), "{"]
    lines.append(
        rng.choice(
            [
                "    float gripper:maxOpening = 0.085",
                "    float gripper:maxOpening = -1",
                "    float gripper:maxOpening = nan",
                "    float gripper:maxOpening.timeSamples = { 0: 0.05 }",
                "    float gripper:maxOpening = None",
                "    custom float gripper_maxOpening = 0.01",
                "    custom double custom:maxOpening = 0.04",
                "    rel gripper:maxOpening",
                "",
                "",
            ]
        )
    )
    if rng.random() < 0.15:
        socket = rng.choice(["Gripper", "Other"])
        lines.append(f'    custom token simready:attachment:socketType = "{socket}"')
    if rng.random() < 0.2:
        lines.append(f"    double gripper:maxPayload = {rng.choice(['2', '-1', 'inf'])}")
    if rng.random() < 0.3:
        lines += [
            "    double3 xformOp:rotateXYZ = (0, 0, 90)",
            '    uniform token[] xformOpOrder = ["xformOp:rotateXYZ"]',
        ]
    for child in rng.sample(CURVE_NAMES, rng.randint(0, 4)):
        lines += ["    " + line for line in _curve(rng, child)]
    if nested and rng.random() < 0.2:
        lines += ["    " + line for line in _site(rng, "nested", nested=False)]
    return [*lines, "}"]


def _slotted(rng: random.Random, name: str) -> list[str]:
    instances = rng.sample(["a", "b", "left_edge"], rng.randint(1, 3))
    applied = ", ".join(f'"GripperSlotAPI:{i}"' for i in instances)
    lines = [f'def Xform "{name}" (prepend apiSchemas = [{applied}])', "{"]
    for i in instances:
        if rng.random() < 0.6:
            lines.append(f"    double gripperSlot:{i}:upRange = {rng.choice(['0.2', '-1', 'nan'])}")
        if rng.random() < 0.6:
            lines.append(f'    string gripperSlot:{i}:groupName = "{rng.choice(["g", ""])}"')
        if rng.random() < 0.6:
            lines.append(
                f'    uniform token gripperSlot:{i}:lr = "{rng.choice(["left", "right", "up"])}"'
            )
        if rng.random() < 0.6:
            lines.append(
                f"    vector3d gripperSlot:{i}:forward = {rng.choice(['(0, 0, -1)', '(0, 0, 0)'])}"
            )
        if rng.random() < 0.6:
            lines.append(
                f"    vector3d gripperSlot:{i}:spanAxis = {rng.choice(['(1, 0, 0)', '(0, 0, 1)'])}"
            )
    if rng.random() < 0.2:
        lines += ['    def Scope "gripper_grip_line"', "    {", "    }"]
    return [*lines, "}"]


def random_stage_text(seed: int) -> str:
    rng = random.Random(seed)
    body: list[str] = []
    for i in range(rng.randint(1, 5)):
        body += _site(rng, f"s{i}")
    for i in range(rng.randint(0, 2)):
        body += _slotted(rng, f"o{i}")
    prototype: list[str] = []
    if rng.random() < 0.3:
        prototype = ['class Xform "Proto"', "{", *("    " + x for x in _site(rng, "inner")), "}"]
        body += [
            'def Xform "inst" (instanceable = true',
            "prepend references = </Proto>)",
            "{",
            "}",
        ]
    mpu = rng.choice(["1", "0.01"])
    world = ['def Xform "World"', "{", *("    " + line for line in body), "}"]
    return "\n".join([f"#usda 1.0\n(\n    metersPerUnit = {mpu}\n)\n", *prototype, *world]) + "\n"


@pytest.mark.parametrize("seed", range(60))
def test_both_scans_give_the_same_report(write_usda, seed):
    stage = open_stage(write_usda(random_stage_text(seed), f"random_{seed}.usda"))
    with np.errstate(all="ignore"):
        fast = [i.to_dict() for i in validate(stage, scan="collection").issues]
        slow = [i.to_dict() for i in validate(stage, scan="traverse").issues]
        sites = {p for p, _ in iter_site_prims(stage)}
    assert fast == slow
    assert {i["prim"] for i in fast if i["code"].startswith("GR.00")} <= {
        str(p.GetPath()) for p in sites
    }
