"""Writing sites, slots and grasp lines as specs of one layer (``Sdf`` API, no checks).

These writers author exactly what they are given into one ``Sdf.Layer`` at spec paths;
they check nothing and read no composed state, so a caller can run several of them in
one ``Sdf.ChangeBlock``. The checked API (values validated by the rules' own checks
before anything is authored) is :mod:`usdgrip.authoring`; ``usdgrip migrate`` uses
:func:`add_api_schemas` and :func:`set_attribute_default` directly, since it moves
authored values as they are. :func:`write_slot_records` writes LambdaSim records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pxr import Gf, Sdf, Usd, UsdGeom, Vt

from usdgrip.lambdasim import (
    CUSTOM_DATA_PATH,
    SlotRecord,
    format_lambdasim_records,
)
from usdgrip.site_records import GripperSlot
from usdgrip.usd.names import MAX_GRIP_FORCE_ATTRS, SITE_API, SLOT_API, SLOT_NAMESPACE
from usdgrip.usd.slots import get_slot_attribute_name
from usdgrip.usd.stage import require_prim

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
#: GripperSiteAPI's attributes (all ``float``), by the name :mod:`usdgrip.authoring` uses.
SITE_ATTRIBUTES = {
    "max_opening": "gripper:maxOpening",
    "max_payload": "gripper:maxPayload",
    "max_grip_force": MAX_GRIP_FORCE_ATTRS[0],
}
#: SimReady's grasp-line authoring helper draws lines in this guide green, 0.01 wide.
GRASP_LINE_COLOR = (0.10, 0.85, 0.20)
GRASP_LINE_WIDTH_M = 0.01


# --- specs -------------------------------------------------------------------------


def add_api_schemas(spec: Sdf.PrimSpec, names: Iterable[str]) -> None:
    """Add ``names`` to the spec's apiSchemas as ``UsdPrim.ApplyAPI`` would (prepend)."""
    names = list(names)
    current = spec.GetInfo("apiSchemas") if spec.HasInfo("apiSchemas") else Sdf.TokenListOp()
    if current.isExplicit:
        items = list(current.explicitItems)
        current.explicitItems = items + [n for n in names if n not in items]
    else:
        items = list(current.prependedItems)
        current.prependedItems = items + [n for n in names if n not in items]
        current.deletedItems = [n for n in current.deletedItems if n not in names]
    spec.SetInfo("apiSchemas", current)


def remove_api_schema(spec: Sdf.PrimSpec, name: str, *, delete: bool) -> None:
    """Take ``name`` out of the spec's apiSchemas; ``delete`` also authors ``delete`` for it.

    ``delete`` is for a schema a weaker layer applies: this layer's opinion removes it.
    """
    if not spec.HasInfo("apiSchemas"):
        if not delete:
            return
        current = Sdf.TokenListOp()
    else:
        current = spec.GetInfo("apiSchemas")
    if current.isExplicit:
        current.explicitItems = [n for n in current.explicitItems if n != name]
    else:
        current.prependedItems = [n for n in current.prependedItems if n != name]
        current.appendedItems = [n for n in current.appendedItems if n != name]
        current.addedItems = [n for n in current.addedItems if n != name]
        deleted = [n for n in current.deletedItems if n != name]
        current.deletedItems = [*deleted, name] if delete else deleted
    if current.isExplicit or any(
        (current.prependedItems, current.appendedItems, current.addedItems, current.deletedItems)
    ):
        spec.SetInfo("apiSchemas", current)
    else:
        spec.ClearInfo("apiSchemas")


def get_prim_spec(layer: Sdf.Layer, path: Sdf.Path | str) -> Sdf.PrimSpec:
    """The layer's spec at ``path``, created (as ``over`` s) when it has none."""
    path = Sdf.Path(path)
    return layer.GetPrimAtPath(path) or Sdf.CreatePrimInLayer(layer, path)


def define_prim_spec(layer: Sdf.Layer, path: Sdf.Path | str, type_name: str) -> Sdf.PrimSpec:
    """The layer's spec at ``path`` as ``def <type_name>`` (its ancestors ``over`` s)."""
    spec = get_prim_spec(layer, path)
    spec.specifier = Sdf.SpecifierDef
    spec.typeName = type_name
    return spec


def define_typeless_prim_spec(layer: Sdf.Layer, path: Sdf.Path | str) -> None:
    """Make the layer's spec at ``path`` a typeless ``def`` (``DefinePrim``'s ancestors)."""
    get_prim_spec(layer, path).specifier = Sdf.SpecifierDef


