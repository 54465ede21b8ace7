"""One Grippers session per usdview window: its overlays, panels and dialogs.

The session is a QObject child of usdview's main window, found again by
object name, so every menu command reuses the same panels without a global.
It remembers what it overlaid (slot prims, the grasp set) and re-authors it
when usdview replaces the stage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from usdgrip.errors import GripperError
from usdgrip.views import overlays
from usdgrip.views.grasp_set import GraspSet
from usdgrip.views.host import UsdviewHost
from usdgrip.views.qt import QtCore, QtWidgets

SESSION_NAME = "usdgripSession"


class GrippersSession(QtCore.QObject):
    """Overlays and widgets of the Grippers menu for one usdview window."""

    def __init__(self, host: UsdviewHost) -> None:
        super().__init__(host.window)
        self.setObjectName(SESSION_NAME)
        self.host = host
        self.slot_prims: list[str] = []
        self.slot_problems: list[str] = []
        """Why prims of the last :meth:`show_slots` were skipped (one line each)."""
        self.grasp_line_roots: list[str] = []
        """Roots of the last :meth:`show_grasp_lines` (re-drawn when the stage is replaced)."""
        self.grasp_line_problem: str | None = None
        """Why the last :meth:`show_grasp_lines` drew nothing, when the lines cannot be read."""
        self.grasps: GraspSet | None = None
        self.visible = True
        self._widgets: dict[str, QtWidgets.QWidget] = {}
        host.connect_stage_replaced(self.rebuild)
        host.connect_selection_changed(self._on_selection_changed)

    # --- widgets ------------------------------------------------------------

    def _dock(self, key: str, title: str, factory) -> Any:
        widget = self._widgets.get(key)
        if widget is None:
            window = self.host.window
            widget = factory()
            dock = QtWidgets.QDockWidget(title, window)
            dock.setObjectName(f"usdgrip{key}Dock")
            dock.setWidget(widget)
            if isinstance(window, QtWidgets.QMainWindow):
                window.addDockWidget(QtCore.Qt.DockWidgetArea.BottomDockWidgetArea, dock)
            self._widgets[key] = widget
        return widget

    def show_widget(self, widget: QtWidgets.QWidget) -> None:
        """Show a panel's dock (or dialog) and bring it to the front."""
        top = (
            widget.parentWidget()
            if isinstance(widget.parentWidget(), QtWidgets.QDockWidget)
            else widget
        )
        top.show()
        top.raise_()

    def results_panel(self):
        """The validation results panel (created on first use)."""
        from usdgrip.views.panels import ResultsPanel

        return self._dock("Results", "Grippers: validation", lambda: ResultsPanel(self.host))

    def candidates_panel(self):
        """The grasp candidates list (created on first use)."""
        from usdgrip.views.panels import CandidatesPanel

        def make():
            panel = CandidatesPanel()
            panel.candidateSelected.connect(self.highlight)
            panel.exportRequested.connect(self.export_grasps)
            return panel

        return self._dock("Candidates", "Grippers: grasp candidates", make)

    def dialog(self, kind: str):
        """The non-modal ``sample`` or ``plan`` dialog (created on first use)."""
        from usdgrip.views.dialogs import PlanDialog, SampleDialog

        dialog = self._widgets.get(kind)
        if dialog is None:
            cls = SampleDialog if kind == "sample" else PlanDialog
            dialog = cls(self.host.window)
            dialog.resultReady.connect(self.show_grasps)
            self._widgets[kind] = dialog
        return dialog

    # --- overlays -----------------------------------------------------------

    def show_slots(self, prim_paths: list[str]) -> int:
        """Overlay the slots of ``prim_paths``; returns the number of slots drawn.

        A prim whose slots cannot be read (a value of the wrong type, say) is
        skipped; why is kept in :attr:`slot_problems`, one line per prim.
        """
        from usdgrip.usd_io import read_gripper_slots

        stage = self.host.stage
        slots = []
        self.slot_problems = []
        for path in prim_paths:
            prim = stage.GetPrimAtPath(path)
            if prim:
                try:
                    slots.extend(read_gripper_slots(prim))
                except GripperError as exc:
                    self.slot_problems.append(str(exc))
        self.slot_prims = list(prim_paths)
        overlays.author_slot_overlays(stage, slots)
        self._apply_visibility()
        return len(slots)

    def show_grasp_lines(self, roots: list[str]) -> int:
        """Overlay the grasp vector lines at or under ``roots`` (or whose object is there).

        Returns:
            The number of lines drawn (lines without two distinct points are not drawn).
        """
        from pxr import Sdf

        from usdgrip.usd_grasp_lines import find_grasp_lines

        stage = self.host.stage
        prefixes = [Sdf.Path(root) for root in roots]
        self.grasp_line_roots = list(roots)
        try:
            found = find_grasp_lines(stage)
            self.grasp_line_problem = None
        except GripperError as exc:  # e.g. metersPerUnit = 0: say so instead of drawing
            found, self.grasp_line_problem = [], str(exc)
        lines = [
            line
            for line in found
            if any(
                Sdf.Path(line.path).HasPrefix(root) or Sdf.Path(line.object_path).HasPrefix(root)
                for root in prefixes
            )
        ]
        drawn = overlays.author_grasp_line_overlays(stage, lines)
        self._apply_visibility()
        return len(drawn)

    def show_grasps(self, grasps: GraspSet) -> None:
        """Overlay ``grasps`` and list them in the candidates panel."""
        self.grasps = grasps
        self._author_grasps()
        panel = self.candidates_panel()
        panel.setGrasps(grasps)
        self.show_widget(panel)
        self.host.status(f"usdgrip: {len(grasps)} grasp candidates on {grasps.object_path}")

    def _author_grasps(self) -> None:
        from usdgrip.usd_io import compute_world_transform

        stage, grasps = self.host.stage, self.grasps
        prim = stage.GetPrimAtPath(grasps.object_path) if grasps is not None else None
        if not prim:
            return
        world = grasps.compute_world_poses(compute_world_transform(prim))
        overlays.author_grasp_overlays(
            stage, world, grasps.confidences, grasps.open_width, labels=grasps.labels
        )
        self._apply_visibility()

    def highlight(self, index: int) -> None:
        """Highlight candidate ``index`` (-1 for none)."""
        if self.host.stage is not None:
            overlays.set_grasp_highlight(self.host.stage, index if index >= 0 else None)

    def _on_selection_changed(self, *_: object) -> None:
        """Picking a grasp overlay in the viewport selects its row in the candidates list."""
        panel = self._widgets.get("Candidates")
        if panel is None or self.grasps is None:
            return
        prefix = f"{overlays.GRASPS_SCOPE}/g"
        for path in self.host.selected_paths:
            name = path[len(prefix) :] if path.startswith(prefix) else ""
            if name.isdigit() and int(name) < panel.rowCount():
                panel.selectCandidate(int(name))
                return

    def set_visible(self, visible: bool) -> None:
        """Show or hide all overlays."""
        self.visible = bool(visible)
        self._apply_visibility()

    def _apply_visibility(self) -> None:
        if self.host.stage is not None:
            overlays.set_overlays_visible(self.host.stage, self.visible)

    def clear(self) -> None:
        """Remove every overlay and forget what was shown."""
        self.slot_prims, self.grasps, self.grasp_line_roots = [], None, []
        if self.host.stage is not None:
            overlays.clear_overlays(self.host.stage)
        panel = self._widgets.get("Candidates")
        if panel is not None:
            panel.setGrasps(None)

    def rebuild(self) -> None:
        """Re-author the overlays on a replaced stage (usdview's signalStageReplaced)."""
        if self.host.stage is None:
            return
        stage = self.host.stage
        self.slot_prims = [p for p in self.slot_prims if stage.GetPrimAtPath(p)]
        if self.slot_prims:
            self.show_slots(self.slot_prims)
        if self.grasp_line_roots:
            self.show_grasp_lines(self.grasp_line_roots)
        if self.grasps is not None:
            self._author_grasps()
        results = self._widgets.get("Results")
        if results is not None:
            results.setStage(stage)

    # --- export -------------------------------------------------------------

    def export_grasps(self, path: str | None = None) -> Path | None:
        """Write the shown planned grasps as Isaac-Grasp YAML (asks for a file without ``path``).

        Returns:
            The written path, or ``None`` when nothing was written.
        """
        from usdgrip.isaac_yaml import write_isaac_grasp

        if self.grasps is None or self.grasps.source != "plan":
            self.host.status(
                "usdgrip: nothing to export; run Grippers > Plan Grasps… first "
                "(sampled slot targets are exported by `usdgrip sample --format json`)."
            )
            return None
        if path is None:
            path, _ = QtWidgets.QFileDialog.getSaveFileName(
                self.host.window, "Export grasps", "grasps.yaml", "Isaac-Grasp YAML (*.yaml *.yml)"
            )
            if not path:
                return None
        written = write_isaac_grasp(self.grasps.result, path)
        self.host.status(f"usdgrip: wrote {len(self.grasps)} grasps to {written}")
        return Path(written)


def get_session(host: UsdviewHost) -> GrippersSession:
    """The session of ``host``'s window, created on first use."""
    session = host.window.findChild(GrippersSession, SESSION_NAME)
    return session if session is not None else GrippersSession(host)
