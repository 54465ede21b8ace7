"""Kinematics of a :class:`~usdgrip.gripper_articulation.GripperArticulation`, pure numpy.

- :func:`compute_kinematic_tree`: the joint tree from the palm, the loop-closing joints,
  the mimic order, the independent joints (DOF) and the passive ones;
- :func:`compute_configuration`: joint positions (mimic followers from their leaders, the
  passive joints of closed chains solved so the loops close) and world link poses;

The fingers, the opening at each limit and the derived site are
:mod:`usdgrip.gripper_opening`'s.

Joint motion (UsdPhysics): body1's joint frame ``F1 = F0 @ M(q)``, ``F0 = world_from_body0
@ body0_from_joint``; ``M(q)`` translates ``q`` metres along the joint axis (prismatic) or
rotates ``q`` radians about it (revolute). ``docs/grippers.md`` describes the choices.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from usdgrip.frames import Mat4, compute_axis_angle_rotation
from usdgrip.gripper_articulation import (
    ArticulationJoint,
    ArticulationNote,
    GripperArticulation,
)

#: At most this many passive joints are solved to close kinematic loops.
MAX_LOOP_UNKNOWNS = 64
_LOOP_STEPS = 8  # continuation steps from the authored pose to a target
_ROTATION_WEIGHT = 0.01  # metres per radian of loop misalignment in the residual


def compute_joint_motion(kind: str, axis: int, position: float) -> Mat4:
    """``M(q)`` (4, 4): translation along (prismatic) or rotation about (revolute) the axis."""
    motion = np.eye(4)
    if kind == "prismatic":
        motion[axis, 3] = position
    elif kind == "revolute":
        unit = np.zeros(3)
        unit[axis] = 1.0
        motion[:3, :3] = compute_axis_angle_rotation(unit, position)
    return motion


def compute_rest_position(
    joint: ArticulationJoint, world_from_body0: Mat4, world_from_body1: Mat4
) -> tuple[float | None, float]:
    """The position the authored body poses give a joint, and how far they are off it.

    Returns:
        ``(q, residual)``: ``q`` in m or rad (``None`` for other joint kinds); ``residual``
        the translation (m) plus rotation (rad) left once ``M(q)`` is taken out.
    """
    f0 = world_from_body0 @ joint.body0_from_joint
    f1 = world_from_body1 @ joint.body1_from_joint
    relative = compute_rigid_inverse(f0) @ f1  # M(q) = inv(F0) F1
    rotation, translation = relative[:3, :3], relative[:3, 3]
    axis = joint.axis
    if joint.kind == "prismatic":
        q = float(translation[axis])
        off = np.delete(translation, axis)
        angle = _rotation_angle(rotation)
        return q, float(np.linalg.norm(off)) + angle
    if joint.kind == "revolute":
        b, c = (axis + 1) % 3, (axis + 2) % 3
        q = math.atan2(rotation[c, b] - rotation[b, c], rotation[b, b] + rotation[c, c])
        left = compute_joint_motion("revolute", axis, q)[:3, :3].T @ rotation
        return q, float(np.linalg.norm(translation)) + _rotation_angle(left)
    return None, 0.0


def _rotation_angle(rotation: NDArray[np.float64]) -> float:
    return math.acos(max(-1.0, min(1.0, (float(np.trace(rotation)) - 1.0) / 2.0)))


@dataclass(frozen=True)
class KinematicTree:
    """The joint tree of an articulation, from the palm (see :func:`compute_kinematic_tree`)."""

    order: tuple[int, ...]
    """Links in breadth-first order from the palm (the links the palm reaches)."""
    parent_joint: tuple[int | None, ...]
    """Per link, the tree joint to its parent (``None`` for the palm and unreached links)."""
    parent_link: tuple[int | None, ...]
    reversed_joint: tuple[bool, ...]
    """Per link, True when the link is its parent joint's body0 (the joint is walked backwards)."""
    loops: tuple[int, ...]
    """Joints that close a kinematic loop (or are excluded from the articulation)."""
    palm_group: frozenset[int]
    """The palm and the links welded to it by fixed joints."""
    mimic_order: tuple[int, ...]
    """Mimic followers, each after its leader."""
    dofs: tuple[int, ...]
    """Independent joints: driven (else every non-follower tree joint off the loops)."""
    passive: tuple[int, ...]
    """Moving tree joints that are neither DOF nor follower (solved by loops, else held)."""
    loop_unknowns: tuple[int, ...]
    """Passive joints on a loop path: solved so the loops close."""
    notes: tuple[ArticulationNote, ...] = ()


