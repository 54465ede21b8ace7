"""Exceptions raised by usdgrip.

Library code raises ``ValueError``/``TypeError`` for bad arguments and
:class:`GripperError` (or a subclass) for bad input data: a file, a prim or an
authored value. The CLI maps each to one line on stderr and an exit code.
"""

from __future__ import annotations


class GripperError(Exception):
    """Bad input data: the message names the file, prim or attribute and what is wrong."""


class StageOpenError(GripperError):
    """A file could not be opened as a USD stage (missing, not USD, or corrupt)."""


class PrimNotFoundError(GripperError):
    """A prim path given by the user does not exist on the stage."""
