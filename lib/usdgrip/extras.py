"""Optional dependencies: which extra brings which module, and the one line that says so.

``pip install usdgrip`` brings only numpy, pydantic and PyYAML. Everything else is an
extra (``pip install 'usdgrip[usd,plan]'``), or comes with the host (Kit, Isaac Sim,
Houdini and usdview builds bring their own ``pxr``). When a module an extra brings is
missing, the command that needs it says, in one line, which extra to install:

    usdgrip evaluate: needs MuJoCo: pip install 'usdgrip[physics]'

:data:`EXTRAS` is the one registry (it follows ``pyproject.toml``'s
``[project.optional-dependencies]``; ``tests/test_packaging.py`` checks that it does),
:func:`describe_missing_extra` turns the ``ImportError`` of a missing optional module
into that line, and :func:`import_optional` imports a module or raises
:class:`MissingExtraError` with it.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from usdgrip.errors import GripperError

__all__ = [
    "COMMAND_EXTRAS",
    "EXTRAS",
    "MODULES",
    "Extra",
    "MissingExtraError",
    "check_extras",
    "describe_missing_extra",
    "find_missing_extra",
    "import_optional",
]


@dataclass(frozen=True)
class Extra:
    """One extra of ``pip install 'usdgrip[NAME]'``.

    Attributes:
        name: the extra's name in ``pyproject.toml``.
        purpose: what it is for, in a few words.
        modules: the top-level modules it brings that usdgrip imports.
        needs: those a command needing the extra cannot start without (checked first:
            ``batch plan`` would otherwise fail in every worker); the others are
            imported where used (Embree, when there, speeds up ray casts).
    """

    name: str
    purpose: str
    modules: tuple[str, ...]
    needs: tuple[str, ...]


#: Top-level module -> the name a user knows it by.
MODULES = {
    "pxr": "OpenUSD (pxr)",
    "mujoco": "MuJoCo",
    "coacd": "CoACD",
    "scipy": "SciPy",
    "fcl": "python-fcl",
    "trimesh": "trimesh",
    "embreex": "Embree (embreex)",
    "rtree": "Rtree",
    "matplotlib": "matplotlib",
    "PySide6": "Qt for Python (PySide6)",
    "distributed": "Dask distributed",
    "dask": "Dask",
    "jinja2": "Jinja2",
    "usd_validation_nvidia": "usd-validation-nvidia",
    "mujoco_warp": "MuJoCo Warp (mujoco-warp)",
    "warp": "NVIDIA Warp (warp-lang)",
}

_PHYSICS = ("mujoco", "coacd", "scipy", "fcl", "trimesh")

#: Every extra, smallest first: a missing module is named with the first extra that
#: brings it, unless the command's own extra brings it too (:data:`COMMAND_EXTRAS`).
EXTRAS = {
    extra.name: extra
    for extra in (
        Extra("usd", "OpenUSD from usd-core (hosts bring their own)", ("pxr",), ("pxr",)),
        Extra("render", "usdgrip render", ("matplotlib",), ("matplotlib",)),
        Extra("qt", "the usdview panels outside usdview", ("PySide6",), ()),
        Extra("dask", "batch --executor dask", ("dask", "distributed"), ("dask", "distributed")),
        Extra("schema", "make schema", ("jinja2",), ("jinja2",)),
        Extra("nvidia", "the usd-validation-nvidia plugin", ("usd_validation_nvidia",), ()),
        Extra("physics", "usdgrip evaluate", _PHYSICS, _PHYSICS),
        Extra("gpu", "--engine mjwarp (MuJoCo Warp)", ("mujoco_warp", "warp"), ()),
        Extra(
            "plan",
            "usdgrip plan, plan --evaluate",
            (*_PHYSICS, "embreex", "rtree"),
            ("scipy", "fcl", "trimesh"),
        ),
    )
}

#: A command -> the extra it needs beyond ``usd``: checked before it starts
#: (:func:`check_extras`), and a missing module that extra brings is named with it
#: (``plan`` without trimesh: ``usdgrip[plan]``, not ``usdgrip[physics]``).
COMMAND_EXTRAS = {
    "plan": "plan",
    "batch plan": "plan",
    "evaluate": "physics",
    "suggest": "plan",
    "render": "render",
}

#: The hint after a missing ``pxr``: hosts bring their own.
_PXR_HINT = ", or run usdgrip with the python of a USD build (Kit, Isaac Sim, Houdini, usdview)"


class MissingExtraError(GripperError, ModuleNotFoundError):
    """An optional module is not installed; the message names the extra that brings it.

    Attributes:
        name: the missing top-level module (``mujoco``).
        extra: the extra that brings it (``physics``).
    """

    def __init__(self, module: str, extra: str) -> None:
        super().__init__(_message(module, extra), name=module)
        self.extra = extra

    def __reduce__(self) -> tuple:  # picklable back from a worker process
        return type(self), (self.name, self.extra)


def find_missing_extra(exc: BaseException, prefer: Sequence[str] = ()) -> tuple[str, str] | None:
    """``(module, extra)`` when ``exc`` (or what caused it) is a missing optional module.

    Follows ``__cause__`` and ``__context__``: a ``ValueError`` raised while an import
    failed (``cannot import usdgrip.batch.jobs: No module named 'pxr'``) counts. Only a
    module that is absent counts: ``pxr.Usdviewq`` missing from a ``pxr`` that exists is
    not a missing extra. ``prefer``: extras to name first when one brings the module.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, MissingExtraError):
            return exc.name, exc.extra
        name = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
        if name in MODULES and _is_absent(name):
            extras = [e for e in (*prefer, *EXTRAS) if e in EXTRAS]
            return name, next(e for e in extras if name in EXTRAS[e].modules)
        exc = exc.__cause__ or exc.__context__
    return None


def describe_missing_extra(exc: BaseException, prefer: Sequence[str] = ()) -> str | None:
    """``needs MuJoCo: pip install 'usdgrip[physics]'`` for a missing optional module, else None."""
    if isinstance(exc, MissingExtraError):
        return str(exc)
    found = find_missing_extra(exc, prefer)
    return None if found is None else _message(*found)


def check_extras(extras: Sequence[str]) -> None:
    """Check that the modules ``extras`` need are installed (found, not imported).

    Raises:
        MissingExtraError: for the first one that is not.
    """
    for name in extras:
        for module in EXTRAS[name].needs:
            if _is_absent(module):
                raise MissingExtraError(module, name)


def import_optional(module: str, prefer: Sequence[str] = ()) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtraError` naming the extra that brings it.

    Raises:
        MissingExtraError: ``module`` (or the optional module it imports) is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        found = find_missing_extra(exc, prefer)
        if found is None:
            raise
        raise MissingExtraError(*found) from None


def _message(module: str, extra: str) -> str:
    what, extras = MODULES[module], extra
    if module != "pxr" and _is_absent("pxr"):  # every command but `env` needs both
        what, extras = f"{what} and {MODULES['pxr']}", f"usd,{extra}"
    hint = _PXR_HINT if "pxr" in what else ""
    return f"needs {what}: pip install 'usdgrip[{extras}]'{hint}"


def _is_absent(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a half-imported module: not ours to judge
        return False
