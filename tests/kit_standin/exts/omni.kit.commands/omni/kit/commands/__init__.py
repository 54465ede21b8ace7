"""Stand-in of ``omni.kit.commands``: Command, register/unregister, execute with a history.

As Kit: a command is registered under its class name without the ``Command`` suffix;
``execute(name, **kwargs)`` builds it with the keywords, calls ``do()``, records it for
``omni.kit.undo`` and returns ``(True, result)``; an exception in ``do()`` is logged and
gives ``(False, None)``.
"""

from __future__ import annotations

import logging
from typing import Any

#: Registered command classes by name.
REGISTRY: dict[str, type] = {}
#: Commands done, last last (omni.kit.undo takes them back).
HISTORY: list[Any] = []
log = logging.getLogger("omni.kit.commands")


class Command:
    """Base of Kit commands: ``do()`` and ``undo()``."""

    def do(self) -> Any:
        raise NotImplementedError

    def undo(self) -> None:
        raise NotImplementedError


def _name_of(cls: type) -> str:
    name = cls.__name__
    return name[: -len("Command")] if name.endswith("Command") else name


def register(cls: type) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Command)):
        raise TypeError(f"{cls!r} is not an omni.kit.commands.Command subclass")
    REGISTRY[_name_of(cls)] = cls


def unregister(cls: type) -> None:
    REGISTRY.pop(_name_of(cls), None)


def get_command_class(name: str) -> type | None:
    return REGISTRY.get(name)


def execute(name: str, **kwargs: Any) -> tuple[bool, Any]:
    cls = REGISTRY.get(name)
    if cls is None:
        log.error("Can't execute command: %s, it wasn't registered", name)
        return False, None
    command = cls(**kwargs)
    try:
        result = command.do()
    except Exception as exc:  # Kit logs a failing command and goes on
        log.error("Failed to execute a command: %s: %s", name, exc)
        return False, None
    HISTORY.append(command)
    return True, result
