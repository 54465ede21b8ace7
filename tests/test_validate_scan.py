"""The C++ candidate scan of ``validate``: same prims as the definition, no trace on the stage."""

from __future__ import annotations

import pytest
from pxr import Sdf, Tf, Usd
from test_rules_engine import TRICKY, _reference_discovery

from usdgrip.rules import validate
from usdgrip.usd import discovery

# No composition arcs: the marker-property proof by counting applies.
FLAT = """
def Xform "W"
{
    def Xform "api" (prepend apiSchemas = ["GripperSiteAPI"])
    {
        float gripper:maxOpening = 0.085
        def BasisCurves "gripper_forward_axis"
        {
            int[] curveVertexCounts = [2]
            point3f[] points = [(0, 0, 0), (0, 0, 1)]
            uniform token type = "linear"
        }
    }
    def Xform "only_prop"
    {
        float gripper:maxOpening = 0.05
    }
    def Mesh "legacy"
    {
        custom float gripper_maxOpening = 0.1
    }
    def Xform "slots" (prepend apiSchemas = ["GripperSlotAPI:a"])
    {
        double gripperSlot:a:upRange = -1
    }
    def Xform "plain"
    {
    }
}
"""

FLAT_COVERED = """
def Xform "W"
{
    def Xform "api" (prepend apiSchemas = ["GripperSiteAPI"])
    {
        float gripper:maxOpening = 0.085
    }
    def Xform "child_only"
    {
        float gripper:maxOpening = -1
        def Xform "gripper_grip_line"
        {
        }
    }
}
over "Undefined" (prepend apiSchemas = ["GripperSiteAPI"])
{
    float gripper:maxOpening = 0.1
    over "slotted" (prepend apiSchemas = ["GripperSlotAPI:b"])
    {
        over "gripper_forward_axis"
        {
        }
    }
}
"""


def _found(stage, scan):
    return [(str(p.GetPath()), s, m) for p, s, m in discovery.find_marked_prims(stage, scan=scan)]


def _definition(stage):
    sites, slots = _reference_discovery(stage)
    return {p for p, _ in sites}, set(slots)


@pytest.mark.parametrize("body", [TRICKY, FLAT, FLAT_COVERED], ids=["arcs", "flat", "covered"])
def test_collection_scan_finds_what_the_definition_finds(open_usda, body):
    stage = open_usda(body)
    found = _found(stage, "collection")
    assert [p for p, _, _ in found] == sorted({p for p, _, _ in found}, key=Sdf.Path)
    assert sorted(found) == sorted(_found(stage, "traverse"))
    sites = {p for p, maybe_site, _ in found if maybe_site}
    slots = {p for p, _, maybe_slot in found if maybe_slot}
    prims = {p: stage.GetPrimAtPath(p) for p, _, _ in found}
    assert {p for p in sites if discovery.compute_site_markers(prims[p])} == _definition(stage)[0]
    assert slots == _definition(stage)[1]


def test_validate_is_the_same_with_either_scan(open_usda):
    for body in (TRICKY, FLAT, FLAT_COVERED):
        stage = open_usda(body)
        fast = [i.to_dict() for i in validate(stage).issues]
        slow = [i.to_dict() for i in validate(stage, scan="traverse").issues]
        assert fast == slow and fast


# FLAT without its property-only sites: the C++ expression finds every candidate (FLAT
# itself names more marker properties than its API prims could hold, so it gets the
# Python walk at once: issue 20's one walk).
FLAT_API = FLAT.replace(
    """    def Xform "only_prop"
    {
        float gripper:maxOpening = 0.05
    }
    def Mesh "legacy"
    {
        custom float gripper_maxOpening = 0.1
    }
""",
    "",
)


def test_the_scan_leaves_no_trace(open_usda):
    assert FLAT_API != FLAT
    stage = open_usda(FLAT_API)
    session = stage.GetSessionLayer()
    session.ImportFromString(
        '#usda 1.0\nover "W"\n{\n    over "plain" (active = false)\n    {\n    }\n}\n'
    )
    text, used = session.ExportToString(), stage.GetUsedLayers()
    roots = [str(p.GetPath()) for p in stage.GetPseudoRoot().GetAllChildren()]
    changed: list[list[str]] = []
    listener = Tf.Notice.Register(
        Usd.Notice.ObjectsChanged,
        lambda notice, _: changed.append([str(p) for p in notice.GetResyncedPaths()]),
        stage,
    )
    issues = validate(stage, scan="collection").issues
    del listener
    assert {i.code for i in issues} >= {"GR.003", "GS.002"}
    assert session.ExportToString() == text
    assert stage.GetUsedLayers() == used
    assert [str(p.GetPath()) for p in stage.GetPseudoRoot().GetAllChildren()] == roots
    assert not stage.GetRootLayer().dirty
    # The only notices: the temporary root prim appearing and going away.
    assert len(changed) == 2 and all(p[0].startswith("/__usdgrip_scan") for p in changed)


def test_a_callers_stage_is_never_edited_by_default(open_usda):
    stage = open_usda(FLAT)
    changed: list = []
    listener = Tf.Notice.Register(Usd.Notice.ObjectsChanged, lambda n, _: changed.append(n), stage)
    report = validate(stage)
    del listener
    assert {i.code for i in report.issues} >= {"GR.001", "GS.002"}
    assert changed == [] and not stage.GetSessionLayer().dirty


def test_locked_session_layer_falls_back_to_python_queries(open_usda):
    stage = open_usda(FLAT)
    expected = _found(stage, "collection")
    stage.GetSessionLayer().SetPermissionToEdit(False)
    assert _found(stage, "collection") == expected
    assert stage.GetSessionLayer().ExportToString() == "#usda 1.0\n\n"


