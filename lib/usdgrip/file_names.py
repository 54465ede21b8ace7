"""How a message names a file: its path printable anywhere, its kind, a size.

:func:`display_path` shows the bytes of a path that are not UTF-8 as escapes,
:func:`check_utf8_name` refuses such a path (USD takes only UTF-8 names),
:func:`describe_file_kind` says what a file that is not a regular file is, and
:func:`format_size` writes a byte count for a message. Used by both the writing
(:mod:`usdgrip.fileio`) and the reading (:mod:`usdgrip.input_reading`) of files.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


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


def format_size(size: int) -> str:
    """``size`` bytes for a message: ``64 MiB``, ``276.0 MB``, ``512 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            value = size / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"
