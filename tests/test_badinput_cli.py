"""Bad command-line input to sample, plan, render and batch: one line, exit 2, nothing lost.

Real example assets copied into ``tmp_path``, the real CLI through ``usdgrip.cli.main``.
"""

from __future__ import annotations

import json
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


# --- 2. sizes that would exhaust memory or overflow a wait; 4. non-finite or negative -----


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["sample", "lib/tote.usda", "--prim", "/Tote", "--count", "99999999999"],
         "--count 99999999999: expected 1 to 100000 candidates"),
        (["render", "lib/tote.usda", "-o", "r.png", "--dpi", "100000"], "--dpi 100000: expected 1 to 1200"),
        (["render", "lib/tote.usda", "-o", "r.png", "--size", "200x10"],
         "is 22000x1100 pixels; expected at most 16384 per side"),
        (["render", "lib/tote.usda", "-o", "r.png", "--view", "nan,0"],
         "--view nan,0: expected finite elevation and azimuth"),
        (["render", "lib/tote.usda", "-o", "r.png", "--view", "0,inf"],
         "--view 0,inf: expected finite elevation and azimuth"),
        ([*PLAN, "-o", "g.yaml", "--show", "-1"], "--show -1: expected a number of candidates >= 0"),
        (["batch", "validate", "lib", "-q", "--out", "r.jsonl", "--timeout", "inf"],
         "--timeout is inf s; expected a number > 0 and at most 604800"),
        (["batch", "validate", "lib", "-q", "--out", "r.jsonl", "--timeout", "1e300"],
         "--timeout is 1e+300 s; expected a number > 0 and at most 604800"),
    ],
)  # fmt: skip
def test_out_of_range_options_are_refused_up_front(assets, capsys, argv, fragment):
    err = expect_usage_error(capsys, argv, fragment)
    assert "Traceback" not in err
    assert sorted(p.name for p in Path().iterdir()) == ["lib"]  # nothing written


def test_render_at_the_limits_still_draws(assets, capsys):
    assert main(["render", "lib/tote.usda", "-o", "r.png", "--size", "1x1", "--dpi", "1200"]) == 0
    assert Path("r.png").read_bytes().startswith(b"\x89PNG")


def test_render_out_of_memory_is_one_line(assets, capsys, monkeypatch):
    from matplotlib.figure import Figure

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(Figure, "savefig", no_memory)
    expect_usage_error(
        capsys, ["render", "lib/tote.usda", "-o", "r.png"], "r.png: not enough memory"
    )
    assert not Path("r.png").exists()


# --- 3. batch checks its shared options once, as the single-file commands do ---------------


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--gripper", "lib/gripper.usda:/Nope"],
         "--gripper 'lib/gripper.usda:/Nope': "),
        (["--gripper", "lib/gripper.usda:/Gripper"], "</Gripper> is not a gripper site"),
        (["--gripper", GRIPPER, "--max-candidates", "10000000"],
         "--max-candidates 10000000: expected less than or equal to 100000"),
        (["--gripper", GRIPPER, "--seed", "-5"], "--seed -5: expected greater than or equal to 0"),
        (["--gripper", GRIPPER, "--gripper", "./" + GRIPPER], "is listed twice"),
    ],
)  # fmt: skip
def test_batch_plan_bad_shared_options_exit_2_before_any_file(assets, capsys, options, fragment):
    argv = ["batch", "plan", "lib", "-q", "--out-dir", "grasps", "--out", "rows.jsonl"]
    err = expect_usage_error(capsys, [*argv, *options], fragment)
    assert "validation error" not in err  # no raw pydantic report
    assert sorted(p.name for p in Path().iterdir()) == ["lib"]  # no rows, no out-dir


def test_batch_plan_the_same_options_as_plan_get_the_same_message(assets, capsys):
    plan = expect_usage_error(capsys, [*PLAN, "-o", "g.yaml", "--seed", "-5"])
    batch = expect_usage_error(
        capsys,
        ["batch", "plan", "lib", "-q", "--out-dir", "g", "--gripper", GRIPPER, "--seed", "-5"],
    )
    assert plan.removeprefix("usdgrip plan: ") == batch.removeprefix("usdgrip batch: ")


def test_batch_validate_unknown_rule_is_exit_2_like_validate(assets, capsys):
    single = expect_usage_error(capsys, ["validate", "lib/tote.usda", "--rule", "GR.999"])
    batch = expect_usage_error(
        capsys, ["batch", "validate", "lib", "-q", "--rule", "GR.999", "--out", "rows.jsonl"]
    )
    assert "unknown rule 'GR.999'; expected one of: " in batch
    assert single.removeprefix("usdgrip validate: ") == batch.removeprefix("usdgrip batch: ")
    assert not Path("rows.jsonl").exists()
    assert main(["batch", "validate", "lib", "-q", "--rule", "GR.003,GR.004"]) == 0


# --- 5. batch: corrupt results rows, globs that leave ROOT, a dangling defaultPrim ---------


