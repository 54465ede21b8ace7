"""The GripperSlot contract checks, once (pure math on 3-vectors and the object's transform).

Used by the GS validation rules (GS.001–GS.003) and by
:func:`usdgrip.sampling.check_slot`, which refuses to sample a slot that
fails them. Each function returns problem texts that name the field (under
the name the caller passes: ``spanAxis`` for the schema, ``span_axis`` for
LambdaSim records), the value found and the value expected.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from usdgrip.frames import MAX_WORLD_OFFSET_M, ZERO_LENGTH_TOLERANCE
from usdgrip.grasp_line_geometry import SMALL_CAST_PAIRS, check_segments_hit_mesh

#: Largest plausible slot up range, metres (GS.002 fails it; the sampler refuses it).
#: ``DEFAULT_PARAMS["slot_up_range_max_m"]`` in the rules.
MAX_UP_RANGE_M = 10.0


def get_vector3(value: Any) -> tuple[float, float, float] | None:
    """``value`` as 3 floats, or ``None`` when it is not a 3-vector of numbers."""
    if value is None or isinstance(value, str | bytes):
        return None
    try:
        items = tuple(map(float, value))
    except (TypeError, ValueError):
        return None
    return items if len(items) == 3 else None  # type: ignore[return-value]


def _norm(v: tuple[float, float, float]) -> float:
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def _list(v: tuple[float, float, float]) -> list[float]:
    return [float(f"{c:.6g}") for c in v]


def compute_axes_problems(
    forward: Any,
    span_axis: Any,
    tolerance_deg: float,
    names: tuple[str, str] = ("forward", "span_axis"),
) -> list[tuple[str, str]]:
    """Check forward and span_axis: finite, non-zero, perpendicular within ``tolerance_deg``.

    Returns:
        ``(field, message)`` pairs, ``field`` being ``forward`` or ``span_axis``.
    """
    problems: list[tuple[str, str]] = []
    vectors = []
    for field, name, value in zip(
        ("forward", "span_axis"), names, (forward, span_axis), strict=True
    ):
        v = get_vector3(value)
        if v is None or not all(map(math.isfinite, v)):
            shown = list(v) if v is not None else value
            problems.append((field, f"{name} is {shown!r}; expected 3 finite numbers"))
        elif _norm(v) <= ZERO_LENGTH_TOLERANCE:
            problems.append((field, f"{name} is {_list(v)} (zero); expected a non-zero vector"))
        else:
            vectors.append(v)
    if len(vectors) == 2:
        f, s = vectors
        cosine = abs(f[0] * s[0] + f[1] * s[1] + f[2] * s[2]) / (_norm(f) * _norm(s))
        deviation = math.degrees(math.asin(min(1.0, cosine)))
        if deviation > tolerance_deg:
            problems.append(
                (
                    "span_axis",
                    f"{names[0]} {_list(f)} and {names[1]} {_list(s)} are "
                    f"{90.0 - deviation:.2f}° from parallel ({deviation:.2f}° off perpendicular); "
                    f"expected perpendicular within {tolerance_deg:g}° (parameter "
                    "slot_perpendicular_tolerance_deg)",
                )
            )
    return problems


def get_world_axes_problem(
    object_to_world: Any,
    forward: Any,
    span_axis: Any,
    names: tuple[str, str] = ("forward", "span_axis"),
) -> str | None:
    """The object's world transform must be finite and keep the slot frame non-degenerate.

    Checked only when the local axes are usable (:func:`compute_axes_problems` reports
    them otherwise): forward, span axis and Up (``forward x span_axis``) must stay
    non-zero in the world, and Up must not fall onto forward (the world frame is built
    from forward and Up, :attr:`usdgrip.site_records.GripperSlot.frame`). ``object_to_world``
    is the object's local-to-world (4, 4). A mirroring transform (negative
    determinant) is accepted: the slot is mirrored with the object.
    """
    # Plain floats: thousands of slots per validation run, numpy costs more per call.
    world = np.asarray(object_to_world, dtype=np.float64)
    flat = world.ravel().tolist()
    if world.shape != (4, 4) or not all(map(math.isfinite, flat)):
        return "object world transform is not a finite 4x4 matrix; expected finite xformOps"
    offset = max(abs(flat[3]), abs(flat[7]), abs(flat[11]))
    if offset > MAX_WORLD_OFFSET_M:  # the slot's edges would collapse onto one point
        return (
            f"object world transform places it {offset:g} m from the origin; expected within "
            f"{MAX_WORLD_OFFSET_M:g} m (float64 keeps {math.ulp(offset):.2g} m there): move it "
            "nearer the origin, or check the stage's metersPerUnit"
        )
    f, s = get_vector3(forward), get_vector3(span_axis)
    if f is None or s is None or not (_is_usable(f) and _is_usable(s)):
        return None
    up = _cross(f, s)
    if not _is_usable(up):  # parallel axes: compute_axes_problems reports them
        return None
    rows = (flat[0:3], flat[4:7], flat[8:11])
    mapped = []
    for name, local in zip((*names, "Up"), (f, s, up), strict=True):
        axis = tuple(r[0] * local[0] + r[1] * local[1] + r[2] * local[2] for r in rows)
        # Relative to the local length: the check is about the transform, not the vector.
        if not _norm(axis) > ZERO_LENGTH_TOLERANCE * _norm(local):
            return (
                f"object world transform collapses {name} to zero (a zero scale?); "
                "expected a non-singular transform"
            )
        mapped.append(axis)
    z, y = mapped[0], mapped[2]
    zz = _norm(z) ** 2
    along = (y[0] * z[0] + y[1] * z[1] + y[2] * z[2]) / zz
    rest = (y[0] - along * z[0], y[1] - along * z[1], y[2] - along * z[2])
    if not _norm(rest) > ZERO_LENGTH_TOLERANCE * _norm(y):
        return (
            "object world transform maps Up onto forward (a singular transform); "
            "expected a non-singular transform"
        )
    return None


def _is_usable(v: tuple[float, float, float]) -> bool:
    norm = _norm(v)
    return math.isfinite(norm) and norm > ZERO_LENGTH_TOLERANCE


def _cross(a: tuple[float, float, float], b: tuple[float, float, float]) -> tuple:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def get_center_problem(value: Any, name: str = "center") -> str | None:
    """``center`` must be 3 finite numbers (stage units)."""
    v = get_vector3(value)
    if v is None or not all(map(math.isfinite, v)):
        shown = list(v) if v is not None else value
        return f"{name} is {shown!r}; expected 3 finite numbers"
    return None


def get_up_range_problem(
    value: Any, name: str = "up_range", maximum: float = MAX_UP_RANGE_M
) -> str | None:
    """``up_range`` must be a finite number in ``(0, maximum]`` (metres)."""
    if value is None:
        return f"{name} has no value; expected a finite value > 0 m"
    number = float(value) if isinstance(value, int | float) else math.nan
    if not (math.isfinite(number) and number > 0):
        shown = f"{number:g}" if isinstance(value, int | float) else repr(value)
        return f"{name} is {shown} m; expected a finite value > 0 m"
    if number > maximum:
        return (
            f"{name} is {number:g} m; expected at most {maximum:g} m (a larger range is "
            "implausible: a unit mistake?)"
        )
    return None


def get_input_angle_problem(
    value: Any, low: float = 0.0, high: float = 360.0, name: str = "slot_input_angle"
) -> str | None:
    """``slot_input_angle`` must be a finite number in ``[low, high]`` degrees."""
    number = float(value) if isinstance(value, int | float) else math.nan
    if not (math.isfinite(number) and low <= number <= high):
        shown = f"{number:g}" if isinstance(value, int | float) else repr(value)
        return f"{name} is {shown}°; expected a finite value in [{low:g}, {high:g}] degrees"
    return None


def compute_slot_surface_problems(
    centers: Any,
    span_axes: Any,
    up_ranges: Any,
    object_to_world: Any,
    meters_per_unit: float,
    vertices: Any,
    faces: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """Which of N slots miss their object's surface (GS.009): ``(line_misses, centre_outside)``.

    ``line_misses[i]``: slot ``i``'s closing line, through its centre along its span
    axis (both ways, as far as the object reaches), meets no triangle (GP.001's segment
    cast, :func:`usdgrip.grasp_line_geometry.check_segments_hit_mesh`, all slots at
    once). ``centre_outside[i]``: the centre lies outside the object's bounds in its own
    frame, grown by the slot's up range on every side (by nothing when the up range is
    not a finite value > 0: GS.002 reports it).

    Args:
        centers: (N, 3) slot centres, object frame (stage units).
        span_axes: (N, 3) closing directions, object frame (non-zero).
        up_ranges: (N,) metres along Up, as authored.
        object_to_world: (4, 4) object local-to-world in metres (stage units x mpu).
        meters_per_unit: the stage's (the centres and the bounds are stage units).
        vertices: (V, 3) the object's surface in world metres.
        faces: (F, 3) its triangles.
    """
    world = np.asarray(object_to_world, dtype=np.float64)
    points = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    local_centers = np.asarray(centers, dtype=np.float64).reshape(-1, 3)
    if len(local_centers) * len(faces) <= SMALL_CAST_PAIRS and len(points) <= SMALL_SURFACE_POINTS:
        return _compute_small_surface_problems(
            local_centers, span_axes, up_ranges, world, meters_per_unit, points, faces
        )
    with np.errstate(invalid="ignore", over="ignore"):
        c = local_centers @ world[:3, :3].T + world[:3, 3]
        s = np.asarray(span_axes, dtype=np.float64).reshape(-1, 3) @ world[:3, :3].T
        norms = np.linalg.norm(s, axis=1)
        low, high = points.min(axis=0), points.max(axis=0)
        reach = np.linalg.norm(c - 0.5 * (low + high), axis=1) + np.linalg.norm(high - low) + 1e-9
        s = s / np.where(norms > ZERO_LENGTH_TOLERANCE, norms, 1.0)[:, None]
    line_misses = ~check_segments_hit_mesh(
        c - reach[:, None] * s, c + reach[:, None] * s, points, faces
    )
    try:
        to_local = np.linalg.inv(world)
    except np.linalg.LinAlgError:
        return line_misses, np.zeros(len(c), dtype=bool)  # GS.001: a singular transform
    # The object's frame, stage units: the centres are authored there; up ranges are metres.
    local = points @ to_local[:3, :3].T + to_local[:3, 3]
    up = np.asarray(up_ranges, dtype=np.float64).reshape(-1)
    margin = np.where(np.isfinite(up) & (up > 0), up, 0.0) / meters_per_unit
    outside = np.any(local_centers < local.min(axis=0) - margin[:, None], axis=1) | np.any(
        local_centers > local.max(axis=0) + margin[:, None], axis=1
    )
    return line_misses, outside & np.isfinite(up) & (up > 0)


#: At most this many surface points (and :data:`SMALL_CAST_PAIRS` slot-triangle pairs),
#: :func:`compute_slot_surface_problems` runs in plain Python (a box: each numpy call
#: costs more than the arithmetic).
SMALL_SURFACE_POINTS = 64


def _norm3(x: float, y: float, z: float) -> float:
    return math.sqrt(x * x + y * y + z * z)


def _compute_small_surface_problems(
    local_centers: np.ndarray,
    span_axes: Any,
    up_ranges: Any,
    world: np.ndarray,
    meters_per_unit: float,
    points: np.ndarray,
    faces: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`compute_slot_surface_problems` for a few slots and triangles, same arithmetic."""
    (r0, r1, r2, _) = world.tolist()
    rows = (r0[:3], r1[:3], r2[:3])
    shift = (r0[3], r1[3], r2[3])
    xs, ys, zs = points.T.tolist() if len(points) else ([math.nan], [math.nan], [math.nan])
    low, high = (min(xs), min(ys), min(zs)), (max(xs), max(ys), max(zs))
    mid = [0.5 * (a + b) for a, b in zip(low, high, strict=True)]
    size = _norm3(*(b - a for a, b in zip(low, high, strict=True)))
    spans = np.asarray(span_axes, dtype=np.float64).reshape(-1, 3).tolist()
    starts, ends = [], []
    for lc, span in zip(local_centers.tolist(), spans, strict=True):
        c = [
            r[0] * lc[0] + r[1] * lc[1] + r[2] * lc[2] + t for r, t in zip(rows, shift, strict=True)
        ]
        s = [r[0] * span[0] + r[1] * span[1] + r[2] * span[2] for r in rows]
        norm = _norm3(*s)
        scale = norm if norm > ZERO_LENGTH_TOLERANCE else 1.0
        s = [v / scale for v in s]
        reach = _norm3(*(a - b for a, b in zip(c, mid, strict=True))) + size + 1e-9
        starts.append([a - reach * b for a, b in zip(c, s, strict=True)])
        ends.append([a + reach * b for a, b in zip(c, s, strict=True)])
    line_misses = ~check_segments_hit_mesh(starts, ends, points, faces)
    try:
        to_local = np.linalg.inv(world)
    except np.linalg.LinAlgError:
        return line_misses, np.zeros(len(local_centers), dtype=bool)
    with np.errstate(invalid="ignore", over="ignore"):
        local = points @ to_local[:3, :3].T + to_local[:3, 3]
    lo, hi = local.min(axis=0).tolist(), local.max(axis=0).tolist()
    up = np.asarray(up_ranges, dtype=np.float64).reshape(-1).tolist()
    outside = []
    for lc, u in zip(local_centers.tolist(), up, strict=True):
        usable = math.isfinite(u) and u > 0
        margin = u / meters_per_unit if usable else 0.0
        out = any(v < a - margin for v, a in zip(lc, lo, strict=True)) or any(
            v > b + margin for v, b in zip(lc, hi, strict=True)
        )
        outside.append(out and usable)
    return line_misses, np.array(outside, dtype=bool)
