"""The gripper's joint values at a grasp width: Isaac Sim's ``cspace_position``.

Pure numpy over a :class:`~usdgrip.gripper_articulation.GripperArticulation` whose
:class:`~usdgrip.gripper_articulation.OpeningReport` is known. The driven joints move
together from their closed limits to their open limits (one parameter ``t`` in [0, 1]);
mimic followers and loop joints follow (:func:`~usdgrip.gripper_kinematics.compute_configuration`).
:func:`compute_joint_value_table` measures the pad gap at :data:`JOINT_VALUE_STEPS` + 1
such configurations once per gripper; :meth:`JointValueTable.at_width` then gives the
joint values whose pad gap is a grasp's width (linear between the measured rows).

The values are those Isaac Sim's Grasp Editor writes (``cspace_position``,
``pregrasp_cspace_position``): every moving joint of the articulation (mimic followers
included; joints excluded from the articulation left out), by prim name, in joint order,
radians for revolute and metres for prismatic joints. ``docs/planning.md`` describes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from usdgrip.gripper_articulation import GripperArticulation
from usdgrip.gripper_kinematics import compute_configuration, compute_kinematic_tree
from usdgrip.gripper_opening import compute_gap

#: Configurations measured between closed and open (the table has this many + 1 rows).
JOINT_VALUE_STEPS = 32


@dataclass(frozen=True)
class JointValueTable:
    """Joint values on the path from closed (row 0) to open (last row), with their gaps."""

    names: tuple[str, ...]
    """Isaac Sim's DOF names (joint prim names) of the joints written, in joint order."""
    gaps: NDArray[np.float64]
    """(S,) pad gap (m) of each row, non-decreasing."""
    positions: NDArray[np.float64]
    """(S, J) joint values (rad or m) of each row, one column per name."""

    def at_width(self, width: float) -> dict[str, float]:
        """Joint values whose pad gap is ``width`` (clamped to the closed and open gaps)."""
        gaps = self.gaps
        row = float(np.interp(width, gaps, np.arange(len(gaps), dtype=np.float64)))
        low = min(int(row), len(gaps) - 1)
        high = min(low + 1, len(gaps) - 1)
        mix = row - low
        values = (1.0 - mix) * self.positions[low] + mix * self.positions[high]
        return {name: float(v) for name, v in zip(self.names, values, strict=True)}

    @property
    def open_values(self) -> dict[str, float]:
        """The open hand (``pregrasp_cspace_position``)."""
        return {name: float(v) for name, v in zip(self.names, self.positions[-1], strict=True)}

    @property
    def gap_range(self) -> tuple[float, float]:
        """Closed and open pad gap (m)."""
        return float(self.gaps[0]), float(self.gaps[-1])


def compute_joint_value_table(
    articulation: GripperArticulation, steps: int = JOINT_VALUE_STEPS
) -> JointValueTable | None:
    """The table of ``articulation``, or ``None`` when it has no opening to move through.

    ``None`` when the opening report is missing, has no driven joint or no gap at either
    end (no pads on both sides, limits missing): :func:`find_joint_value_problem` says why.
    """
    if find_joint_value_problem(articulation) is not None:
        return None
    report = articulation.opening
    joints = articulation.joints
    tree = compute_kinematic_tree(articulation)
    paths = {joint.path: index for index, joint in enumerate(joints)}
    closed = {paths[p]: v for p, v in report.closed_positions.items() if p in paths}
    opened = {paths[p]: v for p, v in report.open_positions.items() if p in paths}
    driven = [i for i in report.driven if i in closed and i in opened]
    written = [
        i for i, joint in enumerate(joints) if joint.moving and not joint.exclude_from_articulation
    ]
    fractions = np.linspace(0.0, 1.0, steps + 1)
    gaps = np.empty(len(fractions))
    positions = np.empty((len(fractions), len(written)))
    for row, t in enumerate(fractions):
        values = {i: closed[i] + t * (opened[i] - closed[i]) for i in driven}
        config = compute_configuration(articulation, values, tree)
        gap = compute_gap(
            articulation, report.fingers, config.link_poses, report.closing_axis,
            report.approach_axis,
        )  # fmt: skip
        gaps[row] = np.nan if gap is None else gap
        positions[row] = config.positions[written]
    usable = np.isfinite(gaps)
    if usable.sum() < 2:
        return None
    gaps, positions = gaps[usable], positions[usable]
    # A gap that is not monotonic along the path (a linkage past its toggle): keep the
    # rows that widen it, so every width maps to one configuration.
    keep = [0]
    for row in range(1, len(gaps)):
        if gaps[row] > gaps[keep[-1]]:
            keep.append(row)
    if len(keep) < 2:
        return None
    names = tuple(joints[i].name for i in written)
    return JointValueTable(names, gaps[keep], positions[keep])


def find_joint_value_problem(articulation: GripperArticulation | None) -> str | None:
    """Why a gripper's grasps carry no joint values, or ``None`` when they can."""
    if articulation is None or articulation.status == "none" or not articulation.joints:
        return "the gripper has no finger joints"
    report = articulation.opening
    if report is None or not report.driven:
        return "the gripper has no driven finger joints"
    if report.opening_open is None or report.opening_closed is None:
        return "the pad gap at the joint limits is unknown (see usdgrip info)"
    if not report.open_positions or not report.closed_positions:
        return "the joint values at the open and closed limits are unknown"
    return None


__all__ = [
    "JOINT_VALUE_STEPS",
    "JointValueTable",
    "compute_joint_value_table",
    "find_joint_value_problem",
]
