"""Add Gripper Site… and Add Grasp Line…: the authoring dialogs of a site and of a line.

Both are :class:`~usdgrip.views.edit_dialogs.EditDialog` s: every change rebuilds a
:class:`~usdgrip.authoring.SiteEdit` (``LineEdit``), the rules judge it on the dialog's
:class:`~usdgrip.authoring.ProposalStage` (GR.* for a site, GSP.001/GP.* for a line),
the session layer's preview scope draws what it would author (the site's axes and open
jaws; the line with its pad ticks), and OK authors it with
:func:`~usdgrip.authoring.author_edit` only while nothing refuses it. The fields are
those of ``usdgrip author site`` and ``usdgrip author line``.
"""

from __future__ import annotations

import math
from typing import Any

from pxr import Usd

from usdgrip.authoring import LineEdit, ProposalStage, SiteEdit
from usdgrip.authoring.edit_records import FORWARD_LENGTH_M
from usdgrip.authoring.world_frame import convert_edit_from_world
from usdgrip.errors import GripperError
from usdgrip.grasp_line_geometry import GRASP_LINE_PREFIX
from usdgrip.usd.stage import get_meters_per_unit
from usdgrip.views.edit_dialogs import (
    EditDialog,
    cast_pick,
    get_unit_suffix,
    make_length_field,
    make_row,
    make_vector_field,
)
from usdgrip.views.edit_previews import (
    NEW_SITE,
    check_new_line_name,
    compute_next_line_name,
    compute_site_path,
    is_site_prim,
    preview_line_edit,
    preview_site_edit,
    read_line_points,
    read_site_values,
)
from usdgrip.views.qt import QtWidgets

DEFAULT_MAX_OPENING = NEW_SITE["max_opening"]
DEFAULT_PAD_WIDTH = NEW_SITE["pad_width"]
DEFAULT_SITE_FORWARD = NEW_SITE["forward"]
DEFAULT_GRIP_LINE = NEW_SITE["grip_line"]
#: Largest payload (kg) and grip force (N) the fields take (the rules judge the rest).
LIMIT_FIELD_MAX = 1e6
NOT_AUTHORED = "not authored"
#: How far off the picked surface a picked p0/p1 lies (metres): the pads start outside
#: the part (a line ending on the surface does not meet it: GP.001).
DEFAULT_PICK_CLEARANCE = 0.01


def _optional_field(name: str, unit: str) -> Any:
    """A limit field whose minimum (0) reads "not authored" (``None`` in the edit)."""
    spin = make_length_field(name, 0.0, unit, LIMIT_FIELD_MAX)
    spin.setDecimals(3)
    spin.setSingleStep(1.0)
    spin.setSpecialValueText(NOT_AUTHORED)
    return spin


def _finite_or_none(value: float) -> float | None:
    return value if value > 0 and math.isfinite(value) else None


