"""Overlay authoring on plain stages: session layer only, one change block, geometry right."""

from __future__ import annotations

import numpy as np
import pytest
from pxr import Sdf, Tf, Usd, UsdGeom

import usdgrip
from usdgrip.views import overlays
from usdgrip.views.glyphs import (
    FAN_RAYS,
    HIGHLIGHT_COLOR,
    NEUTRAL_COLOR,
    compute_confidence_colors,
    compute_gripper_wireframe,
    compute_group_colors,
    compute_slot_shape,
)

SLOTTED = """
def Xform "Box" (
    prepend apiSchemas = ["GripperSlotAPI:a", "GripperSlotAPI:b", "GripperSlotAPI:c"]
)
{
    double3 xformOp:translate = (1, 2, 3)
    uniform token[] xformOpOrder = ["xformOp:translate"]
    point3d gripperSlot:a:center = (0.1, 0, 0)
    vector3d gripperSlot:a:forward = (0, 0, -1)
    vector3d gripperSlot:a:spanAxis = (1, 0, 0)
    double gripperSlot:a:upRange = 0.2
    double gripperSlot:a:slotInputAngle = 40
    string gripperSlot:a:groupName = "pair"
    point3d gripperSlot:b:center = (-0.1, 0, 0)
    vector3d gripperSlot:b:forward = (0, 0, -1)
    vector3d gripperSlot:b:spanAxis = (-1, 0, 0)
    double gripperSlot:b:upRange = 0.2
    double gripperSlot:b:slotInputAngle = 40
    string gripperSlot:b:groupName = "pair"
    point3d gripperSlot:c:center = (0, 0.1, 0)
    vector3d gripperSlot:c:forward = (0, 0, -1)
    vector3d gripperSlot:c:spanAxis = (0, 1, 0)
    double gripperSlot:c:upRange = 0.1
    double gripperSlot:c:slotInputAngle = 0
}
"""


@pytest.fixture
def slotted(open_usda):
    stage = open_usda(SLOTTED)
    return stage, usdgrip.read_gripper_slots(stage.GetPrimAtPath("/Box"))


def _points(stage: Usd.Stage, path: str) -> np.ndarray:
    return np.array(UsdGeom.BasisCurves(stage.GetPrimAtPath(path)).GetPointsAttr().Get())


def _color(stage: Usd.Stage, path: str) -> tuple:
    primvar = UsdGeom.PrimvarsAPI(stage.GetPrimAtPath(path)).GetPrimvar("displayColor")
    return tuple(round(float(c), 3) for c in primvar.Get()[0])


def test_slot_overlays_live_only_in_the_session_layer(slotted, tmp_path):
    stage, slots = slotted
    paths = overlays.author_slot_overlays(stage, slots)
    assert paths == [
        "/__usdgrip_overlays/slots/Box_a",
        "/__usdgrip_overlays/slots/Box_b",
        "/__usdgrip_overlays/slots/Box_c",
    ]
    for path in paths:
        prim = stage.GetPrimAtPath(path)
        assert prim.IsA(UsdGeom.BasisCurves)
        specs = prim.GetPrimStack()
        assert [s.layer for s in specs] == [stage.GetSessionLayer()]
    assert "__usdgrip_overlays" not in stage.GetRootLayer().ExportToString()
    exported = tmp_path / "exported.usda"
    stage.GetRootLayer().Export(str(exported))
    reopened = Usd.Stage.Open(str(exported))
    assert not reopened.GetPrimAtPath(overlays.OVERLAY_ROOT)
    stage.Save()  # saving the asset must not save an overlay either
    assert "__usdgrip" not in (tmp_path / "asset.usda").read_text()


