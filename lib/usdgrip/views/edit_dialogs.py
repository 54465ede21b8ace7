"""The Add Slot… / Edit Slot… dialog: fields with units, a live preview, the rules' verdict.

Every change rebuilds a :class:`~usdgrip.authoring.SlotEdit`, judges it with
:func:`~usdgrip.authoring.check_edit` on one :class:`~usdgrip.authoring.ProposalStage`
kept by the dialog, and draws what it would author in the session layer
(:data:`usdgrip.views.overlays.PREVIEW_SCOPE`, never the root layer). OK is enabled
only while nothing refuses the edit; it authors with
:func:`~usdgrip.authoring.author_edit` into the layer chosen in the dialog.
"""

from __future__ import annotations

from typing import Any

from pxr import Sdf, Usd

from usdgrip.authoring import AuthoringError, ProposalStage, SlotEdit, author_edit, check_edit
from usdgrip.authoring.plans import map_identity, plan_edit
from usdgrip.authoring.world_frame import convert_edit_from_world
from usdgrip.errors import GripperError
from usdgrip.rules.engine import resolve_params
from usdgrip.site_records import GripperSlot
from usdgrip.surface_pick import compute_forward_against, intersect_ray
from usdgrip.usd.geometry import read_object_mesh
from usdgrip.usd.slots import get_slot_attribute_name, list_slot_names, read_gripper_slots
from usdgrip.usd.stage import get_meters_per_unit
from usdgrip.views import overlays
from usdgrip.views.qt import QtWidgets, Signal

#: Where OK authors (the dialog's "Layer" choice).
EDIT_LAYERS = ("Session layer (try)", "Root layer")
LR_CHOICES = ("(none)", "left", "right")
COORDINATE_LIMIT = 1e6
DEFAULT_FORWARD = (0.0, 0.0, -1.0)
DEFAULT_SPAN_AXIS = (1.0, 0.0, 0.0)
#: A new slot's up range (metres): GS.002 wants more than 0.
DEFAULT_UP_RANGE = 0.05


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


def _row(widgets: list[Any]) -> QtWidgets.QWidget:
    box = QtWidgets.QWidget()
    layout = QtWidgets.QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    return box


def preview_slot_edits(
    stage: Usd.Stage, edits: list[SlotEdit], scratch: ProposalStage | None = None
) -> list[str]:
    """Draw the slots ``edits`` would author, in the session layer's preview scope.

    The edits are authored together on ``scratch`` (a :class:`ProposalStage` of
    ``stage``; default a new one) and read back as world slots; an edit that cannot be
    planned or read (a degenerate frame) is not drawn.
    """
    scratch = scratch if scratch is not None else ProposalStage(stage)
    params = resolve_params(None)
    scratch.reset()
    names: dict[str, set[str]] = {}
    with Sdf.ChangeBlock():
        for edit in edits:
            try:
                plan = plan_edit(stage, edit, params)
            except (ValueError, GripperError):
                continue
            if plan.write is not None and not edit.remove:
                plan.write(scratch.session, map_identity)
                names.setdefault(edit.prim, set()).add(edit.name)
    slots: list[GripperSlot] = []
    for prim, wanted in names.items():
        try:
            slots += read_gripper_slots(scratch.stage.GetPrimAtPath(prim), wanted)
        except (ValueError, GripperError):
            continue
    scratch.reset()
    try:
        return overlays.author_slot_overlays(stage, slots, overlays.PREVIEW_SCOPE)
    except ValueError:  # a degenerate frame: nothing to draw
        return overlays.author_slot_overlays(stage, [], overlays.PREVIEW_SCOPE)


