"""Draw an object, its gripper sites, slots and grasp candidates to a PNG (no usdview).

A USD-edge module (reads the stage with :mod:`usdgrip.usd_io` and
:mod:`usdgrip.usd_geometry`) that draws with matplotlib's Agg backend, so it
runs headless: for docs, CI artefacts and people without a viewer. Slots and
grippers use the same line geometry as the usdview overlays
(:mod:`usdgrip.views.shapes`), so the picture matches the viewer.

Conventions: everything is drawn in world metres; a ``Y``-up stage is turned
to show Y up (matplotlib's vertical axis is Z). The PNG is written by
:func:`usdgrip.fileio.write_output`: atomically over a regular file, streamed into a
device or named pipe.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pxr import Sdf, Usd, UsdGeom

from usdgrip.errors import GripperError
from usdgrip.views.shapes import (
    FAN_RAYS,
    compute_confidence_colors,
    compute_gripper_wireframe,
    compute_group_colors,
    compute_slot_shape,
)

#: Triangles drawn at most (evenly subsampled beyond that, to keep files small and fast).
MAX_TRIANGLES = 20_000
#: Site axis length as a fraction of the scene's largest extent.
AXIS_FRACTION = 0.12
AXIS_COLORS = ("#d62728", "#2ca02c", "#1f77b4")  # X closing, Y, Z approach
MESH_FACE = (0.62, 0.66, 0.72, 0.18)
MESH_EDGE = (0.30, 0.33, 0.38, 0.55)
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


def _to_plot(points: NDArray[np.float64], up: str) -> NDArray[np.float64]:
    """World → plot coordinates: a Y-up world is rotated +90° about X so Y is drawn up."""
    p = np.asarray(points, dtype=np.float64)
    if up == "Y":
        return np.stack([p[..., 0], -p[..., 2], p[..., 1]], axis=-1)
    return p


def _find_object(stage: Usd.Stage, prim_path: str | None) -> Usd.Prim | None:
    from usdgrip.usd_io import get_prim

    if prim_path:
        return get_prim(stage, prim_path)
    prim = stage.GetDefaultPrim()
    return prim if prim and prim.IsValid() else None


def _read_mesh(prim: Usd.Prim | None, stage: Usd.Stage) -> tuple[NDArray, NDArray]:
    """World triangles (F, 3, 3) in metres of ``prim`` (or every top-level prim)."""
    from usdgrip.usd_geometry import read_object_mesh

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


def compute_feature_edges(triangles: NDArray[np.float64], angle_deg: float = 20.0) -> NDArray:
    """Edges worth drawing of a triangle soup ``(F, 3, 3)``: boundaries and creases.

    An edge is kept when it borders one triangle, more than two, or two whose
    normals differ by more than ``angle_deg`` (so the diagonals of flat quads
    disappear). Vertices are matched by position (rounded to 1e-9 m).

    Returns:
        ``(E, 2, 3)`` segments.
    """
    tris = np.asarray(triangles, dtype=np.float64).reshape(-1, 3, 3)
    if not len(tris):
        return np.zeros((0, 2, 3))
    normals = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    lengths = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, lengths, out=np.zeros_like(normals), where=lengths > 0)
    _, vertex_ids = np.unique(np.round(tris.reshape(-1, 3), 9), axis=0, return_inverse=True)
    ids = vertex_ids.reshape(-1, 3)
    edges = np.concatenate([ids[:, [0, 1]], ids[:, [1, 2]], ids[:, [2, 0]]])
    segments = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    faces = np.tile(np.arange(len(tris)), 3)
    keys = np.sort(edges, axis=1)
    _, edge_index, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    edge_index = edge_index.reshape(-1)
    order = np.argsort(edge_index, kind="stable")
    first = np.zeros(len(counts), dtype=int)
    first[edge_index[order[::-1]]] = order[::-1]  # one representative per unique edge
    keep = counts != 2
    pairs = np.flatnonzero(counts == 2)
    if len(pairs):
        starts = np.searchsorted(edge_index[order], pairs)
        a, b = faces[order[starts]], faces[order[starts + 1]]
        cos = np.einsum("ij,ij->i", normals[a], normals[b])
        keep[pairs] = cos < np.cos(np.radians(angle_deg))
    return segments[first[keep]]


def _load_grasps(source: Any, stage: Usd.Stage, prim: Usd.Prim | None, prim_given: bool):
    """(world poses (N, 4, 4), confidences (N,), open width, object prim) of a grasp file.

    The poses are relative to ``prim`` when the caller named it (``prim_given``), else
    to the file's ``metadata.pose_frame`` prim, which must be on the stage; a file
    without a pose frame falls back to ``prim`` (the default prim).
    """
    from usdgrip.isaac_yaml import read_isaac_grasp
    from usdgrip.usd_io import compute_world_transform
    from usdgrip.views.grasp_set import compute_grasp_set_from_plan

    result = source if not isinstance(source, str | os.PathLike) else read_isaac_grasp(source)
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
    world = grasps.compute_world_poses(compute_world_transform(prim))
    return world, grasps.confidences, grasps.open_width, prim


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
) -> RenderSummary:
    """Render the object, sites, slots and grasps of ``stage`` to a PNG.

    Args:
        stage: an open stage (the schema must be registered: import usdgrip first).
        output: PNG path; its folder must exist. Written atomically.
        prim_path: the object prim; default the stage's default prim, else every
            top-level prim. Grasp poses are relative to it; without it, to the
            grasp file's ``metadata.pose_frame`` prim, which must be on the stage.
        grasps: an Isaac-Grasp YAML path or a ``GraspPlanningResult``; each
            candidate is drawn as a gripper wireframe coloured by confidence.
        show_slots: draw the slots of the object (and of prims under it).
        show_sites: draw every gripper site's grasp frame (X red, Y green, Z blue).
        size: figure size in inches, finite and > 0.
        dpi: resolution, 1 to :data:`MAX_DPI`; at most :data:`MAX_PIXELS_PER_SIDE`
            pixels per side.
        elevation: camera elevation in degrees (finite).
        azimuth: camera azimuth in degrees (finite).
        title: title; default the file name and object path.

    Returns:
        What was drawn, and what was skipped and why (``skipped``, also in the
        picture's legend).

    Raises:
        ValueError: ``output`` does not end in ``.png``; bad size, dpi or view
            (:func:`check_view_options`).
        GripperError: missing prim, unreadable grasps file, bad mesh, a slot that
            fails :func:`usdgrip.sampling.check_slot` (its real problems), nothing
            to draw (saying what was skipped), or not enough memory for the picture.
        OSError: the output folder is missing or not writable.
    """
    from usdgrip.fileio import is_streamed
    from usdgrip.sampling import check_slot
    from usdgrip.usd_io import find_gripper_sites, iter_slot_prims, read_gripper_slots

    out = Path(output)
    if out.suffix.lower() != ".png" and not is_streamed(out):  # a pipe or device takes any name
        raise ValueError(f"output {str(out)!r} must end in .png (the only format written)")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"output folder {str(out.parent)!r} does not exist")
    check_view_options(size, dpi, elevation, azimuth)
    try:  # a bare Figure renders with Agg and never touches pyplot or a GUI backend
        from matplotlib.figure import Figure
    except ImportError:
        raise GripperError(
            "usdgrip render needs matplotlib: pip install 'usdgrip[render]'"
        ) from None
    from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

    up = UsdGeom.GetStageUpAxis(stage)
    prim = _find_object(stage, prim_path)
    summary = RenderSummary(output=out, object_path=str(prim.GetPath()) if prim else None)
    all_tris, tris = _read_mesh(prim, stage)
    summary.triangles = len(all_tris)

    segments: list[tuple[NDArray, Any, float, str]] = []  # (S,2,3), colours, width, label
    labels: list[tuple[NDArray, str, Any]] = []
    if show_slots:
        root = prim.GetPath() if prim is not None else None
        slot_prims = [
            p for p in iter_slot_prims(stage) if root is None or p.GetPath().HasPrefix(root)
        ]
        slots = [s for p in slot_prims for s in read_gripper_slots(p)]
        for slot in slots:  # the sampler's checks: the real reason a slot cannot be drawn
            problems = check_slot(slot)
            if problems:
                raise GripperError(
                    f"{stage.GetRootLayer().identifier}: <{slot.prim}> slot {slot.name!r}: "
                    f"{'; '.join(map(str, problems))}; the slot cannot be drawn "
                    "(`usdgrip validate` reports it)"
                )
        colors = compute_group_colors([s.group for s in slots])
        for slot, color in zip(slots, colors, strict=True):
            shape = compute_slot_shape(slot)
            segments.append((shape.all, [tuple(color)], 2.0, ""))
            tag = f"{slot.name}" + (f" [{slot.group}]" if slot.group else "")
            tip = shape.fan[min(FAN_RAYS // 2, len(shape.fan) - 1), 1]  # the nominal approach ray
            labels.append((tip, tag, tuple(color)))
            summary.slots.append(f"{slot.prim}:{slot.name}")

    world_poses = None
    if grasps is not None:
        world_poses, confidences, width, prim = _load_grasps(
            grasps, stage, prim, prim_given=bool(prim_path)
        )
        summary.object_path = str(prim.GetPath())
        if len(world_poses):
            frames = compute_gripper_wireframe(world_poses, width)
            colors = compute_confidence_colors(confidences, len(frames))
            per_segment = np.repeat(colors, frames.shape[1], axis=0)
            segments.append((frames.reshape(-1, 2, 3), [tuple(c) for c in per_segment], 1.2, ""))
        summary.grasps = len(world_poses)

    points = [all_tris.reshape(-1, 3)] + [s[0].reshape(-1, 3) for s in segments]
    sites = find_gripper_sites(stage) if show_sites else []
    summary.skipped.extend(
        f"site <{s.path}> not drawn: it has no grasp frame (no usable forward axis: "
        "gripper_forward_axis with 2 distinct finite points)"
        for s in sites
        if s.grasp_frame is None
    )
    sites = [s for s in sites if s.grasp_frame is not None]
    points += [s.grasp_frame[:3, 3][None] for s in sites]
    cloud = np.concatenate([p for p in points if len(p)]) if any(len(p) for p in points) else None
    if cloud is None:
        skipped = f"; {'; '.join(summary.skipped)}" if summary.skipped else ""
        raise GripperError(
            f"{stage.GetRootLayer().identifier}: nothing to draw (no mesh, site, slot or "
            f"grasp){skipped}"
        )
    lo, hi = cloud.min(axis=0), cloud.max(axis=0)
    extent = float(np.max(hi - lo)) or 0.1
    axis_length = AXIS_FRACTION * extent

    fig = Figure(figsize=size, dpi=dpi, layout="constrained")
    ax = fig.add_subplot(projection="3d")
    if len(tris):
        ax.add_collection3d(
            Poly3DCollection(_to_plot(tris, up), facecolors=MESH_FACE, edgecolors="none")
        )
        edges = compute_feature_edges(tris)
        ax.add_collection3d(
            Line3DCollection(_to_plot(edges, up), colors=[MESH_EDGE], linewidths=0.6)
        )
    for segs, colors, lw, _ in segments:
        ax.add_collection3d(Line3DCollection(_to_plot(segs, up), colors=colors, linewidths=lw))
    for site in sites:
        origin = site.grasp_frame[:3, 3]
        for k, color in enumerate(AXIS_COLORS):
            tip = origin + axis_length * site.grasp_frame[:3, k]
            ax.add_collection3d(
                Line3DCollection(
                    _to_plot(np.array([[origin, tip]]), up), colors=color, linewidths=2.2
                )
            )
        x, y, z = _to_plot(origin, up)
        ax.text(x, y, z, f"  {site.name}", fontsize=8, color="#333333")
        summary.sites.append(site.path)
    for position, text, color in labels:
        x, y, z = _to_plot(position, up)
        ax.text(x, y, z, f" {text}", fontsize=8, color=color)

    plot_lo, plot_hi = _to_plot(lo, up), _to_plot(hi, up)
    mins, maxs = np.minimum(plot_lo, plot_hi), np.maximum(plot_lo, plot_hi)
    center, half = 0.5 * (mins + maxs), 0.5 * max(float(np.max(maxs - mins)), 1e-3) * 1.08
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    ax.set_zlim(center[2] - half, center[2] + half)
    ax.set_box_aspect((1, 1, 1), zoom=1.15)
    ax.view_init(elev=elevation, azim=azimuth)
    names = ("X", "-Z", "Y") if up == "Y" else ("X", "Y", "Z")
    ax.set_xlabel(f"{names[0]} (m)")
    ax.set_ylabel(f"{names[1]} (m)")
    ax.set_zlabel(f"{names[2]} (m)")
    ax.tick_params(labelsize=7)

    name = Path(stage.GetRootLayer().realPath or stage.GetRootLayer().identifier).name
    ax.set_title(title or f"{name}  {summary.object_path or ''}", fontsize=11)
    legend = [f"mesh: {summary.triangles} triangles"]
    if show_sites:
        legend.append(f"sites: {len(summary.sites)} (X red closing, Z blue approach)")
    if show_slots:
        legend.append(f"slots: {len(summary.slots)} (colour = group)")
    if grasps is not None:
        legend.append(f"grasps: {summary.grasps} (red → green = lowest → highest confidence)")
    legend.extend(f"skipped: {text}" for text in summary.skipped)
    fig.text(0.01, 0.99, "\n".join(legend), fontsize=8, family="monospace", va="top")

    # usdgrip's one writer (atomic for a regular file, streamed for a device or pipe).
    from usdgrip.fileio import write_output

    try:
        write_output(out, lambda handle: fig.savefig(handle, format="png"), binary=True)
    except MemoryError:
        raise GripperError(
            f"{out}: not enough memory for a {size[0]:g}x{size[1]:g} in picture at dpi {dpi}; "
            "lower the size or the dpi"
        ) from None
    return summary