def set_attribute_default(
    spec: Sdf.PrimSpec,
    name: str,
    type_name: Sdf.ValueTypeName,
    value: object,
    variability: Sdf.Variability = Sdf.VariabilityVarying,
) -> Sdf.AttributeSpec:
    """Author ``value`` as the default of attribute ``name`` of ``spec`` (of ``type_name``).

    A spec of another type in this layer (a value the readers refuse) is replaced; its
    time samples go with it.
    """
    # By path: spec.attributes.get() scans the prim's properties (quadratic over N slots).
    attr = spec.layer.GetAttributeAtPath(spec.path.AppendProperty(name))
    if attr is not None and attr.typeName != type_name:
        spec.RemoveProperty(attr)
        attr = None
    if attr is None:
        attr = Sdf.AttributeSpec(spec, name, type_name, variability)
    attr.default = value
    return attr


def remove_properties_in_namespace(spec: Sdf.PrimSpec, namespace: str) -> list[str]:
    """Remove the spec's properties named ``namespace:*``; their names, sorted."""
    prefix = f"{namespace}:"
    found = [p for p in spec.properties if p.name.startswith(prefix)]
    names = sorted(p.name for p in found)
    for prop in found:
        spec.RemoveProperty(prop)
    return names


def prune_empty_overs(layer: Sdf.Layer, path: Sdf.Path | str) -> None:
    """Remove the spec at ``path`` and its ancestors while each is an empty ``over``."""
    path = Sdf.Path(path)
    while path != Sdf.Path.absoluteRootPath:
        spec = layer.GetPrimAtPath(path)
        if spec is None:
            path = path.GetParentPath()
            continue
        if (
            spec.specifier != Sdf.SpecifierOver
            or spec.typeName
            or spec.properties
            or spec.nameChildren
            or spec.variantSets
            or [key for key in spec.ListInfoKeys() if key != "specifier"]
        ):
            return
        parent = layer.GetPrimAtPath(path.GetParentPath()) or layer.pseudoRoot
        del parent.nameChildren[path.name]
        path = path.GetParentPath()


def remove_prim_spec(layer: Sdf.Layer, path: Sdf.Path | str) -> bool:
    """Remove the layer's spec at ``path`` (and what is under it); False when it has none."""
    path = Sdf.Path(path)
    spec = layer.GetPrimAtPath(path)
    if spec is None:
        return False
    parent = layer.GetPrimAtPath(path.GetParentPath()) or layer.pseudoRoot
    del parent.nameChildren[path.name]
    return True


# --- slots ------------------------------------------------------------------------


def _slot_value(prop: str, value: object) -> object:
    if prop in ("center", "forward", "spanAxis"):
        return Gf.Vec3d(*map(float, value))  # type: ignore[call-overload]
    if prop in ("upRange", "slotInputAngle"):
        return float(value)  # type: ignore[arg-type]
    return str(value)


def write_slot(
    layer: Sdf.Layer,
    path: Sdf.Path | str,
    name: str,
    values: Mapping[str, object],
    *,
    apply: bool,
) -> None:
    """Author GripperSlotAPI ``name`` values (schema property -> value) on ``path`` in ``layer``.

    ``apply`` adds ``GripperSlotAPI:<name>`` to the spec's apiSchemas (prepend). Vectors are
    3 numbers, ``lr`` a ``left``/``right`` token, ``groupName`` text; nothing is checked.
    """
    spec = get_prim_spec(layer, path)
    if apply:
        add_api_schemas(spec, [f"{SLOT_API}:{name}"])
    for prop, value in values.items():
        variability = Sdf.VariabilityUniform if prop == "lr" else Sdf.VariabilityVarying
        set_attribute_default(
            spec,
            get_slot_attribute_name(name, prop),
            SLOT_TYPE_NAMES[prop],
            _slot_value(prop, value),
            variability,
        )


def erase_slot(layer: Sdf.Layer, path: Sdf.Path | str, name: str, *, delete: bool) -> list[str]:
    """Remove slot ``name`` from ``layer``: its apiSchemas entry and its properties there.

    Args:
        layer: the layer to edit.
        path: the object prim's spec path.
        name: the instance name.
        delete: also author ``delete apiSchemas = ["GripperSlotAPI:<name>"]``, for an
            instance a weaker layer applies (its properties there stay, unread).

    Returns:
        The property names removed from ``layer``.
    """
    path = Sdf.Path(path)
    spec = get_prim_spec(layer, path) if delete else layer.GetPrimAtPath(path)
    if spec is None:
        return []
    remove_api_schema(spec, f"{SLOT_API}:{name}", delete=delete)
    removed = remove_properties_in_namespace(spec, f"{SLOT_NAMESPACE}:{name}")
    prune_empty_overs(layer, path)
    return removed


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


