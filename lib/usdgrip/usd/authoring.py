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
from usdgrip.model import LR_TOKENS, GripperSlot
from usdgrip.usd.names import FORWARD_AXIS_NAMES, GRIP_LINE_NAMES, SITE_API, SLOT_API
from usdgrip.usd.slots import check_slot_instance_name, get_slot_attribute_name


def _define_axis_curve(stage: Usd.Stage, path: Sdf.Path, p0: ArrayLike, p1: ArrayLike) -> None:
    curve = UsdGeom.BasisCurves.Define(stage, path)
    points = [Gf.Vec3f(*map(float, p0)), Gf.Vec3f(*map(float, p1))]
    curve.CreatePointsAttr(Vt.Vec3fArray(points))
    curve.CreateCurveVertexCountsAttr(Vt.IntArray([2]))
    curve.CreateTypeAttr(UsdGeom.Tokens.linear)
    curve.CreatePurposeAttr(UsdGeom.Tokens.guide)
    curve.CreateExtentAttr(UsdGeom.PointBased.ComputeExtent(Vt.Vec3fArray(points)))


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
    translate: ArrayLike | None = None,
) -> Usd.Prim:
    """Define a complete, valid gripper site in one call.

    Creates (or reuses) an Xform at ``path``, applies ``GripperSiteAPI``,
    authors ``gripper:maxOpening`` (and ``gripper:maxPayload``), and defines
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
        translate: optional site position in its parent frame.

    Raises:
        ValueError: a value is out of range or the axes are degenerate.
    """
    if not (math.isfinite(max_opening) and max_opening > 0):
        raise ValueError(f"max_opening is {max_opening} m; expected a finite value > 0 m")
    if max_payload is not None and not (math.isfinite(max_payload) and max_payload > 0):
        raise ValueError(f"max_payload is {max_payload} kg; expected a finite value > 0 kg")
    xform = UsdGeom.Xform.Define(stage, path)
    prim = xform.GetPrim()
    if translate is not None:
        xform.AddTranslateOp().Set(Gf.Vec3d(*map(float, np.asarray(translate).reshape(3))))
    set_gripper_site(
        prim,
        max_opening=max_opening,
        max_payload=max_payload,
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

    Raises:
        ValueError: the prim is not Xformable, or an axis is zero or not finite.
    """
    can_apply = prim.CanApplyAPI(SITE_API)
    if not can_apply:
        raise ValueError(f"<{prim.GetPath()}>: cannot apply {SITE_API}: {can_apply.whyNot}")
    prim.ApplyAPI(SITE_API)
    if max_opening is not None:
        prim.CreateAttribute("gripper:maxOpening", Sdf.ValueTypeNames.Float).Set(float(max_opening))
    if max_payload is not None:
        prim.CreateAttribute("gripper:maxPayload", Sdf.ValueTypeNames.Float).Set(float(max_payload))
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

    Raises:
        ValueError: a bad instance name (see :func:`check_slot_instance_name`) or ``lr``.
    """
    check_slot_instance_name(name)
    prim.ApplyAPI(SLOT_API, name)
    vector = lambda v: Gf.Vec3d(*map(float, np.asarray(v, dtype=np.float64).reshape(3)))  # noqa: E731
    values = {
        "center": (center, Sdf.ValueTypeNames.Point3d, vector),
        "forward": (forward, Sdf.ValueTypeNames.Vector3d, vector),
        "spanAxis": (span_axis, Sdf.ValueTypeNames.Vector3d, vector),
        "upRange": (up_range, Sdf.ValueTypeNames.Double, float),
        "slotInputAngle": (slot_input_angle, Sdf.ValueTypeNames.Double, float),
        "groupName": (group, Sdf.ValueTypeNames.String, str),
    }
    for prop, (value, type_name, convert) in values.items():
        if value is not None:
            attr = prim.CreateAttribute(get_slot_attribute_name(name, prop), type_name)
            attr.Set(convert(value))
    if lr is not None:
        token = lr if isinstance(lr, str) else (LR_TOKENS[lr] if lr in (0, 1) else None)
        if token not in LR_TOKENS:
            raise ValueError(
                f"<{prim.GetPath()}> slot {name!r}: lr is {lr!r}; expected 0/1 or left/right"
            )
        attr = prim.CreateAttribute(
            get_slot_attribute_name(name, "lr"),
            Sdf.ValueTypeNames.Token,
            variability=Sdf.VariabilityUniform,
        )
        attr.Set(token)


def write_slot_records(prim: Usd.Prim, slots: Sequence[GripperSlot | SlotRecord]) -> None:
    """Write slots as LambdaSim version-2 records (JSON list string) into ``prim``'s customData."""
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
