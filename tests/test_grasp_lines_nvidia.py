"""GSP.001 and the GP rules inside the real usd-validation-nvidia: requirement binding and findings."""

from __future__ import annotations

from conftest import EXAMPLES
from nvidia_validator import Requirement, nv

import usdgrip
from usdgrip.validators import nvidia as adapter

GRASP_CODES = ("GP.001", "GP.002", "GP.003", "GP.004", "GSP.001")

# A prop with every grasp-line finding: a miss, a three-point cubic line, a too-wide line,
# and (GSP.001) a FET005-style Xform identifier in a second prop without a curve.
ZOO = """#usda 1.0
(
    defaultPrim = "Props"
    metersPerUnit = 1
)

def Xform "Props"
{
    def Xform "block" (
        prepend apiSchemas = ["PhysicsRigidBodyAPI"]
    )
    {
        def Cube "body"
        {
            double size = 0.2
        }
        def BasisCurves "grasp_identifier_beside"
        {
            point3f[] points = [(-0.15, 0.5, 0), (0.15, 0.5, 0)]
            token type = "linear"
        }
        def BasisCurves "grasp_identifier_wide"
        {
            point3f[] points = [(-0.15, 0, 0), (0, 0, 0), (0.15, 0, 0)]
        }
    }
}
"""

NO_LINE = """#usda 1.0
(
    defaultPrim = "Block"
    metersPerUnit = 1
)

def Xform "Block" (
    prepend apiSchemas = ["PhysicsRigidBodyAPI"]
)
{
    def Cube "body"
    {
        double size = 0.04
    }
    def Xform "grasp_identifier_01"
    {
    }
}
"""


def _rows_usdgrip(path, codes=GRASP_CODES) -> list[tuple]:
    report = usdgrip.validate(path, rules=list(codes))
    return sorted((i.code, i.severity, i.prim, i.message) for i in report.issues)


def _rows_nvidia(result) -> list[tuple]:
    rows = []
    for issue in result.issues:
        at = issue.at
        path = str(at.path) if isinstance(at, nv.PrimId) else "/"
        rows.append((issue.code, issue.severity.name.lower(), path, issue.message))
    return sorted(rows)


def _engine(*, codes=(), capability: str | None = None) -> nv.ValidationEngine:
    engine = nv.ValidationEngine(init_rules=False)
    for code in codes:
        engine.enable_requirement(nv.RequirementsRegistry().find_requirement(code))
    if capability:
        engine.enable_capability(nv.CapabilityRegistry().find(capability))
    return engine


def test_gsp001_is_a_requirement_bound_to_usdgrip_and_in_the_graspable_capability():
    registry = nv.RequirementsRegistry()
    gsp = registry.find_requirement("GSP.001")
    assert (gsp.code, gsp.version, gsp.display_name) == (
        "GSP.001",
        "1.0.0",
        "graspable-vector-line",
    )
    assert gsp.validator == "CheckStage"
    assert registry.get_validator(gsp) is adapter.CHECKERS["GSP.001"]
    gp003 = registry.find_requirement("GP.003")
    assert {p.display_name for p in gp003.parameters} == {
        "grasp_line_max_width_m",
        "grasp_line_min_width_m",
    }
    capability = nv.CapabilityRegistry().find(adapter.GRASPABLE_CAPABILITY_ID)
    assert [r.code for r in capability.requirements] == list(GRASP_CODES)
    assert adapter.GRASPABLE_CODES == GRASP_CODES
    # and in the everything capability too
    everything = nv.CapabilityRegistry().find(adapter.CAPABILITY_ID)
    assert set(GRASP_CODES) <= {r.code for r in everything.requirements}


def test_usdgrip_gsp001_wins_over_simready_0_1_0_in_the_same_process():
    simready = Requirement(
        code="GSP.001",
        version="0.1.0",
        display_name="graspable-vector-line",
        message="In order for an asset to be considered graspable ...",
        path="capabilities/physics_bodies/physics_graspable/requirements/graspable-vector-line.md",
        compatibility="open-usd",
        tags=("essential",),
    )

    class SimReadyGraspable(nv.BaseRuleChecker):
        """Stands in for SimReady's GraspableVectorLineChecker (registered with override)."""

    nv.register_requirements(simready, override=True)(SimReadyGraspable)
    try:
        registry = nv.RequirementsRegistry()
        assert registry.find_requirement("GSP.001", "0.1.0").version == "0.1.0"
        newest = registry.find_requirement("GSP.001")
        assert newest.version == "1.0.0"
        assert registry.get_validator(newest) is adapter.CHECKERS["GSP.001"]
    finally:
        nv.unregister_requirements(SimReadyGraspable)
    assert nv.RequirementsRegistry().find_requirement("GSP.001").version == "1.0.0"


def test_engine_reports_the_same_grasp_findings_as_usdgrip(tmp_path):
    zoo = tmp_path / "zoo.usda"
    zoo.write_text(ZOO)
    no_line = tmp_path / "no_line.usda"
    no_line.write_text(NO_LINE)
    for path, expected_codes in (
        (zoo, {"GP.001", "GP.002", "GP.003"}),
        (no_line, {"GSP.001"}),
        (EXAMPLES / "graspable_prop.usda", {"GP.001"}),
        (EXAMPLES / "gripper.usda", set()),
    ):
        expected = _rows_usdgrip(path)
        assert {row[0] for row in expected} == expected_codes, path
        result = _engine(capability=adapter.GRASPABLE_CAPABILITY_ID).validate(str(path))
        assert _rows_nvidia(result) == expected, path
    # one requirement alone, as `nvidia_usd_validate --requirement GSP.001` runs it
    result = _engine(codes=["GSP.001"]).validate(str(no_line))
    assert _rows_nvidia(result) == _rows_usdgrip(no_line, ["GSP.001"])
    assert [i.severity for i in result.issues] == [nv.IssueSeverity.FAILURE]
