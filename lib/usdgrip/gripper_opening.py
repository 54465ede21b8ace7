"""The fingers of a gripper, the opening at each joint limit, the open side, a derived site.

Pure numpy over :class:`~usdgrip.gripper_articulation.GripperArticulation` records and
:mod:`usdgrip.gripper_kinematics`:

- :func:`compute_finger_chains`: the fingers (links off the palm, joined by tree or loop
  joints), each with its pad and the side of the grasp centre it is on;
- :func:`compute_opening_report`: the pad gap along the closing axis with the independent
  joints at each limit, and which limit opens, decided from geometry (never a convention);
- :func:`suggest_gripper_site`: the site a gripper with fingers but no site should author.

``docs/grippers.md`` describes the choices.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from usdgrip.frames import Mat4, Vec3, compute_unit
from usdgrip.gripper_articulation import (
    ArticulationJoint,
    ArticulationNote,
    FingerChain,
    GripperArticulation,
    OpeningReport,
)
from usdgrip.gripper_kinematics import (
    KinematicTree,
    compute_configuration,
    compute_kinematic_tree,
    compute_rigid_inverse,
)

#: The tip of each pad that the gap is measured at: this fraction of its length along the
#: approach, from its farthest point.
PAD_BAND_FRACTION = 0.5
#: Gaps closer than this (metres) count as equal when deciding the open limit.
OPENING_TIE_M = 1e-6
#: At most this many independent joints are combined limit by limit (2**n configurations);
#: beyond it only "all lower" and "all upper" are compared.
MAX_COMBINED_DOFS = 4


# --- fingers, pads, opening -----------------------------------------------------------


def _link_vertices(articulation: GripperArticulation, link: int) -> NDArray[np.float64]:
    pieces = articulation.links[link].pieces
    if not pieces:
        return np.zeros((0, 3))
    return np.concatenate([piece.link_vertices for piece in pieces])


def _link_mesh(
    articulation: GripperArticulation, link: int
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """All collider triangles of a link in its frame: ``(vertices (V, 3), faces (F, 3))``."""
    vertices, faces, offset = [], [], 0
    for piece in articulation.links[link].pieces:
        vertices.append(piece.link_vertices)
        faces.append(piece.faces + offset)
        offset += len(piece.vertices)
    if not vertices:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    return np.concatenate(vertices), np.concatenate(faces)


def _clip_tip(
    points: NDArray[np.float64], faces: NDArray[np.int64], along: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The surface points bounding the tip band: vertices in it and edge crossings of its edge.

    A linear function's extremes over the clipped surface lie among these points.
    """
    reach = float(along.max())
    threshold = reach - PAD_BAND_FRACTION * (reach - float(along.min()))
    inside = points[along >= threshold]
    if len(faces) == 0:
        return inside
    edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    s0, s1 = along[edges[:, 0]] - threshold, along[edges[:, 1]] - threshold
    crossing = (s0 * s1) < 0
    t = (s0[crossing] / (s0[crossing] - s1[crossing]))[:, None]
    p0, p1 = points[edges[crossing, 0]], points[edges[crossing, 1]]
    return np.concatenate([inside, p0 + t * (p1 - p0)])


def _world(points: NDArray[np.float64], pose: Mat4) -> NDArray[np.float64]:
    return points @ pose[:3, :3].T + pose[:3, 3]


