"""Issue 23 item 4: reports CI tools accept (SARIF 2.1.0, JUnit XML, GitHub annotations),
--strict, --param and the report formats of `batch validate`, `validate DIR` pointing to it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest
from pxr import Sdf

from usdgrip.cli import main

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())

SITE = """#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
    subLayers = [@./extra.usda@]
)

def Xform "World"
{
    def Xform "tcp" (
        prepend apiSchemas = ["GripperSiteAPI"]
    )
    {
        float gripper:maxOpening = 0.085
        float gripper:maxPayload = -1

        def BasisCurves "gripper_forward_axis"
        {
            point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
            int[] curveVertexCounts = [2]
            uniform token type = "linear"
        }
    }
}
"""
# A second site, authored only in the sublayer: its issues point into extra.usda.
EXTRA = """#usda 1.0

over "World"
{
    def Xform "other" (
        prepend apiSchemas = ["GripperSiteAPI"]
    )
    {
        float gripper:maxOpening = -2
    }
}
"""


@pytest.fixture
def assets(tmp_path, monkeypatch):
    """site.usda (+ extra.usda sublayer) and a crate copy, named relative to the cwd."""
    (tmp_path / "site.usda").write_text(SITE)
    (tmp_path / "extra.usda").write_text(EXTRA)
    layer = Sdf.Layer.FindOrOpen(str(tmp_path / "site.usda"))
    layer.Export(str(tmp_path / "site.usdc"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _line_of(path: Path, prim_statement: str) -> int:
    lines = path.read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if prim_statement in text)


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _results(sarif: dict) -> list[dict]:
    return sarif["runs"][0]["results"]


def test_sarif_is_valid_2_1_0_and_located(assets, capsys):
    code, out, err = _run(capsys, "validate", "site.usda", "site.usdc", "--format", "sarif")
    assert code == 1, err
    sarif = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
    run = sarif["runs"][0]
    (invocation,) = run["invocations"]
    assert invocation["exitCode"] == 1 and invocation["executionSuccessful"] is True
    assert invocation["commandLine"] == "usdgrip validate site.usda site.usdc --format sarif"
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["helpUri"] == f"docs/rules/{rule['id']}.md"  # never file://
    located = {}
    for result in _results(sarif):
        physical = result["locations"][0]["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert run["artifacts"][physical["artifactLocation"]["index"]]["location"]["uri"] == uri
        key = (
            result["ruleId"],
            result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
        )
        located.setdefault(uri, {})[key] = physical.get("region", {}).get("startLine")
    # usda: the line of the prim's spec, in the layer that authors it.
    assert located["site.usda"][("GR.003", "/World/tcp")] == _line_of(
        assets / "site.usda", 'def Xform "tcp"'
    )
    assert located["site.usda"][("GR.010", "/World/tcp")] == _line_of(
        assets / "site.usda", 'def Xform "tcp"'
    )
    assert located["extra.usda"][("GR.004", "/World/other")] == _line_of(
        assets / "extra.usda", 'def Xform "other"'
    )
    # usdc: the file only (and its sublayer's lines, a usda, still).
    assert located["site.usdc"][("GR.003", "/World/tcp")] is None


def test_fingerprints_are_stable_over_reruns_and_tell_findings_apart(assets, capsys):
    first = json.loads(_run(capsys, "validate", "site.usda", "--format", "sarif")[1])
    second = json.loads(_run(capsys, "validate", str(Path("site.usda")), "--format", "sarif")[1])
    prints = [r["partialFingerprints"] for r in _results(first)]
    assert prints == [r["partialFingerprints"] for r in _results(second)]
    values = [p["usdgripIssue/v1"] for p in prints]
    assert len(set(values)) == len(values) >= 3
    # A changed value keeps the finding's identity; another prim does not.
    (assets / "site.usda").write_text(SITE.replace("maxPayload = -1", "maxPayload = -7"))
    third = json.loads(_run(capsys, "validate", "site.usda", "--format", "sarif")[1])
    assert [r["partialFingerprints"] for r in _results(third)] == prints


def test_output_file_gets_a_summary_line_and_the_report(assets, capsys):
    code, out, _ = _run(capsys, "validate", "site.usda", "--format", "sarif", "--output", "r.sarif")
    assert code == 1
    assert (
        out
        == "wrote r.sarif (sarif): 1 file(s), 1 failing: 4 failure, 0 error, 1 warning, 0 info\n"
    )
    jsonschema.Draft4Validator(SCHEMA).validate(json.loads((assets / "r.sarif").read_text()))


def test_junit_parses_and_counts_failures(assets, capsys):
    clean = assets / "clean.usda"
    clean.write_text(
        '#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\ndef Xform "A"\n{\n}\n'
    )
    for strict, failures in ((False, 4), (True, 5)):
        argv = ["validate", "site.usda", "clean.usda", "--format", "junit"]
        code, out, _ = _run(capsys, *argv, *(["--strict"] if strict else []))
        assert code == 1
        suites = ElementTree.fromstring(out)
        assert suites.tag == "testsuites" and suites.get("failures") == str(failures)
        site_suite, clean_suite = suites.findall("testsuite")
        assert site_suite.get("name") == "site.usda" and clean_suite.get("name") == "clean.usda"
        cases = site_suite.findall("testcase")
        assert int(site_suite.get("tests")) == len(cases) == 5
        failed = [c for c in cases if c.find("failure") is not None]
        assert len(failed) == failures and int(site_suite.get("failures")) == failures
        assert {c.get("name").split()[0] for c in failed} >= {"GR.003", "GR.004"}
        gr003 = next(c for c in cases if c.get("name") == "GR.003 </World/tcp>")
        assert gr003.get("file") == "site.usda"
        assert gr003.get("line") == str(_line_of(assets / "site.usda", 'def Xform "tcp"'))
        (passing,) = clean_suite.findall("testcase")
        assert passing.find("failure") is None and clean_suite.get("failures") == "0"


def test_strict_fails_on_warnings_only(assets, capsys):
    warn = assets / "warn.usda"
    warn.write_text(
        SITE.replace("    subLayers = [@./extra.usda@]\n", "")
        .replace("float gripper:maxOpening = 0.085", "float gripper:maxOpening = 0.085")
        .replace("        }\n    }\n}\n", "        }\n" + GRIP + "    }\n}\n")
    )
    code, out, _ = _run(capsys, "validate", "warn.usda")
    assert code == 0 and "GR.010 warning" in out, out
    code, out, _ = _run(capsys, "validate", "warn.usda", "--strict")
    assert code == 1 and "warn.usda: FAILED" in out


GRIP = """
        def BasisCurves "gripper_grip_line"
        {
            point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
            int[] curveVertexCounts = [2]
            uniform token type = "linear"
        }