def compute_kinematic_tree(articulation: GripperArticulation) -> KinematicTree:
    """The joint tree from the palm, loops, mimic order, DOF and passive joints.

    Tree joints are the enabled joints not excluded from the articulation that join two
    links (a joint to the world is not walked: the palm is the root). A joint joining two
    links the tree already reached closes a loop, as does a joint excluded from the
    articulation (MuJoCo's ``connect`` equalities, Newton's loop joints).
    """
    links, joints = articulation.links, articulation.joints
    n = len(links)
    notes: list[ArticulationNote] = []
    adjacency: list[list[int]] = [[] for _ in range(n)]
    candidates: list[int] = []
    excluded: list[int] = []
    for index, joint in enumerate(joints):
        if not joint.enabled or joint.body0 is None or joint.body1 is None:
            continue
        if joint.body0 == joint.body1:
            continue
        if joint.exclude_from_articulation:
            excluded.append(index)
            continue
        candidates.append(index)
        adjacency[joint.body0].append(index)
        adjacency[joint.body1].append(index)
    parent_joint: list[int | None] = [None] * n
    parent_link: list[int | None] = [None] * n
    reversed_joint = [False] * n
    order: list[int] = []
    used = set()
    if articulation.palm is not None and n:
        seen = {articulation.palm}
        frontier = [articulation.palm]
        order.append(articulation.palm)
        while frontier:
            following = []
            for link in frontier:
                for index in adjacency[link]:
                    joint = joints[index]
                    other = joint.body1 if joint.body0 == link else joint.body0
                    if other in seen:
                        continue
                    seen.add(other)
                    used.add(index)
                    parent_joint[other], parent_link[other] = index, link
                    reversed_joint[other] = joint.body1 == link
                    order.append(other)
                    following.append(other)
            frontier = following
    reached = set(order)
    loops = [i for i in candidates if i not in used and joints[i].body0 in reached]
    loops += [i for i in excluded if joints[i].body0 in reached and joints[i].body1 in reached]
    palm_group = set()
    if articulation.palm is not None and n:
        palm_group.add(articulation.palm)
        for link in order[1:]:
            joint = parent_joint[link]
            if parent_link[link] in palm_group and joints[joint].kind == "fixed":
                palm_group.add(link)
    mimic_order, cycles = _order_mimics(joints)
    for cycle in cycles:
        names = " -> ".join(f"<{joints[i].path}>" for i in (*cycle, cycle[0]))
        notes.append(
            ArticulationNote(
                "mimic-cycle",
                joints[cycle[0]].path,
                f"mimic couplings form a cycle ({names}); expected each chain of leaders to "
                "end at a joint that is not a follower: these joints are read as passive",
            )
        )
    followers = set(mimic_order)
    tree = [j for j in (parent_joint[link] for link in order) if j is not None]
    moving = [i for i in tree if joints[i].moving]
    on_loops = _loop_paths(loops, joints, parent_joint, parent_link)
    driven = [i for i in moving if i not in followers and joints[i].drive is not None]
    if driven:
        dofs = driven
    else:
        dofs = [i for i in moving if i not in followers and i not in on_loops]
        if moving:
            notes.append(
                ArticulationNote(
                    "no-drive",
                    articulation.site_path or articulation.root_path,
                    "no joint of the gripper has a drive (PhysicsDriveAPI); the joints that "
                    "are not mimic followers are taken as its degrees of freedom",
                )
            )
    passive = [i for i in moving if i not in followers and i not in dofs]
    unknowns = [i for i in passive if i in on_loops]
    held = [i for i in passive if i not in on_loops]
    for index in held:
        notes.append(
            ArticulationNote(
                "passive-joint",
                joints[index].path,
                "joint has no drive and no mimic coupling and closes no loop: held at its "
                "authored position when the fingers move",
            )
        )
    if loops:
        names = ", ".join(f"<{joints[i].path}>" for i in loops)
        notes.append(
            ArticulationNote(
                "closed-chain",
                joints[loops[0]].path,
                f"closed kinematic chain(s) (loop joints {names}): the {len(unknowns)} "
                "passive joint(s) on the loops are solved so each loop closes (positions, "
                "least squares, nearest the authored pose); no contact or spring is modelled",
            )
        )
    return KinematicTree(
        tuple(order),
        tuple(parent_joint),
        tuple(parent_link),
        tuple(reversed_joint),
        tuple(loops),
        frozenset(palm_group),
        tuple(mimic_order),
        tuple(dofs),
        tuple(passive),
        tuple(unknowns[:MAX_LOOP_UNKNOWNS]),
        tuple(notes),
    )


