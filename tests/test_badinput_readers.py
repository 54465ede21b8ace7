"""Bad input to the USD readers and the validation rules: one clear message, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from usdgrip.cli import main
from usdgrip.errors import GripperError
from usdgrip.rules import resolve_params, validate
from usdgrip.usd.sites import find_gripper_sites
from usdgrip.usd.slots import read_gripper_slots

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def examples_mug() -> Path:
    return REPO / "examples" / "mug.usda"


LEGACY_SITE_SOURCE = """
#usda 1.0
(
    defaultPrim = "G"
    metersPerUnit = 1
)
def Xform "G"
{
    float gripper_maxOpening = 0.085
    def BasisCurves "gripper_forward_axis"
    {
        point3f[] points = [(0, 0, 0), (0, 0, 1)]
        int[] curveVertexCounts = [2]
    }
    def BasisCurves "gripper_grip_line"
    {
        point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
    }
}
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_fix_is_not_offered_on_curves_that_are_instance_proxies(write_usda, capsys):
    write_usda(LEGACY_SITE_SOURCE, "refsrc.usda")
    path = write_usda(
        """
        def Xform "B" (
            instanceable = true
            references = @refsrc.usda@
        )
        {
        }
        """
    )
    code, out, _ = run(capsys, "validate", str(path), "--format", "json")
    assert code == 0, out
    gr007 = [i for i in _issues(json.loads(out)) if i["code"] == "GR.007"]
    # The curves under the instance are instance proxies: nothing can be authored there.
    assert len(gr007) == 3 and not any(i["fixable"] for i in gr007), gr007
    code, out, err = run(capsys, "validate", str(path), "--fix")
    assert code == 0 and "Traceback" not in err, err
    assert "apply GripperSiteAPI to </B>" in out  # the instance itself is editable
    assert "</B/gripper_" not in out


def _issues(report: dict) -> list[dict]:
    return [issue for entry in report["files"] for issue in entry["issues"]]


def _site(max_opening: str, forward_extra: str = "", grip_points: str = "") -> str:
    grip_points = grip_points or "point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]"
    return f"""
    def Xform "tcp" (
        prepend apiSchemas = ["GripperSiteAPI"]
    )
    {{
        {max_opening}
        def BasisCurves "gripper_forward_axis"
        {{
            uniform token type = "linear"
            {forward_extra or "point3f[] points = [(0, 0, 0), (0, 0, 0.05)]"}
            {"" if "curveVertexCounts" in forward_extra else "int[] curveVertexCounts = [2]"}
        }}
        def BasisCurves "gripper_grip_line"
        {{
            uniform token type = "linear"
            int[] curveVertexCounts = [2]
            {grip_points}
        }}
    }}
    """


def _messages(capsys, path, code: str) -> list[str]:
    _, out, _ = run(capsys, "validate", str(path), "--format", "json")
    issues = _issues(json.loads(out))
    assert not [i for i in issues if "crashed" in i["message"]], issues
    return [i["message"] for i in issues if i["code"] == code]


@pytest.mark.parametrize(
    ("site", "code", "expected"),
    [
        (
            _site('string gripper:maxOpening = "0.085"'),
            "GR.004",
            "gripper:maxOpening is string, expected float or double",
        ),
        (
            _site("float[] gripper:maxOpening = [0.085]"),
            "GR.004",
            "gripper:maxOpening is float[], expected float or double",
        ),
        (
            _site("float gripper:maxOpening = 0.085", 'string points = "x"'),
            "GR.002",
            "gripper_forward_axis: points is string, expected point3f[]",
        ),
        (
            _site("float gripper:maxOpening.timeSamples = {0: 0.05, 10: 0.085}"),
            "GR.004",
            "gripper:maxOpening is time-sampled with no default value",
        ),
        (
            _site(
                "float gripper:maxOpening = 0.085",
                grip_points="point3f[] points.timeSamples = {0: [(0, -0.01, 0), (0, 0.01, 0)]}",
            ),
            "GR.003",
            "gripper_grip_line: points is time-sampled with no default value",
        ),
    ],
)
def test_unusable_site_values_are_reported_and_refused(
    write_usda, capsys, examples_mug, site, code, expected
):
    # Values only a warning rule reports (curveVertexCounts, max payload) are read as not
    # authored instead: test_badinput_semantics.py.
    path = write_usda(site)
    messages = _messages(capsys, path, code)
    assert len(messages) == 1 and expected in messages[0], messages
    assert "nan" not in messages[0]
    commands = [
        ["info", str(path)],
        ["render", str(path), "-o", str(path.with_suffix(".png"))],
        ["migrate", str(path), "-o", str(path.with_name("out.usda"))],
        [
            "plan",
            str(examples_mug),
            "--object",
            "/Mug",
            "--gripper",
            f"{path}:/tcp",
            "-o",
            str(path.with_suffix(".yaml")),
        ],
    ]
    for argv in commands:
        exit_code, _, err = run(capsys, *argv)
        assert exit_code == 2, (argv, err)
        assert str(path) in err and "</tcp>" in err and expected in err, (argv, err)


