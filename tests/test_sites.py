"""Gripper site discovery and reading: markers, name variants, transforms, warnings."""

from __future__ import annotations

import numpy as np
import pytest
from pxr import Gf, Usd, UsdGeom

from usdgrip.authoring import define_gripper_site, set_gripper_site
from usdgrip.frames import compute_grasp_frame
from usdgrip.usd.sites import find_gripper_sites, read_gripper_site

CURVES = """
        def BasisCurves "gripper_forward_axis" {
            point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
            int[] curveVertexCounts = [2]
            uniform token type = "linear"
        }
        def BasisCurves "gripper_grip_line" {
            point3f[] points = [(0, 0.01, 0), (0, -0.01, 0)]
            int[] curveVertexCounts = [2]
            uniform token type = "linear"
        }
"""


def _site(body: str, open_usda, extra: str = CURVES, head: str = "") -> list:
    stage = open_usda(
        f'def Xform "Root" {{\n    def Xform "site" {head} {{\n{body}\n{extra}\n    }}\n}}'
    )
    return find_gripper_sites(stage)


@pytest.mark.parametrize(
    ("head", "body", "marker"),
    [
        ('( prepend apiSchemas = ["GripperSiteAPI"] )', "", "GripperSiteAPI"),
        ("", 'custom token simready:attachment:socketType = "Gripper"', "socketType"),
        ("", 'custom token simready:attactment:socketType = "Gripper"', "socketType(misspelt)"),
        ("", "custom float gripper_maxOpening = 0.085", "gripper_maxOpening"),
        ("", "custom float custom:maxOpening = 0.085", "custom:maxOpening"),
    ],
)
def test_each_attribute_marker_finds_the_site(open_usda, head, body, marker):
    (site,) = _site(body, open_usda, extra="", head=head)
    assert site.path == "/Root/site" and marker in site.markers


@pytest.mark.parametrize("child", ["gripper_forward_axis", "gripper_grip_line"])
def test_child_markers_find_the_site(open_usda, child):
    stage = open_usda(
        f'def Xform "Root" {{\n def Xform "site" {{\n def BasisCurves "{child}" {{\n}}\n}}\n}}'
    )
    (site,) = find_gripper_sites(stage)
    assert site.markers == (f"child:{child}",)


def test_non_sites_are_not_found(open_usda):
    stage = open_usda(
        'def Xform "A" {\n custom token simready:attachment:socketType = "Camera"\n'
        '  def BasisCurves "forward_axis" {\n}\n}\n'
        'class Xform "C" {\n custom float gripper_maxOpening = 1\n}'
    )
    assert find_gripper_sites(stage) == []


def test_max_opening_precedence_and_sources(open_usda):
    body = (
        "float gripper:maxOpening = 0.09\ncustom float gripper_maxOpening = 0.08\n"
        "custom float custom:maxOpening = 0.07\ncustom float gripper_maxPayload = 5"
    )
    (site,) = _site(body, open_usda)
    assert (site.max_opening, site.max_opening_source) == (0.09, "gripper:maxOpening")
    assert (site.max_payload, site.max_payload_source) == (5.0, "gripper_maxPayload")
    assert set(site.legacy_attributes) == {
        "gripper_maxOpening",
        "custom:maxOpening",
        "gripper_maxPayload",
    }
    (site,) = _site(
        "custom float custom:maxOpening = 0.07\ncustom float gripper_maxOpening = 0.08", open_usda
    )
    assert (site.max_opening, site.max_opening_source) == (0.08, "gripper_maxOpening")
    (site,) = _site("custom float custom:maxOpening = 0.07", open_usda)
    assert (site.max_opening, site.max_opening_source) == (0.07, "custom:maxOpening")


def test_applying_the_api_does_not_change_a_legacy_value(open_usda):
    stage = open_usda('def Xform "site" {\n custom float gripper_maxOpening = 0.08\n}')
    prim = stage.GetPrimAtPath("/site")
    prim.ApplyAPI("GripperSiteAPI")
    site = read_gripper_site(prim)
    assert (site.max_opening, site.max_opening_source) == (0.08, "gripper_maxOpening")


