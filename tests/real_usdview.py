"""Where the real usdview is: ``USDGRIP_USDVIEW`` (any usdview build: ``bin/usdview`` + ``lib/python``).

``.ci/run`` sets it from ``../shared/usdview/setup.sh`` when that folder exists;
elsewhere the tests that need a real usdview skip, saying why.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from session_folder import shared_session_folder

ENV = "USDGRIP_USDVIEW"


def find_usdview() -> tuple[Path | None, str]:
    """``(root, "")`` for a usable usdview build, else ``(None, why not)``."""
    value = os.environ.get(ENV, "")
    if not value:
        return None, f"needs a real usdview: set {ENV} to a usdview build (bin/usdview, lib/python)"
    root = Path(value)
    for part in ("bin/usdview", "bin/testusdview", "lib/python/pxr/Usdviewq/__init__.py"):
        if not (root / part).is_file():
            return None, f"{ENV}={root} has no {part}"
    if shutil.which("xvfb-run") is None:
        return None, "needs xvfb-run (Debian package xvfb) to run usdview headless"
    return root, ""


USDVIEW, WHY_NOT = find_usdview()
requires_usdview = pytest.mark.skipif(USDVIEW is None, reason=WHY_NOT)


def usdview_python_path() -> str:
    """The usdview build's ``lib/python`` (its ``pxr`` must come first)."""
    assert USDVIEW is not None
    return str(USDVIEW / "lib" / "python")


@contextlib.contextmanager
def one_usdview_at_a_time(tmp_path_factory) -> Iterator[Path]:
    """Hold a lock shared by every pytest-xdist worker; yields a folder they share.

    One usdview (and one ``xvfb-run -a``, whose display choice races) runs at a
    time, and a record written there by one worker is read by the others (of this
    session only: :func:`shared_session_folder`).
    """
    with shared_session_folder(tmp_path_factory, "real_usdview") as shared:
        yield shared
