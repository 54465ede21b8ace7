"""``usdgrip plan``: outputs, summary, quiet mode, and every exit code with its message."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from usdgrip.cli import main
from usdgrip.cli.plan import parse_gripper
from usdgrip.grasping.isaac_yaml import read_isaac_grasp

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MUG = str(EXAMPLES / "mug.usda")
GRIPPER = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"


def run_plan(capsys, *args):
    code = main(["plan", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_writes_isaac_grasp_and_prints_the_best(tmp_path, capsys):
    output = tmp_path / "mug.yaml"
    code, out, err = run_plan(
        capsys, MUG, "--object", "/Mug", "--gripper", GRIPPER, "--max-candidates", "6", "-o", output
    )
    assert code == 0
    result = read_isaac_grasp(output)
    assert len(result.grasps) == 6
    assert out.startswith(f"wrote {output}: 6 candidate(s) for 1 of 1 gripper(s)")
    best = next(iter(result.grasps))
    assert out.splitlines()[2].split()[0] == best  # best candidate printed first
    assert len([line for line in out.splitlines() if line.startswith("    g_")]) == 3
    assert "\r" not in err  # no progress bar when stderr is not a terminal
    data = yaml.safe_load(output.read_text())
    assert data["format"] == "isaac_grasp" and data["format_version"] == 1.0


def test_same_seed_gives_the_same_file(tmp_path, capsys):
    outputs = []
    for name in ("a.yaml", "b.yaml"):
        code, _, _ = run_plan(
            capsys,
            MUG,
            "--object",
            "/Mug",
            "--gripper",
            GRIPPER,
            "--max-candidates",
            "4",
            "--seed",
            "9",
            "--method",
            "slots",
            "-q",
            "-o",
            tmp_path / name,
        )
        assert code == 0
        outputs.append(read_isaac_grasp(tmp_path / name))
    assert outputs[0].grasps == outputs[1].grasps
    assert outputs[0].metadata.seed == 9


def test_quiet_prints_nothing(tmp_path, capsys):
    code, out, err = run_plan(
        capsys, MUG, "--object", "/Mug", "--gripper", GRIPPER, "--max-candidates", "2", "-q",
        "-o", tmp_path / "q.yaml",
    )  # fmt: skip
    assert code == 0 and out == "" and err == ""


def test_nothing_survives_exit_1_and_file_with_reasons(tmp_path, write_usda, capsys):
    scene = write_usda('def Cube "Crate"\n{\n    double size = 0.5\n}', "crate.usda")
    output = tmp_path / "none.yaml"
    code, out, err = run_plan(
        capsys, MUG, "--object", "/Mug", "--gripper", GRIPPER, "--max-candidates", "3",
        "--scene", scene, "-o", output,
    )  # fmt: skip
    assert code == 1
    result = read_isaac_grasp(output)
    assert result.grasps == {}
    assert any("no candidate survived" in w for w in result.metadata.warnings)
    assert "no candidate survived; see the warnings" in out
    assert "warning:" in err and "/Crate" in err


def test_parse_gripper_splits_at_the_last_colon_slash():
    ref = parse_gripper("C:/assets/hand.usda:/Hand/tcp")
    assert ref.asset_path.endswith("hand.usda") and ref.prim_path == "/Hand/tcp"


@pytest.fixture
def bad_inputs(write_usda, tmp_path):
    return {
        "no_mesh": write_usda('def Xform "Empty"\n{\n}', "empty.usda"),
        "open_mesh": write_usda(
            'def Mesh "Sheet"\n{\n    int[] faceVertexCounts = [3]\n'
            "    int[] faceVertexIndices = [0, 1, 2]\n"
            "    point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]\n}",
            "sheet.usda",
        ),
        "garbage": write_usda("#usda 1.0\n(\n  this is not usd\n", "garbage.usda"),
        "no_site": write_usda(
            'def Xform "Hand"\n{\n    def Xform "tcp"\n    {\n    }\n}', "hand.usda"
        ),
        "missing": tmp_path / "missing.usda",
    }


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            lambda b: [b["no_mesh"], "--object", "/Empty", "--gripper", GRIPPER],
            r"<\/Empty> has no mesh and no GripperSlots",
        ),
        (
            lambda b: [b["open_mesh"], "--object", "/Sheet", "--gripper", GRIPPER],
            "does not bound a solid.*not watertight",
        ),
        (
            lambda b: [b["garbage"], "--object", "/Mug", "--gripper", GRIPPER],
            "garbage.usda: cannot be opened as USD",
        ),
        (
            lambda b: [b["missing"], "--object", "/Mug", "--gripper", GRIPPER],
            "missing.usda: no such file",
        ),
        (lambda b: [MUG, "--object", "/Cup", "--gripper", GRIPPER], r"no prim at </Cup> \(root"),
        (
            lambda b: [MUG, "--object", "/Mug", "--gripper", f"{b['no_site']}:/Hand/tcp"],
            r"</Hand/tcp> is not a gripper site.*sites in this file: none",
        ),
        (
            lambda b: [MUG, "--object", "/Mug", "--gripper", f"{b['missing']}:/Hand/tcp"],
            "missing.usda: no such file",
        ),
        (
            lambda b: [MUG, "--object", "/Mug", "--gripper", "examples/gripper.usda"],
            "--gripper 'examples/gripper.usda': expected FILE:/Site/Path",
        ),
        (
            lambda b: [MUG, "--object", "/Mug", "--gripper", "g.usda:/Bad Path"],
            "not an absolute USD prim path",
        ),
        (
            lambda b: [MUG, "--object", "Mug", "--gripper", GRIPPER],
            "--object 'Mug': prim_path: prim path 'Mug' is not an absolute",
        ),
        (
            lambda b: [MUG, "--object", "/Mug", "--gripper", GRIPPER, "--gripper", GRIPPER],
            "is listed twice",
        ),
        (
            lambda b: [MUG, "--object", "/Mug", "--gripper", GRIPPER, "--method", "magic"],
            "unknown method 'magic'; expected one of antipodal, slots, lines",
        ),
        (
            lambda b: [MUG, "--object", "/Mug", "--gripper", GRIPPER, "--max-candidates", "0"],
            "--max-candidates 0: expected greater than or equal to 1",
        ),
        (
            lambda b: [MUG, "--object", "/Mug", "--gripper", GRIPPER, "--scene", b["missing"]],
            "missing.usda: no such file",
        ),
    ],
)
def test_bad_input_exit_2_one_line_nothing_written(bad_inputs, tmp_path, capsys, case, message):
    output = tmp_path / "out.yaml"
    code, out, err = run_plan(capsys, *case(bad_inputs), "-o", output)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("usdgrip plan: ")
    assert re.search(message, lines[0]), lines[0]
    assert (
        sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".yaml" or ".tmp" in p.name) == []
    )


def test_missing_output_folder_is_exit_2(tmp_path, capsys):
    code, _, err = run_plan(
        capsys, MUG, "--object", "/Mug", "--gripper", GRIPPER, "-o", tmp_path / "no" / "g.yaml"
    )
    assert code == 2 and "folder" in err and "does not exist" in err


def test_missing_required_option_is_argparse_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["plan", MUG, "--object", "/Mug", "-o", "x.yaml"])
    assert exc.value.code == 2
    assert "--gripper" in capsys.readouterr().err


def test_progress_bar_overwrites_one_line_and_clears_it():
    import io

    from usdgrip.progress_reporter import ProgressReporter

    stream = io.StringIO()
    bar = ProgressReporter(stream, "bar")
    bar("reading object", 0.0)
    bar("collision checks", 0.5)
    bar.close()
    text = stream.getvalue()
    assert text.count("\r") == 4 and "[##########..........]  50% collision checks" in text
    assert text.endswith("\r")
    silent = io.StringIO()
    quiet = ProgressReporter(silent, "auto", quiet=True)
    quiet("x", 0.5)
    quiet.note("y")
    quiet.close()
    assert silent.getvalue() == ""


def test_plan_restates_an_open_time_usd_warning_once(tmp_path, monkeypatch, capfd):
    # The object file references a missing asset: USD warns while the stage opens. The CLI
    # opens each input once and the planner reads that stage, so the warning appears once.
    monkeypatch.chdir(tmp_path)
    Path("a.usda").write_text(
        "#usda 1.0\n"
        f'def Xform "Mug" (prepend references = @{MUG}@</Mug>) {{}}\n'
        'def Xform "Lost" (prepend references = @./nowhere.usda@) {}\n'
    )
    code = main(["plan", "a.usda", "--object", "/Mug", "--gripper", GRIPPER, "--method", "slots",
                 "--max-candidates", "2", "-q", "-o", "a.yaml"])  # fmt: skip
    err = capfd.readouterr().err
    assert code == 0, err
    assert err.count("nowhere.usda") == 1, err
    assert err.startswith("usdgrip: a.usda: USD warning: In </Lost>: Could not open asset @"), err
