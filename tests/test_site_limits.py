"""A site's optional limits: ``gripper:maxGripForce`` (issue 15) and ``gripper:maxPayload``.

Schema, reader, authoring, ``info`` and the readers' convention for values whose rule
(GR.012, GR.010) only warns: such a value reads as not authored, with a warning.
"""

from __future__ import annotations

import json
import math

import pytest
from conftest import EXAMPLES
from pxr import Sdf, Usd, UsdGeom

import usdgrip
from usdgrip.authoring import AuthoringError, define_gripper_site, set_gripper_site
from usdgrip.cli import main
from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef
from usdgrip.grasping.planner import plan_grasps
from usdgrip.usd.sites import find_gripper_sites, read_gripper_site

FORCE = "gripper:maxGripForce"
SITE = """
def Xform "tcp" (
    prepend apiSchemas = ["GripperSiteAPI"]
)
{{
    float gripper:maxOpening = 0.085
    {attrs}

    def BasisCurves "gripper_forward_axis"
    {{
        point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
        int[] curveVertexCounts = [2]
        uniform token type = "linear"
    }}

    def BasisCurves "gripper_grip_line"
    {{
        point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
        int[] curveVertexCounts = [2]
        uniform token type = "linear"
    }}
}}
"""


def test_schema_declares_a_float_grip_force_without_fallback():
    definition = Usd.SchemaRegistry().FindAppliedAPIPrimDefinition("GripperSiteAPI")
    spec = definition.GetAttributeDefinition(FORCE)
    assert spec and spec.GetTypeName() == Sdf.ValueTypeNames.Float
    assert spec.GetFallbackValue() is None
    stage = Usd.Stage.CreateInMemory()
    prim = stage.DefinePrim("/X", "Xform")
    assert not prim.GetAttribute(FORCE)  # only with the API applied
    prim.ApplyAPI("GripperSiteAPI")
    attr = prim.GetAttribute(FORCE)
    assert attr and attr.Get() is None and not attr.HasAuthoredValue()
    assert attr.GetTypeName() == Sdf.ValueTypeNames.Float
    attr.Set(235.0)
    assert attr.HasAuthoredValue() and attr.Get() == 235.0
    doc = (usdgrip._plugin.schema_dir() / "schema.usda").read_text()
    block = doc[doc.index(f"float {FORCE}") :].split('"""')[1]
    assert "Range: finite, > 0" in block and "Units: newtons" in block


def test_reader_takes_the_authored_value_only(open_usda):
    (site,) = find_gripper_sites(open_usda(SITE.format(attrs=f"float {FORCE} = 140.7")))
    assert site.max_grip_force == 140.7  # the float32's shortest decimal, not 140.6999969
    assert FORCE not in site.problems and site.warnings == ()
    for attrs in ("", f"float {FORCE}", f"custom float gripper_{FORCE.split(':')[1]} = 5"):
        (site,) = find_gripper_sites(open_usda(SITE.format(attrs=attrs)))
        assert site.max_grip_force is None, attrs  # no fallback, no legacy name
        assert site.warnings == () and site.problems == {}
    (site,) = find_gripper_sites(open_usda(SITE.format(attrs=f"int {FORCE} = 50")))
    assert site.max_grip_force == 50.0 and type(site.max_grip_force) is float


@pytest.mark.parametrize(
    ("attrs", "problem"),
    [
        (f"float {FORCE} = 0", f"{FORCE} is 0 N; expected a finite value > 0 N"),
        (f"float {FORCE} = -235", f"{FORCE} is -235 N"),
        (f"double {FORCE} = nan", f"{FORCE} is nan N"),
        (f"double {FORCE} = inf", f"{FORCE} is inf N"),
        (f'string {FORCE} = "235"', f"{FORCE} is string, expected"),
        (f"float {FORCE}.timeSamples = {{0: 100}}", f"{FORCE} is time-sampled"),
    ],
)
def test_a_bad_grip_force_reads_as_not_authored_with_a_warning(open_usda, attrs, problem):
    stage = open_usda(SITE.format(attrs=attrs))
    (site,) = find_gripper_sites(stage)  # strict: GR.012 only warns, the site is not refused
    assert site.max_grip_force is None
    assert problem in site.problems[FORCE]
    (warning,) = site.warnings
    assert problem in warning and warning.endswith("; read as not authored")
    report = usdgrip.validate(stage)
    assert report.ok and [(i.code, i.severity) for i in report.issues] == [("GR.012", "warning")]
    assert problem in report.issues[0].message


@pytest.mark.parametrize("payload", ["0", "-2", "nan", "-inf"])
def test_a_bad_payload_reads_as_not_authored_too(open_usda, payload):
    # docs/validation.md: values whose rule only warns (GR.010) read as not authored.
    (site,) = find_gripper_sites(
        open_usda(SITE.format(attrs=f"double gripper:maxPayload = {payload}"))
    )
    assert site.max_payload is None and site.max_payload_source == "gripper:maxPayload"
    assert site.warnings == (
        f"gripper:maxPayload is {float(payload):g} kg; expected a finite value > 0 kg "
        "(or do not author it); read as not authored",
    )