SLOTS = """
def Xform "Tote" (
    prepend apiSchemas = ["GripperSlotAPI:s"]
)
{{
    {value}
}}
"""


@pytest.mark.parametrize(
    ("value", "code", "expected"),
    [
        ('string gripperSlot:s:center = "x"', "GS.001", "gripperSlot:s:center is string"),
        ("float gripperSlot:s:forward = 1", "GS.001", "gripperSlot:s:forward is float"),
        ('string gripperSlot:s:upRange = "0.2"', "GS.002", "gripperSlot:s:upRange is string"),
        (
            "double gripperSlot:s:upRange.timeSamples = {0: 0.1, 10: 0.2}",
            "GS.002",
            "gripperSlot:s:upRange is time-sampled with no default value",
        ),
        (
            "double gripperSlot:s:slotInputAngle.timeSamples = {0: 10}",
            "GS.003",
            "gripperSlot:s:slotInputAngle is time-sampled with no default value",
        ),
    ],
)
def test_unusable_slot_values_are_reported_once_and_refused(
    write_usda, capsys, value, code, expected
):
    path = write_usda(SLOTS.format(value=value))
    exit_code, out, _ = run(capsys, "validate", str(path), "--format", "json")
    issues = _issues(json.loads(out))
    assert exit_code == 1
    assert [i["code"] for i in issues if i["severity"] in ("failure", "error")] == [code], issues
    assert expected in issues[0]["message"] and "crashed" not in out
    for argv in (["info", str(path)], ["sample", str(path), "--prim", "/Tote"]):
        exit_code, _, err = run(capsys, *argv)
        assert exit_code == 2, (argv, err)
        assert str(path) in err and "</Tote>" in err and expected in err, (argv, err)


def test_a_default_value_beside_time_samples_is_read(open_usda):
    stage = open_usda(
        SLOTS.format(
            value="double gripperSlot:s:upRange = 0.3\n"
            "double gripperSlot:s:upRange.timeSamples = {0: 0.1}"
        )
    )
    (slot,) = read_gripper_slots(stage.GetPrimAtPath("/Tote"))
    assert slot.up_range_local == pytest.approx(0.3)
    assert validate(stage).ok


