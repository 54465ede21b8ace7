"""Read step of ``render_view``: the object's triangles, its slots, the grasps and the sites."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pxr import Sdf, Usd, UsdGeom

from usdgrip.errors import GripperError
from usdgrip.views.glyphs import DEFAULT_OPEN_WIDTH

#: Triangles drawn at most (evenly subsampled beyond that, to keep files small and fast).
MAX_TRIANGLES = 20_000
#: Grasps one picture draws at most. Reading a grasp file costs about 0.5 ms and 10 kB of
#: memory per grasp (YAML, then the contract check): 50,000 take about half a minute, and
#: more would draw an unreadable picture, so a larger file is refused before it is parsed.
MAX_RENDER_GRASPS = 50_000


#: ``--color-by`` values (the default: ``success`` when the grasps were evaluated, else
#: ``confidence``; samples, which have neither, one colour per candidate).
COLOR_BY = ("confidence", "success")


@dataclass(frozen=True)
class GraspPicture:
    """The grasps of one picture: every candidate's hands in world metres, and its colours."""

    kind: str
    """``isaac_grasp`` (a grasp file of any writer), ``samples`` (``usdgrip sample --format
    json``) or ``targets`` (``usdgrip evaluate --targets`` output)."""
    poses: NDArray[np.float64]
    """(N, H, 4, 4) world poses of the grasp frame G of each candidate's H hands."""
    colors: NDArray[np.float64]
    """(N, 3) one RGB colour per candidate."""
    color_by: str
    """``success``, ``confidence`` or ``candidate`` (one colour each)."""
    legend: tuple[tuple[str, tuple[float, float, float]], ...]
    """``(label, colour)`` entries saying what the colours mean."""
    open_width: float
    """Jaw opening drawn (metres)."""

    def __len__(self) -> int:
        return len(self.poses)


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
    grasps: GraspPicture | None = None
    """The grasps to draw, ``None`` without ``--grasps``."""
    sites: list[Any] = field(default_factory=list)
    """Gripper sites with a grasp frame."""
    skipped: list[str] = field(default_factory=list)
    """What was found but is not drawn, and why."""
    notes: list[str] = field(default_factory=list)
    """What was assumed drawing it (the frames of another tool's grasp poses)."""


