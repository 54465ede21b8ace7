"""Locate usdgrip's shared plugin files and register the codeless schema.

The same layout exists in a checkout (repository root) and in an installed
wheel (``usdgrip/share``): ``plugInfo.json`` with ``Includes`` for
``schemas/*/`` and ``plugins/*/``.

This module imports nothing from usdgrip: the Kit extension ``usdgrip.schema``
loads this file on its own, to register the plugins without importing the
package (whose import also checks, and so builds, USD's schema registry).
"""

from __future__ import annotations

import warnings
from pathlib import Path

SCHEMA_PLUGIN_NAME = "usdGrip"
API_SCHEMAS = ("GripperSiteAPI", "GripperSlotAPI")


def share_dir() -> Path:
    """Return the directory holding the root ``plugInfo.json`` (wheel or checkout).

    Raises:
        FileNotFoundError: neither the installed nor the checkout layout is present.
    """
    package_dir = Path(__file__).resolve().parent
    for candidate in (package_dir / "share", package_dir.parent.parent):
        if (candidate / "plugInfo.json").is_file() and (candidate / "schemas").is_dir():
            return candidate
    raise FileNotFoundError(
        f"usdgrip: no plugInfo.json beside the package ({package_dir / 'share'}) or in the "
        f"checkout ({package_dir.parent.parent}); reinstall usdgrip."
    )


def schema_dir() -> Path:
    """Return the directory of the usdGrip schema plugin (``schemas/usdGrip``)."""
    return share_dir() / "schemas" / "usdGrip"


def usdview_plugin_dir() -> Path:
    """Return the directory of the usdview plugin (also its PYTHONPATH entry)."""
    return share_dir() / "plugins" / "usdview"


def register_schema_plugin() -> None:
    """Register the usdGrip schema plugin with Plug once, without touching the schema registry.

    For hosts that register schemas before anything builds USD's schema registry
    (Kit's schema extensions): building it here would hide every schema
    registered after this one.
    """
    from pxr import Plug

    registry = Plug.Registry()
    if registry.GetPluginWithName(SCHEMA_PLUGIN_NAME) is None:
        registry.RegisterPlugins(str(schema_dir()))


def register_schema() -> None:
    """Register the usdGrip schema plugin once; safe when already registered.

    Must run before the first use of ``Usd.SchemaRegistry``: USD builds the
    registry once, so a plugin registered later is not seen. When that happened
    a ``RuntimeWarning`` explains the import order instead of failing.
    """
    from pxr import Usd

    register_schema_plugin()
    if Usd.SchemaRegistry().FindAppliedAPIPrimDefinition(API_SCHEMAS[0]) is None:
        warnings.warn(
            "usdgrip: the USD schema registry was built before the usdGrip schema was "
            "registered, so GripperSiteAPI/GripperSlotAPI are unknown in this process. "
            "Import usdgrip before opening stages, or set PXR_PLUGINPATH_NAME as "
            "`usdgrip env` prints.",
            RuntimeWarning,
            stacklevel=3,
        )


VALIDATION_PLUGIN_NAME = "usdGripValidation"


def validation_plugin_dir() -> Path:
    """Return the directory of the UsdValidation plugin (also its module's sys.path entry)."""
    return share_dir() / "plugins" / "usdValidation"


def register_validation_plugin() -> None:
    """Register the usdview-free UsdValidation plugin (the usdgrip validators) once.

    Plug imports the plugin's module (``usdGripValidation``) by name the first
    time a client asks for one of its validators, so its directory is appended
    to ``sys.path`` (appended: a host's own packages keep precedence).
    """
    import sys

    from pxr import Plug

    folder = str(validation_plugin_dir())
    if folder not in sys.path:
        sys.path.append(folder)
    registry = Plug.Registry()
    if registry.GetPluginWithName(VALIDATION_PLUGIN_NAME) is None:
        registry.RegisterPlugins(folder)