def test_unprefixed_curves_accepted_and_prefixed_wins(open_usda):
    extra = """
        def BasisCurves "forward_axis" {
            point3f[] points = [(0, 0, 0), (1, 0, 0)]
        }
        def BasisCurves "grip_line" {
            point3f[] points = [(0, 0, 0), (0, 1, 0)]
        }
    """
    (site,) = _site("custom float gripper_maxOpening = 0.08", open_usda, extra=extra)
    assert site.forward_axis.child == "forward_axis" and site.grip_line.child == "grip_line"
    np.testing.assert_allclose(site.forward_axis.direction, [1, 0, 0])
    (site,) = _site("custom float gripper_maxOpening = 0.08", open_usda, extra=extra + CURVES)
    assert site.forward_axis.child == "gripper_forward_axis"
    assert site.forward_axis.shadowed == "forward_axis"
    assert site.grip_line.child == "gripper_grip_line" and site.grip_line.shadowed == "grip_line"
    np.testing.assert_allclose(site.forward_axis.direction, [0, 0, 1])


def test_grasp_frame_follows_graspgenx(open_usda):
    (site,) = _site("custom float gripper_maxOpening = 0.085", open_usda)
    g = site.grasp_frame
    np.testing.assert_allclose(g[:3, 2], [0, 0, 1], atol=1e-12)  # approach = forward
    np.testing.assert_allclose(
        g[:3, 0], np.cross([0, 0, 1], [0, -1, 0]), atol=1e-12
    )  # X = fwd × grip
    np.testing.assert_allclose(g[:3, 1], np.cross(g[:3, 2], g[:3, 0]), atol=1e-12)
    assert np.linalg.det(g[:3, :3]) == pytest.approx(1.0)
    assert site.grip_line.length == pytest.approx(0.02)
    assert site.warnings == ()


def test_world_transform_on_nested_rotated_scaled_prims(open_usda):
    stage = open_usda(
        f"""
        def Xform "Robot" {{
            double3 xformOp:translate = (1, 2, 3)
            float3 xformOp:rotateXYZ = (0, 0, 90)
            float3 xformOp:scale = (2, 2, 2)
            uniform token[] xformOpOrder = [
                "xformOp:translate", "xformOp:rotateXYZ", "xformOp:scale"]
            def Xform "site" {{
                double3 xformOp:translate = (0.1, 0, 0)
                uniform token[] xformOpOrder = ["xformOp:translate"]
                custom float gripper_maxOpening = 0.085
                {CURVES}
            }}
        }}"""
    )
    (site,) = find_gripper_sites(stage)
    # (0.1, 0, 0) scaled 2x then rotated 90° about Z → (0, 0.2, 0), then translated.
    np.testing.assert_allclose(site.world_transform[:3, 3], [1, 2.2, 3], atol=1e-6)
    np.testing.assert_allclose(site.grasp_frame[:3, 3], [1, 2.2, 3], atol=1e-6)
    # Grip line (0, -1, 0) rotated 90° about Z → (1, 0, 0); length scaled 2x.
    np.testing.assert_allclose(site.grip_line.direction, [1, 0, 0], atol=1e-6)
    assert site.grip_line.length == pytest.approx(0.04)
    np.testing.assert_allclose(site.grasp_frame[:3, 0], np.cross([0, 0, 1], [1, 0, 0]), atol=1e-6)


def test_meters_per_unit_scales_world_lengths(write_usda):
    path = write_usda(
        f'#usda 1.0\n(\n metersPerUnit = 0.01\n)\ndef Xform "site" {{\n'
        f"double3 xformOp:translate = (10, 0, 0)\nuniform token[] xformOpOrder = "
        f'["xformOp:translate"]\ncustom float gripper_maxOpening = 0.085\n{CURVES}}}'
    )
    (site,) = find_gripper_sites(Usd.Stage.Open(str(path)))
    np.testing.assert_allclose(site.world_transform[:3, 3], [0.1, 0, 0])
    assert site.grip_line.length == pytest.approx(0.0002)


def test_parallel_axes_fall_back_with_a_warning_never_nan(open_usda):
    extra = CURVES.replace("(0, 0.01, 0), (0, -0.01, 0)", "(0, 0, 0), (0, 0, 0.02)")
    (site,) = _site("custom float gripper_maxOpening = 0.085", open_usda, extra=extra)
    assert np.isfinite(site.grasp_frame).all()
    assert np.linalg.det(site.grasp_frame[:3, :3]) == pytest.approx(1.0)
    assert any("parallel" in w for w in site.warnings)


