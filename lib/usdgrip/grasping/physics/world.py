"""Inputs of the evaluation: the object, the gripper and the scene, as frozen records of arrays.

All poses and points are in the **object frame** (the frame of the object's
meshes), metres. Build the object with :func:`make_physics_object`, the scene
with :func:`make_physics_scene`; :class:`PhysicsGripper` describes a parallel
jaw in its grasp frame G (GraspGenX: +X closing, +Z approach, origin between
the pads). The records pickle, so worker processes receive them unchanged.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

import usdgrip.grasping.physics.mesh as meshes
from usdgrip.frames import find_rigid_poses
from usdgrip.grasping.physics.decompose import Decomposition, decompose_mesh
from usdgrip.grasping.physics.params import (
    DEFAULT_DENSITY,
    DEFAULT_FRICTION,
    DEFAULT_GRIP_FORCE,
    DEFAULT_PAD_DEPTH,
    DEFAULT_PAD_THICKNESS,
    DEFAULT_PAD_WIDTH,
    DEFAULT_TIP_OFFSET,
    MAX_OBJECT_MASS,
    MIN_OBJECT_INERTIA,
    MIN_OBJECT_MASS,
    DecompositionParams,
)

Points = NDArray[np.float64]  # (K, 3)
Mat4 = NDArray[np.float64]  # (4, 4)


def _positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"{name} is {value!r}; expected a number")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{name} is {value!r}; expected a finite number > 0")
    return number


def check_rigid(pose: ArrayLike, name: str) -> Mat4:
    """A ``(4, 4)`` rigid transform (orthonormal rotation, det +1, last row 0 0 0 1).

    Raises:
        TypeError: not numeric.
        ValueError: wrong shape, not finite or not rigid, naming ``name``.
    """
    try:
        m = np.asarray(pose, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name}: expected a numeric (4, 4) matrix, got {type(pose).__name__}"
        ) from None
    if m.shape != (4, 4):
        raise ValueError(f"{name} has shape {m.shape}; expected (4, 4)")
    finite, rigid = find_rigid_poses(m)
    if not finite:
        raise ValueError(f"{name} contains NaN or infinite values")
    if not rigid:
        raise ValueError(
            f"{name} is not a rigid transform (rotation must be orthonormal with det +1, "
            "last row 0 0 0 1)"
        )
    return m


@dataclass(frozen=True)
class PhysicsObject:
    """The object to grasp: convex collision pieces and mass properties (object frame).

    Build it with :func:`make_physics_object`.
    """

    pieces: tuple[Points, ...]
    """Convex pieces, each ``(K, 3)`` points (MuJoCo collides their convex hulls)."""
    mass: float
    """kg."""
    center_of_mass: NDArray[np.float64]
    """(3,) metres."""
    inertia: NDArray[np.float64]
    """(3, 3) inertia tensor about the centre of mass, kg·m²."""
    friction: float
    """Coulomb friction coefficient of object contacts (pads, support)."""
    volume: float
    """Volume used for the mass, m³."""
    defaults_used: tuple[str, ...] = ()
    """Names of the values that came from defaults (``density``, ``friction``), for warnings."""
    decomposition: Decomposition | None = field(default=None, compare=False)
    """How the pieces were made (None when given directly)."""

    @property
    def lowest(self) -> NDArray[np.float64]:
        """(3,) minimum corner of the pieces' bounds."""
        return np.min([p.min(axis=0) for p in self.pieces], axis=0)


