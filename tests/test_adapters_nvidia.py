"""usd-validation-nvidia plugin: the real package, its engine and its CLI vs usdgrip.validate."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from nvidia_validator import UserParameter, nv
from pxr import Usd

import usdgrip
from usdgrip.rules import RULES
from usdgrip.validators import nvidia as adapter

REPO = Path(__file__).resolve().parent.parent
NVIDIA_CLI = Path(sys.executable).parent / "nvidia_usd_validate"

CURVE = """
        def BasisCurves "{name}"
        {{
            int[] curveVertexCounts = [2]
            point3f[] points = [{p0}, {p1}]
            uniform token type = "linear"
        }}"""


def _curve(name: str, p0: str, p1: str, indent: str = "") -> str:
    text = CURVE.format(name=name, p0=p0, p1=p1)
    return "\n".join(indent + line if line else line for line in text.splitlines())


FWD = _curve("gripper_forward_axis", "(0, 0, 0)", "(0, 0, 0.05)")
GRIP = _curve("gripper_grip_line", "(0, -0.011, 0)", "(0, 0.011, 0)")

# Every kind of finding, including a site under an undefined `over` whose payload is
# missing (GA.001) and sites reached only as instance proxies.
ZOO = f"""#usda 1.0
(
    defaultPrim = "World"
    metersPerUnit = 1
    upAxis = "Z"
)

def Xform "World"
{{
    def Xform "good" (
        prepend apiSchemas = ["GripperSiteAPI"]
    )
    {{
        float gripper:maxOpening = 0.085{FWD}{GRIP}
    }}

    def Xform "gripper_01"
    {{
        float gripper_maxOpening = 0.085{FWD}
    }}

    def Xform "untyped_curve" (
        prepend apiSchemas = ["GripperSiteAPI"]
    )
    {{
        float gripper:maxOpening = 0.085{FWD}
        def BasisCurves "gripper_grip_line"
        {{
            point3f[] points = [(0, -0.011, 0), (0, 0.011, 0)]
        }}
    }}

    def Xform "slanted" (
        prepend apiSchemas = ["GripperSiteAPI"]
    )
    {{
        float gripper:maxOpening = 0.085
        float gripper:maxPayload = -2{FWD}
{_curve("gripper_grip_line", "(0, 0, 0)", "(0, 0.01, 0.01)")}
    }}

    def Mesh "not_xform" (
        prepend apiSchemas = ["GripperSiteAPI"]
    )
    {{
        float gripper:maxOpening = 0.2{FWD}{GRIP}
    }}

    over "base_link" (
        prepend payload = @./missing_payload.usd@
    )
    {{
        def Xform "gripper_02" (
            prepend apiSchemas = ["GripperSiteAPI"]
        )
        {{
            float gripper:maxOpening = -1
        }}
    }}

    def Xform "robot_a" (
        instanceable = true
        references = </Prototype>
    )
    {{
    }}

    def Xform "robot_b" (
        instanceable = true
        references = </Prototype>
    )
    {{
    }}

    def Xform "Tote" (
        prepend apiSchemas = ["GripperSlotAPI:left_edge"]
    )
    {{
        point3d gripperSlot:left_edge:center = (-0.195, 0, 0.15)
        vector3d gripperSlot:left_edge:forward = (0, 0, -1)
        vector3d gripperSlot:left_edge:spanAxis = (1, 0, 0)
        double gripperSlot:left_edge:upRange = -0.2
        double gripperSlot:left_edge:slotInputAngle = 400
        uniform token gripperSlot:left_edge:lr = "left"
        string gripperSlot:left_edge:groupName = "carry"
    }}

    def Xform "Mug" (
        customData = {{
            dictionary lambdasim = {{
                string gripper_slots = '[{{"center": [0.06, 0, 0.05], "forward": [-1, 0, 0], "up_range": 0.04, "slot_input_angle": 20, "LR": 1, "GroupName": ""}}]'
            }}
        }}
    )
    {{
    }}
}}

