"""Reading gripper sites: :func:`read_gripper_site` and :func:`find_gripper_sites`."""

from __future__ import annotations

import math
from collections.abc import Container, Sequence

import numpy as np
from pxr import Usd, UsdGeom

from usdgrip.errors import GripperError
from usdgrip.frames import ZERO_LENGTH_TOLERANCE, GraspFrame, compute_grasp_frame
from usdgrip.site_limits import get_site_limit_problem
from usdgrip.site_records import CurveInfo, GripperSite
from usdgrip.usd.discovery import PrimFacts, _iter_sites, compute_site_markers, read_prim_facts
from usdgrip.usd.names import (
    FORWARD_AXIS_NAMES,
    GRIP_LINE_NAMES,
    LEGACY_SITE_ATTRS,
    MAX_GRIP_FORCE_ATTRS,
    MAX_OPENING_ATTRS,
    MAX_PAYLOAD_ATTRS,
)
from usdgrip.usd.stage import (
    compute_world_transform,
    find_undefined_ancestor,
    get_meters_per_unit,
    get_meters_per_unit_problem,
    get_stage_name,
    gf_to_numpy,
    prim_get_attribute,
    prim_get_authored_names,
    prim_get_child,
    prim_is_a,
    read_attribute_value,
    read_first_float,
    require_prim,
    require_stage,
)


def find_gripper_sites(stage: Usd.Stage, *, strict: bool = True) -> list[GripperSite]:
    """Read every gripper site on the stage (see :func:`read_gripper_site`).

    Raises:
        GripperError: ``strict`` and a site has an unusable value (``strict=False``: the
            site is returned with its ``problems``, e.g. for a panel that lists sites).
        TypeError: ``stage`` is not a ``Usd.Stage``.
    """
    require_stage(stage)
    cache = UsdGeom.XformCache(Usd.TimeCode.Default())
    mpu = get_meters_per_unit(stage)
    return [
        read_gripper_site(
            prim, markers, xform_cache=cache, facts=facts, meters_per_unit=mpu, strict=strict
        )
        for prim, markers, facts in _iter_sites(stage)
    ]


_XFORMABLE = UsdGeom.Xformable
_CURVE_TYPE_FALLBACK = "cubic"  # UsdGeomBasisCurves' fallback for `type`


def _read_curve(
    site: Usd.Prim,
    site_path: str,
    names: Sequence[str],
    rotation: list[list[float]],
    children: Sequence[str],
) -> CurveInfo | None:
    """The first of ``names`` among the site's ``children``; ``rotation``: world[:3, :3] rows."""
    present = [name for name in names if name in children]
    if not present:
        return None
    child_name = present[0]
    child = prim_get_child(site, child_name)
    # One query for the authored names: unauthored attributes are not looked up (points,
    # xformOpOrder and curveVertexCounts have no fallback, so skipping them reads the same
    # values). A handful of names: a list is as fast to search as a set is to build.
    authored = prim_get_authored_names(child)
    problems: dict[str, str] = {}

    def read(name: str, kind: str, fallback: object = None):
        if name not in authored:
            return None
        value, problem = read_attribute_value(prim_get_attribute(child, name), kind, None, fallback)
        if problem is not None:
            problems[name] = problem
        return value

    raw = read("points", "vec3[]")
    points = np.asarray(raw if raw is not None else (), dtype=np.float64).reshape(-1, 3)
    flat = points.ravel().tolist()
    if not prim_is_a(child, _XFORMABLE):
        pass  # no transform of its own: the points as authored
    elif "xformOpOrder" in authored:
        local = gf_to_numpy(_XFORMABLE(child).GetLocalTransformation())
        points = points @ local[:3, :3].T + local[:3, 3]
        flat = points.ravel().tolist()
    else:  # no transform: the points as authored (-0.0 -> 0.0; inf stays inf, not inf * 0)
        points = points + 0.0
        flat = [x + 0.0 for x in flat[:6]]
    direction, length = None, 0.0
    if len(flat) >= 6:
        # Plain floats: numpy costs more per call than these few products.
        x0, y0, z0, x1, y1, z1 = flat[:6]
        dx, dy, dz = x1 - x0, y1 - y0, z1 - z0
        (a, b, c), (d, e, f), (g, h, i) = rotation
        wx, wy, wz = a * dx + b * dy + c * dz, d * dx + e * dy + f * dz, g * dx + h * dy + i * dz
        length = math.sqrt(wx * wx + wy * wy + wz * wz)
        if math.isfinite(length) and length > ZERO_LENGTH_TOLERANCE:
            direction = np.array((wx / length, wy / length, wz / length))
    # A declared `type` without a value reads the fallback: not authored.
    curve_type = read("type", "text", _CURVE_TYPE_FALLBACK)
    has_type = (
        curve_type != _CURVE_TYPE_FALLBACK or prim_get_attribute(child, "type").HasAuthoredValue()
    )
    if not has_type:
        curve_type = None
    counts = read("curveVertexCounts", "int[]")  # no fallback: None unless authored
    return CurveInfo(
        child_name,
        f"{site_path}/{child_name}",
        child.GetTypeName(),
        points,
        direction,
        length,
        str(curve_type) if curve_type is not None else None,
        # Through the buffer: iterating a Vt array element by element in Python is 10x slower.
        tuple(memoryview(counts).tolist()) if counts is not None else None,
        present[1] if len(present) > 1 else None,
        problems,
    )