# --- sites and curves ---------------------------------------------------------------


def write_site(
    layer: Sdf.Layer,
    path: Sdf.Path | str,
    values: Mapping[str, float],
    *,
    define: bool,
    translate: Sequence[float] | None = None,
    op_order: Sequence[str] | None = None,
) -> None:
    """Apply GripperSiteAPI on ``path`` in ``layer`` and author its attributes.

    Args:
        layer: the layer to edit.
        path: the site's spec path.
        values: ``max_opening``, ``max_payload``, ``max_grip_force`` (keys of
            :data:`SITE_ATTRIBUTES`) -> value.
        define: make the spec ``def Xform``.
        translate: author ``xformOp:translate``, with ``op_order`` as the new
            ``xformOpOrder`` (the caller composes it).
        op_order: see ``translate``.
    """
    spec = define_prim_spec(layer, path, "Xform") if define else get_prim_spec(layer, path)
    add_api_schemas(spec, [SITE_API])
    for key, value in values.items():
        set_attribute_default(spec, SITE_ATTRIBUTES[key], Sdf.ValueTypeNames.Float, float(value))
    if translate is not None:
        set_attribute_default(
            spec,
            "xformOp:translate",
            Sdf.ValueTypeNames.Double3,
            Gf.Vec3d(*map(float, translate)),
        )
        set_attribute_default(
            spec,
            "xformOpOrder",
            Sdf.ValueTypeNames.TokenArray,
            Vt.TokenArray(list(op_order or ["xformOp:translate"])),
            Sdf.VariabilityUniform,
        )


def _points_and_extent(points: Sequence[Sequence[float]], pad: float = 0.0):
    values = [Gf.Vec3f(*map(float, p)) for p in points]
    low = Gf.Vec3f(*(min(p[i] for p in values) - pad for i in range(3)))
    high = Gf.Vec3f(*(max(p[i] for p in values) + pad for i in range(3)))
    return Vt.Vec3fArray(values), Vt.Vec3fArray([low, high])


def write_guide_curve(
    layer: Sdf.Layer,
    path: Sdf.Path | str,
    points: Sequence[Sequence[float]],
    *,
    define: bool,
    width: float | None = None,
    color: Sequence[float] | None = None,
) -> None:
    """Author a linear, ``guide``-purpose BasisCurves of one curve through ``points``.

    Points, ``curveVertexCounts = [len(points)]``, ``type = "linear"``, ``purpose =
    "guide"`` and the extent; ``width`` (constant ``widths``, the extent padded by half
    of it) and ``color`` (``primvars:displayColor``, opacity 1) when given.
    ``define`` makes the spec ``def BasisCurves``.
    """
    spec = define_prim_spec(layer, path, "BasisCurves") if define else get_prim_spec(layer, path)
    values, extent = _points_and_extent(points, 0.5 * width if width else 0.0)
    names = Sdf.ValueTypeNames
    set_attribute_default(spec, "points", names.Point3fArray, values)
    set_attribute_default(spec, "curveVertexCounts", names.IntArray, Vt.IntArray([len(points)]))
    uniform = Sdf.VariabilityUniform
    set_attribute_default(spec, "type", names.Token, UsdGeom.Tokens.linear, uniform)
    set_attribute_default(spec, "purpose", names.Token, UsdGeom.Tokens.guide, uniform)
    set_attribute_default(spec, "extent", names.Float3Array, extent)
    if width is not None:
        widths = set_attribute_default(spec, "widths", names.FloatArray, Vt.FloatArray([width]))
        widths.SetInfo("interpolation", UsdGeom.Tokens.constant)
    if color is not None:
        set_attribute_default(
            spec, "primvars:displayColor", names.Color3fArray, Vt.Vec3fArray([Gf.Vec3f(*color)])
        )
        set_attribute_default(spec, "primvars:displayOpacity", names.FloatArray, Vt.FloatArray([1]))


def deactivate_prim_spec(layer: Sdf.Layer, path: Sdf.Path | str) -> None:
    """Author ``active = false`` on ``path`` (removes a prim a weaker layer defines)."""
    get_prim_spec(layer, path).active = False
