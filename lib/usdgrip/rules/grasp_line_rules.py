"""GSP / GP rules: SimReady graspable props: grasp vector lines (``grasp_identifier*``), colliders.

Stage-scope rules (``CheckStage`` in the adapters): the stage's one walk (its grasp
line prims, rigid bodies and colliders, :attr:`usdgrip.rules.contexts.StageContext.scan`)
and one read of each object's surface are shared by the rules of a run. See
``docs/graspable-props.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from usdgrip.errors import GripperError
from usdgrip.grasp_line_geometry import (
    GRASP_LINE_PREFIX,
    GraspLine,
)
from usdgrip.rules.contexts import StageContext
from usdgrip.rules.records import Finding, rule
from usdgrip.usd.physics import find_physics_material

_LINE_EXAMPLE = (
    f'def BasisCurves "{GRASP_LINE_PREFIX}_01" {{ point3f[] points = [p0, p1]; '
    'int[] curveVertexCounts = [2]; token type = "linear" }'
)


def _point(values: np.ndarray) -> str:
    return "(" + ", ".join(f"{v + 0.0:.4g}" for v in values) + ")"


@rule(
    "GSP.001",
    "graspable-vector-line",
    "failure",
    scope="stage",
    title="A graspable prop has a grasp vector line",
    summary=(
        "A stage that declares itself a graspable prop (a prim named grasp_identifier* and a "
        "rigid body) must have at least one BasisCurves named grasp_identifier* with at least 2 "
        "points under its default prim (SimReady GSP.001)."
    ),
    message="{prim}: no grasp vector line with at least 2 points under the default prim.",
    tags=("graspable", "simready"),
    simready="GSP.001",
    reads=("lines",),
)
def check_graspable_vector_line(context: StageContext) -> Iterator[Finding]:
    """GSP.001: SimReady's check, on stages that declare themselves graspable props only."""
    scan = context.grasp_lines
    if not scan.declares_graspable:
        return
    if scan.default_prim is None:
        yield Finding(
            "the stage has no default prim, so its grasp vector lines cannot be found (SimReady "
            "looks under the default prim); set the layer's defaultPrim to the prop's root prim",
            prim="/",
        )
        return
    curves = [line for line in scan.lines if line.layout == "curve"]
    if not curves:
        known = {line.path for line in curves}
        others = [path for path in scan.identifiers if path not in known][:3]
        described = []
        for path in others:
            prim = context.stage.GetPrimAtPath(path)
            where = "" if path.startswith(scan.default_prim + "/") else ", outside the default prim"
            described.append(f"<{path}> ({prim.GetTypeName() or 'untyped'}{where})")
        found = f"; found only {', '.join(described)}" if described else ""
        yield Finding(
            f"no BasisCurves named {GRASP_LINE_PREFIX}* under the default prim "
            f"<{scan.default_prim}>{found}; expected at least one grasp vector line crossing "
            f"the prop where the jaws close, e.g. {_LINE_EXAMPLE}",
            prim=scan.default_prim,
        )
        return
    for line in curves:
        if line.point_count < 2:
            why = f" ({line.problems['points']})" if "points" in line.problems else ""
            yield Finding(
                f"grasp vector line has {line.point_count} point(s){why}; expected at least 2 "
                "(p0 and p1, where the two pads touch)",
                prim=line.path,
            )


@rule(
    "GP.001",
    "grasp-line-misses-object",
    "failure",
    scope="stage",
    title="A grasp vector line crosses its object",
    summary=(
        "The segment p0-p1 of a grasp vector line must meet the surface of its object "
        "(collision or render geometry): SimReady's 'the line must intersect the asset'."
    ),
    message="{prim}: the grasp vector line does not meet its object's surface.",
    tags=("graspable",),
    reads=("lines",),
)
def check_grasp_line_misses_object(context: StageContext) -> Iterator[Finding]:
    """GP.001: segment p0-p1 against every triangle of the object's non-guide geometry."""
    for line in context.grasp_lines.lines:
        if not line.is_usable:
            if not np.isfinite(line.object_transform).all():
                # An object that cannot be placed: GP.002 sees the line's world points
                # unusable; the object's surface says why (one finding, never silence).
                surface = context.get_object_surface(line.object_path)
                if isinstance(surface, GripperError):
                    yield Finding(
                        f"grasp vector line cannot meet its object <{line.object_path}>: {surface}",
                        prim=line.path,
                    )
            continue  # GSP.001 / GP.002 say why
        hits = context.get_surface_points(line)
        if isinstance(hits, GripperError):
            yield Finding(
                f"grasp vector line cannot meet its object <{line.object_path}>: {hits}",
                prim=line.path,
            )
        elif hits is None:
            p0, p1 = line.segment
            surface = context.get_object_surface(line.object_path)
            yield Finding(
                f"grasp vector line from {_point(p0)} to {_point(p1)} (world, m) does not meet "
                f"the surface of its object <{line.object_path}> ({len(surface.faces)} "
                f"triangles of {len(surface.source_paths)} prim(s)); expected p0 and p1 on "
                "either side of the part to grasp (the pads start there and close along the line)",
                prim=line.path,
            )


