"""Turning an edit into what would be authored: values converted and pre-checked, a writer.

:func:`plan_edit` reads the stage (never writes it) and returns an :class:`EditPlan`:
the values in the schema's types, the problems found in the values themselves (a
vector that is not 3 numbers, a max opening above 2 m: the rules' own pure checks and
words, :mod:`usdgrip.slot_checks`, :mod:`usdgrip.site_limits`), and ``write(layer,
map_path)``, which authors the edit into one layer with the ``Sdf`` writers of
:mod:`usdgrip.usd.authoring` (the caller holds the ``Sdf.ChangeBlock``). The rules then
judge what ``write`` gives (:mod:`usdgrip.authoring.checks`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pxr import Sdf, Tf, Usd, UsdGeom

from usdgrip.authoring.edit_records import (
    SLOT_PROPERTY_OF,
    Edit,
    LineEdit,
    SiteEdit,
    SlotEdit,
    VerdictItem,
    make_item,
)
from usdgrip.errors import PrimNotFoundError
from usdgrip.frames import compute_unit
from usdgrip.grasp_line_geometry import GRASP_LINE_PREFIX
from usdgrip.rules.records import DEFAULT_PARAMS, RULES
from usdgrip.site_limits import get_max_opening_problem, get_site_limit_problem
from usdgrip.site_records import LR_TOKENS
from usdgrip.slot_checks import (
    get_center_problem,
    get_input_angle_problem,
    get_up_range_problem,
    get_vector3,
)
from usdgrip.usd.authoring import (
    GRASP_LINE_COLOR,
    GRASP_LINE_WIDTH_M,
    deactivate_prim_spec,
    define_typeless_prim_spec,
    erase_slot,
    get_prim_spec,
    prune_empty_overs,
    remove_api_schema,
    remove_prim_spec,
    remove_properties_in_namespace,
    write_guide_curve,
    write_site,
    write_slot,
)
from usdgrip.usd.names import FORWARD_AXIS_NAMES, GRIP_LINE_NAMES, SITE_API, SLOT_API
from usdgrip.usd.slots import get_instance_name_problem, list_slot_instances
from usdgrip.usd.stage import get_meters_per_unit, get_stage_name

#: Largest finite value of a 32-bit float (``float`` and ``point3f`` attributes).
FLOAT32_MAX = float(np.finfo(np.float32).max)

MapPath = Callable[[Sdf.Path], Sdf.Path]
Writer = Callable[[Sdf.Layer, MapPath], None]


def map_identity(path: Sdf.Path) -> Sdf.Path:
    """The spec path of ``path`` in a layer of the stage's own layer stack."""
    return path


@dataclass
class EditPlan:
    """What an edit authors, before anything is authored."""

    edit: Edit
    path: Sdf.Path
    """The prim the rules judge: the object (slot), the site, the line."""
    write: Writer | None
    """Authors the edit into a layer (``None`` when :attr:`refused` already)."""
    refused: list[VerdictItem] = field(default_factory=list)
    """Values the rules' pure checks refuse: nothing else is checked then."""
    existing: bool = False
    """The slot or line exists on the stage (an edit rather than an addition)."""
    take_away: Writer | None = None
    """Removes the existing slot or line (the state the edit's own issues are told from)."""
    notes: list[str] = field(default_factory=list)
    check_layer: Callable[[Sdf.Layer], str | None] | None = None
    """Why the edit cannot be authored into a given layer (``None``: it can), if it may not."""


def _refuse(code: str, prim: Sdf.Path | str, message: str, edit: Edit) -> VerdictItem:
    return make_item(RULES[code].make_issue(str(prim), message), edit, unusable=True)