class SiteDialog(EditDialog):
    """Add Gripper Site…: apply ``GripperSiteAPI`` to a prim (or define it) and author it."""

    WHAT = "gripper site"

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        form = self.form
        self.primEdit = QtWidgets.QLineEdit("")
        self.primEdit.setObjectName("prim")
        self.defineCheck = QtWidgets.QCheckBox("Define as Xform (when missing)")
        self.defineCheck.setObjectName("define")
        self.defineCheck.setChecked(True)
        self.maxOpening = make_length_field("maxOpening", DEFAULT_MAX_OPENING, "m", 10.0)
        self.forward = make_vector_field("forward", "", DEFAULT_SITE_FORWARD)
        self.gripLine = make_vector_field("gripLine", "", DEFAULT_GRIP_LINE)
        self.padWidth = make_length_field("padWidth", DEFAULT_PAD_WIDTH, "m", 10.0)
        self.payload = _optional_field("payload", "kg")
        self.gripForce = _optional_field("gripForce", "N")
        form.addRow("Site prim", make_row([self.primEdit, self.defineCheck]))
        form.addRow("Max opening", self.maxOpening)
        form.addRow("Forward (direction)", make_row(self.forward))
        form.addRow("Grip line (direction)", make_row(self.gripLine))
        form.addRow("Pad width", self.padWidth)
        form.addRow("Max payload", self.payload)
        form.addRow("Max grip force", self.gripForce)
        self.finish_layout()
        self.connect_fields(
            [self.primEdit, self.defineCheck, self.maxOpening, *self.forward, *self.gripLine]
            + [self.padWidth, self.payload, self.gripForce]
        )

    def setSite(self, stage: Usd.Stage, prim_path: str) -> None:
        """Author a site at ``prim_path``: the values of the site there, or a new one's.

        A prim that is no site gets a new child site ``tcp`` proposed (``tcp1``... when
        taken), defined as an Xform: a gripper's site is its own frame under the gripper
        (and a mesh cannot be one, GR.001); the path can be changed in the dialog.
        """
        self._stage = stage
        self._scratch = ProposalStage(stage)
        prim = stage.GetPrimAtPath(prim_path)
        is_site = is_site_prim(prim)
        if prim:
            prim_path = compute_site_path(prim)
        self._loading = True
        try:
            self.primEdit.setText(prim_path)
            if is_site:
                self._load_values(prim)
        finally:
            self._loading = False
        self.setWindowTitle(f"Grippers: {'edit' if is_site else 'add'} gripper site {prim_path}")
        self.refresh()

    def edit(self) -> SiteEdit:
        """The edit the fields describe (every field given; 0 payload/force: not authored)."""
        mpu = get_meters_per_unit(self._stage) if self._stage is not None else 1.0
        return SiteEdit(
            self.primEdit.text().strip(),
            define=self.defineCheck.isChecked(),
            max_opening=self.maxOpening.value(),
            max_payload=_finite_or_none(self.payload.value()),
            max_grip_force=_finite_or_none(self.gripForce.value()),
            forward=tuple(s.value() for s in self.forward),
            grip_line=tuple(s.value() for s in self.gripLine),
            forward_length=FORWARD_LENGTH_M / mpu,
            pad_width=self.padWidth.value() / mpu,
        )

    def preview(self, edit: SiteEdit | None) -> None:
        """Draw the site's axes and open jaws (nothing for ``None``)."""
        preview_site_edit(self._stage, edit, self._scratch)

    def _load_values(self, prim: Usd.Prim) -> None:
        values = read_site_values(prim)
        for spin, key in (
            (self.maxOpening, "max_opening"),
            (self.payload, "max_payload"),
            (self.gripForce, "max_grip_force"),
            (self.padWidth, "pad_width"),
        ):
            if key in values:
                spin.setValue(values[key])
        for spins, key in ((self.forward, "forward"), (self.gripLine, "grip_line")):
            if key in values:
                LineDialog._set_point(spins, values[key])


