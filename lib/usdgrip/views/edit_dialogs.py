"""The authoring dialogs' common part (:class:`EditDialog`) and Add Slot… / Edit Slot….

Every change rebuilds an edit (:class:`~usdgrip.authoring.SlotEdit`, ``SiteEdit``,
``LineEdit``), judges it with :func:`~usdgrip.authoring.check_edit` on one
:class:`~usdgrip.authoring.ProposalStage` kept by the dialog, and draws what it would
author in the session layer (:data:`usdgrip.views.overlays.PREVIEW_SCOPE`, never the
root layer). OK is enabled only while nothing refuses the edit; it authors with
:func:`~usdgrip.authoring.author_edit` into the layer chosen in the dialog
(:class:`LayerChoice`: the session layer, the root layer, or an edits layer file).
Add Gripper Site… and Add Grasp Line… are in :mod:`usdgrip.views.site_line_dialogs`.
"""

from __future__ import annotations

from typing import Any

from pxr import Sdf, Usd

from usdgrip.authoring import AuthoringError, ProposalStage, SlotEdit, author_edit, check_edit
from usdgrip.authoring.world_frame import convert_edit_from_world
from usdgrip.errors import GripperError
from usdgrip.surface_pick import compute_forward_against, intersect_ray
from usdgrip.usd.geometry import read_object_mesh
from usdgrip.usd.slots import list_slot_names
from usdgrip.usd.stage import get_meters_per_unit
from usdgrip.views import overlays
from usdgrip.views.actions import list_removables
from usdgrip.views.edit_previews import (
    NEW_SLOT,
    compute_new_slot_name,
    preview_slot_edits,
    read_slot_values,
)
from usdgrip.views.qt import QtWidgets, Signal
from usdgrip.views.saving import EditLayerFiles

#: Where OK authors (the dialog's "Author into" choice): the last is an edits layer file.
EDIT_LAYERS = ("Session layer (try)", "Root layer", "Edit layer file")
LR_CHOICES = ("(none)", "left", "right")
COORDINATE_LIMIT = 1e6
DEFAULT_FORWARD = NEW_SLOT["forward"]
DEFAULT_SPAN_AXIS = NEW_SLOT["span_axis"]
DEFAULT_UP_RANGE = NEW_SLOT["up_range"]


def make_vector_field(name: str, unit: str, value: tuple[float, float, float]) -> list[Any]:
    """Three spin boxes (x, y, z) named ``<name>X``... with ``unit`` as suffix."""
    spins = []
    for axis, v in zip("XYZ", value, strict=True):
        spin = QtWidgets.QDoubleSpinBox()
        spin.setObjectName(f"{name}{axis}")
        spin.setDecimals(4)
        spin.setRange(-COORDINATE_LIMIT, COORDINATE_LIMIT)
        spin.setSingleStep(0.005)
        if unit:
            spin.setSuffix(f" {unit}")
        spin.setValue(v)
        spins.append(spin)
    return spins


def make_length_field(name: str, value: float, unit: str = "m", limit: float = 10.0) -> Any:
    """A spin box for a length or limit (``unit`` as suffix), ``0..limit``."""
    spin = QtWidgets.QDoubleSpinBox()
    spin.setObjectName(name)
    spin.setDecimals(4)
    spin.setRange(0.0, limit)
    spin.setSingleStep(0.005)
    spin.setSuffix(f" {unit}")
    spin.setValue(value)
    return spin


def get_unit_suffix(stage: Usd.Stage) -> str:
    """The suffix of a field in stage units: `` m``, or `` × 0.01 m``."""
    unit = f"× {get_meters_per_unit(stage):g} m"
    return f" {unit}" if unit != "× 1 m" else " m"


