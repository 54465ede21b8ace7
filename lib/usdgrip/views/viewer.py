"""What the Qt widgets need from the viewer they live in, as one host-neutral protocol.

The session, panels and dialogs of :mod:`usdgrip.views` talk to their viewer only
through :class:`Viewer`; each host supplies one implementation
(:class:`usdgrip.hosts.usdview.UsdviewHost` for usdview), and tests drive the
widgets with any object offering the same members.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pxr import Usd


class Viewer(Protocol):
    """Stage, selection, parent window, status line and change signals of a Qt viewer."""

    @property
    def stage(self) -> Usd.Stage | None:
        """The open stage, or ``None`` before one is opened."""

    @property
    def selected_paths(self) -> list[str]:
        """Paths of the selected prims (empty when nothing is selected)."""

    @property
    def window(self) -> Any:
        """The viewer's main window: parent of every widget the session creates."""

    def select_prim(self, path: str) -> bool:
        """Make ``path`` the only selected prim; False when the stage has no such prim."""

    @property
    def guides_displayed(self) -> bool | None:
        """Whether guide-purpose prims are drawn; ``None`` when the viewer cannot say."""

    def set_guides_displayed(self, displayed: bool) -> None:
        """Draw guide-purpose prims (the overlays are guides) or stop drawing them."""

    def status(self, message: str) -> None:
        """Show ``message`` in the viewer's status line."""

    def connect_selection_changed(self, slot: Callable[..., None]) -> None:
        """Call ``slot`` when the prim selection changes."""

    def connect_viewport_clicked(self, slot: Callable[[tuple, tuple], None]) -> None:
        """Call ``slot(origin, direction)``, the world ray (stage units) of a viewport click."""

    def connect_stage_replaced(self, slot: Callable[[], None]) -> None:
        """Call ``slot`` after the viewer replaces the stage (open, reload)."""
