"""What an authoring form would author (drawn live in the preview scope), and its start values.

One function per kind of edit, shared by usdview's dialogs
(:mod:`usdgrip.views.edit_dialogs`, :mod:`usdgrip.views.site_line_dialogs`) and Kit's
forms (:mod:`usdgrip.hosts.kit.kit_authoring`); no Qt. Each authors the edit on a
:class:`~usdgrip.authoring.ProposalStage` (never the user's layers), reads back what
it would be, and draws it under :data:`usdgrip.views.overlays.PREVIEW_SCOPE`. The
``compute_new_*`` / ``read_*_values`` functions give a form its first values: a new
edit's defaults and free name, or what is authored.
"""

from __future__ import annotations

import contextlib
import math
import re
from typing import Any

from pxr import Sdf, Usd

from usdgrip.authoring import LineEdit, ProposalStage, SiteEdit, SlotEdit
from usdgrip.authoring.edit_records import SLOT_PROPERTY_OF
from usdgrip.authoring.plans import map_identity, plan_edit
from usdgrip.errors import GripperError
from usdgrip.grasp_line_geometry import GRASP_LINE_PREFIX
from usdgrip.rules.engine import resolve_params
from usdgrip.site_records import GripperSlot
from usdgrip.usd.grasp_lines import find_grasp_lines
from usdgrip.usd.names import FORWARD_AXIS_NAMES, GRIP_LINE_NAMES, SITE_API
from usdgrip.usd.sites import read_gripper_site
from usdgrip.usd.slots import get_slot_attribute_name, list_slot_names, read_gripper_slots
from usdgrip.usd.stage import get_meters_per_unit
from usdgrip.views import overlays


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


def _draw_scratch(stage: Usd.Stage, edit: Any, scratch: ProposalStage) -> Usd.Stage | None:
    """Author ``edit`` on ``scratch``'s private session layer; its stage, or ``None``."""
    try:
        plan = plan_edit(stage, edit, resolve_params(None))
    except (ValueError, GripperError):
        return None
    if plan.write is None:
        return None
    scratch.reset()
    with Sdf.ChangeBlock():
        plan.write(scratch.session, map_identity)
    return scratch.stage


def preview_site_edit(stage: Usd.Stage, edit: SiteEdit | None, scratch: ProposalStage) -> list[str]:
    """Draw the site ``edit`` would author in the preview scope (nothing when it cannot be)."""
    sites = []
    drawn = _draw_scratch(stage, edit, scratch) if edit is not None else None
    if drawn is not None:
        with contextlib.suppress(ValueError, GripperError):
            sites.append(read_gripper_site(drawn.GetPrimAtPath(edit.prim), strict=False))
    scratch.reset()
    return overlays.author_site_overlays(stage, sites, overlays.PREVIEW_SCOPE)


def preview_line_edit(stage: Usd.Stage, edit: LineEdit | None, scratch: ProposalStage) -> list[str]:
    """Draw the grasp line ``edit`` would author in the preview scope (with its pad ticks)."""
    lines = []
    drawn = _draw_scratch(stage, edit, scratch) if edit is not None else None
    if drawn is not None:
        try:
            lines = [line for line in find_grasp_lines(drawn) if line.path == edit.path]
        except (ValueError, GripperError):
            lines = []
    scratch.reset()
    return overlays.author_grasp_line_overlays(stage, lines, overlays.PREVIEW_SCOPE)


def preview_edit(stage: Usd.Stage, edit: Any, scratch: ProposalStage | None) -> list[str]:
    """Draw any edit (``None``: clear the preview): a slot, a site or a line."""
    scratch = scratch if scratch is not None else ProposalStage(stage)
    if isinstance(edit, SlotEdit) and not edit.remove:
        return preview_slot_edits(stage, [edit], scratch)
    if isinstance(edit, SiteEdit) and not edit.remove:
        return preview_site_edit(stage, edit, scratch)
    if isinstance(edit, LineEdit) and not edit.remove:
        return preview_line_edit(stage, edit, scratch)
    return overlays.author_slot_overlays(stage, [], overlays.PREVIEW_SCOPE)


# --- first values -----------------------------------------------------------------

#: A new slot's values (object frame; up range metres: GS.002 wants more than 0).
NEW_SLOT = {
    "center": (0.0, 0.0, 0.0),
    "forward": (0.0, 0.0, -1.0),
    "span_axis": (1.0, 0.0, 0.0),
    "up_range": 0.05,
    "slot_input_angle": 0.0,
    "lr": None,
    "group": "",
}
#: A new site's values (those of ``usdgrip author site``'s example: metres).
NEW_SITE = {
    "max_opening": 0.085,
    "forward": (0.0, 0.0, 1.0),
    "grip_line": (0.0, 1.0, 0.0),
    "pad_width": 0.02,
    "max_payload": None,
    "max_grip_force": None,
}
_LINE_NUMBER = re.compile(rf"^{GRASP_LINE_PREFIX}_(\d+)$")


