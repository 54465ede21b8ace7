"""How usdgrip writes files: one place decides, for every command that writes.

* A **regular file** (or a new path) is replaced atomically: the content goes to a
  temp sibling, then ``os.replace``. A failure at any point leaves the previous file
  untouched and no temp file behind. The temp file keeps the target's suffix, so
  format-by-extension writers produce the right format.
* Anything else is written **in place, streamed**, never renamed over: ``-``
  (standard output), ``/dev/stdout``, ``/dev/fd/N`` and an existing device, named
  pipe or socket (also through a symbolic link). It is opened for appending, without
  creating or truncating it, so ``/dev/null`` stays a device and a pipe's reader
  gets the bytes; a named pipe waits at most :data:`PIPE_READER_WAIT_S` for a reader.

A rewrite keeps what the file had: its mode bits (setuid, setgid and sticky
included), its owner and group where permitted (as root; else the group when you
belong to it) and its extended attributes (a POSIX ACL too) where the file system
allows. A file without any write permission bit, or one you may not write, is
refused as read-only, also for root. The rename makes a new file: a target with
several hard links is detached from the others, which keep the previous content
(nothing is lost); a symbolic link is written through (the link stays a link).

Before renaming over an input (``validate --fix``, ``migrate --in-place``) the caller
passes the :class:`FileSnapshot` it took before reading: if the file changed since
(size, mtime, inode or content), nothing is written and the new content stays.

Reading inputs (bounded in size and waiting) is :mod:`usdgrip.input_reading`, naming a
file in messages :mod:`usdgrip.file_names`; their names are importable from here too.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# Naming a file in messages and reading inputs live in their own modules; their names
# stay importable from here (re-exported: all but display_path are unused here).
from usdgrip.file_names import (  # noqa: F401
    check_utf8_name,
    describe_file_kind,
    display_path,
    format_size,
)
from usdgrip.input_reading import (  # noqa: F401
    MAX_TEXT_INPUT_BYTES,
    UTF8_BOM,
    describe_unreadable,
    find_non_utf8_line,
    read_input_bytes,
    read_text_input,
)

#: The output name that means standard output (text formats only).
STANDARD_OUTPUT = "-"
#: Names that are one of this process's open files: always streamed, never renamed over
#: (a shell's ``>> log`` behind ``/dev/stdout`` keeps what it had).
_OPEN_FILE_NAMES = re.compile(
    r"^/dev/(stdin|stdout|stderr|fd/\d+)$|^/proc/(self|thread-self|\d+)/fd/\d+$"
)
#: A file up to this size is hashed for :class:`FileSnapshot` (larger: size, mtime, inode).
SNAPSHOT_HASH_LIMIT = 256 << 20


def _link_chain(path: str) -> Iterator[str]:
    """``path`` and each absolute path its symbolic links lead to, one hop at a time."""
    current = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on link hops
        yield current
        try:
            target = os.readlink(current)
        except OSError:
            return
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))


def is_streamed(path: str | os.PathLike[str]) -> bool:
    """Whether an output is written in place, streamed, rather than replaced atomically.

    True for ``-``, ``/dev/stdin``, ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``,
    ``/proc/…/fd/N`` (directly or through links) and for an existing file that is not a regular file
    or a folder: a character or block device, a named pipe (FIFO), a socket.
    """
    text = os.fspath(path)
    if text == STANDARD_OUTPUT:
        return True
    if any(_OPEN_FILE_NAMES.match(hop) for hop in _link_chain(text)):
        return True
    try:
        mode = os.stat(text).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def is_standard_output(path: str | os.PathLike[str] | None) -> bool:
    """Whether writing ``path`` writes this process's standard output (``-``, ``/dev/stdout``).

    A command then prints its own status lines on standard error instead.
    """
    if path is None:
        return False
    if os.fspath(path) == STANDARD_OUTPUT:
        return True
    try:
        target, out = os.stat(path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return (target.st_dev, target.st_ino) == (out.st_dev, out.st_ino) and is_streamed(path)


def check_output(path: str | os.PathLike[str], *, binary: bool = False) -> None:
    """Refuse an output path before any work: what :func:`write_output` would refuse.

    Raises:
        ValueError: ``-`` for a binary format, or a folder.
        FileNotFoundError: the folder of a new file does not exist.
        PermissionError: an existing regular file that is read-only (:func:`check_writable`).
    """
    text = os.fspath(path)
    if text == STANDARD_OUTPUT:
        if binary:
            raise ValueError(
                "-: standard output takes text only and this format is binary; "
                "give a file path (or /dev/stdout to stream the bytes anyway)"
            )
        return
    if is_streamed(text):
        return
    target = Path(os.path.realpath(text)) if Path(text).is_symlink() else Path(text)
    if target.is_dir():
        raise ValueError(f"{display_path(text)}: is a directory; expected a file path")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{display_path(text)}: folder {display_path(folder)} does not exist; "
            "create it or choose another output path"
        )
    if target.exists():
        check_writable(target, shown=text)


def check_writable(
    path: str | os.PathLike[str], *, shown: str | os.PathLike[str] | None = None
) -> None:
    """Refuse to rewrite a file without a write permission bit, or one this user may not write.

    The mode bits decide even for root, who may write anything: a ``chmod 444`` file
    is read-only on purpose.

    Raises:
        PermissionError: naming the file, its mode and owner, and what to do.
    """
    info = os.stat(path)
    if info.st_mode & 0o222 and os.access(path, os.W_OK):
        return
    raise PermissionError(
        f"{display_path(shown if shown is not None else path)}: read-only "
        f"(mode {stat.S_IMODE(info.st_mode):04o}, owner uid {info.st_uid}); usdgrip rewrites "
        "only a file you may write: make it writable (chmod u+w) or write the result elsewhere"
    )


@dataclass(frozen=True)
class FileSnapshot:
    """What a file was when a command read it, to check before renaming over it.

    Attributes:
        path: the file as named (a symbolic link is followed).
        size: bytes. mtime_ns: modification time. inode: ``(st_dev, st_ino)``.
        sha256: the content's hash, or None above :data:`SNAPSHOT_HASH_LIMIT` bytes.
    """

    path: str
    size: int
    mtime_ns: int
    inode: tuple[int, int]
    sha256: str | None

    @classmethod
    def take(cls, path: str | os.PathLike[str]) -> FileSnapshot:
        """Snapshot ``path`` now (before the command reads it).

        Raises:
            OSError: the file cannot be read.
        """
        with open(path, "rb") as stream:
            info = os.fstat(stream.fileno())
            digest = None
            if info.st_size <= SNAPSHOT_HASH_LIMIT:
                hasher = hashlib.sha256()
                while chunk := stream.read(1 << 20):
                    hasher.update(chunk)
                digest = hasher.hexdigest()
        return cls(
            os.fspath(path), info.st_size, info.st_mtime_ns, (info.st_dev, info.st_ino), digest
        )

    def check(self) -> None:
        """Refuse when the file is no longer what was read.

        Raises:
            FileChangedError: naming the file and what changed.
        """
        try:
            now = FileSnapshot.take(self.path)
        except OSError as exc:
            raise FileChangedError(
                f"{display_path(self.path)}: changed since usdgrip read it (now: "
                f"{exc.strerror or exc}); not rewritten: run the command again"
            ) from None
        changed = [
            name
            for name, before, after in (
                ("inode", self.inode, now.inode),
                ("size", self.size, now.size),
                ("modification time", self.mtime_ns, now.mtime_ns),
                ("content", self.sha256, now.sha256),
            )
            if before != after
        ]
        if changed:
            raise FileChangedError(
                f"{display_path(self.path)}: changed since usdgrip read it "
                f"({', '.join(changed)} differ); not rewritten, so the new content is kept: "
                "run the command again"
            )


class FileChangedError(OSError):
    """An input changed between being read and being rewritten; nothing was written."""


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _copy_metadata(source: Path, info: os.stat_result, temp: str) -> None:
    """Give ``temp`` the owner, group, extended attributes and mode bits ``source`` had."""
    for owner in ((info.st_uid, info.st_gid), (-1, info.st_gid)):
        try:
            os.chown(temp, *owner)
            break
        except OSError:  # not root (owner), not in the group: the file becomes ours
            continue
    with contextlib.suppress(OSError):
        for name in os.listxattr(source):
            with contextlib.suppress(OSError):
                os.setxattr(temp, name, os.getxattr(source, name))
    os.chmod(temp, stat.S_IMODE(info.st_mode))  # after chown, which clears setuid/setgid


def replace_atomically(
    path: str | os.PathLike[str],
    produce: Callable[[Path], None],
    *,
    unchanged: FileSnapshot | None = None,
) -> Path:
    """Let ``produce(temp_path)`` create the file, then rename it over ``path`` (a regular file).

    The new file keeps the old file's mode, owner and extended attributes (see the
    module's docstring; a new file gets ``0o666 & ~umask``). A symbolic link is written
    through: the file it points at is replaced and the link stays a link. Errors name
    ``path``, never the temp file. Callers use :func:`write_output`, which streams
    what is not a regular file.

    Args:
        path: the file to write.
        produce: creates the content at the temp path it is given.
        unchanged: the snapshot of ``path`` taken when it was read, checked just before
            the rename (an input being rewritten).

    Returns:
        The target path.

    Raises:
        FileNotFoundError: the target's folder does not exist (the message says so).
        IsADirectoryError: ``path`` is a directory.
        PermissionError: the target is read-only (:func:`check_writable`).
        FileChangedError: ``unchanged`` no longer holds.
        OSError: the folder is not writable, the disk is full, or ``produce`` failed.
    """
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{display_path(path)}: folder {display_path(folder)} does not exist; "
            "create it or choose another output path"
        )
    if target.is_dir():
        raise IsADirectoryError(f"{display_path(path)}: is a directory; expected a file path")
    old = None
    if target.exists():
        check_writable(target, shown=path)
        old = target.stat()
    try:
        fd, temp = tempfile.mkstemp(
            dir=folder, prefix=_temp_prefix(folder, target), suffix=target.suffix
        )
    except OSError as exc:
        raise name_write_error(exc, path) from None
    os.close(fd)
    try:
        produce(Path(temp))
        if old is not None:
            _copy_metadata(target, old, temp)
        else:
            os.chmod(temp, _new_file_mode())
        if unchanged is not None:
            unchanged.check()
        os.replace(temp, target)
    except FileChangedError:
        raise
    except OSError as exc:
        raise name_write_error(exc, path) from None
    finally:
        Path(temp).unlink(missing_ok=True)
    return target


#: Random characters ``tempfile.mkstemp`` puts between prefix and suffix.
_TEMP_RANDOM_LENGTH = 8
#: Room left for a writer's own temp file beside ours (USD names one after our stem).
_USD_TEMP_ROOM = 16


def _temp_prefix(folder: Path, target: Path) -> str:
    """``.{stem}.``, the stem cut so temp names fit the folder's name limit, in UTF-8.

    A target name near the limit (255 bytes on most file systems) stays writable; a
    stem byte that is not UTF-8 is dropped.
    """
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    room = limit - len(os.fsencode(target.suffix)) - _TEMP_RANDOM_LENGTH - 2 - _USD_TEMP_ROOM
    stem = os.fsencode(target.stem)[: max(room, 0)].decode("utf-8", "ignore")
    return f".{stem}."


def name_write_error(exc: OSError, path: str | os.PathLike[str]) -> OSError:
    """``exc`` about a temp file or a stream, restated about the output ``path`` in one line.

    A full disk says ``no space left on device`` (a file that was there is unchanged).
    """
    shown = "standard output" if os.fspath(path) == STANDARD_OUTPUT else display_path(path)
    if exc.errno == errno.ENOSPC:
        named = OSError(
            f"{shown}: no space left on device; nothing was written: free some space and run again"
        )
        named.errno = errno.ENOSPC
        return named
    if exc.strerror is None or (exc.filename is None and exc.errno is None):
        return exc
    named = type(exc)(f"{shown}: cannot write: {exc.strerror}")
    named.errno = exc.errno
    return named


@contextlib.contextmanager
def open_streamed(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """Standard output (``-``), or ``path`` opened for appending, never created nor truncated.

    For an output :func:`is_streamed` names; :func:`write_output` uses it. A named
    pipe waits for its reader at most :data:`PIPE_READER_WAIT_S` seconds, never forever.

    Raises:
        OSError: ``path`` cannot be opened for writing (a pipe nobody reads: ``ENXIO``).
    """
    if os.fspath(path) == STANDARD_OUTPUT:
        sys.stdout.flush()
        stream = sys.stdout.buffer
        yield stream
        stream.flush()
        return
    fd = _open_for_appending(path)
    with os.fdopen(fd, "wb") as stream:
        yield stream


#: Seconds a named pipe output may wait for a reader before the command gives up.
PIPE_READER_WAIT_S = 30.0


def _open_for_appending(path: str | os.PathLike[str]) -> int:
    """``os.open`` for appending; a named pipe is polled until a reader opens it."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_CLOEXEC
    try:
        is_pipe = stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        is_pipe = False
    if not is_pipe:
        return os.open(path, flags)
    deadline = time.monotonic() + PIPE_READER_WAIT_S
    while True:
        try:
            fd = os.open(path, flags | os.O_NONBLOCK)  # ENXIO while nobody reads
        except OSError as exc:
            if exc.errno != errno.ENXIO or time.monotonic() >= deadline:
                if exc.errno == errno.ENXIO:
                    raise OSError(
                        errno.ENXIO,
                        f"a named pipe nobody reads (waited {PIPE_READER_WAIT_S:g} s); "
                        "start its reader first",
                        os.fspath(path),
                    ) from None
                raise
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)  # a slow reader makes writes wait, as for any pipe
        return fd


