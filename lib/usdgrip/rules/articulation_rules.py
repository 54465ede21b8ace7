"""GR rules on a gripper site's articulation (issue 24): GR.015, GR.016, GR.017.

Each reads the site's articulation once through
:func:`usdgrip.usd.articulation.read_gripper_articulation` (``SiteContext.articulation``,
shared by the three and by the sites of one run through the context's ``scope_cache``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from usdgrip.rules.contexts import SiteContext
from usdgrip.rules.records import Finding, rule

#: Rigid bodies named in GR.017's message before "and N more".
_LISTED = 3


@rule(
    "GR.015",
    "gripper-opening-mismatch",
    "warning",
    scope="site",
    title="Max opening matches the fingers",
    summary=(
        "For a site under an articulation, the pad gap with the finger joints at their open "
        "limits should equal gripper:maxOpening within articulation_opening_tolerance_m "
        "(default 0.005 m)."
    ),
    message="Gripper site {prim}: the fingers open to a different width than gripper:maxOpening.",
    tags=("grippers", "physics", "articulation"),
)
def check_opening_mismatch(context: SiteContext) -> Iterator[Finding]:
    """GR.015: ``|opening at the open limit - max opening| <= tolerance``."""
    site = context.site
    opening = site.max_opening
    if opening is None or not (math.isfinite(opening) and opening > 0):
        return  # GR.004
    report = context.articulation.opening
    if report is None or report.opening_open is None:
        return
    gap = report.opening_open
    tolerance = context.params["articulation_opening_tolerance_m"]
    if abs(gap - opening) <= tolerance:
        return
    joints = context.articulation.joints
    limits = ", ".join(
        f"{joints[i].name} at its {limit} limit"
        for i, limit in zip(report.driven, report.open_limits, strict=False)
    )
    yield Finding(
        f"the pads are {gap:.4g} m apart with the fingers open ({limits}) but "
        f"{site.max_opening_source} is {opening:.4g} m: {abs(gap - opening):.4g} m apart, more "
        f"than articulation_opening_tolerance_m {tolerance:g} m; expected "
        f"{site.max_opening_source} = {gap:.4g} (or check the joint limits and the pad colliders)"
    )


@rule(
    "GR.016",
    "gripper-finger-colliders",
    "failure",
    scope="site",
    title="Fingers have colliders",
    summary=(
        "When the asset declares an articulation (PhysicsArticulationRootAPI), every finger "
        "(the links a joint moves from the palm) must have a collider (PhysicsCollisionAPI)."
    ),
    message="Gripper site {prim}: a finger of the articulation has no collider.",
    tags=("grippers", "physics", "articulation"),
)
def check_finger_colliders(context: SiteContext) -> Iterator[Finding]:
    """GR.016: each finger chain of a declared articulation has a collider on some link."""
    articulation = context.articulation
    if not articulation.declared or articulation.opening is None:
        return
    links, joints = articulation.links, articulation.joints
    for finger in articulation.opening.fingers:
        if finger.has_colliders:
            continue
        names = ", ".join(f"<{links[i].path}>" for i in finger.links)
        moved = ", ".join(f"<{joints[i].path}>" for i in finger.joints) or "its joints"
        yield Finding(
            f"finger {names} (moved by {moved}) has no collider: no prim with "
            "PhysicsCollisionAPI under its rigid bodies, so in simulation it passes through "
            f"what it grasps (the articulation is declared by <{articulation.articulation_root}>);"
            " expected a collider (e.g. a Cube or Mesh with PhysicsCollisionAPI) under its pad link"
        )


@rule(
    "GR.017",
    "gripper-site-rigid-body-ancestor",
    "failure",
    scope="site",
    title="Site under the gripper's rigid body",
    summary=(
        "When the gripper asset has rigid bodies, the site must have a rigid-body ancestor "
        "(the palm, SimReady FET028's gripper base) so that it moves with the gripper."
    ),
    message="Gripper site {prim} has no rigid-body ancestor in an asset with rigid bodies.",
    tags=("grippers", "physics", "simready"),
)
def check_site_rigid_body_ancestor(context: SiteContext) -> Iterator[Finding]:
    """GR.017: a site in an asset with rigid bodies lies under one of them."""
    articulation = context.articulation
    if not articulation.has_rigid_bodies or articulation.rigid_body_ancestor is not None:
        return
    bodies = articulation.rigid_bodies
    shown = ", ".join(f"<{path}>" for path in bodies[:_LISTED])
    more = f" and {len(bodies) - _LISTED} more" if len(bodies) > _LISTED else ""
    count = f"{len(bodies)} rigid bod{'y' if len(bodies) == 1 else 'ies'}"
    yield Finding(
        f"no ancestor of the site has PhysicsRigidBodyAPI, while the asset "
        f"<{articulation.root_path}> has {count} ({shown}{more}): in simulation the site does "
        "not move with the gripper, and SimReady's FET028 fails its precheck (no rigid-body "
        "ancestor); expected the site under the palm link (the rigid body the fingers are "
        "jointed to)"
    )
