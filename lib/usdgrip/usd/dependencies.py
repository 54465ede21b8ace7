"""The files a stage reads: its layers and the assets their arcs name, checked before USD."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pxr import Sdf, Usd

from usdgrip.fileio import describe_file_kind
from usdgrip.jsontext import compute_bracket_depth_bound

# --- files a stage reads -------------------------------------------------------


def list_stage_files(stage: Usd.Stage) -> list[str]:
    """Real paths of every layer file ``stage`` reads or names for composition.

    The used layers (root, sublayers, references, payloads), plus every file their
    composition arcs name that exists but did not load (a broken or unselected
    reference). A layer inside a ``.usdz`` package counts as the package file;
    anonymous layers are skipped. Commands refuse to write over any of these.
    """
    from pxr import Ar

    files: list[str] = []

    def add(path: str) -> None:
        if path and Ar.IsPackageRelativePath(path):
            path = Ar.SplitPackageRelativePathOuter(path)[0]
        if path and path not in files:
            files.append(path)

    for layer in stage.GetUsedLayers():
        if layer.anonymous:
            continue
        add(layer.realPath)
        for named in list_layer_dependencies(layer):
            if Path(named.split("[", 1)[0]).is_file():
                add(named)
    return files


def list_layer_dependencies(layer: Sdf.Layer) -> list[str]:
    """The paths ``layer``'s sublayers, references and payloads name, anchored to the layer.

    An internal reference or payload (``references = </Proto>``) names no file: its asset
    path is empty, which USD refuses to anchor (``Layer path is empty``), so it is skipped.
    """
    named = (
        Sdf.ComputeAssetPathRelativeToLayer(layer, asset)
        for asset in layer.GetCompositionAssetDependencies()
        if asset
    )
    return [path for path in named if path]


# --- checking layer files before USD reads them ----------------------------------

#: Deepest nesting of ``{ [ (`` a usda layer may have. USD's text parser recurses once per
#: level and overflows the stack (a segfault, no message) somewhere between 50,000 and
#: 100,000 levels of nested ``def`` prims; real assets nest a few dozen levels.
MAX_LAYER_NESTING = 10_000
_OPENERS, _CLOSERS = b"{[(", b"}])"
# usda tokens that can hide brackets: strings (triple-quoted too), asset paths, comments
# (``#``, ``//`` and ``/* */``).
_USDA_TOKENS = re.compile(
    rb'"""(?:[^\\]|\\.)*?"""|\'\'\'(?:[^\\]|\\.)*?\'\'\'|"(?:[^"\\\n]|\\.)*"'
    rb"|'(?:[^'\\\n]|\\.)*'|@@@.*?@@@|@[^@\n]*@|#[^\n]*|//[^\n]*|/\*.*?\*/|[\[\](){}]",
    re.S,
)


def get_file_kind_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is no regular file USD may read (``None`` when it is, or does not exist).

    A named pipe blocks the reader until something writes into it, a device can
    stream forever: USD would hang on either.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # missing or unreadable: the open reports it
    kind = describe_file_kind(mode)
    if kind is None:
        return None
    return f"is {kind}, not a regular file; USD would wait on it forever"


def compute_nesting_depth(data: bytes, limit: int = MAX_LAYER_NESTING) -> int:
    """Deepest ``{ [ (`` nesting of usda text, outside strings, asset paths and comments.

    A bound from the raw bytes (numpy, chunked) comes first; only text that may
    exceed ``limit`` is tokenised exactly. Returns the depth (exact up to ``limit + 1``).
    """
    deepest = compute_bracket_depth_bound(data, _OPENERS, _CLOSERS)
    if deepest <= limit:
        return deepest  # brackets in strings or comments can only raise this bound
    depth = deepest = 0
    for match in _USDA_TOKENS.finditer(data):
        token = match.group()
        if len(token) != 1:
            continue
        if token in _OPENERS:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        else:
            depth -= 1
    return deepest


def open_layer_files(path: str | os.PathLike[str]) -> list[Sdf.Layer]:
    """Open ``path`` and every layer it composes with Sdf, after checking each file first.

    Walks sublayers, references and payloads (in every variant) recursively,
    anchored to the layer that names them. Before a file is handed to USD it
    must be a regular file (:func:`get_file_kind_problem`) and, when it is usda
    text, nest at most :data:`MAX_LAYER_NESTING` levels. Files that do not
    exist are left to USD (GA.001 reports them); binary crate files and
    ``.usdz`` packages are not scanned. Keep the returned layers referenced
    while the stage is opened: USD then reuses them instead of reading again.

    Returns:
        The opened layers, ``path``'s first.

    Raises:
        ValueError: a file is not a regular file, or nests too deep; the message
            names it and, for a dependency, the layer that names it.
        pxr.Tf.ErrorException: USD cannot read a layer (as ``Sdf.Layer.FindOrOpen``).
    """
    layers: list[Sdf.Layer] = []
    seen: set[str] = set()
    pending: list[tuple[str, str]] = [(os.fspath(path), "")]
    while pending:
        file, named_by = pending.pop()
        real = os.path.realpath(file)
        if real in seen:
            continue
        seen.add(real)
        problem = get_file_kind_problem(file) or _get_nesting_problem(file)
        if problem is not None:
            raise ValueError(f"{named_by}{file}: {problem}")
        layer = Sdf.Layer.FindOrOpen(file)
        if layer is None:
            continue  # USD names the problem when the stage opens
        layers.append(layer)
        for asset in layer.GetCompositionAssetDependencies():
            if not asset:  # an internal reference or payload names no file
                continue
            anchored = Sdf.ComputeAssetPathRelativeToLayer(layer, asset)
            outer = anchored.split("[", 1)[0] if anchored else ""
            if not outer or not os.path.exists(outer):
                continue
            kind = "sublayer" if asset in layer.subLayerPaths else "reference or payload"
            if "[" in anchored or outer.lower().endswith(".usdz"):
                problem = get_file_kind_problem(outer)  # a package: only its file is checked
                if problem is not None:
                    raise ValueError(f"{file}: {kind} @{asset}@: {outer}: {problem}")
                continue
            pending.append((outer, f"{file}: {kind} @{asset}@: "))
    return layers


def _get_nesting_problem(file: str) -> str | None:
    try:
        with open(file, "rb") as handle:
            if handle.read(5) != b"#usda":
                return None  # crate (binary) or another format: not scanned
            data = b"#usda" + handle.read()
    except OSError:
        return None  # unreadable: the open reports it
    depth = compute_nesting_depth(data)
    if depth <= MAX_LAYER_NESTING:
        return None
    return (
        f"nests prims, dictionaries or values more than {MAX_LAYER_NESTING:,} levels deep; "
        "USD's text parser would overflow its stack (a crash, not an error), so the file "
        "is not opened"
    )
