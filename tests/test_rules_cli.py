"""``usdgrip validate`` and ``usdgrip rules``: formats, exit codes, --fix, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pxr import Sdf
from test_rules_engine import FIXABLE_SITE

from usdgrip.cli import main
from usdgrip.rules import RULES

REPO = Path(__file__).resolve().parent.parent
BROKEN = sorted((REPO / "examples" / "broken").glob("*.usda"))


WARN_ONLY = """
def Xform "tcp" (
    prepend apiSchemas = ["GripperSiteAPI"]
)
{
    float gripper:maxOpening = 0.085
    float gripper:maxPayload = 0

    def BasisCurves "gripper_forward_axis"
    {
        point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
        int[] curveVertexCounts = [2]
        uniform token type = "linear"
    }

    def BasisCurves "gripper_grip_line"
    {
        point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
        int[] curveVertexCounts = [2]
        uniform token type = "linear"
    }
}
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_examples_exit_0(capsys):
    code, out, err = run(
        capsys,
        "validate",
        *(str(REPO / "examples" / n) for n in ("gripper.usda", "tote.usda", "mug.usda")),
    )
    assert code == 0, err
    assert out.count(": ok (0 failure, 0 error, 0 warning, 0 info)") == 3
    assert "3 files, 0 failing" in out


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_examples_fail_with_their_code(path, capsys):
    """Each file reports the rule its name gives, at that rule's severity.

    A file for a warning rule (GR.012) passes validation (exit 0) with that warning and no
    failure; every other file fails (exit 1).
    """
    code, out, _ = run(capsys, "validate", str(path), "--format", "json")
    issues = json.loads(out)["files"][0]["issues"]
    expected = path.stem.split("-", 1)[0]
    severity = RULES[expected].severity
    assert path.stem == f"{expected}-{RULES[expected].name}"
    assert (expected, severity) in {(i["code"], i["severity"]) for i in issues}
    fails = {i["code"] for i in issues if i["severity"] in ("failure", "error")}
    if severity in ("failure", "error"):
        assert code == 1
    else:
        assert code == 0 and fails == set(), issues


def test_warnings_never_fail(write_usda, capsys):
    code, out, _ = run(capsys, "validate", str(write_usda(WARN_ONLY)))
    assert code == 0
    assert "GR.010 warning" in out and ": ok (0 failure, 0 error, 1 warning, 0 info)" in out


