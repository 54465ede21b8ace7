"""Read step of ``render_view``: the object's triangles, its slots, the grasps and the sites."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pxr import Sdf, Usd, UsdGeom

from usdgrip.errors import GripperError

#: Triangles drawn at most (evenly subsampled beyond that, to keep files small and fast).
MAX_TRIANGLES = 20_000
#: Grasps one picture draws at most. Reading a grasp file costs about 0.5 ms and 10 kB of
#: memory per grasp (YAML, then the contract check): 50,000 take about half a minute, and
#: more would draw an unreadable picture, so a larger file is refused before it is parsed.
MAX_RENDER_GRASPS = 50_000


@dataclass
class RenderInputs:
    """What a picture shows, read from the stage (world metres)."""

    up: str
    """The stage's up axis (``Y`` or ``Z``)."""
    prim: Usd.Prim | None
    """The object prim (the grasps' pose frame when grasps are drawn), if any."""
    all_triangles: NDArray[np.float64]
    """(F, 3, 3) every triangle of the object."""
    triangles: NDArray[np.float64]
    """(D, 3, 3) the triangles drawn (at most :data:`MAX_TRIANGLES`)."""
    slots: list[Any] = field(default_factory=list)
    """GripperSlots to draw (each passed :func:`usdgrip.sampling.check_slot`)."""
    grasp_poses: NDArray[np.float64] | None = None
    """(N, 4, 4) world poses of the grasps, ``None`` without grasps."""
    confidences: NDArray[np.float64] | None = None
    open_width: float | None = None
    sites: list[Any] = field(default_factory=list)
    """Gripper sites with a grasp frame."""
    skipped: list[str] = field(default_factory=list)
    """What was found but is not drawn, and why."""


def read_inputs(
    stage: Usd.Stage,
    prim_path: str | None,
    grasps: Any,
    show_slots: bool,
    show_sites: bool,
) -> RenderInputs:
    """Read what ``render_view`` draws (see there for the arguments and errors)."""
    from usdgrip.usd.sites import find_gripper_sites
    from usdgrip.usd.stage import read_stage_up_axis

    prim = _find_object(stage, prim_path)
    try:
        all_tris, tris = _read_mesh(prim, stage)
    except GripperError as exc:  # the mesh readers name the prim; say which file too
        raise GripperError(f"{stage.GetRootLayer().identifier}: {exc}") from None
    inputs = RenderInputs(read_stage_up_axis(stage)[0], prim, all_tris, tris)
    if show_slots:
        inputs.slots = _read_slots(stage, prim)
    if grasps is not None:
        poses, confidences, width, inputs.prim = _load_grasps(
            grasps, stage, prim, prim_given=bool(prim_path)
        )
        inputs.grasp_poses, inputs.confidences, inputs.open_width = poses, confidences, width
    sites = find_gripper_sites(stage) if show_sites else []
    inputs.skipped.extend(
        f"site <{s.path}> not drawn: it has no grasp frame (no usable forward axis: "
        "gripper_forward_axis with 2 distinct finite points)"
        for s in sites
        if s.grasp_frame is None
    )
    inputs.sites = [s for s in sites if s.grasp_frame is not None]
    if not show_slots and not len(all_tris) and grasps is None and not inputs.sites:
        inputs.skipped.extend(_describe_hidden_slots(stage, prim))  # why the picture is empty
    return inputs


def _describe_hidden_slots(stage: Usd.Stage, prim: Usd.Prim | None) -> list[str]:
    """``["the stage has N slot(s) ...; --slots draws them"]`` when slots were not asked for."""
    from usdgrip.usd.slots import iter_slot_prims, list_slot_names

    root = prim.GetPath() if prim is not None else None
    counts = [
        (p.GetPath(), len(list_slot_names(p)))
        for p in iter_slot_prims(stage)
        if root is None or p.GetPath().HasPrefix(root)
    ]
    total = sum(n for _, n in counts)
    if not total:
        return []
    where = ", ".join(f"<{path}>" for path, n in counts[:3] if n) + (
        f" and {len(counts) - 3} more" if len(counts) > 3 else ""
    )
    return [f"the stage has {total} slot(s) (on {where}); --slots draws them"]


def _find_object(stage: Usd.Stage, prim_path: str | None) -> Usd.Prim | None:
    from usdgrip.usd.stage import get_prim

    if prim_path:
        return get_prim(stage, prim_path)
    prim = stage.GetDefaultPrim()
    return prim if prim and prim.IsValid() else None


