"""Deprecated name of :mod:`usdgrip.validators` (kept for one release; removed in 0.3).

``usdgrip.adapters.nvidia``, ``usdgrip.adapters.usdvalidation`` and
``usdgrip.adapters.omni_asset_validator`` still import: each is the module of the same
name in :mod:`usdgrip.validators` (the very same module object, so checkers, pickles and
registrations are shared) and warns once with a ``DeprecationWarning``. The entry point
of ``usd-validation-nvidia`` is ``usdgrip.validators.nvidia:plugin``.
"""

from __future__ import annotations

import importlib
import sys
import warnings


def alias_validator_module(old_name: str) -> None:
    """Make ``usdgrip.adapters.<name>`` the module ``usdgrip.validators.<name>``, warning once."""
    new_name = "usdgrip.validators." + old_name.rsplit(".", 1)[1]
    warnings.warn(
        f"{old_name} is deprecated; import {new_name} (the same module) instead",
        DeprecationWarning,
        stacklevel=3,
    )
    sys.modules[old_name] = importlib.import_module(new_name)
