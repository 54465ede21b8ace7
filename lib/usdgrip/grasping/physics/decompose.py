"""Collision pieces for MuJoCo: exact convex parts, else CoACD pieces cached on disk.

A mesh authored as several closed convex solids (each with its own vertices) is
used exactly, one piece per solid. Otherwise it is welded and split into
connected parts. A part that is its own convex
hull (:func:`usdgrip.grasping.physics.mesh.is_convex`) becomes one piece, exactly;
a flat part becomes a thin slab; any other part is decomposed by CoACD. CoACD
results are cached as ``<cache_dir>/<sha256>.npz``, the key hashing the part's
vertices and triangles, the :class:`DecompositionParams` and CoACD's version,
so a second run (or another process) does not decompose again. Cache files are
written atomically; an unreadable or corrupt entry is recomputed and rewritten.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip.grasping.physics import mesh as meshes
from usdgrip.grasping.physics.params import DecompositionParams

Points = NDArray[np.float64]  # (V, 3)


class PartReport(NamedTuple):
    """How one connected part became collision pieces."""

    index: int
    """Part index (largest part first)."""
    triangles: int
    """Triangles of the welded part."""
    method: str
    """``convex`` (exact), ``flat`` (thickened), ``coacd`` (decomposed now) or ``cached``."""
    pieces: int
    """Convex pieces made from the part."""
    cache_error: str | None = None
    """Why the cache could not be read or written (the result is still correct), else None."""


class Decomposition(NamedTuple):
    """Convex collision pieces of a mesh, in the mesh's frame."""

    pieces: tuple[Points, ...]
    """Each piece's points ``(K, 3)``, metres; the piece is their convex hull."""
    parts: tuple[PartReport, ...]
    """One report per connected part."""
    closed: bool
    """Every part is closed (so the mesh has a volume)."""

    @property
    def coacd_calls(self) -> int:
        """Parts decomposed by CoACD in this call (0 when all were convex or cached)."""
        return sum(p.method == "coacd" for p in self.parts)


def default_cache_dir() -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/usdgrip/coacd``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "usdgrip" / "coacd"


def coacd_version() -> str:
    """Installed CoACD version (part of the cache key)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("coacd")
    except PackageNotFoundError:
        return "unknown"


def compute_cache_key(
    vertices: Points, triangles: NDArray[np.int64], params: DecompositionParams
) -> str:
    """sha256 of the part's arrays, the decomposition parameters and the CoACD version."""
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(vertices, dtype="<f8").tobytes())
    digest.update(np.ascontiguousarray(triangles, dtype="<i8").tobytes())
    digest.update(json.dumps(params.as_dict(), sort_keys=True).encode())
    digest.update(coacd_version().encode())
    return digest.hexdigest()


def _run_coacd(
    vertices: Points, triangles: NDArray[np.int64], params: DecompositionParams
) -> list[Points]:
    """CoACD pieces of one part (the only place CoACD runs)."""
    import coacd

    coacd.set_log_level("error")
    result = coacd.run_coacd(coacd.Mesh(vertices, triangles), **params.coacd_arguments())
    return [np.asarray(v, dtype=np.float64) for v, _ in result]


def _read_cache(path: Path) -> list[Points]:
    # From bytes: np.load leaks its file handle when the zip is truncated.
    with np.load(io.BytesIO(path.read_bytes()), allow_pickle=False) as data:
        points = np.asarray(data["points"], dtype=np.float64)
        counts = np.asarray(data["counts"], dtype=np.int64)
    if (
        points.ndim != 2
        or points.shape[1] != 3
        or counts.ndim != 1
        or len(counts) == 0
        or (counts < 4).any()
        or counts.sum() != len(points)
        or not np.isfinite(points).all()
    ):
        raise ValueError("cache entry has inconsistent arrays")
    return np.split(points, np.cumsum(counts)[:-1])


