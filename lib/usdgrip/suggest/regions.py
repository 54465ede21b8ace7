"""Slot regions from the grasps that held: pure numpy over ``T_M_G`` poses (metres, frame M).

A region gathers held grasps whose centres lie within :data:`REGION_RADIUS_FRACTION` of
the gripper's max opening of the region's seed and whose approach is within
:data:`REGION_APPROACH_DEG` of it (seeds taken best first: success, then confidence). Its
slot: the centre is the members' mean, ``forward`` their mean approach (G's +Z), the span
axis their mean closing direction (G's ±X, signs aligned, made perpendicular to forward),
the up range the spread of the centres along ``forward × span`` (at least
:data:`MIN_UP_RANGE_M`), the input angle the largest tilt of a member's approach from
``forward`` (at least :data:`MIN_INPUT_ANGLE_DEG`). ``docs/authoring.md`` explains.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from usdgrip.frames import Poses

#: Members lie within this fraction of the max opening of the region's seed.
REGION_RADIUS_FRACTION = 0.5
#: ... and approach within this angle of the seed's approach (degrees).
REGION_APPROACH_DEG = 35.0
#: Fewest held grasps a region needs.
MIN_REGION_GRASPS = 2
#: Smallest up range authored (metres): the slot stays a band, not a point.
MIN_UP_RANGE_M = 0.01
#: Smallest input angle authored (degrees).
MIN_INPUT_ANGLE_DEG = 5.0


@dataclass(frozen=True)
class SlotRegion:
    """One region of held grasps and the slot it becomes (frame M, metres)."""

    members: tuple[int, ...]
    """Indices of the held grasps in it (into the poses given), best first."""
    center: NDArray[np.float64]
    forward: NDArray[np.float64]
    span_axis: NDArray[np.float64]
    up_range: float
    input_angle_deg: float
    success: float
    """Mean measured success rate of its members."""


def _unit(vector: NDArray[np.float64]) -> NDArray[np.float64] | None:
    norm = float(np.linalg.norm(vector))
    return None if not np.isfinite(norm) or norm < 1e-9 else vector / norm


def compute_slot_regions(
    poses: Poses,
    success: NDArray[np.float64],
    confidence: NDArray[np.float64],
    max_opening: float,
    *,
    min_grasps: int = MIN_REGION_GRASPS,
) -> list[SlotRegion]:
    """The regions of the held grasps ``poses`` ((N, 4, 4) ``T_M_G``), best first.

    ``success`` and ``confidence`` are (N,) per grasp; the best region has the highest
    mean success, then the most members.
    """
    poses = np.asarray(poses, dtype=np.float64).reshape(-1, 4, 4)
    count = len(poses)
    if count == 0:
        return []
    centres = poses[:, :3, 3]
    approach = poses[:, :3, 2]
    closing = poses[:, :3, 0]
    order = sorted(range(count), key=lambda i: (-float(success[i]), -float(confidence[i]), i))
    radius = REGION_RADIUS_FRACTION * max_opening
    cos_limit = np.cos(np.radians(REGION_APPROACH_DEG))
    free = np.ones(count, dtype=bool)
    regions = []
    for seed in order:
        if not free[seed]:
            continue
        near = (
            free
            & (np.linalg.norm(centres - centres[seed], axis=1) <= radius)
            & (approach @ approach[seed] >= cos_limit)
        )
        members = [i for i in order if near[i]]
        if len(members) < min_grasps:
            continue
        free[members] = False
        region = _region(members, centres, approach, closing, success)
        if region is not None:
            regions.append(region)
    regions.sort(key=lambda r: (-r.success, -len(r.members)))
    return regions


def _region(
    members: list[int],
    centres: NDArray[np.float64],
    approach: NDArray[np.float64],
    closing: NDArray[np.float64],
    success: NDArray[np.float64],
) -> SlotRegion | None:
    index = np.asarray(members)
    forward = _unit(approach[index].mean(axis=0))
    if forward is None:
        return None
    spans = closing[index]
    spans = spans * np.where(spans @ spans[0] < 0, -1.0, 1.0)[:, None]  # ±X close alike
    span = spans.mean(axis=0)
    span = _unit(span - (span @ forward) * forward)
    if span is None:
        return None
    centre = centres[index].mean(axis=0)
    up = np.cross(forward, span)
    along = (centres[index] - centre) @ up
    up_range = max(MIN_UP_RANGE_M, float(along.max() - along.min()))
    tilt = np.degrees(np.arccos(np.clip(approach[index] @ forward, -1.0, 1.0)))
    angle = max(MIN_INPUT_ANGLE_DEG, float(tilt.max()))
    return SlotRegion(
        tuple(members), centre, forward, span, up_range, angle, float(success[index].mean())
    )


#: Location words: the object's side a region's centre lies on (``docs/authoring.md``).
SIDE_NAMES = {(0, 1): "px", (0, -1): "nx", (1, 1): "py", (1, -1): "ny", (2, 1): "pz", (2, -1): "nz"}


def name_region(
    center: NDArray[np.float64],
    bounds: tuple[NDArray[np.float64], NDArray[np.float64]],
    up: NDArray[np.float64],
    taken: set[str],
) -> str:
    """A slot name from where ``center`` lies on the object (M).

    ``top`` or ``bottom`` along ``up``, else ``side_px`` ... ``side_nz`` (the axis of M it
    lies farthest along, by the bounds' half extent); ``_2``, ``_3`` ... when taken.
    """
    low, high = bounds
    middle = (low + high) / 2
    half = np.maximum((high - low) / 2, 1e-9)
    offset = (center - middle) / half
    up_axis = int(np.argmax(np.abs(up)))
    axis = int(np.argmax(np.abs(offset)))
    sign = 1 if offset[axis] >= 0 else -1
    if axis == up_axis:
        base = "top" if sign * np.sign(up[up_axis]) > 0 else "bottom"
    else:
        base = f"side_{SIDE_NAMES[(axis, sign)]}"
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


__all__ = [
    "MIN_INPUT_ANGLE_DEG",
    "MIN_REGION_GRASPS",
    "MIN_UP_RANGE_M",
    "REGION_APPROACH_DEG",
    "REGION_RADIUS_FRACTION",
    "SlotRegion",
    "compute_slot_regions",
    "name_region",
]
