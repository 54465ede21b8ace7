"""The small part of usdview the Grippers commands use, behind one class.

:class:`UsdviewHost` maps usdview's ``usdviewApi`` (see
``pxr/usdImaging/usdviewq/usdviewApi.py``) onto the snake_case members of
:class:`usdgrip.views.viewer.Viewer`, so the widgets and commands depend on that
interface only and tests drive them with any object offering the same usdviewApi
members.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pxr import Gf, Sdf, Usd

from usdgrip.views.qt import QtCore, QtWidgets, Signal


class UsdviewHost:
    """Stage, selection, parent window, status line and stage-replaced signal of usdview.

    Args:
        usdview_api: usdview's ``usdviewApi`` (or an object with the same members:
            ``stage``, ``selectedPaths``, ``qMainWindow``, ``dataModel`` (its
            ``viewSettings`` optional),
            ``PrintStatus``, ``ClearPrimSelection``, ``AddPrimToSelection``).
    """

    def __init__(self, usdview_api: Any) -> None:
        self.api = usdview_api

    @property
    def stage(self) -> Usd.Stage | None:
        """The open stage, or ``None`` before one is opened."""
        return self.api.stage

    @property
    def selected_paths(self) -> list[str]:
        """Paths of the selected prims (usdview selects the pseudo-root when nothing is)."""
        return [
            str(p) for p in self.api.selectedPaths if Sdf.Path(str(p)) != Sdf.Path.absoluteRootPath
        ]

    @property
    def window(self) -> Any:
        """The main usdview window: parent of every widget the commands create."""
        return self.api.qMainWindow

    def select_prim(self, path: str) -> bool:
        """Make ``path`` the only selected prim; False when the stage has no such prim."""
        stage = self.stage
        prim = stage.GetPrimAtPath(path) if stage is not None and path else None
        if not prim:
            return False
        self.api.ClearPrimSelection()
        self.api.AddPrimToSelection(prim)
        return True

    @property
    def guides_displayed(self) -> bool | None:
        """The viewer's Display Purposes > Guide setting; ``None`` when it has none."""
        settings = getattr(self.api.dataModel, "viewSettings", None)
        value = getattr(settings, "displayGuide", None)
        return None if value is None else bool(value)

    def set_guides_displayed(self, displayed: bool) -> None:
        """Set usdview's guide display (``dataModel.viewSettings.displayGuide``).

        usdview recomputes its bounds and refreshes the menu check mark on every
        assignment, even of the same value. Nothing happens without view settings.
        """
        settings = getattr(self.api.dataModel, "viewSettings", None)
        if settings is not None and hasattr(settings, "displayGuide"):
            settings.displayGuide = bool(displayed)

    def status(self, message: str) -> None:
        """Show ``message`` in usdview's status bar."""
        self.api.PrintStatus(message)

    def connect_selection_changed(self, slot: Callable[..., None]) -> None:
        """Call ``slot`` on a prim selection change (``selection.signalPrimSelectionChanged``)."""
        self.api.dataModel.selection.signalPrimSelectionChanged.connect(slot)

    def connect_viewport_clicked(self, slot: Callable[[tuple, tuple], None]) -> None:
        """Call ``slot(origin, direction)`` (a world ray, stage units) on a viewport click.

        usdview's own ``selectedPoint`` cannot be used: 24.11 truncates its x and y to
        integers (``pickObject`` reuses them as window coordinates). The ray is cast from
        usdview's camera (``currentGfCamera``, its free camera's window conformed to the
        viewport vertically) through the clicked pixel; Alt-drags (camera moves) are not
        clicks.
        """
        view = _find_stage_view(self.api.qMainWindow)
        if view is None:
            return
        tracker = view.findChild(_ClickTracker, CLICK_TRACKER)
        if tracker is None:
            tracker = _ClickTracker(view, self.api)
        tracker.clicked.connect(slot)

    def connect_stage_replaced(self, slot: Callable[[], None]) -> None:
        """Call ``slot`` after usdview replaces the stage (File > Open, Reload)."""
        self.api.dataModel.signalStageReplaced.connect(slot)


#: objectName of the click tracker installed on usdview's StageView.
CLICK_TRACKER = "usdgripClickTracker"


def _find_stage_view(window: Any) -> Any:
    """The viewport widget of usdview (class ``StageView``), or ``None``."""
    if window is None:
        return None
    for widget in window.findChildren(QtWidgets.QWidget):
        if type(widget).__name__ == "StageView":
            return widget
    return None


def compute_click_ray(camera: Gf.Camera, width: float, height: float, x: float, y: float):
    """The world ray (origin, unit direction) through pixel ``(x, y)`` of a viewport.

    The frustum's window is conformed to the viewport as usdview's free camera does
    (``CameraUtil.MatchVertically``: its height kept, its width from the aspect).
    """
    frustum = camera.frustum
    window = frustum.GetWindow()
    low, high = window.GetMin(), window.GetMax()
    half = (high[1] - low[1]) / 2.0 * width / max(height, 1.0)
    mid = (low[0] + high[0]) / 2.0
    frustum.SetWindow(Gf.Range2d(Gf.Vec2d(mid - half, low[1]), Gf.Vec2d(mid + half, high[1])))
    ray = frustum.ComputePickRay(Gf.Vec2d(2.0 * x / width - 1.0, 1.0 - 2.0 * y / height))
    direction = ray.direction.GetNormalized()
    if frustum.GetProjectionType() == Gf.Frustum.Perspective:
        origin = frustum.GetPosition()  # from the eye, not the near plane
    else:
        origin = ray.startPoint - direction * frustum.GetNearFar().GetMin()
    return tuple(origin), tuple(direction)


class _ClickTracker(QtCore.QObject):
    """Turns a left click (no Alt) on the viewport into a world ray."""

    clicked = Signal(object, object)

    def __init__(self, view: Any, api: Any) -> None:
        super().__init__(view)
        self.setObjectName(CLICK_TRACKER)
        self._api = api
        view.installEventFilter(self)

    def eventFilter(self, watched: Any, event: Any) -> bool:
        if (
            event.type() == QtCore.QEvent.Type.MouseButtonPress
            and event.button() == QtCore.Qt.MouseButton.LeftButton
            and not event.modifiers() & QtCore.Qt.KeyboardModifier.AltModifier
        ):
            camera = self._api.currentGfCamera
            if camera is not None:
                pos = event.position() if hasattr(event, "position") else event.pos()
                self.clicked.emit(
                    *compute_click_ray(camera, watched.width(), watched.height(), pos.x(), pos.y())
                )
        return False
