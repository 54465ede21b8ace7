"""Non-modal dialogs that run the sampler or the planner off the UI thread.

Each dialog reads what it needs from the stage on the UI thread (slots,
object path, gripper sites), runs the library call in a
:class:`~usdgrip.views.task_runner.TaskRunner` with a progress bar and a Cancel
button, and emits :attr:`resultReady` with a
:class:`~usdgrip.views.grasp_set.GraspSet` when it finishes. Their bases (the form, progress
bar and Run/Cancel; the gripper asset and site) are in :mod:`usdgrip.views.task_dialogs`.
"""

from __future__ import annotations

from typing import Any

from pxr import Usd

from usdgrip.errors import GripperError
from usdgrip.views import actions
from usdgrip.views.glyphs import DEFAULT_OPEN_WIDTH
from usdgrip.views.grasp_set import GraspSet
from usdgrip.views.qt import QtWidgets, Signal
from usdgrip.views.task_dialogs import GripperDialog, TaskDialog, browse_row
from usdgrip.views.task_runner import TaskCancelled, TaskContext

MAX_COUNT = 100_000
MAX_SEED = 2**31 - 1
#: Suggest Slots…' Hands choice: a slot per hand, or one two-handed group.
HANDS_CHOICES = ("1", "2")


class SampleDialog(TaskDialog):
    """Sample end-effector targets from the slots of one object (``sample_gripper_groups``)."""

    TITLE = "Grippers: sample slot grasps"

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.objectCombo = QtWidgets.QComboBox()
        self.objectCombo.setObjectName("object")
        self.countSpin = QtWidgets.QSpinBox()
        self.countSpin.setObjectName("count")
        self.countSpin.setRange(1, MAX_COUNT)
        self.countSpin.setValue(8)
        self.seedSpin = QtWidgets.QSpinBox()
        self.seedSpin.setObjectName("seed")
        self.seedSpin.setRange(0, MAX_SEED)
        self.seedSpin.setValue(7)
        self.widthSpin = QtWidgets.QDoubleSpinBox()
        self.widthSpin.setObjectName("openWidth")
        self.widthSpin.setDecimals(4)
        self.widthSpin.setRange(0.001, 2.0)
        self.widthSpin.setSingleStep(0.005)
        self.widthSpin.setSuffix(" m")
        self.widthSpin.setValue(DEFAULT_OPEN_WIDTH)
        self.form.addRow("Object", self.objectCombo)
        self.form.addRow("Count", self.countSpin)
        self.form.addRow("Seed", self.seedSpin)
        self.form.addRow("Jaw opening", self.widthSpin)

    def setStage(self, stage: Usd.Stage, selected_paths: list[str] | tuple = ()) -> None:
        """List the objects with slots; preselect the first selected one."""
        self._stage = stage
        paths = actions.find_slot_prims(stage)
        self.objectCombo.clear()
        self.objectCombo.addItems(paths)
        for path in selected_paths:
            if path in paths:
                self.objectCombo.setCurrentText(path)
                break
        width = actions.find_default_open_width(stage)
        if width is not None:
            self.widthSpin.setValue(width)
        self._message.setText("" if paths else "No prim on this stage has grasp slots.")

    def _prepare(self):
        if self._stage is None:
            raise ValueError("Choose an object with grasp slots first.")
        sampling = actions.read_sampling_input(self._stage, self.objectCombo.currentText())
        count, seed, width = self.countSpin.value(), self.seedSpin.value(), self.widthSpin.value()

        def task(context: TaskContext) -> GraspSet:
            context.report(
                0, 0, f"Sampling {count} candidate(s) from {len(sampling.slots)} slot(s)…"
            )
            return actions.sample_grasp_set(sampling, count, seed, width)

        return task, lambda grasps: grasps