def write_output(
    path: str | os.PathLike[str],
    write: Callable[[IO[bytes]], None],
    *,
    unchanged: FileSnapshot | None = None,
    binary: bool = False,
) -> Path:
    """Write an output file through ``write(binary_file)``: the one way usdgrip writes.

    A regular file (or a new path) is written to a temp sibling, flushed to disk and
    renamed into place (:func:`replace_atomically`); anything :func:`is_streamed`
    names is written in place, streamed.

    Args:
        path: the output; ``-`` is standard output (text formats only).
        write: writes the content into the binary file it is given.
        unchanged: for a rewritten input, the snapshot taken when it was read.
        binary: the content is binary (``-`` is then refused).

    Raises:
        ValueError: ``-`` for a binary format.
        OSError: as :func:`replace_atomically`, or the stream could not be written,
            in one line naming ``path`` (``no space left on device`` for a full disk).
    """
    if binary and os.fspath(path) == STANDARD_OUTPUT:
        check_output(path, binary=True)
    if is_streamed(path):
        try:
            with open_streamed(path) as stream:
                write(stream)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise name_write_error(exc, path) from None
        return Path(path)

    def produce(temp: Path) -> None:
        with open(temp, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())

    return replace_atomically(path, produce, unchanged=unchanged)


def write_text_output(path: str | os.PathLike[str], text: str) -> Path:
    """Write UTF-8 ``text`` (see :func:`write_output`)."""
    return write_output(path, lambda handle: handle.write(text.encode("utf-8")))


