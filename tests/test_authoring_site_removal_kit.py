"""Removing a site (API, CLI), edits layer files attached to a stage, Kit's forms in-process.

Real usd-core stages in tmp_path; Kit's ``omni.ui`` is the stand-in of
``tests/kit_standin`` loaded by file (no Kit here), without ``omni.kit.commands``.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES, REPO
from pxr import Sdf, Usd

import usdgrip
from usdgrip.authoring import SiteEdit, SlotEdit, author_edit
from usdgrip.authoring.edit_layers import attach_edits_layer, detach_edits_layer, save_edits_layer
from usdgrip.cli import main
from usdgrip.hosts.kit import KitGrippers
from usdgrip.views import overlays


def _copy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    shutil.copy(EXAMPLES / name, path)
    return path


def _author(*args: str) -> int:
    try:
        return main(["author", *map(str, args)])
    except SystemExit as exc:
        return int(exc.code)


# --- removing a site ------------------------------------------------------------------


def test_remove_gripper_site_takes_the_api_attributes_and_curves(tmp_path):
    stage = Usd.Stage.Open(str(_copy(tmp_path, "gripper.usda")))
    tcp = stage.GetPrimAtPath("/Gripper/tcp")
    verdict = usdgrip.remove_gripper_site(tcp)
    assert verdict.ok and verdict.items == ()
    assert tcp and not tcp.HasAPI("GripperSiteAPI")
    assert not [a for a in tcp.GetAuthoredAttributes() if a.GetName().startswith("gripper:")]
    assert not tcp.GetChild("gripper_forward_axis") and not tcp.GetChild("gripper_grip_line")
    assert usdgrip.find_gripper_sites(stage) == []
    with pytest.raises(ValueError, match="no gripper site to remove"):
        usdgrip.remove_gripper_site(tcp)


def test_remove_of_a_site_another_layer_holds_is_refused_with_nothing_authored(tmp_path):
    stage = Usd.Stage.Open(str(_copy(tmp_path, "gripper.usda")))
    session = stage.GetSessionLayer()
    with pytest.raises(ValueError, match=r"the site is authored in .*gripper\.usda"):
        author_edit(stage, SiteEdit("/Gripper/tcp", remove=True), layer=session)
    assert session.empty
    with pytest.raises(ValueError, match="remove takes no values"):
        author_edit(stage, SiteEdit("/Gripper/tcp", remove=True, max_opening=0.1))


def test_cli_author_site_remove(tmp_path, capsys):
    path = _copy(tmp_path, "gripper.usda")
    assert _author("site", path, "--prim", "/Gripper/tcp", "--remove", "--in-place") == 0
    assert "removed gripper site </Gripper/tcp>" in capsys.readouterr().out
    assert "GripperSiteAPI" not in path.read_text()
    path = _copy(tmp_path, "gripper.usda")
    before = path.read_bytes()
    edits = tmp_path / "e.usda"
    assert _author("site", path, "--prim", "/Gripper/tcp", "--remove", "--layer", edits) == 2
    assert "the site is authored in" in capsys.readouterr().err
    assert not edits.exists() and path.read_bytes() == before
    assert (
        _author("site", path, "--prim", "/Gripper/tcp", "--remove", "--payload", "3", "--in-place")
        == 2
    )
    assert "--remove takes no values (given: --payload)" in capsys.readouterr().err


# --- edits layer files ----------------------------------------------------------------


def test_attach_author_save_detach(tmp_path):
    asset = _copy(tmp_path, "tote.usda")
    stage = Usd.Stage.Open(str(asset))
    edits = attach_edits_layer(stage, tmp_path / "sub" / ".." / "t.edits.usda")
    assert edits.path == tmp_path / "t.edits.usda" and edits.created
    assert stage.GetSessionLayer().subLayerPaths[0] == edits.layer.identifier
    slot = SlotEdit("/Tote", "rim", center=(0, 0.145, 0.12), forward=(0, 0, -1),
                    span_axis=(1, 0, 0), up_range=0.05)  # fmt: skip
    author_edit(stage, slot, layer=edits.layer)
    assert not stage.GetRootLayer().dirty
    assert "rim" in [s.name for s in usdgrip.read_gripper_slots(stage.GetPrimAtPath("/Tote"))]
    assert save_edits_layer(edits) == []
    layer = Sdf.Layer.OpenAsAnonymous(str(edits.path))
    assert list(layer.subLayerPaths) == ["./tote.usda"]
    assert layer.defaultPrim == "Tote" and layer.pseudoRoot.GetInfo("metersPerUnit") == 1
    assert not edits.created
    opened = Usd.Stage.Open(str(edits.path))
    assert "rim" in [s.name for s in usdgrip.read_gripper_slots(opened.GetPrimAtPath("/Tote"))]
    detach_edits_layer(stage, edits)
    assert list(stage.GetSessionLayer().subLayerPaths) == []
    assert "rim" not in [s.name for s in usdgrip.read_gripper_slots(stage.GetPrimAtPath("/Tote"))]


def test_attach_refuses_a_name_that_is_not_utf8(tmp_path):
    stage = Usd.Stage.Open(str(_copy(tmp_path, "tote.usda")))
    with pytest.raises(ValueError, match="UTF-8"):
        attach_edits_layer(stage, tmp_path / "e\udcff.usda")
    assert list(stage.GetSessionLayer().subLayerPaths) == []


def test_attach_refuses_an_in_memory_stage(tmp_path):
    with pytest.raises(ValueError, match="not opened from a file"):
        attach_edits_layer(Usd.Stage.CreateInMemory(), tmp_path / "e.usda")


def test_save_refuses_a_new_file_someone_else_created_meanwhile(tmp_path):
    stage = Usd.Stage.Open(str(_copy(tmp_path, "tote.usda")))
    edits = attach_edits_layer(stage, tmp_path / "e.usda")
    (tmp_path / "e.usda").write_text("#usda 1.0\n# theirs\n")
    with pytest.raises(FileExistsError, match="created by someone else"):
        save_edits_layer(edits)
    assert (tmp_path / "e.usda").read_text() == "#usda 1.0\n# theirs\n"


def test_save_refuses_a_path_that_became_a_folder(tmp_path):
    stage = Usd.Stage.Open(str(_copy(tmp_path, "tote.usda")))
    edits = attach_edits_layer(stage, tmp_path / "e.usda")
    (tmp_path / "e.usda").mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        save_edits_layer(edits)


# --- Kit's forms, in-process ------------------------------------------------------------


def _standin_ui():
    path = REPO / "tests" / "kit_standin" / "exts" / "omni.ui" / "omni" / "ui" / "__init__.py"
    spec = importlib.util.spec_from_file_location("usdgrip_test_omni_ui", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Context:
    def __init__(self, stage, selected):
        self.stage, self.selected = stage, list(selected)

    def get_stage(self):
        return self.stage

    def get_selection(self):
        return self

    def get_selected_prim_paths(self):
        return self.selected


def test_kit_forms_without_omni_ui_say_how_to_run_the_command(tmp_path):
    lines: list[str] = []
    stage = Usd.Stage.Open(str(_copy(tmp_path, "tote.usda")))
    grippers = KitGrippers(Context(stage, ["/Tote"]), notify=lines.append)
    assert grippers.add_slot() is None
    assert lines == [
        "usdgrip: Add Slot… needs omni.ui (a form); from a script: "
        "omni.kit.commands.execute('UsdgripAddSlot', edit=..., layer='root') (docs/kit.md)"
    ]


def test_kit_form_without_omni_kit_commands_runs_and_undoes_the_command(tmp_path):
    ui = _standin_ui()
    lines: list[str] = []
    stage = Usd.Stage.Open(str(_copy(tmp_path, "tote.usda")))
    grippers = KitGrippers(Context(stage, ["/Tote"]), ui=ui, notify=lines.append)
    assert grippers.add_slot.__doc__
    form = grippers.add_slot()
    form.set_value("center", "0, 0.145, 0.12")
    form.set_value("layer", "root")
    assert form.ok_enabled(), form.message
    assert overlays.list_overlays(stage, "preview") == ["/__usdgrip_overlays/preview/Tote_slot1"]
    before = stage.GetRootLayer().ExportToString()
    assert form.ok() is not None
    assert (
        lines[-1]
        == "usdgrip: </Tote> slot 'slot1' authored into " + stage.GetRootLayer().identifier
    )
    assert not form.window.visible and overlays.list_overlays(stage, "preview") == []
    assert grippers.undo() is True
    assert stage.GetRootLayer().ExportToString() == before
    assert grippers.undo() is False


@pytest.mark.parametrize(
    ("key", "text", "words"),
    [
        ("up_range", "nan", "GS.002"),
        ("up_range", "1e400", "GS.002"),
        ("up_range", "lots", "Up range: 'lots' is not a number"),
        ("center", "0, 0, 0, 0", "Centre: '0, 0, 0, 0' is not x, y, z"),
        ("name", "bad name", "GS.005"),
        ("lr", "middle", "GS.004"),
    ],
)
def test_kit_form_refuses_hostile_fields(tmp_path, key, text, words):
    ui = _standin_ui()
    stage = Usd.Stage.Open(str(_copy(tmp_path, "tote.usda")))
    grippers = KitGrippers(Context(stage, ["/Tote"]), ui=ui, notify=lambda _: None)
    form = grippers.add_slot()
    form.set_value("center", "0, 0.145, 0.12")
    assert form.ok_enabled(), form.message
    form.set_value(key, text)
    assert not form.ok_enabled() and words in form.message
    before = stage.GetRootLayer().ExportToString()
    assert form.ok() is None
    assert stage.GetRootLayer().ExportToString() == before


def test_kit_edit_slot_form_renamed_to_a_new_slot_is_refused_with_the_reason(tmp_path):
    ui = _standin_ui()
    stage = Usd.Stage.Open(str(_copy(tmp_path, "tote.usda")))
    grippers = KitGrippers(Context(stage, ["/Tote"]), ui=ui, notify=lambda _: None)
    form = grippers.edit_slot()
    assert form.value("name") == "left_edge"
    form.set_value("name", "brand_new")
    form.set_value("layer", "root")
    before = stage.GetRootLayer().ExportToString()
    assert form.ok() is None
    assert "does not exist; use UsdgripAddSlot" in form.message
    assert stage.GetRootLayer().ExportToString() == before


def test_kit_edit_slot_and_remove_on_a_picked_slot_overlay(tmp_path):
    from usdgrip.views import actions

    ui = _standin_ui()
    stage = Usd.Stage.Open(str(_copy(tmp_path, "tote.usda")))
    actions.show_slot_overlays(stage, ["/Tote"])
    picked = "/__usdgrip_overlays/slots/Tote_right_edge"
    grippers = KitGrippers(Context(stage, [picked]), ui=ui, notify=lambda _: None)
    assert grippers.edit_slot().value("name") == "right_edge"
    assert grippers.remove_authored().value("item") == "slot right_edge"
