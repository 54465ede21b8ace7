"""JSON text from files and customData, read with limits (pure).

Python's ``json`` recurses once per nested array or object, so a string
nested 100,000 levels deep raises ``RecursionError`` from inside the parser;
and an integer of more than ``sys.get_int_max_str_digits()`` digits (4300 by
default) raises a ``ValueError`` that names no key. :func:`load_json`
measures the nesting depth before parsing and refuses deeper text with a
``ValueError`` saying so. It also refuses an object that holds a key twice
(:class:`DuplicateKeyError`, naming the key and the line the object opens on): JSON
parsers keep the last value silently, so a second ``"candidates"`` key would replace
the first list. :func:`read_json_file` reads a file with a size limit
(:func:`usdgrip.fileio.read_text_input`) and names it in every error.
"""

from __future__ import annotations

import itertools
import json
import json.decoder
import json.scanner
import math
import os
import re
from collections.abc import Callable
from typing import Any

#: Deepest nesting of arrays and objects accepted (usdgrip's own JSON is at most 4 deep).
MAX_JSON_DEPTH = 100

# A JSON string literal (escapes included), or one bracket outside strings.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class DuplicateKeyError(ValueError):
    """A YAML mapping or JSON object holds the same key twice.

    Attributes:
        key: the repeated key.
        line: the line (from 1) of the repeat (YAML) or of the object holding it (JSON).
        first_line: the line where a YAML key was first given (None for JSON).
    """

    def __init__(self, key: Any, line: int, first_line: int | None = None) -> None:
        where = (
            f"first at line {first_line}"
            if first_line is not None
            else "in the object opening on it"
        )
        super().__init__(
            f"line {line}: duplicate key {key!r} ({where}); each key may appear only once "
            "(a repeat would silently replace the first value)"
        )
        self.key, self.line, self.first_line = key, line, first_line


#: Text up to this many characters is tokenised directly (the bound costs more).
_SCAN_DIRECTLY = 1 << 16
_BOUND_CHUNK = 1 << 24


def compute_bracket_depth_bound(data: bytes, openers: bytes, closers: bytes) -> int:
    """Deepest nesting of ``openers``/``closers`` bytes, counting every one (numpy, chunked).

    Brackets inside strings or comments count too, so this bounds the real depth from
    above: text whose bound is within a limit needs no exact scan.
    """
    import numpy as np

    step_of_byte = np.zeros(256, np.int32)
    step_of_byte[np.frombuffer(openers, np.uint8)] = 1
    step_of_byte[np.frombuffer(closers, np.uint8)] = -1
    depth = deepest = 0
    for start in range(0, len(data), _BOUND_CHUNK):
        chunk = np.frombuffer(data, np.uint8, min(_BOUND_CHUNK, len(data) - start), start)
        steps = step_of_byte[chunk]
        if not steps.any():
            continue
        levels = np.cumsum(steps, out=steps)
        levels += depth
        deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
    return deepest


