"""A stand-in for usdview's ``pxr.Usdviewq`` (usd-core ships no usdview).

:func:`install` makes ``import pxr.Usdviewq.plugin`` resolve to
``pxr_overlay/Usdviewq`` by extending the ``pxr`` package's ``__path__``
(``pxr`` is a regular package, so a second directory of that name on
``sys.path`` would be ignored). ``load_plugins.py`` runs usdview's plugin
loading path against it in a subprocess.
"""

from __future__ import annotations

from pathlib import Path

OVERLAY = Path(__file__).resolve().parent / "pxr_overlay"


def install() -> None:
    """Let ``pxr.Usdviewq`` import from the stand-in (idempotent)."""
    import pxr

    if str(OVERLAY) not in pxr.__path__:
        pxr.__path__.append(str(OVERLAY))
