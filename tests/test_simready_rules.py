"""Issue 23 item 9: GR.013 / GR.014 / GP.004 check SimReady's GR.ISA.001, MUJOCO.GR.001 and
PMT.001, only where the asset declares that runtime or is a graspable prop, and the NVIDIA
plugin binds those SimReady codes to them (as GR.001-GR.004 and GSP.001)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nvidia_validator import nv

import usdgrip
from usdgrip.rules import RULES
from usdgrip.validators import nvidia as adapter

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"
BOUND = {"GR.ISA.001": "GR.013", "MUJOCO.GR.001": "GR.014", "PMT.001": "GP.004"}


def _doc_example(code: str, verdict: str) -> str:
    blocks = re.findall(r"```usda\n(.*?)```", (DOCS / f"{code}.md").read_text(), re.S)
    return next(b for b in blocks if re.search(rf"^# {verdict}\b", b, re.M))


def test_each_rule_names_the_simready_requirement_it_checks():
    simready = {code: r.simready for code, r in RULES.items() if r.simready}
    assert simready == {
        "GR.001": "GR.001",
        "GR.002": "GR.002",
        "GR.003": "GR.003",
        "GR.004": "GR.004",
        "GSP.001": "GSP.001",
        **{code: sr for sr, code in BOUND.items()},
    }
    assert adapter.SIMREADY_CODES == BOUND


@pytest.mark.parametrize(("simready", "code"), sorted(BOUND.items()))
def test_the_simready_code_is_a_requirement_bound_to_the_usdgrip_rule(simready, code):
    registry = nv.RequirementsRegistry()
    found = registry.find_requirement(simready)
    assert (found.code, found.version, found.display_name) == (simready, "1.0.0", RULES[code].name)
    checker = registry.get_validator(found)
    assert checker is adapter.SIMREADY_CHECKERS[simready]
    assert checker.RULE is RULES[code] and checker is not adapter.CHECKERS[code]
    # Not in the capabilities (usdgrip.grippers holds the rule under its own code).
    grippers = nv.CapabilityRegistry().find(adapter.CAPABILITY_ID)
    assert simready not in {r.code for r in grippers.requirements}


@pytest.mark.parametrize(("simready", "code"), sorted(BOUND.items()))
def test_running_the_simready_code_reports_what_usdgrip_reports(tmp_path, simready, code):
    path = tmp_path / "asset.usda"
    text = _doc_example(code, "Invalid")
    if not text.startswith("#usda"):
        text = '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\n' + text
    path.write_text(text)
    expected = sorted(
        (i.prim, i.message) for i in usdgrip.validate(path, rules=[code]).issues if i.code == code
    )
    assert expected
    engine = nv.ValidationEngine(init_rules=False)
    engine.enable_requirement(nv.RequirementsRegistry().find_requirement(simready))
    issues = engine.validate(str(path)).issues
    got = sorted(
        (str(i.at.path) if isinstance(i.at, nv.PrimId) else "/", i.message) for i in issues
    )
    assert got == expected
    assert {i.requirement.code for i in issues} == {simready}
    assert {i.severity for i in issues} == {nv.IssueSeverity.FAILURE}


@pytest.mark.parametrize("code", sorted(BOUND.values()))
def test_the_rules_never_apply_to_plain_usdgrip_assets(code, write_usda):
    """The examples carry no runtime schema but IsaacSiteAPI with a description (simready_2f85)
    and physics materials on the graspable prop: nothing fires."""
    examples = Path(__file__).resolve().parent.parent / "examples"
    for path in sorted(examples.glob("*.usda")):
        found = [i for i in usdgrip.validate(path, rules=[code]).issues if i.code == code]
        assert found == [], (path.name, found)
    # A plain site with runtime attributes but no runtime schema is not checked either.
    plain = _doc_example(code, "Valid")
    assert not [i for i in usdgrip.validate(write_usda(plain), rules=[code]).issues]