class PlanDialog(GripperDialog):
    """Plan grasp candidates for one object and one gripper site (``plan_grasps``)."""

    TITLE = "Grippers: plan grasps"

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.countSpin = QtWidgets.QSpinBox()
        self.countSpin.setObjectName("count")
        self.countSpin.setRange(1, MAX_COUNT)
        self.countSpin.setValue(20)
        self.seedSpin = QtWidgets.QSpinBox()
        self.seedSpin.setObjectName("seed")
        self.seedSpin.setRange(0, MAX_SEED)
        self.seedSpin.setValue(0)
        self.methodChecks: dict[str, QtWidgets.QCheckBox] = {}
        methods = QtWidgets.QWidget()
        methods_layout = QtWidgets.QHBoxLayout(methods)
        methods_layout.setContentsMargins(0, 0, 0, 0)
        for name in _planning_methods():
            check = QtWidgets.QCheckBox(name)
            check.setObjectName(f"method_{name}")
            check.setChecked(True)
            self.methodChecks[name] = check
            methods_layout.addWidget(check)
        self.form.addRow("Object", self.objectCombo)
        self.form.addRow("Gripper asset", self.gripperRow)
        self.form.addRow("Gripper site", self.siteCombo)
        self.form.addRow("Max candidates", self.countSpin)
        self.form.addRow("Seed", self.seedSpin)
        self.form.addRow("Methods", methods)

    def _prepare(self):
        if self._stage is None:
            raise ValueError("Choose the object to grasp first.")
        methods = tuple(name for name, check in self.methodChecks.items() if check.isChecked())
        request = actions.build_plan_request(
            self._stage,
            self.objectCombo.currentText(),
            self._gripper_asset(),
            self.siteCombo.currentText(),
            self.countSpin.value(),
            self.seedSpin.value(),
        )
        if self.methodChecks and not methods:
            raise ValueError("Tick at least one method.")
        # All ticked: let the planner run every backend that applies to this object.
        chosen = None if len(methods) == len(self.methodChecks) else methods
        stages = dict(self._gripper_stages)

        def task(context: TaskContext) -> GraspSet:
            def progress(message: str, fraction: float) -> None:
                if context.cancelled:
                    raise TaskCancelled("planning cancelled")
                context.report(round(1000 * fraction), 1000, message)

            context.report(0, 0, f"Planning up to {request.max_candidates_per_gripper} grasp(s)…")
            return actions.plan_grasp_set(request, methods=chosen, progress=progress, stages=stages)

        return task, lambda grasps: grasps


#: The gripper site choice of Load Grasps… that converts nothing.
NO_SITE = "(none: poses as the file has them)"


