"""Build-line-sets step of ``render_view``: every segment and label to draw, in world metres.

Pure (numpy): slots and grippers use the usdview overlays' line geometry
(:mod:`usdgrip.views.glyphs`), so the picture matches the viewer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from usdgrip.errors import GripperError
from usdgrip.render.render_inputs import RenderInputs
from usdgrip.views.glyphs import (
    FAN_RAYS,
    compute_confidence_colors,
    compute_gripper_wireframe,
    compute_group_colors,
    compute_slot_shape,
)

#: Site axis length as a fraction of the scene's largest extent.
AXIS_FRACTION = 0.12
AXIS_COLORS = ("#d62728", "#2ca02c", "#1f77b4")  # X closing, Y, Z approach


@dataclass
class LineSets:
    """What ``draw`` draws besides the mesh faces (world metres)."""

    edges: NDArray[np.float64]
    """(E, 2, 3) the mesh's feature edges."""
    segments: list[tuple[NDArray[np.float64], Any, float]] = field(default_factory=list)
    """``((S, 2, 3) segments, colours, line width)``: slots, then grasp wireframes."""
    slot_labels: list[tuple[NDArray[np.float64], str, Any]] = field(default_factory=list)
    """``(position, text, colour)`` per slot, at its nominal approach ray's tip."""
    site_axes: list[tuple[NDArray[np.float64], list[tuple[NDArray[np.float64], str]]]] = field(
        default_factory=list
    )
    """``(origin, [((1, 2, 3) axis segment, colour) for X, Y, Z])`` per site."""
    low: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    high: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    """Bounds of everything drawn."""


def build_line_sets(inputs: RenderInputs, stage_name: str) -> LineSets:
    """The segments, labels and bounds of the picture.

    Raises:
        GripperError: nothing to draw (no mesh, site, slot or grasp), saying what was skipped.
    """
    tris = inputs.triangles
    lines = LineSets(edges=compute_feature_edges(tris) if len(tris) else np.zeros((0, 2, 3)))
    colors = compute_group_colors([s.group for s in inputs.slots])
    for slot, color in zip(inputs.slots, colors, strict=True):
        shape = compute_slot_shape(slot)
        lines.segments.append((shape.all, [tuple(color)], 2.0))
        tag = f"{slot.name}" + (f" [{slot.group}]" if slot.group else "")
        tip = shape.fan[min(FAN_RAYS // 2, len(shape.fan) - 1), 1]  # the nominal approach ray
        lines.slot_labels.append((tip, tag, tuple(color)))
    poses = inputs.grasp_poses
    if poses is not None and len(poses):
        frames = compute_gripper_wireframe(poses, inputs.open_width)
        colors = compute_confidence_colors(inputs.confidences, len(frames))
        per_segment = np.repeat(colors, frames.shape[1], axis=0)
        lines.segments.append((frames.reshape(-1, 2, 3), [tuple(c) for c in per_segment], 1.2))
    points = [inputs.all_triangles.reshape(-1, 3)] + [s[0].reshape(-1, 3) for s in lines.segments]
    points += [s.grasp_frame[:3, 3][None] for s in inputs.sites]
    if not any(len(p) for p in points):
        skipped = f"; {'; '.join(inputs.skipped)}" if inputs.skipped else ""
        raise GripperError(f"{stage_name}: nothing to draw (no mesh, site, slot or grasp){skipped}")
    cloud = np.concatenate([p for p in points if len(p)])
    lines.low, lines.high = cloud.min(axis=0), cloud.max(axis=0)
    axis_length = AXIS_FRACTION * (float(np.max(lines.high - lines.low)) or 0.1)
    for site in inputs.sites:
        origin = site.grasp_frame[:3, 3]
        axes = [
            (np.array([[origin, origin + axis_length * site.grasp_frame[:3, k]]]), color)
            for k, color in enumerate(AXIS_COLORS)
        ]
        lines.site_axes.append((origin, axes))
    return lines


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
