"""The authoring API: every value checked by the rules first, then one ``Sdf.ChangeBlock``.

:func:`author_edit` is the one way an edit is authored (the functions below, ``usdgrip
author`` and the dialogs call it): :func:`usdgrip.authoring.checks.check_edit` judges
it, an edit the rules refuse raises :class:`AuthoringError` with nothing authored,
and otherwise it is written into the edit target's layer in one change block.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import ArrayLike
from pxr import Sdf, Usd

from usdgrip.authoring.checks import ProposalStage, judge_plan
from usdgrip.authoring.edit_records import (
    AuthoringError,
    AuthoringVerdict,
    Edit,
    LineEdit,
    SiteEdit,
    SlotEdit,
)
from usdgrip.authoring.plans import EditPlan, map_identity, plan_edit
from usdgrip.rules.engine import resolve_params
from usdgrip.usd.stage import get_stage_name, require_prim, require_stage


def _target_of(stage: Usd.Stage, layer: Sdf.Layer | Usd.EditTarget | None) -> Usd.EditTarget:
    if layer is None:
        return stage.GetEditTarget()
    if isinstance(layer, Usd.EditTarget):
        return layer
    return Usd.EditTarget(layer)


def find_stronger_opinions(
    stage: Usd.Stage, plan: EditPlan, layer: Sdf.Layer
) -> list[tuple[str, Sdf.Layer]]:
    """Values the edit authors that a stronger layer of the stage's layer stack overrides.

    ``(attribute path, layer)`` for each: authoring into ``layer`` would change nothing
    the stage shows. Empty when ``layer`` is not in the layer stack (nothing to compare).
    """
    stack = list(stage.GetLayerStack(includeSessionLayers=True))
    if layer not in stack:
        return []
    stronger = stack[: stack.index(layer)]
    if not stronger or plan.write is None:
        return []
    probe = Sdf.Layer.CreateAnonymous("usdgrip-probe.usda")
    with Sdf.ChangeBlock():
        plan.write(probe, map_identity)
    written: list[Sdf.Path] = []
    probe.Traverse(
        Sdf.Path.absoluteRootPath,
        lambda path: written.append(path) if path.IsPropertyPath() else None,
    )
    found = []
    for path in written:
        for other in stronger:
            attr = other.GetAttributeAtPath(path)
            if attr is not None and attr.HasDefaultValue():
                found.append((str(path), other))
                break
    return found


def find_target_problem(
    stage: Usd.Stage, plan: EditPlan, layer: Sdf.Layer | Usd.EditTarget | None
) -> str | None:
    """Why ``plan`` cannot be authored into ``layer`` (one line), or ``None`` when it can.

    A layer that may not be edited, one the edit may not go to (a site's removal outside
    the layer holding it), and one whose opinion a stronger layer would hide.
    """
    target = _target_of(stage, layer)
    target_layer = target.GetLayer()
    if target_layer is None or not target.IsValid():
        return f"{get_stage_name(stage)}: the edit target has no layer to author in"
    if not target_layer.permissionToEdit:
        return (
            f"{target_layer.identifier}: the layer may not be edited (permissionToEdit is "
            "false); author into another layer"
        )
    refusal = plan.check_layer(target_layer) if plan.check_layer is not None else None
    if refusal is not None:
        return refusal
    hidden = find_stronger_opinions(stage, plan, target_layer)
    if hidden:
        shown = ", ".join(f"{path} (in {lay.identifier})" for path, lay in hidden[:3])
        return (
            f"{plan.edit.label}: a stronger layer overrides what the edit would author into "
            f"{target_layer.identifier}: {shown}; author into that layer, or remove its opinion"
        )
    return None


def author_edit(
    stage: Usd.Stage,
    edit: Edit,
    *,
    params: Mapping[str, Any] | None = None,
    layer: Sdf.Layer | Usd.EditTarget | None = None,
    scratch: ProposalStage | None = None,
) -> AuthoringVerdict:
    """Check ``edit`` with the rules, then author it in one ``Sdf.ChangeBlock``.

    Args:
        stage: the stage to edit.
        edit: a :class:`SlotEdit`, :class:`SiteEdit` or :class:`LineEdit`.
        params: rule parameters (:data:`usdgrip.rules.DEFAULT_PARAMS`).
        layer: where the opinions go (a layer of ``stage`` or an edit target; default
            the stage's edit target).
        scratch: a :class:`ProposalStage` of ``stage`` to check with (default: a new one).

    Returns:
        The verdict (``ok``; its non-refusing items are warnings to show).

    Raises:
        AuthoringError: the rules refuse the edit; nothing was authored.
        ValueError: no prim path, an instance proxy, a layer that may not be edited or
            whose opinion a stronger layer hides; nothing was authored.
        PrimNotFoundError: no prim at the path.
    """
    require_stage(stage)
    resolved = resolve_params(params)
    plan = plan_edit(stage, edit, resolved)
    verdict = judge_plan(stage, plan, resolved, scratch)
    if not verdict.ok or plan.write is None:
        raise AuthoringError(verdict)
    target = _target_of(stage, layer)
    problem = find_target_problem(stage, plan, target)
    if problem is not None:
        raise ValueError(problem)
    target_layer = target.GetLayer()
    with Sdf.ChangeBlock():
        plan.write(target_layer, target.MapToSpecPath)
    return verdict


def _slot_edit(prim: Usd.Prim, name: str, **values: Any) -> SlotEdit:
    require_prim(prim)
    return SlotEdit(str(prim.GetPath()), name, **values)


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
    params: Mapping[str, Any] | None = None,
) -> AuthoringVerdict:
    """Apply ``GripperSlotAPI:<name>`` (if needed) and author the given fields.

    Values are in the prim's local frame (stage units; ``up_range`` metres,
    ``slot_input_angle`` degrees, ``lr`` 0/1 or ``"left"``/``"right"``); a value left
    ``None`` is left as it is. Every value is checked first by GS.001–GS.009 on what
    the prim would be, then everything is authored into the edit target in one
    ``Sdf.ChangeBlock``.

    Returns:
        The verdict (its non-refusing items are warnings, e.g. GS.008 for a group's
        first member).

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim``.
        AuthoringError: (a ``ValueError``) a value the rules refuse, e.g. ``lr="middle"``
            (GS.004) or a centre 1 m off the object (GS.009); nothing is authored.
        ValueError: ``prim`` is not valid, or is an instance proxy.
    """
    edit = _slot_edit(
        prim,
        name,
        center=center,
        forward=forward,
        span_axis=span_axis,
        up_range=up_range,
        slot_input_angle=slot_input_angle,
        lr=lr,
        group=group,
    )
    return author_edit(prim.GetStage(), edit, params=params)


def remove_gripper_slot(prim: Usd.Prim, name: str) -> AuthoringVerdict:
    """Remove ``GripperSlotAPI:<name>`` and its properties from the edit target's layer.

    Nothing else is touched. When a weaker layer (the asset under an edits layer)
    applies the instance, ``delete apiSchemas`` is authored for it; its properties
    there stay, unread. The verdict lists what the removal leaves (GS.008: a group of
    one); a removal is never refused.

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim``.
        ValueError: the prim has no such instance.
    """
    return author_edit(prim.GetStage(), _slot_edit(prim, name, remove=True))


def _site_edit(
    path: str,
    *,
    define: bool,
    max_opening: float | None,
    max_payload: float | None,
    max_grip_force: float | None,
    forward: ArrayLike | None,
    grip_line: ArrayLike | None,
    forward_length: float,
    pad_width: float,
    translate: ArrayLike | None = None,
) -> SiteEdit:
    return SiteEdit(
        path,  # type: ignore[arg-type]  (checked by plan_site_edit, naming it)
        define=define,
        max_opening=max_opening,
        max_payload=max_payload,
        max_grip_force=max_grip_force,
        forward=forward,
        grip_line=grip_line,
        forward_length=forward_length,
        pad_width=pad_width,
        translate=translate,
    )


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
    params: Mapping[str, Any] | None = None,
) -> Usd.Prim:
    """Define a complete, valid gripper site in one call.

    Defines an Xform at ``path`` (or reuses the prim there), applies ``GripperSiteAPI``,
    authors ``gripper:maxOpening`` (and ``gripper:maxPayload``, ``gripper:maxGripForce``
    when given), and defines both axis curves as linear 2-point ``guide`` BasisCurves
    with extents: the forward axis from the origin along ``forward``
    (``forward_length`` long) and the grip line centred on the origin along
    ``grip_line`` (``pad_width`` long, the pad width). The site is judged by GR.001–GR.012
    first and authored in one ``Sdf.ChangeBlock``.

    Args:
        stage: stage to author on (its edit target).
        path: absolute prim path of the site.
        max_opening: metres, finite > 0 (at most 2 m).
        forward: approach direction in the site frame (any length).
        grip_line: graspable tube axis in the site frame (any length).
        forward_length: drawn length of the forward curve (stage units).
        pad_width: grip pad width, length of the grip line (stage units).
        max_payload: kilograms, optional.
        max_grip_force: newtons (force of each pad on a held object), optional.
        translate: optional site position in its parent frame.
        params: rule parameters.

    Raises:
        TypeError: ``stage`` is not a ``Usd.Stage``.
        AuthoringError: (a ``ValueError``) a value the rules refuse; nothing is authored.
        ValueError: ``path`` is not an absolute prim path, or ``translate`` not 3 finite
            numbers.
    """
    require_stage(stage)
    if max_opening is None:
        raise TypeError("max_opening is None; expected a number (metres)")
    edit = _site_edit(
        path,
        define=True,
        max_opening=max_opening,
        max_payload=max_payload,
        max_grip_force=max_grip_force,
        forward=forward,
        grip_line=grip_line,
        forward_length=forward_length,
        pad_width=pad_width,
        translate=translate,
    )
    author_edit(stage, edit, params=params)
    return stage.GetPrimAtPath(edit.prim)


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
    params: Mapping[str, Any] | None = None,
) -> AuthoringVerdict:
    """Edit a site through the schema; only the given values are authored.

    Applies ``GripperSiteAPI`` when missing. A given axis (re)defines its prefixed
    curve child (``gripper_forward_axis`` / ``gripper_grip_line``); legacy attributes
    and unprefixed curves are left alone (``usdgrip migrate`` handles those). The site
    as it would be is judged by GR.001–GR.012 first, so an edit that leaves it failing
    (no forward axis yet, say) is refused: give the missing values in the same call.

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim``.
        AuthoringError: (a ``ValueError``) the site would fail a rule; nothing is authored.
        ValueError: the prim is not valid or is an instance proxy.
    """
    require_prim(prim)
    edit = _site_edit(
        str(prim.GetPath()),
        define=False,
        max_opening=max_opening,
        max_payload=max_payload,
        max_grip_force=max_grip_force,
        forward=forward,
        grip_line=grip_line,
        forward_length=forward_length,
        pad_width=pad_width,
    )
    return author_edit(prim.GetStage(), edit, params=params)


def remove_gripper_site(prim: Usd.Prim) -> AuthoringVerdict:
    """Remove the gripper site of ``prim`` from the edit target's layer; the prim stays.

    ``GripperSiteAPI`` (``delete`` authored when a weaker layer applies it), the
    ``gripper:*`` attributes and the ``gripper_forward_axis``/``gripper_grip_line`` curves
    (deactivated when a weaker layer defines them). Never refused.

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim``.
        ValueError: the prim has no site to remove, or is an instance proxy.
    """
    require_prim(prim)
    return author_edit(prim.GetStage(), SiteEdit(str(prim.GetPath()), remove=True))


def define_grasp_line(
    prim: Usd.Prim,
    name: str,
    p0: ArrayLike | None = None,
    p1: ArrayLike | None = None,
    *,
    params: Mapping[str, Any] | None = None,
) -> Usd.Prim:
    """Define (or edit) the SimReady grasp vector line ``<prim>/<name>``.

    A linear ``guide`` BasisCurves of two points (p0, p1: where the two pads start, in
    ``prim``'s frame, stage units), ``curveVertexCounts = [2]``, constant ``widths``
    of 0.01 m and SimReady's guide green, as SimReady's authoring helper writes it. It
    is judged first by GSP.001 and GP.001–GP.003 (the name starts with
    ``grasp_identifier``, the line lies under the default prim, meets its object and
    describes a width a parallel jaw holds); for an existing line a point left ``None``
    is kept.

    Returns:
        The line's prim.

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim``.
        AuthoringError: (a ``ValueError``) the line would fail a rule; nothing is authored.
        ValueError: a new line without both points, a name that is not an identifier.
    """
    require_prim(prim)
    edit = LineEdit(str(prim.GetPath()), name, p0=p0, p1=p1)
    author_edit(prim.GetStage(), edit, params=params)
    return prim.GetStage().GetPrimAtPath(edit.path)


def remove_grasp_line(prim: Usd.Prim, name: str) -> AuthoringVerdict:
    """Remove the grasp vector line ``<prim>/<name>`` from the edit target's layer.

    A line a weaker layer defines is deactivated (``active = false``). Never refused;
    the verdict lists what the removal leaves (GSP.001 on a prop left without a line).

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim``.
        ValueError: there is no such prim.
    """
    require_prim(prim)
    return author_edit(prim.GetStage(), LineEdit(str(prim.GetPath()), name, remove=True))