class LoadGraspsDialog(GripperDialog):
    """Show an Isaac-Grasp file of any writer (``load_grasp_set``): Load Grasps….

    The file (usdgrip's, Isaac Sim's Grasp Editor, GraspGen, GraspDataGen) is read off the
    UI thread; its grasps are placed on the object (a usdgrip file's ``pose_frame``, else the
    one chosen) and, with a gripper site, another writer's gripper frame (the file's, or
    the one typed) is converted to that site's grasp frame. Evaluate and Export then work
    on it as on a plan (the file's keys kept).
    """

    TITLE = "Grippers: load grasps"

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.fileEdit = QtWidgets.QLineEdit()
        self.fileEdit.setObjectName("graspFile")
        self.fileEdit.setPlaceholderText("Isaac-Grasp .yaml (usdgrip, Grasp Editor, GraspGen…)")
        browse = QtWidgets.QPushButton("Browse…")
        browse.setObjectName("browseFile")
        row = browse_row(self.fileEdit, browse)
        self.frameEdit = QtWidgets.QLineEdit()
        self.frameEdit.setObjectName("gripperFrame")
        self.frameEdit.setPlaceholderText("the file's gripper_frame, else the site's grasp frame")
        self.form.addRow("Grasp file", row)
        self.form.addRow("Object", self.objectCombo)
        self.form.addRow("Gripper asset", self.gripperRow)
        self.form.addRow("Gripper site", self.siteCombo)
        self.form.addRow("Gripper frame", self.frameEdit)
        browse.clicked.connect(self._browse_file)

    def setGraspFile(self, path: str) -> None:
        """The file Run reads."""
        self.fileEdit.setText(str(path))

    def _browse_file(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Grasp file", "", "Isaac-Grasp YAML (*.yaml *.yml);;All files (*)"
        )
        if path:
            self.setGraspFile(path)

    def _load_sites(self) -> None:
        super()._load_sites()
        self.siteCombo.insertItem(0, NO_SITE)
        self.siteCombo.setCurrentIndex(0)
        if self.siteCombo.count() == 1:
            self._message.setText("")  # a site is optional here

    def _prepare(self):
        from usdgrip.contracts import GripperRef
        from usdgrip.grasping.isaac_yaml import read_isaac_grasp

        if self._stage is None:
            raise ValueError("Open the stage the grasps are for first.")
        path = self.fileEdit.text().strip()
        if not path:
            raise ValueError("Choose the grasp file to load.")
        site = self.siteCombo.currentText()
        gripper = None
        if site and site != NO_SITE:
            gripper = GripperRef(asset_path=self._gripper_asset(), prim_path=site)
        frame = self.frameEdit.text().strip() or None
        if frame is not None and gripper is None:
            raise ValueError("A gripper frame needs a gripper site (whose grasp frame it becomes).")
        stage, object_path = self._stage, self.objectCombo.currentText()

        def task(context: TaskContext) -> Any:
            context.report(0, 0, f"Reading {path}…")
            return read_isaac_grasp(path)  # the slow part; the stage is read on the UI thread

        def finish(result: Any) -> GraspSet:
            try:
                return actions.load_grasp_set(stage, result, object_path, gripper, frame, name=path)
            except GripperError as exc:
                raise ValueError(str(exc)) from None

        return task, finish


#: Most trials per candidate the Evaluate dialog offers, and the most grip force (N).
MAX_TRIALS = 1000
MAX_FORCE = 100_000.0


