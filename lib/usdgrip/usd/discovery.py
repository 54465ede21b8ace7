"""Finding gripper sites and slots on a stage: the marker scan (SPEC §2).

:func:`find_marked_prims` flags the prims a marker may make a site or a slot, fast:
layer texts prove which kinds of markers can occur at all, path-expression queries
do the rest; :func:`compute_site_markers` then names the exact markers of a prim.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from pxr import Sdf, Tf, Usd

from usdgrip.lambdasim import (
    CUSTOM_DATA_PATH,
)
from usdgrip.usd.names import (
    FORWARD_AXIS_NAMES,
    GRIP_LINE_NAMES,
    MAX_OPENING_ATTRS,
    SITE_API,
    SLOT_API,
    SOCKET_TYPE_ATTRS,
)
from usdgrip.usd.stage import TRAVERSAL, _get_authored_names, _get_children_names

# --- gripper sites ----------------------------------------------------------


def compute_site_markers(prim: Usd.Prim, facts: PrimFacts | None = None) -> tuple[str, ...]:
    """Return the discovery markers (SPEC §2) that make ``prim`` a gripper site; empty if none.

    ``facts``: the prim's :func:`read_prim_facts`, when the caller has them already.
    """
    facts = read_prim_facts(prim) if facts is None else facts
    markers: list[str] = []
    if SITE_API in prim.GetAppliedSchemas():
        markers.append(SITE_API)
    # Attributes are looked up only when authored.
    authored = _SITE_PROPS.intersection(facts.authored)
    for attr_name, marker in SOCKET_TYPE_ATTRS.items():
        if attr_name in authored:
            attr = prim.GetAttribute(attr_name)
            if attr and attr.Get() == "Gripper":
                markers.append(marker)
    for attr_name in MAX_OPENING_ATTRS:
        if attr_name in authored and prim.GetAttribute(attr_name).IsAuthored():
            markers.append(attr_name)
    for child_name in _MARKER_CHILD_NAMES:
        if child_name in facts.children:
            markers.append(f"child:{child_name}")
    return tuple(markers)


class PrimFacts(NamedTuple):
    """What site discovery and reading ask of a prim, asked once (see :func:`read_prim_facts`)."""

    path: str
    """The prim path as text."""
    authored: frozenset[str]
    """Names of the prim's authored properties."""
    children: list[str]
    """Names of all its children (any specifier, active or not, an instance's through its
    prototype), as ``GetChild`` finds them."""


def read_prim_facts(prim: Usd.Prim) -> PrimFacts:
    """The prim's path, authored property names and child names, in three queries."""
    return PrimFacts(
        prim.GetPath().pathString,
        frozenset(_get_authored_names(prim)),
        _get_children_names(prim, _ALL_CHILDREN),
    )


#: Every child, as ``GetChild`` finds it: an instance's children are its prototype's
#: (``GetAllChildrenNames`` alone lists none for an instance).
_ALL_CHILDREN = Usd.TraverseInstanceProxies(Usd.PrimAllPrimsPredicate)


# --- finding marked prims fast ------------------------------------------------
#
# A Python call per prim costs more than USD's whole traversal, so discovery
# (1) skips the kinds of markers no used layer mentions and (2) makes only the
# remaining cheap queries on every prim, as unbound methods (looking a method
# up on a pxr object costs more than calling it); the exact markers are then
# computed for the few prims flagged.

#: Marker kind -> tokens that must occur in some used layer for the kind to mark a prim.
MARKER_TOKENS: dict[str, tuple[bytes, ...]] = {
    "api": (SITE_API.encode(), SLOT_API.encode()),
    "props": (b"maxOpening", b"socketType"),  # the usual one first: hints stop at a hit
    "children": (FORWARD_AXIS_NAMES[0].encode(), GRIP_LINE_NAMES[0].encode()),
    "custom": (CUSTOM_DATA_PATH.split(":")[0].encode(),),
}
_SITE_PROPS = frozenset((*SOCKET_TYPE_ATTRS, *MAX_OPENING_ATTRS))
_MARKER_CHILD_NAMES = (FORWARD_AXIS_NAMES[0], GRIP_LINE_NAMES[0])
_MARKER_CHILDREN = frozenset(_MARKER_CHILD_NAMES)
_MARKER_CHILD_GLOB = "gripper_*"  # matches every name of _MARKER_CHILDREN
_SLOT_PREFIX = f"{SLOT_API}:"


