"""Joint values of a gripper at a grasp width: what Isaac Sim's Grasp Editor stores per grasp.

Pure numpy over a :class:`~usdgrip.gripper_articulation.GripperArticulation` with an
:class:`~usdgrip.gripper_articulation.OpeningReport`:

- :func:`compute_joint_value_table`: the fingers swept from the open to the closed limits
  (every independent joint moved linearly, mimic followers following, loops closed by
  :func:`~usdgrip.gripper_kinematics.compute_configuration`), with the pad gap at each step;
- :func:`compute_joint_values`: the joint values where the pads first close to a width
  (``cspace_position``), read off the table by linear interpolation.

Values are Isaac Sim's DOF units (metres prismatic, radians revolute), keyed by the joint
prim's name (Isaac Sim's DOF name). ``docs/planning.md`` ("Joint values") describes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from usdgrip.gripper_articulation import GripperArticulation
from usdgrip.gripper_kinematics import compute_configuration, compute_kinematic_tree
from usdgrip.gripper_opening import compute_gap

#: Steps of the open-to-closed sweep (the table's rows): joint values between two steps
#: are interpolated linearly.
JOINT_VALUE_SAMPLES = 33


@dataclass(frozen=True, eq=False)
class JointValueTable:
    """The fingers swept from open (row 0) to closed (last row)."""

    names: tuple[str, ...]
    """Joint prim names (Isaac Sim's DOF names) of the moving tree joints, articulation order."""
    gaps: NDArray[np.float64]
    """(K,) pad gap (m) at each step."""
    positions: NDArray[np.float64]
    """(K, J) joint values (m or rad) at each step, columns in ``names`` order."""

    @property
    def open_values(self) -> dict[str, float]:
        """The open hand (``pregrasp_cspace_position``)."""
        return {name: float(v) for name, v in zip(self.names, self.positions[0], strict=True)}


def find_joint_value_problem(articulation: GripperArticulation | None) -> str | None:
    """Why no joint values can be computed for ``articulation``, else ``None``."""
    if articulation is None or articulation.status == "none":
        return "the gripper has no finger joints (UsdPhysics prismatic or revolute joints)"
    report = articulation.opening
    if report is None or report.opening_open is None or report.opening_closed is None:
        return "the opening at the finger joints' limits is unknown (see `usdgrip info`)"
    tree = compute_kinematic_tree(articulation)
    names = [articulation.joints[i].name for i in _columns(articulation, tree)]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        return (
            f"several finger joints are named {', '.join(repeated)}: Isaac Sim keys joint "
            "values by the joint prim's name, so each name must be unique"
        )
    return None


def _columns(articulation: GripperArticulation, tree) -> list[int]:
    tree_joints = {tree.parent_joint[link] for link in tree.order[1:]}
    return [i for i in sorted(tree_joints) if articulation.joints[i].moving]


def compute_joint_value_table(
    articulation: GripperArticulation, samples: int = JOINT_VALUE_SAMPLES
) -> JointValueTable:
    """Sweep the independent joints from their open to their closed limits.

    Raises:
        ValueError: :func:`find_joint_value_problem` gives a reason, or ``samples < 2``.
    """
    problem = find_joint_value_problem(articulation)
    if problem is not None:
        raise ValueError(f"<{articulation.site_path or articulation.root_path}>: {problem}")
    if samples < 2:
        raise ValueError(f"samples is {samples}; expected at least 2")
    tree = compute_kinematic_tree(articulation)
    report = articulation.opening
    joints = articulation.joints
    dofs = [i for i in report.driven if joints[i].path in report.open_positions]
    start = {i: report.open_positions[joints[i].path] for i in dofs}
    end = {i: report.closed_positions[joints[i].path] for i in dofs}
    columns = _columns(articulation, tree)
    gaps, rows = [], []
    for t in np.linspace(0.0, 1.0, samples):
        values = {i: start[i] + t * (end[i] - start[i]) for i in dofs}
        config = compute_configuration(articulation, values, tree)
        gap = compute_gap(
            articulation,
            report.fingers,
            config.link_poses,
            report.closing_axis,
            report.approach_axis,
        )
        gaps.append(np.nan if gap is None else gap)
        rows.append(config.positions[columns])
    return JointValueTable(
        tuple(joints[i].name for i in columns), np.array(gaps), np.array(rows, dtype=np.float64)
    )


def compute_joint_values(table: JointValueTable, width: float) -> tuple[dict[str, float], str]:
    """The joint values where the pads, closing from open, first reach ``width`` metres.

    Returns:
        ``(values, where)``: joint name -> value, and ``between`` (found), ``open`` (the
        width is at least the open gap: the open values) or ``closed`` (the pads never get
        that close: the closed values).

    Raises:
        ValueError: ``width`` is not a finite number.
    """
    width = float(width)
    if not np.isfinite(width):
        raise ValueError(f"width is {width!r}; expected a finite number of metres")
    gaps = table.gaps

    def row(values: NDArray[np.float64]) -> dict[str, float]:
        return {name: float(v) for name, v in zip(table.names, values, strict=True)}

    if not gaps[0] > width:  # NaN-safe: an unknown open gap is the open hand
        return row(table.positions[0]), "open"
    reached = np.nonzero(gaps <= width)[0]
    if not len(reached):
        return row(table.positions[-1]), "closed"
    k = int(reached[0])
    g0, g1 = gaps[k - 1], gaps[k]
    f = 0.0 if g0 == g1 else (g0 - width) / (g0 - g1)
    return row(
        table.positions[k - 1] + f * (table.positions[k] - table.positions[k - 1])
    ), "between"
