"""GR rules: gripper sites (SPEC §2, seed 000).

GR.001–GR.004 carry the codes of NVIDIA SimReady's PhysicsGrippers
capability, extended to the seed's naming (prefixed child names win over
unprefixed ones); GR.005–GR.012 are usdgrip's; GR.013 and GR.014 check SimReady's
runtime site requirements (GR.ISA.001, MUJOCO.GR.001) on sites that apply the
runtime's schema (IsaacSiteAPI, MjcSiteAPI), never on plain usdgrip sites. Every rule reads the site
once through :func:`usdgrip.usd.sites.read_gripper_site` (shared by the rules
of one site) and checks what is authored, never a fallback.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from pxr import Sdf, Usd, UsdGeom, Vt

from usdgrip.rules.contexts import SiteContext
from usdgrip.rules.records import Finding, Fix, rule
from usdgrip.site_limits import get_grip_force_limit_problem, get_max_opening_problem
from usdgrip.site_records import CurveInfo
from usdgrip.usd.names import (
    FORWARD_AXIS_NAMES,
    GRIP_LINE_NAMES,
    ISAAC_DESCRIPTION_ATTR,
    ISAAC_SITE_API,
    MAX_GRIP_FORCE_ATTRS,
    MJC_GROUP_ATTR,
    MJC_SITE_API,
    SITE_API,
)
from usdgrip.usd.stage import read_attribute_value

_CURVE_ROLES = {
    "forward": (FORWARD_AXIS_NAMES, "approach direction"),
    "grip": (GRIP_LINE_NAMES, "axis of the graspable tube; length = pad width"),
}
_CURVE_HOWTO = (
    'a linear BasisCurves with points = [p0, p1], curveVertexCounts = [2], type = "linear"'
)


def _curve(context: SiteContext, role: str) -> CurveInfo | None:
    site = context.site
    return site.forward_axis if role == "forward" else site.grip_line


@rule(
    "GR.001",
    "gripper-site",
    "failure",
    scope="site",
    title="Gripper site is an Xform",
    summary="A prim discovered as a gripper site must be an Xform.",
    message="Gripper site {prim} is not an Xform.",
    tags=("grippers", "simready"),
    simready="GR.001",
)
def check_gripper_site(context: SiteContext) -> Iterator[Finding]:
    """GR.001: the site prim's type is Xform (or derived from it)."""
    prim = context.prim
    if prim.IsA(UsdGeom.Xform):
        return
    type_name = str(prim.GetTypeName())
    if not type_name and not prim.HasDefiningSpecifier():
        # An untyped `over`: its type would come from a missing reference/payload (GA.001).
        return
    markers = ", ".join(context.markers)
    yield Finding(
        f"prim is discovered as a gripper site (markers: {markers}) but its type is "
        f"{type_name or 'empty (no type)'!r}; expected Xform: make the site an Xform, or "
        "remove the site markers from this prim"
    )


def _check_curve_present(context: SiteContext, role: str) -> Iterator[Finding]:
    names, meaning = _CURVE_ROLES[role]
    curve = _curve(context, role)
    if curve is None:
        yield Finding(
            f"no child {names[0]} ({meaning}; {names[1]} also accepted); expected {_CURVE_HOWTO}"
        )
        return
    if curve.type_name != "BasisCurves":
        yield Finding(
            f"child {curve.child} is a {curve.type_name or 'typeless prim'!r}; expected "
            f"BasisCurves ({_CURVE_HOWTO})"
        )
        return
    if "points" in curve.problems:
        yield Finding(f"child {curve.child}: {curve.problems['points']}")
        return
    if curve.point_count < 2:
        shadow = (
            f" ({curve.shadowed} is ignored because the prefixed {curve.child} wins)"
            if curve.shadowed
            else ""
        )
        yield Finding(
            f"child {curve.child} has {curve.point_count} point(s); expected at least 2{shadow}"
        )


@rule(
    "GR.002",
    "gripper-forward-axis",
    "failure",
    scope="site",
    title="Gripper forward axis",
    summary=(
        "Every gripper site must contain a child BasisCurves prim gripper_forward_axis "
        "(forward_axis accepted) with at least 2 points: the approach direction."
    ),
    message="Gripper site {prim} has no BasisCurves gripper_forward_axis with at least 2 points.",
    tags=("grippers", "simready"),
    simready="GR.002",
)
def check_forward_axis(context: SiteContext) -> Iterator[Finding]:
    """GR.002: ``gripper_forward_axis`` (else ``forward_axis``), BasisCurves, ≥ 2 points."""
    yield from _check_curve_present(context, "forward")


