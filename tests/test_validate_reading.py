"""The validation engine's site read (no grasp frame) is the shared reader's, field by field."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from usdgrip.errors import GripperError
from usdgrip.rules import validate
from usdgrip.rules.contexts import SiteContext
from usdgrip.rules.engine import resolve_params
from usdgrip.usd.discovery import compute_site_markers, iter_site_prims
from usdgrip.usd.sites import read_gripper_site
from usdgrip.usd.stage import open_stage

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

ODD_SITES = """
def Xform "World"
{
    double3 xformOp:translate = (1, 2, 3)
    uniform token[] xformOpOrder = ["xformOp:translate"]

    def Xform "turned" (prepend apiSchemas = ["GripperSiteAPI"])
    {
        float gripper:maxOpening = 0.085
        double3 xformOp:rotateXYZ = (0, 0, 90)
        uniform token[] xformOpOrder = ["xformOp:rotateXYZ"]
        def BasisCurves "gripper_forward_axis"
        {
            double3 xformOp:scale = (2, 2, 2)
            uniform token[] xformOpOrder = ["xformOp:scale"]
            point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
        }
        def BasisCurves "gripper_grip_line"
        {
            uniform token type = "cubic"
            int[] curveVertexCounts = [3]
            point3f[] points = [(0, -0.2, 0), (0, 0.2, 0)]
        }
        def BasisCurves "grip_line"
        {
            point3f[] points = [(0, 0, 0)]
        }
    }

    def Xform "parallel" (prepend apiSchemas = ["GripperSiteAPI"])
    {
        float gripper:maxOpening = 0.05
        def BasisCurves "gripper_forward_axis"
        {
            point3f[] points = [(0, 0, 0), (0, 0, 1)]
        }
        def BasisCurves "gripper_grip_line"
        {
            point3f[] points = [(0, 0, 0), (0, 0, 2)]
        }
    }

    def Xform "broken"
    {
        float gripper_maxOpening = -1
        def BasisCurves "forward_axis"
        {
            point3f[] points = [(0, 0, 0), (inf, 0, 0)]
        }
        def Mesh "gripper_grip_line"
        {
            point3f[] points = [(0, 0, 0), (0, 0, 0)]
        }
    }
}
"""


def _fields(site) -> dict:
    out = {}
    for key, value in vars(site).items():
        if key in ("forward_axis", "grip_line") and value is not None:
            value = _fields(value)
        elif isinstance(value, np.ndarray):
            value = (value.dtype, value.shape, value.tobytes())
        elif isinstance(value, float) and value != value:
            value = "nan"  # nan != nan: compare as text
        out[key] = value
    return out


def _stages(open_usda):
    yield open_usda(ODD_SITES)
    for path in sorted([*EXAMPLES.glob("*.usda"), *EXAMPLES.glob("broken/*.usda")]):
        yield open_stage(path)


def test_site_read_without_frame_is_the_full_read_minus_the_frame(open_usda):
    checked = 0
    for stage in _stages(open_usda):
        for prim, markers in iter_site_prims(stage):
            with np.errstate(invalid="ignore", over="ignore"):  # the inf point of "broken"
                full = read_gripper_site(prim, markers)
            lean = SiteContext(prim, markers, resolve_params()).site
            assert lean.grasp_frame is None
            a, b = _fields(full), _fields(lean)
            frame_warnings = [w for w in a.pop("warnings") if w not in b["warnings"]]
            assert list(b.pop("warnings")) == [w for w in full.warnings if w not in frame_warnings]
            a.pop("grasp_frame"), b.pop("grasp_frame")
            assert a == b, prim.GetPath()
            assert isinstance(lean.world_transform, np.ndarray)
            for curve in (lean.forward_axis, lean.grip_line):
                if curve is not None:
                    assert isinstance(curve.points, np.ndarray)
                    assert curve.points.dtype == np.float64
            checked += 1
    assert checked >= 5


def test_frame_warnings_are_the_only_ones_left_out(open_usda):
    stage = open_usda(ODD_SITES)
    prim = stage.GetPrimAtPath("/World/parallel")
    full = read_gripper_site(prim)
    lean = read_gripper_site(prim, frame=False)
    assert full.grasp_frame is not None and lean.grasp_frame is None
    assert any("parallel" in w for w in full.warnings)
    assert not any("parallel" in w for w in lean.warnings)
    assert any("older meaning" in w for w in lean.warnings)  # GR.009's warning is kept


@pytest.mark.parametrize("path", ["/World/turned", "/World/broken"])
def test_curve_values_read_as_before(open_usda, path):
    stage = open_usda(ODD_SITES)
    with np.errstate(invalid="ignore", over="ignore"):  # the inf point of "broken"
        site = read_gripper_site(stage.GetPrimAtPath(path), frame=False)
    if path == "/World/turned":
        np.testing.assert_allclose(site.forward_axis.points, [[0, 0, 0], [0, 0, 0.1]], atol=1e-7)
        assert site.grip_line.curve_type == "cubic"
        assert site.grip_line.vertex_counts == (3,)
        assert site.grip_line.shadowed == "grip_line"
        assert site.max_opening == 0.085 and site.max_opening_source == "gripper:maxOpening"
    else:
        assert site.forward_axis.child == "forward_axis"
        assert site.forward_axis.direction is None
        assert site.grip_line.type_name == "Mesh"
        assert site.max_opening == -1.0
        assert site.legacy_attributes == ("gripper_maxOpening",)


EDGE_VALUES = """
def Xform "sampled" (prepend apiSchemas = ["GripperSiteAPI"])
{
    float gripper:maxOpening.timeSamples = { 0: 0.05 }
    def BasisCurves "gripper_forward_axis"
    {
        uniform token type = "cubic"
        int[] curveVertexCounts = [2]
        point3f[] points = [(-0.0, 0, -0.0), (0, 0, 1)]
    }
    def BasisCurves "gripper_grip_line"
    {
        uniform token type
        point3f[] points = [(0, 0, 0), (0, 1, 0)]
    }
}
def Xform "blocked" (prepend apiSchemas = ["GripperSiteAPI"])
{
    float gripper:maxOpening = None
    float gripper:maxPayload = 2
}
"""


def test_authored_values_without_a_default_read_as_authored(open_usda):
    stage = open_usda(EDGE_VALUES)
    sampled = read_gripper_site(stage.GetPrimAtPath("/sampled"), frame=False, strict=False)
    # Only time samples: authored, but no value at the default time (the readers refuse it).
    assert sampled.max_opening is None and sampled.max_opening_source == "gripper:maxOpening"
    assert "time-sampled with no default value" in sampled.problems["gripper:maxOpening"]
    with pytest.raises(GripperError, match="gripper:maxOpening is time-sampled"):
        read_gripper_site(stage.GetPrimAtPath("/sampled"))
    # The fallback `cubic` authored explicitly is authored; a declaration without a value is not.
    assert sampled.forward_axis.curve_type == "cubic"
    assert sampled.grip_line.curve_type is None
    assert sampled.grip_line.vertex_counts is None and sampled.forward_axis.vertex_counts == (2,)
    # Negative zeros read as the identity transform gives them.
    assert sampled.forward_axis.points.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    assert all(math.copysign(1, c) == 1 for c in sampled.forward_axis.points[0])
    assert sampled.forward_axis.direction.tolist() == [0.0, 0.0, 1.0]
    blocked = read_gripper_site(stage.GetPrimAtPath("/blocked"), frame=False)
    assert blocked.max_opening is None and blocked.max_opening_source is None
    assert blocked.max_payload == 2.0
    issues: dict[tuple[str, str], str] = {}
    for issue in validate(stage).issues:
        issues[issue.prim, issue.code] = issues.get((issue.prim, issue.code), "") + issue.message
    assert "gripper:maxOpening is time-sampled" in issues["/sampled", "GR.004"]
    assert "nan" not in issues["/sampled", "GR.004"]
    assert "no max opening authored" in issues["/blocked", "GR.004"]
    assert 'gripper_forward_axis: type is "cubic"' in issues["/sampled", "GR.007"]
    assert "gripper_grip_line: type is not authored" in issues["/sampled", "GR.007"]


def test_directions_are_unit_vectors_in_world_metres(open_usda):
    stage = open_usda(ODD_SITES)
    site = read_gripper_site(stage.GetPrimAtPath("/World/turned"), frame=False)
    # The site turns 90 degrees about Z; the forward curve is scaled 2x (its own transform).
    np.testing.assert_allclose(site.forward_axis.direction, [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(site.grip_line.direction, [-1, 0, 0], atol=1e-12)  # +Y turned
    assert site.forward_axis.length == pytest.approx(0.1, rel=1e-6)
    assert site.grip_line.length == pytest.approx(0.4, rel=1e-6)
    assert isinstance(site.grip_line.direction, np.ndarray)


INSTANCED_SITE = """
class Xform "Proto" (prepend apiSchemas = ["GripperSiteAPI"])
{
    float gripper:maxOpening = 0.085
    def BasisCurves "gripper_forward_axis"
    {
        int[] curveVertexCounts = [2]
        point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
        uniform token type = "linear"
    }
    def BasisCurves "gripper_grip_line"
    {
        int[] curveVertexCounts = [2]
        point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
        uniform token type = "linear"
    }
}
def Xform "World"
{
    def Xform "site" (instanceable = true
        prepend inherits = </Proto>)
    {
    }
}
"""


def test_an_instanced_site_has_its_prototypes_curves(open_usda):
    """An instance lists no children of its own: its curves are read through the prototype."""
    stage = open_usda(INSTANCED_SITE)
    prim = stage.GetPrimAtPath("/World/site")
    assert prim.IsInstance() and prim.GetAllChildrenNames() == []
    markers = compute_site_markers(prim)
    assert "child:gripper_forward_axis" in markers and "child:gripper_grip_line" in markers
    site = read_gripper_site(prim)
    assert site.forward_axis is not None and site.grip_line is not None
    np.testing.assert_allclose(site.grip_line.direction, [0, 1, 0])
    assert validate(stage).issues == []


def test_points_of_a_curve_without_a_transform_of_its_own_are_read_as_authored(open_usda):
    """A typeless ``over`` or a Scope has no transform: its points stay as authored (nan too)."""
    body = """
    def Xform "site" (prepend apiSchemas = ["GripperSiteAPI"])
    {
        float gripper:maxOpening = 0.085
        over "gripper_forward_axis"
        {
            point3f[] points = [(0, -0.0, 0), (nan, 0, 0.5)]
        }
        def BasisCurves "gripper_grip_line"
        {
            point3f[] points = [(0, -0.0, 0), (nan, 0, 0.5)]
        }
    }
    """
    stage = open_usda(body)
    site = read_gripper_site(stage.GetPrimAtPath("/site"), frame=False)
    raw, transformed = site.forward_axis.points, site.grip_line.points
    assert math.copysign(1, raw[0][1]) == -1 and raw[1][1:].tolist() == [0.0, 0.5]
    assert math.isnan(raw[1][0]) and site.forward_axis.direction is None
    # A BasisCurves is Xformable: its points go through the identity transform.
    assert math.isnan(transformed[1][0]) and site.grip_line.direction is None
