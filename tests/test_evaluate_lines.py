"""``usdgrip evaluate --lines``: FET005 on the CPU, per grasp vector line, with the real MuJoCo engine.

The example prop has a good line (its grasps hold) and one that misses the block (no grasp
can be planned on it: not provable); variants authored in tmp_path over it give the other
verdicts. Few candidates per line keep each run to about a second.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import EXAMPLES

pytest.importorskip("mujoco")

from usdgrip.cli import main
from usdgrip.contracts import GeometryRef, GripperRef
from usdgrip.grasping.line_evaluation import VERDICTS, evaluate_grasp_lines

PROP = EXAMPLES / "graspable_prop.usda"
GRIPPER = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"
FEW = ("--candidates-per-line", "2", "--trials", "1")  # the two best of 72 approaches, one trial
#: Over the example prop: the line that misses the block deactivated.
ONLY_GOOD_LINE = 'over "Block"\n{\n    over "grasp_identifier_02" (\n        active = false\n    )\n    {\n    }\n}'


@pytest.fixture(autouse=True)
def _coacd_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def prop_variant(tmp_path, body: str, name: str = "prop.usda"):
    """The example prop as a sublayer, with ``body`` (overs on /Block) on top."""
    path = tmp_path / name
    path.write_text(  # a root layer's metadata is its own: restate the prop's
        f'#usda 1.0\n(\n    defaultPrim = "Block"\n    kilogramsPerUnit = 1\n'
        f'    metersPerUnit = 1\n    subLayers = [@{PROP}@]\n    upAxis = "Z"\n)\n\n{body}\n'
    )
    return path


def test_good_line_held_missing_line_not_provable_exit_1_json(tmp_path, capsys):
    out = tmp_path / "lines.json"
    code, stdout, stderr = run_cli(
        capsys, "evaluate", PROP, "--gripper", GRIPPER, "--lines", *FEW, "-o", out
    )
    assert code == 1, stderr  # every line must hold for exit 0; grasp_identifier_02 cannot
    assert stdout == f"wrote {out} (json): 1 of 2 grasp line(s) held\n"
    assert "grasp_identifier_02' skipped: it does not meet the object (GP.001)" in stderr
    report = json.loads(out.read_text())
    assert report["format"] == "usdgrip_lines_evaluation" and report["format_version"] == 1
    assert report["object"].endswith("graspable_prop.usda:/Block")  # the lines' object
    assert report["pose_frame"] == "/Block" and report["candidates_per_line"] == 2
    assert report["summary"] == {
        "lines": 2, "held": 1, "every_line_held": False, "any_line_held": True,
    }  # fmt: skip
    good, missing = report["lines"]
    assert (good["name"], good["path"]) == ("grasp_identifier_01", "/Block/grasp_identifier_01")
    assert good["verdict"] == "held" and good["held"] and good["note"] is None
    assert good["candidates"] == 2 and good["best_success_rate"] == 1.0
    assert good["outcomes"] == {"held": 2}
    grasp = good["grasp"]
    assert re.fullmatch(r"g_[0-9a-f]{8}_lines_grasp_identifier_01_\d{4}", grasp["id"])
    assert grasp["success_rate"] == 1.0
    assert grasp["position"] == pytest.approx([0.0, 0.0, 0.1], abs=1e-9)  # between the faces
    assert abs(grasp["orientation"]["w"]) < 1e-9  # 180° about X: approach straight down
    assert grasp["orientation"]["xyz"] == pytest.approx([1.0, 0.0, 0.0], abs=1e-9)
    assert grasp["width"] == pytest.approx(0.05)
    assert missing["verdict"] == "not_provable" and not missing["held"]
    assert missing["candidates"] == 0 and missing["grasp"] is None
    assert missing["outcomes"] == {} and missing["best_success_rate"] == 0.0
    assert missing["note"] == "it does not meet the object (GP.001)"
    physics = report["physics"]
    assert physics["support"] == "table"  # --lines puts the object on a floor by default
    assert physics["object"]["mass_kg"] == pytest.approx(0.2)  # as authored
    assert physics["summary"]["candidates"] == 2
    assert set(VERDICTS) >= {line["verdict"] for line in report["lines"]}


def test_every_line_held_exit_0_text_on_stdout(tmp_path, capsys):
    path = prop_variant(
        tmp_path,
        ONLY_GOOD_LINE,
    )
    code, stdout, _ = run_cli(capsys, "evaluate", path, "--gripper", GRIPPER, "--lines", *FEW)
    assert code == 0
    head, run, held, by = stdout.splitlines()
    assert head == f"{path}:/Block: 1 of 1 grasp line(s) held"
    assert run.startswith(f"  gripper {GRIPPER}, support table, 2 grasp(s) per line, 1 trial(s)")
    assert held.split() == [
        "grasp_identifier_01", "held", "2", "grasp(s),", "best", "100%;", "outcomes:", "held", "2",
    ]  # fmt: skip
    assert re.fullmatch(r"g_[0-9a-f]{8}_lines_grasp_identifier_01_\d{4}", by.split()[1])
    assert "q=(+0.000, +1.000, +0.000, +0.000) width 0.050" in by


def test_a_line_whose_grasps_all_drop_is_not_held_exit_1(tmp_path, capsys):
    path = prop_variant(
        tmp_path,
        ONLY_GOOD_LINE,
    )
    code, stdout, _ = run_cli(
        capsys, "evaluate", path, "--gripper", GRIPPER, "--lines", *FEW,
        "--force", "0.01", "--format", "json",
    )  # fmt: skip
    assert code == 1
    (line,) = json.loads(stdout)["lines"]
    assert line["verdict"] == "not_held" and line["candidates"] == 2
    assert line["grasp"] is None and line["best_success_rate"] == 0.0
    assert "held" not in line["outcomes"] and sum(line["outcomes"].values()) == 2


def test_unusable_lines_are_reported_without_planning(tmp_path):
    path = prop_variant(
        tmp_path,
        'over "Block"\n{\n'
        '    over "grasp_identifier_01"\n    {\n'
        "        point3f[] points = [(0, 0, 0.1), (0, 0, 0.1)]\n    }\n"
        '    over "grasp_identifier_02"\n    {\n'
        "        point3f[] points = [(0, 0, 0.1)]\n    }\n}",
    )
    report = evaluate_grasp_lines(
        GeometryRef(asset_path=str(path), prim_path="/Block"),
        GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp"),
    )
    assert [line["verdict"] for line in report["lines"]] == ["not_provable", "not_provable"]
    assert all("GP.002" in line["note"] for line in report["lines"])
    assert report["physics"] is None and not report["summary"]["any_line_held"]


def test_a_line_wider_than_the_gripper_is_not_provable(tmp_path):
    wide = 'double3 xformOp:scale = (2.5, 1, 1)\n            uniform token[] xformOpOrder = ["xformOp:scale"]'
    path = prop_variant(
        tmp_path,
        f'over "Block"\n{{\n    over "visuals"\n    {{\n        over "body"\n        {{\n'
        f"            {wide}\n        }}\n    }}\n"
        f'    over "colliders"\n    {{\n        over "body"\n        {{\n'
        f"            {wide}\n        }}\n    }}\n"
        '    over "grasp_identifier_01"\n    {\n'
        "        point3f[] points = [(-0.1, 0, 0.1), (0.1, 0, 0.1)]\n    }\n}",
    )  # a 12.5 cm block: the 8.5 cm gripper fits no grasp on the line
    report = evaluate_grasp_lines(
        GeometryRef(asset_path=str(path), prim_path="/Block"),
        GripperRef(asset_path=str(EXAMPLES / "gripper.usda"), prim_path="/Gripper/tcp"),
    )
    wide_line, missing = report["lines"]
    assert wide_line["verdict"] == "not_provable" and wide_line["candidates"] == 0
    assert wide_line["note"].startswith("no grasp on it was planned (too wide")
    assert any("wider than max opening" in w for w in report["warnings"])
    assert missing["note"] == "it does not meet the object (GP.001)"
    assert report["physics"] is None


def test_bad_input_is_one_line_exit_2(tmp_path, capsys):
    no_lines = EXAMPLES / "mug.usda"
    two = prop_variant(
        tmp_path,
        'over "Block"\n{\n    def Xform "Lid" (prepend apiSchemas = ["PhysicsRigidBodyAPI"])\n'
        '    {\n        def BasisCurves "grasp_identifier_09"\n        {\n'
        "            point3f[] points = [(0, 0, 0), (1, 0, 0)]\n        }\n    }\n}",
        "two.usda",
    )
    base = ("evaluate", PROP, "--gripper", GRIPPER)
    cases = {
        "file without lines": (
            ("evaluate", no_lines, "--gripper", GRIPPER, "--lines"),
            f"{no_lines}: no grasp vector line (a BasisCurves named grasp_identifier*",
        ),
        "prim without lines": (
            ("evaluate", no_lines, "--object", "/Mug", "--gripper", GRIPPER, "--lines"),
            f"{no_lines}: </Mug> has no grasp vector line",
        ),
        "lines of two objects": (
            ("evaluate", two, "--gripper", GRIPPER, "--lines"),
            "the grasp lines belong to 2 objects (</Block>, </Block/Lid>); choose one (--object PRIM)",
        ),
        "missing prim": ((*base, "--lines", "--object", "/Nope"), "/Nope"),
        "bad count": ((*base, "--lines", "--candidates-per-line", "0"), "--candidates-per-line 0"),
        "bad trials": ((*base, "--lines", "--trials", "0"), "--trials 0: expected an integer >= 1"),
        "table and support": (
            (*base, "--lines", "--table", "--support", "/Floor"),
            "--table and --support: choose one",
        ),
        "format without lines": (
            (*base, "--object", "/Block", "--grasps", "g.yaml", "-o", "o.yaml", "--format", "json"),
            "--format json: only with --lines",
        ),
        "grasps without object": (
            (*base, "--grasps", "g.yaml", "-o", "o.yaml"),
            "--object PRIM is required with --grasps and --targets",
        ),
        "grasps without output": (
            (*base, "--object", "/Block", "--grasps", "g.yaml"),
            "-o OUT is required with --grasps and --targets",
        ),
        "show with lines": ((*base, "--lines", "--show", "3"), "--show 3: not with --lines"),
        "lines and grasps": (
            (*base, "--lines", "--grasps", "g.yaml"),
            "argument --grasps: not allowed with argument --lines",
        ),
        "output is a folder": ((*base, "--lines", "-o", tmp_path), "is a directory"),
    }
    for name, (argv, expected) in cases.items():
        try:
            code, stdout, stderr = run_cli(capsys, *argv)
        except SystemExit as exc:  # argparse's own errors: the usage, then one error line
            code, (stdout, stderr) = exc.code, capsys.readouterr()
            stderr = stderr.strip().splitlines()[-1]
        assert code == 2, name
        assert expected in stderr, (name, stderr)
        assert stdout == "" and len(stderr.strip().splitlines()) == 1, (name, stderr)
        assert "Traceback" not in stderr, name