@rule(
    "GR.003",
    "gripper-grip-line",
    "failure",
    scope="site",
    title="Gripper grip line",
    summary=(
        "Every gripper site must contain a child BasisCurves prim gripper_grip_line "
        "(grip_line accepted) with at least 2 points: the axis of the graspable tube."
    ),
    message="Gripper site {prim} has no BasisCurves gripper_grip_line with at least 2 points.",
    tags=("grippers", "simready"),
    simready="GR.003",
)
def check_grip_line(context: SiteContext) -> Iterator[Finding]:
    """GR.003 exactly as seed 000: a BasisCurves child with ≥ 2 points (prefixed wins)."""
    yield from _check_curve_present(context, "grip")


@rule(
    "GR.004",
    "gripper-max-opening",
    "failure",
    scope="site",
    title="Gripper max opening",
    summary="Every gripper site must author a finite maximum opening > 0 m (at most 2 m).",
    message="Gripper site {prim} has no finite max opening > 0 m.",
    tags=("grippers", "simready"),
    simready="GR.004",
)
def check_max_opening(context: SiteContext) -> Iterator[Finding]:
    """GR.004: ``gripper:maxOpening`` (else legacy) authored, finite, > 0."""
    site = context.site
    if site.max_opening_source in site.problems:
        yield Finding(site.problems[site.max_opening_source])
    elif site.max_opening is None:
        yield Finding(
            "no max opening authored (looked for gripper:maxOpening, gripper_maxOpening, "
            "custom:maxOpening); expected float gripper:maxOpening = <finite value > 0> (metres) "
            "with GripperSiteAPI applied"
        )
    else:
        problem = get_max_opening_problem(
            site.max_opening, site.max_opening_source, context.params["max_opening_max_m"]
        )
        if problem:
            yield Finding(problem)


@rule(
    "GR.005",
    "gripper-axis-degenerate",
    "failure",
    scope="site",
    title="Gripper axes are not degenerate",
    summary="The forward axis and grip line directions (p1 - p0) must be non-zero and finite.",
    message="Gripper site {prim} has a zero-length or non-finite axis curve.",
    tags=("grippers",),
)
def check_axis_degenerate(context: SiteContext) -> Iterator[Finding]:
    """GR.005: ``p1 - p0`` of each curve with ≥ 2 points has a finite, non-zero length."""
    problem = context.site.problems.get("metersPerUnit")
    if problem is not None:  # zero collapses every axis, a negative value mirrors them
        yield Finding(f"{problem}; the axis directions in metres are unusable")
        return
    for role in ("forward", "grip"):
        curve = _curve(context, role)
        if curve is None or curve.point_count < 2 or curve.direction is not None:
            continue
        p0, p1 = (tuple(float(c) for c in p) for p in curve.points[:2])
        what = "not finite" if not np.all(np.isfinite(curve.points[:2])) else "zero length"
        yield Finding(
            f"{curve.child}: p1 - p0 is {what} (p0 = {p0}, p1 = {p1}); expected two distinct "
            "finite points giving the direction"
        )


@rule(
    "GR.006",
    "gripper-axes-orthogonal",
    "warning",
    scope="site",
    title="Gripper axes near perpendicular",
    summary=(
        "Suggested (never part of GR.003): the forward axis and grip line should be "
        "perpendicular so planners get a stable closing axis."
    ),
    message="Gripper site {prim}: forward axis and grip line are far from perpendicular.",
    tags=("grippers",),
)
def check_axes_orthogonal(context: SiteContext) -> Iterator[Finding]:
    """GR.006: angle between forward and grip line within tolerance of 90°."""
    site = context.site
    forward, grip = site.forward_axis, site.grip_line
    if forward is None or grip is None or forward.direction is None or grip.direction is None:
        return
    cosine = abs(float(np.dot(forward.direction, grip.direction)))
    deviation = math.degrees(math.asin(min(1.0, cosine)))
    tolerance = context.params["orthogonality_tolerance_deg"]
    if deviation > tolerance:
        angle = math.degrees(math.acos(max(-1.0, min(1.0, cosine))))
        yield Finding(
            f"{forward.child} and {grip.child} are {angle:.1f}° apart ({deviation:.1f}° from "
            f"perpendicular); expected 90° ± {tolerance:g}° (parameter "
            "orthogonality_tolerance_deg). The closing axis forward x grip_line is unstable."
        )


