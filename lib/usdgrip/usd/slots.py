"""Reading grasp slots: instance names, slot records and :func:`read_gripper_slots`."""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from pxr import Gf, Tf, Usd

from usdgrip.errors import GripperError
from usdgrip.frames import Mat4
from usdgrip.lambdasim import (
    CUSTOM_DATA_PATH,
    SlotRecord,
    parse_lambdasim_records,
)
from usdgrip.site_records import LR_TOKENS, GripperSlot
from usdgrip.usd.discovery import compute_marker_hints, scan_marked_prims
from usdgrip.usd.names import SLOT_API, SLOT_NAMESPACE, SLOT_PROPERTIES
from usdgrip.usd.stage import (
    VALUE_KINDS,
    attribute_get,
    compute_world_transform,
    get_meters_per_unit,
    get_meters_per_unit_problem,
    get_stage_name,
    prim_get_attribute,
    read_attribute_value,
    require_prim,
)

# --- grasp slots ------------------------------------------------------------


def check_slot_instance_name(name: str) -> None:
    """Raise ``ValueError`` when ``name`` cannot be a GripperSlotAPI instance name.

    USD's ``ApplyAPI`` accepts such names, but attribute creation then fails.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"slot name {name!r} is empty; expected a USD identifier such as 'left_edge'"
        )
    if not Tf.IsValidIdentifier(name):
        raise ValueError(
            f"slot name {name!r} is not a valid USD identifier (rule: ASCII letters, digits and "
            "'_', not starting with a digit); e.g. 'left_edge'"
        )
    if not Usd.SchemaRegistry.IsAllowedAPISchemaInstanceName(SLOT_API, name):
        raise ValueError(
            f"slot name {name!r} is reserved (rule: an instance name may not equal a "
            f"GripperSlotAPI property name: {', '.join(SLOT_PROPERTIES)})"
        )


@functools.cache
def get_instance_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a GripperSlotAPI instance name (``None`` when it can).

    :func:`check_slot_instance_name`'s message, remembered per name: the one
    predicate of the readers (:func:`read_gripper_slots`) and of rule GS.005.
    """
    try:
        check_slot_instance_name(name)
    except ValueError as exc:
        return str(exc)
    return None


def get_slot_attribute_name(name: str, prop: str) -> str:
    """``gripperSlot:<name>:<prop>``."""
    return f"{SLOT_NAMESPACE}:{name}:{prop}"


def list_slot_instances(prim: Usd.Prim) -> list[str]:
    """GripperSlotAPI instance names applied to ``prim``, in authoring order."""
    prefix = f"{SLOT_API}:"
    return [s[len(prefix) :] for s in prim.GetAppliedSchemas() if s.startswith(prefix)]


def list_slot_names(prim: Usd.Prim) -> list[str]:
    """Names of the prim's slots, in the order :func:`read_gripper_slots` reads them.

    GripperSlotAPI instances, then the LambdaSim records that parse under a name
    no instance uses.
    """
    names = list_slot_instances(prim)
    names += [r.name for r in read_slot_records(prim)[0] if r.name not in names]
    return names


def read_slot_records(prim: Usd.Prim) -> tuple[list[SlotRecord], list]:
    """Parse the LambdaSim ``customData`` records of ``prim``: ``(records, problems)``."""
    raw = prim.GetCustomDataByKey(CUSTOM_DATA_PATH)
    if raw is None:
        return [], []
    return parse_lambdasim_records(_to_python(raw))


def _to_python(value):
    if isinstance(value, dict):
        return {str(k): _to_python(v) for k, v in value.items()}
    if isinstance(value, (Gf.Vec3d, Gf.Vec3f, Gf.Vec3h)):
        return [float(c) for c in value]
    if isinstance(value, str) or not hasattr(value, "__len__"):
        return value
    return [_to_python(v) for v in value]


