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

from pxr import Sdf, Usd


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
    def picked_point(self) -> tuple[float, float, float] | None:
        """Where the last viewport click hit the surface (world, stage units), or ``None``.

        usdview's ``selectedPoint``.
        """
        point = getattr(self.api, "selectedPoint", None)
        return None if point is None else tuple(float(x) for x in point)

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

    def connect_stage_replaced(self, slot: Callable[[], None]) -> None:
        """Call ``slot`` after usdview replaces the stage (File > Open, Reload)."""
        self.api.dataModel.signalStageReplaced.connect(slot)
