"""Where an issue's prim is authored: the layer file of its strongest spec, and the line there.

For reports that point into files (SARIF ``region.startLine``, GitHub annotations, JUnit):
:class:`SpecLocator` takes the strongest spec of a prim that lives in a layer on disk (the
session layer and anonymous layers are skipped) and, for a usda layer, the line of that
spec's ``def``/``over``/``class`` statement; a crate (usdc) or usdz layer gives the file
only. Lines come from one scan of each usda layer's text (:func:`index_prim_lines`), made
the first time a prim in it is asked for; variant specs (``/Robot{hand=bad}Hand``) are
indexed too.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pxr import Sdf, Usd

__all__ = ["SpecLocation", "SpecLocator", "index_prim_lines", "locate_issues"]


class SpecLocation(NamedTuple):
    """A spec's layer file (its real path) and line (``None``: not a text layer)."""

    path: str
    line: int | None


# The tokens that matter for finding prim statements: everything that can hide a brace, a
# quote or a keyword (comments, strings, asset paths, bracketed lists) is one token, and
# braces and parentheses. A prim's keyword is found in the text just before its name.
_TOKENS = re.compile(
    rb"""
    \#[^\n]*
  | \"\"\"(?:[^\\]|\\.)*?\"\"\" | \'\'\'(?:[^\\]|\\.)*?\'\'\'
  | "(?:[^"\\\n]|\\.)*" | '(?:[^'\\\n]|\\.)*'
  | @@@.*?@@@ | @[^@\n]*@
  | \[(?:[^\[\]"'@\#]|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|@[^@\n]*@)*\]
  | [{}()]
    """,
    re.VERBOSE | re.DOTALL,
)
#: The text between the previous token and a name: ``def Xform``, ``over``, ``variantSet``.
_HEADER = re.compile(rb"\s*(?:(def|over|class)(?:\s+[A-Za-z_][\w:]*)?|(variantSet))\s*")


def index_prim_lines(text: bytes) -> dict[str, int]:
    """``{spec path: line}`` of every prim statement in usda ``text`` (lines from 1).

    Spec paths are Sdf's: ``/World/site``, ``/Robot{hand=bad}Hand``. Properties,
    metadata and values are skipped; a malformed text gives what could be read.
    """
    lines: dict[str, int] = {}
    # Frames: ("prim", path) | ("vset", path, set name) | ("variant", path) | ("plain", path)
    frames: list[tuple] = [("root", "")]
    parens = 0
    pending: tuple | None = None  # (kind, line, name)
    line, counted, previous = 1, 0, 0
    header = _HEADER.fullmatch
    for match in _TOKENS.finditer(text):
        start = match.start()
        first = text[start]
        if first == 0x7B:  # "{"
            if not parens:
                parent = frames[-1][1]
                if pending is None:
                    frames.append(("plain", parent))
                elif pending[0] == "prim":
                    path = f"{parent}{'' if parent.endswith('}') else '/'}{pending[2]}"
                    lines.setdefault(path, pending[1])
                    frames.append(("prim", path))
                elif pending[0] == "vset":
                    frames.append(("vset", parent, pending[2]))
                else:  # a variant of the enclosing variant set
                    frames.append(("variant", f"{parent}{{{frames[-1][2]}={pending[2]}}}"))
                pending = None
        elif first == 0x7D:  # "}"
            if not parens and len(frames) > 1:
                frames.pop()
                pending = None
        elif first == 0x28:  # "("
            parens += 1
        elif first == 0x29:  # ")"
            parens = max(0, parens - 1)
        elif (first == 0x22 or first == 0x27) and not parens:  # a string
            found = header(text, previous, start)
            if found is not None:
                line += text.count(b"\n", counted, start)
                counted = start
                name = match.group()[1:-1].decode("utf-8", "replace")
                pending = ("prim", line, name) if found.group(1) else ("vset", line, name)
            elif frames[-1][0] == "vset" and pending is None:
                pending = ("variant", 0, match.group()[1:-1].decode("utf-8", "replace"))
        previous = match.end()
    return lines


def _is_usda(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(6) == b"#usda "
    except OSError:
        return False


class SpecLocator:
    """Finds :class:`SpecLocation` s of prims on one stage; each usda layer is read once."""

    def __init__(self, stage: Usd.Stage) -> None:
        self._stage = stage
        self._indexes: dict[str, dict[str, int] | None] = {}

    def _line(self, layer: Sdf.Layer, spec_path: str) -> int | None:
        path = layer.realPath
        if path not in self._indexes:
            index = None
            if _is_usda(path):
                try:
                    with open(path, "rb") as handle:
                        index = index_prim_lines(handle.read())
                except OSError:
                    index = None
            self._indexes[path] = index
        index = self._indexes[path]
        if index is None:
            return None
        return index.get(spec_path)

    def find(self, prim_path: str) -> SpecLocation | None:
        """Where ``prim_path`` is authored; ``/`` is the root layer's first line.

        ``None`` when no spec of it is in a layer file (anonymous layers, a prim that
        does not exist).
        """
        root = self._stage.GetRootLayer()
        if prim_path == "/":
            if not root.realPath:
                return None
            return SpecLocation(root.realPath, 1 if _is_usda(root.realPath) else None)
        prim = self._stage.GetPrimAtPath(prim_path)
        if not prim:
            return None
        session = self._stage.GetSessionLayer()
        for spec in prim.GetPrimStack():
            layer = spec.layer
            if layer == session or layer.anonymous or not layer.realPath:
                continue
            return SpecLocation(layer.realPath, self._line(layer, str(spec.path)))
        return None


def locate_issues(stage: Usd.Stage, issues: list[dict]) -> None:
    """Add ``location`` (``{"file", "line"}``) to each issue dict that has a spec on disk."""
    locator = SpecLocator(stage)
    for issue in issues:
        found = locator.find(issue["prim"])
        if found is not None:
            issue["location"] = {"file": found.path, "line": found.line}