def require_prim_path(stage: Usd.Stage, path: object, what: str) -> Sdf.Path:
    """``path`` as an absolute prim path.

    Raises:
        TypeError: ``path`` is not a string (or ``Sdf.Path``).
        ValueError: it is not an absolute prim path (naming ``what`` and the path).
    """
    if not isinstance(path, str | Sdf.Path):
        raise TypeError(f"{what} path is {path!r}; expected an absolute prim path, e.g. '/Tote'")
    text = str(path)
    if not (
        Sdf.Path.IsValidPathString(text)
        and Sdf.Path(text).IsAbsolutePath()
        and Sdf.Path(text).IsPrimPath()
    ):
        example = (
            "/" + text.lstrip("/") if Sdf.Path.IsValidIdentifier(text.lstrip("/")) else "/Tote"
        )
        raise ValueError(
            f"{what} path is {text!r}; expected an absolute prim path, e.g. {example!r}"
        )
    return Sdf.Path(text)


def require_editable_prim(stage: Usd.Stage, path: Sdf.Path, what: str) -> Usd.Prim:
    """The prim at ``path``; refuses a missing prim and an instance proxy."""
    prim = stage.GetPrimAtPath(path)
    name = get_stage_name(stage)
    if not prim:
        roots = ", ".join(f"<{p.GetPath()}>" for p in stage.GetPseudoRoot().GetChildren())
        raise PrimNotFoundError(
            f"{name}: no {what} prim at <{path}> (root prims: {roots or 'none'})"
        )
    if prim.IsInstanceProxy():
        raise ValueError(
            f"{name}: <{path}> is an instance proxy (under the instanceable prim "
            f"<{_instance_root(prim)}>): USD authors nothing there; author on the asset the "
            "instance refers to, or make that prim not instanceable"
        )
    return prim


def _instance_root(prim: Usd.Prim) -> Sdf.Path:
    while prim and not prim.IsInstance():
        prim = prim.GetParent()
    return prim.GetPath() if prim else Sdf.Path.absoluteRootPath


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _shown(value: object) -> str:
    vector = get_vector3(value)
    if vector is not None:
        return "[" + ", ".join(f"{c:g}" for c in vector) + "]"
    return repr(value)


def _lists_item(spec: Sdf.PrimSpec, item: str) -> bool:
    if not spec.HasInfo("apiSchemas"):
        return False
    listop = spec.GetInfo("apiSchemas")
    return item in (
        *listop.explicitItems,
        *listop.prependedItems,
        *listop.appendedItems,
        *listop.addedItems,
    )


def _applied_elsewhere(prim: Usd.Prim, item: str, layer: Sdf.Layer) -> bool:
    """A spec of ``prim`` in another layer than ``layer`` applies ``item``."""
    return any(spec.layer != layer and _lists_item(spec, item) for spec in prim.GetPrimStack())


# --- slots --------------------------------------------------------------------------


