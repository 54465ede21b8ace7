"""Stand-in of ``omni.usd``: one UsdContext, and the schema registry built at startup.

Kit's ``omni.usd`` creates the ``UsdContext`` when it starts, which builds
USD's schema registry; a schema plugin registered after that is never seen by
this process. :class:`UsdExtension` reproduces that with real usd-core.
"""

from __future__ import annotations

from typing import Any

import omni.ext
from pxr import Usd

#: True once this extension started (and built the schema registry).
SCHEMA_REGISTRY_BUILT = False


class Selection:
    def __init__(self) -> None:
        self._paths: list[str] = []

    def get_selected_prim_paths(self) -> list[str]:
        return list(self._paths)

    def set_selected_prim_paths(self, paths: list[str], expand_in_stage: bool = False) -> None:
        del expand_in_stage
        self._paths = [str(p) for p in paths]


class UsdContext:
    def __init__(self) -> None:
        self._stage: Usd.Stage | None = None
        self._selection = Selection()

    def open_stage(self, url: str) -> bool:
        self._stage = Usd.Stage.Open(url)
        self._selection.set_selected_prim_paths([])
        return bool(self._stage)

    def new_stage(self) -> bool:
        self._stage = Usd.Stage.CreateInMemory()
        return True

    def close_stage(self) -> bool:
        self._stage = None
        return True

    def get_stage(self) -> Usd.Stage | None:
        return self._stage

    def get_selection(self) -> Selection:
        return self._selection


_CONTEXT: UsdContext | None = None


def get_context(name: str = "") -> UsdContext:
    del name
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = UsdContext()
    return _CONTEXT


class UsdExtension(omni.ext.IExt):
    def on_startup(self, ext_id: str) -> None:
        global SCHEMA_REGISTRY_BUILT
        # What Kit's UsdContext does on creation: the schema registry is built now,
        # from the plugins registered so far.
        registry: Any = Usd.SchemaRegistry()
        registry.FindConcretePrimDefinition("Xform")
        get_context()
        SCHEMA_REGISTRY_BUILT = True
