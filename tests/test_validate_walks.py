"""Issue 20: ``validate`` walks the stage ONCE (sites, slots, grasp lines and GA.002's needs).

A walk is a Python traversal of the whole stage (``Usd.Stage.Traverse``/``TraverseAll``,
a ``Usd.PrimRange`` from the pseudo-root) or one C++ evaluation of a path expression
(``Usd.ComputeIncludedPathsFromCollection``); the counters below wrap those pxr entry
points, so a walk added anywhere (a rule, a reader) is counted.
"""

from __future__ import annotations

import textwrap

import pytest
from pxr import Sdf, Usd

from usdgrip.rules import validate
from usdgrip.usd import discovery
from usdgrip.usd.grasp_lines import scan_grasp_lines

SITE = """
        def Xform "site_{i}" (prepend apiSchemas = ["GripperSiteAPI"])
        {{
            float gripper:maxOpening = 0.085
            def BasisCurves "gripper_forward_axis"
            {{
                int[] curveVertexCounts = [2]
                point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
                uniform token type = "linear"
            }}
            def BasisCurves "gripper_grip_line"
            {{
                int[] curveVertexCounts = [2]
                point3f[] points = [(0, -0.011, 0), (0, 0.011, 0)]
                uniform token type = "linear"
            }}
        }}
        def Xform "object_{i}" (prepend apiSchemas = ["GripperSlotAPI:a"])
        {{
            double gripperSlot:a:upRange = {up_range}
            def Cube "body"
            {{
                double size = 0.3
            }}
        }}
        def Xform "node_{i}"
        {{
        }}
"""

PROP = """
    def Xform "Prop" (prepend apiSchemas = ["PhysicsRigidBodyAPI"])
    {
        double3 xformOp:translate = (5, 0, 0)
        uniform token[] xformOpOrder = ["xformOp:translate"]
        def Cube "body"
        {
            double size = 0.04
        }
        def BasisCurves "grasp_identifier_01"
        {
            int[] curveVertexCounts = [2]
            point3f[] points = [(-0.03, 0, 0), (0.03, 0, 0)]
            uniform token type = "linear"
        }
    }
"""

RECORDS = """
    def Xform "records" (customData = { dictionary lambdasim = { string gripper_slots = "[]" } })
    {
    }
"""

REFERENCED = """
    def Xform "copy" (prepend references = </World/group_0/site_0>)
    {
    }
"""


def _stage_text(*, units: bool, extra: str = "", groups: int = 3, prop: bool = True) -> str:
    header = '(\n    defaultPrim = "World"\n'
    if units:
        header += '    metersPerUnit = 1\n    upAxis = "Z"\n'
    parts = [f"#usda 1.0\n{header})\n\n", 'def Xform "World"\n{\n']
    for g in range(groups):
        up_range = -0.2 if g == groups - 1 else 0.2  # one GS.002 finding
        parts += [f'    def Scope "group_{g}"\n    {{\n', SITE.format(i=g, up_range=up_range)]
        parts.append("    }\n")
    parts += [PROP if prop else "", textwrap.indent(textwrap.dedent(extra), "    "), "}\n"]
    return "".join(parts)


