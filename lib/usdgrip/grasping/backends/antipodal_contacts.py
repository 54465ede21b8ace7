"""Ray casting for the antipodal backend: surface points, opposing contacts, palm clearance.

Ray casting uses trimesh with Intel Embree (``embreex``) when it is installed and
trimesh's pure-python/rtree intersector otherwise (:func:`get_ray_backend`).
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import Poses

RayBackend = Literal["auto", "embree", "triangle"]

#: Ray origins start this fraction of the mesh's bounding-box diagonal inside
#: the surface, so the ray does not hit the triangle it starts on (Embree
#: works in float32). trimesh's pure-python intersector accepts hits slightly
#: behind the origin, so it needs a larger offset.
RAY_OFFSET_FRACTION = {"embree": 1e-6, "triangle": 1e-4}
#: Contact pairs closer than this fraction of the bounding-box diagonal are
#: degenerate (a ray that re-hit its own sliver) and dropped.
MIN_WIDTH_FRACTION = 1e-5
#: Rays per call to trimesh's pure-python intersector, which builds per-ray
#: candidate arrays and runs out of memory on large batches.
TRIANGLE_CHUNK = 16
#: Shell boundaries one ray may cross looking for the outer exit.
MAX_SHELL_CROSSINGS = 8


class ContactPairs(NamedTuple):
    """Antipodal contact pairs before approach directions are chosen (one row per pair)."""

    points: NDArray[np.float64]  # (P, 2, 3)
    normals: NDArray[np.float64]  # (P, 2, 3) outward normals at both contacts
    widths: NDArray[np.float64]  # (P,)
    antipodality: NDArray[np.float64]  # (P,) 1 - worst cone angle / cone half-angle, in [0, 1]


def get_ray_backend(backend: RayBackend = "auto") -> str:
    """Resolve ``backend`` to ``"embree"`` or ``"triangle"``.

    Raises:
        ValueError: ``backend`` is unknown, or ``"embree"`` was asked but embreex
            is not importable.
    """
    if backend not in ("auto", "embree", "triangle"):
        raise ValueError(f"ray backend is {backend!r}; expected 'auto', 'embree' or 'triangle'")
    from trimesh.ray import has_embree

    if backend == "embree" and not has_embree:
        raise ValueError(
            "ray backend 'embree' asked but embreex is not importable; install the 'plan' "
            "extra (embreex, x86_64 only) or use backend 'triangle'"
        )
    if backend == "auto":
        return "embree" if has_embree else "triangle"
    return backend


def _make_intersector(vertices: NDArray, faces: NDArray, backend: str):
    import trimesh

    mesh = trimesh.Trimesh(vertices=vertices, faces=faces, process=False, validate=False)
    if backend == "embree":
        from trimesh.ray.ray_pyembree import RayMeshIntersector
    else:
        # Pure-python triangle tests over an rtree of triangle boxes (trimesh's fallback).
        from trimesh.ray.ray_triangle import RayMeshIntersector
    return RayMeshIntersector(mesh)


def check_mesh_arrays(vertices: ArrayLike, faces: ArrayLike) -> tuple[NDArray, NDArray]:
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces)
    if v.ndim != 2 or v.shape[1] != 3 or len(v) == 0:
        raise ValueError(f"vertices have shape {v.shape}; expected (V, 3) with V > 0")
    if f.ndim != 2 or f.shape[1] != 3 or len(f) == 0:
        raise ValueError(f"faces have shape {f.shape}; expected (F, 3) with F > 0")
    if not np.issubdtype(f.dtype, np.integer):
        raise TypeError(f"faces have dtype {f.dtype}; expected integer vertex indices")
    f = f.astype(np.int64)
    if f.min() < 0 or f.max() >= len(v):
        raise ValueError(f"faces index {int(f.min())}..{int(f.max())}; expected 0..{len(v) - 1}")
    if not np.all(np.isfinite(v)):
        raise ValueError("vertices contain non-finite coordinates; expected finite values")
    return v, f


def check_sampler_parameters(
    max_opening: float, count: int, clearance: float, mu: float, approach_samples: int
) -> None:
    if not (math.isfinite(max_opening) and max_opening > 0):
        raise ValueError(f"max_opening is {max_opening}; expected a finite value > 0")
    if not (math.isfinite(clearance) and 0 <= clearance < max_opening):
        raise ValueError(
            f"clearance is {clearance}; expected 0 <= clearance < max_opening ({max_opening})"
        )
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"friction_coefficient is {mu}; expected a finite value > 0")
    if int(count) != count or count < 1:
        raise ValueError(f"count is {count}; expected an integer >= 1")
    if int(approach_samples) != approach_samples or approach_samples < 1:
        raise ValueError(f"approach_samples is {approach_samples}; expected an integer >= 1")


def compute_face_normals(vertices: NDArray, faces: NDArray) -> tuple[NDArray, NDArray]:
    """Unit outward normals (F, 3) and areas (F,) of triangles; zero-area faces get a zero normal.

    When the mesh's signed volume is negative (wound inside-out) every normal is
    flipped, so normals point out of the solid either way.
    """
    v0, v1, v2 = (vertices[faces[:, i]] for i in range(3))
    cross = np.cross(v1 - v0, v2 - v0)
    double_area = np.linalg.norm(cross, axis=1)
    normals = np.divide(
        cross, double_area[:, None], out=np.zeros_like(cross), where=double_area[:, None] > 0
    )
    # Divergence theorem: 6 V = sum over faces of v0 . (e1 x e2).
    if np.einsum("ij,ij->", v0, cross) < 0:
        normals = -normals
    return normals, 0.5 * double_area


def sample_surface_points(
    vertices: NDArray, faces: NDArray, areas: NDArray, count: int, rng: np.random.Generator
) -> tuple[NDArray, NDArray]:
    """Area-weighted uniform points on the surface: (count, 3) points and (count,) face ids."""
    cumulative = np.cumsum(areas)
    face = np.searchsorted(cumulative, rng.random(count) * cumulative[-1], side="right")
    face = np.minimum(face, len(faces) - 1)
    # Uniform barycentric coordinates by the square-root trick (Osada et al. 2002).
    r1, r2 = rng.random((2, count))
    s = np.sqrt(r1)
    w = np.stack([1.0 - s, s * (1.0 - r2), s * r2], axis=1)
    corners = vertices[faces[face]]  # (count, 3, 3)
    return np.einsum("ij,ijk->ik", w, corners), face


def find_first_hits(
    intersector, vertices: NDArray, faces: NDArray, origins: NDArray, directions: NDArray
) -> tuple[NDArray, NDArray]:
    """First triangle hit by each ray (-1 for none) and the float64 ray parameter of the hit.

    The hit point is recomputed in float64 from the triangle's plane, because
    Embree reports float32 positions.
    """
    chunk = TRIANGLE_CHUNK if "ray_triangle" in type(intersector).__module__ else len(origins)
    tri = np.concatenate(
        [
            np.asarray(
                intersector.intersects_first(origins[i : i + chunk], directions[i : i + chunk])
            )
            for i in range(0, len(origins), max(chunk, 1))
        ]
        or [np.zeros(0)]
    ).astype(np.int64)
    t = np.full(len(origins), np.nan)
    hit = tri >= 0
    if np.any(hit):
        t[hit] = _plane_hits(vertices, faces, tri[hit], origins[hit], directions[hit])[1]
    return tri, t


def _plane_hits(
    vertices: NDArray, faces: NDArray, tri: NDArray, origins: NDArray, directions: NDArray
) -> tuple[NDArray, NDArray]:
    """Ray parameter ``t`` where each ray meets its triangle's plane (float64); NaN if parallel."""
    v0 = vertices[faces[tri, 0]]
    n = np.cross(vertices[faces[tri, 1]] - v0, vertices[faces[tri, 2]] - v0)
    denom = np.einsum("ij,ij->i", directions, n)
    num = np.einsum("ij,ij->i", v0 - origins, n)
    return tri, np.divide(num, denom, out=np.full(len(num), np.nan), where=denom != 0)


