"""Dockable panels of the Grippers menu: validation results and grasp candidates.

Both are plain QWidgets (usdview's session puts them in QDockWidgets) with
camelCase public methods, as Qt widgets have: ``setStage``, ``setGrasps``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from pxr import Sdf, Usd

from usdgrip.views.grasp_set import GraspSet
from usdgrip.views.qt import QtCore, QtGui, QtWidgets, Signal
from usdgrip.views.viewer import Viewer

ALL = "All"
SEVERITIES = ("failure", "error", "warning", "info")
SEVERITY_COLORS = {
    "failure": "#c0392b",
    "error": "#d35400",
    "warning": "#b7950b",
    "info": "#2e86c1",
}
RESULT_COLUMNS = ("Severity", "Code", "Rule", "Prim", "Message")
TARGET_LAYERS = ("Session layer", "Root layer")
#: The label of an attached edits layer file in "Fix into" (its file name follows).
EDIT_LAYER_LABEL = "Edit layer: "
#: Characters of a rule's doc shown as a tooltip.
TOOLTIP_CHARS = 1200


def get_rule_doc(code: str) -> str:
    """The rule's user doc (markdown), cut to :data:`TOOLTIP_CHARS`; "" for an unknown code."""
    from usdgrip.rules import RULES

    rule = RULES.get(code)
    doc = rule.doc if rule is not None else ""
    return doc if len(doc) <= TOOLTIP_CHARS else doc[:TOOLTIP_CHARS].rstrip() + " …"


def _default_validator(stage: Usd.Stage) -> Any:
    from usdgrip.rules import validate

    return validate(stage)


def _in_scope(prim: str, scope: Sequence[str] | None) -> bool:
    if not scope:
        return True
    path = Sdf.Path(prim) if prim else Sdf.Path.emptyPath
    return any(path.HasPrefix(Sdf.Path(s)) for s in scope)


