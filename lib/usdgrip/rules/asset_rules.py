"""GA rules: the asset as a whole (composition)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from pxr import Pcp, Usd

from usdgrip.rules.contexts import StageContext
from usdgrip.rules.records import Finding, rule
from usdgrip.usd.discovery import compute_site_markers
from usdgrip.usd.stage import TRAVERSAL

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
        sites = _sites_under(over) if over else []
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


def _sites_under(prim: Usd.Prim) -> list[str]:
    """Paths of gripper sites at or under ``prim`` (what this file still authors there)."""
    return [str(p.GetPath()) for p in Usd.PrimRange(prim, TRAVERSAL) if compute_site_markers(p)]