def convert_slot_values(edit: SlotEdit) -> tuple[dict[str, Any], list[VerdictItem]]:
    """The given values in the schema's types, and those the GS rules' checks refuse as given.

    Non-finite numbers are kept: the rules report them on what would be authored.
    """
    values: dict[str, Any] = {}
    refused: list[VerdictItem] = []
    label = f"slot {edit.name!r} (GripperSlotAPI)"

    def refuse(code: str, problem: str) -> None:
        refused.append(_refuse(code, edit.prim, f"{label}: {problem}", edit))

    for name, value in edit.given().items():
        prop = SLOT_PROPERTY_OF[name]
        if name in ("center", "forward", "span_axis"):
            vector = get_vector3(value)
            if vector is None:
                refuse("GS.001", get_center_problem(value, prop) or f"{prop} is {value!r}")
            else:
                values[prop] = vector
        elif name == "up_range":
            if _is_real(value):
                values[prop] = float(value)
            else:
                refuse("GS.002", get_up_range_problem(value, prop) or f"{prop} is {value!r}")
        elif name == "slot_input_angle":
            if _is_real(value):
                values[prop] = float(value)
            else:
                refuse("GS.003", get_input_angle_problem(value, name=prop) or f"{prop} {value!r}")
        elif name == "lr":
            token = value if isinstance(value, str) else None
            if _is_real(value) and value in (0, 1):
                token = LR_TOKENS[int(value)]
            if token not in LR_TOKENS:
                refuse("GS.004", f'lr is {value!r}; expected "left" or "right" (or 0, 1)')
            else:
                values[prop] = token
        elif not isinstance(value, str) or not _is_utf8(value):
            refuse("GS.008", f"groupName is {value!r}; expected text (UTF-8), '' for none")
        else:
            values[prop] = value
    return values, refused


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def plan_slot_edit(stage: Usd.Stage, edit: SlotEdit) -> EditPlan:
    """The plan of a slot edit (see the module); reads ``stage`` only.

    Raises:
        ValueError: the prim path is not a prim path, the prim is an instance proxy,
            ``remove`` of a slot the prim does not have, or ``remove`` with values.
        PrimNotFoundError: no prim at the path.
    """
    path = require_prim_path(stage, edit.prim, "object")
    prim = require_editable_prim(stage, path, "object")
    name = edit.name
    problem = get_instance_name_problem(name) if isinstance(name, str) else repr(name)
    if problem is not None:
        item = _refuse("GS.005", path, f"GripperSlotAPI:{name}: {problem}", edit)
        return EditPlan(edit, path, None, [item])
    instances = list_slot_instances(prim)
    existing = name in instances
    item_name = f"{SLOT_API}:{name}"

    def take_away(layer: Sdf.Layer, map_path: MapPath) -> None:
        erase_slot(layer, map_path(path), name, delete=_applied_elsewhere(prim, item_name, layer))

    if edit.remove:
        if edit.given():
            raise ValueError(f"{edit.label}: remove takes no values; remove, then add the slot")
        if not existing:
            found = ", ".join(repr(n) for n in instances) or "none"
            raise ValueError(
                f"{get_stage_name(stage)}: {edit.label}: no such GripperSlotAPI instance "
                f"(instances on <{path}>: {found})"
            )
        return EditPlan(edit, path, take_away, existing=True)
    values, refused = convert_slot_values(edit)
    if refused:
        return EditPlan(edit, path, None, refused, existing)

    def write(layer: Sdf.Layer, map_path: MapPath) -> None:
        write_slot(layer, map_path(path), name, values, apply=not existing)

    return EditPlan(edit, path, write, existing=existing, take_away=take_away if existing else None)


# --- sites --------------------------------------------------------------------------


def _check_float(value: object, name: str, unit: str) -> str | None:
    """A float attribute's value must be a number a 32-bit float holds."""
    if not _is_real(value):
        return f"{name} is {value!r}; expected a number ({unit})"
    number = float(value)
    if math.isfinite(number) and abs(number) > FLOAT32_MAX:
        return (
            f"{name} is {number:g} {unit}; expected a value a float attribute holds (at most "
            f"{FLOAT32_MAX:.3g})"
        )
    return None


def _check_length(value: object, name: str) -> str | None:
    problem = _check_float(value, name, "stage units")
    if problem is None and not (math.isfinite(float(value)) and float(value) > 0):  # type: ignore[arg-type]
        problem = f"{name} is {float(value):g}; expected a finite length > 0 (stage units)"  # type: ignore[arg-type]
    return problem


def _needs_type(prim: Usd.Prim) -> bool:
    """Whether ``prim`` is missing or typeless (then it is defined with the type it needs)."""
    return not prim or not prim.GetTypeName()