@rule(
    "GP.002",
    "grasp-line-form",
    "warning",
    scope="stage",
    title="A grasp vector line is a straight two-point segment",
    summary=(
        "A grasp vector line should hold exactly two finite, distinct points and be "
        'type = "linear": only p0 and p1 are used, as the two pad contact points.'
    ),
    message="{prim}: the grasp vector line is not a two-point linear segment.",
    tags=("graspable",),
    reads=("lines",),
)
def check_grasp_line_form(context: StageContext) -> Iterator[Finding]:
    """GP.002: read problems, < 2 or > 2 points, non-finite points, zero length, type."""
    for line in context.grasp_lines.lines:
        yield from _form_findings(line)


def _form_findings(line: GraspLine) -> Iterator[Finding]:
    for _, problem in sorted(line.problems.items()):
        yield Finding(f"grasp vector line: {problem}; it reads as not authored", prim=line.path)
    count = line.point_count
    if count < 2:
        yield Finding(
            f"grasp vector line has {count} point(s); expected 2 (p0 and p1, the two pad "
            "contact points)",
            prim=line.path,
        )
    elif count > 2:
        yield Finding(
            f"grasp vector line has {count} points; only the first two (the pad contact points) "
            "are used: keep p0 and p1 only",
            prim=line.path,
        )
    finite = np.all(np.isfinite(line.points_world), axis=1)
    if count and not finite.all():
        index = int(np.flatnonzero(~finite)[0])
        yield Finding(
            f"grasp vector line points[{index}] is not finite in world space; expected finite "
            "coordinates (check the points and the transforms above the curve)",
            prim=line.path,
        )
    elif count >= 2 and not line.length > 0.0:
        yield Finding(
            f"grasp vector line p0 and p1 coincide at {_point(line.points_world[0])} (world, m); "
            "expected two distinct points across the part to grasp",
            prim=line.path,
        )
    if line.curve_type != "linear":
        found = (
            "not authored (the schema's fallback is cubic)"
            if line.curve_type is None
            else repr(line.curve_type)
        )
        yield Finding(
            f'grasp vector line type is {found}; expected type = "linear" (a straight segment '
            "from p0 to p1)",
            prim=line.path,
        )


@rule(
    "GP.003",
    "grasp-line-width",
    "warning",
    scope="stage",
    title="A grasp vector line describes a width a parallel jaw can hold",
    summary=(
        "The distance between the surfaces a grasp vector line's two ray casts land on (from p0 "
        "towards p1 and back, as FET005 does) should lie between grasp_line_min_width_m and "
        "grasp_line_max_width_m (default 0.002 m to 0.085 m)."
    ),
    message="{prim}: the grasp vector line's width is outside the parallel-jaw range.",
    tags=("graspable",),
    reads=("lines",),
)
def check_grasp_line_width(context: StageContext) -> Iterator[Finding]:
    """GP.003: the width the jaws would close on, against the width parameters."""
    low = context.params["grasp_line_min_width_m"]
    high = context.params["grasp_line_max_width_m"]
    for line in context.grasp_lines.lines:
        if not line.is_usable:
            continue
        hits = context.get_surface_points(line)
        if hits is None or isinstance(hits, GripperError):
            continue  # GP.001 reports the miss or why the object has no surface
        width = hits.width
        if width > high:
            yield Finding(
                f"grasp vector line lands on surfaces {width:.4g} m apart (from "
                f"{_point(hits.first)} to {_point(hits.second)}); expected at most "
                f"grasp_line_max_width_m = {high:g} m (a typical parallel-jaw opening): grasp a "
                "narrower part, or raise the parameter for a wider gripper",
                prim=line.path,
            )
        elif width < low or not math.isfinite(width):
            yield Finding(
                f"grasp vector line lands on surfaces {width:.4g} m apart (at "
                f"{_point(hits.first)}); expected at least grasp_line_min_width_m = {low:g} m: the "
                "line only grazes the object (an edge or a thin wall)",
                prim=line.path,
            )


@rule(
    "GP.004",
    "graspable-collider-material",
    "failure",
    scope="stage",
    title="A graspable prop's colliders have a physics material",
    summary=(
        "On a stage that declares itself a graspable prop, every collider (PhysicsCollisionAPI) "
        "under the default prim must resolve a bound material with PhysicsMaterialAPI, binding "
        "purpose physics, then allPurpose (SimReady PMT.001, which FET005 requires)."
    ),
    message="{prim}: a collider of a graspable prop has no physics material bound.",
    tags=("graspable", "simready", "physics"),
    reads=("lines", "colliders"),
    simready="PMT.001",
)
def check_collider_material(context: StageContext) -> Iterator[Finding]:
    """GP.004: each collider under the default prim resolves a physics material."""
    lines = context.grasp_lines
    if not lines.declares_graspable or lines.default_prim is None:
        return  # not a graspable prop; without a default prim GSP.001 says so
    top = context.stage.GetPrimAtPath(lines.default_prim).GetPath()
    for collider in sorted(context.scan.colliders, key=lambda prim: prim.GetPath()):
        if not collider.GetPath().HasPrefix(top):
            continue
        _, problem = find_physics_material(collider)
        if problem is not None:
            yield Finding(
                f"collider of the graspable prop <{lines.default_prim}>: {problem}; expected a "
                "Material with PhysicsMaterialAPI (physics:staticFriction, "
                "physics:dynamicFriction) bound with rel material:binding:physics: grasp "
                "physics takes the friction from it",
                prim=str(collider.GetPath()),
            )
