"""SimReady grasp vector lines: the record and the maths (pure, no ``pxr``).

A *grasp vector line* (SimReady GSP.001, ``grasp_identifier*``) belongs to an
object and joins the two pad contact points of a grasp: its first two points
are where the two jaws start (FET005 grasp-and-lift), so the segment p0–p1 is
the **closing** direction. It is not a gripper's *grip line*
(``gripper_grip_line``), which lies along the pad, perpendicular to closing.
See ``docs/graspable-props.md``.

:mod:`usdgrip.usd.grasp_lines` reads :class:`GraspLine` records from a stage;
this module intersects lines with triangle meshes (segment casts by the
Möller–Trumbore test, vectorised over triangles) for the GP rules and the
planner. Lengths are metres; points ``(N, 3) float64``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import ZERO_LENGTH_TOLERANCE, Mat4

Points = NDArray[np.float64]  # (N, 3)
Triangles = NDArray[np.int64]  # (F, 3)

GRASP_LINE_PREFIX = "grasp_identifier"
"""Name prefix of grasp vector lines (SimReady GSP.001)."""

OBJECT_SOURCES = ("rigid-body", "default-prim", "root")
"""How a line's object was chosen: the nearest ``PhysicsRigidBodyAPI`` ancestor, else the
default prim, else the line's root prim (a stage without a default prim)."""

LAYOUTS = ("curve", "xform")
"""``curve``: a ``BasisCurves`` named ``grasp_identifier*`` (GSP.001). ``xform``: an Xform
named so, the line being its first child curve with >= 2 points (FET005 benchmark)."""

_BARYCENTRIC_TOLERANCE = 1e-9  # hits on a shared edge count for both triangles


@dataclass(frozen=True, eq=False)
class GraspLine:
    """One grasp vector line of an object, as authored.

    ``points_object`` are in the object's frame (the object prim's local frame in metres,
    its own scale excluded, like the planner's object meshes); ``points_world`` in world
    metres; both with the curve's own transform applied. Only the first two points are
    used (FET005); an unusable ``points`` value reads as no points and is in ``problems``.
    """

    path: str
    """Prim path of the curve holding the points."""
    name: str
    """Identifier name (the curve's, or the Xform's for the ``xform`` layout)."""
    object_path: str
    object_source: str
    """One of :data:`OBJECT_SOURCES`."""
    layout: str
    """One of :data:`LAYOUTS`."""
    type_name: str
    """The curve prim's type (``BasisCurves``)."""
    defined: bool
    """False when the line or an ancestor is an undefined ``over`` (a missing payload)."""
    points_object: Points
    points_world: Points
    object_transform: Mat4
    """Object frame (metres) to world (metres), ``(4, 4)``."""
    curve_type: str | None = None
    """Authored ``type`` (``linear``, ``cubic``) or ``None`` when not authored."""
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def point_count(self) -> int:
        """Number of authored points."""
        return len(self.points_world)

    @property
    def segment(self) -> Points | None:
        """``(2, 3)`` world p0, p1 (metres), or ``None`` with fewer than 2 points."""
        return self.points_world[:2] if self.point_count >= 2 else None

    @property
    def length(self) -> float:
        """``|p1 - p0|`` in world metres (NaN with fewer than 2 points)."""
        if self.point_count < 2:
            return math.nan
        return float(np.linalg.norm(self.points_world[1] - self.points_world[0]))

    @property
    def is_usable(self) -> bool:
        """True when p0, p1 are finite and apart (a closing direction exists)."""
        segment = self.segment
        return (
            segment is not None
            and bool(np.all(np.isfinite(segment)))
            and self.length > ZERO_LENGTH_TOLERANCE
        )


# --- segment casts -----------------------------------------------------------


def _as_triangles(vertices: ArrayLike, faces: ArrayLike) -> tuple[Points, Points, Points]:
    vertices = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    return vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]


