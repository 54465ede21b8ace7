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

import contextlib
import errno
import hashlib
import io
import json
import math
import os
import secrets
import stat
import threading
import time
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip import interrupts
from usdgrip import progress_reporter as progress
from usdgrip.fileio import describe_file_kind, format_size
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


#: Layout of a cache entry; part of the key, so entries of an older layout are never read.
CACHE_FORMAT = 2
#: Largest cache entry read (CoACD pieces of one part take a few kB to a few MB).
MAX_CACHE_ENTRY_BYTES = 64 << 20
#: The pieces of an entry must span the part's bounding box within this fraction of its
#: diagonal (CoACD's hulls stay within about 1%); a sliver or another part's pieces do not.
CACHE_BOUNDS_TOLERANCE = 0.05


def compute_cache_key(
    vertices: Points, triangles: NDArray[np.int64], params: DecompositionParams
) -> str:
    """sha256 of the part's arrays, the parameters, CoACD's version and :data:`CACHE_FORMAT`."""
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(vertices, dtype="<f8").tobytes())
    digest.update(np.ascontiguousarray(triangles, dtype="<i8").tobytes())
    digest.update(json.dumps(params.as_dict(), sort_keys=True).encode())
    digest.update(coacd_version().encode())
    digest.update(f"usdgrip-coacd-cache-{CACHE_FORMAT}".encode())
    return digest.hexdigest()


def _run_coacd(
    vertices: Points, triangles: NDArray[np.int64], params: DecompositionParams
) -> list[Points]:
    """CoACD pieces of one part (the only place CoACD runs), computed in a child process.

    CoACD runs seconds in C; in a child, this process still reacts to Ctrl-C, SIGTERM and
    SIGHUP at once (:func:`~usdgrip.grasping.physics.children.call` kills the child).
    """
    from usdgrip.grasping.physics import children

    what = f"CoACD decomposition of a {len(triangles):,}-triangle part"
    return children.call(f"{__name__}:_coacd_pieces", vertices, triangles, params, what=what)


def _coacd_pieces(
    vertices: Points, triangles: NDArray[np.int64], params: DecompositionParams
) -> list[Points]:
    """CoACD pieces of one part, in this process (:func:`_run_coacd`'s child)."""
    import coacd

    coacd.set_log_level("error")
    result = coacd.run_coacd(coacd.Mesh(vertices, triangles), **params.coacd_arguments())
    return [np.asarray(v, dtype=np.float64) for v, _ in result]


# --- cache problems: reported once --------------------------------------------------------

_problems_lock = threading.Lock()
_reported: set[tuple[str, str]] = set()
_pending: list[str] = []


def _report(folder: Path, kind: str, message: str) -> str:
    """Queue ``message`` for :func:`take_cache_warnings`, once per folder and kind per process."""
    with _problems_lock:
        if (str(folder), kind) not in _reported:
            _reported.add((str(folder), kind))
            _pending.append(message)
    return message


def take_cache_warnings() -> list[str]:
    """The cache problems met since the last call, each kind once per folder and process.

    The evaluation adds them to its warnings (``metadata.warnings``; the CLI prints them
    on stderr as ``warning: CoACD cache ...``). A problem never fails a decomposition.
    """
    with _problems_lock:
        taken = list(_pending)
        _pending.clear()
    return taken


# --- the cache folder and its entries (untrusted) -----------------------------------------


class _Entry(NamedTuple):
    """What a cache entry is for: the key and the part's bounding box."""

    key: str
    bounds: Points  # (2, 3): the part's lowest and highest corner


#: The arrays of an entry: name -> (dtype, number of dimensions).
_ENTRY_ARRAYS = {
    "key": (np.dtype("<U64"), 0),
    "bounds": (np.dtype("<f8"), 2),
    "points": (np.dtype("<f8"), 2),
    "counts": (np.dtype("<i8"), 1),
}


