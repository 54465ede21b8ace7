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
from usdgrip.grasp_line_geometry import (
    BARYCENTRIC_TOLERANCE,
    SMALL_CAST_PAIRS,
    check_segments_hit_mesh,
)

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


#: How far (a fraction of the half edge) a box face is grown when :func:`check_slots_meet_boxes`
#: certifies a crossing: a tenth of the cast's barycentric slack, so the cast meets it too.
_BOX_FACE_GROWTH = BARYCENTRIC_TOLERANCE / 10
#: Largest ratio of the cast's magnitudes (positions, reach) to a face's smallest edge, scaled
#: by the face's shape and the line's slant to it, for which a crossing is certified: float64
#: rounding then moves the cast's barycentric coordinates by ~1e-12, far inside its slack.
_BOX_CAST_CONDITION = 1e4
#: Relative slack of the certified centre test (bounds computed another way round).
_BOUNDS_GUARD = 1e-8


def check_slots_meet_boxes(
    centers: Any,
    span_axes: Any,
    up_ranges: Any,
    object_to_world: Any,
    meters_per_unit: float,
    boxes: list[tuple[Any, Any]],
) -> bool:
    """Whether :func:`compute_slot_surface_problems` surely finds nothing on an object of boxes.

    The same two tests without the boxes' triangles (plain Python, a few slots): each slot's
    closing line must cross the plane of a box face inside that face (grown by a tenth of
    the cast's slack, so a line along a face still meets the faces beside it, as the cast
    does), at a slant and a scale where rounding cannot move the cast's verdict; each centre
    must lie inside the boxes' bounds grown by its up range, by more than a guard. False
    when a slot is near either boundary or any value is not regular (a singular or
    non-finite transform, a zero span): then the triangle cast decides, so GS.009's findings
    are the cast's whichever path runs.

    Args:
        centers: (N, 3) as :func:`compute_slot_surface_problems` takes them.
        span_axes: (N, 3) likewise.
        up_ranges: (N,) likewise.
        object_to_world: (4, 4) likewise.
        meters_per_unit: likewise.
        boxes: ``(size, pose)`` of each box as
            :func:`usdgrip.usd.geometry.read_collision_shapes` reads a Cube: full edge
            lengths (metres) along the axes of ``pose``, a rigid (4, 4) world transform.
    """
    (r0, r1, r2, _) = np.asarray(object_to_world, dtype=np.float64).tolist()
    rows = (r0[:3], r1[:3], r2[:3])
    shift = (r0[3], r1[3], r2[3])
    to_local = _invert3(rows)
    if to_local is None or not boxes:
        return False
    placed = [_place_box(size, pose, rows, shift, to_local) for size, pose in boxes]
    if None in placed:
        return False
    world_low = [min(box[4][i] for box in placed) for i in range(3)]
    world_high = [max(box[5][i] for box in placed) for i in range(3)]
    low = [min(box[6][i] for box in placed) for i in range(3)]
    high = [max(box[7][i] for box in placed) for i in range(3)]
    mid = [0.5 * (a + b) for a, b in zip(world_low, world_high, strict=True)]
    size = _norm3(*_sub3(world_high, world_low))
    for center, span, up in zip(centers, span_axes, up_ranges, strict=True):
        c = [_dot3(r, center) + t for r, t in zip(rows, shift, strict=True)]  # world
        reach = _norm3(*_sub3(c, mid)) + size + 1e-9  # the cast's
        magnitude = 2 * reach + _norm3(*c)
        if not math.isfinite(magnitude):
            return False
        if not any(_crosses_box_face(center, span, magnitude, *box[:4]) for box in placed):
            return False
        if isinstance(up, int | float) and math.isfinite(up) and up > 0:
            margin = up / meters_per_unit  # else GS.002 reports it, and no centre is outside
            for v, a, b in zip(center, low, high, strict=True):
                guard = _BOUNDS_GUARD * (abs(a) + abs(b) + abs(v) + margin)
                if not (a - margin + guard < v < b + margin - guard):
                    return False
    return True