#: What each GripperSlotAPI property must hold (keys of :data:`VALUE_KINDS`).
SLOT_VALUE_KINDS = {
    "center": "vec3",
    "forward": "vec3",
    "spanAxis": "vec3",
    "upRange": "number",
    "slotInputAngle": "number",
    "lr": "text",
    "groupName": "text",
}
#: The exact Python types each :data:`SLOT_PROPERTIES` value may have (``bool`` is no number).
_SLOT_VALUE_TYPES = tuple(
    frozenset(VALUE_KINDS[SLOT_VALUE_KINDS[prop]][0]) for prop in SLOT_PROPERTIES
)


def read_slot_values(
    prim: Usd.Prim,
    name: str,
    attributes: Sequence[Usd.Attribute | None] | None = None,
    values: Sequence[object] | None = None,
) -> tuple[list, dict[str, str]]:
    """The values of slot ``name`` (GripperSlotAPI) at the default time code, and their problems.

    Unauthored properties read the schema's fallbacks; every other value goes
    through :func:`read_attribute_value` (the readers and the GS rules both call
    this), except one of the right type that differs from the fallback: only an
    authored default value reads so, and it needs no further USD call.

    Args:
        prim: the object prim.
        name: the instance name.
        attributes: the slot's attributes in :data:`SLOT_PROPERTIES` order, when the caller
            has them (else looked up).
        values: their ``Get()`` values, when the caller has them (else read).

    Returns:
        ``(values, problems)``: values in :data:`SLOT_PROPERTIES` order (``None`` for an
        unusable one) and, by property name, why a value is unusable.
    """
    out: list = []
    problems: dict[str, str] = {}
    fallbacks = get_slot_layout()[0]
    for index, prop in enumerate(SLOT_PROPERTIES):
        if attributes is not None:
            attr = attributes[index]
        else:
            attr = prim_get_attribute(prim, get_slot_attribute_name(name, prop))
        value = values[index] if values is not None else (attribute_get(attr) if attr else None)
        fallback = fallbacks[index]
        if attr and not (type(value) in _SLOT_VALUE_TYPES[index] and value != fallback):
            value, problem = read_attribute_value(attr, SLOT_VALUE_KINDS[prop], value, fallback)
            if problem is not None:
                problems[prop] = problem
        out.append(value)
    return out, problems


@functools.cache
def get_slot_layout() -> tuple[tuple[Any, ...], tuple[int, ...], tuple[int, ...]]:
    """GripperSlotAPI as USD applies it, asked once of a probe prim.

    Returns:
        What ``Get()`` returns for each unauthored property (the schema's fallbacks),
        in the order of :data:`SLOT_PROPERTIES`; and, for the
        properties ``GetPropertiesInNamespace`` lists (sorted by name), their index in
        :data:`SLOT_PROPERTIES`; and its inverse (for each property of
        :data:`SLOT_PROPERTIES`, its index in that listing).
    """
    stage = Usd.Stage.CreateInMemory()
    prim = stage.DefinePrim("/Object", "Xform")
    prim.ApplyAPI(SLOT_API, "probe")
    fallbacks = tuple(
        prim.GetAttribute(get_slot_attribute_name("probe", prop)).Get() for prop in SLOT_PROPERTIES
    )
    listed = prim.GetPropertiesInNamespace(f"{SLOT_NAMESPACE}:probe")
    order = tuple(SLOT_PROPERTIES.index(p.GetBaseName()) for p in listed)
    return fallbacks, order, tuple(order.index(i) for i in range(len(order)))


