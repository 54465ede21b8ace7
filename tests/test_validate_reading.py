"""The validation engine's site read (no grasp frame) is the shared reader's, field by field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from usdgrip import usd_io
from usdgrip.rules.engine import SiteContext, resolve_params

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
        yield usd_io.open_stage(path)


def test_site_read_without_frame_is_the_full_read_minus_the_frame(open_usda):
    checked = 0
    for stage in _stages(open_usda):
        for prim, markers in usd_io.iter_site_prims(stage):
            with np.errstate(invalid="ignore", over="ignore"):  # the inf point of "broken"
                full = usd_io.read_gripper_site(prim, markers)
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
    full = usd_io.read_gripper_site(prim)
    lean = usd_io.read_gripper_site(prim, frame=False)
    assert full.grasp_frame is not None and lean.grasp_frame is None
    assert any("parallel" in w for w in full.warnings)
    assert not any("parallel" in w for w in lean.warnings)
    assert any("older meaning" in w for w in lean.warnings)  # GR.009's warning is kept


@pytest.mark.parametrize("path", ["/World/turned", "/World/broken"])
def test_curve_values_read_as_before(open_usda, path):
    stage = open_usda(ODD_SITES)
    with np.errstate(invalid="ignore", over="ignore"):  # the inf point of "broken"
        site = usd_io.read_gripper_site(stage.GetPrimAtPath(path), frame=False)
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
