"""Tessellate ``UsdGeom`` primitives once, so every reader sees the same triangles.

People block out tables and props with ``Cube``, ``Sphere``, ``Cylinder``, ``Capsule``
and ``Cone`` prims. The object mesh reader (:func:`usdgrip.usd.geometry.read_object_mesh`,
used by the planner, the physics and the support reader) turns them into triangles here;
the collision scene keeps Cube/Sphere/Cylinder/Capsule analytic (python-fcl has those
shapes) and tessellates only what it cannot represent (a Cone, a non-uniformly scaled
primitive) with the same function, so planning and physics collide the same geometry.

Resolution (documented in ``docs/planning.md``), all from ``trimesh.creation``, in the
prim's local units, outward-wound, closed:

- ``Cube``: a box of edge ``size`` (12 triangles, exact);
- ``Sphere``: an icosphere of ``radius``, 3 subdivisions (1,280 triangles; the vertices
  lie on the sphere, the faces at most 0.3 % of the radius inside it);
- ``Cylinder``: ``TESSELLATION_SECTIONS`` = 32 sides (128 triangles);
- ``Capsule``: 32 sides × 32 rings (``height`` is the cylindrical part, as USD defines it);
- ``Cone``: 32 sides, apex at ``+height/2`` along the axis, base at ``-height/2`` (USD's
  convention: centred on the origin).

``axis`` (X, Y or Z) is honoured; attributes are read at the default time (one authored
only as time samples is refused, as for mesh points).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pxr import Usd, UsdGeom

from usdgrip.errors import GripperError

Points = NDArray[np.float64]  # (V, 3)
Triangles = NDArray[np.int64]  # (F, 3)

#: Segments around the axis of a tessellated cylinder, capsule or cone (and rings of a capsule).
TESSELLATION_SECTIONS = 32
#: Icosphere subdivisions of a tessellated sphere (1,280 triangles).
SPHERE_SUBDIVISIONS = 3
#: Primitive kinds by schema (the collision scene's names: a Cube is a ``box``).
PRIMITIVES: dict[str, type] = {
    "box": UsdGeom.Cube,
    "sphere": UsdGeom.Sphere,
    "cylinder": UsdGeom.Cylinder,
    "capsule": UsdGeom.Capsule,
    "cone": UsdGeom.Cone,
}
_AXES = {"X": 0, "Y": 1, "Z": 2}


def get_primitive_kind(prim: Usd.Prim) -> str | None:
    """``box``, ``sphere``, ``cylinder``, ``capsule`` or ``cone`` for those prims, else ``None``."""
    for kind, schema in PRIMITIVES.items():
        if prim.IsA(schema):
            return kind
    return None


def _read_value(attr: Usd.Attribute, prim: Usd.Prim) -> Any:
    """The attribute at the default time; refuse one authored only as time samples."""
    source = attr.GetResolveInfo(Usd.TimeCode.Default()).GetSource()
    if source == Usd.ResolveInfoSourceFallback and attr.GetNumTimeSamples():
        raise GripperError(
            f"<{prim.GetPath()}>: {attr.GetName()} is time-sampled "
            f"({attr.GetNumTimeSamples()} sample(s)) with no default value; usdgrip reads the "
            "default time: author a default value "
            f"(e.g. the sample at time {attr.GetTimeSamples()[0]:g})"
        )
    return attr.Get()


def _positive(value: Any, prim: Usd.Prim, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):  # an attribute authored with another type
        number = float("nan")
    if not (math.isfinite(number) and number > 0):
        raise GripperError(f"<{prim.GetPath()}>: {name} is {value!r}; expected a finite value > 0")
    return number


def read_primitive_params(prim: Usd.Prim, kind: str) -> dict[str, Any]:
    """The authored dimensions of a primitive, in prim-local units.

    The collision scene's ``params`` before any world scale: ``size`` for a box;
    ``radius``, ``height``, ``axis`` for the others.

    Raises:
        GripperError: a dimension that is not a finite value > 0, or only time-sampled.
    """
    schema = PRIMITIVES[kind](prim)
    if kind == "box":
        size = _positive(_read_value(schema.GetSizeAttr(), prim), prim, "size")
        return {"size": (size, size, size)}
    radius = _positive(_read_value(schema.GetRadiusAttr(), prim), prim, "radius")
    if kind == "sphere":
        return {"radius": radius}
    height = _positive(_read_value(schema.GetHeightAttr(), prim), prim, "height")
    axis = _read_value(schema.GetAxisAttr(), prim)
    if axis not in _AXES:
        raise GripperError(f"<{prim.GetPath()}>: axis is {axis!r}; expected X, Y or Z")
    return {"radius": radius, "height": height, "axis": str(axis)}


_BOX_CORNERS = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
# Two triangles per face, counter-clockwise seen from outside (corner index = 4x + 2y + z).
_BOX_FACES = np.array(
    [
        [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5],  # -X, +X
        [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6],  # -Y, +Y
        [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],  # -Z, +Z
    ],
    dtype=np.int64,
)  # fmt: skip


def tessellate_primitive(kind: str, params: dict[str, Any]) -> tuple[Points, Triangles]:
    """Triangles of a primitive in its own frame (outward-wound, closed).

    At the module's resolution; ``params`` as :func:`read_primitive_params` gives them
    (or scaled to world metres). Remembered per kind and parameters (the arrays are
    read-only): a scene of a thousand equal cubes builds one trimesh, not a thousand
    (GS.009 reads every slotted object's surface).
    """
    key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items()))
    return _tessellate_once(kind, key)


@functools.lru_cache(maxsize=512)
def _tessellate_once(kind: str, key: tuple) -> tuple[Points, Triangles]:
    params = dict(key)
    if kind == "box":  # 8 corners, 12 triangles: no trimesh import (2 s) for the commonest
        points = _BOX_CORNERS * np.asarray(params["size"], dtype=np.float64)
        faces = _BOX_FACES.copy()
        points.setflags(write=False)
        faces.setflags(write=False)
        return points, faces
    import trimesh

    if kind == "sphere":
        shape = trimesh.creation.icosphere(
            subdivisions=SPHERE_SUBDIVISIONS, radius=params["radius"]
        )
    else:
        radius, height = params["radius"], params["height"]
        if kind == "cylinder":
            shape = trimesh.creation.cylinder(
                radius=radius, height=height, sections=TESSELLATION_SECTIONS
            )
        elif kind == "capsule":
            # trimesh's capsule height is the cylindrical part, as in USD.
            shape = trimesh.creation.capsule(
                height=height, radius=radius, count=[TESSELLATION_SECTIONS] * 2
            )
        elif kind == "cone":
            shape = trimesh.creation.cone(
                radius=radius, height=height, sections=TESSELLATION_SECTIONS
            )
            shape.apply_translation((0.0, 0.0, -height / 2))  # USD: centred, apex at +h/2
        else:
            raise ValueError(f"primitive kind {kind!r}; expected one of {', '.join(PRIMITIVES)}")
        axis = _AXES[params.get("axis", "Z")]
        if axis != 2:
            # Rotate trimesh's Z-aligned shape so Z maps onto the authored axis.
            perm = np.eye(3)[[(axis + 1) % 3, (axis + 2) % 3, axis]].T
            shape.vertices = shape.vertices @ perm.T
    points = np.array(shape.vertices, dtype=np.float64)
    faces = np.array(shape.faces, dtype=np.int64)
    points.setflags(write=False)
    faces.setflags(write=False)
    return points, faces


def read_primitive_mesh(prim: Usd.Prim, kind: str) -> tuple[Points, Triangles]:
    """The tessellated primitive in the prim's local units and frame.

    Raises:
        GripperError: as :func:`read_primitive_params`.
    """
    return tessellate_primitive(kind, read_primitive_params(prim, kind))