def _schema_slot(prim: Usd.Prim, name: str, world: Mat4, mpu: float) -> GripperSlot:
    values, problems = read_slot_values(prim, name)
    if problems:
        raise GripperError(
            f"{get_stage_name(prim.GetStage())}: <{prim.GetPath()}> slot {name!r} "
            "(GripperSlotAPI): " + "; ".join(problems.values())
        )
    center, forward, span_axis, up_range, angle, lr, group = values
    return GripperSlot(
        prim=str(prim.GetPath()),
        name=name,
        source="schema",
        center_local=np.array(center or (0, 0, 0), dtype=np.float64),
        forward_local=np.array(forward or (0, 0, 1), dtype=np.float64),
        span_axis_local=np.array(span_axis or (1, 0, 0), dtype=np.float64),
        up_range_local=float(up_range if up_range is not None else 2.0),
        slot_input_angle=float(angle or 0.0),
        lr=LR_TOKENS.index(lr) if lr in LR_TOKENS else -1,
        group=str(group or ""),
        object_to_world=world,
        meters_per_unit=mpu,
    )


def read_gripper_slots(prim: Usd.Prim, names: Collection[str] | None = None) -> list[GripperSlot]:
    """Read the grasp slots of an object prim, bound to it and snapshotted in world space.

    GripperSlotAPI instances come first (authoring order), then LambdaSim
    records; a record whose name a schema slot already uses is ignored (the
    schema is canonical). ``names`` reads (and checks) only the slots of those
    names, so a bad slot that is not asked for does not refuse the others.

    Raises:
        TypeError: ``prim`` is not a ``Usd.Prim``, or ``names`` is a string (not a
            collection of names).
        ValueError: ``prim`` is not valid.
        GripperError: a LambdaSim record is malformed (names file, prim, record and key),
            a GripperSlotAPI instance name is not usable (GS.005), or a slot value has
            the wrong type or only time samples (names file, prim, slot and attribute).
    """
    require_prim(prim)
    if isinstance(names, str | bytes) or not (names is None or isinstance(names, Iterable)):
        raise TypeError(
            f"names is {names!r}; expected a collection of slot names, e.g. [{names!r}]"
        )
    wanted = (lambda name: True) if names is None else set(names).__contains__
    instances = [name for name in list_slot_instances(prim) if wanted(name)]
    for name in instances:
        problem = get_instance_name_problem(name)
        if problem is not None:
            raise GripperError(
                f"{get_stage_name(prim.GetStage())}: <{prim.GetPath()}>: GripperSlotAPI:{name}: "
                f"{problem}; its properties cannot be authored, so the slot cannot be read "
                "(remove this instance, or rename it with a valid identifier)"
            )
    mpu = get_meters_per_unit(prim.GetStage())
    problem = get_meters_per_unit_problem(mpu)
    if problem is not None:
        raise GripperError(f"{get_stage_name(prim.GetStage())}: <{prim.GetPath()}>: {problem}")
    world = compute_world_transform(prim, meters_per_unit=mpu)
    slots = [_schema_slot(prim, name, world, mpu) for name in instances]
    records, problems = read_slot_records(prim)
    problems = [p for p in problems if p.name is None or wanted(p.name)]
    records = [r for r in records if wanted(r.name)]
    if problems:
        raise GripperError(
            f"{get_stage_name(prim.GetStage())}: <{prim.GetPath()}>: {problems[0].describe()}"
        )
    taken = {s.name for s in slots}
    for r in records:
        if r.name in taken:
            continue
        slots.append(
            GripperSlot(
                prim=str(prim.GetPath()),
                name=r.name,
                source="lambdasim",
                center_local=np.array(r.center),
                forward_local=np.array(r.forward),
                span_axis_local=np.array(r.span_axis),
                up_range_local=r.up_range,
                slot_input_angle=r.slot_input_angle,
                lr=r.lr,
                group=r.group,
                object_to_world=world,
                meters_per_unit=mpu,
                version=r.version,
                record_index=r.index,
                extra=dict(r.extra),
            )
        )
    return slots


def iter_slot_prims(stage: Usd.Stage) -> Iterator[Usd.Prim]:
    """Yield every prim carrying GripperSlotAPI instances or LambdaSim slot records."""
    kinds = compute_marker_hints(stage) & {"api", "custom"}
    for prim, _, maybe_slot in scan_marked_prims(stage, kinds):
        if maybe_slot:
            yield prim
