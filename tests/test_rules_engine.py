"""The validation engine: registry, traversal, crash handling, fixes, reports."""

from __future__ import annotations

import dataclasses
import json

import pytest
from pxr import Sdf, Usd, UsdGeom

import usdgrip
from usdgrip.authoring import define_gripper_site
from usdgrip.rules import (
    DEFAULT_PARAMS,
    RULES,
    Report,
    check_prim,
    check_stage_level,
    compute_marker_hints,
    iter_candidates,
    validate,
)
from usdgrip.usd.discovery import compute_site_markers, iter_site_prims
from usdgrip.usd.sites import find_gripper_sites
from usdgrip.usd.slots import iter_slot_prims, list_slot_instances
from usdgrip.usd.stage import TRAVERSAL, open_stage

# The issue's table: code -> (name, severity). Codes are permanent.
ISSUE_TABLE = {
    "GR.001": ("gripper-site", "failure"),
    "GR.002": ("gripper-forward-axis", "failure"),
    "GR.003": ("gripper-grip-line", "failure"),
    "GR.004": ("gripper-max-opening", "failure"),
    "GR.005": ("gripper-axis-degenerate", "failure"),
    "GR.006": ("gripper-axes-orthogonal", "warning"),
    "GR.007": ("gripper-curve-form", "warning"),
    "GR.008": ("gripper-legacy-authoring", "info"),
    "GR.009": ("gripper-grip-line-meaning", "warning"),
    "GR.010": ("gripper-max-payload", "warning"),
    "GR.011": ("gripper-site-undeclared", "info"),
    "GR.012": ("gripper-grip-force", "warning"),  # issue 15
    "GR.015": ("gripper-opening-mismatch", "warning"),  # issue 24
    "GR.016": ("gripper-finger-colliders", "failure"),  # issue 24
    "GR.017": ("gripper-site-rigid-body-ancestor", "failure"),  # issue 24
    "GS.001": ("slot-axes", "failure"),
    "GS.002": ("slot-up-range", "failure"),
    "GS.003": ("slot-input-angle", "failure"),
    "GS.004": ("slot-lr", "failure"),
    "GS.005": ("slot-instance-name", "failure"),
    "GS.006": ("slot-record-malformed", "failure"),
    "GS.007": ("slot-record-legacy", "info"),
    "GS.008": ("slot-group", "warning"),
    "GS.009": ("slot-misses-object", "failure"),
    "GA.001": ("asset-unresolved", "error"),
    "GA.002": ("stage-units-unauthored", "warning"),
    "GSP.001": ("graspable-vector-line", "failure"),
    "GP.001": ("grasp-line-misses-object", "failure"),
    "GP.002": ("grasp-line-form", "warning"),
    "GP.003": ("grasp-line-width", "warning"),
}
STAGE_RULES = {"GA.001", "GA.002", "GSP.001", "GP.001", "GP.002", "GP.003"}

SEED_VALID = """
def Xform "gripper_01"
{
    double3 xformOp:translate = (0, 0.15, 0)
    uniform token[] xformOpOrder = ["xformOp:translate"]
    float gripper_maxOpening = 0.085

    def BasisCurves "gripper_forward_axis"
    {
        point3f[] points = [(0, -0.15, 0), (0, 0.15, 0)]
        int[] curveVertexCounts = [2]
        uniform token type = "linear"
    }

    def BasisCurves "gripper_grip_line"
    {
        point3f[] points = [(-0.2, 0, 0), (0.2, 0, 0)]
        int[] curveVertexCounts = [2]
        uniform token type = "linear"
    }
}
"""

FIXABLE_SITE = """
def Xform "Gripper"
{
    def Xform "tcp"
    {
        float gripper:maxOpening = 0.085

        def BasisCurves "gripper_forward_axis"
        {
            point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
        }

        def BasisCurves "gripper_grip_line"
        {
            point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
            int[] curveVertexCounts = [2]
            uniform token type = "linear"
        }
    }
}
"""


def codes(report_or_issues) -> set[str]:
    issues = report_or_issues.issues if isinstance(report_or_issues, Report) else report_or_issues
    return {i.code for i in issues}


def test_registry_matches_issue_table():
    assert {c: (r.name, r.severity) for c, r in RULES.items()} == ISSUE_TABLE
    for r in RULES.values():
        assert r.summary and "\n" not in r.summary
        assert r.doc_path.name == f"{r.code}.md"
        assert r.doc.startswith(f"# {r.name}")
        assert r.validator == ("CheckStage" if r.code in STAGE_RULES else "CheckPrim")
        with pytest.raises(dataclasses.FrozenInstanceError):
            r.code = "XX.000"  # type: ignore[misc]


