"""Collision scene with attached shapes and exclusions (seed 002), on python-fcl.

Pure (numpy, python-fcl, trimesh; no ``pxr``). Poses are ``(4, 4)`` /
``(N, 4, 4)`` float64 rigid transforms acting on column vectors, translation
in ``[:3, 3]``, lengths in metres.

Objects
    * **Obstacles** sit in the world at a pose.
    * **Attached shapes** are expressed in a robot frame (``frame=0`` is the
      gripper's grasp frame G) or the base (``frame=None``) and move with it.
    * The **robot** is a :class:`GripperCollisionModel`: link shapes indexed by
      shape index (for the proxy: ``0`` palm, ``1`` left finger, ``2`` right
      finger), all bound to frame 0 (G).

Every object has a stable :class:`ObjectId` that survives removal of other
objects and :meth:`CollisionScene.attach` / :meth:`CollisionScene.detach`.

What is checked, per gripper pose: every robot shape against every obstacle;
every attached shape against obstacles, other attached shapes and robot shapes,
minus the pairs named in a :class:`SceneExclusions`. Robot shapes are not
checked against each other (the palm touches the fingers by design), nor
obstacles against obstacles.

Surfaces and volumes: fcl treats boxes, spheres, cylinders and capsules as
solids but a triangle mesh (``BVHModel``) as a surface only, so a finger wholly
inside a closed mesh has no surface contact. For every pair whose bounds
overlap and that has a *closed* (watertight) mesh on either side, a reference
point of the other shape (a primitive's centre, a mesh's first vertex) is also
tested for containment in the closed mesh (trimesh ray parity, embree when
available); containment counts as a collision (``Contact.inside``). Open
meshes stay surfaces.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import fcl
import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import Mat4, Poses
from usdgrip.model import GripperSite

Points = NDArray[np.float64]  # (N, 3)
Faces = NDArray[np.int64]  # (M, 3)

ShapeKind = Literal["box", "sphere", "cylinder", "capsule", "mesh"]
SHAPE_KINDS: tuple[str, ...] = ("box", "sphere", "cylinder", "capsule", "mesh")
AXES = ("X", "Y", "Z")

#: Proxy gripper dimensions (metres) used when no collision meshes are given;
#: see :meth:`GripperCollisionModel.proxy`.
PROXY_FINGER_THICKNESS = 0.01
PROXY_FINGER_LENGTH = 0.05
PROXY_TIP_OFFSET = 0.01
PROXY_PALM_DEPTH = 0.02
PROXY_DEFAULT_PAD_WIDTH = 0.02

#: Two shapes closer than this (metres) count as touching in the retreat check's
#: "finger touches the part" and "part rests on its support" tests.
TOUCH_TOLERANCE = 1e-4


# --------------------------------------------------------------------------- ids


@dataclass(frozen=True, order=True)
class ObjectId:
    """Stable id of an obstacle or attached shape; never reused within a scene."""

    value: int

    def __str__(self) -> str:
        return f"#{self.value}"


# ------------------------------------------------------------------------ shapes


def _as_pose(pose: ArrayLike | None, what: str) -> Mat4:
    if pose is None:
        return np.eye(4)
    m = np.asarray(pose, dtype=np.float64)
    if m.shape != (4, 4):
        raise ValueError(f"{what} has shape {m.shape}; expected a (4, 4) pose")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{what} has non-finite values; expected a finite (4, 4) pose")
    r = m[:3, :3]
    if not np.allclose(r.T @ r, np.eye(3), atol=1e-6) or np.linalg.det(r) < 0:
        raise ValueError(
            f"{what} is not rigid (rotation not orthonormal with det +1); remove scale with "
            "usdgrip.frames.compute_rigid_part and put the scale into the shape"
        )
    return m.copy()


def _positive(value: Any, what: str) -> float:
    v = float(value)
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{what} is {value!r}; expected a finite value > 0 m")
    return v


@dataclass(frozen=True, eq=False)
class Shape:
    """A collision shape in its own frame (centred on the origin for primitives).

    Build with :meth:`box`, :meth:`sphere`, :meth:`cylinder`, :meth:`capsule`
    or :meth:`mesh`. Cylinders and capsules lie along ``axis`` (USD
    convention); ``height`` is the cylinder length, for a capsule the spine
    length without the two half-sphere caps (as ``UsdGeomCapsule.height``).
    """

    kind: ShapeKind
    half_extents: NDArray[np.float64] | None = None
    """Box half sizes (3,) in metres."""
    radius: float = 0.0
    height: float = 0.0
    axis: str = "Z"
    vertices: Points | None = None
    faces: Faces | None = None
    name: str = ""

    @classmethod
    def box(
        cls, size: ArrayLike | None = None, *, half_extents: ArrayLike | None = None, name: str = ""
    ) -> Shape:
        """Box of full ``size`` (3,) or ``half_extents`` (3,), metres, centred on the origin."""
        if (size is None) == (half_extents is None):
            raise ValueError("Shape.box needs exactly one of size= or half_extents=")
        h = (
            np.asarray(size, dtype=np.float64) / 2.0
            if size is not None
            else np.asarray(half_extents, dtype=np.float64)
        )
        h = np.broadcast_to(h, (3,)).copy()
        label = f"box {name!r}" if name else "box"
        if not np.all(np.isfinite(h)) or np.any(h <= 0):
            raise ValueError(f"{label} half extents are {h.tolist()}; expected finite values > 0 m")
        return cls("box", half_extents=h, name=name)

    @classmethod
    def sphere(cls, radius: float, *, name: str = "") -> Shape:
        """Sphere of ``radius`` metres centred on the origin."""
        return cls("sphere", radius=_positive(radius, "sphere radius"), name=name)

    @classmethod
    def cylinder(cls, radius: float, height: float, *, axis: str = "Z", name: str = "") -> Shape:
        """Solid cylinder of ``radius`` and total ``height`` along ``axis``, centred."""
        return cls(
            "cylinder",
            radius=_positive(radius, "cylinder radius"),
            height=_positive(height, "cylinder height"),
            axis=_check_axis(axis),
            name=name,
        )

    @classmethod
    def capsule(cls, radius: float, height: float, *, axis: str = "Z", name: str = "") -> Shape:
        """Capsule: spine of ``height`` along ``axis`` plus two ``radius`` caps, centred."""
        return cls(
            "capsule",
            radius=_positive(radius, "capsule radius"),
            height=_positive(height, "capsule height"),
            axis=_check_axis(axis),
            name=name,
        )

    @classmethod
    def mesh(cls, vertices: ArrayLike, faces: ArrayLike, *, name: str = "") -> Shape:
        """Triangle mesh: ``vertices`` (V, 3) metres, ``faces`` (F, 3) vertex indices."""
        v = np.asarray(vertices, dtype=np.float64)
        f = np.asarray(faces)
        label = f"mesh {name!r}" if name else "mesh"
        if v.ndim != 2 or v.shape[1] != 3 or len(v) < 3:
            raise ValueError(f"{label} vertices have shape {v.shape}; expected (V >= 3, 3)")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{label} has non-finite vertices")
        if f.ndim != 2 or f.shape[1] != 3 or len(f) == 0:
            raise ValueError(f"{label} faces have shape {f.shape}; expected (F >= 1, 3) triangles")
        if not np.issubdtype(f.dtype, np.integer):
            raise ValueError(f"{label} faces have dtype {f.dtype}; expected integer indices")
        if f.min() < 0 or f.max() >= len(v):
            raise ValueError(
                f"{label} face indices span [{int(f.min())}, {int(f.max())}]; expected "
                f"[0, {len(v) - 1}] for {len(v)} vertices"
            )
        return cls("mesh", vertices=v, faces=f.astype(np.int64), name=name)

    @classmethod
    def from_triangle_mesh(cls, mesh: Any, *, name: str = "") -> Shape:
        """Mesh shape from anything with ``vertices`` and ``faces`` (``TriangleMesh``, trimesh)."""
        return cls.mesh(mesh.vertices, mesh.faces, name=name)

    def describe(self) -> str:
        """Short text, e.g. ``box 0.01 x 0.02 x 0.05 m``."""
        if self.kind == "box":
            s = " x ".join(f"{2 * h:g}" for h in self.half_extents)
            return f"box {s} m"
        if self.kind == "sphere":
            return f"sphere r={self.radius:g} m"
        if self.kind in ("cylinder", "capsule"):
            return f"{self.kind} r={self.radius:g} h={self.height:g} m along {self.axis}"
        return f"mesh {len(self.vertices)} vertices {len(self.faces)} triangles"


def _check_axis(axis: str) -> str:
    a = str(axis).upper()
    if a not in AXES:
        raise ValueError(f"axis is {axis!r}; expected one of X, Y, Z")
    return a


# Rotation taking fcl's Z-aligned cylinder/capsule onto the USD axis.
_AXIS_ROTATION = {
    "Z": np.eye(3),
    "X": np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]),
    "Y": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),
}


class _Geometry:
    """fcl geometry for a Shape plus bounds and the closed-mesh containment test."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self.closed = False
        self._trimesh: Any = None
        self._inflated: dict[float, tuple[fcl.CollisionObject, Mat4, bool]] = {}
        # shape_from_geometry: fcl cylinders/capsules are Z-aligned.
        self.shape_from_geom = np.eye(4)
        if shape.kind == "box":
            h = shape.half_extents
            self.geometry = fcl.Box(*(2.0 * h))
            lo, hi = -h, h
            self.ref_point = np.zeros(3)
        elif shape.kind == "sphere":
            self.geometry = fcl.Sphere(shape.radius)
            lo, hi = -np.full(3, shape.radius), np.full(3, shape.radius)
            self.ref_point = np.zeros(3)
        elif shape.kind in ("cylinder", "capsule"):
            cls = fcl.Cylinder if shape.kind == "cylinder" else fcl.Capsule
            self.geometry = cls(shape.radius, shape.height)
            self.shape_from_geom[:3, :3] = _AXIS_ROTATION[shape.axis]
            half = np.full(3, shape.radius)
            along = shape.height / 2.0 + (shape.radius if shape.kind == "capsule" else 0.0)
            half[AXES.index(shape.axis)] = along
            lo, hi = -half, half
            self.ref_point = np.zeros(3)
        else:
            import trimesh

            bvh = fcl.BVHModel()
            bvh.beginModel(len(shape.vertices), len(shape.faces))
            bvh.addSubModel(shape.vertices, shape.faces)
            bvh.endModel()
            self.geometry = bvh
            lo, hi = shape.vertices.min(axis=0), shape.vertices.max(axis=0)
            self.ref_point = shape.vertices[int(shape.faces[0, 0])].copy()
            tm = trimesh.Trimesh(shape.vertices, shape.faces, process=True)
            self.closed = bool(tm.is_watertight and tm.is_winding_consistent)
            if self.closed:
                if tm.volume < 0:
                    tm.invert()
                self._trimesh = tm
        self.lo = np.asarray(lo, dtype=np.float64)
        self.hi = np.asarray(hi, dtype=np.float64)
        # (8, 3) local box corners for world AABBs.
        self.corners = np.array(list(itertools.product(*zip(self.lo, self.hi, strict=True))))

    def new_object(self) -> fcl.CollisionObject:
        return fcl.CollisionObject(self.geometry, fcl.Transform())

    def inflated(self, margin: float) -> tuple[fcl.CollisionObject, Mat4, bool]:
        """A solid containing every point within ``margin`` of this shape (cached).

        Primitives grow by ``margin`` (exact for spheres and capsules, a slight
        over-estimate at box and cylinder edges); a mesh is bounded by its
        oriented bounding box grown by ``margin``. Returns the fcl object, its
        placement ``shape_from_inflated`` and whether the solid is exactly the
        shape grown by ``margin`` (then an overlap proves the shapes are that close).
        """
        cache = self._inflated
        if margin not in cache:
            s, m = self.shape, float(margin)
            exact = s.kind in ("sphere", "capsule")
            placement = self.shape_from_geom.copy()
            if s.kind == "box":
                geometry = fcl.Box(*(2.0 * (s.half_extents + m)))
            elif s.kind == "sphere":
                geometry = fcl.Sphere(s.radius + m)
            elif s.kind == "cylinder":
                geometry = fcl.Cylinder(s.radius + m, s.height + 2.0 * m)
            elif s.kind == "capsule":
                geometry = fcl.Capsule(s.radius + m, s.height)
            else:
                placement, extents = _oriented_bounds(s.vertices)
                geometry = fcl.Box(*(extents + 2.0 * m))
            cache[margin] = (fcl.CollisionObject(geometry, fcl.Transform()), placement, exact)
        return cache[margin]

    def contains(self, points: Points) -> NDArray[np.bool_]:
        """Which local ``points`` (K, 3) are inside this closed mesh."""
        if not self.closed or len(points) == 0:
            return np.zeros(len(points), dtype=bool)
        return np.asarray(self._trimesh.contains(points), dtype=bool)