class ResultsPanel(QtWidgets.QWidget):
    """Validation results: filter, inspect, select the prim, fix into a chosen layer, save it.

    Fixes go into the session layer (try them; never saved) or the root layer,
    which **Save** writes to its file (shown while the root layer is chosen, enabled
    when it has unsaved changes that can be kept; see :mod:`usdgrip.views.saving`).

    Args:
        host: the viewer (selection and status line).
        validator: ``stage -> Report``; default :func:`usdgrip.validate`.
    """

    validated = Signal(int)
    """Emitted after each run with the number of issues in scope."""

    def __init__(
        self,
        host: Viewer | None = None,
        parent: QtWidgets.QWidget | None = None,
        validator: Callable[[Usd.Stage], Any] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("usdgripResultsPanel")
        self._host = host
        self._validator = validator or _default_validator
        self._stage: Usd.Stage | None = None
        self._scope: list[str] | None = None
        self._report: Any = None
        self._issues: list[Any] = []
        self._opened: Any = None  # FileSnapshot of the root layer's file when the stage came
        self._edit_layers: Any = None  # EditLayerFiles: the edits layer files Save can write

        self._severity = QtWidgets.QComboBox()
        self._severity.setObjectName("severityFilter")
        self._severity.addItems([ALL, *SEVERITIES])
        self._code = QtWidgets.QComboBox()
        self._code.setObjectName("codeFilter")
        self._code.addItem(ALL)
        self._layer = QtWidgets.QComboBox()
        self._layer.setObjectName("targetLayer")
        self._layer.addItems(TARGET_LAYERS)
        self._layer.setToolTip("Layer the fixes are written to")
        self._fix = QtWidgets.QPushButton("Fix")
        self._fix.setObjectName("fix")
        self._fix_all = QtWidgets.QPushButton("Fix all")
        self._fix_all.setObjectName("fixAll")
        self._save = QtWidgets.QPushButton("Save")
        self._save.setObjectName("save")
        self._save.setToolTip(
            "Write the root layer, with the fixes, to its file (usdview has no File > Save): "
            "atomic; refuses a read-only file or one changed on disk since it was read"
        )
        self._rerun = QtWidgets.QPushButton("Re-validate")
        self._rerun.setObjectName("revalidate")
        self._summary = QtWidgets.QLabel("No stage validated yet.")
        self._summary.setObjectName("summary")

        self._tree = QtWidgets.QTreeWidget()
        self._tree.setObjectName("issues")
        self._tree.setColumnCount(len(RESULT_COLUMNS))
        self._tree.setHeaderLabels(list(RESULT_COLUMNS))
        self._tree.setRootIsDecorated(False)
        self._tree.setAlternatingRowColors(True)
        self._tree.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        header = self._tree.header()
        header.setStretchLastSection(True)
        for column, width in enumerate((70, 80, 170, 150)):
            self._tree.setColumnWidth(column, width)

        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(QtWidgets.QLabel("Severity"))
        bar.addWidget(self._severity)
        bar.addWidget(QtWidgets.QLabel("Code"))
        bar.addWidget(self._code)
        bar.addStretch(1)
        bar.addWidget(QtWidgets.QLabel("Fix into"))
        bar.addWidget(self._layer)
        bar.addWidget(self._fix)
        bar.addWidget(self._fix_all)
        bar.addWidget(self._save)
        bar.addWidget(self._rerun)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self._tree)
        layout.addWidget(self._summary)

        self._severity.currentTextChanged.connect(self._apply_filters)
        self._code.currentTextChanged.connect(self._apply_filters)
        self._tree.itemDoubleClicked.connect(self._on_double_click)
        self._tree.currentItemChanged.connect(self._update_buttons)
        self._fix.clicked.connect(self.fixSelected)
        self._fix_all.clicked.connect(self.fixAll)
        self._save.clicked.connect(self.saveRootLayer)
        self._rerun.clicked.connect(self.validate)
        self._layer.currentTextChanged.connect(self._update_buttons)
        self._update_buttons()

    # --- public API -----------------------------------------------------------

    def setStage(self, stage: Usd.Stage | None, prim_paths: Sequence[str] | None = None) -> None:
        """Validate ``stage``; with ``prim_paths`` only issues on or under them are listed."""
        if stage is not self._stage:
            from usdgrip.views.saving import take_layer_snapshot

            self._opened = take_layer_snapshot(stage.GetRootLayer() if stage else None)
        self._stage = stage
        self._scope = list(prim_paths) if prim_paths else None
        self._fill_layers()
        self.validate()

    def validate(self) -> None:
        """Run the rules again on the current stage and refill the list."""
        self._issues, self._report = [], None
        if self._stage is not None:
            self._report = self._validator(self._stage)
            self._issues = [i for i in self._report.issues if _in_scope(i.prim, self._scope)]
        self._fill()
        self.validated.emit(len(self._issues))

    def scope(self) -> list[str] | None:
        """The prim paths the list is limited to, or ``None`` for the whole stage."""
        return list(self._scope) if self._scope else None

    def issues(self) -> list[Any]:
        """Issues in scope, in report order."""
        return list(self._issues)

    def visibleIssues(self) -> list[Any]:
        """Issues that pass the severity and code filters, in display order."""
        root = self._tree.invisibleRootItem()
        items = (root.child(i) for i in range(root.childCount()))
        return [self._issue_of(item) for item in items if not item.isHidden()]

    def setSeverityFilter(self, severity: str) -> None:
        """Show only ``severity`` (or ``"All"``)."""
        self._severity.setCurrentText(severity)

    def setCodeFilter(self, code: str) -> None:
        """Show only ``code`` (or ``"All"``)."""
        self._code.setCurrentText(code)

    def setTargetLayer(self, name: str) -> None:
        """Choose where fixes go and what Save writes.

        ``"Session layer"``, ``"Root layer"``, or ``"Edit layer: <file>"`` (an attached
        edits layer file, :meth:`setEditLayers`).
        """
        self._layer.setCurrentText(name)

    def setEditLayers(self, files: Any) -> None:
        """Offer the edits layer files attached to the stage (an ``EditLayerFiles``)."""
        self._edit_layers = files
        self._fill_layers()

    def targetLayer(self) -> Sdf.Layer | None:
        """The layer fixes are written to."""
        if self._stage is None:
            return None
        edits = self._chosen_edits()
        if edits is not None:
            return edits.layer
        if self._layer.currentText() == TARGET_LAYERS[1]:
            return self._stage.GetRootLayer()
        return self._stage.GetSessionLayer()

    @staticmethod
    def editLayerLabel(edits: Any) -> str:
        """The "Fix into" entry of an attached edits layer file."""
        return f"{EDIT_LAYER_LABEL}{edits.path.name}"

    def _attached(self) -> list[Any]:
        return self._edit_layers.on(self._stage) if self._edit_layers is not None else []

    def _chosen_edits(self) -> Any:
        label = self._layer.currentText()
        return next((e for e in self._attached() if self.editLayerLabel(e) == label), None)

    def _fill_layers(self) -> None:
        current = self._layer.currentText()
        labels = [*TARGET_LAYERS, *(self.editLayerLabel(e) for e in self._attached())]
        self._layer.blockSignals(True)
        self._layer.clear()
        self._layer.addItems(labels)
        self._layer.setCurrentText(current if current in labels else TARGET_LAYERS[0])
        self._layer.blockSignals(False)
        self._update_buttons()

    def selectIssue(self, row: int) -> None:
        """Make row ``row`` (display order) current."""
        self._tree.setCurrentItem(self._tree.topLevelItem(row))

    def saveRootLayer(self) -> bool:
        """Write the chosen layer to its file: the root layer, or an edits layer file.

        The root layer by :func:`usdgrip.views.saving.save_layer`, an edits layer file
        by :func:`usdgrip.authoring.edit_layers.save_edits_layer` (``--layer``'s rules).

        Returns:
            True when saved; otherwise the one-line reason is shown and False returned.
        """
        from usdgrip.authoring.edit_layers import save_edits_layer
        from usdgrip.views.saving import save_layer

        if self._stage is None:
            return False
        edits = self._chosen_edits()
        layer = self._stage.GetRootLayer()
        try:
            if edits is not None:
                notes = save_edits_layer(edits)
                if self._host is not None:
                    note = f" ({'; '.join(notes)})" if notes else ""
                    self._host.status(f"usdgrip: saved {edits.path}{note}")
                self.validate()
                return True
            self._opened, notes = save_layer(layer, self._opened)
        except (ValueError, OSError) as exc:
            self._summary.setText(f"Not saved: {exc}")
            if self._host is not None:
                self._host.status(f"usdgrip: not saved: {exc}")
            self._update_buttons()
            return False
        if self._host is not None:
            note = f" ({'; '.join(notes)})" if notes else ""
            self._host.status(f"usdgrip: saved {layer.realPath}{note}")
        self.validate()
        return True

    def fixSelected(self) -> int:
        """Apply the fixes of the current issue into :meth:`targetLayer`, then re-validate."""
        item = self._tree.currentItem()
        issue = self._issue_of(item) if item is not None else None
        if issue is None or not issue.fixes:
            return 0
        return self._fix_issues([issue])

    def fixAll(self) -> int:
        """Apply every unambiguous fix in scope into :meth:`targetLayer`, then re-validate."""
        return self._fix_issues([i for i in self._issues if i.fixes])

    # --- internals --------------------------------------------------------------

    def _fix_issues(self, issues: list[Any]) -> int:
        from usdgrip.rules import Report

        layer = self.targetLayer()
        if layer is None or not issues:
            return 0
        try:
            changed = Report(stage=self._stage, issues=issues).apply_fixes(layer)
        except ValueError as exc:
            self._summary.setText(str(exc))
            return 0
        if self._host is not None:
            if layer == self._stage.GetSessionLayer():
                note = "session layer (not saved)"
            elif layer == self._stage.GetRootLayer():
                note = "root layer; Save writes it to its file"
            else:
                note = "edits layer file; Save writes it"
            self._host.status(f"usdgrip: {len(changed)} fix(es) written to the {note}")
        self.validate()
        return len(changed)

    def _fill(self) -> None:
        self._tree.clear()
        codes = sorted({str(i.code) for i in self._issues})
        current = self._code.currentText()
        self._code.blockSignals(True)
        self._code.clear()
        self._code.addItems([ALL, *codes])
        self._code.setCurrentText(current if current in codes else ALL)
        self._code.blockSignals(False)
        for index, issue in enumerate(self._issues):
            severity = issue.severity
            rule = issue.rule
            variant = getattr(issue, "variant", None)  # the selection that shows it: hand=bad
            message = f"[{variant}] {issue.message}" if variant else str(issue.message)
            values = (severity, str(issue.code), rule, issue.prim, message)
            item = QtWidgets.QTreeWidgetItem(list(values))
            item.setData(0, QtCore.Qt.ItemDataRole.UserRole, index)
            color = SEVERITY_COLORS.get(severity)
            if color:
                item.setForeground(0, QtGui.QBrush(QtGui.QColor(color)))
            doc = get_rule_doc(str(issue.code))
            for column in range(len(values)):
                item.setToolTip(column, doc or str(issue.message))
            if issue.fixes:
                item.setText(1, f"{issue.code} ⚙")
            self._tree.addTopLevelItem(item)
        self._apply_filters()

    def _issue_of(self, item: QtWidgets.QTreeWidgetItem) -> Any:
        return self._issues[int(item.data(0, QtCore.Qt.ItemDataRole.UserRole))]

    def _apply_filters(self, *_: Any) -> None:
        severity, code = self._severity.currentText(), self._code.currentText()
        root = self._tree.invisibleRootItem()
        shown = 0
        for i in range(root.childCount()):
            item = root.child(i)
            issue = self._issue_of(item)
            sev = issue.severity
            hide = (severity != ALL and sev != severity) or (
                code != ALL and str(issue.code) != code
            )
            item.setHidden(hide)
            shown += not hide
        fixable = sum(1 for i in self._issues if i.fixes)
        if self._stage is None:
            self._summary.setText("No stage validated yet.")
        else:
            scope = f" under {', '.join(self._scope)}" if self._scope else ""
            self._summary.setText(
                f"{len(self._issues)} issue(s){scope}, {shown} shown, {fixable} fixable."
            )
        self._update_buttons()

    def _update_buttons(self, *_: Any) -> None:
        item = self._tree.currentItem()
        issue = self._issue_of(item) if item is not None else None
        self._fix.setEnabled(bool(issue is not None and issue.fixes))
        self._fix_all.setEnabled(any(i.fixes for i in self._issues))
        self._update_save()

    def _update_save(self) -> None:
        """Save is offered for a root layer with unsaved changes that can be kept.

        And for an attached edits layer file (its write refuses what the CLI refuses).
        """
        from usdgrip.views.saving import compute_unsavable_reason

        if self._chosen_edits() is not None:
            self._save.setVisible(True)
            self._save.setEnabled(True)
            self._save.setToolTip("Write the edits layer file (atomic; read-only refused)")
            return
        self._save.setVisible(self._layer.currentText() == TARGET_LAYERS[1])
        layer = self._stage.GetRootLayer() if self._stage is not None else None
        reason = compute_unsavable_reason(layer) if layer is not None else "no stage"
        self._save.setEnabled(bool(layer is not None and layer.dirty and reason is None))
        if reason is not None and layer is not None:
            self._save.setToolTip(f"Cannot save: {reason}")

    def _on_double_click(self, item: QtWidgets.QTreeWidgetItem, _column: int = 0) -> None:
        path = self._issue_of(item).prim
        if self._host is not None and path and not self._host.select_prim(path):
            self._host.status(f"usdgrip: prim <{path}> is not on the stage")