def test_unknown_scan_is_a_clear_error(open_usda):
    stage = open_usda(FLAT)
    with pytest.raises(ValueError, match=r"scan is 'fast'; expected 'collection' or 'traverse'"):
        validate(stage, scan="fast")
    with pytest.raises(ValueError, match=r"scan is 'x'; expected 'collection' or 'traverse'"):
        discovery.find_marked_prims(stage, scan="x")


@pytest.mark.parametrize(("body", "walked"), [(FLAT_COVERED, []), (FLAT, ["python"])])
def test_marker_properties_are_queried_per_prim_only_when_not_proven(
    open_usda, monkeypatch, body, walked
):
    """FLAT names more marker properties than its API prims and marker children could hold:
    one Python walk at once (issue 20: one walk), no C++ expression before it."""
    calls: list[str] = []
    walk, compute = discovery._walk, discovery._compute_included_paths

    def spy_walk(*args, **kwargs):
        calls.append("python")
        return walk(*args, **kwargs)

    def spy_compute(*args):
        calls.append("expression")
        return compute(*args)

    monkeypatch.setattr(discovery, "_walk", spy_walk)
    monkeypatch.setattr(discovery, "_compute_included_paths", spy_compute)
    discovery.find_marked_prims(open_usda(body))
    assert calls == (walked or ["expression"])


def test_slot_values_with_fallbacks_and_extra_namespace_properties(open_usda):
    body = """
    def Xform "obj" (prepend apiSchemas = ["GripperSlotAPI:a", "GripperSlotAPI:b"])
    {
        double gripperSlot:a:upRange = -1
        custom double gripperSlot:b:note = 1
        vector3d gripperSlot:b:forward = (0, 0, 0)
    }
    """
    issues = [(i.code, i.message) for i in validate(open_usda(body)).issues]
    # Unauthored values are the schema fallbacks: groupName "" (no GS.008), lr "left".
    assert [code for code, _ in issues] == ["GS.001", "GS.002"]
    assert "slot 'b' (GripperSlotAPI): forward is [0.0, 0.0, 0.0] (zero)" in issues[0][1]
    assert "slot 'a' (GripperSlotAPI): upRange is -1 m" in issues[1][1]


def test_examples_give_the_same_report_with_either_scan():
    from conftest import EXAMPLES

    paths = sorted(EXAMPLES.rglob("*.usda"))
    assert paths
    for path in paths:
        stage = Usd.Stage.Open(str(path))
        fast = [i.to_dict() for i in validate(stage).issues]
        assert fast == [i.to_dict() for i in validate(stage, scan="traverse").issues], path


@pytest.mark.parametrize(("body", "evaluations"), [(FLAT, 0), (FLAT_COVERED, 1), (TRICKY, 0)])
def test_marker_children_are_matched_by_name_in_the_one_expression(
    open_usda, monkeypatch, body, evaluations
):
    """The name glob is part of the one expression (issue 20); FLAT's marker properties and
    TRICKY's arcs need the Python walk, which then finds the marker children itself."""
    evaluated: list[list[str]] = []
    compute = discovery._compute_included_paths

    def spy(stage, query):
        evaluated.append([str(p) for p in compute(stage, query)])
        return compute(stage, query)

    monkeypatch.setattr(discovery, "_compute_included_paths", spy)
    stage = open_usda(body)
    found = discovery.find_marked_prims(stage)
    assert len(evaluated) == evaluations
    if evaluations:  # the glob's matches came with the API prims
        assert any(p.rsplit("/", 1)[1] == "gripper_grip_line" for p in evaluated[0])
    monkeypatch.setattr(discovery, "_compute_included_paths", compute)
    assert sorted(found, key=lambda e: e[0].GetPath()) == sorted(
        discovery.find_marked_prims(stage, scan="traverse"), key=lambda e: e[0].GetPath()
    )


def test_a_marker_child_elsewhere_defeats_the_count(open_usda):
    """A marker child under a prim no expression found: its spec is not accounted for."""
    body = FLAT.replace(
        'def Xform "plain"\n    {\n    }',
        'def Xform "plain"\n    {\n        def Scope "gripper_grip_line"\n        {\n        }\n    }',
    )
    assert body != FLAT
    stage = open_usda(body)
    found = {str(p.GetPath()): site for p, site, _ in discovery.find_marked_prims(stage)}
    assert found["/W/plain"] is True
    assert {str(p.GetPath()) for p, _, _ in discovery.find_marked_prims(stage)} == {
        str(p.GetPath()) for p, _, _ in discovery.find_marked_prims(stage, scan="traverse")
    }


def test_an_inactive_marker_child_marks_nothing_with_either_scan(open_usda):
    """The count leaves out the inactive child's spec, so the name glob decides: same as Python."""
    body = FLAT.replace(
        'def Xform "plain"\n    {\n    }',
        'def Xform "plain" (prepend apiSchemas = ["GripperSlotAPI:s"])\n    {\n'
        '        def Scope "gripper_grip_line" (active = false)\n        {\n        }\n    }',
    )
    assert body != FLAT
    stage = open_usda(body)
    found = {str(p.GetPath()): (site, slot) for p, site, slot in discovery.find_marked_prims(stage)}
    assert found["/W/plain"] == (False, True)
    assert sorted(found.items()) == sorted(
        (str(p.GetPath()), (site, slot))
        for p, site, slot in discovery.find_marked_prims(stage, scan="traverse")
    )
