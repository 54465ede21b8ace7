"""Locate usdgrip's shared plugin files and register the codeless schema.

The same layout exists in a checkout (repository root) and in an installed
wheel (``usdgrip/share``): ``plugInfo.json`` with ``Includes`` for
``schemas/*/`` and ``plugins/*/``.

This module imports nothing from usdgrip: the Kit extension ``usdgrip.schema``
loads this file on its own, to register the plugins without importing the
package (whose import also checks, and so builds, USD's schema registry).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import warnings
from pathlib import Path

SCHEMA_PLUGIN_NAME = "usdGrip"
#: The folder of usdgrip's dependencies that ``usdgrip env`` exports (``cli/env.py``).
DEPENDENCIES_ENV = "USDGRIP_DEPS_PATH"
API_SCHEMAS = ("GripperSiteAPI", "GripperSlotAPI")
#: The UsdValidation Plug plugin (``plugins/usdValidation``); also its Python module's name.
VALIDATION_PLUGIN_NAME = "usdGripValidation"


def append_dependency_path() -> None:
    """Append ``$USDGRIP_DEPS_PATH`` (set by ``usdgrip env``) to the END of ``sys.path``.

    Everything the host has, its own numpy and ``pxr`` included, is found first; the
    folder only supplies what the host lacks. Unset or already there: nothing changes.
    """
    folder = os.environ.get(DEPENDENCIES_ENV, "")
    if folder and folder not in sys.path and os.path.isdir(folder):
        sys.path.append(folder)


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


def validation_plugin_dir() -> Path:
    """Return the directory of the UsdValidation plugin (also its PYTHONPATH entry)."""
    return share_dir() / "plugins" / "usdValidation"


def register_validation_plugin() -> None:
    """Declare usdgrip's UsdValidation validators to Plug once; safe when already declared.

    Registers ``plugins/usdValidation`` (skipped when a plugin of that name is
    registered, e.g. through ``PXR_PLUGINPATH_NAME``) and makes its module
    ``usdGripValidation`` importable (its folder is appended to ``sys.path``
    when no module of that name is found), so that
    ``UsdValidation.ValidationContext(keywords=["usdgrip"])`` finds the rules
    (appended: a host's own packages keep precedence). Kit's ``usdgrip.schema``
    extension calls it at startup too.

    UsdValidation reads the validator declarations when its registry is first
    built (the first ``ValidationRegistry()`` or ``ValidationContext`` in the
    process) and never again, so this must run before that; it never builds
    the registry itself. Registered later, the validators stay unknown in this
    process: :func:`get_validation_plugin_problem` says so. A plugin file that
    cannot be read is a ``RuntimeWarning``, never an import failure.
    """
    from pxr import Plug, Tf

    directory = validation_plugin_dir()
    if importlib.util.find_spec(VALIDATION_PLUGIN_NAME) is None:
        sys.path.append(str(directory))
    registry = Plug.Registry()
    if registry.GetPluginWithName(VALIDATION_PLUGIN_NAME) is None:
        try:
            registry.RegisterPlugins(str(directory))
        except Tf.ErrorException as exc:  # e.g. a plugInfo.json being regenerated
            reason = " ".join(str(exc).split())
            warnings.warn(
                f"usdgrip: the UsdValidation plugin in {directory} could not be registered "
                f"({reason}); usdgrip's validators are unknown to UsdValidation in this process",
                RuntimeWarning,
                stacklevel=3,
            )


def get_validation_plugin_problem() -> str | None:
    """Why UsdValidation in this process does not know usdgrip's validators, or ``None``.

    Builds UsdValidation's registry when nothing has yet (call it only where
    that is wanted, e.g. ``usdgrip rules``).
    """
    try:
        from pxr import UsdValidation
    except ImportError:  # a USD build without the UsdValidation library
        return "this USD has no UsdValidation module"
    if UsdValidation.ValidationRegistry().GetValidatorMetadataForKeyword("usdgrip"):
        return None
    return (
        "UsdValidation's registry in this process was built before usdgrip registered its "
        'validators, so ValidationContext(keywords=["usdgrip"]) finds none; import usdgrip '
        "before the first ValidationRegistry()/ValidationContext, or set PXR_PLUGINPATH_NAME "
        "and PYTHONPATH as `usdgrip env` prints"
    )


def register_schema_plugin() -> None:
    """Register the usdGrip schema plugin with Plug once, without touching the schema registry.

    For hosts that register schemas before anything builds USD's schema registry
    (Kit's schema extensions): building it here would hide every schema
    registered after this one.
    """
    from pxr import Plug, Tf

    registry = Plug.Registry()
    try:
        registered = registry.GetPluginWithName(SCHEMA_PLUGIN_NAME)
    except Tf.ErrorException as exc:
        # The first query loads the plugins on PXR_PLUGINPATH_NAME; a broken one (two
        # types of one alias, a bad plugInfo.json) raises its errors here. Plug loads the
        # others: say so and go on.
        warnings.warn(
            "usdgrip: a USD plugin on PXR_PLUGINPATH_NAME reported errors while loading "
            f"({' '.join(str(exc).split())}); usdgrip continues without what it failed to "
            "declare",
            RuntimeWarning,
            stacklevel=3,
        )
        registered = registry.GetPluginWithName(SCHEMA_PLUGIN_NAME)
    if registered is None:
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
