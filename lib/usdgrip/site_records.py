"""Immutable records of what a stage says about gripper sites and grasp slots.

Pure (no ``pxr``): :mod:`usdgrip.usd` builds these from a stage; rules,
samplers, planners, views and the CLI read them. These are what USD *authors*;
the grasp-planning request and result exchanged with other tools (seed 001,
JSON) are :mod:`usdgrip.contracts`. World quantities are in
metres (stage units times ``metersPerUnit``); poses are ``(4, 4)`` with the
translation in the last column.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from usdgrip.frames import Mat4, Vec3, compute_unit

Points = np.ndarray  # (N, 3) float64


@dataclass(frozen=True, eq=False)
class CurveInfo:
    """One axis curve of a gripper site (``gripper_forward_axis`` or ``gripper_grip_line``).

    ``points`` are in the site's local frame (the curve's own transform applied);
    ``direction`` is the unit world direction of ``p1 - p0`` (``None`` when
    degenerate) and ``length`` is ``|p1 - p0|`` in world metres.
    """

    child: str
    """Name of the child prim that was read (prefixed name wins over unprefixed)."""
    path: str
    type_name: str
    """Authored prim type, e.g. ``BasisCurves`` (rules check it)."""
    points: Points
    direction: Vec3 | None
    length: float
    curve_type: str | None = None
    """Authored ``type`` (``linear``...) or ``None`` when not authored."""
    vertex_counts: tuple[int, ...] | None = None
    """Authored ``curveVertexCounts`` or ``None`` when not authored."""
    shadowed: str | None = None
    """Name of an unprefixed sibling ignored because the prefixed child exists."""
    problems: dict[str, str] = field(default_factory=dict)
    """Unusable values (wrong type, time-sampled only), by attribute name (``points``,
    ``curveVertexCounts``, ``type``); such a value reads as not authored."""

    @property
    def point_count(self) -> int:
        """Number of authored points."""
        return len(self.points)


#: Discovery markers that declare a site (the rest only find legacy ones).
DECLARING_MARKERS = frozenset({"GripperSiteAPI", "socketType", "socketType(misspelt)"})


@dataclass(frozen=True, eq=False)
class GripperSite:
    """A gripper site found on a stage, with everything needed to use or check it."""

    path: str
    type_name: str
    markers: tuple[str, ...]
    """Discovery markers that matched, e.g. ``GripperSiteAPI``, ``socketType``,
    ``gripper_maxOpening``, ``child:gripper_grip_line``."""
    defined: bool
    """False when the site or an ancestor is an undefined ``over`` (e.g. a missing payload)."""
    world_transform: Mat4
    """Site local-to-world (4, 4), translation in metres."""
    max_opening: float | None = None
    max_opening_source: str | None = None
    """Attribute the value came from (``gripper:maxOpening``, ``gripper_maxOpening``,
    ``custom:maxOpening``) or ``None``."""
    max_payload: float | None = None
    """Kilograms, finite and > 0; ``None`` when not authored or unusable (see ``problems``)."""
    max_payload_source: str | None = None
    """Attribute the payload was read from (``gripper:maxPayload``, ``gripper_maxPayload``)."""
    forward_axis: CurveInfo | None = None
    grip_line: CurveInfo | None = None
    grasp_frame: Mat4 | None = None
    """GraspGenX frame G in world (4, 4), or ``None`` without a usable forward axis."""
    warnings: tuple[str, ...] = ()
    legacy_attributes: tuple[str, ...] = ()
    """Legacy attributes authored on the site (``gripper_maxOpening``, ...)."""
    problems: dict[str, str] = field(default_factory=dict)
    """Unusable values (wrong type, time-sampled only; for max payload and max grip force
    also not finite or <= 0) by attribute (``gripper:maxOpening``,
    ``gripper_forward_axis.points``...); such a value reads as not authored."""
    max_grip_force: float | None = None
    """``gripper:maxGripForce`` in newtons (force of each pad on a held object), finite
    and > 0; ``None`` when not authored or unusable (see ``problems``). No legacy name."""

    @property
    def declared(self) -> bool:
        """True when the site is declared (GripperSiteAPI or socketType = "Gripper")."""
        return not DECLARING_MARKERS.isdisjoint(self.markers)

    @property
    def name(self) -> str:
        """Prim name of the site."""
        return self.path.rsplit("/", 1)[-1]


LR_TOKENS = ("left", "right")


@dataclass(frozen=True, eq=False)
class GripperSlot:
    """A grasp slot bound to its object prim, with a world snapshot.

    Local fields are exactly as authored (object's local frame, stage units;
    ``up_range`` in metres, ``slot_input_angle`` in degrees). World fields use
    ``object_to_world`` captured when the slot was read.
    """

    prim: str
    """Path of the object prim the slot belongs to."""
    name: str
    source: str
    """``schema`` (GripperSlotAPI) or ``lambdasim`` (customData records)."""
    center_local: Vec3
    forward_local: Vec3
    span_axis_local: Vec3
    up_range_local: float
    slot_input_angle: float
    lr: int
    """0 left, 1 right (other values are kept so rules can report them)."""
    group: str
    object_to_world: Mat4
    """Object local-to-world (4, 4) in metres at read time."""
    meters_per_unit: float = 1.0
    """Stage metres per unit (``object_to_world`` includes it; ``up_range`` is metres already)."""
    version: int | None = None
    """LambdaSim record version (1 or 2); ``None`` for schema slots."""
    record_index: int | None = None
    extra: dict = field(default_factory=dict)
    """Unknown record keys, kept so a migration loses nothing."""

    @property
    def up_axis_local(self) -> Vec3 | None:
        """``normalize(forward x span_axis)`` in the local frame, or ``None`` if degenerate."""
        return compute_unit(np.cross(self.forward_local, self.span_axis_local))

    @property
    def center(self) -> Vec3:
        """World position of the slot centre (metres)."""
        with np.errstate(invalid="ignore", over="ignore"):  # a non-finite centre: no warning
            return self.object_to_world[:3, :3] @ self.center_local + self.object_to_world[:3, 3]

    def _world_direction(self, local: Vec3) -> Vec3:
        d = compute_unit(self.object_to_world[:3, :3] @ local)
        return d if d is not None else np.full(3, np.nan)

    @property
    def forward(self) -> Vec3:
        """Unit world insertion direction (local Z of the slot frame)."""
        return self._world_direction(self.forward_local)

    @property
    def span_axis(self) -> Vec3:
        """Unit world closing/span direction (local X of the slot frame)."""
        return self._world_direction(self.span_axis_local)

    @property
    def mirrored(self) -> bool:
        """True when the object's world transform mirrors (negative determinant)."""
        return bool(np.linalg.det(self.object_to_world[:3, :3]) < 0)

    @property
    def up_axis(self) -> Vec3:
        """Unit world Up = normalize(forward x span_axis) (local Y of the slot frame).

        Computed from the world forward and span axis: under a mirroring object
        transform (:attr:`mirrored`) this is the mirrored local Up reversed, so the
        world slot frame stays right-handed with X = span_axis.
        """
        up = self._world_direction(np.cross(self.forward_local, self.span_axis_local))
        return -up if self.mirrored else up

    @property
    def up_range(self) -> float:
        """Total world length along Up (metres).

        ``up_range_local`` times the object's world scale along Up.
        """
        up = self.up_axis_local
        if up is None:
            return float("nan")
        scale = float(np.linalg.norm(self.object_to_world[:3, :3] @ up)) / self.meters_per_unit
        return self.up_range_local * scale

    @property
    def lr_token(self) -> str:
        """``left``/``right`` for LR 0/1, else the raw value as text."""
        return LR_TOKENS[self.lr] if self.lr in (0, 1) else str(self.lr)

    @property
    def frame(self) -> Mat4:
        """World slot frame (4, 4): X = span_axis, Y = Up, Z = forward, origin = center.

        Right-handed, also under a mirroring object transform (see :attr:`up_axis`).
        Orthonormalised: when forward and span_axis are not exactly perpendicular,
        span_axis is recomputed as ``Up x forward``; when a non-uniform object scale
        leaves the world Up off-perpendicular to forward, Up is Gram-Schmidt
        orthogonalised against forward first.
        """
        z = self.forward
        y = self.up_axis
        y = y - np.dot(y, z) * z
        with np.errstate(invalid="ignore", divide="ignore"):  # degenerate → NaN, no warning
            y = y / np.linalg.norm(y)
        x = np.cross(y, z)
        m = np.eye(4)
        m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, z, self.center
        return m
