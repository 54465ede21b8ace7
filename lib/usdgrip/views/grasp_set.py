"""The grasp candidates on show: poses relative to their object, plus what the list shows.

Pure (no ``pxr``, no Qt). Poses are kept object-relative (``T_M_G``, metres)
so the overlays can be rebuilt on a replaced or moved stage by composing with
the object's new world transform.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import Mat4, Poses, compute_rigid_part
from usdgrip.views.glyphs import DEFAULT_OPEN_WIDTH


@dataclass(frozen=True, eq=False)
class GraspSet:
    """Candidates of one object, in display order (best first)."""

    object_path: str
    poses: Poses
    """(N, 4, 4) object-relative grasp poses ``T_M_G`` (GraspGenX frame), metres."""
    labels: tuple[str, ...]
    """Candidate ids, one per pose."""
    details: tuple[str, ...]
    """Generation method or slot, one per pose (second column of the list)."""
    confidences: NDArray[np.float64] | None = None
    """(N,) backend scores, or ``None`` for sampled targets (no score)."""
    open_width: float = DEFAULT_OPEN_WIDTH
    """Jaw opening drawn for every candidate, metres."""
    source: str = "plan"
    """``plan`` (exportable :class:`~usdgrip.contracts.GraspPlanningResult`) or ``sample``."""
    result: Any = None
    """The library result the set came from (plan result or ``SlotSamples``)."""
    success_rates: NDArray[np.float64] | None = None
    """(N,) measured grasp-and-lift success rates (``usdgrip evaluate``), or ``None``."""
    outcomes: tuple[str, ...] | None = None
    """Outcome of each candidate's first trial (``held``, ``missed``...), with ``success_rates``."""
    gripper: Any = None
    """The :class:`~usdgrip.contracts.GripperRef` a loaded file's poses were converted for
    (another tool's file names none), else ``None``: the entries' own."""
    gripper_frame: str | None = None
    """The frame the caller said the poses are of (``--gripper-frame``), else ``None``."""
    frames: Any = None
    """The :class:`~usdgrip.grasping.pose_frames.PoseFrames` that turned the file's poses
    into ``poses`` (``T_M_G``), or ``None``: used as they are."""
    notes: tuple[str, ...] = ()
    """What was assumed reading the file (its pose frames), one line each."""

    def __len__(self) -> int:
        return len(self.labels)

    def compute_world_poses(self, object_to_world: ArrayLike) -> Poses:
        """World poses ``(N, 4, 4)``: the rigid part of ``object_to_world`` times each pose."""
        world = compute_rigid_part(object_to_world)
        return np.einsum("ij,njk->nik", world, self.poses)


def compute_grasp_set_from_plan(
    result: Any,
    object_path: str,
    open_width: float = DEFAULT_OPEN_WIDTH,
    frames: Any = None,
    **fields: Any,
) -> GraspSet:
    """Build a :class:`GraspSet` from a ``GraspPlanningResult`` (file order).

    Args:
        result: the plan, or any Isaac-Grasp file read.
        object_path: the object prim the poses are relative to.
        open_width: jaw opening drawn when no entry has a ``width``.
        frames: the file's :class:`~usdgrip.grasping.pose_frames.PoseFrames` for the gripper
            shown: poses of another gripper frame become ``T_M_G``; ``None``: as they are.
        **fields: other :class:`GraspSet` fields (``gripper``, ``gripper_frame``, ``notes``).

    A candidate without a confidence (GraspDataGen's hand-written files) has NaN; the
    success rates are set when any candidate was evaluated (NaN for the others).
    """
    from usdgrip.grasping.isaac_yaml import compute_candidate_poses

    candidates = list(result.grasps.values())
    widths = [c.width for c in candidates if getattr(c, "width", None)]
    measured = any(getattr(c, "physics", None) is not None for c in candidates)
    poses = compute_candidate_poses(result)
    return GraspSet(
        object_path=object_path,
        poses=frames.convert(poses) if frames is not None else poses,
        frames=frames,
        labels=tuple(c.candidate_id for c in candidates),
        details=tuple(c.generation_method or "" for c in candidates),
        confidences=np.array(
            [np.nan if c.confidence is None else c.confidence for c in candidates],
            dtype=np.float64,
        ),
        open_width=float(max(widths)) if widths else float(open_width),
        source="plan",
        result=result,
        success_rates=(
            np.array(
                [c.physics.success_rate if c.physics else np.nan for c in candidates],
                dtype=np.float64,
            )
            if measured
            else None
        ),
        outcomes=tuple(c.physics.outcome if c.physics else "" for c in candidates)
        if measured
        else None,
        **fields,
    )


def compute_grasp_set_from_samples(
    samples: Any, object_path: str, object_to_world: Mat4, open_width: float = DEFAULT_OPEN_WIDTH
) -> GraspSet:
    """Build a :class:`GraspSet` from ``SlotSamples`` (every end-effector target of every draw).

    Sampled poses are world snapshots; they are stored relative to
    ``object_to_world`` (the object's transform when it was sampled).
    """
    world = np.asarray(samples.poses, dtype=np.float64)  # (count, n_ee, 4, 4)
    count, n_ee = world.shape[:2]
    inverse = np.linalg.inv(compute_rigid_part(object_to_world))
    poses = np.einsum("ij,njk->nik", inverse, world.reshape(-1, 4, 4))
    names = tuple(samples.slot_names)
    flipped = np.asarray(samples.flipped).reshape(count, n_ee)
    tilts = np.asarray(samples.tilts_deg).reshape(count, n_ee)
    labels, details = [], []
    for i in range(count):
        for e in range(n_ee):
            labels.append(f"{i}.{e}")
            flip = " flipped" if flipped[i, e] else ""
            details.append(f"{names[e]} tilt {tilts[i, e]:+.1f}°{flip}")
    return GraspSet(
        object_path=object_path,
        poses=poses,
        labels=tuple(labels),
        details=tuple(details),
        confidences=None,
        open_width=float(open_width),
        source="sample",
        result=samples,
    )
