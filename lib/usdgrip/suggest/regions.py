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
#: A region is on a ``handle`` when the object's cross-section through its centre (the
#: plane across the direction from the object's centroid to the centre) covers at most
#: this share of the area of the cross-section through the centroid ...
HANDLE_SECTION_FRACTION = 0.25
#: ... and the centre lies at least this share of the object's extent along that
#: direction away from the centroid (a thin part at the middle is no handle).
HANDLE_MIN_OFFSET_FRACTION = 0.25
#: A region is on a ``rim`` when its pads close across at most this share of the object's
#: extent along the span axis (a thin wall) ...
RIM_WIDTH_FRACTION = 0.2
#: ... at the object's edge along that axis: its centre at least this share of the
#: bounds' half extent from the middle.
RIM_EDGE_FRACTION = 0.8
#: A region is in the ``middle`` when its centre lies within this share of the bounds'
#: half extent of the middle along every axis.
MIDDLE_FRACTION = 0.35


@dataclass(frozen=True)
class RegionPlace:
    """What :func:`name_region` may read besides the bounds (frame M, metres)."""

    vertices: NDArray[np.float64] | None = None
    """(V, 3) the object's mesh (for ``handle``), with ``faces``."""
    faces: NDArray[np.int64] | None = None
    span_axis: NDArray[np.float64] | None = None
    """The region's closing direction (for ``rim``), with ``width``."""
    width: float | None = None
    """The region's grasps' mean contact width, metres."""