class Xform "Prototype"
{{
    def Xform "tcp" (
        prepend apiSchemas = ["GripperSiteAPI"]
    )
    {{
        float gripper:maxOpening = 0.05{FWD}
    }}
}}
"""

SEED_VALID = f"""#usda 1.0
def Xform "gripper_01"
{{
    double3 xformOp:translate = (0, 0.15, 0)
    uniform token[] xformOpOrder = ["xformOp:translate"]
    float gripper_maxOpening = 0.085
{_curve("gripper_forward_axis", "(0, -0.15, 0)", "(0, 0.15, 0)")}
{_curve("gripper_grip_line", "(-0.2, 0, 0)", "(0.2, 0, 0)")}
}}
"""

_SEVERITY = {"FAILURE": "failure", "ERROR": "error", "WARNING": "warning", "INFO": "info"}


def _grip_findings(stage_or_path, rules=None, params=None) -> list[tuple]:
    report = usdgrip.validate(stage_or_path, rules=rules, params=params)
    return sorted(
        (i.code, i.severity, i.prim, i.message, tuple(f.description for f in i.fixes))
        for i in report.issues
    )


def _nv_findings(result) -> list[tuple]:
    rows = []
    for issue in result.issues:
        at = issue.at
        path = str(at.path) if isinstance(at, nv.PrimId) else "/"
        rows.append(
            (
                issue.code,
                issue.severity.name.lower(),
                path,
                issue.message,
                tuple(s.message for s in issue.suggestions),
            )
        )
    return sorted(rows)


def _engine(*codes: str) -> nv.ValidationEngine:
    engine = nv.ValidationEngine(init_rules=False)
    if codes:
        for code in codes:
            engine.enable_requirement(nv.RequirementsRegistry().find_requirement(code))
    else:
        engine.enable_capability(nv.CapabilityRegistry().find(adapter.CAPABILITY_ID))
    return engine


@pytest.fixture
def zoo(tmp_path: Path) -> Path:
    path = tmp_path / "zoo.usda"
    path.write_text(ZOO)
    return path


# --- registration ---------------------------------------------------------------


def test_plugin_is_loaded_through_the_entry_point():
    plugins = {p.entrypoint.value: p for p in nv.PluginManager().loaded_plugins}
    loaded = plugins["usdgrip.validators.nvidia:plugin"]
    assert loaded.entrypoint.group == "usd_validation_nvidia"
    assert loaded.instance is adapter.plugin
    assert loaded.distribution_name == "usdgrip"


#: Run in a fresh interpreter after the import under test: what usd_validation_nvidia loaded
#: and whether its engine runs usdgrip's GR.003 through the capability.
_FRESH_CHECK = """
import json, sys
import usd_validation_nvidia as nv
from pxr import Usd
stage = Usd.Stage.CreateInMemory()
site = stage.DefinePrim("/Robot/tcp", "Xform")
site.AddAppliedSchema("GripperSiteAPI")
engine = nv.ValidationEngine(init_rules=False)
capability = nv.CapabilityRegistry().find("usdgrip.grippers")
if capability is not None:
    engine.enable_capability(capability)