def compute_new_slot_name(prim: Usd.Prim) -> str:
    """``slotN``: the first that the prim has no slot of."""
    taken = set(list_slot_names(prim)) if prim else set()
    n = 1
    while f"slot{n}" in taken:
        n += 1
    return f"slot{n}"


def is_site_prim(prim: Usd.Prim) -> bool:
    """Whether ``prim`` is a gripper site to edit (``GripperSiteAPI`` or ``gripper:maxOpening``)."""
    return bool(prim) and (prim.HasAPI(SITE_API) or prim.HasAttribute("gripper:maxOpening"))


def compute_site_path(prim: Usd.Prim) -> str:
    """Where Add Gripper Site… authors for a selected prim: the site itself, else a new child.

    The child is ``tcp`` (``tcp1``... when taken): a gripper's site is a frame of its own
    under the gripper, and a mesh cannot be one (GR.001).
    """
    if is_site_prim(prim):
        return str(prim.GetPath())
    name, n = "tcp", 0
    while prim.GetChild(name):
        n += 1
        name = f"tcp{n}"
    return str(prim.GetPath().AppendChild(name))


def compute_next_line_name(stage: Usd.Stage) -> str:
    """``grasp_identifier_NN``: the next number after every line name on the stage (01 first)."""
    numbers = [0]
    for prim in stage.TraverseAll():
        found = _LINE_NUMBER.match(prim.GetName())
        if found:
            numbers.append(int(found[1]))
    return f"{GRASP_LINE_PREFIX}_{max(numbers) + 1:02d}"


def check_new_line_name(stage: Usd.Stage, edit: LineEdit) -> None:
    """Refuse a new line whose name is taken under its parent (Add Grasp Line…).

    Raises:
        ValueError: naming the prim there and the next free name.
    """
    if Sdf.Path.IsValidPathString(edit.path) and stage.GetPrimAtPath(edit.path):
        raise ValueError(
            f"<{edit.path}> exists already: choose another name (next free: "
            f"{compute_next_line_name(stage)}), or select that line to edit it"
        )


def _authored(prim: Usd.Prim, name: str) -> Any:
    attr = prim.GetAttribute(name)
    return attr.Get() if attr and attr.HasValue() else None


def read_slot_values(prim: Usd.Prim, name: str) -> dict[str, Any]:
    """The authored fields of slot ``name`` (:data:`NEW_SLOT`'s keys; unauthored: left out)."""
    values = {}
    for key, prop in SLOT_PROPERTY_OF.items():
        value = _authored(prim, get_slot_attribute_name(name, prop))
        if value is None:
            continue
        if key in ("center", "forward", "span_axis"):
            values[key] = tuple(float(v) for v in value)
        elif key in ("up_range", "slot_input_angle"):
            values[key] = float(value)
        else:
            values[key] = str(value)
    return values


def read_site_values(prim: Usd.Prim) -> dict[str, Any]:
    """The authored fields of the site on ``prim`` (:data:`NEW_SITE`'s keys, metres).

    Directions are the unit directions of the curves' ``p1 - p0``; ``pad_width`` the grip
    line's length in metres. A value that is not finite is left out.
    """
    values: dict[str, Any] = {}
    for key, attr in (
        ("max_opening", "gripper:maxOpening"),
        ("max_payload", "gripper:maxPayload"),
        ("max_grip_force", "gripper:maxGripForce"),
    ):
        value = _authored(prim, attr)
        if isinstance(value, int | float) and math.isfinite(value):
            values[key] = float(value)
    mpu = get_meters_per_unit(prim.GetStage())
    for key, names in (("forward", FORWARD_AXIS_NAMES), ("grip_line", GRIP_LINE_NAMES)):
        curve = prim.GetChild(names[0])
        points = _authored(curve, "points") if curve else None
        if points is None or len(points) < 2:
            continue
        delta = [float(b) - float(a) for a, b in zip(points[0], points[1], strict=True)]
        norm = math.sqrt(sum(c * c for c in delta))
        if math.isfinite(norm) and norm > 0:
            values[key] = tuple(c / norm for c in delta)
            if key == "grip_line":
                values["pad_width"] = norm * mpu
    return values


def read_line_points(prim: Usd.Prim) -> dict[str, Any]:
    """``p0``/``p1`` of a grasp line prim as authored (those it has)."""
    points = _authored(prim, "points") if prim else None
    found = list(points) if points is not None else []
    keys = ("p0", "p1")[: len(found)]
    return {key: tuple(float(c) for c in p) for key, p in zip(keys, found[:2], strict=True)}
