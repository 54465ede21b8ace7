"""Add Gripper Site…, Add Grasp Line…, the edits layer file target, Remove… of a site.

Real Qt widgets offscreen, real usd-core stages in tmp_path, the fake usdviewApi.
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES
from fake_usdviewq.fake_api import FakeUsdviewApi
from pxr import Sdf, Usd
from PySide6 import QtCore, QtWidgets

import usdgrip
from usdgrip.hosts.usdview import usdview_commands as commands
from usdgrip.views import overlays
from usdgrip.views.edit_dialogs import EDIT_LAYERS, RemoveDialog, SlotDialog
from usdgrip.views.panels import ResultsPanel
from usdgrip.views.site_line_dialogs import LineDialog, SiteDialog

LEFT = QtCore.Qt.MouseButton.LeftButton


def _api(qtbot, tmp_path: Path, example: str) -> FakeUsdviewApi:
    path = tmp_path / example
    shutil.copy(EXAMPLES / example, path)
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    window.show()
    return FakeUsdviewApi(Usd.Stage.Open(str(path)), window)


@pytest.fixture
def gripper(qtbot, tmp_path):
    return _api(qtbot, tmp_path, "gripper.usda")


@pytest.fixture
def prop(qtbot, tmp_path):
    return _api(qtbot, tmp_path, "graspable_prop.usda")


@pytest.fixture
def tote(qtbot, tmp_path):
    return _api(qtbot, tmp_path, "tote.usda")


def _type(qtbot, spin, text: str) -> None:
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, QtCore.Qt.Key.Key_Tab)


def _open(api, command, cls, path: str):
    api.select(path)
    command(api)
    dialog = api.qMainWindow.findChild(cls)
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    return dialog


# --- Add Gripper Site… ---------------------------------------------------------------


def test_site_dialog_loads_the_site_previews_and_authors_into_the_root_layer(gripper, qtbot):
    dialog = _open(gripper, commands.add_gripper_site, SiteDialog, "/Gripper/tcp")
    assert dialog.primEdit.text() == "/Gripper/tcp"
    assert dialog.maxOpening.value() == pytest.approx(0.085)
    assert dialog.payload.value() == pytest.approx(5) and dialog.gripForce.value() == 235
    assert [s.value() for s in dialog.forward] == pytest.approx([0, 0, 1])
    assert dialog.padWidth.value() == pytest.approx(0.022)
    assert dialog.okEnabled(), dialog.verdictText()
    preview = overlays.list_overlays(gripper.stage, "preview")
    assert preview == ["/__usdgrip_overlays/preview/site_tcp"]
    _type(qtbot, dialog.maxOpening, "0.1")
    dialog.layerCombo.setCurrentText(EDIT_LAYERS[1])
    qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "ok"), LEFT)
    assert not dialog.isVisible()
    assert overlays.list_overlays(gripper.stage, "preview") == []
    assert overlays.list_overlays(gripper.stage, "sites") == ["/__usdgrip_overlays/sites/site_tcp"]
    tcp = gripper.stage.GetPrimAtPath("/Gripper/tcp")
    assert tcp.GetAttribute("gripper:maxOpening").Get() == pytest.approx(0.1)
    root = gripper.stage.GetRootLayer()
    assert root.GetPrimAtPath(overlays.OVERLAY_ROOT) is None
    assert gripper.status[-1] == (
        "usdgrip: authored </Gripper/tcp> site into the root layer (Save writes it)"
    )


def test_site_dialog_defines_a_new_site_in_the_session_layer(prop, qtbot):
    dialog = _open(prop, commands.add_gripper_site, SiteDialog, "/Block")
    assert dialog.primEdit.text() == "/Block/tcp"  # a new site of its own under the prim
    assert dialog.okEnabled(), dialog.verdictText()
    before = prop.stage.GetRootLayer().ExportToString()
    assert dialog.accept_edit()
    site = prop.stage.GetPrimAtPath("/Block/tcp")
    assert site.GetTypeName() == "Xform" and site.HasAPI("GripperSiteAPI")
    assert site.GetAttribute("gripper:maxPayload").HasAuthoredValue() is False  # not authored
    assert prop.stage.GetRootLayer().ExportToString() == before


def test_site_dialog_on_a_mesh_proposes_a_child_and_refuses_the_mesh_itself(prop, qtbot):
    dialog = _open(prop, commands.add_gripper_site, SiteDialog, "/Block/visuals/body")
    assert dialog.primEdit.text() == "/Block/visuals/body/tcp"
    dialog.primEdit.setText("/Block/visuals/body")
    assert not dialog.okEnabled()
    assert "GR.001" in dialog.verdictText() and "'Mesh'" in dialog.verdictText()
    assert not dialog.accept_edit()
    assert not prop.stage.GetPrimAtPath("/Block/visuals/body").HasAPI("GripperSiteAPI")


@pytest.mark.parametrize("text", ["not a path", "/Block/bad name", "", "relative/tcp"])
def test_site_dialog_bad_prim_path_is_named_and_ok_disabled(prop, text):
    dialog = _open(prop, commands.add_gripper_site, SiteDialog, "/Block")
    dialog.primEdit.setText(text)
    assert not dialog.okEnabled()
    assert dialog.verdictText().startswith("Not authorable: site path is")


def test_site_dialog_zero_and_huge_values_are_refused_by_their_rules(gripper, qtbot):
    dialog = _open(gripper, commands.add_gripper_site, SiteDialog, "/Gripper/tcp")
    _type(qtbot, dialog.maxOpening, "0")
    assert not dialog.okEnabled() and "GR.004" in dialog.verdictText()
    _type(qtbot, dialog.maxOpening, "5")  # above the 2 m the rule allows
    assert not dialog.okEnabled() and "GR.004" in dialog.verdictText()
    _type(qtbot, dialog.maxOpening, "0.085")
    _type(qtbot, dialog.gripForce, "999999999")  # the field takes at most 1e6 N
    assert 1e5 < dialog.gripForce.value() <= 1e6
    assert not dialog.okEnabled() and "GR.012" in dialog.verdictText()
    for spin in dialog.forward:
        _type(qtbot, spin, "0")
    assert not dialog.okEnabled() and "GR.005" in dialog.verdictText()


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400"])
def test_site_dialog_nan_and_inf_never_reach_the_stage(gripper, qtbot, value):
    dialog = _open(gripper, commands.add_gripper_site, SiteDialog, "/Gripper/tcp")
    for spin in (dialog.maxOpening, dialog.payload, dialog.padWidth, *dialog.gripLine):
        _type(qtbot, spin, value)
        assert math.isfinite(spin.value())
    before = gripper.stage.GetRootLayer().ExportToString()
    dialog.layerCombo.setCurrentText(EDIT_LAYERS[1])
    if not dialog.okEnabled():
        assert not dialog.accept_edit()
        assert gripper.stage.GetRootLayer().ExportToString() == before


# --- Add Grasp Line… -----------------------------------------------------------------


def _pick(api, dialog, button, eye, rotation_y) -> None:
    from PySide6.QtTest import QTest

    QTest.mouseClick(button, LEFT)
    assert dialog.isPicking()
    api.look(eye, rotation_y)
    QTest.mouseClick(api.stageView, LEFT, pos=QtCore.QPoint(100, 100))
    assert not dialog.isPicking()


def test_line_dialog_picks_both_points_and_authors_a_line_the_rules_accept(prop, qtbot):
    dialog = _open(prop, commands.add_grasp_line, LineDialog, "/Block")
    assert dialog.nameEdit.text() == "grasp_identifier_03"  # the next free number
    assert not dialog.okEnabled()  # p0 == p1 at the origin
    _pick(prop, dialog, dialog.pick0, (-2.0, 0.0, 0.1), -90.0)  # looking along +X
    assert [s.value() for s in dialog.p0] == pytest.approx([-0.035, 0, 0.1])
    _pick(prop, dialog, dialog.pick1, (2.0, 0.0, 0.1), 90.0)  # looking along -X
    assert [s.value() for s in dialog.p1] == pytest.approx([0.035, 0, 0.1])
    assert dialog.okEnabled(), dialog.verdictText()
    assert overlays.list_overlays(prop.stage, "preview") == [
        "/__usdgrip_overlays/preview/Block_grasp_identifier_03"
    ]
    dialog.layerCombo.setCurrentText(EDIT_LAYERS[1])
    qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "ok"), LEFT)
    line = prop.stage.GetPrimAtPath("/Block/grasp_identifier_03")
    assert list(line.GetAttribute("points").Get()) == [(-0.035, 0, 0.1), (0.035, 0, 0.1)]
    codes = {i.code for i in usdgrip.validate(prop.stage).issues if "_03" in i.message}
    assert not codes & {"GSP.001", "GP.001", "GP.002", "GP.003"}


def test_line_dialog_refuses_a_taken_name_and_a_non_simready_name(prop, qtbot):
    dialog = _open(prop, commands.add_grasp_line, LineDialog, "/Block")
    _type(qtbot, dialog.p0[0], "-0.05")
    _type(qtbot, dialog.p1[0], "0.05")
    assert dialog.okEnabled(), dialog.verdictText()
    dialog.nameEdit.setText("grasp_identifier_01")  # a clash with the example's line
    assert not dialog.okEnabled()
    assert (
        "exists already" in dialog.verdictText() and "grasp_identifier_03" in dialog.verdictText()
    )
    assert not dialog.accept_edit()
    dialog.nameEdit.setText("handle_line")
    assert not dialog.okEnabled() and "GSP.001" in dialog.verdictText()
    dialog.nameEdit.setText("grasp identifier")
    assert not dialog.okEnabled() and "not a USD identifier" in dialog.verdictText()


def test_line_dialog_a_line_beside_the_prop_is_refused_by_gp001(prop, qtbot):
    dialog = _open(prop, commands.add_grasp_line, LineDialog, "/Block")
    values = ("-0.05", "1", "0.1", "0.05", "1", "0.1")
    for spin, text in zip((*dialog.p0, *dialog.p1), values, strict=True):
        _type(qtbot, spin, text)
    assert not dialog.okEnabled() and "GP.001" in dialog.verdictText()


def test_line_dialog_on_a_selected_line_edits_it(prop, qtbot):
    dialog = _open(prop, commands.add_grasp_line, LineDialog, "/Block/grasp_identifier_01")
    assert dialog.nameEdit.text() == "grasp_identifier_01" and dialog.nameEdit.isReadOnly()
    assert [s.value() for s in dialog.p0] == pytest.approx([-0.05, 0, 0.1])
    _type(qtbot, dialog.p0[2], "0.09")
    _type(qtbot, dialog.p1[2], "0.09")
    assert dialog.okEnabled(), dialog.verdictText()
    assert dialog.accept_edit()
    points = prop.stage.GetPrimAtPath("/Block/grasp_identifier_01").GetAttribute("points").Get()
    assert points[0][2] == pytest.approx(0.09)


def test_line_dialog_pick_beside_the_prop_is_not_used(prop, qtbot):
    dialog = _open(prop, commands.add_grasp_line, LineDialog, "/Block")
    _pick(prop, dialog, dialog.pick0, (-2.0, 3.0, 0.1), -90.0)
    assert "Pick not used" in dialog.verdictText()
    assert [s.value() for s in dialog.p0] == [0, 0, 0]


# --- the edits layer file ------------------------------------------------------------


def _slot_into_edits(api, qtbot, edits: Path) -> SlotDialog:
    api.select("/Tote")
    commands.add_slot(api)
    dialog = api.qMainWindow.findChild(SlotDialog)
    _type(qtbot, dialog.center[1], "0.145")
    _type(qtbot, dialog.center[2], "0.12")
    dialog.layerChoice.setEditLayerPath(str(edits))
    return dialog


def test_edit_layer_file_holds_only_the_new_opinions_and_save_writes_it(tote, qtbot, capsys):
    from usdgrip.cli import main

    asset = Path(tote.stage.GetRootLayer().realPath)
    before = asset.read_bytes()
    edits = asset.with_name("tote.edits.usda")
    dialog = _slot_into_edits(tote, qtbot, edits)
    assert dialog.okEnabled(), dialog.verdictText()
    qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "ok"), LEFT)
    assert tote.status[-1] == (
        "usdgrip: authored </Tote> slot 'slot1' into the edits layer file tote.edits.usda "
        "(Save writes it)"
    )
    assert not tote.stage.GetRootLayer().dirty and asset.read_bytes() == before
    names = [s.name for s in usdgrip.read_gripper_slots(tote.stage.GetPrimAtPath("/Tote"))]
    assert "slot1" in names  # the viewer shows it
    panel = tote.qMainWindow.findChild(ResultsPanel)
    combo = panel.findChild(QtWidgets.QComboBox, "targetLayer")
    assert combo.currentText() == "Edit layer: tote.edits.usda"
    save = panel.findChild(QtWidgets.QPushButton, "save")
    assert save.isVisible() and save.isEnabled()
    assert not edits.exists()
    qtbot.mouseClick(save, LEFT)
    assert tote.status[-1] == f"usdgrip: saved {edits}"
    text = edits.read_text()
    assert "@./tote.usda@" in text and "slot1" in text and "left_edge" not in text
    assert "__usdgrip" not in text and asset.read_bytes() == before
    capsys.readouterr()
    assert main(["info", str(edits)]) == 0
    assert "slot1" in capsys.readouterr().out
    # a second slot extends the same file
    dialog = _slot_into_edits(tote, qtbot, edits)
    dialog.nameEdit.setText("slot2")
    assert dialog.accept_edit(), dialog.verdictText()
    assert panel.saveRootLayer()
    text = edits.read_text()
    assert "slot1" in text and "slot2" in text and text.count("subLayers") == 1


def test_an_existing_edits_file_of_the_asset_is_extended(tote, qtbot, tmp_path):
    asset = Path(tote.stage.GetRootLayer().realPath)
    edits = tmp_path / "mine.usda"
    edits.write_text(
        '#usda 1.0\n(\n    subLayers = [@./tote.usda@]\n)\n\n# my note\nover "Tote" '
        '(\n    doc = "kept"\n)\n{\n}\n'
    )
    dialog = _slot_into_edits(tote, qtbot, edits)
    assert dialog.accept_edit(), dialog.verdictText()
    panel = tote.qMainWindow.findChild(ResultsPanel)
    assert panel.saveRootLayer()
    layer = Sdf.Layer.FindOrOpen(str(edits))
    layer.Reload()
    assert list(layer.subLayerPaths) == ["./tote.usda"]
    assert layer.GetPrimAtPath("/Tote").documentation == "kept"
    assert "slot1" in edits.read_text() and asset.exists()


def test_a_foreign_edits_file_is_refused(tote, qtbot, tmp_path):
    edits = tmp_path / "other.usda"
    edits.write_text("#usda 1.0\n(\n    subLayers = [@./elsewhere.usda@]\n)\n")
    dialog = _slot_into_edits(tote, qtbot, edits)
    assert not dialog.accept_edit()
    assert "sublayers @./elsewhere.usda@, not" in dialog.verdictText()
    assert "slot1" not in edits.read_text()


@pytest.mark.parametrize(
    "kind", ["folder", "fifo", "asset", "usdz", "no-folder", "empty", "garbage", "utf16"]
)
def test_edit_layer_paths_that_cannot_be_one_are_refused(tote, qtbot, tmp_path, kind):
    asset = Path(tote.stage.GetRootLayer().realPath)
    path = {
        "folder": tmp_path / "dir.usda",
        "fifo": tmp_path / "pipe.usda",
        "asset": asset,
        "usdz": tmp_path / "e.usdz",
        "no-folder": tmp_path / "missing" / "e.usda",
        "empty": "",
        "garbage": tmp_path / "garbage.usda",
        "utf16": tmp_path / "utf16.usda",
    }[kind]
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "garbage":
        path.write_bytes(b"#usda 1.0\n(\n    subLayers = [@./tote.usda@\n")
    elif kind == "utf16":
        path.write_bytes("#usda 1.0\n".encode("utf-16"))
    dialog = _slot_into_edits(tote, qtbot, path)
    session = tote.stage.GetSessionLayer()
    assert not dialog.accept_edit()
    words = {
        "folder": "is a folder",
        "fifo": "named pipe",
        "asset": "the input file itself",
        "usdz": "a .usdz package cannot be written",
        "no-folder": "does not exist",
        "empty": "give the edits layer file",
        "garbage": "not a USD layer USD can read",
        "utf16": "not a USD layer USD can read",
    }[kind]
    assert dialog.verdictText().startswith("Not authored:") and words in dialog.verdictText()
    assert list(session.subLayerPaths) == []  # nothing attached
    assert "slot1" not in tote.stage.GetRootLayer().ExportToString()


def test_a_read_only_edits_file_is_refused_on_attach_and_on_save(tote, qtbot, tmp_path):
    edits = tmp_path / "ro.usda"
    dialog = _slot_into_edits(tote, qtbot, edits)
    assert dialog.accept_edit()
    panel = tote.qMainWindow.findChild(ResultsPanel)
    assert panel.saveRootLayer()
    saved = edits.read_bytes()
    edits.chmod(0o444)
    dialog = _slot_into_edits(tote, qtbot, edits)
    dialog.nameEdit.setText("slot2")
    assert dialog.accept_edit()  # attached before it turned read-only: Save refuses
    assert not panel.saveRootLayer()
    assert "read-only" in panel.findChild(QtWidgets.QLabel, "summary").text()
    assert tote.status[-1].startswith("usdgrip: not saved:") and "read-only" in tote.status[-1]
    assert edits.read_bytes() == saved
    # a fresh viewer (another stage) refuses to attach it at all
    other = Usd.Stage.Open(tote.stage.GetRootLayer().realPath, Usd.Stage.LoadAll)
    from usdgrip.views.saving import EditLayerFiles

    with pytest.raises(PermissionError, match="read-only"):
        EditLayerFiles().attach(Usd.Stage.Open(other.GetRootLayer()), edits)


def test_save_refuses_an_edits_file_changed_on_disk(tote, qtbot, tmp_path):
    edits = tmp_path / "e.usda"
    dialog = _slot_into_edits(tote, qtbot, edits)
    assert dialog.accept_edit()
    panel = tote.qMainWindow.findChild(ResultsPanel)
    assert panel.saveRootLayer()
    edits.write_text(edits.read_text() + "\n")  # someone else wrote it
    assert not panel.saveRootLayer()
    assert "changed since usdgrip read it" in tote.status[-1]


# --- Remove… of a site ---------------------------------------------------------------


def test_remove_a_site_from_the_root_layer_and_refuse_it_from_the_session(gripper, qtbot):
    dialog = _open(gripper, commands.remove_authored, RemoveDialog, "/Gripper/tcp")
    labels = [dialog.itemCombo.itemText(i) for i in range(dialog.itemCombo.count())]
    assert labels == ["gripper site /Gripper/tcp"]
    assert not dialog.removeSelected()  # session layer: the site is in the root layer
    assert "the site is authored in" in dialog.verdictText()
    assert gripper.stage.GetPrimAtPath("/Gripper/tcp").HasAPI("GripperSiteAPI")
    dialog.layerCombo.setCurrentText(EDIT_LAYERS[1])
    assert dialog.removeSelected(), dialog.verdictText()
    tcp = gripper.stage.GetPrimAtPath("/Gripper/tcp")
    assert tcp and not tcp.HasAPI("GripperSiteAPI")
    assert not tcp.GetChild("gripper_forward_axis")
    assert usdgrip.find_gripper_sites(gripper.stage) == []
    assert gripper.status[-1].startswith("usdgrip: removed </Gripper/tcp> site from the root")


def test_remove_offers_the_site_of_a_selected_axis_curve(gripper):
    dialog = _open(
        gripper, commands.remove_authored, RemoveDialog, "/Gripper/tcp/gripper_grip_line"
    )
    assert dialog.itemCombo.itemText(0) == "gripper site /Gripper/tcp"


def test_remove_a_selected_grasp_line_into_an_edits_layer_file(prop, tmp_path):
    edits = tmp_path / "lines.usda"
    dialog = _open(prop, commands.remove_authored, RemoveDialog, "/Block/grasp_identifier_02")
    assert dialog.itemCombo.itemText(0) == "grasp line grasp_identifier_02"
    dialog.layerChoice.setEditLayerPath(str(edits))
    assert dialog.removeSelected(), dialog.verdictText()
    line = prop.stage.GetPrimAtPath("/Block/grasp_identifier_02")
    assert not line or not line.IsActive()
    assert "grasp_identifier_02" in prop.stage.GetRootLayer().ExportToString()


def test_menu_lists_the_new_entries_once():
    from conftest import REPO

    text = (REPO / "plugins" / "usdview" / "usdGripUsdview" / "__init__.py").read_text()
    for name in ("addGripperSite", "addGraspLine"):
        assert text.count(f'("{name}"') == 1
        assert hasattr(commands, "".join("_" + c.lower() if c.isupper() else c for c in name))


# --- Suggest Slots…: two hands, the edits layer file -----------------------------------------


def _suggest_dialog(api):
    from usdgrip.views.dialogs import SuggestSlotsDialog

    api.select("/Tote")
    commands.suggest_slots(api)
    dialog = api.qMainWindow.findChild(SuggestSlotsDialog)
    dialog.setGripperAsset(str(EXAMPLES / "gripper.usda"))
    dialog.siteCombo.setCurrentText("/Gripper/tcp")
    dialog.trialsSpin.setValue(1)
    dialog.maxSlotsSpin.setValue(2)
    dialog.tableCheck.setChecked(True)
    return dialog


def test_suggest_hands_needs_a_group_and_group_is_only_for_two_hands(tote):
    dialog = _suggest_dialog(tote)
    assert dialog.handsCombo.currentText() == "1" and not dialog.groupEdit.isEnabled()
    dialog.handsCombo.setCurrentText("2")
    assert dialog.groupEdit.isEnabled()
    dialog.groupEdit.setText("")
    assert not dialog.run()
    assert "needs a group name" in dialog.message()
    dialog.groupEdit.setText("a b")
    assert not dialog.run() and "USD identifier" in dialog.message()


def test_suggest_two_hands_previews_a_left_right_group_and_authors_it_into_an_edits_file(
    tote, qtbot, tmp_path
):
    dialog = _suggest_dialog(tote)
    dialog.handsCombo.setCurrentText("2")
    dialog.groupEdit.setText("lift")
    dialog.candidatesSpin.setValue(60)
    qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "run"), LEFT)
    qtbot.waitUntil(lambda: not dialog.isRunning(), timeout=240000)
    found = dialog.found
    assert found is not None and len(found.slots) == 2, dialog.message()
    assert sorted((s.lr, s.group) for s in found.slots) == [("left", "lift"), ("right", "lift")]
    assert len(overlays.list_overlays(tote.stage, "preview")) == 2
    edits = tmp_path / "tote.lift.usda"
    dialog.layerChoice.setEditLayerPath(str(edits))
    assert dialog.authorSuggestions(), dialog.message()
    slots = [s for s in usdgrip.read_gripper_slots(tote.stage.GetPrimAtPath("/Tote"))]
    assert sorted((s.lr, s.group) for s in slots if s.group == "lift") == [(0, "lift"), (1, "lift")]
    assert "lift" not in tote.stage.GetRootLayer().ExportToString()
    panel = tote.qMainWindow.findChild(ResultsPanel)
    assert panel.findChild(QtWidgets.QComboBox, "targetLayer").currentText() == (
        "Edit layer: tote.lift.usda"
    )
    assert panel.saveRootLayer()
    assert '"lift"' in edits.read_text() and "@./tote.usda@" in edits.read_text()


# --- a picked overlay stands for what it draws -----------------------------------------


def test_a_picked_slot_overlay_opens_edit_slot_and_remove_on_that_slot(tote):
    commands.show_slots(tote)
    tote.select("/__usdgrip_overlays/slots/Tote_right_edge")
    commands.edit_slot(tote)
    dialog = tote.qMainWindow.findChild(SlotDialog)
    assert dialog.nameEdit.text() == "right_edge"
    tote.select("/__usdgrip_overlays/slots/Tote_right_edge")
    commands.remove_authored(tote)
    remove = tote.qMainWindow.findChild(RemoveDialog)
    assert remove.itemCombo.currentText() == "slot right_edge"


def test_a_picked_grasp_line_overlay_opens_remove_on_that_line(prop):
    commands.show_slots(prop)
    overlay = overlays.list_overlays(prop.stage, "grasp_lines")[0]
    prop.select(overlay)
    commands.remove_authored(prop)
    remove = prop.qMainWindow.findChild(RemoveDialog)
    assert remove.itemCombo.currentText() == "grasp line grasp_identifier_01"


def test_resolve_overlay_target_of_a_plain_prim_and_an_unknown_overlay(tote):
    assert overlays.resolve_overlay_target(tote.stage, "/Tote") == ("/Tote", None)
    assert overlays.resolve_overlay_target(tote.stage, "/__usdgrip_overlays/nothing") == (
        "/__usdgrip_overlays/nothing",
        None,
    )
