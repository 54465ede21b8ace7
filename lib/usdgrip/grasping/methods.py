"""Which planning backends apply to an object, and refusing asked-for ones that cannot run.

Asked-for methods that cannot be used are bad input (one :class:`GripperError`), as a
missing mesh is for ``antipodal``; with none asked, :func:`list_available_methods` picks.
"""

from __future__ import annotations

from usdgrip.errors import GripperError
from usdgrip.grasping.backends.slot_proposals import describe_grouped_slots, find_slot_groups
from usdgrip.grasping.proposals import ObjectData


def check_slots_usable(obj: ObjectData, asset_path: str) -> None:
    """Refuse method 'slots' asked for an object with no usable single-gripper slot.

    Raises:
        GripperError: no slots, only slots of two-handed groups, or none usable.
    """
    from usdgrip.sampling import check_slot

    where = f"{asset_path}: <{obj.prim_path}>"
    if not obj.slots:
        raise GripperError(
            f"{where} has no GripperSlots (GripperSlotAPI or customData "
            "lambdasim:gripper_slots), so method 'slots' has nothing to sample; "
            "`usdgrip info FILE` lists the prims that have some"
        )
    problems = {slot.name: check_slot(slot) for slot in obj.slots}
    usable = [slot for slot in obj.slots if not problems[slot.name]]
    groups = find_slot_groups(usable)
    if usable and len(usable) == sum(len(names) for names in groups.values()):
        notes = "; ".join(describe_grouped_slots(groups))
        raise GripperError(f"{where}: no single-gripper slot for method 'slots': {notes}")
    if all(problems.values()):
        details = "; ".join(
            f"{name!r}: {', '.join(str(p) for p in found)}" for name, found in problems.items()
        )
        raise GripperError(f"{where}: no GripperSlot is usable for method 'slots' ({details})")


def check_lines_usable(obj: ObjectData, asset_path: str) -> None:
    """Refuse method 'lines' asked for an object with no usable grasp vector line.

    Raises:
        GripperError: the object has no usable line (the skipped ones are named).
    """
    if not obj.grasp_lines:
        skipped = [note for note in obj.notes if note.startswith("grasp line")]
        found = f" ({'; '.join(skipped)})" if skipped else ""
        raise GripperError(
            f"{asset_path}: <{obj.prim_path}> has no usable grasp vector line (a BasisCurves "
            f"named grasp_identifier* on it or under it){found}, so method 'lines' has nothing "
            "to plan from; `usdgrip info FILE` lists the lines"
        )


def list_available_methods(obj: ObjectData) -> tuple[str, ...]:
    """The backends that apply to ``obj`` when none is asked for, in ``METHODS`` order."""
    methods = []
    if obj.vertices is not None:
        methods.append("antipodal")
    if obj.slots:
        methods.append("slots")
    if obj.grasp_lines and obj.vertices is not None:
        methods.append("lines")
    return tuple(methods)
