"""``render_view``: read, build line sets, draw, write, each a step (see :mod:`usdgrip.render`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pxr import Usd

from usdgrip.errors import GripperError
from usdgrip.extras import import_optional
from usdgrip.render.drawing import draw
from usdgrip.render.line_sets import build_line_sets
from usdgrip.render.render_inputs import read_inputs

#: Largest resolution accepted (dots per inch; print quality is 300-600).
MAX_DPI = 1200
#: Largest image side in pixels (size x dpi); matplotlib's Agg stops at 2**16, and
#: memory grows with the square: 16384 x 16384 RGBA is 1 GiB.
MAX_PIXELS_PER_SIDE = 16384


def check_view_options(
    size: tuple[float, float], dpi: int, elevation: float, azimuth: float
) -> None:
    """Refuse a picture that cannot be drawn or would not fit in memory.

    Raises:
        ValueError: a size or angle that is not finite, a size <= 0, a dpi outside
            ``1..MAX_DPI``, or an image side over ``MAX_PIXELS_PER_SIDE`` pixels.
    """
    width, height = (float(v) for v in size)
    if not (np.isfinite(elevation) and np.isfinite(azimuth)):
        raise ValueError(
            f"view {elevation:g},{azimuth:g}: expected finite elevation and azimuth in degrees"
        )
    if not (np.isfinite(width) and np.isfinite(height) and width > 0 and height > 0):
        raise ValueError(f"size {width:g}x{height:g}: expected finite inches > 0")
    if not 1 <= dpi <= MAX_DPI:
        raise ValueError(f"dpi {dpi}: expected 1 to {MAX_DPI}")
    pixels = (round(width * dpi), round(height * dpi))
    if max(pixels) > MAX_PIXELS_PER_SIDE:
        raise ValueError(
            f"size {width:g}x{height:g} in at dpi {dpi} is {pixels[0]}x{pixels[1]} pixels; "
            f"expected at most {MAX_PIXELS_PER_SIDE} per side: lower the size or the dpi"
        )


@dataclass
class RenderSummary:
    """What was drawn (the CLI prints it)."""

    output: Path
    object_path: str | None = None
    triangles: int = 0
    sites: list[str] = field(default_factory=list)
    slots: list[str] = field(default_factory=list)
    grasps: int = 0
    skipped: list[str] = field(default_factory=list)
    """What was found but not drawn, and why (e.g. a site without a grasp frame)."""
    notes: list[str] = field(default_factory=list)
    """What was assumed (e.g. the gripper frame of another tool's grasp poses)."""


def render_view(
    stage: Usd.Stage,
    output: str | os.PathLike,
    prim_path: str | None = None,
    grasps: Any = None,
    show_slots: bool = False,
    show_sites: bool = True,
    size: tuple[float, float] = (8.0, 6.0),
    dpi: int = 110,
    elevation: float = 24.0,
    azimuth: float = -58.0,
    title: str | None = None,
    gripper: Any = None,
    gripper_frame: str | None = None,
    color_by: str | None = None,
) -> RenderSummary:
    """Render the object, sites, slots and grasps of ``stage`` to a PNG.

    Args:
        stage: an open stage (the schema must be registered: import usdgrip first).
        output: PNG path; its folder must exist. Written atomically (a pipe or device: streamed).
        prim_path: the object prim; default the stage's default prim, else every
            top-level prim. Grasp poses are relative to it; without it, to the
            grasp file's ``metadata.pose_frame`` prim, which must be on the stage.
        grasps: an Isaac-Grasp YAML of any writer (usdgrip, Isaac Sim's Grasp Editor,
            GraspGen, GraspDataGen), ``usdgrip sample --format json`` or ``usdgrip evaluate
            --targets`` output (told apart by content), a ``GraspPlanningResult`` or the
            samples' dict. Each candidate is drawn as gripper wireframes at its hands (a
            multi-hand candidate's hands joined by a line), coloured by ``color_by``.
        show_slots: draw the slots of the object (and of prims under it).
        show_sites: draw every gripper site's grasp frame (X red, Y green, Z blue).
        size: figure size in inches, finite and > 0.
        dpi: resolution, 1 to :data:`MAX_DPI`; at most :data:`MAX_PIXELS_PER_SIDE`
            pixels per side.
        elevation: camera elevation in degrees (finite).
        azimuth: camera azimuth in degrees (finite).
        title: title; default the file name and object path.
        gripper: a :class:`~usdgrip.contracts.GripperRef`: the site whose grasp frame
            another writer's poses are converted to (from the file's ``gripper_frame`` /
            ``gripper_frame_link``, or ``gripper_frame``), and whose max opening is drawn.
        gripper_frame: the prim of ``gripper``'s asset the poses are of (``--gripper-frame``).
        color_by: ``success`` (measured success rate, red 0 → green 1), ``confidence``
            (red lowest → green highest of the set) or ``None``: success when the grasps
            were evaluated, else confidence, else (samples) one colour per candidate.

    Returns:
        What was drawn, what was skipped and why (``skipped``, also in the picture's
        legend) and what was assumed (``notes``).

    Raises:
        ValueError: ``output`` does not end in ``.png``; bad size, dpi or view
            (:func:`check_view_options`); a ``color_by`` the grasps have no values for.
        GripperError: missing prim, unreadable grasps file, bad mesh, a slot that
            fails :func:`usdgrip.sampling.check_slot` (its real problems), nothing
            to draw (saying what was skipped), or not enough memory for the picture.
        OSError: the output folder is missing or not writable.
    """
    from usdgrip.fileio import is_streamed

    out = Path(output)
    if out.suffix.lower() != ".png" and not is_streamed(out):  # a pipe or device takes any name
        raise ValueError(f"output {str(out)!r} must end in .png (the only format written)")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"output folder {str(out.parent)!r} does not exist")
    check_view_options(size, dpi, elevation, azimuth)
    # A bare Figure renders with Agg and never touches pyplot or a GUI backend.
    import_optional("matplotlib.figure", ("render",))

    inputs = read_inputs(
        stage, prim_path, grasps, show_slots, show_sites, gripper, gripper_frame, color_by
    )
    summary = RenderSummary(
        output=out,
        object_path=str(inputs.prim.GetPath()) if inputs.prim else None,
        triangles=len(inputs.all_triangles),
        sites=[site.path for site in inputs.sites],
        slots=[f"{slot.prim}:{slot.name}" for slot in inputs.slots],
        grasps=len(inputs.grasps) if inputs.grasps is not None else 0,
        skipped=list(inputs.skipped),
        notes=list(inputs.notes),
    )
    lines = build_line_sets(inputs, stage.GetRootLayer().identifier, (elevation, azimuth))
    name = Path(stage.GetRootLayer().realPath or stage.GetRootLayer().identifier).name
    figure = draw(
        inputs,
        lines,
        size=size,
        dpi=dpi,
        elevation=elevation,
        azimuth=azimuth,
        title=title or f"{name}  {summary.object_path or ''}",
        legend=_legend(summary, show_sites, show_slots, inputs.grasps),
    )
    write_png(figure, out, size, dpi)
    return summary


