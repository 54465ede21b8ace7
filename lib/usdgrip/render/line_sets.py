"""Build-line-sets step of ``render_view``: every segment and label to draw, in world metres.

Pure (numpy): slots and grippers use the usdview overlays' line geometry
(:mod:`usdgrip.views.glyphs`), so the picture matches the viewer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.errors import GripperError
from usdgrip.render.render_inputs import RenderInputs
from usdgrip.views.glyphs import (
    FAN_RAYS,
    compute_gripper_wireframe,
    compute_group_colors,
    compute_slot_shape,
)

#: Site axis length as a fraction of the scene's largest extent.
AXIS_FRACTION = 0.12
AXIS_COLORS = ("#d62728", "#2ca02c", "#1f77b4")  # X closing, Y, Z approach
#: Triangles whose edges are found (silhouette, creases); a larger mesh uses the drawn subset.
MAX_EDGE_TRIANGLES = 2_000_000
#: Mesh line segments drawn at most (evenly subsampled beyond that).
MAX_EDGE_SEGMENTS = 60_000


@dataclass
class LineSets:
    """What ``draw`` draws besides the mesh faces (world metres)."""

    edges: NDArray[np.float64]
    """(E, 2, 3) the mesh's lines: feature edges and the silhouette."""
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


def build_line_sets(
    inputs: RenderInputs, stage_name: str, view: tuple[float, float] = (24.0, -58.0)
) -> LineSets:
    """The segments, labels and bounds of the picture.

    Args:
        inputs: what the stage holds (:func:`~usdgrip.render.render_inputs.read_inputs`).
        stage_name: the file, for messages.
        view: camera ``(elevation, azimuth)`` in degrees: the silhouette is seen from there.

    Raises:
        GripperError: nothing to draw (no mesh, site, slot or grasp), saying what was skipped.
    """
    tris = inputs.triangles
    lines = LineSets(
        edges=compute_outline_edges(inputs, view) if len(tris) else np.zeros((0, 2, 3))
    )
    colors = compute_group_colors([s.group for s in inputs.slots])
    for slot, color in zip(inputs.slots, colors, strict=True):
        shape = compute_slot_shape(slot)
        lines.segments.append((shape.all, [tuple(color)], 2.0))
        tag = f"{slot.name}" + (f" [{slot.group}]" if slot.group else "")
        tip = shape.fan[min(FAN_RAYS // 2, len(shape.fan) - 1), 1]  # the nominal approach ray
        lines.slot_labels.append((tip, tag, tuple(color)))
    grasps = inputs.grasps
    if grasps is not None and len(grasps.poses):
        hands = grasps.poses.shape[1]
        frames = compute_gripper_wireframe(grasps.poses.reshape(-1, 4, 4), grasps.open_width)
        colors = np.repeat(grasps.colors, hands, axis=0)  # one colour per candidate
        per_segment = np.repeat(colors, frames.shape[1], axis=0)
        lines.segments.append((frames.reshape(-1, 2, 3), [tuple(c) for c in per_segment], 1.2))
        if hands > 1:  # the hands of one candidate close together: join their grasp centres
            centres = grasps.poses[:, :, :3, 3]
            joins = np.stack([centres[:, :-1], centres[:, 1:]], axis=2).reshape(-1, 2, 3)
            join_colors = np.repeat(grasps.colors, hands - 1, axis=0)
            lines.segments.append((joins, [tuple(c) for c in join_colors], 0.8))
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


class MeshEdges(NamedTuple):
    """The unique edges of a triangle soup and the triangles on each side."""

    segments: NDArray[np.float64]
    """(U, 2, 3) one segment per unique edge."""
    counts: NDArray[np.int64]
    """(U,) how many triangles share the edge."""
    faces: NDArray[np.int64]
    """(U, 2) the first two triangles of each edge (-1 where there is none)."""
    normals: NDArray[np.float64]
    """(F, 3) unit triangle normals (zero for a degenerate triangle)."""


def compute_mesh_edges(triangles: NDArray[np.float64]) -> MeshEdges:
    """The unique edges of a triangle soup ``(F, 3, 3)``, vertices matched by position.

    Positions are rounded to 1e-9 m, so a soup of separate triangles (each with its own
    vertices, as USD meshes are read) is joined where the triangles touch.
    """
    tris = np.asarray(triangles, dtype=np.float64).reshape(-1, 3, 3)
    normals = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    lengths = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, lengths, out=np.zeros_like(normals), where=lengths > 0)
    if not len(tris):
        empty = np.zeros(0, dtype=np.int64)
        return MeshEdges(np.zeros((0, 2, 3)), empty, np.zeros((0, 2), np.int64), normals)
    _, vertex_ids = np.unique(np.round(tris.reshape(-1, 3), 9), axis=0, return_inverse=True)
    ids = vertex_ids.reshape(-1, 3)
    edges = np.concatenate([ids[:, [0, 1]], ids[:, [1, 2]], ids[:, [2, 0]]])
    segments = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    faces = np.tile(np.arange(len(tris)), 3)
    keys = np.sort(edges, axis=1)
    _, edge_index, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    edge_index = edge_index.reshape(-1)
    order = np.argsort(edge_index, kind="stable")
    starts = np.searchsorted(edge_index[order], np.arange(len(counts)))
    first = order[starts]  # one representative per unique edge (its first triangle)
    sides = np.full((len(counts), 2), -1, dtype=np.int64)
    sides[:, 0] = faces[first]
    shared = counts > 1
    sides[shared, 1] = faces[order[starts[shared] + 1]]
    return MeshEdges(segments[first], counts, sides, normals)


def compute_feature_edges(triangles: NDArray[np.float64], angle_deg: float = 20.0) -> NDArray:
    """Edges worth drawing of a triangle soup ``(F, 3, 3)``: boundaries and creases.

    An edge is kept when it borders one triangle, more than two, or two whose
    normals differ by more than ``angle_deg`` (so the diagonals of flat quads
    disappear). Vertices are matched by position (rounded to 1e-9 m).

    Returns:
        ``(E, 2, 3)`` segments.
    """
    edges = compute_mesh_edges(triangles)
    return edges.segments[_find_feature_edges(edges, angle_deg)]


def _find_feature_edges(edges: MeshEdges, angle_deg: float) -> NDArray[np.bool_]:
    keep = edges.counts != 2
    pairs = np.flatnonzero(edges.counts == 2)
    a, b = edges.faces[pairs, 0], edges.faces[pairs, 1]
    cos = np.einsum("ij,ij->i", edges.normals[a], edges.normals[b])
    keep[pairs] = cos < np.cos(np.radians(angle_deg))
    return keep


def compute_silhouette_edges(triangles: NDArray[np.float64], towards_eye: ArrayLike) -> NDArray:
    """The outline of a triangle soup seen along ``-towards_eye`` (orthographic): ``(E, 2, 3)``.

    An edge between a triangle facing the eye and one facing away (their normals' dot
    products with ``towards_eye`` of opposite signs) is on the silhouette. A smooth mesh
    (an icosphere, a torus, a scan) has no feature edge sharper than 20°, and this is
    what draws its shape.
    """
    edges = compute_mesh_edges(triangles)
    return edges.segments[_find_silhouette_edges(edges, towards_eye)]


def _find_silhouette_edges(edges: MeshEdges, towards_eye: ArrayLike) -> NDArray[np.bool_]:
    eye = np.asarray(towards_eye, dtype=np.float64).reshape(3)
    facing = edges.normals @ eye
    keep = np.zeros(len(edges.counts), dtype=bool)
    pairs = np.flatnonzero(edges.counts == 2)
    a, b = edges.faces[pairs, 0], edges.faces[pairs, 1]
    keep[pairs] = facing[a] * facing[b] < 0
    return keep


def compute_view_direction(elevation: float, azimuth: float, up: str) -> NDArray[np.float64]:
    """The unit vector from the scene towards matplotlib's camera, in world coordinates.

    matplotlib puts the eye along ``(cos e cos a, cos e sin a, sin e)`` of its plot axes;
    a Y-up world is drawn rotated (plot = ``(x, -z, y)``), so the vector is rotated back.
    """
    e, a = np.radians(elevation), np.radians(azimuth)
    plot = np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])
    return np.array([plot[0], plot[2], -plot[1]]) if up == "Y" else plot


def compute_outline_edges(inputs: RenderInputs, view: tuple[float, float]) -> NDArray:
    """The mesh lines drawn: feature edges (boundaries, creases > 20°) and the silhouette.

    Edges are found on every triangle (up to :data:`MAX_EDGE_TRIANGLES`, else on the drawn
    subset), so a subsampled picture keeps its outline.
    """
    tris = (
        inputs.all_triangles
        if len(inputs.all_triangles) <= MAX_EDGE_TRIANGLES
        else inputs.triangles
    )
    edges = compute_mesh_edges(tris)
    towards_eye = compute_view_direction(*view, inputs.up)
    keep = _find_feature_edges(edges, 20.0) | _find_silhouette_edges(edges, towards_eye)
    drawn = edges.segments[keep]
    if len(drawn) > MAX_EDGE_SEGMENTS:
        drawn = drawn[np.linspace(0, len(drawn) - 1, MAX_EDGE_SEGMENTS).astype(int)]
    return drawn