def plan_site_edit(
    stage: Usd.Stage, edit: SiteEdit, params: dict[str, float] | None = None
) -> EditPlan:
    """The plan of a site edit; reads ``stage`` only.

    Raises:
        ValueError: the path is not a prim path, the prim is an instance proxy, or
            ``translate`` is not 3 finite numbers.
        PrimNotFoundError: no prim at the path and not ``define``.
    """
    path = require_prim_path(stage, edit.prim, "site")
    prim = stage.GetPrimAtPath(path)
    if prim or not edit.define or edit.remove:
        prim = require_editable_prim(stage, path, "site")
    if edit.remove:
        return _plan_site_removal(stage, edit, prim)
    maximum = (params or {}).get("max_opening_max_m", DEFAULT_PARAMS["max_opening_max_m"])
    refused: list[VerdictItem] = []
    values: dict[str, float] = {}
    for key, code, attr, unit in (
        ("max_opening", "GR.004", "gripper:maxOpening", "m"),
        ("max_payload", "GR.010", "gripper:maxPayload", "kg"),
        ("max_grip_force", "GR.012", "gripper:maxGripForce", "N"),
    ):
        value = getattr(edit, key)
        if value is None:
            continue
        problem = _check_float(value, attr, unit)
        if problem is None and key == "max_opening":
            problem = get_max_opening_problem(float(value), attr, maximum)
        elif problem is None:
            problem = get_site_limit_problem(float(value), attr, unit)
        if problem is not None:
            refused.append(_refuse(code, path, problem, edit))
        else:
            values[key] = float(value)
    curves: list[tuple[Sdf.Path, tuple, tuple, bool]] = []
    for direction, length, names, half in (
        (edit.forward, edit.forward_length, FORWARD_AXIS_NAMES, False),
        (edit.grip_line, edit.pad_width, GRIP_LINE_NAMES, True),
    ):
        if direction is None:
            continue
        what = "forward" if not half else "grip line"
        unit = compute_unit(get_vector3(direction)) if get_vector3(direction) else None
        problem = (
            f"{names[0]}: {what} {_shown(direction)} is zero or not finite; expected a non-zero "
            "finite direction (3 numbers)"
            if unit is None
            else None
        )
        problem = problem or _check_length(length, "pad width" if half else "forward length")
        if problem is not None:
            refused.append(_refuse("GR.005", path, problem, edit))
            continue
        end = unit * float(length)
        end = end + 0.0  # no -0 in the file
        p0, p1 = (tuple(0.0 - 0.5 * end), tuple(0.5 * end)) if half else ((0.0,) * 3, tuple(end))
        if not all(abs(c) <= FLOAT32_MAX for c in (*p0, *p1)):
            refused.append(_refuse("GR.005", path, f"{names[0]}: points overflow point3f", edit))
            continue
        child = path.AppendChild(names[0])
        curves.append((child, p0, p1, _needs_type(stage.GetPrimAtPath(child))))
    translate = None
    if edit.translate is not None:
        translate = get_vector3(edit.translate)
        if translate is None or not all(map(math.isfinite, translate)):
            raise ValueError(
                f"{edit.label}: translate is {edit.translate!r}; expected 3 finite numbers"
            )
    if refused:
        return EditPlan(edit, path, None, refused, bool(prim))
    define = edit.define and _needs_type(prim)
    # Usd.Stage.DefinePrim defines the missing ancestors too (typeless, not overs).
    ancestors = [p for p in path.GetParentPath().GetPrefixes() if not stage.GetPrimAtPath(p)]
    op_order = None
    if translate is not None:
        order = list(UsdGeom.Xformable(prim).GetXformOpOrderAttr().Get() or []) if prim else []
        op_order = [*order, "xformOp:translate"] if "xformOp:translate" not in order else order

    def write(layer: Sdf.Layer, map_path: MapPath) -> None:
        for ancestor in ancestors if define else ():
            define_typeless_prim_spec(layer, map_path(ancestor))
        write_site(
            layer, map_path(path), values, define=define, translate=translate, op_order=op_order
        )
        for child, p0, p1, define_child in curves:
            write_guide_curve(layer, map_path(child), [p0, p1], define=define_child)

    return EditPlan(edit, path, write, existing=bool(prim))


#: The values a site removal takes (any other field given is refused).
SITE_VALUES = ("max_opening", "max_payload", "max_grip_force", "forward", "grip_line", "translate")