def compute_section_area(
    vertices: NDArray[np.float64],
    faces: NDArray[np.int64],
    point: NDArray[np.float64],
    normal: NDArray[np.float64],
) -> float:
    """Area (m²) of the bounding rectangle of the mesh's cut by the plane (``point``, ``normal``).

    The cut is exact (each triangle edge that crosses the plane gives a point); the
    rectangle's sides are two axes across ``normal``. 0 when the plane misses the mesh.
    """
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    n = _unit(np.asarray(normal, dtype=np.float64))
    if n is None or not len(f):
        return 0.0
    side = (v - point) @ n
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    a, b = side[edges[:, 0]], side[edges[:, 1]]
    crossing = (a > 0) != (b > 0)
    if not crossing.any():
        return 0.0
    a, b, ends = a[crossing], b[crossing], edges[crossing]
    t = (a / (a - b))[:, None]
    cut = v[ends[:, 0]] + t * (v[ends[:, 1]] - v[ends[:, 0]])
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    e1 = np.cross(n, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    return float(np.ptp(cut @ e1) * np.ptp(cut @ e2))


def is_on_handle(
    center: NDArray[np.float64], vertices: NDArray[np.float64], faces: NDArray[np.int64]
) -> bool:
    """Whether ``center`` lies on a thin part sticking out of the object's body.

    Across the direction ``d`` from the object's area centroid to ``center``, the mesh's
    cross-section at ``center`` covers at most :data:`HANDLE_SECTION_FRACTION` of the one
    at the centroid, and ``center`` lies at least :data:`HANDLE_MIN_OFFSET_FRACTION` of
    the object's extent along ``d`` from the centroid.
    """
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    if not len(f):
        return False
    v0, v1, v2 = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    areas = 0.5 * np.linalg.norm(np.cross(v1 - v0, v2 - v0), axis=1)
    if not areas.sum() > 0:
        return False
    centroid = (areas[:, None] * (v0 + v1 + v2) / 3).sum(axis=0) / areas.sum()
    direction = _unit(np.asarray(center, dtype=np.float64) - centroid)
    if direction is None:
        return False
    along = v @ direction
    offset = float((center - centroid) @ direction)
    if offset < HANDLE_MIN_OFFSET_FRACTION * float(np.ptp(along)):
        return False
    body = compute_section_area(v, f, centroid, direction)
    here = compute_section_area(v, f, np.asarray(center, dtype=np.float64), direction)
    return body > 0 and here <= HANDLE_SECTION_FRACTION * body


def _is_on_rim(
    offset: NDArray[np.float64], half: NDArray[np.float64], place: RegionPlace
) -> tuple[int, int] | None:
    """The (axis, sign) of the edge the region's thin wall is at, else ``None``."""
    if place.span_axis is None or place.width is None:
        return None
    span = _unit(np.asarray(place.span_axis, dtype=np.float64))
    if span is None:
        return None
    extent = float(2 * np.abs(span) @ half)  # the bounds' extent along the span axis
    if not place.width <= RIM_WIDTH_FRACTION * extent:
        return None
    axis = int(np.argmax(np.abs(span)))
    if abs(offset[axis]) < RIM_EDGE_FRACTION:
        return None
    return axis, 1 if offset[axis] >= 0 else -1


def name_region(
    center: NDArray[np.float64],
    bounds: tuple[NDArray[np.float64], NDArray[np.float64]],
    up: NDArray[np.float64],
    taken: set[str],
    place: RegionPlace | None = None,
) -> str:
    """A slot name from where ``center`` lies on the object (M).

    ``rim_px`` ... ``rim_nz`` when the pads close across a thin wall at the object's edge
    along the span axis (``place``'s span axis and width: :data:`RIM_WIDTH_FRACTION`,
    :data:`RIM_EDGE_FRACTION`); else ``handle`` when it lies on a thin part sticking out
    of the body (:func:`is_on_handle`, with ``place``'s mesh); else ``middle`` when it lies
    within :data:`MIDDLE_FRACTION` of the bounds' half extent of their middle on every
    axis; else ``top`` or ``bottom`` along ``up``, else ``side_px`` ... ``side_nz`` (the
    axis of M it lies farthest along, by the bounds' half extent). ``_2``, ``_3`` ... when
    taken.
    """
    place = RegionPlace() if place is None else place
    low, high = bounds
    middle = (low + high) / 2
    half = np.maximum((high - low) / 2, 1e-9)
    offset = (center - middle) / half
    up_axis = int(np.argmax(np.abs(up)))
    axis = int(np.argmax(np.abs(offset)))
    sign = 1 if offset[axis] >= 0 else -1
    rim = _is_on_rim(offset, half, place)
    if rim is not None:
        base = f"rim_{SIDE_NAMES[rim]}"
    elif (
        place.vertices is not None
        and place.faces is not None
        and is_on_handle(center, place.vertices, place.faces)
    ):
        base = "handle"
    elif float(np.abs(offset).max()) < MIDDLE_FRACTION:
        base = "middle"
    elif axis == up_axis:
        base = "top" if sign * np.sign(up[up_axis]) > 0 else "bottom"
    else:
        base = f"side_{SIDE_NAMES[(axis, sign)]}"
    return take_name(base, taken)


def take_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base_2``, ``base_3`` ... the first not in ``taken``."""
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


#: Two regions make a two-handed group when the centre of mass lies between them, seen
#: along up: the directions from it to their centres at least this far apart (degrees) ...
PAIR_OPPOSITION_DEG = 150.0
#: ... the centre of mass at most this share of their distance from their midpoint ...
PAIR_BALANCE_FRACTION = 0.25
#: ... and their centres at least this many gripper max openings apart (room for two hands).
PAIR_ROOM_OPENINGS = 1.5


@dataclass(frozen=True)
class RegionPair:
    """Two regions on opposite sides of the centre of mass: a two-handed group's slots."""

    left: int
    """Index (into the regions given) of the member at the smaller coordinate along the
    axis of M the two are farthest apart along (``lr = left``)."""
    right: int
    balance: float
    """The centre of mass's distance (across up) from the midpoint, over ``separation``."""
    separation: float
    """Distance of the two centres across up, metres."""


def pair_regions(
    regions: list[SlotRegion] | tuple[SlotRegion, ...],
    center_of_mass: NDArray[np.float64],
    up: NDArray[np.float64],
    max_opening: float,
) -> list[RegionPair]:
    """The pairs of ``regions`` a two-handed group can hold by, best first.

    A pair's centres lie on opposite sides of ``center_of_mass`` seen along ``up``
    (:data:`PAIR_OPPOSITION_DEG`, :data:`PAIR_BALANCE_FRACTION`) with room for two hands
    (:data:`PAIR_ROOM_OPENINGS` × ``max_opening``). Ranked by the weaker member's
    success, then balance, then separation (wider first).
    """
    lift = _unit(np.asarray(up, dtype=np.float64))
    if lift is None:
        return []
    com = np.asarray(center_of_mass, dtype=np.float64)

    def across(vector: NDArray[np.float64]) -> NDArray[np.float64]:
        return vector - (vector @ lift) * lift

    cos_limit = np.cos(np.radians(PAIR_OPPOSITION_DEG))
    pairs = []
    for i, a in enumerate(regions):
        for j in range(i + 1, len(regions)):
            b = regions[j]
            da, db = across(a.center - com), across(b.center - com)
            ua, ub = _unit(da), _unit(db)
            separation = float(np.linalg.norm(da - db))
            room = max(PAIR_ROOM_OPENINGS * max_opening, 1e-6)  # two centres, not one
            if ua is None or ub is None or not separation >= room:
                continue
            balance = float(np.linalg.norm((da + db) / 2)) / separation
            if ua @ ub > cos_limit or balance > PAIR_BALANCE_FRACTION:
                continue
            gap = b.center - a.center
            axis = int(np.argmax(np.abs(gap)))
            left, right = (i, j) if gap[axis] > 0 else (j, i)
            pairs.append((min(a.success, b.success), RegionPair(left, right, balance, separation)))
    pairs.sort(key=lambda item: (-item[0], round(item[1].balance, 3), -item[1].separation))
    return [pair for _, pair in pairs]


def align_partner_span(left: SlotRegion, right: SlotRegion) -> NDArray[np.float64]:
    """``right``'s span axis, its sign chosen so its Up (forward × span) agrees with ``left``'s.

    A group's members share their samples' offsets along their own Up
    (``docs/sampling.md``): with Up pointing the same way the two hands move together.
    """
    up_left = np.cross(left.forward, left.span_axis)
    up_right = np.cross(right.forward, right.span_axis)
    return right.span_axis if up_left @ up_right >= 0 else -right.span_axis


__all__ = [
    "HANDLE_MIN_OFFSET_FRACTION",
    "HANDLE_SECTION_FRACTION",
    "MIDDLE_FRACTION",
    "MIN_INPUT_ANGLE_DEG",
    "MIN_REGION_GRASPS",
    "MIN_UP_RANGE_M",
    "PAIR_BALANCE_FRACTION",
    "PAIR_OPPOSITION_DEG",
    "PAIR_ROOM_OPENINGS",
    "REGION_APPROACH_DEG",
    "REGION_RADIUS_FRACTION",
    "RIM_EDGE_FRACTION",
    "RIM_WIDTH_FRACTION",
    "RegionPair",
    "RegionPlace",
    "SlotRegion",
    "align_partner_span",
    "compute_section_area",
    "compute_slot_regions",
    "is_on_handle",
    "name_region",
    "pair_regions",
    "take_name",
]
