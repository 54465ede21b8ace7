"""Triangle-mesh helpers for the physics model: welding, parts, closedness, mass properties.

Pure numpy, and scipy's qhull for convex hulls (imported only when a hull is needed: a
closed part that is its own hull is recognised without it, so evaluating an object made
of convex solids never loads SciPy). Vertices are ``(V, 3)`` float64 metres, triangles
``(F, 3)`` int64 indices into them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

Points = NDArray[np.float64]  # (V, 3)
Triangles = NDArray[np.int64]  # (F, 3)


class MassProperties(NamedTuple):
    """Mass properties of a closed mesh at unit density."""

    volume: float
    """Enclosed volume, m³ (> 0 for outward-facing triangles)."""
    center: NDArray[np.float64]
    """(3,) centre of volume, metres."""
    inertia: NDArray[np.float64]
    """(3, 3) inertia tensor about ``center`` for density 1 kg/m³ (kg·m²)."""


def check_mesh(vertices: ArrayLike, triangles: ArrayLike, what: str) -> tuple[Points, Triangles]:
    """Coerce and check a triangle mesh.

    Raises:
        TypeError: ``vertices`` or ``triangles`` is not numeric.
        ValueError: wrong shape, non-finite vertices, out-of-range or negative indices,
            or no triangles; the message names ``what``.
    """
    try:
        v = np.asarray(vertices, dtype=np.float64)
        f_raw = np.asarray(triangles)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what}: vertices and triangles must be numeric arrays ({exc})") from None
    if v.ndim != 2 or v.shape[1] != 3:
        raise ValueError(f"{what}: vertices have shape {v.shape}; expected (V, 3)")
    if len(v) < 4:
        raise ValueError(
            f"{what}: {len(v)} point(s) enclose no volume; expected a solid (at least 4 points "
            "not in one plane, a closed mesh for the mass)"
        )
    if not np.isfinite(v).all():
        raise ValueError(f"{what}: vertices contain NaN or infinite values; expected finite metres")
    if f_raw.dtype.kind not in "iu":
        if f_raw.dtype.kind == "f" and f_raw.size and np.all(f_raw == np.round(f_raw)):
            f_raw = f_raw.astype(np.int64)
        else:
            raise TypeError(f"{what}: triangles have dtype {f_raw.dtype}; expected integer indices")
    f = f_raw.astype(np.int64)
    if f.ndim != 2 or f.shape[1] != 3 or len(f) == 0:
        raise ValueError(f"{what}: triangles have shape {f.shape}; expected (F, 3) with F >= 1")
    if f.min() < 0 or f.max() >= len(v):
        raise ValueError(
            f"{what}: triangle indices span {f.min()}..{f.max()}; expected 0..{len(v) - 1}"
        )
    return v, f


def weld(vertices: Points, triangles: Triangles, decimals: int = 9) -> tuple[Points, Triangles]:
    """Merge vertices at the same position (to ``decimals`` metres) and drop degenerate triangles.

    UV and normal seams split vertices in authored meshes; welding makes the
    surface's connectivity visible to :func:`split_parts` and :func:`is_closed`.
    """
    keys = np.round(vertices, decimals)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    first = np.full(len(unique), len(vertices), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(vertices)))
    tri = inverse[triangles]
    keep = (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])
    return vertices[first], tri[keep]


def split_parts(vertices: Points, triangles: Triangles) -> list[tuple[Points, Triangles]]:
    """Connected parts (triangles sharing a vertex), each re-indexed, largest first.

    Parts of the same size keep the order of their lowest vertex index.
    """
    labels = _component_labels(len(vertices), triangles)
    face_label = labels[triangles[:, 0]]
    parts = []
    for label in np.unique(face_label):
        faces = triangles[face_label == label]
        used, local = np.unique(faces, return_inverse=True)
        parts.append((vertices[used], local.reshape(-1, 3).astype(np.int64)))
    parts.sort(key=lambda p: -len(p[1]))
    return parts


def _component_labels(count: int, triangles: Triangles) -> NDArray[np.int64]:
    """Per vertex, the lowest vertex index of its connected part (edges of ``triangles``).

    Union by lowest root, then pointer jumping, until every edge joins one root: a few
    rounds (logarithmic in the part's size), each a handful of numpy passes over the edges.
    """
    root = np.arange(count, dtype=np.int64)
    a = np.concatenate([triangles[:, 0], triangles[:, 1]])
    b = np.concatenate([triangles[:, 1], triangles[:, 2]])
    while True:
        ra, rb = root[a], root[b]
        apart = ra != rb
        if not apart.any():
            return root
        ra, rb = ra[apart], rb[apart]
        np.minimum.at(root, np.maximum(ra, rb), np.minimum(ra, rb))
        while True:  # every vertex points at its root
            jumped = root[root]
            if np.array_equal(jumped, root):
                break
            root = jumped
        a, b = a[apart], b[apart]


def is_closed(triangles: Triangles) -> bool:
    """Every directed edge appears once and its reverse once (closed, consistently oriented)."""
    edges = np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]])
    width = int(edges.max()) + 1
    code = edges[:, 0] * width + edges[:, 1]
    if len(np.unique(code)) != len(code):
        return False
    reverse = edges[:, 1] * width + edges[:, 0]
    return bool(np.isin(reverse, code).all())


def compute_mass_properties(vertices: Points, triangles: Triangles) -> MassProperties:
    """Volume, centre and inertia of a closed mesh (signed tetrahedra from the origin).

    Each triangle ``(a, b, c)`` spans a tetrahedron with the origin of signed
    volume ``det[a b c] / 6``; the second moment of a tetrahedron ``A = [a b c]``
    is ``det(A) · A S Aᵀ`` with ``S = (1 + I) / 120`` (the canonical
    tetrahedron's), summed and shifted to the centre (parallel axis theorem).
    """
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    det = np.einsum("ij,ij->i", a, np.cross(b, c))
    volume = det.sum() / 6.0
    if abs(volume) < 1e-18:
        return MassProperties(0.0, vertices.mean(axis=0), np.zeros((3, 3)))
    center = (det[:, None] * (a + b + c)).sum(axis=0) / (24.0 * volume)
    s = a + b + c
    # ∫ x xᵀ dV = Σ det/120 · (a aᵀ + b bᵀ + c cᵀ + s sᵀ)
    second = (
        np.einsum("i,ij,ik->jk", det, a, a)
        + np.einsum("i,ij,ik->jk", det, b, b)
        + np.einsum("i,ij,ik->jk", det, c, c)
        + np.einsum("i,ij,ik->jk", det, s, s)
    ) / 120.0
    second -= volume * np.outer(center, center)
    inertia = np.trace(second) * np.eye(3) - second
    return MassProperties(float(volume), center, inertia)


class Hull(NamedTuple):
    """Convex hull of a point set."""

    vertices: Points
    """(K, 3) hull vertices."""
    triangles: Triangles
    """(M, 3) outward-facing triangles."""
    planes: NDArray[np.float64]
    """(M, 4) facet planes ``n·x + d <= 0`` inside."""
    volume: float
    """m³."""
    area: float
    """m²."""


def convex_hull(vertices: Points) -> Hull | None:
    """Convex hull (qhull); ``None`` when the points span no volume (flat or collinear)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(vertices)
    except (QhullError, ValueError):
        return None
    if hull.volume <= 0:
        return None
    simplices = hull.simplices.copy()
    a, b, c = (vertices[simplices[:, k]] for k in range(3))
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0
    simplices[inward] = simplices[inward][:, [0, 2, 1]]  # qhull does not orient its facets
    used, local = np.unique(simplices, return_inverse=True)
    return Hull(
        vertices[used],
        local.reshape(-1, 3).astype(np.int64),
        hull.equations,
        float(hull.volume),
        float(hull.area),
    )


#: Points tested against the hull's planes at a time (bounds the (points x planes) array).
_CHUNK = 4096


#: Most (triangle, vertex) pairs :func:`is_convex` tests without a hull (larger: qhull).
_PLANE_TEST_PAIRS = 4_000_000
#: :func:`is_convex` without a hull: every vertex within this fraction of the tolerance
#: behind every triangle's plane (far inside the tolerance, so the hull's answer is the same).
_PLANE_TEST_SLACK = 1e-3


def is_convex(vertices: Points, triangles: Triangles, tolerance: float) -> bool:
    """Whether the part is its own convex hull (within ``tolerance`` metres).

    A closed part is convex when its volume equals its hull's, up to a shell of
    ``tolerance`` over the hull's surface; an open part when every vertex and
    triangle centre lies on the hull. A concave part has surface inside its hull
    (a mug's inner wall, a torus's hole). A closed, outward-facing part with every vertex
    behind every one of its triangles' planes is convex without computing the hull
    (:func:`_behind_every_face`).
    """
    closed = is_closed(triangles)
    if closed and _behind_every_face(vertices, triangles, tolerance * _PLANE_TEST_SLACK):
        return True
    hull = convex_hull(vertices)
    if hull is None:
        return False
    if closed:
        volume = abs(compute_mass_properties(vertices, triangles).volume)
        return hull.volume - volume <= tolerance * hull.area
    points = np.concatenate([vertices, vertices[triangles].mean(axis=1)])
    normals, offsets = hull.planes[:, :3].T, hull.planes[:, 3]
    for start in range(0, len(points), _CHUNK):
        distance = points[start : start + _CHUNK] @ normals + offsets
        if (distance.max(axis=1) < -tolerance).any():
            return False
    return True


def _behind_every_face(vertices: Points, triangles: Triangles, slack: float) -> bool:
    """Whether a closed part is its own hull, decided without the hull.

    True when it encloses a volume and no vertex lies more than ``slack`` metres in front
    of any of its triangles' planes. False (undecided: the caller asks the hull) for a
    part too large to test (:data:`_PLANE_TEST_PAIRS`), without slack, or facing inward.
    """
    if slack <= 0 or len(triangles) * len(vertices) > _PLANE_TEST_PAIRS:
        return False
    if compute_mass_properties(vertices, triangles).volume <= 0:
        return False
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    normals = np.cross(b - a, c - a)
    lengths = np.linalg.norm(normals, axis=1)
    keep = lengths > 0  # a degenerate triangle bounds nothing
    normals = normals[keep] / lengths[keep, None]
    offsets = np.einsum("ij,ij->i", normals, a[keep])
    return bool((vertices @ normals.T - offsets <= slack).all())


def thicken_flat(vertices: Points, thickness: float) -> Points:
    """A flat (zero-volume) point set extruded by ``thickness`` along its thinnest axis."""
    centred = vertices - vertices.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    normal = vt[-1]
    return np.concatenate([vertices + normal * thickness / 2, vertices - normal * thickness / 2])
