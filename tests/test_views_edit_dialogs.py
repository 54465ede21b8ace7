"""Add Slot… / Edit Slot…: real widgets offscreen, the rules' verdict, preview, authoring."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES
from fake_usdviewq.fake_api import FakeUsdviewApi
from pxr import Usd
from PySide6 import QtCore, QtWidgets

import usdgrip
from usdgrip.hosts.usdview import usdview_commands as commands
from usdgrip.views import overlays
from usdgrip.views.edit_dialogs import EDIT_LAYERS, SlotDialog

LEFT = QtCore.Qt.MouseButton.LeftButton


@pytest.fixture
def api(qtbot, tmp_path):
    tote = tmp_path / "tote.usda"
    shutil.copy(EXAMPLES / "tote.usda", tote)
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    window.show()
    return FakeUsdviewApi(Usd.Stage.Open(str(tote)), window)


def _type(qtbot, spin, text: str) -> None:
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, QtCore.Qt.Key.Key_Tab)


def _open_add(api) -> SlotDialog:
    api.select("/Tote")
    commands.add_slot(api)
    dialog = api.qMainWindow.findChild(SlotDialog)
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    return dialog


def test_add_slot_previews_checks_and_authors_into_the_root_layer(api, qtbot):
    dialog = _open_add(api)
    ok = dialog.findChild(QtWidgets.QPushButton, "ok")
    # the default centre (the origin, inside the tote's floor) is accepted? move it far off first
    _type(qtbot, dialog.center[2], "5")
    assert not ok.isEnabled()
    assert "GS.009" in dialog.verdictText()
    _type(qtbot, dialog.center[0], "0")
    _type(qtbot, dialog.center[1], "0.145")
    _type(qtbot, dialog.center[2], "0.12")
    _type(qtbot, dialog.upRange, "0.1")
    assert ok.isEnabled(), dialog.verdictText()
    preview = overlays.list_overlays(api.stage, "preview")
    assert len(preview) == 1
    root = api.stage.GetRootLayer()
    assert root.GetPrimAtPath(overlays.OVERLAY_ROOT) is None  # overlays never in the root layer
    dialog.layerCombo.setCurrentText(EDIT_LAYERS[1])
    qtbot.mouseClick(ok, LEFT)
    assert not dialog.isVisible()
    assert overlays.list_overlays(api.stage, "preview") == []
    assert root.GetPrimAtPath(overlays.OVERLAY_ROOT) is None
    slots = usdgrip.read_gripper_slots(api.stage.GetPrimAtPath("/Tote"))
    new = [s for s in slots if s.name == "slot1"]
    assert len(new) == 1 and new[0].up_range == pytest.approx(0.1)
    assert "slot1" in root.ExportToString()


def test_session_target_leaves_the_root_layer_untouched(api, qtbot):
    dialog = _open_add(api)
    _type(qtbot, dialog.center[1], "0.145")
    _type(qtbot, dialog.center[2], "0.12")
    before = api.stage.GetRootLayer().ExportToString()
    assert dialog.layerCombo.currentText() == EDIT_LAYERS[0]
    assert dialog.accept_edit(), dialog.verdictText()
    assert api.stage.GetRootLayer().ExportToString() == before
    assert "slot1" in api.stage.GetSessionLayer().ExportToString()


def test_refused_name_keeps_ok_disabled_and_shows_the_rule(api, qtbot):
    dialog = _open_add(api)
    dialog.nameEdit.setText("bad name!")
    assert not dialog.okEnabled()
    assert dialog.verdictText()
    assert not dialog.accept_edit()
    assert "bad name" not in api.stage.GetRootLayer().ExportToString()


def test_edit_slot_loads_the_authored_values(api, qtbot):
    api.select("/Tote")
    commands.edit_slot(api)
    dialog = api.qMainWindow.findChild(SlotDialog)
    assert dialog.nameEdit.text() == "left_edge" and dialog.nameEdit.isReadOnly()
    assert [s.value() for s in dialog.center] == pytest.approx([-0.195, 0, 0.12])
    assert dialog.upRange.value() == pytest.approx(0.2)
    assert dialog.lrCombo.currentText() == "left" and dialog.groupEdit.text() == "carry"
    assert dialog.okEnabled(), dialog.verdictText()
    _type(qtbot, dialog.upRange, "0.15")
    dialog.layerCombo.setCurrentText(EDIT_LAYERS[1])
    assert dialog.accept_edit()
    attr = api.stage.GetPrimAtPath("/Tote").GetAttribute("gripperSlot:left_edge:upRange")
    assert attr.Get() == pytest.approx(0.15)


@pytest.mark.parametrize("value", ["nan", "inf", "-1e9", "1e400"])
def test_hostile_centre_never_authors(api, qtbot, value):
    dialog = _open_add(api)
    _type(qtbot, dialog.center[0], value)
    x = dialog.center[0].value()
    assert math.isfinite(x)  # the spin box never holds NaN/inf
    if abs(x) > 1:  # far off the tote: GS.009 refuses it
        assert not dialog.okEnabled() and "GS.009" in dialog.verdictText()
        before = api.stage.GetRootLayer().ExportToString()
        dialog.layerCombo.setCurrentText(EDIT_LAYERS[1])
        assert not dialog.accept_edit()
        assert api.stage.GetRootLayer().ExportToString() == before


def test_add_slot_without_selection_says_so(api):
    commands.add_slot(api)  # nothing selected
    assert api.qMainWindow.findChild(SlotDialog) is None
    assert api.status == ["usdgrip: select the object prim to add a slot to."]


def test_pick_on_surface_sets_the_centre_and_aligns_forward(api, qtbot):
    dialog = _open_add(api)
    dialog.setForward((1.0, 0.0, 0.0))
    qtbot.mouseClick(dialog.pickButton, LEFT)
    assert dialog.isPicking()
    api.look((2.0, 0.0, 0.08), 90.0)  # looking along -X at the right wall's outer face (+x)
    qtbot.mouseClick(api.stageView, LEFT, pos=QtCore.QPoint(100, 100))
    assert not dialog.isPicking()
    assert [s.value() for s in dialog.center] == pytest.approx([0.2, 0.0, 0.08])
    assert [s.value() for s in dialog.forward] == pytest.approx([-1.0, 0.0, 0.0])
    # a click without the button pressed is an ordinary click
    qtbot.mouseClick(api.stageView, LEFT, pos=QtCore.QPoint(60, 100))
    assert [s.value() for s in dialog.center] == pytest.approx([0.2, 0.0, 0.08])


def test_pick_without_align_keeps_forward(api, qtbot):
    dialog = _open_add(api)
    dialog.alignCheck.setChecked(False)
    qtbot.mouseClick(dialog.pickButton, LEFT)
    api.look((0.6, 0.145, 1.0))  # looking down at the back wall's top
    qtbot.mouseClick(api.stageView, LEFT, pos=QtCore.QPoint(100, 100))
    assert [s.value() for s in dialog.center] == pytest.approx([0.0, 0.145, 0.15]), (
        dialog.verdictText()
    )
    assert [s.value() for s in dialog.forward] == pytest.approx([0.0, 0.0, -1.0])


def test_a_click_beside_the_object_is_not_used(api, qtbot):
    dialog = _open_add(api)
    before = [s.value() for s in dialog.center]
    qtbot.mouseClick(dialog.pickButton, LEFT)
    api.look((5.0, 5.0, 1.0))
    qtbot.mouseClick(api.stageView, LEFT, pos=QtCore.QPoint(100, 100))
    assert "Pick not used" in dialog.verdictText() and "missed" in dialog.verdictText()
    assert [s.value() for s in dialog.center] == before


def test_alt_click_moves_the_camera_and_is_no_pick(api, qtbot):
    dialog = _open_add(api)
    qtbot.mouseClick(dialog.pickButton, LEFT)
    api.look((0.6, 0.145, 1.0))
    alt = QtCore.Qt.KeyboardModifier.AltModifier
    qtbot.mouseClick(api.stageView, LEFT, alt, QtCore.QPoint(100, 100))
    assert dialog.isPicking()


def test_pick_author_save_reopen_info_reads_it(api, qtbot, capsys):
    from usdgrip.cli import main
    from usdgrip.views.panels import ResultsPanel

    path = api.stage.GetRootLayer().realPath
    dialog = _open_add(api)
    dialog.nameEdit.setText("front_rim")
    qtbot.mouseClick(dialog.pickButton, LEFT)
    api.look((0.6, -0.145, 1.0))  # looking down at the front wall's top (+z)
    qtbot.mouseClick(api.stageView, LEFT, pos=QtCore.QPoint(100, 100))
    dialog.layerCombo.setCurrentText(EDIT_LAYERS[1])
    assert dialog.okEnabled(), dialog.verdictText()
    qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "ok"), LEFT)
    assert api.status[-1] == (
        "usdgrip: authored </Tote> slot 'front_rim' into the root layer (Save writes it)"
    )
    panel = api.qMainWindow.findChild(ResultsPanel)
    save = panel.findChild(QtWidgets.QPushButton, "save")
    assert save.isEnabled()
    qtbot.mouseClick(save, LEFT)
    assert api.status[-1] == f"usdgrip: saved {path}"
    text = Path(path).read_text()
    assert "front_rim" in text and "__usdgrip" not in text
    capsys.readouterr()
    assert main(["info", path]) == 0
    assert "front_rim" in capsys.readouterr().out


@pytest.fixture
def pan_api(qtbot, tmp_path):
    pan = tmp_path / "pan.usda"
    shutil.copy(EXAMPLES / "pan.usda", pan)
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    window.show()
    return FakeUsdviewApi(Usd.Stage.Open(str(pan)), window)


def _suggest_dialog(api):
    from usdgrip.views.dialogs import SuggestSlotsDialog

    api.select("/Pan")
    commands.suggest_slots(api)
    dialog = api.qMainWindow.findChild(SuggestSlotsDialog)
    dialog.setGripperAsset(str(EXAMPLES / "gripper.usda"))
    dialog.siteCombo.setCurrentText("/Gripper/tcp")
    dialog.trialsSpin.setValue(1)
    dialog.maxSlotsSpin.setValue(2)
    dialog.tableCheck.setChecked(True)
    return dialog


def test_suggest_slots_runs_in_a_worker_previews_then_authors(pan_api, qtbot):
    api = pan_api
    dialog = _suggest_dialog(api)
    assert dialog.objectCombo.currentText() == "/Pan" and not dialog.isModal()
    author = dialog.findChild(QtWidgets.QPushButton, "author")
    assert not author.isEnabled()
    qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "run"), LEFT)
    qtbot.waitUntil(lambda: not dialog.isRunning(), timeout=120000)
    found = dialog.found
    assert found is not None and found.slots, dialog.message()
    names = [s.name for s in found.slots]
    preview = overlays.list_overlays(api.stage, "preview")
    assert preview == [f"/__usdgrip_overlays/preview/Pan_{n}" for n in names]
    root = api.stage.GetRootLayer()
    # previewed, not authored (the pan's mesh prim is named "handle", as its slots now are)
    assert not any(f"GripperSlotAPI:{n}" in root.ExportToString() for n in names)
    dialog.layerCombo.setCurrentText(EDIT_LAYERS[1])
    assert author.isEnabled()
    qtbot.mouseClick(author, LEFT)
    assert overlays.list_overlays(api.stage, "preview") == []
    slots = usdgrip.read_gripper_slots(api.stage.GetPrimAtPath("/Pan"))
    assert sorted(s.name for s in slots) == sorted(names)
    assert root.GetPrimAtPath(overlays.OVERLAY_ROOT) is None


def test_suggest_slots_cancel_authors_nothing(pan_api, qtbot):
    api = pan_api
    dialog = _suggest_dialog(api)
    before = api.stage.GetRootLayer().ExportToString()
    with qtbot.waitSignal(dialog.runner.cancelled, timeout=120000):
        qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "run"), LEFT)
        qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "cancel"), LEFT)
    assert dialog.found is None and "Cancelled" in dialog.message()
    assert api.stage.GetRootLayer().ExportToString() == before
    assert overlays.list_overlays(api.stage, "preview") == []


def test_suggest_slots_needs_a_gripper_site(pan_api, qtbot):
    dialog = _suggest_dialog(pan_api)
    dialog.siteCombo.clear()
    assert not dialog.run()
    assert dialog.message() == "Choose a gripper asset with a gripper site."


def test_remove_a_slot_from_the_root_layer(api, qtbot):
    from usdgrip.views.edit_dialogs import RemoveDialog

    api.select("/Tote")
    commands.remove_authored(api)
    dialog = api.qMainWindow.findChild(RemoveDialog)
    assert [dialog.itemCombo.itemText(i) for i in range(dialog.itemCombo.count())] == [
        "slot left_edge",
        "slot right_edge",
    ]
    dialog.layerCombo.setCurrentText(EDIT_LAYERS[1])
    qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "remove"), LEFT)
    assert "GS.008" in dialog.verdictText()  # the group 'carry' is left with one member
    names = [s.name for s in usdgrip.read_gripper_slots(api.stage.GetPrimAtPath("/Tote"))]
    assert names == ["right_edge"]
    assert api.status[-1].startswith("usdgrip: removed </Tote> slot 'left_edge' from the root")


def test_remove_a_grasp_line(qtbot, tmp_path):
    from usdgrip.views.edit_dialogs import RemoveDialog

    path = tmp_path / "prop.usda"
    shutil.copy(EXAMPLES / "graspable_prop.usda", path)
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    api = FakeUsdviewApi(Usd.Stage.Open(str(path)), window)
    prim = next(p for p in api.stage.Traverse() if p.GetName().startswith("grasp_identifier"))
    api.select(str(prim.GetPath().GetParentPath()))
    commands.remove_authored(api)
    dialog = window.findChild(RemoveDialog)
    labels = [dialog.itemCombo.itemText(i) for i in range(dialog.itemCombo.count())]
    assert f"grasp line {prim.GetName()}" in labels
    dialog.itemCombo.setCurrentText(f"grasp line {prim.GetName()}")
    assert dialog.removeSelected(), dialog.verdictText()
    after = api.stage.GetPrimAtPath(prim.GetPath())
    assert not after or not after.IsActive(), api.stage.GetSessionLayer().ExportToString()
    assert prim.GetName() in api.stage.GetRootLayer().ExportToString()  # root untouched


def test_remove_on_a_prim_with_nothing_to_remove(api):
    from usdgrip.views.edit_dialogs import RemoveDialog

    api.select("/Tote/body")
    commands.remove_authored(api)
    dialog = api.qMainWindow.findChild(RemoveDialog)
    assert not dialog.findChild(QtWidgets.QPushButton, "remove").isEnabled()
    assert not dialog.removeSelected()


def test_discard_session_edits_drops_tried_slots_and_keeps_overlays(api, qtbot):
    dialog = _open_add(api)
    _type(qtbot, dialog.center[1], "0.145")
    _type(qtbot, dialog.center[2], "0.12")
    assert dialog.accept_edit()  # into the session layer
    commands.show_slots(api)
    assert "slot1" in [s.name for s in usdgrip.read_gripper_slots(api.stage.GetPrimAtPath("/Tote"))]
    commands.discard_session_edits(api)
    names = [s.name for s in usdgrip.read_gripper_slots(api.stage.GetPrimAtPath("/Tote"))]
    assert names == ["left_edge", "right_edge"]
    assert len(overlays.list_overlays(api.stage, "slots")) == 2
    assert api.status[-1] == "usdgrip: discarded the session layer's edits (1 prim(s))"