def _walk_to_exit(
    intersector,
    vertices: NDArray,
    faces: NDArray,
    normals: NDArray,
    starts: NDArray,
    directions: NDArray,
    start_faces: NDArray,
    max_distance: float,
    offset: float,
) -> NDArray[np.int64]:
    """Triangle where each ray from a surface point into the solid leaves it for good.

    A depth counter walks the hits along the ray: a face whose outward normal
    points along the ray leaves a shell (depth - 1), one facing the ray enters
    another shell (depth + 1). Starting inside one shell (depth 1), the exit is
    the hit that brings depth to 0, so overlapping closed shells (a tote built
    from boxes) give the outer width, not the first buried face.

    Returns:
        (N,) triangle index, -1 where the ray escapes, re-hits its start face,
        goes beyond ``max_distance`` or needs more than :data:`MAX_SHELL_CROSSINGS`.
    """
    count = len(starts)
    result = np.full(count, -1, dtype=np.int64)
    depth = np.ones(count, dtype=np.int64)
    origins = starts + offset * directions
    active = np.arange(count)
    for _ in range(MAX_SHELL_CROSSINGS):
        if len(active) == 0:
            break
        tri, t = find_first_hits(intersector, vertices, faces, origins[active], directions[active])
        travelled = np.einsum("ij,ij->i", origins[active] - starts[active], directions[active])
        alive = (tri >= 0) & np.isfinite(t) & (travelled + np.nan_to_num(t) <= max_distance)
        alive &= tri != start_faces[active]
        active, tri, t = active[alive], tri[alive], t[alive]
        leaving = np.einsum("ij,ij->i", normals[tri], directions[active]) > 0
        depth[active] += np.where(leaving, -1, 1)
        done = depth[active] == 0
        result[active[done]] = tri[done]
        active, t = active[~done], t[~done]
        origins[active] += directions[active] * (t + offset)[:, None]
    return result