class _LayerTexts:
    """The texts of a stage's used layers, searched for tokens (each token counted once).

    usda files are read from disk (not mapped: a file truncated meanwhile must not
    crash the process), unsaved or anonymous layers exported to text.
    """

    def __init__(self, texts: list[bytes]) -> None:
        self._texts = texts
        self._counts: dict[bytes, int] = {}

    @classmethod
    def read(cls, stage: Usd.Stage) -> _LayerTexts | None:
        """The texts of every used layer, or ``None`` when one has no cheap text (binary)."""
        texts = []
        for layer in stage.GetUsedLayers():
            text = _layer_text(layer)
            if text is None:
                return None
            texts.append(text)
        return cls(texts)

    def contains(self, token: bytes) -> bool:
        """True when ``token`` occurs in some text."""
        if token in self._counts:
            return self._counts[token] > 0
        return any(token in text for text in self._texts)

    def count(self, token: bytes) -> int:
        """Occurrences of ``token`` in all texts."""
        found = self._counts.get(token)
        if found is None:
            found = self._counts[token] = sum(text.count(token) for text in self._texts)
        return found


def _layer_text(layer: Sdf.Layer) -> bytes | None:
    """Text of a layer for marker hints, or ``None`` when there is no cheap text (binary)."""
    if layer.anonymous or layer.dirty:
        return layer.ExportToString().encode()
    real = layer.realPath
    if not real:
        return None
    try:
        with open(real, "rb") as handle:
            if handle.read(6) != b"#usda ":
                return None  # crate or package: query every prim
            handle.seek(0)
            return handle.read()
    except OSError:
        return None


def compute_token_hints(stage: Usd.Stage, tokens: Sequence[bytes]) -> tuple[bool, ...]:
    """For each of ``tokens``, whether it may occur on ``stage``.

    False only when no used layer's text contains it (a binary layer makes every
    token possible): the same layer-text hint as :func:`compute_marker_hints`.
    """
    texts = _LayerTexts.read(stage)
    return tuple(texts is None or texts.contains(token) for token in tokens)


def compute_marker_hints(stage: Usd.Stage) -> frozenset[str]:
    """Kinds of discovery markers (keys of :data:`MARKER_TOKENS`) that can occur on ``stage``.

    A kind whose tokens appear in no used layer cannot mark any prim. usda
    files are read from disk, unsaved or anonymous layers exported to text;
    a binary layer enables every kind.
    """
    return _compute_hints(_LayerTexts.read(stage))


def _compute_hints(
    texts: _LayerTexts | None, kinds: Iterable[str] = MARKER_TOKENS
) -> frozenset[str]:
    """The ``kinds`` whose tokens occur in ``texts`` (every kind when there is no text)."""
    if texts is None:
        return frozenset(kinds)
    return frozenset(kind for kind in kinds if any(texts.contains(t) for t in MARKER_TOKENS[kind]))


def _classify_schemas(schemas: Iterable[str]) -> tuple[bool, bool]:
    """``(maybe_site, maybe_slot)`` from a prim's applied API schema names."""
    maybe_site = maybe_slot = False
    for schema in schemas:
        if schema == SITE_API:
            maybe_site = True
        elif schema.startswith(_SLOT_PREFIX):
            maybe_slot = True
    return maybe_site, maybe_slot


