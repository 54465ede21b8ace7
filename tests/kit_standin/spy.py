"""Record which shared library functions a menu entry calls (usdview and Kit alike)."""

from __future__ import annotations

import functools
import threading
from contextlib import contextmanager

#: (module, attribute) of every function the two hosts share for a menu job.
SHARED = (
    ("usdgrip.views.actions", "find_slot_prims"),
    ("usdgrip.views.actions", "show_slot_overlays"),
    ("usdgrip.views.actions", "read_sampling_input"),
    ("usdgrip.views.actions", "sample_grasp_set"),
    ("usdgrip.views.actions", "build_plan_request"),
    ("usdgrip.views.actions", "plan_grasp_set"),
    ("usdgrip.views.actions", "author_grasp_set_overlays"),
    ("usdgrip.views.actions", "export_grasp_set"),
    ("usdgrip.views.overlays", "clear_overlays"),
    ("usdgrip.rules", "validate"),
)


class Recorder:
    """Calls seen since the last :meth:`take`, with the thread each ran in."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def take(self) -> list[str]:
        """Names called since the last take, sorted, without repeats."""
        with self._lock:
            names, self.calls = sorted({name for name, _ in self.calls}), []
        return names

    def threads(self, name: str) -> set[int]:
        with self._lock:
            return {thread for called, thread in self.calls if called == name}


@contextmanager
def spy_shared_functions():
    """Wrap every :data:`SHARED` function in place; yields the :class:`Recorder`."""
    import importlib

    recorder = Recorder()
    saved = []
    for module_name, attribute in SHARED:
        module = importlib.import_module(module_name)
        original = getattr(module, attribute)

        def wrapper(*args, __original=original, __name=attribute, **kwargs):
            with recorder._lock:
                recorder.calls.append((__name, threading.get_ident()))
            return __original(*args, **kwargs)

        functools.update_wrapper(wrapper, original)
        setattr(module, attribute, wrapper)
        saved.append((module, attribute, original))
    try:
        yield recorder
    finally:
        for module, attribute, original in saved:
            setattr(module, attribute, original)