def _author_curve_type(path: Sdf.Path) -> callable:
    def author(stage: Usd.Stage) -> None:
        UsdGeom.BasisCurves(stage.GetPrimAtPath(path)).CreateTypeAttr().Set(UsdGeom.Tokens.linear)

    return author


def _author_vertex_counts(path: Sdf.Path, count: int) -> callable:
    def author(stage: Usd.Stage) -> None:
        curves = UsdGeom.BasisCurves(stage.GetPrimAtPath(path))
        curves.CreateCurveVertexCountsAttr().Set(Vt.IntArray([count]))

    return author


@rule(
    "GR.007",
    "gripper-curve-form",
    "warning",
    scope="site",
    title="Gripper curve form",
    summary=(
        'Axis curves should author type = "linear" and curveVertexCounts consistent with '
        "their points."
    ),
    message='Gripper site {prim}: an axis curve is not type = "linear" or its '
    "curveVertexCounts do not match its points.",
    tags=("grippers",),
)
def check_curve_form(context: SiteContext) -> Iterator[Finding]:
    """GR.007: authored ``type`` linear and ``sum(curveVertexCounts) == len(points)``."""
    for role in ("forward", "grip"):
        curve = _curve(context, role)
        if curve is None or curve.type_name != "BasisCurves":
            continue
        if "type" in curve.problems:
            yield Finding(f'{curve.child}: {curve.problems["type"]}; expected type = "linear"')
        elif curve.curve_type is None:
            fixes = (
                (
                    Fix(
                        f'author type = "linear" on <{curve.path}>',
                        context.prim.GetStage(),
                        _author_curve_type(Sdf.Path(curve.path)),
                    ),
                )
                if context.can_author_on(curve.path)
                else ()
            )
            yield Finding(
                f'{curve.child}: type is not authored (BasisCurves falls back to "cubic"); '
                'expected uniform token type = "linear"',
                fixes,
            )
        elif curve.curve_type != "linear":
            yield Finding(f'{curve.child}: type is "{curve.curve_type}"; expected "linear"')
        n = curve.point_count
        if "curveVertexCounts" in curve.problems:
            yield Finding(f"{curve.child}: {curve.problems['curveVertexCounts']}")
        elif "points" in curve.problems:
            pass  # the points are unusable (GR.002/GR.003 report them): nothing to count
        elif curve.vertex_counts is None:
            fixes = (
                (
                    Fix(
                        f"author curveVertexCounts = [{n}] on <{curve.path}>",
                        context.prim.GetStage(),
                        _author_vertex_counts(Sdf.Path(curve.path), n),
                    ),
                )
                if n >= 2 and context.can_author_on(curve.path)
                else ()
            )
            yield Finding(
                f"{curve.child}: curveVertexCounts is not authored; expected [{n}] for its "
                f"{n} point(s)",
                fixes,
            )
        elif sum(curve.vertex_counts) != n or any(c < 2 for c in curve.vertex_counts):
            yield Finding(
                f"{curve.child}: curveVertexCounts is {list(curve.vertex_counts)} for {n} "
                f"point(s); expected counts of at least 2 summing to {n}, e.g. [{n}]"
            )


