"""The antipodal backend: parallel-jaw grasps sampled on a triangle mesh (numpy + trimesh, no pxr).

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

:func:`propose_antipodal` is the planner's call (the ``antipodal`` record of
:mod:`usdgrip.grasping.backends.registry`): proposals for one gripper in frame M.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.errors import GripperError
from usdgrip.frames import Poses
from usdgrip.grasping.backends.antipodal_approach import (
    DEFAULT_APPROACH_WEIGHT,
    DEFAULT_PAIR_DECAY,
    compute_approach_frames,
    compute_approach_quality,
    compute_centroid,
    compute_pad_support,
    compute_pair_decay,
)
from usdgrip.grasping.backends.antipodal_contacts import (
    ContactPairs,
    RayBackend,
    check_mesh_arrays,
    check_sampler_parameters,
    compute_palm_free,
    find_contact_pairs,
)
from usdgrip.grasping.proposals import Backend, ProposalBatch, ProposalSettings

#: Sampling rounds before giving up on finding ``count`` candidates.
MAX_ROUNDS = 6
#: Largest number of surface points sampled in one round.
MAX_ROUND_POINTS = 200_000


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
            edges that rest on the surface (:func:`compute_pad_support`);
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
    check_sampler_parameters(
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
    v, f = check_mesh_arrays(vertices, faces)
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
        support = compute_pad_support(
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
            palm_free=compute_palm_free(cache, v, f, poses),
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


#: Default opening kept free beyond the contact width (antipodal), metres.
DEFAULT_CLEARANCE = 0.005


# --- the planner's backend ------------------------------------------------------------------


def propose_antipodal(
    obj: Any, gripper: Any, *, count: int, rng: np.random.Generator, settings: ProposalSettings
) -> ProposalBatch:
    """Antipodal proposals in M; ``groups`` labels the proposals of one contact pair.

    The support normal (``settings.support_normal``: the table's, else the stage's authored
    up axis) drives the approach ranking
    (:func:`.antipodal_approach.compute_approach_quality`). Scores are not decayed per
    contact pair (``pair_decay=1``): the planner applies the soft-NMS itself, before and
    after the collision checks. The pad-support term runs with an authored pad width only.

    Raises:
        GripperError: the gripper's max opening is not above the clearance.
    """
    opening = gripper.max_opening
    if not opening > settings.clearance:
        raise GripperError(
            f"{gripper.label}: max opening {opening:g} m ({gripper.site.max_opening_source}) is "
            f"not above the antipodal clearance {settings.clearance:g} m (the opening kept free "
            f"beyond the contact width; default {DEFAULT_CLEARANCE:g} m); expected a max "
            "opening > clearance (check the gripper's max opening, in metres; "
            "plan_grasps(clearance=...) sets the clearance)"
        )
    grasps = sample_antipodal_grasps(
        obj.vertices,
        obj.faces,
        opening,
        rng=rng,
        count=count,
        clearance=settings.clearance,
        pad_width=None if gripper.pad_width_defaulted else gripper.pad_width,
        ray_backend=settings.ray_backend,
        support_normal=settings.support_normal,
        pair_decay=1.0,
    )
    n = len(grasps.widths)
    pairs = np.unique(grasps.contacts.reshape(-1, 6), axis=0, return_inverse=True)[1]
    return ProposalBatch(
        names=tuple(f"{i:04d}" for i in range(n)),
        poses=grasps.poses,
        widths=grasps.widths,
        scores=grasps.scores,
        groups=np.ravel(pairs).astype(np.int64),
        sources=(None,) * n,
    )


def _refuse_unsolid(obj: Any, asked: bool) -> str | None:
    from usdgrip.grasping.object_inputs import describe_unsolid_mesh

    return describe_unsolid_mesh(obj.mesh_problems) if obj.mesh_problems else None


#: The ``antipodal`` backend: needs the object's mesh, and one that bounds a solid.
BACKEND = Backend(
    name="antipodal",
    seed_index=0,
    applies=lambda obj: obj.mesh_error,
    propose=propose_antipodal,
    refuse=_refuse_unsolid,
    skip_note="antipodal skipped (no mesh)",
)
