"""Seeded, grouped, vectorised sampling of grasp slots into end-effector targets (pure numpy).

A :class:`~usdgrip.site_records.GripperSlot` describes a region an end effector may
grasp (SPEC §3, seed 003). One *draw* for one slot is

* an offset ``s ∈ [-up_range/2, +up_range/2]`` metres along the slot's Up,
* a tilt ``θ ∈ [-a/2, +a/2]`` degrees about the span axis (``a = slot_input_angle``),
* a flip of the span axis (a 180° turn about forward).

Slots that share a non-empty ``group`` get the SAME ``(s, θ, flip)`` drawn from
the range common to all of them (the smallest ``up_range``, the smallest
angle), each mapped into its own slot frame; ungrouped slots are drawn
independently. :func:`sample_gripper_groups` returns ``count`` candidates,
each a tuple of targets (slot ``i`` → ``ee_ids[i]``) to solve jointly.

Target pose (GraspGenX convention, world, metres; ``(4, 4)`` acting on column
vectors, translation in ``[:3, 3]``). With the slot frame ``x, y, z`` (span,
Up, forward; :attr:`GripperSlot.frame`), ``σ = -1`` when flipped else ``+1``,
``c = cos θ`` and ``s_θ = sin θ``::

    X = σ x                      closing direction (possibly flipped span axis)
    Y = σ c y + s_θ z            = Z × X (right-handed)
    Z = -σ s_θ y + c z           approach, forward tilted by θ about X
    p = center + s · y           the grasp point (unflipped Up, flipped or not)

i.e. ``R = [x y z] · diag(σ, σ, 1) · Rx(θ)``: flip first (180° about forward),
then tilt about the (flipped) span axis.

Flip policy: for each sampling unit (a group, or one ungrouped slot) exactly
``⌊count/2⌋`` or ``⌈count/2⌉`` candidates are flipped (a coin decides which
for odd ``count``), at random positions; units flip independently of each
other. So both orientations appear whenever ``count ≥ 2``.

Random stream: one ``numpy.random.Generator`` (PCG64) per call; units are
visited in order of their first slot and each consumes, in order, ``count``
offsets, ``count`` tilts, one coin and one permutation of ``count``. The same
slots (same order), ``count`` and seed give bit-identical arrays.

Memory: the result keeps only arrays (``145 · count · n_ee`` bytes);
per-candidate Python objects are built lazily by :attr:`SlotSamples.candidates`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, overload

import numpy as np
from numpy.typing import NDArray

from usdgrip.frames import Mat4, compute_quaternion_wxyz
from usdgrip.site_records import GripperSlot
from usdgrip.slot_checks import (
    compute_axes_problems,
    get_center_problem,
    get_input_angle_problem,
    get_up_range_problem,
    get_world_axes_problem,
)

#: Forward and span axes count as perpendicular within this many degrees of 90°: the
#: default of the GS.001 rule (``slot_perpendicular_tolerance_deg``). Within it the
#: slot frame is orthonormalised (span recomputed as ``Up x forward``).
PERPENDICULAR_TOLERANCE_DEG = 1.0
#: Allowed ``slot_input_angle`` range, degrees (inclusive).
ANGLE_RANGE_DEG = (0.0, 360.0)
#: Most candidates one ``usdgrip sample`` run writes (JSON takes about 460 bytes per
#: target); for more, run again with other seeds. The Python API has no count limit.
MAX_COUNT = 100_000
#: Most targets (candidates x slots) one ``usdgrip sample`` run writes: 200,000 targets
#: peak near 750 MB as JSON; 1,000 candidates on 10,000 slots would need gigabytes.
MAX_TARGETS = 200_000
#: Most targets one :func:`sample_gripper_groups` call returns: the arrays take about
#: 145 bytes per target, so 10,000,000 targets are about 1.5 GB (batch IK of a million
#: two-handed candidates fits).
MAX_ARRAY_TARGETS = 10_000_000
#: Largest seed and end-effector id: both are stored as int64 (npz, downstream IK).
MAX_ID = 2**63 - 1

Poses = NDArray[np.float64]  # (count, n_ee, 4, 4)
Draws = NDArray[np.float64]  # (count, n_ee)
Flags = NDArray[np.bool_]  # (count, n_ee)


# --- checks (shared with the GS validation rules) ----------------------------


@dataclass(frozen=True)
class SlotProblem:
    """One reason a slot cannot be sampled (and a GS rule finding).

    ``field`` is the :class:`~usdgrip.site_records.GripperSlot` field at fault:
    ``center``, ``forward``, ``span_axis``, ``up_range``, ``slot_input_angle``
    or ``object_to_world``.
    """

    field: str
    message: str

    def __str__(self) -> str:
        return self.message


def check_slot(
    slot: GripperSlot, perpendicular_tolerance_deg: float = PERPENDICULAR_TOLERANCE_DEG
) -> list[SlotProblem]:
    """Check the authored values of one slot against the GripperSlot contract.

    :func:`sample_gripper_groups` refuses a slot with any problem. The axis,
    up-range, angle and world-transform checks are :mod:`usdgrip.slot_checks`,
    shared with the GS validation rules (GS.001–GS.003), so a slot that
    validates without failures samples.
    Checks (local, as authored): ``center`` finite; ``forward`` and
    ``span_axis`` finite and non-zero; forward ⟂ span_axis within
    ``perpendicular_tolerance_deg``; ``up_range`` finite and > 0 m;
    ``slot_input_angle`` finite within :data:`ANGLE_RANGE_DEG`. World: the
    object transform is finite and keeps both axes non-zero (a mirroring
    transform is fine: the slot is mirrored with the object).

    Args:
        slot: the slot to check.
        perpendicular_tolerance_deg: allowed deviation of forward vs span_axis from 90°.

    Returns:
        The problems found, each naming the field, the value found and the
        value expected; empty when the slot can be sampled.

    Raises:
        TypeError: ``slot`` is not a :class:`GripperSlot`.
    """
    if not isinstance(slot, GripperSlot):
        raise TypeError(
            f"slot is {type(slot).__name__}; expected a GripperSlot (usdgrip.read_gripper_slots)"
        )
    problems: list[SlotProblem] = []
    center = get_center_problem(slot.center_local)
    if center:
        problems.append(SlotProblem("center", center))
    axes = compute_axes_problems(
        slot.forward_local, slot.span_axis_local, perpendicular_tolerance_deg
    )
    problems.extend(SlotProblem(field, message) for field, message in axes)
    up_range = get_up_range_problem(slot.up_range_local)
    if up_range:
        problems.append(SlotProblem("up_range", up_range))
    angle = get_input_angle_problem(slot.slot_input_angle, *ANGLE_RANGE_DEG)
    if angle:
        problems.append(SlotProblem("slot_input_angle", angle))
    world = get_world_axes_problem(slot.object_to_world, slot.forward_local, slot.span_axis_local)
    if world:
        problems.append(SlotProblem("object_to_world", world))
    return problems


def _describe_slot(slot: GripperSlot, index: int) -> str:
    return f"slot {index} {slot.name!r} on <{slot.prim}>"


# --- results -----------------------------------------------------------------


class EndEffectorTarget(NamedTuple):
    """One end-effector target of a candidate: where ``ee_id`` should grasp ``slot``."""

    ee_id: int
    slot: str
    """Slot name."""
    pose: Mat4
    """(4, 4) world pose (read-only view), X closing, Z approach, translation in [:3, 3] (m)."""
    offset: float
    """Drawn offset along the slot's unflipped Up (m); the point is ``center + offset·Up``."""
    tilt_deg: float
    """Drawn tilt about the (flipped) span axis, degrees."""
    flipped: bool
    """True when the span axis is reversed (frame turned 180° about forward)."""

    @property
    def position(self) -> NDArray[np.float64]:
        """(3,) world grasp point (m)."""
        return self.pose[:3, 3]