def _read_mesh(prim: Usd.Prim | None, stage: Usd.Stage) -> tuple[NDArray, NDArray]:
    """World triangles (F, 3, 3) in metres of ``prim`` (or every top-level prim)."""
    from usdgrip.usd.geometry import read_object_mesh

    roots = [prim] if prim is not None else list(stage.GetPseudoRoot().GetChildren())
    triangles = []
    for root in roots:
        if not any(p.IsA(UsdGeom.Mesh) for p in Usd.PrimRange(root)):
            continue  # an object may have slots and no mesh; a bad mesh still raises
        mesh = read_object_mesh(root, frame="world")
        triangles.append(mesh.vertices[mesh.faces])
    if not triangles:
        return np.zeros((0, 3, 3)), np.zeros((0, 3, 3))
    tris = np.concatenate(triangles)
    drawn = tris
    if len(tris) > MAX_TRIANGLES:
        drawn = tris[np.linspace(0, len(tris) - 1, MAX_TRIANGLES).astype(int)]
    return tris, drawn


def _read_slots(stage: Usd.Stage, prim: Usd.Prim | None) -> list[Any]:
    """The slots of ``prim`` and the prims under it (every slot without ``prim``).

    Raises:
        GripperError: a slot fails the sampler's checks (its real problems).
    """
    from usdgrip.sampling import check_slot
    from usdgrip.usd.slots import iter_slot_prims, read_gripper_slots

    root = prim.GetPath() if prim is not None else None
    slot_prims = [p for p in iter_slot_prims(stage) if root is None or p.GetPath().HasPrefix(root)]
    slots = [s for p in slot_prims for s in read_gripper_slots(p)]
    for slot in slots:  # the sampler's checks: the real reason a slot cannot be drawn
        problems = check_slot(slot)
        if problems:
            raise GripperError(
                f"{stage.GetRootLayer().identifier}: <{slot.prim}> slot {slot.name!r}: "
                f"{'; '.join(map(str, problems))}; the slot cannot be drawn "
                "(`usdgrip validate` reports it)"
            )
    return slots


def _load_grasps(source: Any, stage: Usd.Stage, prim: Usd.Prim | None, prim_given: bool):
    """(world poses (N, 4, 4), confidences (N,), open width, object prim) of a grasp file.

    The poses are relative to ``prim`` when the caller named it (``prim_given``), else
    to the file's ``metadata.pose_frame`` prim, which must be on the stage; a file
    without a pose frame falls back to ``prim`` (the default prim).
    """
    from usdgrip.grasping.isaac_yaml import TooManyGraspsError, read_isaac_grasp
    from usdgrip.usd.stage import compute_object_frame
    from usdgrip.views.grasp_set import compute_grasp_set_from_plan

    if isinstance(source, str | os.PathLike):
        try:
            result = read_isaac_grasp(source, max_grasps=MAX_RENDER_GRASPS)
        except TooManyGraspsError as exc:  # refused before the YAML is parsed
            raise GripperError(
                f"{exc.source}: holds about {exc.count:,} grasps ({exc.count:,} `position` "
                f"keys); render draws at most {exc.limit:,} per picture (reading more takes "
                "minutes and gigabytes): plan with a smaller --max-candidates, or draw a "
                "subset of the file"
            ) from None
    else:
        result = source
    frame_path = str(getattr(result.metadata, "pose_frame", "") or "")
    if not prim_given and frame_path:
        absolute = frame_path.startswith("/") and Sdf.Path.IsValidPathString(frame_path)
        candidate = stage.GetPrimAtPath(frame_path) if absolute else None
        if not candidate:
            raise GripperError(
                f"{stage.GetRootLayer().identifier}: the grasps are relative to "
                f"{frame_path!r} (metadata.pose_frame), which is not on this stage; pass "
                "--prim with the object the grasps were planned for"
            )
        prim = candidate
    if prim is None:
        raise GripperError(
            "the grasps name no pose frame and the stage has no default prim; "
            "pass --prim with the object the grasps were planned for"
        )
    grasps = compute_grasp_set_from_plan(result, str(prim.GetPath()))
    world = grasps.compute_world_poses(compute_object_frame(prim))  # frame M, as planned
    return world, grasps.confidences, grasps.open_width, prim
