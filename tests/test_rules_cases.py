"""OK / NOK snippets per rule, beyond the doc examples (edge cases, messages)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from usdgrip.rules import validate

FWD = """
    def BasisCurves "gripper_forward_axis"
    {
        point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
        int[] curveVertexCounts = [2]
        uniform token type = "linear"
    }
"""
GRIP = """
    def BasisCurves "gripper_grip_line"
    {
        point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
        int[] curveVertexCounts = [2]
        uniform token type = "linear"
    }
"""


def site(
    attrs: str = "float gripper:maxOpening = 0.085",
    children: str = FWD + GRIP,
    *,
    api: bool = True,
    type_: str = "Xform",
    meta: str = "",
) -> str:
    schemas = 'prepend apiSchemas = ["GripperSiteAPI"]' if api else ""
    return f'def {type_} "tcp" (\n{schemas}\n{meta}\n)\n{{\n{attrs}\n{children}\n}}\n'


def curve(
    name: str,
    points: str,
    extra: str = 'int[] curveVertexCounts = [2]\nuniform token type = "linear"',
    type_: str = "BasisCurves",
) -> str:
    return f'def {type_} "{name}"\n{{\npoint3f[] points = {points}\n{extra}\n}}\n'


GRIPPERS = Path(__file__).resolve().parent.parent / "examples" / "grippers"
PRISMATIC = (GRIPPERS / "prismatic_two_finger.usda").read_text()
REVOLUTE = (GRIPPERS / "revolute_jaw.usda").read_text()
RIGHT_PAD = """    def Xform "finger_right" (
        prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]
    )
    {
        float physics:mass = 0.05
        double3 xformOp:translate = (0.045, 0, 0.065)
        uniform token[] xformOpOrder = ["xformOp:translate"]

        def Cube "pad" (
            prepend apiSchemas = ["PhysicsCollisionAPI"]
        )"""


def edited(text: str, *pairs: tuple[str, str]) -> str:
    """``text`` with each ``(old, new)`` replaced once (each ``old`` must occur)."""
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def slot(**overrides: str) -> str:
    values = {
        "forward": "(0, 0, -1)",
        "spanAxis": "(1, 0, 0)",
        "upRange": "0.2",
        "slotInputAngle": "30",
        "lr": '"left"',
    }
    values.update(overrides)
    types = {
        "center": "point3d",
        "forward": "vector3d",
        "spanAxis": "vector3d",
        "upRange": "double",
        "slotInputAngle": "double",
        "lr": "uniform token",
    }
    body = "\n".join(f"{types[k]} gripperSlot:s:{k} = {v}" for k, v in values.items())
    return f'def Xform "Obj" (\nprepend apiSchemas = ["GripperSlotAPI:s"]\n)\n{{\n{body}\n}}\n'


def records(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return (
        'def Xform "Obj" (\ncustomData = {\ndictionary lambdasim = {\n'
        f"string gripper_slots = '{text}'\n}}\n}}\n)\n{{\n}}\n"
    )


def record(**overrides):
    base = {
        "center": [0, 0, 0],
        "forward": [-1, 0, 0],
        "span_axis": [0, 1, 0],
        "up_range": 0.04,
        "slot_input_angle": 20,
        "LR": 1,
        "GroupName": "",
        "version": 2,
    }
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def prop(
    points: str = "[(-0.04, 0, 0), (0.04, 0, 0)]",
    extra: str = 'token type = "linear"',
    size: float = 0.04,
    name: str = "grasp_identifier_01",
    type_: str = "BasisCurves",
) -> str:
    """A rigid-body block prop (default prim) with one grasp vector line."""
    return f"""#usda 1.0
(
    defaultPrim = "Block"
    metersPerUnit = 1
)

def Xform "Block" (
    prepend apiSchemas = ["PhysicsRigidBodyAPI"]
)
{{
    def Cube "body"
    {{
        double size = {size}
    }}
    def {type_} "{name}"
    {{
        point3f[] points = {points}
        {extra}
    }}
}}
"""  # fmt: skip


def collider_prop(binding: str = "", material: str = "", api: str = '"PhysicsRigidBodyAPI"') -> str:
    """:func:`prop` whose body is a collider, with ``binding`` in it and ``material`` beside it."""
    body = (
        '    def Cube "body" (\n'
        '        prepend apiSchemas = ["PhysicsCollisionAPI", "MaterialBindingAPI"]\n'
        "    )\n    {\n        double size = 0.04\n"
        f"        {binding}\n    }}\n{material}"
    )
    text = prop().replace('    def Cube "body"\n    {\n        double size = 0.04\n    }\n', body)
    return text.replace('"PhysicsRigidBodyAPI"', api)


PHYSICS_MATERIAL = (
    '    def Material "PM" (\n        prepend apiSchemas = ["PhysicsMaterialAPI"]\n    )\n'
    "    {\n        float physics:staticFriction = 0.5\n    }\n"
)
RENDER_MATERIAL = '    def Material "Red"\n    {\n    }\n'

ISAAC = 'prepend apiSchemas = ["GripperSiteAPI", "IsaacSiteAPI"]'
MJC = 'prepend apiSchemas = ["GripperSiteAPI", "MjcSiteAPI"]'
FORCE = "float gripper:maxOpening = 0.085"


BOX = """
def Cube "body"
{
    double size = 0.1
    double3 xformOp:translate = (0, 0, 0.05)
    uniform token[] xformOpOrder = ["xformOp:translate"]
}
"""
BOX_MESH = """
def Mesh "body"
{
    int[] faceVertexCounts = [4, 4, 4, 4, 4, 4]
    int[] faceVertexIndices = [0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7]
    point3f[] points = [(-0.05, -0.05, 0), (0.05, -0.05, 0), (0.05, 0.05, 0), (-0.05, 0.05, 0), (-0.05, -0.05, 0.1), (0.05, -0.05, 0.1), (0.05, 0.05, 0.1), (-0.05, 0.05, 0.1)]
}
"""  # fmt: skip


def on_box(snippet: str, body: str = BOX, transform: str = "") -> str:
    """``snippet`` (an ``Obj`` prim) with ``body`` geometry (a 10 cm box on z = 0) inside."""
    head, _, tail = snippet.rpartition("}")
    return f"{head}{transform}\n{body}\n}}{tail}"


CASES = [
    # (code, expected to fire, snippet, message fragment)
    ("GSP.001", True, prop(type_="Xform"), "no BasisCurves named grasp_identifier*"),
    # GR.013 (SimReady GR.ISA.001): only sites that apply IsaacSiteAPI.
    ("GR.013", True, site(api=False, meta=ISAAC), "isaac:Description is not authored"),
    (
        "GR.013",
        True,
        site(attrs=f'{FORCE}\nstring isaac:Description = ""', api=False, meta=ISAAC),
        "isaac:Description is '' (empty)",
    ),
    (
        "GR.013",
        True,
        site(attrs=f"{FORCE}\nint isaac:Description = 3", api=False, meta=ISAAC),
        "isaac:Description is int, expected token or string (IsaacSiteAPI is applied)",
    ),
    (
        "GR.013",
        True,
        site(
            attrs=f'{FORCE}\nstring isaac:Description.timeSamples = {{0: "x"}}',
            api=False,
            meta=ISAAC,
        ),
        "isaac:Description is time-sampled",
    ),
    (
        "GR.013",
        False,
        site(attrs=f'{FORCE}\nstring isaac:Description = "grasp centre"', api=False, meta=ISAAC),
        None,
    ),
    ("GR.013", False, site(), None),  # a plain usdgrip site: no Isaac runtime declared
    ("GR.013", False, site(attrs=f'{FORCE}\nstring isaac:Description = ""'), None),
    # GR.014 (SimReady MUJOCO.GR.001): only sites that apply MjcSiteAPI.
    (
        "GR.014",
        True,
        site(attrs=f"{FORCE}\nuniform int mjc:group = -1", api=False, meta=MJC),
        "mjc:group is -1; expected a non-negative integer",
    ),
    (
        "GR.014",
        True,
        site(attrs=f"{FORCE}\nfloat mjc:group = 1", api=False, meta=MJC),
        "mjc:group is float, expected int (MjcSiteAPI is applied)",
    ),
    ("GR.014", False, site(api=False, meta=MJC), None),  # not authored: group 0
    (
        "GR.014",
        False,
        site(attrs=f"{FORCE}\nint mjc:group = 5", api=False, meta=MJC),
        None,
    ),  # SimReady's example: not uniform
    ("GR.014", False, site(attrs=f"{FORCE}\nint mjc:group = -1"), None),  # no MjcSiteAPI
    # GP.004 (SimReady PMT.001): the colliders of graspable props.
    ("GP.004", True, collider_prop(), "no material is bound"),
    (
        "GP.004",
        True,
        collider_prop("rel material:binding = </Block/Red>", RENDER_MATERIAL),
        "the material bound through material:binding, </Block/Red>, has no PhysicsMaterialAPI",
    ),
    (
        "GP.004",
        True,
        collider_prop("rel material:binding:physics = </Block/Gone>"),
        "material:binding:physics of </Block/body> targets </Block/Gone>, which is not a Material",
    ),
    (
        "GP.004",
        False,
        collider_prop("rel material:binding:physics = </Block/PM>", PHYSICS_MATERIAL),
        None,
    ),
    (
        "GP.004",
        False,
        collider_prop("rel material:binding = </Block/PM>", PHYSICS_MATERIAL),
        None,
    ),  # the all-purpose fallback, as USD resolves it
    ("GP.004", False, collider_prop(api='"PhysicsMassAPI"'), None),  # no rigid body: not a prop
    ("GSP.001", True, prop(points="[]"), "has 0 point(s)"),
    ("GSP.001", False, prop(), None),
    (
        "GSP.001",
        False,
        prop(type_="Xform").replace('(\n    prepend apiSchemas = ["PhysicsRigidBodyAPI"]\n)', ""),
        None,
    ),
    ("GP.001", True, prop(points="[(-0.04, 0.1, 0), (0.04, 0.1, 0)]"), "does not meet the surface"),
    ("GP.001", False, prop(), None),
    ("GP.002", True, prop(extra=""), "fallback is cubic"),
    ("GP.002", False, prop(), None),
    ("GP.003", True, prop(points="[(-0.2, 0, 0), (0.2, 0, 0)]", size=0.3), "0.3 m apart"),
    ("GP.003", False, prop(), None),
    ("GR.001", True, site(type_="Scope"), "expected Xform"),
    ("GR.001", True, site(type_="Mesh"), "'Mesh'"),
    ("GR.001", False, site(), None),
    ("GR.002", True, site(children=GRIP), "no child gripper_forward_axis"),
    (
        "GR.002",
        True,
        site(
            children=curve("gripper_forward_axis", "[(0, 0, 0), (0, 0, 1)]", type_="Xform") + GRIP
        ),
        "expected BasisCurves",
    ),
    ("GR.002", False, site(children=curve("forward_axis", "[(0, 0, 0), (0, 0, 1)]") + GRIP), None),
    (
        "GR.003",
        True,
        site(
            children=FWD
            + curve("gripper_grip_line", "[(0, 0, 0)]")
            + curve("grip_line", "[(0, -1, 0), (0, 1, 0)]")
        ),
        "grip_line is ignored",
    ),
    ("GR.003", True, site(children=FWD + curve("gripper_grip_line", "[]")), "has 0 point(s)"),
    (
        "GR.003",
        False,
        site(children=FWD + curve("grip_line", "[(0, -0.01, 0), (0, 0.01, 0)]")),
        None,
    ),
    (
        "GR.003",
        False,
        site(
            children=FWD
            + curve(
                "gripper_grip_line",
                "[(0, -0.01, 0), (0, 0, 0), (0, 0.01, 0)]",
                'int[] curveVertexCounts = [3]\nuniform token type = "linear"',
            )
        ),
        None,
    ),
    ("GR.004", True, site(attrs="float gripper:maxOpening = nan"), "gripper:maxOpening is nan m"),
    ("GR.004", True, site(attrs="float gripper:maxOpening = 0"), "expected a finite value > 0 m"),
    (
        "GR.004",
        True,
        site(attrs="float gripper:maxOpening = -1\nfloat gripper_maxOpening = 0.085"),
        "gripper:maxOpening is -1 m",
    ),
    ("GR.004", True, site(attrs="float gripper:maxOpening"), "no max opening authored"),
    ("GR.004", False, site(attrs="custom float custom:maxOpening = 0.05", api=False), None),
    (
        "GR.005",
        True,
        site(children=curve("gripper_forward_axis", "[(0, 0, 0), (0, 0, inf)]") + GRIP),
        "not finite",
    ),
    (
        "GR.005",
        True,
        site(children=FWD + curve("gripper_grip_line", "[(1, 1, 1), (1, 1, 1)]")),
        "zero length",
    ),
    ("GR.005", False, site(), None),
    (
        "GR.006",
        True,
        site(children=FWD + curve("gripper_grip_line", "[(0, 0, 0), (0, 0.01, 0.1)]")),
        "from perpendicular",
    ),
    (
        "GR.006",
        False,
        site(children=FWD + curve("gripper_grip_line", "[(0, 0, 0), (0, 0.1, 0.01)]")),
        None,
    ),
    (
        "GR.007",
        True,
        site(
            children=FWD
            + curve(
                "gripper_grip_line",
                "[(0, -0.01, 0), (0, 0.01, 0)]",
                'int[] curveVertexCounts = [2]\nuniform token type = "cubic"',
            )
        ),
        'type is "cubic"',
    ),
    (
        "GR.007",
        True,
        site(
            children=FWD
            + curve(
                "gripper_grip_line",
                "[(0, -0.01, 0), (0, 0.01, 0)]",
                'int[] curveVertexCounts = [3]\nuniform token type = "linear"',
            )
        ),
        "curveVertexCounts is [3]",
    ),
    ("GR.007", False, site(), None),
    (
        "GR.008",
        True,
        site(children=FWD + GRIP + curve("grip_line", "[(0, -1, 0), (0, 1, 0)]")),
        "both gripper_grip_line and grip_line",
    ),
    (
        "GR.008",
        True,
        site(attrs="float gripper:maxOpening = 0.085\nfloat gripper_maxOpening = 0.085"),
        "ignored because gripper:maxOpening wins",
    ),
    (
        "GR.008",
        True,
        site(
            attrs='float gripper_maxOpening = 0.085\ncustom token simready:attactment:socketType = "Gripper"',
            api=False,
        ),
        "misspelt",
    ),
    ("GR.008", False, site(attrs="float gripper_maxOpening = 0.085", api=False), None),
    ("GR.009", True, site(attrs="float gripper:maxOpening = 0.01"), ">= max opening 0.01 m"),
    ("GR.009", False, site(attrs="float gripper:maxOpening = 0.021"), None),
    (
        "GR.010",
        True,
        site(attrs="float gripper:maxOpening = 0.085\nfloat gripper_maxPayload = -2"),
        "gripper_maxPayload is -2 kg",
    ),
    ("GR.010", False, site(attrs="float gripper:maxOpening = 0.085"), None),
    (
        "GR.010",
        True,
        site(attrs="float gripper:maxOpening = 0.085\nint gripper:maxPayload = 2"),
        "gripper:maxPayload is int, expected float",
    ),
    (
        "GR.010",
        False,
        site(attrs="float gripper:maxOpening = 0.085\nint gripper_maxPayload = 2"),
        None,
    ),  # the legacy name has no schema type
    (
        "GR.004",
        True,
        site(attrs="int gripper:maxOpening = 1"),
        "gripper:maxOpening is int, expected float",
    ),
    (
        "GR.010",
        True,
        site(attrs="float gripper:maxOpening = 0.085\ndouble gripper:maxPayload = nan"),
        "gripper:maxPayload is nan kg; expected a finite value > 0 kg",
    ),
    *(
        (
            "GR.012",
            True,
            site(attrs=f"float gripper:maxOpening = 0.085\n{force}"),
            fragment,
        )
        for force, fragment in (
            ("float gripper:maxGripForce = 0", "gripper:maxGripForce is 0 N; expected a finite"),
            ("float gripper:maxGripForce = -235", "gripper:maxGripForce is -235 N"),
            ("double gripper:maxGripForce = nan", "gripper:maxGripForce is nan N"),
            ("double gripper:maxGripForce = -inf", "gripper:maxGripForce is -inf N"),
            ("double gripper:maxGripForce = inf", "gripper:maxGripForce is inf N"),
            # The physics bound (site_limits.MAX_GRIP_FORCE): above it physics uses its default.
            ("double gripper:maxGripForce = 1e7", "expected at most 100000 N, the strongest"),
            ("float gripper:maxGripForce = 100001", "gripper:maxGripForce is 100001 N"),
            ('string gripper:maxGripForce = "235 N"', "gripper:maxGripForce is string"),
            ("float3 gripper:maxGripForce = (1, 2, 3)", "gripper:maxGripForce is float3"),
            # Issue 21 item 15: the schema's type is float; an integer is a type error too.
            ("int gripper:maxGripForce = 50", "gripper:maxGripForce is int, expected float"),
            ("uint gripper:maxGripForce = 50", "gripper:maxGripForce is uint, expected float"),
            ("int64 gripper:maxGripForce = 50", "gripper:maxGripForce is int64, expected float"),
            (
                "float gripper:maxGripForce.timeSamples = {0: 100}",
                "gripper:maxGripForce is time-sampled with no default value",
            ),
        )
    ),
    *(
        ("GR.012", False, site(attrs=f"float gripper:maxOpening = 0.085\n{force}"), None)
        for force in (
            "",  # optional: not authored is fine
            "float gripper:maxGripForce",  # declared without a value: not authored
            "float gripper:maxGripForce = 235",
            "double gripper:maxGripForce = 1e-3",
            "double gripper:maxGripForce = 100000",  # the bound itself
            "half gripper:maxGripForce = 140",
        )
    ),
    ("GR.011", True, site(attrs="float gripper_maxOpening = 0.085", api=False), "legacy markers"),
    (
        "GR.011",
        False,
        site(
            attrs='float gripper_maxOpening = 0.085\ncustom token simready:attachment:socketType = "Gripper"',
            api=False,
        ),
        None,
    ),
    ("GS.001", True, slot(forward="(0, 0, 0)"), "(zero)"),
    ("GS.001", True, slot(spanAxis="(nan, 0, 0)"), "expected 3 finite numbers"),
    ("GS.001", True, slot(spanAxis="(1, 0, 0.1)"), "off perpendicular"),
    ("GS.001", True, records([record(span_axis=[-1, 0.5, 0])]), "lambdasim gripper_slots[0]"),
    ("GS.001", False, slot(spanAxis="(1, 0, 0.01)"), None),
    ("GS.002", True, slot(upRange="-0.1"), "upRange is -0.1 m"),
    ("GS.002", True, records([record(up_range=0)]), "up_range is 0 m"),
    ("GS.002", False, records([record()]), None),
    ("GS.003", True, slot(slotInputAngle="-5"), "expected a finite value in [0, 360]"),
    ("GS.003", True, slot(slotInputAngle="inf"), "inf"),
    ("GS.003", False, slot(slotInputAngle="360"), None),
    ("GS.004", True, records([record(LR=3)]), "LR is 3"),
    ("GS.004", False, slot(lr='"right"'), None),
    (
        "GS.005",
        True,
        'def Xform "Obj" (\nprepend apiSchemas = ["GripperSlotAPI:center"]\n)\n{\n}\n',
        "reserved",
    ),
    ("GS.005", False, slot(), None),
    ("GS.006", True, records("not json"), "is not valid JSON"),
    ("GS.006", True, records([record(), record(LR="left")]), "gripper_slots[1].LR"),
    ("GS.006", True, records([record(GroupName=None)]), "gripper_slots[0].GroupName"),
    ("GS.006", False, records([record()]), None),
    ("GS.007", True, records([record(up_range=None, up=[0, 0, 0.02], version=1)]), "version 1"),
    ("GS.007", False, records([record()]), None),
    (
        "GS.008",
        True,
        records([record(GroupName="pair", LR=0), record(GroupName="pair", LR=0, name="b")]),
        "all have LR left",
    ),
    ("GS.008", True, records([record(GroupName="solo")]), "has one member"),
    (
        "GS.008",
        False,
        records([record(GroupName="pair", LR=0), record(GroupName="pair", LR=1, name="b")]),
        None,
    ),
    ("GS.009", True, on_box(slot(center="(1, 0, 0.05)")), "lies outside the bounds of </Obj>"),
    ("GS.009", True, on_box(slot(center="(0, 0, 0.25)")), "does not meet the surface of </Obj>"),
    ("GS.009", True, on_box(slot(center="(0, 0.3, 0.05)"), BOX_MESH), "does not meet the surf"),
    (
        "GS.009",
        True,
        on_box(records([record(center=[0, 0, 0.3], forward=[0, 0, -1], span_axis=[1, 0, 0])])),
        "slot 'slot_0' (lambdasim gripper_slots[0]): its closing line",
    ),
    ("GS.009", True, on_box(slot(center="(0.5, 0, 0.05)"), BOX_MESH), "grown by its up range"),
    # Grown by the up range (0.2 m): 0.2 m beside the box is still on it.
    ("GS.009", False, on_box(slot(center="(0.24, 0, 0.05)")), None),
    ("GS.009", False, on_box(slot(center="(0, 0, 0.05)")), None),
    ("GS.009", False, on_box(slot(center="(0, 0, 0.05)"), BOX_MESH), None),
    # The object moved and scaled: the slot is in its frame, and so is the check.
    (
        "GS.009",
        False,
        on_box(
            slot(center="(0, 0, 0.05)"),
            BOX_MESH,
            "double3 xformOp:translate = (5, 0, 0)\nfloat3 xformOp:scale = (10, 10, 10)\n"
            'uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]',
        ),
        None,
    ),
    ("GS.009", False, slot(center="(9, 9, 9)"), None),  # no geometry: nothing to meet
    (
        "GA.002",
        True,
        "#usda 1.0\n"
        + site(children=FWD + curve("gripper_grip_line", "[(0, -0.2, 0), (0, 0.2, 0)]")),
        "metersPerUnit is not authored, so USD assumes 0.01 m per unit (centimetres), and upAxis "
        'is not authored, so USD assumes "Y", for 1 gripper site(s) and 0 slotted object(s); '
        "read so: site </tcp> grip line 0.004 m (0.4 m if the author meant metres), forward axis "
        "0.0005 m (0.05 m if the author meant metres), beside max opening 0.085 m",
    ),
    (
        "GA.002",
        True,
        "#usda 1.0\n(\n    metersPerUnit = 1\n)\n" + site(),
        'upAxis is not authored, so USD assumes "Y", for 1 gripper site(s) and 0 slotted '
        "object(s). Expected upAxis authored",
    ),
    (
        "GA.002",
        True,
        '#usda 1.0\n(\n    upAxis = "Z"\n)\n' + records([record(center=[0.0625, 0, 0.05])]),
        "for 0 gripper site(s) and 1 slotted object(s); read so: slot </Obj> 'slot_0' centre "
        "(0.000625, 0, 0.0005) m in the object's frame ((0.0625, 0, 0.05) m if the author meant "
        "metres), up range 0.04 m (metres as authored). Expected metersPerUnit (1 for",
    ),
    (
        "GA.002",
        True,
        '#usda 1.0\n(\n    defaultPrim = "Prop"\n)\ndef Xform "Prop"\n{\n'
        + curve("grasp_identifier_0", "[(0, -0.02, 0), (0, 0.02, 0)]")
        + "}\n",
        "for 0 gripper site(s), 0 slotted object(s) and 1 grasp vector line(s); read so: grasp "
        "line </Prop/grasp_identifier_0> 0.0004 m (0.04 m if the author meant metres)",
    ),
    # GR.015: the pad gap at the open limit vs gripper:maxOpening (issue 24).
    (
        "GR.015",
        True,
        edited(PRISMATIC, ("gripper:maxOpening = 0.08", "gripper:maxOpening = 0.1")),
        "the pads are 0.08 m apart with the fingers open (finger_left_joint at its lower limit)"
        " but gripper:maxOpening is 0.1 m",
    ),
    (
        "GR.015",
        True,
        edited(REVOLUTE, ("gripper:maxOpening = 0.0585", "gripper:maxOpening = 0.03")),
        "jaw_right_joint at its upper limit",
    ),
    ("GR.015", False, PRISMATIC, None),
    (  # within the 5 mm tolerance
        "GR.015",
        False,
        edited(PRISMATIC, ("gripper:maxOpening = 0.08", "gripper:maxOpening = 0.084")),
        None,
    ),
    ("GR.015", False, site(), None),  # no joints: the proxy gripper
    (  # no limits: the gap is unknown, GR.015 says nothing (info's note says why)
        "GR.015",
        False,
        edited(
            PRISMATIC,
            ("float physics:lowerLimit = 0\n", ""),
            ("gripper:maxOpening = 0.08", "gripper:maxOpening = 0.5"),
        ),
        None,
    ),
    # GR.016: fingers without colliders in a declared articulation.
    (
        "GR.016",
        True,
        edited(PRISMATIC, (RIGHT_PAD, RIGHT_PAD.replace("PhysicsCollisionAPI", "PhysicsMassAPI"))),
        "finger </PrismaticGripper/finger_right> (moved by "
        "</PrismaticGripper/joints/finger_right_joint>) has no collider",
    ),
    (  # collisionEnabled = false is no collider either
        "GR.016",
        True,
        edited(
            PRISMATIC,
            (RIGHT_PAD, RIGHT_PAD),
            (
                "double3 xformOp:scale = (0.01, 0.02, 0.05)\n            uniform token[] xformOpOrder"
                ' = ["xformOp:scale"]\n        }\n    }\n\n    def Scope',
                "bool physics:collisionEnabled = 0\n            double3 xformOp:scale = (0.01, 0.02, "
                '0.05)\n            uniform token[] xformOpOrder = ["xformOp:scale"]\n        }\n    }\n'
                "\n    def Scope",
            ),
        ),
        "finger </PrismaticGripper/finger_right>",
    ),
    ("GR.016", False, PRISMATIC, None),
    (  # no PhysicsArticulationRootAPI: not declared, not checked
        "GR.016",
        False,
        edited(
            PRISMATIC,
            ('prepend apiSchemas = ["PhysicsArticulationRootAPI"]', ""),
            (RIGHT_PAD, RIGHT_PAD.replace("PhysicsCollisionAPI", "PhysicsMassAPI")),
        ),
        None,
    ),
    # GR.017: a site without a rigid-body ancestor where the asset has rigid bodies.
    (
        "GR.017",
        True,
        edited(
            PRISMATIC,
            (
                'prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]\n    )\n    {\n        '
                "float physics:mass = 0.5",
                'prepend apiSchemas = ["PhysicsMassAPI"]\n    )\n    {\n'
                "        float physics:mass = 0.5",
            ),
        ),
        "no ancestor of the site has PhysicsRigidBodyAPI, while the asset </PrismaticGripper> has "
        "2 rigid bodies (</PrismaticGripper/finger_left>, </PrismaticGripper/finger_right>)",
    ),
    ("GR.017", False, PRISMATIC, None),
    ("GR.017", False, site(), None),  # no rigid body anywhere
    ("GA.002", False, site(), None),  # the fixture's header authors both
    ("GA.002", False, '#usda 1.0\ndef Xform "Plain"\n{\n}\n', None),  # no gripper data
    (
        "GA.003",
        True,
        '#usda 1.0\n(\n    upAxis = "X"\n)\ndef Xform "Plain"\n{\n}\n',
        'the stage\'s upAxis is "X"; expected "Y" or "Z"',
    ),
    ("GA.003", True, '#usda 1.0\n(\n    upAxis = "z"\n)\n' + site(), 'did you mean "Z"?'),
    ("GA.003", False, site(), None),  # the fixture's header authors "Z"
    ("GA.003", False, '#usda 1.0\n(\n    upAxis = "Y"\n)\ndef Xform "Plain"\n{\n}\n', None),
    ("GA.003", False, '#usda 1.0\ndef Xform "Plain"\n{\n}\n', None),  # not authored: GA.002
]


@pytest.mark.parametrize(
    ("code", "fires", "snippet", "fragment"),
    CASES,
    ids=[f"{c[0]}-{'nok' if c[1] else 'ok'}-{i}" for i, c in enumerate(CASES)],
)
def test_rule_case(code, fires, snippet, fragment, open_usda):
    report = validate(open_usda(snippet), rules=[code])
    issues = [i for i in report.issues if i.code == code]
    if fires:
        assert issues, f"{code} did not fire"
        assert any(fragment in i.message for i in issues), [i.message for i in issues]
    else:
        assert issues == [], [i.message for i in issues]


def test_every_rule_has_ok_and_nok_cases():
    from usdgrip.rules import RULES

    covered = {(c[0], c[1]) for c in CASES}
    for code in RULES:
        if code == "GA.001":
            continue  # needs files on disk: tests/test_rules_engine.py and the docs
        assert (code, True) in covered and (code, False) in covered, code


def test_ga001_sublayer_and_reference(write_usda, tmp_path):
    (tmp_path / "there.usda").write_text('#usda 1.0\ndef Xform "X"\n{\n}\n')
    path = write_usda(
        "#usda 1.0\n(\n    subLayers = [@./gone_sub.usda@]\n)\n"
        'def Xform "ok" (\n    prepend references = @./there.usda@</X>\n)\n{\n}\n'
        'def Xform "bad" (\n    prepend references = @./gone_ref.usda@</X>\n)\n{\n}\n'
    )
    report = validate(path, rules=["GA.001"])
    got = {(i.prim, i.severity) for i in report.issues}
    assert got == {("/", "error"), ("/bad", "error")}
    messages = " ".join(i.message for i in report.issues)
    assert "sublayer @" in messages and "gone_sub.usda@" in messages and "reference @" in messages
    assert "gone_ref.usda" in messages and "there.usda" not in messages


FAR = 'double3 xformOp:translate = ({})\nuniform token[] xformOpOrder = ["xformOp:translate"]'


@pytest.mark.parametrize(
    ("translate", "gs009", "gs001"),
    [
        ("1e9, 0, 0", "sits 1e+09 m from the world origin", "places it 1e+09 m from the origin"),
        ("nan, 0, 0", "has NaN or infinite values", "not a finite 4x4 matrix"),
        ("0, inf, 0", "has NaN or infinite values", "not a finite 4x4 matrix"),
    ],
)
def test_slots_on_an_unplaceable_object_get_plain_findings(translate, gs009, gs001, open_usda):
    """A far or non-finite object transform: GS.009 and GS.001 say so, neither crashes."""
    snippet = on_box(slot(center="(0, 0, 0.05)"), BOX_MESH, FAR.format(translate))
    issues = validate(open_usda(snippet), rules=["GS.009", "GS.001"]).issues
    by_code = {code: [i for i in issues if i.code == code] for code in ("GS.009", "GS.001")}
    assert [i.severity for i in by_code["GS.009"]] == ["failure"], issues
    assert "cannot be checked against the object's surface" in by_code["GS.009"][0].message
    assert gs009 in by_code["GS.009"][0].message
    assert by_code["GS.001"] and all(gs001 in i.message for i in by_code["GS.001"]), issues
    assert all(i.severity == "failure" for i in issues)


@pytest.mark.parametrize(
    ("translate", "fragment"),
    [("1e9, 0, 0", "sits 1e+09 m from the world origin"), ("nan, 0, 0", "NaN or infinite")],
)
def test_grasp_lines_on_an_unplaceable_object_fail_gp001(translate, fragment, tmp_path):
    """A far or non-finite object: each grasp line gets one plain GP.001 failure, no crash."""
    text = (Path(__file__).parents[1] / "examples" / "graspable_prop.usda").read_text()
    head = '    prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]\n)\n{\n'
    assert head in text
    moved = text.replace(head, head + "    " + FAR.format(translate).replace("\n", "\n    ") + "\n")
    path = tmp_path / "prop.usda"
    path.write_text(moved)
    issues = [i for i in validate(str(path), rules=["GP.001"]).issues]
    assert [(i.code, i.severity) for i in issues] == [("GP.001", "failure")] * 2, issues
    assert all(
        "cannot meet its object </Block>" in i.message and fragment in i.message for i in issues
    )
