"""Stand-in of ``omni.kit.undo``: ``undo()`` takes back the last command executed."""

from __future__ import annotations


def undo() -> bool:
    from omni.kit.commands import HISTORY

    if not HISTORY:
        return False
    HISTORY.pop().undo()
    return True