def _remove_child(layer: Sdf.Layer, path: Sdf.Path, prim: Usd.Prim) -> None:
    """Remove ``path``'s spec from ``layer``; deactivate it when a weaker layer defines it."""
    remove_prim_spec(layer, path)
    if prim and any(spec.layer != layer for spec in prim.GetPrimStack()):
        deactivate_prim_spec(layer, path)


def _plan_site_removal(stage: Usd.Stage, edit: SiteEdit, prim: Usd.Prim) -> EditPlan:
    """Take ``GripperSiteAPI``, its ``gripper:*`` attributes and the prefixed curves away."""
    given = [name for name in SITE_VALUES if getattr(edit, name) is not None]
    if given or edit.define:
        shown = ", ".join(given + (["define"] if edit.define else []))
        raise ValueError(f"{edit.label}: remove takes no values (given: {shown})")
    path = prim.GetPath()
    attributes = [a.GetName() for a in prim.GetAuthoredAttributes()]
    gripper_attrs = [name for name in attributes if name.startswith("gripper:")]
    curves = [
        path.AppendChild(names[0])
        for names in (FORWARD_AXIS_NAMES, GRIP_LINE_NAMES)
        if stage.GetPrimAtPath(path.AppendChild(names[0]))
    ]
    if not (prim.HasAPI(SITE_API) or gripper_attrs or curves):
        raise ValueError(
            f"{get_stage_name(stage)}: {edit.label}: no gripper site to remove (no "
            f"{SITE_API}, gripper:* attribute or {FORWARD_AXIS_NAMES[0]}/{GRIP_LINE_NAMES[0]} "
            "curve)"
        )

    def take_away(layer: Sdf.Layer, map_path: MapPath) -> None:
        spec_path = map_path(path)
        elsewhere = _applied_elsewhere(prim, SITE_API, layer)
        spec = get_prim_spec(layer, spec_path) if elsewhere else layer.GetPrimAtPath(spec_path)
        if spec is not None:
            remove_api_schema(spec, SITE_API, delete=elsewhere)
            remove_properties_in_namespace(spec, "gripper")
        for child in curves:
            _remove_child(layer, map_path(child), stage.GetPrimAtPath(child))
        prune_empty_overs(layer, spec_path)

    holders = {
        a.layer for name in gripper_attrs for a in prim.GetAttribute(name).GetPropertyStack()
    }
    holders |= {s.layer for s in prim.GetPrimStack() if _lists_item(s, SITE_API)}
    for child in curves:
        holders |= {s.layer for s in stage.GetPrimAtPath(child).GetPrimStack()}

    def check_layer(layer: Sdf.Layer) -> str | None:
        others = sorted(h.identifier for h in holders if h != layer)
        if not others:
            return None
        return (
            f"{edit.label}: the site is authored in {', '.join(others)}; USD cannot delete "
            "another layer's attributes and site discovery reads them (and the curves, active "
            "or not): remove it from that layer (Author into: Root layer, or "
            "`usdgrip author site --remove --in-place` on that file)"
        )

    return EditPlan(edit, path, take_away, existing=True, check_layer=check_layer)


# --- grasp lines --------------------------------------------------------------------


def _read_line_points(curve: Usd.Prim) -> list[tuple[float, float, float]]:
    attr = curve.GetAttribute("points") if curve else None
    value = attr.Get() if attr else None
    if value is None:
        return []
    try:
        return [tuple(map(float, p)) for p in value][:2]
    except (TypeError, ValueError):
        return []


