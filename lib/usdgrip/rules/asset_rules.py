"""GA rules: the asset as a whole (composition)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

import numpy as np
from pxr import Pcp, Usd, UsdGeom

from usdgrip.errors import GripperError
from usdgrip.rules.contexts import StageContext
from usdgrip.rules.records import Finding, rule
from usdgrip.usd.sites import read_gripper_site
from usdgrip.usd.slots import read_gripper_slots
from usdgrip.usd.stage import (
    get_meters_per_unit,
    get_meters_per_unit_problem,
    get_up_axis_problem,
)

_UNRESOLVED = {
    Pcp.ErrorType_InvalidAssetPath: "reference or payload",
    Pcp.ErrorType_InvalidSublayerPath: "sublayer",
}
_ASSET = re.compile(r"@([^@]+)@")
_ARC = re.compile(r"for (reference|payload) introduced by")


@rule(
    "GA.001",
    "asset-unresolved",
    "error",
    scope="stage",
    title="Asset paths resolve",
    summary=(
        "Every reference, payload and sublayer must resolve; otherwise validation of "
        "that part of the asset is incomplete."
    ),
    message="{prim}: a reference, payload or sublayer cannot be resolved.",
    tags=("asset",),
    reads=("sites",),
)
def check_asset_unresolved(context: StageContext) -> Iterator[Finding]:
    """GA.001: composition errors for asset paths that cannot be opened, naming the path."""
    seen: set[tuple[str, str]] = set()
    for error in context.stage.GetCompositionErrors():
        kind = _UNRESOLVED.get(error.errorType)
        if kind is None:
            continue
        text = str(error)
        match = _ASSET.search(text)
        asset = match.group(1) if match else "?"
        arc = _ARC.search(text)
        if arc:
            kind = arc.group(1)
        prim = str(error.rootSite.path) if kind != "sublayer" else "/"
        if (prim, asset) in seen:
            continue
        seen.add((prim, asset))
        where = "the whole stage" if prim == "/" else f"prims at and under <{prim}>"
        over = context.stage.GetPrimAtPath(prim) if prim != "/" else None
        authored = _authored_asset_path(over, asset) if over else None
        label = (
            f"@{authored}@ (looked for at {asset})"
            if authored and authored != asset
            else f"@{asset}@"
        )
        state = (
            f" (<{prim}> is an undefined `over` without it)"
            if over and not over.HasDefiningSpecifier()
            else ""
        )
        sites = _sites_under(context, over) if over else []
        shown = ", ".join(f"<{p}>" for p in sites[:_MAX_LISTED])
        more = f" and {len(sites) - _MAX_LISTED} more" if len(sites) > _MAX_LISTED else ""
        affected = f"; gripper site(s) under it, checked without it: {shown}{more}" if sites else ""
        yield Finding(
            f"{kind} {label} cannot be resolved{state}; validation of {where} is "
            f"incomplete: only what this file authors is checked{affected}. Fix the asset path "
            "or make the file available",
            prim=prim,
        )


_MAX_LISTED = 5


def _authored_asset_path(prim: Usd.Prim, absolute: str) -> str | None:
    """The asset path as authored in a reference/payload whose anchored path is ``absolute``."""
    for spec in prim.GetPrimStack():
        for items in (spec.payloadList, spec.referenceList):
            for item in items.GetAddedOrExplicitItems():
                if item.assetPath and (
                    item.assetPath == absolute
                    or spec.layer.ComputeAbsolutePath(item.assetPath) == absolute
                ):
                    return item.assetPath
    return None


def _sites_under(context: StageContext, prim: Usd.Prim) -> list[str]:
    """Paths of gripper sites at or under ``prim`` (what this file still authors there)."""
    top = prim.GetPath()
    return [str(c.prim.GetPath()) for c in context.sites if c.prim.GetPath().HasPrefix(top)]


#: Sites and slots GA.002 describes by name; the rest are counted.
_UNITS_EXAMPLES = 2


@rule(
    "GA.002",
    "stage-units-unauthored",
    "warning",
    scope="stage",
    title="Stage units authored",
    summary=(
        "A stage with gripper sites or grasp slots should author metersPerUnit and upAxis; "
        "otherwise USD assumes 0.01 m per unit (centimetres) and Y up."
    ),
    message="{prim}: metersPerUnit or upAxis is not authored; USD's fallbacks are assumed.",
    tags=("asset", "units"),
    reads=("sites", "slots", "lines"),
)
def check_stage_units(context: StageContext) -> Iterator[Finding]:
    """GA.002: metersPerUnit/upAxis unauthored on a stage with sites or slots, with the lengths."""
    stage = context.stage
    unauthored = [key for key in ("metersPerUnit", "upAxis") if not stage.HasAuthoredMetadata(key)]
    if not unauthored:
        return
    sites = [(c.prim, c.markers) for c in context.sites]
    slotted = [c.prim for c in context.slotted]
    mpu = get_meters_per_unit(stage)
    lines = []
    if get_meters_per_unit_problem(mpu) is None:  # GR.005/GS.001 report an unusable value
        try:
            lines = context.grasp_lines.lines
        except GripperError:
            lines = []
    if not sites and not slotted and not lines:
        return  # no gripper data: the units change nothing usdgrip reads
    assumed = []
    if "metersPerUnit" in unauthored:
        unit = " (centimetres)" if mpu == 0.01 else ""
        assumed.append(f"metersPerUnit is not authored, so USD assumes {mpu:g} m per unit{unit}")
    if "upAxis" in unauthored:
        assumed.append(f'upAxis is not authored, so USD assumes "{UsdGeom.GetStageUpAxis(stage)}"')
    found = f"{len(sites)} gripper site(s) and {len(slotted)} slotted object(s)"
    if lines:
        found = f"{len(sites)} gripper site(s), {len(slotted)} slotted object(s) and " + (
            f"{len(lines)} grasp vector line(s)"
        )
    lengths = []
    if "metersPerUnit" in unauthored and get_meters_per_unit_problem(mpu) is None:
        lengths = _describe_lengths(sites, slotted, mpu)
        lengths += [
            f"grasp line <{line.path}> {line.length:.4g} m ({line.length / mpu:.4g} m if the "
            "author meant metres)"
            for line in lines[:_UNITS_EXAMPLES]
            if math.isfinite(line.length)
        ]
    read = f"; read so: {'; '.join(lengths)}" if lengths else ""
    expected = " and ".join(
        {"metersPerUnit": "metersPerUnit (1 for an asset authored in metres)", "upAxis": "upAxis"}[
            key
        ]
        for key in unauthored
    )
    yield Finding(
        f"{', and '.join(assumed)}, for {found}{read}. Expected {expected} authored in the root "
        'layer\'s metadata (e.g. metersPerUnit = 1, upAxis = "Z")',
        prim="/",
    )


def _describe_lengths(
    sites: list[tuple[Usd.Prim, tuple[str, ...]]], slotted: list[Usd.Prim], mpu: float
) -> list[str]:
    """What the first sites' curves and slots' centres read as, and would be in metres."""
    described = []
    for prim, markers in sites[:_UNITS_EXAMPLES]:
        site = read_gripper_site(prim, markers, frame=False, strict=False)
        parts = [
            f"{label} {curve.length:.4g} m ({curve.length / mpu:.4g} m if the author meant metres)"
            for label, curve in (("grip line", site.grip_line), ("forward axis", site.forward_axis))
            if curve is not None and math.isfinite(curve.length)
        ]
        if site.max_opening is not None:
            parts.append(f"beside max opening {site.max_opening:.4g} m (metres as authored)")
        if parts:
            described.append(f"site <{site.path}> {', '.join(parts)}")
    for prim in slotted[:_UNITS_EXAMPLES]:
        try:
            slots = read_gripper_slots(prim)
        except GripperError:
            continue  # GS rules report it
        for slot in slots[:1]:
            here = _format_point(np.asarray(slot.center_local, dtype=np.float64) * mpu)
            meant = _format_point(slot.center_local)
            described.append(
                f"slot <{slot.prim}> {slot.name!r} centre {here} m in the object's frame "
                f"({meant} m if the author meant metres), up range {slot.up_range_local:.4g} m "
                "(metres as authored)"
            )
    more = len(sites) + len(slotted) - min(len(sites), _UNITS_EXAMPLES)
    more -= min(len(slotted), _UNITS_EXAMPLES)
    if more > 0 and described:
        described.append(f"and {more} more")
    return described


def _format_point(point) -> str:
    return "(" + ", ".join(f"{float(c):.4g}" for c in point) + ")"


@rule(
    "GA.003",
    "stage-up-axis",
    "failure",
    scope="stage",
    title="Stage up axis is Y or Z",
    summary=(
        'An authored upAxis must be "Y" or "Z" (upper case, the only values OpenUSD defines); '
        "usdgrip's commands refuse any other."
    ),
    message='{prim}: upAxis is authored but is neither "Y" nor "Z".',
    tags=("asset", "units"),
)
def check_stage_up_axis(context: StageContext) -> Iterator[Finding]:
    """GA.003: the authored upAxis, through the one up-axis check the readers use."""
    problem = get_up_axis_problem(context.stage)
    if problem is None:
        return
    axis = str(UsdGeom.GetStageUpAxis(context.stage))
    guess = axis.strip().upper()
    hint = f' (did you mean "{guess}"?)' if guess in ("Y", "Z") else ""
    yield Finding(
        f"{problem}{hint}; plan, evaluate, render and migrate refuse the stage (exit 2) and "
        "other tools may fall back to Y or guess",
        prim="/",
    )