class EvaluateDialog(TaskDialog):
    """Grasp-and-lift the listed planned candidates in MuJoCo (``evaluate_grasps``).

    Trials (default 1), grip force per finger (default: the site's
    ``gripper:maxGripForce``, else 50 N), seed and whether the object rests on a table
    (default on) are asked; everything else is ``usdgrip evaluate``'s default, with one
    worker process (``jobs=1``: a viewer's Python may not start worker processes). The
    result is ranked best-first by measured success, then confidence
    (``rank=True``, as ``usdgrip plan --evaluate``). Cancel stops between candidates;
    the candidates finished by then are counted in the message, nothing is changed.
    """

    TITLE = "Grippers: evaluate grasps"

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._grasps: GraspSet | None = None
        self._finished_before_cancel: tuple[int, int] | None = None
        self.trialsSpin = QtWidgets.QSpinBox()
        self.trialsSpin.setObjectName("trials")
        self.trialsSpin.setRange(1, MAX_TRIALS)
        self.trialsSpin.setValue(1)
        self.forceSpin = QtWidgets.QDoubleSpinBox()
        self.forceSpin.setObjectName("force")
        self.forceSpin.setDecimals(1)
        self.forceSpin.setRange(0.0, MAX_FORCE)
        self.forceSpin.setSingleStep(5.0)
        self.forceSpin.setSuffix(" N")
        self.forceSpin.setSpecialValueText("site's, else 50 N")
        self.forceSpin.setValue(0.0)
        self.seedSpin = QtWidgets.QSpinBox()
        self.seedSpin.setObjectName("seed")
        self.seedSpin.setRange(0, MAX_SEED)
        self.tableCheck = QtWidgets.QCheckBox("a plane under the object's lowest point")
        self.tableCheck.setObjectName("table")
        self.tableCheck.setChecked(True)
        self.form.addRow("Trials", self.trialsSpin)
        self.form.addRow("Grip force", self.forceSpin)
        self.form.addRow("Seed", self.seedSpin)
        self.form.addRow("Table", self.tableCheck)

    def setGrasps(self, stage: Usd.Stage | None, grasps: GraspSet | None, note: str = "") -> None:
        """Evaluate ``grasps`` (a plan of an object of ``stage``, read from its file).

        ``note`` replaces the message (else: how many candidates Run evaluates).
        """
        self._stage, self._grasps = stage, grasps
        count = 0 if grasps is None else len(grasps)
        where = "" if grasps is None else f" on {grasps.object_path}"
        self._message.setText(note or f"{count} planned candidate(s){where}.")

    def grasps(self) -> GraspSet | None:
        """The set Run evaluates (or last evaluated)."""
        return self._grasps

    def _prepare(self):
        grasps, stage = self._grasps, self._stage
        if grasps is None or grasps.source != "plan" or not len(grasps):
            raise ValueError(actions.NOTHING_TO_EVALUATE)
        object_file = stage.GetRootLayer().realPath if stage is not None else ""
        if not object_file:
            raise ValueError(
                "The stage is not saved to a file; the evaluation reads the object from disk."
            )
        from usdgrip.grasping.options import EvaluationOptions

        options = EvaluationOptions(  # made and checked once, on the UI thread
            trials=self.trialsSpin.value(),
            seed=self.seedSpin.value(),
            table=self.tableCheck.isChecked(),
            force=self.forceSpin.value() or None,
        )
        self._finished_before_cancel = None

        def task(context: TaskContext) -> GraspSet:
            from usdgrip.grasping.physics import EvaluationCancelled

            def progress(message: str, fraction: float) -> None:
                context.report(round(1000 * fraction), 1000, message)

            context.report(0, 0, f"Reading the object and gripper for {len(grasps)} candidate(s)…")
            try:
                return actions.evaluate_grasp_set(
                    grasps, object_file, options=options, rank=True, progress=progress,
                    cancel=lambda: context.cancelled,
                )  # fmt: skip
            except EvaluationCancelled as exc:  # partial results: counted, not shown
                self._finished_before_cancel = (len(exc.results), len(grasps))
                raise TaskCancelled(str(exc)) from None

        return task, lambda evaluated: evaluated

    def _on_finished(self, value: Any) -> None:
        evaluated = self._grasps
        super()._on_finished(value)  # emits resultReady: the session may drop the result
        if self._grasps is not evaluated and self._grasps is not value:
            return  # dropped: the session set the candidates listed instead
        if isinstance(value, GraspSet) and value.success_rates is not None:
            self._message.setText(actions.describe_evaluation(value) + ".")

    def _on_cancelled(self) -> None:
        super()._on_cancelled()
        done = self._finished_before_cancel
        if done is not None:
            self._message.setText(
                f"Cancelled after {done[0]} of {done[1]} candidate(s); nothing was changed."
            )


def _planning_methods() -> tuple[str, ...]:
    try:
        from usdgrip.grasping.backends.registry import METHODS
    except ImportError:
        return ()
    return tuple(METHODS)