@rule(
    "GR.008",
    "gripper-legacy-authoring",
    "info",
    scope="site",
    title="Legacy gripper authoring",
    summary=(
        "Unprefixed curve names, both prefixed and unprefixed curves, or legacy attributes "
        "beside the schema; `usdgrip migrate` rewrites them."
    ),
    message="Gripper site {prim} uses legacy authoring; run `usdgrip migrate`.",
    tags=("grippers", "migration"),
)
def check_legacy_authoring(context: SiteContext) -> Iterator[Finding]:
    """GR.008: legacy names and attributes that ``usdgrip migrate`` rewrites."""
    site = context.site
    for role in ("forward", "grip"):
        names, _ = _CURVE_ROLES[role]
        curve = _curve(context, role)
        if curve is None:
            continue
        if curve.child != names[0]:
            yield Finding(
                f"curve child uses the unprefixed name {curve.child}; expected {names[0]} "
                "(run `usdgrip migrate` to rename)"
            )
        if curve.shadowed:
            yield Finding(
                f"both {curve.child} and {curve.shadowed} are present; only {curve.child} is "
                f"read and {curve.shadowed} is ignored (run `usdgrip migrate` to remove it)"
            )
    if "socketType(misspelt)" in site.markers:
        yield Finding(
            "declared through the misspelt simready:attactment:socketType; expected "
            "simready:attachment:socketType or GripperSiteAPI (run `usdgrip migrate`)"
        )
    if site.legacy_attributes and context.declared:
        schema_attrs = {
            "gripper_maxOpening": "gripper:maxOpening",
            "custom:maxOpening": "gripper:maxOpening",
            "gripper_maxPayload": "gripper:maxPayload",
        }
        for name in site.legacy_attributes:
            target = schema_attrs[name]
            used = name in (site.max_opening_source, site.max_payload_source)
            state = (
                "read because the schema attribute is not authored"
                if used
                else (f"ignored because {target} wins")
            )
            yield Finding(
                f"legacy attribute {name} authored ({state}); expected {target} from "
                "GripperSiteAPI (run `usdgrip migrate`)"
            )


@rule(
    "GR.009",
    "gripper-grip-line-meaning",
    "warning",
    scope="site",
    title="Grip line length is the pad width",
    summary=(
        "A grip line at least as long as the max opening was probably authored with the "
        "older jaw-span meaning; its length is the grip pad width."
    ),
    message="Gripper site {prim}: grip line length >= max opening (older jaw-span meaning?).",
    tags=("grippers", "migration"),
)
def check_grip_line_meaning(context: SiteContext) -> Iterator[Finding]:
    """GR.009: ``|p1 - p0|`` of the grip line (world m) < ratio x max opening."""
    site = context.site
    grip, opening = site.grip_line, site.max_opening
    if grip is None or grip.direction is None or opening is None:
        return
    if not (math.isfinite(opening) and opening > 0):
        return
    ratio = context.params["grip_line_meaning_ratio"]
    if grip.length >= ratio * opening:
        yield Finding(
            f"{grip.child} is {grip.length:.4g} m long, >= {'' if ratio == 1 else f'{ratio:g} x '}"
            f"max opening {opening:.4g} m: probably authored with the older meaning (jaw span). "
            "The grip line is the pad width along the graspable tube axis, typically "
            "perpendicular to the closing direction; expected a length < max opening"
        )


@rule(
    "GR.010",
    "gripper-max-payload",
    "warning",
    scope="site",
    title="Gripper max payload",
    summary="When authored, the max payload must be finite and > 0 kg.",
    message="Gripper site {prim}: max payload is not a finite value > 0 kg.",
    tags=("grippers",),
)
def check_max_payload(context: SiteContext) -> Iterator[Finding]:
    """GR.010: authored ``gripper:maxPayload`` (else legacy) finite and > 0."""
    # The reader judged it (``_read_limit``): a bad value reads as not authored.
    site = context.site
    if site.max_payload_source in site.problems:
        yield Finding(site.problems[site.max_payload_source])


def _apply_site_api(path: Sdf.Path) -> callable:
    def author(stage: Usd.Stage) -> None:
        stage.GetPrimAtPath(path).ApplyAPI(SITE_API)

    return author


@rule(
    "GR.011",
    "gripper-site-undeclared",
    "info",
    scope="site",
    title="Gripper site declared",
    summary=(
        "A site found only through legacy markers (neither GripperSiteAPI nor "
        'socketType = "Gripper"); fix: apply GripperSiteAPI.'
    ),
    message="Gripper site {prim} is not declared; apply GripperSiteAPI.",
    tags=("grippers", "migration"),
)
def check_site_declared(context: SiteContext) -> Iterator[Finding]:
    """GR.011: GripperSiteAPI or socketType = "Gripper" declares the site."""
    if context.declared:
        return
    prim = context.prim
    fixes: tuple[Fix, ...] = ()
    if context.editable and prim.CanApplyAPI(SITE_API):
        fixes = (
            Fix(
                f"apply GripperSiteAPI to <{prim.GetPath()}>",
                prim.GetStage(),
                _apply_site_api(prim.GetPath()),
            ),
        )
    yield Finding(
        f"site found only through legacy markers ({', '.join(context.markers)}); expected "
        'GripperSiteAPI (or simready:attachment:socketType = "Gripper") so every tool finds it',
        fixes,
    )


