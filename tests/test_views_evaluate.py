"""The candidates panel's Evaluate: real MuJoCo in the worker thread, progress, Cancel, colours.

A 4 × 4 × 10 cm box stage in tmp_path, the example gripper, hand-placed candidates with
known outcomes (one across the box's top holds, copies beside it miss), usdview's API
stand-in and real Qt offscreen.
"""

from __future__ import annotations

import importlib
import threading

import numpy as np
import pytest
from fake_usdviewq.fake_api import FakeUsdviewApi
from pxr import Usd, Vt
from PySide6 import QtCore, QtWidgets
from test_physics_wiring import DOWN_X, box_usda, candidate, make_result
from test_views_panels import save_shot

from usdgrip.grasping.isaac_yaml import read_isaac_grasp
from usdgrip.hosts.usdview.usdview_host import UsdviewHost
from usdgrip.views import actions, overlays
from usdgrip.views.dialogs import EvaluateDialog
from usdgrip.views.glyphs import NEUTRAL_COLOR, compute_success_colors
from usdgrip.views.grasp_set import GraspSet, compute_grasp_set_from_plan
from usdgrip.views.panels import CandidatesPanel
from usdgrip.views.session import EVALUATION_DROPPED, get_session

LEFT = QtCore.Qt.MouseButton.LeftButton
RED, GREEN = (1.0, 0.0, 0.1), (0.0, 0.8, 0.1)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # CoACD cache


@pytest.fixture
def box_file(tmp_path):
    path = tmp_path / "box.usda"
    path.write_text(box_usda((0.04, 0.04, 0.1)))
    return path


def _planned(misses: int = 1) -> GraspSet:
    """The planner's order: the missed grasps beside the box first (more confident)."""
    beside = [
        candidate(f"g_beside{i}", (0.2 + 0.05 * i, 0.0, 0.075), DOWN_X, 0.9 - 0.01 * i)
        for i in range(misses)
    ]
    centre = candidate("g_centre", (0.0, 0.0, 0.075), DOWN_X, 0.5)
    return compute_grasp_set_from_plan(make_result(*beside, centre), "/Box")


@pytest.fixture
def session(box_file, qtbot):
    window = QtWidgets.QMainWindow()
    window.resize(900, 500)
    qtbot.addWidget(window)
    window.show()
    api = FakeUsdviewApi(Usd.Stage.Open(str(box_file)), window)
    session = get_session(UsdviewHost(api))
    session.api = api
    return session


def _colors(stage: Usd.Stage) -> list[tuple[float, ...]]:
    return [
        tuple(round(v, 3) for v in stage.GetPrimAtPath(p).GetAttribute("primvars:displayColor")
              .Get()[0])
        for p in overlays.list_overlays(stage, "grasps")
    ]  # fmt: skip


def _cells(panel: CandidatesPanel) -> list[list[str]]:
    table = panel.table()
    return [
        [table.item(r, c).text() for c in range(table.columnCount())]
        for r in range(table.rowCount())
    ]


def _open_dialog(session, qtbot) -> EvaluateDialog:
    panel = session.candidates_panel()
    button = panel.findChild(QtWidgets.QPushButton, "evaluate")
    assert button.isEnabled()
    qtbot.mouseClick(button, LEFT)
    dialog = session.api.qMainWindow.findChild(EvaluateDialog)
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    return dialog


