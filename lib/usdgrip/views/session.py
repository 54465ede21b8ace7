"""One Grippers session per viewer window (usdview's): its overlays, panels and dialogs.

The session is a QObject child of the viewer's main window, found again by
object name, so every menu command reuses the same panels without a global.
It remembers what it overlaid (slot prims, the grasp set) and re-authors it
when the viewer replaces the stage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from usdgrip.views import actions, overlays
from usdgrip.views.grasp_set import GraspSet
from usdgrip.views.qt import QtCore, QtWidgets
from usdgrip.views.viewer import Viewer

SESSION_NAME = "usdgripSession"
#: Status line when an evaluation ends after the listed candidates changed.
EVALUATION_DROPPED = (
    "usdgrip: evaluation result discarded: the listed candidates changed while it ran"
)


class GrippersSession(QtCore.QObject):
    """Overlays and widgets of the Grippers menu for one viewer window."""

    def __init__(self, host: Viewer) -> None:
        super().__init__(host.window)
        self.setObjectName(SESSION_NAME)
        self.host = host
        self.slot_prims: list[str] = []
        self.slot_problems: list[str] = []
        """Why prims or slots of the last :meth:`show_slots` were skipped (one line each)."""
        self.last_slots = actions.SlotOverlays(0, [], [])
        """What the last :meth:`show_slots` drew (its status line included)."""
        self.grasps: GraspSet | None = None
        self.visible = True
        self._guides_before: bool | None = None
        """usdview's guide display before the overlays turned it on (None: not turned on)."""
        self._widgets: dict[str, QtWidgets.QWidget] = {}
        from usdgrip.views.saving import EditLayerFiles

        self.edit_layers = EditLayerFiles()
        """The edits layer files the dialogs authored into (the results panel saves them)."""
        host.connect_stage_replaced(self.rebuild)
        host.connect_selection_changed(self._on_selection_changed)
        host.connect_viewport_clicked(self._on_viewport_clicked)

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

        def make():
            panel = ResultsPanel(self.host)
            panel.setEditLayers(self.edit_layers)
            return panel

        return self._dock("Results", "Grippers: validation", make)

    def candidates_panel(self):
        """The grasp candidates list (created on first use)."""
        from usdgrip.views.panels import CandidatesPanel

        def make():
            panel = CandidatesPanel()
            panel.candidateSelected.connect(self.highlight)
            panel.exportRequested.connect(self.export_grasps)
            panel.evaluateRequested.connect(self.evaluate_grasps)
            panel.loadRequested.connect(self.load_grasps)
            return panel

        return self._dock("Candidates", "Grippers: grasp candidates", make)

    def dialog(self, kind: str):
        """The non-modal ``sample``, ``plan``, ``load`` or ``evaluate`` dialog (made once)."""
        from usdgrip.views.dialogs import EvaluateDialog, LoadGraspsDialog, PlanDialog, SampleDialog

        dialog = self._widgets.get(kind)
        if dialog is None:
            if kind == "evaluate":
                dialog = EvaluateDialog(self.host.window)
                dialog.resultReady.connect(self._show_evaluated)
                dialog.runner.failed.connect(
                    lambda message: self.host.status(f"usdgrip: evaluation failed: {message}")
                )
                self._widgets[kind] = dialog
                return dialog
            cls = {"sample": SampleDialog, "plan": PlanDialog, "load": LoadGraspsDialog}[kind]
            dialog = cls(self.host.window)
            dialog.resultReady.connect(self._show_loaded if kind == "load" else self.show_grasps)
            self._widgets[kind] = dialog
        return dialog

    def target(self) -> tuple[str | None, str | None]:
        """The selected prim and slot (a picked overlay stands for what it draws)."""
        selected = self.host.selected_paths
        if self.host.stage is None or not selected:
            return None, None
        return overlays.resolve_overlay_target(self.host.stage, selected[0])

    def _selected_prim(self, what: str) -> str | None:
        """The prim a dialog opens on (a picked overlay's owner), else ``None`` and a hint."""
        prim = self.target()[0]
        if prim is None:
            self.host.status(f"usdgrip: select {what}.")
        return prim

    def slot_dialog(self, name: str | None = None):
        """Open the Add Slot… (``name`` None) or Edit Slot… dialog on the selected prim."""
        from usdgrip.views.edit_dialogs import SlotDialog

        prim = self._selected_prim("the object prim to add a slot to")
        if prim is None:
            return None
        dialog = self._edit_dialog("slot", SlotDialog)
        dialog.setSlot(self.host.stage, prim, name)
        return self._show_edit_dialog(dialog)

    def site_dialog(self):
        """Open Add Gripper Site… on the selected prim (its site, or a new one there)."""
        from usdgrip.views.site_line_dialogs import SiteDialog

        prim = self._selected_prim("the prim to make a gripper site (or its parent)")
        if prim is None:
            return None
        dialog = self._edit_dialog("site", SiteDialog)
        dialog.setSite(self.host.stage, prim)
        return self._show_edit_dialog(dialog)

    def line_dialog(self):
        """Open Add Grasp Line… under the selected prim (or on the selected grasp line)."""
        from usdgrip.views.site_line_dialogs import LineDialog

        prim = self._selected_prim("the prop to add a grasp line to")
        if prim is None:
            return None
        dialog = self._edit_dialog("line", LineDialog)
        dialog.setLine(self.host.stage, prim)
        return self._show_edit_dialog(dialog)

    def _edit_dialog(self, key: str, cls) -> Any:
        dialog = self._widgets.get(key)
        if dialog is None:
            dialog = cls(self.host.window)
            dialog.authored.connect(self._show_authored)
            dialog.setEditLayers(self.edit_layers)
            self._widgets[key] = dialog
        return dialog

    def _show_edit_dialog(self, dialog) -> Any:
        self._show_guides()  # the preview is a guide
        self._apply_visibility()
        self.show_widget(dialog)
        return dialog

    def suggest_slots(self):
        """Open the Suggest Slots… dialog on the viewer's stage and selection."""
        from usdgrip.views.dialogs import SuggestSlotsDialog

        if self.host.stage is None:
            self.host.status("usdgrip: open a stage first.")
            return None
        dialog = self._widgets.get("suggest")
        if dialog is None:
            dialog = SuggestSlotsDialog(self.host.window)
            dialog.setEditLayers(self.edit_layers)
            dialog.authored.connect(
                lambda verdicts, layer: [self._show_authored(v, layer) for v in verdicts]
            )
            self._widgets["suggest"] = dialog
        if not dialog.isRunning():
            dialog.setStage(self.host.stage, self.host.selected_paths)
        self._show_guides()  # the suggestions are previewed as guides
        self._apply_visibility()
        self.show_widget(dialog)
        return dialog

    def remove_dialog(self):
        """Open Remove… on the selected prim (its site, slots and grasp lines)."""
        from usdgrip.views.edit_dialogs import RemoveDialog

        prim, slot = self.target()
        if self.host.stage is None or prim is None:
            self.host.status("usdgrip: select the prim to remove a slot or grasp line from.")
            return None
        dialog = self._edit_dialog("remove", RemoveDialog)
        dialog.setPrim(self.host.stage, prim)
        if slot is not None:
            dialog.itemCombo.setCurrentText(f"slot {slot}")
        self.show_widget(dialog)
        return dialog

    def discard_session_edits(self) -> int:
        """Remove what was authored into the session layer (the overlays stay)."""
        from usdgrip.views.edit_dialogs import discard_session_edits

        count = discard_session_edits(self.host.stage) if self.host.stage is not None else 0
        if self.slot_prims:
            self.show_slots(self.slot_prims)
        self.host.status(f"usdgrip: discarded the session layer's edits ({count} prim(s))")
        return count

    def _show_authored(self, verdict, layer) -> None:
        """After OK: redraw the object's slots, revalidate, say where it went.

        Authored into the root layer, the results panel is shown with its target on
        the root layer, so its **Save** writes the file (the CLI's write rules).
        """
        from usdgrip.authoring import SiteEdit
        from usdgrip.views.panels import TARGET_LAYERS

        stage = self.host.stage
        prim = verdict.edit.prim
        if isinstance(verdict.edit, SiteEdit):
            self._show_site(verdict.edit)
        elif prim not in self.slot_prims:
            self.slot_prims.append(prim)
        lines = self.last_slots.grasp_lines
        self.show_slots(self.slot_prims, lines.roots if lines is not None else [prim])
        into_root = layer == stage.GetRootLayer()
        edits = self.edit_layers.find(layer)
        results = self._widgets.get("Results")
        if results is not None or into_root or edits is not None:
            results = self.results_panel()
            results.setStage(stage, results.scope())
            if into_root:
                results.setTargetLayer(TARGET_LAYERS[1])
            elif edits is not None:
                results.setTargetLayer(results.editLayerLabel(edits))
            self.show_widget(results)
        if into_root:
            where = "the root layer (Save writes it)"
        elif edits is not None:
            where = f"the edits layer file {edits.path.name} (Save writes it)"
        else:
            where = layer.identifier
        done = "removed from" if getattr(verdict.edit, "remove", False) else "authored into"
        self.host.status(
            f"usdgrip: {done.split()[0]} {verdict.edit.label} {done.split()[1]} {where}"
        )

    def _show_site(self, edit) -> None:
        """Draw the authored site (its axes and open jaws); nothing after a removal."""
        from usdgrip.usd.sites import read_gripper_site

        stage = self.host.stage
        prim = stage.GetPrimAtPath(edit.prim)
        sites = []
        if not edit.remove and prim:
            try:
                sites = [read_gripper_site(prim, strict=False)]
            except ValueError:  # GripperError: nothing to draw
                sites = []
        overlays.author_site_overlays(stage, sites)

    def load_grasps(self, path: str | None = None) -> None:
        """Open the Load Grasps dialog on the viewer's stage and selection (``path`` filled in)."""
        if self.host.stage is None:
            self.host.status("usdgrip: open a stage first.")
            return
        dialog = self.dialog("load")
        if not dialog.isRunning():
            dialog.setStage(self.host.stage, self.host.selected_paths)
            if path is not None:
                dialog.setGraspFile(path)
        self.show_widget(dialog)

    def _show_loaded(self, grasps: GraspSet) -> None:
        """Show a loaded file's grasps; the status line says what was assumed."""
        self.show_grasps(grasps)
        if grasps.notes:
            more = f" (+{len(grasps.notes) - 1} more)" if len(grasps.notes) > 1 else ""
            self.host.status(
                f"usdgrip: {len(grasps)} grasp candidates on {grasps.object_path}; "
                f"{grasps.notes[0]}{more}"
            )

    def evaluate_grasps(self) -> None:
        """Open the Evaluate dialog for the listed planned candidates (status line when none)."""
        if self.grasps is None or self.grasps.source != "plan" or not len(self.grasps):
            self.host.status(actions.NOTHING_TO_EVALUATE)
            return
        dialog = self.dialog("evaluate")
        if not dialog.isRunning():
            dialog.setGrasps(self.host.stage, self.grasps)
        self.show_widget(dialog)

    def _show_evaluated(self, grasps: GraspSet) -> None:
        """Show an evaluated set (re-ranked, coloured by success) and its summary.

        Dropped when the list changed while it ran (a new plan, Clear Overlays).
        """
        dialog = self.dialog("evaluate")
        if dialog.grasps() is not self.grasps:
            self.host.status(EVALUATION_DROPPED)
            dialog.setGrasps(self.host.stage, self.grasps, EVALUATION_DROPPED[len("usdgrip: ") :])
            return
        self.show_grasps(grasps)
        self.host.status(f"usdgrip: {actions.describe_evaluation(grasps)}")

    # --- overlays -----------------------------------------------------------

    def show_slots(self, prim_paths: list[str], grasp_line_roots: list[str] | None = None) -> int:
        """Overlay the slots of ``prim_paths``; returns the number of slots drawn.

        A prim whose slots cannot be read (a value of the wrong type, say) and a
        slot whose frame is degenerate are skipped; why is kept in
        :attr:`slot_problems`, one line each. The other slots are drawn. With
        ``grasp_line_roots`` the grasp vector lines there are drawn too.
        """
        self.slot_prims = list(prim_paths)
        self.last_slots = actions.show_slot_overlays(self.host.stage, prim_paths, grasp_line_roots)
        self.slot_problems = self.last_slots.problems
        self._show_guides()
        self._apply_visibility()
        return self.last_slots.slot_count

    def show_grasps(self, grasps: GraspSet) -> None:
        """Overlay ``grasps`` and list them in the candidates panel."""
        self.grasps = grasps
        self._author_grasps()
        panel = self.candidates_panel()
        panel.setGrasps(grasps)
        evaluate = self._widgets.get("evaluate")
        if evaluate is not None and not evaluate.isRunning():
            evaluate.setGrasps(self.host.stage, grasps)  # Run evaluates what is listed
        self.show_widget(panel)
        self.host.status(f"usdgrip: {len(grasps)} grasp candidates on {grasps.object_path}")

    def _author_grasps(self) -> None:
        if self.host.stage is not None and self.grasps is not None:
            actions.author_grasp_set_overlays(self.host.stage, self.grasps)
            self._show_guides()
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

    def _on_viewport_clicked(self, origin: tuple, direction: tuple) -> None:
        """A click while a Pick button is pressed: that dialog (slot or line) takes the ray."""
        for key in ("slot", "line"):
            dialog = self._widgets.get(key)
            if dialog is not None and dialog.isPicking():
                dialog.applyPick(origin, direction)
                return

    def set_visible(self, visible: bool) -> None:
        """Show or hide all overlays."""
        self.visible = bool(visible)
        self._apply_visibility()

    def _apply_visibility(self) -> None:
        if self.host.stage is not None:
            overlays.set_overlays_visible(self.host.stage, self.visible)

    def clear(self) -> None:
        """Remove every overlay, forget what was shown, give the viewer back its guide setting.

        usdview's guide display is set back to what it was before the overlays
        turned it on; setting it makes usdview recompute its bounds, so framing
        and the selection box are again those of the stage alone.
        """
        self.slot_prims, self.slot_problems, self.grasps = [], [], None
        self.last_slots = actions.SlotOverlays(0, [], [])
        if self.host.stage is not None:
            overlays.clear_overlays(self.host.stage)
        evaluate = self._widgets.get("evaluate")
        if evaluate is not None and not evaluate.isRunning():
            evaluate.setGrasps(self.host.stage, None)
        panel = self._widgets.get("Candidates")
        if panel is not None:
            panel.setGrasps(None)
        before, self._guides_before = self._guides_before, None
        current = self.host.guides_displayed
        if current is not None:
            self.host.set_guides_displayed(current if before is None else before)

    def _show_guides(self) -> None:
        """Overlays are guides: turn usdview's guide display on while they are shown."""
        if self._guides_before is None:
            self._guides_before = self.host.guides_displayed
            if self._guides_before is not None:
                self.host.set_guides_displayed(True)

    def rebuild(self) -> None:
        """Follow a replaced stage (usdview's signalStageReplaced): panels, dialogs, overlays.

        Each step runs on its own: a step that fails (an overlay that cannot be
        drawn on the new stage, say) is reported in the status line and never
        stops the others.
        """
        stage = self.host.stage
        if stage is None:
            return
        self.slot_prims = [p for p in self.slot_prims if stage.GetPrimAtPath(p)]
        steps = []
        results = self._widgets.get("Results")
        if results is not None:
            steps.append(("validation", lambda: results.setStage(stage, results.scope())))
        for kind in ("sample", "plan", "load"):
            dialog = self._widgets.get(kind)
            if dialog is not None and not dialog.isRunning():
                steps.append((f"{kind} dialog", lambda d=dialog: d.setStage(stage, [])))
        lines = self.last_slots.grasp_lines
        line_roots = lines.roots if lines is not None and lines.line_count > 0 else None
        if self.slot_prims or line_roots is not None:
            steps.append(("slots", lambda: self.show_slots(self.slot_prims, line_roots)))
        if self.grasps is not None:
            steps.append(("grasps", self._author_grasps))
        failures = []
        for name, step in steps:
            try:
                step()
            except Exception as exc:  # reported; the other steps still run
                failures.append(f"{name}: {exc}")
        if failures:
            self.host.status(f"usdgrip: on the reopened stage, {'; '.join(failures)}")

    # --- export -------------------------------------------------------------

    def export_grasps(self, path: str | None = None) -> Path | None:
        """Write the shown planned grasps as Isaac-Grasp YAML (asks for a file without ``path``).

        Returns:
            The written path, or ``None`` when nothing was written.
        """
        if self.grasps is None or self.grasps.source != "plan":
            self.host.status(actions.NOTHING_TO_EXPORT)
            return None
        if path is None:
            path, _ = QtWidgets.QFileDialog.getSaveFileName(
                self.host.window, "Export grasps", "grasps.yaml", "Isaac-Grasp YAML (*.yaml *.yml)"
            )
            if not path:
                return None
        written = actions.export_grasp_set(self.grasps, path)
        self.host.status(f"usdgrip: wrote {len(self.grasps)} grasps to {written}")
        return written


def get_session(host: Viewer) -> GrippersSession:
    """The session of ``host``'s window, created on first use."""
    session = host.window.findChild(GrippersSession, SESSION_NAME)
    return session if session is not None else GrippersSession(host)
