"""The gripper's own articulation as a MuJoCo hand, built with ``mujoco.MjSpec``.

:func:`add_articulated_hand` adds the links of a
:class:`~usdgrip.gripper_articulation.GripperArticulation` under a body of an ``MjSpec``
(the hand's root, in the grasp frame G) and returns the names of what it made
(:class:`ArticulatedHand`). Nothing is hand-written: every body is a USD link with the
authored mass, centre of mass and inertia; every geom a convex piece of its colliders
(boxes stay boxes; a mesh with ``physics:approximation = convexHull`` is its hull; other
meshes go through :func:`~usdgrip.grasping.physics.decompose.decompose_mesh`); every
joint the USD joint's kind, axis, limits and authored position (``ref``); every driven
joint a position actuator with the drive's stiffness and damping, limited to the drive's
``maxForce``; every mimic coupling a joint equality (MuJoCo's polynomial); every joint
that closes a kinematic loop a ``connect`` (``weld`` for a fixed joint) equality.

The model's reference configuration is the **open** one (the open side measured from
geometry, :class:`~usdgrip.gripper_articulation.OpeningReport`), so ``qpos0`` is the open
hand; the actuators' targets are the closed limits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import mujoco
import numpy as np
from numpy.polynomial import Polynomial
from numpy.typing import NDArray

from usdgrip.grasping.physics.decompose import decompose_mesh
from usdgrip.grasping.physics.params import DecompositionParams
from usdgrip.gripper_articulation import ArticulationLink, GripperArticulation
from usdgrip.gripper_kinematics import (
    compute_configuration,
    compute_kinematic_tree,
    compute_rigid_inverse,
)

#: Smallest link mass (kg) and principal moment (kg·m²) given to MuJoCo: below these the
#: solver stiffens badly (tiny authored links, e.g. a Robotiq's 9 g driver).
MIN_LINK_MASS = 1e-3
MIN_LINK_INERTIA = 1e-7
#: Fraction of a driven joint's range within which it is at its closed stop.
STOP_FRACTION = 0.02
_DEGREES = 180.0 / np.pi
#: Rotor inertia added to every joint (kg·m² or kg), MuJoCo's ``armature``: a numerical
#: regularisation that keeps light links of closed loops (a Robotiq's 9 g driver) stable
#: at the engine's time step; it adds no force.
JOINT_ARMATURE = 1e-4


@dataclass(frozen=True)
class ArticulatedHand:
    """Names (in the spec, then the compiled model) of one articulated hand's parts."""

    bodies: tuple[str, ...]
    """Per articulation link (``None`` where the palm does not reach it: not built)."""
    joints: dict[int, str]
    """Articulation joint index -> MuJoCo joint name (moving and spherical tree joints)."""
    actuators: dict[int, str]
    """Driven articulation joint index -> actuator name."""
    pad_geoms: tuple[tuple[str, ...], tuple[str, ...]]
    """Geoms of the left (``side -1``) and right (``side +1``) pad links."""
    pad_bodies: tuple[str, str]
    """Bodies of the left and right pad links."""
    geoms: tuple[str, ...]
    """Every collision geom of the hand."""
    open_positions: dict[int, float]
    """Driven joint -> position at the open limit (SI)."""
    closed_positions: dict[int, float]
    """Driven joint -> position at the closed limit (SI)."""
    close_targets: dict[int, float]
    """Driven joint -> the drive's target to close: past the closed limit by ``maxForce /
    stiffness``, so the drive pushes with its full ``maxForce`` up to the limit (a target at
    the limit would squeeze a thin part with almost nothing)."""
    opening_open: float
    """Pad gap at the open limit, m (the articulation's report)."""


def _quat(rotation: NDArray[np.float64]) -> NDArray[np.float64]:
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rotation, dtype=np.float64).ravel())
    return quat