def test_public_exports():
    assert usdgrip.validate is validate
    assert usdgrip.Report is Report


def test_seed_valid_example_has_no_failure(open_usda):
    report = validate(open_usda(SEED_VALID))
    assert report.ok
    assert codes(report) == {"GR.009", "GR.011"}
    assert report.counts == {"failure": 0, "error": 0, "warning": 1, "info": 1}


def test_examples_are_clean():
    for name in ("gripper.usda", "tote.usda", "mug.usda"):
        report = validate(open_stage(f"examples/{name}"))
        assert report.issues == [], name


def test_simready_2f85_example():
    report = validate("examples/simready_2f85.usda")
    assert not report.ok
    by_code = {i.code: i for i in report.issues}
    assert set(by_code) == {"GA.001", "GR.009", "GR.008"}
    assert "robotiq_2f85_base_link.usd" in by_code["GA.001"].message
    assert by_code["GA.001"].prim == "/Robotiq_2F_85/base_link"
    assert "under it, checked without it: </Robotiq_2F_85/base_link/gripper_01>" in (
        by_code["GA.001"].message
    )
    assert by_code["GR.009"].prim == "/Robotiq_2F_85/base_link/gripper_01"
    # Readable: the site is found and read despite the missing payload.
    (site,) = find_gripper_sites(report.stage)
    assert site.max_opening == pytest.approx(0.085) and not site.defined


def test_unknown_rule_and_param_list_valid_options(open_usda):
    stage = open_usda(SEED_VALID)
    with pytest.raises(ValueError, match=r"unknown rule 'GR\.999'.*GR\.003"):
        validate(stage, rules=["GR.999"])
    with pytest.raises(ValueError, match=r"unknown parameter 'nope'.*orthogonality_tolerance_deg"):
        validate(stage, params={"nope": 1})
    with pytest.raises(ValueError, match="expected a finite number"):
        validate(stage, params={"orthogonality_tolerance_deg": "abc"})


def test_rule_selection_by_code_and_name(open_usda):
    stage = open_usda(SEED_VALID)
    assert codes(validate(stage, rules=["GR.011"])) == {"GR.011"}
    assert codes(validate(stage, rules=["gripper-grip-line-meaning"])) == {"GR.009"}
    assert validate(stage, rules=["GR.003"]).issues == []


def test_params_override_tolerance(open_usda):
    stage = open_usda(SEED_VALID)
    # Grip line 0.4 m vs opening 0.085 m: ratio 4.7 -> silenced above that.
    assert codes(validate(stage, params={"grip_line_meaning_ratio": 5})) == {"GR.011"}
    assert DEFAULT_PARAMS["grip_line_meaning_ratio"] == 1.0


def test_crashing_rule_becomes_error_issue_and_run_continues(open_usda):
    def boom(context):
        raise RuntimeError("synthetic crash")
        yield  # pragma: no cover

    crashing = dataclasses.replace(RULES["GR.003"], check=boom)
    stage = open_usda(SEED_VALID)
    report = validate(stage, rules=[crashing, "GR.009"])
    by_code = {i.code: i for i in report.issues}
    assert by_code["GR.003"].severity == "error"
    assert by_code["GR.003"].prim == "/gripper_01"
    assert "RuntimeError: synthetic crash" in by_code["GR.003"].message
    assert by_code["GR.009"].severity == "warning"  # the run continued
    assert not report.ok


def test_check_prim_and_stage_level_share_validate(open_usda, write_usda):
    stage = open_usda(SEED_VALID)
    prim = stage.GetPrimAtPath("/gripper_01")
    assert codes(check_prim(prim)) == {"GR.009", "GR.011"}
    assert check_prim(stage.GetPrimAtPath("/gripper_01/gripper_grip_line")) == []
    assert check_stage_level(stage) == []
    path = write_usda('over "base" (\n prepend payload = @./gone.usda@\n)\n{\n}\n', "g.usda")
    (issue,) = check_stage_level(Usd.Stage.Open(str(path)))
    assert issue.code == "GA.001" and issue.prim == "/base" and "gone.usda" in issue.message


