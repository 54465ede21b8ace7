"""A small usdviewApi for tests: the attributes and methods usdview documents.

Mirrors ``pxr/usdImaging/usdviewq/usdviewApi.py``: ``stage``, ``selectedPrims``,
``selectedPaths``, ``frame``, ``dataModel`` (``signalStageReplaced``,
``selection.signalPrimSelectionChanged``, ``viewSettings.displayGuide``), ``qMainWindow``, ``PrintStatus``,
``ClearPrimSelection``, ``AddPrimToSelection``.
"""

from __future__ import annotations

from pxr import Gf, Usd
from PySide6 import QtCore, QtWidgets


class FakeSelection(QtCore.QObject):
    signalPrimSelectionChanged = QtCore.Signal(set, set)

    def __init__(self) -> None:
        super().__init__()
        self._prims: list[Usd.Prim] = []

    def clearPrims(self) -> None:
        old = {p.GetPath() for p in self._prims}
        self._prims = []
        self.signalPrimSelectionChanged.emit(set(), old)

    def addPrim(self, prim: Usd.Prim) -> None:
        self._prims.append(prim)
        self.signalPrimSelectionChanged.emit({prim.GetPath()}, set())

    def getPrims(self) -> list[Usd.Prim]:
        return list(self._prims)

    def getPrimPaths(self):
        return [p.GetPath() for p in self._prims]

    def getFocusPrim(self):
        return self._prims[-1] if self._prims else None


class FakeViewSettings(QtCore.QObject):
    """``dataModel.viewSettings``: usdview emits its signals on every assignment, even of the same value."""

    signalSettingChanged = QtCore.Signal()

    def __init__(self) -> None:
        super().__init__()
        self._displayGuide = False
        self.assignments: list[bool] = []

    @property
    def displayGuide(self) -> bool:
        return self._displayGuide

    @displayGuide.setter
    def displayGuide(self, value: bool) -> None:
        self._displayGuide = value
        self.assignments.append(value)
        self.signalSettingChanged.emit()


class StageView(QtWidgets.QWidget):
    """usdview's viewport widget (found by its class name), a plain widget here."""

    def __init__(self, parent: QtWidgets.QWidget) -> None:
        super().__init__(parent)
        self.resize(200, 200)


class FakeDataModel(QtCore.QObject):
    signalStageReplaced = QtCore.Signal()

    def __init__(self, stage: Usd.Stage | None) -> None:
        super().__init__()
        self._stage = stage
        self.selection = FakeSelection()
        self.viewSettings = FakeViewSettings()
        self.currentFrame = Usd.TimeCode.Default()

    @property
    def stage(self) -> Usd.Stage | None:
        return self._stage

    @stage.setter
    def stage(self, value: Usd.Stage | None) -> None:
        if value is not self._stage:
            self._stage = value
            self.selection._prims = []
            self.signalStageReplaced.emit()


class FakeUsdviewApi:
    def __init__(self, stage: Usd.Stage | None, window: QtWidgets.QMainWindow | None = None):
        self.dataModel = FakeDataModel(stage)
        self._window = window if window is not None else QtWidgets.QMainWindow()
        self.status: list[str] = []
        self.currentGfCamera = None
        self.stageView = StageView(self._window)

    @property
    def stage(self):
        return self.dataModel.stage

    @property
    def frame(self):
        return self.dataModel.currentFrame

    @property
    def prim(self):
        return self.dataModel.selection.getFocusPrim()

    @property
    def selectedPrims(self):
        return self.dataModel.selection.getPrims()

    @property
    def selectedPaths(self):
        return self.dataModel.selection.getPrimPaths()

    @property
    def qMainWindow(self):
        return self._window

    def PrintStatus(self, msg: str) -> None:
        self.status.append(str(msg))

    def ClearPrimSelection(self) -> None:
        self.dataModel.selection.clearPrims()

    def AddPrimToSelection(self, prim) -> None:
        self.dataModel.selection.addPrim(prim)

    @property
    def viewportSize(self):
        return self.stageView.width(), self.stageView.height()

    def look(self, eye, rotation_y: float = 0.0) -> None:
        """Test helper: the camera at ``eye`` looking down -Z, turned ``rotation_y`` degrees about Y."""
        matrix = Gf.Matrix4d().SetRotate(Gf.Rotation(Gf.Vec3d(0, 1, 0), rotation_y))
        matrix.SetTranslateOnly(Gf.Vec3d(*eye))
        self.currentGfCamera = Gf.Camera(matrix)

    def select(self, *paths: str) -> None:
        """Test helper: select prims by path."""
        self.ClearPrimSelection()
        for path in paths:
            self.AddPrimToSelection(self.stage.GetPrimAtPath(path))
