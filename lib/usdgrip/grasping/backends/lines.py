"""Grasp proposals from SimReady grasp vector lines (planning backend ``lines``), pure numpy.

A grasp vector line joins the two pad contact points of a grasp
(:mod:`usdgrip.grasp_line_geometry`), so it fixes the **closing axis** and the grasp
centre but not the approach: FET005 uses a gantry, which needs none. For each
line this backend

- casts along the line both ways (as FET005 symmetrises the pads) and takes the
  two surface points it lands on; their distance is the grasp **width** and
  their midpoint (the midpoint of FET005's symmetrised pad points) the **centre**;
- builds GraspGenX frames G with ``+X`` along the line (p0 → p1), origin at the
  centre, and ``+Z`` (approach) sampled evenly around the line, perpendicular to it;
- scores each approach ``0.5 + 0.5 q`` with ``q`` the antipodal backend's
  ``compute_approach_quality`` (towards the object's interior, from above the authored
  up axis): a grasp line is the asset author's statement of where to grasp, so its
  grasps rank in the upper half, above most generated grasps of the same approach.

A line that misses the object gives no proposal and a note naming it. Fit and
collision checks are the planner's, as for the other backends.

:func:`summarize_line_evaluations` answers FET005's question per line from physics
evaluations of these proposals (the grasp-and-lift engine of the physics evaluation,
``usdgrip.grasping.physics.evaluate_candidates``): best success rate, outcome counts and
the grasp that held.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import ZERO_LENGTH_TOLERANCE, Poses, compute_fallback_perpendicular
from usdgrip.grasp_line_geometry import compute_surface_points
from usdgrip.grasping.backends.antipodal_approach import compute_approach_quality, compute_centroid
from usdgrip.grasping.proposals import ObjectData, _id_part

#: Most approaches sampled around one line (every 5°): more only repeats near-identical grasps.
MAX_APPROACHES_PER_LINE = 72


class LineGrasps(NamedTuple):
    """Proposals of the ``lines`` backend, in the frame the line points and mesh were given in."""

    ids: list[str]
    """``g_<key>_lines_<line>_<k>``: the line's name and the approach index."""
    poses: Poses
    """(N, 4, 4) grasp frames G."""
    widths: NDArray[np.float64]
    """(N,) distance between the surfaces the line lands on (metres)."""
    scores: NDArray[np.float64]
    """(N,) ``0.5 + 0.5 * approach quality``, in [0.5, 1]."""
    lines: list[str]
    """(N,) name of the line each proposal comes from."""
    notes: list[str]
    """Lines that gave nothing, and why."""


def compute_line_frames(centre: ArrayLike, closing: ArrayLike, count: int) -> Poses:
    """``count`` grasp frames at ``centre`` closing along ``closing``, approaches evenly around it.

    Approach ``k`` is ``cos(2πk/n) u + sin(2πk/n) v`` with ``u`` the deterministic
    perpendicular of the closing axis (:func:`usdgrip.frames.compute_fallback_perpendicular`)
    and ``v = X × u``; ``Y = Z × X`` (right-handed, det +1).

    Raises:
        ValueError: a closing axis that is zero or not finite, or ``count < 1``.
    """
    if count < 1:
        raise ValueError(f"count is {count}; expected >= 1")
    x = np.asarray(closing, dtype=np.float64).reshape(3)
    norm = float(np.linalg.norm(x))
    if not (math.isfinite(norm) and norm > ZERO_LENGTH_TOLERANCE):
        raise ValueError(f"closing axis is {x.tolist()}; expected a non-zero finite vector")
    x = x / norm
    u = compute_fallback_perpendicular(x)
    v = np.cross(x, u)
    angles = 2.0 * np.pi * np.arange(count) / count
    z = np.cos(angles)[:, None] * u + np.sin(angles)[:, None] * v
    y = np.cross(z, x)
    poses = np.tile(np.eye(4), (count, 1, 1))
    poses[:, :3, 0] = x
    poses[:, :3, 1] = y
    poses[:, :3, 2] = z
    poses[:, :3, 3] = np.asarray(centre, dtype=np.float64).reshape(3)
    return poses


