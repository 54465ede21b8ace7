"""The files a stage reads: its layers and the assets their arcs name."""

from __future__ import annotations

from pathlib import Path

from pxr import Sdf, Usd

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
    """The paths ``layer``'s sublayers, references and payloads name, anchored to the layer."""
    named = (
        Sdf.ComputeAssetPathRelativeToLayer(layer, asset)
        for asset in layer.GetCompositionAssetDependencies()
    )
    return [path for path in named if path]