class Walks:
    """Counts whole-stage walks while installed (see the module docstring)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.walks: list[str] = []
        self.subtrees: list[str] = []
        for name in ("Traverse", "TraverseAll"):
            original = getattr(Usd.Stage, name)
            monkeypatch.setattr(Usd.Stage, name, self._counting(f"Stage.{name}", original))
        original_range = Usd.PrimRange

        def prim_range(root, *args):
            if root.IsPseudoRoot():
                self.walks.append("PrimRange(/)")
            else:
                self.subtrees.append(str(root.GetPath()))
            return original_range(root, *args)

        prim_range.Stage = self._counting("PrimRange.Stage", original_range.Stage)
        monkeypatch.setattr(Usd, "PrimRange", prim_range)
        monkeypatch.setattr(
            Usd,
            "ComputeIncludedPathsFromCollection",
            self._counting("C++ expression", Usd.ComputeIncludedPathsFromCollection),
        )

    def _counting(self, label, function):
        def counted(*args, **kwargs):
            self.walks.append(label)
            return function(*args, **kwargs)

        return counted


@pytest.fixture
def walks(monkeypatch):
    return lambda: Walks(monkeypatch)


def _write(tmp_path, text: str, binary: bool) -> str:
    path = tmp_path / "stage.usda"
    path.write_text(text)
    if binary:
        crate = tmp_path / "stage.usdc"
        Sdf.Layer.FindOrOpen(str(path)).Export(str(crate))
        return str(crate)
    return str(path)


CALLS = {
    "stage": lambda path: validate(Usd.Stage.Open(path)),
    "stage-collection": lambda path: validate(Usd.Stage.Open(path), scan="collection"),
    "path": lambda path: validate(path),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("binary", [False, True], ids=["usda", "usdc"])
@pytest.mark.parametrize("units", [False, True], ids=["no-units", "units"])
def test_validate_walks_the_stage_once(tmp_path, walks, call, binary, units):
    path = _write(tmp_path, _stage_text(units=units), binary)
    counter = walks()
    report = CALLS[call](path)
    assert len(counter.walks) == 1, counter.walks
    codes = [i.code for i in report.issues]
    assert codes.count("GS.002") == 1
    if not units:  # GA.002 got the sites, the slotted objects and the line from that walk
        (units_issue,) = [i for i in report.issues if i.code == "GA.002"]
        assert "3 gripper site(s), 3 slotted object(s) and 1 grasp vector line(s)" in (
            units_issue.message
        )
    else:
        assert "GA.002" not in codes
    # The objects' geometry is read (their subtrees: the line's object, GS.009's slotted
    # objects), never the whole stage again.
    objects = {"/World/Prop", *(f"/World/group_{g}/object_{g}" for g in range(3))}
    assert set(counter.subtrees) <= objects, counter.subtrees


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("extra", [RECORDS, REFERENCED], ids=["lambdasim", "references"])
def test_stages_the_expression_cannot_cover_get_one_python_walk(tmp_path, walks, call, extra):
    path = _write(tmp_path, _stage_text(units=False, extra=extra), False)
    counter = walks()
    report = CALLS[call](path)
    assert counter.walks == ["Stage.Traverse"]
    assert {i.code for i in report.issues} >= {"GA.002", "GS.002"}


def test_the_report_is_the_one_the_traversal_definition_gives(tmp_path):
    """The one-walk report matches a run of every rule with a per-kind Python scan."""
    path = _write(tmp_path, _stage_text(units=False, extra=RECORDS + REFERENCED), False)
    stage = Usd.Stage.Open(path)
    fast = [i.to_dict() for i in validate(stage, scan="collection").issues]
    assert fast == [i.to_dict() for i in validate(stage, scan="traverse").issues]
    assert fast == [i.to_dict() for i in validate(path).issues]


@pytest.mark.parametrize(
    ("rules", "count"),
    [(["GS.002"], 1), (["GR.003"], 1), (["GP.001"], 1), (["GA.001"], 0), (["GA.002"], 1)],
)
def test_rule_subsets_walk_at_most_once(tmp_path, walks, rules, count):
    path = _write(tmp_path, _stage_text(units=False), False)
    stage = Usd.Stage.Open(path)
    counter = walks()
    validate(stage, rules=rules)
    assert len(counter.walks) == count, counter.walks


def test_the_documented_exception_a_marker_property_the_count_cannot_place(tmp_path, walks):
    """A property-only (legacy) site beside API sites that author no max opening."""
    # No rigid body: physics (the articulation rules) would take the Python walk at once.
    text = _stage_text(units=True, prop=False).replace("float gripper:maxOpening = 0.085", "")
    text = text.replace(
        'def Xform "node_0"\n        {\n        }',
        'def Xform "node_0"\n        {\n            float gripper:maxOpening = 0.05\n        }',
    )
    assert "node_0" in text and "maxOpening = 0.05" in text
    path = _write(tmp_path, text, False)
    stage = Usd.Stage.Open(path)
    counter = walks()
    report = validate(stage, scan="collection")
    assert counter.walks == ["C++ expression", "Stage.Traverse"]
    counter.walks.clear()  # the Python walk counts the same way, then walks for them
    assert [i.to_dict() for i in validate(stage).issues] == [i.to_dict() for i in report.issues]
    assert counter.walks == ["Stage.Traverse", "Stage.Traverse"]
    assert "/World/group_0/node_0" in {i.prim for i in report.issues}
    assert [i.to_dict() for i in report.issues] == [
        i.to_dict() for i in validate(stage, scan="traverse").issues
    ]


def test_scan_grasp_lines_alone_walks_once_and_takes_the_engines_walk(tmp_path, walks):
    stage = Usd.Stage.Open(_write(tmp_path, _stage_text(units=True), False))
    counter = walks()
    alone = scan_grasp_lines(stage)
    assert counter.walks == ["Stage.Traverse"]
    found = discovery.scan_stage(stage, lines=True, scan="traverse")
    assert len(counter.walks) == 2
    shared = scan_grasp_lines(stage, found)
    assert len(counter.walks) == 2  # no walk of its own
    assert [line.path for line in alone.lines] == [line.path for line in shared.lines]
    assert [line.path for line in shared.lines] == ["/World/Prop/grasp_identifier_01"]
    assert shared.declares_graspable and alone.declares_graspable


ARTICULATED = """
    def Xform "Hand" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsArticulationRootAPI"])
    {
        def Cube "palm" (prepend apiSchemas = ["PhysicsCollisionAPI"])
        {
            double size = 0.02
        }
        def Xform "finger" (prepend apiSchemas = ["PhysicsRigidBodyAPI"])
        {
        }
        def PhysicsPrismaticJoint "slide"
        {
            rel physics:body0 = </World/Hand>
            rel physics:body1 = </World/Hand/finger>
            uniform token physics:axis = "X"
        }
    }
"""


@pytest.mark.parametrize("call", sorted(CALLS))
def test_the_articulation_rules_read_the_one_walk(tmp_path, walks, call):
    """GR.015-GR.017 take each asset's joints and bodies from the run's walk."""
    path = _write(tmp_path, _stage_text(units=True, extra=ARTICULATED), False)
    counter = walks()
    report = CALLS[call](path)
    assert counter.walks == ["Stage.Traverse"]
    assert "/World" not in counter.subtrees  # no walk of the asset root of its own
    # The same findings as the reader's own walk gives.
    from usdgrip.usd.articulation import scan_physics_scope

    stage = Usd.Stage.Open(path)
    scope = scan_physics_scope(stage.GetPrimAtPath("/World"))
    assert scope.joints == ("/World/Hand/slide",)
    assert scope.bodies == ("/World/Prop", "/World/Hand", "/World/Hand/finger")
    from usdgrip.rules.contexts import StageContext

    filled = StageContext(stage, {}, scan_mode="traverse").scope_cache
    assert filled["/World"] == scope  # the walk's prims sorted by the reader's own code
    assert {i.code for i in report.issues} >= {"GS.002"}
