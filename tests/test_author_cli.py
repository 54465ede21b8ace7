"""``usdgrip author slot|site|line``: targets, the write rules, refusals, and attacks."""

from __future__ import annotations

import os
import shutil
import stat

import pytest
from conftest import EXAMPLES
from pxr import Sdf, Usd

from usdgrip.cli import main
from usdgrip.rules import validate
from usdgrip.usd.slots import list_slot_instances, read_gripper_slots

FRONT = ["--center", "0,-0.145,0.12", "--forward", "0,0,-1", "--span", "0,1,0", "--up-range", "0.2"]


@pytest.fixture
def tote(tmp_path):
    path = tmp_path / "tote.usda"
    path.write_text(
        (EXAMPLES / "tote.usda")
        .read_text()
        .replace("#usda 1.0\n", "#usda 1.0\n# Licence: the tote's own header.\n", 1)
    )
    return path


def _files(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _author(*args: str) -> int:
    try:
        return main(["author", *map(str, args)])
    except SystemExit as exc:  # argparse's own usage errors
        return int(exc.code)


def test_layer_creates_an_edits_layer_that_sublayers_the_asset(tote, tmp_path, capsys):
    asset = tote.read_bytes()
    edits = tmp_path / "edits" / "tote.edits.usda"
    edits.parent.mkdir()
    assert (
        _author("slot", tote, "--prim", "/Tote", "--name", "front", *FRONT, "--layer", edits) == 0
    )
    out = capsys.readouterr().out
    assert out == (
        f"wrote {edits}: added slot 'front' on </Tote> (new edits layer: open it to see FILE "
        "with the edits)\n"
    )
    assert tote.read_bytes() == asset
    stage = Usd.Stage.Open(str(edits))
    layer = stage.GetRootLayer()
    assert list(layer.subLayerPaths) == ["../tote.usda"]
    assert layer.defaultPrim == "Tote" and layer.pseudoRoot.GetInfo("metersPerUnit") == 1
    assert [p.path for p in layer.rootPrims] == ["/Tote"]
    assert layer.rootPrims[0].specifier == Sdf.SpecifierOver  # only new opinions
    assert list_slot_instances(stage.GetPrimAtPath("/Tote")) == ["front", "left_edge", "right_edge"]
    assert validate(stage).ok
    # Extended, not replaced: the next edit goes into the same layer.
    assert (
        _author(
            "slot",
            tote,
            "--prim",
            "/Tote",
            "--name",
            "left_edge",
            "--up-range",
            "0.1",
            "--layer",
            edits,
        )
        == 0
    )
    assert "changed slot 'left_edge'" in capsys.readouterr().out
    stage = Usd.Stage.Open(str(edits))
    assert read_gripper_slots(stage.GetPrimAtPath("/Tote"), ["left_edge"])[0].up_range_local == 0.1
    assert "front" in list_slot_instances(stage.GetPrimAtPath("/Tote"))
    assert tote.read_bytes() == asset
    assert main(["info", str(edits)]) == 0 and "'front'" in capsys.readouterr().out


def _foreign(folder):
    """An edits-like layer of another asset."""
    (folder / "other.usda").write_text("#usda 1.0\n")
    (folder / "foreign.usda").write_text("#usda 1.0\n(\n    subLayers = [@./other.usda@]\n)\n")
    return folder / "foreign.usda"


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda d, f: f, "--layer is the input file itself"),
        (lambda d, f: os.mkfifo(d / "fifo.usda") or d / "fifo.usda", "is a named pipe (FIFO)"),
        (lambda d, f: (d / "dir.usda").mkdir() or d / "dir.usda", "is a folder"),
        (lambda d, f: d / "edits.usdz", "a .usdz package cannot be written"),
        (lambda d, f: d / "edits.txt", "suffix '.txt'"),
        (lambda d, f: _foreign(d), "sublayers @./other.usda@, not"),
        (lambda d, f: d / "missing" / "e.usda", "folder"),
    ],
    ids=["input", "fifo", "folder", "usdz", "suffix", "foreign", "no-folder"],
)
def test_bad_edits_layers_are_refused_and_nothing_is_written(tote, tmp_path, capsys, make, words):
    edits = make(tmp_path, tote)
    before = _files(tmp_path)
    code = _author("slot", tote, "--prim", "/Tote", "--name", "front", *FRONT, "--layer", edits)
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert _files(tmp_path) == before