def test_slot_overlay_geometry_and_group_colours(slotted):
    stage, slots = slotted
    overlays.author_slot_overlays(stage, slots)
    points = _points(stage, "/__usdgrip_overlays/slots/Box_a")
    # first segment: the offset range along Up = forward x span = (0,0,-1)x(1,0,0) = (0,-1,0)
    center = np.array([1.1, 2.0, 3.0])
    np.testing.assert_allclose(points[0], center - 0.1 * np.array([0, -1, 0]), atol=1e-6)
    np.testing.assert_allclose(points[1], center + 0.1 * np.array([0, -1, 0]), atol=1e-6)
    counts = UsdGeom.BasisCurves(stage.GetPrimAtPath("/__usdgrip_overlays/slots/Box_a"))
    assert set(counts.GetCurveVertexCountsAttr().Get()) == {2}
    assert counts.GetTypeAttr().Get() == "linear"
    a, b, c = (_color(stage, f"/__usdgrip_overlays/slots/Box_{n}") for n in "abc")
    assert a == b, "slots of one group share a colour"
    assert c == tuple(round(x, 3) for x in NEUTRAL_COLOR), "an ungrouped slot is grey"
    assert a != c


def test_points_are_written_in_stage_units(open_usda):
    stage = open_usda('#usda 1.0\n(\n    metersPerUnit = 0.01\n    upAxis = "Z"\n)\n' + SLOTTED)
    slots = usdgrip.read_gripper_slots(stage.GetPrimAtPath("/Box"))
    overlays.author_slot_overlays(stage, slots[:1])
    points = _points(stage, "/__usdgrip_overlays/slots/Box_a")
    # centre (1.1, 2, 3) cm stays (1.1, 2, 3) units; upRange is metres (0.2 m = 20 units)
    np.testing.assert_allclose(points[:2].mean(axis=0), [1.1, 2.0, 3.0], atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(points[1] - points[0]), 20.0, atol=1e-4)


def test_one_change_notice_per_authoring_call(slotted):
    stage, slots = slotted
    notices = []
    listener = Tf.Notice.Register(
        Usd.Notice.ObjectsChanged, lambda notice, sender: notices.append(notice), stage
    )
    try:
        overlays.author_slot_overlays(stage, slots)
        assert len(notices) == 1
        poses = np.tile(np.eye(4), (5, 1, 1))
        overlays.author_grasp_overlays(stage, poses, np.linspace(0, 1, 5))
        assert len(notices) == 2
    finally:
        listener.Revoke()


def test_grasp_overlays_colour_by_confidence_and_highlight(open_usda):
    stage = open_usda('def Xform "World" {}')
    poses = np.tile(np.eye(4), (3, 1, 1))
    poses[:, 0, 3] = [0.0, 0.5, 1.0]
    paths = overlays.author_grasp_overlays(stage, poses, [0.9, 0.5, 0.1], 0.08, ["x", "y", "z"])
    assert paths == [f"/__usdgrip_overlays/grasps/g000{i}" for i in range(3)]
    best, worst = _color(stage, paths[0]), _color(stage, paths[2])
    assert best[1] > best[0] and worst[0] > worst[1], "best is green, worst is red"
    # fingers at ±open_width/2 along X (closing) of each pose
    xs = _points(stage, paths[1])[:4, 0]
    np.testing.assert_allclose(sorted(set(np.round(xs, 6))), [0.46, 0.54], atol=1e-6)
    assert stage.GetPrimAtPath(paths[1]).GetCustomDataByKey("usdgripCandidate") == "y"

    overlays.set_grasp_highlight(stage, 1)
    assert _color(stage, paths[1]) == tuple(round(c, 3) for c in HIGHLIGHT_COLOR)
    assert _color(stage, paths[0]) == best
    overlays.set_grasp_highlight(stage, 2)
    assert _color(stage, paths[1]) != tuple(round(c, 3) for c in HIGHLIGHT_COLOR)
    overlays.set_grasp_highlight(stage, None)
    assert _color(stage, paths[2]) == worst
    assert "__usdgrip" not in stage.GetRootLayer().ExportToString()


def test_replacing_grasps_removes_the_old_ones(open_usda):
    stage = open_usda('def Xform "World" {}')
    overlays.author_grasp_overlays(stage, np.tile(np.eye(4), (5, 1, 1)))
    overlays.author_grasp_overlays(stage, np.tile(np.eye(4), (2, 1, 1)))
    assert len(overlays.list_overlays(stage, "grasps")) == 2