def compute_finger_chains(
    articulation: GripperArticulation,
    tree: KinematicTree,
    approach: Vec3,
    closing: Vec3,
    origin: Vec3,
) -> tuple[FingerChain, ...]:
    """The fingers: links off the palm group, joined by tree joints or loop joints.

    Each finger's pad is its link whose colliders reach farthest along ``approach`` at the
    authored pose; its side is the sign of the pad centre's offset from ``origin`` along
    ``closing``.
    """
    joints = articulation.joints
    members = [link for link in tree.order if link not in tree.palm_group]
    group = {link: link for link in members}

    def find(link: int) -> int:
        while group[link] != link:
            group[link] = group[group[link]]
            link = group[link]
        return link

    edges = [(link, tree.parent_link[link]) for link in members]
    edges += [(joints[i].body0, joints[i].body1) for i in tree.loops]
    for a, b in edges:
        if a in group and b in group:
            group[find(a)] = find(b)
    chains: dict[int, list[int]] = {}
    for link in members:
        chains.setdefault(find(link), []).append(link)
    found = []
    for links in chains.values():
        linkset = set(links)
        moving = sorted(
            {tree.parent_joint[link] for link in links if joints[tree.parent_joint[link]].moving}
            | {i for i in tree.loops if joints[i].body0 in linkset or joints[i].body1 in linkset}
        )
        pad, reach, centre = None, -np.inf, None
        for link in links:
            vertices = _link_vertices(articulation, link)
            if len(vertices) == 0:
                continue
            world = _world(vertices, articulation.links[link].world_from_link)
            farthest = float((world @ approach).max())
            if farthest > reach:
                pad, reach, centre = link, farthest, 0.5 * (world.min(axis=0) + world.max(axis=0))
        side = 0
        if centre is not None:
            offset = float(np.dot(centre - origin, closing))
            side = 0 if abs(offset) < 1e-9 else (1 if offset > 0 else -1)
        found.append(FingerChain(tuple(links), tuple(moving), pad, side))
    return tuple(sorted(found, key=lambda chain: (chain.side, chain.links)))


def compute_gap(
    articulation: GripperArticulation,
    fingers: Sequence[FingerChain],
    link_poses: NDArray[np.float64],
    closing: Vec3,
    approach: Vec3,
) -> float | None:
    """Pad gap (m) along ``closing`` between the two sides' pad tips.

    Of each pad, the surface in the outer :data:`PAD_BAND_FRACTION` of its extent along
    ``approach`` (the tip, where an object is held; triangles clipped at the band's edge)
    counts: the gap is the +1 side's lowest coordinate minus the -1 side's highest. For
    parallel pads that is the gap between their faces; for revolute jaws the gap at the tips.
    """
    sides: dict[int, list[float]] = {-1: [], 1: []}
    for finger in fingers:
        if finger.pad is None or finger.side == 0:
            continue
        vertices, faces = _link_mesh(articulation, finger.pad)
        world = _world(vertices, link_poses[finger.pad])
        tip = _clip_tip(world, faces, world @ approach)
        projected = tip @ closing
        sides[finger.side].append(float(projected.min() if finger.side > 0 else projected.max()))
    if not sides[-1] or not sides[1]:
        return None
    return min(sides[1]) - max(sides[-1])