def _scan_marked_prims(
    stage: Usd.Stage, kinds: frozenset[str]
) -> list[tuple[Usd.Prim, bool, bool]]:
    """``(prim, maybe_site, maybe_slot)`` in traversal order for prims any marker may apply to."""
    use_api, use_props = "api" in kinds, "props" in kinds
    use_children, use_custom = "children" in kinds, "custom" in kinds
    if not (use_api or use_props or use_children or use_custom):
        return []
    get_schemas = Usd.Prim.GetAppliedSchemas
    get_props = Usd.Prim.GetAuthoredPropertyNames
    get_name = Usd.Prim.GetName
    get_path = Usd.Prim.GetPath
    has_custom = Usd.Prim.HasCustomDataKey
    no_site_props = _SITE_PROPS.isdisjoint
    children, key = _MARKER_CHILDREN, CUSTOM_DATA_PATH
    # Pass 1, the only per-prim work: keep prims that any cheap query flags.
    hits = [
        prim
        for prim in stage.Traverse(TRAVERSAL)
        if (use_api and get_schemas(prim))
        or (use_props and not no_site_props(get_props(prim)))
        or (use_children and get_name(prim) in children)
        or (use_custom and has_custom(prim, key))
    ]
    # Pass 2, hits only: say why (an applied API may be someone else's). A parent
    # marked by a child sorts just before the first hit of its subtree (pre-order).
    found: dict[Sdf.Path, list] = {}  # path -> [(order, depth), prim, maybe_site, maybe_slot]
    for index, prim in enumerate(hits):
        maybe_site, maybe_slot = _classify_schemas(get_schemas(prim))
        if use_props and not maybe_site and not no_site_props(get_props(prim)):
            maybe_site = True
        if use_custom and has_custom(prim, key):
            maybe_slot = True
        if use_children and get_name(prim) in children:
            parent = prim.GetParent()
            parent_path = get_path(parent)
            entry = found.get(parent_path)
            if parent.IsPseudoRoot():
                pass  # a root prim named like a marker child marks no site
            elif entry is None:
                first = index
                while first > 0 and get_path(hits[first - 1]).HasPrefix(parent_path):
                    first -= 1
                order = (first - 0.5, parent_path.pathElementCount)
                found[parent_path] = [order, parent, True, False]
            else:
                entry[2] = True
        if maybe_site or maybe_slot:
            path = get_path(prim)
            entry = found.get(path)
            if entry is None:
                found[path] = [(index, path.pathElementCount), prim, maybe_site, maybe_slot]
            else:
                entry[2] |= maybe_site
                entry[3] |= maybe_slot
    ordered = sorted(found.values(), key=lambda e: e[0])
    return [(prim, maybe_site, maybe_slot) for _, prim, maybe_site, maybe_slot in ordered]


def iter_marked_prims(
    stage: Usd.Stage, kinds: frozenset[str] | None = None
) -> Iterator[tuple[Usd.Prim, tuple[str, ...], bool]]:
    """Yield ``(prim, site_markers, has_slots)`` for every gripper site or slot-carrying prim.

    One traversal (:data:`TRAVERSAL`), in traversal order. ``site_markers`` are
    exactly :func:`compute_site_markers`; ``has_slots`` is True for prims with
    GripperSlotAPI instances or LambdaSim records.

    Args:
        stage: the stage.
        kinds: marker kinds to look for (default :func:`compute_marker_hints`).
    """
    kinds = compute_marker_hints(stage) if kinds is None else kinds
    for prim, maybe_site, maybe_slot in _scan_marked_prims(stage, kinds):
        markers = compute_site_markers(prim) if maybe_site else ()
        if markers or maybe_slot:
            yield prim, markers, maybe_slot


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
_SCAN_COLLECTION = "usdgripScan"