def _write_cache(path: Path, pieces: Sequence[Points]) -> None:
    from usdgrip.fileio import replace_atomically

    buffer = io.BytesIO()
    np.savez(
        buffer,
        points=np.concatenate(pieces),
        counts=np.array([len(p) for p in pieces], dtype=np.int64),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    # Always a rename, never a streamed write: a FIFO or device squatting on the entry's
    # name is replaced by the file, not written into.
    replace_atomically(path, lambda temp: temp.write_bytes(buffer.getvalue()))


def _decompose_part(
    vertices: Points,
    triangles: NDArray[np.int64],
    params: DecompositionParams,
    cache_dir: Path | None,
) -> tuple[list[Points], str, str | None]:
    key = compute_cache_key(vertices, triangles, params)
    error = None
    path = cache_dir / f"{key}.npz" if cache_dir is not None else None
    if path is not None and path.is_file():
        try:
            return _read_cache(path), "cached", None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            error = f"{path}: unreadable cache entry, decomposed again ({exc})"
    elif path is not None and os.path.lexists(path):
        error = f"{path}: cache entry is not a regular file, decomposed again"
    pieces = [p for p in _run_coacd(vertices, triangles, params) if len(p) >= 4]
    if not pieces:
        hull = meshes.convex_hull(vertices)
        if hull is None:
            raise ValueError("CoACD returned no pieces for a part with no volume")
        pieces = [hull.vertices]
    if path is not None:
        try:
            _write_cache(path, pieces)
        except OSError as exc:
            error = f"{path}: cannot write the cache entry ({exc})"
    return pieces, "coacd", error


#: Most authored solids used as they are (more: the welded parts, as any other mesh).
MAX_AUTHORED_SOLIDS = 256


def _authored_convex_solids(
    vertices: Points, triangles: NDArray[np.int64], params: DecompositionParams
) -> list[tuple[Points, NDArray[np.int64]]] | None:
    """The mesh's parts as authored (not welded) when there are several, each a closed convex solid.

    A mesh authored as touching or overlapping convex blocks (a tote's walls and floor,
    each with its own vertices) is exactly their union. Welding would join the blocks
    at shared corners into one non-convex part, which CoACD then only approximates.
    """
    if not meshes.is_closed(triangles):  # seams or a triangle soup: weld first
        return None
    parts = meshes.split_parts(vertices, triangles)
    if not 2 <= len(parts) <= MAX_AUTHORED_SOLIDS:
        return None
    for pv, pf in parts:
        if not meshes.is_closed(pf) or meshes.convex_hull(pv) is None:
            return None
        scale = float(np.linalg.norm(pv.max(axis=0) - pv.min(axis=0)))
        if not meshes.is_convex(pv, pf, params.convex_tolerance * scale):
            return None
    return parts


def decompose_mesh(
    vertices: ArrayLike,
    triangles: ArrayLike,
    params: DecompositionParams | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    what: str = "mesh",
) -> Decomposition:
    """Convex collision pieces of a triangle mesh.

    Args:
        vertices: ``(V, 3)`` metres, in the frame the pieces are wanted in.
        triangles: ``(F, 3)`` integer indices.
        params: decomposition parameters (defaults: :class:`DecompositionParams`).
        cache_dir: CoACD cache folder; default :func:`default_cache_dir`.
        use_cache: False to neither read nor write the cache.
        what: name used in error messages.

    Returns:
        The pieces and a report per connected part. Cache problems (unreadable
        entry, read-only folder) never fail the call: the part is decomposed and
        the report's ``cache_error`` says what happened.

    Raises:
        TypeError, ValueError: bad mesh arrays or parameters, naming ``what``.
    """
    params = DecompositionParams() if params is None else params
    if not isinstance(params, DecompositionParams):
        raise TypeError(f"params is {type(params).__name__}; expected DecompositionParams")
    v, f = meshes.check_mesh(vertices, triangles, what)
    solids = _authored_convex_solids(v, f, params)
    if solids is not None:
        reports = tuple(PartReport(i, len(pf), "convex", 1) for i, (_, pf) in enumerate(solids))
        return Decomposition(tuple(pv for pv, _ in solids), reports, True)
    v, f = meshes.weld(v, f)
    if len(f) == 0:
        raise ValueError(f"{what}: every triangle is degenerate (zero area); nothing to collide")
    folder = None
    if use_cache:
        folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    pieces: list[Points] = []
    reports: list[PartReport] = []
    closed = True
    for index, (pv, pf) in enumerate(meshes.split_parts(v, f)):
        closed = closed and meshes.is_closed(pf)
        scale = float(np.linalg.norm(pv.max(axis=0) - pv.min(axis=0)))
        if meshes.convex_hull(pv) is None:
            pieces.append(meshes.thicken_flat(pv, params.flat_thickness))
            reports.append(PartReport(index, len(pf), "flat", 1))
            continue
        if meshes.is_convex(pv, pf, params.convex_tolerance * scale):
            pieces.append(pv)
            reports.append(PartReport(index, len(pf), "convex", 1))
            continue
        part_pieces, method, error = _decompose_part(pv, pf, params, folder)
        pieces.extend(part_pieces)
        reports.append(PartReport(index, len(pf), method, len(part_pieces), error))
    return Decomposition(tuple(pieces), tuple(reports), closed)