def compute_opening_report(
    articulation: GripperArticulation,
    frame: Mat4 | None = None,
    tree: KinematicTree | None = None,
) -> tuple[OpeningReport, tuple[ArticulationNote, ...]]:
    """The gap at each limit and the open side, measured along the frame's X (closing) axis.

    ``frame`` (world (4, 4): X closing, Z approach, origin the grasp centre) defaults to
    the site's grasp frame, else one estimated from the fingers (:func:`estimate_grasp_frame`).
    Each independent joint (:attr:`KinematicTree.dofs`) is set to its lower or upper limit,
    every combination for up to :data:`MAX_COMBINED_DOFS` of them; the combination with the
    widest gap is open, its opposite closed. Mimic followers and loops follow.

    Returns:
        The report and the notes it adds (missing limits, no two sides, loop residuals).
    """
    tree = compute_kinematic_tree(articulation) if tree is None else tree
    notes: list[ArticulationNote] = []
    subject = articulation.site_path or articulation.root_path
    if frame is None:
        frame = articulation.grasp_frame
    if frame is None:
        frame = estimate_grasp_frame(articulation, tree)
    closing, approach, origin = frame[:3, 0], frame[:3, 2], frame[:3, 3]
    fingers = compute_finger_chains(articulation, tree, approach, closing, origin)
    joints = articulation.joints
    dofs = tuple(i for i in tree.dofs if joints[i].kind in ("prismatic", "revolute"))
    report = OpeningReport(closing.copy(), approach.copy(), fingers, dofs)
    sides = {finger.side for finger in fingers if finger.pad is not None}
    if not {-1, 1} <= sides:
        notes.append(
            ArticulationNote(
                "no-opposed-pads",
                subject,
                f"{len(fingers)} finger(s) with colliders on side(s) {sorted(sides) or 'none'} "
                "of the closing axis; expected pads on both sides of the grasp centre: the "
                "opening is not computed",
            )
        )
        return report, tuple(notes)
    missing = [i for i in dofs if joints[i].lower is None or joints[i].upper is None]
    for index in missing:
        notes.append(
            ArticulationNote(
                "joint-limits-missing",
                joints[index].path,
                f"{joints[index].kind} joint has no usable lower and upper limit "
                f"(authored {_describe_limits(joints[index])}); expected both finite: the "
                "opening at its limits is not computed",
            )
        )
    if missing or not dofs:
        return report, tuple(notes)

    def gap_at(choice: Sequence[int]) -> tuple[float | None, object]:
        values = {
            i: (joints[i].lower if pick == 0 else joints[i].upper)
            for i, pick in zip(dofs, choice, strict=True)
        }
        config = compute_configuration(articulation, values, tree)
        if config.loop_residual > 1e-4:
            notes.append(
                ArticulationNote(
                    "loop-not-closed",
                    subject,
                    f"the kinematic loops stay {config.loop_residual:.3g} m apart at "
                    f"{_describe_values(joints, values)}: the opening there is approximate",
                )
            )
        return compute_gap(articulation, fingers, config.link_poses, closing, approach), config

    if len(dofs) <= MAX_COMBINED_DOFS:
        choices = list(itertools.product((0, 1), repeat=len(dofs)))
    else:
        choices = [(0,) * len(dofs), (1,) * len(dofs)]
    results = {choice: gap_at(choice) for choice in choices}
    lower = results[(0,) * len(dofs)][0]
    upper = results[(1,) * len(dofs)][0]
    best = max(choices, key=lambda c: -np.inf if results[c][0] is None else results[c][0])
    worst = tuple(1 - pick for pick in best)
    open_gap, open_config = results[best]
    closed_gap, closed_config = results[worst]
    open_limits = []
    for k in range(len(dofs)):
        flipped = list(best)
        flipped[k] = 1 - flipped[k]
        other = results.get(tuple(flipped), (None,))[0]
        if other is not None and open_gap is not None and abs(open_gap - other) <= OPENING_TIE_M:
            open_limits.append("either")
        else:
            open_limits.append("lower" if best[k] == 0 else "upper")
    moving = [i for i in range(len(joints)) if joints[i].moving]
    report = replace(
        report,
        open_limits=tuple(limit for limit in open_limits if limit != "either"),
        opening_at_lower=lower,
        opening_at_upper=upper,
        opening_open=open_gap,
        opening_closed=closed_gap,
        open_positions={joints[i].path: float(open_config.positions[i]) for i in moving},
        closed_positions={joints[i].path: float(closed_config.positions[i]) for i in moving},
    )
    for k, limit in enumerate(open_limits):
        if limit == "either":
            notes.append(
                ArticulationNote(
                    "joint-does-not-open",
                    joints[dofs[k]].path,
                    "moving this joint from one limit to the other does not change the pad "
                    "gap: it does not open or close the fingers",
                )
            )
    return report, tuple(notes)


def _describe_limits(joint: ArticulationJoint) -> str:
    unit = "deg" if joint.kind == "revolute" else "stage units"
    low, high = joint.authored_limits
    return f"lower {_fmt(low)}, upper {_fmt(high)} {unit}"


def _fmt(value: float | None) -> str:
    return "not authored" if value is None else f"{value:g}"


def _describe_values(joints: Sequence[ArticulationJoint], values: Mapping[int, float]) -> str:
    return ", ".join(f"{joints[i].name} = {v:.4g} {joints[i].unit}" for i, v in values.items())


