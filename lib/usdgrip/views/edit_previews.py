"""What an authoring form would author, drawn live in the session layer's preview scope.

One function per kind of edit, shared by usdview's dialogs
(:mod:`usdgrip.views.edit_dialogs`, :mod:`usdgrip.views.site_line_dialogs`) and Kit's
forms (:mod:`usdgrip.hosts.kit.kit_authoring`); no Qt. Each authors the edit on a
:class:`~usdgrip.authoring.ProposalStage` (never the user's layers), reads back what
it would be, and draws it under :data:`usdgrip.views.overlays.PREVIEW_SCOPE`.
"""

from __future__ import annotations

import contextlib
from typing import Any

from pxr import Sdf, Usd

from usdgrip.authoring import LineEdit, ProposalStage, SiteEdit, SlotEdit
from usdgrip.authoring.plans import map_identity, plan_edit
from usdgrip.errors import GripperError
from usdgrip.rules.engine import resolve_params
from usdgrip.site_records import GripperSlot
from usdgrip.usd.grasp_lines import find_grasp_lines
from usdgrip.usd.sites import read_gripper_site
from usdgrip.usd.slots import read_gripper_slots
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
