"""Immutable records of a gripper's articulation: links, colliders, joints, drives, mimics.

Pure (no ``pxr``): :mod:`usdgrip.usd.articulation` reads them from a stage, the kinematics
(:mod:`usdgrip.gripper_kinematics`), the rules, ``usdgrip info`` and the simulation take
them. Everything is in SI units and world metres, read once at the default time code:

- poses ``(4, 4)`` float64, rigid (rotation + translation, scale removed), translation in
  ``[:3, 3]``; a link's geometry and joint frames are in the link's own frame;
- joint positions, limits, targets: metres (prismatic) and **radians** (revolute; USD
  authors degrees);
- drive gains: N/m, N·s/m, N (prismatic) and N·m/rad, N·m·s/rad, N·m (revolute; USD
  authors angular gains per degree);
- mimic couplings normalised to ``follower = coef0 + coef1 * leader`` (+ ``coef2..4``
  powers of the leader for MuJoCo's polynomial), whichever schema authored them.

``docs/grippers.md`` describes the reading and its conventions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from usdgrip.frames import Mat4, Vec3

Points = NDArray[np.float64]  # (V, 3)
Triangles = NDArray[np.int64]  # (F, 3)

JOINT_KINDS = ("prismatic", "revolute", "fixed", "spherical", "other")
"""Joint kinds: UsdPhysics Prismatic/Revolute/Fixed/Spherical joints, anything else."""
MOVING_KINDS = frozenset({"prismatic", "revolute"})
AXES = "XYZ"
MIMIC_SCHEMAS = ("PhysxMimicJointAPI", "NewtonMimicAPI", "MjcEqualityJointAPI")
STATUSES = ("articulated", "unrooted", "none")
"""``articulated``: a palm (the site's rigid-body ancestor) with moving joints; ``unrooted``:
joints and rigid bodies but no rigid-body ancestor above the site (the palm is guessed);
``none``: no moving joint reaches the palm (the proxy gripper is used)."""


def _frozen_array(value, dtype, shape) -> np.ndarray:
    array = np.array(value, dtype=dtype).reshape(shape)
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class ArticulationNote:
    """Something a user should know about the articulation: a record, worded at the edge."""

    code: str
    """Kebab-case kind, e.g. ``joint-body-missing``, ``mimic-cycle``, ``closed-chain``."""
    subject: str
    """Prim path the note is about (a joint, link or the site)."""
    text: str
    """One line naming the attribute, the value, what was expected and what was done."""


@dataclass(frozen=True, eq=False)
class ColliderPiece:
    """One collider of a link: a ``PhysicsCollisionAPI`` Gprim, in the link's frame.

    Attributes:
        path: the collider prim.
        kind: ``mesh``, ``box``, ``sphere``, ``cylinder`` or ``capsule``.
        params: metres, as :class:`usdgrip.usd.geometry.SceneShape` (box ``size``, sphere
            ``radius``, cylinder/capsule ``radius``, ``height``, ``axis``); empty for meshes.
        link_from_piece: (4, 4) rigid pose of the piece frame in the link frame.
        vertices: (V, 3) metres in the piece frame (a primitive tessellated).
        faces: (F, 3) triangle indices into ``vertices``.
        approximation: ``physics:approximation`` of a mesh (``convexHull``, ``none``...),
            ``None`` for primitives.
    """

    path: str
    kind: str
    params: Mapping
    link_from_piece: Mat4
    vertices: Points
    faces: Triangles
    approximation: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "link_from_piece", _frozen_array(self.link_from_piece, float, (4, 4))
        )
        object.__setattr__(self, "vertices", _frozen_array(self.vertices, float, (-1, 3)))
        object.__setattr__(self, "faces", _frozen_array(self.faces, np.int64, (-1, 3)))

    @property
    def link_vertices(self) -> Points:
        """(V, 3) vertices in the link frame (metres)."""
        r, t = self.link_from_piece[:3, :3], self.link_from_piece[:3, 3]
        return self.vertices @ r.T + t


@dataclass(frozen=True, eq=False)
class ArticulationLink:
    """A rigid body (``PhysicsRigidBodyAPI``) of the gripper with the colliders it owns.

    A collider belongs to its closest rigid-body ancestor (UsdPhysics). Mass properties are
    as authored by ``PhysicsMassAPI`` (``None`` when not authored or unusable).
    """

    path: str
    world_from_link: Mat4
    """(4, 4) rigid world pose as authored (metres)."""
    pieces: tuple[ColliderPiece, ...] = ()
    collider_paths: tuple[str, ...] = ()
    """Every collider prim of the link (also when its geometry was not read)."""
    mass: float | None = None
    """kg (``physics:mass`` x kilogramsPerUnit)."""
    density: float | None = None
    """kg/m³ (``physics:density`` on the link or one of its colliders)."""
    center_of_mass: Vec3 | None = None
    """(3,) metres in the link frame (``physics:centerOfMass``)."""
    diagonal_inertia: Vec3 | None = None
    """(3,) kg·m² about the principal axes (``physics:diagonalInertia``)."""
    principal_axes: NDArray[np.float64] | None = None
    """(4,) quaternion w, x, y, z of the principal axes in the link frame."""

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "world_from_link", _frozen_array(self.world_from_link, float, (4, 4))
        )

    @property
    def name(self) -> str:
        """Prim name."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def has_colliders(self) -> bool:
        """True when some collider prim belongs to the link."""
        return bool(self.collider_paths)


@dataclass(frozen=True)
class JointDrive:
    """A joint's drive in SI units (``PhysicsDriveAPI:linear``/``angular``).

    ``None`` for a value that is not authored and has no finite fallback (``maxForce``'s
    fallback ``inf`` means unlimited), or that another tool owns (a ``NewtonActuator``).
    """

    source: str
    """``PhysicsDriveAPI:angular``, ``PhysicsDriveAPI:linear`` or ``NewtonActuator </path>``."""
    drive_type: str | None = None
    """``force`` or ``acceleration`` (``drive:<inst>:physics:type``)."""
    stiffness: float | None = None
    """N/m or N·m/rad."""
    damping: float | None = None
    """N·s/m or N·m·s/rad."""
    max_force: float | None = None
    """N or N·m; ``None``: unlimited."""
    target_position: float | None = None
    """m or rad."""
    target_velocity: float | None = None
    """m/s or rad/s."""


@dataclass(frozen=True)
class MimicCoupling:
    """``follower = coef0 + coef1 * leader (+ coef2 * leader² + ...)``, SI units.

    From ``PhysxMimicJointAPI`` (``position + gearing * reference + offset = 0``: ``coef1 =
    -gearing``, ``coef0 = -offset``), ``NewtonMimicAPI`` (``coef0``, ``coef1`` as authored)
    or MuJoCo's ``MjcEqualityJointAPI`` (Newton's attributes plus ``mjc:coef2..4``). Offsets
    authored in degrees (revolute) or stage units (prismatic) are converted.
    """

    leader: int
    """Index of the leader joint in :attr:`GripperArticulation.joints`."""
    coef0: float
    coef1: float
    source: str
    """``PhysxMimicJointAPI:<instance>``, ``NewtonMimicAPI`` or ``MjcEqualityJointAPI``."""
    higher: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """``mjc:coef2..4`` as authored (MuJoCo's polynomial, leader in radians or metres)."""
    authored: Mapping[str, float] = field(default_factory=dict)
    """The values as authored (``gearing``, ``offset``; ``coef0``, ``coef1``...)."""
    enabled: bool = True
    """``newton:mimicEnabled`` (a disabled coupling leaves the joint passive)."""

    def compute_follower(self, leader_position: float) -> float:
        """The follower's position for a leader position (SI)."""
        x = float(leader_position)
        c2, c3, c4 = self.higher
        return self.coef0 + self.coef1 * x + c2 * x * x + c3 * x**3 + c4 * x**4


@dataclass(frozen=True, eq=False)
class ArticulationJoint:
    """One UsdPhysics joint of the gripper.

    ``body0``/``body1`` index :attr:`GripperArticulation.links`; ``None`` is the world (no
    target, a target that is not a rigid body of the gripper, or one outside the asset: a
    note says which). The joint frame is ``body0_from_joint`` in body0 and
    ``body1_from_joint`` in body1; at position ``q`` they relate by the joint's motion
    along (prismatic) or about (revolute) its axis: ``F1 = F0 @ motion(q)``.
    """

    path: str
    kind: str
    body0: int | None
    body1: int | None
    body0_from_joint: Mat4
    body1_from_joint: Mat4
    axis: int = 0
    """0, 1, 2 for ``physics:axis`` X, Y, Z (prismatic and revolute joints)."""
    lower: float | None = None
    """m or rad; ``None`` when not limited (±inf) or unusable (a note says why)."""
    upper: float | None = None
    authored_limits: tuple[float | None, float | None] = (None, None)
    """``physics:lowerLimit``, ``physics:upperLimit`` as authored (degrees or stage units)."""
    drive: JointDrive | None = None
    mimic: MimicCoupling | None = None
    exclude_from_articulation: bool = False
    enabled: bool = True
    rest_position: float | None = None
    """The position the authored body poses give (m or rad), ``None`` for other kinds or
    when a body is missing."""
    rest_residual: float = 0.0
    """How far (metres, plus radians of misalignment) the authored poses are from satisfying
    the joint at ``rest_position``: large values mean the joint frames do not match the bodies."""
    body_targets: tuple[str | None, str | None] = (None, None)
    """``physics:body0`` / ``physics:body1`` targets as authored."""

    def __post_init__(self) -> None:
        for name in ("body0_from_joint", "body1_from_joint"):
            object.__setattr__(self, name, _frozen_array(getattr(self, name), float, (4, 4)))

    @property
    def name(self) -> str:
        """Prim name (Isaac Sim's DOF name)."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def moving(self) -> bool:
        """True for prismatic and revolute joints that are enabled."""
        return self.kind in MOVING_KINDS and self.enabled

    @property
    def unit(self) -> str:
        """``m`` or ``rad`` (the unit of positions and limits), ``""`` otherwise."""
        return {"prismatic": "m", "revolute": "rad"}.get(self.kind, "")

    @property
    def axis_name(self) -> str:
        """``X``, ``Y`` or ``Z``."""
        return AXES[self.axis]


@dataclass(frozen=True)
class FingerChain:
    """One finger: links moved by joints from the palm, joined by tree joints or loops."""

    links: tuple[int, ...]
    """Link indices, the palm excluded."""
    joints: tuple[int, ...]
    """Moving joints that move these links (tree and loop-closing)."""
    pad: int | None
    """The link of the chain whose colliders reach farthest along the approach (the
    fingertip pad), ``None`` when no link of the chain has colliders."""
    side: int
    """-1 or +1: which side of the grasp centre along the closing axis the pad is on at the
    authored pose (0: on the centre line, or no pad)."""

    @property
    def has_colliders(self) -> bool:
        """False when no link of the finger has a collider."""
        return self.pad is not None


@dataclass(frozen=True)
class OpeningReport:
    """The pad gap at each limit and the open side, decided from geometry.

    The gap is measured along ``closing_axis`` between the pads of the two sides: the
    smallest coordinate of the +1 side's pad minus the largest of the -1 side's. Negative:
    the pads would pass through each other (no collision is simulated).
    """

    closing_axis: Vec3
    """(3,) unit world direction (the site's G X axis, or estimated)."""
    approach_axis: Vec3
    """(3,) unit world direction (G Z, or estimated)."""
    fingers: tuple[FingerChain, ...]
    driven: tuple[int, ...]
    """The independent joints (drives, not mimic followers) whose limits are compared."""
    open_limits: tuple[str, ...] = ()
    """Per driven joint, ``lower`` or ``upper``: the limit that opens."""
    opening_at_lower: float | None = None
    """Gap (m) with every driven joint at its lower limit; ``None`` when unknown."""
    opening_at_upper: float | None = None
    opening_open: float | None = None
    """Gap (m) at the open configuration (each driven joint at its open limit)."""
    opening_closed: float | None = None
    """Gap (m) at the closed configuration (each at its other limit)."""
    open_positions: Mapping[str, float] = field(default_factory=dict)
    """Joint path -> position (SI) of every moving joint at the open configuration."""
    closed_positions: Mapping[str, float] = field(default_factory=dict)

    @property
    def open_side(self) -> str | None:
        """``lower``, ``upper``, ``mixed`` (driven joints disagree) or ``None`` (unknown)."""
        sides = set(self.open_limits)
        if not sides:
            return None
        return sides.pop() if len(sides) == 1 else "mixed"


@dataclass(frozen=True, eq=False)
class GripperArticulation:
    """What a gripper site's asset says about its fingers: read once, pure.

    ``links`` are the rigid bodies joined to the palm by joints (the palm first), ``joints``
    every joint between them. ``opening`` is filled by the reader through
    :func:`usdgrip.gripper_kinematics.compute_opening_report` when there are moving joints.
    """

    site_path: str | None
    root_path: str
    """The prim whose subtree was read (the site's top-level ancestor)."""
    status: str
    links: tuple[ArticulationLink, ...] = ()
    joints: tuple[ArticulationJoint, ...] = ()
    palm: int | None = None
    """Index of the palm link (0 when there is one), ``None`` without rigid bodies."""
    grasp_frame: Mat4 | None = None
    """The site's world frame G (X closing, Z approach); ``None`` without a site frame, or
    when the asset has no rigid body (then nothing else was read)."""
    articulation_root: str | None = None
    """The prim with ``PhysicsArticulationRootAPI`` (the asset declares an articulation)."""
    rigid_bodies: tuple[str, ...] = ()
    """Every prim of the asset with ``PhysicsRigidBodyAPI`` (joined to the palm or not)."""
    rigid_body_ancestor: str | None = None
    """The site's rigid-body ancestor (FET028's gripper base), ``None`` when it has none."""
    opening: OpeningReport | None = None
    notes: tuple[ArticulationNote, ...] = ()

    @property
    def has_rigid_bodies(self) -> bool:
        """True when some prim of the asset has ``PhysicsRigidBodyAPI``."""
        return bool(self.rigid_bodies)

    @property
    def declared(self) -> bool:
        """True when the asset declares an articulation (``PhysicsArticulationRootAPI``)."""
        return self.articulation_root is not None

    @property
    def moving_joints(self) -> tuple[int, ...]:
        """Indices of the enabled prismatic and revolute joints."""
        return tuple(i for i, j in enumerate(self.joints) if j.moving)

    def find_joint(self, path: str) -> int | None:
        """Index of the joint at ``path`` (``None`` when it is not one of the gripper's)."""
        for i, joint in enumerate(self.joints):
            if joint.path == path:
                return i
        return None
