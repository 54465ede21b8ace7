"""Draw step of ``render_view``: the mesh and the line sets on a matplotlib 3-D axes (Agg)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from usdgrip.render.line_sets import LineSets
from usdgrip.render.render_inputs import RenderInputs

MESH_FACE = (0.62, 0.66, 0.72, 0.18)
MESH_EDGE = (0.30, 0.33, 0.38, 0.55)


def _to_plot(points: NDArray[np.float64], up: str) -> NDArray[np.float64]:
    """World → plot coordinates: a Y-up world is rotated +90° about X so Y is drawn up."""
    p = np.asarray(points, dtype=np.float64)
    if up == "Y":
        return np.stack([p[..., 0], -p[..., 2], p[..., 1]], axis=-1)
    return p


def draw(
    inputs: RenderInputs,
    lines: LineSets,
    *,
    size: tuple[float, float],
    dpi: int,
    elevation: float,
    azimuth: float,
    title: str,
    legend: list[str],
) -> Any:
    """A matplotlib ``Figure`` (never pyplot, so no GUI backend) of the picture."""
    from matplotlib.figure import Figure
    from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

    up = inputs.up
    fig = Figure(figsize=size, dpi=dpi, layout="constrained")
    ax = fig.add_subplot(projection="3d")
    if len(inputs.triangles):
        ax.add_collection3d(
            Poly3DCollection(
                _to_plot(inputs.triangles, up), facecolors=MESH_FACE, edgecolors="none"
            )
        )
    # matplotlib cannot add an empty 3-D line collection ("need at least one array to
    # concatenate"): a mesh without an edge to draw, a set without grasps, draws none.
    if len(lines.edges):
        ax.add_collection3d(
            Line3DCollection(_to_plot(lines.edges, up), colors=[MESH_EDGE], linewidths=0.6)
        )
    for segs, colors, lw in lines.segments:
        if len(segs):
            ax.add_collection3d(Line3DCollection(_to_plot(segs, up), colors=colors, linewidths=lw))
    for site, (origin, axes) in zip(inputs.sites, lines.site_axes, strict=True):
        for segment, color in axes:
            ax.add_collection3d(
                Line3DCollection(_to_plot(segment, up), colors=color, linewidths=2.2)
            )
        x, y, z = _to_plot(origin, up)
        ax.text(x, y, z, f"  {site.name}", fontsize=8, color="#333333")
    for position, text, color in lines.slot_labels:
        x, y, z = _to_plot(position, up)
        ax.text(x, y, z, f" {text}", fontsize=8, color=color)

    plot_lo, plot_hi = _to_plot(lines.low, up), _to_plot(lines.high, up)
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
    ax.set_title(title, fontsize=11)
    fig.text(0.01, 0.99, "\n".join(legend), fontsize=8, family="monospace", va="top")
    grasps = inputs.grasps
    if grasps is not None and grasps.legend:
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=color, linewidth=2.4) for _, color in grasps.legend]
        fig.legend(
            handles,
            [label for label, _ in grasps.legend],
            loc="lower left",
            fontsize=7,
            title=f"grasps: {grasps.color_by}",
            title_fontsize=7,
            frameon=False,
        )
    return fig