def _order_mimics(joints: Sequence[ArticulationJoint]) -> tuple[list[int], list[list[int]]]:
    """Followers ordered after their leaders, and the mimic cycles (iterative, no recursion)."""
    state = [0] * len(joints)  # 0 new, 1 on the current walk, 2 done
    order: list[int] = []
    cycles: list[list[int]] = []
    in_cycle: set[int] = set()
    for start, joint in enumerate(joints):
        if state[start] or joint.mimic is None or not joint.mimic.enabled:
            continue
        walk = []
        current: int | None = start
        while current is not None and state[current] == 0:
            mimic = joints[current].mimic
            if mimic is None or not mimic.enabled:
                state[current] = 2  # a leader that follows nobody
                break
            state[current] = 1
            walk.append(current)
            current = mimic.leader
        if current is not None and state[current] == 1:
            cycle = walk[walk.index(current) :]
            cycles.append(cycle)
            in_cycle.update(cycle)
        blocked = current in in_cycle
        for index in reversed(walk):
            state[index] = 2
            if index in in_cycle or blocked:
                in_cycle.add(index)
                blocked = True
            else:
                order.append(index)
    return order, cycles


def _loop_paths(
    loops: Sequence[int],
    joints: Sequence[ArticulationJoint],
    parent_joint: Sequence[int | None],
    parent_link: Sequence[int | None],
) -> set[int]:
    """Tree joints on the path between each loop joint's two bodies."""
    on_path: set[int] = set()
    for index in loops:
        chains = []
        for link in (joints[index].body0, joints[index].body1):
            chain = []
            while link is not None and parent_joint[link] is not None:
                chain.append(parent_joint[link])
                link = parent_link[link]
            chains.append(chain)
        on_path.update(set(chains[0]) ^ set(chains[1]))
    return on_path


@dataclass(frozen=True)
class Configuration:
    """Joint positions and link poses of one state of the gripper."""

    positions: NDArray[np.float64]
    """(J,) SI, per joint (rest position for joints that did not move; 0 when unknown)."""
    link_poses: NDArray[np.float64]
    """(L, 4, 4) world poses."""
    loop_residual: float = 0.0
    """Largest loop-closure error left (metres, rotations weighted 0.01 m/rad)."""
    free_dofs: int = 0
    """Degrees of freedom the loops and drives leave (an underactuated finger), at the end."""


def compute_link_poses(
    articulation: GripperArticulation,
    positions: NDArray[np.float64],
    tree: KinematicTree | None = None,
) -> NDArray[np.float64]:
    """World link poses (L, 4, 4) for joint ``positions`` (J,), walking the tree from the palm.

    The palm keeps its authored pose; links the palm does not reach keep theirs.
    """
    tree = compute_kinematic_tree(articulation) if tree is None else tree
    joints = articulation.joints
    poses = np.array([link.world_from_link for link in articulation.links], dtype=np.float64)
    for link in tree.order[1:]:
        joint = joints[tree.parent_joint[link]]
        parent = poses[tree.parent_link[link]]
        motion = compute_joint_motion(
            joint.kind, joint.axis, float(positions[tree.parent_joint[link]])
        )
        if tree.reversed_joint[link]:  # link is body0: W0 = W1 L1 inv(M) inv(L0)
            poses[link] = (
                parent
                @ joint.body1_from_joint
                @ compute_rigid_inverse(motion)
                @ compute_rigid_inverse(joint.body0_from_joint)
            )
        else:  # W1 = W0 L0 M inv(L1)
            poses[link] = (
                parent
                @ joint.body0_from_joint
                @ motion
                @ compute_rigid_inverse(joint.body1_from_joint)
            )
    return poses


def compute_rigid_inverse(pose: Mat4) -> Mat4:
    """The inverse of a rigid (4, 4) pose (transpose the rotation)."""
    inverse = np.eye(4)
    inverse[:3, :3] = pose[:3, :3].T
    inverse[:3, 3] = -pose[:3, :3].T @ pose[:3, 3]
    return inverse


def compute_rest_positions(articulation: GripperArticulation) -> NDArray[np.float64]:
    """(J,) the authored position of each joint (0 where unknown)."""
    return np.array(
        [0.0 if j.rest_position is None else j.rest_position for j in articulation.joints],
        dtype=np.float64,
    )