def _make_membership_queries(
    stage: Usd.Stage, expressions: Sequence[str]
) -> list[Usd.UsdCollectionMembershipQuery] | None:
    """Membership queries of path ``expressions`` on ``stage``, for :func:`_compute_included_paths`.

    OpenUSD evaluates a collection's membership expression only against the
    stage the collection is on, so temporary collections are authored on a new
    root ``over`` of the session layer and removed again at once (layer content
    restored exactly; the stage sends two ``ObjectsChanged`` notices); the queries
    stay usable. ``None`` when that is not possible (session layer locked,
    population mask, authoring error): the caller then queries every prim.
    """
    layer = stage.GetSessionLayer()
    if layer is None or not layer.permissionToEdit:
        return None
    name = f"__usdgrip_scan_{id(stage):x}"
    path = Sdf.Path.absoluteRootPath.AppendChild(name)
    if layer.GetPrimAtPath(path) or stage.GetPrimAtPath(path):
        return None  # never touch a prim that exists
    spec = None
    try:
        with Sdf.ChangeBlock():
            spec = Sdf.PrimSpec(layer, name, Sdf.SpecifierOver)
            for index, expression in enumerate(expressions):
                attr = Sdf.AttributeSpec(
                    spec,
                    f"collection:{_SCAN_COLLECTION}{index}:membershipExpression",
                    Sdf.ValueTypeNames.PathExpression,
                )
                attr.default = Sdf.PathExpression(expression)
        prim = stage.GetPrimAtPath(spec.path)
        if not prim:
            return None
        return [
            Usd.CollectionAPI(prim, f"{_SCAN_COLLECTION}{index}").ComputeMembershipQuery()
            for index in range(len(expressions))
        ]
    except Tf.ErrorException:
        return None
    finally:
        if spec is not None:
            del layer.rootPrims[name]


def _compute_included_paths(
    stage: Usd.Stage, query: Usd.UsdCollectionMembershipQuery
) -> list[Sdf.Path] | None:
    """Paths of the traversed prims (:data:`TRAVERSAL`) in ``query``, evaluated in C++."""
    try:
        return list(Usd.ComputeIncludedPathsFromCollection(query, stage, TRAVERSAL))
    except Tf.ErrorException:
        return None


def _has_remapping_arcs(texts: _LayerTexts) -> bool:
    """True when some used layer may hold an arc that maps a spec to another prim path."""
    return any(texts.contains(token) for token in _REMAPPING_TOKENS)


def _mark_if_counted(
    found: dict[Sdf.Path, list],
    texts: _LayerTexts,
    kind: str,
    stack_sizes: Callable[[Usd.Prim], list[int]],
) -> bool:
    """Flag as maybe-sites the ``found`` prims that hold a marker of ``kind``, if no other can.

    Proof by counting: every spec of a marker property (``props``) or of a prim
    named like a marker child (``children``) names it in its layer's text, so the
    occurrences of the kind's tokens bound the number of such specs. When no arc
    can map a spec to another path (the caller checks) and the stacks of the
    markers of the ``found`` prims (``stack_sizes``: one size per marker the prim
    holds) add up to that bound, no other prim holds one.

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
        sizes = stack_sizes(entry[0])
        if sizes:
            holders.append(entry)
            counted += sum(sizes)
    if counted != expected:
        return False
    for entry in holders:
        entry[1] = True
    return True


def _marker_property_stacks(prim: Usd.Prim) -> list[int]:
    names = _SITE_PROPS.intersection(prim.GetAuthoredPropertyNames())
    return [len(prim.GetProperty(name).GetPropertyStack()) for name in names]


def _marker_child_stacks(prim: Usd.Prim) -> list[int]:
    """Marker children as the ``//gripper_*`` expression sees them: traversed ones only."""
    children = (prim.GetChild(name) for name in _MARKER_CHILD_NAMES)
    return [len(child.GetPrimStack()) for child in children if child and TRAVERSAL(child)]


