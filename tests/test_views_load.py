"""Load Grasps… (the Grippers menu and the candidates panel): any writer's file, offscreen Qt.

Files are written as Isaac Sim's Grasp Editor and GraspGen write them
(tests/isaac_grasp_writers.py); the gripper is examples/gripper.usda, whose root /Gripper
is the base link, 0.13 m behind the site /Gripper/tcp along +Z.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from conftest import EXAMPLES
from fake_usdviewq.fake_api import FakeUsdviewApi
from isaac_grasp_writers import editor_grasp, write_grasp_editor_file, write_graspgen_file
from pxr import Usd
from PySide6 import QtCore, QtWidgets
from test_physics_wiring import box_usda

from usdgrip.contracts import GripperRef
from usdgrip.hosts.usdview import usdview_commands as commands
from usdgrip.views import actions
from usdgrip.views.dialogs import NO_SITE, LoadGraspsDialog
from usdgrip.views.panels import CandidatesPanel

LEFT = QtCore.Qt.MouseButton.LeftButton
GRIPPER_FILE = str(EXAMPLES / "gripper.usda")
TO_SITE = np.eye(4)
TO_SITE[2, 3] = 0.13
#: Base-link poses looking down onto the box's top (0.1 m high): the fingers reach it.
DOWN = np.array([[1.0, 0, 0, 0], [0, -1.0, 0, 0], [0, 0, -1.0, 0.075], [0, 0, 0, 1.0]])


def base_pose(x: float) -> np.ndarray:
    pose = DOWN.copy()
    pose[0, 3] = x
    return pose @ np.linalg.inv(TO_SITE)


@pytest.fixture
def box_file(tmp_path):
    path = tmp_path / "box.usda"
    path.write_text(box_usda((0.04, 0.04, 0.1)))
    return path


@pytest.fixture
def api(qtbot, box_file):
    window = QtWidgets.QMainWindow()
    window.resize(900, 500)
    qtbot.addWidget(window)
    window.show()
    return FakeUsdviewApi(Usd.Stage.Open(str(box_file)), window)


@pytest.fixture
def editor_file(tmp_path):
    grasps = {
        name: editor_grasp(base_pose(x), 1.0, {"finger_joint": 0.4}, {"finger_joint": 0.0})
        for name, x in (("grasp_0", 0.0), ("grasp_1", 0.2))
    }
    return write_grasp_editor_file(tmp_path / "editor.yaml", "/World/Box", "/Robot/Gripper", grasps)


def test_the_panels_load_button_opens_the_dialog_and_lists_the_converted_grasps(
    api, qtbot, editor_file
):
    api.select("/Box")
    commands.load_grasps(api)
    dialog = api.qMainWindow.findChild(LoadGraspsDialog)
    assert dialog.isVisible() and dialog.objectCombo.currentText() == "/Box"
    assert dialog.siteCombo.currentText() == NO_SITE  # a site is optional
    dialog.setGraspFile(str(editor_file))
    dialog.setGripperAsset(GRIPPER_FILE)
    dialog.siteCombo.setCurrentText("/Gripper/tcp")
    with qtbot.waitSignal(dialog.resultReady, timeout=30000) as ready:
        qtbot.mouseClick(dialog.findChild(QtWidgets.QPushButton, "run"), LEFT)
    grasps = ready.args[0]
    assert grasps.labels == ("grasp_0", "grasp_1") and grasps.object_path == "/Box"
    expected = np.array([base_pose(0.0), base_pose(0.2)]) @ TO_SITE
    np.testing.assert_allclose(grasps.poses, expected, atol=1e-9)
    assert grasps.open_width == pytest.approx(0.085)  # the site's max opening
    panel = api.qMainWindow.findChild(CandidatesPanel)
    assert panel.rowCount() == 2 and panel.table().item(1, 1).text() == "grasp_1"
    assert api.status[-1].startswith("usdgrip: 2 grasp candidates on /Box; grasps ")
    assert "converted to the grasp frame G of </Gripper/tcp>" in api.status[-1]
    assert api.stage.GetPrimAtPath("/__usdgrip_overlays/grasps/g0001")
    # The panel's own Load… button opens the same dialog again.
    dialog.hide()
    qtbot.mouseClick(panel.findChild(QtWidgets.QPushButton, "load"), LEFT)
    assert dialog.isVisible()


def test_without_a_site_the_poses_are_shown_as_the_file_has_them(api, editor_file):
    grasps = actions.load_grasp_set(api.stage, editor_file, "/Box")
    np.testing.assert_allclose(grasps.poses[0], base_pose(0.0), atol=1e-12)
    assert grasps.notes == (
        f"grasps {editor_file}: poses are of the file's gripper_frame '/Robot/Gripper'; drawn "
        "as grasp frames, not converted: pass --gripper FILE:/SITE to convert them",
    )
    assert np.isnan(grasps.confidences).sum() == 0 and grasps.details == ("", "")


def test_a_loaded_graspgen_file_evaluates_and_exports_with_its_keys(
    api, tmp_path, box_file, monkeypatch, qtbot
):
    poses = np.array([DOWN, DOWN])
    poses[1, 0, 3] = 0.2  # beside the box: missed
    path = write_graspgen_file(tmp_path / "gg.yaml", poses, np.array([0.3, 0.8]))
    gripper = GripperRef(asset_path=GRIPPER_FILE, prim_path="/Gripper/tcp")
    grasps = actions.load_grasp_set(api.stage, path, "/Box", gripper)
    assert any("names no gripper frame" in note for note in grasps.notes)
    evaluated = actions.evaluate_grasp_set(grasps, box_file, table=True, jobs=1)
    assert [round(r, 3) for r in evaluated.success_rates] == [1.0, 0.0]
    assert evaluated.outcomes == ("held", "missed")
    assert actions.describe_evaluation(evaluated).startswith("1 of 2 candidate(s) held")
    target = tmp_path / "out.yaml"
    actions.export_grasp_set(evaluated, target)
    written = yaml.safe_load(target.read_text())
    original = yaml.safe_load(path.read_text())
    assert set(written) == {"format", "format_version", "grasps", "metadata"}
    for name, entry in written["grasps"].items():
        assert entry.pop("physics")["trials"] == 3  # the default trials
        assert entry == original["grasps"][name]


@pytest.mark.parametrize(
    ("text", "frame", "message"),
    [
        ("format: grasp_list\n", "", "format is 'grasp_list'; expected 'isaac_grasp'"),
        (
            "format: isaac_grasp\ngrasps: {}\nmetadata: {upstream_revision: x, seed: 0, "
            "runtime_seconds: 0, pose_frame: /Mug}\n",
            "",
            "the grasps are relative to '/Mug' (metadata.pose_frame), which is not on this stage",
        ),
        ("format: isaac_grasp\ngrasps: {}\n", "/Gripper", "A gripper frame needs a gripper site"),
    ],
)
def test_load_problems_are_one_line_in_the_dialog(api, qtbot, tmp_path, text, frame, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    dialog = LoadGraspsDialog(api.qMainWindow)
    dialog.setStage(api.stage, ["/Box"])
    dialog.setGraspFile(str(path))
    dialog.frameEdit.setText(frame)
    results = []
    dialog.resultReady.connect(results.append)
    if frame:
        assert dialog.run() is False
    else:
        assert dialog.run()
        qtbot.waitUntil(lambda: not dialog.isRunning(), timeout=10000)
    assert message in dialog.message() and "\n" not in dialog.message()
    assert results == []