def find_contact_pairs(
    vertices: ArrayLike,
    faces: ArrayLike,
    max_width: float,
    *,
    rng: np.random.Generator,
    point_count: int,
    friction_coefficient: float = 0.5,
    ray_backend: RayBackend = "auto",
    _cache: dict | None = None,
) -> ContactPairs:
    """Sample ``point_count`` surface points; keep antipodal pairs no wider than ``max_width``.

    Contact 1 is the sampled point with outward normal n1; contact 2 is where
    the ray along ``-n1`` leaves the solid. A pair is kept when the width is in
    ``(min, max_width]``, both contact normals lie within the friction cone
    (half-angle ``atan(mu)``) of the contact line, and neither contact is
    hidden inside another shell (a short ray outward from each contact must not
    first leave a solid).

    Returns:
        The kept pairs in sampling order.
    """
    v, f = check_mesh_arrays(vertices, faces)
    cache = {} if _cache is None else _cache
    if "normals" not in cache:
        cache["normals"], cache["areas"] = compute_face_normals(v, f)
        cache["backend"] = get_ray_backend(ray_backend)
        cache["intersector"] = _make_intersector(v, f, cache["backend"])
        cache["scale"] = float(np.linalg.norm(np.ptp(v, axis=0))) or 1.0
    normals, areas, intersector = cache["normals"], cache["areas"], cache["intersector"]
    if not np.any(areas > 0):
        raise ValueError("every triangle has zero area; expected a mesh with a surface")
    offset = RAY_OFFSET_FRACTION[cache["backend"]] * cache["scale"]
    points, face = sample_surface_points(v, f, areas, point_count, rng)
    n1 = normals[face]
    line = -n1  # unit, contact 1 -> contact 2
    tri = _walk_to_exit(intersector, v, f, normals, points, line, face, max_width, offset)
    ok = tri >= 0
    idx = np.flatnonzero(ok)
    p1, n1, tri, line = points[idx], n1[idx], tri[idx], line[idx]
    # Exact float64 width from contact 1 to the exit triangle's plane.
    _, width = _plane_hits(v, f, tri, p1, line)
    keep = np.isfinite(width) & (width > MIN_WIDTH_FRACTION * cache["scale"])
    keep &= width <= max_width
    p1, n1, tri, line, width = (a[keep] for a in (p1, n1, tri, line, width))
    p2 = p1 + line * width[:, None]
    n2 = normals[tri]
    # Friction cones: the jaw at contact 1 pushes along +line (inside cone about -n1),
    # the jaw at contact 2 along -line (inside cone about -n2).
    angle1 = np.arccos(np.clip(-np.einsum("ij,ij->i", n1, line), -1.0, 1.0))
    angle2 = np.arccos(np.clip(np.einsum("ij,ij->i", n2, line), -1.0, 1.0))
    cone = math.atan(friction_coefficient)
    worst = np.maximum(angle1, angle2)
    keep = worst <= cone
    p1, p2, n1, n2, width, worst, line = (a[keep] for a in (p1, p2, n1, n2, width, worst, line))
    if len(p1):
        # Contact 1 must be on the outer surface: a ray leaving it outward must not first
        # leave another solid (then the sample sits on a face buried in an overlapping shell).
        out_tri, _ = find_first_hits(intersector, v, f, p1 - offset * line, -line)
        hit = out_tri >= 0
        buried = np.zeros(len(p1), dtype=bool)
        buried[hit] = np.einsum("ij,ij->i", normals[out_tri[hit]], -line[hit]) > 0
        p1, p2, n1, n2, width, worst = (a[~buried] for a in (p1, p2, n1, n2, width, worst))
    return ContactPairs(
        points=np.stack([p1, p2], axis=1),
        normals=np.stack([n1, n2], axis=1),
        widths=width,
        antipodality=1.0 - worst / cone,
    )


def compute_palm_free(cache: dict, v: NDArray, f: NDArray, poses: Poses) -> NDArray[np.float64]:
    """Free distance along -Z behind the object from each grasp centre (inf when none).

    The centre lies inside the solid (between the contacts); the ray first walks
    out of the solid (depth counter, as for contacts), then the next hit is other
    geometry of the object where the palm would go.
    """
    z, centre = poses[:, :3, 2], poses[:, :3, 3]
    offset = RAY_OFFSET_FRACTION[cache["backend"]] * cache["scale"]
    big = 10.0 * cache["scale"]
    exit_tri = _walk_to_exit(
        cache["intersector"], v, f, cache["normals"], centre, -z,
        np.full(len(z), -1, dtype=np.int64), big, offset,
    )  # fmt: skip
    free = np.full(len(z), np.inf)
    out = exit_tri >= 0
    if np.any(out):
        _, t_exit = _plane_hits(v, f, exit_tri[out], centre[out], -z[out])
        origins = centre[out] - z[out] * (np.nan_to_num(t_exit) + offset)[:, None]
        tri, t = find_first_hits(cache["intersector"], v, f, origins, -z[out])
        free[out] = np.where((tri >= 0) & np.isfinite(t), t + offset, np.inf)
    return free