def test_a_read_only_edits_layer_and_a_read_only_input_are_refused(tote, tmp_path, capsys):
    edits = tmp_path / "e.usda"
    assert (
        _author("slot", tote, "--prim", "/Tote", "--name", "front", *FRONT, "--layer", edits) == 0
    )
    edits.chmod(0o444)
    tote.chmod(0o444)
    before = _files(tmp_path)
    assert (
        _author(
            "slot",
            tote,
            "--prim",
            "/Tote",
            "--name",
            "left_edge",
            "--up-range",
            "0.1",
            "--layer",
            edits,
        )
        == 2
    )
    assert "e.usda: read-only (mode 0444" in capsys.readouterr().err
    assert (
        _author(
            "slot",
            tote,
            "--prim",
            "/Tote",
            "--name",
            "left_edge",
            "--up-range",
            "0.1",
            "--in-place",
        )
        == 2
    )
    assert "tote.usda: read-only (mode 0444" in capsys.readouterr().err
    assert _files(tmp_path) == before
    # A read-only asset still takes edits in a layer of their own: it is only read.
    fresh = tmp_path / "fresh.usda"
    assert (
        _author("slot", tote, "--prim", "/Tote", "--name", "front", *FRONT, "--layer", fresh) == 0
    )
    assert tote.read_bytes() == before["tote.usda"] and fresh.exists()


