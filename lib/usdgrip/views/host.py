"""The small part of usdview the Grippers commands use, behind one class.

:class:`UsdviewHost` maps usdview's ``usdviewApi`` (see
``pxr/usdImaging/usdviewq/usdviewApi.py``) onto snake_case methods, so the
widgets and commands depend on this interface only and tests drive them with
any object offering the same usdviewApi members.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pxr import Sdf, Usd


class UsdviewHost:
    """Stage, selection, parent window, status line and stage-replaced signal of usdview.

    Args:
        usdview_api: usdview's ``usdviewApi`` (or an object with the same members:
            ``stage``, ``selectedPaths``, ``qMainWindow``, ``dataModel``,
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

    def status(self, message: str) -> None:
        """Show ``message`` in usdview's status bar."""
        self.api.PrintStatus(message)

    def connect_selection_changed(self, slot: Callable[..., None]) -> None:
        """Call ``slot`` on a prim selection change (``selection.signalPrimSelectionChanged``)."""
        self.api.dataModel.selection.signalPrimSelectionChanged.connect(slot)

    def connect_stage_replaced(self, slot: Callable[[], None]) -> None:
        """Call ``slot`` after usdview replaces the stage (File > Open, Reload)."""
        self.api.dataModel.signalStageReplaced.connect(slot)