# --- USD layers ---------------------------------------------------------------------

#: The parts of usda text that are not comments but may hold comment characters.
_USDA_TOKENS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
    r"|@@@[\s\S]*?@@@|@[^@\n]*@|(?P<comment>#[^\n]*|//[^\n]*|/\*[\s\S]*?\*/)"
)
#: Blank lines and whole-line comments at the start of a layer, after ``#usda 1.0``.
_LEADING_COMMENTS = re.compile(r"(?:[ \t]*(?:#[^\n]*|//[^\n]*)?[ \t]*(?:\n|\Z))*")


@dataclass(frozen=True)
class UsdaComments:
    """The comments of a usda file (USD keeps none of them when it writes a layer).

    Attributes:
        leading: the comment lines right after ``#usda 1.0`` (a licence header, say),
            as text ending in a newline; empty when there are none.
        leading_count: how many comments ``leading`` holds.
        other_count: comments anywhere else (inside prims, after values).
    """

    leading: str = ""
    leading_count: int = 0
    other_count: int = 0


def find_usda_comments(path: str | os.PathLike[str]) -> UsdaComments:
    """The comments of ``path`` if it is usda text (none for usdc, usdz or an unreadable file)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return UsdaComments()
    if not data.startswith(b"#usda"):
        return UsdaComments()
    text = data.decode("utf-8", "replace")
    header_end = text.find("\n") + 1 if "\n" in text else len(text)
    block = _LEADING_COMMENTS.match(text, header_end)
    leading = text[header_end : block.end()].strip("\n")
    leading_lines = [line for line in leading.split("\n") if line.strip()]
    total = sum(1 for m in _USDA_TOKENS.finditer(text, header_end) if m["comment"])
    return UsdaComments(
        leading + "\n" if leading_lines else "",
        len(leading_lines),
        total - len(leading_lines),
    )


def insert_leading_comments(usda: str, comments: str) -> str:
    """``usda`` text with ``comments`` right after its ``#usda`` line."""
    if not comments:
        return usda
    header, newline, rest = usda.partition("\n")
    return f"{header}{newline}{comments}{rest}"


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