def test_site_under_undefined_over_is_checked(open_usda):
    stage = open_usda(
        """
        over "base_link" (
            prepend payload = @./missing.usd@
        )
        {
            def Xform "gripper_01" (
                prepend apiSchemas = ["GripperSiteAPI"]
            )
            {
                float gripper:maxOpening = -1
            }
        }
        """
    )
    report = validate(stage)
    assert {(i.code, i.prim) for i in report.issues} >= {
        ("GA.001", "/base_link"),
        ("GR.004", "/base_link/gripper_01"),
        ("GR.002", "/base_link/gripper_01"),
        ("GR.003", "/base_link/gripper_01"),
    }


def test_instance_proxies_are_traversed_but_not_fixed(open_usda):
    stage = open_usda(
        """
        class "Proto"
        {
            def Xform "tcp"
            {
                float gripper:maxOpening = 0.085
                def BasisCurves "gripper_forward_axis"
                {
                    point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
                    int[] curveVertexCounts = [2]
                    uniform token type = "linear"
                }
                def BasisCurves "gripper_grip_line"
                {
                    point3f[] points = [(0, -0.01, 0)]
                    int[] curveVertexCounts = [1]
                    uniform token type = "linear"
                }
            }
        }
        def Xform "A" (instanceable = true
            prepend references = </Proto>) {}
        def Xform "B" (instanceable = true
            prepend references = </Proto>) {}
        """
    )
    report = validate(stage)
    gr003 = sorted(i.prim for i in report.issues if i.code == "GR.003")
    assert gr003 == ["/A/tcp", "/B/tcp"]
    gr011 = [i for i in report.issues if i.code == "GR.011"]
    assert len(gr011) == 2 and not any(i.fixable for i in gr011)


def test_candidates_match_site_discovery(open_usda):
    stage = open_usda(
        """
        def Xform "a" (prepend apiSchemas = ["GripperSiteAPI"])
        {
        }
        def Xform "b"
        {
            custom token simready:attachment:socketType = "Gripper"
        }
        def Xform "c"
        {
            custom token simready:attactment:socketType = "Gripper"
        }
        def Xform "d"
        {
            custom token simready:attachment:socketType = "Camera"
        }
        def Xform "e"
        {
            float custom:maxOpening = 0.1
        }
        def Xform "f"
        {
            def BasisCurves "gripper_grip_line"
            {
            }
        }
        def Xform "g"
        {
            def BasisCurves "grip_line"
            {
            }
        }
        def Xform "h" (customData = { dictionary lambdasim = { string gripper_slots = "[]" } })
        {
        }
        def Xform "i" (prepend apiSchemas = ["GripperSlotAPI:s"])
        {
        }
        """
    )
    found = {str(p.GetPath()): (m, s) for p, m, s in iter_candidates(stage)}
    expected_sites = {str(p.GetPath()): m for p, m in iter_site_prims(stage)}
    assert {k: m for k, (m, _) in found.items() if m} == expected_sites
    assert set(expected_sites) == {"/a", "/b", "/c", "/e", "/f"}
    assert {k for k, (_, s) in found.items() if s} == {"/h", "/i"}
    assert {str(p.GetPath()) for p in iter_slot_prims(stage)} == {"/h", "/i"}
    assert compute_marker_hints(stage) == {"api", "props", "children", "custom"}


TRICKY = """
def Xform "gripper_grip_line"
{
}
def Xform "A"
{
    def Xform "x" (prepend apiSchemas = ["GripperSiteAPI", "GripperSlotAPI:s"])
    {
    }
    def Xform "B"
    {
        def BasisCurves "gripper_forward_axis"
        {
        }
    }
    def Xform "y" (prepend apiSchemas = ["MaterialBindingAPI"])
    {
        def Scope "gripper_grip_line"
        {
        }
    }
    def BasisCurves "gripper_grip_line"
    {
    }
}
class "Proto"
{
    def Xform "tcp"
    {
        custom token simready:attactment:socketType = "Gripper"
        def Xform "gripper_forward_axis"
        {
        }
    }
}
def Xform "I1" (instanceable = true
    prepend references = </Proto>)
{
}
over "Over"
{
    def Xform "s"
    {
        float gripper_maxOpening = 0.1
    }
    def Xform "m" (customData = { dictionary lambdasim = { string gripper_slots = "[]" } })
    {
    }
}
"""


def _reference_discovery(stage):
    # The definition: every traversed prim, in order, through compute_site_markers.
    sites, slots = [], []
    for prim in stage.Traverse(TRAVERSAL):
        markers = compute_site_markers(prim)
        if markers:
            sites.append((str(prim.GetPath()), markers))
        if list_slot_instances(prim) or prim.GetCustomDataByKey("lambdasim:gripper_slots"):
            slots.append(str(prim.GetPath()))
    return sites, slots