"""


def test_github_annotations(assets, capsys):
    code, out, _ = _run(capsys, "validate", "site.usda", "--annotations", "github")
    assert code == 1
    annotations = [line for line in out.splitlines() if line.startswith("::")]
    line = _line_of(assets / "site.usda", 'def Xform "tcp"')
    assert any(
        a.startswith(
            f"::error file=site.usda,line={line},title=GR.003 gripper-grip-line::</World/tcp>: "
        )
        for a in annotations
    ), annotations
    assert any(a.startswith("::warning file=site.usda,") for a in annotations)
    assert any(a.startswith("::error file=extra.usda,line=") for a in annotations)
    for annotation in annotations:  # one line each; data escaped as GitHub expects
        assert re.fullmatch(r"::(error|warning|notice) [^:]*::[^\n]*", annotation), annotation


def test_annotation_escaping():
    from usdgrip.rules.report_formats import format_annotations

    entry = {
        "path": "a,b:c.usda",
        "ok": False,
        "summary": {"failure": 1, "error": 0, "warning": 0, "info": 0},
        "issues": [
            {
                "code": "GR.003",
                "rule": "gripper-grip-line",
                "severity": "failure",
                "prim": "/x",
                "message": "50% off\nnext line",
                "fixable": False,
            }
        ],
    }
    assert format_annotations([entry]) == (
        "::error file=a%2Cb%3Ac.usda,title=GR.003 gripper-grip-line::</x>: 50%25 off%0Anext line\n"
    )


def test_validate_a_folder_points_to_batch_validate(assets, capsys):
    code, out, err = _run(capsys, "validate", str(assets))
    assert code == 2 and out == ""
    assert err == (
        f"usdgrip validate: {assets}: is a folder; usdgrip validate takes USD files: run "
        f"`usdgrip batch validate {assets}` for every USD file under it, or name the files\n"
    )


# --- batch validate -----------------------------------------------------------------


def test_batch_sarif_junit_jsonl(assets, capsys):
    (assets / "lib").mkdir()
    for name in ("site.usda", "extra.usda"):
        (assets / "lib" / name).write_text((assets / name).read_text())
    base = ["batch", "validate", "lib", "--glob", "site.usda", "-q", "--jobs", "1"]
    code, out, err = _run(capsys, *base, "--format", "sarif", "--output", "lib.sarif")
    assert code == 1, err
    assert out.startswith("wrote lib.sarif (sarif): 1 file(s), 1 failing")
    assert "files " in err  # the summary table still on stderr
    sarif = json.loads((assets / "lib.sarif").read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
    results = _results(sarif)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {"lib/site.usda", "lib/extra.usda"}
    line = _line_of(assets / "lib" / "site.usda", 'def Xform "tcp"')
    assert any(
        r["ruleId"] == "GR.003"
        and r["locations"][0]["physicalLocation"]["region"]["startLine"] == line
        for r in results
    )
    assert sarif["runs"][0]["invocations"][0]["exitCode"] == 1
    code, out, _ = _run(capsys, *base, "--format", "junit")
    suites = ElementTree.fromstring(out)
    assert [s.get("name") for s in suites.findall("testsuite")] == ["lib/site.usda"]
    code, out, _ = _run(capsys, *base, "--format", "jsonl")
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert row["path"] == "site.usda" and row["status"] == "findings"


def test_batch_param_and_strict(assets, capsys):
    (assets / "lib").mkdir()
    slanted = (
        SITE.replace("    subLayers = [@./extra.usda@]\n", "")
        .replace(
            "        }\n    }\n}\n",
            "        }\n"
            + GRIP.replace("(0, -0.01, 0), (0, 0.01, 0)", "(0, -0.01, 0.004), (0, 0.01, 0)")
            + "    }\n}\n",
        )
        .replace("        float gripper:maxPayload = -1\n", "")
    )
    (assets / "lib" / "slanted.usda").write_text(slanted)
    base = ["batch", "validate", "lib", "-q", "--jobs", "1", "--format", "jsonl"]
    code, out, _ = _run(capsys, *base)
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [i["code"] for i in row["issues"]] == ["GR.006"]  # a warning
    code, _, _ = _run(capsys, *base, "--strict")
    assert code == 1
    code, out, _ = _run(capsys, *base, "--param", "orthogonality_tolerance_deg=45")
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and row["issues"] == []
    code, _, err = _run(capsys, *base, "--param", "nope=1")
    assert code == 2 and "unknown parameter 'nope'" in err


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--output", "x.txt"], "--output x.txt: is for a report (--format jsonl, sarif or junit)"),
        (
            ["--format", "sarif", "--out", "-"],
            "--out - and the sarif report both go to standard output",
        ),
        (
            ["--format", "sarif", "--annotations", "github"],
            "prints on stdout, where the sarif report goes",
        ),
        (["--format", "json", "--annotations", "github"], "where the JSON summary goes"),
    ],
)
def test_batch_report_options_that_collide_are_refused(assets, capsys, extra, fragment):
    code, out, err = _run(capsys, "batch", "validate", str(assets), "-q", *extra)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and fragment in err, err
