"""Read object and obstacle geometry from USD into plain numpy arrays.

This is a USD-edge module (it imports ``pxr``). It turns ``UsdGeom.Mesh``
prims and Cube/Sphere/Cylinder/Capsule/Cone prims (tessellated once, by
:mod:`usdgrip.usd.primitives`) into one triangle soup (:class:`TriangleMesh`) for the
planner and the physics, and the same prims into :class:`SceneShape` records for the
collision scene (Cube/Sphere/Cylinder/Capsule analytic, a Cone tessellated). Everything returned is
in metres (``metersPerUnit`` applied through
:func:`usdgrip.usd.stage.compute_world_transform`).

Choices (also in ``docs/antipodal.md``):

- Polygons are fan-triangulated from their first vertex, as Hydra does; a
  concave polygon is therefore only right when its first vertex sees every
  other vertex.
- Faces listed in ``holeIndices`` are dropped (they are holes, not surface).
- ``orientation = "leftHanded"`` and transforms with a negative determinant
  reverse the triangle winding, so normals keep pointing out of the solid.
- Prims with ``purpose = "guide"`` are skipped (they are annotations, like the
  gripper's axis curves); invisible prims are kept (collision meshes are
  usually invisible).
- Geometry is read at the default time code (an attribute authored only as
  time samples has no default value and reads as empty).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pxr import Sdf, Usd, UsdGeom, UsdPhysics

from usdgrip.errors import GripperError
from usdgrip.frames import MAX_WORLD_OFFSET_M, Mat4, compute_rigid_part
from usdgrip.usd.primitives import (
    TESSELLATION_SECTIONS,
    get_primitive_kind,
    read_primitive_mesh,
    read_primitive_params,
    tessellate_primitive,
)
from usdgrip.usd.stage import (
    TRAVERSAL,
    compute_world_transform,
    get_meters_per_unit,
    get_world_transform_problem,
    read_stage_up_vector,
)

Points = NDArray[np.float64]  # (V, 3)
Triangles = NDArray[np.int64]  # (F, 3)

SHAPE_KINDS = ("mesh", "box", "sphere", "cylinder", "capsule")
#: Relative spread of per-axis scales below which a scale counts as uniform.
UNIFORM_SCALE_TOLERANCE = 1e-6
__all__ = [
    "SHAPE_KINDS",
    "TESSELLATION_SECTIONS",
    "SceneShape",
    "TriangleMesh",
    "check_manifold",
    "compute_fan_triangles",
    "compute_shape_mesh",
    "read_axis_aligned_box",
    "read_collision_shapes",
    "read_object_mesh",
    "read_up_axis",
]


@dataclass(frozen=True)
class TriangleMesh:
    """A triangle soup read from one or more ``UsdGeom.Mesh`` prims.

    Attributes:
        vertices: (V, 3) float64 positions in metres, in the frame the reader
            was asked for.
        faces: (F, 3) int64 vertex indices, counter-clockwise seen from
            outside (outward normals by the right-hand rule).
        source_paths: prim path of every mesh that contributed, in traversal order.
        face_source: (F,) int64 index into ``source_paths`` for every triangle.
    """

    vertices: Points
    faces: Triangles
    source_paths: tuple[str, ...]
    face_source: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __post_init__(self) -> None:
        vertices = np.ascontiguousarray(self.vertices, dtype=np.float64).reshape(-1, 3)
        faces = np.ascontiguousarray(self.faces, dtype=np.int64).reshape(-1, 3)
        source = np.asarray(self.face_source, dtype=np.int64).reshape(-1)
        if source.size == 0:
            source = np.zeros(len(faces), dtype=np.int64)
        if len(source) != len(faces):
            raise ValueError(f"face_source has {len(source)} entries; expected {len(faces)}")
        for name, value in (("vertices", vertices), ("faces", faces), ("face_source", source)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "source_paths", tuple(str(p) for p in self.source_paths))


@dataclass(frozen=True)
class SceneShape:
    """One collision obstacle read from USD.

    The geometry is expressed in the shape frame ``pose``: world = ``pose @`` local.

    Attributes:
        path: prim path.
        kind: one of ``"mesh"``, ``"box"``, ``"sphere"``, ``"cylinder"``, ``"capsule"``.
        params: metres. box: ``size`` (3,) full edge lengths along the frame's
            X, Y, Z. sphere: ``radius``. cylinder: ``radius``, ``height`` (full
            length), ``axis`` ("X", "Y" or "Z" of the frame). capsule: ``radius``,
            ``height`` (length of the cylindrical part, caps excluded, as USD
            defines it), ``axis``. mesh: empty.
        pose: (4, 4) rigid world transform in metres (scale removed; the scale
            is folded into ``params`` or the mesh vertices).
        mesh: for ``kind == "mesh"`` the triangles in the shape frame, else None.
    """

    path: str
    kind: Literal["mesh", "box", "sphere", "cylinder", "capsule"]
    params: dict
    pose: Mat4
    mesh: TriangleMesh | None = None


# --- meshes -----------------------------------------------------------------


#: Whether a prim passes TRAVERSAL (a PrimRange visits its root only then).
_traversed = TRAVERSAL.__call__
#: Prims :func:`_iter_gprims` walks by hand before it hands a larger subtree to one
#: PrimRange (cheaper per prim, dearer to build: a small object is walked faster by hand).
_WALKED_BY_HAND = 16


def _iter_gprims(root: Usd.Prim, schema: type) -> Iterator[Usd.Prim]:
    """Active, loaded, non-guide prims of ``schema`` at or under ``root`` (instances included).

    In ``Usd.PrimRange(root, TRAVERSAL)``'s order (depth first, parents first).
    """
    walked: list[Usd.Prim] = []
    stack = [root] if _traversed(root) else []
    while stack and len(walked) < _WALKED_BY_HAND:
        top = stack.pop()
        walked.append(top)
        stack.extend(reversed(top.GetFilteredChildren(TRAVERSAL)))
    # A larger subtree: one range for all of it (one per prim left would cost more).
    prims: Iterable[Usd.Prim] = Usd.PrimRange(root, TRAVERSAL) if stack else walked
    for prim in prims:
        if not prim.IsA(schema):
            continue
        # Purpose is inherited: a mesh under a guide Xform is a guide too.
        if UsdGeom.Imageable(prim).ComputePurpose() == UsdGeom.Tokens.guide:
            continue
        yield prim


def compute_fan_triangles(counts: NDArray[np.int64], indices: NDArray[np.int64]) -> Triangles:
    """Fan-triangulate polygons: face ``i`` with ``counts[i] = n`` gives ``n - 2`` triangles.

    Triangle ``k`` of a face with corners ``c0..c(n-1)`` is ``(c0, c(k+1), c(k+2))``.
    ``counts`` must all be >= 3 and sum to ``len(indices)`` (checked by the caller).
    """
    counts = np.asarray(counts, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    per_face = counts - 2
    face_of_tri = np.repeat(np.arange(len(counts)), per_face)
    # k-th triangle within its face: position minus the face's first triangle.
    first_tri = np.concatenate([[0], np.cumsum(per_face)[:-1]])
    k = np.arange(int(per_face.sum())) - first_tri[face_of_tri]
    base = starts[face_of_tri]
    return np.stack([indices[base], indices[base + k + 1], indices[base + k + 2]], axis=1)


def _read_one_mesh(prim: Usd.Prim) -> tuple[Points, Triangles]:
    """Points (prim-local units) and outward-wound triangles of one Mesh prim; errors name it."""
    mesh = UsdGeom.Mesh(prim)
    path = prim.GetPath()
    raw_points = _read_default(mesh.GetPointsAttr(), path)
    raw_counts = _read_default(mesh.GetFaceVertexCountsAttr(), path)
    raw_indices = _read_default(mesh.GetFaceVertexIndicesAttr(), path)
    points = np.asarray(raw_points if raw_points is not None else [], dtype=np.float64)
    points = points.reshape(-1, 3)
    counts = np.asarray(raw_counts if raw_counts is not None else [], dtype=np.int64)
    indices = np.asarray(raw_indices if raw_indices is not None else [], dtype=np.int64)
    if counts.size == 0 and indices.size == 0:
        return points, np.zeros((0, 3), dtype=np.int64)
    if not np.all(np.isfinite(points)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(points), axis=1))[0])
        raise GripperError(
            f"<{path}>: points[{bad}] is {points[bad].tolist()}; expected finite coordinates"
        )
    if int(counts.sum()) != len(indices):
        raise GripperError(
            f"<{path}>: faceVertexCounts sum to {int(counts.sum())} but faceVertexIndices has "
            f"{len(indices)} entries; expected equal (one index per face corner)"
        )
    if np.any(counts < 3):
        bad = int(np.flatnonzero(counts < 3)[0])
        raise GripperError(
            f"<{path}>: faceVertexCounts[{bad}] is {int(counts[bad])}; expected >= 3 "
            "(a face needs at least 3 corners)"
        )
    if indices.size and (indices.min() < 0 or indices.max() >= len(points)):
        bad = int(np.flatnonzero((indices < 0) | (indices >= len(points)))[0])
        raise GripperError(
            f"<{path}>: faceVertexIndices[{bad}] is {int(indices[bad])}; expected 0 to "
            f"{len(points) - 1} (the mesh has {len(points)} points)"
        )
    keep = np.ones(len(counts), dtype=bool)
    holes = mesh.GetHoleIndicesAttr().Get()
    if holes is not None and len(holes):
        holes = np.asarray(holes, dtype=np.int64)
        holes = holes[(holes >= 0) & (holes < len(counts))]
        keep[holes] = False
    triangles = compute_fan_triangles(counts, indices)
    if not keep.all():
        triangles = triangles[np.repeat(keep, counts - 2)]
    if mesh.GetOrientationAttr().Get() == UsdGeom.Tokens.leftHanded:
        triangles = triangles[:, ::-1]
    return points, triangles


def _read_default(attr: Usd.Attribute, path: Sdf.Path) -> Any:
    """The attribute's default value; an error naming it when it has only time samples."""
    value = attr.Get()
    if value is None and attr.GetNumTimeSamples():
        raise GripperError(
            f"<{path}>: {attr.GetName()} is time-sampled ({attr.GetNumTimeSamples()} sample(s)) "
            "with no default value; usdgrip reads the default time: author a default value "
            f"(e.g. the sample at time {attr.GetTimeSamples()[0]:g})"
        )
    return value


