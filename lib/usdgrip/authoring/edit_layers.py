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
from dataclasses import dataclass
from pathlib import Path

from pxr import Sdf, Tf, Usd

from usdgrip.fileio import (
    FileSnapshot,
    UsdaComments,
    describe_file_kind,
    display_path,
    find_usda_comments,
)

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


def find_asset_sublayer(
    edits_layer: Sdf.Layer, asset: str | Path, anchor: str | Path | None = None
) -> str | None:
    """The sublayer path of ``edits_layer`` that is ``asset`` (``None``: it has none).

    ``anchor``: the file an anonymous copy of the layer was read from (relative paths).
    """
    folder = os.path.dirname(os.path.abspath(anchor)) if anchor is not None else None
    for path in edits_layer.subLayerPaths:
        if folder is None:
            absolute = edits_layer.ComputeAbsolutePath(path)
        else:
            absolute = path if os.path.isabs(path) else os.path.join(folder, path)
        if _same_file(absolute, asset):
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


#: customLayerData key of a working edits layer: the file it is saved to.
EDITS_FILE_KEY = "usdgripEditsFile"


@dataclass
class EditsLayerFile:
    """An edits layer file attached to an open stage (the dialogs' "Edit layer file" target).

    :attr:`layer` holds only the new opinions, without sublayers, and is a sublayer of
    the stage's session layer: the viewer shows the asset with the edits while the asset
    file and its root layer stay untouched. :meth:`compute_file_layer` is what
    ``--layer`` writes: the opinions, the asset sublayered by a path relative to the
    file (an existing file's own sublayers and metadata kept), the asset root layer's
    stage metadata in a new one.
    """

    path: Path
    """The edits file (``.usda``/``.usdc``/``.usd``), new or existing."""
    asset: str
    """The asset's root layer file it sublayers."""
    layer: Sdf.Layer
    """The working layer (anonymous): the edits only."""
    base: Sdf.Layer
    """The file as read (or as created): its metadata and sublayers, no prims."""
    snapshot: FileSnapshot | None
    """The existing file when it was read (``None`` for a new one): Save refuses a change."""
    comments: UsdaComments | None
    created: bool

    def compute_file_layer(self) -> Sdf.Layer:
        """The layer :meth:`path` gets: :attr:`base`'s metadata and sublayers, the edits."""
        out = Sdf.Layer.CreateAnonymous("usdgrip-edits.usda")
        out.TransferContent(self.layer)
        for key in self.base.pseudoRoot.ListInfoKeys():
            if not key.startswith("subLayer") and key != "customLayerData":
                out.pseudoRoot.SetInfo(key, self.base.pseudoRoot.GetInfo(key))
        data = dict(self.base.customLayerData)
        out.customLayerData = data
        out.subLayerPaths = list(self.base.subLayerPaths)
        if self.created:
            return export_edits_layer(out, self.asset, self.path)
        return out


def attach_edits_layer(stage: Usd.Stage, edits: str | Path) -> EditsLayerFile:
    """Open (or create) the edits layer file ``edits`` of ``stage``'s asset, shown on the stage.

    The same checks as ``usdgrip author --layer``: not the asset itself, a regular USD
    file name (no pipe, device or folder), writable when it exists (read-only refused),
    an existing file that sublayers the asset. Its opinions are copied into a working
    layer inserted first in the session layer's sublayers; the caller keeps the record
    (a viewer: one per file, :func:`detach_edits_layer` when done).

    Raises:
        ValueError: the stage's root layer is not a file, or ``edits`` is refused (why: a
            name that is not UTF-8 too).
        OSError: the file cannot be read, or its folder does not exist.
    """
    from usdgrip.fileio import check_output, check_utf8_name

    check_utf8_name(edits)  # USD names layers in UTF-8
    root = stage.GetRootLayer()
    asset = root.realPath
    if root.anonymous or not asset:
        raise ValueError(
            f"{root.identifier}: the stage is not opened from a file; an edits layer "
            "sublayers the asset file: save the stage first"
        )
    path = Path(os.path.abspath(edits))
    exists = check_edits_path(asset, path)
    check_output(path)
    session = stage.GetSessionLayer()
    if session is None:
        raise ValueError(f"{display_path(asset)}: the stage has no session layer")
    if exists:
        snapshot = FileSnapshot.take(path)
        comments = find_usda_comments(path)
        try:
            read = Sdf.Layer.OpenAsAnonymous(str(path))
        except Tf.ErrorException as exc:
            from usdgrip.usd.layer_files import describe_usd_error

            raise ValueError(
                f"{display_path(path)}: not a USD layer USD can read ({describe_usd_error(exc)}); "
                "give a new file name or an edits layer of this asset"
            ) from None
        if read is None:
            raise ValueError(f"{display_path(path)}: USD could not read it as a layer")
        if find_asset_sublayer(read, asset, anchor=path) is None:
            raise ValueError(describe_foreign_edits(read, asset, path))
        base = _without_prims(read)
        working = Sdf.Layer.CreateAnonymous("usdgrip-edits.usda")
        working.TransferContent(read)
        working.subLayerPaths = []
    else:
        snapshot, comments = None, None
        base = create_edits_layer(root, asset)
        working = Sdf.Layer.CreateAnonymous("usdgrip-edits.usda")
    working.customLayerData = {EDITS_FILE_KEY: str(path)}
    session.subLayerPaths.insert(0, working.identifier)
    return EditsLayerFile(path, asset, working, base, snapshot, comments, not exists)


def _without_prims(layer: Sdf.Layer) -> Sdf.Layer:
    """A copy of ``layer``'s metadata and sublayers, without its prims."""
    base = Sdf.Layer.CreateAnonymous("usdgrip-edits-base.usda")
    base.TransferContent(layer)
    with Sdf.ChangeBlock():
        for name in [spec.name for spec in base.rootPrims]:
            del base.rootPrims[name]
    return base


def detach_edits_layer(stage: Usd.Stage, edits: EditsLayerFile) -> None:
    """Take the working layer off the stage's session layer (its unsaved edits are dropped)."""
    session = stage.GetSessionLayer()
    if session is not None and edits.layer.identifier in session.subLayerPaths:
        session.subLayerPaths.remove(edits.layer.identifier)


def save_edits_layer(edits: EditsLayerFile) -> list[str]:
    """Write the edits layer file with the CLI's rules; returns notes (comments not kept).

    Atomic (temp + rename); a read-only file, one that is no longer a regular file, one
    changed on disk since it was read (or first saved), and a new file that someone else
    created meanwhile are refused, nothing written.

    Raises:
        ValueError, OSError: naming the file.
    """
    from usdgrip.fileio import check_output
    from usdgrip.usd.layer_files import export_layer

    exists = check_edits_path(edits.asset, edits.path)
    if edits.created and exists:
        raise FileExistsError(
            f"{display_path(edits.path)}: created by someone else since the edits were "
            "begun; not overwritten: save into another file (or Reopen and extend it)"
        )
    check_output(edits.path)
    written = edits.compute_file_layer()
    notes = export_layer(written, edits.path, unchanged=edits.snapshot, comments=edits.comments)
    if edits.created:  # from now on the file exists and is extended (its sublayer path kept)
        edits.base, edits.created = _without_prims(written), False
    edits.snapshot = FileSnapshot.take(edits.path)
    return notes
