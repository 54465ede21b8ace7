"""Overlay prims for the viewers (usdview, Kit): slots and grasp candidates drawn as BasisCurves.

Every overlay lives in the stage's SESSION layer under one root prim,
:data:`OVERLAY_ROOT`, and is authored with the Sdf API inside one
``Sdf.ChangeBlock`` (one recomposition per call, however many prims). The root
layer is never touched, so saving or exporting the asset never saves an
overlay. Points are written in stage units (world metres / metersPerUnit) at
the root of the stage, so they line up with the geometry whatever the
object's transform. Every overlay prim has ``purpose = "guide"`` (USD's mark
for helper geometry): bounding boxes, framing and renders leave it out unless
guides are displayed, and the Grippers session turns usdview's guide display
on while overlays are shown.

Layout::

    /__usdgrip_overlays            Scope, purpose guide (visibility toggled here)
        slots/<object>_<slot>      BasisCurves, colour by slot group
        grasps/g0000 ...           BasisCurves, one gripper wireframe each,
                                   colour by confidence (or measured success),
                                   best first
        grasp_lines/<name>         BasisCurves, a SimReady grasp vector line p0-p1
                                   with a pad tick at each end
        sites/site_<name>          BasisCurves, a gripper site's axes and open jaws
        preview/...                what an authoring dialog would author (live)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from pxr import Gf, Sdf, Tf, Usd, UsdGeom, Vt

from usdgrip.frames import compute_fallback_perpendicular
from usdgrip.grasp_line_geometry import GraspLine
from usdgrip.site_records import GripperSite, GripperSlot
from usdgrip.views.glyphs import (
    DEFAULT_OPEN_WIDTH,
    HIGHLIGHT_COLOR,
    Segments,
    compute_confidence_colors,
    compute_gripper_wireframe,
    compute_group_colors,
    compute_slot_shape,
    compute_success_colors,
)

OVERLAY_ROOT = Sdf.Path("/__usdgrip_overlays")
SLOTS_SCOPE = OVERLAY_ROOT.AppendChild("slots")
GRASPS_SCOPE = OVERLAY_ROOT.AppendChild("grasps")
GRASP_LINES_SCOPE = OVERLAY_ROOT.AppendChild("grasp_lines")
#: What an authoring dialog would author, drawn while it is open (replaced on every change).
PREVIEW_SCOPE = OVERLAY_ROOT.AppendChild("preview")
SITES_SCOPE = OVERLAY_ROOT.AppendChild("sites")
#: A gripper site's colour (its axes and open jaws).
SITE_COLOR = (0.95, 0.55, 0.1)
#: SimReady's grasp-line guide colour, and the length of the pad tick at each end (metres).
GRASP_LINE_COLOR = (0.1, 0.85, 0.2)
PAD_TICK = 0.01
#: Curve width in metres (converted to stage units when written).
LINE_WIDTH = 0.002
HIGHLIGHT_WIDTH = 0.005
#: customData key holding a grasp overlay's own colour (restored when unhighlighted).
BASE_COLOR_KEY = "usdgripBaseColor"


def _session_layer(stage: Usd.Stage) -> Sdf.Layer:
    layer = stage.GetSessionLayer()
    if layer is None:
        raise ValueError(
            f"stage {stage.GetRootLayer().identifier!r} has no session layer; overlays are "
            "only written to a session layer (open the stage with Usd.Stage.Open)."
        )
    return layer


def _meters_per_unit(stage: Usd.Stage) -> float:
    mpu = UsdGeom.GetStageMetersPerUnit(stage)
    return mpu if mpu > 0 else 0.01


def _define(layer: Sdf.Layer, path: Sdf.Path, type_name: str) -> Sdf.PrimSpec:
    spec = Sdf.CreatePrimInLayer(layer, path)
    spec.specifier = Sdf.SpecifierDef
    spec.typeName = type_name
    return spec


def _set(spec: Sdf.PrimSpec, name: str, type_name, value, variability=None) -> Sdf.AttributeSpec:
    attr = spec.attributes.get(name)
    if attr is None:
        if variability is None:
            attr = Sdf.AttributeSpec(spec, name, type_name)
        else:
            attr = Sdf.AttributeSpec(spec, name, type_name, variability)
    attr.default = value
    return attr


def _write_curves(
    layer: Sdf.Layer,
    path: Sdf.Path,
    segments: Segments,
    color: ArrayLike,
    width: float,
    mpu: float,
) -> Sdf.PrimSpec:
    """Write one linear BasisCurves prim spec holding ``segments`` (S, 2, 3) metres."""
    points = (np.asarray(segments, dtype=np.float64).reshape(-1, 3) / mpu).astype(np.float32)
    w = width / mpu
    spec = _define(layer, path, "BasisCurves")
    _set(spec, "points", Sdf.ValueTypeNames.Point3fArray, Vt.Vec3fArray.FromNumpy(points))
    _set(spec, "curveVertexCounts", Sdf.ValueTypeNames.IntArray, Vt.IntArray([2] * len(segments)))
    _set(spec, "type", Sdf.ValueTypeNames.Token, "linear", Sdf.VariabilityUniform)
    _set_guide(spec)
    _set(spec, "widths", Sdf.ValueTypeNames.FloatArray, Vt.FloatArray([w])).SetInfo(
        "interpolation", UsdGeom.Tokens.constant
    )
    rgb = [float(c) for c in np.asarray(color, dtype=np.float64).reshape(3)]
    _set(
        spec, "primvars:displayColor", Sdf.ValueTypeNames.Color3fArray, Vt.Vec3fArray([rgb])
    ).SetInfo("interpolation", UsdGeom.Tokens.constant)
    lo, hi = points.min(axis=0) - w / 2, points.max(axis=0) + w / 2
    _set(
        spec,
        "extent",
        Sdf.ValueTypeNames.Float3Array,
        Vt.Vec3fArray.FromNumpy(np.stack([lo, hi]).astype(np.float32)),
    )
    spec.customData = {BASE_COLOR_KEY: Gf.Vec3f(*rgb)}
    return spec


def _set_guide(spec: Sdf.PrimSpec) -> None:
    """``purpose = "guide"``: helper geometry, out of bounds and renders unless guides are shown."""
    _set(spec, "purpose", Sdf.ValueTypeNames.Token, UsdGeom.Tokens.guide, Sdf.VariabilityUniform)


def _ensure_root(layer: Sdf.Layer, scope: Sdf.Path) -> None:
    if layer.GetPrimAtPath(OVERLAY_ROOT) is None:
        root = _define(layer, OVERLAY_ROOT, "Scope")
        root.SetInfo("comment", "usdgrip overlays (session layer only; never saved with the asset)")
        _set_guide(root)
    if layer.GetPrimAtPath(scope) is not None:
        del layer.GetPrimAtPath(OVERLAY_ROOT).nameChildren[scope.name]
    _define(layer, scope, "Scope")


def _unique_name(text: str, taken: set[str]) -> str:
    """A valid prim name for ``text``, suffixed ``_1``, ``_2``... until not in ``taken`` (added)."""
    base = Tf.MakeValidIdentifier(text)
    name, n = base, 1
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def author_slot_overlays(
    stage: Usd.Stage, slots: Sequence[GripperSlot], scope: Sdf.Path = SLOTS_SCOPE
) -> list[str]:
    """Draw slots in the session layer, replacing earlier slot overlays (of ``scope``).

    Each slot becomes ``/__usdgrip_overlays/slots/<object>_<slot>``: the offset
    range along Up, the tilt fan and the closing axis (see
    :func:`usdgrip.views.glyphs.compute_slot_shape`), coloured by group.

    Args:
        stage: stage with a session layer.
        slots: world snapshots from :func:`usdgrip.read_gripper_slots`.
        scope: where they go (:data:`PREVIEW_SCOPE` for a dialog's preview).

    Returns:
        Paths of the overlay prims, in slot order.

    Raises:
        ValueError: no session layer, or a slot frame is degenerate.
    """
    layer = _session_layer(stage)
    mpu = _meters_per_unit(stage)
    shapes = [compute_slot_shape(slot) for slot in slots]
    colors = compute_group_colors([slot.group for slot in slots])
    paths: list[str] = []
    taken: set[str] = set()
    with Sdf.ChangeBlock():
        _ensure_root(layer, scope)
        for slot, shape, color in zip(slots, shapes, colors, strict=True):
            name = _unique_name(f"{Sdf.Path(slot.prim).name}_{slot.name}", taken)
            path = scope.AppendChild(name)
            spec = _write_curves(layer, path, shape.all, color, LINE_WIDTH, mpu)
            spec.customData = dict(
                spec.customData, **{"usdgripPrim": slot.prim, "usdgripSlot": slot.name}
            )
            paths.append(str(path))
    return paths


def author_grasp_overlays(
    stage: Usd.Stage,
    poses: ArrayLike,
    confidences: ArrayLike | None = None,
    open_width: float = DEFAULT_OPEN_WIDTH,
    labels: Sequence[str] | None = None,
    success_rates: ArrayLike | None = None,
) -> list[str]:
    """Draw grasp candidates as gripper wireframes, replacing earlier grasp overlays.

    Args:
        stage: stage with a session layer.
        poses: ``(N, 4, 4)`` world grasp poses in metres (GraspGenX: +X closing,
            +Z approach, origin between the pads), in display order (best first).
        confidences: ``(N,)`` scores coloured red (0) → green (1), or ``None`` (grey).
        open_width: drawn jaw opening in metres.
        labels: optional candidate ids stored in each prim's customData.
        success_rates: ``(N,)`` measured success rates (``usdgrip evaluate``); when given
            they colour the overlays instead of ``confidences``, on the same ramp over the
            fixed range 0 (red) → 1 (green), and each rate is stored in customData.

    Returns:
        Overlay prim paths ``/__usdgrip_overlays/grasps/gNNNN``, in pose order.

    Raises:
        ValueError: no session layer, bad pose shape, bad width or label count.
    """
    layer = _session_layer(stage)
    mpu = _meters_per_unit(stage)
    frames = compute_gripper_wireframe(poses, open_width)
    if success_rates is None:
        colors = compute_confidence_colors(confidences, len(frames))
    else:
        colors = compute_success_colors(success_rates, len(frames))
    if labels is not None and len(labels) != len(frames):
        raise ValueError(f"{len(labels)} labels for {len(frames)} poses; expected one per pose.")
    paths: list[str] = []
    with Sdf.ChangeBlock():
        _ensure_root(layer, GRASPS_SCOPE)
        for i, (segments, color) in enumerate(zip(frames, colors, strict=True)):
            path = GRASPS_SCOPE.AppendChild(f"g{i:04d}")
            spec = _write_curves(layer, path, segments, color, LINE_WIDTH, mpu)
            if labels is not None:
                spec.customData = dict(spec.customData, **{"usdgripCandidate": str(labels[i])})
            if success_rates is not None:
                rate = float(np.ravel(success_rates)[i])
                spec.customData = dict(spec.customData, **{"usdgripSuccessRate": rate})
            paths.append(str(path))
    return paths


def compute_grasp_line_segments(line: GraspLine) -> Segments:
    """``(3, 2, 3)`` world metres: p0-p1 and a pad tick across each end (perpendicular)."""
    p0, p1 = line.segment
    tick = compute_fallback_perpendicular((p1 - p0) / line.length) * (PAD_TICK / 2)
    return np.stack([[p0, p1], [p0 - tick, p0 + tick], [p1 - tick, p1 + tick]])


def author_grasp_line_overlays(
    stage: Usd.Stage, lines: Sequence[GraspLine], scope: Sdf.Path = GRASP_LINES_SCOPE
) -> list[str]:
    """Draw grasp vector lines in the session layer, replacing earlier ones (of ``scope``).

    Each usable line (two finite, distinct points) becomes
    ``/__usdgrip_overlays/grasp_lines/<name>``: the closing segment p0-p1 with a tick at
    each pad point, in SimReady's guide green, at default purpose (the asset's own
    guide-purpose curve is hidden in usdview by default). customData names the line and
    its object.

    Returns:
        Paths of the overlay prims, in line order (unusable lines are skipped). Without a
        usable line nothing is authored (earlier grasp-line overlays are removed).

    Raises:
        ValueError: no session layer.
    """
    layer = _session_layer(stage)
    mpu = _meters_per_unit(stage)
    usable = [line for line in lines if line.is_usable]
    if not usable:
        root = layer.GetPrimAtPath(OVERLAY_ROOT)
        if root is not None and scope.name in root.nameChildren:
            with Sdf.ChangeBlock():
                del root.nameChildren[scope.name]
        return []
    paths: list[str] = []
    taken: set[str] = set()
    with Sdf.ChangeBlock():
        _ensure_root(layer, scope)
        for line in usable:
            name = _unique_name(f"{Sdf.Path(line.object_path).name}_{line.name}", taken)
            path = scope.AppendChild(name)
            segments = compute_grasp_line_segments(line)
            spec = _write_curves(layer, path, segments, GRASP_LINE_COLOR, LINE_WIDTH, mpu)
            spec.customData = dict(
                spec.customData, **{"usdgripPrim": line.path, "usdgripObject": line.object_path}
            )
            paths.append(str(path))
    return paths


def compute_site_segments(site: GripperSite, meters_per_unit: float) -> Segments:
    """``(S, 2, 3)`` world metres of a gripper site: its axis curves and the open jaws.

    The forward axis and grip line as authored (site frame, stage units, placed by the
    site's world transform), and a parallel-jaw wireframe at the grasp frame opened to
    the max opening (:data:`DEFAULT_OPEN_WIDTH` without a usable one; no jaws without a
    grasp frame).
    """
    world = np.asarray(site.world_transform, dtype=np.float64)
    segments = []
    for curve in (site.forward_axis, site.grip_line):
        points = np.asarray(curve.points if curve is not None else (), dtype=np.float64)
        if points.shape[0] >= 2 and np.isfinite(points[:2]).all():
            ends = points[:2] * meters_per_unit @ world[:3, :3].T + world[:3, 3]
            segments.append(ends)
    if site.grasp_frame is not None:
        opening = site.max_opening
        usable = opening is not None and np.isfinite(opening) and 0 < opening <= 2.0
        jaws = compute_gripper_wireframe(
            site.grasp_frame, opening if usable else DEFAULT_OPEN_WIDTH
        )
        segments.extend(jaws[0])
    return np.asarray(segments, dtype=np.float64).reshape(-1, 2, 3)


def author_site_overlays(
    stage: Usd.Stage, sites: Sequence[GripperSite], scope: Sdf.Path = SITES_SCOPE
) -> list[str]:
    """Draw gripper sites (:func:`compute_site_segments`) in the session layer, in ``scope``.

    Replaces the scope's earlier overlays; a site with nothing to draw is skipped.

    Returns:
        Paths of the overlay prims, in site order.

    Raises:
        ValueError: no session layer.
    """
    layer = _session_layer(stage)
    mpu = _meters_per_unit(stage)
    paths: list[str] = []
    taken: set[str] = set()
    with Sdf.ChangeBlock():
        _ensure_root(layer, scope)
        for site in sites:
            segments = compute_site_segments(site, mpu)
            if not len(segments):
                continue
            path = scope.AppendChild(_unique_name(f"site_{site.name}", taken))
            spec = _write_curves(layer, path, segments, SITE_COLOR, LINE_WIDTH, mpu)
            spec.customData = dict(spec.customData, **{"usdgripPrim": site.path})
            paths.append(str(path))
    return paths


def set_grasp_highlight(stage: Usd.Stage, index: int | None) -> None:
    """Highlight grasp overlay ``index`` (thicker, cyan); ``None`` restores every colour."""
    layer = _session_layer(stage)
    scope = layer.GetPrimAtPath(GRASPS_SCOPE)
    if scope is None:
        return
    mpu = _meters_per_unit(stage)
    selected = f"g{index:04d}" if index is not None else None
    with Sdf.ChangeBlock():
        for child in scope.nameChildren:
            on = child.name == selected
            base = child.customData.get(BASE_COLOR_KEY, Gf.Vec3f(*HIGHLIGHT_COLOR))
            color = Gf.Vec3f(*HIGHLIGHT_COLOR) if on else base
            child.attributes["primvars:displayColor"].default = Vt.Vec3fArray([color])
            width = (HIGHLIGHT_WIDTH if on else LINE_WIDTH) / mpu
            child.attributes["widths"].default = Vt.FloatArray([width])


def set_overlays_visible(stage: Usd.Stage, visible: bool) -> None:
    """Show or hide every overlay (``visibility`` on the overlay root, session layer)."""
    layer = _session_layer(stage)
    root = layer.GetPrimAtPath(OVERLAY_ROOT)
    if root is None:
        return
    token = UsdGeom.Tokens.inherited if visible else UsdGeom.Tokens.invisible
    with Sdf.ChangeBlock():
        _set(root, "visibility", Sdf.ValueTypeNames.Token, token)


def clear_overlays(stage: Usd.Stage, scope: str | None = None) -> None:
    """Remove all overlays, or only ``scope`` (``"slots"``, ``"grasps"``, ``"grasp_lines"``)."""
    layer = _session_layer(stage)
    root = layer.GetPrimAtPath(OVERLAY_ROOT)
    if root is None:
        return
    with Sdf.ChangeBlock():
        if scope is None:
            del layer.pseudoRoot.nameChildren[OVERLAY_ROOT.name]
        elif scope in root.nameChildren:
            del root.nameChildren[scope]


def resolve_overlay_target(stage: Usd.Stage, path: str) -> tuple[str, str | None]:
    """What a selected prim stands for: ``(prim path, slot name or None)``.

    An overlay prim (a slot, grasp line or site drawn under :data:`OVERLAY_ROOT`) stands
    for what it draws: the object and the slot, the grasp line, the site (its
    ``customData``); any other path stands for itself.
    """
    text = str(path)
    layer = stage.GetSessionLayer()
    if layer is None or not Sdf.Path(text).HasPrefix(OVERLAY_ROOT):
        return text, None
    spec = layer.GetPrimAtPath(text)
    data = dict(spec.customData) if spec is not None else {}
    prim = data.get("usdgripPrim")
    if not isinstance(prim, str) or not prim:
        return text, None
    slot = data.get("usdgripSlot")
    return prim, slot if isinstance(slot, str) and slot else None


def list_overlays(stage: Usd.Stage, scope: str) -> list[str]:
    """Paths of the overlay prims in ``scope`` (``"slots"``, ``"grasps"``...), authored order."""
    layer = _session_layer(stage)
    spec = layer.GetPrimAtPath(OVERLAY_ROOT.AppendChild(scope))
    return [str(child.path) for child in spec.nameChildren] if spec is not None else []
