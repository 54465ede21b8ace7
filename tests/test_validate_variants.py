"""Issue 23 item 3: every variant of every variant set is checked, one selection at a time."""

from __future__ import annotations

import json

import pytest
from pxr import Sdf, Tf, Usd

from usdgrip.cli import main
from usdgrip.rules import validate

FWD = """
                def BasisCurves "gripper_forward_axis"
                {
                    point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
                    int[] curveVertexCounts = [2]
                    uniform token type = "linear"
                }"""
GRIP = """
                def BasisCurves "gripper_grip_line"
                {
                    point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
                    int[] curveVertexCounts = [2]
                    uniform token type = "linear"
                }"""


def _site(children: str, extra: str = "") -> str:
    return f"""
            def Xform "tcp" (
                prepend apiSchemas = ["GripperSiteAPI"]
            )
            {{
                float gripper:maxOpening = 0.085
                {extra}
{children}
            }}"""


def robot(selected: str = "good", *, payload: str = "", sizes: bool = False) -> str:
    """A robot whose hand variant 'bad' lacks the grip line (GR.003); 'good' is complete."""
    size_set = (
        """
    variantSet "size" = {
        "large" {
            double3 xformOp:translate = (0, 0, 1)
            uniform token[] xformOpOrder = ["xformOp:translate"]
        }
        "small" {
            double3 xformOp:translate = (0, 0, 0.5)
            uniform token[] xformOpOrder = ["xformOp:translate"]
        }
    }"""
        if sizes
        else ""
    )
    return f"""#usda 1.0
(
    defaultPrim = "Robot"
    metersPerUnit = 1
    upAxis = "Z"
)

def Xform "Robot" (
    variants = {{
        string hand = "{selected}"
    }}
    prepend variantSets = ["hand"{', "size"' if sizes else ""}]
)
{{
    variantSet "hand" = {{
        "bad" {{{_site(FWD, payload)}
        }}
        "good" {{{_site(FWD + GRIP, payload)}
        }}
    }}{size_set}
}}
"""


@pytest.fixture
def write(tmp_path):
    def write_(text: str, name: str = "robot.usda"):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write_


def _found(report) -> list[tuple[str, str, str | None]]:
    return [(i.code, i.prim, i.variant) for i in report.issues]


def test_a_broken_site_in_an_unselected_variant_fails(write, capsys):
    path = write(robot())
    assert _found(validate(path)) == [("GR.003", "/Robot/tcp", "hand=bad")]
    assert _found(validate(path, variants="selected")) == []
    assert _found(validate(path, variants="none")) == []
    code = main(["validate", str(path)])
    out = capsys.readouterr().out
    assert code == 1 and "GR.003 failure </Robot/tcp> [hand=bad] gripper-grip-line" in out
    assert main(["validate", str(path), "--variants", "selected"]) == 0
    capsys.readouterr()
    code = main(["validate", str(path), "--format", "json"])
    (issue,) = json.loads(capsys.readouterr().out)["files"][0]["issues"]
    assert issue["variant"] == "hand=bad" and issue["code"] == "GR.003"


def test_selected_labels_issues_with_the_current_selection(write):
    report = validate(write(robot("bad")), variants="selected")
    assert _found(report) == [("GR.003", "/Robot/tcp", "hand=bad")]


def test_an_issue_in_every_selection_is_reported_once_with_its_fix(write):
    # A legacy max payload in both hands: GR.008 info everywhere, fixable.
    report = validate(write(robot(payload="float gripper_maxPayload = 2")))
    found = _found(report)
    assert ("GR.003", "/Robot/tcp", "hand=bad") in found
    legacy = [i for i in report.issues if i.code == "GR.008"]
    assert [(i.prim, i.variant) for i in legacy] == [("/Robot/tcp", None)]
    assert found.count(("GR.008", "/Robot/tcp", None)) == 1


def test_every_combination_of_several_sets(write):
    report = validate(write(robot(sizes=True)))
    assert sorted(_found(report)) == [
        ("GR.003", "/Robot/tcp", "hand=bad, size=large"),
        ("GR.003", "/Robot/tcp", "hand=bad, size=small"),
    ]


NESTED = """#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)

def Xform "Robot" (
    prepend variantSets = "hand"
    variants = { string hand = "two" }
)
{
    variantSet "hand" = {
        "none" {
        }
        "two" {
            def Xform "Hand" (
                prepend variantSets = "pads"
                variants = { string pads = "soft" }
            )
            {
                variantSet "pads" = {
                    "hard" {
                        def Xform "tcp" (
                            prepend apiSchemas = ["GripperSiteAPI"]
                        )
                        {
                            float gripper:maxOpening = -1
                        }
                    }
                    "soft" {
                    }
                }
            }
        }
    }
}
"""


def test_nested_variant_sets_are_checked_under_each_outer_selection(write):
    report = validate(write(NESTED))
    found = {(i.code, i.variant) for i in report.issues}
    assert ("GR.004", "hand=two, pads=hard") in found
    assert all(variant == "hand=two, pads=hard" for _, variant in found)