def test_in_place_keeps_mode_and_leading_comments_and_warns_about_others(tote, tmp_path, capsys):
    tote.write_text(
        tote.read_text().replace("    def Mesh", "    # a comment inside\n    def Mesh")
    )
    tote.chmod(0o640)
    inode = tote.stat().st_ino
    assert (
        _author(
            "slot",
            tote,
            "--prim",
            "/Tote",
            "--name",
            "left_edge",
            "--up-range",
            "0.1",
            "--in-place",
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert out == f"wrote {tote}: changed slot 'left_edge' on </Tote>\n"
    assert "1 comment(s) after the leading comment block were not kept" in err
    assert "GS.008" not in err  # the group still has its two members
    text = tote.read_text()
    assert text.startswith("#usda 1.0\n# Licence: the tote's own header.\n")
    assert "gripperSlot:left_edge:upRange = 0.1" in text
    assert stat.S_IMODE(tote.stat().st_mode) == 0o640 and tote.stat().st_ino != inode  # renamed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tote.usda"]  # no temp file left


def test_in_place_refuses_an_input_changed_underneath(tote, capsys, monkeypatch):
    import usdgrip.authoring

    author_edit = usdgrip.authoring.author_edit

    def author_while_another_process_appends(*args, **kwargs):
        verdict = author_edit(*args, **kwargs)
        with open(tote, "a") as stream:
            stream.write("\n# appended by another program\n")
        return verdict

    monkeypatch.setattr(usdgrip.authoring, "author_edit", author_while_another_process_appends)
    assert (
        _author(
            "slot",
            tote,
            "--prim",
            "/Tote",
            "--name",
            "left_edge",
            "--up-range",
            "0.1",
            "--in-place",
        )
        == 2
    )
    out, err = capsys.readouterr()
    assert f"{tote}: changed since usdgrip read it" in err and len(err.splitlines()) == 1
    assert not out and tote.read_text().endswith("# appended by another program\n")
    assert "upRange = 0.1" not in tote.read_text()


def test_output_goes_elsewhere_reanchored_and_refuses_the_input(tote, tmp_path, capsys):
    (tmp_path / "base.usda").write_text("#usda 1.0\n")
    tote.write_text(
        tote.read_text().replace("    upAxis", "    subLayers = [@./base.usda@]\n    upAxis", 1)
    )
    before = tote.read_bytes()
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "tote.usda"
    assert _author("slot", tote, "--prim", "/Tote", "--name", "front", *FRONT, "-o", out) == 0
    printed = capsys.readouterr().out
    assert "moved:   @./base.usda@ -> @../base.usda@" in printed and f"wrote {out}" in printed
    assert tote.read_bytes() == before
    written = Usd.Stage.Open(str(out))
    assert "front" in list_slot_instances(written.GetPrimAtPath("/Tote"))
    assert _author("slot", tote, "--prim", "/Tote", "--name", "front", *FRONT, "-o", tote) == 2
    assert "is the input file" in capsys.readouterr().err
    assert _author("slot", tote, "--prim", "/Tote", "--name", "front", *FRONT, "-o", "-") == 0
    out_text, err = capsys.readouterr()
    assert out_text.startswith("#usda 1.0\n# Licence") and "gripperSlot:front:center" in out_text
    assert "wrote -" in err  # the status line leaves standard output to the layer


def test_dry_run_prints_the_layer_and_writes_nothing(tote, tmp_path, capsys):
    before = _files(tmp_path)
    edits = tmp_path / "e.usda"
    assert (
        _author(
            "slot",
            tote,
            "--prim",
            "/Tote",
            "--name",
            "front",
            *FRONT,
            "--layer",
            edits,
            "--dry-run",
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert out.startswith("#usda 1.0\n") and "subLayers = [\n        @./tote.usda@" in out
    assert 'over "Tote"' in out and "gripperSlot:front:upRange = 0.2" in out
    assert "left_edge" not in out  # only the new opinions
    assert f"dry run: would write {edits}: added slot 'front'" in err
    assert (
        _author(
            "slot", tote, "--prim", "/Tote", "--name", "front", *FRONT, "--in-place", "--dry-run"
        )
        == 0
    )
    assert "gripperSlot:left_edge:center" in capsys.readouterr().out
    assert _files(tmp_path) == before


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["--center", "1.5,0,0.12"],
            "--center/--up-range: GS.009 slot-misses-object (failure)",
        ),
        (
            ["--center", "nan,0,0.12"],
            "--center: GS.001 slot-axes (failure): slot 'front' (GripperSlotAPI): center is [nan",
        ),
        (["--center", "1e300,0,0"], "GS.009"),
        (["--span", "0,0,1"], "--span: GS.001 slot-axes (failure)"),
        (["--forward", "0,0,0"], "--forward: GS.001 slot-axes (failure)"),
        (["--up-range", "-0.1"], "--up-range: GS.002 slot-up-range (failure)"),
        (["--up-range", "inf"], "upRange is inf m"),
        (["--up-range", "1e300"], "expected at most 10 m"),
        (["--angle", "400"], "--angle: GS.003 slot-input-angle (failure)"),
        (["--angle", "nan"], "slotInputAngle is nan"),
    ],
)
def test_refused_values_name_the_option_and_the_rule(tote, tmp_path, capsys, args, words):
    before = _files(tmp_path)
    values = dict(zip(FRONT[::2], FRONT[1::2], strict=True))
    values.update(dict(zip(args[::2], args[1::2], strict=True)))
    flat = [x for kv in values.items() for x in kv]
    assert _author("slot", tote, "--prim", "/Tote", "--name", "front", *flat, "--in-place") == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and err.rstrip().endswith("nothing was written")
    assert err.startswith(f"usdgrip author: {tote}: </Tote> slot 'front': ")
    assert _files(tmp_path) == before


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["slot", "--prim", "/Tote", "--name", "a", "--center", "1,2"], "expected X,Y,Z"),
        (["slot", "--prim", "/Tote", "--name", "a", "--center", "a,b,c"], "expected X,Y,Z"),
        (["slot", "--prim", "/Tote", "--name", "a", "--up-range", "x"], "invalid float value"),
        (["slot", "--prim", "/Tote", "--name", "a", "--lr", "middle"], "invalid choice: 'middle'"),
        (["slot", "--prim", "/Nope", "--name", "a", *FRONT], "no object prim at </Nope>"),
        (["slot", "--prim", "Tote", "--name", "a", *FRONT], "object path is 'Tote'"),
        (["slot", "--prim", "/Tote", "--name", "1a", *FRONT], "GS.005 slot-instance-name"),
        (["slot", "--prim", "/Tote", "--name", "center", *FRONT], "is reserved"),
        (
            ["slot", "--prim", "/Tote", "--name", "bad\udcff", *FRONT],
            "--name 'bad\\xff': not valid UTF-8",
        ),
        (
            ["slot", "--prim", "/To\udcffte", "--name", "a", *FRONT],
            "--prim '/To\\xffte': not valid",
        ),
        (
            ["slot", "--prim", "/Tote", "--name", "a", "--group", "g\udcff", *FRONT],
            "--group 'g\\xff'",
        ),
        (
            ["slot", "--prim", "/Tote", "--name", "new", "--up-range", "0.1"],
            "a new slot needs --center, --forward, --span",
        ),
        (
            ["slot", "--prim", "/Tote", "--name", "left_edge", "--remove", "--up-range", "1"],
            "--remove takes no values",
        ),
        (
            ["slot", "--prim", "/Tote", "--name", "nope", "--remove"],
            "no such GripperSlotAPI instance",
        ),
        (
            ["site", "--prim", "/Tote/x", "--grip-line", "0,1,0"],
            "--grip-line and --pad-width go together",
        ),
        (["site", "--prim", "/Nope/tcp", "--max-opening", "0.05"], "no site prim at </Nope/tcp>"),
        (
            ["line", "--prim", "/Tote", "--name", "grasp_identifier_01", "--p0", "0,0,0"],
            "a new grasp line needs p0 and p1",
        ),
        (
            ["line", "--prim", "/Tote", "--name", "bad name", "--p0", "0,0,0", "--p1", "1,0,0"],
            "is not a USD identifier",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(tote, tmp_path, capsys, args, words):
    before = _files(tmp_path)
    assert _author(args[0], tote, *args[1:], "--in-place") == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert _files(tmp_path) == before


def test_an_unreadable_input_is_refused(tmp_path, capsys):
    bad = tmp_path / "bad\udcff.usda"
    bad.write_text("#usda 1.0\n")
    assert _author("slot", bad, "--prim", "/A", "--name", "a", "--in-place") == 2
    assert "the file name is not valid UTF-8" in capsys.readouterr().err
    fifo = tmp_path / "in.usda"
    os.mkfifo(fifo)
    assert _author("slot", fifo, "--prim", "/A", "--name", "a", "--in-place") == 2
    assert "Traceback" not in capsys.readouterr().err


def test_an_instance_proxy_is_refused(tmp_path, capsys):
    path = tmp_path / "inst.usda"
    path.write_text(
        '#usda 1.0\ndef Xform "Proto"\n{\n    def Cube "body"\n    {\n    }\n}\n'
        'def Xform "Inst" (\n    instanceable = true\n    prepend references = </Proto>\n)\n{\n}\n'
    )
    assert _author("slot", path, "--prim", "/Inst/body", "--name", "a", *FRONT, "--in-place") == 2
    assert "is an instance proxy" in capsys.readouterr().err


def test_world_frame_values_land_in_the_objects_frame(tote, capsys):
    # The tote sits at x = 0.6: its front wall centre is (0.6, -0.145, 0.12) in the world.
    world = [
        "--center",
        "0.6,-0.145,0.12",
        "--forward",
        "0,0,-5",
        "--span",
        "0,1,0",
        "--up-range",
        "0.2",
    ]
    assert (
        _author(
            "slot",
            tote,
            "--prim",
            "/Tote",
            "--name",
            "front",
            *world,
            "--frame",
            "world",
            "--in-place",
        )
        == 0
    )
    stage = Usd.Stage.Open(str(tote))
    slot = read_gripper_slots(stage.GetPrimAtPath("/Tote"), ["front"])[0]
    assert tuple(slot.center_local) == pytest.approx((0, -0.145, 0.12))
    assert tuple(slot.forward_local) == pytest.approx((0, 0, -1))  # normalised
    assert _author("slot", tote, "--prim", "/Tote", "--name", "far", *world, "--in-place") == 2
    assert "GS.009" in capsys.readouterr().err  # the same numbers in the object's frame miss it


def test_site_and_line_through_the_cli(tmp_path, capsys):
    gripper = tmp_path / "gripper.usda"
    shutil.copy(EXAMPLES / "gripper.usda", gripper)
    edits = tmp_path / "g.edits.usda"
    site = ["--prim", "/Gripper/tcp2", "--define", "--max-opening", "0.05", "--forward", "0,0,1"]
    assert (
        _author(
            "site",
            gripper,
            *site,
            "--grip-line",
            "0,1,0",
            "--pad-width",
            "0.01",
            "--payload",
            "2",
            "--grip-force",
            "40",
            "--layer",
            edits,
        )
        == 0
    )
    stage = Usd.Stage.Open(str(edits))
    assert validate(stage).ok
    grip = stage.GetPrimAtPath("/Gripper/tcp2/gripper_grip_line").GetAttribute("points").Get()
    assert [tuple(p) for p in grip] == [pytest.approx((0, -0.005, 0)), pytest.approx((0, 0.005, 0))]
    capsys.readouterr()
    assert (
        _author("site", gripper, "--prim", "/Gripper/tcp", "--payload", "0", "--layer", edits) == 2
    )
    assert "--payload: GR.010 gripper-max-payload (warning)" in capsys.readouterr().err
    assert (
        _author(
            "site",
            gripper,
            "--prim",
            "/Gripper/tcp3",
            "--define",
            "--max-opening",
            "0.05",
            "--layer",
            edits,
        )
        == 2
    )
    err = capsys.readouterr().err
    assert (
        "--forward: GR.002 gripper-forward-axis (failure)" in err
        and "--grip-line/--pad-width: GR.003" in err
    )
    prop = tmp_path / "prop.usda"
    shutil.copy(EXAMPLES / "graspable_prop.usda", prop)
    line = [
        "--prim",
        "/Block",
        "--name",
        "grasp_identifier_03",
        "--p0=-0.04,0,0.02",
        "--p1",
        "0.04,0,0.02",
    ]
    assert _author("line", prop, *line, "--in-place") == 0
    assert "added grasp line </Block/grasp_identifier_03>" in capsys.readouterr().out
    assert not [i for i in validate(str(prop)).issues if "grasp_identifier_03" in i.prim]
    assert (
        _author(
            "line",
            prop,
            "--prim",
            "/Block",
            "--name",
            "grasp_identifier_02",
            "--remove",
            "--in-place",
        )
        == 0
    )
    assert validate(str(prop)).ok  # the line that missed the block is gone
    assert (
        _author(
            "line",
            prop,
            "--prim",
            "/Block",
            "--name",
            "grasp_identifier_04",
            "--p0",
            "0,0.3,0",
            "--p1",
            "0,0.4,0",
            "--in-place",
        )
        == 2
    )
    assert "--p0/--p1: GP.001 grasp-line-misses-object (failure)" in capsys.readouterr().err
