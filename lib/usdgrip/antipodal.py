"""Antipodal parallel-jaw grasp sampling on a triangle mesh (numpy + trimesh, no pxr).

For each surface point sampled by area, a ray is cast along the inward face
normal; the first triangle it leaves the solid through is the opposing
contact. Pairs that fit the gripper and lie inside both friction cones become
grasps, each turned into several approach directions around the closing
axis, rated by where they come from (:func:`compute_approach_quality`) and
thinned per contact pair by a soft non-maximum suppression
(:func:`compute_pair_decay`). Ray casting uses trimesh with Intel Embree (``embreex``) when it is
installed and trimesh's pure-python/rtree intersector otherwise.

Grasp frame G (GraspGenX): ``+X`` closes from contact 1 to contact 2, ``+Z``
is the approach direction, ``+Y = Z × X``, origin at the contacts' midpoint.
All lengths are in the mesh's units (metres when the mesh comes from
:func:`usdgrip.usd.geometry.read_object_mesh`).
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
#: Sampling rounds before giving up on finding ``count`` candidates.
MAX_ROUNDS = 6
#: Largest number of surface points sampled in one round.
MAX_ROUND_POINTS = 200_000
#: Default weight of the approach quality in the score (see :func:`compute_approach_quality`).
DEFAULT_APPROACH_WEIGHT = 0.3
#: Default soft-NMS factor: the k-th best approach of one contact pair (k = 0, 1, ...)
#: has its score multiplied by ``PAIR_DECAY ** k``.
DEFAULT_PAIR_DECAY = 0.5
#: Below this fraction of the bounding-box diagonal, the offset between the grasp
#: centre and the object's centroid fades out of the centroid term.
CENTROID_FADE_FRACTION = 0.1
#: Weight of the support term in the approach quality (the others weigh 1).
SUPPORT_TERM_WEIGHT = 2.0


class AntipodalGrasps(NamedTuple):
    """Antipodal grasp candidates, best first.

    Attributes:
        poses: (N, 4, 4) grasp frames G in the mesh frame (columns X closing,
            Y, Z approach, origin at the contact midpoint).
        widths: (N,) distance between the contacts (the jaw opening needed).
        scores: (N,) ranking score in [0, 1]; higher is better.
        contacts: (N, 2, 3) contact 1 (sampled point) and contact 2 (ray hit);
            ``contacts[:, 1] - contacts[:, 0]`` points along +X.
    """

    poses: Poses
    widths: NDArray[np.float64]
    scores: NDArray[np.float64]
    contacts: NDArray[np.float64]


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


def _check_mesh(vertices: ArrayLike, faces: ArrayLike) -> tuple[NDArray, NDArray]:
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


def _check_parameters(
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


def _first_hits(
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
        tri, t = _first_hits(intersector, vertices, faces, origins[active], directions[active])
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
    v, f = _check_mesh(vertices, faces)
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
        out_tri, _ = _first_hits(intersector, v, f, p1 - offset * line, -line)
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


def compute_approach_frames(
    contacts: ArrayLike, approach_samples: int, rng: np.random.Generator
) -> Poses:
    """Grasp frames around each contact pair's closing axis.

    For each pair, ``approach_samples`` approach directions are spaced evenly
    around X starting at a random phase (drawn from ``rng``), measured from a
    deterministic reference perpendicular (Gram-Schmidt of the world axis least
    aligned with X).

    Args:
        contacts: (P, 2, 3) contact 1 and contact 2.
        approach_samples: directions per pair.
        rng: source of the phases.

    Returns:
        (P * approach_samples, 4, 4) poses, pair-major (all approaches of pair 0 first).
    """
    c = np.asarray(contacts, dtype=np.float64).reshape(-1, 2, 3)
    x = c[:, 1] - c[:, 0]
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    helper = np.zeros_like(x)
    helper[np.arange(len(x)), np.argmin(np.abs(x), axis=1)] = 1.0
    ref = helper - np.einsum("ij,ij->i", helper, x)[:, None] * x
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    ref2 = np.cross(x, ref)
    step = 2.0 * math.pi / approach_samples
    phase = rng.uniform(0.0, step, size=len(x))
    angles = phase[:, None] + step * np.arange(approach_samples)[None, :]  # (P, A)
    cos, sin = np.cos(angles)[..., None], np.sin(angles)[..., None]
    z = cos * ref[:, None, :] + sin * ref2[:, None, :]  # (P, A, 3), rotation of ref about X
    x_rep = np.broadcast_to(x[:, None, :], z.shape)
    y = np.cross(z, x_rep)
    poses = np.zeros((*z.shape[:2], 4, 4))
    poses[..., :3, 0], poses[..., :3, 1], poses[..., :3, 2] = x_rep, y, z
    poses[..., :3, 3] = (0.5 * (c[:, 0] + c[:, 1]))[:, None, :]
    poses[..., 3, 3] = 1.0
    return poses.reshape(-1, 4, 4)


class ApproachQuality(NamedTuple):
    """Per-frame approach terms, each in [0, 1] (1 best); ``support`` is NaN without a normal."""

    centroid: NDArray[np.float64]  # (N,)
    support: NDArray[np.float64]  # (N,)
    palm: NDArray[np.float64]  # (N,)
    quality: NDArray[np.float64]  # (N,) mean of the available terms


def compute_centroid(vertices: ArrayLike, faces: ArrayLike) -> NDArray[np.float64]:
    """Centroid (3,) of the solid bounded by a closed mesh.

    The surface's area centroid when the enclosed volume is ~0. An inside-out
    mesh gives the same point (both sums change sign).
    """
    v, f = _check_mesh(vertices, faces)
    v0, v1, v2 = (v[f[:, i]] for i in range(3))
    # Tetrahedra (origin, v0, v1, v2): signed volume v0 . (v1 x v2) / 6, centroid sum / 4.
    six_volume = np.einsum("ij,ij->i", v0, np.cross(v1, v2))
    total = six_volume.sum()
    scale = float(np.linalg.norm(np.ptp(v, axis=0))) or 1.0
    if abs(total) > 1e-12 * scale**3:
        return (six_volume[:, None] * (v0 + v1 + v2)).sum(axis=0) / (4.0 * total)
    areas = 0.5 * np.linalg.norm(np.cross(v1 - v0, v2 - v0), axis=1)
    return (areas[:, None] * (v0 + v1 + v2) / 3.0).sum(axis=0) / max(areas.sum(), 1e-300)


def compute_approach_quality(
    poses: Poses,
    centroid: ArrayLike,
    scale: float,
    *,
    palm_free: NDArray[np.float64] | None = None,
    palm_range: float = 1.0,
    support_normal: ArrayLike | None = None,
) -> ApproachQuality:
    """How good each approach direction (+Z of G) is, independent of the contact pair.

    Terms, each in [0, 1]:

    - ``centroid = 0.5 + 0.5 * z . d / max(|d|, r0)``, ``d`` from the grasp centre
      to the object's centroid, ``r0 = CENTROID_FADE_FRACTION * scale``: 1 when the
      gripper comes from outside toward the object's interior (palm away from the
      bulk), 0 from the far side; fades to 0.5 for grasps through the centroid.
    - ``support = 0.5 - 0.5 * z . n``, ``n`` the unit support (table) normal:
      1 straight down onto the object, 0.5 from the side, 0 from beneath; NaN
      (left out) without a normal.
    - ``palm = min(free, palm_range) / palm_range``, ``free`` the distance behind
      the object, along -Z, to other geometry of the object (``palm_free``;
      ``inf`` when none): approaches whose palm side is crowded rank lower.
      1 when ``palm_free`` is not given.

    ``quality`` is the weighted mean of the available terms, the support term
    counting double (:data:`SUPPORT_TERM_WEIGHT`): a real cell cannot approach
    from under the table, so top-down always beats from-beneath for one pair.

    Args:
        poses: (N, 4, 4) grasp frames.
        centroid: (3,) the object's centroid (:func:`compute_centroid`).
        scale: the object's size (bounding-box diagonal), same unit.
        palm_free: (N,) free distance behind the object along -Z, or None.
        palm_range: distance at which the palm term saturates (> 0).
        support_normal: (3,) upward support normal (any length), or None.
    """
    p = np.asarray(poses, dtype=np.float64).reshape(-1, 4, 4)
    z, centre = p[:, :3, 2], p[:, :3, 3]
    d = np.asarray(centroid, dtype=np.float64).reshape(1, 3) - centre
    reach = np.maximum(np.linalg.norm(d, axis=1), CENTROID_FADE_FRACTION * float(scale))
    centroid_term = np.clip(0.5 + 0.5 * np.einsum("ij,ij->i", z, d) / reach, 0.0, 1.0)
    terms = [centroid_term]
    support = np.full(len(p), np.nan)
    if support_normal is not None:
        n = np.asarray(support_normal, dtype=np.float64).reshape(3)
        norm = float(np.linalg.norm(n))
        if not (math.isfinite(norm) and norm > 0):
            raise ValueError(f"support_normal is {n.tolist()}; expected a non-zero finite vector")
        support = np.clip(0.5 - 0.5 * (z @ n) / norm, 0.0, 1.0)
        terms.append(support)
    palm = np.ones(len(p))
    if palm_free is not None:
        palm = np.clip(np.asarray(palm_free, dtype=np.float64) / palm_range, 0.0, 1.0)
        terms.append(palm)
    weights = [1.0] * len(terms)
    if support_normal is not None:
        weights[1] = SUPPORT_TERM_WEIGHT
    return ApproachQuality(centroid_term, support, palm, np.average(terms, axis=0, weights=weights))


def compute_pair_decay(scores: ArrayLike, pairs: ArrayLike, decay: float) -> NDArray[np.float64]:
    """Soft non-maximum suppression over contact pairs.

    Within each pair (same value in ``pairs``), the approach ranked k-th by
    score (k = 0 best; ties by position) is multiplied by ``decay ** k``, so a
    best-first list visits many contact pairs before it repeats one.

    Args:
        scores: (N,) scores.
        pairs: (N,) integer pair label of each score.
        decay: factor in (0, 1]; 1 leaves the scores unchanged.

    Returns:
        (N,) decayed scores, same order as the input.
    """
    s = np.asarray(scores, dtype=np.float64)
    g = np.asarray(pairs)
    if len(s) == 0 or decay == 1.0:
        return s.copy()
    order = np.lexsort((np.arange(len(s)), -s, g))  # by pair, then best first
    sorted_pairs = g[order]
    starts = np.r_[0, np.flatnonzero(sorted_pairs[1:] != sorted_pairs[:-1]) + 1]
    first = np.repeat(starts, np.diff(np.r_[starts, len(s)]))
    rank = np.empty(len(s), dtype=np.int64)
    rank[order] = np.arange(len(s)) - first
    return s * float(decay) ** rank


def _compute_palm_free(cache: dict, v: NDArray, f: NDArray, poses: Poses) -> NDArray[np.float64]:
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
        tri, t = _first_hits(cache["intersector"], v, f, origins, -z[out])
        free[out] = np.where((tri >= 0) & np.isfinite(t), t + offset, np.inf)
    return free


def sample_antipodal_grasps(
    vertices: ArrayLike,
    faces: ArrayLike,
    max_opening: float,
    *,
    rng: np.random.Generator,
    count: int = 1000,
    clearance: float = 0.005,
    friction_coefficient: float = 0.5,
    approach_samples: int = 8,
    pad_width: float | None = None,
    clearance_weight: float = 0.25,
    ray_backend: RayBackend = "auto",
    support_normal: ArrayLike | None = None,
    approach_weight: float = DEFAULT_APPROACH_WEIGHT,
    pair_decay: float = DEFAULT_PAIR_DECAY,
) -> AntipodalGrasps:
    """Sample antipodal parallel-jaw grasps on a closed triangle mesh.

    Surface points are drawn by area; a ray along each point's inward normal
    finds the opposing contact. A pair is kept when its width is at most
    ``max_opening - clearance`` and both normals lie within the friction cone
    (half-angle ``atan(mu)``) of the contact line. Each pair gives
    ``approach_samples`` frames rotated about the closing axis X. Sampling
    repeats (at most :data:`MAX_ROUNDS` rounds) until ``ceil(count /
    approach_samples)`` pairs are found; the first that many pairs in sampling
    order are kept (an unbiased spread over the surface, not the best-scoring
    ones), and their frames are returned best first, at most ``count``.

    Score (in [0, 1]): ``(1 - w) * antipodality + w * margin`` with ``w =
    clearance_weight``, ``antipodality = 1 - worst_cone_angle / atan(mu)`` and
    ``margin = (usable - width) / usable``, ``usable = max_opening - clearance``.
    Each frame's score is then multiplied by ``1 - approach_weight * (1 -
    quality)``, ``quality`` in [0, 1] rating its approach direction
    (:func:`compute_approach_quality`: toward the object's centroid, away from
    ``support_normal``, nothing of the object behind it where the palm goes),
    and by ``pair_decay ** k`` for the k-th best approach of the same contact
    pair (:func:`compute_pair_decay`, soft non-maximum suppression), so the
    best-first list spreads over contact pairs. ``approach_weight=0`` and
    ``pair_decay=1`` give every approach of a pair its pair's score. Ties keep
    sampling order.

    Args:
        vertices: (V, 3) positions, any length unit (metres from USD).
        faces: (F, 3) vertex indices, wound counter-clockwise from outside (an
            inside-out mesh is detected by its signed volume and handled).
        max_opening: the gripper's maximum jaw opening, same unit as ``vertices``.
        rng: the only source of randomness; the same generator state gives
            identical output.
        count: maximum number of grasps returned.
        clearance: opening kept free beyond the contact width.
        friction_coefficient: Coulomb friction coefficient mu (> 0).
        approach_samples: approach directions per contact pair.
        pad_width: jaw pad width along Y; when given, grasps whose pads would
            overhang the surface along Y are ranked lower: the score is multiplied
            by ``0.5 + 0.5 * support``, ``support`` the fraction of the four pad
            edges that rest on the surface (:func:`_compute_pad_support`);
            ``None`` skips the pad check.
        clearance_weight: weight of the width margin in the score, in [0, 1].
        ray_backend: "auto" (Embree when available), "embree" or "triangle".
        support_normal: (3,) upward normal of the surface the object rests on, in
            the mesh frame, or None (no support term).
        approach_weight: weight of the approach quality, in [0, 1].
        pair_decay: soft-NMS factor per extra approach of one pair, in (0, 1].

    Returns:
        :class:`AntipodalGrasps`, best first; fewer than ``count`` (possibly
        zero) when the object has too few graspable pairs.

    Raises:
        ValueError: a parameter is out of range or the mesh arrays are malformed.
        TypeError: ``faces`` is not an integer array or ``rng`` is not a Generator.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng is {type(rng).__name__}; expected numpy.random.Generator")
    max_opening = float(max_opening)
    _check_parameters(
        max_opening, count, float(clearance), float(friction_coefficient), approach_samples
    )
    if not (0.0 <= clearance_weight <= 1.0):
        raise ValueError(f"clearance_weight is {clearance_weight}; expected a value in [0, 1]")
    if pad_width is not None and not (math.isfinite(pad_width) and pad_width > 0):
        raise ValueError(f"pad_width is {pad_width}; expected a finite value > 0 or None")
    if not (0.0 <= approach_weight <= 1.0):
        raise ValueError(f"approach_weight is {approach_weight}; expected a value in [0, 1]")
    if not (0.0 < pair_decay <= 1.0):
        raise ValueError(f"pair_decay is {pair_decay}; expected a value in (0, 1]")
    if support_normal is not None:
        normal = np.asarray(support_normal, dtype=np.float64)
        if normal.shape != (3,) or not np.all(np.isfinite(normal)) or not normal.any():
            raise ValueError(
                f"support_normal is {normal.tolist()}; expected a non-zero finite (3,) vector"
            )
    v, f = _check_mesh(vertices, faces)
    usable = max_opening - float(clearance)
    pairs_needed = math.ceil(count / approach_samples)
    cache: dict = {}
    found: list[ContactPairs] = []
    total = 0
    point_count = max(64, 2 * pairs_needed)
    for _ in range(MAX_ROUNDS):
        pairs = find_contact_pairs(
            v,
            f,
            usable,
            rng=rng,
            point_count=point_count,
            friction_coefficient=float(friction_coefficient),
            ray_backend=ray_backend,
            _cache=cache,
        )
        found.append(pairs)
        total += len(pairs.widths)
        if total >= pairs_needed:
            break
        # Grow the next round by the observed yield: at least x2, at most x4 and
        # MAX_ROUND_POINTS, so an object with no graspable pair fails fast.
        rate = max(total, 1) / point_count
        wanted = 1.5 * (pairs_needed - total) / rate
        point_count = int(min(max(2 * point_count, wanted), 4 * point_count, MAX_ROUND_POINTS))
    # Keep the first pairs in sampling order (an unbiased sample of the surface), not
    # the best-scoring ones, so candidates stay spread over the object for later filters.
    points = np.concatenate([p.points for p in found])[:pairs_needed]
    widths = np.concatenate([p.widths for p in found])[:pairs_needed]
    antipodality = np.concatenate([p.antipodality for p in found])[:pairs_needed]
    if len(widths) == 0:
        empty = np.zeros((0,))
        return AntipodalGrasps(np.zeros((0, 4, 4)), empty, empty.copy(), np.zeros((0, 2, 3)))
    margin = np.clip((usable - widths) / usable, 0.0, 1.0)
    pair_scores = np.clip(
        (1.0 - clearance_weight) * antipodality + clearance_weight * margin, 0.0, 1.0
    )
    poses = compute_approach_frames(points, approach_samples, rng)
    scores = np.repeat(pair_scores, approach_samples)
    if pad_width is not None:
        support = _compute_pad_support(
            cache["intersector"],
            v,
            f,
            poses,
            np.repeat(points, approach_samples, axis=0),
            pad_width,
        )
        scores = scores * (0.5 + 0.5 * support)
    if approach_weight > 0:
        quality = compute_approach_quality(
            poses,
            compute_centroid(v, f),
            cache["scale"],
            palm_free=_compute_palm_free(cache, v, f, poses),
            palm_range=max_opening,
            support_normal=support_normal,
        ).quality
        scores = scores * (1.0 - approach_weight * (1.0 - quality))
    scores = compute_pair_decay(
        scores, np.repeat(np.arange(len(widths)), approach_samples), pair_decay
    )
    all_widths = np.repeat(widths, approach_samples)
    all_contacts = np.repeat(points, approach_samples, axis=0)
    order = np.argsort(-scores, kind="stable")[:count]
    return AntipodalGrasps(poses[order], all_widths[order], scores[order], all_contacts[order])


