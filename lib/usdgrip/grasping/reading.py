"""The planner's read step: the object, gripper sites, gripper collision models and the scene.

Each reader takes an open stage when the caller has one (see :class:`StageSource`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from usdgrip.contracts import GripperRef
from usdgrip.errors import GripperError
from usdgrip.frames import compute_rigid_part
from usdgrip.grasp_line_geometry import GraspLine
from usdgrip.grasping.proposals import ObjectData

#: Largest object extent planned for, metres: a gripper opens at most 2 m, and a mesh that
#: spans more (1e30 from a unit mistake) overflows the integer vertex grids of the mesh checks.
MAX_OBJECT_SPAN_M = 1000.0


class StageSource:
    """The stages of one planning run: each USD file is opened once, on first use.

    Stages the caller has open already (the CLI, the usdview dialog) are used as
    they are, so no file is opened (and no USD warning printed) twice.
    """

    def __init__(self, stages: Mapping[str | os.PathLike[str], Any] | None = None) -> None:
        """``stages``: already opened ``Usd.Stage`` objects keyed by the path the request names."""
        self._stages = {os.fspath(path): stage for path, stage in (stages or {}).items()}

    def open(self, path: str | os.PathLike[str]) -> Any:
        """The stage of ``path`` (:func:`usdgrip.usd.stage.open_stage` on first use).

        Raises:
            StageOpenError: as ``open_stage``.
        """
        key = os.fspath(path)
        stage = self._stages.get(key)
        if stage is None:
            from usdgrip.usd.stage import open_stage

            stage = self._stages[key] = open_stage(path)
        return stage


# --- reading ---------------------------------------------------------------------------------


def read_object(
    asset_path: str | Path,
    prim_path: str,
    *,
    need_mesh: bool,
    check_closed: bool,
    stages: StageSource | None = None,
) -> ObjectData:
    """Read the object prim: frame M, its surface mesh in M, its slots and grasp lines.

    Grasp vector lines (:func:`usdgrip.usd.grasp_lines.find_grasp_lines`) belong to the
    object when the line or its object (rigid body) is at or under ``prim_path``; lines
    without two distinct finite points are skipped with a note.

    Args:
        asset_path: USD file.
        prim_path: object prim.
        need_mesh: raise when there is no mesh (instead of noting it).
        check_closed: raise when the mesh is not closed and manifold.
        stages: where the file's stage comes from (default: opened here).

    Raises:
        GripperError: unreadable file, missing prim, no mesh (``need_mesh``),
            a mesh that does not bound a solid (``check_closed``), malformed slots,
            grasp lines on a stage whose metersPerUnit is unusable.
    """
    from usdgrip.usd.geometry import check_manifold, read_object_mesh, read_up_axis
    from usdgrip.usd.grasp_lines import find_grasp_lines
    from usdgrip.usd.slots import read_gripper_slots
    from usdgrip.usd.stage import compute_world_transform, get_prim

    stage = (stages or StageSource()).open(asset_path)
    prim = get_prim(stage, prim_path)
    frame = compute_rigid_part(compute_world_transform(prim))
    notes: list[str] = []
    vertices = faces = None
    mesh_paths: tuple[str, ...] = ()
    try:
        mesh = read_object_mesh(prim, frame="world")
    except GripperError as exc:
        if need_mesh:
            raise GripperError(f"{asset_path}: {exc}") from None
        notes.append(f"object has no mesh: {exc}")
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            span = float(np.max(np.ptp(mesh.vertices, axis=0))) if len(mesh.vertices) else 0.0
        if not span <= MAX_OBJECT_SPAN_M:  # NaN too
            raise GripperError(
                f"{asset_path}: the object mesh ({', '.join(f'<{p}>' for p in mesh.source_paths)})"
                f" spans {span:g} m; expected an object under {MAX_OBJECT_SPAN_M:g} m (planning "
                "works in metres: check the stage's metersPerUnit and the mesh's scale)"
            )
        corners = mesh.vertices[np.asarray(mesh.faces, dtype=np.int64)]
        with np.errstate(over="ignore", invalid="ignore"):
            doubled_areas = np.linalg.norm(
                np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1
            )
        if not np.any(doubled_areas > 0):
            raise GripperError(
                f"{asset_path}: every triangle of the object mesh "
                f"({', '.join(f'<{p}>' for p in mesh.source_paths)}) has zero area "
                f"({len(corners)} triangle(s), points on one line or coincident); expected a "
                "mesh with a surface"
            )
        problems = check_manifold(mesh)
        if problems and check_closed:
            raise GripperError(
                f"{asset_path}: the object mesh does not bound a solid (antipodal grasps and "
                f"inside tests need one): {'; '.join(problems)}"
            )
        notes.extend(f"object mesh: {p}" for p in problems)
        inverse = np.linalg.inv(frame)
        vertices = mesh.vertices @ inverse[:3, :3].T + inverse[:3, 3]
        faces = np.asarray(mesh.faces, dtype=np.int64)
        mesh_paths = mesh.source_paths
    slots = tuple(read_gripper_slots(prim))
    up = read_up_axis(stage)
    if up is not None:
        up = frame[:3, :3].T @ up
    try:
        found = find_grasp_lines(stage)
    except GripperError as exc:
        raise GripperError(f"{asset_path}: {exc}") from None
    inverse = np.linalg.inv(frame)
    lines: list[tuple[str, np.ndarray, np.ndarray]] = []
    for line in select_object_lines(found, str(prim.GetPath())):
        if not line.is_usable:
            notes.append(f"grasp line <{line.path}> skipped: not two distinct finite points")
            continue
        p0, p1 = (inverse[:3, :3] @ p + inverse[:3, 3] for p in line.segment)
        lines.append((line.name, p0, p1))
    return ObjectData(
        prim_path=str(prim.GetPath()),
        world_frame=frame,
        vertices=vertices,
        faces=faces,
        mesh_paths=mesh_paths,
        slots=slots,
        notes=tuple(notes),
        up=up,
        grasp_lines=tuple(lines),
    )


def read_gripper(gripper: GripperRef, stages: StageSource | None = None):
    """Read the gripper asset's site (a :class:`~usdgrip.site_records.GripperSite`).

    ``stages``: where the asset's stage comes from (default: opened here).

    Raises:
        GripperError: unreadable file, missing prim, or the prim is not a gripper
            site (the message lists the sites the file has).
    """
    from usdgrip.usd.discovery import compute_site_markers, iter_site_prims
    from usdgrip.usd.sites import read_gripper_site
    from usdgrip.usd.stage import get_prim

    stage = (stages or StageSource()).open(gripper.asset_path)
    prim = get_prim(stage, gripper.prim_path)
    markers = compute_site_markers(prim)
    if not markers:
        sites = ", ".join(f"<{p.GetPath()}>" for p, _ in iter_site_prims(stage)) or "none"
        raise GripperError(
            f"{gripper.asset_path}: <{gripper.prim_path}> is not a gripper site (no "
            f"GripperSiteAPI, socketType, maxOpening or axis curves); sites in this file: {sites}"
        )
    return read_gripper_site(prim, markers)


# --- collision -------------------------------------------------------------------------------


def read_scene(scene: Any, stages: StageSource | None = None):
    """A :class:`~usdgrip.grasping.collision.CollisionScene` from ``None``, a scene or a USD path.

    Raises:
        GripperError: the scene file cannot be opened or read.
        TypeError: ``scene`` is of another type.
    """
    from usdgrip.grasping.collision import CollisionScene

    if scene is None:
        return CollisionScene()
    if isinstance(scene, CollisionScene):
        return scene
    if isinstance(scene, str | Path):
        return CollisionScene.from_usd((stages or StageSource()).open(scene))
    raise TypeError(
        f"scene is {type(scene).__name__}; expected None, a CollisionScene or a USD file path"
    )


def select_object_lines(lines: Sequence[GraspLine], prim_path: str) -> list[GraspLine]:
    """The grasp lines of the object ``prim_path``: the line or its object is at or under it."""
    return [
        line
        for line in lines
        if _is_at_or_under(line.path, prim_path) or _is_at_or_under(line.object_path, prim_path)
    ]


def _is_at_or_under(path: str, root: str) -> bool:
    """True when prim path ``path`` is ``root`` or a descendant of it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