def test_evaluate_ranks_by_success_recolours_and_exports(session, qtbot, tmp_path, monkeypatch):
    stage = session.api.stage
    session.show_grasps(_planned())
    panel = session.candidates_panel()
    assert panel.table().columnCount() == 4, "no measured columns before an evaluation"
    # Coloured by confidence over the set: the planner preferred the missed grasp.
    assert _colors(stage) == [GREEN, RED]
    dialog = _open_dialog(session, qtbot)
    assert dialog.message() == "2 planned candidate(s) on /Box."
    assert (dialog.trialsSpin.value(), dialog.forceSpin.value()) == (1, 0.0)
    assert dialog.forceSpin.text() == "site's, else 50 N"
    seen = []
    dialog.runner.progress.connect(lambda done, total, text: seen.append((done, total, text)))
    with qtbot.waitSignal(dialog.resultReady, timeout=60000) as ready:
        qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "run"), LEFT)
        assert dialog.isRunning()
    evaluated = ready.args[0]
    qtbot.waitUntil(lambda: any(text == "physics: 2/2 candidates" for *_, text in seen))
    assert (0, 0, "Reading the object and gripper for 2 candidate(s)…") in seen
    assert (1000, 1000, "physics: 2/2 candidates") in seen

    # Best measured success first, then confidence; the list shows rate and outcome.
    assert evaluated.labels == ("g_centre", "g_beside0")
    assert session.grasps is evaluated
    assert _cells(panel) == [
        ["1", "g_centre", "0.500", "antipodal", "100%", "held"],
        ["2", "g_beside0", "0.900", "antipodal", "0%", "missed"],
    ]
    dialog.adjustSize()
    save_shot(dialog, "usdview_evaluate_dialog.png", tmp_path)
    dock = panel.parentWidget()
    dock.setFloating(True)
    dock.resize(620, 160)
    save_shot(dock, "usdview_candidates_evaluated.png", tmp_path)
    header = [panel.table().horizontalHeaderItem(c).text() for c in range(6)]
    assert header[4:] == ["Success", "Outcome"]
    assert panel.findChild(QtWidgets.QLabel).text() == "2 evaluated candidate(s) on /Box"
    summary = "1 of 2 candidate(s) held in every trial, mean success 50%"
    assert dialog.message() == f"{summary} (first trials: held 1, missed 1)."
    assert session.api.status[-1] == f"usdgrip: {summary} (first trials: held 1, missed 1)"
    # The overlays follow the new rows and are coloured by measured success (fixed 0-1 ramp).
    assert _colors(stage) == [GREEN, RED]
    first = stage.GetPrimAtPath(overlays.list_overlays(stage, "grasps")[0])
    assert first.GetCustomDataByKey("usdgripCandidate") == "g_centre"
    assert first.GetCustomDataByKey("usdgripSuccessRate") == 1.0
    root = stage.GetRootLayer()
    assert not root.dirty and "__usdgrip" not in root.ExportToString()
    assert stage.GetSessionLayer().GetPrimAtPath(overlays.GRASPS_SCOPE) is not None

    # Export writes the evaluated file: physics mappings, ranked order, how it was measured.
    target = tmp_path / "evaluated.yaml"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    qtbot.mouseClick(panel.findChild(QtWidgets.QPushButton, "export"), LEFT)
    written = read_isaac_grasp(target)
    assert list(written.grasps) == ["g_centre", "g_beside0"]
    assert written.grasps["g_centre"].physics.outcome == "held"
    assert written.grasps["g_beside0"].physics.success_rate == 0.0
    assert written.metadata.physics["ranking"] == "success_rate,confidence"
    assert written.metadata.physics["parameters"]["trials"] == 1
    gripper = written.metadata.physics["gripper"]  # examples/gripper.usda authors 235 N
    assert gripper["grip_force_from"] == "gripper:maxGripForce"
    assert gripper["grip_force_n"] == 235.0
    assert "default friction 0.8" in " ".join(written.metadata.warnings)


def test_trials_and_force_from_the_dialog_reach_the_evaluation(session, qtbot):
    session.show_grasps(_planned())
    dialog = _open_dialog(session, qtbot)
    dialog.trialsSpin.setValue(2)
    dialog.forceSpin.setValue(40.0)
    dialog.tableCheck.setChecked(False)
    with qtbot.waitSignal(dialog.resultReady, timeout=60000) as ready:
        assert dialog.run()
    meta = ready.args[0].result.metadata.physics
    assert meta["parameters"]["trials"] == 2 and meta["support"] == "none"
    assert meta["gripper"]["grip_force_n"] == 40.0
    assert meta["gripper"]["grip_force_from"] == "force option"
    assert ready.args[0].result.grasps["g_centre"].physics.trials == 2


class Gate:
    """Runs the real trials, but holds the worker after the first candidate until released."""

    def __init__(self, monkeypatch) -> None:
        engine = importlib.import_module("usdgrip.grasping.physics.candidate_trials")
        self.real = engine.evaluate_one
        self.first_done, self.release = threading.Event(), threading.Event()
        self.ran: list[int] = []
        monkeypatch.setattr(engine, "evaluate_one", self.evaluate_one)

    def evaluate_one(self, simulator, poses, index, seed):
        result = self.real(simulator, poses, index, seed)
        self.ran.append(index)
        if index == 0:
            self.first_done.set()
            self.release.wait(10)
        return result