def test_define_and_set_author_the_grip_force(tmp_path):
    stage = Usd.Stage.CreateNew(str(tmp_path / "g.usda"))
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    prim = define_gripper_site(stage, "/G/tcp", 0.085, max_payload=5, max_grip_force=235)
    attr = prim.GetAttribute(FORCE)
    assert attr.GetTypeName() == Sdf.ValueTypeNames.Float and attr.HasAuthoredValue()
    assert read_gripper_site(prim).max_grip_force == 235.0
    set_gripper_site(prim, max_grip_force=20.5)
    assert read_gripper_site(prim).max_grip_force == 20.5
    set_gripper_site(prim, max_opening=0.08)  # not given: left as authored
    assert read_gripper_site(prim).max_grip_force == 20.5
    plain = define_gripper_site(stage, "/G/plain", 0.085)
    assert not plain.GetAttribute(FORCE).HasAuthoredValue()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"max_grip_force": 0},
            "GR.012 .*gripper:maxGripForce is 0 N; expected a finite value > 0",
        ),
        ({"max_grip_force": -1.0}, "GR.012 .*gripper:maxGripForce is -1 N"),
        ({"max_grip_force": math.nan}, "GR.012 .*gripper:maxGripForce is nan N"),
        ({"max_grip_force": math.inf}, "GR.012 .*gripper:maxGripForce is inf N"),
        ({"max_grip_force": 1e300}, "GR.012 .*gripper:maxGripForce is 1e\\+300 N; expected a val"),
        ({"max_grip_force": "235"}, "gripper:maxGripForce is '235'; expected a number"),
        ({"max_grip_force": True}, "gripper:maxGripForce is True; expected a number"),
        ({"max_payload": 0}, "GR.010 .*gripper:maxPayload is 0 kg"),
    ],
)
def test_bad_limits_are_refused_before_anything_is_authored(tmp_path, kwargs, match):
    """The rules' own code and words (GR.010, GR.012), before anything is authored."""
    error = AuthoringError
    stage = Usd.Stage.CreateInMemory()
    with pytest.raises(error, match=match):
        define_gripper_site(stage, "/G/tcp", 0.085, translate=(0, 0, 1), **kwargs)
    assert not stage.GetPrimAtPath("/G/tcp")
    prim = stage.DefinePrim("/X", "Xform")
    with pytest.raises(error, match=match):
        set_gripper_site(prim, max_opening=0.05, **kwargs)
    assert prim.GetAppliedSchemas() == [] and prim.GetAuthoredPropertyNames() == []


def test_info_shows_the_grip_force(write_usda, capsys):
    assert main(["info", str(EXAMPLES / "gripper.usda")]) == 0
    out = capsys.readouterr().out
    assert "    payload    5 kg (gripper:maxPayload)\n" in out
    assert "    grip force 235 N (gripper:maxGripForce)\n" in out
    assert main(["info", str(EXAMPLES / "gripper.usda"), "--json"]) == 0
    (site,) = json.loads(capsys.readouterr().out)["sites"]
    assert site["max_grip_force"] == 235.0 and site["max_payload"] == 5.0
    bad = write_usda(SITE.format(attrs=f"double {FORCE} = nan"), "bad.usda")
    assert main(["info", str(bad), "--json"]) == 0  # strict JSON: no NaN anywhere
    (site,) = json.loads(capsys.readouterr().out)["sites"]
    assert site["max_grip_force"] is None
    assert any(FORCE in w and "read as not authored" in w for w in site["warnings"])
    assert main(["info", str(bad)]) == 0
    out = capsys.readouterr().out
    assert "    grip force not authored\n" in out and "warning: gripper:maxGripForce is nan" in out


def test_the_planner_ignores_a_bad_payload_with_a_warning(write_usda):
    text = (EXAMPLES / "gripper.usda").read_text()
    assert "float gripper:maxPayload = 5" in text
    gripper = write_usda(text.replace("gripper:maxPayload = 5", "gripper:maxPayload = 0"))
    request = GraspPlanningRequest(
        object=GraspObject(
            geometry=GeometryRef(asset_path=str(EXAMPLES / "mug.usda"), prim_path="/Mug"),
            mass_kg=0.3,
        ),
        grippers=(GripperRef(asset_path=str(gripper), prim_path="/Gripper/tcp"),),
        max_candidates_per_gripper=2,
    )
    result = plan_grasps(request)
    assert len(result.grasps) == 2  # before: "skipped: object mass 0.3 kg exceeds ... 0 kg"
    assert any(
        "gripper:maxPayload is 0 kg" in w and w.endswith("read as not authored")
        for w in result.metadata.warnings
    ), result.metadata.warnings