def _place_box(size: Any, pose: Any, rows: tuple, shift: tuple, to_local: list) -> tuple | None:
    """A box in the object's frame: ``(M, m, half, faces, world bounds, object bounds)``.

    ``M c + m`` takes an object-frame point into the box's frame (world metres, rigid);
    ``faces``: per axis ``k``, the slant factor of :func:`_crosses_box_face`. ``None`` when
    a half edge is not a finite value > 0.
    """
    half = [0.5 * float(v) for v in size]
    if not all(math.isfinite(v) and v > 0 for v in half):
        return None
    (q0, q1, q2, _) = np.asarray(pose, dtype=np.float64).tolist()
    axes = ((q0[0], q1[0], q2[0]), (q0[1], q1[1], q2[1]), (q0[2], q1[2], q2[2]))  # columns
    origin = (q0[3], q1[3], q2[3])
    columns = list(zip(*rows, strict=True))
    matrix = [[_dot3(a, col) for col in columns] for a in axes]  # Q^T R
    offset = [_dot3(a, _sub3(shift, origin)) for a in axes]  # Q^T (t - q)
    faces = []
    for k in range(3):
        i, j = (k + 1) % 3, (k + 2) % 3
        edge = 2 * min(half[i], half[j])
        shape = 2 * math.hypot(half[i], half[j]) / edge
        faces.append(edge * _BOX_CAST_CONDITION / shape)
    # Bounds: centre +- sum_k |axis k| half_k, in the world and in the object's frame.
    h0, h1, h2 = half
    a0, a1, a2 = axes
    spread = [abs(a0[i]) * h0 + abs(a1[i]) * h1 + abs(a2[i]) * h2 for i in range(3)]
    world = ([origin[i] - spread[i] for i in range(3)], [origin[i] + spread[i] for i in range(3)])
    local_mid = [_dot3(r, _sub3(origin, shift)) for r in to_local]
    spread = [
        abs(_dot3(r, a0)) * h0 + abs(_dot3(r, a1)) * h1 + abs(_dot3(r, a2)) * h2 for r in to_local
    ]
    local = (
        [local_mid[i] - spread[i] for i in range(3)],
        [local_mid[i] + spread[i] for i in range(3)],
    )
    magnitude = _norm3(*origin)
    return (matrix, offset, half, (faces, magnitude), *world, *local)


def _dot3(a: Any, b: Any) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _sub3(a: Any, b: Any) -> tuple[float, float, float]:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _crosses_box_face(
    center: Any, span: Any, magnitude: float, matrix: list, offset: list, half: list, faces: tuple
) -> bool:
    """Whether the line ``center + t span`` (object frame) surely meets the placed box.

    ``magnitude``: twice the cast's reach plus the centre's distance from the origin.
    """
    p = [_dot3(r, center) + o for r, o in zip(matrix, offset, strict=True)]  # box frame
    d = [_dot3(r, span) for r in matrix]
    norm = _norm3(*d)  # the world span's length (the box's frame is rigid)
    if not (math.isfinite(norm) and norm > ZERO_LENGTH_TOLERANCE):
        return False
    slants, origin_magnitude = faces
    magnitude = (magnitude + origin_magnitude) * norm
    growth = 1 + _BOX_FACE_GROWTH
    for k in range(3):
        # Too slanted, or too small, for rounding to be ruled out: no certainty here.
        if not abs(d[k]) * slants[k] > magnitude:
            continue
        i, j = (k + 1) % 3, (k + 2) % 3
        for face in (-half[k], half[k]):
            t = (face - p[k]) / d[k]
            if (
                abs(p[i] + t * d[i]) <= half[i] * growth
                and abs(p[j] + t * d[j]) <= half[j] * growth
            ):
                return True
    return False


def _invert3(rows: tuple) -> list[list[float]] | None:
    """The inverse of a 3x3 (rows), or ``None`` when it is not finite or far from regular."""
    (a, b, c), (d, e, f), (g, h, i) = rows
    co = (e * i - f * h, f * g - d * i, d * h - e * g)
    det = a * co[0] + b * co[1] + c * co[2]
    frobenius = math.sqrt(sum(v * v for r in rows for v in r))
    if not (math.isfinite(det) and math.isfinite(frobenius) and abs(det) > 1e-6 * frobenius**3):
        return None
    return [
        [co[0] / det, (c * h - b * i) / det, (b * f - c * e) / det],
        [co[1] / det, (a * i - c * g) / det, (c * d - a * f) / det],
        [co[2] / det, (b * g - a * h) / det, (a * e - b * d) / det],
    ]
