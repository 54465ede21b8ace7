"""Authoring sites and slots: :func:`define_gripper_site`, :func:`apply_gripper_slot`, records."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from pxr import Gf, Sdf, Usd, UsdGeom, Vt

from usdgrip.frames import compute_unit
from usdgrip.lambdasim import (
    CUSTOM_DATA_PATH,
    SlotRecord,
    format_lambdasim_records,
)
from usdgrip.site_records import LR_TOKENS, GripperSlot
from usdgrip.slot_checks import (
    get_center_problem,
    get_input_angle_problem,
    get_up_range_problem,
    get_vector3,
)
from usdgrip.usd.names import (
    FORWARD_AXIS_NAMES,
    GRIP_LINE_NAMES,
    MAX_GRIP_FORCE_ATTRS,
    SITE_API,
    SLOT_API,
)
from usdgrip.usd.slots import check_slot_instance_name, get_slot_attribute_name
from usdgrip.usd.stage import require_number, require_prim, require_stage

#: The schema's value type of each GripperSlotAPI property (``lr`` is also uniform).
SLOT_TYPE_NAMES = {
    "center": Sdf.ValueTypeNames.Point3d,
    "forward": Sdf.ValueTypeNames.Vector3d,
    "spanAxis": Sdf.ValueTypeNames.Vector3d,
    "upRange": Sdf.ValueTypeNames.Double,
    "slotInputAngle": Sdf.ValueTypeNames.Double,
    "lr": Sdf.ValueTypeNames.Token,
    "groupName": Sdf.ValueTypeNames.String,
}


def _define_axis_curve(stage: Usd.Stage, path: Sdf.Path, p0: ArrayLike, p1: ArrayLike) -> None:
    curve = UsdGeom.BasisCurves.Define(stage, path)
    points = [Gf.Vec3f(*map(float, p0)), Gf.Vec3f(*map(float, p1))]
    curve.CreatePointsAttr(Vt.Vec3fArray(points))
    curve.CreateCurveVertexCountsAttr(Vt.IntArray([2]))
    curve.CreateTypeAttr(UsdGeom.Tokens.linear)
    curve.CreatePurposeAttr(UsdGeom.Tokens.guide)
    curve.CreateExtentAttr(UsdGeom.PointBased.ComputeExtent(Vt.Vec3fArray(points)))


def _check_site_limit(name: str, value: float | None, unit: str) -> float | None:
    """An optional site limit (``max_payload``, ``max_grip_force``) as a float, or raise."""
    if value is None:
        return None
    number = require_number(value, name)
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} is {value} {unit}; expected a finite value > 0 {unit}")
    return number


def define_gripper_site(
    stage: Usd.Stage,
    path: str,
    max_opening: float,
    *,
    forward: ArrayLike = (0.0, 0.0, 1.0),
    grip_line: ArrayLike = (0.0, 1.0, 0.0),
    forward_length: float = 0.05,
    pad_width: float = 0.02,
    max_payload: float | None = None,
    max_grip_force: float | None = None,
    translate: ArrayLike | None = None,
) -> Usd.Prim:
    """Define a complete, valid gripper site in one call.

    Creates (or reuses) an Xform at ``path``, applies ``GripperSiteAPI``,
    authors ``gripper:maxOpening`` (and ``gripper:maxPayload``,
    ``gripper:maxGripForce`` when given), and defines
    both axis curves as linear 2-point ``guide`` BasisCurves with extents: the
    forward axis from the origin along ``forward`` (``forward_length`` long)
    and the grip line centred on the origin along ``grip_line``
    (``pad_width`` long, the pad width).

    Args:
        stage: stage to author on (its edit target).
        path: absolute prim path of the site.
        max_opening: metres, finite > 0.
        forward: approach direction in the site frame (any length).
        grip_line: graspable tube axis in the site frame (any length).
        forward_length: drawn length of the forward curve (stage units).
        pad_width: grip pad width, length of the grip line (stage units).
        max_payload: kilograms, optional.
        max_grip_force: newtons (force of each pad on a held object), optional.
        translate: optional site position in its parent frame.

    Raises:
        TypeError: ``stage`` is not a ``Usd.Stage``, ``path`` not a string, a value not a number.
        ValueError: ``path`` is not an absolute prim path, a value is out of range or the
            axes are degenerate.
    """
    require_stage(stage)
    text = str(path) if isinstance(path, str | Sdf.Path) else None
    if text is None:
        raise TypeError(f"path is {path!r}; expected an absolute prim path string, e.g. '/G3'")
    if not (
        Sdf.Path.IsValidPathString(text)
        and Sdf.Path(text).IsAbsolutePath()
        and Sdf.Path(text).IsPrimPath()
    ):
        raise ValueError(
            f"path is {text!r}; expected an absolute prim path, e.g. {'/' + text.lstrip('/')!r}"
        )
    max_opening = require_number(max_opening, "max_opening")
    if not (math.isfinite(max_opening) and max_opening > 0):
        raise ValueError(f"max_opening is {max_opening} m; expected a finite value > 0 m")
    max_payload = _check_site_limit("max_payload", max_payload, "kg")  # before anything is defined
    max_grip_force = _check_site_limit("max_grip_force", max_grip_force, "N")
    xform = UsdGeom.Xform.Define(stage, path)
    prim = xform.GetPrim()
    if translate is not None:
        xform.AddTranslateOp().Set(Gf.Vec3d(*map(float, np.asarray(translate).reshape(3))))
    set_gripper_site(
        prim,
        max_opening=max_opening,
        max_payload=max_payload,
        max_grip_force=max_grip_force,
        forward=forward,
        grip_line=grip_line,
        forward_length=forward_length,
        pad_width=pad_width,
    )
    return prim


def set_gripper_site(
    prim: Usd.Prim,
    *,
    max_opening: float | None = None,
    max_payload: float | None = None,
    max_grip_force: float | None = None,
    forward: ArrayLike | None = None,
    grip_line: ArrayLike | None = None,
    forward_length: float = 0.05,
    pad_width: float = 0.02,
) -> None:
    """Edit an existing site through the schema; only the given values are authored.

    Applies ``GripperSiteAPI`` when missing. A given axis (re)defines its
    prefixed curve child (``gripper_forward_axis`` / ``gripper_grip_line``);
    legacy attributes and unprefixed curves are left alone (``usdgrip migrate``
    handles those).

    Args:
        prim: the site prim (an Xformable).
        max_opening: metres, finite > 0.
        max_payload: kilograms, finite > 0.
        max_grip_force: newtons, finite > 0.
        forward: approach direction in the site frame (any length).
        grip_line: graspable tube axis in the site frame (any length).
        forward_length: drawn length of the forward curve (stage units).
        pad_width: grip pad width, length of the grip line (stage units).

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim``, ``max_payload`` or ``max_grip_force`` is
            not a number.
        ValueError: the prim is not valid or not Xformable, a value is out of range (nothing
            is authored then), or an axis is zero or not finite.
    """
    max_payload = _check_site_limit("max_payload", max_payload, "kg")
    max_grip_force = _check_site_limit("max_grip_force", max_grip_force, "N")
    require_prim(prim)
    can_apply = prim.CanApplyAPI(SITE_API)
    if not can_apply:
        raise ValueError(f"<{prim.GetPath()}>: cannot apply {SITE_API}: {can_apply.whyNot}")
    prim.ApplyAPI(SITE_API)
    if max_opening is not None:
        prim.CreateAttribute("gripper:maxOpening", Sdf.ValueTypeNames.Float).Set(float(max_opening))
    if max_payload is not None:
        prim.CreateAttribute("gripper:maxPayload", Sdf.ValueTypeNames.Float).Set(float(max_payload))
    if max_grip_force is not None:
        prim.CreateAttribute(MAX_GRIP_FORCE_ATTRS[0], Sdf.ValueTypeNames.Float).Set(
            float(max_grip_force)
        )
    stage, base = prim.GetStage(), prim.GetPath()
    if forward is not None:
        unit = compute_unit(forward)
        if unit is None:
            raise ValueError(f"<{base}>: forward axis {list(forward)} is zero or not finite")
        _define_axis_curve(
            stage, base.AppendChild(FORWARD_AXIS_NAMES[0]), np.zeros(3), unit * forward_length
        )
    if grip_line is not None:
        unit = compute_unit(grip_line)
        if unit is None:
            raise ValueError(f"<{base}>: grip line {list(grip_line)} is zero or not finite")
        half = unit * pad_width / 2.0
        _define_axis_curve(stage, base.AppendChild(GRIP_LINE_NAMES[0]), -half, half)


def apply_gripper_slot(
    prim: Usd.Prim,
    name: str,
    *,
    center: ArrayLike | None = None,
    forward: ArrayLike | None = None,
    span_axis: ArrayLike | None = None,
    up_range: float | None = None,
    slot_input_angle: float | None = None,
    lr: int | str | None = None,
    group: str | None = None,
) -> None:
    """Apply ``GripperSlotAPI:<name>`` and author the given fields (local frame).

    Values that would fail the GS rules are refused before anything is authored:
    a ``center`` that is not 3 finite numbers, a ``forward``/``span_axis`` that
    is not finite and non-zero, an ``up_range`` that is not finite, > 0 m and at
    most 10 m, a ``slot_input_angle`` outside [0, 360] degrees.

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim``.
        ValueError: ``prim`` is not valid, a bad instance name (see
            :func:`check_slot_instance_name`), ``lr``, or a value named above.
    """
    require_prim(prim)
    check_slot_instance_name(name)
    problem = _get_slot_value_problem(center, forward, span_axis, up_range, slot_input_angle)
    if problem is not None:
        raise ValueError(f"<{prim.GetPath()}> slot {name!r}: {problem}")
    prim.ApplyAPI(SLOT_API, name)
    vector = lambda v: Gf.Vec3d(*map(float, np.asarray(v, dtype=np.float64).reshape(3)))  # noqa: E731
    values = {
        "center": (center, vector),
        "forward": (forward, vector),
        "spanAxis": (span_axis, vector),
        "upRange": (up_range, float),
        "slotInputAngle": (slot_input_angle, float),
        "groupName": (group, str),
    }
    for prop, (value, convert) in values.items():
        if value is not None:
            attr = prim.CreateAttribute(get_slot_attribute_name(name, prop), SLOT_TYPE_NAMES[prop])
            attr.Set(convert(value))
    if lr is not None:
        token = lr if isinstance(lr, str) else (LR_TOKENS[lr] if lr in (0, 1) else None)
        if token not in LR_TOKENS:
            raise ValueError(
                f"<{prim.GetPath()}> slot {name!r}: lr is {lr!r}; expected 0/1 or left/right"
            )
        attr = prim.CreateAttribute(
            get_slot_attribute_name(name, "lr"),
            SLOT_TYPE_NAMES["lr"],
            variability=Sdf.VariabilityUniform,
        )
        attr.Set(token)


def _get_slot_value_problem(
    center: object, forward: object, span_axis: object, up_range: object, angle: object
) -> str | None:
    """The first given slot value that the GS rules would fail (``None`` values are skipped)."""
    if center is not None and (problem := get_center_problem(center)):
        return problem
    for name, value in (("forward", forward), ("span_axis", span_axis)):
        if value is None:
            continue
        vector = get_vector3(value)
        if vector is None or not all(map(math.isfinite, vector)) or not any(vector):
            return f"{name} is {value!r}; expected 3 finite numbers, not all zero"
    if up_range is not None and (problem := get_up_range_problem(up_range)):
        return problem
    if angle is not None:
        return get_input_angle_problem(angle)
    return None


def write_slot_records(prim: Usd.Prim, slots: Sequence[GripperSlot | SlotRecord]) -> None:
    """Write slots as LambdaSim version-2 records (JSON list string) into ``prim``'s customData."""
    require_prim(prim)
    records = [
        s if isinstance(s, SlotRecord) else _slot_to_record(s, i) for i, s in enumerate(slots)
    ]
    prim.SetCustomDataByKey(CUSTOM_DATA_PATH, format_lambdasim_records(records))


def _slot_to_record(slot: GripperSlot, index: int) -> SlotRecord:
    return SlotRecord(
        name=slot.name,
        index=index,
        center=tuple(map(float, slot.center_local)),
        forward=tuple(map(float, slot.forward_local)),
        span_axis=tuple(map(float, slot.span_axis_local)),
        up_range=float(slot.up_range_local),
        slot_input_angle=float(slot.slot_input_angle),
        lr=int(slot.lr),
        group=slot.group,
        version=2,
        extra=dict(slot.extra),
    )
