"""Save a fixed root layer from the viewer with the CLI's safe-write rules.

usdview has no File > Save (only *Save Overrides As*, which writes the session
layer, and *Save Flattened As*), so fixes written into the root layer would be
lost on exit. :func:`save_layer` writes the layer over its own file the way
``usdgrip validate --fix`` and ``usdgrip migrate --in-place`` do: a temp file
renamed into place (:func:`usdgrip.fileio.export_layer_atomically`). It
refuses a file without write permission and a file that changed on disk since
the viewer read it (:class:`FileState`), so nothing someone else wrote is lost.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from usdgrip.fileio import display_path, export_layer_atomically


@dataclass(frozen=True)
class FileState:
    """Size, modification time and content hash of a file, to tell whether it changed."""

    path: str
    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> FileState:
        """The file's state now.

        Raises:
            OSError: the file cannot be read.
        """
        with open(path, "rb") as stream:
            info = os.fstat(stream.fileno())
            digest = hashlib.sha256()
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
        return cls(os.fspath(path), info.st_size, info.st_mtime_ns, digest.hexdigest())


def compute_unsavable_reason(layer: Any) -> str | None:
    """Why ``layer`` (an ``Sdf.Layer``) cannot be saved over its file, or ``None`` when it can."""
    path = layer.realPath
    if layer.anonymous or not path:
        return f"{layer.identifier} is not a file (an in-memory layer); nothing to save it to"
    if Path(path).suffix.lower() == ".usdz":
        return f"{display_path(path)}: USD cannot write into a .usdz package"
    try:
        info = os.stat(path)
    except OSError as exc:
        return f"{display_path(path)}: cannot be read ({exc.strerror or exc})"
    if not (info.st_mode & 0o222 and os.access(path, os.W_OK)):
        return (
            f"{display_path(path)}: read-only (mode {stat.S_IMODE(info.st_mode):04o}); "
            "make it writable (chmod u+w) to save the fixes into it"
        )
    return None


def save_layer(layer: Any, opened: FileState | None) -> FileState:
    """Write ``layer`` over its own file, atomically, unless that file changed since ``opened``.

    Args:
        layer: the ``Sdf.Layer`` to save (a root layer opened from a file).
        opened: the file's state when it was read; ``None`` skips the check.

    Returns:
        The file's state after saving (the ``opened`` of the next save).

    Raises:
        ValueError: the layer cannot be saved (in memory, ``.usdz``, read-only file).
        OSError: the file changed on disk since ``opened`` (nothing is written), or
            the write failed (the file is left as it was).
    """
    reason = compute_unsavable_reason(layer)
    if reason is not None:
        raise ValueError(reason)
    path = layer.realPath
    if opened is not None:
        now = FileState.read(path)
        if (now.size, now.mtime_ns, now.sha256) != (opened.size, opened.mtime_ns, opened.sha256):
            raise OSError(
                f"{display_path(path)}: changed on disk since usdview read it; not saved, so "
                "what was written there is kept: File > Reopen Stage, then fix again"
            )
    export_layer_atomically(layer, path)
    layer.Reload()  # the file now holds the layer: clears its dirty flag
    return FileState.read(path)
