"""JSON text from files and customData, read with limits (pure).

Python's ``json`` recurses once per nested array or object, so a string
nested 100,000 levels deep raises ``RecursionError`` from inside the parser;
and an integer of more than ``sys.get_int_max_str_digits()`` digits (4300 by
default) raises a ``ValueError`` that names no key. :func:`load_json`
measures the nesting depth before parsing and refuses deeper text with a
``ValueError`` saying so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

#: Deepest nesting of arrays and objects accepted (usdgrip's own JSON is at most 4 deep).
MAX_JSON_DEPTH = 100

# A JSON string literal (escapes included), or one bracket outside strings.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def get_json_depth_problem(text: str, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Why ``text`` nests too deep to parse, or ``None``; stops at the first level past ``limit``.

    Brackets inside string literals do not count. Unbalanced brackets are left
    to the parser to report.
    """
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return (
                    f"nests arrays/objects more than {limit} levels deep (level {depth} "
                    f"opens at character {match.start()}); expected at most {limit}"
                )
        elif token in "]}":
            depth -= 1
    return None


def load_json(
    text: str,
    *,
    limit: int = MAX_JSON_DEPTH,
    parse_int: Callable[[str], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """``json.loads`` after checking the nesting depth.

    Raises:
        ValueError: the text nests deeper than ``limit`` (message from
            :func:`get_json_depth_problem`), or is not valid JSON
            (``json.JSONDecodeError``, a ``ValueError``).
    """
    problem = get_json_depth_problem(text, limit)
    if problem is not None:
        raise ValueError(problem)
    return json.loads(
        text, parse_int=parse_int, parse_float=parse_float, object_pairs_hook=object_pairs_hook
    )
