"""`usdgrip migrate` never narrows a legacy value it cannot hold exactly (issue 13, item 4)."""

from __future__ import annotations

import math

import pytest

from usdgrip import open_stage
from usdgrip.cli import main
from usdgrip.migration import compute_schema_float


def _site(value: str, extra: str = "") -> str:
    return f"""
    def Xform "site"
    {{
        custom token simready:attachment:socketType = "Gripper"
        {value}
        {extra}
    }}
    """


def _migrate(write_usda, capsys, body: str):
    path = write_usda(body)
    assert main(["migrate", str(path), "--in-place"]) == 0
    out = capsys.readouterr().out
    stage = open_stage(path)
    site = stage.GetPrimAtPath("/site")
    site.stage = stage  # keep the stage alive as long as the prim is used
    return out, site, path.read_text()


@pytest.mark.parametrize(
    ("authored", "reason"),
    [
        ("double gripper_maxOpening = 1e300", "1e+300 is beyond the schema's float (it would "),
        (
            "double gripper_maxOpening = 0.0851234567891234",
            "the schema's float would hold 0.08512346, not the authored value",
        ),
        ("int gripper_maxOpening = 16777217", "the schema's float would hold 16777216, not"),
    ],
)
def test_a_value_the_float_cannot_hold_stays_legacy(write_usda, capsys, authored, reason):
    out, site, text = _migrate(write_usda, capsys, _site(authored))
    legacy = site.GetAttribute("gripper_maxOpening")
    assert legacy.HasAuthoredValue() or legacy.GetTimeSamples()  # nothing lost
    assert not site.GetAttribute("gripper:maxOpening").HasAuthoredValue()  # no inf, no rounding
    assert "inf" not in text
    lines = [line for line in out.splitlines() if "gripper_maxOpening" in line]
    assert len(lines) == 1 and lines[0].startswith("left:    </site>: gripper_maxOpening = ")
    assert f"kept: {reason}" in lines[0], lines[0]


@pytest.mark.parametrize(
    ("authored", "written"),
    [
        ("double gripper_maxOpening = 0.085", "0.085"),  # the decimal the author typed
        ("float gripper_maxOpening = 0.085", "0.085"),
        ("int gripper_maxOpening = 16777216", "16777216"),
        ("double gripper_maxOpening = 1e30", "1e30"),
        ("double gripper_maxOpening = 2.5e-7", "2.5e-7"),
    ],
)
def test_a_value_the_float_holds_is_converted_and_reported_as_written(
    write_usda, capsys, authored, written
):
    out, site, text = _migrate(write_usda, capsys, _site(authored))
    assert not site.GetAttribute("gripper_maxOpening")
    value = site.GetAttribute("gripper:maxOpening").Get()
    assert float(written) == pytest.approx(value, rel=1e-7)
    assert f"changed: </site>: gripper_maxOpening → gripper:maxOpening = {written}\n" in out
    assert f"float gripper:maxOpening = {written}\n" in text  # the report shows the file's text


def test_a_lower_priority_legacy_value_is_not_promoted_over_a_kept_one(write_usda, capsys):
    body = _site("double gripper_maxOpening = 1e300", "custom float custom:maxOpening = 0.08")
    out, site, _ = _migrate(write_usda, capsys, body)
    assert not site.GetAttribute("gripper:maxOpening").HasAuthoredValue()
    assert site.GetAttribute("custom:maxOpening").Get() == pytest.approx(0.08)
    assert "left:    </site>: custom:maxOpening = 0.08" in out
    assert "kept: gripper_maxOpening, which the readers use first, stays legacy" in out


@pytest.mark.parametrize(
    "authored",
    ['string gripper_maxOpening = "0.085"', "double gripper_maxOpening.timeSamples = {0: 0.085}"],
)
def test_a_value_that_is_not_one_number_is_refused_untouched(write_usda, capsys, authored):
    path = write_usda(_site(authored))
    before = path.read_bytes()
    assert main(["migrate", str(path), "--in-place"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "</site>: gripper_maxOpening" in err
    assert path.read_bytes() == before


def test_schema_float_edge_values():
    assert compute_schema_float(float("inf"))[0] == math.inf  # authored inf stays inf
    assert math.isnan(compute_schema_float(float("nan"))[0])
    assert compute_schema_float(True) == (None, "is a bool; expected a number")
    assert compute_schema_float("0.085") == (None, "is a str; expected a number")
    assert compute_schema_float(None)[1].startswith("no default value")
    assert compute_schema_float(10**400)[0] is None
    assert compute_schema_float(2**53 + 1)[0] is None
    assert compute_schema_float(1e-46)[1].startswith("the schema's float would hold 0, not")