def _transform_points(matrix: Mat4, points: Points) -> Points:
    return points @ matrix[:3, :3].T + matrix[:3, 3]


def read_object_mesh(prim: Usd.Prim, frame: Literal["object", "world"] = "object") -> TriangleMesh:
    """Read every ``UsdGeom.Mesh`` and primitive at or under ``prim`` into one triangle mesh.

    Polygons are fan-triangulated (hole faces dropped); Cube, Sphere, Cylinder, Capsule
    and Cone prims are tessellated (:mod:`usdgrip.usd.primitives`, its resolution);
    each prim's transform is honoured relative to ``prim``. Metres.

    Args:
        prim: the object prim (a Mesh itself or an Xform above meshes).
        frame: ``"object"`` gives coordinates in ``prim``'s local frame (its own
            xformOps, including any scale, excluded) in metres; ``"world"`` gives
            world coordinates in metres.

    Returns:
        The combined :class:`TriangleMesh`; ``source_paths`` lists the meshes read.

    Raises:
        ValueError: ``frame`` is not "object" or "world".
        GripperError: no mesh with faces (nor primitive) at or under ``prim``; a mesh
            whose counts and indices disagree, whose indices are out of range, with a
            face of fewer than 3 corners or non-finite points, a primitive dimension
            that is not > 0, a world transform that cannot place it (not finite, or
            farther than :data:`~usdgrip.frames.MAX_WORLD_OFFSET_M`) (the message
            names the prim).
    """
    if frame not in ("object", "world"):
        raise ValueError(f"frame is {frame!r}; expected 'object' or 'world'")
    if not prim or not prim.IsValid():
        raise GripperError(f"<{prim.GetPath() if prim else '?'}>: not a valid prim")
    to_frame = np.eye(4)
    if frame == "object":
        # world metres -> object-local metres: S inv(M_obj), S the metres-per-unit scale.
        mpu = float(UsdGeom.GetStageMetersPerUnit(prim.GetStage()))
        to_frame = np.diag([mpu, mpu, mpu, 1.0]) @ np.linalg.inv(compute_world_transform(prim))
    vertices: list[Points] = []
    faces: list[Triangles] = []
    sources: list[NDArray[np.int64]] = []
    paths: list[str] = []
    offset = 0
    for mesh_prim in _iter_gprims(prim, UsdGeom.Gprim):
        kind = get_primitive_kind(mesh_prim)
        if kind is not None:
            points, triangles = read_primitive_mesh(mesh_prim, kind)
        elif mesh_prim.IsA(UsdGeom.Mesh):
            points, triangles = _read_one_mesh(mesh_prim)
        else:
            continue  # curves, points, planes: no surface to grasp
        if len(triangles) == 0:
            continue
        world = compute_world_transform(mesh_prim)
        problem = get_world_transform_problem(mesh_prim, world)
        if problem is not None:
            raise GripperError(problem)
        matrix = to_frame @ world
        if np.linalg.det(matrix[:3, :3]) < 0:
            triangles = triangles[:, ::-1]
        vertices.append(_transform_points(matrix, points))
        faces.append(triangles + offset)
        sources.append(np.full(len(triangles), len(paths), dtype=np.int64))
        paths.append(str(mesh_prim.GetPath()))
        offset += len(points)
    if not faces:
        raise GripperError(
            f"<{prim.GetPath()}>: no UsdGeom.Mesh with faces at or under this prim (guide-purpose "
            "and inactive prims are skipped); expected the object's surface as Mesh prims "
            "(or Cube, Sphere, Cylinder, Capsule, Cone)"
        )
    return TriangleMesh(
        vertices=np.concatenate(vertices),
        faces=np.concatenate(faces),
        source_paths=tuple(paths),
        face_source=np.concatenate(sources),
    )


