"""Bad command-line input to sample, plan, render and batch: one line, exit 2, nothing lost.

Real example assets copied into ``tmp_path``, the real CLI through ``usdgrip.cli.main``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from usdgrip.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def assets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tote, mug and gripper examples in ``tmp_path/lib``; the working folder is ``tmp_path``."""
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("tote.usda", "mug.usda", "gripper.usda"):
        shutil.copy(EXAMPLES / name, lib / name)
    monkeypatch.chdir(tmp_path)
    return lib


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def expect_usage_error(capsys, argv: list[str], *fragments: str) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err
    return err


GRIPPER = "lib/gripper.usda:/Gripper/tcp"
PLAN = ["plan", "lib/mug.usda", "--object", "/Mug", "--gripper", GRIPPER, "-q"]


# --- 1. an output path that is an input --------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["sample", "lib/tote.usda", "--prim", "/Tote", "-o", "lib/tote.usda"],
        ["sample", "lib/tote.usda", "--prim", "/Tote", "-o", "lib/../lib/tote.usda"],
        [*PLAN, "-o", "lib/mug.usda"],
        [*PLAN, "-o", "lib/gripper.usda"],
        [*PLAN, "--scene", "lib/tote.usda", "-o", "lib/tote.usda"],
        ["batch", "validate", "lib", "-q", "--out", "lib/tote.usda"],
        ["batch", "plan", "lib", "-q", "--gripper", GRIPPER, "--out-dir", "grasps",
         "--out", "lib/gripper.usda"],
    ],
)  # fmt: skip
def test_output_that_is_an_input_is_refused_and_the_input_kept(assets, capsys, argv):
    before = snapshot(assets)
    expect_usage_error(capsys, argv, "is the input file", "writing there would replace it")
    assert snapshot(assets) == before
    assert not Path("grasps").exists()


def test_batch_plan_output_that_is_a_matched_file_is_refused(assets, capsys):
    # --glob '*' also takes notes.yaml, whose Isaac-Grasp output would be lib/notes.yaml itself.
    shutil.copy(assets / "mug.usda", assets / "notes.yaml")
    before = snapshot(assets)
    argv = ["batch", "plan", "lib", "-q", "--glob", "*", "--gripper", GRIPPER, "--out-dir", "lib"]
    expect_usage_error(capsys, argv, "notes.yaml: is the input file")
    assert snapshot(assets) == before


# --- 7. an output that is a folder, an --out-dir that is a file ----------------------


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["sample", "lib/tote.usda", "--prim", "/Tote", "-o", "out.png"], "-o out.png: is a directory"),
        (["render", "lib/tote.usda", "-o", "out.png"], "-o out.png: is a directory"),
        ([*PLAN, "-o", "out.png"], "-o out.png: is a directory"),
        (["batch", "validate", "lib", "-q", "--out", "out.png"], "--out out.png: is a directory"),
    ],
)  # fmt: skip
def test_output_that_is_a_folder_is_refused(assets, capsys, argv, fragment):
    Path("out.png").mkdir()
    err = expect_usage_error(capsys, argv, fragment)
    assert "/." not in err  # no hidden temp file named
    assert list(Path("out.png").iterdir()) == []


def test_batch_plan_out_dir_that_is_a_file_is_refused(assets, capsys):
    Path("grasps").write_text("keep me")
    argv = ["batch", "plan", "lib", "-q", "--gripper", GRIPPER, "--out-dir", "grasps"]
    expect_usage_error(capsys, argv, "--out-dir grasps: is a file")
    assert Path("grasps").read_text() == "keep me"