def test_fast_discovery_equals_the_definition_in_order(open_usda):
    stage = open_usda(TRICKY)
    sites, slots = _reference_discovery(stage)
    assert [p for p, _ in sites] == ["/A", "/A/x", "/A/B", "/A/y", "/I1/tcp", "/Over/s"]
    assert [(str(p.GetPath()), m) for p, m in iter_site_prims(stage)] == sites
    assert [str(p.GetPath()) for p in iter_slot_prims(stage)] == slots == ["/A/x", "/Over/m"]
    marked = [(str(p.GetPath()), m, s) for p, m, s in iter_candidates(stage)]
    assert [(p, m) for p, m, _ in marked if m] == sites
    assert [p for p, _, s in marked if s] == slots


def test_hints_skip_absent_markers_and_binary_layers_enable_all(open_usda, tmp_path):
    stage = open_usda('def Xform "plain" {}')
    assert compute_marker_hints(stage) == frozenset()
    assert list(iter_candidates(stage)) == []
    crate = tmp_path / "site.usdc"
    source = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(source, 1.0)  # else GA.002 (units unauthored) warns
    UsdGeom.SetStageUpAxis(source, UsdGeom.Tokens.z)
    define_gripper_site(source, "/G/tcp", 0.085)
    source.GetRootLayer().Export(str(crate))
    binary = Usd.Stage.Open(str(crate))
    assert compute_marker_hints(binary) == {"api", "props", "children", "custom"}
    assert validate(binary).issues == []


def test_hints_see_unsaved_edits(open_usda):
    stage = open_usda('def Xform "plain" {}')
    define_gripper_site(stage, "/plain/tcp", 0.085)
    stage.GetPrimAtPath("/plain/tcp").GetAttribute("gripper:maxOpening").Set(-1.0)
    assert codes(validate(stage)) == {"GR.004"}


def test_report_counts_ok_json(open_usda):
    report = validate(open_usda(SEED_VALID))
    data = json.loads(report.to_json())
    assert data["summary"] == report.counts
    assert data["ok"] is True
    assert {i["code"] for i in data["issues"]} == {"GR.009", "GR.011"}
    gr011 = next(i for i in data["issues"] if i["code"] == "GR.011")
    assert gr011["fixable"] is True and gr011["rule"] == "gripper-site-undeclared"
    assert gr011["fixes"] == ["apply GripperSiteAPI to </gripper_01>"]


def test_apply_fixes_root_layer_roundtrip(write_usda):
    path = write_usda(FIXABLE_SITE)
    stage = Usd.Stage.Open(str(path))
    report = validate(stage)
    assert codes(report) == {"GR.007", "GR.011"}
    changed = report.apply_fixes()
    assert changed == [
        'author type = "linear" on </Gripper/tcp/gripper_forward_axis>',
        "author curveVertexCounts = [2] on </Gripper/tcp/gripper_forward_axis>",
        "apply GripperSiteAPI to </Gripper/tcp>",
    ]
    assert validate(stage).issues == []
    root = stage.GetRootLayer()
    assert root.GetPrimAtPath("/Gripper/tcp").GetInfo("apiSchemas").prependedItems == [
        "GripperSiteAPI"
    ]
    assert root.GetAttributeAtPath("/Gripper/tcp/gripper_forward_axis.type").default == "linear"
    assert stage.GetSessionLayer().empty


def test_apply_fixes_session_layer_leaves_root_untouched(write_usda):
    path = write_usda(FIXABLE_SITE)
    before = path.read_text()
    stage = Usd.Stage.Open(str(path))
    changed = validate(stage).apply_fixes(stage.GetSessionLayer())
    assert len(changed) == 3
    assert validate(stage).issues == []
    assert not stage.GetRootLayer().dirty
    assert path.read_text() == before
    assert stage.GetSessionLayer().GetPrimAtPath("/Gripper/tcp") is not None


def test_apply_fixes_rejects_foreign_layer(write_usda):
    stage = Usd.Stage.Open(str(write_usda(FIXABLE_SITE)))
    with pytest.raises(ValueError, match="not in the local layer stack"):
        validate(stage).apply_fixes(Sdf.Layer.CreateAnonymous())


def test_validate_path_and_unreadable_path(write_usda, tmp_path):
    assert validate(write_usda(SEED_VALID)).ok
    with pytest.raises(usdgrip.StageOpenError, match="no such file"):
        validate(tmp_path / "missing.usda")
