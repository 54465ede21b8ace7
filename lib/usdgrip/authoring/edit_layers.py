"""Edits layers: a layer that holds only new opinions and sublayers the asset.

``usdgrip author ... --layer EDITS.usda`` (and the dialogs' "edit layer" target)
author into EDITS, never into the asset: EDITS's ``subLayers`` names the asset (a
path relative to EDITS), so opening EDITS composes the asset with the edits on top
(EDITS is the stronger layer). A new EDITS copies the asset root layer's stage
metadata (``defaultPrim``, ``metersPerUnit``, ``upAxis``, ``kilogramsPerUnit`` and the
time codes), since a stage takes those from its root layer only. An existing EDITS
must already sublayer the asset; it is extended.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pxr import Sdf

from usdgrip.fileio import describe_file_kind, display_path

#: The root-layer metadata a stage reads from its root layer only (copied into a new EDITS).
STAGE_METADATA = (
    "defaultPrim",
    "metersPerUnit",
    "upAxis",
    "kilogramsPerUnit",
    "timeCodesPerSecond",
    "framesPerSecond",
    "startTimeCode",
    "endTimeCode",
)
EDITS_SUFFIXES = (".usda", ".usdc", ".usd")


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_edits_path(asset: str | Path, edits: str | Path) -> bool:
    """Refuse an edits layer path that cannot be one; True when the file exists.

    Raises:
        ValueError: ``edits`` is the asset itself, not a regular file (a named pipe, a
            device, a folder), or not named ``.usda``/``.usdc``/``.usd``.
    """
    shown = display_path(edits)
    if _same_file(asset, edits):
        raise ValueError(
            f"{shown}: --layer is the input file itself; an edits layer is a separate file "
            "that sublayers it (use --in-place to edit the file)"
        )
    if Path(edits).suffix.lower() not in EDITS_SUFFIXES:
        raise ValueError(
            f"{shown}: an edits layer is a USD layer file named {', '.join(EDITS_SUFFIXES)} "
            f"(suffix {Path(edits).suffix or 'none'!r}; a .usdz package cannot be written)"
        )
    try:
        mode = os.stat(edits).st_mode
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ValueError(f"{shown}: cannot be read: {exc.strerror}") from None
    kind = "a folder" if stat.S_ISDIR(mode) else describe_file_kind(mode)
    if kind is not None:
        raise ValueError(
            f"{shown}: is {kind}; an edits layer is read and rewritten: give a regular "
            "USD file (new or existing)"
        )
    return True


def create_edits_layer(asset_layer: Sdf.Layer, asset: str | Path) -> Sdf.Layer:
    """A new (anonymous) edits layer sublayering ``asset`` by its absolute path.

    :func:`export_edits_layer` writes the path relative to the edits file.
    """
    layer = Sdf.Layer.CreateAnonymous("usdgrip-edits.usda")
    for key in STAGE_METADATA:
        if asset_layer.pseudoRoot.HasInfo(key):
            layer.pseudoRoot.SetInfo(key, asset_layer.pseudoRoot.GetInfo(key))
    layer.subLayerPaths.append(os.path.abspath(asset))
    return layer


def find_asset_sublayer(edits_layer: Sdf.Layer, asset: str | Path) -> str | None:
    """The sublayer path of ``edits_layer`` that is ``asset`` (``None``: it has none)."""
    for path in edits_layer.subLayerPaths:
        if _same_file(edits_layer.ComputeAbsolutePath(path), asset):
            return path
    return None


def describe_foreign_edits(edits_layer: Sdf.Layer, asset: str | Path, edits: str | Path) -> str:
    """Why an existing EDITS file is no edits layer of ``asset`` (one line)."""
    found = ", ".join(f"@{p}@" for p in edits_layer.subLayerPaths) or "nothing"
    return (
        f"{display_path(edits)}: sublayers {found}, not {display_path(asset)}; an edits layer "
        "holds one asset's edits and sublayers it: choose another --layer file (a new one is "
        "created)"
    )


def export_edits_layer(layer: Sdf.Layer, asset: str | Path, edits: str | Path) -> Sdf.Layer:
    """``layer`` as it is written to ``edits``: the asset's sublayer path made relative to it."""
    out = Sdf.Layer.CreateAnonymous("usdgrip-edits.usda")
    out.TransferContent(layer)
    absolute = os.path.abspath(asset)
    relative = os.path.relpath(absolute, os.path.dirname(os.path.abspath(edits)))
    if not relative.startswith(".."):
        relative = f"./{relative}"
    out.subLayerPaths = [relative if p == absolute else p for p in out.subLayerPaths]
    return out
