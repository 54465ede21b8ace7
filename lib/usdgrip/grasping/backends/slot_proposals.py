"""The slots backend: grasps sampled on the object's GripperSlots, scored by slot use."""

from __future__ import annotations

import math

import numpy as np

from usdgrip.frames import Poses
from usdgrip.grasping.proposals import METHODS, ObjectData, _id_part


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


def propose_slots(
    obj: ObjectData, max_opening: float, *, count: int, seed: int, key: str, stream: str
) -> tuple[list[str], Poses, np.ndarray, np.ndarray, list[str]]:
    """Slot proposals in M: (ids, poses, widths, scores, notes about skipped slots).

    Slots of a group of two or more (:func:`find_slot_groups`) are left out, with a note.
    ``key`` names the gripper in the ids; ``stream`` (:func:`compute_stream_key`) seeds.
    """
    from usdgrip.sampling import check_slot, sample_gripper_groups

    usable = []
    notes = []
    for slot in obj.slots:
        problems = check_slot(slot)
        if problems:
            notes.append(f"slot {slot.name!r} skipped: {'; '.join(str(p) for p in problems)}")
        else:
            usable.append(slot)
    groups = find_slot_groups(usable)
    notes.extend(describe_grouped_slots(groups))
    grouped = {name for names in groups.values() for name in names}
    usable = [slot for slot in usable if slot.name not in grouped]
    ids: list[str] = []
    poses: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    if not usable:
        return ids, np.zeros((0, 4, 4)), np.zeros(0), np.zeros(0), notes
    per_slot = max(1, math.ceil(count / len(usable)))
    used_names: set[str] = set()
    inverse = np.linalg.inv(obj.world_frame)
    seeds = np.random.SeedSequence([int(seed), int(stream, 16), METHODS.index("slots")]).spawn(
        len(usable)
    )
    for slot, child in zip(usable, seeds, strict=True):
        slot_seed = int(child.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
        samples = sample_gripper_groups([slot], ee_ids=(0,), count=per_slot, seed=slot_seed)
        world = samples.poses[:, 0]
        poses.append(inverse @ world)
        scores.append(
            compute_slot_scores(
                samples.offsets[:, 0], samples.tilts_deg[:, 0], slot.up_range, slot.slot_input_angle
            )
        )
        name = _id_part(slot.name)
        if name in used_names:  # two slot names that differ only in unusable characters
            name = f"{name}_{len(used_names)}"
        used_names.add(name)
        ids.extend(f"g_{key}_slots_{name}_{i:04d}" for i in range(per_slot))
    pose_array = np.concatenate(poses)
    return ids, pose_array, np.full(len(ids), float(max_opening)), np.concatenate(scores), notes