def test_resume_reports_a_corrupt_row_in_the_middle_and_runs_its_file_again(assets, capsys):
    argv = ["batch", "validate", "lib", "-q", "--out", "rows.jsonl"]
    assert main(argv) == 0
    capsys.readouterr()
    lines = Path("rows.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    corrupt = lines[1]
    lines[1] = corrupt[: len(corrupt) // 2] + "\n"  # a damaged row, not the last line
    lines.append('{"path": "gone.usda", "status": "ok", "note": "\u2028 is not a line break"}\n')
    lines.append('{"path": "torn.usda", "sta')  # a torn last line stays silent
    Path("rows.jsonl").write_text("".join(lines), encoding="utf-8")
    assert main([*argv, "--resume", "--format", "json"]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: rows.jsonl line 2: not a result row ({warnings[0].split('(', 1)[1]}"
    ]
    assert "skipped: the file it described runs again" in warnings[0]
    summary = json.loads(captured.out)
    assert (summary["ran"], summary["resumed"], summary["files"]) == (1, 2, 3)
    assert len(summary["warnings"]) == 1
    text = Path("rows.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.removesuffix("\n").split("\n")]
    assert sorted(r["path"] for r in rows) == ["gone.usda", "gripper.usda", "mug.usda", "tote.usda"]


@pytest.mark.parametrize("pattern", ["../lib/*.usda", "sub/../../lib/*.usda", "**/../../*"])
def test_batch_glob_that_leaves_root_is_refused(assets, capsys, pattern):
    (assets / "sub").mkdir()
    argv = ["batch", "validate", "lib/sub", "-q", "--glob", pattern, "--out", "rows.jsonl"]
    expect_usage_error(capsys, argv, f"--glob {pattern!r}: leaves ROOT")
    assert not Path("rows.jsonl").exists()


def test_batch_plan_dangling_default_prim_is_an_error_row_naming_it(assets, capsys):
    text = (assets / "mug.usda").read_text()
    (assets / "mug.usda").write_text(text.replace('defaultPrim = "Mug"', 'defaultPrim = "Cup"'))
    assert 'defaultPrim = "Cup"' in (assets / "mug.usda").read_text()
    argv = ["batch", "plan", "lib", "-q", "--glob", "mug.usda", "--gripper", GRIPPER,
            "--out-dir", "grasps", "--out", "rows.jsonl"]  # fmt: skip
    assert main(argv) == 1
    (row,) = [json.loads(line) for line in Path("rows.jsonl").read_text().splitlines()]
    assert row["status"] == "error"
    assert "defaultPrim 'Cup' names no prim" in row["error"] and "</Mug>" in row["error"]
    assert not Path("grasps/mug.yaml").exists()


# --- 6. an object with nothing the requested method can use: exit 2, nothing written -------


def test_plan_method_slots_without_slots_is_exit_2_like_antipodal_without_mesh(assets, capsys):
    base = ["plan", "lib/mug.usda", "--gripper", GRIPPER, "-q", "-o", "g.yaml"]
    slots = expect_usage_error(
        capsys,
        [*base, "--object", "/Mug/handle", "--method", "slots"],
        "</Mug/handle> has no GripperSlots",
    )
    assert "method 'slots' has nothing to sample" in slots
    assert not Path("g.yaml").exists()


def test_plan_method_slots_with_only_unusable_slots_is_exit_2(assets, capsys):
    text = (assets / "mug.usda").read_text()
    bad = text.replace('"span_axis": [0.0, 1.0, 0.0]', '"span_axis": [-1.0, 0.0, 0.0]')
    assert bad != text
    (assets / "mug.usda").write_text(bad)
    argv = [*PLAN, "--method", "slots", "-o", "g.yaml"]
    expect_usage_error(
        capsys, argv, "</Mug>: no GripperSlot is usable for method 'slots' ('handle': "
    )
    assert not Path("g.yaml").exists()
    # Without --method the mesh still plans; the slot is only a warning.
    assert main([*PLAN, "-o", "g.yaml"]) == 0


def test_batch_plan_two_objects_with_one_output_are_refused(assets, capsys):
    shutil.copy(assets / "mug.usda", assets / "tote.usdc.usda")  # -> tote.usdc.yaml, distinct
    (assets / "sub").mkdir()
    shutil.copy(assets / "mug.usda", assets / "sub" / "mug.usda")  # -> sub/mug.yaml, distinct
    from pxr import Sdf

    Sdf.Layer.FindOrOpen(str(assets / "mug.usda")).Export(str(assets / "mug.usdc"))
    argv = ["batch", "plan", "lib", "-q", "--gripper", GRIPPER, "--out-dir", "grasps"]
    expect_usage_error(capsys, argv, "mug.yaml: both ", "mug.usda and ", "narrow --glob")
    assert not Path("grasps").exists()


def test_plan_job_refuses_to_write_over_its_object(assets):
    from usdgrip.batch.jobs import plan_file

    shutil.copy(assets / "mug.usda", assets / "mug.yaml")
    before = (assets / "mug.yaml").read_bytes()
    gripper = [[str(assets / "gripper.usda"), "/Gripper/tcp"]]
    with pytest.raises(ValueError, match=r"mug\.yaml: is the input file"):
        plan_file(str(assets / "mug.yaml"), gripper, out_dir=str(assets), root=str(assets))
    assert (assets / "mug.yaml").read_bytes() == before