#: What each ``color_by`` colours mean, in the legend.
COLOR_MEANING = {
    "success": "colour = measured success rate",
    "confidence": "colour = confidence, lowest → highest",
    "candidate": "one colour per candidate",
}


def _legend(summary: RenderSummary, sites: bool, slots: bool, grasps: Any) -> list[str]:
    legend = [f"mesh: {summary.triangles} triangles (outline, creases)"]
    if sites:
        legend.append(f"sites: {len(summary.sites)} (X red closing, Z blue approach)")
    if slots:
        legend.append(f"slots: {len(summary.slots)} (colour = group)")
    if grasps is not None:
        hands = grasps.poses.shape[1]
        joined = f", {hands} hands each, joined" if hands > 1 else ""
        legend.append(f"grasps: {summary.grasps}{joined} ({COLOR_MEANING[grasps.color_by]})")
    legend.extend(f"skipped: {text}" for text in summary.skipped)
    return legend


def write_png(figure: Any, out: Path, size: tuple[float, float], dpi: int) -> None:
    """Write step: the PNG by usdgrip's one writer (atomic; streamed into a pipe or device).

    Raises:
        GripperError: not enough memory for the picture.
        OSError: the folder is not writable.
    """
    from usdgrip.fileio import write_output

    try:
        write_output(out, lambda handle: figure.savefig(handle, format="png"), binary=True)
    except MemoryError:
        raise GripperError(
            f"{out}: not enough memory for a {size[0]:g}x{size[1]:g} in picture at dpi {dpi}; "
            "lower the size or the dpi"
        ) from None