def find_marked_prims(
    stage: Usd.Stage, kinds: frozenset[str] | None = None, *, scan: str = "collection"
) -> list[tuple[Usd.Prim, bool, bool]]:
    """``(prim, maybe_site, maybe_slot)`` for every prim a discovery marker may apply to.

    The same prims as :func:`iter_marked_prims` finds (a superset of the sites
    and slot carriers; :func:`compute_site_markers` decides), sorted by path
    (not in traversal order). With ``scan="collection"`` the applied-API test
    runs in C++ (the OpenUSD path expression
    ``//{hasAPI(GripperSiteAPI, GripperSlotAPI)}``, evaluated through a
    temporary collection on the session layer, see
    :func:`_make_membership_queries`). Marker children and marker properties
    elsewhere are ruled out by counting their names in the layer texts
    (:func:`_mark_if_counted`); when a count does not
    prove it, marker children are found by a second expression
    (``//gripper_*``) and marker properties and LambdaSim customData by
    querying every prim. ``scan="traverse"`` never writes to the stage: every
    prim is queried from Python (several times slower on large stages).

    Args:
        stage: the stage. With ``scan="collection"`` it must not be read by another
            thread meanwhile (the session layer is edited and restored).
        kinds: marker kinds to look for (keys of :data:`MARKER_TOKENS`, default all); only
            those :func:`compute_marker_hints` allows are looked for.
        scan: ``"collection"`` or ``"traverse"``.

    Raises:
        ValueError: an unknown ``scan``.
    """
    if scan not in ("collection", "traverse"):
        raise ValueError(f"scan is {scan!r}; expected 'collection' or 'traverse'")
    texts = _LayerTexts.read(stage)
    kinds = _compute_hints(texts, MARKER_TOKENS if kinds is None else kinds)
    queries = None
    if scan == "collection" and kinds & {"api", "children"}:
        # Both expressions now (one edit of the session layer); the second is evaluated
        # only when counting cannot prove where the marker children are.
        queries = _make_membership_queries(
            stage, [f"//{{hasAPI({SITE_API}, {SLOT_API})}}", f"//{_MARKER_CHILD_GLOB}"]
        )
        if queries is None:  # the session layer cannot be edited
            scan = "traverse"

    def python_scan() -> list[tuple[Usd.Prim, bool, bool]]:
        return sorted(_scan_marked_prims(stage, kinds), key=lambda e: e[0].GetPath())

    if scan == "traverse":
        return python_scan()
    hits = _compute_included_paths(stage, queries[0]) if queries and "api" in kinds else []
    if hits is None:
        return python_scan()
    get_prim, get_schemas = stage.GetPrimAtPath, Usd.Prim.GetAppliedSchemas
    found: dict[Sdf.Path, list] = {}  # path -> [prim, maybe_site, maybe_slot]
    for path in hits:
        prim = get_prim(path)
        maybe_site, maybe_slot = _classify_schemas(get_schemas(prim))
        if maybe_site or maybe_slot:
            found[path] = [prim, maybe_site, maybe_slot]
    provable = texts is not None and not _has_remapping_arcs(texts)
    if "children" in kinds and not (
        provable and _mark_if_counted(found, texts, "children", _marker_child_stacks)
    ):
        children = _compute_included_paths(stage, queries[1]) if queries else None
        if children is None:
            return python_scan()
        for path in children:
            parent = path.GetParentPath()
            if path.name not in _MARKER_CHILDREN or parent == Sdf.Path.absoluteRootPath:
                continue
            entry = found.get(parent)
            if entry is None:
                found[parent] = [get_prim(parent), True, False]
            else:
                entry[1] = True
    rest = kinds & {"props", "custom"}
    if (
        "props" in rest
        and provable
        and _mark_if_counted(found, texts, "props", _marker_property_stacks)
    ):
        rest = rest - {"props"}
    if rest:  # per-prim queries for what no expression can match
        for prim, maybe_site, maybe_slot in _scan_marked_prims(stage, rest):
            entry = found.get(prim.GetPath())
            if entry is None:
                found[prim.GetPath()] = [prim, maybe_site, maybe_slot]
            else:
                entry[1] |= maybe_site
                entry[2] |= maybe_slot
    return [tuple(found[path]) for path in sorted(found)]


def iter_site_prims(stage: Usd.Stage) -> Iterator[tuple[Usd.Prim, tuple[str, ...]]]:
    """Yield ``(prim, markers)`` for every gripper site on the stage, in traversal order."""
    for prim, markers, _ in _iter_sites(stage):
        yield prim, markers


def _iter_sites(stage: Usd.Stage) -> Iterator[tuple[Usd.Prim, tuple[str, ...], PrimFacts]]:
    """:func:`iter_site_prims` with the facts the markers were computed from, for the reading."""
    kinds = compute_marker_hints(stage) - {"custom"}
    for prim, maybe_site, _ in _scan_marked_prims(stage, kinds):
        if maybe_site:
            facts = read_prim_facts(prim)
            markers = compute_site_markers(prim, facts)
            if markers:
                yield prim, markers, facts