def propose_line_grasps(
    lines: Sequence[tuple[str, ArrayLike, ArrayLike]],
    vertices: ArrayLike,
    faces: ArrayLike,
    *,
    count: int,
    key: str,
    support_normal: ArrayLike | None = None,
) -> LineGrasps:
    """Grasp proposals for every grasp vector line of one object.

    Args:
        lines: ``(name, p0, p1)`` per line, points in the mesh's frame (metres).
        vertices: (V, 3) the object's surface in that frame.
        faces: (F, 3) vertex indices.
        count: proposals wanted in total; each usable line gets ``ceil(count / lines)``
            approaches (at least 1, at most :data:`MAX_APPROACHES_PER_LINE`).
        key: names the gripper in the ids.
        support_normal: (3,) the authored up axis in that frame, or ``None``.

    Raises:
        ValueError: ``count < 1``.
    """
    if count < 1:
        raise ValueError(f"count is {count}; expected >= 1")
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    notes: list[str] = []
    usable: list[tuple[str, np.ndarray, np.ndarray, float]] = []
    for name, p0, p1 in lines:
        a = np.asarray(p0, dtype=np.float64).reshape(3)
        b = np.asarray(p1, dtype=np.float64).reshape(3)
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or not np.any(b - a):
            notes.append(f"grasp line {name!r} skipped: p0 and p1 are not two finite points")
            continue
        surface = compute_surface_points(a, b, v, f)
        if surface is None:
            notes.append(f"grasp line {name!r} skipped: it does not meet the object (GP.001)")
            continue
        if not surface.width > 0:  # a graze, or a line so long its hits round together
            notes.append(
                f"grasp line {name!r} skipped: the surfaces it lands on are 0 m apart (the "
                f"line is {np.linalg.norm(b - a):.3g} m long); expected two sides of the part "
                "to grasp"
            )
            continue
        centre = 0.5 * (surface.first + surface.second)
        usable.append((name, centre, b - a, surface.width))
    empty = np.zeros(0)
    if not usable:
        return LineGrasps([], np.zeros((0, 4, 4)), empty, empty, [], notes)
    per_line = min(MAX_APPROACHES_PER_LINE, max(1, math.ceil(count / len(usable))))
    poses = np.concatenate([compute_line_frames(c, d, per_line) for _, c, d, _ in usable])
    centroid = compute_centroid(v, f)
    scale = float(np.linalg.norm(np.ptp(v, axis=0))) or 1.0
    quality = compute_approach_quality(poses, centroid, scale, support_normal=support_normal)
    scores = 0.5 + 0.5 * quality.quality
    ids = [f"g_{key}_lines_{name}_{k:04d}" for name, *_ in usable for k in range(per_line)]
    names = [name for name, *_ in usable for _ in range(per_line)]
    widths = np.repeat([width for *_, width in usable], per_line)
    return LineGrasps(ids, poses, widths, scores, names, notes)


def name_lines(names: Sequence[str]) -> list[str]:
    """The id part of each line (``g_<key>_lines_<part>_<k>``): its name, made unique in order."""
    parts: list[str] = []
    for name in names:
        part = base = _id_part(name)
        suffix = len(parts)
        while part in parts:  # two lines with one name (in two instances, say)
            part, suffix = f"{base}_{suffix}", suffix + 1
        parts.append(part)
    return parts