codes = sorted({i.requirement.code for i in engine.validate(stage).issues() if i.requirement})
print(json.dumps({
    "plugins": [p.entrypoint.value for p in nv.PluginManager().loaded_plugins],
    "capabilities": [c is not None for c in (
        capability, nv.CapabilityRegistry().find("usdgrip.graspable"))],
    "requirements": sum(nv.RequirementsRegistry().find_requirement(c) is not None for c in %r),
    "codes": codes,
}))
"""


@pytest.mark.parametrize(
    "first_import",
    ["usdgrip.validators.nvidia", "usdgrip.adapters.nvidia", "usd_validation_nvidia", "usdgrip"],
)
def test_importing_the_adapter_alone_loads_the_plugin_cleanly(first_import, tmp_path):
    # issue #20: `import usdgrip.adapters.nvidia` used to log "Failed to load plugin 'usdgrip'
    # ... circular import" (the module was half-built when usd_validation_nvidia loaded it)
    code = f"import {first_import}\n" + _FRESH_CHECK % (sorted(RULES),)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "Failed to" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "usdgrip.validators.nvidia:plugin" in out["plugins"]
    assert out["capabilities"] == [True, True]
    assert out["requirements"] == len(RULES)
    assert "GR.003" in out["codes"], out  # the site has no gripper_forward_axis curve


@pytest.mark.parametrize("name", ["nvidia", "usdvalidation", "omni_asset_validator"])
def test_the_old_adapter_names_are_the_same_modules_with_a_deprecation_warning(name):
    import importlib

    moved = importlib.import_module(f"usdgrip.validators.{name}")
    sys.modules.pop(f"usdgrip.adapters.{name}", None)
    with pytest.warns(DeprecationWarning, match=rf"usdgrip\.validators\.{name}\b"):
        old = importlib.import_module(f"usdgrip.adapters.{name}")
    assert old is moved
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("usdgrip.adapters.not_a_validator")


def test_reloading_the_old_package_keeps_one_finder():
    import importlib

    import usdgrip.adapters

    for _ in range(2):
        importlib.reload(usdgrip.adapters)
    finders = [f for f in sys.meta_path if type(f).__qualname__ == "MovedModuleFinder"]
    assert len(finders) == 1


def test_every_rule_is_a_requirement_with_its_exact_code_and_metadata():
    registry = nv.RequirementsRegistry()
    assert set(adapter.REQUIREMENTS) == set(RULES)
    for code, rule in RULES.items():
        requirement = registry.find_requirement(code)
        assert requirement is not None, code
        assert requirement.code == code
        assert requirement.version == rule.version == "1.0.0"
        assert requirement.display_name == rule.name
        assert requirement.message == rule.summary
        assert requirement.compatibility == rule.compatibility
        assert requirement.validator == rule.validator
        assert requirement.tags == rule.tags
        assert registry.get_validator(requirement) is adapter.CHECKERS[code]
    # tolerances are NVIDIA parameters of the rule they tune
    gr006 = registry.find_requirement("GR.006")
    assert [p.display_name for p in gr006.parameters] == ["orthogonality_tolerance_deg"]
    assert registry.find_requirement("GR.003").parameters == ()


def test_capability_holds_every_requirement_and_rules_are_opt_in():
    capability = nv.CapabilityRegistry().find(adapter.CAPABILITY_ID)
    assert capability.version == adapter.CAPABILITY_VERSION
    assert [r.code for r in capability.requirements] == sorted(RULES)
    # not part of any default category: a default engine never runs them
    default_rules = set(nv.CategoryRuleRegistry().rules)
    assert default_rules.isdisjoint(adapter.CHECKERS.values())
    assert set(nv.ValidationEngine().rules).isdisjoint(adapter.CHECKERS.values())


def test_shutdown_unregisters_and_startup_restores():
    registry = nv.RequirementsRegistry()
    adapter.plugin.on_shutdown()
    try:
        assert registry.find_requirement("GR.003") is None
        assert nv.CapabilityRegistry().find(adapter.CAPABILITY_ID) is None
    finally:
        adapter.plugin.on_startup()
    assert registry.get_validator(registry.find_requirement("GR.003")) is adapter.CHECKERS["GR.003"]
    assert nv.CapabilityRegistry().find(adapter.CAPABILITY_ID) is not None


# --- same findings -----------------------------------------------------------------


def test_engine_capability_reports_the_same_findings_as_usdgrip(zoo):
    expected = _grip_findings(zoo)
    codes = {row[0] for row in expected}
    # the zoo exercises site, slot and stage rules, an undefined over and instance proxies
    assert {"GA.001", "GR.001", "GR.003", "GR.004", "GR.006", "GR.007", "GR.010", "GR.011"} <= codes
    assert {"GS.002", "GS.003", "GS.006", "GS.008"} <= codes
    assert any(r[2] == "/World/base_link/gripper_02" for r in expected)
    assert any(r[2] == "/World/robot_a/tcp" for r in expected)
    assert any(r[2] == "/World/robot_b/tcp" for r in expected)
    assert _nv_findings(_engine().validate(str(zoo))) == expected


def test_engine_on_a_live_stage_and_per_requirement(zoo):
    stage = Usd.Stage.Open(str(zoo))
    for codes in (("GR.003",), ("GR.004", "GS.002"), ("GA.001",)):
        expected = _grip_findings(stage, rules=list(codes))
        assert expected, codes
        assert _nv_findings(_engine(*codes).validate(stage)) == expected


def test_the_seed_valid_example_has_no_failure_in_either(tmp_path):
    path = tmp_path / "seed_valid.usda"
    path.write_text(SEED_VALID)
    expected = _grip_findings(path)
    assert all(row[1] in ("info", "warning") for row in expected)
    assert "GR.011" in {row[0] for row in expected}
    result = _engine().validate(str(path))
    assert _nv_findings(result) == expected
    assert not [i for i in result.issues if i.severity in (nv.IssueSeverity.FAILURE,)]


def test_examples_agree(tmp_path):
    for name in ("gripper.usda", "tote.usda", "mug.usda"):
        path = REPO / "examples" / name
        assert _nv_findings(_engine().validate(str(path))) == _grip_findings(path), name


def _doc_examples() -> list[tuple[str, int, str]]:
    examples = []
    for doc in sorted((REPO / "docs" / "rules").glob("G*.md")):
        for index, block in enumerate(re.findall(r"```usda\n(.*?)```", doc.read_text(), re.S)):
            examples.append((doc.stem, index, block))
    return examples


def test_every_rule_doc_example_agrees(tmp_path):
    examples = _doc_examples()
    assert len(examples) >= 2 * len(RULES) - 2
    for code, index, block in examples:
        text = block if block.lstrip().startswith("#usda") else "#usda 1.0\n" + block
        path = tmp_path / f"{code}_{index}.usda"
        path.write_text(text)
        expected = _grip_findings(path)
        assert _nv_findings(_engine().validate(str(path))) == expected, (code, index)


def test_parameters_reach_the_rule(tmp_path, zoo):
    # GR.006: the slanted site's grip line is 45 degrees off perpendicular
    engine = _engine("GR.006")
    assert {r[2] for r in _nv_findings(engine.validate(str(zoo)))} == {"/World/slanted"}
    parameter = engine.parameters["orthogonality_tolerance_deg"]
    engine.add_parameter(UserParameter(parameter=parameter, assigned_value=50.0))
    assert _nv_findings(engine.validate(str(zoo))) == []
    assert _grip_findings(zoo, ["GR.006"], {"orthogonality_tolerance_deg": 50}) == []


# --- fixes as suggestions -------------------------------------------------------------


def test_suggestions_apply_usdgrip_fixes_through_the_issue_fixer(zoo, tmp_path):
    before = _grip_findings(zoo)
    fixable = [row for row in before if row[4]]
    assert {row[0] for row in fixable} >= {"GR.007", "GR.011"}
    result = _engine().validate(str(zoo))
    issues = [i for i in result.issues if i.suggestions]
    assert sorted(s.message for i in issues for s in i.suggestions) == sorted(
        d for row in fixable for d in row[4]
    )
    # usdgrip's own fix path on a copy, for comparison
    copy = tmp_path / "copy.usda"
    copy.write_text(zoo.read_text())
    report = usdgrip.validate(copy)
    report.apply_fixes()
    report.stage.GetRootLayer().Save()

    fixer = nv.IssueFixer(str(zoo))
    statuses = fixer.fix(issues)
    assert [r.status for r in statuses] == [nv.FixStatus.SUCCESS] * len(issues)
    fixer.save()
    after = _grip_findings(zoo)
    assert not [row for row in after if row[4]]
    assert "GR.007" not in {row[0] for row in after}
    assert after == _grip_findings(copy)
    assert zoo.read_text() == copy.read_text()
    text = zoo.read_text()
    assert 'prepend apiSchemas = ["GripperSiteAPI"]' in text.split('"gripper_01"')[1][:80]


# --- the real command line ------------------------------------------------------------


def _run_cli(*args: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = Path(args[-1]).with_suffix(".nvidia.json")
    proc = subprocess.run(
        [str(NVIDIA_CLI), *args[:-1], "--json-output", str(out), args[-1]],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc, json.loads(out.read_text())


def _cli_findings(report: dict) -> list[tuple]:
    rows = []
    for entry in report["rules"]:
        for issue in entry["issues"]:
            at = issue.get("at") or {}
            rows.append(
                (
                    issue["requirement"]["code"],
                    _SEVERITY[issue["severity"]],
                    at.get("path", "/") if at.get("type") == "PRIM" else "/",
                    issue["message"],
                    tuple(s["message"] for s in issue["suggestions"]),
                )
            )
    return sorted(rows)


def test_cli_requirement_and_capability_match_usdgrip_validate(zoo):
    proc, report = _run_cli("--requirement", "GR.003", str(zoo))
    assert proc.returncode == 1
    expected = _grip_findings(zoo, ["GR.003"])
    assert {row[2] for row in expected} == {
        "/World/gripper_01",
        "/World/base_link/gripper_02",
        "/World/robot_a/tcp",
        "/World/robot_b/tcp",
    }
    assert _cli_findings(report) == expected
    log = proc.stdout + proc.stderr
    assert "[GR.003]" in log and "At Prim </World/base_link/gripper_02>" in log

    proc, report = _run_cli("--capability", adapter.CAPABILITY_ID, str(zoo))
    assert proc.returncode == 1
    assert _cli_findings(report) == _grip_findings(zoo)
    log = proc.stdout + proc.stderr
    assert "Failed requirements" in log and "preclude feature usdgrip.grippers" in log


def test_cli_fix_applies_suggestions_then_revalidates_clean(tmp_path):
    path = tmp_path / "seed_valid.usda"
    path.write_text(SEED_VALID)
    proc = subprocess.run(
        [str(NVIDIA_CLI), "--requirement", "GR.011", "--fix", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "FixStatus.SUCCESS" in proc.stdout + proc.stderr
    assert _grip_findings(path, ["GR.011"]) == []
    proc, report = _run_cli("--requirement", "GR.011", str(path))
    assert proc.returncode == 0 and _cli_findings(report) == []
    assert "No issues found." in proc.stdout


# --- bad input and crashing rules --------------------------------------------------------


def test_a_parameter_that_is_not_a_number_is_one_clear_error(zoo):
    engine = _engine("GR.006")
    parameter = engine.parameters["orthogonality_tolerance_deg"]
    engine.add_parameter(UserParameter(parameter=parameter, assigned_value=float("nan")))
    result = engine.validate(str(zoo))
    messages = [i.message for i in result.issues]
    assert [i.severity for i in result.issues] == [nv.IssueSeverity.ERROR] * 2
    assert (
        "Failed to initialize rule UsdGripGR006Checker: GR.006 (gripper-axes-orthogonal): "
        "parameter orthogonality_tolerance_deg is nan; expected a finite number"
    ) in messages


def test_a_crashing_rule_is_an_error_with_its_code_and_the_run_continues(zoo, monkeypatch):
    checker = adapter.CHECKERS["GR.004"]
    original = checker.RULE.check

    def boom(context):
        if context.path == "/World/good":
            raise RuntimeError("simulated defect")
        yield from original(context)

    monkeypatch.setattr(checker, "RULE", dataclasses.replace(checker.RULE, check=boom))
    result = _engine("GR.004").validate(str(zoo))
    rows = _nv_findings(result)
    errors = [r for r in rows if r[1] == "error"]
    assert [(r[0], r[2]) for r in errors] == [("GR.004", "/World/good")]
    assert "RuntimeError: simulated defect" in errors[0][3]
    assert ("GR.004", "failure", "/World/base_link/gripper_02") in {r[:3] for r in rows}