def test_json_format(write_usda, capsys):
    good, bad = write_usda(WARN_ONLY, "good.usda"), BROKEN[0]
    code, out, _ = run(capsys, "validate", str(good), str(bad), "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert [f["path"] for f in data["files"]] == [str(good), str(bad)]
    issue = data["files"][0]["issues"][0]
    assert set(issue) >= {"code", "rule", "severity", "prim", "message", "fixable"}
    assert issue["code"] == "GR.010" and issue["prim"] == "/tcp" and issue["fixable"] is False
    summary = data["summary"]
    assert summary["files"] == 2 and summary["files_failing"] == 1 and summary["ok"] is False
    assert summary["warning"] == 1 and summary["error"] == 1


def test_sarif_format(capsys, tmp_path):
    output = tmp_path / "out.sarif"
    paths = [str(p) for p in BROKEN[:3]]
    code, out, _ = run(capsys, "validate", *paths, "--format", "sarif", "--output", str(output))
    assert code == 1 and out == ""
    sarif = json.loads(output.read_text())
    assert sarif["version"] == "2.1.0" and "sarif-2.1.0" in sarif["$schema"]
    (run_,) = sarif["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert run_["tool"]["driver"]["name"] == "usdgrip"
    assert [r["id"] for r in rules] == sorted(RULES)
    for r in rules:
        assert r["helpUri"].startswith("file://") and r["helpUri"].endswith(f"{r['id']}.md")
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    uris = [Path(p).as_uri() for p in paths]  # absolute paths become file URIs
    assert [a["location"]["uri"] for a in run_["artifacts"]] == uris
    assert run_["results"]
    for result in run_["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")
        assert result["message"]["text"]
        (location,) = result["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uri"] in uris
        (logical,) = location["logicalLocations"]
        assert logical["fullyQualifiedName"].startswith("/")
    levels = {r["ruleId"]: r["level"] for r in run_["results"]}
    assert levels.get("GA.001", "error") == "error"


def test_sarif_relative_path_stays_relative(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    code, out, _ = run(
        capsys, "validate", "examples/broken/GR.004-gripper-max-opening.usda", "--format", "sarif"
    )
    assert code == 1
    (result,) = json.loads(out)["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location["uri"] == "examples/broken/GR.004-gripper-max-opening.usda"
    assert result["ruleId"] == "GR.004" and result["level"] == "error"


def test_sarif_uris_are_percent_encoded(write_usda, capsys, monkeypatch):
    path = write_usda(WARN_ONLY, name="sp ace ü#1.usda")
    monkeypatch.chdir(path.parent)
    for argument, expected in (
        (path.name, "sp%20ace%20%C3%BC%231.usda"),
        (str(path), path.as_uri()),
    ):
        code, out, _ = run(capsys, "validate", argument, "--format", "sarif")
        assert code == 0
        (artifact,) = json.loads(out)["runs"][0]["artifacts"]
        assert artifact["location"]["uri"] == expected
    assert "%23" in path.as_uri()


def test_rule_filter_and_params(write_usda, capsys):
    path = str(write_usda(WARN_ONLY))
    code, out, _ = run(capsys, "validate", path, "--rule", "GR.003,GR.004", "--rule", "GR.002")
    assert code == 0 and "GR.010" not in out
    code, out, _ = run(capsys, "validate", path, "--format", "sarif", "--rule", "GR.010")
    assert [r["id"] for r in json.loads(out)["runs"][0]["tool"]["driver"]["rules"]] == ["GR.010"]
    code, out, _ = run(capsys, "validate", path, "--param", "orthogonality_tolerance_deg=5")
    assert code == 0


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--rule", "GR.999"], "unknown rule 'GR.999'; expected one of: GA.001, GA.002, GP.001"),
        (
            ["--param", "nope=1"],
            "unknown parameter 'nope'; expected one of: articulation_opening_tolerance_m, "
            "grasp_line_max_width_m",
        ),
        (["--param", "orthogonality_tolerance_deg"], "is not NAME=VALUE; valid names: "),
        (["--param", "orthogonality_tolerance_deg=abc"], "expected a finite number"),
    ],
)
def test_bad_options_exit_2(argv, fragment, write_usda, capsys):
    code, out, err = run(capsys, "validate", str(write_usda(WARN_ONLY)), *argv)
    assert code == 2 and out == ""
    assert fragment in err and err.count("\n") == 1


def test_bad_format_is_usage_error(write_usda, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["validate", str(write_usda(WARN_ONLY)), "--format", "xml"])
    assert exc.value.code == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("missing.usda", None, "no such file"),
        ("notes.txt", "hello", "not a USD file"),
        ("corrupt.usda", '#usda 1.0\ndef Xform "a" {\n', "cannot be opened as USD"),
    ],
)
def test_unreadable_input_exit_2(name, content, fragment, tmp_path, capsys):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    good = REPO / "examples" / "gripper.usda"
    code, out, err = run(capsys, "validate", str(good), str(path))
    assert code == 2 and out == ""
    assert fragment in err and str(path) in err
    assert len(err.strip().splitlines()) == 1


def _fields(layer: Sdf.Layer) -> dict:
    fields = {}

    def visit(path):
        spec = layer.GetObjectAtPath(path)
        for key in spec.ListInfoKeys() if hasattr(spec, "ListInfoKeys") else []:
            fields[(str(path), key)] = repr(spec.GetInfo(key))

    layer.Traverse(Sdf.Path.absoluteRootPath, visit)
    return fields


def test_fix_roundtrip_changes_only_the_fixes(write_usda, capsys):
    path = write_usda(FIXABLE_SITE)
    Sdf.Layer.FindOrOpen(str(path)).Export(str(path))  # a USD-written asset
    before = _fields(Sdf.Layer.OpenAsAnonymous(str(path)))
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 0 and "GR.007" in out and "GR.011" in out and "[fixable" in out
    code, out, _ = run(capsys, "validate", str(path), "--fix", "--format", "json")
    assert code == 0
    entry = json.loads(out)["files"][0]
    assert entry["fixed"] == [
        'author type = "linear" on </Gripper/tcp/gripper_forward_axis>',
        "author curveVertexCounts = [2] on </Gripper/tcp/gripper_forward_axis>",
        "apply GripperSiteAPI to </Gripper/tcp>",
    ]
    assert entry["issues"] == []
    # The file on disk: a fresh stage is clean, and only the fixes were added.
    after = _fields(Sdf.Layer.OpenAsAnonymous(str(path)))
    removed = {k for k in before if after.get(k) != before[k]}
    assert removed <= {("/Gripper/tcp/gripper_forward_axis", "properties")}, removed
    added = {k for k in after if k not in before}
    assert {p for p, _ in added} <= {
        "/Gripper/tcp",
        "/Gripper/tcp/gripper_forward_axis.type",
        "/Gripper/tcp/gripper_forward_axis.curveVertexCounts",
    }
    assert ("/Gripper/tcp", "apiSchemas") in added
    assert not list(path.parent.glob(".*fix-*"))  # no temp file left behind
    code, out, _ = run(capsys, "validate", str(path), "--format", "json")
    assert code == 0 and json.loads(out)["files"][0]["issues"] == []