class LineDialog(EditDialog):
    """Add Grasp Line…: a SimReady grasp vector line ``grasp_identifier_NN`` (p0, p1).

    **Pick p0** / **Pick p1**: the next viewport click sets that point where it meets
    the parent prim's mesh (the prop).
    """

    WHAT = "grasp line"

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        form = self.form
        self.parentLabel = QtWidgets.QLabel("")
        self.parentLabel.setObjectName("parent")
        self.nameEdit = QtWidgets.QLineEdit("")
        self.nameEdit.setObjectName("name")
        self.p0 = make_vector_field("p0", "", (0.0, 0.0, 0.0))
        self.p1 = make_vector_field("p1", "", (0.0, 0.0, 0.0))
        self.pick0 = QtWidgets.QPushButton("Pick p0")
        self.pick0.setObjectName("pickP0")
        self.pick1 = QtWidgets.QPushButton("Pick p1")
        self.pick1.setObjectName("pickP1")
        for button in (self.pick0, self.pick1):
            button.setCheckable(True)
            button.setToolTip("The next click in the viewport sets the point on the surface")
        self.pick0.toggled.connect(lambda on: on and self.pick1.setChecked(False))
        self.pick1.toggled.connect(lambda on: on and self.pick0.setChecked(False))
        self.clearance = make_length_field("clearance", DEFAULT_PICK_CLEARANCE, "m", 1.0)
        self.clearance.setToolTip(
            "A picked point lies this far off the surface, towards the camera: the pads "
            "start outside the part"
        )
        self._editing = False
        form.addRow("Parent prim", self.parentLabel)
        form.addRow("Line name", self.nameEdit)
        form.addRow("p0 (first pad)", make_row([*self.p0, self.pick0]))
        form.addRow("p1 (second pad)", make_row([*self.p1, self.pick1]))
        form.addRow("Pick clearance", self.clearance)
        self.finish_layout()
        self.connect_fields([self.nameEdit, *self.p0, *self.p1])

    def setLine(self, stage: Usd.Stage, prim_path: str) -> None:
        """Add a line under ``prim_path``, or edit it when ``prim_path`` is a grasp line."""
        self._stage = stage
        self._scratch = ProposalStage(stage)
        prim = stage.GetPrimAtPath(prim_path)
        self._editing = bool(prim) and prim.GetName().startswith(GRASP_LINE_PREFIX)
        self._loading = True
        try:
            if self._editing:
                self._prim = str(prim.GetPath().GetParentPath())
                self.nameEdit.setText(prim.GetName())
                points = read_line_points(prim)
                for spins, key in ((self.p0, "p0"), (self.p1, "p1")):
                    if key in points:
                        self._set_point(spins, points[key])
            else:
                self._prim = prim_path
                self.nameEdit.setText(compute_next_line_name(stage))
            self.nameEdit.setReadOnly(self._editing)
            for spin in (*self.p0, *self.p1):
                spin.setSuffix(get_unit_suffix(stage))
        finally:
            self._loading = False
        self.parentLabel.setText(self._prim)
        action = "edit" if self._editing else "add"
        self.setWindowTitle(f"Grippers: {action} grasp line under {self._prim}")
        self.refresh()

    def edit(self) -> LineEdit:
        """The edit the fields describe.

        Raises:
            ValueError: adding a line whose name is taken under the parent.
        """
        edit = LineEdit(
            self._prim,
            self.nameEdit.text().strip(),
            p0=tuple(s.value() for s in self.p0),
            p1=tuple(s.value() for s in self.p1),
        )
        if not self._editing and self._stage is not None:
            check_new_line_name(self._stage, edit)
        return edit

    def preview(self, edit: LineEdit | None) -> None:
        """Draw the line with its pad ticks (nothing for ``None``)."""
        preview_line_edit(self._stage, edit, self._scratch)

    def isPicking(self) -> bool:
        """Whether the next viewport click sets p0 or p1."""
        return (self.pick0.isChecked() or self.pick1.isChecked()) and self.isVisible()

    def applyPick(self, origin: tuple, direction: tuple) -> bool:
        """Take a click's world ray (stage units): p0 or p1 where it meets the parent's mesh.

        The point lies :attr:`clearance` off the surface, along the face's normal towards
        the camera. False (why shown) when the ray misses or the mesh cannot be read.
        """
        spins = self.p0 if self.pick0.isChecked() else self.p1
        self.pick0.setChecked(False)
        self.pick1.setChecked(False)
        if self._stage is None:
            return False
        try:
            point, normal = cast_pick(self._stage, self._prim, origin, direction)
            facing = sum(n * d for n, d in zip(normal, direction, strict=True))
            offset = self.clearance.value() / get_meters_per_unit(self._stage)
            offset = -offset if facing > 0 else offset
            point = tuple(p + n * offset for p, n in zip(point, normal, strict=True))
            name = self.nameEdit.text().strip() or compute_next_line_name(self._stage)
            local = convert_edit_from_world(self._stage, LineEdit(self._prim, name, p0=point))
        except (ValueError, GripperError) as exc:
            self.verdictLabel.setText(f"Pick not used: {exc}")
            return False
        self._loading = True
        try:
            self._set_point(spins, local.p0)
        finally:
            self._loading = False
        self.refresh()
        return True

    @staticmethod
    def _set_point(spins: list[Any], point: Any) -> None:
        for spin, v in zip(spins, point, strict=True):
            spin.setValue(float(v))