def estimate_grasp_frame(
    articulation: GripperArticulation, tree: KinematicTree | None = None
) -> Mat4:
    """A grasp frame from the fingers alone, at the authored pose (world (4, 4)).

    Approach (Z): from the palm group's collider centre (else the palm origin) to the
    centre of every finger collider. Closing (X): from the pad centre of one finger to the
    pad centre of the finger farthest from it, made perpendicular to the approach. Origin:
    halfway between those two pad centres. With fewer than two padded fingers, the palm's
    frame is returned.

    Raises:
        ValueError: the articulation has no palm.
    """
    tree = compute_kinematic_tree(articulation) if tree is None else tree
    if articulation.palm is None:
        raise ValueError(
            f"<{articulation.root_path}>: no palm (rigid body) to estimate a frame from"
        )
    palm_pose = articulation.links[articulation.palm].world_from_link
    palm_points = [
        _world(_link_vertices(articulation, link), articulation.links[link].world_from_link)
        for link in tree.palm_group
    ]
    palm_points = np.concatenate(palm_points) if palm_points else np.zeros((0, 3))
    base = _centre(palm_points) if len(palm_points) else palm_pose[:3, 3]
    members = [link for link in tree.order if link not in tree.palm_group]
    finger_points = [
        _world(_link_vertices(articulation, link), articulation.links[link].world_from_link)
        for link in members
    ]
    finger_points = [p for p in finger_points if len(p)]
    if not finger_points:
        return palm_pose.copy()
    approach = compute_unit(_centre(np.concatenate(finger_points)) - base)
    if approach is None:
        approach = palm_pose[:3, 2].copy()
    # Provisional closing axis: any perpendicular; the chains only need the approach here.
    chains = compute_finger_chains(articulation, tree, approach, np.zeros(3), np.zeros(3))
    centres = []
    for chain in chains:
        if chain.pad is None:
            continue
        world = _world(
            _link_vertices(articulation, chain.pad), articulation.links[chain.pad].world_from_link
        )
        centres.append(_centre(world))
    if len(centres) < 2:
        return palm_pose.copy()
    centres = np.array(centres)
    distances = np.linalg.norm(centres[:, None, :] - centres[None, :, :], axis=-1)
    a, b = np.unravel_index(int(np.argmax(distances)), distances.shape)
    closing = centres[b] - centres[a]
    closing = closing - np.dot(closing, approach) * approach
    closing = compute_unit(closing)
    if closing is None:
        return palm_pose.copy()
    frame = np.eye(4)
    frame[:3, 0], frame[:3, 1], frame[:3, 2] = closing, np.cross(approach, closing), approach
    frame[:3, 3] = 0.5 * (centres[a] + centres[b])
    return frame


#: An approach this close (degrees) to an axis of the palm frame is taken as that axis.
SNAP_TO_PALM_AXIS_DEG = 2.0


def _snap_to_axes(direction: Vec3, palm: Mat4) -> Vec3:
    """``direction``, or the palm axis within :data:`SNAP_TO_PALM_AXIS_DEG` of it."""
    cosines = palm[:3, :3].T @ direction
    k = int(np.argmax(np.abs(cosines)))
    if abs(cosines[k]) >= np.cos(np.radians(SNAP_TO_PALM_AXIS_DEG)):
        return palm[:3, k] * np.sign(cosines[k])
    return direction


def _pad_tip(
    articulation: GripperArticulation, link: int, poses: NDArray[np.float64], approach: Vec3
) -> NDArray[np.float64]:
    """World points bounding a pad's tip band (the part the gap is measured at)."""
    vertices, faces = _link_mesh(articulation, link)
    world = _world(vertices, poses[link])
    return _clip_tip(world, faces, world @ approach)


def _centre(points: NDArray[np.float64]) -> Vec3:
    """Centre of the axis-aligned bounds of ``points``."""
    return 0.5 * (points.min(axis=0) + points.max(axis=0))


# --- deriving a site --------------------------------------------------------------------


@dataclass(frozen=True)
class SiteSuggestion:
    """The gripper site to author for a gripper that has fingers but no site.

    Positions and directions are in the palm link's frame (metres): the site is authored
    as a child of the palm with ``translate`` and the two axis curves along ``forward`` and
    ``grip_line`` (:func:`usdgrip.usd.authoring.define_gripper_site` takes them as they are).
    """

    parent_path: str
    """The palm link (the rigid body the site is authored under)."""
    translate: Vec3
    """(3,) TCP in the palm frame: halfway between the two pads' centres, fingers open."""
    forward: Vec3
    """(3,) unit approach (+Z of the grasp frame) in the palm frame."""
    grip_line: Vec3
    """(3,) unit grip line (along the pad width) in the palm frame: -Y of the grasp frame, so
    that forward x grip_line is the closing axis X (SPEC 2)."""
    pad_width: float
    """Metres: the narrower pad's extent along the grip line."""
    max_opening: float
    """Metres: the pad gap with the fingers at their open limits."""
    open_side: str | None
    """``lower``, ``upper`` or ``mixed`` (see :attr:`OpeningReport.open_side`)."""
    grasp_frame: Mat4
    """(4, 4) the resulting grasp frame G in world."""
    notes: tuple[ArticulationNote, ...] = ()