def test_missing_or_zero_forward_gives_no_frame_and_a_warning(open_usda):
    extra = CURVES.replace("(0, 0, 0), (0, 0, 0.05)", "(0, 0, 0), (0, 0, 0)")
    (site,) = _site("custom float gripper_maxOpening = 0.085", open_usda, extra=extra)
    assert site.grasp_frame is None and any("forward axis" in w for w in site.warnings)


def test_jaw_span_grip_line_is_flagged(open_usda):
    extra = CURVES.replace("(0, 0.01, 0), (0, -0.01, 0)", "(-0.0425, 0, 0), (0.0425, 0, 0)")
    (site,) = _site("custom float gripper_maxOpening = 0.085", open_usda, extra=extra)
    assert any("older meaning" in w for w in site.warnings)


def test_site_under_undefined_over_is_found_and_flagged(open_usda):
    stage = open_usda(
        f"""
        def Xform "robot" {{
            over "base_link" (prepend payload = @./missing_payload.usd@) {{
                def Xform "gripper_01" {{
                    custom float gripper_maxOpening = 0.085
                    custom token simready:attachment:socketType = "Gripper"
                    {CURVES}
                }}
            }}
        }}"""
    )
    (site,) = find_gripper_sites(stage)
    assert site.path == "/robot/base_link/gripper_01" and not site.defined
    assert any("undefined `over` </robot/base_link>" in w for w in site.warnings)


def test_instance_proxies_are_traversed(open_usda):
    stage = open_usda(
        f"""
        class Xform "Proto" {{
            def Xform "site" {{
                custom float gripper_maxOpening = 0.05
                {CURVES}
            }}
        }}
        def Xform "A" (
            instanceable = true
            inherits = </Proto>
        ) {{
        }}
        def Xform "B" (
            instanceable = true
            inherits = </Proto>
        ) {{
        }}
        """
    )
    assert sorted(s.path for s in find_gripper_sites(stage)) == ["/A/site", "/B/site"]


def test_define_gripper_site_authors_a_complete_site(tmp_path):
    stage = Usd.Stage.CreateNew(str(tmp_path / "g.usda"))
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    prim = define_gripper_site(
        stage, "/G/tcp", 0.085, pad_width=0.02, max_payload=3, translate=(0, 0, 0.1)
    )
    site = read_gripper_site(prim)
    assert site.markers[0] == "GripperSiteAPI" and site.max_opening == pytest.approx(0.085)
    assert site.max_payload == 3.0 and site.warnings == ()
    for curve in (site.forward_axis, site.grip_line):
        c = UsdGeom.BasisCurves(stage.GetPrimAtPath(curve.path))
        assert c.GetTypeAttr().Get() == "linear" and c.GetPurposeAttr().Get() == "guide"
        assert (
            list(c.GetCurveVertexCountsAttr().Get()) == [2] and c.GetExtentAttr().HasAuthoredValue()
        )
    np.testing.assert_allclose(site.grip_line.points.mean(axis=0), 0, atol=1e-9)
    set_gripper_site(prim, max_opening=0.1, grip_line=(1, 0, 0), pad_width=0.03)
    site = read_gripper_site(prim)
    assert site.max_opening == pytest.approx(0.1) and site.grip_line.length == pytest.approx(0.03)
    np.testing.assert_allclose(
        site.grasp_frame[:3, 1], np.cross([0, 0, 1], np.cross([0, 0, 1], [1, 0, 0]))
    )
    with pytest.raises(ValueError, match=r"GR.004 .*gripper:maxOpening is -1 m"):
        define_gripper_site(stage, "/G/bad", -1)
    with pytest.raises(
        ValueError, match=r"GR.005 .*gripper_forward_axis: forward \[0, 0, 0\] is zero"
    ):
        set_gripper_site(prim, forward=(0, 0, 0))
    assert Gf.IsClose(
        stage.GetPrimAtPath("/G/tcp").GetAttribute("xformOp:translate").Get(),
        Gf.Vec3d(0, 0, 0.1),
        1e-12,
    )


def test_compute_grasp_frame_rejects_zero_forward():
    with pytest.raises(ValueError, match="forward axis"):
        compute_grasp_frame([0, 0, 0], [0, 0, 0], [0, 1, 0])
