"""Pure line geometry for slot and grasp pictures (numpy only, no ``pxr``, no Qt).

The usdview overlays (:mod:`usdgrip.views.overlays`) and ``usdgrip render``
(:mod:`usdgrip.render.line_sets`) draw the same segments from these functions, so the
viewer and the PNG agree. Every function returns segments as
``(S, 2, 3) float64`` arrays in world metres: ``segments[i] = (start, end)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import compute_axis_angle_rotation
from usdgrip.site_records import GripperSlot

Segments = NDArray[np.float64]  # (S, 2, 3) world metres
Colors = NDArray[np.float64]  # (N, 3) RGB in [0, 1]

#: Default jaw opening (metres) drawn when no gripper site is known.
DEFAULT_OPEN_WIDTH = 0.085
#: Rays drawn across a slot's tilt fan (odd, so the middle ray is the nominal approach).
FAN_RAYS = 5
#: Ungrouped slots and candidates without a confidence use this grey.
NEUTRAL_COLOR = (0.75, 0.75, 0.78)
#: Selected candidate colour (bright cyan stands out of the red→green confidence ramp).
HIGHLIGHT_COLOR = (0.1, 0.9, 1.0)
#: Qualitative palette (tab10) for slot groups, in first-seen order.
GROUP_PALETTE = (
    (0.122, 0.467, 0.706),
    (1.000, 0.498, 0.055),
    (0.173, 0.627, 0.173),
    (0.839, 0.153, 0.157),
    (0.580, 0.404, 0.741),
    (0.549, 0.337, 0.294),
    (0.890, 0.467, 0.761),
    (0.737, 0.741, 0.133),
    (0.090, 0.745, 0.812),
)


class SlotShape(NamedTuple):
    """The three parts of one slot picture, each ``(S, 2, 3)`` world metres."""

    offset: Segments
    """One segment along Up covering ``[-up_range/2, +up_range/2]``."""
    fan: Segments
    """Approach rays over the tilt range (from the centre towards ``-forward``) and the arc."""
    closing: Segments
    """The closing (span) axis from the centre, with a small arrow head."""

    @property
    def all(self) -> Segments:
        """All segments stacked (offset, fan, closing)."""
        return np.concatenate([self.offset, self.fan, self.closing])


def compute_slot_shape(slot: GripperSlot, length: float | None = None) -> SlotShape:
    """Compute the picture of one slot in world metres.

    Args:
        slot: a slot read by :func:`usdgrip.read_gripper_slots` (world snapshot).
        length: ray length of the tilt fan and the closing axis in metres; default
            ``max(up_range / 2, 0.04)``.

    Returns:
        The offset segment, tilt fan and closing axis.

    Raises:
        ValueError: the slot frame is degenerate (forward parallel to span_axis).
    """
    frame = slot.frame
    if not np.all(np.isfinite(frame)):
        raise ValueError(
            f"<{slot.prim}> slot {slot.name!r}: forward and spanAxis are parallel or zero; "
            "expected two perpendicular non-zero vectors, so the slot cannot be drawn."
        )
    span, up, forward, center = frame[:3, 0], frame[:3, 1], frame[:3, 2], frame[:3, 3]
    half = 0.5 * float(slot.up_range) if np.isfinite(slot.up_range) else 0.0
    ray = float(length) if length is not None else max(half, 0.04)
    offset = np.array([[center - half * up, center + half * up]])

    half_angle = np.radians(0.5 * float(slot.slot_input_angle))
    angles = np.linspace(-half_angle, half_angle, FAN_RAYS)
    rotations = compute_axis_angle_rotation(span, angles)  # (R, 3, 3)
    tips = center + ray * (rotations @ -forward)  # (R, 3)
    rays = np.stack([np.broadcast_to(center, tips.shape), tips], axis=1)
    arc_angles = np.linspace(-half_angle, half_angle, 4 * FAN_RAYS)
    arc_points = center + ray * (compute_axis_angle_rotation(span, arc_angles) @ -forward)
    arc = np.stack([arc_points[:-1], arc_points[1:]], axis=1)
    fan = np.concatenate([rays, arc]) if half_angle > 0 else rays[:1]

    tip = center + 0.5 * ray * span
    head = 0.1 * ray
    closing = np.array(
        [
            [center, tip],
            [tip, tip - head * span + head * up],
            [tip, tip - head * span - head * up],
        ]
    )
    return SlotShape(offset=offset, fan=fan, closing=closing)


def compute_gripper_wireframe(poses: ArrayLike, open_width: float) -> Segments:
    """Compute a parallel-jaw gripper wireframe at each pose.

    Frame convention (GraspGenX, as :func:`usdgrip.compute_grasp_frame`): origin at
    the grasp centre between the pads, ``+X`` closing, ``+Z`` approach. Each
    gripper is 4 segments: two fingers at ``x = ±open_width/2`` reaching a little
    past the centre, the palm bar joining them, and a short approach stem behind
    it (so the approach direction reads at a glance).

    Args:
        poses: ``(N, 4, 4)`` or ``(4, 4)`` grasp poses in world metres.
        open_width: jaw opening in metres (> 0).

    Returns:
        ``(N, 4, 2, 3)`` segments.

    Raises:
        ValueError: wrong pose shape or a non-positive width.
    """
    p = np.asarray(poses, dtype=np.float64)
    if p.shape == (4, 4):
        p = p[None]
    if p.ndim != 3 or p.shape[1:] != (4, 4):
        raise ValueError(f"poses have shape {p.shape}; expected (N, 4, 4) or (4, 4).")
    w = float(open_width)
    if not np.isfinite(w) or w <= 0:
        raise ValueError(f"open_width is {open_width!r} m; expected a finite value > 0 m.")
    finger = max(0.6 * w, 0.04)
    back, tip = -0.75 * finger, 0.25 * finger
    h = 0.5 * w
    local = np.array(
        [
            [[-h, 0, back], [-h, 0, tip]],
            [[h, 0, back], [h, 0, tip]],
            [[-h, 0, back], [h, 0, back]],
            [[0, 0, back], [0, 0, back - 0.6 * finger]],
        ]
    )  # (4, 2, 3)
    rot, trans = p[:, :3, :3], p[:, :3, 3]
    return np.einsum("nij,sej->nsei", rot, local) + trans[:, None, None, :]


def compute_confidence_colors(confidences: ArrayLike | None, count: int) -> Colors:
    """Map confidences to a red (worst) → yellow → green (best) ramp, ``(count, 3)``.

    Backend scores rank candidates; they are not calibrated probabilities and
    often sit close together, so the ramp spans the set's own range (min-max
    normalised); equal scores are all green. ``None`` gives the neutral grey.
    """
    if confidences is None:
        return np.tile(np.asarray(NEUTRAL_COLOR), (count, 1))
    c = np.nan_to_num(np.asarray(confidences, dtype=np.float64).reshape(count))
    span = float(c.max() - c.min()) if count else 0.0
    c = (c - c.min()) / span if span > 0 else np.ones_like(c)
    return _compute_ramp_colors(c)


def compute_success_colors(success_rates: ArrayLike, count: int) -> Colors:
    """Map measured success rates to the same ramp over the fixed range 0 (red) → 1 (green).

    Unlike backend scores, a success rate is a measured fraction (trials held / trials),
    so it is not rescaled to the set: a set where nothing held is all red. A rate that
    is not finite (not measured) is the neutral grey.
    """
    rates = np.asarray(success_rates, dtype=np.float64).reshape(count)
    colors = _compute_ramp_colors(np.clip(np.nan_to_num(rates), 0.0, 1.0))
    colors[~np.isfinite(rates)] = NEUTRAL_COLOR
    return colors


def _compute_ramp_colors(fractions: NDArray[np.float64]) -> Colors:
    """Red (0) → yellow (0.5) → green (1), ``(N, 3)``."""
    red = np.clip(2.0 * (1.0 - fractions), 0, 1)
    green = np.clip(2.0 * fractions, 0, 1) * 0.8
    return np.stack([red, green, np.full_like(fractions, 0.1)], axis=1)


def compute_group_colors(groups: list[str]) -> Colors:
    """Colour per slot by group name: shared group → shared colour; ungrouped → grey."""
    order: dict[str, int] = {}
    colors = []
    for group in groups:
        if not group:
            colors.append(NEUTRAL_COLOR)
            continue
        index = order.setdefault(group, len(order))
        colors.append(GROUP_PALETTE[index % len(GROUP_PALETTE)])
    return np.asarray(colors, dtype=np.float64).reshape(len(groups), 3)
