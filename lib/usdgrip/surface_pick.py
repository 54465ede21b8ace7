"""The face a picked surface point lies on, and its normal (pure numpy).

A viewer reports where a click hit the surface (a world point); :func:`find_picked_face`
finds the triangle of the object's mesh nearest that point (exact point–triangle
distance) and its unit normal, which **Align to surface** turns into ``forward``
(:func:`compute_forward_against`: into the surface).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Triangles with a cross product shorter than this (relative to the edge lengths) have no normal.
DEGENERATE_AREA = 1e-12


class SurfacePick(NamedTuple):
    """The triangle nearest a picked point."""

    face: int
    """Index of the triangle in ``faces``."""
    distance: float
    """Distance from the picked point to it (the mesh's units)."""
    normal: tuple[float, float, float]
    """Its unit normal (right-hand rule: outward for counter-clockwise faces)."""


def _segment_distance(p: NDArray, a: NDArray, b: NDArray) -> NDArray:
    ab = b - a
    denom = np.einsum("ij,ij->i", ab, ab)
    t = np.einsum("ij,ij->i", p - a, ab) / np.where(denom > 0, denom, 1.0)
    t = np.clip(t, 0.0, 1.0)
    return np.linalg.norm(p - (a + ab * t[:, None]), axis=1)


def find_picked_face(vertices: ArrayLike, faces: ArrayLike, point: ArrayLike) -> SurfacePick:
    """The non-degenerate triangle nearest ``point`` and its unit normal.

    Raises:
        ValueError: a point or vertex that is not finite, faces that are not (F, 3)
            indices into ``vertices``, or no triangle with an area.
    """
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces)
    p = np.asarray(point, dtype=np.float64).reshape(-1)
    if p.shape != (3,) or not np.isfinite(p).all():
        raise ValueError(f"picked point {point!r}: expected three finite coordinates")
    if v.ndim != 2 or v.shape[1] != 3 or not np.isfinite(v).all():
        raise ValueError("mesh vertices: expected (V, 3) finite coordinates")
    if f.ndim != 2 or f.shape[1] != 3 or not np.issubdtype(f.dtype, np.integer):
        raise ValueError("mesh faces: expected (F, 3) vertex indices")
    if f.size and (f.min() < 0 or f.max() >= len(v)):
        raise ValueError(f"mesh faces: an index outside 0..{len(v) - 1}")
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    cross = np.cross(b - a, c - a)
    area = np.linalg.norm(cross, axis=1)
    scale = np.maximum(np.linalg.norm(b - a, axis=1) * np.linalg.norm(c - a, axis=1), 1e-300)
    usable = area > DEGENERATE_AREA * scale
    if not usable.any():
        raise ValueError("mesh: no triangle with an area (every face is degenerate)")
    idx = np.flatnonzero(usable)
    a, b, c, n = a[idx], b[idx], c[idx], cross[idx] / area[idx, None]
    q = np.broadcast_to(p, a.shape)
    height = np.einsum("ij,ij->i", q - a, n)
    foot = q - n * height[:, None]
    inside = np.ones(len(idx), dtype=bool)
    for s, e in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(e - s, foot - s), n) >= 0
    edge = np.minimum.reduce(
        [_segment_distance(q, a, b), _segment_distance(q, b, c), _segment_distance(q, c, a)]
    )
    distance = np.where(inside, np.abs(height), edge)
    best = int(np.argmin(distance))
    return SurfacePick(int(idx[best]), float(distance[best]), tuple(float(x) for x in n[best]))


def compute_forward_against(normal: ArrayLike) -> tuple[float, float, float]:
    """``forward`` for a slot on a face with ``normal``: the approach into the surface."""
    n = np.asarray(normal, dtype=np.float64)
    length = float(np.linalg.norm(n))
    if n.shape != (3,) or not np.isfinite(length) or length == 0:
        raise ValueError(f"face normal {normal!r}: expected a finite non-zero direction")
    return tuple(float(x) for x in -n / length)
