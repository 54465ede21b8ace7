"""LambdaSim GripperSlot records (``customData["lambdasim"]["gripper_slots"]``), pure.

USD customData cannot hold a list of dictionaries, so LambdaSim stores the
record list as a JSON string. A dictionary keyed by slot name whose values
are record dictionaries is read too. Record keys: ``center``, ``forward``,
``span_axis``, ``up_range``, ``slot_input_angle``, ``LR``, ``GroupName``,
``version``. Version 1 records carry a vector ``up`` instead of ``up_range``
(read as ``up_range = 2 * |up|``); only version 2 is written.

Names: a dictionary gives each record its key as name. A list has no names,
so records are named ``slot_<index>`` unless a record carries an extra
``name`` key (which usdgrip writes only when the name differs from that
default, keeping files written for LambdaSim free of unknown keys).

Ambiguous JSON is refused, never guessed: a record with a key written twice
(JSON parsers keep the last one silently), a number no 64-bit float holds
(an integer of more than ``sys.get_int_max_str_digits()`` digits or beyond
2**53 and inexact, a finite literal such as ``1e400`` that would read as
infinity) and text nested
deeper than :data:`usdgrip.jsontext.MAX_JSON_DEPTH` levels each make a
:class:`RecordProblem` naming the record and key.
"""

from __future__ import annotations

import json
import math
import reprlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from usdgrip.jsontext import load_json

CUSTOM_DATA_KEY = "lambdasim"
RECORDS_KEY = "gripper_slots"
CUSTOM_DATA_PATH = f"{CUSTOM_DATA_KEY}:{RECORDS_KEY}"
WRITE_VERSION = 2
VECTOR_KEYS = ("center", "forward", "span_axis")
KNOWN_KEYS = (
    *VECTOR_KEYS,
    "up_range",
    "up",
    "slot_input_angle",
    "LR",
    "GroupName",
    "version",
    "name",
)


@dataclass(frozen=True)
class SlotRecord:
    """One parsed record, values as authored (local frame)."""

    name: str
    index: int
    center: tuple[float, float, float]
    forward: tuple[float, float, float]
    span_axis: tuple[float, float, float]
    up_range: float
    slot_input_angle: float
    lr: int
    group: str
    version: int
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordProblem:
    """Why a record (or the whole value) could not be parsed."""

    index: int | None
    """Record index, or ``None`` when the value as a whole is unreadable."""
    key: str | None
    message: str
    record_key: str | None = None
    """The record's key when the records are a dictionary keyed by slot name."""
    name: str | None = None
    """The slot name the record would have (``name`` key, dictionary key or ``slot_<i>``);
    ``None`` when the value as a whole is unreadable."""

    def describe(self) -> str:
        """One line naming the record (by its key in a dictionary, else its index) and key."""
        if self.record_key is not None:
            where = f"gripper_slots[{self.record_key!r}]"
        else:
            where = "gripper_slots" if self.index is None else f"gripper_slots[{self.index}]"
        if self.key:
            where += f".{self.key}"
        return f"customData lambdasim:{where}: {self.message}"


class _DuplicateKeyObject(dict):
    """A JSON object that wrote some key more than once (the last value is kept)."""

    duplicates: dict[str, list[Any]]


@dataclass(frozen=True)
class _UnreadableNumber:
    """A JSON number no 64-bit float holds: too many digits, too large, or inexact."""

    text: str
    why: str

    def __repr__(self) -> str:
        shown = self.text if len(self.text) <= 24 else f"{self.text[:12]}…{self.text[-4:]}"
        return f"{shown} ({self.why})"


def _parse_int(text: str) -> int | _UnreadableNumber:
    digits = len(text.lstrip("-"))
    try:
        value = int(text)
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
        limit = sys.get_int_max_str_digits()
        return _UnreadableNumber(
            text, f"an integer of {digits} digits; Python reads at most {limit}"
        )
    if abs(value) > 2**53:  # beyond 2**53 not every integer is a double
        try:
            exact = float(value) == value
        except OverflowError:
            exact = False
        if not exact:
            return _UnreadableNumber(
                text, f"an integer of {digits} digits that no 64-bit float holds exactly"
            )
    return value