def get_json_depth_problem(text: str, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Why ``text`` nests too deep to parse, or ``None``; stops at the first level past ``limit``.

    Brackets inside string literals do not count. Unbalanced brackets are left
    to the parser to report. Large text is first bounded by counting every bracket
    (:func:`compute_bracket_depth_bound`, vectorised); only text whose bound passes
    ``limit`` is tokenised.
    """
    if len(text) > _SCAN_DIRECTLY:
        data = text.encode("utf-8", "surrogatepass")
        if compute_bracket_depth_bound(data, b"[{", b"]}") <= limit:
            return None
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


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: the object as a dict, or :class:`_Repeated` for a repeated key."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Repeated(key)
            seen.add(key)
    return result


def _locate_repeated_key(text: str) -> DuplicateKeyError:
    """The first object of ``text`` with a repeated key, found by the pure-Python scanner.

    Only on the error path: the C scanner, which does not say where an object starts,
    found the repeat.
    """

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):
        string, start = s_and_end
        try:
            return json.decoder.JSONObject(
                s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo
            )
        except _Repeated as exc:
            if not hasattr(exc, "line"):
                exc.line = string.count("\n", 0, start) + 1
            raise

    decoder = json.JSONDecoder(object_pairs_hook=_unique_object)
    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        decoder.decode(text)
    except _Repeated as exc:
        return DuplicateKeyError(exc.key, exc.line)
    raise AssertionError("the C scanner found a repeated key the Python scanner did not")


def load_json(
    text: str,
    *,
    limit: int = MAX_JSON_DEPTH,
    parse_int: Callable[[str], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """``json.loads`` after checking the nesting depth; a repeated key in an object is refused.

    A caller's own ``object_pairs_hook`` replaces the duplicate check (it sees every pair).

    Raises:
        ValueError: the text nests deeper than ``limit`` (message from
            :func:`get_json_depth_problem`), is not valid JSON
            (``json.JSONDecodeError``, a ``ValueError``), holds an object with a repeated
            key (:class:`DuplicateKeyError`) or does not fit in memory.
    """
    problem = get_json_depth_problem(text, limit)
    if problem is not None:
        raise ValueError(problem)
    try:
        return json.loads(
            text,
            parse_int=parse_int,
            parse_float=parse_float,
            object_pairs_hook=object_pairs_hook or _unique_object,
        )
    except _Repeated:
        raise _locate_repeated_key(text) from None
    except MemoryError:
        raise ValueError(
            f"does not fit in the memory available ({len(text):,} characters of JSON); "
            "split it into smaller files"
        ) from None


def describe_number_grid_problem(value: Any, rows: int, columns: int) -> str | None:
    """Why JSON ``value`` is not ``rows`` lists of ``columns`` finite numbers, else ``None``.

    ``true``/``false`` and numeric strings are not numbers (numpy would take them as 1.0,
    0.0 and the string's value), nor is an integer beyond float range. The problem starts
    with the element's index, ready to follow the value's name: ``[1][2] is true (a
    boolean), not a number``.
    """
    if not isinstance(value, list) or len(value) != rows:
        return f" is {_describe_json(value)}; expected {rows} rows"
    for r, row in enumerate(value):
        if not isinstance(row, list) or len(row) != columns:
            return f"[{r}] is {_describe_json(row)}; expected a row of {columns} numbers"
        for c, item in enumerate(row):
            if type(item) not in _NUMBER_TYPES:
                return f"[{r}][{c}] is {_describe_json(item)}, not a number"
            try:
                number = float(item)
            except OverflowError:
                return f"[{r}][{c}] is an integer of {len(str(item))} digits, beyond float range"
            if not math.isfinite(number):
                return f"[{r}][{c}] is {item}, not a finite number"
    return None


_NUMBER_TYPES = frozenset((int, float))


class NumberGridError(ValueError):
    """One of the values given to :func:`compute_number_grids` is not a grid of numbers.

    Attributes:
        index: which value. problem: as :func:`describe_number_grid_problem` says it.
    """

    def __init__(self, index: int, problem: str) -> None:
        super().__init__(f"[{index}]{problem}")
        self.index, self.problem = index, problem


def compute_number_grids(values: list[Any], rows: int, columns: int) -> Any:
    """``(N, rows, columns)`` float64 of N JSON grids (lists of lists of finite numbers).

    Vectorised: one numpy conversion and one pass over the element types (no Python
    code per number); only when that fails is each grid looked at, to name the first
    bad one.

    Raises:
        NumberGridError: naming the first value that is not such a grid, and why.
    """
    import numpy as np

    try:
        grids = np.array(values, dtype=np.float64)
        if (
            grids.shape == (len(values), rows, columns)
            and _NUMBER_TYPES.issuperset(
                map(type, itertools.chain.from_iterable(itertools.chain.from_iterable(values)))
            )
            and np.isfinite(grids).all()
        ):
            return grids
    except (TypeError, ValueError, OverflowError):
        pass
    for index, value in enumerate(values):
        problem = describe_number_grid_problem(value, rows, columns)
        if problem is not None:
            raise NumberGridError(index, problem)
    return np.array(values, dtype=np.float64).reshape(len(values), rows, columns)


def _describe_json(value: Any) -> str:
    """A JSON value for a message: ``true (a boolean)``, ``a list of 3``, ``"1.0" (a string)``."""
    if isinstance(value, bool):
        return f"{json.dumps(value)} (a boolean)"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"{json.dumps(value[:40])} (a string)"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return repr(value)


def read_json_file(
    path: str | os.PathLike[str], *, max_bytes: int, kind: str, advice: str = ""
) -> Any:
    """The data of a JSON input file, at most ``max_bytes`` (:func:`load_json` rules).

    Raises:
        GripperError: ``PATH: ...`` for a missing, unreadable, too large, deep, invalid
            or duplicate-keyed file (see :func:`usdgrip.fileio.read_text_input`).
    """
    from usdgrip.errors import GripperError
    from usdgrip.fileio import display_path, read_text_input

    text = read_text_input(path, max_bytes=max_bytes, kind=kind, advice=advice)
    shown = display_path(path)
    try:
        return load_json(text)
    except json.JSONDecodeError as exc:
        raise GripperError(f"{shown}: not valid JSON: {exc}") from None
    except DuplicateKeyError as exc:
        raise GripperError(f"{shown}: {exc}") from None
    except ValueError as exc:  # too deep, an integer of too many digits, out of memory
        raise GripperError(f"{shown}: cannot be read: {exc}") from None