class _CacheFolder:
    """The cache folder, opened once: entries are read and written relative to its descriptor.

    Writes stay inside the folder: an entry is created under a fresh temp name with
    ``O_CREAT | O_EXCL | O_NOFOLLOW`` and renamed over the entry's name in the same
    folder, so a symbolic link (or a FIFO, a device) under that name is replaced, never
    its target written. Every entry read is checked before use (:func:`_parse_entry`).
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self.fd = path, fd

    @classmethod
    def open(cls, path: Path) -> tuple[_CacheFolder | None, str | None]:
        """``(folder, None)`` (created ``0700`` when missing), or ``(None, why not)``."""
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            reason = "a file is in the way" if exc.errno in (errno.EEXIST, errno.ENOTDIR) else None
            return None, _report(
                path,
                "folder",
                f"CoACD cache {path}: cannot be used ({reason or exc.strerror or exc}); "
                "decomposing without the cache",
            )
        info = os.fstat(fd)
        problem = None
        if info.st_uid != os.geteuid():
            problem = f"owned by uid {info.st_uid}, not by you (uid {os.geteuid()})"
        elif info.st_mode & stat.S_IWOTH:
            problem = f"writable by every user (mode {stat.S_IMODE(info.st_mode):04o})"
        if problem is not None:
            os.close(fd)
            return None, _report(
                path,
                "folder",
                f"CoACD cache {path}: not used: {problem}, so others could plant entries; "
                "decomposing without the cache (use a folder of your own: XDG_CACHE_HOME)",
            )
        return cls(path, fd), None

    def close(self) -> None:
        os.close(self.fd)

    def read(self, entry: _Entry) -> tuple[list[Points] | None, str | None]:
        """The entry's pieces, or ``(None, problem)`` (``(None, None)``: not cached yet)."""
        name = f"{entry.key}.npz"
        shown = self.path / name
        try:
            info = os.lstat(name, dir_fd=self.fd)
        except FileNotFoundError:
            return None, None
        except OSError as exc:
            return None, _report(
                self.path, "read", f"CoACD cache {shown}: cannot be read ({exc.strerror}); "
                "decomposed again"
            )  # fmt: skip
        if stat.S_ISLNK(info.st_mode):
            return None, _report(
                self.path, "link", f"CoACD cache {shown}: is a symbolic link; not followed: "
                "decomposed again and replaced by a regular entry"
            )  # fmt: skip
        if stat.S_ISDIR(info.st_mode):
            return None, _report(
                self.path, "in-the-way", f"CoACD cache {shown}: a folder is in the way of the "
                "entry; left alone: decomposed again, not cached"
            )  # fmt: skip
        kind = describe_file_kind(info.st_mode)
        if kind is not None:
            return None, _report(
                self.path, "special", f"CoACD cache {shown}: is {kind}, not a regular file; "
                "not read: decomposed again and replaced"
            )  # fmt: skip
        if info.st_size > MAX_CACHE_ENTRY_BYTES:
            return None, _report(
                self.path, "size", f"CoACD cache {shown}: is {format_size(info.st_size)}, over "
                f"the {format_size(MAX_CACHE_ENTRY_BYTES)} limit for an entry; not read: "
                "decomposed again and replaced"
            )  # fmt: skip
        try:
            data = self._read_bytes(name, info)
            return _parse_entry(data, entry), None
        except OSError as exc:
            reason = exc.strerror or str(exc)
        except ValueError as exc:
            reason = str(exc)
        return None, _report(
            self.path, "corrupt", f"CoACD cache {shown}: unusable ({reason}); decomposed "
            "again and rewritten"
        )  # fmt: skip

    def _read_bytes(self, name: str, seen: os.stat_result) -> bytes:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
        fd = os.open(name, flags, dir_fd=self.fd)
        try:
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) != (seen.st_dev, seen.st_ino):
                raise ValueError("replaced while being read")
            chunks, total = [], 0
            while total <= MAX_CACHE_ENTRY_BYTES and (chunk := os.read(fd, 1 << 20)):
                chunks.append(chunk)
                total += len(chunk)
            if total > MAX_CACHE_ENTRY_BYTES:
                raise ValueError("grew past the size limit while being read")
            return b"".join(chunks)
        finally:
            os.close(fd)

    def write(self, entry: _Entry, pieces: Sequence[Points]) -> str | None:
        """Store ``pieces`` under the entry's name (atomically); the problem, else None."""
        buffer = io.BytesIO()
        np.savez(
            buffer,
            key=np.array(entry.key, dtype="<U64"),
            bounds=entry.bounds,
            points=np.concatenate(pieces),
            counts=np.array([len(p) for p in pieces], dtype="<i8"),
        )
        name = f"{entry.key}.npz"
        temp = f".{entry.key}.{secrets.token_hex(8)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(temp, flags, 0o644, dir_fd=self.fd)
            try:
                view = memoryview(buffer.getbuffer())
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.rename(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
            return None
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=self.fd)
            if exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                return _report(
                    self.path, "in-the-way", f"CoACD cache {self.path / name}: a folder is in "
                    "the way of the entry; left alone: decomposed again, not cached"
                )  # fmt: skip
            reason = "no space left on device" if exc.errno == errno.ENOSPC else exc.strerror
            return _report(
                self.path, "write", f"CoACD cache {self.path}: cannot write entries ({reason}); "
                "the results are correct but not cached"
            )  # fmt: skip


