"""Atomic file writes: every file usdgrip writes goes to a temp sibling, then ``os.replace``.

A failure at any point leaves the previous file untouched and no temp file
behind. The temp file keeps the target's suffix, so format-by-extension
writers (``Sdf.Layer.Export``, matplotlib) produce the right format. The rename
makes a new file: a target with several hard links is detached from the others,
which keep the previous content (nothing is lost; a symbolic link is written through).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any


def _new_file_mode(target: Path) -> int:
    if target.exists():
        return target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def replace_atomically(path: str | Path, produce: Callable[[Path], None]) -> Path:
    """Let ``produce(temp_path)`` create the file, then rename it over ``path``.

    The new file keeps the old file's permissions (else ``0o666 & ~umask``). A
    symbolic link is written through: the file it points at is replaced and the
    link stays a link. Errors name ``path``, never the temp file.

    Returns:
        The target path.

    Raises:
        FileNotFoundError: the target's folder does not exist (the message says so).
        IsADirectoryError: ``path`` is a directory.
        OSError: the folder is not writable, or ``produce`` failed to write.
    """
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{path}: folder {folder} does not exist; create it or choose another output path"
        )
    if target.is_dir():
        raise IsADirectoryError(f"{path}: is a directory; expected a file path")
    mode = _new_file_mode(target)
    try:
        fd, temp = tempfile.mkstemp(
            dir=folder, prefix=_temp_prefix(folder, target), suffix=target.suffix
        )
    except OSError as exc:
        raise _naming(exc, path) from None
    os.close(fd)
    try:
        produce(Path(temp))
        os.chmod(temp, mode)
        os.replace(temp, target)
    except OSError as exc:
        raise _naming(exc, path) from None
    finally:
        Path(temp).unlink(missing_ok=True)
    return target


#: Random characters ``tempfile.mkstemp`` puts between prefix and suffix.
_TEMP_RANDOM_LENGTH = 8
#: Room left for USD's own temp file beside ours (``Sdf.Layer.Export`` writes through
#: ``TfSafeOutputFile``, which names it after our temp's stem plus ``.XXXXXX``).
_USD_TEMP_ROOM = 16


def _temp_prefix(folder: Path, target: Path) -> str:
    """``.{stem}.``, the stem cut so temp names fit the folder's name limit, in UTF-8.

    A target name near the limit (255 bytes on most file systems) stays writable; a
    stem byte that is not UTF-8 is dropped (USD's exporter takes only UTF-8 paths).
    """
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    room = limit - len(os.fsencode(target.suffix)) - _TEMP_RANDOM_LENGTH - 2 - _USD_TEMP_ROOM
    stem = os.fsencode(target.stem)[: max(room, 0)].decode("utf-8", "ignore")
    return f".{stem}."


def _naming(exc: OSError, path: str | Path) -> OSError:
    """``exc`` about the temp file, restated about ``path`` (other errors kept as they are)."""
    if exc.filename is None or exc.strerror is None:
        return exc
    return type(exc)(f"{path}: cannot write: {exc.strerror}")


def write_bytes_atomically(path: str | Path, write: Callable[[IO[bytes]], None]) -> Path:
    """Write a file through ``write(binary_file)``, flushed to disk, then renamed into place."""

    def produce(temp: Path) -> None:
        with open(temp, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())

    return replace_atomically(path, produce)


def write_text_atomically(path: str | Path, text: str) -> Path:
    """Write UTF-8 ``text`` atomically (see :func:`write_bytes_atomically`)."""
    return write_bytes_atomically(path, lambda handle: handle.write(text.encode("utf-8")))


def export_layer_atomically(layer: Any, path: str | Path) -> Path:
    """``layer.Export`` (an ``Sdf.Layer``) over ``path``: temp sibling with the same suffix, rename.

    The suffix picks the format (usda, usdc). A ``.usdz`` package cannot be written.

    Raises:
        ValueError: ``path`` is a ``.usdz`` package.
        OSError: the folder is missing or not writable, or USD could not export the layer.
    """
    target = Path(path)
    if target.suffix.lower() == ".usdz":
        raise ValueError(
            f"{target}: USD cannot write into a .usdz package; write a .usda or .usdc file, "
            "or change the package's source layer"
        )

    def export(temp: Path) -> None:
        if not layer.Export(str(temp)):
            raise OSError(f"{target}: USD could not export the layer")

    return replace_atomically(target, export)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist (yet): compare the resolved paths
        return os.path.realpath(a) == os.path.realpath(b)


def check_output_path(output: str | Path, inputs: Iterable[str | Path]) -> None:
    """Refuse an output path that is one of the command's input files (through links too).

    Writing a report, samples or grasps over an input would replace the user's asset.

    Raises:
        ValueError: ``output`` is the same file as one of ``inputs``, naming both.
    """
    target = Path(output)
    for source in inputs:
        if _same_file(target, Path(source)):
            raise ValueError(
                f"{target}: is the input file {source}; writing there would replace it: "
                "choose another output path"
            )


def display_path(path: str | Path) -> str:
    r"""``path`` printable anywhere: bytes that are not UTF-8 shown as ``\xff`` escapes.

    POSIX file names are bytes; Python keeps undecodable ones as lone surrogates,
    which neither a UTF-8 stream nor JSON can carry.
    """
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def check_utf8_name(path: str | Path) -> None:
    r"""Refuse a path that is not valid UTF-8 (USD opens and writes only UTF-8 paths).

    Raises:
        ValueError: naming the path with ``\x`` escapes.
    """
    shown = display_path(path)
    if shown != str(path):
        raise ValueError(
            f"{shown}: the file name is not valid UTF-8 (bytes shown as \\x escapes); "
            "USD reads and writes only UTF-8 paths: rename it"
        )


def find_non_utf8_line(path: str | Path) -> tuple[int, int, str] | None:
    r"""The first byte of a text (``#usda``) file that is not UTF-8: ``(line, byte, line_text)``.

    ``line`` counts from 1; ``line_text`` shows the bad bytes as ``\x`` escapes.
    ``None`` for a binary file, an unreadable one, or a valid one.
    """
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if not data.startswith(b"#usda"):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        end = data.find(b"\n", exc.start)
        text = data[start : end if end >= 0 else len(data)]
        return (
            data.count(b"\n", 0, exc.start) + 1,
            data[exc.start],
            text.decode("utf-8", "backslashreplace").strip(),
        )
    return None
