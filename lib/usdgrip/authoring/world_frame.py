"""Edits given in world space, converted to the frame their values are authored in.

World means the stage's world space in stage units (what usdview shows). A slot's
values live in its object prim's frame, a site's curves in the site's frame (its
children's when they have transforms of their own), a grasp line's points in its
curve's frame (its parent's for a new line). Points go through the full inverse of
that frame's local-to-world; directions through the inverse of its linear part (so
the authored direction maps back onto the world direction given, also under a
non-uniform scale) and are normalised; lengths (``up_range``, a site's forward
length and pad width) are divided by the frame's scale along their direction, so the
length in the world is the one given.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numpy.typing import NDArray
from pxr import Sdf, Usd, UsdGeom

from usdgrip.authoring.edit_records import Edit, LineEdit, SiteEdit, SlotEdit
from usdgrip.frames import compute_unit
from usdgrip.slot_checks import get_vector3
from usdgrip.usd.names import FORWARD_AXIS_NAMES, GRIP_LINE_NAMES
from usdgrip.usd.slots import read_slot_values
from usdgrip.usd.stage import get_stage_name, gf_to_numpy

Matrix = NDArray[np.float64]


def compute_frame(stage: Usd.Stage, path: Sdf.Path | str) -> Matrix:
    """Local-to-world (4, 4), stage units, of ``path`` (else of its nearest ancestor).

    A prim about to be defined has its parent's frame.
    """
    path = Sdf.Path(path)
    prim = stage.GetPrimAtPath(path)
    while not prim and path != Sdf.Path.absoluteRootPath:
        path = path.GetParentPath()
        prim = stage.GetPrimAtPath(path)
    if not prim or prim.IsPseudoRoot():
        return np.eye(4)
    cache = UsdGeom.XformCache(Usd.TimeCode.Default())
    return gf_to_numpy(cache.GetLocalToWorldTransform(prim))


def _inverse(stage: Usd.Stage, frame: Matrix, path: Sdf.Path | str) -> Matrix:
    inverse = None
    if np.all(np.isfinite(frame)):
        try:
            inverse = np.linalg.inv(frame)
        except np.linalg.LinAlgError:
            inverse = None
    if inverse is None or not np.all(np.isfinite(inverse)):
        raise ValueError(
            f"{get_stage_name(stage)}: <{path}>'s world transform is singular or not finite (a "
            "zero scale?): world values cannot be converted to its frame; give them in the "
            "prim's frame (--frame object)"
        )
    return inverse


def to_local_point(inverse: Matrix, point: object) -> object:
    """A world point in the frame whose inverse local-to-world is ``inverse`` (else as given)."""
    vector = get_vector3(point)
    if vector is None:
        return point  # not 3 numbers: the checks say so, naming the value given
    with np.errstate(invalid="ignore", over="ignore"):
        return tuple(float(c) for c in inverse[:3, :3] @ np.asarray(vector) + inverse[:3, 3])


def to_local_direction(inverse: Matrix, direction: object) -> object:
    """A world direction in that frame, normalised (a zero or non-finite one as it comes)."""
    vector = get_vector3(direction)
    if vector is None:
        return direction
    with np.errstate(invalid="ignore", over="ignore"):
        local = inverse[:3, :3] @ np.asarray(vector)
    unit = compute_unit(local)
    return tuple(float(c) for c in (unit if unit is not None else local))


def to_local_length(frame: Matrix, length: object, local_direction: object) -> object:
    """A world length along ``local_direction`` (local) as a length in the frame."""
    vector = get_vector3(local_direction)
    unit = compute_unit(vector) if vector is not None else None
    if unit is None or not isinstance(length, int | float) or isinstance(length, bool):
        return length
    scale = float(np.linalg.norm(frame[:3, :3] @ unit))
    return float(length) / scale if math.isfinite(scale) and scale > 0 else length


def _slot_axes(stage: Usd.Stage, edit: SlotEdit, forward: object, span: object) -> tuple:
    """The slot's local forward and span axis after the edit (given, else authored)."""
    prim = stage.GetPrimAtPath(edit.prim)
    authored = (None, None)
    if prim:
        values, _ = read_slot_values(prim, edit.name)
        authored = (values[1], values[2])
    return (
        forward if forward is not None else authored[0],
        span if span is not None else authored[1],
    )


def _convert_slot(stage: Usd.Stage, edit: SlotEdit) -> SlotEdit:
    frame = compute_frame(stage, edit.prim)
    inverse = _inverse(stage, frame, edit.prim)
    changes: dict[str, object] = {}
    if edit.center is not None:
        changes["center"] = to_local_point(inverse, edit.center)
    for name in ("forward", "span_axis"):
        if getattr(edit, name) is not None:
            changes[name] = to_local_direction(inverse, getattr(edit, name))
    if edit.up_range is not None:
        forward, span = _slot_axes(stage, edit, changes.get("forward"), changes.get("span_axis"))
        f, s = get_vector3(forward), get_vector3(span)
        up = np.cross(f, s) if f is not None and s is not None else None
        changes["up_range"] = to_local_length(frame, edit.up_range, up)
    return dataclasses.replace(edit, **changes)


def _convert_site(stage: Usd.Stage, edit: SiteEdit) -> SiteEdit:
    changes: dict[str, object] = {}
    site = Sdf.Path(edit.prim)
    if edit.translate is not None:
        parent = compute_frame(stage, site.GetParentPath())
        changes["translate"] = to_local_point(_inverse(stage, parent, site), edit.translate)
    for name, length_name, names in (
        ("forward", "forward_length", FORWARD_AXIS_NAMES),
        ("grip_line", "pad_width", GRIP_LINE_NAMES),
    ):
        direction = getattr(edit, name)
        if direction is None:
            continue
        child = site.AppendChild(names[0])
        frame = compute_frame(stage, child)
        local = to_local_direction(_inverse(stage, frame, child), direction)
        changes[name] = local
        changes[length_name] = to_local_length(frame, getattr(edit, length_name), local)
    return dataclasses.replace(edit, **changes)


def _convert_line(stage: Usd.Stage, edit: LineEdit) -> LineEdit:
    frame = compute_frame(stage, edit.path)
    inverse = _inverse(stage, frame, edit.path)
    changes = {
        name: to_local_point(inverse, getattr(edit, name))
        for name in ("p0", "p1")
        if getattr(edit, name) is not None
    }
    return dataclasses.replace(edit, **changes)


def convert_edit_from_world(stage: Usd.Stage, edit: Edit) -> Edit:
    """``edit`` with its world-space values in the frames they are authored in (the module).

    Raises:
        ValueError: the frame's world transform is singular or not finite.
    """
    if isinstance(edit, SlotEdit):
        return _convert_slot(stage, edit)
    if isinstance(edit, SiteEdit):
        return _convert_site(stage, edit)
    return _convert_line(stage, edit)