def test_fix_without_fixable_issues_leaves_file_alone(write_usda, capsys):
    path = write_usda(WARN_ONLY)
    before = path.read_bytes()
    code, out, _ = run(capsys, "validate", str(path), "--fix")
    assert code == 0 and path.read_bytes() == before and "fixed:" not in out


def test_output_is_written_atomically(write_usda, tmp_path, capsys):
    target = tmp_path / "report.json"
    target.write_text("old")
    code, out, _ = run(
        capsys, "validate", str(write_usda(WARN_ONLY)), "--format", "json", "--output", str(target)
    )
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["summary"]["warning"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["asset.usda", "report.json"]


def test_output_into_missing_directory_exit_2(write_usda, tmp_path, capsys):
    code, _, err = run(
        capsys, "validate", str(write_usda(WARN_ONLY)), "--output", str(tmp_path / "no" / "r.txt")
    )
    assert code == 2 and "usdgrip validate:" in err


def test_output_over_an_input_is_refused_and_the_input_kept(write_usda, capsys):
    first, second = write_usda(WARN_ONLY), write_usda(WARN_ONLY, name="second.usda")
    before = second.read_bytes()
    for extra in ((), ("--fix",)):
        code, out, err = run(
            capsys, "validate", str(first), str(second), "--output", str(second), *extra
        )
        assert code == 2 and out == ""
        assert f"{second}: is the input file {second}" in err
        assert second.read_bytes() == before


def test_fix_through_a_link_fixes_the_target_and_keeps_the_link(write_usda, capsys):
    target = write_usda(FIXABLE_SITE)
    link = target.with_name("link.usda")
    link.symlink_to(target)
    code, out, _ = run(capsys, "validate", str(link), "--fix", "--format", "json")
    assert code == 0 and json.loads(out)["files"][0]["fixed"]
    assert link.is_symlink()
    code, out, _ = run(capsys, "validate", str(target), "--format", "json")
    assert json.loads(out)["files"][0]["issues"] == []


def test_fix_refuses_a_usdz_package(write_usda, tmp_path, capsys):
    from pxr import UsdUtils

    package = tmp_path / "asset.usdz"
    assert UsdUtils.CreateNewUsdzPackage(str(write_usda(FIXABLE_SITE)), str(package))
    before = package.read_bytes()
    code, _, err = run(capsys, "validate", str(package), "--fix")
    assert code == 2 and "cannot write into a .usdz package" in err
    assert package.read_bytes() == before


def test_rules_list_json_and_doc(capsys):
    code, out, _ = run(capsys, "rules")
    assert code == 0
    code_width = max(len(code) for code in RULES)
    for rule in RULES.values():
        assert f"{rule.code:<{code_width}}  {rule.severity:<7}  {rule.name}" in out
    columns = {
        line.index(rule.name)
        for rule in RULES.values()
        for line in out.splitlines()
        if line.startswith(rule.code + " ")
    }
    assert len(columns) == 1, "the names line up in one column (GSP.001 is wider than GR.001)"
    code, out, _ = run(capsys, "rules", "--json")
    data = json.loads(out)
    assert [r["code"] for r in data["rules"]] == sorted(RULES)
    assert data["params"]["orthogonality_tolerance_deg"]["default"] == 10.0
    code, out, _ = run(capsys, "rules", "GR.003")
    assert code == 0 and out.startswith("# gripper-grip-line") and "```usda" in out
    code, out, err = run(capsys, "rules", "GX.1")
    assert code == 2 and "unknown rule 'GX.1'; expected one of: GA.001" in err