def _format_value(values: Any, row: int, pattern: str) -> str:
    """A cell's text: ``values[row]`` formatted, ``""`` when absent (None, NaN)."""
    if values is None or not math.isfinite(float(values[row])):
        return ""
    return pattern.format(float(values[row]))


class CandidatesPanel(QtWidgets.QWidget):
    """Grasp candidates best first; the current row is highlighted in the viewport."""

    candidateSelected = Signal(int)
    """Row of the current candidate, or -1."""
    exportRequested = Signal()
    evaluateRequested = Signal()
    loadRequested = Signal()
    """Load… was clicked: show an Isaac-Grasp file of any writer."""

    COLUMNS = ("#", "Candidate", "Confidence", "Method / slot")
    #: Columns added after an evaluation: success rate over the trials, first trial's outcome.
    MEASURED_COLUMNS = ("Success", "Outcome")

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usdgripCandidatesPanel")
        self._grasps: GraspSet | None = None
        self._table = QtWidgets.QTableWidget(0, len(self.COLUMNS))
        self._table.setObjectName("candidates")
        self._table.setHorizontalHeaderLabels(list(self.COLUMNS))
        self._table.verticalHeader().setVisible(False)
        self._table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self._table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self._table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self._table.horizontalHeader().setStretchLastSection(True)
        self._label = QtWidgets.QLabel("No candidates.")
        self._export = QtWidgets.QPushButton("Export…")
        self._export.setObjectName("export")
        self._evaluate = QtWidgets.QPushButton("Evaluate…")
        self._evaluate.setObjectName("evaluate")
        self._evaluate.setToolTip("Grasp-and-lift every candidate in MuJoCo (usdgrip evaluate)")
        self._load = QtWidgets.QPushButton("Load…")
        self._load.setObjectName("load")
        self._load.setToolTip(
            "Show an Isaac-Grasp file: usdgrip's, Isaac Sim Grasp Editor's, GraspGen's, "
            "GraspDataGen's"
        )
        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(self._label, 1)
        bar.addWidget(self._load)
        bar.addWidget(self._evaluate)
        bar.addWidget(self._export)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self._table)
        self._table.currentCellChanged.connect(lambda row, *_: self.candidateSelected.emit(row))
        self._export.clicked.connect(self.exportRequested.emit)
        self._evaluate.clicked.connect(self.evaluateRequested.emit)
        self._load.clicked.connect(self.loadRequested.emit)
        self.setGrasps(None)

    def setGrasps(self, grasps: GraspSet | None) -> None:
        """List ``grasps`` (``None`` clears the list)."""
        self._grasps = grasps
        measured = grasps is not None and grasps.success_rates is not None
        self._table.blockSignals(True)
        self._table.setColumnCount(len(self.COLUMNS) + (len(self.MEASURED_COLUMNS) * measured))
        self._table.setHorizontalHeaderLabels(
            list(self.COLUMNS) + (list(self.MEASURED_COLUMNS) if measured else [])
        )
        self._table.setRowCount(0 if grasps is None else len(grasps))
        if grasps is not None:
            for row in range(len(grasps)):
                conf = _format_value(grasps.confidences, row, "{:.3f}")
                cells = (str(row + 1), grasps.labels[row], conf, grasps.details[row])
                if measured:
                    outcome = grasps.outcomes[row] if grasps.outcomes else ""
                    cells += (_format_value(grasps.success_rates, row, "{:.0%}"), outcome)
                for column, text in enumerate(cells):
                    self._table.setItem(row, column, QtWidgets.QTableWidgetItem(text))
        self._table.blockSignals(False)
        self._table.resizeColumnsToContents()
        self._table.horizontalHeader().setStretchLastSection(True)
        planned = grasps is not None and grasps.source == "plan"
        self._export.setEnabled(planned)
        self._evaluate.setEnabled(planned and len(grasps) > 0)
        if grasps is None:
            self._label.setText("No candidates.")
        else:
            kind = "planned" if grasps.source == "plan" else "sampled"
            kind = "evaluated" if measured else kind
            self._label.setText(f"{len(grasps)} {kind} candidate(s) on {grasps.object_path}")
        self._label.setToolTip("\n".join(grasps.notes) if grasps is not None else "")

    def grasps(self) -> GraspSet | None:
        """The listed set."""
        return self._grasps

    def rowCount(self) -> int:
        """Number of listed candidates."""
        return self._table.rowCount()

    def currentRow(self) -> int:
        """Current row, -1 when none."""
        return self._table.currentRow()

    def selectCandidate(self, row: int) -> None:
        """Make ``row`` current (emits :attr:`candidateSelected`)."""
        self._table.setCurrentCell(row, 0)

    def table(self) -> QtWidgets.QTableWidget:
        """The table (for tests and keyboard focus)."""
        return self._table
