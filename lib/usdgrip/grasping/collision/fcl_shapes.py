"""Collision shapes (box, sphere, cylinder, capsule, mesh) and their python-fcl geometry.

Pure (numpy, python-fcl, trimesh; no ``pxr``). Lengths in metres; poses are ``(4, 4)``
float64 rigid transforms, translation in ``[:3, 3]``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Literal

import fcl
import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.frames import Mat4, find_rigid_poses

Points = NDArray[np.float64]  # (N, 3)
Faces = NDArray[np.int64]  # (M, 3)

ShapeKind = Literal["box", "sphere", "cylinder", "capsule", "mesh"]
SHAPE_KINDS: tuple[str, ...] = ("box", "sphere", "cylinder", "capsule", "mesh")
AXES = ("X", "Y", "Z")


# --------------------------------------------------------------------------- ids


@dataclass(frozen=True, order=True)
class ObjectId:
    """Stable id of an obstacle or attached shape; never reused within a scene."""

    value: int

    def __str__(self) -> str:
        return f"#{self.value}"


# ------------------------------------------------------------------------ shapes


def as_pose(pose: ArrayLike | None, what: str) -> Mat4:
    if pose is None:
        return np.eye(4)
    m = np.asarray(pose, dtype=np.float64)
    if m.shape != (4, 4):
        raise ValueError(f"{what} has shape {m.shape}; expected a (4, 4) pose")
    finite, rigid = find_rigid_poses(m)
    if not finite:
        raise ValueError(f"{what} has non-finite values; expected a finite (4, 4) pose")
    if not rigid:
        raise ValueError(
            f"{what} is not rigid (rotation not orthonormal with det +1, or last row not "
            "0 0 0 1); remove scale with usdgrip.frames.compute_rigid_part and put the scale "
            "into the shape"
        )
    return m.copy()


def check_positive(value: Any, what: str) -> float:
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
        return cls("sphere", radius=check_positive(radius, "sphere radius"), name=name)

    @classmethod
    def cylinder(cls, radius: float, height: float, *, axis: str = "Z", name: str = "") -> Shape:
        """Solid cylinder of ``radius`` and total ``height`` along ``axis``, centred."""
        return cls(
            "cylinder",
            radius=check_positive(radius, "cylinder radius"),
            height=check_positive(height, "cylinder height"),
            axis=_check_axis(axis),
            name=name,
        )

    @classmethod
    def capsule(cls, radius: float, height: float, *, axis: str = "Z", name: str = "") -> Shape:
        """Capsule: spine of ``height`` along ``axis`` plus two ``radius`` caps, centred."""
        return cls(
            "capsule",
            radius=check_positive(radius, "capsule radius"),
            height=check_positive(height, "capsule height"),
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


class ShapeGeometry:
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
                with np.errstate(invalid="ignore", divide="ignore"):  # zero volume: 0 / 0
                    volume = tm.volume
                if volume < 0:
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
        return invert_rigid(np.asarray(to_origin, dtype=np.float64)), np.asarray(obb, dtype=float)
    return placement, extents


def invert_rigid(m: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inverse of rigid (..., 4, 4) transforms."""
    r = np.swapaxes(m[..., :3, :3], -1, -2)
    out = np.zeros(m.shape)
    out[..., :3, :3] = r
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", r, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out