#: Gripper collision models (see :func:`read_gripper_model`).
GRIPPER_MODELS = ("auto", "proxy", "geometry")


def read_gripper_model(
    gripper: GripperRef, site, mode: str = "auto", stages: StageSource | None = None
):
    """The gripper's collision model (:class:`usdgrip.grasping.collision.GripperCollisionModel`).

    The gripper geometry is everything under the site's top-level ancestor
    (``/Gripper`` for ``/Gripper/tcp``); a prim whose name contains ``finger``
    is a finger.

    - ``auto``: the gripper's *collision* prims (``UsdPhysics.CollisionAPI``
      applied) when it has any, else the proxy. Render meshes are not used:
      they are often detailed (slow in the retreat check's distance queries)
      and may not be what the physics engine collides.
    - ``proxy``: :meth:`GripperCollisionModel.proxy` (a palm and two finger
      boxes from the max opening and grip pad width).
    - ``geometry``: every Mesh/Cube/Sphere/Cylinder/Capsule under the root,
      collision prims or not (falls back to the proxy when there is none).

    Raises:
        ValueError: an unknown ``mode``.
    """
    from usdgrip.grasping.collision import GripperCollisionModel
    from usdgrip.usd.geometry import read_collision_shapes
    from usdgrip.usd.stage import get_prim

    if mode not in GRIPPER_MODELS:
        raise ValueError(f"gripper model {mode!r}; expected one of {', '.join(GRIPPER_MODELS)}")
    if mode == "proxy":
        return GripperCollisionModel.from_site(site)
    stage = (stages or StageSource()).open(gripper.asset_path)
    root = get_prim(stage, "/" + gripper.prim_path.strip("/").split("/")[0])
    if mode == "auto":
        prefix = str(root.GetPath()) + "/"
        marked = any(
            "PhysicsCollisionAPI" in prim.GetAppliedSchemas()
            for prim in stage.Traverse()
            if str(prim.GetPath()).startswith(prefix) or prim == root
        )
        if not marked:
            return GripperCollisionModel.from_site(site)
    shapes = read_collision_shapes(root)
    return GripperCollisionModel.from_site(site, shapes or None)
