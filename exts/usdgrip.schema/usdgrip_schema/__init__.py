"""Kit extension ``usdgrip.schema``: register the usdGrip schema when this module is imported.

Kit imports this module when the extension starts (``[core] order = -100``, so
before ``omni.usd`` builds USD's schema registry). It makes the ``usdgrip``
package importable without a second ``pxr`` (:func:`find_usdgrip_folder`),
imports it (which registers the schema) and registers the usdview-free
UsdValidation plugin. If the schema registry was built first, it fails loudly
instead of letting validation pass silently.
"""

from __future__ import annotations

import sys
from pathlib import Path

EXT_DIR = Path(__file__).resolve().parent.parent


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


def _import_usdgrip():
    try:
        import usdgrip

        if getattr(usdgrip, "__file__", None) is None:  # a stray folder named usdgrip
            raise ImportError("usdgrip is a namespace package here, not the library")
    except ImportError:
        sys.modules.pop("usdgrip", None)
        folder = find_usdgrip_folder()
        if folder is None:
            raise ImportError(
                f"usdgrip.schema: the usdgrip package is not importable from Kit's Python and not "
                f"installed beside the extension ({EXT_DIR / 'pip_prebundle'}); install it with "
                f"`<kit python> -m pip install --target {EXT_DIR / 'pip_prebundle'} --no-deps "
                "usdgrip pydantic pydantic-core annotated-types typing-extensions "
                "typing-inspection pyyaml` (see docs/kit.md)"
            ) from None
        # Appended: Kit's own pxr and numpy stay first on the path.
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
        import usdgrip
    return usdgrip


usdgrip = _import_usdgrip()  # registers the schema (usdgrip._plugin.register_schema)

from pxr import Usd  # noqa: E402  (after usdgrip: its import is the registration)

from usdgrip._plugin import API_SCHEMAS, register_validation_plugin  # noqa: E402

register_validation_plugin()

if Usd.SchemaRegistry().FindAppliedAPIPrimDefinition(API_SCHEMAS[0]) is None:
    raise ImportError(
        "usdgrip.schema started after USD's schema registry was built (omni.usd already "
        "running), so GripperSiteAPI/GripperSlotAPI are unknown in this process and validation "
        "would pass silently. Enable it at startup: `--enable usdgrip.schema` (or "
        "`--enable usdgrip.kit`) on the command line, or in the app's .kit file."
    )