def make_physics_object(
    vertices: ArrayLike,
    triangles: ArrayLike,
    *,
    mass: float | None = None,
    density: float | None = None,
    friction: float | None = None,
    decomposition: DecompositionParams | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    mass_from: str | None = None,
    label: str | None = None,
) -> PhysicsObject:
    """The object's physics model from its triangle mesh in the object frame.

    Collision pieces come from :func:`decompose_mesh` (exact convex parts, else
    cached CoACD pieces). Mass is ``mass`` when given, else ``density`` (default
    :data:`DEFAULT_DENSITY` kg/m³) × volume. Volume, centre of mass and inertia
    are those of the closed mesh (exact polyhedral integrals); for a mesh that
    is not closed they are summed over the pieces' hulls (overlaps count twice).

    Args:
        vertices: ``(V, 3)`` metres in the object frame.
        triangles: ``(F, 3)`` integer indices.
        mass: kg, > 0; wins over ``density``.
        density: kg/m³, > 0.
        friction: Coulomb coefficient > 0 (default :data:`DEFAULT_FRICTION`).
        decomposition: CoACD and convexity-test parameters.
        cache_dir: CoACD cache folder (default ``${XDG_CACHE_HOME:-~/.cache}/usdgrip/coacd``).
        use_cache: False to bypass the cache.
        mass_from: where the mass or density came from (``<prim>.physics:mass``,
            ``density option``...), for messages.
        label: the object's name in the decomposition's progress lines.

    Raises:
        TypeError, ValueError: a bad argument, named; a mass or inertia below what the
            engine compiles (:data:`MIN_OBJECT_MASS`, :data:`MIN_OBJECT_INERTIA`), naming
            the mass, where it came from and the object's size.
    """
    defaults = []
    if mass is not None:
        mass = _positive("mass", mass)
    if density is None:
        if mass is None:
            defaults.append("density")
        density = DEFAULT_DENSITY
    density = _positive("density", density)
    if friction is None:
        defaults.append("friction")
        friction = DEFAULT_FRICTION
    friction = _positive("friction", friction)
    result = decompose_mesh(
        vertices,
        triangles,
        decomposition,
        cache_dir=cache_dir,
        use_cache=use_cache,
        what="object mesh",
        label=label,
    )
    props = None
    if result.closed:
        v, f = meshes.weld(*meshes.check_mesh(vertices, triangles, "object mesh"))
        props = meshes.compute_mass_properties(v, f)
        if props.volume < 0:  # inward-facing triangles
            props = meshes.compute_mass_properties(v, f[:, [0, 2, 1]])
        if props.volume <= 0:
            props = None
    if props is None:
        props = _pieces_mass_properties(result.pieces)
    if props.volume <= 0:
        raise ValueError("object mesh: encloses no volume; expected a solid object")
    mass_value = mass if mass is not None else density * props.volume
    inertia = props.inertia * (mass_value / props.volume)
    how = mass_from or ("mass" if mass is not None else "density")
    if mass is None:
        how = f"{how} {density:g} kg/m³ × volume {props.volume:.3g} m³"
    extent = np.ptp(np.asarray(vertices, dtype=np.float64).reshape(-1, 3), axis=0)
    check_mass_properties(mass_value, inertia, how, extent)
    return PhysicsObject(
        pieces=result.pieces,
        mass=float(mass_value),
        center_of_mass=np.asarray(props.center, dtype=np.float64),
        inertia=inertia,
        friction=friction,
        volume=float(props.volume),
        defaults_used=tuple(defaults),
        decomposition=result,
    )


def check_mass_properties(
    mass: float, inertia: NDArray[np.float64], mass_from: str, extent: ArrayLike
) -> None:
    """Refuse a mass or inertia the engine cannot compile, naming their cause.

    Args:
        mass: kg.
        inertia: (3, 3) kg·m² about the centre of mass.
        mass_from: how the mass came about (``<prim>.physics:mass``, ``density D × volume V``).
        extent: (3,) the object's size along X, Y, Z, metres.

    Raises:
        ValueError: ``mass`` outside [:data:`MIN_OBJECT_MASS`, :data:`MAX_OBJECT_MASS`]
            or a principal moment below :data:`MIN_OBJECT_INERTIA` (or not finite).
    """
    with np.errstate(all="ignore"):
        moments = np.linalg.eigvalsh(inertia) if np.isfinite(inertia).all() else None
    smallest = float(moments.min()) if moments is not None else math.inf
    if MIN_OBJECT_MASS <= mass <= MAX_OBJECT_MASS and MIN_OBJECT_INERTIA <= smallest < math.inf:
        return  # (a NaN fails every comparison)
    size = " × ".join(f"{float(e):.3g}" for e in np.ravel(extent))
    found = (
        f"a smallest principal moment of inertia of {smallest:.3g} kg·m²"
        if moments is not None
        else "a moment of inertia that is not finite"
    )
    raise ValueError(
        f"mass {mass:.3g} kg ({mass_from}) gives {found} for an object of {size} m; expected "
        f"a mass of {MIN_OBJECT_MASS:g} to {MAX_OBJECT_MASS:g} kg and moments of at least "
        f"{MIN_OBJECT_INERTIA:g} kg·m² (what MuJoCo simulates): check the mass or density and "
        "the stage's metersPerUnit and kilogramsPerUnit"
    )