def _parse_float(text: str) -> float | _UnreadableNumber:
    value = float(text)
    if math.isinf(value):  # a finite literal such as 1e400; "Infinity" is parse_constant's
        return _UnreadableNumber(text, "beyond the largest 64-bit float, it would read as inf")
    return value


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    values: dict[str, list[Any]] = {}
    for key, value in pairs:
        values.setdefault(key, []).append(value)
    if len(values) == len(pairs):
        return dict(pairs)
    result = _DuplicateKeyObject(pairs)
    result.duplicates = {key: found for key, found in values.items() if len(found) > 1}
    return result


def _describe_repeats(found: list[Any]) -> str:
    shown = ", ".join(reprlib.repr(v) for v in found)
    return (
        f"is written {len(found)} times ({shown}); expected each key once (JSON readers "
        "silently keep only the last, so the record is ambiguous)"
    )


def _get_ambiguity(value: Any) -> str | None:
    """Why ``value`` (parsed JSON) cannot be read unambiguously: a repeated key, a huge integer."""
    if isinstance(value, _UnreadableNumber):
        return f"holds {value!r}"
    if isinstance(value, _DuplicateKeyObject):
        key, found = next(iter(value.duplicates.items()))
        return f"has a key {key!r} that {_describe_repeats(found)}"
    if isinstance(value, Mapping):
        items = value.values()
    elif isinstance(value, list):
        items = value
    else:
        return None
    for item in items:
        problem = _get_ambiguity(item)
        if problem is not None:
            return problem
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _vector(value: Any) -> tuple[float, float, float] | None:
    if isinstance(value, str | bytes | Mapping):
        return None
    try:
        items = list(value)
    except TypeError:
        return None
    if len(items) != 3 or not all(_is_number(v) for v in items):
        return None
    return (float(items[0]), float(items[1]), float(items[2]))


def _parse_one(index: int, name: str, record: Any) -> SlotRecord | RecordProblem:
    if not isinstance(record, Mapping):
        return RecordProblem(
            index, None, f"expected a record dictionary, found {type(record).__name__}"
        )
    if isinstance(record, _DuplicateKeyObject):
        key, found = next(iter(record.duplicates.items()))
        return RecordProblem(index, key, _describe_repeats(found))
    for key, value in record.items():
        problem = _get_ambiguity(value)
        if problem is not None:
            return RecordProblem(index, key, problem)
    values: dict[str, Any] = {}
    for key in VECTOR_KEYS:
        if key not in record:
            return RecordProblem(index, key, "missing; expected 3 numbers")
        vector = _vector(record[key])
        if vector is None:
            return RecordProblem(index, key, f"is {record[key]!r}; expected 3 numbers")
        values[key] = vector
    version = record.get("version", 1 if "up" in record and "up_range" not in record else 2)
    if not _is_number(version) or int(version) != version or int(version) not in (1, 2):
        return RecordProblem(index, "version", f"is {version!r}; expected 1 or 2")
    version = int(version)
    if "up_range" in record:
        if not _is_number(record["up_range"]):
            return RecordProblem(
                index, "up_range", f"is {record['up_range']!r}; expected a number (m)"
            )
        up_range = float(record["up_range"])
    elif "up" in record:
        up = _vector(record["up"])
        if up is None:
            return RecordProblem(index, "up", f"is {record['up']!r}; expected 3 numbers")
        up_range = 2.0 * math.sqrt(sum(c * c for c in up))
    else:
        return RecordProblem(index, "up_range", "missing (and no version-1 `up` vector)")
    for key, kind in (("slot_input_angle", "a number (degrees)"), ("LR", "0 or 1")):
        if key not in record:
            return RecordProblem(index, key, f"missing; expected {kind}")
        if not _is_number(record[key]):
            return RecordProblem(index, key, f"is {record[key]!r}; expected {kind}")
    lr = record["LR"]
    if int(lr) != lr:
        return RecordProblem(index, "LR", f"is {lr!r}; expected 0 or 1")
    group = record.get("GroupName")
    if "GroupName" not in record:
        return RecordProblem(index, "GroupName", 'missing; expected a string ("" = ungrouped)')
    if not isinstance(group, str):
        return RecordProblem(index, "GroupName", f"is {group!r}; expected a string")
    extra = {k: v for k, v in record.items() if k not in KNOWN_KEYS}
    if isinstance(record.get("name"), str) and record["name"]:
        name = record["name"]
    return SlotRecord(
        name=name,
        index=index,
        center=values["center"],
        forward=values["forward"],
        span_axis=values["span_axis"],
        up_range=up_range,
        slot_input_angle=float(record["slot_input_angle"]),
        lr=int(lr),
        group=group,
        version=version,
        extra=extra,
    )