def test_visibility_and_clear(slotted):
    stage, slots = slotted
    overlays.author_slot_overlays(stage, slots)
    overlays.author_grasp_overlays(stage, np.eye(4)[None])
    leaf = UsdGeom.Imageable(stage.GetPrimAtPath("/__usdgrip_overlays/grasps/g0000"))
    overlays.set_overlays_visible(stage, False)
    assert leaf.ComputeVisibility() == UsdGeom.Tokens.invisible
    overlays.set_overlays_visible(stage, True)
    assert leaf.ComputeVisibility() == UsdGeom.Tokens.inherited
    overlays.clear_overlays(stage, "grasps")
    assert overlays.list_overlays(stage, "grasps") == []
    assert len(overlays.list_overlays(stage, "slots")) == 3
    overlays.clear_overlays(stage)
    assert not stage.GetPrimAtPath(overlays.OVERLAY_ROOT)
    assert stage.GetSessionLayer().GetPrimAtPath(overlays.OVERLAY_ROOT) is None
    overlays.clear_overlays(stage)  # nothing left: no error


def test_no_session_layer_is_refused(write_usda):
    layer = Sdf.Layer.FindOrOpen(str(write_usda('def Xform "World" {}')))
    stage = Usd.Stage.Open(layer, sessionLayer=None)
    if stage.GetSessionLayer() is not None:
        pytest.skip("this USD build always creates a session layer")
    with pytest.raises(ValueError, match="no session layer"):
        overlays.author_grasp_overlays(stage, np.eye(4)[None])


def test_bad_grasp_input_is_refused(open_usda):
    stage = open_usda('def Xform "World" {}')
    with pytest.raises(ValueError, match=r"poses have shape \(3, 3\)"):
        overlays.author_grasp_overlays(stage, np.eye(3))
    with pytest.raises(ValueError, match="open_width is -1"):
        overlays.author_grasp_overlays(stage, np.eye(4), open_width=-1)
    with pytest.raises(ValueError, match="1 labels for 2 poses"):
        overlays.author_grasp_overlays(stage, np.tile(np.eye(4), (2, 1, 1)), labels=["a"])
    assert not stage.GetPrimAtPath(overlays.OVERLAY_ROOT), "nothing authored on bad input"


def test_slot_shape_fan_spans_the_tilt_range(slotted):
    _, slots = slotted
    shape = compute_slot_shape(slots[0], length=1.0)
    rays = shape.fan[:FAN_RAYS]
    directions = rays[:, 1] - rays[:, 0]
    approach = -slots[0].forward
    angles = np.degrees(np.arccos(np.clip(directions @ approach, -1, 1)))
    np.testing.assert_allclose(angles.max(), 20.0, atol=1e-9)  # half of 40°
    np.testing.assert_allclose(np.linalg.norm(directions, axis=1), 1.0)
    # rays rotate about span_axis: they stay perpendicular to it
    np.testing.assert_allclose(directions @ slots[0].span_axis, 0.0, atol=1e-12)
    untilted = compute_slot_shape(slots[2], length=1.0)
    assert len(untilted.fan) == 1, "a slot without tilt range draws one approach ray"


def test_degenerate_slot_is_refused(slotted):
    import dataclasses

    _, slots = slotted
    bad = dataclasses.replace(slots[0], span_axis_local=np.array([0.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match=r"<\/Box> slot 'a': forward and spanAxis are parallel"):
        compute_slot_shape(bad)


def test_wireframe_and_colour_helpers():
    pose = np.eye(4)
    pose[:3, :3] = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]  # X closing -> world Y
    segments = compute_gripper_wireframe(pose, 0.1)
    assert segments.shape == (1, 4, 2, 3)
    np.testing.assert_allclose(sorted(segments[0, :2, 0, 1]), [-0.05, 0.05])
    colors = compute_confidence_colors([0.2, 0.2], 2)
    np.testing.assert_allclose(colors[0], colors[1])
    assert compute_confidence_colors(None, 3).shape == (3, 3)
    groups = compute_group_colors(["g", "", "h", "g"])
    np.testing.assert_allclose(groups[0], groups[3])
    assert not np.allclose(groups[0], groups[2])