def plan_line_edit(stage: Usd.Stage, edit: LineEdit) -> EditPlan:
    """The plan of a grasp line edit; reads ``stage`` only.

    Raises:
        ValueError: the parent path is not a prim path, the parent is an instance
            proxy, a new line without both points, ``remove`` of a line that is not
            there, or ``remove`` with points.
        PrimNotFoundError: no parent prim.
    """
    parent_path = require_prim_path(stage, edit.prim, "parent")
    require_editable_prim(stage, parent_path, "parent")
    name = edit.name
    if not isinstance(name, str) or not Tf.IsValidIdentifier(name):
        raise ValueError(
            f"{get_stage_name(stage)}: grasp line name {name!r} is not a USD identifier (ASCII "
            f"letters, digits and '_', not starting with a digit); e.g. '{GRASP_LINE_PREFIX}_01'"
        )
    path = parent_path.AppendChild(name)
    curve = stage.GetPrimAtPath(path)
    refused: list[VerdictItem] = []
    if not name.startswith(GRASP_LINE_PREFIX):
        message = (
            f"<{path}>: the name {name!r} does not start with {GRASP_LINE_PREFIX}; SimReady's "
            f"GSP.001 (and FET005) read only BasisCurves named {GRASP_LINE_PREFIX}*"
        )
        refused.append(_refuse("GSP.001", path, message, edit))
    default = stage.GetDefaultPrim()
    if default and not path.HasPrefix(default.GetPath()):
        message = (
            f"<{path}> is outside the default prim <{default.GetPath()}>; SimReady looks for "
            "grasp vector lines under the default prim: put the line under it"
        )
        refused.append(_refuse("GSP.001", path, message, edit))
    if curve and not curve.IsA(UsdGeom.BasisCurves):
        message = (
            f"<{path}> is a {curve.GetTypeName() or 'typeless prim'!r}; expected BasisCurves "
            "(a grasp vector line)"
        )
        refused.append(_refuse("GSP.001", path, message, edit))
    existing = bool(curve)

    def take_away(layer: Sdf.Layer, map_path: MapPath) -> None:
        _remove_child(layer, map_path(path), curve)

    if edit.remove:
        if edit.p0 is not None or edit.p1 is not None:
            raise ValueError(f"{edit.label}: remove takes no points")
        if not existing:
            raise ValueError(f"{get_stage_name(stage)}: {edit.label}: no prim there to remove")
        return EditPlan(edit, path, take_away, existing=True)
    old = _read_line_points(curve)
    points = []
    for index, value in enumerate((edit.p0, edit.p1)):
        if value is None:
            if len(old) <= index:
                raise ValueError(
                    f"{get_stage_name(stage)}: {edit.label}: a new grasp line needs p0 and p1 "
                    "(where the two pads start)"
                )
            points.append(old[index])
            continue
        vector = get_vector3(value)
        if vector is None or not all(abs(c) <= FLOAT32_MAX for c in vector if math.isfinite(c)):
            message = (
                f"grasp vector line p{index} is {_shown(value)}; expected 3 finite numbers "
                f"that point3f[] holds (at most {FLOAT32_MAX:.3g})"
            )
            refused.append(_refuse("GP.002", path, message, edit))
            continue
        points.append(vector)
    if refused:
        return EditPlan(edit, path, None, refused, existing)
    width = GRASP_LINE_WIDTH_M / get_meters_per_unit(stage)

    def write(layer: Sdf.Layer, map_path: MapPath) -> None:
        write_guide_curve(
            layer, map_path(path), points, define=not existing, width=width, color=GRASP_LINE_COLOR
        )

    return EditPlan(edit, path, write, existing=existing, take_away=take_away if existing else None)


def plan_edit(stage: Usd.Stage, edit: Edit, params: dict[str, float] | None = None) -> EditPlan:
    """The plan of any edit (:func:`plan_slot_edit`, ``plan_site_edit``, ``plan_line_edit``)."""
    if isinstance(edit, SlotEdit):
        return plan_slot_edit(stage, edit)
    if isinstance(edit, SiteEdit):
        return plan_site_edit(stage, edit, params)
    if isinstance(edit, LineEdit):
        return plan_line_edit(stage, edit)
    raise TypeError(f"edit is {type(edit).__name__}; expected a SlotEdit, SiteEdit or LineEdit")