def test_the_stage_is_left_as_it_was(write):
    path = write(robot())
    stage = Usd.Stage.Open(str(path))
    session = stage.GetSessionLayer()
    # A selection the user made in the viewer (session layer) is kept, not overwritten.
    with Usd.EditContext(stage, session):
        stage.GetPrimAtPath("/Robot").GetVariantSets().SetSelection("hand", "good")
    text, used = session.ExportToString(), [layer.identifier for layer in stage.GetUsedLayers()]
    changed: list = []
    listener = Tf.Notice.Register(Usd.Notice.ObjectsChanged, lambda n, _: changed.append(n), stage)
    report = validate(stage)
    del listener
    assert _found(report) == [("GR.003", "/Robot/tcp", "hand=bad")]
    assert session.ExportToString() == text
    assert [layer.identifier for layer in stage.GetUsedLayers()] == used
    assert not stage.GetRootLayer().dirty  # nothing authored into the user's layers
    assert stage.GetPrimAtPath("/Robot").GetVariantSets().GetVariantSelection("hand") == "good"
    assert changed  # the selections did switch (documented: ObjectsChanged notices)
    # An empty session layer stays empty.
    fresh = Usd.Stage.Open(str(path))
    empty = fresh.GetSessionLayer().ExportToString()
    validate(fresh)
    assert fresh.GetSessionLayer().ExportToString() == empty
    assert not fresh.GetSessionLayer().rootPrims


def test_past_the_limit_a_warning_and_the_current_selection_first(write, capsys):
    path = write(robot("good", sizes=True))  # 4 selections
    report = validate(path, max_variant_selections=1)
    assert _found(report) == []  # hand=good (current), size=large (the first): no issue
    (warning,) = report.warnings
    assert "3 of the 4 selections of </Robot> (hand x size) were not checked" in warning
    assert main(["validate", str(path), "--max-variant-selections", "2", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    entry = json.loads(out)["files"][0]
    assert entry["warnings"] and "2 of the 4 selections" in entry["warnings"][0]
    assert "warning: variants: 2 of the 4 selections" in err
    with pytest.raises(ValueError, match="max_variant_selections is 0; expected an integer >= 1"):
        validate(path, max_variant_selections=0)
    with pytest.raises(ValueError, match="variants is 'some'; expected one of: none, selected"):
        validate(path, variants="some")


def test_one_subtree_walk_per_selection(write, monkeypatch):
    from test_validate_walks import Walks

    path = write(robot(sizes=True))
    stage = Usd.Stage.Open(str(path))
    counter = Walks(monkeypatch)
    validate(stage)
    assert counter.walks == ["Stage.Traverse"]  # the stage once
    assert counter.subtrees.count("/Robot") == 4  # then each selection's subtree once


def test_batch_and_sarif_carry_the_selection(write, capsys, tmp_path):
    path = write(robot())
    code = main(["batch", "validate", str(tmp_path), "-q", "--jobs", "1", "--format", "jsonl"])
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1 and [(i["code"], i["variant"]) for i in row["issues"]] == [
        ("GR.003", "hand=bad")
    ]
    main(["validate", str(path), "--format", "sarif"])
    (result,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert result["properties"]["variant"] == "hand=bad"
    assert result["message"]["text"].startswith("</Robot/tcp> [hand=bad]: ")


def test_the_cli_default_limit_is_the_library_one():
    from usdgrip.cli.validate import DEFAULT_VARIANT_SELECTIONS
    from usdgrip.rules.variants import MAX_VARIANT_SELECTIONS

    assert DEFAULT_VARIANT_SELECTIONS == MAX_VARIANT_SELECTIONS


def test_many_variant_prims_past_the_limit_get_one_warning(write):
    prims = "".join(
        f'    def Xform "p{i}" (\n        prepend variantSets = "c"\n    )\n    {{\n'
        '        variantSet "c" = {\n            "blue" {\n            }\n'
        '            "red" {\n            }\n        }\n    }\n'
        for i in range(40)
    )
    text = (
        f'#usda 1.0\n(\n    metersPerUnit = 1\n    upAxis = "Z"\n)\ndef Xform "W"\n{{\n{prims}}}\n'
    )
    report = validate(write(text), max_variant_selections=10)
    (warning,) = report.warnings
    assert warning.startswith("variants: 70 selections of 35 prims were not checked: ")
    assert "and 32 more prims" in warning


def test_a_locked_session_layer_checks_the_current_selection_and_says_so(write):
    stage = Usd.Stage.Open(str(write(robot("bad"))))
    stage.GetSessionLayer().SetPermissionToEdit(False)
    report = validate(stage)
    assert _found(report) == [("GR.003", "/Robot/tcp", "hand=bad")]
    (warning,) = report.warnings
    assert "the session layer cannot be edited" in warning


def test_an_unresolved_reference_in_one_variant_is_ga001_in_that_variant(write):
    text = robot().replace(
        '"bad" {', '"bad" (\n            prepend references = @./missing.usda@\n        ) {'
    )
    report = validate(write(text))
    assert ("GA.001", "/Robot", "hand=bad") in _found(report)


def test_variant_sets_in_a_crate_file_are_found_too(write, tmp_path):
    path = write(robot())
    crate = tmp_path / "robot.usdc"
    Sdf.Layer.FindOrOpen(str(path)).Export(str(crate))
    assert _found(validate(crate)) == [("GR.003", "/Robot/tcp", "hand=bad")]


def test_names_outside_ascii_and_an_empty_variant_set(write):
    text = robot().replace('"hand"', '"hand_ü"').replace("string hand", "string hand_ü")
    text = text.replace('"bad" {', '"bad-1" {')
    assert _found(validate(write(text))) == [("GR.003", "/Robot/tcp", "hand_ü=bad-1")]
    stage = Usd.Stage.Open(str(write(robot("good"), "plain.usda")))
    stage.GetPrimAtPath("/Robot").GetVariantSets().AddVariantSet("empty")
    assert _found(validate(stage)) == [("GR.003", "/Robot/tcp", "hand=bad")]
