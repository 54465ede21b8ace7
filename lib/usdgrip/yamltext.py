"""YAML text read safely: plain data only, nesting limited, every mapping key unique (pure).

:func:`load_yaml` is the one YAML reader of usdgrip's inputs (``--grasps`` Isaac-Grasp
files). It builds only plain data (PyYAML's safe loader: no Python objects), refuses
collections nested deeper than :data:`MAX_YAML_DEPTH`, and refuses a mapping that
holds a key twice, naming the key and both lines: YAML requires keys to be unique, and
PyYAML would otherwise keep the last value silently (four grasps with a repeated
candidate id would be read as three). Keys a merge (``<<: *base``) brings in may be
overridden, as YAML intends. Aliases may not expand the document by more than
:data:`MAX_ALIAS_EXPANSION` values ("billion laughs": 700 values that expand to 490
million hung the contract check).
"""

from __future__ import annotations

from typing import Any

import yaml

from usdgrip.jsontext import DuplicateKeyError

#: Deepest nesting of YAML collections read (an Isaac-Grasp file is at most 5 deep).
MAX_YAML_DEPTH = 100

_MERGE_TAG = "tag:yaml.org,2002:merge"


#: Most nodes that aliases (``*name``) may add to a document once expanded. An alias
#: shares the anchored value, so ten levels of nine aliases each ("billion laughs") load
#: in milliseconds yet expand to 9^9 values for whatever reads them (the contract check,
#: a writer): such a document is refused. usdgrip writes no aliases.
MAX_ALIAS_EXPANSION = 1_000_000


def count_expanded_nodes(root: yaml.Node) -> tuple[int, int]:
    """``(distinct, expanded)`` node counts of a composed document (aliases share nodes).

    Iterative, each distinct node visited once (the counts of shared nodes are kept).
    """
    expanded: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in expanded:
            continue
        children = _children(node)
        if children_done or not children:
            expanded[id(node)] = 1 + sum(expanded[id(child)] for child in children)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in expanded)
    return len(expanded), expanded[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


class AliasBombError(ValueError):
    """A YAML document whose aliases expand beyond :data:`MAX_ALIAS_EXPANSION` nodes."""


class _UniqueKeys:
    """Constructor mixin: a mapping whose written keys repeat raises :class:`DuplicateKeyError`.

    One pass, as PyYAML's own ``construct_mapping`` (after ``flatten_mapping``, which
    puts the pairs a merge brings in first): a written key may replace a merged one.
    """

    def __init__(self, stream) -> None:
        super().__init__(stream)
        # No "*" anywhere: no alias, nothing to count (the common case, usdgrip's own files).
        self._may_alias = not isinstance(stream, str) or "*" in stream

    def get_single_data(self):
        node = self.get_single_node()
        if node is None:
            return None
        distinct, expanded = count_expanded_nodes(node) if self._may_alias else (0, 0)
        if expanded - distinct > MAX_ALIAS_EXPANSION:
            raise AliasBombError(
                f"its aliases (*name) expand {distinct:,} values to {expanded:,}, more than "
                f"{MAX_ALIAS_EXPANSION:,} added; expected a file without alias chains"
            )
        return self.construct_document(node)

    def construct_mapping(self, node, deep=False):
        if not isinstance(node, yaml.MappingNode):
            return super().construct_mapping(node, deep=deep)
        written = sum(key_node.tag != _MERGE_TAG for key_node, _ in node.value)
        self.flatten_mapping(node)
        first_written = len(node.value) - written
        mapping: dict[Any, Any] = {}
        marks: dict[Any, Any] = {}
        for index, (key_node, value_node) in enumerate(node.value):
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found unhashable key",
                    key_node.start_mark,
                ) from None
            if index >= first_written:
                first = marks.setdefault(key, key_node.start_mark)
                if first is not key_node.start_mark:
                    raise DuplicateKeyError(key, key_node.start_mark.line + 1, first.line + 1)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


class _Loader(_UniqueKeys, yaml.SafeLoader):
    """Pure-Python safe loader that refuses collections nested deeper than MAX_YAML_DEPTH.

    PyYAML composes nodes recursively, so without the limit a flow sequence
    nested 20,000 levels deep raises ``RecursionError``.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        if self._depth >= MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"collections nested more than {MAX_YAML_DEPTH} levels deep; expected at most "
                f"{MAX_YAML_DEPTH}",
                self.peek_event().start_mark,
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


if getattr(yaml, "__with_libyaml__", False):

    class _CLoader(_UniqueKeys, yaml.CSafeLoader):
        """libyaml's safe loader with unique keys."""

    #: libyaml's loader when PyYAML has it: about 10x faster than the pure-Python parser (a
    #: 20,000-grasp file: 14 s instead of 190 s), and libyaml refuses nesting deeper than its
    #: own limit (1,000 levels: "exceeded maximum nesting depth"), so its composer, which
    #: recurses in C, cannot overflow either; else :class:`_Loader`.
    LOADER: type = _CLoader
else:  # pragma: no cover - PyYAML built without libyaml
    LOADER = _Loader


def load_yaml(text: str, loader: type | None = None) -> Any:
    """The plain data of YAML ``text`` (``loader``: default :data:`LOADER`).

    Raises:
        ValueError: one line saying why, for a message after the file's name:
            ``not valid YAML: ...`` (nesting too deep included), ``line N: duplicate key
            ...`` (:class:`DuplicateKeyError`), aliases that expand too far
            (:class:`AliasBombError`), ``a value cannot be read: ...`` (an integer of more
            than 4300 digits, a bad date), or ``does not fit in memory``.
    """
    try:
        return yaml.load(text, Loader=loader or LOADER)
    except (DuplicateKeyError, AliasBombError):
        raise
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
        raise ValueError(f"not valid YAML: {reason}") from None
    except ValueError as exc:  # int(): "Exceeds the limit (4300 digits) ..."; a bad date
        cause = str(exc).split(";")[0]
        raise ValueError(f"a value cannot be read: {cause}") from None
    except MemoryError:
        raise ValueError(
            f"does not fit in the memory available ({len(text):,} characters of YAML); "
            "split it into smaller files"
        ) from None