class SuggestSlotsDialog(GripperDialog):
    """Suggest physics-proven slots for one object (``usdgrip.suggest.suggest_slots``).

    Run plans, simulates and proves in the worker; the suggested slots are then drawn as
    preview overlays (session layer) and listed, and **Author** writes them into the layer
    chosen (``author_slot_suggestions``: the rules first). The file on disk is what is
    read (the suggest library opens it), so unsaved edits in the viewer are not seen.
    """

    TITLE = "Grippers: suggest slots"
    authored = Signal(object, object)
    """``(verdicts, layer)`` after Author wrote the suggested slots."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        from usdgrip.suggest import (
            DEFAULT_CANDIDATES,
            DEFAULT_MAX_SLOTS,
            DEFAULT_MIN_SUCCESS,
            DEFAULT_TRIALS,
        )
        from usdgrip.suggest.screening import MAX_CANDIDATES
        from usdgrip.views.edit_dialogs import LayerChoice
        from usdgrip.views.saving import EditLayerFiles

        super().__init__(parent)
        self.found = None
        self.maxSlotsSpin = QtWidgets.QSpinBox()
        self.maxSlotsSpin.setObjectName("maxSlots")
        self.maxSlotsSpin.setRange(1, 64)
        self.maxSlotsSpin.setValue(DEFAULT_MAX_SLOTS)
        self.minSuccessSpin = QtWidgets.QDoubleSpinBox()
        self.minSuccessSpin.setObjectName("minSuccess")
        self.minSuccessSpin.setRange(0.0, 1.0)
        self.minSuccessSpin.setSingleStep(0.05)
        self.minSuccessSpin.setValue(DEFAULT_MIN_SUCCESS)
        self.trialsSpin = QtWidgets.QSpinBox()
        self.trialsSpin.setObjectName("trials")
        self.trialsSpin.setRange(1, 100)
        self.trialsSpin.setValue(DEFAULT_TRIALS)
        self.seedSpin = QtWidgets.QSpinBox()
        self.seedSpin.setObjectName("seed")
        self.seedSpin.setRange(0, MAX_SEED)
        self.candidatesSpin = QtWidgets.QSpinBox()
        self.candidatesSpin.setObjectName("candidates")
        self.candidatesSpin.setRange(1, MAX_CANDIDATES)
        self.candidatesSpin.setValue(DEFAULT_CANDIDATES)
        self.candidatesSpin.setToolTip("Grasps planned before physics (suggest --candidates)")
        self.tableCheck = QtWidgets.QCheckBox("on a table (lift from a support)")
        self.tableCheck.setObjectName("table")
        self.handsCombo = QtWidgets.QComboBox()
        self.handsCombo.setObjectName("hands")
        self.handsCombo.addItems(HANDS_CHOICES)
        self.handsCombo.setToolTip(
            "2: one two-handed group (LR left/right) on opposite sides of the centre of "
            "mass, proven with both hands closing together (suggest --hands 2)"
        )
        self.groupEdit = QtWidgets.QLineEdit("carry")
        self.groupEdit.setObjectName("group")
        self.groupEdit.setToolTip("The group name of the two slots (hands 2 only)")
        self.handsCombo.currentIndexChanged.connect(self._show_group)
        self.editLayers = EditLayerFiles()
        self.layerChoice = LayerChoice()
        self.layerCombo = self.layerChoice.combo
        self.suggestionList = QtWidgets.QListWidget()
        self.suggestionList.setObjectName("suggestions")
        self.form.addRow("Object", self.objectCombo)
        self.form.addRow("Gripper asset", self.gripperRow)
        self.form.addRow("Gripper site", self.siteCombo)
        self.form.addRow("Max slots", self.maxSlotsSpin)
        self.form.addRow("Min success", self.minSuccessSpin)
        self.form.addRow("Trials", self.trialsSpin)
        self.form.addRow("Seed", self.seedSpin)
        self.form.addRow("Candidates", self.candidatesSpin)
        self.form.addRow("", self.tableCheck)
        self.form.addRow("Hands", self.handsCombo)
        self.form.addRow("Group", self.groupEdit)
        self.form.addRow("Author into", self.layerChoice)
        self.form.addRow("Suggested", self.suggestionList)
        self._author = QtWidgets.QPushButton("Author")
        self._author.setObjectName("author")
        self._author.setEnabled(False)
        self._author.clicked.connect(self.authorSuggestions)
        buttons = self.layout().itemAt(self.layout().count() - 1).layout()  # Run, Cancel
        buttons.insertWidget(buttons.indexOf(self._run) + 1, self._author)
        self._show_group()

    def setEditLayers(self, files) -> None:
        """Share the viewer's attached edits layer files (the session's)."""
        self.editLayers = files

    def _show_group(self, *_: object) -> None:
        self.groupEdit.setEnabled(self.handsCombo.currentText() == HANDS_CHOICES[1])

    def _prepare(self):
        from usdgrip.contracts import GripperRef
        from usdgrip.suggest import SuggestionCancelled, SuggestOptions, suggest_slots

        if self._stage is None:
            raise ValueError("Open a stage first.")
        file = self._stage.GetRootLayer().realPath
        if not file:
            raise ValueError("The stage has no file: save it first (suggest reads the file).")
        site = self.siteCombo.currentText()
        if not site:
            raise ValueError("Choose a gripper asset with a gripper site.")
        options = SuggestOptions(
            max_slots=self.maxSlotsSpin.value(),
            min_success=self.minSuccessSpin.value(),
            trials=self.trialsSpin.value(),
            seed=self.seedSpin.value(),
            candidates=self.candidatesSpin.value(),
            table=self.tableCheck.isChecked(),
            hands=int(self.handsCombo.currentText()),
            group=self.groupEdit.text().strip() if self.groupEdit.isEnabled() else None,
        )
        gripper = GripperRef(asset_path=self._gripper_asset(), prim_path=site)
        prim = self.objectCombo.currentText()
        self._clear_suggestions()

        def task(context: TaskContext):
            def progress(message: str, fraction: float) -> None:
                context.report(round(fraction * 100), 100, message)

            try:
                return suggest_slots(
                    file,
                    prim,
                    gripper,
                    options,
                    progress=progress,
                    cancel=lambda: context.cancelled,
                )
            except SuggestionCancelled:
                raise TaskCancelled from None

        return task, lambda found: found

    def _on_finished(self, value: Any) -> None:
        self._set_running(False)
        self._progress.setRange(0, 1)
        self._progress.setValue(1)
        self.showSuggestions(value)

    def showSuggestions(self, found) -> None:
        """List ``found`` (``SlotSuggestions``) and preview its slots (session layer)."""
        from usdgrip.views.edit_previews import preview_slot_edits

        self.found = found
        self.suggestionList.clear()
        for s in found.slots:
            self.suggestionList.addItem(
                f"{s.name}: held {s.proven_success:.0%} of {s.samples} sample(s)"
            )
        for left in found.left_out:
            self.suggestionList.addItem(f"left out {left.name}: {left.reason}")
        if self._stage is not None:
            preview_slot_edits(self._stage, [self._edit_of(s) for s in found.slots])
        self._author.setEnabled(bool(found.slots))
        self._message.setText(
            f"{len(found.slots)} slot(s) suggested, {len(found.left_out)} left out "
            f"({found.held} of {found.planned} planned grasp(s) held); Author writes them."
            if found.slots
            else f"Nothing held well enough: {len(found.left_out)} left out; nothing to author."
            + (f" {found.advice}" if found.advice else "")
        )

    def _edit_of(self, s):
        from usdgrip.authoring import SlotEdit

        return SlotEdit(
            self.found.object,
            s.name,
            center=s.center,
            forward=s.forward,
            span_axis=s.span_axis,
            up_range=s.up_range,
            slot_input_angle=s.slot_input_angle,
            lr=s.lr,
            group=s.group or None,
        )

    def targetLayer(self):
        """The layer Author writes into (session, root, or an edits layer file).

        Raises:
            ValueError, OSError: the edits layer file is refused.
        """
        if self._stage is None:
            return None
        return self.layerChoice.resolve(self._stage, self.editLayers)

    def authorSuggestions(self) -> bool:
        """Author the suggested slots (rules first); False with the reason shown."""
        from usdgrip.suggest import author_slot_suggestions

        if self._stage is None or self.found is None or not self.found.slots:
            return False
        try:
            layer = self.targetLayer()
            verdicts = author_slot_suggestions(self._stage, self.found, layer=layer)
        except (ValueError, GripperError, OSError) as exc:
            self._message.setText(f"Not authored: {exc}")
            return False
        self._clear_suggestions()
        self._message.setText(f"Authored {len(verdicts)} slot(s).")
        self.authored.emit(verdicts, layer)
        return True

    def _clear_suggestions(self) -> None:
        from usdgrip.views import overlays

        self.found = None
        self.suggestionList.clear()
        self._author.setEnabled(False)
        if self._stage is not None and self._stage.GetSessionLayer() is not None:
            overlays.clear_overlays(self._stage, overlays.PREVIEW_SCOPE.name)

    def done(self, result: int) -> None:
        self._clear_suggestions()
        super().done(result)