def cast_pick(
    stage: Usd.Stage, prim_path: str, origin: tuple, direction: tuple
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Where a click's world ray (stage units) meets ``prim_path``'s mesh: point, normal.

    The point in world stage units, the face's unit normal.

    Raises:
        ValueError: the ray misses, or the prim has no mesh to pick on.
        GripperError: the mesh cannot be read.
    """
    mesh = read_object_mesh(stage.GetPrimAtPath(prim_path), "world")
    mpu = get_meters_per_unit(stage)
    hit = intersect_ray(mesh.vertices, mesh.faces, [x * mpu for x in origin], direction)
    return tuple(x / mpu for x in hit.point), tuple(hit.normal)  # type: ignore[return-value]


def make_row(widgets: list[Any]) -> QtWidgets.QWidget:
    """The widgets side by side in one form row."""
    box = QtWidgets.QWidget()
    layout = QtWidgets.QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    return box


class LayerChoice(QtWidgets.QWidget):
    """Where OK authors: the session layer (try), the root layer, or an edits layer file.

    The file (new or existing, ``--layer``'s rules) is attached to the stage when OK
    authors into it (:class:`~usdgrip.views.saving.EditLayerFiles`); the validation
    panel's **Save** writes it.
    """

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = QtWidgets.QComboBox()
        self.combo.setObjectName("layer")
        self.combo.addItems(EDIT_LAYERS)
        self.pathEdit = QtWidgets.QLineEdit("")
        self.pathEdit.setObjectName("editLayerPath")
        self.pathEdit.setPlaceholderText("EDITS.usda (sublayers the asset; created if new)")
        self.browse = QtWidgets.QPushButton("…")
        self.browse.setObjectName("browseEditLayer")
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.combo, self.pathEdit, self.browse):
            layout.addWidget(widget)
        self.combo.currentIndexChanged.connect(self._show_path)
        self.browse.clicked.connect(self._ask_path)
        self._show_path()

    def choice(self) -> str:
        """The chosen entry of :data:`EDIT_LAYERS`."""
        return self.combo.currentText()

    def setEditLayerPath(self, path: str) -> None:
        """Choose the edits layer file ``path``."""
        self.combo.setCurrentText(EDIT_LAYERS[2])
        self.pathEdit.setText(str(path))

    def resolve(self, stage: Usd.Stage, files: EditLayerFiles) -> Sdf.Layer:
        """The layer to author into (an edits layer file is attached on first use).

        Raises:
            ValueError, OSError: no file given, or the file is refused (why).
        """
        choice = self.choice()
        if choice != EDIT_LAYERS[2]:
            return get_layer_of(stage, choice)
        path = self.pathEdit.text().strip()
        if not path:
            raise ValueError("give the edits layer file (EDITS.usda) to author into")
        return files.attach(stage, path).layer

    def _show_path(self, *_: object) -> None:
        shown = self.choice() == EDIT_LAYERS[2]
        self.pathEdit.setVisible(shown)
        self.browse.setVisible(shown)

    def _ask_path(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self,
            "Edits layer file",
            self.pathEdit.text() or "edits.usda",
            "USD (*.usda *.usdc *.usd)",
        )
        if path:
            self.pathEdit.setText(path)


class EditDialog(QtWidgets.QDialog):
    """What every authoring dialog shares: verdict, preview, OK only while accepted, layer.

    A subclass builds its fields into :attr:`form`, calls :meth:`finish_layout`, and
    gives :meth:`edit` (the edit its fields describe) and :meth:`preview` (draw it).
    """

    authored = Signal(object, object)
    """``(verdict, layer)`` after OK authored the edit: the
    :class:`~usdgrip.authoring.AuthoringVerdict` and the ``Sdf.Layer`` written."""

    #: What is authored, in the verdict line ("slot", "gripper site", "grasp line").
    WHAT = "edit"

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModal(False)
        self.setMinimumWidth(480)
        self._stage: Usd.Stage | None = None
        self._scratch: ProposalStage | None = None
        self._prim = ""
        self._loading = False
        self.verdict = None
        self.editLayers = EditLayerFiles()
        self.form = QtWidgets.QFormLayout()
        self.layerChoice = LayerChoice()
        self.layerCombo = self.layerChoice.combo
        self.verdictLabel = QtWidgets.QLabel("")
        self.verdictLabel.setObjectName("verdict")
        self.verdictLabel.setWordWrap(True)
        self._ok = QtWidgets.QPushButton("OK")
        self._ok.setObjectName("ok")
        self._ok.setDefault(True)
        self._cancel = QtWidgets.QPushButton("Cancel")
        self._cancel.setObjectName("cancel")

    def finish_layout(self) -> None:
        """Add "Author into", the verdict line and OK/Cancel below the fields."""
        self.form.addRow("Author into", self.layerChoice)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self._ok)
        buttons.addWidget(self._cancel)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.verdictLabel)
        layout.addLayout(buttons)
        self._ok.clicked.connect(self.accept_edit)
        self._cancel.clicked.connect(self.reject)

    def connect_fields(self, widgets: list[Any]) -> None:
        """Judge and preview again on every change of ``widgets``."""
        for widget in widgets:
            for name in ("valueChanged", "textChanged", "currentIndexChanged", "toggled"):
                signal = getattr(widget, name, None)
                if signal is not None:
                    signal.connect(self.refresh)
                    break

    def setEditLayers(self, files: EditLayerFiles) -> None:
        """Share the viewer's attached edits layer files (the session's)."""
        self.editLayers = files

    # --- to give ----------------------------------------------------------------

    def edit(self) -> Any:
        """The edit the fields describe."""
        raise NotImplementedError

    def preview(self, edit: Any | None) -> None:
        """Draw what ``edit`` would author in the preview scope (``None``: nothing)."""
        overlays.author_slot_overlays(self._stage, [], overlays.PREVIEW_SCOPE)

    # --- public API -------------------------------------------------------------

    def verdictText(self) -> str:
        """What the verdict line shows."""
        return self.verdictLabel.text()

    def okEnabled(self) -> bool:
        """Whether OK would author (nothing refuses the edit)."""
        return self._ok.isEnabled()

    def refresh(self, *_: object) -> None:
        """Judge the edit, redraw the preview, enable OK only while nothing refuses it."""
        if self._loading or self._stage is None or self._scratch is None:
            return
        try:
            edit = self.edit()
            verdict = check_edit(self._stage, edit, scratch=self._scratch)
        except (ValueError, GripperError) as exc:
            self.verdict = None
            self.verdictLabel.setText(f"Not authorable: {exc}")
            self._ok.setEnabled(False)
            self.preview(None)
            return
        self.verdict = verdict
        lines = [verdict.describe(item) for item in verdict.items]
        head = f"OK: the rules accept this {self.WHAT}." if verdict.ok else "Refused by the rules:"
        self.verdictLabel.setText("\n".join([head, *lines]))
        self._ok.setEnabled(verdict.ok)
        self.preview(edit)

    def targetLayer(self) -> Sdf.Layer | None:
        """The layer OK authors into (an edits layer file is attached here).

        Raises:
            ValueError, OSError: the edits layer file is refused.
        """
        if self._stage is None:
            return None
        return self.layerChoice.resolve(self._stage, self.editLayers)

    def accept_edit(self) -> bool:
        """Author the edit into the chosen layer; False (reason shown) when it is refused."""
        if self._stage is None:
            return False
        try:
            edit = self.edit()
            layer = self.targetLayer()
            verdict = author_edit(self._stage, edit, layer=layer, scratch=self._scratch)
        except AuthoringError as exc:
            self.verdictLabel.setText(f"Refused: {exc}")
            self._ok.setEnabled(False)
            return False
        except (ValueError, GripperError, OSError) as exc:
            self.verdictLabel.setText(f"Not authored: {exc}")
            return False
        self._clear_preview()
        self.authored.emit(verdict, layer)
        self.accept()
        return True

    def done(self, result: int) -> None:
        self._clear_preview()
        super().done(result)

    def _clear_preview(self) -> None:
        if self._stage is not None and self._stage.GetSessionLayer() is not None:
            overlays.clear_overlays(self._stage, overlays.PREVIEW_SCOPE.name)


class SlotDialog(EditDialog):
    """Add or edit one ``GripperSlotAPI`` instance of an object prim."""

    WHAT = "slot"

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        form = self.form
        self.objectLabel = QtWidgets.QLabel("")
        self.objectLabel.setObjectName("object")
        self.nameEdit = QtWidgets.QLineEdit("slot")
        self.nameEdit.setObjectName("name")
        self.center = make_vector_field("center", "", (0.0, 0.0, 0.0))
        self.forward = make_vector_field("forward", "", DEFAULT_FORWARD)
        self.spanAxis = make_vector_field("spanAxis", "", DEFAULT_SPAN_AXIS)
        self.upRange = QtWidgets.QDoubleSpinBox()
        self.upRange.setObjectName("upRange")
        self.upRange.setDecimals(4)
        self.upRange.setRange(-10.0, 10.0)
        self.upRange.setSingleStep(0.005)
        self.upRange.setSuffix(" m")
        self.upRange.setValue(DEFAULT_UP_RANGE)
        self.inputAngle = QtWidgets.QDoubleSpinBox()
        self.inputAngle.setObjectName("slotInputAngle")
        self.inputAngle.setRange(-360.0, 360.0)
        self.inputAngle.setSuffix(" °")
        self.lrCombo = QtWidgets.QComboBox()
        self.lrCombo.setObjectName("lr")
        self.lrCombo.addItems(LR_CHOICES)
        self.groupEdit = QtWidgets.QLineEdit("")
        self.groupEdit.setObjectName("group")
        form.addRow("Object", self.objectLabel)
        form.addRow("Slot name", self.nameEdit)
        self._centerLabel = QtWidgets.QLabel("Centre")
        form.addRow(self._centerLabel, make_row(self.center))
        form.addRow("Forward (direction)", make_row(self.forward))
        form.addRow("Span axis (direction)", make_row(self.spanAxis))
        form.addRow("Up range", self.upRange)
        form.addRow("Input angle", self.inputAngle)
        form.addRow("LR", self.lrCombo)
        form.addRow("Group", self.groupEdit)
        self.pickButton = QtWidgets.QPushButton("Pick on surface")
        self.pickButton.setObjectName("pick")
        self.pickButton.setCheckable(True)
        self.pickButton.setToolTip("The next click in the viewport sets the centre there")
        self.alignCheck = QtWidgets.QCheckBox("Align to surface")
        self.alignCheck.setObjectName("align")
        self.alignCheck.setChecked(True)
        self.alignCheck.setToolTip("The pick also sets forward against the picked face's normal")
        form.addRow("", make_row([self.pickButton, self.alignCheck]))
        self.finish_layout()
        self.connect_fields(
            [*self.center, *self.forward, *self.spanAxis, self.upRange, self.inputAngle]
            + [self.nameEdit, self.groupEdit, self.lrCombo]
        )

    # --- public API -----------------------------------------------------------

    def setSlot(self, stage: Usd.Stage, prim_path: str, name: str | None = None) -> None:
        """Edit slot ``name`` of ``prim_path`` (its authored values), or add a new one."""
        self._stage = stage
        self._prim = prim_path
        self._scratch = ProposalStage(stage, [prim_path])
        prim = stage.GetPrimAtPath(prim_path)
        for spin in self.center:
            spin.setSuffix(get_unit_suffix(stage))
        editing = name is not None and name in list_slot_names(prim)
        self.setWindowTitle(f"Grippers: {'edit' if editing else 'add'} slot on {prim_path}")
        self.objectLabel.setText(prim_path)
        self._loading = True
        try:
            if editing:
                self.nameEdit.setText(name)
                self.nameEdit.setReadOnly(True)
                self._load_values(prim, name)
            else:
                self.nameEdit.setReadOnly(False)
                self.nameEdit.setText(compute_new_slot_name(prim))
        finally:
            self._loading = False
        self.refresh()

    def edit(self) -> SlotEdit:
        """The edit the fields describe (every field given)."""
        lr = self.lrCombo.currentText()
        return SlotEdit(
            self._prim,
            self.nameEdit.text().strip(),
            center=tuple(s.value() for s in self.center),
            forward=tuple(s.value() for s in self.forward),
            span_axis=tuple(s.value() for s in self.spanAxis),
            up_range=self.upRange.value(),
            slot_input_angle=self.inputAngle.value(),
            lr=None if lr == LR_CHOICES[0] else lr,
            group=self.groupEdit.text(),
        )

    def preview(self, edit: SlotEdit | None) -> None:
        """Draw the slot ``edit`` would author (nothing for ``None``)."""
        if edit is None:
            overlays.author_slot_overlays(self._stage, [], overlays.PREVIEW_SCOPE)
        else:
            preview_slot_edits(self._stage, [edit], self._scratch)

    def setCentre(self, point: tuple[float, float, float]) -> None:
        """Set the centre (the picked surface point, in the object's frame)."""
        for spin, v in zip(self.center, point, strict=True):
            spin.setValue(float(v))

    def setForward(self, direction: tuple[float, float, float]) -> None:
        """Set ``forward`` (Align to surface: against the picked face's normal)."""
        for spin, v in zip(self.forward, direction, strict=True):
            spin.setValue(float(v))

    def isPicking(self) -> bool:
        """Whether the next viewport click is taken as a pick (Pick on surface pressed)."""
        return self.pickButton.isChecked() and self.isVisible()

    def applyPick(self, origin: tuple, direction: tuple) -> bool:
        """Take a click's world ray (stage units): the centre where it meets the object.

        With Align to surface, ``forward`` is set against the face's normal there.
        False (why shown) when the ray misses the object or its mesh cannot be read.
        """
        self.pickButton.setChecked(False)
        if self._stage is None:
            return False
        try:
            point, normal = cast_pick(self._stage, self._prim, origin, direction)
            forward = compute_forward_against(normal) if self.alignCheck.isChecked() else None
            local = convert_edit_from_world(
                self._stage, SlotEdit(self._prim, "pick", center=point, forward=forward)
            )
        except (ValueError, GripperError) as exc:
            self.verdictLabel.setText(f"Pick not used: {exc}")
            return False
        self._loading = True
        try:
            self.setCentre(local.center)
            if local.forward is not None:
                self.setForward(local.forward)
        finally:
            self._loading = False
        self.refresh()
        return True

    # --- internals --------------------------------------------------------------

    def _load_values(self, prim: Usd.Prim, name: str) -> None:
        values = read_slot_values(prim, name)
        for spins, key in ((self.center, "center"), (self.forward, "forward")):
            if key in values:
                self._set_vector(spins, values[key])
        if "span_axis" in values:
            self._set_vector(self.spanAxis, values["span_axis"])
        for spin, key in ((self.upRange, "up_range"), (self.inputAngle, "slot_input_angle")):
            if key in values:
                spin.setValue(values[key])
        lr = values.get("lr")
        self.lrCombo.setCurrentText(lr if lr in LR_CHOICES else LR_CHOICES[0])
        self.groupEdit.setText(values.get("group", ""))

    @staticmethod
    def _set_vector(spins: list[Any], value: Any) -> None:
        for spin, v in zip(spins, value, strict=True):
            spin.setValue(float(v))


def get_layer_of(stage: Usd.Stage, choice: str) -> Sdf.Layer:
    """The layer a session or root layer choice of :data:`EDIT_LAYERS` names."""
    return stage.GetRootLayer() if choice == EDIT_LAYERS[1] else stage.GetSessionLayer()


class RemoveDialog(QtWidgets.QDialog):
    """Remove the site, a slot or a grasp line of the selected prim (``remove`` edits)."""

    authored = Signal(object, object)
    """``(verdict, layer)`` after the removal was authored."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModal(False)
        self._stage: Usd.Stage | None = None
        self._edits: list[Any] = []
        self.itemCombo = QtWidgets.QComboBox()
        self.itemCombo.setObjectName("item")
        self.editLayers = EditLayerFiles()
        self.layerChoice = LayerChoice()
        self.layerCombo = self.layerChoice.combo
        self.verdictLabel = QtWidgets.QLabel("")
        self.verdictLabel.setObjectName("verdict")
        self.verdictLabel.setWordWrap(True)
        self._remove = QtWidgets.QPushButton("Remove")
        self._remove.setObjectName("remove")
        close = QtWidgets.QPushButton("Close")
        close.setObjectName("cancel")
        form = QtWidgets.QFormLayout()
        form.addRow("Remove", self.itemCombo)
        form.addRow("From", self.layerChoice)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.verdictLabel)
        layout.addWidget(make_row([self._remove, close]))
        self._remove.clicked.connect(self.removeSelected)
        close.clicked.connect(self.reject)

    def setEditLayers(self, files: EditLayerFiles) -> None:
        """Share the viewer's attached edits layer files (the session's)."""
        self.editLayers = files

    def setPrim(self, stage: Usd.Stage, prim_path: str) -> None:
        """List the site, slots and grasp lines of ``prim_path``."""
        self._stage = stage
        self.setWindowTitle(f"Grippers: remove from {prim_path}")
        found = list_removables(stage, prim_path)
        self._edits = [edit for _, edit in found]
        self.itemCombo.clear()
        self.itemCombo.addItems([label for label, _ in found])
        self._remove.setEnabled(bool(found))
        self.verdictLabel.setText(
            "" if found else f"{prim_path}: no gripper site, slot or grasp line here."
        )

    def verdictText(self) -> str:
        """What the verdict line shows."""
        return self.verdictLabel.text()

    def removeSelected(self) -> bool:
        """Author the chosen removal into the chosen layer; False with the reason shown."""
        index = self.itemCombo.currentIndex()
        if self._stage is None or index < 0:
            return False
        try:
            layer = self.layerChoice.resolve(self._stage, self.editLayers)
            verdict = author_edit(self._stage, self._edits[index], layer=layer)
        except (ValueError, GripperError, OSError) as exc:
            self.verdictLabel.setText(f"Not removed: {exc}")
            return False
        notes = [verdict.describe(item) for item in verdict.items]
        self.verdictLabel.setText("\n".join([f"Removed {self.itemCombo.currentText()}.", *notes]))
        self.authored.emit(verdict, layer)
        self.itemCombo.removeItem(index)
        del self._edits[index]
        self._remove.setEnabled(bool(self._edits))
        return True


def discard_session_edits(stage: Usd.Stage) -> int:
    """Remove every opinion of the session layer but the overlays; returns how many root prims.

    Discard Session Edits: what was authored "to try" goes; the overlays stay.
    """
    layer = stage.GetSessionLayer()
    if layer is None:
        return 0
    names = [s.name for s in layer.rootPrims if s.path != overlays.OVERLAY_ROOT]
    with Sdf.ChangeBlock():
        for name in names:
            del layer.rootPrims[name]
    return len(names)
