"""Where a viewport click's ray meets an object's mesh, and that face's normal (pure numpy).

A viewer turns a click into a world ray (its camera); :func:`intersect_ray` finds the
nearest triangle the ray crosses (Möller–Trumbore, every triangle at once), the point
and the face's unit normal, which **Align to surface** turns into ``forward``
(:func:`compute_forward_against`: into the surface).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

#: |det| below this (relative to the edge lengths): the ray runs along the face (no hit).
PARALLEL = 1e-12


class RayHit(NamedTuple):
    """The first triangle a ray crosses."""

    face: int
    """Index of the triangle in ``faces``."""
    point: tuple[float, float, float]
    """Where the ray meets it (the mesh's units and frame)."""
    distance: float
    """Along the ray, in units of ``direction``'s length."""
    normal: tuple[float, float, float]
    """The face's unit normal (right-hand rule: outward for counter-clockwise faces)."""


def _finite(value: ArrayLike, what: str) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    if array.shape != (3,) or not np.isfinite(array).all():
        raise ValueError(f"{what} {value!r}: expected three finite coordinates")
    return array


def intersect_ray(
    vertices: ArrayLike, faces: ArrayLike, origin: ArrayLike, direction: ArrayLike
) -> RayHit:
    """The nearest triangle in front of ``origin`` along ``direction``.

    Raises:
        ValueError: an origin, direction or vertex that is not finite, a zero direction,
            faces that are not (F, 3) indices into ``vertices``, or a ray that meets no
            triangle (the click missed the object).
    """
    o = _finite(origin, "ray origin")
    d = _finite(direction, "ray direction")
    if not np.linalg.norm(d) > 0:
        raise ValueError("ray direction is zero")
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces)
    if v.ndim != 2 or v.shape[1] != 3 or not np.isfinite(v).all():
        raise ValueError("mesh vertices: expected (V, 3) finite coordinates")
    if f.ndim != 2 or f.shape[1] != 3 or not np.issubdtype(f.dtype, np.integer):
        raise ValueError("mesh faces: expected (F, 3) vertex indices")
    if f.size and (f.min() < 0 or f.max() >= len(v)):
        raise ValueError(f"mesh faces: an index outside 0..{len(v) - 1}")
    a = v[f[:, 0]]
    e1, e2 = v[f[:, 1]] - a, v[f[:, 2]] - a
    p = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, p)
    scale = np.linalg.norm(e1, axis=1) * np.linalg.norm(e2, axis=1) * np.linalg.norm(d)
    ok = np.abs(det) > PARALLEL * np.maximum(scale, 1e-300)
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = o - a
    u = np.einsum("ij,ij->i", s, p) * inv
    q = np.cross(s, e1)
    w = (q @ d) * inv
    t = np.einsum("ij,ij->i", e2, q) * inv
    hit = ok & (u >= 0) & (w >= 0) & (u + w <= 1) & (t > 0)
    if not hit.any():
        raise ValueError("the ray meets no face of the mesh (the click missed the object)")
    best = int(np.flatnonzero(hit)[np.argmin(t[hit])])
    normal = np.cross(e1[best], e2[best])
    normal /= np.linalg.norm(normal)
    point = o + d * t[best]
    return RayHit(
        best, tuple(float(x) for x in point), float(t[best]), tuple(float(x) for x in normal)
    )


def compute_forward_against(normal: ArrayLike) -> tuple[float, float, float]:
    """``forward`` for a slot on a face with ``normal``: the approach into the surface."""
    n = np.asarray(normal, dtype=np.float64)
    length = float(np.linalg.norm(n)) if n.shape == (3,) else 0.0
    if not np.isfinite(length) or length == 0:
        raise ValueError(f"face normal {normal!r}: expected a finite non-zero direction")
    return tuple(float(x) for x in -n / length)