def _oriented_bounds(vertices: Points) -> tuple[Mat4, NDArray[np.float64]]:
    """(shape_from_box, full extents (3,)) of a tight box around ``vertices``.

    trimesh's minimum-volume oriented box when it is smaller than the
    axis-aligned one (it can fail on degenerate point sets), else the latter.
    """
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    placement = np.eye(4)
    placement[:3, 3] = (lo + hi) / 2.0
    extents = hi - lo
    try:
        import trimesh

        to_origin, obb = trimesh.bounds.oriented_bounds(vertices)
    except Exception:
        return placement, extents
    if np.prod(obb) < np.prod(extents) and np.all(np.isfinite(to_origin)):
        return _inverse(np.asarray(to_origin, dtype=np.float64)), np.asarray(obb, dtype=float)
    return placement, extents


# --------------------------------------------------------------------- exclusions


ExclusionKind = Literal["robot", "attached", "obstacle"]


class ExclusionError(ValueError):
    """An exclusion that does not fit the scene it is used with."""


@dataclass(frozen=True)
class Exclusion:
    """One intended contact: do not check attached shape ``subject`` against ``partner``.

    ``partner`` is a robot shape index (``kind == "robot"``), another attached
    shape's id (``"attached"``, applies both ways) or an obstacle id (``"obstacle"``).
    """

    kind: ExclusionKind
    subject: ObjectId
    partner: ObjectId | int

    def __post_init__(self) -> None:
        if self.kind not in ("robot", "attached", "obstacle"):
            raise ExclusionError(
                f"exclusion kind is {self.kind!r}; expected 'robot', 'attached' or 'obstacle'"
            )
        if not isinstance(self.subject, ObjectId):
            raise TypeError(
                f"exclusion {self.kind}: subject is {self.subject!r}; expected an ObjectId "
                "returned by the scene"
            )
        if self.kind == "robot":
            if isinstance(self.partner, bool) or not isinstance(self.partner, (int, np.integer)):
                raise TypeError(
                    f"exclusion robot({self.subject}, ...): shape index is {self.partner!r}; "
                    "expected an int index into the robot's link shapes"
                )
            object.__setattr__(self, "partner", int(self.partner))
        elif not isinstance(self.partner, ObjectId):
            raise TypeError(
                f"exclusion {self.kind}({self.subject}, ...): partner is {self.partner!r}; "
                "expected an ObjectId returned by the scene"
            )

    @classmethod
    def robot(cls, part: ObjectId, shape_index: int) -> Exclusion:
        """Attached ``part`` is not checked against robot shape ``shape_index``."""
        return cls("robot", part, shape_index)

    @classmethod
    def attached(cls, a: ObjectId, b: ObjectId) -> Exclusion:
        """Attached ``a`` and attached ``b`` are not checked against each other."""
        return cls("attached", a, b)

    @classmethod
    def obstacle(cls, part: ObjectId, obstacle_id: ObjectId) -> Exclusion:
        """Attached ``part`` is not checked against obstacle ``obstacle_id``."""
        return cls("obstacle", part, obstacle_id)

    def __str__(self) -> str:
        return f"{self.kind}({self.subject}, {self.partner})"

    def to_dict(self) -> dict[str, Any]:
        """Plain record for results files: ``{"kind", "subject", "partner"}`` (ints)."""
        partner = self.partner.value if isinstance(self.partner, ObjectId) else self.partner
        return {"kind": self.kind, "subject": self.subject.value, "partner": partner}