def _link_inertia(link: ArticulationLink, points: NDArray[np.float64]) -> tuple:
    """Mass, centre, diagonal inertia and its frame quaternion (authored, else from the bounds)."""
    mass = max(float(link.mass) if link.mass else MIN_LINK_MASS, MIN_LINK_MASS)
    centre = (
        np.asarray(link.center_of_mass, dtype=np.float64)
        if link.center_of_mass is not None
        else (points.mean(axis=0) if len(points) else np.zeros(3))
    )
    quat = np.array([1.0, 0.0, 0.0, 0.0])
    if link.diagonal_inertia is not None and np.all(np.asarray(link.diagonal_inertia) > 0):
        diag = np.asarray(link.diagonal_inertia, dtype=np.float64)
        if link.principal_axes is not None:
            quat = np.asarray(link.principal_axes, dtype=np.float64)
            quat = quat / max(np.linalg.norm(quat), 1e-12)
    else:  # a solid box of the colliders' bounds
        size = np.ptp(points, axis=0) if len(points) else np.full(3, 0.01)
        diag = mass * (size[[1, 0, 0]] ** 2 + size[[2, 2, 1]] ** 2) / 12
    diag = np.maximum(diag, MIN_LINK_INERTIA)
    diag = np.minimum(diag, diag.sum() - diag)  # the triangle inequality MuJoCo checks
    return mass, centre, diag, quat


def _convex_pieces(
    link: ArticulationLink,
    decomposition: DecompositionParams | None,
    cache_dir: str | os.PathLike[str] | None,
    use_cache: bool,
) -> list[tuple[str, NDArray[np.float64], NDArray[np.float64] | None]]:
    """``(kind, link_from_piece or points, box size)`` per convex piece of a link."""
    out: list[tuple[str, NDArray[np.float64], NDArray[np.float64] | None]] = []
    for piece in link.pieces:
        if piece.kind == "box" and "size" in piece.params:
            size = np.broadcast_to(np.asarray(piece.params["size"], dtype=np.float64), 3)
            out.append(("box", np.asarray(piece.link_from_piece), size.copy()))
        elif piece.kind != "mesh" or piece.approximation == "convexHull":
            out.append(("convex", piece.link_vertices, None))
        else:
            parts = decompose_mesh(
                piece.link_vertices,
                piece.faces,
                decomposition,
                cache_dir=cache_dir,
                use_cache=use_cache,
                what=f"collider <{piece.path}>",
            ).pieces
            out.extend(("convex", part, None) for part in parts)
    return out


def _shifted_polynomial(
    coefs: list[float], leader_ref: float, follower_ref: float
) -> NDArray[np.float64]:
    """MuJoCo's joint equality ``y - y0 = Σ a_k (x - x0)^k`` for ``y = Σ c_k x^k``."""
    shifted = Polynomial(coefs)(Polynomial([leader_ref, 1.0])) - follower_ref
    out = np.zeros(5)
    values = shifted.coef[:5]
    out[: len(values)] = values
    return out