class SlotDialog(QtWidgets.QDialog):
    """Add or edit one ``GripperSlotAPI`` instance of an object prim."""

    authored = Signal(object, object)
    """``(verdict, layer)`` after OK authored the edit: the
    :class:`~usdgrip.authoring.AuthoringVerdict` and the ``Sdf.Layer`` written."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModal(False)
        self.setMinimumWidth(480)
        self._stage: Usd.Stage | None = None
        self._scratch: ProposalStage | None = None
        self._prim = ""
        self._loading = False
        self.verdict = None
        form = self.form = QtWidgets.QFormLayout()
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
        self.layerCombo = make_layer_combo()
        form.addRow("Object", self.objectLabel)
        form.addRow("Slot name", self.nameEdit)
        self._centerLabel = QtWidgets.QLabel("Centre")
        form.addRow(self._centerLabel, _row(self.center))
        form.addRow("Forward (direction)", _row(self.forward))
        form.addRow("Span axis (direction)", _row(self.spanAxis))
        form.addRow("Up range", self.upRange)
        form.addRow("Input angle", self.inputAngle)
        form.addRow("LR", self.lrCombo)
        form.addRow("Group", self.groupEdit)
        form.addRow("Author into", self.layerCombo)
        self.pickButton = QtWidgets.QPushButton("Pick on surface")
        self.pickButton.setObjectName("pick")
        self.pickButton.setCheckable(True)
        self.pickButton.setToolTip("The next click in the viewport sets the centre there")
        self.alignCheck = QtWidgets.QCheckBox("Align to surface")
        self.alignCheck.setObjectName("align")
        self.alignCheck.setChecked(True)
        self.alignCheck.setToolTip("The pick also sets forward against the picked face's normal")
        form.addRow("", _row([self.pickButton, self.alignCheck]))
        self.verdictLabel = QtWidgets.QLabel("")
        self.verdictLabel.setObjectName("verdict")
        self.verdictLabel.setWordWrap(True)
        self._ok = QtWidgets.QPushButton("OK")
        self._ok.setObjectName("ok")
        self._ok.setDefault(True)
        self._cancel = QtWidgets.QPushButton("Cancel")
        self._cancel.setObjectName("cancel")
        buttons = QtWidgets.QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self._ok)
        buttons.addWidget(self._cancel)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.verdictLabel)
        layout.addLayout(buttons)
        self._ok.clicked.connect(self.accept_edit)
        self._cancel.clicked.connect(self.reject)
        for spin in (*self.center, *self.forward, *self.spanAxis, self.upRange, self.inputAngle):
            spin.valueChanged.connect(self.refresh)
        self.nameEdit.textChanged.connect(self.refresh)
        self.groupEdit.textChanged.connect(self.refresh)
        self.lrCombo.currentIndexChanged.connect(self.refresh)

    # --- public API -----------------------------------------------------------

    def setSlot(self, stage: Usd.Stage, prim_path: str, name: str | None = None) -> None:
        """Edit slot ``name`` of ``prim_path`` (its authored values), or add a new one."""
        self._stage = stage
        self._prim = prim_path
        self._scratch = ProposalStage(stage, [prim_path])
        prim = stage.GetPrimAtPath(prim_path)
        unit = f"× {get_meters_per_unit(stage):g} m"
        for spin in self.center:
            spin.setSuffix(f" {unit}" if unit != "× 1 m" else " m")
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
                taken = set(list_slot_names(prim))
                base, n = "slot", 1
                while f"{base}{n}" in taken:
                    n += 1
                self.nameEdit.setReadOnly(False)
                self.nameEdit.setText(f"{base}{n}")
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

    def verdictText(self) -> str:
        """What the verdict line shows."""
        return self.verdictLabel.text()

    def okEnabled(self) -> bool:
        """Whether OK would author (nothing refuses the edit)."""
        return self._ok.isEnabled()

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
            mesh = read_object_mesh(self._stage.GetPrimAtPath(self._prim), "world")
            mpu = get_meters_per_unit(self._stage)
            hit = intersect_ray(mesh.vertices, mesh.faces, [x * mpu for x in origin], direction)
            forward = compute_forward_against(hit.normal) if self.alignCheck.isChecked() else None
            point = tuple(x / mpu for x in hit.point)
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

    def refresh(self, *_: object) -> None:
        """Judge the edit, redraw the preview, enable OK only while nothing refuses it."""
        if self._loading or self._stage is None or self._scratch is None:
            return
        edit = self.edit()
        try:
            verdict = check_edit(self._stage, edit, scratch=self._scratch)
        except (ValueError, GripperError) as exc:
            self.verdict = None
            self.verdictLabel.setText(f"Not authorable: {exc}")
            self._ok.setEnabled(False)
            overlays.author_slot_overlays(self._stage, [], overlays.PREVIEW_SCOPE)
            return
        self.verdict = verdict
        lines = [verdict.describe(item) for item in verdict.items]
        head = "OK: the rules accept this slot." if verdict.ok else "Refused by the rules:"
        self.verdictLabel.setText("\n".join([head, *lines]))
        self._ok.setEnabled(verdict.ok)
        preview_slot_edits(self._stage, [edit], self._scratch)

    def targetLayer(self) -> Sdf.Layer | None:
        """The layer OK authors into."""
        if self._stage is None:
            return None
        return get_layer_of(self._stage, self.layerCombo.currentText())

    def accept_edit(self) -> bool:
        """Author the edit into the chosen layer; False (reason shown) when it is refused."""
        if self._stage is None:
            return False
        layer = self.targetLayer()
        try:
            verdict = author_edit(self._stage, self.edit(), layer=layer, scratch=self._scratch)
        except AuthoringError as exc:
            self.verdictLabel.setText(f"Refused: {exc}")
            self._ok.setEnabled(False)
            return False
        except (ValueError, GripperError) as exc:
            self.verdictLabel.setText(f"Not authored: {exc}")
            return False
        self._clear_preview()
        self.authored.emit(verdict, layer)
        self.accept()
        return True

    def done(self, result: int) -> None:
        self._clear_preview()
        super().done(result)

    # --- internals --------------------------------------------------------------

    def _clear_preview(self) -> None:
        if self._stage is not None and self._stage.GetSessionLayer() is not None:
            overlays.clear_overlays(self._stage, overlays.PREVIEW_SCOPE.name)

    def _load_values(self, prim: Usd.Prim, name: str) -> None:
        def get(prop: str) -> Any:
            attr = prim.GetAttribute(get_slot_attribute_name(name, prop))
            return attr.Get() if attr and attr.HasValue() else None

        for spins, prop in ((self.center, "center"), (self.forward, "forward")):
            value = get(prop)
            if value is not None:
                for spin, v in zip(spins, value, strict=True):
                    spin.setValue(float(v))
        value = get("spanAxis")
        if value is not None:
            for spin, v in zip(self.spanAxis, value, strict=True):
                spin.setValue(float(v))
        for spin, prop in ((self.upRange, "upRange"), (self.inputAngle, "slotInputAngle")):
            value = get(prop)
            if value is not None:
                spin.setValue(float(value))
        lr = get("lr")
        self.lrCombo.setCurrentText(str(lr) if lr in LR_CHOICES else LR_CHOICES[0])
        group = get("groupName")
        self.groupEdit.setText(str(group) if group else "")


def make_layer_combo() -> QtWidgets.QComboBox:
    """The "Author into" choice every authoring dialog shows (:data:`EDIT_LAYERS`)."""
    combo = QtWidgets.QComboBox()
    combo.setObjectName("layer")
    combo.addItems(EDIT_LAYERS)
    return combo


def get_layer_of(stage: Usd.Stage, choice: str) -> Sdf.Layer:
    """The layer an "Author into" choice names."""
    return stage.GetRootLayer() if choice == EDIT_LAYERS[1] else stage.GetSessionLayer()


def list_removables(stage: Usd.Stage, prim_path: str) -> list[tuple[str, Any]]:
    """What Remove… offers on a prim: ``(label, edit)`` for its slots and grasp lines.

    Slots are the prim's ``GripperSlotAPI`` instances; grasp lines are its
    ``grasp_identifier*`` children (or the prim itself when it is one).
    """
    from usdgrip.authoring import LineEdit
    from usdgrip.grasp_line_geometry import GRASP_LINE_PREFIX
    from usdgrip.usd.slots import list_slot_instances

    prim = stage.GetPrimAtPath(prim_path)
    if not prim:
        return []
    found: list[tuple[str, Any]] = [
        (f"slot {name}", SlotEdit(prim_path, name, remove=True))
        for name in list_slot_instances(prim)
    ]
    lines = [prim] if prim.GetName().startswith(GRASP_LINE_PREFIX) else []
    lines += [c for c in prim.GetChildren() if c.GetName().startswith(GRASP_LINE_PREFIX)]
    for line in lines:
        parent = str(line.GetPath().GetParentPath())
        found.append(
            (f"grasp line {line.GetName()}", LineEdit(parent, line.GetName(), remove=True))
        )
    return found


class RemoveDialog(QtWidgets.QDialog):
    """Remove one slot or grasp line of the selected prim (``author_edit`` with ``remove``)."""

    authored = Signal(object, object)
    """``(verdict, layer)`` after the removal was authored."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModal(False)
        self._stage: Usd.Stage | None = None
        self._edits: list[Any] = []
        self.itemCombo = QtWidgets.QComboBox()
        self.itemCombo.setObjectName("item")
        self.layerCombo = make_layer_combo()
        self.verdictLabel = QtWidgets.QLabel("")
        self.verdictLabel.setObjectName("verdict")
        self.verdictLabel.setWordWrap(True)
        self._remove = QtWidgets.QPushButton("Remove")
        self._remove.setObjectName("remove")
        close = QtWidgets.QPushButton("Close")
        close.setObjectName("cancel")
        form = QtWidgets.QFormLayout()
        form.addRow("Remove", self.itemCombo)
        form.addRow("From", self.layerCombo)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.verdictLabel)
        layout.addWidget(_row([self._remove, close]))
        self._remove.clicked.connect(self.removeSelected)
        close.clicked.connect(self.reject)

    def setPrim(self, stage: Usd.Stage, prim_path: str) -> None:
        """List the slots and grasp lines of ``prim_path``."""
        self._stage = stage
        self.setWindowTitle(f"Grippers: remove from {prim_path}")
        found = list_removables(stage, prim_path)
        self._edits = [edit for _, edit in found]
        self.itemCombo.clear()
        self.itemCombo.addItems([label for label, _ in found])
        self._remove.setEnabled(bool(found))
        self.verdictLabel.setText("" if found else f"{prim_path}: no slot or grasp line here.")

    def verdictText(self) -> str:
        """What the verdict line shows."""
        return self.verdictLabel.text()

    def removeSelected(self) -> bool:
        """Author the chosen removal into the chosen layer; False with the reason shown."""
        index = self.itemCombo.currentIndex()
        if self._stage is None or index < 0:
            return False
        layer = get_layer_of(self._stage, self.layerCombo.currentText())
        try:
            verdict = author_edit(self._stage, self._edits[index], layer=layer)
        except (ValueError, GripperError) as exc:
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