#: Points around a round gripper shape (sphere, cylinder, capsule) made convex.
ROUND_SEGMENTS = 24


def _round_points(kind: str, radius: float, height: float, axis: str) -> Points:
    """Convex points of a sphere, cylinder or capsule along ``axis`` (X, Y or Z), centred."""
    angles = np.linspace(0, 2 * np.pi, ROUND_SEGMENTS, endpoint=False)
    ring = np.column_stack([np.cos(angles), np.sin(angles)])
    if kind == "cylinder":
        local = np.concatenate(
            [
                np.column_stack([radius * ring, np.full(len(ring), z)])
                for z in (-height / 2, height / 2)
            ]
        )
    else:
        # latitude rings of a sphere; a capsule's halves move apart by its spine
        spine = height / 2 if kind == "capsule" else 0.0
        rings = []
        for lat in np.linspace(-np.pi / 2, np.pi / 2, 9):
            z = radius * np.sin(lat) + (spine if lat >= 0 else -spine)
            rings.append(np.column_stack([radius * np.cos(lat) * ring, np.full(len(ring), z)]))
        if spine:
            rings.append(np.column_stack([radius * ring, np.full(len(ring), spine)]))
            rings.append(np.column_stack([radius * ring, np.full(len(ring), -spine)]))
        local = np.concatenate(rings)
    order = {"X": [2, 0, 1], "Y": [1, 2, 0], "Z": [0, 1, 2]}[axis]
    return local[:, order]


def _pieces_mass_properties(pieces: tuple[Points, ...]) -> meshes.MassProperties:
    volume, first, second = 0.0, np.zeros(3), np.zeros((3, 3))
    for points in pieces:
        hull = meshes.convex_hull(points)
        if hull is None:
            continue
        p = meshes.compute_mass_properties(hull.vertices, hull.triangles)
        volume += p.volume
        first += p.volume * p.center
        # back to the origin: C = I_c-part + m (|c|² I - c cᵀ)
        second += p.inertia + p.volume * (
            np.dot(p.center, p.center) * np.eye(3) - np.outer(p.center, p.center)
        )
    if volume <= 0:
        return meshes.MassProperties(0.0, np.zeros(3), np.zeros((3, 3)))
    center = first / volume
    inertia = second - volume * (np.dot(center, center) * np.eye(3) - np.outer(center, center))
    return meshes.MassProperties(volume, center, inertia)


@dataclass(frozen=True)
class GripperShape:
    """A rigid collision shape of the hand (palm, housing), in the grasp frame G.

    ``kind`` ``box``: ``size`` gives the full extents ``(3,)``; ``convex``:
    ``points`` ``(K, 3)`` (their convex hull). ``pose`` places the shape in G.
    """

    name: str
    kind: Literal["box", "convex"]
    pose: Mat4
    size: NDArray[np.float64] | None = None
    points: Points | None = None

    def __post_init__(self) -> None:
        label = f"gripper shape {self.name!r}"
        object.__setattr__(self, "pose", check_rigid(self.pose, f"{label} pose"))
        if self.kind == "box":
            size = np.asarray(self.size if self.size is not None else (), dtype=np.float64)
            if size.shape != (3,) or not np.isfinite(size).all() or (size <= 0).any():
                raise ValueError(f"{label}: size is {self.size!r}; expected 3 finite extents > 0 m")
            object.__setattr__(self, "size", size)
        elif self.kind == "convex":
            points = np.asarray(self.points if self.points is not None else (), dtype=np.float64)
            if points.ndim != 2 or points.shape[1:] != (3,) or not np.isfinite(points).all():
                raise ValueError(
                    f"{label}: points have shape {points.shape}; expected finite (K, 3)"
                )
            if meshes.convex_hull(points) is None:
                raise ValueError(f"{label}: points span no volume; expected a solid convex shape")
            object.__setattr__(self, "points", points)
        else:
            raise ValueError(f"{label}: kind is {self.kind!r}; expected 'box' or 'convex'")