def test_cancel_stops_between_candidates_and_changes_nothing(session, qtbot, monkeypatch):
    gate = Gate(monkeypatch)
    first_done, release, ran = gate.first_done, gate.release, gate.ran
    planned = _planned(misses=4)
    session.show_grasps(planned)
    stage = session.api.stage
    before = _colors(stage)
    dialog = _open_dialog(session, qtbot)
    results = []
    dialog.resultReady.connect(results.append)
    qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "run"), LEFT)
    assert first_done.wait(30)
    cancel = dialog.findChild(QtWidgets.QPushButton, "cancel")
    assert cancel.text() == "Cancel" and not dialog.trialsSpin.isEnabled()
    qtbot.mouseClick(cancel, LEFT)
    with qtbot.waitSignal(dialog.runner.cancelled, timeout=30000):
        release.set()
    assert ran == [0], "stopped before the next candidate"
    assert results == []
    assert dialog.message() == "Cancelled after 1 of 5 candidate(s); nothing was changed."
    # Partial results are not shown: the list, overlays and export stay the planned set.
    assert session.grasps is planned
    assert session.candidates_panel().table().columnCount() == 4
    assert _colors(stage) == before
    assert not dialog.isRunning() and dialog.trialsSpin.isEnabled()


def test_a_result_for_candidates_no_longer_listed_is_dropped(session, qtbot, monkeypatch):
    gate = Gate(monkeypatch)
    session.show_grasps(_planned(misses=2))
    dialog = _open_dialog(session, qtbot)
    assert dialog.run()
    assert gate.first_done.wait(30)
    replanned = _planned(misses=1)
    session.show_grasps(replanned)  # e.g. Plan Grasps again while the evaluation runs
    assert dialog.grasps() is not replanned, "a running evaluation keeps its candidates"
    with qtbot.waitSignal(dialog.resultReady, timeout=30000):
        gate.release.set()
    assert session.grasps is replanned
    assert session.api.status[-1] == EVALUATION_DROPPED
    assert session.candidates_panel().table().columnCount() == 4
    assert dialog.grasps() is replanned, "the next Run evaluates what is listed"
    assert dialog.message() == EVALUATION_DROPPED[len("usdgrip: ") :]
    session.clear()
    assert dialog.run() is False and dialog.message() == actions.NOTHING_TO_EVALUATE


def test_a_missing_object_file_is_one_status_line(session, qtbot, box_file, capfd):
    session.show_grasps(_planned())
    dialog = _open_dialog(session, qtbot)
    box_file.unlink()  # the open stage stays; the evaluation reads the file
    with qtbot.waitSignal(dialog.runner.failed, timeout=30000):
        assert dialog.run()
    status = session.api.status[-1]
    assert status.startswith("usdgrip: evaluation failed: ") and str(box_file) in status
    assert "\n" not in status and "Traceback" not in status
    assert dialog.message().startswith("Failed: ") and str(box_file) in dialog.message()
    assert "Traceback" not in capfd.readouterr().err
    assert session.grasps.success_rates is None
    assert dialog.findChild(QtWidgets.QPushButton, "run").isEnabled()


def test_evaluate_needs_a_plan_and_a_saved_stage(session, qtbot, open_usda):
    panel = session.candidates_panel()
    button = panel.findChild(QtWidgets.QPushButton, "evaluate")
    assert not button.isEnabled(), "nothing listed"
    session.evaluate_grasps()
    assert session.api.status[-1] == actions.NOTHING_TO_EVALUATE
    sampled = GraspSet("/Box", np.eye(4)[None], ("0.0",), ("a",), source="sample")
    session.show_grasps(sampled)
    assert not button.isEnabled(), "sampled targets are not evaluated"
    session.show_grasps(_planned())
    assert button.isEnabled()

    dialog = EvaluateDialog()
    qtbot.addWidget(dialog)
    dialog.setGrasps(open_usda('def Xform "Box" {}'), None)
    assert dialog.run() is False and dialog.message() == actions.NOTHING_TO_EVALUATE
    memory = Usd.Stage.CreateInMemory()
    dialog.setGrasps(memory, _planned())
    assert dialog.run() is False
    assert dialog.message() == (
        "The stage is not saved to a file; the evaluation reads the object from disk."
    )


def test_success_colours_use_the_fixed_range():
    # Not rescaled to the set (as confidences are): nothing held is all red.
    np.testing.assert_allclose(compute_success_colors([0.0, 0.0], 2), [RED, RED])
    np.testing.assert_allclose(
        compute_success_colors([1.0, 0.5, np.nan], 3), [GREEN, (1.0, 0.8, 0.1), NEUTRAL_COLOR]
    )
    stage = Usd.Stage.CreateInMemory()
    overlays.author_grasp_overlays(
        stage, np.stack([np.eye(4)] * 2), [0.2, 0.9], success_rates=[0.0, 0.0]
    )
    colors = [
        stage.GetPrimAtPath(p).GetAttribute("primvars:displayColor").Get()
        for p in overlays.list_overlays(stage, "grasps")
    ]
    assert colors == [Vt.Vec3fArray([RED])] * 2
