"""Kit extension ``usdgrip.schema``: register the usdGrip schema when this module is imported.

Kit imports this module when the extension starts (``[core] order = -100``, so
before ``omni.usd`` builds USD's schema registry). It registers the usdGrip
schema plugin and the usdview-free UsdValidation plugin with Plug, and makes
the ``usdgrip`` package importable without a second ``pxr``
(:func:`find_usdgrip_folder`), but does not import the package: its import
checks USD's schema registry, and building the registry now would hide every
schema extension that registers after this one. If ``omni.usd`` already
started (the extension was enabled too late), it fails loudly instead of
letting validation pass silently.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXT_DIR = Path(__file__).resolve().parent.parent

_TOO_LATE = (
    "usdgrip.schema started after USD's schema registry was built (omni.usd already running), "
    "so GripperSiteAPI/GripperSlotAPI are unknown in this process and validation would pass "
    "silently. Enable it at startup: `--enable usdgrip.schema` (or `--enable usdgrip.kit`) on "
    "the command line, or in the app's .kit file."
)


def find_usdgrip_folder(ext_dir: Path = EXT_DIR) -> Path | None:
    """The folder holding the ``usdgrip`` package next to this extension, if any.

    Looked for, in order: ``<ext>/pip_prebundle`` (a ``pip install --target``
    folder), the checkout's ``lib/`` (``<repo>/exts/usdgrip.schema``), and the
    folder the package itself sits in when the extension ships inside it
    (``<folder>/usdgrip/share/exts/usdgrip.schema``, a wheel installed with
    ``--target``).
    """
    candidates = [ext_dir / "pip_prebundle", ext_dir.parent.parent / "lib"]
    if len(ext_dir.parents) >= 4:
        candidates.append(ext_dir.parents[3])
    for folder in candidates:
        if (folder / "usdgrip" / "__init__.py").is_file():
            return folder
    return None


def _make_usdgrip_importable() -> Path:
    """The folder of the usdgrip package Kit will import (appended to sys.path if needed)."""
    spec = importlib.util.find_spec("usdgrip")  # locates, does not import
    if spec is not None and spec.origin and spec.origin.endswith("__init__.py"):
        return Path(spec.origin).parent.parent
    folder = find_usdgrip_folder()  # a stray namespace "usdgrip" folder does not count
    if folder is None:
        raise ImportError(
            f"usdgrip.schema: the usdgrip package is not importable from Kit's Python and not "
            f"installed beside the extension ({EXT_DIR / 'pip_prebundle'}); install it with "
            f"`<kit python> -m pip install --target {EXT_DIR / 'pip_prebundle'} --no-deps "
            "usdgrip pydantic pydantic-core annotated-types typing-extensions "
            "typing-inspection pyyaml` (see docs/kit.md)"
        )
    # Appended: Kit's own pxr and numpy stay first on the path.
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
    importlib.invalidate_caches()
    return folder


def _load_plugin_module(folder: Path) -> ModuleType:
    """``usdgrip/_plugin.py`` on its own (it imports nothing from usdgrip)."""
    loaded = sys.modules.get("usdgrip._plugin")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(
        "usdgrip_schema._usdgrip_plugin", folder / "usdgrip" / "_plugin.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _omni_usd_started() -> bool:
    try:
        import omni.kit.app
    except ImportError:  # not in Kit: nothing else builds the registry behind our back
        return False
    return bool(omni.kit.app.get_app().get_extension_manager().is_extension_enabled("omni.usd"))


_plugin = _load_plugin_module(_make_usdgrip_importable())
_plugin.register_schema_plugin()
_plugin.register_validation_plugin()

if _omni_usd_started():  # the registry exists already: asking it costs nothing now
    from pxr import Usd

    if Usd.SchemaRegistry().FindAppliedAPIPrimDefinition(_plugin.API_SCHEMAS[0]) is None:
        raise ImportError(_TOO_LATE)
