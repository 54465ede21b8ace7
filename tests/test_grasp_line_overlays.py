"""usdview Show Slots draws SimReady grasp vector lines (session layer only)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES
from fake_usdviewq.fake_api import FakeUsdviewApi
from pxr import Usd, UsdGeom
from PySide6 import QtWidgets

from usdgrip.hosts.usdview import usdview_commands as commands
from usdgrip.usd.grasp_lines import find_grasp_lines
from usdgrip.views import overlays
from usdgrip.views.session import GrippersSession


@pytest.fixture
def api(qtbot):
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    return FakeUsdviewApi(Usd.Stage.Open(str(EXAMPLES / "graspable_prop.usda")), window)


def test_show_slots_draws_every_grasp_line_in_the_session_layer(api):
    commands.show_slots(api)
    paths = overlays.list_overlays(api.stage, "grasp_lines")
    assert paths == [
        "/__usdgrip_overlays/grasp_lines/Block_grasp_identifier_01",
        "/__usdgrip_overlays/grasp_lines/Block_grasp_identifier_02",
    ]
    assert api.status[-1] == "usdgrip: 0 slot(s) shown on 0 prim(s), 2 grasp line(s)"
    curve = UsdGeom.BasisCurves(api.stage.GetPrimAtPath(paths[0]))
    points = np.array(curve.GetPointsAttr().Get())
    # p0-p1, then a 1 cm tick across each pad point, perpendicular to the line
    np.testing.assert_allclose(points[:2], [[-0.05, 0, 0.1], [0.05, 0, 0.1]], atol=1e-7)
    for start in (2, 4):
        tick = points[start + 1] - points[start]
        assert np.linalg.norm(tick) == pytest.approx(overlays.PAD_TICK)
        assert abs(np.dot(tick, points[1] - points[0])) < 1e-9
    assert curve.GetPrim().GetCustomData()["usdgripObject"] == "/Block"
    root_layer = api.stage.GetRootLayer()
    assert root_layer.GetPrimAtPath("/__usdgrip_overlays") is None
    assert api.stage.GetSessionLayer().GetPrimAtPath(paths[0]) is not None


def test_selection_limits_the_lines_and_clear_removes_them(api):
    api.select("/Block/grasp_identifier_02")
    commands.show_slots(api)
    assert overlays.list_overlays(api.stage, "grasp_lines") == [
        "/__usdgrip_overlays/grasp_lines/Block_grasp_identifier_02"
    ]
    commands.clear_overlays(api)
    assert overlays.list_overlays(api.stage, "grasp_lines") == []
    session = api.qMainWindow.findChild(GrippersSession)
    assert session.last_slots.grasp_lines is None  # forgotten: a replaced stage redraws nothing


def test_files_without_grasp_lines_keep_their_status(qtbot):
    window = QtWidgets.QMainWindow()
    qtbot.addWidget(window)
    api = FakeUsdviewApi(Usd.Stage.Open(str(EXAMPLES / "tote.usda")), window)
    commands.show_slots(api)
    assert overlays.list_overlays(api.stage, "grasp_lines") == []
    assert api.status[-1] == "usdgrip: 2 slot(s) shown on 1 prim(s)"


def test_unusable_lines_are_not_drawn(open_usda):
    stage = open_usda(
        """
        def Xform "P"
        {
            def BasisCurves "grasp_identifier_a"
            {
                point3f[] points = [(0, 0, 0), (0, 0, 0)]
            }
            def BasisCurves "grasp_identifier_b"
            {
                point3f[] points = [(0, 0, 0), (0, 0, 1)]
            }
        }
        """
    )
    drawn = overlays.author_grasp_line_overlays(stage, find_grasp_lines(stage))
    assert drawn == ["/__usdgrip_overlays/grasp_lines/P_grasp_identifier_b"]


def test_a_replaced_stage_gets_its_grasp_lines_again(api):
    commands.show_slots(api)
    new = Usd.Stage.Open(str(EXAMPLES / "graspable_prop.usda"))
    new.GetSessionLayer().Clear()
    assert overlays.list_overlays(new, "grasp_lines") == []
    api.dataModel.stage = new  # usdview emits signalStageReplaced
    assert len(overlays.list_overlays(new, "grasp_lines")) == 2


def test_no_usable_line_authors_nothing_and_removes_old_lines(open_usda):
    stage = Usd.Stage.Open(str(EXAMPLES / "graspable_prop.usda"))
    assert len(overlays.author_grasp_line_overlays(stage, find_grasp_lines(stage))) == 2
    assert overlays.author_grasp_line_overlays(stage, []) == []
    assert stage.GetSessionLayer().GetPrimAtPath(overlays.GRASP_LINES_SCOPE) is None
    empty = Usd.Stage.Open(str(EXAMPLES / "tote.usda"))
    assert overlays.author_grasp_line_overlays(empty, []) == []
    assert empty.GetSessionLayer().GetPrimAtPath(overlays.OVERLAY_ROOT) is None


def test_grasp_line_findings_in_the_results_panel(api, qtbot):
    from usdgrip.hosts.usdview.usdview_host import UsdviewHost
    from usdgrip.views.panels import ResultsPanel

    panel = ResultsPanel(UsdviewHost(api))
    qtbot.addWidget(panel)
    panel.setStage(api.stage)
    tree = panel.findChild(QtWidgets.QTreeWidget, "issues")
    rows = [
        [tree.topLevelItem(r).text(c) for c in range(5)] for r in range(tree.topLevelItemCount())
    ]
    assert len(rows) == 1
    assert "GP.001" in rows[0] and "/Block/grasp_identifier_02" in rows[0]


def test_show_slot_overlays_reports_unreadable_lines_in_its_status(open_usda):
    from usdgrip.views import actions

    stage = open_usda(
        '#usda 1.0\n(\n    metersPerUnit = 0\n)\ndef Xform "P"\n{\n'
        '    def BasisCurves "grasp_identifier_a"\n    {\n'
        "        point3f[] points = [(0, 0, 0), (1, 0, 0)]\n    }\n}\n"
    )
    shown = actions.show_slot_overlays(stage, [], [])
    assert shown.grasp_lines.line_count == 0
    assert "grasp lines not shown:" in shown.status and "metersPerUnit is 0" in shown.status
    assert actions.show_slot_overlays(stage, []).grasp_lines is None  # not asked for