#: Curve values the readers do not use (a curve's direction is ``p1 - p0``): unusable ones
#: are GR.007 warnings and read as not authored.
_IGNORABLE_CURVE_VALUES = ("type", "curveVertexCounts")


def read_gripper_site(
    prim: Usd.Prim,
    markers: tuple[str, ...] | None = None,
    *,
    xform_cache: UsdGeom.XformCache | None = None,
    frame: bool = True,
    facts: PrimFacts | None = None,
    meters_per_unit: float | None = None,
    strict: bool = True,
) -> GripperSite:
    """Read one gripper site into an immutable :class:`GripperSite`.

    Prefixed names win: ``gripper:maxOpening`` over ``gripper_maxOpening`` over
    ``custom:maxOpening``; ``gripper_forward_axis`` over ``forward_axis``;
    ``gripper_grip_line`` over ``grip_line``. Problems that still let the site
    be read (degenerate axes, an undefined ``over`` above it, a grip line
    authored with the older jaw-span meaning) become ``warnings``.

    Reads of many sites of one unchanged stage may share an ``xform_cache``
    (default time) and pass the stage's ``meters_per_unit``; ``facts`` are the
    prim's :func:`read_prim_facts` when the caller has them already.
    ``frame=False`` skips the grasp frame (``grasp_frame`` is ``None`` and its
    warnings are not added): the validation rules check the axes, not the frame.

    Values are read at the default time code. A value of the wrong type, or one
    that is only time-sampled, is unusable and reads as not authored, the site's
    ``problems`` saying why; so is a max payload or max grip force that is not
    finite or <= 0. ``strict`` (the default) raises for one the readers need (max
    opening, curve points, ``metersPerUnit``: their rules fail); an unusable max
    payload, max grip force or curve ``type``/``curveVertexCounts`` (warning rules
    GR.010, GR.012, GR.007) is a ``warnings`` entry instead. ``strict=False`` (the
    validation rules, panels) never raises.

    Raises:
        GripperError: ``strict`` and an unusable value the readers need (names file,
            prim, attribute and the type found).
        TypeError: ``prim`` is not a ``Usd.Prim``.
        ValueError: ``prim`` is not valid.
    """
    if facts is None:  # the fast path (rules, find_gripper_sites) passes facts of a valid prim
        require_prim(prim)
    facts = read_prim_facts(prim) if facts is None else facts
    markers = compute_site_markers(prim, facts) if markers is None else markers
    if meters_per_unit is None:
        meters_per_unit = get_meters_per_unit(prim.GetStage())
    world = compute_world_transform(prim, xform_cache=xform_cache, meters_per_unit=meters_per_unit)
    path, authored, children = facts
    warnings: list[str] = []
    undefined = find_undefined_ancestor(prim)
    if undefined is not None:
        warnings.append(
            f"<{prim.GetPath()}> sits under an undefined `over` <{undefined.GetPath()}>: the "
            "geometry it refers to is probably missing (unresolved reference or payload); "
            "check the asset paths of its layers"
        )
    max_opening, opening_source, opening_problem = read_first_float(
        prim, MAX_OPENING_ATTRS, authored
    )
    max_payload, payload_source, payload_problem = _read_limit(
        prim, MAX_PAYLOAD_ATTRS, authored, "kg"
    )
    max_grip_force, force_source, force_problem = _read_limit(
        prim, MAX_GRIP_FORCE_ATTRS, authored, "N"
    )
    problems = {
        name: problem
        for name, problem in (
            ("metersPerUnit", get_meters_per_unit_problem(meters_per_unit)),
            (opening_source, opening_problem),
            (payload_source, payload_problem),
            (force_source, force_problem),
        )
        if problem is not None
    }
    rotation = world[:3, :3].tolist()
    forward = _read_curve(prim, path, FORWARD_AXIS_NAMES, rotation, children)
    grip = _read_curve(prim, path, GRIP_LINE_NAMES, rotation, children)
    for curve in (forward, grip):
        if curve is not None:
            problems.update(
                (f"{curve.child}.{n}", f"{curve.child}: {p}") for n, p in curve.problems.items()
            )
    # Values no reader needs (the rules only warn about them) read as not authored, with
    # a warning; the rest refuse, as their failure rules do (no failure => readable site).
    ignorable = {payload_source, force_source} | {
        f"{curve.child}.{name}"
        for curve in (forward, grip)
        if curve is not None
        for name in _IGNORABLE_CURVE_VALUES
    }
    refused = [p for name, p in problems.items() if name not in ignorable]
    if refused and strict:
        raise GripperError(f"{get_stage_name(prim.GetStage())}: <{path}>: {'; '.join(refused)}")
    warnings.extend(
        f"{p}; read as not authored" for name, p in problems.items() if name in ignorable
    )
    grasp_frame = None
    if not frame:
        pass
    elif forward is None or forward.direction is None:
        warnings.append(
            "no usable forward axis (gripper_forward_axis with 2 distinct finite points); "
            "no grasp frame"
        )
    else:
        frame = compute_site_frame(world, forward, grip)
        grasp_frame = frame.matrix
        warnings.extend(frame.warnings)
    if (
        grip is not None
        and max_opening is not None
        and math.isfinite(max_opening)
        and max_opening > 0
        and grip.length >= max_opening
    ):
        warnings.append(
            f"grip line length {grip.length:.4g} m >= max opening {max_opening:.4g} m: probably "
            "authored with the older meaning (jaw span); the grip line is the pad width along "
            "the graspable tube axis"
        )
    legacy = tuple(
        n for n in LEGACY_SITE_ATTRS if n in authored and prim_get_attribute(prim, n).IsAuthored()
    )
    return GripperSite(
        path,
        prim.GetTypeName(),
        markers,
        undefined is None,
        world,
        max_opening,
        opening_source,
        max_payload,
        payload_source,
        forward,
        grip,
        grasp_frame,
        tuple(warnings),
        legacy,
        problems,
        max_grip_force,
    )


def compute_site_frame(world: np.ndarray, forward: CurveInfo, grip: CurveInfo | None) -> GraspFrame:
    """The grasp frame G of a site from its world transform and curves (SPEC 2).

    ``forward`` must have a direction; a missing or degenerate grip line falls back as
    :func:`usdgrip.frames.compute_grasp_frame` documents.
    """
    grip_direction = (
        grip.direction if grip is not None and grip.direction is not None else np.zeros(3)
    )
    return compute_grasp_frame(world[:3, 3], forward.direction, grip_direction)


def _read_limit(
    prim: Usd.Prim, names: Sequence[str], authored: Container[str], unit: str
) -> tuple[float | None, str | None, str | None]:
    """An optional limit (max payload, max grip force): ``(value, source, problem)``.

    A value that is not finite or <= 0 is unusable like one of the wrong type: its
    rule (GR.010, GR.012) only warns, so it reads as not authored, ``problem`` saying why.
    """
    value, source, problem = read_first_float(prim, names, authored)
    if value is not None and problem is None:
        problem = get_site_limit_problem(value, source, unit)
        if problem is not None:
            value = None
    return value, source, problem
