"""Approach directions for antipodal contact pairs, their quality and the per-pair soft-NMS."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import Poses
from usdgrip.grasping.backends.antipodal_contacts import check_mesh_arrays, find_first_hits

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
    v, f = check_mesh_arrays(vertices, faces)
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


def compute_pad_support(
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
    _, t = find_first_hits(intersector, vertices, faces, origins_all, directions_all)
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