def _compute_pad_support(
    intersector,
    vertices: NDArray,
    faces: NDArray,
    poses: Poses,
    contacts: NDArray,
    pad_width: float,
) -> NDArray[np.float64]:
    """Fraction (in [0, 1]) of the four pad edge probes that find surface under the pad.

    For each contact, probes start ``pad_width / 2`` along ±Y from it, just
    outside the surface (backed off along the closing line), and cast toward
    the object along the jaw's closing direction for one pad width. A probe that
    finds a surface within that distance means the pad edge rests on the object.
    """
    x = poses[:, :3, 0]
    y = poses[:, :3, 1]
    half = 0.5 * pad_width
    back = pad_width  # start the probe one pad width outside the contact plane
    origins, directions = [], []
    for jaw, push in ((0, x), (1, -x)):
        for side in (-1.0, 1.0):
            origins.append(contacts[:, jaw] + side * half * y - back * push)
            directions.append(push)
    origins_all = np.concatenate(origins)
    directions_all = np.concatenate(directions)
    _, t = _first_hits(intersector, vertices, faces, origins_all, directions_all)
    on_pad = np.isfinite(t) & (t >= 0) & (t <= 2.0 * back)
    return on_pad.reshape(4, -1).mean(axis=0)


def compute_approach_mask(
    poses: ArrayLike, support_normal: ArrayLike, max_angle_deg: float = 90.0
) -> NDArray[np.bool_]:
    """Keep grasps that do not approach from beneath a support plane (e.g. a table).

    The approach is +Z of each pose, pointing from the gripper toward the
    object; straight down onto the table is ``-support_normal``.

    Args:
        poses: (N, 4, 4) grasp frames.
        support_normal: (3,) the support plane's upward normal (any length).
        max_angle_deg: largest allowed angle between +Z and ``-support_normal``;
            90 allows side grasps, smaller values only top-down ones.

    Returns:
        (N,) boolean mask, True for grasps to keep.
    """
    z = np.asarray(poses, dtype=np.float64).reshape(-1, 4, 4)[:, :3, 2]
    n = np.asarray(support_normal, dtype=np.float64).reshape(3)
    norm = float(np.linalg.norm(n))
    if not (math.isfinite(norm) and norm > 0):
        raise ValueError(f"support_normal is {n.tolist()}; expected a non-zero finite vector")
    cosine = -(z @ n) / norm
    return cosine >= math.cos(math.radians(max_angle_deg)) - 1e-12
