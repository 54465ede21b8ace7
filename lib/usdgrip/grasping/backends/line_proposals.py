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
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import ZERO_LENGTH_TOLERANCE, Poses, compute_fallback_perpendicular
from usdgrip.grasp_line_geometry import compute_surface_points
from usdgrip.grasping.backends.antipodal_approach import compute_approach_quality, compute_centroid
from usdgrip.grasping.gripper_inputs import Gripper
from usdgrip.grasping.object_inputs import LINE_UNUSABLE, ObjectInputs
from usdgrip.grasping.proposals import Backend, ProposalBatch, ProposalSettings, compute_id_part
from usdgrip.grasping.provenance import Note

#: Most approaches sampled around one line (every 5°): more only repeats near-identical grasps.
MAX_APPROACHES_PER_LINE = 72
#: Note codes of a line the backend skips (the note's subject is the line's prim path).
LINE_NOT_FINITE = "line_not_finite"
LINE_MISSES_OBJECT = "line_misses_object"
LINE_ZERO_WIDTH = "line_zero_width"
LINE_SKIPS = (LINE_NOT_FINITE, LINE_MISSES_OBJECT, LINE_ZERO_WIDTH)


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


class _LineSkip(NamedTuple):
    index: int
    """Index of the line in the input."""
    code: str
    reason: str


class _LineSet(NamedTuple):
    """The approaches of every usable line (rows aligned), and the lines skipped."""

    poses: Poses
    widths: NDArray[np.float64]
    scores: NDArray[np.float64]
    lines: NDArray[np.int64]
    """(N,) index of each row's line in the input."""
    approach: NDArray[np.int64]
    """(N,) approach index of each row around its line."""
    skipped: list[_LineSkip]


def _compute_line_set(
    lines: Sequence[tuple[str, ArrayLike, ArrayLike]],
    vertices: ArrayLike,
    faces: ArrayLike,
    count: int,
    support_normal: ArrayLike | None,
) -> _LineSet:
    if count < 1:
        raise ValueError(f"count is {count}; expected >= 1")
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    skipped: list[_LineSkip] = []
    usable: list[tuple[int, np.ndarray, np.ndarray, float]] = []
    for index, (_, p0, p1) in enumerate(lines):
        a = np.asarray(p0, dtype=np.float64).reshape(3)
        b = np.asarray(p1, dtype=np.float64).reshape(3)
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or not np.any(b - a):
            skipped.append(_LineSkip(index, LINE_NOT_FINITE, "p0 and p1 are not two finite points"))
            continue
        surface = compute_surface_points(a, b, v, f)
        if surface is None:
            why = "it does not meet the object (GP.001)"
            skipped.append(_LineSkip(index, LINE_MISSES_OBJECT, why))
            continue
        if not surface.width > 0:  # a graze, or a line so long its hits round together
            why = (
                f"the surfaces it lands on are 0 m apart (the line is "
                f"{np.linalg.norm(b - a):.3g} m long); expected two sides of the part to grasp"
            )
            skipped.append(_LineSkip(index, LINE_ZERO_WIDTH, why))
            continue
        usable.append((index, 0.5 * (surface.first + surface.second), b - a, surface.width))
    if not usable:
        none = np.zeros(0)
        empty = np.zeros(0, dtype=np.int64)
        return _LineSet(np.zeros((0, 4, 4)), none, none, empty, empty, skipped)
    per_line = min(MAX_APPROACHES_PER_LINE, max(1, math.ceil(count / len(usable))))
    poses = np.concatenate([compute_line_frames(c, d, per_line) for _, c, d, _ in usable])
    centroid = compute_centroid(v, f)
    scale = float(np.linalg.norm(np.ptp(v, axis=0))) or 1.0
    quality = compute_approach_quality(poses, centroid, scale, support_normal=support_normal)
    return _LineSet(
        poses=poses,
        widths=np.repeat([width for *_, width in usable], per_line),
        scores=0.5 + 0.5 * quality.quality,
        lines=np.repeat([index for index, *_ in usable], per_line),
        approach=np.tile(np.arange(per_line), len(usable)),
        skipped=skipped,
    )


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
        support_normal: (3,) the support's upward normal in that frame, or ``None``.

    Raises:
        ValueError: ``count < 1``.
    """
    found = _compute_line_set(lines, vertices, faces, count, support_normal)
    names = [lines[i][0] for i in found.lines]
    ids = [f"g_{key}_lines_{name}_{k:04d}" for name, k in zip(names, found.approach, strict=True)]
    notes = [f"grasp line {lines[s.index][0]!r} skipped: {s.reason}" for s in found.skipped]
    return LineGrasps(ids, found.poses, found.widths, found.scores, names, notes)


def name_lines(names: Sequence[str]) -> list[str]:
    """The id part of each line (``g_<key>_lines_<part>_<k>``): its name, made unique in order."""
    parts: list[str] = []
    for name in names:
        part = base = compute_id_part(name)
        suffix = len(parts)
        while part in parts:  # two lines with one name (in two instances, say)
            part, suffix = f"{base}_{suffix}", suffix + 1
        parts.append(part)
    return parts


def propose_lines(
    obj: ObjectInputs,
    gripper: Gripper,
    *,
    count: int,
    rng: np.random.Generator,
    settings: ProposalSettings,
) -> ProposalBatch:
    """The planner's ``lines`` backend, in M; each proposal's source is its line's prim path.

    ``groups`` labels the proposals of one line, so the planner's soft-NMS visits every
    line before it repeats one. Lines wider than the max opening are left to the fit step.
    Deterministic: ``rng`` is not drawn from. A skipped line's note has the line's path as
    subject and one of :data:`LINE_SKIPS` as code.
    """
    del gripper, rng  # the fit step drops proposals wider than the opening
    parts = name_lines([line.name for line in obj.grasp_lines])
    named = [(part, line.p0, line.p1) for part, line in zip(parts, obj.grasp_lines, strict=True)]
    found = _compute_line_set(named, obj.vertices, obj.faces, count, settings.support_normal)
    notes = tuple(
        Note(
            s.code,
            obj.grasp_lines[s.index].path,
            s.reason,
            (f"grasp line {parts[s.index]!r} skipped",),
        )
        for s in found.skipped
    )
    return ProposalBatch(
        names=tuple(
            f"{parts[i]}_{k:04d}" for i, k in zip(found.lines, found.approach, strict=True)
        ),
        poses=found.poses,
        widths=found.widths,
        scores=found.scores,
        groups=found.lines.astype(np.int64),
        sources=tuple(obj.grasp_lines[i].path for i in found.lines),
        notes=notes,
    )


def _lines_missing(obj: ObjectInputs) -> str | None:
    """The lines backend needs the object's mesh and a usable grasp vector line."""
    if obj.mesh_error is not None:
        return obj.mesh_error
    if obj.grasp_lines:
        return None
    skipped = [n.render() for n in obj.notes if n.code == LINE_UNUSABLE]
    found = f" ({'; '.join(skipped)})" if skipped else ""
    return (
        f"<{obj.prim_path}> has no usable grasp vector line (a BasisCurves named "
        f"grasp_identifier* on it or under it){found}, so method 'lines' has nothing to plan "
        "from; `usdgrip info FILE` lists the lines"
    )


#: The ``lines`` backend: needs the object's mesh and a usable grasp vector line.
BACKEND = Backend(
    name="lines",
    seed_index=2,
    applies=_lines_missing,
    propose=propose_lines,
    source="grasp_line",
)


# --- FET005 on the CPU: per-line verdicts (hook for the physics evaluation) --------------------


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
