"""The validation results panel and the candidates list, driven with clicks and keys."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fake_usdviewq.fake_api import FakeUsdviewApi
from pxr import Usd, UsdGeom
from PySide6 import QtCore, QtWidgets

from usdgrip.hosts.usdview import usdview_commands as commands
from usdgrip.hosts.usdview.usdview_host import UsdviewHost
from usdgrip.rules import RULES
from usdgrip.views import overlays
from usdgrip.views.grasp_set import GraspSet
from usdgrip.views.panels import CandidatesPanel, ResultsPanel
from usdgrip.views.session import get_session

PROBLEMS = """
def Xform "Gripper"
{
    def Xform "tcp"
    {
        float gripper_maxOpening = 0.08
        def BasisCurves "gripper_forward_axis"
        {
            point3f[] points = [(0, 0, 0), (0, 0, 0.1)]
        }
    }
}
def Xform "Tote" (
    prepend apiSchemas = ["GripperSlotAPI:a"]
)
{
    point3d gripperSlot:a:center = (0.1, 0, 0)
    vector3d gripperSlot:a:forward = (0, 0, -1)
    vector3d gripperSlot:a:spanAxis = (1, 0, 0)
    double gripperSlot:a:upRange = 0.2
    double gripperSlot:a:slotInputAngle = 30
    string gripperSlot:a:groupName = "solo"
}
"""


def save_shot(widget: QtWidgets.QWidget, name: str, tmp_path: Path) -> Path:
    """Grab ``widget`` offscreen (docs/img holds real-usdview grabs: tests/test_usdview_real.py)."""
    image = widget.grab()
    path = tmp_path / name
    assert image.save(str(path))
    assert path.stat().st_size > 1000
    return path


@pytest.fixture
def api(open_usda, qtbot):
    window = QtWidgets.QMainWindow()
    window.resize(1100, 520)
    qtbot.addWidget(window)
    return FakeUsdviewApi(open_usda(PROBLEMS), window)


@pytest.fixture
def panel(api, qtbot):
    panel = ResultsPanel(UsdviewHost(api))
    qtbot.addWidget(panel)
    panel.setStage(api.stage)
    return panel


def _rows(panel: ResultsPanel) -> list[list[str]]:
    tree = panel.findChild(QtWidgets.QTreeWidget, "issues")
    return [
        [tree.topLevelItem(r).text(c) for c in range(5)]
        for r in range(tree.topLevelItemCount())
        if not tree.topLevelItem(r).isHidden()
    ]


def _row_of(panel: ResultsPanel, code: str, text: str = "") -> int:
    for row, issue in enumerate(panel.visibleIssues()):
        if issue.code == code and text in issue.message:
            return row
    raise AssertionError(f"no row {code} {text}")


def test_lists_every_issue_with_its_columns(panel):
    codes = [i.code for i in panel.issues()]
    assert codes == ["GR.003", "GR.007", "GR.007", "GR.011", "GS.008"]
    first = _rows(panel)[0]
    assert first[:4] == ["failure", "GR.003", "gripper-grip-line", "/Gripper/tcp"]
    assert "gripper_grip_line" in first[4]
    assert "⚙" in _rows(panel)[1][1], "fixable issues are marked"
    summary = panel.findChild(QtWidgets.QLabel, "summary").text()
    assert summary == "5 issue(s), 5 shown, 3 fixable."


def test_rule_doc_is_the_tooltip(panel):
    tree = panel.findChild(QtWidgets.QTreeWidget, "issues")
    tip = tree.topLevelItem(0).toolTip(2)
    assert RULES["GR.003"].doc[:60] in tip


def test_filters_by_severity_with_keys_and_by_code(panel, qtbot):
    severity = panel.findChild(QtWidgets.QComboBox, "severityFilter")
    severity.setFocus()
    qtbot.keyClicks(severity, "w")  # non-editable combo: typing jumps to "warning"
    assert severity.currentText() == "warning"
    assert [i.code for i in panel.visibleIssues()] == ["GR.007", "GR.007", "GS.008"]
    panel.setCodeFilter("GS.008")
    assert [i.prim for i in panel.visibleIssues()] == ["/Tote"]
    panel.setSeverityFilter("failure")
    assert panel.visibleIssues() == []
    panel.setSeverityFilter("All")
    panel.setCodeFilter("All")
    assert len(panel.visibleIssues()) == 5
    codes = panel.findChild(QtWidgets.QComboBox, "codeFilter")
    assert [codes.itemText(i) for i in range(codes.count())] == [
        "All",
        "GR.003",
        "GR.007",
        "GR.011",
        "GS.008",
    ]


def _double_click(qtbot, tree: QtWidgets.QTreeWidget, row: int) -> None:
    pos = tree.visualItemRect(tree.topLevelItem(row)).center()
    # Qt item views need the press of a first click before a double click counts
    qtbot.mouseClick(tree.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseDClick(tree.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=pos)


def test_double_click_selects_the_prim_in_the_viewer(panel, api, qtbot):
    tree = panel.findChild(QtWidgets.QTreeWidget, "issues")
    panel.show()
    qtbot.waitExposed(panel)
    _double_click(qtbot, tree, _row_of(panel, "GS.008"))
    assert [str(p) for p in api.selectedPaths] == ["/Tote"]
    _double_click(qtbot, tree, _row_of(panel, "GR.003"))
    assert [str(p) for p in api.selectedPaths] == ["/Gripper/tcp"]


def test_fix_one_issue_into_the_session_layer(panel, api, qtbot):
    stage = api.stage
    fix = panel.findChild(QtWidgets.QPushButton, "fix")
    panel.selectIssue(_row_of(panel, "GR.003"))
    assert not fix.isEnabled(), "GR.003 has no unambiguous fix"
    panel.selectIssue(_row_of(panel, "GR.011"))
    assert fix.isEnabled()
    assert panel.targetLayer() == stage.GetSessionLayer()
    with qtbot.waitSignal(panel.validated):
        qtbot.mouseClick(fix, QtCore.Qt.MouseButton.LeftButton)
    assert "GR.011" not in [i.code for i in panel.issues()]
    assert "GripperSiteAPI" in stage.GetSessionLayer().ExportToString()
    assert "GripperSiteAPI" not in stage.GetRootLayer().ExportToString()
    assert api.status[-1] == "usdgrip: 1 fix(es) written to the session layer (not saved)"


def test_fix_all_into_the_root_layer_then_revalidates(panel, api, qtbot):
    stage = api.stage
    layer = panel.findChild(QtWidgets.QComboBox, "targetLayer")
    layer.setFocus()
    qtbot.keyClicks(layer, "R")
    assert panel.targetLayer() == stage.GetRootLayer()
    qtbot.mouseClick(panel.findChild(QtWidgets.QPushButton, "fixAll"), QtCore.Qt.LeftButton)
    # the fixed GR.007/GR.011 are gone; a declared site now reports its legacy attribute
    assert [i.code for i in panel.issues()] == ["GR.003", "GR.008", "GS.008"]
    root = stage.GetRootLayer().ExportToString()
    assert 'uniform token type = "linear"' in root and "GripperSiteAPI" in root
    assert "GripperSiteAPI" not in stage.GetSessionLayer().ExportToString()
    assert not panel.findChild(QtWidgets.QPushButton, "fixAll").isEnabled()
    assert (
        api.status[-1] == "usdgrip: 3 fix(es) written to the root layer; Save writes it to its file"
    )


def test_selection_scope_lists_only_issues_under_it(panel, api):
    panel.setStage(api.stage, ["/Tote"])
    assert [i.code for i in panel.issues()] == ["GS.008"]
    assert panel.findChild(QtWidgets.QLabel, "summary").text().startswith("1 issue(s) under /Tote")


def test_validate_commands_dock_the_panel_and_screenshot(api, qtbot, tmp_path):
    window = api.qMainWindow
    window.setCentralWidget(QtWidgets.QLabel("viewport"))
    window.show()
    commands.validate_stage(api)
    panel = window.findChild(ResultsPanel)
    assert panel is not None and panel.isVisible()
    assert isinstance(panel.parentWidget(), QtWidgets.QDockWidget)
    assert len(panel.issues()) == 5
    api.select("/Tote")
    commands.validate_selection(api)
    assert window.findChildren(ResultsPanel) == [panel], "the panel is reused"
    assert [i.code for i in panel.issues()] == ["GS.008"]
    commands.validate_stage(api)
    panel.selectIssue(1)
    panel.parentWidget().resize(1100, 300)
    save_shot(panel.parentWidget(), "usdview_results_panel.png", tmp_path)


def _grasp_set(n: int = 4) -> GraspSet:
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, 0, 3] = np.linspace(-0.1, 0.1, n)
    return GraspSet(
        object_path="/Tote",
        poses=poses,
        labels=tuple(f"g_{i}" for i in range(n)),
        details=("slots",) * n,
        confidences=np.linspace(0.9, 0.3, n),
        open_width=0.08,
    )


def test_candidates_panel_lists_best_first_and_highlights_with_keys(api, qtbot):
    session = get_session(UsdviewHost(api))
    session.show_grasps(_grasp_set())
    panel = api.qMainWindow.findChild(CandidatesPanel)
    assert panel.rowCount() == 4
    table = panel.table()
    assert [table.item(r, 2).text() for r in range(4)] == ["0.900", "0.700", "0.500", "0.300"]
    assert len(overlays.list_overlays(api.stage, "grasps")) == 4
    table.setFocus()
    panel.selectCandidate(0)
    qtbot.keyClick(table, QtCore.Qt.Key.Key_Down)
    assert panel.currentRow() == 1
    primvar = UsdGeom.PrimvarsAPI(
        api.stage.GetPrimAtPath("/__usdgrip_overlays/grasps/g0001")
    ).GetPrimvar("displayColor")
    np.testing.assert_allclose(primvar.Get()[0], (0.1, 0.9, 1.0), atol=1e-6)
    other = UsdGeom.PrimvarsAPI(
        api.stage.GetPrimAtPath("/__usdgrip_overlays/grasps/g0000")
    ).GetPrimvar("displayColor")
    assert not np.allclose(other.Get()[0], (0.1, 0.9, 1.0))
    api.select("/__usdgrip_overlays/grasps/g0003")  # picked in the viewport
    assert panel.currentRow() == 3
    api.select("/Tote")
    assert panel.currentRow() == 3, "other selections leave the list alone"
    panel.setGrasps(None)
    assert panel.rowCount() == 0


def test_overlays_follow_a_replaced_stage(api, open_usda, qtbot):
    session = get_session(UsdviewHost(api))
    api.select("/Tote")
    commands.show_slots(api)
    session.show_grasps(_grasp_set(2))
    old = api.stage
    new = open_usda(PROBLEMS, name="reloaded.usda")
    UsdGeom.XformCommonAPI(new.GetPrimAtPath("/Tote")).SetTranslate((1.0, 0.0, 0.0))
    api.dataModel.stage = new  # usdview emits signalStageReplaced
    assert overlays.list_overlays(new, "slots") == ["/__usdgrip_overlays/slots/Tote_a"]
    assert len(overlays.list_overlays(new, "grasps")) == 2
    x = UsdGeom.BasisCurves(new.GetPrimAtPath("/__usdgrip_overlays/grasps/g0000"))
    assert np.array(x.GetPointsAttr().Get())[:, 0].mean() == pytest.approx(0.9, abs=1e-6)
    assert "__usdgrip" not in new.GetRootLayer().ExportToString()
    assert isinstance(old, Usd.Stage)


def _fix_all_into_root(panel, qtbot):
    panel.setTargetLayer("Root layer")
    qtbot.mouseClick(panel.findChild(QtWidgets.QPushButton, "fixAll"), QtCore.Qt.LeftButton)


def test_save_writes_the_fixed_root_layer_to_its_file(panel, api, qtbot):
    path = Path(api.stage.GetRootLayer().realPath)
    save = panel.findChild(QtWidgets.QPushButton, "save")
    assert save.isHidden(), "no Save while fixes go to the session layer"
    panel.setTargetLayer("Root layer")
    assert not save.isHidden() and not save.isEnabled(), "nothing to save yet"
    _fix_all_into_root(panel, qtbot)
    assert (
        api.status[-1] == "usdgrip: 3 fix(es) written to the root layer; Save writes it to its file"
    )
    assert save.isEnabled() and "GripperSiteAPI" not in path.read_text()
    qtbot.mouseClick(save, QtCore.Qt.LeftButton)
    assert api.status[-1] == f"usdgrip: saved {path}"
    assert "GripperSiteAPI" in path.read_text()
    assert not api.stage.GetRootLayer().dirty and not save.isEnabled()
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name], "no temp file left"
    reopened = Usd.Stage.Open(str(path))
    assert [i.code for i in panel.issues()] == ["GR.003", "GR.008", "GS.008"]
    assert reopened.GetPrimAtPath("/Gripper/tcp").HasAPI("GripperSiteAPI")


def test_save_refuses_a_read_only_file_and_keeps_it(panel, api, qtbot):
    path = Path(api.stage.GetRootLayer().realPath)
    before = path.read_bytes()
    _fix_all_into_root(panel, qtbot)
    path.chmod(0o444)
    try:
        save = panel.findChild(QtWidgets.QPushButton, "save")
        panel.setTargetLayer("Session layer")
        panel.setTargetLayer("Root layer")
        assert not save.isEnabled() and "read-only (mode 0444" in save.toolTip()
        assert panel.saveRootLayer() is False
        assert api.status[-1].startswith(f"usdgrip: not saved: {path}: read-only (mode 0444")
        assert path.read_bytes() == before
    finally:
        path.chmod(0o644)


def test_save_refuses_a_file_changed_on_disk_and_keeps_what_was_written(panel, api, qtbot):
    path = Path(api.stage.GetRootLayer().realPath)
    _fix_all_into_root(panel, qtbot)
    theirs = path.read_text() + "\n# someone else's edit\n"
    path.write_text(theirs)
    assert panel.saveRootLayer() is False
    assert api.status[-1].startswith(f"usdgrip: not saved: {path}: changed since usdgrip read it")
    assert path.read_text() == theirs


def test_save_is_not_offered_for_an_in_memory_stage(api, qtbot):
    stage = Usd.Stage.CreateInMemory()
    panel = ResultsPanel(UsdviewHost(api))
    qtbot.addWidget(panel)
    panel.setStage(stage)
    panel.setTargetLayer("Root layer")
    stage.DefinePrim("/X", "Xform")
    panel.validate()
    save = panel.findChild(QtWidgets.QPushButton, "save")
    assert not save.isEnabled() and "in-memory layer" in save.toolTip()
    assert panel.saveRootLayer() is False


def test_save_is_not_offered_for_a_usdz_package(api, qtbot, tmp_path):
    from pxr import UsdUtils

    source = tmp_path / "pkg.usda"
    source.write_text('#usda 1.0\ndef Xform "X"\n{\n}\n')
    package = tmp_path / "pkg.usdz"
    assert UsdUtils.CreateNewUsdzPackage(str(source), str(package))
    stage = Usd.Stage.Open(str(package))
    panel = ResultsPanel(UsdviewHost(api))
    qtbot.addWidget(panel)
    panel.setStage(stage)
    panel.setTargetLayer("Root layer")
    stage.GetRootLayer().customLayerData = {"touched": 1}
    panel.validate()
    save = panel.findChild(QtWidgets.QPushButton, "save")
    assert not save.isEnabled() and "cannot write into a .usdz package" in save.toolTip()
    before = package.read_bytes()
    assert panel.saveRootLayer() is False
    assert package.read_bytes() == before
