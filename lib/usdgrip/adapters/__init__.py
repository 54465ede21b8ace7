"""Deprecated name of :mod:`usdgrip.validators` (kept for one release).

``usdgrip.adapters.nvidia``, ``usdgrip.adapters.usdvalidation`` and
``usdgrip.adapters.omni_asset_validator`` still import: each IS the module of the same
name in :mod:`usdgrip.validators` (the same module object, so checkers, pickles and
registrations are shared), found by a finder this package installs, and importing it
warns once with a ``DeprecationWarning``. The entry point of ``usd-validation-nvidia``
is ``usdgrip.validators.nvidia:plugin``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from importlib.machinery import ModuleSpec
from types import ModuleType

#: The modules that moved to usdgrip.validators, by their name in both packages.
MOVED_MODULES = frozenset({"nvidia", "usdvalidation", "omni_asset_validator"})


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``usdgrip.adapters.<name>`` and loads it as ``usdgrip.validators.<name>``."""

    def find_spec(self, fullname: str, path: object = None, target: object = None):
        package, _, name = fullname.rpartition(".")
        if package != __name__ or name not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return None  # a placeholder; exec_module puts the moved module in its place

    def exec_module(self, module: ModuleType) -> None:
        new_name = "usdgrip.validators." + module.__name__.rpartition(".")[2]
        warnings.warn(
            f"{module.__name__} is deprecated; import {new_name} (the same module) instead",
            DeprecationWarning,
            stacklevel=2,
        )
        # The import system returns what sys.modules holds at the end of loading.
        sys.modules[module.__name__] = importlib.import_module(new_name)


# One finder per process, also when this package is reloaded (a new class then).
sys.meta_path[:] = [
    finder
    for finder in sys.meta_path
    if (type(finder).__module__, type(finder).__qualname__) != (__name__, "MovedModuleFinder")
]
sys.meta_path.append(MovedModuleFinder())
