"""The Grippers menu commands with a usdviewApi stand-in: no stage, selection, toggle, clear."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from fake_usdviewq.fake_api import FakeUsdviewApi
from pxr import Usd, UsdGeom
from PySide6 import QtGui, QtWidgets

from usdgrip.views import commands, overlays
from usdgrip.views.panels import ResultsPanel
from usdgrip.views.session import GrippersSession

ALL = (
    commands.validate_stage,
    commands.validate_selection,
    commands.show_slots,
    commands.sample_slot_grasps,
    commands.plan_grasps,
    commands.export_grasps,
    commands.clear_overlays,
    commands.toggle_overlays,
)


@pytest.fixture
def api(qtbot):
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    return FakeUsdviewApi(Usd.Stage.Open(str(EXAMPLES / "tote.usda")), window)


@pytest.mark.parametrize("command", ALL, ids=lambda c: c.__name__)
def test_every_command_explains_when_no_stage_is_open(command, qtbot):
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    api = FakeUsdviewApi(None, window)
    command(api)
    assert api.status == ["usdgrip: open a stage first."]
    assert window.findChild(GrippersSession) is None


def test_one_session_per_window(api):
    commands.show_slots(api)
    commands.validate_stage(api)
    commands.clear_overlays(api)
    assert len(api.qMainWindow.findChildren(GrippersSession)) == 1
    assert len(api.qMainWindow.findChildren(ResultsPanel)) == 1


def test_show_slots_without_selection_shows_every_slotted_prim(api):
    commands.show_slots(api)
    assert overlays.list_overlays(api.stage, "slots") == [
        "/__usdgrip_overlays/slots/Tote_left_edge",
        "/__usdgrip_overlays/slots/Tote_right_edge",
    ]
    assert api.status[-1] == "usdgrip: 2 slot(s) shown on 1 prim(s)"


def test_show_slots_on_a_prim_without_slots_draws_nothing(api):
    api.select("/Tote/body")
    commands.show_slots(api)
    assert overlays.list_overlays(api.stage, "slots") == []
    assert api.status[-1] == "usdgrip: 0 slot(s) shown on 0 prim(s)"


def test_show_slots_includes_prims_under_the_selection(qtbot, open_usda):
    stage = open_usda(
        """
        def Xform "World"
        {
            def Xform "A" (prepend apiSchemas = ["GripperSlotAPI:s"])
            {
                point3d gripperSlot:s:center = (0, 0, 0)
                vector3d gripperSlot:s:forward = (0, 0, -1)
                vector3d gripperSlot:s:spanAxis = (1, 0, 0)
                double gripperSlot:s:upRange = 0.1
                double gripperSlot:s:slotInputAngle = 10
            }
        }
        def Xform "Elsewhere" (prepend apiSchemas = ["GripperSlotAPI:s"])
        {
            point3d gripperSlot:s:center = (0, 0, 0)
            vector3d gripperSlot:s:forward = (0, 0, -1)
            vector3d gripperSlot:s:spanAxis = (1, 0, 0)
            double gripperSlot:s:upRange = 0.1
            double gripperSlot:s:slotInputAngle = 10
        }
        """
    )
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    api = FakeUsdviewApi(stage, window)
    api.select("/World")
    commands.show_slots(api)
    assert overlays.list_overlays(stage, "slots") == ["/__usdgrip_overlays/slots/A_s"]


def test_show_slots_skips_a_prim_it_cannot_read_and_says_why(qtbot, open_usda):
    slot = """
            point3d gripperSlot:s:center = {center}
            vector3d gripperSlot:s:forward = (0, 0, -1)
            vector3d gripperSlot:s:spanAxis = (1, 0, 0)
            double gripperSlot:s:upRange = 0.1
    """
    stage = open_usda(
        'def Xform "Good" (prepend apiSchemas = ["GripperSlotAPI:s"])\n{\n'
        + slot.format(center="(0, 0, 0)")
        + '}\ndef Xform "Bad" (prepend apiSchemas = ["GripperSlotAPI:s"])\n{\n'
        + slot.format(center="(0, 0, 0)").replace(
            "point3d gripperSlot:s:center = (0, 0, 0)", 'string gripperSlot:s:center = "x"'
        )
        + "}\n"
    )
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    api = FakeUsdviewApi(stage, window)
    commands.show_slots(api)
    assert overlays.list_overlays(stage, "slots") == ["/__usdgrip_overlays/slots/Good_s"]
    status = api.status[-1]
    assert status.startswith("usdgrip: 1 slot(s) shown on 1 prim(s); 1 skipped: ")
    assert "/Bad" in status and "gripperSlot:s:center" in status


def test_toggle_follows_the_checkable_action(api):
    commands.show_slots(api)
    root = UsdGeom.Imageable(api.stage.GetPrimAtPath("/__usdgrip_overlays"))
    action = QtGui.QAction("Overlays visible", api.qMainWindow)
    action.setObjectName(commands.OVERLAYS_VISIBLE_ACTION)
    action.setCheckable(True)
    action.setChecked(False)
    commands.toggle_overlays(api)
    assert root.ComputeVisibility() == UsdGeom.Tokens.invisible
    commands.show_slots(api)  # new overlays keep the hidden state
    assert root.ComputeVisibility() == UsdGeom.Tokens.invisible
    action.setChecked(True)
    commands.toggle_overlays(api)
    assert root.ComputeVisibility() == UsdGeom.Tokens.inherited


def test_toggle_without_the_action_flips(api):
    commands.show_slots(api)
    root = UsdGeom.Imageable(api.stage.GetPrimAtPath("/__usdgrip_overlays"))
    commands.toggle_overlays(api)
    assert root.ComputeVisibility() == UsdGeom.Tokens.invisible
    commands.toggle_overlays(api)
    assert root.ComputeVisibility() == UsdGeom.Tokens.inherited


def test_export_without_planned_grasps_says_so(api):
    commands.export_grasps(api)
    assert api.status[-1].startswith("usdgrip: nothing to export; run Grippers > Plan Grasps")


def test_clear_removes_overlays_and_forgets_them(api, open_usda):
    commands.show_slots(api)
    commands.clear_overlays(api)
    assert not api.stage.GetPrimAtPath(overlays.OVERLAY_ROOT)
    api.dataModel.stage = Usd.Stage.Open(str(EXAMPLES / "tote.usda"), Usd.Stage.LoadAll)
    assert not api.stage.GetPrimAtPath(overlays.OVERLAY_ROOT), "nothing comes back on reload"
