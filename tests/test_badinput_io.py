"""What the commands read and write: outputs never replace a file the input reads,
awkward file names and file contents get one clear message (exit 2).

Real example assets copied into ``tmp_path``, the real CLI through ``usdgrip.cli.main``.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_badinput_cli import expect_usage_error, snapshot

from usdgrip.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
REFERENCING = """#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "Obj" (
    references = @./sub/mug.usda@
)
{
}
"""


@pytest.fixture
def referencing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``a.usda`` referencing ``./sub/mug.usda`` (the mug example) in ``tmp_path``."""
    (tmp_path / "sub").mkdir()
    shutil.copy(EXAMPLES / "mug.usda", tmp_path / "sub" / "mug.usda")
    shutil.copy(EXAMPLES / "gripper.usda", tmp_path / "gripper.usda")
    (tmp_path / "a.usda").write_text(REFERENCING)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- 1. an output that is a layer the input stage reads ------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["migrate", "a.usda", "-o", "sub/mug.usda"],
        ["validate", "a.usda", "--output", "sub/mug.usda"],
        ["validate", "examples_copy.usda", "a.usda", "--output", "sub/../sub/mug.usda"],
        ["sample", "a.usda", "--prim", "/Obj", "-o", "sub/mug.usda"],
        ["render", "a.usda", "-o", "sub/mug.usda"],
        ["plan", "sub/mug.usda", "--object", "/Mug", "-q", "--gripper",
         "gripper.usda:/Gripper/tcp", "--scene", "a.usda", "-o", "sub/mug.usda"],
        ["plan", "gripper.usda", "--object", "/Gripper", "-q", "--gripper",
         "a.usda:/Obj", "-o", "sub/mug.usda"],
    ],
)  # fmt: skip
def test_output_over_a_referenced_layer_is_refused(referencing: Path, capsys, argv) -> None:
    shutil.copy(EXAMPLES / "gripper.usda", referencing / "examples_copy.usda")
    before = snapshot(referencing)
    expect_usage_error(capsys, argv, "sub/mug.usda: is the input file", "mug.usda; writing there")
    assert snapshot(referencing) == before


def test_in_place_still_writes_the_root_layer(referencing: Path, capsys) -> None:
    legacy = REFERENCING.replace(
        "{\n}", '{\n    def Xform "tcp"\n    {\n        float gripper_maxOpening = 0.08\n    }\n}'
    )
    (referencing / "legacy.usda").write_text(legacy)
    assert main(["migrate", "legacy.usda", "--in-place"]) == 0, capsys.readouterr().err
    assert "gripper:maxOpening" in (referencing / "legacy.usda").read_text()
    assert (referencing / "sub" / "mug.usda").read_bytes() == (EXAMPLES / "mug.usda").read_bytes()


# --- 2, 3. names and text that are not UTF-8 -------------------------------------------


def _with_bad_note(source: Path, target: Path) -> None:
    """``source`` with a non-UTF-8 string attribute on its first mesh, written to ``target``."""
    data = source.read_bytes()
    brace = data.index(b"{", data.index(b"def Mesh")) + 1
    target.write_bytes(data[:brace] + b'\n        custom string note = "caf\xe9"\n' + data[brace:])


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "good.usda", "bad.usda"],
        ["info", "bad.usda"],
        ["sample", "bad.usda", "--prim", "/Gripper"],
        ["migrate", "bad.usda"],
    ],
)
def test_text_that_is_not_utf8_names_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, argv: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(EXAMPLES / "gripper.usda", "good.usda")
    _with_bad_note(EXAMPLES / "gripper.usda", tmp_path / "bad.usda")
    err = expect_usage_error(capsys, argv, "bad.usda: line ", "byte 0xe9 is not UTF-8")
    assert 'custom string note = "caf\\xe9"' in err
    assert "good.usda" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "NAME", "--format", "json"],
        ["info", "NAME"],
        ["sample", "NAME", "--prim", "/Gripper"],
        ["migrate", "NAME"],
        ["render", "NAME", "-o", "x.png"],
    ],
)
def test_file_name_that_is_not_utf8_is_named_with_escapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, argv: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"n\xffb.usda")
    shutil.copy(EXAMPLES / "gripper.usda", name)
    argv = [name if a == "NAME" else a for a in argv]
    expect_usage_error(capsys, argv, "n\\xffb.usda: the file name is not valid UTF-8")


# --- 5. names near the folder's name limit ----------------------------------------------

LEGACY_SITE = """#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "tcp"
{
    float gripper_maxOpening = 0.085
    def BasisCurves "forward_axis"
    {
        int[] curveVertexCounts = [2]
        point3f[] points = [(0,0,0),(0,0,0.05)]
        uniform token type = "linear"
    }
}
"""


@pytest.mark.parametrize(
    "argv", [["validate", "--fix"], ["migrate", "--in-place"], ["migrate", "-o", "OUT"]]
)
def test_a_name_at_the_folder_limit_can_be_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, argv: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    name = "a" * (limit - len(".usda") - 1) + ".usda"
    out = "b" * (limit - len(".usdc")) + ".usdc"
    Path(name).write_text(LEGACY_SITE)
    code = main([*(out if a == "OUT" else a for a in argv), name])
    assert code in (0, 1), capsys.readouterr().err
    written = Path(out if "OUT" in argv else name)
    assert written.read_bytes() != LEGACY_SITE.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({name, written.name})


