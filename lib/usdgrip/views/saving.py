"""Save a fixed root layer from the viewer with the CLI's safe-write rules.

usdview has no File > Save (only *Save Overrides As*, which writes the session
layer, and *Save Flattened As*), so fixes written into the root layer would be
lost on exit. :func:`save_layer` writes the layer over its own file exactly as
``usdgrip validate --fix`` does (:func:`usdgrip.usd.layer_files.export_layer`):
a temp file renamed into place, never over a read-only file
(:func:`usdgrip.fileio.check_writable`) nor over a file that changed on disk
since the viewer read it (:class:`usdgrip.fileio.FileSnapshot`), and the
file's leading comment block kept.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from usdgrip.fileio import FileSnapshot, check_writable, display_path, find_usda_comments

if TYPE_CHECKING:
    from usdgrip.authoring.edit_layers import EditsLayerFile


def take_layer_snapshot(layer: Any) -> FileSnapshot | None:
    """The state of ``layer``'s file now (``None`` for an in-memory or unreadable layer)."""
    path = layer.realPath if layer is not None else ""
    try:
        return FileSnapshot.take(path) if path and os.path.isfile(path) else None
    except OSError:
        return None


def compute_unsavable_reason(layer: Any) -> str | None:
    """Why ``layer`` (an ``Sdf.Layer``) cannot be saved over its file, or ``None`` when it can."""
    path = layer.realPath
    if layer.anonymous or not path:
        return f"{layer.identifier} is not a file (an in-memory layer); nothing to save it to"
    if Path(path).suffix.lower() == ".usdz":
        return f"{display_path(path)}: USD cannot write into a .usdz package"
    try:
        check_writable(path)
    except OSError as exc:
        return str(exc)
    return None


def save_layer(layer: Any, opened: FileSnapshot | None) -> tuple[FileSnapshot | None, list[str]]:
    """Write ``layer`` over its own file, atomically, unless that file changed since ``opened``.

    Args:
        layer: the ``Sdf.Layer`` to save (a root layer opened from a file).
        opened: the file's snapshot when it was read; ``None`` skips that check.

    Returns:
        The file's snapshot after saving (the ``opened`` of the next save), and notes
        for the user (comments that could not be kept).

    Raises:
        ValueError: the layer cannot be saved (in memory, ``.usdz``, read-only file).
        OSError: the file changed on disk since ``opened`` (nothing is written), or
            the write failed (the file is left as it was).
    """
    from usdgrip.usd.layer_files import export_layer

    reason = compute_unsavable_reason(layer)
    if reason is not None:
        raise ValueError(reason)
    path = layer.realPath
    notes = export_layer(layer, path, unchanged=opened, comments=find_usda_comments(path))
    layer.Reload()  # the file now holds the layer: clears its dirty flag
    return take_layer_snapshot(layer), notes


class EditLayerFiles:
    """The edits layer files a viewer's dialogs author into (one per file and stage).

    :meth:`attach` opens or creates the file the first time a dialog authors into it
    (:func:`usdgrip.authoring.edit_layers.attach_edits_layer`: ``--layer``'s checks) and
    hands back the same one after; a replaced stage (Reload) has a new session layer,
    so its files are attached again. The validation panel's **Save** writes them
    (:func:`usdgrip.authoring.edit_layers.save_edits_layer`).
    """

    def __init__(self) -> None:
        self._files: list[EditsLayerFile] = []

    def attach(self, stage: Any, path: str | os.PathLike[str]) -> EditsLayerFile:
        """The edits layer file ``path`` on ``stage``, attached on first use.

        Raises:
            ValueError, OSError: the file is refused (a folder, a pipe, read-only, not an
                edits layer of this asset...), naming it.
        """
        from usdgrip.authoring.edit_layers import attach_edits_layer

        wanted = os.path.abspath(path)
        for edits in self.on(stage):
            if str(edits.path) == wanted:
                return edits
        edits = attach_edits_layer(stage, wanted)
        self._files.append(edits)
        return edits

    def on(self, stage: Any) -> list[EditsLayerFile]:
        """The files attached to ``stage`` (its session layer holds their working layers)."""
        session = stage.GetSessionLayer() if stage is not None else None
        held = set(session.subLayerPaths) if session is not None else set()
        return [edits for edits in self._files if edits.layer.identifier in held]

    def find(self, layer: Any) -> EditsLayerFile | None:
        """The file whose working layer is ``layer`` (``None``: not an edits layer file)."""
        return next((e for e in self._files if e.layer == layer), None)