def compute_segment_hits(
    start: ArrayLike, end: ArrayLike, vertices: ArrayLike, faces: ArrayLike
) -> NDArray[np.float64]:
    """Parameters ``t`` in ``[0, 1]`` where the segment ``start + t (end - start)`` meets triangles.

    Möller–Trumbore for every triangle at once; a segment lying in a triangle's plane
    does not hit it. Sorted ascending; a hit on an edge shared by two triangles appears
    twice.

    Args:
        start: ``(3,)`` segment start (t = 0).
        end: ``(3,)`` segment end (t = 1).
        vertices: ``(V, 3)`` triangle corners.
        faces: ``(F, 3)`` vertex indices.
    """
    origin = np.asarray(start, dtype=np.float64).reshape(3)
    direction = np.asarray(end, dtype=np.float64).reshape(3) - origin
    v0, v1, v2 = _as_triangles(vertices, faces)
    if len(v0) == 0 or not np.all(np.isfinite(direction)) or not np.any(direction):
        return np.zeros(0)
    edge1, edge2 = v1 - v0, v2 - v0
    pvec = np.cross(direction, edge2)
    det = np.einsum("ij,ij->i", edge1, pvec)
    scale = (
        np.linalg.norm(edge1, axis=1) * np.linalg.norm(edge2, axis=1) * np.linalg.norm(direction)
    )
    valid = np.abs(det) > 1e-12 * np.maximum(scale, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(valid, 1.0 / np.where(valid, det, 1.0), 0.0)
        tvec = origin - v0
        u = np.einsum("ij,ij->i", tvec, pvec) * inv
        qvec = np.cross(tvec, edge1)
        v = (qvec @ direction) * inv
        t = np.einsum("ij,ij->i", edge2, qvec) * inv
    tol = _BARYCENTRIC_TOLERANCE
    hit = valid & (u >= -tol) & (v >= -tol) & (u + v <= 1 + tol) & (t >= 0.0) & (t <= 1.0)
    return np.sort(t[hit])


def check_segment_hits_mesh(
    start: ArrayLike, end: ArrayLike, vertices: ArrayLike, faces: ArrayLike
) -> bool:
    """True when the segment meets at least one triangle (GP.001)."""
    return len(compute_segment_hits(start, end, vertices, faces)) > 0


class SurfacePoints(NamedTuple):
    """Where FET005's two ray casts along a grasp line land (metres)."""

    first: Points
    """``(3,)`` first surface point from p0 towards p1."""
    second: Points
    """``(3,)`` first surface point from p1 towards p0."""
    offset_first: float
    """``|p0 - first|``."""
    offset_second: float
    """``|p1 - second|``."""

    @property
    def width(self) -> float:
        """Distance between the two surface points: what the jaws close on."""
        return float(np.linalg.norm(self.second - self.first))


def compute_surface_points(
    start: ArrayLike, end: ArrayLike, vertices: ArrayLike, faces: ArrayLike
) -> SurfacePoints | None:
    """Cast from p0 towards p1 and from p1 towards p0 (length ``|p1 - p0|``), as FET005 does.

    Returns:
        The two first hits, or ``None`` when either cast meets nothing.
    """
    p0 = np.asarray(start, dtype=np.float64).reshape(3)
    p1 = np.asarray(end, dtype=np.float64).reshape(3)
    hits = compute_segment_hits(p0, p1, vertices, faces)
    if len(hits) == 0:
        return None
    # The same segment cast backwards lands on the last hit going forwards.
    t0, t1 = float(hits[0]), float(hits[-1])
    first, second = p0 + t0 * (p1 - p0), p0 + t1 * (p1 - p0)
    length = float(np.linalg.norm(p1 - p0))
    return SurfacePoints(first, second, t0 * length, (1.0 - t1) * length)


def compute_symmetric_points(
    start: ArrayLike, end: ArrayLike, vertices: ArrayLike, faces: ArrayLike
) -> tuple[Points, Points]:
    """FET005's symmetrised pad points: both set back the mean offset from their surfaces.

    When both casts hit, pad 0 sits ``d`` before the first surface and pad 1 ``d`` beyond
    the second along the line (``d`` the mean of the two authored offsets), so the jaws
    touch at the same time; otherwise the authored points are returned.

    Returns:
        ``(q0, q1)``, each ``(3,)``.
    """
    p0 = np.asarray(start, dtype=np.float64).reshape(3)
    p1 = np.asarray(end, dtype=np.float64).reshape(3)
    surface = compute_surface_points(p0, p1, vertices, faces)
    length = float(np.linalg.norm(p1 - p0))
    if surface is None or length <= ZERO_LENGTH_TOLERANCE:
        return p0.copy(), p1.copy()
    axis = (p1 - p0) / length
    offset = 0.5 * (surface.offset_first + surface.offset_second)
    return surface.first - offset * axis, surface.second + offset * axis