def _edge_problems(faces: Triangles) -> tuple[int, int, int]:
    """Counts of (boundary, over-shared, same-direction) undirected edges of a triangle soup."""
    directed = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    directed = directed[directed[:, 0] != directed[:, 1]]
    undirected = np.sort(directed, axis=1)
    # One int64 key per undirected edge (faster than unique rows).
    keys = undirected[:, 0] * (int(faces.max()) + 1) + undirected[:, 1]
    unique, inverse, uses = np.unique(keys, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    # Consistent winding: an interior edge is walked once in each direction.
    forward = (directed[:, 0] < directed[:, 1]).astype(np.int64)
    forward_uses = np.bincount(inverse, weights=forward, minlength=len(unique))
    boundary = int(np.count_nonzero(uses == 1))
    over = int(np.count_nonzero(uses > 2))
    flipped = int(np.count_nonzero((uses == 2) & (forward_uses != 1)))
    return boundary, over, flipped


def _merge_coincident(mesh: TriangleMesh, tolerance: float) -> Triangles:
    """Re-index faces so vertices closer than ``tolerance`` (on a grid) share one index."""
    keys = np.round(mesh.vertices / tolerance).astype(np.int64)
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    return inverse.reshape(-1)[mesh.faces]


def check_manifold(mesh: TriangleMesh, tolerance: float = 1e-9) -> list[str]:
    """Check that ``mesh`` bounds solids: closed, edge-manifold, consistently wound.

    An edge must be used by exactly two triangles, once in each direction. The
    check is run on the authored topology (point indices) and, if that fails,
    again after merging coincident points (within ``tolerance`` metres), so
    shells that touch (a tote built from boxes) and meshes split at UV seams
    both pass. Problems are reported for the merged topology.

    Args:
        mesh: the mesh to check.
        tolerance: distance in metres below which points count as coincident.

    Returns:
        One message per kind of problem, naming the mesh prims; empty when fine.
    """
    faces = np.asarray(mesh.faces, dtype=np.int64)
    if len(faces) == 0:
        return [f"{_names(mesh)}: no triangles"]
    if _edge_problems(faces) == (0, 0, 0):
        return []
    merged = _merge_coincident(mesh, tolerance)
    boundary, over, flipped = _edge_problems(merged)
    names = _names(mesh)
    problems: list[str] = []
    if boundary:
        problems.append(
            f"{names}: not watertight: {boundary} boundary edge(s) used by only one triangle; "
            "expected a closed surface (close the holes or add the missing faces)"
        )
    if over:
        problems.append(
            f"{names}: not manifold: {over} edge(s) shared by more than two triangles; "
            "expected each edge to join exactly two faces"
        )
    if flipped:
        problems.append(
            f"{names}: inconsistent winding: {flipped} edge(s) walked in the same direction by "
            "both faces; expected all faces wound counter-clockwise seen from outside"
        )
    return problems


def _names(mesh: TriangleMesh) -> str:
    return ", ".join(f"<{p}>" for p in mesh.source_paths) or "<mesh>"


# --- collision shapes -----------------------------------------------------------

_AXES = {"X": 0, "Y": 1, "Z": 2}


def _collision_enabled(prim: Usd.Prim) -> bool:
    if not prim.HasAPI(UsdPhysics.CollisionAPI):
        return False
    enabled = UsdPhysics.CollisionAPI(prim).GetCollisionEnabledAttr().Get()
    return enabled is None or bool(enabled)


def _shape_kind(prim: Usd.Prim) -> str | None:
    if prim.IsA(UsdGeom.Mesh):
        return "mesh"
    return get_primitive_kind(prim)


def _is_uniform(values: NDArray[np.float64]) -> bool:
    return float(np.ptp(values)) <= UNIFORM_SCALE_TOLERANCE * max(float(np.max(values)), 1e-300)


def _read_primitive(prim: Usd.Prim, kind: str, world: Mat4) -> SceneShape:
    rigid = compute_rigid_part(world)
    scale = np.linalg.norm(world[:3, :3], axis=0)  # per local axis, metres per unit
    path = str(prim.GetPath())
    params = read_primitive_params(prim, kind)
    if kind == "box":
        size = np.asarray(params["size"], dtype=np.float64) * scale
        return SceneShape(path, "box", {"size": tuple(size.tolist())}, rigid)
    if kind == "sphere":
        if _is_uniform(scale):
            return SceneShape(path, "sphere", {"radius": params["radius"] * float(scale[0])}, rigid)
    elif kind in ("cylinder", "capsule"):
        radius, height, axis_name = params["radius"], params["height"], params["axis"]
        axis = _AXES[axis_name]
        radial = np.delete(scale, axis)
        if kind == "cylinder" and _is_uniform(radial):
            scaled = {"radius": radius * float(radial[0]), "height": height * float(scale[axis])}
            return SceneShape(path, kind, {**scaled, "axis": axis_name}, rigid)
        if kind == "capsule" and _is_uniform(scale):
            scaled = {"radius": radius * float(scale[0]), "height": height * float(scale[0])}
            return SceneShape(path, kind, {**scaled, "axis": axis_name}, rigid)
    # A cone, or a non-uniform scale fcl has no shape for: the same triangles the object
    # mesh reader uses.
    points, triangles = tessellate_primitive(kind, params)
    local = np.linalg.inv(rigid) @ world
    if np.linalg.det(local[:3, :3]) < 0:
        triangles = triangles[:, ::-1]
    mesh = TriangleMesh(_transform_points(local, points), triangles, (path,))
    return SceneShape(path, "mesh", {"tessellated_from": kind}, rigid, mesh)


def read_collision_shapes(
    stage_or_prim: Usd.Stage | Usd.Prim,
    *,
    prefer_collision: bool = True,
    xform_cache: UsdGeom.XformCache | None = None,
) -> list[SceneShape]:
    """Read the collision obstacles of a stage (or of the subtree under a prim).

    Rule: when ``prefer_collision`` is true and any Mesh/Cube/Sphere/Cylinder/
    Capsule/Cone in scope has ``UsdPhysics.CollisionAPI`` applied, only those prims
    whose ``physics:collisionEnabled`` is not false are obstacles, as a physics
    engine would see them; otherwise every such prim is. Guide-purpose, inactive and unloaded prims
    are skipped; meshes with no faces are skipped.

    Primitives keep their analytic form (sizes from the authored attributes and
    the world scale) unless fcl has no such shape (a Cone) or a non-uniform scale makes
    that impossible (a sphere or capsule scaled unevenly, a cylinder scaled unevenly
    across its axis); then they are tessellated (:mod:`usdgrip.usd.primitives`) into
    ``kind == "mesh"`` with ``params["tessellated_from"]`` naming the primitive.

    Args:
        stage_or_prim: a stage (its pseudo-root is the scope) or a prim.
        prefer_collision: apply the CollisionAPI rule above; False reads every
            shape in scope.
        xform_cache: shared by reads of one unchanged stage (a validation run's).

    Returns:
        Shapes in traversal order, poses rigid in world metres.

    Raises:
        GripperError: a mesh with inconsistent topology (see :func:`read_object_mesh`), a
            primitive dimension that is not > 0, a world transform that cannot place a
            shape (:func:`~usdgrip.usd.stage.get_world_transform_problem`).
    """
    root = stage_or_prim.GetPseudoRoot() if isinstance(stage_or_prim, Usd.Stage) else stage_or_prim
    candidates = [
        (prim, kind)
        for prim in _iter_gprims(root, UsdGeom.Gprim)
        if (kind := _shape_kind(prim)) is not None
    ]
    if prefer_collision and any(prim.HasAPI(UsdPhysics.CollisionAPI) for prim, _ in candidates):
        candidates = [(prim, kind) for prim, kind in candidates if _collision_enabled(prim)]
    shapes = [read_collision_shape(prim, kind, xform_cache) for prim, kind in candidates]
    return [shape for shape in shapes if shape is not None]


def read_axis_aligned_box(
    prim: Usd.Prim, xform_cache: UsdGeom.XformCache | None = None
) -> SceneShape | None:
    """:func:`read_collision_shape` of a Cube placed along the world axes, without numpy.

    The commonest shape (a prop or table blocked out in any unit) when its world transform
    is a translation and positive scales along the world axes: the same floats the general
    path gives (size times the world axis scales, a rigid pose that is the translation).
    ``None`` for anything else (another prim type, a rotation, a mirror, a value or transform
    the general path refuses): that path then reads it, or says why not.
    """
    if get_primitive_kind(prim) != "box":
        return None
    try:
        size = read_primitive_params(prim, "box")["size"]
    except GripperError:
        return None  # the general path says why (after the transform's own problems)
    cache = UsdGeom.XformCache(Usd.TimeCode.Default()) if xform_cache is None else xform_cache
    # Gf rows are the local axes, the last one the translation (compute_world_transform's
    # transpose, before its metres-per-unit scaling); through the buffer, as one list.
    rows = memoryview(cache.GetLocalToWorldTransform(prim)).tolist()
    (a, b, c, _), (d, e, f, _), (g, h, i, _), (x, y, z, _) = rows
    mpu = get_meters_per_unit(prim.GetStage())
    if mpu != 1.0:
        a, e, i, x, y, z = a * mpu, e * mpu, i * mpu, x * mpu, y * mpu, z * mpu
    if not (b == c == d == f == g == h == 0.0 and a > 0 and e > 0 and i > 0):
        return None  # rotated, sheared or mirrored: compute_rigid_part's SVD decides
    if not (
        math.isfinite(a + e + i + x + y + z) and max(abs(x), abs(y), abs(z)) <= MAX_WORLD_OFFSET_M
    ):
        return None  # get_world_transform_problem's refusal
    # _read_primitive's per-axis scale (a column norm: sqrt of the one non-zero square).
    scale = (math.sqrt(a * a), math.sqrt(e * e), math.sqrt(i * i))
    pose = np.array([[1.0, 0.0, 0.0, x], [0.0, 1.0, 0.0, y], [0.0, 0.0, 1.0, z], [0, 0, 0, 1.0]])
    box = tuple(v * k for v, k in zip(size, scale, strict=True))
    return SceneShape(str(prim.GetPath()), "box", {"size": box}, pose)


def read_collision_shape(
    prim: Usd.Prim, kind: str | None = None, xform_cache: UsdGeom.XformCache | None = None
) -> SceneShape | None:
    """One Mesh/Cube/Sphere/Cylinder/Capsule prim as a :class:`SceneShape` (world metres).

    ``kind`` is the prim's shape kind when the caller knows it (``xform_cache``: a shared
    transform cache). ``None`` for another prim type or a mesh without faces; see
    :func:`read_collision_shapes` for the rules.

    Raises:
        GripperError: a mesh with inconsistent topology (see :func:`read_object_mesh`), a
            world transform that cannot place it
            (:func:`~usdgrip.usd.stage.get_world_transform_problem`).
    """
    kind = _shape_kind(prim) if kind is None else kind
    if kind is None:
        return None
    if kind == "box" and (box := read_axis_aligned_box(prim, xform_cache)) is not None:
        return box
    world = compute_world_transform(prim, xform_cache=xform_cache)
    problem = get_world_transform_problem(prim, world)
    if problem is not None:
        raise GripperError(problem)
    if kind != "mesh":
        return _read_primitive(prim, kind, world)
    points, triangles = _read_one_mesh(prim)
    if len(triangles) == 0:
        return None
    rigid = compute_rigid_part(world)
    local = np.linalg.inv(rigid) @ world
    if np.linalg.det(local[:3, :3]) < 0:
        triangles = triangles[:, ::-1]
    path = str(prim.GetPath())
    mesh = TriangleMesh(_transform_points(local, points), triangles, (path,))
    return SceneShape(path, "mesh", {}, rigid, mesh)


def compute_shape_mesh(shape: SceneShape) -> TriangleMesh:
    """Triangles of any :class:`SceneShape` in its own frame (primitives tessellated)."""
    if shape.mesh is not None:
        return shape.mesh
    points, triangles = tessellate_primitive(shape.kind, shape.params)
    return TriangleMesh(points, triangles, (shape.path,))


def read_up_axis(stage: Usd.Stage) -> NDArray[np.float64] | None:
    """World up (3,) unit vector from the stage's *authored* ``upAxis``, else ``None``.

    With nothing authored ``UsdGeom.GetStageUpAxis`` returns the fallback "Y",
    which says nothing about the asset, so it is not used.

    Raises:
        GripperError: an authored value other than "Y" or "Z"
            (:func:`usdgrip.usd.stage.read_stage_up_axis`).
    """
    up, authored = read_stage_up_vector(stage)
    return up if authored else None
