"""Issue 21 item 13: an upAxis other than "Y"/"Z" is reported (GA.003) and refused by every
command that reads the stage's up (one reader: ``usd.stage.read_stage_up_axis``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pxr import Sdf, Usd

from usdgrip.cli import main
from usdgrip.errors import GripperError
from usdgrip.rules import validate
from usdgrip.usd.stage import read_stage_up_axis

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GRIPPER = f"{EXAMPLES / 'gripper.usda'}:/Gripper/tcp"


def _with_up_axis(tmp_path: Path, example: str, axis: str) -> Path:
    text = (EXAMPLES / example).read_text()
    assert 'upAxis = "Z"' in text
    path = tmp_path / f"{Path(example).stem}_{axis}.usda"
    path.write_text(text.replace('upAxis = "Z"', f'upAxis = "{axis}"'))
    return path


def _stage(metadata: str) -> Usd.Stage:
    layer = Sdf.Layer.CreateAnonymous(".usda")
    layer.ImportFromString(f"#usda 1.0\n(\n    {metadata}\n)\n")
    return Usd.Stage.Open(layer)


def test_the_one_reader_takes_y_and_z_and_refuses_the_rest():
    assert read_stage_up_axis(_stage('upAxis = "Z"')) == ("Z", True)
    assert read_stage_up_axis(_stage('upAxis = "Y"')) == ("Y", True)
    assert read_stage_up_axis(_stage("doc = 'none'")) == ("Y", False)  # USD's fallback
    for axis in ("X", "z", "y", "up"):
        with pytest.raises(GripperError, match=f'upAxis is "{axis}"; expected "Y" or "Z"'):
            read_stage_up_axis(_stage(f'upAxis = "{axis}"'))


@pytest.mark.parametrize("axis", ["X", "z"])
@pytest.mark.parametrize(
    ("command", "example"),
    [
        (["plan", "{path}", "--object", "/Mug", "--gripper", GRIPPER, "-o", "{out}.yaml"], "mug"),
        (["evaluate", "{path}", "--gripper", GRIPPER, "--lines", "-q"], "graspable_prop"),
        (["render", "{path}", "-o", "{out}.png"], "mug"),
        (["migrate", "--lines-to-slots", "{path}", "-o", "{out}.usda"], "graspable_prop"),
    ],
    ids=["plan", "evaluate", "render", "migrate"],
)
def test_commands_refuse_an_invalid_up_axis_with_one_line(tmp_path, capsys, command, example, axis):
    path = _with_up_axis(tmp_path, f"{example}.usda", axis)
    out = tmp_path / "out"
    argv = [part.format(path=path, out=out) for part in command]
    code = main(argv)
    stdout, stderr = capsys.readouterr()
    assert code == 2, stderr
    assert "upAxis" not in stdout
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0] == (
        f'usdgrip {argv[0]}: {path}: the stage\'s upAxis is "{axis}"; expected "Y" or "Z" '
        "(upper case, the only values OpenUSD defines): author it in the root layer's metadata"
    )
    assert "substring not found" not in stderr
    assert not list(tmp_path.glob("out*"))  # nothing written


@pytest.mark.parametrize(("axis", "hint"), [("X", ""), ("z", ' (did you mean "Z"?)')])
def test_ga003_reports_the_value_on_any_stage(tmp_path, axis, hint):
    path = _with_up_axis(tmp_path, "mug.usda", axis)
    report = validate(path)
    (issue,) = [i for i in report.issues if i.code == "GA.003"]
    assert issue.severity == "failure" and issue.prim == "/" and not report.ok
    assert f'upAxis is "{axis}"; expected "Y" or "Z"' in issue.message
    assert hint in issue.message
    plain = _stage('upAxis = "X"')  # no gripper data: still invalid USD
    assert [i.code for i in validate(plain).issues] == ["GA.003"]
    assert validate(_stage('upAxis = "Z"')).issues == []