def propose_lines(
    obj: ObjectData, max_opening: float, *, count: int, key: str
) -> tuple[list[str], Poses, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """The planner's ``lines`` backend, in M: (ids, poses, widths, scores, groups, notes).

    ``groups`` labels the proposals of one line, so the planner's soft-NMS visits every
    line before it repeats one. Lines wider than ``max_opening`` are left to the fit step.
    Needs the object's mesh (``obj.vertices``); without one every line is noted.
    """
    del max_opening  # the planner's fit step drops proposals wider than the opening
    empty = np.zeros(0)
    if obj.vertices is None or not obj.grasp_lines:
        why = "the object has no mesh" if obj.grasp_lines else "the object has no grasp lines"
        return [], np.zeros((0, 4, 4)), empty, empty, empty, [why]
    parts = name_lines([name for name, _, _ in obj.grasp_lines])
    named = [(part, p0, p1) for part, (_, p0, p1) in zip(parts, obj.grasp_lines, strict=True)]
    grasps = propose_line_grasps(
        named, obj.vertices, obj.faces, count=count, key=key, support_normal=obj.up
    )
    order = {name: index for index, (name, _, _) in enumerate(named)}
    groups = np.array([order[name] for name in grasps.lines], dtype=np.int64)
    return grasps.ids, grasps.poses, grasps.widths, grasps.scores, groups, grasps.notes


# --- FET005 on the CPU: per-line verdicts (hook for the physics evaluation) --------------------


_LINE_ID = re.compile(r"^g_[^_]+_lines_(?P<line>.+)_\d{4}$")


def parse_line_candidate_id(candidate_id: str) -> str | None:
    """The line a ``lines`` candidate id names (``g_<h>_lines_<line>_<k>``), else ``None``.

    Groups the candidates of a planned Isaac-Grasp file by line, e.g. to answer FET005's
    question per line from their physics evaluations (:func:`summarize_line_evaluations`).
    """
    found = _LINE_ID.match(candidate_id)
    return found.group("line") if found else None


class _Evaluation(Protocol):
    """What :func:`summarize_line_evaluations` reads of one candidate's physics evaluation.

    ``usdgrip.grasping.physics.CandidateEvaluation`` has both fields.
    """

    success_rate: float
    outcomes: Mapping[str, int]


class LineVerdict(NamedTuple):
    """FET005's question for one grasp vector line: does a grasp on it hold?"""

    line: str
    candidates: int
    """Candidates of this line that were evaluated (0: the line gave none, see the notes)."""
    best_success_rate: float
    """Highest success rate among them (0 without candidates)."""
    outcomes: dict[str, int]
    """Trials per outcome, summed over the line's candidates."""
    held_by: str | None
    """Id of the candidate with the best success rate when it held at least once."""

    @property
    def held(self) -> bool:
        """True when some grasp on the line held (FET005 passes the line)."""
        return self.held_by is not None


def summarize_line_evaluations(
    lines: Sequence[str],
    candidate_lines: Sequence[str],
    candidate_ids: Sequence[str],
    evaluations: Sequence[_Evaluation],
) -> list[LineVerdict]:
    """Group physics evaluations of ``lines`` candidates by line: best rate, outcomes, who held.

    Args:
        lines: every line of the object, in report order (lines without candidates included).
        candidate_lines: (N,) the line of each evaluated candidate (:attr:`LineGrasps.lines`).
        candidate_ids: (N,) their ids.
        evaluations: (N,) their evaluations, same order.

    Raises:
        ValueError: the three sequences differ in length, or a candidate names an unknown line.
    """
    if not len(candidate_lines) == len(candidate_ids) == len(evaluations):
        raise ValueError(
            f"candidate_lines, candidate_ids and evaluations have {len(candidate_lines)}, "
            f"{len(candidate_ids)} and {len(evaluations)} entries; expected equal lengths"
        )
    unknown = sorted(set(candidate_lines) - set(lines))
    if unknown:
        raise ValueError(f"candidates name unknown line(s) {unknown}; known: {list(lines)}")
    verdicts = []
    for line in lines:
        mine = [i for i, name in enumerate(candidate_lines) if name == line]
        outcomes: dict[str, int] = {}
        for i in mine:
            for outcome, n in evaluations[i].outcomes.items():
                outcomes[outcome] = outcomes.get(outcome, 0) + int(n)
        best = max(mine, key=lambda i: (evaluations[i].success_rate, -i), default=None)
        rate = float(evaluations[best].success_rate) if best is not None else 0.0
        held_by = candidate_ids[best] if best is not None and rate > 0 else None
        verdicts.append(LineVerdict(line, len(mine), rate, outcomes, held_by))
    return verdicts