def add_articulated_hand(
    spec: mujoco.MjSpec,
    parent: mujoco.MjsBody,
    articulation: GripperArticulation,
    *,
    prefix: str,
    contype: int = 2,
    conaffinity: int = 4,
    force_limit: float | None = None,
    margin: float = 0.0,
    decomposition: DecompositionParams | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
) -> ArticulatedHand:
    """Add ``articulation``'s links under ``parent`` (a body at the grasp frame G).

    Args:
        spec: the spec to add to (meshes, actuators and equalities go there).
        parent: the hand's root body; its frame is the site's grasp frame G.
        articulation: read by :func:`usdgrip.usd.articulation.read_gripper_articulation`,
            with a grasp frame and an opening report (status ``articulated``/``unrooted``).
        prefix: prepended to every name (``hand_0_``), so several hands share a spec.
        contype: collision bits of the hand's geoms (``contype``).
        conaffinity: their ``conaffinity``.
        force_limit: the actuators' force limit where a drive authors no ``maxForce``.
        margin: contact margin of the hand's geoms (m), with an equal ``gap`` (contacts
            reported that close, active only when they touch).
        decomposition: CoACD parameters for non-convex collider meshes.
        cache_dir: the CoACD cache folder.
        use_cache: False to bypass the cache.

    Returns:
        The names of the bodies, joints, actuators and pad geoms made.

    Raises:
        ValueError: the articulation has no grasp frame, no opening report, no driven
            joint or no pad on each side (the message says which).
    """
    where = articulation.site_path or articulation.root_path
    report = articulation.opening
    if articulation.grasp_frame is None:
        raise ValueError(f"gripper <{where}>: no grasp frame; expected a gripper site")
    if report is None or not report.driven:
        raise ValueError(f"gripper <{where}>: no driven finger joint to simulate")
    sides = {chain.side: chain for chain in report.fingers if chain.pad is not None}
    if -1 not in sides or 1 not in sides:
        raise ValueError(f"gripper <{where}>: expected a pad link on each side of the grip")
    joints = articulation.joints
    tree = compute_kinematic_tree(articulation)
    open_values = {i: float(report.open_positions[joints[i].path]) for i in report.driven}
    closed_values = {i: float(report.closed_positions[joints[i].path]) for i in report.driven}
    config = compute_configuration(articulation, open_values, tree)
    g_inverse = compute_rigid_inverse(np.asarray(articulation.grasp_frame, dtype=np.float64))
    poses = np.einsum("ij,ljk->lik", g_inverse, config.link_poses)  # G_from_link at open
    names: list[str | None] = [None] * len(articulation.links)
    bodies: dict[int, mujoco.MjsBody] = {}
    geoms: list[str] = []
    link_geoms: dict[int, list[str]] = {}
    joint_names: dict[int, str] = {}
    for link in tree.order:
        record = articulation.links[link]
        name = f"{prefix}{record.name}_{link}"
        if link == tree.order[0]:
            body = parent.add_body(
                name=name, pos=poses[link][:3, 3], quat=_quat(poses[link][:3, :3])
            )
        else:
            up = tree.parent_link[link]
            local = compute_rigid_inverse(poses[up]) @ poses[link]
            body = bodies[up].add_body(name=name, pos=local[:3, 3], quat=_quat(local[:3, :3]))
            index = tree.parent_joint[link]
            joint = joints[index]
            if joint.kind in ("prismatic", "revolute", "spherical"):
                frame = (
                    joint.body0_from_joint if tree.reversed_joint[link] else joint.body1_from_joint
                )
                sign = -1.0 if tree.reversed_joint[link] else 1.0
                kind = {
                    "prismatic": mujoco.mjtJoint.mjJNT_SLIDE,
                    "revolute": mujoco.mjtJoint.mjJNT_HINGE,
                    "spherical": mujoco.mjtJoint.mjJNT_BALL,
                }[joint.kind]
                made = body.add_joint(
                    name=f"{prefix}{joint.name}_{index}",
                    type=kind,
                    pos=frame[:3, 3],
                    axis=sign * frame[:3, joint.axis],
                )
                if joint.kind != "spherical":
                    # the spec's angle unit (MjSpec's default compiler reads degrees)
                    unit = _DEGREES if joint.kind == "revolute" and spec.compiler.degree else 1.0
                    made.ref = unit * float(config.positions[index])
                    if joint.lower is not None and joint.upper is not None:
                        made.limited = mujoco.mjtLimited.mjLIMITED_TRUE
                        made.range = [unit * float(joint.lower), unit * float(joint.upper)]
                made.armature = JOINT_ARMATURE
                joint_names[index] = made.name
        body.gravcomp = 1.0
        pieces = _convex_pieces(record, decomposition, cache_dir, use_cache)
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) / 2
        points = [
            value if kind == "convex" else (corners * size) @ value[:3, :3].T + value[:3, 3]
            for kind, value, size in pieces
        ]
        cloud = np.concatenate([np.atleast_2d(p) for p in points]) if points else np.empty((0, 3))
        mass, centre, diag, iquat = _link_inertia(record, cloud)
        body.mass, body.ipos, body.inertia, body.iquat = mass, centre, diag, iquat
        body.explicitinertial = True
        mine = link_geoms.setdefault(link, [])
        for k, (kind, value, size) in enumerate(pieces):
            geom_name = f"{name}_geom_{k}"
            if kind == "box":
                geom = body.add_geom(
                    name=geom_name,
                    type=mujoco.mjtGeom.mjGEOM_BOX,
                    size=size / 2,
                    pos=value[:3, 3],
                    quat=_quat(value[:3, :3]),
                )
            else:
                mesh = spec.add_mesh(name=f"{geom_name}_mesh")
                mesh.uservert = np.asarray(value, dtype=np.float64).ravel().tolist()
                geom = body.add_geom(
                    name=geom_name, type=mujoco.mjtGeom.mjGEOM_MESH, meshname=mesh.name
                )
            geom.contype, geom.conaffinity, geom.condim = contype, conaffinity, 4
            geom.margin = geom.gap = margin
            geom.friction = [0.0, 0.0, 0.0]  # the object's friction decides (max of the pair)
            geoms.append(geom_name)
            mine.append(geom_name)
        names[link] = name
        bodies[link] = body
    actuators: dict[int, str] = {}
    targets: dict[int, float] = {}
    for index in report.driven:
        joint = joints[index]
        drive = joint.drive
        limit = drive.max_force if drive is not None and drive.max_force else force_limit
        kp = drive.stiffness if drive is not None and drive.stiffness else None
        span = abs(closed_values[index] - open_values[index])
        if kp is None:  # no stiffness authored: full force at half the travel
            kp = (limit or 1.0) / max(span / 2, 1e-6)
        kv = drive.damping if drive is not None and drive.damping else 0.0
        act = spec.add_actuator(name=f"{prefix}drive_{index}", target=joint_names[index])
        act.trntype = mujoco.mjtTrn.mjTRN_JOINT
        act.set_to_position(kp=float(kp), kv=float(kv))
        sign = 1.0 if closed_values[index] >= open_values[index] else -1.0
        targets[index] = closed_values[index] + sign * (limit / kp if limit else 0.0)
        low, high = sorted((open_values[index], targets[index]))
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.ctrlrange = [low, high]
        if limit:
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [-float(limit), float(limit)]
        actuators[index] = act.name
    for index, joint in enumerate(joints):
        mimic = joint.mimic
        if mimic is None or not mimic.enabled or index not in joint_names:
            continue
        if mimic.leader not in joint_names:
            continue
        coefs = [mimic.coef0, mimic.coef1, *mimic.higher]
        poly = _shifted_polynomial(
            coefs, float(config.positions[mimic.leader]), float(config.positions[index])
        )
        spec.add_equality(
            name=f"{prefix}mimic_{index}",
            type=mujoco.mjtEq.mjEQ_JOINT,
            name1=joint_names[index],
            name2=joint_names[mimic.leader],
            data=[*poly, *np.zeros(7)],
        )
    for index in tree.loops:
        joint = joints[index]
        if joint.body0 not in bodies or joint.body1 not in bodies or not joint.enabled:
            continue
        eq_type = mujoco.mjtEq.mjEQ_WELD if joint.kind == "fixed" else mujoco.mjtEq.mjEQ_CONNECT
        anchor = joint.body0_from_joint[:3, 3]
        spec.add_equality(
            name=f"{prefix}loop_{index}",
            type=eq_type,
            objtype=mujoco.mjtObj.mjOBJ_BODY,
            name1=names[joint.body0],
            name2=names[joint.body1],
            data=[*anchor, *np.zeros(9)],
        )
    left, right = sides[-1].pad, sides[1].pad
    return ArticulatedHand(
        bodies=tuple(n or "" for n in names),
        joints=joint_names,
        actuators=actuators,
        pad_geoms=(tuple(link_geoms.get(left, ())), tuple(link_geoms.get(right, ()))),
        pad_bodies=(names[left] or "", names[right] or ""),
        geoms=tuple(geoms),
        open_positions=open_values,
        closed_positions=closed_values,
        close_targets=targets,
        opening_open=float(report.opening_open or 0.0),
    )
