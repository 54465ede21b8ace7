"""The table of planning backends (``--method``): one record per backend, in run order.

Like trimesh's loader table (``exchange/load.py``), the planner, the CLI and the usdview
dialog read this one list; a new backend is one module under ``backends/`` defining a
:class:`~usdgrip.grasping.proposals.Backend` record, plus its line below
(``docs/architecture.md``, "Where new code goes").
"""

from __future__ import annotations

from collections.abc import Sequence

from usdgrip.grasping.backends import antipodal, line_proposals, slot_proposals
from usdgrip.grasping.proposals import Backend

#: Every backend by name, in the order they run for each gripper.
BACKENDS: dict[str, Backend] = {
    record.name: record
    for record in (antipodal.BACKEND, slot_proposals.BACKEND, line_proposals.BACKEND)
}
#: Backend names in run order (``--method`` choices).
METHODS = tuple(BACKENDS)


def get_backend(name: str) -> Backend:
    """The record of backend ``name``.

    Raises:
        ValueError: no such backend (the message lists them).
    """
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; expected one of {', '.join(METHODS)}") from None


def parse_methods(text: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """Parse ``"antipodal,slots"`` (or a sequence) into known method names; ``None`` stays None.

    Raises:
        ValueError: an unknown or repeated method, or an empty list.
    """
    if text is None:
        return None
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text)]
    names = [n for n in names if n]
    if not names:
        raise ValueError(
            f"no method given; expected a comma-separated list of {', '.join(METHODS)}"
        )
    for name in names:
        get_backend(name)
    if len(set(names)) != len(names):
        raise ValueError(f"method list {','.join(names)} repeats a method")
    return tuple(names)


def list_applicable(obj: object) -> tuple[str, ...]:
    """The backends that apply to ``obj`` (an ``ObjectInputs``) when none is asked for."""
    return tuple(name for name, record in BACKENDS.items() if record.applies(obj) is None)
