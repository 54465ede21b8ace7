"""The ``slots`` backend: grasps sampled on the object's GripperSlots, scored by slot use.

Each valid single-gripper slot is sampled on its own with
:func:`usdgrip.sampling.sample_gripper_groups`; the slot target frame already is a
GraspGenX grasp frame (X span = closing, Z forward = approach); width = the site's max
opening. Every proposal's provenance names its slot.
"""

from __future__ import annotations

import math

import numpy as np

from usdgrip.grasping.gripper_inputs import Gripper
from usdgrip.grasping.object_inputs import ObjectInputs
from usdgrip.grasping.proposals import Backend, ProposalBatch, ProposalSettings, compute_id_part
from usdgrip.grasping.provenance import Note


def compute_slot_scores(offsets, tilts_deg, up_range: float, angle_deg: float) -> np.ndarray:
    """Slot ranking score in [0, 1]: 1 at the slot centre untilted, minus the used fraction.

    ``1 - 0.5 |s| / (R/2) - 0.5 |θ| / (a/2)``; a zero angle range counts as untilted.
    """
    s = np.abs(np.asarray(offsets, dtype=np.float64)) / max(up_range / 2.0, 1e-300)
    t = np.abs(np.asarray(tilts_deg, dtype=np.float64))
    t = t / (angle_deg / 2.0) if angle_deg > 0 else np.zeros_like(t)
    return np.clip(1.0 - 0.5 * s - 0.5 * t, 0.0, 1.0)


def find_slot_groups(slots) -> dict[str, list[str]]:
    """Groups of two or more ``slots`` (non-empty ``group``): group name -> slot names.

    The slots of such a group are the hands of one multi-hand grasp (a two-handed
    carry): one gripper on one of them is not a grasp of the object, so the planner
    leaves them out of single-gripper planning (``usdgrip sample`` draws them
    together and ``usdgrip evaluate --targets`` checks that the hands hold).
    """
    members: dict[str, list[str]] = {}
    for slot in slots:
        if slot.group:
            members.setdefault(slot.group, []).append(slot.name)
    return {name: names for name, names in members.items() if len(names) >= 2}


def describe_grouped_slots(groups: dict[str, list[str]]) -> list[str]:
    """One note per group left out of single-gripper planning."""
    return [
        f"slots {', '.join(repr(n) for n in names)} left out: they are the {len(names)} hands "
        f"of group {group!r} (one gripper on one of them does not hold the object); sample "
        "them together with `usdgrip sample` and check them with `usdgrip evaluate --targets`"
        for group, names in groups.items()
    ]


def select_single_gripper_slots(slots) -> tuple[list, list[Note]]:
    """The valid slots that are not hands of a group, and a note per slot or group left out."""
    from usdgrip.sampling import check_slot

    usable, notes = [], []
    for slot in slots:
        problems = check_slot(slot)
        if problems:
            why = "; ".join(str(p) for p in problems)
            notes.append(Note("slot_unusable", slot.name, why, (f"slot {slot.name!r} skipped",)))
        else:
            usable.append(slot)
    groups = find_slot_groups(usable)
    notes.extend(
        Note("slot_grouped", group, text)
        for group, text in zip(groups, describe_grouped_slots(groups), strict=True)
    )
    grouped = {name for names in groups.values() for name in names}
    return [slot for slot in usable if slot.name not in grouped], notes


def propose_slots(
    obj: ObjectInputs,
    gripper: Gripper,
    *,
    count: int,
    rng: np.random.Generator,
    settings: ProposalSettings,
) -> ProposalBatch:
    """Slot proposals in M, ``ceil(count / slots)`` per usable slot, named ``<slot>_<i>``.

    Slots of a group of two or more (:func:`find_slot_groups`) are left out, with a note.
    Each slot is sampled with a seed spawned from ``rng``'s seed sequence (one child per
    usable slot, in slot order), so a slot's draws do not depend on the others' counts.
    """
    from usdgrip.sampling import sample_gripper_groups

    del settings  # the slots backend has no planning option
    usable, notes = select_single_gripper_slots(obj.slots)
    if not usable:
        return ProposalBatch.empty(notes)
    per_slot = max(1, math.ceil(count / len(usable)))
    used_names: set[str] = set()
    inverse = np.linalg.inv(obj.world_frame)
    names: list[str] = []
    sources: list[str] = []
    poses: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    for slot, child in zip(usable, rng.bit_generator.seed_seq.spawn(len(usable)), strict=True):
        slot_seed = int(child.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
        samples = sample_gripper_groups([slot], ee_ids=(0,), count=per_slot, seed=slot_seed)
        poses.append(inverse @ samples.poses[:, 0])
        scores.append(
            compute_slot_scores(
                samples.offsets[:, 0], samples.tilts_deg[:, 0], slot.up_range, slot.slot_input_angle
            )
        )
        part = compute_id_part(slot.name)
        if part in used_names:  # two slot names that differ only in unusable characters
            part = f"{part}_{len(used_names)}"
        used_names.add(part)
        names.extend(f"{part}_{i:04d}" for i in range(per_slot))
        sources.extend([slot.name] * per_slot)
    n = len(names)
    return ProposalBatch(
        names=tuple(names),
        poses=np.concatenate(poses),
        widths=np.full(n, float(gripper.max_opening)),
        scores=np.concatenate(scores),
        groups=np.full(n, -1, dtype=np.int64),
        sources=tuple(sources),
        notes=tuple(notes),
    )


def _slots_missing(obj: ObjectInputs) -> str | None:
    if obj.slots:
        return None
    return (
        f"<{obj.prim_path}> has no GripperSlots (GripperSlotAPI or customData "
        "lambdasim:gripper_slots), so method 'slots' has nothing to sample; "
        "`usdgrip info FILE` lists the prims that have some"
    )


def _refuse_unusable_slots(obj: ObjectInputs, asked: bool) -> str | None:
    """Asked for, the slots backend needs a valid single-gripper slot."""
    from usdgrip.sampling import check_slot

    if not asked or not obj.slots:
        return None
    where = f"<{obj.prim_path}>"
    problems = {slot.name: check_slot(slot) for slot in obj.slots}
    usable = [slot for slot in obj.slots if not problems[slot.name]]
    groups = find_slot_groups(usable)
    if usable and len(usable) == sum(len(names) for names in groups.values()):
        notes = "; ".join(describe_grouped_slots(groups))
        return f"{where}: no single-gripper slot for method 'slots': {notes}"
    if all(problems.values()):
        details = "; ".join(
            f"{name!r}: {', '.join(str(p) for p in found)}" for name, found in problems.items()
        )
        return f"{where}: no GripperSlot is usable for method 'slots' ({details})"
    return None


#: The ``slots`` backend: needs GripperSlots; asked for, a valid single-gripper one.
BACKEND = Backend(
    name="slots",
    seed_index=1,
    applies=_slots_missing,
    propose=propose_slots,
    refuse=_refuse_unusable_slots,
    source="slot",
)