def test_info_json_is_strict_json_with_null_for_non_finite_numbers(write_usda, capsys):
    path = write_usda(
        _site("float gripper:maxOpening = inf")
        + """
        def Xform "Tote" (
            prepend apiSchemas = ["GripperSlotAPI:s"]
        )
        {
            vector3d gripperSlot:s:forward = (0, 0, 1)
            vector3d gripperSlot:s:spanAxis = (0, 0, 1)
        }
        """
    )
    exit_code, out, _ = run(capsys, "info", str(path), "--json")
    assert exit_code == 0

    def reject(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    data = json.loads(out, parse_constant=reject)
    assert data["sites"][0]["max_opening"] is None
    assert data["slots"][0]["up_range"] is None and data["slots"][0]["up_axis"] == [None] * 3


INFINITE_CENTER_RECORD = (
    '{"center": [0, 0, Infinity], "forward": [-1, 0, 0], "span_axis": [0, 1, 0], '
    '"up_range": 0.04, "slot_input_angle": 20, "LR": 1, "GroupName": "", "version": 2}'
)
INFINITE_CENTER_MUG = f"""
def Xform "Mug" (
    customData = {{
        dictionary lambdasim = {{
            string gripper_slots = '[{INFINITE_CENTER_RECORD}]'
        }}
    }}
)
{{
}}
"""


def test_a_record_with_a_non_finite_center_fails_validation(write_usda, capsys):
    path = write_usda(INFINITE_CENTER_MUG)
    exit_code, out, _ = run(capsys, "validate", str(path))
    assert exit_code == 1 and "GS.001" in out and "center is [0.0, 0.0, inf]" in out, out
    # Sampling refuses it too: a slot that validates clean always samples, and this one does not.
    exit_code, _, err = run(capsys, "sample", str(path), "--prim", "/Mug")
    assert exit_code == 2 and "center" in err


@pytest.mark.parametrize("name", ["left-edge", "center", "ü"])
def test_readers_refuse_an_instance_name_that_gs005_fails(write_usda, capsys, name):
    path = write_usda(
        f"""
        def Xform "Tote" (
            prepend apiSchemas = ["GripperSlotAPI:{name}", "GripperSlotAPI:ok"]
        )
        {{
        }}
        """
    )
    exit_code, out, _ = run(capsys, "validate", str(path))
    assert exit_code == 1 and "GS.005" in out and "readers" in out and "refuse" in out
    for argv in (["info", str(path)], ["sample", str(path), "--prim", "/Tote"]):
        exit_code, _, err = run(capsys, *argv)
        assert exit_code == 2, (argv, err)
        assert f"GripperSlotAPI:{name}" in err and str(path) in err, (argv, err)


RECORD = (
    '{"center": [0, 0, 0.05], "forward": [-1, 0, 0], "span_axis": [0, 1, 0], "up_range": 0.04, '
    '"slot_input_angle": 20, "LR": 1, "GroupName": "", "version": 2, "name": "handle"}'
)


def test_duplicate_record_names_and_shadowed_records_are_reported(write_usda, capsys):
    path = write_usda(
        f"""
        def Xform "Mug" (
            customData = {{
                dictionary lambdasim = {{
                    string gripper_slots = '[{RECORD}, {RECORD}]'
                }}
            }}
        )
        {{
        }}
        def Xform "Cup" (
            prepend apiSchemas = ["GripperSlotAPI:handle"]
            customData = {{
                dictionary lambdasim = {{
                    string gripper_slots = '[{RECORD}]'
                }}
            }}
        )
        {{
            vector3d gripperSlot:handle:spanAxis = (0, 1, 0)
        }}
        """
    )
    _, out, _ = run(capsys, "validate", str(path), "--format", "json")
    issues = {(i["prim"], i["code"]): i["message"] for i in _issues(json.loads(out))}
    duplicate = issues["/Mug", "GS.006"]
    assert "gripper_slots[1]" in duplicate and "gripper_slots[0]" in duplicate
    shadowed = issues["/Cup", "GS.007"]
    assert "gripper_slots[0]" in shadowed and "GripperSlotAPI:handle" in shadowed


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            ["orthogonality_tolerance_deg=-5"],
            "orthogonality_tolerance_deg is -5; expected a value in [0, 90]",
        ),
        (
            ["slot_input_angle_min_deg=400"],
            "slot_input_angle_min_deg is 400; expected a value in [0, 360]",
        ),
        (["grip_line_meaning_ratio=0"], "grip_line_meaning_ratio is 0; expected a value > 0"),
        (
            ["slot_input_angle_min_deg=200", "slot_input_angle_max_deg=100"],
            "slot_input_angle_min_deg is 200, above slot_input_angle_max_deg 100",
        ),
    ],
)
def test_out_of_range_params_are_refused(capsys, params, expected):
    argv = ["validate", str(REPO / "examples" / "gripper.usda")]
    for param in params:
        argv += ["--param", param]
    exit_code, _, err = run(capsys, *argv)
    assert exit_code == 2 and expected in err, err
    with pytest.raises(ValueError, match="expected"):
        resolve_params(dict(p.split("=") for p in params))


@pytest.mark.parametrize("meters_per_unit", ["0", "-1"])
def test_a_non_positive_meters_per_unit_is_reported_and_refused(tmp_path, capsys, meters_per_unit):
    text = (REPO / "examples" / "gripper.usda").read_text()
    text = text.replace("metersPerUnit = 1", f"metersPerUnit = {meters_per_unit}", 1)
    text += """
def Xform "Tote" (
    prepend apiSchemas = ["GripperSlotAPI:s"]
)
{
}
"""
    path = tmp_path / "gripper.usda"
    path.write_text(text)
    expected = f"metersPerUnit is {meters_per_unit}; expected a finite value > 0"
    _, out, _ = run(capsys, "validate", str(path), "--format", "json")
    issues = _issues(json.loads(out))
    assert {i["code"] for i in issues if expected in i["message"]} == {"GR.005", "GS.001"}
    assert not [i for i in issues if "zero length" in i["message"]]
    for argv in (["info", str(path)], ["sample", str(path), "--prim", "/Tote"]):
        exit_code, _, err = run(capsys, *argv)
        assert exit_code == 2 and str(path) in err and expected in err, (argv, err)


def test_find_gripper_sites_lists_unusable_sites_when_not_strict(open_usda):
    stage = open_usda(_site('string gripper:maxOpening = "0.085"'))
    with pytest.raises(GripperError, match="gripper:maxOpening is string"):
        find_gripper_sites(stage)
    (site,) = find_gripper_sites(stage, strict=False)
    assert site.max_opening is None and "gripper:maxOpening" in site.problems