def _parse_entry(data: bytes, entry: _Entry) -> list[Points]:
    """The pieces of an entry's bytes, after checking it was made for ``entry``'s part.

    Raises:
        ValueError: not an npz of the expected arrays, made for another part (key or
            bounds differ), or pieces that do not span the part's bounds.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = {info.filename: info for info in archive.infolist()}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ValueError(f"not an npz file: {exc}") from None
    expected = {f"{name}.npy" for name in _ENTRY_ARRAYS}
    if set(members) != expected:
        raise ValueError(f"holds {sorted(members)}; expected {sorted(expected)}")
    arrays = {}
    for name, (dtype, ndim) in _ENTRY_ARRAYS.items():
        info = members[f"{name}.npy"]
        if info.file_size > MAX_CACHE_ENTRY_BYTES:
            raise ValueError(f"{name} claims {info.file_size:,} bytes")
        try:
            with archive.open(info) as member:
                raw = member.read(MAX_CACHE_ENTRY_BYTES + 1)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error) as exc:
            raise ValueError(f"{name} cannot be read: {exc}") from None
        arrays[name] = _parse_npy(raw, name, dtype, ndim)
    if str(arrays["key"]) != entry.key:
        raise ValueError("made for another part: its key differs from its name")
    if not np.array_equal(arrays["bounds"], entry.bounds):
        raise ValueError("made for another part: its bounds differ")
    points, counts = arrays["points"], arrays["counts"]
    if (
        points.shape[1:] != (3,)
        or len(counts) == 0
        or (counts < 4).any()
        or counts.sum() != len(points)
        or not np.isfinite(points).all()
    ):
        raise ValueError("inconsistent arrays")
    low, high = entry.bounds
    tolerance = CACHE_BOUNDS_TOLERANCE * float(np.linalg.norm(high - low))
    if (np.abs(points.min(axis=0) - low) > tolerance).any() or (
        np.abs(points.max(axis=0) - high) > tolerance
    ).any():
        raise ValueError("its pieces do not span the part's bounds")
    return np.split(points, np.cumsum(counts)[:-1])


def _parse_npy(raw: bytes, name: str, dtype: np.dtype, ndim: int) -> NDArray[Any]:
    """One ``.npy`` member: the declared dtype and shape must match the bytes there are."""
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, found = np.lib.format.read_array_header_1_0(stream)
        else:
            shape, fortran, found = np.lib.format.read_array_header_2_0(stream)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise ValueError(f"{name} has no valid .npy header: {exc}") from None
    if found != dtype or fortran or len(shape) != ndim:
        raise ValueError(f"{name} is {found} of shape {shape}; expected {dtype}, {ndim}-D")
    count = math.prod(shape)
    if count * dtype.itemsize != len(raw) - stream.tell():
        raise ValueError(f"{name} is truncated or padded")
    return np.frombuffer(raw, dtype, count, stream.tell()).reshape(shape)


def _decompose_part(
    vertices: Points,
    triangles: NDArray[np.int64],
    params: DecompositionParams,
    cache: _CacheFolder | None,
    name: str,
) -> tuple[list[Points], str, str | None]:
    entry = None
    error = None
    if cache is not None:
        entry = _Entry(
            compute_cache_key(vertices, triangles, params),
            np.array([vertices.min(axis=0), vertices.max(axis=0)]),
        )
        pieces, error = cache.read(entry)
        if pieces is not None:
            progress.note(f"{name}: cache hit, {len(pieces)} pieces")
            return pieces, "cached", None
    state = "cache off" if cache is None else "cache miss"
    progress.note(f"{name}: {state}, running CoACD")
    started = time.perf_counter()
    pieces = [p for p in _run_coacd(vertices, triangles, params) if len(p) >= 4]
    if not pieces:
        hull = meshes.convex_hull(vertices)
        if hull is None:
            raise ValueError("CoACD returned no pieces for a part with no volume")
        pieces = [hull.vertices]
    if cache is not None and entry is not None:
        error = cache.write(entry, pieces) or error
    seconds = time.perf_counter() - started
    progress.note(f"{name}: computed in {seconds:.1f} s, {len(pieces)} pieces")
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
        if not meshes.is_closed(pf):
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
    label: str | None = None,
) -> Decomposition:
    """Convex collision pieces of a triangle mesh.

    Args:
        vertices: ``(V, 3)`` metres, in the frame the pieces are wanted in.
        triangles: ``(F, 3)`` integer indices.
        params: decomposition parameters (defaults: :class:`DecompositionParams`).
        cache_dir: CoACD cache folder; default :func:`default_cache_dir`.
        use_cache: False to neither read nor write the cache.
        what: name used in error messages.
        label: name in the progress lines (default ``what``): each part CoACD decomposes
            says its cache state (hit; miss, then computed in N s) through
            :func:`usdgrip.progress_reporter.note`.

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
    with contextlib.ExitStack() as stack:
        cache: _CacheFolder | None = None
        folder_error = None
        for index, (pv, pf) in enumerate(meshes.split_parts(v, f)):
            interrupts.check()
            closed = closed and meshes.is_closed(pf)
            scale = float(np.linalg.norm(pv.max(axis=0) - pv.min(axis=0)))
            if meshes.is_convex(pv, pf, params.convex_tolerance * scale):  # (not flat)
                pieces.append(pv)
                reports.append(PartReport(index, len(pf), "convex", 1))
                continue
            if meshes.convex_hull(pv) is None:
                pieces.append(meshes.thicken_flat(pv, params.flat_thickness))
                reports.append(PartReport(index, len(pf), "flat", 1))
                continue
            if folder is not None and cache is None and folder_error is None:
                cache, folder_error = _CacheFolder.open(folder)  # at the first CoACD part
                if cache is not None:
                    stack.callback(cache.close)
            name = f"decomposition of {label or what}, part {index} ({len(pf):,} triangles)"
            part_pieces, method, error = _decompose_part(pv, pf, params, cache, name)
            pieces.extend(part_pieces)
            reports.append(
                PartReport(index, len(pf), method, len(part_pieces), error or folder_error)
            )
    return Decomposition(tuple(pieces), tuple(reports), closed)