class SceneExclusions:
    """A set of :class:`Exclusion` published next to a scene.

    The builders :meth:`robot`, :meth:`attached` and :meth:`obstacle` add one
    exclusion and return ``self`` (chainable). A self-reference is rejected when
    added; ids, subjects and shape indices are validated against the scene by
    :meth:`validate`, which every check calls.
    """

    def __init__(self, exclusions: Iterable[Exclusion] = ()) -> None:
        self._items: list[Exclusion] = []
        for e in exclusions:
            self.add(e)

    def add(self, exclusion: Exclusion) -> SceneExclusions:
        """Add one exclusion (duplicates are kept once).

        Raises:
            ExclusionError: the exclusion references its own subject.
        """
        if not isinstance(exclusion, Exclusion):
            raise TypeError(f"expected an Exclusion, got {type(exclusion).__name__}")
        if exclusion.kind != "robot" and exclusion.partner == exclusion.subject:
            raise ExclusionError(
                f"exclusion {exclusion}: references itself (subject and partner are both "
                f"{exclusion.subject}); an object never collides with itself"
            )
        if exclusion not in self._items:
            self._items.append(exclusion)
        return self

    def robot(self, part: ObjectId, shape_index: int) -> SceneExclusions:
        """Exclude attached ``part`` × robot shape ``shape_index``; returns self."""
        return self.add(Exclusion.robot(part, shape_index))

    def attached(self, a: ObjectId, b: ObjectId) -> SceneExclusions:
        """Exclude attached ``a`` × attached ``b`` (both directions); returns self."""
        return self.add(Exclusion.attached(a, b))

    def obstacle(self, part: ObjectId, obstacle_id: ObjectId) -> SceneExclusions:
        """Exclude attached ``part`` × obstacle ``obstacle_id``; returns self."""
        return self.add(Exclusion.obstacle(part, obstacle_id))

    def copy(self) -> SceneExclusions:
        """Independent copy."""
        return SceneExclusions(self._items)

    @property
    def items(self) -> tuple[Exclusion, ...]:
        """The exclusions, in insertion order."""
        return tuple(self._items)

    def __iter__(self) -> Iterator[Exclusion]:
        return iter(tuple(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"SceneExclusions([{', '.join(str(e) for e in self._items)}])"

    def validate(self, scene: CollisionScene, shape_count: int) -> None:
        """Check every exclusion against ``scene`` and a robot with ``shape_count`` shapes.

        Raises:
            ExclusionError: an id not in the scene, a self-reference, a robot shape
                index outside ``[0, shape_count)``, a subject that is not an attached
                shape, or a partner of the wrong kind. The message names the
                exclusion, the id and the problem.
        """
        for e in self._items:
            where = f"exclusion {e}"
            if e.kind != "robot" and e.partner == e.subject:
                raise ExclusionError(f"{where}: references itself ({e.subject})")
            if e.subject not in scene:
                raise ExclusionError(
                    f"{where}: subject {e.subject} is not in the scene (removed, or from another "
                    f"scene); objects in the scene: {scene.describe_ids()}"
                )
            if not scene.is_attached(e.subject):
                raise ExclusionError(
                    f"{where}: subject {e.subject} ({scene.name_of(e.subject)}) is an obstacle, "
                    "not an attached shape; the subject of an exclusion must be attached "
                    "(CollisionScene.attach or add_attached)"
                )
            if e.kind == "robot":
                if not 0 <= e.partner < shape_count:
                    raise ExclusionError(
                        f"{where}: robot shape index {e.partner} does not exist; the robot has "
                        f"{shape_count} shapes (valid indices 0..{shape_count - 1})"
                    )
                continue
            if e.partner not in scene:
                raise ExclusionError(
                    f"{where}: partner {e.partner} is not in the scene (removed, or from another "
                    f"scene); objects in the scene: {scene.describe_ids()}"
                )
            partner_attached = scene.is_attached(e.partner)
            if e.kind == "attached" and not partner_attached:
                raise ExclusionError(
                    f"{where}: partner {e.partner} ({scene.name_of(e.partner)}) is an obstacle; "
                    f"use obstacle({e.subject}, {e.partner})"
                )
            if e.kind == "obstacle" and partner_attached:
                raise ExclusionError(
                    f"{where}: partner {e.partner} ({scene.name_of(e.partner)}) is attached, not "
                    f"an obstacle; use attached({e.subject}, {e.partner})"
                )

    def excludes(self, a: tuple[str, Any], b: tuple[str, Any]) -> Exclusion | None:
        """The exclusion covering the pair of body keys ``(kind, id_or_index)``, if any."""
        for e in self._items:
            if _covers(e, a, b) or _covers(e, b, a):
                return e
        return None


def _covers(e: Exclusion, subject: tuple[str, Any], partner: tuple[str, Any]) -> bool:
    return subject == ("attached", e.subject) and partner == (e.kind, e.partner)


# ------------------------------------------------------------------------ robot


@dataclass(frozen=True, eq=False)
class RobotShape:
    """One link shape of the robot: ``shape`` placed by ``frame_from_shape`` in ``frame``."""

    name: str
    shape: Shape
    frame_from_shape: Mat4
    frame: int = 0


class GripperCollisionModel:
    """Collision shapes of a gripper, expressed in its grasp frame G (frame 0).

    G is the GraspGenX frame: X closing, Z approach, origin between the pads.
    Shapes are indexed by shape index (what :meth:`SceneExclusions.robot`
    names). fcl objects are built once and reused by every check.
    """

    frame_count = 1
    """Frames of this robot: only 0, the grasp frame G."""

    def __init__(
        self, shapes: Sequence[RobotShape], *, source: str, finger_indices: Sequence[int] = ()
    ) -> None:
        if not shapes:
            raise ValueError("a gripper collision model needs at least one shape")
        self.shapes: tuple[RobotShape, ...] = tuple(shapes)
        self.source = source
        """``proxy`` or ``meshes``."""
        self.finger_indices: tuple[int, ...] = tuple(int(i) for i in finger_indices)
        """Shape indices of the fingers (the shapes a grasped part may touch)."""
        for s in self.shapes:
            if s.frame != 0:
                raise ValueError(
                    f"robot shape {s.name!r} is bound to frame {s.frame}; a gripper model has "
                    "frame 0 (grasp frame G) only"
                )
        self._geoms = [_Geometry(s.shape) for s in self.shapes]
        self._objects = [g.new_object() for g in self._geoms]

    @property
    def shape_count(self) -> int:
        """Number of link shapes (valid robot shape indices are ``0..shape_count-1``)."""
        return len(self.shapes)

    @property
    def names(self) -> tuple[str, ...]:
        """Shape names by index."""
        return tuple(s.name for s in self.shapes)

    @classmethod
    def proxy(
        cls,
        max_opening: float,
        pad_width: float | None = None,
        *,
        finger_thickness: float = PROXY_FINGER_THICKNESS,
        finger_length: float = PROXY_FINGER_LENGTH,
        tip_offset: float = PROXY_TIP_OFFSET,
        palm_depth: float = PROXY_PALM_DEPTH,
    ) -> GripperCollisionModel:
        """Proxy parallel-jaw gripper in G: palm (0), left finger (1), right finger (2).

        With ``w = max_opening``, ``p = pad_width`` (default
        :data:`PROXY_DEFAULT_PAD_WIDTH`), ``t = finger_thickness``,
        ``L = finger_length``, ``e = tip_offset``, ``d = palm_depth``:

        * fingers: boxes ``t x p x L``; inner faces at ``x = -w/2`` (left) and
          ``x = +w/2`` (right) — the fully open jaw —, spanning
          ``z in [e - L, e]`` (tips ``e`` past the grasp centre);
        * palm: box ``(w + 2t) x p x d`` spanning ``z in [e - L - d, e - L]``.

        Raises:
            ValueError: a dimension is not finite and > 0.
        """
        w = _positive(max_opening, "max opening")
        p = _positive(PROXY_DEFAULT_PAD_WIDTH if pad_width is None else pad_width, "pad width")
        t = _positive(finger_thickness, "finger thickness")
        length = _positive(finger_length, "finger length")
        d = _positive(palm_depth, "palm depth")
        e = float(tip_offset)

        def placed(x: float, z: float) -> Mat4:
            m = np.eye(4)
            m[:3, 3] = (x, 0.0, z)
            return m

        zf = e - length / 2.0
        finger = Shape.box((t, p, length), name="finger")
        shapes = [
            RobotShape(
                "palm", Shape.box((w + 2 * t, p, d), name="palm"), placed(0, e - length - d / 2)
            ),
            RobotShape("finger_left", finger, placed(-(w + t) / 2, zf)),
            RobotShape("finger_right", finger, placed((w + t) / 2, zf)),
        ]
        return cls(shapes, source="proxy", finger_indices=(1, 2))

    @classmethod
    def from_site(
        cls,
        site: GripperSite,
        meshes: Sequence[Any] | None = None,
        **proxy_options: float,
    ) -> GripperCollisionModel:
        """Model for a gripper site: its collision meshes when given, else the proxy.

        Args:
            site: the gripper site (needs ``grasp_frame`` and, for the proxy,
                ``max_opening``; the pad width is ``grip_line.length``).
            meshes: optional gripper collision geometry in WORLD coordinates of the
                gripper stage: ``(name, Shape, world_from_shape)`` triples or
                ``SceneShape`` records (``path``, ``kind``, ``params``, ``pose``,
                ``mesh``) from :func:`usdgrip.usd.geometry.read_collision_shapes`.
                They are re-expressed in G; a shape whose name contains ``finger``
                is a finger.
            **proxy_options: keyword dimensions passed to :meth:`proxy`.

        Raises:
            GripperError: the site has no grasp frame, or no max opening for the proxy.
        """
        from usdgrip.errors import GripperError

        if site.grasp_frame is None:
            raise GripperError(
                f"<{site.path}>: gripper site has no grasp frame (no usable forward axis); "
                "author gripper_forward_axis"
            )
        if meshes:
            g_from_world = _inverse(site.grasp_frame)
            shapes = []
            for item in meshes:
                name, shape, pose = _shape_triple(item)
                shapes.append(RobotShape(name, shape, g_from_world @ pose))
            fingers = [i for i, s in enumerate(shapes) if "finger" in s.name.lower()]
            return cls(shapes, source="meshes", finger_indices=fingers)
        if site.max_opening is None or not np.isfinite(site.max_opening) or site.max_opening <= 0:
            raise GripperError(
                f"<{site.path}>: gripper:maxOpening is {site.max_opening!r}; the proxy gripper "
                "needs a finite max opening > 0 m (or pass collision meshes)"
            )
        pad = site.grip_line.length if site.grip_line is not None else None
        if pad is not None and (not np.isfinite(pad) or pad <= 0):
            pad = None
        return cls.proxy(site.max_opening, pad, **proxy_options)


def _shape_triple(item: Any) -> tuple[str, Shape, Mat4]:
    if isinstance(item, tuple) and len(item) == 3:
        name, shape, pose = item
        return str(name), shape, _as_pose(pose, f"pose of {name!r}")
    name, shape, pose = shape_from_scene_shape(item)
    return name, shape, pose


def shape_from_scene_shape(item: Any) -> tuple[str, Shape, Mat4]:
    """Convert a ``SceneShape`` (``path``, ``kind``, ``params``, ``pose``, ``mesh``).

    ``kind`` is ``mesh`` (uses ``mesh.vertices``/``mesh.faces``) or ``cube``/``box``,
    ``sphere``, ``cylinder``, ``capsule`` with ``params`` keys ``size`` (cube edge
    or (3,) sizes) / ``half_extents``, ``radius``, ``height``, ``axis``. Returns
    ``(path, Shape, world_from_shape)``.
    """
    path = str(getattr(item, "path", ""))
    kind = str(getattr(item, "kind", "")).lower()
    params = dict(getattr(item, "params", None) or {})
    pose = _as_pose(getattr(item, "pose", None), f"pose of <{path}>")
    if kind == "mesh":
        mesh = getattr(item, "mesh", None)
        if mesh is None:
            raise ValueError(f"<{path}>: mesh shape without triangles")
        return path, Shape.from_triangle_mesh(mesh, name=path), pose
    if kind in ("cube", "box"):
        if "half_extents" in params:
            return path, Shape.box(half_extents=params["half_extents"], name=path), pose
        return path, Shape.box(params.get("size", 2.0), name=path), pose
    if kind == "sphere":
        return path, Shape.sphere(params["radius"], name=path), pose
    if kind in ("cylinder", "capsule"):
        make = Shape.cylinder if kind == "cylinder" else Shape.capsule
        return (
            path,
            make(params["radius"], params["height"], axis=params.get("axis", "Z"), name=path),
            pose,
        )
    raise ValueError(
        f"<{path}>: shape kind {kind!r} is not supported; expected mesh, cube, sphere, cylinder "
        "or capsule"
    )


# ------------------------------------------------------------------------ results


class Contact(NamedTuple):
    """The pair that made a pose collide (one per colliding pose, not necessarily the deepest)."""

    subject_kind: str
    """``robot`` or ``attached``."""
    subject: ObjectId | int
    """Robot shape index or attached shape id."""
    partner_kind: str
    """``obstacle``, ``attached`` or ``robot``."""
    partner: ObjectId | int
    subject_name: str
    partner_name: str
    inside: bool
    """True when found by the closed-mesh containment test: a reference point of one shape
    lies inside the other's closed mesh (this also catches a shape wholly inside)."""

    def describe(self) -> str:
        """E.g. ``robot shape 1 'finger_left' vs obstacle #3 '/World/table'``."""

        def one(kind: str, ident: Any, name: str) -> str:
            label = f"{kind} shape {ident}" if kind == "robot" else f"{kind} {ident}"
            return f"{label} {name!r}" if name else label

        text = f"{one(self.subject_kind, self.subject, self.subject_name)} vs " + one(
            self.partner_kind, self.partner, self.partner_name
        )
        return text + (" (inside closed mesh)" if self.inside else "")


class CollisionResult(NamedTuple):
    """Result of :meth:`CollisionScene.check_gripper` for N poses."""

    collides: NDArray[np.bool_]
    """(N,) True where the pose collides."""
    first_contact: tuple[Contact | None, ...]
    """Per pose, the pair found first (``None`` when free)."""
    exclusions_used: tuple[Exclusion, ...]
    """The validated exclusions this check applied."""


class RetreatResult(NamedTuple):
    """Result of :meth:`CollisionScene.check_retreat` for N grasp poses."""

    collides: NDArray[np.bool_]
    """(N,) True where the gripper or the carried part hits something while retreating."""
    first_contact: tuple[Contact | None, ...]
    first_step: NDArray[np.int64]
    """(N,) first colliding step (1..steps), -1 when clear."""
    exclusions_used: tuple[tuple[Exclusion, ...], ...]
    """Per pose: caller exclusions + part × touching fingers + part × support (if it rested)."""
    distance: float
    steps: int


# -------------------------------------------------------------------------- scene


@dataclass(eq=False)
class _Entry:
    id: ObjectId
    shape: Shape
    geom: _Geometry
    obj: fcl.CollisionObject
    name: str
    attached: bool
    frame: int | None
    pose: Mat4
    """World pose (obstacle) or frame_from_shape (attached)."""


@dataclass(eq=False)
class _Body:
    key: tuple[str, Any]
    name: str
    geom: _Geometry
    obj: fcl.CollisionObject
    world: NDArray[np.float64]
    """(4, 4) fixed or (N, 4, 4) per pose: world_from_shape (shape, not fcl geometry)."""
    moving: bool = field(default=False)


def _inverse(m: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inverse of rigid (..., 4, 4) transforms."""
    r = np.swapaxes(m[..., :3, :3], -1, -2)
    out = np.zeros(m.shape)
    out[..., :3, :3] = r
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", r, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def _as_poses(poses: ArrayLike, what: str = "poses") -> Poses:
    p = np.asarray(poses, dtype=np.float64)
    if p.shape == (4, 4):
        p = p[None]
    if p.ndim != 3 or p.shape[1:] != (4, 4):
        raise ValueError(f"{what} have shape {p.shape}; expected (N, 4, 4) or (4, 4)")
    if not np.all(np.isfinite(p)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(p), axis=(1, 2)))[0])
        raise ValueError(f"{what}[{bad}] has non-finite values")
    r = p[:, :3, :3]
    error = np.abs(np.swapaxes(r, 1, 2) @ r - np.eye(3)).max(axis=(1, 2))
    rigid = (error <= 1e-6) & (np.linalg.det(r) > 0)
    if not rigid.all():
        bad = int(np.flatnonzero(~rigid)[0])
        raise ValueError(
            f"{what}[{bad}] is not rigid (rotation not orthonormal with det +1); expected "
            "world_from_G rigid transforms"
        )
    return p


class CollisionScene:
    """Obstacles and attached shapes with stable ids, checked with python-fcl.

    Args:
        base_pose: world_from_base (4, 4) for shapes attached to the base
            (``frame=None``); identity by default.
    """

    def __init__(self, base_pose: ArrayLike | None = None) -> None:
        self.base_pose = _as_pose(base_pose, "base pose")
        self._entries: dict[ObjectId, _Entry] = {}
        self._next = 1
        self.revision = 0
        """Incremented by every change (add, remove, attach, detach, update)."""
        self._request = fcl.CollisionRequest()
        self._result = fcl.CollisionResult()

    # ---- building

    def _new_entry(
        self, shape: Shape, name: str, attached: bool, frame: int | None, pose: Mat4
    ) -> ObjectId:
        if not isinstance(shape, Shape):
            raise TypeError(f"expected a usdgrip.collision.Shape, got {type(shape).__name__}")
        oid = ObjectId(self._next)
        self._next += 1
        geom = _Geometry(shape)
        entry = _Entry(
            oid, shape, geom, geom.new_object(), name or shape.name, attached, frame, pose
        )
        self._entries[oid] = entry
        if not attached:
            self._place(entry, pose)
        self.revision += 1
        return oid

    @staticmethod
    def _place(entry: _Entry, world_from_shape: Mat4) -> None:
        m = world_from_shape @ entry.geom.shape_from_geom
        entry.obj.setRotation(m[:3, :3])
        entry.obj.setTranslation(m[:3, 3])

    def add_obstacle(
        self, shape: Shape, pose: ArrayLike | None = None, *, name: str = ""
    ) -> ObjectId:
        """Add a world obstacle at ``pose`` (world_from_shape, rigid; identity by default)."""
        return self._new_entry(shape, name, False, None, _as_pose(pose, "obstacle pose"))

    def add_attached(
        self,
        frame: int | None,
        shape: Shape,
        frame_from_shape: ArrayLike | None = None,
        *,
        name: str = "",
    ) -> ObjectId:
        """Add a shape bound to robot ``frame`` (0 = grasp frame G) or the base (``None``)."""
        return self._new_entry(
            shape, name, True, _check_frame(frame), _as_pose(frame_from_shape, "frame_from_shape")
        )

    def update_attached(
        self,
        object_id: ObjectId,
        shape: Shape | None = None,
        frame_from_shape: ArrayLike | None = None,
        *,
        frame: int | Literal["keep"] | None = "keep",
    ) -> None:
        """Change an attached shape's geometry, placement or frame; the id is kept."""
        entry = self._get(object_id, "update_attached")
        if not entry.attached:
            raise ValueError(
                f"update_attached({object_id}): {object_id} ({entry.name}) is an obstacle, not "
                "an attached shape; use attach() to attach it"
            )
        if shape is not None:
            if not isinstance(shape, Shape):
                raise TypeError(f"expected a usdgrip.collision.Shape, got {type(shape).__name__}")
            entry.shape = shape
            entry.geom = _Geometry(shape)
            entry.obj = entry.geom.new_object()
        if frame_from_shape is not None:
            entry.pose = _as_pose(frame_from_shape, "frame_from_shape")
        if frame != "keep":
            entry.frame = _check_frame(frame)
        self.revision += 1

    def attach(self, object_id: ObjectId, frame: int | None, frame_from_shape: ArrayLike) -> None:
        """Grasp: obstacle ``object_id`` becomes attached to ``frame``; the id is kept.

        Args:
            object_id: an obstacle of this scene.
            frame: robot frame index (0 = G) or ``None`` for the base.
            frame_from_shape: the shape's pose in that frame after the grasp.
        """
        entry = self._get(object_id, "attach")
        if entry.attached:
            raise ValueError(f"attach({object_id}): {object_id} ({entry.name}) is already attached")
        entry.pose = _as_pose(frame_from_shape, "frame_from_shape")
        entry.frame = _check_frame(frame)
        entry.attached = True
        self.revision += 1

    def detach(self, object_id: ObjectId, world_pose: ArrayLike) -> None:
        """Release: attached ``object_id`` becomes an obstacle at ``world_pose``; the id is kept."""
        entry = self._get(object_id, "detach")
        if not entry.attached:
            raise ValueError(f"detach({object_id}): {object_id} ({entry.name}) is not attached")
        pose = _as_pose(world_pose, "world pose")
        entry.attached = False
        entry.frame = None
        entry.pose = pose
        self._place(entry, pose)
        self.revision += 1

    def remove(self, object_id: ObjectId) -> None:
        """Remove an object; other ids are unchanged and this one is never reused."""
        self._get(object_id, "remove")
        del self._entries[object_id]
        self.revision += 1

    # ---- queries

    def _get(self, object_id: ObjectId, action: str) -> _Entry:
        entry = self._entries.get(object_id) if isinstance(object_id, ObjectId) else None
        if entry is None:
            raise ValueError(
                f"{action}({object_id!r}): no such object in the scene; objects: "
                f"{self.describe_ids()}"
            )
        return entry

    def __contains__(self, object_id: object) -> bool:
        return object_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def ids(self) -> tuple[ObjectId, ...]:
        """Every id, in creation order."""
        return tuple(self._entries)

    @property
    def obstacle_ids(self) -> tuple[ObjectId, ...]:
        """Ids of obstacles."""
        return tuple(i for i, e in self._entries.items() if not e.attached)

    @property
    def attached_ids(self) -> tuple[ObjectId, ...]:
        """Ids of attached shapes."""
        return tuple(i for i, e in self._entries.items() if e.attached)

    def is_attached(self, object_id: ObjectId) -> bool:
        """True for an attached shape, False for an obstacle (ValueError when unknown)."""
        return self._get(object_id, "is_attached").attached

    def name_of(self, object_id: ObjectId) -> str:
        """The object's name (prim path for shapes read from USD)."""
        return self._get(object_id, "name_of").name

    def find(self, name: str) -> ObjectId:
        """Id of the object called ``name`` (ValueError naming the known names when absent)."""
        for oid, e in self._entries.items():
            if e.name == name:
                return oid
        names = ", ".join(repr(e.name) for e in self._entries.values()) or "none"
        raise ValueError(f"no object named {name!r} in the scene; names: {names}")

    def shape_of(self, object_id: ObjectId) -> Shape:
        """The object's shape."""
        return self._get(object_id, "shape_of").shape

    def frame_of(self, object_id: ObjectId) -> int | None:
        """Frame of an attached shape (``None`` = base); ValueError for an obstacle."""
        entry = self._get(object_id, "frame_of")
        if not entry.attached:
            raise ValueError(f"frame_of({object_id}): {object_id} ({entry.name}) is an obstacle")
        return entry.frame

    def pose_of(self, object_id: ObjectId, frame_poses: ArrayLike | None = None) -> Mat4:
        """World pose of an object.

        For shapes attached to a robot frame, ``frame_poses`` (4, 4) is world_from_frame.
        """
        entry = self._get(object_id, "pose_of")
        if not entry.attached:
            return entry.pose.copy()
        if entry.frame is None:
            return self.base_pose @ entry.pose
        if frame_poses is None:
            raise ValueError(
                f"pose_of({object_id}): attached to frame {entry.frame}; pass frame_poses"
            )
        return _as_pose(frame_poses, "frame pose") @ entry.pose

    def local_pose_of(self, object_id: ObjectId) -> Mat4:
        """Obstacle world pose, or an attached shape's frame_from_shape."""
        return self._get(object_id, "local_pose_of").pose.copy()

    def describe_ids(self) -> str:
        """``#1 obstacle 'table', #2 attached 'part'`` (or ``none``)."""
        parts = [
            f"{oid} {'attached' if e.attached else 'obstacle'}" + (f" {e.name!r}" if e.name else "")
            for oid, e in self._entries.items()
        ]
        return ", ".join(parts) if parts else "none"

    @classmethod
    def from_usd(cls, stage: Any, **kwargs: Any) -> CollisionScene:
        """Scene of obstacles read from a USD stage (meshes, cube/sphere/cylinder/capsule).

        Uses :func:`usdgrip.usd.geometry.read_collision_shapes`; every shape becomes
        an obstacle named by its prim path (see :meth:`find`).
        """
        from usdgrip.usd.geometry import read_collision_shapes

        scene = cls()
        for item in read_collision_shapes(stage, **kwargs):
            name, shape, pose = shape_from_scene_shape(item)
            scene.add_obstacle(shape, pose, name=name)
        return scene

    # ---- checks

    def _validate_for(
        self, model: GripperCollisionModel, exclusions: SceneExclusions | None
    ) -> tuple[Exclusion, ...]:
        if not isinstance(model, GripperCollisionModel):
            raise TypeError(f"expected a GripperCollisionModel, got {type(model).__name__}")
        for oid, e in self._entries.items():
            if e.attached and e.frame is not None and not 0 <= e.frame < model.frame_count:
                raise ValueError(
                    f"attached shape {oid} ({e.name}) is bound to frame {e.frame}; the gripper "
                    "model has frame 0 (grasp frame G) only"
                )
        if exclusions is None:
            return ()
        if not isinstance(exclusions, SceneExclusions):
            raise TypeError(f"expected SceneExclusions, got {type(exclusions).__name__}")
        exclusions.validate(self, model.shape_count)
        return exclusions.items

    def _bodies(
        self, model: GripperCollisionModel, frame_poses: Poses, skip: ObjectId | None = None
    ) -> tuple[list[_Body], list[_Body]]:
        """(robot + frame-attached bodies moving with the poses, fixed bodies)."""
        movers = [
            _Body(("robot", i), s.name, g, o, frame_poses @ s.frame_from_shape, True)
            for i, (s, g, o) in enumerate(
                zip(model.shapes, model._geoms, model._objects, strict=True)
            )
        ]
        fixed: list[_Body] = []
        for oid, e in self._entries.items():
            if oid == skip:
                continue
            if not e.attached:
                fixed.append(_Body(("obstacle", oid), e.name, e.geom, e.obj, e.pose))
            elif e.frame is None:
                fixed.append(
                    _Body(("attached", oid), e.name, e.geom, e.obj, self.base_pose @ e.pose)
                )
            else:
                movers.append(
                    _Body(("attached", oid), e.name, e.geom, e.obj, frame_poses @ e.pose, True)
                )
        return movers, fixed

    def check_gripper(
        self,
        model: GripperCollisionModel,
        poses: ArrayLike,
        exclusions: SceneExclusions | None = None,
    ) -> CollisionResult:
        """Check the gripper (and shapes attached to it) at N poses.

        Args:
            model: the gripper's collision model.
            poses: (N, 4, 4) or (4, 4) world_from_G poses.
            exclusions: intended contacts; validated against this scene first.

        Returns:
            :class:`CollisionResult` with ``collides`` (N,), ``first_contact`` and
            ``exclusions_used``.

        Raises:
            ExclusionError: an exclusion does not fit the scene (see
                :meth:`SceneExclusions.validate`).
            ValueError: bad poses, or an attached shape bound to a frame the
                model does not have.
        """
        used = self._validate_for(model, exclusions)
        p = _as_poses(poses)
        movers, fixed = self._bodies(model, p)
        pairs = _pairs(movers + fixed, SceneExclusions(used))
        collides, contacts = self._run(movers + fixed, pairs, len(p))
        return CollisionResult(collides, contacts, used)

    def check_retreat(
        self,
        model: GripperCollisionModel,
        poses: ArrayLike,
        part_id: ObjectId,
        distance: float,
        steps: int = 5,
        support_id: ObjectId | None = None,
        exclusions: SceneExclusions | None = None,
    ) -> RetreatResult:
        """Lift obstacle ``part_id`` with the gripper at each pose and check the retreat.

        For each grasp pose the part is attached to frame 0 where it lies, the
        part is excluded against the finger shapes it touches there and against
        ``support_id`` while it still rests on it (touching from the grasp pose
        onwards without a break), then the gripper moves back along -Z of G
        (-approach) by ``distance`` in ``steps`` equal steps. A pose is rejected
        when at a step 1..steps the gripper, the carried part or another attached
        shape hits anything not excluded. The scene is restored afterwards (the
        part is an obstacle again, same id, same pose).

        Args:
            model: the gripper's collision model.
            poses: (N, 4, 4) or (4, 4) world_from_G grasp poses.
            part_id: the obstacle being picked.
            distance: retreat distance in metres (> 0).
            steps: number of sampled steps (>= 1); the motion between samples is
                not swept.
            support_id: obstacle the part rests on (table, bin), or ``None``.
            exclusions: further exclusions (validated with the part attached).

        Returns:
            :class:`RetreatResult`; ``exclusions_used`` per pose.
        """
        entry = self._get(part_id, "check_retreat")
        if entry.attached:
            raise ValueError(
                f"check_retreat: part {part_id} ({entry.name}) is already attached; pass an "
                "obstacle resting in the world"
            )
        d = _positive(distance, "retreat distance")
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(f"retreat steps is {steps!r}; expected an int >= 1")
        if support_id is not None:
            support = self._get(support_id, "check_retreat support")
            if support_id == part_id:
                raise ValueError(f"check_retreat: support {support_id} is the part itself")
            if support.attached:
                raise ValueError(
                    f"check_retreat: support {support_id} ({support.name}) is attached; expected "
                    "an obstacle"
                )
        p = _as_poses(poses)
        n, k = len(p), int(steps)
        world_part = entry.pose.copy()
        g_from_part = _inverse(p) @ world_part  # (N, 4, 4)
        self.attach(part_id, 0, np.eye(4))
        try:
            base = self._validate_for(model, exclusions)
            # Which fingers touch the part at the grasp pose.
            fingers = model.finger_indices or tuple(range(model.shape_count))
            touching = np.zeros((n, model.shape_count), dtype=bool)
            for s in fingers:
                shape = model.shapes[s]
                finger = _Body(("robot", s), shape.name, model._geoms[s], model._objects[s],
                               p @ shape.frame_from_shape, True)  # fmt: skip
                part = _Body(
                    ("attached", part_id), entry.name, entry.geom, entry.obj, p @ g_from_part, True
                )
                touching[:, s] = _touch(finger, part, n, self._request, self._result)
            # Poses along the retreat: step j moves G by -j*d/k along its own Z.
            offsets = np.arange(1, k + 1) * (d / k)
            moved = np.repeat(p, k, axis=0)
            moved[:, :3, 3] -= np.repeat(p[:, :3, 2], k, axis=0) * np.tile(offsets, n)[:, None]
            part_world = moved @ np.repeat(g_from_part, k, axis=0)
            # Does the part still rest on its support (touching since the grasp, no break)?
            rests = np.zeros((n, k), dtype=bool)
            rested = False
            if support_id is not None:
                sup = self._entries[support_id]
                sup_body = _Body(("obstacle", support_id), sup.name, sup.geom, sup.obj, sup.pose)
                part0 = _Body(("attached", part_id), entry.name, entry.geom, entry.obj, world_part)
                rested = bool(_touch(part0, sup_body, 1, self._request, self._result)[0])
                if rested:
                    part_k = _Body(
                        ("attached", part_id), entry.name, entry.geom, entry.obj, part_world, True
                    )
                    rests = np.logical_and.accumulate(
                        _touch(part_k, sup_body, n * k, self._request, self._result).reshape(n, k),
                        axis=1,
                    )
            movers, fixed = self._bodies(model, moved, skip=part_id)
            part_body = _Body(
                ("attached", part_id), entry.name, entry.geom, entry.obj, part_world, True
            )
            bodies = movers + [part_body] + fixed
            # Per-pose exclusions: the base set plus touching fingers; the support
            # pair is handled separately (it depends on the step).
            collides = np.zeros(n * k, dtype=bool)
            contacts: list[Contact | None] = [None] * (n * k)
            used_per_pose: list[tuple[Exclusion, ...]] = []
            groups: dict[tuple, list[int]] = {}
            for i in range(n):
                groups.setdefault(tuple(np.flatnonzero(touching[i])), []).append(i)
            sup_ex = Exclusion.obstacle(part_id, support_id) if support_id is not None else None
            for touched, members in groups.items():
                ex = SceneExclusions(base)
                for s in touched:
                    ex.robot(part_id, int(s))
                if sup_ex is not None:
                    ex.add(sup_ex)
                rows = (np.asarray(members)[:, None] * k + np.arange(k)[None]).ravel()
                sub = [_select(b, rows) for b in bodies]
                c, cc = self._run(sub, _pairs(sub, ex), len(rows))
                collides[rows] = c
                for r, contact in zip(rows, cc, strict=True):
                    contacts[r] = contact
            if support_id is not None:
                # Part vs support, checked once the part has left it (or never rested).
                sup = self._entries[support_id]
                sup_body = _Body(("obstacle", support_id), sup.name, sup.geom, sup.obj, sup.pose)
                todo = np.flatnonzero(~collides & ~rests.ravel())
                if len(todo):
                    sub = [_select(part_body, todo), sup_body]
                    c, cc = self._run(sub, [(0, 1)], len(todo))
                    collides[todo] = c
                    for r, contact in zip(todo, cc, strict=True):
                        if contact is not None:
                            contacts[r] = contact
            for i in range(n):
                ex = list(base) + [
                    Exclusion.robot(part_id, int(s)) for s in np.flatnonzero(touching[i])
                ]
                if sup_ex is not None and rested:
                    ex.append(sup_ex)
                used_per_pose.append(tuple(dict.fromkeys(ex)))
        finally:
            self.detach(part_id, world_part)
        per = collides.reshape(n, k)
        hit = per.any(axis=1)
        first = np.where(hit, per.argmax(axis=1) + 1, -1).astype(np.int64)
        first_contact = tuple(contacts[i * k + first[i] - 1] if hit[i] else None for i in range(n))
        return RetreatResult(hit, first_contact, first, tuple(used_per_pose), d, k)

    # ---- core

    def _run(
        self, bodies: list[_Body], pairs: list[tuple[int, int]], n: int
    ) -> tuple[NDArray[np.bool_], tuple[Contact | None, ...]]:
        return _run(bodies, pairs, n, self._request, self._result)


def _check_frame(frame: int | None) -> int | None:
    if frame is None:
        return None
    if isinstance(frame, bool) or not isinstance(frame, (int, np.integer)) or frame < 0:
        raise ValueError(f"frame is {frame!r}; expected a robot frame index >= 0 or None (base)")
    return int(frame)


def _select(body: _Body, rows: NDArray[np.int64]) -> _Body:
    if not body.moving:
        return body
    return _Body(body.key, body.name, body.geom, body.obj, body.world[rows], True)


def _pairs(bodies: list[_Body], exclusions: SceneExclusions) -> list[tuple[int, int]]:
    """Index pairs to check: anything involving a robot or attached body, minus exclusions."""
    out = []
    for i, j in itertools.combinations(range(len(bodies)), 2):
        a, b = bodies[i], bodies[j]
        kinds = {a.key[0], b.key[0]}
        if kinds == {"obstacle"} or kinds == {"robot"}:
            continue
        if not (a.moving or b.moving) and "attached" not in kinds:
            continue
        # Subject first: robot or attached; partner obstacle last.
        if a.key[0] == "obstacle":
            i, j = j, i
        if exclusions.excludes(bodies[i].key, bodies[j].key) is None:
            out.append((i, j))
    return out


def _world_aabb(body: _Body, n: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    w = body.world if body.world.ndim == 3 else body.world[None]
    pts = body.geom.corners @ np.swapaxes(w[:, :3, :3], 1, 2) + w[:, None, :3, 3]
    lo, hi = pts.min(axis=1), pts.max(axis=1)
    if len(lo) != n:
        lo, hi = np.broadcast_to(lo, (n, 3)), np.broadcast_to(hi, (n, 3))
    return lo, hi


def _contact(a: _Body, b: _Body, inside: bool) -> Contact:
    return Contact(a.key[0], a.key[1], b.key[0], b.key[1], a.name, b.name, inside)


def _run(
    bodies: list[_Body],
    pairs: list[tuple[int, int]],
    n: int,
    request: fcl.CollisionRequest,
    result: fcl.CollisionResult,
) -> tuple[NDArray[np.bool_], tuple[Contact | None, ...]]:
    """Collide every pair at n poses: AABB cull, closed-mesh containment, then fcl."""
    collides = np.zeros(n, dtype=bool)
    contacts: list[Contact | None] = [None] * n
    if n == 0 or not pairs:
        return collides, tuple(contacts)
    boxes = [_world_aabb(b, n) for b in bodies]
    cand = np.empty((n, len(pairs)), dtype=bool)
    for c, (i, j) in enumerate(pairs):
        (lo_a, hi_a), (lo_b, hi_b) = boxes[i], boxes[j]
        cand[:, c] = np.all((lo_a <= hi_b) & (lo_b <= hi_a), axis=1)
    # Containment: a shape wholly inside a closed mesh has no surface contact.
    for c, (i, j) in enumerate(pairs):
        for inner, outer in ((i, j), (j, i)):
            o = bodies[outer]
            if not o.geom.closed:
                continue
            rows = np.flatnonzero(cand[:, c] & ~collides)
            if not len(rows):
                continue
            wi = bodies[inner].world
            wi = wi[rows] if wi.ndim == 3 else np.broadcast_to(wi, (len(rows), 4, 4))
            wo = o.world[rows] if o.world.ndim == 3 else np.broadcast_to(o.world, (len(rows), 4, 4))
            ref = np.einsum("nij,j->ni", wi[:, :3, :3], bodies[inner].geom.ref_point) + wi[:, :3, 3]
            inv = _inverse(wo)
            local = np.einsum("nij,nj->ni", inv[:, :3, :3], ref) + inv[:, :3, 3]
            inside = o.geom.contains(local)
            for r in rows[inside]:
                collides[r] = True
                contacts[r] = _contact(bodies[i], bodies[j], True)
    # Surface/solid contact with fcl, reusing objects: set transforms only.
    geom_world = [b.world @ b.geom.shape_from_geom for b in bodies]
    rot = [g[..., :3, :3] for g in geom_world]
    trans = [g[..., :3, 3] for g in geom_world]
    for k, b in enumerate(bodies):
        if not b.moving:
            b.obj.setRotation(rot[k])
            b.obj.setTranslation(trans[k])
    moving = [b.moving for b in bodies]
    objs = [b.obj for b in bodies]
    collide = fcl.collide
    for r in np.flatnonzero(~collides & cand.any(axis=1)):
        placed = [False] * len(bodies)
        for c in np.flatnonzero(cand[r]):
            i, j = pairs[c]
            for k in (i, j):
                if moving[k] and not placed[k]:
                    objs[k].setRotation(rot[k][r])
                    objs[k].setTranslation(trans[k][r])
                    placed[k] = True
            if collide(objs[i], objs[j], request, result):
                result.contacts.clear()
                collides[r] = True
                contacts[r] = _contact(bodies[i], bodies[j], False)
                break
    return collides, tuple(contacts)


def _touch(
    a: _Body, b: _Body, n: int, request: fcl.CollisionRequest, result: fcl.CollisionResult
) -> NDArray[np.bool_]:
    """(n,) True where ``a`` and ``b`` collide or are within :data:`TOUCH_TOLERANCE`.

    An exact fcl distance query is slow on a detailed mesh, so it only runs
    where a solid containing one shape grown by the tolerance
    (:meth:`_Geometry.inflated`) overlaps the other: elsewhere the shapes are
    provably farther apart than the tolerance, and the answer is the same.
    """
    hit, _ = _run([a, b], [(0, 1)], n, request, result)
    (lo_a, hi_a), (lo_b, hi_b) = _world_aabb(a, n), _world_aabb(b, n)
    near = np.all((lo_a <= hi_b + TOUCH_TOLERANCE) & (lo_b <= hi_a + TOUCH_TOLERANCE), axis=1)
    rows = np.flatnonzero(~hit & near)
    if not len(rows):
        return hit
    # Grow the shape whose inflated solid is tightest: a primitive, else the smaller mesh.
    grown, other = (a, b) if _inflation_cost(a.geom) <= _inflation_cost(b.geom) else (b, a)
    solid, shape_from_solid, exact = grown.geom.inflated(TOUCH_TOLERANCE)
    solid_world = grown.world @ shape_from_solid
    grown_world = grown.world @ grown.geom.shape_from_geom
    other_world = other.world @ other.geom.shape_from_geom
    collide, distance = fcl.collide, fcl.distance
    dreq = fcl.DistanceRequest()
    for r in rows:
        sw = solid_world[r] if solid_world.ndim == 3 else solid_world
        ow = other_world[r] if other_world.ndim == 3 else other_world
        solid.setRotation(sw[:3, :3])
        solid.setTranslation(sw[:3, 3])
        other.obj.setRotation(ow[:3, :3])
        other.obj.setTranslation(ow[:3, 3])
        overlaps = collide(solid, other.obj, request, result)
        result.contacts.clear()
        if not overlaps:
            continue
        if exact:
            hit[r] = True
            continue
        gw = grown_world[r] if grown_world.ndim == 3 else grown_world
        grown.obj.setRotation(gw[:3, :3])
        grown.obj.setTranslation(gw[:3, 3])
        if distance(grown.obj, other.obj, dreq, fcl.DistanceResult()) <= TOUCH_TOLERANCE:
            hit[r] = True
    return hit


def _inflation_cost(geom: _Geometry) -> tuple[int, int]:
    """Sort key: primitives first (tight inflation), then meshes by face count."""
    if geom.shape.kind != "mesh":
        return (0, 0)
    return (1, len(geom.shape.faces))