def compute_configuration(
    articulation: GripperArticulation,
    values: Mapping[int, float] | None = None,
    tree: KinematicTree | None = None,
) -> Configuration:
    """Positions and poses with the joints of ``values`` (index -> SI position) set.

    Mimic followers follow their leaders; passive joints on closed loops are solved (in
    :data:`_LOOP_STEPS` steps from the authored pose, Levenberg-Marquardt, clamped to their
    limits) so every loop joint's two frames meet again; other joints keep their authored
    positions.
    """
    tree = compute_kinematic_tree(articulation) if tree is None else tree
    rest = compute_rest_positions(articulation)
    target = rest.copy()
    for index, value in (values or {}).items():
        target[index] = float(value)
    if not tree.loops or not tree.loop_unknowns:
        positions = _apply_mimics(articulation, tree, target)
        return Configuration(positions, compute_link_poses(articulation, positions, tree))
    positions = _apply_mimics(articulation, tree, rest.copy())
    residual, free = 0.0, 0
    for step in range(1, _LOOP_STEPS + 1):
        fraction = step / _LOOP_STEPS
        current = positions.copy()
        for index in values or {}:
            current[index] = rest[index] + fraction * (target[index] - rest[index])
        positions, residual, free = _close_loops(articulation, tree, current)
    return Configuration(
        positions, compute_link_poses(articulation, positions, tree), residual, free
    )


def _apply_mimics(
    articulation: GripperArticulation, tree: KinematicTree, positions: NDArray[np.float64]
) -> NDArray[np.float64]:
    joints = articulation.joints
    for index in tree.mimic_order:
        mimic = joints[index].mimic
        positions[index] = mimic.compute_follower(positions[mimic.leader])
    return positions


def _loop_residual(
    articulation: GripperArticulation, tree: KinematicTree, positions: NDArray[np.float64]
) -> NDArray[np.float64]:
    poses = compute_link_poses(articulation, positions, tree)
    parts = []
    for index in tree.loops:
        joint = articulation.joints[index]
        f0 = poses[joint.body0] @ joint.body0_from_joint
        f1 = poses[joint.body1] @ joint.body1_from_joint
        parts.append(f1[:3, 3] - f0[:3, 3])
        if joint.kind in ("revolute", "prismatic"):
            parts.append(_ROTATION_WEIGHT * np.cross(f0[:3, joint.axis], f1[:3, joint.axis]))
        elif joint.kind == "fixed":
            relative = f0[:3, :3].T @ f1[:3, :3]
            parts.append(_ROTATION_WEIGHT * (relative - relative.T)[[2, 0, 1], [1, 2, 0]])
    return np.concatenate(parts) if parts else np.zeros(0)


def _close_loops(
    articulation: GripperArticulation, tree: KinematicTree, positions: NDArray[np.float64]
) -> tuple[NDArray[np.float64], float, int]:
    """Solve the loop unknowns (Levenberg-Marquardt, numeric Jacobian) from ``positions``."""
    unknowns = list(tree.loop_unknowns)
    joints = articulation.joints
    low = np.array([-np.inf if joints[i].lower is None else joints[i].lower for i in unknowns])
    high = np.array([np.inf if joints[i].upper is None else joints[i].upper for i in unknowns])

    def evaluate(x: NDArray[np.float64]) -> NDArray[np.float64]:
        trial = positions.copy()
        trial[unknowns] = x
        return _loop_residual(articulation, tree, _apply_mimics(articulation, tree, trial))

    x = np.clip(positions[unknowns], low, high)
    r = evaluate(x)
    damping = 1e-3
    jacobian = np.zeros((len(r), len(x)))
    for _ in range(50):
        if float(np.abs(r).max(initial=0.0)) < 1e-10:
            break
        for k in range(len(x)):
            step = np.zeros(len(x))
            step[k] = 1e-7
            jacobian[:, k] = (evaluate(x + step) - r) / 1e-7
        normal = jacobian.T @ jacobian
        gradient = jacobian.T @ r
        improved = False
        for _ in range(8):
            delta = np.linalg.solve(normal + damping * np.eye(len(x)), -gradient)
            candidate = np.clip(x + delta, low, high)
            r_new = evaluate(candidate)
            if np.dot(r_new, r_new) < np.dot(r, r):
                x, r, improved = candidate, r_new, True
                damping = max(damping / 10.0, 1e-9)
                break
            damping *= 10.0
        if not improved:
            break
    trial = positions.copy()
    trial[unknowns] = x
    trial = _apply_mimics(articulation, tree, trial)
    rank = int(np.linalg.matrix_rank(jacobian, tol=1e-6)) if jacobian.size else 0
    return trial, float(np.abs(r).max(initial=0.0)), max(0, len(x) - rank)
