"""The object half of the input reader: frame M, mesh, manifold verdict, slots, lines, physics.

See :mod:`usdgrip.grasping.inputs` (:func:`~usdgrip.grasping.inputs.read_grasp_inputs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from usdgrip.contracts import GeometryRef
from usdgrip.errors import GripperError
from usdgrip.frames import Mat4
from usdgrip.grasp_line_geometry import GraspLine
from usdgrip.grasping.provenance import Note
from usdgrip.grasping.stage_source import StageSource

#: Largest object extent planned for, metres: a gripper opens at most 2 m, and a mesh that
#: spans more (1e30 from a unit mistake) overflows the integer vertex grids of the mesh checks.
MAX_OBJECT_SPAN_M = 1000.0
#: Smallest object extent planned for, metres (0.1 mm, a grain of sand): smaller is a unit or
#: scale mistake (a box scaled by 1e-9), and the mesh checks and the physics merge points
#: closer than 1e-9 m, so such a mesh loses its shape.
MIN_OBJECT_SPAN_M = 1e-4
#: Note codes of a grasp line the reader could not use.
LINE_UNUSABLE = "line_unusable"


class ListedLine(NamedTuple):
    """One grasp vector line of the object as listed on the stage, usable or not."""

    name: str
    path: str
    usable: bool
    """Two distinct finite points (else GP.002 fails it and no backend can use it)."""


class ObjectLine(NamedTuple):
    """One usable grasp vector line of the object, in frame M."""

    name: str
    p0: NDArray[np.float64]
    """(3,) metres in M."""
    p1: NDArray[np.float64]
    path: str
    """Prim path of the curve."""


@dataclass(frozen=True, eq=False)
class ObjectInputs:
    """What the planner and the physics need of the object, read once (metres, frame M)."""

    geometry: GeometryRef
    prim_path: str
    world_frame: Mat4
    """Frame M: the object prim's world transform with scale removed (4, 4), a mirror
    moved onto its local X axis (:func:`usdgrip.usd.stage.compute_object_frame`)."""
    vertices: NDArray[np.float64] | None
    """(V, 3) surface vertices in M, or ``None`` without a mesh (see ``mesh_error``)."""
    faces: NDArray[np.int64] | None
    mesh_paths: tuple[str, ...]
    mesh_error: str | None
    """Why there is no mesh (the mesh reader's message), else ``None``."""
    mesh_problems: tuple[str, ...]
    """The manifold verdict: why the mesh does not bound a solid; ``()`` when it does."""
    slots: tuple[Any, ...]
    """GripperSlots of the object prim (world snapshots)."""
    grasp_lines: tuple[ObjectLine, ...]
    """The object's usable grasp vector lines (the line or its rigid body at or under it)."""
    listed_lines: tuple[ListedLine, ...]
    """Every grasp vector line of the object in stage order, usable or not."""
    up: NDArray[np.float64] | None
    """(3,) the stage's *authored* up axis in M, else ``None`` (stands for the support normal
    in the approach ranking)."""
    lift_up: NDArray[np.float64]
    """(3,) the stage's up axis in M, USD's fallback ``Y`` when none is authored (gravity and
    the lift follow it; the table lies across it)."""
    up_authored: bool
    physical: Any
    """:class:`usdgrip.usd.physics.PhysicsProperties` as authored, or ``None`` when unreadable."""
    physical_error: str | None
    """Why the authored mass, density or friction is unusable (physics refuses then)."""
    notes: tuple[Note, ...]
    """What a backend or the physics cannot use (skipped lines, mesh problems, colliders that
    disagree on friction), rendered under ``object FILE:/Prim``."""

    @property
    def has_mesh(self) -> bool:
        """Whether the object has a triangle surface."""
        return self.vertices is not None

    @property
    def label(self) -> str:
        """``object FILE:/Prim``, the context of its warnings."""
        return f"object {self.geometry}"

    def lowest_along(self, up: NDArray[np.float64]) -> float:
        """The lowest point of the mesh along ``up`` (metres in M; ``0.0`` without a mesh)."""
        if self.vertices is None:
            return 0.0
        return float(np.min(self.vertices @ np.asarray(up, dtype=np.float64)))


def read_object(
    asset_path: str | Path,
    prim_path: str,
    *,
    need_mesh: bool = False,
    check_closed: bool = False,
    stages: StageSource | None = None,
) -> ObjectInputs:
    """Read the object prim: frame M, its surface mesh in M, slots, grasp lines, up, physics.

    Grasp vector lines belong to the object when the line or its object (rigid body) is at
    or under ``prim_path``; lines without two distinct finite points are skipped with a note.

    Args:
        asset_path: USD file.
        prim_path: object prim.
        need_mesh: raise when there is no mesh (instead of recording it).
        check_closed: raise when the mesh does not bound a solid.
        stages: where the file's stage comes from (default: opened here).

    Raises:
        GripperError: unreadable file, missing prim, an unusable object frame
            (:func:`usdgrip.usd.stage.compute_object_frame`: metersPerUnit, a non-finite,
            flattening or too distant transform), a mesh of zero area or spanning less
            than :data:`MIN_OBJECT_SPAN_M` or more than :data:`MAX_OBJECT_SPAN_M`, malformed
            slots, grasp lines on a stage whose metersPerUnit is unusable; no mesh
            (``need_mesh``), a mesh that does not bound a solid (``check_closed``).
    """
    from usdgrip.usd.geometry import check_manifold, read_object_mesh
    from usdgrip.usd.physics import read_physics_properties, read_stage_up
    from usdgrip.usd.slots import read_gripper_slots
    from usdgrip.usd.stage import compute_object_frame, get_prim

    stages = stages or StageSource()
    stage = stages.open(asset_path)
    prim = get_prim(stage, prim_path)
    path = str(prim.GetPath())
    frame = compute_object_frame(prim)
    inverse = np.linalg.inv(frame)
    notes: list[Note] = []
    vertices = faces = None
    mesh_paths: tuple[str, ...] = ()
    mesh_error = None
    problems: list[str] = []
    try:
        mesh = read_object_mesh(prim, frame="world")
    except GripperError as exc:
        mesh_error = str(exc)
        notes.append(Note("no_mesh", path, f"object has no mesh: {exc}"))
    else:
        _check_mesh_extent(asset_path, mesh)
        problems = check_manifold(mesh)
        notes.extend(Note("mesh_not_solid", path, f"object mesh: {p}") for p in problems)
        vertices = mesh.vertices @ inverse[:3, :3].T + inverse[:3, 3]
        faces = np.asarray(mesh.faces, dtype=np.int64)
        mesh_paths = mesh.source_paths
    if need_mesh and mesh_error is not None:
        raise GripperError(f"{asset_path}: {mesh_error}")
    if check_closed and problems:
        raise GripperError(f"{asset_path}: {describe_unsolid_mesh(problems)}")
    slots = tuple(read_gripper_slots(prim))
    up_world, authored = read_stage_up(stage)
    lift_up = frame[:3, :3].T @ up_world
    lines: list[ObjectLine] = []
    listed = select_object_lines(stages.grasp_lines(asset_path), path)
    for line in listed:
        if not line.is_usable:
            notes.append(
                Note(
                    LINE_UNUSABLE,
                    line.path,
                    "not two distinct finite points",
                    (f"grasp line <{line.path}> skipped",),
                )
            )
            continue
        p0, p1 = (inverse[:3, :3] @ p + inverse[:3, 3] for p in line.segment)
        lines.append(ObjectLine(line.name, p0, p1, line.path))
    physical = physical_error = None
    try:
        physical = read_physics_properties(prim)
    except GripperError as exc:
        physical_error = f"{asset_path}: {exc}"
    else:
        notes.extend(Note("friction_differs", path, text) for text in physical.notes)
    return ObjectInputs(
        geometry=GeometryRef(asset_path=str(asset_path), prim_path=prim_path),
        prim_path=path,
        world_frame=frame,
        vertices=vertices,
        faces=faces,
        mesh_paths=mesh_paths,
        mesh_error=mesh_error,
        mesh_problems=tuple(problems),
        slots=slots,
        grasp_lines=tuple(lines),
        listed_lines=tuple(ListedLine(line.name, line.path, line.is_usable) for line in listed),
        up=lift_up if authored else None,
        lift_up=lift_up,
        up_authored=authored,
        physical=physical,
        physical_error=physical_error,
        notes=tuple(notes),
    )


def describe_unsolid_mesh(problems: Sequence[str]) -> str:
    """The refusal of a mesh that does not bound a solid (after ``FILE: ``)."""
    return (
        "the object mesh does not bound a solid (antipodal grasps and inside tests need one): "
        + "; ".join(problems)
    )


def _check_mesh_extent(asset_path: str | Path, mesh: Any) -> None:
    """Refuse a mesh too wide to plan in metres, or one without any area."""
    names = ", ".join(f"<{p}>" for p in mesh.source_paths)
    with np.errstate(over="ignore", invalid="ignore"):
        span = float(np.max(np.ptp(mesh.vertices, axis=0))) if len(mesh.vertices) else 0.0
    if not MIN_OBJECT_SPAN_M <= span <= MAX_OBJECT_SPAN_M:  # NaN too
        expected = (
            f"at least {MIN_OBJECT_SPAN_M:g} m wide"
            if span < MIN_OBJECT_SPAN_M
            else f"under {MAX_OBJECT_SPAN_M:g} m"
        )
        raise GripperError(
            f"{asset_path}: the object mesh ({names}) spans {span:g} m; expected an object "
            f"{expected} (planning works in metres: check the stage's metersPerUnit and the "
            "object's scale)"
        )
    corners = mesh.vertices[np.asarray(mesh.faces, dtype=np.int64)]
    with np.errstate(over="ignore", invalid="ignore"):
        doubled_areas = np.linalg.norm(
            np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1
        )
    if not np.any(doubled_areas > 0):
        raise GripperError(
            f"{asset_path}: every triangle of the object mesh ({names}) has zero area "
            f"({len(corners)} triangle(s), points on one line or coincident); expected a "
            "mesh with a surface"
        )


def select_object_lines(lines: Sequence[GraspLine], prim_path: str) -> list[GraspLine]:
    """The grasp lines of the object ``prim_path``: the line or its object is at or under it."""
    return [
        line
        for line in lines
        if is_at_or_under(line.path, prim_path) or is_at_or_under(line.object_path, prim_path)
    ]


def is_at_or_under(path: str, root: str) -> bool:
    """True when prim path ``path`` is ``root`` or a descendant of it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def find_line_object(asset_path: str, stages: Mapping[str, Any] | StageSource | None = None) -> str:
    """The object prim the grasp lines of ``asset_path`` belong to (the default object).

    Raises:
        GripperError: unreadable file, no grasp line on the stage, or lines of several
            objects (the message lists them: choose one).
    """
    source = stages if isinstance(stages, StageSource) else StageSource(stages)
    objects = list(dict.fromkeys(line.object_path for line in source.grasp_lines(asset_path)))
    if not objects:
        raise GripperError(f"{asset_path}: no grasp vector line ({NO_LINES}); nothing to prove")
    if len(objects) > 1:
        listed = ", ".join(f"<{path}>" for path in objects)
        raise GripperError(
            f"{asset_path}: the grasp lines belong to {len(objects)} objects ({listed}); "
            "choose one (--object PRIM)"
        )
    return objects[0]


#: Where grasp vector lines are looked for, for messages.
NO_LINES = (
    "a BasisCurves named grasp_identifier* under the default prim; `usdgrip info FILE` "
    "lists the lines"
)
