"""How usdgrip reads an input file: bounded in size and in waiting, failures naming it.

:func:`read_input_bytes` and :func:`read_text_input` refuse a regular file over their
limit before reading it and read a named pipe or a device as a stream that may wait at
most :data:`INPUT_WAIT_S` for data. :func:`describe_unreadable` and
:func:`find_non_utf8_line` say why USD cannot read a file when USD would not say it
plainly (permission, a UTF-8 BOM, a byte that is not UTF-8). :mod:`usdgrip.fileio`
re-exports these names.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from usdgrip.file_names import describe_file_kind, display_path, format_size

#: What some editors put before UTF-8 text; USD's usda reader refuses it.
UTF8_BOM = b"\xef\xbb\xbf"


#: Most bytes :func:`read_text_input` reads by default (callers pass their own limit).
MAX_TEXT_INPUT_BYTES = 64 << 20
#: Seconds an input that is a named pipe or a device may go without giving data (a pipe
#: whose writer has not started, a terminal nobody types into) before the command gives up.
INPUT_WAIT_S = 30.0
_READ_CHUNK = 1 << 20


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
