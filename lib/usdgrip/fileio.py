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


_FILE_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def describe_file_kind(mode: int) -> str | None:
    """What a file of ``st_mode`` ``mode`` is, when it is neither a regular file nor a folder.

    ``"a named pipe (FIFO)"``, ``"a character device"``, ``"a block device"``,
    ``"a socket"`` (``"not a regular file"`` for anything else); ``None`` for a regular
    file or a folder.
    """
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return _FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")


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


#: What some editors put before UTF-8 text; USD's usda reader refuses it.
UTF8_BOM = b"\xef\xbb\xbf"


#: Most bytes :func:`read_text_input` reads by default (callers pass their own limit).
MAX_TEXT_INPUT_BYTES = 64 << 20
#: Seconds an input that is a named pipe or a device may go without giving data (a pipe
#: whose writer has not started, a terminal nobody types into) before the command gives up.
INPUT_WAIT_S = 30.0
_READ_CHUNK = 1 << 20


def format_size(size: int) -> str:
    """``size`` bytes for a message: ``64 MiB``, ``276.0 MB``, ``512 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            value = size / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def read_input_bytes(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_TEXT_INPUT_BYTES,
    kind: str = "an input file",
    advice: str = "",
) -> bytes:
    """The bytes of an input file, bounded in size and in waiting; failures name the file.

    A regular file larger than ``max_bytes`` is refused before any byte is read. A
    named pipe (``<(command)``, ``/dev/stdin``) or a device is read as a stream: it may
    go at most :data:`INPUT_WAIT_S` seconds without giving data (a pipe with no writer
    never blocks forever) and is read up to ``max_bytes`` (``/dev/zero`` is not read
    forever). A folder or a socket is refused.

    Args:
        path: the input.
        max_bytes: the most bytes accepted.
        kind: what the file is, for messages (``"a grasp file"``).
        advice: appended to the too-large message (``"; split it"``).

    Raises:
        GripperError: ``PATH: no such file``, ``PATH: permission denied: ...``,
            ``PATH: is a folder ...``, too large, or no data within the wait.
    """
    from usdgrip.errors import GripperError

    shown = display_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise GripperError(f"{shown}: no such file") from None
    except PermissionError:
        raise GripperError(
            describe_unreadable(path) or f"{shown}: cannot be read: permission denied"
        ) from None
    except OSError as exc:  # a socket (ENXIO), a name too long, a loop of links
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(os.stat(path).st_mode):
                raise GripperError(f"{shown}: is a socket; expected a file") from None
        raise GripperError(f"{shown}: cannot be read: {exc.strerror or exc}") from None
    too_large = f"over the {format_size(max_bytes)} limit for {kind}{advice}"
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise GripperError(f"{shown}: is a folder; expected a file")
        if stat.S_ISREG(info.st_mode):
            if info.st_size > max_bytes:
                raise GripperError(
                    f"{shown}: is {format_size(info.st_size)} ({info.st_size:,} bytes), {too_large}"
                )
            os.set_blocking(fd, True)
            data = _read_up_to(fd, max_bytes + 1, None)
        else:
            data = _read_up_to(fd, max_bytes + 1, shown)
        if len(data) > max_bytes:
            kind_of = describe_file_kind(info.st_mode)
            what = f" ({kind_of})" if kind_of else " (it grew while being read)"
            raise GripperError(
                f"{shown}: gives more than {format_size(max_bytes)}{what}, {too_large}"
            )
        return data
    except OSError as exc:
        raise GripperError(f"{shown}: cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _read_up_to(fd: int, limit: int, stream: str | None) -> bytes:
    """Up to ``limit`` bytes of ``fd``; a stream (named ``stream``) waits at most INPUT_WAIT_S."""
    import select

    from usdgrip.errors import GripperError

    chunks: list[bytes] = []
    total = 0
    poller = None
    if stream is not None:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLPRI)
    while total < limit:
        if poller is not None and not poller.poll(INPUT_WAIT_S * 1000):
            raise GripperError(
                f"{stream}: gave no data for {INPUT_WAIT_S:g} s (a named pipe whose writer "
                "has not started, or a device with nothing to read); start its writer first"
            )
        try:
            chunk = os.read(fd, min(_READ_CHUNK, limit - total))
        except BlockingIOError:
            continue  # woken without data (another reader took it): wait again
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_text_input(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_TEXT_INPUT_BYTES,
    kind: str = "an input file",
    advice: str = "",
) -> str:
    """The UTF-8 text of an input file, read by :func:`read_input_bytes` (bounded).

    Raises:
        GripperError: as :func:`read_input_bytes`, or the text is not UTF-8 (naming the line).
    """
    from usdgrip.errors import GripperError

    data = read_input_bytes(path, max_bytes=max_bytes, kind=kind, advice=advice)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise GripperError(
            f"{display_path(path)}: line {line}: byte 0x{data[exc.start]:02x} is not UTF-8; "
            "expected UTF-8 text"
        ) from None


def describe_unreadable(path: str | os.PathLike[str]) -> str | None:
    """Why an input file cannot be read, when USD would not say it plainly (else None).

    ``permission denied`` (naming the mode and owner) and a usda file that starts with
    a UTF-8 BOM. Only a regular file is opened (a named pipe would block).
    """
    shown = display_path(path)
    try:
        info = os.stat(path)
    except PermissionError:
        return (
            f"{shown}: permission denied: cannot reach the file (a folder on its path may "
            "not be searched)"
        )
    except OSError:
        return None  # USD's own message says more
    if not stat.S_ISREG(info.st_mode):
        return None
    try:
        with open(path, "rb") as stream:
            head = stream.read(len(UTF8_BOM))
    except PermissionError:
        return (
            f"{shown}: permission denied: cannot read the file (mode "
            f"{stat.S_IMODE(info.st_mode):04o}, owner uid {info.st_uid}); ask its owner, or "
            "make it readable (chmod a+r)"
        )
    except OSError:
        return None
    if head.startswith(UTF8_BOM):
        return (
            f"{shown}: starts with a UTF-8 BOM (bytes EF BB BF) before '#usda'; USD does not "
            "read a file with a BOM: save it as UTF-8 without BOM"
        )
    return None


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
