"""Read SimReady grasp vector lines (``grasp_identifier*``) and their objects' surfaces from USD.

USD edge of :mod:`usdgrip.grasp_line_geometry` (see ``docs/graspable-props.md``):

- :func:`scan_grasp_lines` reads the lines under the default prim plus what the
  GSP.001 trigger needs from one walk of the stage
  (:func:`usdgrip.usd.discovery.scan_stage`, the walk site discovery makes: only when
  some used layer's text mentions ``grasp_identifier``, with usdgrip's
  :data:`usdgrip.usd.stage.TRAVERSAL`, instance proxies and prims under undefined
  ``over`` s included); the validation engine passes its own walk's;
- :func:`read_object_surface` reads the triangles a line is checked against.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from pxr import Usd, UsdGeom, UsdPhysics, Vt

from usdgrip.errors import GripperError
from usdgrip.extras import describe_missing_extra
from usdgrip.grasp_line_geometry import GRASP_LINE_PREFIX, GraspLine, Points, Triangles
from usdgrip.usd.discovery import StageScan, scan_stage
from usdgrip.usd.geometry import SceneShape, compute_shape_mesh, read_collision_shapes
from usdgrip.usd.stage import (
    TRAVERSAL,
    compute_world_transform,
    get_meters_per_unit,
    get_meters_per_unit_problem,
    read_attribute_value,
)

__all__ = [
    "GraspLineScan",
    "ObjectSurface",
    "find_grasp_lines",
    "read_object_surface",
    "scan_grasp_lines",
]

_DECIMAL_POINTS = 64  # lines hold 2 points; a huge array is read as is


class GraspLineScan(NamedTuple):
    """What one walk of a stage found about grasp vector lines."""

    lines: list[GraspLine]
    """Lines under the default prim (the whole stage without one), in traversal order."""
    identifiers: list[str]
    """Every prim named ``grasp_identifier*`` anywhere on the stage (any type)."""
    has_rigid_body: bool
    """Some prim has ``PhysicsRigidBodyAPI``."""
    default_prim: str | None
    """Default prim path, or ``None`` when the stage names none (or it does not exist)."""

    @property
    def declares_graspable(self) -> bool:
        """The GSP.001 trigger: a ``grasp_identifier*`` prim and a rigid body on the stage."""
        return bool(self.identifiers) and self.has_rigid_body


def scan_grasp_lines(stage: Usd.Stage, found: StageScan | None = None) -> GraspLineScan:
    """Find the grasp vector lines of ``stage`` and whether it declares itself a graspable prop.

    Lines: ``BasisCurves`` named ``grasp_identifier*`` (layout ``curve``), and Xforms named
    so whose first child with >= 2 ``points`` holds the line (layout ``xform``, the FET005
    benchmark's), under the default prim.

    Args:
        stage: the stage.
        found: a :func:`usdgrip.usd.discovery.scan_stage` of ``stage`` made with
            ``lines=True`` (the validation engine's one walk); without it the stage is
            walked here (Python, never writing), only when some used layer's text
            mentions ``grasp_identifier``.

    Raises:
        GripperError: the stage's ``metersPerUnit`` is not finite and > 0.
    """
    default = stage.GetDefaultPrim()
    default_path = str(default.GetPath()) if default else None
    if found is None:
        found = scan_stage(stage, (), lines=True, scan="traverse")
    if not found.line_prims:
        return GraspLineScan([], [], found.has_rigid_body, default_path)
    mpu = get_meters_per_unit(stage)
    problem = get_meters_per_unit_problem(mpu)
    if problem is not None:
        raise GripperError(f"{stage.GetRootLayer().identifier}: {problem}")
    cache = UsdGeom.XformCache(Usd.TimeCode.Default())
    identifiers: list[str] = []
    lines: list[GraspLine] = []
    prefix = default.GetPath() if default else None
    for prim in found.line_prims:
        identifiers.append(str(prim.GetPath()))
        if prefix is not None and not prim.GetPath().HasPrefix(prefix):
            continue
        curve = _line_curve(prim)
        if curve is not None:
            lines.append(_read_line(prim, *curve, default, cache, mpu))
    return GraspLineScan(lines, identifiers, found.has_rigid_body, default_path)


def find_grasp_lines(stage: Usd.Stage) -> list[GraspLine]:
    """The grasp vector lines under the default prim (see :func:`scan_grasp_lines`)."""
    return scan_grasp_lines(stage).lines


def _line_curve(prim: Usd.Prim) -> tuple[Usd.Prim, str] | None:
    if prim.IsA(UsdGeom.BasisCurves):
        return prim, "curve"
    if not prim.IsA(UsdGeom.Xform):
        return None
    for child in prim.GetFilteredChildren(TRAVERSAL):
        # A child named like an identifier is a line of its own (layout "curve").
        if child.GetName().startswith(GRASP_LINE_PREFIX) or not child.IsA(UsdGeom.Curves):
            continue
        points = child.GetAttribute("points").Get()
        if points is not None and len(points) >= 2:
            return child, "xform"
    return None


def _find_object(identifier: Usd.Prim, default: Usd.Prim | None) -> tuple[Usd.Prim, str]:
    """Nearest rigid-body ancestor, else the default prim, else the line's root prim."""
    prim = identifier.GetParent()
    root = identifier
    while prim and not prim.IsPseudoRoot():
        if prim.HasAPI(UsdPhysics.RigidBodyAPI):
            return prim, "rigid-body"
        root = prim
        prim = prim.GetParent()
    if default is not None and identifier.GetPath().HasPrefix(default.GetPath()):
        return default, "default-prim"
    return root, "root"


def _read_line(
    identifier: Usd.Prim,
    curve: Usd.Prim,
    layout: str,
    default: Usd.Prim | None,
    cache: UsdGeom.XformCache,
    mpu: float,
) -> GraspLine:
    problems: dict[str, str] = {}
    points = np.zeros((0, 3))
    attr = curve.GetAttribute("points")
    if attr and attr.HasAuthoredValue():
        value, problem = read_attribute_value(attr, "vec3[]")
        if problem is not None:
            problems["points"] = problem
        elif value is not None:
            points = np.asarray(value, dtype=np.float64).reshape(-1, 3)
            if isinstance(value, Vt.Vec3fArray) and len(points) <= _DECIMAL_POINTS:
                # float32 as its shortest decimal (0.05, not 0.0500000007), as sites read floats
                points = np.array([float(str(np.float32(x))) for x in points.ravel()]).reshape(
                    -1, 3
                )
    curve_type = None
    type_attr = curve.GetAttribute("type")
    if type_attr and type_attr.HasAuthoredValue():
        value, problem = read_attribute_value(type_attr, "text")
        if problem is not None:
            problems["type"] = problem
        else:
            curve_type = str(value)
    world = compute_world_transform(curve, xform_cache=cache, meters_per_unit=mpu)
    with np.errstate(invalid="ignore", over="ignore"):
        points_world = points @ world[:3, :3].T + world[:3, 3]
    obj, source = _find_object(identifier, default)
    obj_world = compute_world_transform(obj, xform_cache=cache, meters_per_unit=mpu)
    # Object frame: the object prim's local frame in metres (its own transform excluded).
    object_transform = obj_world @ np.diag([1.0 / mpu, 1.0 / mpu, 1.0 / mpu, 1.0])
    try:
        to_object = np.linalg.inv(object_transform)
    except np.linalg.LinAlgError:
        problems["object"] = f"<{obj.GetPath()}> has a singular transform (a zero scale)"
        to_object = np.full((4, 4), np.nan)
    with np.errstate(invalid="ignore", over="ignore"):
        points_object = points_world @ to_object[:3, :3].T + to_object[:3, 3]
    return GraspLine(
        path=str(curve.GetPath()),
        name=identifier.GetName(),
        object_path=str(obj.GetPath()),
        object_source=source,
        layout=layout,
        type_name=str(curve.GetTypeName()),
        defined=curve.IsDefined(),
        points_object=points_object,
        points_world=points_world,
        object_transform=object_transform,
        curve_type=curve_type,
        problems=problems,
    )


class ObjectSurface(NamedTuple):
    """The triangles of an object's non-guide geometry in world metres."""

    vertices: Points
    faces: Triangles
    source_paths: tuple[str, ...]


def read_object_surface(
    prim: Usd.Prim, xform_cache: UsdGeom.XformCache | None = None
) -> ObjectSurface:
    """Every non-guide Mesh, Cube, Sphere, Cylinder, Capsule at or under ``prim``, world metres.

    Collision and render geometry alike (a grasp line must meet the asset, whichever
    describes it). Primitives are tessellated (needs ``trimesh``: ``usdgrip[physics]``).

    Raises:
        GripperError: no such geometry, a mesh with inconsistent topology (naming it),
            or a primitive and no ``trimesh``.
    """
    shapes = read_collision_shapes(prim, prefer_collision=False, xform_cache=xform_cache)
    return compute_object_surface(prim, shapes)


def compute_object_surface(prim: Usd.Prim, shapes: list[SceneShape]) -> ObjectSurface:
    """:func:`read_object_surface` from the shapes it reads (``read_collision_shapes``'s).

    Raises:
        GripperError: no shapes, or a primitive and no ``trimesh``.
    """
    vertices: list[Points] = []
    faces: list[Triangles] = []
    offset = 0
    for shape in shapes:
        try:
            mesh = compute_shape_mesh(shape)
        except ImportError as exc:
            needs = describe_missing_extra(exc, ("physics",))
            if needs is None:
                raise
            raise GripperError(f"<{shape.path}>: a {shape.kind} is tessellated: {needs}") from None
        local = np.asarray(mesh.vertices)
        vertices.append(local @ shape.pose[:3, :3].T + shape.pose[:3, 3])
        faces.append(np.asarray(mesh.faces) + offset)
        offset += len(local)
    if not faces:
        raise GripperError(
            f"<{prim.GetPath()}>: no Mesh, Cube, Sphere, Cylinder or Capsule with a surface at or "
            "under this prim (guide-purpose and inactive prims are skipped); a grasp line needs "
            "the object's geometry"
        )
    return ObjectSurface(
        np.concatenate(vertices), np.concatenate(faces), tuple(s.path for s in shapes)
    )