def read_inputs(
    stage: Usd.Stage,
    prim_path: str | None,
    grasps: Any,
    show_slots: bool,
    show_sites: bool,
    gripper: Any = None,
    gripper_frame: str | None = None,
    color_by: str | None = None,
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
        inputs.grasps, inputs.prim, notes = load_grasp_picture(
            grasps, stage, prim, bool(prim_path), gripper, gripper_frame, color_by
        )
        inputs.notes.extend(notes)
    elif gripper is not None or gripper_frame is not None or color_by is not None:
        option = "--gripper" if gripper is not None else "--gripper-frame"
        option = "--color-by" if gripper is None and gripper_frame is None else option
        raise ValueError(f"{option}: only with --grasps (it says how the grasps are drawn)")
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


def load_grasp_picture(
    source: Any,
    stage: Usd.Stage,
    prim: Usd.Prim | None,
    prim_given: bool,
    gripper: Any = None,
    gripper_frame: str | None = None,
    color_by: str | None = None,
) -> tuple[GraspPicture, Usd.Prim | None, list[str]]:
    """The grasps to draw, the object prim they are relative to, and what was assumed.

    ``source`` is a path (an Isaac-Grasp YAML of any writer, ``usdgrip sample --format
    json`` or ``usdgrip evaluate --targets`` output, told apart by their content), a
    ``GraspPlanningResult`` or the samples' dict. Isaac-Grasp poses are relative to
    ``prim`` when the caller named it (``prim_given``), else to the file's
    ``metadata.pose_frame`` prim, which must be on the stage; a file without one (another
    tool's) falls back to ``prim`` (the default prim). Samples are world poses.

    Raises:
        GripperError: unreadable file, a pose frame or gripper frame not found.
        ValueError: ``color_by`` that the grasps cannot be coloured by.
    """
    from usdgrip.contracts import GraspPlanningResult
    from usdgrip.grasping.isaac_yaml import (
        TooManyGraspsError,
        parse_isaac_grasp,
        read_grasp_text,
    )

    if color_by is not None and color_by not in COLOR_BY:
        raise ValueError(f"--color-by {color_by!r}: expected one of {', '.join(COLOR_BY)}")
    name = "grasps"
    if isinstance(source, str | os.PathLike):
        name = str(source)
        text = read_grasp_text(source)  # at most MAX_GRASP_FILE_BYTES
        if text.lstrip().startswith("{"):  # JSON: sample or targets output
            return _load_targets(_parse_json(text, name), name, prim, color_by), prim, []
        try:
            source = parse_isaac_grasp(text, source=name, max_grasps=MAX_RENDER_GRASPS)
        except TooManyGraspsError as exc:  # refused before the YAML is parsed
            raise GripperError(
                f"{exc.source}: holds about {exc.count:,} grasps ({exc.count:,} `position` "
                f"keys); render draws at most {exc.limit:,} per picture (reading more takes "
                "minutes and gigabytes): plan with a smaller --max-candidates, or draw a "
                "subset of the file"
            ) from None
    if isinstance(source, dict):
        return _load_targets(source, name, prim, color_by), prim, []
    if not isinstance(source, GraspPlanningResult):
        raise TypeError(
            f"grasps is {type(source).__name__}; expected a file path, a GraspPlanningResult "
            "or the samples' dict"
        )
    return _load_isaac_grasps(
        source, name, stage, prim, prim_given, gripper, gripper_frame, color_by
    )


def _parse_json(text: str, name: str) -> Any:
    import json

    from usdgrip.jsontext import load_json

    try:
        return load_json(text)  # nesting depth limited
    except json.JSONDecodeError as exc:
        raise GripperError(f"{name}: not valid JSON: {exc}") from None
    except ValueError as exc:  # too deep, or an integer of too many digits
        raise GripperError(f"{name}: cannot be read: {exc}") from None


def _load_targets(data: Any, name: str, prim: Any, color_by: str | None) -> GraspPicture:
    """``usdgrip sample --format json`` or ``evaluate --targets`` output: world poses."""
    from usdgrip.grasping.target_evaluation import parse_target_samples
    from usdgrip.render.grasp_colors import compute_grasp_colors

    if isinstance(data, dict) and data.get("candidates") == []:
        raise GripperError(f"{name}: 'candidates' is empty; no grasp to draw")
    try:
        poses = parse_target_samples(data, name)
    except ValueError as exc:
        raise GripperError(str(exc)) from None
    evaluated = data.get("format") == "usdgrip_targets_evaluation"
    rates = None
    if evaluated:
        rates = np.array(
            [_read_rate(c, i, name) for i, c in enumerate(data["candidates"])], dtype=np.float64
        )
    kind = "targets" if evaluated else "samples"
    colors, chosen, legend = compute_grasp_colors(len(poses), None, rates, color_by, name)
    return GraspPicture(kind, poses, colors, chosen, legend, DEFAULT_OPEN_WIDTH)


def _read_rate(candidate: Any, index: int, name: str) -> float:
    rate = candidate.get("success_rate") if isinstance(candidate, dict) else None
    if not isinstance(rate, int | float) or isinstance(rate, bool) or not 0 <= rate <= 1:
        raise GripperError(
            f"{name}: candidates[{index}].success_rate is {rate!r}; expected a number in [0, 1] "
            "(usdgrip evaluate --targets output)"
        )
    return float(rate)


def _load_isaac_grasps(
    result: Any,
    name: str,
    stage: Usd.Stage,
    prim: Usd.Prim | None,
    prim_given: bool,
    gripper: Any,
    gripper_frame: str | None,
    color_by: str | None,
) -> tuple[GraspPicture, Usd.Prim | None, list[str]]:
    from usdgrip.grasping.pose_frames import resolve_file_frames
    from usdgrip.render.grasp_colors import compute_grasp_colors
    from usdgrip.usd.stage import compute_object_frame
    from usdgrip.views.grasp_set import compute_grasp_set_from_plan

    frame_path = result.metadata.pose_frame if result.metadata is not None else ""
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
    frames, width, notes = resolve_file_frames(
        result, str(prim.GetPath()), gripper, gripper_frame, f"grasps {name}"
    )
    grasps = compute_grasp_set_from_plan(
        result, str(prim.GetPath()), width or DEFAULT_OPEN_WIDTH, frames
    )
    world = grasps.compute_world_poses(compute_object_frame(prim))  # frame M, as planned
    colors, chosen, legend = compute_grasp_colors(
        len(world), grasps.confidences, grasps.success_rates, color_by, name
    )
    picture = GraspPicture("isaac_grasp", world[:, None], colors, chosen, legend, grasps.open_width)
    return picture, prim, list(notes)
