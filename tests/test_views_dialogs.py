"""Sample and plan dialogs: worker thread, progress, cancel, results into overlays and list."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from conftest import EXAMPLES
from fake_usdviewq.fake_api import FakeUsdviewApi
from pxr import Usd
from PySide6 import QtCore, QtWidgets
from test_views_panels import save_shot

import usdgrip
import usdgrip.sampling
from usdgrip.grasping.isaac_yaml import read_isaac_grasp
from usdgrip.hosts.usdview import usdview_commands as commands
from usdgrip.views import overlays
from usdgrip.views.dialogs import PlanDialog, SampleDialog
from usdgrip.views.panels import CandidatesPanel
from usdgrip.views.task_runner import TaskRunner

LEFT = QtCore.Qt.MouseButton.LeftButton


@pytest.fixture
def api(qtbot):
    window = QtWidgets.QMainWindow()
    window.resize(900, 500)
    qtbot.addWidget(window)
    window.show()
    return FakeUsdviewApi(Usd.Stage.Open(str(EXAMPLES / "tote.usda")), window)


def _type(qtbot, spin: QtWidgets.QAbstractSpinBox, text: str) -> None:
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, QtCore.Qt.Key.Key_Tab)


def test_sample_dialog_runs_in_a_worker_and_overlays_candidates(api, qtbot):
    api.select("/Tote")
    commands.sample_slot_grasps(api)
    dialog = api.qMainWindow.findChild(SampleDialog)
    assert dialog.isVisible() and not dialog.isModal()
    assert dialog.objectCombo.currentText() == "/Tote"
    _type(qtbot, dialog.countSpin, "6")
    _type(qtbot, dialog.seedSpin, "11")
    assert (dialog.countSpin.value(), dialog.seedSpin.value()) == (6, 11)
    with qtbot.waitSignal(dialog.resultReady, timeout=30000) as ready:
        qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "run"), LEFT)
    grasps = ready.args[0]
    assert grasps.source == "sample" and len(grasps) == 12  # 6 draws x 2 slots
    slots = usdgrip.read_gripper_slots(api.stage.GetPrimAtPath("/Tote"))
    expected = usdgrip.sample_gripper_groups(slots, (0, 1), 6, 11).poses.reshape(-1, 4, 4)
    tote = np.eye(4)
    tote[0, 3] = 0.6
    np.testing.assert_allclose(grasps.compute_world_poses(tote), expected, atol=1e-12)
    assert len(overlays.list_overlays(api.stage, "grasps")) == 12
    panel = api.qMainWindow.findChild(CandidatesPanel)
    assert panel.rowCount() == 12 and panel.isVisible()
    assert dialog.message() == "12 candidate(s)."
    assert "__usdgrip" not in api.stage.GetRootLayer().ExportToString()


def test_sample_dialog_explains_a_stage_without_slots(qtbot, open_usda):
    dialog = SampleDialog()
    qtbot.addWidget(dialog)
    dialog.setStage(open_usda('def Xform "Empty" {}'))
    assert dialog.message() == "No prim on this stage has grasp slots."
    assert dialog.run() is False
    assert dialog.message() == "Choose an object with grasp slots first."
    assert not dialog.isRunning()


def test_a_failing_task_shows_its_message(qtbot, open_usda):
    stage = open_usda(
        """
        def Xform "Bad" (prepend apiSchemas = ["GripperSlotAPI:a"])
        {
            point3d gripperSlot:a:center = (0, 0, 0)
            vector3d gripperSlot:a:forward = (1, 0, 0)
            vector3d gripperSlot:a:spanAxis = (1, 0, 0)
            double gripperSlot:a:upRange = 0.1
            double gripperSlot:a:slotInputAngle = 10
        }
        """
    )
    dialog = SampleDialog()
    qtbot.addWidget(dialog)
    dialog.setStage(stage)
    with qtbot.waitSignal(dialog.runner.failed, timeout=30000):
        assert dialog.run()
    assert dialog.message().startswith("Failed: ")
    assert "</Bad>" in dialog.message() and "'a'" in dialog.message()
    assert dialog.findChild(QtWidgets.QPushButton, "run").isEnabled()


def test_unreadable_values_are_messages_not_exceptions(qtbot, open_usda):
    stage = open_usda(
        """
        def Xform "Gripper"
        {
            string gripper_maxOpening = "wide"
        }
        def Xform "Obj" (prepend apiSchemas = ["GripperSlotAPI:a"])
        {
            string gripperSlot:a:center = "x"
        }
        """
    )
    dialog = SampleDialog()
    qtbot.addWidget(dialog)
    dialog.setStage(stage, ["/Obj"])  # lists the object although its site cannot be read
    assert dialog.run() is False
    assert "</Obj>" in dialog.message() and "gripperSlot:a:center" in dialog.message()
    assert not dialog.isRunning()


def test_cancel_drops_the_result(api, qtbot, monkeypatch):
    release = threading.Event()
    started = threading.Event()
    real = usdgrip.sampling.sample_gripper_groups

    def slow(*args, **kwargs):  # stands in for a long library call
        started.set()
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(usdgrip.sampling, "sample_gripper_groups", slow)
    dialog = SampleDialog(api.qMainWindow)
    dialog.setStage(api.stage, ["/Tote"])
    results = []
    dialog.resultReady.connect(results.append)
    cancel = dialog.findChild(QtWidgets.QPushButton, "cancel")
    qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "run"), LEFT)
    assert dialog.isRunning() and cancel.text() == "Cancel"
    assert not dialog.countSpin.isEnabled(), "the form is locked while running"
    progress = dialog.findChild(QtWidgets.QProgressBar, "progress")
    assert progress.maximum() == 0, "busy indicator while the call runs"
    assert started.wait(10)
    qtbot.mouseClick(cancel, LEFT)
    assert dialog.message().startswith("Cancelling")
    with qtbot.waitSignal(dialog.runner.cancelled, timeout=30000):
        release.set()
    assert results == []
    assert dialog.message() == "Cancelled; nothing was changed."
    assert not dialog.isRunning() and dialog.countSpin.isEnabled()
    assert overlays.list_overlays(api.stage, "grasps") == []


def test_task_runner_reports_progress_and_refuses_a_second_task(qtbot):
    runner = TaskRunner()
    seen = []
    runner.progress.connect(lambda done, total, text: seen.append((done, total, text)))

    def task(context):
        for i in range(3):
            context.report(i + 1, 3, f"step {i + 1}")
        return "done"

    with qtbot.waitSignal(runner.finished, timeout=10000) as finished:
        runner.start(task)
        with pytest.raises(RuntimeError, match="already running"):
            runner.start(task)
    assert finished.args == ["done"]
    qtbot.waitUntil(lambda: len(seen) == 3)
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


def test_plan_dialog_plans_lists_and_exports(api, qtbot, tmp_path, monkeypatch):
    api.select("/Tote")
    commands.plan_grasps(api)
    dialog = api.qMainWindow.findChild(PlanDialog)
    assert dialog.objectCombo.currentText() == "/Tote"
    assert dialog.siteCombo.count() == 0, "the tote file has no gripper site"
    dialog.setGripperAsset(str(EXAMPLES / "gripper.usda"))
    assert dialog.siteCombo.currentText() == "/Gripper/tcp"
    assert sorted(dialog.methodChecks) == ["antipodal", "lines", "slots"]
    # The tote's slots are the two hands of group 'carry': single-gripper planning leaves
    # them out, so the tote is planned on its mesh.
    dialog.methodChecks["slots"].setChecked(False)
    dialog.methodChecks["lines"].setChecked(False)  # the tote has no grasp lines
    _type(qtbot, dialog.countSpin, "30")
    with qtbot.waitSignal(dialog.resultReady, timeout=120000) as ready:
        qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "run"), LEFT)
    grasps = ready.args[0]
    assert grasps.source == "plan" and 1 <= len(grasps) <= 30
    assert dialog.message() == f"{len(grasps)} candidate(s)."
    save_shot(dialog, "usdview_plan_dialog.png", tmp_path)
    assert set(grasps.details) == {"antipodal"}
    assert list(grasps.confidences) == sorted(grasps.confidences, reverse=True)
    panel = api.qMainWindow.findChild(CandidatesPanel)
    assert panel.rowCount() == len(grasps)
    assert panel.table().item(0, 1).text() == grasps.labels[0]
    panel.selectCandidate(1)
    dock = panel.parentWidget()
    dock.setFloating(True)
    dock.resize(620, 240)
    save_shot(dock, "usdview_candidates_panel.png", tmp_path)

    target = tmp_path / "tote_grasps.yaml"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    qtbot.mouseClick(panel.findChild(QtWidgets.QPushButton, "export"), LEFT)
    result = read_isaac_grasp(target)
    assert list(result.grasps) == list(grasps.labels)
    assert api.status[-1] == f"usdgrip: wrote {len(grasps)} grasps to {target}"


def test_plan_dialog_needs_a_saved_stage_and_a_site(qtbot):
    dialog = PlanDialog()
    qtbot.addWidget(dialog)
    stage = Usd.Stage.CreateInMemory()
    stage.DefinePrim("/Obj", "Xform")
    dialog.setStage(stage)
    assert dialog.run() is False
    assert dialog.message() == "Choose a gripper asset with a gripper site first."
    dialog.setGripperAsset(str(EXAMPLES / "gripper.usda"))
    assert dialog.run() is False
    assert (
        dialog.message() == "The stage is not saved to a file; the planner reads assets from disk."
    )
    dialog.setGripperAsset(str(EXAMPLES / "missing.usda"))
    assert "missing.usda" in dialog.message()
    assert dialog.siteCombo.count() == 0


def test_plan_cancel_stops_the_planner(api, qtbot):
    dialog = PlanDialog(api.qMainWindow)
    dialog.setStage(api.stage, ["/Tote"])
    dialog.setGripperAsset(str(EXAMPLES / "gripper.usda"))
    results = []
    dialog.resultReady.connect(results.append)
    with qtbot.waitSignal(dialog.runner.cancelled, timeout=120000):
        assert dialog.run()
        dialog.cancel()
    assert results == []
    assert dialog.message() == "Cancelled; nothing was changed."
