"""What the used layers' texts prove, without a walk of the stage.

:class:`LayerTexts` holds the text of every used usda layer; a token no text spells
cannot occur on the stage (:func:`compute_token_hints`, :func:`compute_marker_hints`), no
arc can move a spec when none is spelled (:func:`has_remapping_arcs`), and the marker
specs the found prims hold account for every spelling of a marker or not
(:func:`mark_if_counted`): the proofs :func:`usdgrip.usd.discovery.scan_stage` builds its one
walk on. A binary layer has no cheap text: then nothing is proven and every prim is queried.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence

from pxr import Sdf, Tf, Usd

from usdgrip.usd.names import SITE_API
from usdgrip.usd.site_markers import MARKER_CHILD_NAMES, MARKER_TOKENS, SITE_MARKER_PROPS


class LayerTexts:
    """The texts of a stage's used layers, searched for tokens (each token counted once).

    usda files are read from disk (not mapped: a file truncated meanwhile must not
    crash the process), unsaved or anonymous layers exported to text.
    """

    def __init__(self, texts: list[bytes]) -> None:
        self._texts = texts
        self._counts: dict[bytes, int] = {}
        self._present: dict[bytes, bool] = {}

    @classmethod
    def read(cls, stage: Usd.Stage) -> LayerTexts | None:
        """The texts of every used layer, or ``None`` when one has no cheap text (binary)."""
        texts = []
        for layer in stage.GetUsedLayers():
            text = _layer_text(layer)
            if text is None:
                return None
            texts.append(text)
        return cls(texts)

    def contains(self, token: bytes) -> bool:
        """True when ``token`` may occur on the stage: it, or a schema bringing it, is in a text.

        A schema name (``GripperSiteAPI``) reaches a prim unspelled when another schema
        has it built in or it is auto-applied (:func:`_schema_spellings`).
        """
        spellings = _schema_spellings(token)
        return spellings is None or any(map(self._contains, spellings))

    def _contains(self, token: bytes) -> bool:
        if token in self._counts:
            return self._counts[token] > 0
        found = self._present.get(token)
        if found is None:  # an absent token costs a scan of every text: once
            found = self._present[token] = any(token in text for text in self._texts)
        return found

    def count(self, token: bytes) -> int:
        """Occurrences of ``token`` in all texts."""
        found = self._counts.get(token)
        if found is None:
            found = self._counts[token] = sum(text.count(token) for text in self._texts)
        return found


def _schema_spellings(token: bytes) -> tuple[bytes, ...] | None:
    """``token`` and the names of the registered schemas that bring it onto a prim unspelled.

    A schema brings ``token`` when a schema it has built in (a typed schema's or an API
    schema's ``apiSchemas``) is named with it: a codeless ``FancyGripper`` built on
    ``GripperSiteAPI`` makes its prims sites though no layer spells the API. ``None`` (it
    may occur anywhere) when an auto-applied API schema is named with it.
    """
    return _spell(token, len(_SCHEMA_BASE.GetAllDerivedTypes()))


@functools.cache
def _spell(token: bytes, generation: int) -> tuple[bytes, ...] | None:
    brought, auto = _schemas_bringing(generation)
    text = token.decode("utf-8", "replace")
    if any(text in name for name in auto):
        return None
    return (token, *(name.encode() for name, apis in brought if any(text in a for a in apis)))


_SCHEMA_BASE = Tf.Type.FindByName("UsdSchemaBase")


@functools.cache
def _schemas_bringing(generation: int) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple]:
    """``((schema, its built-in API schemas), ...)`` and the auto-applied API schemas.

    ``generation`` (the number of schema types) is the cache key: a plugin registered
    later makes a new table.
    """
    registry = Usd.SchemaRegistry()
    brought = []
    for schema_type in _SCHEMA_BASE.GetAllDerivedTypes():
        name = registry.GetSchemaTypeName(schema_type)
        if not name:
            continue
        definition = registry.FindConcretePrimDefinition(
            name
        ) or registry.FindAppliedAPIPrimDefinition(name)
        if definition is None:
            continue
        apis = tuple(a for a in definition.GetAppliedAPISchemas() if a != name)
        if apis:
            brought.append((name, apis))
    return tuple(brought), tuple(Usd.SchemaRegistry.GetAutoApplyAPISchemas())


def _layer_text(layer: Sdf.Layer) -> bytes | None:
    r"""Text of a layer for marker hints, or ``None`` when there is no cheap text (binary).

    Also ``None`` for a text with a backslash: the usda parser decodes escapes in quoted
    names (``"gripper\x5fforward_axis"`` is ``gripper_forward_axis``, ``"Gripper\x53iteAPI"``
    the site API), so a token may occur on the stage without occurring in the text.
    """
    if layer.anonymous or layer.dirty:
        text = layer.ExportToString().encode()
    else:
        real = layer.realPath
        if not real:
            return None
        try:
            with open(real, "rb") as handle:
                if handle.read(6) != b"#usda ":
                    return None  # crate or package: query every prim
                handle.seek(0)
                text = handle.read()
        except OSError:
            return None
    return None if b"\\" in text else text


def compute_token_hints(stage: Usd.Stage, tokens: Sequence[bytes]) -> tuple[bool, ...]:
    """For each of ``tokens``, whether it may occur on ``stage``.

    False only when no used layer's text contains it (a binary layer makes every
    token possible): the same layer-text hint as :func:`compute_marker_hints`.
    """
    texts = LayerTexts.read(stage)
    return tuple(texts is None or texts.contains(token) for token in tokens)


def compute_marker_hints(stage: Usd.Stage) -> frozenset[str]:
    """Kinds of discovery markers (keys of :data:`MARKER_TOKENS`) that can occur on ``stage``.

    A kind whose tokens appear in no used layer cannot mark any prim. usda
    files are read from disk, unsaved or anonymous layers exported to text;
    a binary layer enables every kind.
    """
    return compute_hints(LayerTexts.read(stage))


def compute_hints(texts: LayerTexts | None, kinds: Iterable[str] = MARKER_TOKENS) -> frozenset[str]:
    """The ``kinds`` whose tokens occur in ``texts`` (every kind when there is no text)."""
    if texts is None:
        return frozenset(kinds)
    return frozenset(kind for kind in kinds if any(texts.contains(t) for t in MARKER_TOKENS[kind]))


#: Tokens of composition arcs that can give a prim opinions from a spec at another path
#: (or several prims from one spec), plus value clips: with none of them in any used
#: layer, every property spec belongs to the one stage prim at its own path.
_REMAPPING_TOKENS = (
    b"references",
    b"payload",
    b"inherits",
    b"specializes",
    b"relocates",
    b"clips",
)


def has_remapping_arcs(texts: LayerTexts) -> bool:
    """True when some used layer may hold an arc that maps a spec to another prim path."""
    return any(texts.contains(token) for token in _REMAPPING_TOKENS)


def mark_if_counted(
    found: dict[Sdf.Path, list],
    texts: LayerTexts,
    kind: str,
    holdings: Callable[[Usd.Prim, bool], tuple[int, bool]],
) -> bool:
    """Flag as maybe-sites the ``found`` prims that hold a marker of ``kind``, if no other can.

    Proof by counting: every spec of a marker property (``props``) or of a prim
    named like a marker child (``children``) names it in its layer's text, so the
    occurrences of the kind's tokens bound the number of such specs. When no arc
    can map a spec to another path (the caller checks) and the specs the ``found``
    prims hold (``holdings(prim, is_maybe_site)``: how many, and whether they mark the
    prim as the walk would) add up to that bound, no other prim holds one.

    Returns:
        True when proven (the holders are flagged); False, flagging nothing, otherwise.
    """
    entries = sorted(found.values(), key=lambda entry: not entry[1])  # sites first: likely holders
    expected = sum(texts.count(token) for token in MARKER_TOKENS[kind])
    counted = 0
    holders = []
    for entry in entries:
        if counted == expected:
            break  # every spec is accounted for: the other prims hold none
        specs, marks = holdings(entry[0], entry[1])
        counted += specs
        if marks:
            holders.append(entry)
    if counted != expected:
        return False
    for entry in holders:
        entry[1] = True
    return True


def _marker_property_specs(prim: Usd.Prim, _marked: bool = False) -> tuple[int, bool]:
    """Specs of the marker properties ``prim`` holds, and whether it holds one."""
    names = SITE_MARKER_PROPS.intersection(prim.GetAuthoredPropertyNames())
    return sum(len(prim.GetProperty(name).GetPropertyStack()) for name in names), bool(names)


def _marker_child_specs(prim: Usd.Prim, marked: bool = False) -> tuple[int, bool]:
    """Specs of ``prim``'s children named like a marker child, and whether one is traversed.

    Every such child counts for the proof (an inactive one or a class too: its specs are
    in the texts); only one the walk visits (:data:`~usdgrip.usd.stage.TRAVERSAL`) marks
    ``prim``, as there (not asked when ``marked``: the prim is a maybe-site already).
    """
    specs, marks = 0, marked
    for name in MARKER_CHILD_NAMES:
        child = prim.GetChild(name)
        if child:
            specs += len(child.GetPrimStack())
            marks = marks or (child.IsActive() and child.IsLoaded() and not child.IsAbstract())
    return specs, marks


#: What a found prim holds of each countable marker kind, for :func:`mark_if_counted`.
MARKER_HOLDINGS = {"props": _marker_property_specs, "children": _marker_child_specs}


def children_may_be_counted(texts: LayerTexts, kinds: frozenset[str]) -> bool:
    """Whether the marker-children proof may hold: no child name more often than the site API.

    The walk without names finds the API sites, whose marker children the proof counts;
    more occurrences of a marker child's name than of the site API (legacy sites marked
    only by a child) would likely fail the proof after the walk, so the names are then
    queried in the walk itself. A guess either way: the proof decides what is found.
    """
    if "api" not in kinds:
        return False
    sites = texts.count(SITE_API.encode())
    return all(texts.count(token) <= sites for token in MARKER_TOKENS["children"])


def props_may_be_counted(texts: LayerTexts, kinds: frozenset[str]) -> bool:
    """Whether the marker-property proof may hold: no more property names than likely holders.

    The holders are the sites the expression finds, by the site API or by a marker
    child, each named in the texts at least once; with more marker property names than
    those names the proof would likely fail after the expression, so the Python walk is
    taken at once. A guess either way (a prim may hold two marker properties): the proof
    decides what is found.
    """
    holders = texts.count(SITE_API.encode()) if "api" in kinds else 0
    if "children" in kinds:
        holders += sum(texts.count(t) for t in MARKER_TOKENS["children"])
    return sum(texts.count(t) for t in MARKER_TOKENS["props"]) <= holders