# --- 6. integers the outputs cannot hold ------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--ee-ids", "99999999999999999999999,1"], "id 99999999999999999999999 is outside 0 to"),
        (["--ee-ids=-1,1"], "id -1 is outside 0 to 9223372036854775807"),
        (["--seed", "99999999999999999999999999"], "expected an integer from 0 to"),
        (["--seed", "-3"], "seed is -3; expected an integer from 0 to"),
    ],
)
def test_sample_refuses_ids_and_seeds_outside_int64(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, options: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(EXAMPLES / "tote.usda", "tote.usda")
    expect_usage_error(capsys, ["sample", "tote.usda", "--prim", "/Tote", *options, "-o", "x.npz"],
                       message)  # fmt: skip
    assert not Path("x.npz").exists()


def test_sample_keeps_the_largest_id_and_seed(tmp_path: Path, monkeypatch, capsys) -> None:
    import numpy as np

    monkeypatch.chdir(tmp_path)
    shutil.copy(EXAMPLES / "tote.usda", "tote.usda")
    top = str(2**63 - 1)
    argv = ["sample", "tote.usda", "--prim", "/Tote", "--seed", top, "--ee-ids", f"{top},0"]
    assert main([*argv, "--count", "2", "-o", "x.npz"]) == 0, capsys.readouterr().err
    with np.load("x.npz") as data:
        assert data["seed"] == 2**63 - 1 and data["ee_ids"].tolist() == [2**63 - 1, 0]


# --- 4. a migrated copy in another folder -----------------------------------------------


@pytest.mark.parametrize("output", ["out/a.usda", "out/deeper/a.usdc", "a.migrated.usda"])
def test_migrated_copy_elsewhere_still_resolves_its_reference(
    referencing: Path, capsys, output: str
) -> None:
    legacy = REFERENCING.replace(
        "{\n}", '{\n    def Xform "tcp"\n    {\n        float gripper_maxOpening = 0.08\n    }\n}'
    )
    (referencing / "a.usda").write_text(legacy)
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    assert main(["migrate", "a.usda", "-o", output]) == 0
    out = capsys.readouterr().out
    assert ("moved:   @./sub/mug.usda@" in out) == output.startswith("out/")
    from pxr import Usd

    stage = Usd.Stage.Open(str(referencing / output))
    assert stage.GetPrimAtPath("/Obj/body").IsDefined()  # the mug's mesh, through the reference
    assert stage.GetPrimAtPath("/Obj/tcp").HasAPI("GripperSiteAPI")
    assert main(["validate", output, "--rule", "GA.001"]) == 0, capsys.readouterr().out
    assert (referencing / "a.usda").read_text() == legacy


# --- 7. standard output, rule selection, output suffixes, hard links ---------------------


class _FailingStdout(io.StringIO):
    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error = error

    def write(self, text: str) -> int:
        raise self.error


@pytest.mark.parametrize("argv", [["info", "EX/tote.usda"], ["rules"]])
def test_closed_stdout_ends_quietly_and_a_failed_one_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys, argv: list[str]
) -> None:
    argv = [a.replace("EX", str(EXAMPLES)) for a in argv]
    monkeypatch.setattr(sys, "stdout", _FailingStdout(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    assert main(argv) == 141
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys, "stdout", _FailingStdout(OSError(errno.ENOSPC, "No space left")))
    expect_usage_error(capsys, argv, "cannot write standard output: No space left")


def test_closed_pipe_in_a_real_process_prints_nothing(tmp_path: Path) -> None:
    usdgrip = Path(sys.executable).with_name("usdgrip")
    command = f"set -o pipefail; '{usdgrip}' info --json '{EXAMPLES / 'tote.usda'}' | true"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
    assert done.stderr == "" and done.returncode in (0, 141)


@pytest.mark.parametrize("rule", ["", " , "])
def test_an_empty_rule_is_a_usage_error(capsys, rule: str) -> None:
    argv = ["validate", str(EXAMPLES / "gripper.usda"), "--rule", rule]
    expect_usage_error(capsys, argv, f"--rule {rule!r} names no rule")


@pytest.mark.parametrize("output", ["x.txt", "x"])
def test_migrate_refuses_an_output_that_is_not_usd(referencing: Path, capsys, output) -> None:
    legacy = REFERENCING.replace(
        "{\n}", '{\n    def Xform "tcp"\n    {\n        float gripper_maxOpening = 0.08\n    }\n}'
    )
    (referencing / "a.usda").write_text(legacy)
    expect_usage_error(capsys, ["migrate", "a.usda", "-o", output], "not a USD file name")
    assert not Path(output).exists()


def test_fix_on_a_hard_linked_file_leaves_the_other_link_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("site.usda").write_text(LEGACY_SITE)
    os.link("site.usda", "other.usda")
    assert main(["migrate", "site.usda", "--in-place"]) == 0, capsys.readouterr().err
    assert "gripper:maxOpening" in Path("site.usda").read_text()
    assert Path("other.usda").read_text() == LEGACY_SITE  # documented: a new file, link broken
    assert os.stat("site.usda").st_nlink == 1


def test_usd_diagnostics_are_restated_in_one_line_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a.usda").write_text(REFERENCING)  # ./sub/mug.usda does not exist here
    assert main(["info", "a.usda"]) == 0
    err = capfd.readouterr().err
    assert err.startswith("usdgrip: a.usda: USD warning: In </Obj>: Could not open asset @"), err
    assert "_ReportErrors" not in err and "stage.cpp" not in err and "0x" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["sample", "EX/tote.usda", "--prim", "/Tote", "-o", "OUT.json"],
        ["render", "EX/tote.usda", "-o", "OUT.png"],
    ],
)
def test_an_output_name_that_is_not_utf8_is_written_and_shown_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, argv: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    out = os.fsdecode(b"o\xff")
    argv = [a.replace("EX", str(EXAMPLES)).replace("OUT", out) for a in argv]
    assert main(argv) == 0, capsys.readouterr().err
    assert "o\\xff." in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == [argv[-1]]
