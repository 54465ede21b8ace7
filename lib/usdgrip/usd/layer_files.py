"""Writing an ``Sdf.Layer`` to disk by :mod:`usdgrip.fileio`'s rules (atomic or streamed)."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from pxr import Tf

from usdgrip.fileio import (
    STANDARD_OUTPUT,
    FileSnapshot,
    UsdaComments,
    display_path,
    insert_leading_comments,
    write_output,
)


def export_layer(
    layer: Any,
    path: str | os.PathLike[str],
    *,
    unchanged: FileSnapshot | None = None,
    comments: UsdaComments | None = None,
) -> list[str]:
    """Write an ``Sdf.Layer`` to ``path`` as :func:`write_output` writes (atomic or streamed).

    The suffix picks the format (``.usda`` text; ``.usdc``/``.usd`` as USD chooses; ``-``
    is usda text). USD itself writes only into a private temp folder, so a full disk
    or an unwritable folder is one ``OSError`` naming ``path``, never USD's errors.
    ``comments`` (of the file the layer was read from) are carried over: the leading
    block goes right after ``#usda 1.0``; what cannot be kept is returned as notes.

    Returns:
        Notes for the user: comments that were not kept, and why.

    Raises:
        ValueError: ``path`` is a ``.usdz`` package.
        OSError: as :func:`write_output`, or USD could not export the layer.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix == ".usdz":
        raise ValueError(
            f"{display_path(target)}: USD cannot write into a .usdz package; write a .usda "
            "or .usdc file, or change the package's source layer"
        )
    comments = comments or UsdaComments()
    with contextlib.ExitStack() as stack:
        if suffix == ".usda" or os.fspath(path) == STANDARD_OUTPUT:
            data = layer.ExportToString().encode("utf-8")
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="usdgrip-"))
            exported = os.path.join(folder, f"layer{target.suffix}")
            try:
                if not layer.Export(exported):
                    raise OSError(f"{display_path(target)}: USD could not export the layer")
            except Tf.ErrorException as exc:
                reason = describe_usd_error(exc)
                if "No space left" in reason:
                    reason = "no space left on device"
                raise OSError(
                    f"{display_path(target)}: USD could not export the layer "
                    f"(into its temp folder {folder}): {reason}"
                ) from None
            data = Path(exported).read_bytes()
    notes = []
    if data.startswith(b"#usda"):
        data = insert_leading_comments(data.decode("utf-8"), comments.leading).encode("utf-8")
        if comments.other_count:
            notes.append(
                f"{comments.other_count} comment(s) after the leading comment block were not "
                "kept: USD does not store comments (the leading block is kept)"
            )
    elif comments.leading_count + comments.other_count:
        notes.append(
            f"{comments.leading_count + comments.other_count} comment(s) were not kept: "
            "a binary (usdc) layer holds no comments"
        )
    write_output(target, lambda handle: handle.write(data), unchanged=unchanged)
    return notes


def describe_usd_error(exc: Exception) -> str:
    """The first message of a ``Tf.ErrorException`` (without USD's source locations)."""
    found = re.search(r"Error in '[^']*' at line \d+ in file \S+ : '(.*)'", str(exc))
    return found[1] if found else " ".join(str(exc).split())[:200]
