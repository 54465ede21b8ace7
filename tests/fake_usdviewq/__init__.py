"""A stand-in for usdview's ``pxr.Usdviewq`` (usd-core ships no usdview).

:func:`install` registers ``pxr_overlay/Usdviewq`` as the module ``pxr.Usdviewq``
in ``sys.modules`` before anything imports it, so the stand-in is used even
where a real ``pxr.Usdviewq`` exists (a source-built USD on ``PYTHONPATH``):
tests of the stand-in never load the real usdview by accident. Tests of the
real usdview (tests/test_usdview_real.py) never call it. ``load_plugins.py``
runs usdview's plugin loading path against it in a subprocess.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

OVERLAY = Path(__file__).resolve().parent / "pxr_overlay"
NAME = "pxr.Usdviewq"


def install() -> None:
    """Make ``pxr.Usdviewq`` the stand-in (idempotent).

    Raises:
        RuntimeError: a real ``pxr.Usdviewq`` was imported before.
    """
    import pxr

    module = sys.modules.get(NAME)
    if module is not None:
        if Path(module.__file__).resolve().parent.parent != OVERLAY:
            raise RuntimeError(f"the real {NAME} ({module.__file__}) is already imported")
        return
    package = OVERLAY / "Usdviewq"
    spec = importlib.util.spec_from_file_location(
        NAME, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = module
    spec.loader.exec_module(module)
    pxr.Usdviewq = module