def suggest_gripper_site(articulation: GripperArticulation) -> SiteSuggestion:
    """Derive a gripper site from the fingers (issue 24): values only, nothing is authored.

    1. Estimate a frame from the fingers at the authored pose (:func:`estimate_grasp_frame`).
    2. Find the open configuration in that frame (:func:`compute_opening_report`).
    3. With the fingers open: closing axis X from one pad's centre to the other's; the
       approach Z (from the palm towards the fingers) made perpendicular to X; either taken
       as a palm axis when within :data:`SNAP_TO_PALM_AXIS_DEG`; grip line along
       -Y = X x Z (so that forward x grip line = X); TCP halfway between the pad
       centres; pad width the narrower pad's extent along Y, max opening the pad gap
       (:func:`compute_gap`). A pad is its finger's fingertip link, and its centre and width
       are those of its tip (the band :func:`compute_gap` measures at).

    An existing site is ignored: the result says what the fingers give.

    Raises:
        ValueError: no palm, fewer than two opposed padded fingers, or joints without usable
            limits (the message says which).
    """
    tree = compute_kinematic_tree(articulation)
    if articulation.palm is None:
        raise ValueError(
            f"<{articulation.root_path}>: no rigid body (PhysicsRigidBodyAPI) to derive a site "
            "from; expected a palm link with finger links joined to it"
        )
    frame = estimate_grasp_frame(articulation, tree)
    report, notes = compute_opening_report(replace(articulation, grasp_frame=None), frame, tree)
    if report.opening_open is None:
        reasons = "; ".join(n.text for n in notes) or "no moving finger joint"
        raise ValueError(f"<{articulation.root_path}>: cannot derive a gripper site: {reasons}")
    moving = {articulation.joints[i].path: i for i in range(len(articulation.joints))}
    values = {moving[path]: value for path, value in report.open_positions.items()}
    config = compute_configuration(articulation, values, tree)
    pads = {}
    for finger in report.fingers:
        if finger.pad is not None and finger.side != 0 and finger.side not in pads:
            pads[finger.side] = finger.pad
    approach = frame[:3, 2]
    palm = articulation.links[articulation.palm].world_from_link
    points = {
        side: _pad_tip(articulation, link, config.link_poses, approach)
        for side, link in pads.items()
    }
    centres = {side: _centre(p) for side, p in points.items()}
    closing = compute_unit(centres[1] - centres[-1])
    approach = (
        compute_unit(approach - np.dot(approach, closing) * closing)
        if closing is not None
        else None
    )
    if closing is None or approach is None:
        raise ValueError(
            f"<{articulation.root_path}>: the two pads' centres coincide or lie on the approach "
            "axis; cannot derive a closing direction"
        )
    approach = _snap_to_axes(approach, palm)
    closing = compute_unit(closing - np.dot(closing, approach) * approach)
    snapped = _snap_to_axes(closing, palm)
    if abs(float(np.dot(snapped, approach))) < 1e-12:
        closing = snapped
    in_palm = palm[:3, :3].T @ closing
    flip = in_palm[int(np.argmax(np.abs(in_palm)))] < 0  # deterministic: X along +palm axis
    if flip:
        closing = -closing
    fingers = [replace(f, side=-f.side) if flip else f for f in report.fingers]
    # The site's convention (SPEC 2): X = forward x grip_line, so the grip line runs along
    # -Y of G (as examples/gripper.usda authors it).
    grip = np.cross(closing, approach)
    g = np.eye(4)
    g[:3, 0], g[:3, 1], g[:3, 2] = closing, -grip, approach
    in_frame = {side: p @ g[:3, :3] for side, p in points.items()}  # G's axes, world origin
    tcp = g[:3, :3] @ (0.5 * (_centre(in_frame[-1]) + _centre(in_frame[1])))
    g[:3, 3] = tcp
    widths = [float(np.ptp(p[:, 1])) for p in in_frame.values()]
    gap = compute_gap(articulation, fingers, config.link_poses, closing, approach)
    palm_inverse = compute_rigid_inverse(palm)
    return SiteSuggestion(
        articulation.links[articulation.palm].path,
        _world(tcp[None], palm_inverse)[0],
        palm_inverse[:3, :3] @ approach,
        palm_inverse[:3, :3] @ grip,
        min(widths),
        gap,
        report.open_side,
        g,
        tuple(notes),
    )
