"""The bases of the dialogs that run a library call off the UI thread.

:class:`TaskDialog` is the form, progress bar, status line and Run/Cancel around a
:class:`~usdgrip.views.task_runner.TaskRunner`; a subclass builds the form and the task and
gets :attr:`~TaskDialog.resultReady`. :class:`GripperDialog` adds an object, a gripper asset
(Browse…) and one of its gripper sites. The concrete dialogs are in
:mod:`usdgrip.views.dialogs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pxr import Usd, UsdGeom

from usdgrip.errors import GripperError
from usdgrip.views.qt import QtWidgets, Signal
from usdgrip.views.task_runner import TaskRunner


class TaskDialog(QtWidgets.QDialog):
    """Form + progress bar + Run/Cancel; subclasses build the form and the task."""

    resultReady = Signal(object)
    """A :class:`GraspSet` after a successful run."""

    TITLE = ""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.TITLE)
        self.setModal(False)
        self.setMinimumWidth(460)
        self._stage: Usd.Stage | None = None
        self.runner = TaskRunner(self)
        self.form = QtWidgets.QFormLayout()
        self._progress = QtWidgets.QProgressBar()
        self._progress.setObjectName("progress")
        self._progress.setRange(0, 1)
        self._progress.setValue(0)
        self._message = QtWidgets.QLabel("")
        self._message.setObjectName("message")
        self._message.setWordWrap(True)
        self._run = QtWidgets.QPushButton("Run")
        self._run.setObjectName("run")
        self._run.setDefault(True)
        self._cancel = QtWidgets.QPushButton("Close")
        self._cancel.setObjectName("cancel")
        buttons = QtWidgets.QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self._run)
        buttons.addWidget(self._cancel)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self._progress)
        layout.addWidget(self._message)
        layout.addLayout(buttons)
        self._run.clicked.connect(self.run)
        self._cancel.clicked.connect(self.cancel)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.runner.cancelled.connect(self._on_cancelled)

    # --- public API -----------------------------------------------------------

    def message(self) -> str:
        """The status line under the progress bar."""
        return self._message.text()

    def isRunning(self) -> bool:
        """True while the worker runs."""
        return self.runner.running

    def run(self) -> bool:
        """Validate the form and start the task; False (with a message) when the form is wrong."""
        if self.runner.running:
            return False
        try:
            task, finish = self._prepare()
        except (ValueError, OSError, GripperError) as exc:
            self._message.setText(str(exc))
            return False
        self._finish = finish
        self._set_running(True)
        self._message.setText("Running…")
        self.runner.start(task)
        return True

    def cancel(self) -> None:
        """Cancel a running task (its result is dropped), or close the dialog."""
        if self.runner.running:
            self.runner.cancel()
            self._message.setText("Cancelling… (the result will be discarded)")
            self._cancel.setEnabled(False)
        else:
            self.reject()

    def done(self, result: int) -> None:
        if self.runner.running:
            self.runner.cancel()
            self.runner.wait()
        super().done(result)

    # --- subclass hooks -------------------------------------------------------

    def _prepare(self) -> tuple[Any, Any]:
        """Return ``(task(context) -> value, finish(value) -> GraspSet)``; raise ValueError."""
        raise NotImplementedError

    # --- internals --------------------------------------------------------------

    def _set_running(self, running: bool) -> None:
        self._run.setEnabled(not running)
        self._cancel.setEnabled(True)
        self._cancel.setText("Cancel" if running else "Close")
        for i in range(self.form.rowCount()):
            item = self.form.itemAt(i, QtWidgets.QFormLayout.ItemRole.FieldRole)
            if item is not None and item.widget() is not None:
                item.widget().setEnabled(not running)
        if running:
            self._progress.setRange(0, 0)  # busy until the task reports
        else:
            self._progress.setRange(0, 1)

    def _on_progress(self, done: int, total: int, text: str) -> None:
        self._progress.setRange(0, max(total, 0))
        self._progress.setValue(done)
        if text:
            self._message.setText(text)

    def _on_finished(self, value: Any) -> None:
        self._set_running(False)
        self._progress.setValue(1)
        try:
            grasps = self._finish(value)
        except (ValueError, OSError) as exc:
            self._message.setText(str(exc))
            return
        self._message.setText(f"{len(grasps)} candidate(s).")
        self.resultReady.emit(grasps)

    def _on_failed(self, message: str) -> None:
        self._set_running(False)
        self._progress.setValue(0)
        self._message.setText(f"Failed: {message}")

    def _on_cancelled(self) -> None:
        self._set_running(False)
        self._progress.setValue(0)
        self._message.setText("Cancelled; nothing was changed.")


def browse_row(field: QtWidgets.QWidget, button: QtWidgets.QWidget) -> QtWidgets.QWidget:
    """One form row: ``field`` stretched, ``button`` (Browse…) after it."""
    row = QtWidgets.QWidget()
    layout = QtWidgets.QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(field, 1)
    layout.addWidget(button)
    return row


class GripperDialog(TaskDialog):
    """A task dialog with an object, a gripper asset (browse) and its gripper site."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.objectCombo = QtWidgets.QComboBox()
        self.objectCombo.setObjectName("object")
        self.gripperEdit = QtWidgets.QLineEdit()
        self.gripperEdit.setObjectName("gripperAsset")
        self.gripperEdit.setPlaceholderText("gripper .usd file (empty: this stage)")
        browse = QtWidgets.QPushButton("Browse…")
        browse.setObjectName("browse")
        self.gripperRow = browse_row(self.gripperEdit, browse)
        self.siteCombo = QtWidgets.QComboBox()
        self.siteCombo.setObjectName("site")
        browse.clicked.connect(self._browse)
        self.gripperEdit.editingFinished.connect(self._load_sites)
        # The gripper asset's stage as _load_sites opened it, so the task reads it again
        # instead of opening the file a second time. The viewer's own stage is not handed
        # to a worker thread: the viewer may author overlays on it meanwhile.
        self._gripper_stages: dict[str, Usd.Stage] = {}

    def setStage(self, stage: Usd.Stage, selected_paths: list[str] | tuple = ()) -> None:
        """List candidate objects (the selection and top-level prims) and this stage's sites."""
        self._stage = stage
        paths: list[str] = list(selected_paths)
        for prim in stage.GetPseudoRoot().GetChildren():
            if prim.IsA(UsdGeom.Imageable) and not prim.GetName().startswith("__"):
                paths.append(str(prim.GetPath()))
        self.objectCombo.clear()
        self.objectCombo.addItems(list(dict.fromkeys(paths)))
        self._load_sites()

    def setGripperAsset(self, path: str) -> None:
        """Use the gripper sites of ``path`` (empty: the stage's own)."""
        self.gripperEdit.setText(str(path))
        self._load_sites()

    def _browse(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Gripper asset", "", "USD (*.usd *.usda *.usdc *.usdz)"
        )
        if path:
            self.setGripperAsset(path)

    def _gripper_asset(self) -> str:
        text = self.gripperEdit.text().strip()
        if text:
            return str(Path(text).expanduser().resolve())
        if self._stage is None:
            return ""
        return self._stage.GetRootLayer().realPath

    def _load_sites(self) -> None:
        from usdgrip.usd.sites import find_gripper_sites
        from usdgrip.usd.stage import open_stage

        self.siteCombo.clear()
        asset = self._gripper_asset()
        if not asset:
            return
        self._gripper_stages = {}
        try:
            stage = self._stage if not self.gripperEdit.text().strip() else open_stage(asset)
        except Exception as exc:  # show why instead of failing the dialog
            self._message.setText(str(exc))
            return
        if stage is not self._stage:
            self._gripper_stages = {asset: stage}
        sites = [s.path for s in find_gripper_sites(stage, strict=False)]
        self.siteCombo.addItems(sites)
        if not sites:
            self._message.setText(f"{asset}: no gripper site; choose a gripper asset.")
        else:
            self._message.setText("")
