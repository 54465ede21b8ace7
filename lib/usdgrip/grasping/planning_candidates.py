"""A planning run's record and the candidates it writes.

:class:`PlanningRun` accumulates what one run gathers across grippers (notes, candidates,
the collision models used). :func:`build_candidates` turns one gripper's collision-checked
survivors into :class:`~usdgrip.contracts.GraspCandidate` entries, best first, and
:func:`add_joint_values` and :func:`choose_file_frames` add what Isaac Sim's Grasp Editor
reads (``cspace_position``, ``object_frame``, ``gripper_frame``).
:mod:`usdgrip.grasping.planner` runs the steps that fill it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from usdgrip.contracts import GraspCandidate, GraspPlanningRequest
from usdgrip.frames import compute_quaternion_wxyz
from usdgrip.grasping.backends.antipodal_approach import compute_pair_decay
from usdgrip.grasping.inputs import GraspInputs, Gripper
from usdgrip.grasping.options import PlanningOptions
from usdgrip.grasping.proposals import Proposals
from usdgrip.grasping.provenance import Note


@dataclass
class PlanningRun:
    """What one planning run accumulates across grippers."""

    notes: list[Note] = field(default_factory=list)
    grasps: dict[str, GraspCandidate] = field(default_factory=dict)
    models_used: list[str] = field(default_factory=list)
    fallback_noted: bool = False

    def note(self, code: str, gripper: Gripper, text: str) -> None:
        """Add a note about ``gripper`` (rendered ``gripper FILE:/Site: text``)."""
        self.notes.append(Note(code, str(gripper.ref), text, (gripper.label,)))


def build_candidates(
    gripper: Gripper,
    proposals: Proposals,
    kept: list[int],
    exclusions: dict[int, tuple[str, ...]],
    options: PlanningOptions,
) -> dict[str, GraspCandidate]:
    """Result step for one gripper: the survivors as candidates, best first.

    Soft-NMS again among the survivors: a group whose best approach collided is
    not penalised for it; the decayed score is the ``confidence``.
    """
    confidence = compute_pair_decay(
        [proposals.scores[i] for i in kept], [proposals.groups[i] for i in kept], options.pair_decay
    )
    final = sorted(range(len(kept)), key=lambda j: (-confidence[j], proposals.ids[kept[j]]))
    order = [kept[j] for j in final]
    poses = proposals.pose_array[order]
    quaternions = compute_quaternion_wxyz(poses)
    candidates = {}
    for row, (i, j) in enumerate(zip(order, final, strict=True)):
        cid = proposals.ids[i]
        origin = proposals.provenance[i]
        candidates[cid] = GraspCandidate(
            candidate_id=cid,
            gripper=gripper.ref,
            confidence=float(confidence[j]),
            generation_method=origin.method,
            position=tuple(float(v) for v in poses[row, :3, 3]),
            orientation={
                "w": float(quaternions[row, 0]),
                "xyz": tuple(float(v) for v in quaternions[row, 1:]),
            },
            width=float(proposals.widths[i]),
            exclusions=exclusions[i],
            slot=origin.slot,
            grasp_line=origin.grasp_line,
            group=origin.group,
        )
    return candidates


#: A site prim whose world frame is this close to its grasp frame G (metres, and radians
#: through the rotation's largest entry) is G: the file can name it as its gripper_frame.
FRAME_MATCH_TOLERANCE = 1e-9


def add_joint_values(
    gripper: Gripper, candidates: dict[str, GraspCandidate], run: PlanningRun
) -> dict[str, GraspCandidate]:
    """Each candidate with Isaac Sim's Grasp Editor joint values, when the gripper has joints.

    ``cspace_position``: every moving finger joint where the pads, closing from open, reach
    the candidate's ``width`` (:func:`usdgrip.gripper_joint_values.compute_joint_values`;
    mimic followers and loop joints included); ``pregrasp_cspace_position``: the open hand.
    Without joints a warning says why they are absent (the Grasp Editor's Import Grasps
    reads them).
    """
    from usdgrip.gripper_joint_values import (
        compute_joint_value_table,
        compute_joint_values,
        find_joint_value_problem,
    )

    problem = find_joint_value_problem(gripper.articulation)
    if problem is not None:
        reason = gripper.articulation_absent if gripper.articulation is None else problem
        run.note(
            "joint_values_absent",
            gripper,
            f"no cspace_position / pregrasp_cspace_position written: {reason or problem} "
            "(Isaac Sim's Grasp Editor needs them to show a grasp; its scripting import "
            "reads the poses without them)",
        )
        return candidates
    table = compute_joint_value_table(gripper.articulation)
    opened = table.open_values
    clamped = {"open": 0, "closed": 0}
    out = {}
    for key, candidate in candidates.items():
        width = candidate.width if candidate.width is not None else float(table.gaps[0])
        closed, where = compute_joint_values(table, width)
        if where in clamped:
            clamped[where] += 1
        out[key] = candidate.model_copy(
            update={"cspace_position": closed, "pregrasp_cspace_position": dict(opened)}
        )
    if clamped["closed"]:
        run.note(
            "joint_values_clamped",
            gripper,
            f"{clamped['closed']} candidate(s) are narrower than the pads' closed gap "
            f"({float(table.gaps[-1]):.4f} m): their cspace_position is the closed limit",
        )
    return out


def choose_file_frames(
    inputs: GraspInputs, request: GraspPlanningRequest, run: PlanningRun
) -> tuple[str | None, str | None]:
    """The file's ``object_frame`` and ``gripper_frame`` (Isaac Sim's Grasp Editor's keys).

    Written when some candidate carries joint values: ``object_frame`` the object prim (M),
    ``gripper_frame`` the site prim, when the request has one gripper and the site prim's
    world frame is its grasp frame G (the poses are T_M_G, so they are that prim's); else
    a warning says why ``gripper_frame`` is absent.
    """
    if not any(c.cspace_position is not None for c in run.grasps.values()):
        return None, None
    object_frame = inputs.object.prim_path
    grippers = [inputs.find_gripper(ref) for ref in request.grippers]
    if len(grippers) != 1:
        run.notes.append(
            Note(
                "gripper_frame_absent",
                object_frame,
                f"no gripper_frame written: the file holds {len(grippers)} grippers' grasps "
                "and gripper_frame names one prim (plan one gripper per file for Isaac Sim's "
                "Grasp Editor)",
                ("grasps",),
            )
        )
        return object_frame, None
    gripper = grippers[0]
    site = gripper.site
    from usdgrip.frames import compute_rigid_part

    world = compute_rigid_part(site.world_transform)
    difference = np.abs(world - np.asarray(site.grasp_frame)).max()
    if not difference <= FRAME_MATCH_TOLERANCE:
        run.note(
            "gripper_frame_absent",
            gripper,
            f"no gripper_frame written: the site prim's axes are not its grasp frame G "
            f"(they differ by up to {difference:.3g}); the poses are T_M_G, of no prim: "
            "author the site so its local +Z is the approach and +X the closing direction",
        )
        return object_frame, None
    return object_frame, site.path
