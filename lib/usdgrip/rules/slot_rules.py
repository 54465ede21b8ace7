"""GS rules: grasp slots (SPEC §3, seed 003).

Slots come from the schema (``GripperSlotAPI:<name>``, canonical) and from
LambdaSim records (``customData["lambdasim"]["gripper_slots"]``); a record
whose name a schema slot already uses is ignored, as the readers do. Values
are checked as authored; schema attributes that are not authored take the
schema's documented fallback.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator

from pxr import UsdGeom

from usdgrip.errors import GripperError
from usdgrip.rules.contexts import SlotContext, SlotEntry
from usdgrip.rules.records import Finding, rule
from usdgrip.site_records import LR_TOKENS
from usdgrip.slot_checks import (
    check_slots_meet_boxes,
    compute_axes_problems,
    compute_slot_surface_problems,
    get_center_problem,
    get_input_angle_problem,
    get_up_range_problem,
    get_world_axes_problem,
)
from usdgrip.usd.geometry import read_collision_shapes
from usdgrip.usd.grasp_lines import compute_object_surface
from usdgrip.usd.slots import get_instance_name_problem
from usdgrip.usd.stage import (
    TRAVERSAL,
    compute_world_transform,
    get_meters_per_unit,
    get_meters_per_unit_problem,
)


def _field(slot: SlotEntry, schema: str, record: str) -> str:
    return schema if slot.source == "schema" else record


@rule(
    "GS.001",
    "slot-axes",
    "failure",
    scope="slot",
    title="Slot axes",
    summary=(
        "A slot's forward and span_axis must be non-zero, finite and perpendicular "
        "(within the tolerance), in the object's frame and in the world."
    ),
    message="Object {prim}: a slot's forward/span_axis is degenerate or not perpendicular.",
    tags=("slots",),
)
def check_slot_axes(context: SlotContext) -> Iterator[Finding]:
    """GS.001: center finite; axes non-zero, finite, perpendicular, also in the world."""
    tolerance = context.params["slot_perpendicular_tolerance_deg"]
    mpu = context.meters_per_unit
    if mpu is None:
        mpu = get_meters_per_unit(context.prim.GetStage())
    problem = get_meters_per_unit_problem(mpu)
    if problem is not None:  # zero collapses every world axis, a negative value mirrors them
        yield Finding(f"{problem}; the slots' world frames are unusable")
    # The world frame is checked as the readers build it (sampling.check_slot, same code);
    # None: a regular transform, which degenerates no frame.
    world = context.compute_object_to_world(mpu) if not problem else None
    for slot in context.slots:
        unusable = [
            slot.problems[p] for p in ("center", "forward", "spanAxis") if p in slot.problems
        ]
        if unusable:
            yield from (Finding(f"{slot.label}: {problem}") for problem in unusable)
        if "center" not in slot.problems:
            problem = get_center_problem(slot.center)
            if problem:
                yield Finding(f"{slot.label}: {problem}")
        if "forward" in slot.problems or "spanAxis" in slot.problems:
            continue
        names = ("forward", _field(slot, "spanAxis", "span_axis"))
        axes = compute_axes_problems(slot.forward, slot.span_axis, tolerance, names)
        for _, axis_problem in axes:
            yield Finding(f"{slot.label}: {axis_problem}")
        if not axes and world is not None:
            world_problem = get_world_axes_problem(world, slot.forward, slot.span_axis, names)
            if world_problem:
                yield Finding(f"{slot.label}: {world_problem}")


@rule(
    "GS.002",
    "slot-up-range",
    "failure",
    scope="slot",
    title="Slot up range",
    summary="A slot's up_range (total length along Up) must be finite, > 0 m and at most 10 m.",
    message="Object {prim}: a slot's up_range is not a finite value > 0 m.",
    tags=("slots",),
)
def check_slot_up_range(context: SlotContext) -> Iterator[Finding]:
    """GS.002: ``up_range`` finite, > 0 and at most ``slot_up_range_max_m``."""
    maximum = context.params["slot_up_range_max_m"]
    for slot in context.slots:
        problem = slot.problems.get("upRange") or get_up_range_problem(
            slot.up_range, _field(slot, "upRange", "up_range"), maximum
        )
        if problem:
            yield Finding(f"{slot.label}: {problem}")


@rule(
    "GS.003",
    "slot-input-angle",
    "failure",
    scope="slot",
    title="Slot input angle",
    summary="A slot's slot_input_angle (total tilt range) must be finite and in [0, 360] degrees.",
    message="Object {prim}: a slot's slot_input_angle is not finite or outside [0, 360] degrees.",
    tags=("slots",),
)
def check_slot_input_angle(context: SlotContext) -> Iterator[Finding]:
    """GS.003: ``slot_input_angle`` finite within [min, max] degrees."""
    low = context.params["slot_input_angle_min_deg"]
    high = context.params["slot_input_angle_max_deg"]
    for slot in context.slots:
        name = _field(slot, "slotInputAngle", "slot_input_angle")
        problem = slot.problems.get("slotInputAngle") or get_input_angle_problem(
            slot.slot_input_angle, low, high, name
        )
        if problem:
            yield Finding(f"{slot.label}: {problem}")


@rule(
    "GS.004",
    "slot-lr",
    "failure",
    scope="slot",
    title="Slot LR",
    summary='A slot\'s LR must be 0/1 (LambdaSim records) or "left"/"right" (schema).',
    message="Object {prim}: a slot's LR is not 0/1 or left/right.",
    tags=("slots",),
)
def check_slot_lr(context: SlotContext) -> Iterator[Finding]:
    """GS.004: LR 0/1 in records, ``left``/``right`` token in the schema."""
    for slot in context.slots:
        if "lr" in slot.problems:
            yield Finding(f"{slot.label}: {slot.problems['lr']}")
        elif slot.source == "schema":
            if slot.lr not in LR_TOKENS:
                yield Finding(f'{slot.label}: lr is {slot.lr!r}; expected "left" or "right"')
        elif slot.lr not in (0, 1):
            yield Finding(f"{slot.label}: LR is {slot.lr!r}; expected 0 (left) or 1 (right)")


@rule(
    "GS.005",
    "slot-instance-name",
    "failure",
    scope="slot",
    title="Slot instance name",
    summary=(
        "A GripperSlotAPI instance name must be usable as a property namespace "
        "(a USD identifier that is not a slot property name)."
    ),
    message="Object {prim}: a GripperSlotAPI instance name cannot be used as a namespace.",
    tags=("slots",),
)
def check_slot_instance_name(context: SlotContext) -> Iterator[Finding]:
    """GS.005: each instance name passes :func:`usdgrip.usd.slots.check_slot_instance_name`."""
    for name in context.instance_names:
        problem = get_instance_name_problem(name)
        if problem is not None:
            yield Finding(
                f"GripperSlotAPI:{name}: {problem}; the other rules skip this slot and the "
                "readers (info, sample, plan, render) refuse the prim"
            )


@rule(
    "GS.006",
    "slot-record-malformed",
    "failure",
    scope="slot",
    title="LambdaSim slot records parse",
    summary=(
        "LambdaSim gripper_slots records must parse (valid JSON, every key present "
        "with the right type)."
    ),
    message="Object {prim}: LambdaSim gripper_slots records do not parse.",
    tags=("slots", "lambdasim"),
)
def check_slot_records(context: SlotContext) -> Iterator[Finding]:
    """GS.006: each record (or value) that does not parse, naming index and key; duplicate names."""
    for problem in context.record_problems:
        yield Finding(f"{problem.describe()}; this record is not read")
    first: dict[str, int] = {}
    for record in context.records:
        if record.name not in first:
            first[record.name] = record.index
            continue
        yield Finding(
            f"lambdasim gripper_slots[{record.index}] has the name {record.name!r} of "
            f"gripper_slots[{first[record.name]}]; expected one record per slot name (rename one "
            "with a `name` key, or remove the duplicate)"
        )


@rule(
    "GS.007",
    "slot-record-legacy",
    "info",
    scope="slot",
    title="Version-1 LambdaSim records",
    summary="Version-1 records carry an `up` vector instead of up_range; run `usdgrip migrate`.",
    message="Object {prim}: version-1 LambdaSim records; run `usdgrip migrate`.",
    tags=("slots", "lambdasim", "migration"),
)
def check_slot_record_version(context: SlotContext) -> Iterator[Finding]:
    """GS.007: records with ``version`` 1 (``up`` vector), records shadowed by a schema slot."""
    schema_names = set(context.valid_instance_names)
    for record in context.records:
        if record.name in schema_names:
            yield Finding(
                f"lambdasim gripper_slots[{record.index}] ({record.name!r}) is ignored: "
                f"GripperSlotAPI:{record.name} on this prim has its name and the schema is "
                "canonical; expected one of them (run `usdgrip migrate`: it merges the record "
                "into the slot, or lists the values that differ)"
            )
        if record.version == 1:
            yield Finding(
                f"lambdasim gripper_slots[{record.index}] ({record.name!r}) is version 1 "
                f"(`up` vector, read as up_range = 2|up| = {record.up_range:.4g} m); expected "
                "version 2 with up_range (run `usdgrip migrate`)"
            )


@rule(
    "GS.008",
    "slot-group",
    "warning",
    scope="slot",
    title="Slot groups",
    summary=("A slot group should have at least two members, and its members should differ in LR."),
    message="Object {prim}: a slot group has one member or members with the same LR.",
    tags=("slots",),
)
def check_slot_group(context: SlotContext) -> Iterator[Finding]:
    """GS.008: groups of one, and groups whose members share an LR."""
    groups: dict[str, list[SlotEntry]] = defaultdict(list)
    for slot in context.slots:
        if "groupName" in slot.problems:
            yield Finding(f"{slot.label}: {slot.problems['groupName']}")
        if slot.group:
            groups[slot.group].append(slot)
    for group, members in groups.items():
        names = ", ".join(repr(m.name) for m in members)
        if len(members) == 1:
            yield Finding(
                f"group {group!r} has one member ({names}); a group is sampled jointly with "
                'other slots: add its partner slot or set its group name to "" (independent)'
            )
            continue
        by_lr: dict[str, list[str]] = defaultdict(list)
        for m in members:
            token = m.lr if isinstance(m.lr, str) else (LR_TOKENS[m.lr] if m.lr in (0, 1) else m.lr)
            by_lr[str(token)].append(m.name)
        for lr, same in by_lr.items():
            if len(same) > 1:
                yield Finding(
                    f"group {group!r}: slots {', '.join(map(repr, same))} all have LR {lr}; "
                    "expected members of one group to differ (one left, one right)"
                )


@rule(
    "GS.009",
    "slot-misses-object",
    "failure",
    scope="slot",
    title="A slot lies on its object",
    summary=(
        "On an object with geometry, a slot's closing line (through its centre along "
        "span_axis) must meet the object's surface, and its centre must lie within the "
        "object's bounds grown by the slot's up range."
    ),
    message="Object {prim}: a slot's closing line misses the object, or its centre is far off it.",
    tags=("slots",),
)
def check_slot_misses_object(context: SlotContext) -> Iterator[Finding]:
    """GS.009: GP.001's surface and segment cast, applied to each slot's closing line.

    An object of Cubes is first checked without its triangles
    (:func:`~usdgrip.slot_checks.check_slots_meet_boxes`): when every slot surely passes,
    nothing is cast; otherwise the cast decides, so the findings are the cast's.
    """
    prim = context.prim
    if (
        not prim.IsA(UsdGeom.Gprim)
        and next(iter(prim.GetFilteredChildren(TRAVERSAL)), None) is None
    ):
        return  # no geometry at or under the prim: nothing to meet
    try:
        shapes = read_collision_shapes(
            prim, prefer_collision=False, xform_cache=context.xform_cache
        )  # axis-aligned Cubes without numpy (read_axis_aligned_box)
        boxes = [(s.params["size"], s.pose) for s in shapes if s.kind == "box"]
        # The triangles at once unless every shape is a box (no box's tessellation can fail).
        surface = None if len(boxes) == len(shapes) else compute_object_surface(prim, shapes)
    except GripperError as error:  # geometry that cannot be read or placed
        yield Finding(f"the slots cannot be checked against the object's surface: {error}")
        return
    if not shapes:
        return  # no Mesh, Cube, Sphere, Cylinder or Capsule: nothing to meet
    mpu = context.meters_per_unit or get_meters_per_unit(prim.GetStage())
    if get_meters_per_unit_problem(mpu) is not None:
        return  # GS.001 reports it
    slots = [
        slot
        for slot in context.slots
        if not any(p in slot.problems for p in ("center", "spanAxis"))
        and not get_center_problem(slot.center)
        and not get_center_problem(slot.span_axis)
        and any(slot.span_axis)
    ]  # GS.001 reports an unusable centre or axis
    if not slots:
        return
    world = compute_world_transform(prim, xform_cache=context.xform_cache, meters_per_unit=mpu)
    up_ranges = [s.up_range if isinstance(s.up_range, int | float) else math.nan for s in slots]
    centers = [s.center for s in slots]
    span_axes = [s.span_axis for s in slots]
    if surface is None:
        if check_slots_meet_boxes(centers, span_axes, up_ranges, world, mpu, boxes):
            return
        surface = compute_object_surface(prim, shapes)
    misses, outside = compute_slot_surface_problems(
        centers, span_axes, up_ranges, world, mpu, surface.vertices, surface.faces
    )
    shown = (
        f"<{context.path}> ({len(surface.faces)} triangles of {len(surface.source_paths)} prim(s))"
    )
    for slot, up_range, missing, off in zip(slots, up_ranges, misses, outside, strict=True):
        if not (missing or off):
            continue
        center = ", ".join(f"{float(c):.4g}" for c in slot.center)
        span = ", ".join(f"{float(c):.4g}" for c in slot.span_axis)
        if missing:
            yield Finding(
                f"{slot.label}: its closing line, through center ({center}) along "
                f"{_field(slot, 'spanAxis', 'span_axis')} ({span}) (object frame), does not "
                f"meet the surface of {shown}; expected the centre on the part to grasp, with "
                "the span axis across it (the jaws close along it)"
            )
        if off:
            yield Finding(
                f"{slot.label}: center ({center}) (object frame, stage units) lies outside "
                f"the bounds of {shown} grown by its up range ({up_range:.4g} m); expected "
                "the centre on the object (a unit or frame mistake?)"
            )