def parse_lambdasim_records(raw: Any) -> tuple[list[SlotRecord], list[RecordProblem]]:
    """Parse the ``gripper_slots`` customData value.

    Args:
        raw: a JSON string holding a list (or dictionary) of records, or a
            dictionary of record dictionaries (vectors as 3-sequences).

    Returns:
        The records that parsed and one problem per record (or value) that did not.
    """
    if isinstance(raw, str):
        try:
            raw = load_json(
                raw, parse_int=_parse_int, parse_float=_parse_float, object_pairs_hook=_json_object
            )
        except json.JSONDecodeError as exc:
            return [], [RecordProblem(None, None, f"is not valid JSON ({exc})")]
        except ValueError as exc:  # nested too deep
            return [], [RecordProblem(None, None, f"{exc}; not parsed")]
        if isinstance(raw, _DuplicateKeyObject):  # a dictionary of records, keyed by name
            key, found = next(iter(raw.duplicates.items()))
            return [], [
                RecordProblem(None, None, f"the slot name {key!r} {_describe_repeats(found)}")
            ]
    if isinstance(raw, Mapping):
        items = [(str(name), record) for name, record in raw.items()]
    elif isinstance(raw, Sequence) and not isinstance(raw, str | bytes):
        items = [(f"slot_{i}", record) for i, record in enumerate(raw)]
    else:
        return [], [
            RecordProblem(None, None, f"is a {type(raw).__name__}; expected a list of records")
        ]
    records: list[SlotRecord] = []
    problems: list[RecordProblem] = []
    for index, (name, record) in enumerate(items):
        parsed = _parse_one(index, name, record)
        if isinstance(parsed, RecordProblem):
            own = record.get("name") if isinstance(record, Mapping) else None
            slot_name = own if isinstance(own, str) and own else name
            keyed = isinstance(raw, Mapping)  # named by its key, not a position
            problems.append(replace(parsed, record_key=name if keyed else None, name=slot_name))
        else:
            records.append(parsed)
    return records, problems


def format_lambdasim_records(records: Sequence[SlotRecord]) -> str:
    """Serialise records as the version-2 JSON list string LambdaSim stores.

    Unknown keys a record carried are written back; ``name`` is written only
    when it differs from the positional default ``slot_<index>``.
    """
    out = []
    for index, r in enumerate(records):
        entry: dict[str, Any] = dict(r.extra)
        entry.update(
            center=list(r.center),
            forward=list(r.forward),
            span_axis=list(r.span_axis),
            up_range=r.up_range,
            slot_input_angle=r.slot_input_angle,
            LR=r.lr,
            GroupName=r.group,
            version=WRITE_VERSION,
        )
        if r.name != f"slot_{index}":
            entry["name"] = r.name
        out.append(entry)
    return json.dumps(out)