class Candidates(Sequence[tuple[EndEffectorTarget, ...]]):
    """Lazy sequence view of :class:`SlotSamples`: item ``i`` is candidate ``i``'s targets."""

    def __init__(self, samples: SlotSamples) -> None:
        self._samples = samples

    def __len__(self) -> int:
        return self._samples.count

    @overload
    def __getitem__(self, index: int) -> tuple[EndEffectorTarget, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[EndEffectorTarget, ...]]: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        count = len(self)
        i = int(index)
        if not -count <= i < count:
            raise IndexError(f"candidate index {index} out of range for {count} candidates")
        s = self._samples
        i %= count
        return tuple(
            EndEffectorTarget(
                ee_id=s.ee_ids[j],
                slot=s.slot_names[j],
                pose=s.poses[i, j],
                offset=float(s.offsets[i, j]),
                tilt_deg=float(s.tilts_deg[i, j]),
                flipped=bool(s.flipped[i, j]),
            )
            for j in range(len(s.ee_ids))
        )

    def __iter__(self) -> Iterator[tuple[EndEffectorTarget, ...]]:
        for i in range(len(self)):
            yield self[i]


@dataclass(frozen=True, eq=False)
class SlotSamples:
    """All candidates of one :func:`sample_gripper_groups` call, stored as arrays.

    Arrays are read-only; axis 0 is the candidate, axis 1 the target (slot
    ``j`` → ``ee_ids[j]``).
    """

    slots: tuple[GripperSlot, ...]
    ee_ids: tuple[int, ...]
    seed: int | None
    poses: Poses
    """(count, n_ee, 4, 4) world poses, translation in [..., :3, 3] (m)."""
    offsets: Draws
    """(count, n_ee) offsets along unflipped Up (m)."""
    tilts_deg: Draws
    """(count, n_ee) tilts about the (flipped) span axis (degrees)."""
    flipped: Flags
    """(count, n_ee) span-axis flips."""

    @property
    def count(self) -> int:
        """Number of candidates."""
        return int(self.poses.shape[0])

    @property
    def slot_names(self) -> tuple[str, ...]:
        """Slot name per target."""
        return tuple(s.name for s in self.slots)

    @property
    def groups(self) -> tuple[str, ...]:
        """Group name per target (``""`` = sampled independently)."""
        return tuple(s.group for s in self.slots)

    @property
    def candidates(self) -> Candidates:
        """Lazy sequence of ``count`` tuples of :class:`EndEffectorTarget`."""
        return Candidates(self)

    @property
    def positions(self) -> NDArray[np.float64]:
        """(count, n_ee, 3) world grasp points (m), a view."""
        return self.poses[..., :3, 3]

    def compute_orientations_wxyz(self) -> NDArray[np.float64]:
        """(count, n_ee, 4) unit quaternions ``(w, x, y, z)``, ``w >= 0``."""
        return compute_quaternion_wxyz(self.poses)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dictionary (the ``usdgrip sample --format json`` layout).

        ``{"seed", "count", "ee_ids", "candidates": [{"targets": [{"ee_id", "slot",
        "position", "orientation_wxyz", "matrix", "offset", "tilt_deg", "flipped"}]}]}``;
        ``matrix`` is 4 rows, row-major, translation in the last column.
        """
        # "+ 0.0" turns -0.0 into 0.0 (same value, tidier JSON).
        positions = (self.positions + 0.0).tolist()
        quaternions = (self.compute_orientations_wxyz() + 0.0).tolist()
        matrices = (self.poses + 0.0).tolist()
        offsets, tilts = (self.offsets + 0.0).tolist(), (self.tilts_deg + 0.0).tolist()
        flips = self.flipped.tolist()
        names = self.slot_names
        candidates = [
            {
                "targets": [
                    {
                        "ee_id": ee_id,
                        "slot": names[j],
                        "position": positions[i][j],
                        "orientation_wxyz": quaternions[i][j],
                        "matrix": matrices[i][j],
                        "offset": offsets[i][j],
                        "tilt_deg": tilts[i][j],
                        "flipped": flips[i][j],
                    }
                    for j, ee_id in enumerate(self.ee_ids)
                ]
            }
            for i in range(self.count)
        ]
        return {
            "seed": self.seed,
            "count": self.count,
            "ee_ids": list(self.ee_ids),
            "candidates": candidates,
        }


# --- sampling ----------------------------------------------------------------


class UnitDraws(NamedTuple):
    """Draws for one sampling unit (a group or an ungrouped slot), each ``(count,)``."""

    offsets: NDArray[np.float64]
    tilts_deg: NDArray[np.float64]
    flipped: NDArray[np.bool_]


def sample_unit_draws(
    up_range: float, angle_deg: float, count: int, rng: np.random.Generator
) -> UnitDraws:
    """Draw ``count`` (offset, tilt, flip) triples for one sampling unit.

    Offsets are uniform in ``[-up_range/2, up_range/2]`` m, tilts uniform in
    ``[-angle_deg/2, angle_deg/2]`` degrees; exactly ``⌊count/2⌋`` or
    ``⌈count/2⌉`` flips at random positions (see the module's flip policy).

    Args:
        up_range: total offset range (m), finite > 0.
        angle_deg: total tilt range (degrees), finite >= 0.
        count: number of draws, >= 1.
        rng: the generator to draw from (consumed in the documented order).
    """
    half_up, half_angle = 0.5 * up_range, 0.5 * angle_deg
    offsets = rng.uniform(-half_up, half_up, count)
    tilts = rng.uniform(-half_angle, half_angle, count)
    # Parity of a random permutation (shifted by a coin) flips exactly half, in random places.
    coin = int(rng.integers(2))
    flipped = ((rng.permutation(count) + coin) & 1).astype(bool)
    return UnitDraws(offsets, tilts, flipped)


def compute_units(slots: Sequence[GripperSlot]) -> list[list[int]]:
    """Group slot indices into sampling units, in order of each unit's first slot.

    Slots sharing a non-empty ``group`` form one unit; every ungrouped slot is its own.
    """
    units: list[list[int]] = []
    by_group: dict[str, list[int]] = {}
    for index, slot in enumerate(slots):
        if slot.group:
            if slot.group not in by_group:
                by_group[slot.group] = []
                units.append(by_group[slot.group])
            by_group[slot.group].append(index)
        else:
            units.append([index])
    return units


#: Candidates composed per block: keeps temporaries in cache; the output is written once.
POSE_BLOCK = 8192


def compute_target_poses(
    frames: NDArray[np.float64], offsets: Draws, tilts_deg: Draws, flipped: Flags
) -> Poses:
    """Compose target poses from slot frames and draws (vectorised, see the module formula).

    ``R = F · diag(σ, σ, 1) · Rx(θ)`` as one batched matmul per block of
    :data:`POSE_BLOCK` candidates, so temporaries stay small and only the
    output grows with ``count``; ``p = center + offset · y``.

    Args:
        frames: (n_ee, 4, 4) orthonormal slot frames (X span, Y Up, Z forward, origin centre).
        offsets: (count, n_ee) metres along Y.
        tilts_deg: (count, n_ee) degrees about the (flipped) X.
        flipped: (count, n_ee) span-axis flips.

    Returns:
        (count, n_ee, 4, 4) float64 poses, C-contiguous.
    """
    count, n = offsets.shape
    rotations, up, center = frames[:, :3, :3], frames[:, :3, 1], frames[:, :3, 3]
    poses = np.empty((count, n, 4, 4))
    local = np.zeros((min(POSE_BLOCK, count), n, 3, 3))  # diag(σ, σ, 1) · Rx(θ), reused
    for start in range(0, count, POSE_BLOCK):
        block = slice(start, min(start + POSE_BLOCK, count))
        out = poses[block]
        m = out.shape[0]
        theta = np.deg2rad(tilts_deg[block])
        c, s = np.cos(theta), np.sin(theta)
        sigma = np.where(flipped[block], -1.0, 1.0)
        lb = local[:m]
        lb[..., 0, 0] = sigma
        lb[..., 1, 1] = sigma * c
        lb[..., 1, 2] = -sigma * s
        lb[..., 2, 1] = s
        lb[..., 2, 2] = c
        np.matmul(rotations, lb, out=out[..., :3, :3])
        out[..., :3, 3] = center + offsets[block][..., None] * up
        # Bottom row per block, while the block is in cache (one pass over the output).
        out[..., 3, :3] = 0.0
        out[..., 3, 3] = 1.0
    return poses


def sample_gripper_groups(
    slots: Sequence[GripperSlot],
    ee_ids: Sequence[int] = (0, 1),
    count: int = 50,
    seed: int | None = 7,
) -> SlotSamples:
    """Sample ``count`` joint end-effector targets from grasp slots (SPEC §3).

    Slot ``i`` is assigned to ``ee_ids[i]``. Slots sharing a non-empty group
    get identical (offset, tilt, flip) drawn from the group's common range
    (smallest ``up_range``, smallest ``slot_input_angle``); ungrouped slots are
    drawn independently. Poses are world snapshots of the slots as read (the
    object transform at read time); re-read and re-sample after moving it.

    Args:
        slots: slots as returned by :func:`usdgrip.read_gripper_slots` (any order;
            the order decides the ee assignment and the random stream).
        ee_ids: one distinct integer end-effector id per slot.
        count: number of candidates, >= 1.
        seed: seed of the private ``numpy.random.Generator``; ``None`` draws fresh
            OS entropy (not reproducible).

    Returns:
        The candidates as arrays (``.poses`` ``(count, n_ee, 4, 4)``) with lazy
        ``.candidates``.

    Raises:
        TypeError: ``slots`` is not a sequence of :class:`GripperSlot`.
        ValueError: no slots; ``len(slots) != len(ee_ids)``; duplicate, non-integer
            or out-of-range ee ids (0 to :data:`MAX_ID`); ``count`` not an integer >= 1,
            or ``count x len(slots)`` above :data:`MAX_ARRAY_TARGETS`;
            a seed outside 0 to :data:`MAX_ID`; or a slot failing :func:`check_slot`
            (the message names the slot and the problem).
    """
    if isinstance(slots, GripperSlot | str | bytes) or not isinstance(slots, Sequence | Iterator):
        raise TypeError(
            f"slots is {type(slots).__name__}; expected a sequence of GripperSlot "
            "(usdgrip.read_gripper_slots(prim))"
        )
    slots = tuple(slots)
    for index, slot in enumerate(slots):
        if not isinstance(slot, GripperSlot):
            raise TypeError(f"slots[{index}] is {type(slot).__name__}; expected a GripperSlot")
    if not slots:
        raise ValueError("no slots to sample; expected at least one GripperSlot")
    ee_list = list(ee_ids)
    if len(ee_list) != len(slots):
        names = ", ".join(repr(s.name) for s in slots)
        raise ValueError(
            f"{len(slots)} slots ({names}) but {len(ee_list)} ee_ids {ee_list}; expected one "
            "end-effector id per slot (slot i -> ee_ids[i])"
        )
    for ee in ee_list:
        if isinstance(ee, bool) or not isinstance(ee, int | np.integer):
            raise ValueError(f"ee_ids {ee_list}: {ee!r} is not an integer")
        if not 0 <= ee <= MAX_ID:
            raise ValueError(f"ee_ids {ee_list}: id {ee} is outside 0 to {MAX_ID}")
    if len(set(ee_list)) != len(ee_list):
        raise ValueError(f"ee_ids {ee_list} repeat an id; expected one distinct id per slot")
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 1:
        raise ValueError(f"count is {count!r}; expected an integer >= 1")
    if count * len(slots) > MAX_ARRAY_TARGETS:
        raise ValueError(
            f"count {count} x {len(slots)} slots is {count * len(slots):,} targets; expected at "
            f"most {MAX_ARRAY_TARGETS:,} per call (about 145 bytes each); lower count to "
            f"{max(1, MAX_ARRAY_TARGETS // len(slots)):,} or sample again with other seeds"
        )
    for index, slot in enumerate(slots):
        problems = check_slot(slot)
        if problems:
            raise ValueError(
                f"{_describe_slot(slot, index)} cannot be sampled: "
                + "; ".join(str(p) for p in problems)
            )
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed <= MAX_ID
    ):
        raise ValueError(f"seed is {seed!r}; expected an integer from 0 to {MAX_ID} (or None)")
    rng = np.random.default_rng(seed)
    count = int(count)
    n = len(slots)
    frames = np.stack([s.frame for s in slots])
    up_ranges = np.array([s.up_range for s in slots])
    for index, slot in enumerate(slots):
        if not (math.isfinite(up_ranges[index]) and up_ranges[index] > 0):
            raise ValueError(
                f"{_describe_slot(slot, index)}: world up_range is {up_ranges[index]!r} m; "
                "expected a finite value > 0 m (check the object's scale)"
            )
    offsets = np.empty((count, n))
    tilts = np.empty((count, n))
    flipped = np.empty((count, n), dtype=bool)
    for members in compute_units(slots):
        draws = sample_unit_draws(
            float(up_ranges[members].min()),
            min(float(slots[j].slot_input_angle) for j in members),
            count,
            rng,
        )
        offsets[:, members] = draws.offsets[:, None]
        tilts[:, members] = draws.tilts_deg[:, None]
        flipped[:, members] = draws.flipped[:, None]
    poses = compute_target_poses(frames, offsets, tilts, flipped)
    for array in (poses, offsets, tilts, flipped):
        array.setflags(write=False)
    return SlotSamples(
        slots=slots,
        ee_ids=tuple(int(e) for e in ee_list),
        seed=None if seed is None else int(seed),
        poses=poses,
        offsets=offsets,
        tilts_deg=tilts,
        flipped=flipped,
    )