@dataclass(frozen=True)
class PhysicsGripper:
    """A parallel-jaw gripper in its grasp frame G (GraspGenX: +X closing, +Z approach).

    Each finger is a pad box ``pad_thickness × pad_width × pad_depth`` whose
    inner face sits at ``x = ∓max_opening/2`` when open, spanning
    ``z ∈ [tip_offset - pad_depth, tip_offset]`` (the planner proxy's fingers).
    The fingers slide along ±X, coupled to close symmetrically, each pushed by
    ``grip_force`` newtons. ``palm`` adds rigid shapes (see :meth:`proxy`).
    """

    max_opening: float
    pad_width: float = DEFAULT_PAD_WIDTH
    grip_force: float = DEFAULT_GRIP_FORCE
    pad_thickness: float = DEFAULT_PAD_THICKNESS
    pad_depth: float = DEFAULT_PAD_DEPTH
    tip_offset: float = DEFAULT_TIP_OFFSET
    palm: tuple[GripperShape, ...] = ()
    articulation: Any = field(default=None, compare=False)
    """The gripper's own articulation (:class:`~usdgrip.gripper_articulation.GripperArticulation`
    with an opening report): when set, the engine builds the hand from it
    (:func:`~usdgrip.grasping.physics.articulated_hand.add_articulated_hand`) and the pads,
    ``palm`` and ``grip_force`` (the force limit of drives that author none) are not the
    fingers."""

    def __post_init__(self) -> None:
        for name in ("max_opening", "pad_width", "grip_force", "pad_thickness", "pad_depth"):
            object.__setattr__(self, name, _positive(f"gripper {name}", getattr(self, name)))
        tip = self.tip_offset
        if isinstance(tip, bool) or not isinstance(tip, int | float) or not math.isfinite(tip):
            raise ValueError(f"gripper tip_offset is {tip!r}; expected a finite number (m)")
        palm = tuple(self.palm)
        for shape in palm:
            if not isinstance(shape, GripperShape):
                raise TypeError(f"gripper palm holds {type(shape).__name__}; expected GripperShape")
        object.__setattr__(self, "palm", palm)
        joints = self.articulation
        if joints is not None and (
            getattr(joints, "opening", None) is None or not joints.opening.driven
        ):
            raise ValueError("gripper articulation has no driven finger joint; expected one")

    @classmethod
    def proxy(
        cls,
        max_opening: float,
        pad_width: float = DEFAULT_PAD_WIDTH,
        grip_force: float = DEFAULT_GRIP_FORCE,
        *,
        palm_depth: float = 0.02,
    ) -> PhysicsGripper:
        """The planner's proxy gripper: the pads plus a palm box behind them.

        Palm: ``(max_opening + 2·pad_thickness) × pad_width × palm_depth``, spanning
        ``z ∈ [tip - depth - palm_depth, tip - depth]``.
        """
        w = _positive("gripper max_opening", max_opening)
        p = _positive("gripper pad_width", pad_width)
        d = _positive("gripper palm_depth", palm_depth)
        pose = np.eye(4)
        pose[2, 3] = DEFAULT_TIP_OFFSET - DEFAULT_PAD_DEPTH - d / 2
        palm = GripperShape(
            "palm", "box", pose, size=np.array([w + 2 * DEFAULT_PAD_THICKNESS, p, d])
        )
        return cls(w, p, grip_force, palm=(palm,))

    @classmethod
    def from_collision_model(
        cls,
        model: Any,
        max_opening: float,
        pad_width: float = DEFAULT_PAD_WIDTH,
        grip_force: float = DEFAULT_GRIP_FORCE,
        *,
        decomposition: DecompositionParams | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        use_cache: bool = True,
    ) -> PhysicsGripper:
        """The pads plus every non-finger shape of a planner collision model as the palm.

        ``model`` is read by duck typing (usdgrip's ``GripperCollisionModel``: ``shapes``
        with ``name``, ``shape`` and ``frame_from_shape`` in G, and ``finger_indices``),
        so ``--gripper-model auto|proxy|geometry`` shapes pass straight in. The model's
        fingers are replaced by the pad boxes (they close; the model's do not). Boxes
        stay boxes; spheres, cylinders and capsules become convex point sets
        (:data:`ROUND_SEGMENTS` around); meshes go through :func:`decompose_mesh`.
        """
        fingers = set(getattr(model, "finger_indices", ()))
        palm: list[GripperShape] = []
        for index, robot in enumerate(getattr(model, "shapes", None) or ()):
            if index in fingers:
                continue
            shape, pose = robot.shape, robot.frame_from_shape
            name = str(robot.name)
            if shape.kind == "box":
                palm.append(
                    GripperShape(name, "box", pose, size=2 * np.asarray(shape.half_extents))
                )
            elif shape.kind == "mesh":
                pieces = decompose_mesh(
                    shape.vertices,
                    shape.faces,
                    decomposition,
                    cache_dir=cache_dir,
                    use_cache=use_cache,
                    what=f"gripper shape {name!r}",
                ).pieces
                palm.extend(
                    GripperShape(f"{name}[{k}]", "convex", pose, points=piece)
                    for k, piece in enumerate(pieces)
                )
            else:
                points = _round_points(shape.kind, shape.radius, shape.height, shape.axis)
                palm.append(GripperShape(name, "convex", pose, points=points))
        return cls(max_opening, pad_width, grip_force, palm=tuple(palm))


