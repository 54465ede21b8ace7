"""The Grippers menu commands with a usdviewApi stand-in: no stage, selection, toggle, clear."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES
from fake_usdviewq.fake_api import FakeUsdviewApi
from pxr import Usd, UsdGeom
from PySide6 import QtGui, QtWidgets

from usdgrip.hosts.usdview import usdview_commands as commands
from usdgrip.views import overlays
from usdgrip.views.grasp_set import GraspSet
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


PARALLEL_AXES_SLOT = """
def Xform "Good" (prepend apiSchemas = ["GripperSlotAPI:s"])
{
    point3d gripperSlot:s:center = (0, 0, 0)
    vector3d gripperSlot:s:forward = (0, 0, -1)
    vector3d gripperSlot:s:spanAxis = (1, 0, 0)
    double gripperSlot:s:upRange = 0.1
    double gripperSlot:s:slotInputAngle = 10
}
def Xform "Bad" (prepend apiSchemas = ["GripperSlotAPI:left_edge"])
{
    point3d gripperSlot:left_edge:center = (0, 0, 0)
    vector3d gripperSlot:left_edge:forward = (0, 0, -1)
    vector3d gripperSlot:left_edge:spanAxis = (0, 0, 1)
    double gripperSlot:left_edge:upRange = 0.2
    double gripperSlot:left_edge:slotInputAngle = 30
}
"""


def test_show_slots_skips_a_slot_with_parallel_axes_and_draws_the_others(qtbot, open_usda):
    stage = open_usda(PARALLEL_AXES_SLOT)
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    api = FakeUsdviewApi(stage, window)
    commands.show_slots(api)
    assert overlays.list_overlays(stage, "slots") == ["/__usdgrip_overlays/slots/Good_s"]
    assert api.status[-1] == (
        "usdgrip: 1 slot(s) shown on 1 prim(s); 1 skipped: </Bad> slot 'left_edge': forward "
        "and spanAxis are parallel or zero; expected two perpendicular non-zero vectors, so "
        "the slot cannot be drawn."
    )


def test_show_slots_on_the_broken_example_reports_and_raises_nothing(qtbot):
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    api = FakeUsdviewApi(Usd.Stage.Open(str(EXAMPLES / "broken" / "GS.001-slot-axes.usda")), window)
    commands.show_slots(api)
    assert overlays.list_overlays(api.stage, "slots") == []
    assert api.status[-1].startswith("usdgrip: 0 slot(s) shown on 0 prim(s); 1 skipped: </Tote>")


def test_a_reopened_stage_with_a_broken_slot_still_moves_the_panels_and_grasps(qtbot, write_usda):
    good = write_usda(PARALLEL_AXES_SLOT.replace("(0, 0, 1)", "(0, 1, 0)"), "good.usda")
    bad = write_usda(PARALLEL_AXES_SLOT, "bad.usda")
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    api = FakeUsdviewApi(Usd.Stage.Open(str(good)), window)
    commands.show_slots(api)
    commands.validate_stage(api)
    session = window.findChild(GrippersSession)
    session.show_grasps(
        GraspSet(object_path="/Good", poses=np.eye(4)[None], labels=("a",), details=("",))
    )
    assert len(overlays.list_overlays(api.stage, "slots")) == 2
    api.dataModel.stage = Usd.Stage.Open(str(bad))  # File > Reopen Stage after an edit
    panel = window.findChild(ResultsPanel)
    assert panel._stage is api.stage, "the results panel follows the new stage"
    assert "GS.001" in {str(i.code) for i in panel.issues()}
    assert overlays.list_overlays(api.stage, "slots") == ["/__usdgrip_overlays/slots/Good_s"]
    assert overlays.list_overlays(api.stage, "grasps") == ["/__usdgrip_overlays/grasps/g0000"]
    assert session.slot_problems and "parallel" in session.slot_problems[0]


def test_a_failing_rebuild_step_never_stops_the_others(api, monkeypatch):
    commands.show_slots(api)
    commands.validate_stage(api)
    session = api.qMainWindow.findChild(GrippersSession)

    def broken(*_):
        raise ValueError("cannot draw")

    monkeypatch.setattr(overlays, "author_slot_overlays", broken)
    api.dataModel.stage = Usd.Stage.Open(str(EXAMPLES / "tote.usda"), Usd.Stage.LoadAll)
    assert api.qMainWindow.findChild(ResultsPanel)._stage is api.stage
    assert api.status[-1] == "usdgrip: on the reopened stage, slots: cannot draw"
    assert session.slot_prims == ["/Tote"], "kept: a later reopen tries again"


def test_overlays_are_guides_shown_while_overlays_are_and_clear_gives_the_setting_back(api):
    settings = api.dataModel.viewSettings
    commands.show_slots(api)
    root = api.stage.GetPrimAtPath(overlays.OVERLAY_ROOT)
    assert UsdGeom.Imageable(root).ComputePurpose() == UsdGeom.Tokens.guide
    slot = api.stage.GetPrimAtPath(overlays.list_overlays(api.stage, "slots")[0])
    assert UsdGeom.Imageable(slot).ComputePurpose() == UsdGeom.Tokens.guide
    assert settings.displayGuide is True
    commands.show_slots(api)
    assert settings.assignments == [True], "turned on once"
    commands.clear_overlays(api)
    assert settings.displayGuide is False, "back to the user's setting"
    assert settings.assignments == [True, False]


def test_clear_keeps_guides_on_when_the_user_had_them_on_and_refreshes_bounds(api):
    settings = api.dataModel.viewSettings
    settings.displayGuide = True
    commands.show_slots(api)
    commands.clear_overlays(api)
    assert settings.displayGuide is True
    # Assigned again on Clear: usdview recomputes its bounds on every assignment.
    assert settings.assignments == [True, True, True]


def test_clear_leaves_the_stage_bounds_as_they_were(api):
    cache = UsdGeom.BBoxCache(Usd.TimeCode.Default(), [UsdGeom.Tokens.default_])
    before = cache.ComputeWorldBound(api.stage.GetPseudoRoot()).ComputeAlignedRange()
    commands.show_slots(api)
    cache.Clear()
    shown = cache.ComputeWorldBound(api.stage.GetPseudoRoot()).ComputeAlignedRange()
    assert shown == before, "guides stay out of the default-purpose bounds"
    commands.clear_overlays(api)
    cache.Clear()
    assert cache.ComputeWorldBound(api.stage.GetPseudoRoot()).ComputeAlignedRange() == before