@rule(
    "GR.012",
    "gripper-grip-force",
    "warning",
    scope="site",
    title="Gripper max grip force",
    summary="When authored, the max grip force must be finite, > 0 N and at most 100 kN.",
    message="Gripper site {prim}: max grip force is not a finite value > 0 N.",
    tags=("grippers", "physics"),
)
def check_grip_force(context: SiteContext) -> Iterator[Finding]:
    """GR.012: authored ``gripper:maxGripForce`` finite, > 0 and at most MAX_GRIP_FORCE."""
    # The reader judged it (``_read_limit``): a bad value reads as not authored.
    problem = context.site.problems.get(MAX_GRIP_FORCE_ATTRS[0])
    if problem is not None:
        yield Finding(problem)
    force = context.site.max_grip_force
    if force is not None and (limit := get_grip_force_limit_problem(force)) is not None:
        yield Finding(f"{limit} (planning and physics use the default grip force instead)")


@rule(
    "GR.013",
    "gripper-isaac-site",
    "failure",
    scope="site",
    title="Isaac site described",
    summary=(
        "A gripper site that applies IsaacSiteAPI must author a non-empty isaac:Description "
        "(SimReady GR.ISA.001); sites without IsaacSiteAPI are not checked."
    ),
    message="Gripper site {prim} applies IsaacSiteAPI without a non-empty isaac:Description.",
    tags=("grippers", "simready", "isaac"),
    simready="GR.ISA.001",
)
def check_isaac_site(context: SiteContext) -> Iterator[Finding]:
    """GR.013: IsaacSiteAPI applied → ``isaac:Description`` a non-empty string."""
    if ISAAC_SITE_API not in context.api_schemas:
        return  # not an Isaac-format site: nothing Isaac Sim's discovery needs
    example = f'string {ISAAC_DESCRIPTION_ATTR} = "Parallel-jaw grasp centre"'
    attr = context.prim.GetAttribute(ISAAC_DESCRIPTION_ATTR)
    if not attr or not attr.HasAuthoredValue():
        yield Finding(
            f"{ISAAC_SITE_API} is applied but {ISAAC_DESCRIPTION_ATTR} is not authored (the "
            "schema's fallback is empty); expected a non-empty string saying the site's role, "
            f"e.g. {example}, so Isaac Sim's site tooling can describe it"
        )
        return
    value, problem = read_attribute_value(attr, "text")
    if problem is not None:
        yield Finding(f"{problem} ({ISAAC_SITE_API} is applied); author e.g. {example}")
    elif not str(value).strip():
        yield Finding(
            f"{ISAAC_DESCRIPTION_ATTR} is {str(value)!r} (empty); expected a non-empty string "
            f"saying the site's role, e.g. {example}"
        )


@rule(
    "GR.014",
    "gripper-mujoco-site",
    "failure",
    scope="site",
    title="MuJoCo site group",
    summary=(
        "On a gripper site that applies MjcSiteAPI, an authored mjc:group must be a "
        "non-negative integer (SimReady MUJOCO.GR.001); sites without MjcSiteAPI are not checked."
    ),
    message="Gripper site {prim}: mjc:group is not a non-negative integer.",
    tags=("grippers", "simready", "mujoco"),
    simready="MUJOCO.GR.001",
)
def check_mujoco_site(context: SiteContext) -> Iterator[Finding]:
    """GR.014: MjcSiteAPI applied → an authored ``mjc:group`` an integer >= 0."""
    if MJC_SITE_API not in context.api_schemas:
        return  # not a MuJoCo-format site
    attr = context.prim.GetAttribute(MJC_GROUP_ATTR)
    if not attr or not attr.HasAuthoredValue():
        return  # optional: the schema's fallback is group 0
    expected = f"uniform int {MJC_GROUP_ATTR} = 0 (MuJoCo's site groups 0-5 toggle visibility)"
    value, problem = read_attribute_value(attr, "int")
    if problem is not None:
        yield Finding(f"{problem} ({MJC_SITE_API} is applied); author e.g. {expected}")
    elif value < 0:
        yield Finding(
            f"{MJC_GROUP_ATTR} is {value}; expected a non-negative integer, e.g. {expected}"
        )