@dataclass(frozen=True)
class PhysicsScene:
    """Where the object is: the up axis, an optional table plane and static support pieces.

    Build it with :func:`make_physics_scene`.
    """

    up: NDArray[np.float64] = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    """(3,) unit up axis in the object frame (gravity is −up·9.81 m/s²; the lift follows +up)."""
    table: bool = False
    """A plane just under the object's lowest point along ``up``."""
    support_pieces: tuple[Points, ...] = ()
    """Static convex support pieces in the object frame."""

    @property
    def has_support(self) -> bool:
        """Whether something holds the object before the grasp (then gravity is on throughout)."""
        return self.table or bool(self.support_pieces)


def make_physics_scene(
    up: ArrayLike = (0.0, 0.0, 1.0),
    *,
    table: bool = False,
    support_meshes: tuple[tuple[ArrayLike, ArrayLike], ...] = (),
    decomposition: DecompositionParams | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
) -> PhysicsScene:
    """A scene: up axis, optional table, support meshes ``(vertices, triangles)`` (object frame).

    Support meshes go through the same decomposition as the object.

    Raises:
        ValueError: ``up`` is not a finite non-zero 3-vector, or a support mesh is bad.
    """
    u = np.asarray(up, dtype=np.float64)
    if u.shape != (3,) or not np.isfinite(u).all() or np.linalg.norm(u) < 1e-9:
        raise ValueError(f"up is {up!r}; expected a finite non-zero 3-vector")
    pieces: list[Points] = []
    for i, item in enumerate(support_meshes):
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise TypeError(f"support_meshes[{i}]: expected a (vertices, triangles) pair")
        d = decompose_mesh(
            item[0],
            item[1],
            decomposition,
            cache_dir=cache_dir,
            use_cache=use_cache,
            what=f"support_meshes[{i}]",
        )
        pieces.extend(d.pieces)
    return PhysicsScene(u / np.linalg.norm(u), bool(table), tuple(pieces))
