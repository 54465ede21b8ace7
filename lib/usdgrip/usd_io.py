"""All stage access for sites and slots: open, discover, read, author.

This is the only module besides ``rules``, ``views``, ``adapters`` and the
plugins that touches ``pxr``. It reads prims into the immutable records of
:mod:`usdgrip.model` and writes results back. Gf matrices keep the
translation in the last row; :func:`gf_to_numpy`/:func:`numpy_to_gf` are the
one place that transposes.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from pxr import Gf, Sdf, Tf, Usd, UsdGeom, Vt

from usdgrip.errors import GripperError, PrimNotFoundError, StageOpenError
from usdgrip.frames import ZERO_LENGTH_TOLERANCE, Mat4, compute_grasp_frame, compute_unit
from usdgrip.lambdasim import (
    CUSTOM_DATA_PATH,
    SlotRecord,
    format_lambdasim_records,
    parse_lambdasim_records,
)
from usdgrip.model import LR_TOKENS, CurveInfo, GripperSite, GripperSlot

SITE_API = "GripperSiteAPI"
SLOT_API = "GripperSlotAPI"
SLOT_NAMESPACE = "gripperSlot"
SLOT_PROPERTIES = ("center", "forward", "spanAxis", "upRange", "slotInputAngle", "lr", "groupName")

SOCKET_TYPE_ATTRS = {
    "simready:attachment:socketType": "socketType",
    # Misspelling used by existing SimReady validators and assets.
    "simready:attactment:socketType": "socketType(misspelt)",
}
MAX_OPENING_ATTRS = ("gripper:maxOpening", "gripper_maxOpening", "custom:maxOpening")
MAX_PAYLOAD_ATTRS = ("gripper:maxPayload", "gripper_maxPayload")
LEGACY_SITE_ATTRS = ("gripper_maxOpening", "custom:maxOpening", "gripper_maxPayload")
FORWARD_AXIS_NAMES = ("gripper_forward_axis", "forward_axis")
GRIP_LINE_NAMES = ("gripper_grip_line", "grip_line")
USD_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")

#: Traverse everything a user authored that is composed: overs (undefined
#: prims under a missing payload) and instance proxies included, classes not.
TRAVERSAL = Usd.TraverseInstanceProxies(Usd.PrimIsActive & Usd.PrimIsLoaded & ~Usd.PrimIsAbstract)


# --- stage and prim access -------------------------------------------------


def open_stage(path: str | Path) -> Usd.Stage:
    """Open a USD file, turning every failure into one clear :class:`StageOpenError`.

    Raises:
        StageOpenError: the file is missing, unreadable (``permission denied``), a
            directory, not USD, corrupt, or starts with a UTF-8 BOM.
    """
    from usdgrip.fileio import describe_unreadable

    file = Path(path)
    problem = describe_unreadable(file)  # permission denied, a UTF-8 BOM
    if problem:
        raise StageOpenError(problem)
    if not file.exists():
        raise StageOpenError(f"{file}: no such file")
    if file.is_dir():
        raise StageOpenError(
            f"{file}: is a directory; expected a USD file ({', '.join(USD_SUFFIXES)})"
        )
    if file.suffix.lower() not in USD_SUFFIXES:
        raise StageOpenError(
            f"{file}: not a USD file (suffix {file.suffix or 'none'!r}); expected one of "
            f"{', '.join(USD_SUFFIXES)}"
        )
    try:
        stage = Usd.Stage.Open(str(file))
    except Tf.ErrorException as exc:
        # Keep USD's own messages ('...' after each "Error in <function> at line ..."), not its
        # source locations.
        reasons = re.findall(r" : '(.*?)'(?=\s*Error in|\s*$)", " ".join(str(exc).split()))
        reason = "; ".join(reasons) or " ".join(str(exc).split())
        raise StageOpenError(f"{file}: cannot be opened as USD: {reason}") from None
    if stage is None:
        raise StageOpenError(f"{file}: cannot be opened as USD")
    return stage


def get_prim(stage: Usd.Stage, path: str) -> Usd.Prim:
    """Return the prim at ``path`` or raise :class:`PrimNotFoundError` naming the file."""
    if not Sdf.Path.IsValidPathString(path) or not Sdf.Path(path).IsAbsolutePath():
        raise PrimNotFoundError(f"{_stage_name(stage)}: {path!r} is not an absolute prim path")
    prim = stage.GetPrimAtPath(path)
    if not prim:
        roots = ", ".join(f"<{p.GetPath()}>" for p in stage.GetPseudoRoot().GetChildren()) or "none"
        raise PrimNotFoundError(f"{_stage_name(stage)}: no prim at <{path}> (root prims: {roots})")
    return prim


def _stage_name(stage: Usd.Stage) -> str:
    return stage.GetRootLayer().identifier


def gf_to_numpy(matrix: Gf.Matrix4d) -> Mat4:
    """Gf matrix (translation in the last row) → numpy (4, 4), translation in ``[:3, 3]``."""
    return np.array(matrix, dtype=np.float64).T


def numpy_to_gf(matrix: ArrayLike) -> Gf.Matrix4d:
    """Numpy (4, 4) with translation in [:3, 3] → Gf.Matrix4d (the transpose)."""
    return Gf.Matrix4d(np.asarray(matrix, dtype=np.float64).reshape(4, 4).T.tolist())


def get_meters_per_unit(stage: Usd.Stage) -> float:
    """Stage metres per unit (USD's fallback 0.01 when not authored)."""
    return float(UsdGeom.GetStageMetersPerUnit(stage))


def get_meters_per_unit_problem(meters_per_unit: float) -> str | None:
    """Why a stage's ``metersPerUnit`` is unusable (``None`` when finite and > 0).

    Zero collapses every world length (each axis reads as zero length), a negative
    value mirrors every direction, so readers refuse both and the rules report them.
    """
    if math.isfinite(meters_per_unit) and meters_per_unit > 0:
        return None
    return (
        f"the stage's metersPerUnit is {meters_per_unit:g}; expected a finite value > 0 "
        "(metres per stage unit, e.g. 1 or 0.01): author it in the root layer's metadata"
    )


def compute_world_transform(
    prim: Usd.Prim,
    time: Usd.TimeCode | None = None,
    *,
    xform_cache: UsdGeom.XformCache | None = None,
    meters_per_unit: float | None = None,
) -> Mat4:
    """Local-to-world (4, 4) of ``prim`` with world lengths in metres.

    Works for undefined ``over`` prims too (their xformOps still compose).
    ``xform_cache`` (at ``time``; ``time`` is then ignored) lets many reads of
    one unchanged stage share their ancestors' transforms; ``meters_per_unit``
    (default: the stage's) saves asking the stage each time.
    """
    if xform_cache is None:
        xform_cache = UsdGeom.XformCache(Usd.TimeCode.Default() if time is None else time)
    world = gf_to_numpy(xform_cache.GetLocalToWorldTransform(prim))
    if meters_per_unit is None:
        meters_per_unit = get_meters_per_unit(prim.GetStage())
    if meters_per_unit != 1.0:
        world[:3] *= meters_per_unit  # diag(mpu, mpu, mpu, 1) @ world
    return world


def set_work_thread_limit(threads: int) -> None:
    """Limit the threads USD's work pool uses in this process (0: one per core).

    Batch workers run one per core and use one thread each: USD's own threads
    would only compete with the other workers.
    """
    from pxr import Work

    Work.SetConcurrencyLimit(int(threads))


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


def find_gripper_sites(stage: Usd.Stage, *, strict: bool = True) -> list[GripperSite]:
    """Read every gripper site on the stage (see :func:`read_gripper_site`).

    Raises:
        GripperError: ``strict`` and a site has an unusable value (``strict=False``: the
            site is returned with its ``problems``, e.g. for a panel that lists sites).
    """
    cache = UsdGeom.XformCache(Usd.TimeCode.Default())
    mpu = get_meters_per_unit(stage)
    return [
        read_gripper_site(
            prim, markers, xform_cache=cache, facts=facts, meters_per_unit=mpu, strict=strict
        )
        for prim, markers, facts in _iter_sites(stage)
    ]


# --- reading values: one function for the readers and the rules ---------------

_DEFAULT_TIME = Usd.TimeCode.Default()
_NO_DEFAULT_SOURCES = (Usd.ResolveInfoSourceNone, Usd.ResolveInfoSourceFallback)

#: Value kinds the readers accept: Python types of ``Get()``'s value, and the text naming them.
VALUE_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "number": ((float, int), "float or double"),
    "vec3": ((Gf.Vec3d, Gf.Vec3f, Gf.Vec3h), "a 3-vector (point3d, vector3d, float3...)"),
    "vec3[]": ((Vt.Vec3fArray, Vt.Vec3dArray, Vt.Vec3hArray), "point3f[]"),
    "int[]": ((Vt.IntArray,), "int[]"),
    "text": ((str,), "token or string"),
}


def get_authored_type_name(attr: Usd.Attribute) -> str:
    """Type name of the strongest authored spec (e.g. ``string``), else the attribute's."""
    stack = attr.GetPropertyStack(_DEFAULT_TIME)
    return str(stack[0].typeName if stack else attr.GetTypeName())


def read_attribute_value(
    attr: Usd.Attribute, kind: str, value: object = None, fallback: object = None
) -> tuple:
    """The value of an authored ``attr`` at the default time code, checked against ``kind``.

    usdgrip reads every value at the default time code. Readers and rules both
    call this, so what a rule reports is exactly what the readers refuse.

    Args:
        attr: an attribute with an authored opinion.
        kind: a key of :data:`VALUE_KINDS`.
        value: ``attr.Get()`` when the caller has it already (``None``: read it).
        fallback: the schema's fallback for ``attr`` (``None``: none). Only a value that
            is ``None`` or equals it can lack a default opinion, so only then is the
            resolve source asked (a time-sampled value without a default reads so).

    Returns:
        ``(value, None)``, or ``(None, problem)`` when the value is unusable: its
        type is not ``kind`` (the problem names the authored type), or it is only
        time-sampled (no default value to read).
    """
    if value is None:
        value = _attribute_get(attr)
    # (`value == None` on a Vt array is a slow failed conversion: compare only to a fallback.)
    may_lack_default = value is None or (fallback is not None and value == fallback)
    if may_lack_default and attr.GetResolveInfo(_DEFAULT_TIME).GetSource() in _NO_DEFAULT_SOURCES:
        if not attr.HasAuthoredValue():
            return value, None  # a declaration without a value: as if not authored
        return None, (
            f"{attr.GetName()} is time-sampled with no default value; usdgrip reads the "
            "default time code: author a default value"
        )
    types, expected = VALUE_KINDS[kind]
    if value is None or not isinstance(value, types) or isinstance(value, bool):
        return None, f"{attr.GetName()} is {get_authored_type_name(attr)}, expected {expected}"
    return value, None


def _read_float(
    prim: Usd.Prim, names: Sequence[str], authored: Container[str]
) -> tuple[float | None, str | None, str | None]:
    """First authored value among ``names`` (prefixed/schema names first).

    Returns:
        ``(value, attribute name, problem)``; ``value`` is ``None`` when none is
        authored, or when the first authored one is unusable (``problem`` says why).
    """
    for name in names:
        if name not in authored:  # the prim's authored property names
            continue
        attr = _get_attribute(prim, name)
        if not attr or not attr.HasAuthoredValue():
            continue  # no fallback: a spec without a value is not a value
        value, problem = read_attribute_value(attr, "number")
        if problem is not None:
            return None, name, problem
        if attr.GetTypeName() == _SDF_FLOAT:
            # Shortest decimal that round-trips the 32-bit value: 0.085, not 0.0850000009.
            return _float32_decimal(value), name, None
        return float(value), name, None
    return None, None, None


_SDF_FLOAT = Sdf.ValueTypeNames.Float
_FLOAT32_DECIMALS: dict[float, float] = {}


def _float32_decimal(value: float) -> float:
    """``float(str(np.float32(value)))``, remembered per value (sites share a few openings)."""
    if type(value) is not float or value == 0.0 or value != value:  # -0.0 == 0.0; nan != nan
        return float(str(np.float32(value)))
    found = _FLOAT32_DECIMALS.get(value)
    if found is None:
        found = float(str(np.float32(value)))
        if len(_FLOAT32_DECIMALS) < 4096:
            _FLOAT32_DECIMALS[value] = found
    return found


def _undefined_ancestor(prim: Usd.Prim) -> Usd.Prim | None:
    """Topmost prim at or above ``prim`` whose specifier is not a definition."""
    if prim.IsDefined():  # this prim and every ancestor have a defining specifier
        return None
    found = None
    while prim and not prim.IsPseudoRoot():
        if not prim.HasDefiningSpecifier():
            found = prim
        prim = prim.GetParent()
    return found


_get_child = Usd.Prim.GetChild
_get_attribute = Usd.Prim.GetAttribute
_get_authored_names = Usd.Prim.GetAuthoredPropertyNames
_get_children_names = Usd.Prim.GetFilteredChildrenNames
_attribute_get = Usd.Attribute.Get
_is_a = Usd.Prim.IsA
_XFORMABLE = UsdGeom.Xformable
_CURVE_TYPE_FALLBACK = "cubic"  # UsdGeomBasisCurves' fallback for `type`


def _read_curve(
    site: Usd.Prim,
    site_path: str,
    names: Sequence[str],
    rotation: list[list[float]],
    children: Sequence[str],
) -> CurveInfo | None:
    """The first of ``names`` among the site's ``children``; ``rotation``: world[:3, :3] rows."""
    present = [name for name in names if name in children]
    if not present:
        return None
    child_name = present[0]
    child = _get_child(site, child_name)
    # One query for the authored names: unauthored attributes are not looked up (points,
    # xformOpOrder and curveVertexCounts have no fallback, so skipping them reads the same
    # values). A handful of names: a list is as fast to search as a set is to build.
    authored = _get_authored_names(child)
    problems: dict[str, str] = {}

    def read(name: str, kind: str, fallback: object = None):
        if name not in authored:
            return None
        value, problem = read_attribute_value(_get_attribute(child, name), kind, None, fallback)
        if problem is not None:
            problems[name] = problem
        return value

    raw = read("points", "vec3[]")
    points = np.asarray(raw if raw is not None else (), dtype=np.float64).reshape(-1, 3)
    flat = points.ravel().tolist()
    if not _is_a(child, _XFORMABLE):
        pass  # no transform of its own: the points as authored
    elif "xformOpOrder" in authored:
        local = gf_to_numpy(_XFORMABLE(child).GetLocalTransformation())
        points = points @ local[:3, :3].T + local[:3, 3]
        flat = points.ravel().tolist()
    elif math.isfinite(sum(flat)):  # finite only if every term is (overflow: the slow path)
        points = points + 0.0  # what the identity transform gives finite points (-0.0 -> 0.0)
        flat = [x + 0.0 for x in flat[:6]]
    else:
        points = points @ _IDENTITY[:3, :3] + _IDENTITY[:3, 3]  # as the identity transform gives
        flat = points.ravel().tolist()
    direction, length = None, 0.0
    if len(flat) >= 6:
        # Plain floats: numpy costs more per call than these few products.
        x0, y0, z0, x1, y1, z1 = flat[:6]
        dx, dy, dz = x1 - x0, y1 - y0, z1 - z0
        (a, b, c), (d, e, f), (g, h, i) = rotation
        wx, wy, wz = a * dx + b * dy + c * dz, d * dx + e * dy + f * dz, g * dx + h * dy + i * dz
        length = math.sqrt(wx * wx + wy * wy + wz * wz)
        if math.isfinite(length) and length > ZERO_LENGTH_TOLERANCE:
            direction = np.array((wx / length, wy / length, wz / length))
    # A declared `type` without a value reads the fallback: not authored.
    curve_type = read("type", "text", _CURVE_TYPE_FALLBACK)
    if curve_type == _CURVE_TYPE_FALLBACK and not _get_attribute(child, "type").HasAuthoredValue():
        curve_type = None
    counts = read("curveVertexCounts", "int[]")  # no fallback: None unless authored
    return CurveInfo(
        child_name,
        f"{site_path}/{child_name}",
        child.GetTypeName(),
        points,
        direction,
        length,
        str(curve_type) if curve_type is not None else None,
        # Through the buffer: iterating a Vt array element by element in Python is 10x slower.
        tuple(memoryview(counts).tolist()) if counts is not None else None,
        present[1] if len(present) > 1 else None,
        problems,
    )


_IDENTITY = np.eye(4)
#: Curve values the readers do not use (a curve's direction is ``p1 - p0``): unusable ones
#: are GR.007 warnings and read as not authored.
_IGNORABLE_CURVE_VALUES = ("type", "curveVertexCounts")


def read_gripper_site(
    prim: Usd.Prim,
    markers: tuple[str, ...] | None = None,
    *,
    xform_cache: UsdGeom.XformCache | None = None,
    frame: bool = True,
    facts: PrimFacts | None = None,
    meters_per_unit: float | None = None,
    strict: bool = True,
) -> GripperSite:
    """Read one gripper site into an immutable :class:`GripperSite`.

    Prefixed names win: ``gripper:maxOpening`` over ``gripper_maxOpening`` over
    ``custom:maxOpening``; ``gripper_forward_axis`` over ``forward_axis``;
    ``gripper_grip_line`` over ``grip_line``. Problems that still let the site
    be read (degenerate axes, an undefined ``over`` above it, a grip line
    authored with the older jaw-span meaning) become ``warnings``.

    Reads of many sites of one unchanged stage may share an ``xform_cache``
    (default time) and pass the stage's ``meters_per_unit``; ``facts`` are the
    prim's :func:`read_prim_facts` when the caller has them already.
    ``frame=False`` skips the grasp frame (``grasp_frame`` is ``None`` and its
    warnings are not added): the validation rules check the axes, not the frame.

    Values are read at the default time code. A value of the wrong type, or one
    that is only time-sampled, is unusable and reads as not authored, the site's
    ``problems`` saying why. ``strict`` (the default) raises for one the readers
    need (max opening, curve points, ``metersPerUnit``: their rules fail); an
    unusable max payload or curve ``type``/``curveVertexCounts`` (warning rules
    GR.010, GR.007) is a ``warnings`` entry instead. ``strict=False`` (the
    validation rules, panels) never raises.

    Raises:
        GripperError: ``strict`` and an unusable value the readers need (names file,
            prim, attribute and the type found).
    """
    facts = read_prim_facts(prim) if facts is None else facts
    markers = compute_site_markers(prim, facts) if markers is None else markers
    if meters_per_unit is None:
        meters_per_unit = get_meters_per_unit(prim.GetStage())
    world = compute_world_transform(prim, xform_cache=xform_cache, meters_per_unit=meters_per_unit)
    path, authored, children = facts
    warnings: list[str] = []
    undefined = _undefined_ancestor(prim)
    if undefined is not None:
        warnings.append(
            f"<{prim.GetPath()}> sits under an undefined `over` <{undefined.GetPath()}>: the "
            "geometry it refers to is probably missing (unresolved reference or payload); "
            "check the asset paths of its layers"
        )
    max_opening, opening_source, opening_problem = _read_float(prim, MAX_OPENING_ATTRS, authored)
    max_payload, payload_source, payload_problem = _read_float(prim, MAX_PAYLOAD_ATTRS, authored)
    problems = {
        name: problem
        for name, problem in (
            ("metersPerUnit", get_meters_per_unit_problem(meters_per_unit)),
            (opening_source, opening_problem),
            (payload_source, payload_problem),
        )
        if problem is not None
    }
    rotation = world[:3, :3].tolist()
    forward = _read_curve(prim, path, FORWARD_AXIS_NAMES, rotation, children)
    grip = _read_curve(prim, path, GRIP_LINE_NAMES, rotation, children)
    for curve in (forward, grip):
        if curve is not None:
            problems.update(
                (f"{curve.child}.{n}", f"{curve.child}: {p}") for n, p in curve.problems.items()
            )
    # Values no reader needs (the rules only warn about them) read as not authored, with
    # a warning; the rest refuse, as their failure rules do (no failure => readable site).
    ignorable = {payload_source} | {
        f"{curve.child}.{name}"
        for curve in (forward, grip)
        if curve is not None
        for name in _IGNORABLE_CURVE_VALUES
    }
    refused = [p for name, p in problems.items() if name not in ignorable]
    if refused and strict:
        raise GripperError(f"{_stage_name(prim.GetStage())}: <{path}>: {'; '.join(refused)}")
    warnings.extend(
        f"{p}; read as not authored" for name, p in problems.items() if name in ignorable
    )
    grasp_frame = None
    if not frame:
        pass
    elif forward is None or forward.direction is None:
        warnings.append(
            "no usable forward axis (gripper_forward_axis with 2 distinct finite points); "
            "no grasp frame"
        )
    else:
        grip_direction = (
            grip.direction if grip is not None and grip.direction is not None else np.zeros(3)
        )
        frame = compute_grasp_frame(world[:3, 3], forward.direction, grip_direction)
        grasp_frame = frame.matrix
        warnings.extend(frame.warnings)
    if (
        grip is not None
        and max_opening is not None
        and math.isfinite(max_opening)
        and max_opening > 0
        and grip.length >= max_opening
    ):
        warnings.append(
            f"grip line length {grip.length:.4g} m >= max opening {max_opening:.4g} m: probably "
            "authored with the older meaning (jaw span); the grip line is the pad width along "
            "the graspable tube axis"
        )
    legacy = tuple(
        n for n in LEGACY_SITE_ATTRS if n in authored and _get_attribute(prim, n).IsAuthored()
    )
    return GripperSite(
        path,
        prim.GetTypeName(),
        markers,
        undefined is None,
        world,
        max_opening,
        opening_source,
        max_payload,
        payload_source,
        forward,
        grip,
        grasp_frame,
        tuple(warnings),
        legacy,
        problems,
    )


def _define_axis_curve(stage: Usd.Stage, path: Sdf.Path, p0: ArrayLike, p1: ArrayLike) -> None:
    curve = UsdGeom.BasisCurves.Define(stage, path)
    points = [Gf.Vec3f(*map(float, p0)), Gf.Vec3f(*map(float, p1))]
    curve.CreatePointsAttr(Vt.Vec3fArray(points))
    curve.CreateCurveVertexCountsAttr(Vt.IntArray([2]))
    curve.CreateTypeAttr(UsdGeom.Tokens.linear)
    curve.CreatePurposeAttr(UsdGeom.Tokens.guide)
    curve.CreateExtentAttr(UsdGeom.PointBased.ComputeExtent(Vt.Vec3fArray(points)))


def define_gripper_site(
    stage: Usd.Stage,
    path: str,
    max_opening: float,
    *,
    forward: ArrayLike = (0.0, 0.0, 1.0),
    grip_line: ArrayLike = (0.0, 1.0, 0.0),
    forward_length: float = 0.05,
    pad_width: float = 0.02,
    max_payload: float | None = None,
    translate: ArrayLike | None = None,
) -> Usd.Prim:
    """Define a complete, valid gripper site in one call.

    Creates (or reuses) an Xform at ``path``, applies ``GripperSiteAPI``,
    authors ``gripper:maxOpening`` (and ``gripper:maxPayload``), and defines
    both axis curves as linear 2-point ``guide`` BasisCurves with extents: the
    forward axis from the origin along ``forward`` (``forward_length`` long)
    and the grip line centred on the origin along ``grip_line``
    (``pad_width`` long, the pad width).

    Args:
        stage: stage to author on (its edit target).
        path: absolute prim path of the site.
        max_opening: metres, finite > 0.
        forward: approach direction in the site frame (any length).
        grip_line: graspable tube axis in the site frame (any length).
        forward_length: drawn length of the forward curve (stage units).
        pad_width: grip pad width, length of the grip line (stage units).
        max_payload: kilograms, optional.
        translate: optional site position in its parent frame.

    Raises:
        ValueError: a value is out of range or the axes are degenerate.
    """
    if not (math.isfinite(max_opening) and max_opening > 0):
        raise ValueError(f"max_opening is {max_opening} m; expected a finite value > 0 m")
    if max_payload is not None and not (math.isfinite(max_payload) and max_payload > 0):
        raise ValueError(f"max_payload is {max_payload} kg; expected a finite value > 0 kg")
    xform = UsdGeom.Xform.Define(stage, path)
    prim = xform.GetPrim()
    if translate is not None:
        xform.AddTranslateOp().Set(Gf.Vec3d(*map(float, np.asarray(translate).reshape(3))))
    set_gripper_site(
        prim,
        max_opening=max_opening,
        max_payload=max_payload,
        forward=forward,
        grip_line=grip_line,
        forward_length=forward_length,
        pad_width=pad_width,
    )
    return prim


def set_gripper_site(
    prim: Usd.Prim,
    *,
    max_opening: float | None = None,
    max_payload: float | None = None,
    forward: ArrayLike | None = None,
    grip_line: ArrayLike | None = None,
    forward_length: float = 0.05,
    pad_width: float = 0.02,
) -> None:
    """Edit an existing site through the schema; only the given values are authored.

    Applies ``GripperSiteAPI`` when missing. A given axis (re)defines its
    prefixed curve child (``gripper_forward_axis`` / ``gripper_grip_line``);
    legacy attributes and unprefixed curves are left alone (``usdgrip migrate``
    handles those).

    Raises:
        ValueError: the prim is not Xformable, or an axis is zero or not finite.
    """
    can_apply = prim.CanApplyAPI(SITE_API)
    if not can_apply:
        raise ValueError(f"<{prim.GetPath()}>: cannot apply {SITE_API}: {can_apply.whyNot}")
    prim.ApplyAPI(SITE_API)
    if max_opening is not None:
        prim.CreateAttribute("gripper:maxOpening", Sdf.ValueTypeNames.Float).Set(float(max_opening))
    if max_payload is not None:
        prim.CreateAttribute("gripper:maxPayload", Sdf.ValueTypeNames.Float).Set(float(max_payload))
    stage, base = prim.GetStage(), prim.GetPath()
    if forward is not None:
        unit = compute_unit(forward)
        if unit is None:
            raise ValueError(f"<{base}>: forward axis {list(forward)} is zero or not finite")
        _define_axis_curve(
            stage, base.AppendChild(FORWARD_AXIS_NAMES[0]), np.zeros(3), unit * forward_length
        )
    if grip_line is not None:
        unit = compute_unit(grip_line)
        if unit is None:
            raise ValueError(f"<{base}>: grip line {list(grip_line)} is zero or not finite")
        half = unit * pad_width / 2.0
        _define_axis_curve(stage, base.AppendChild(GRIP_LINE_NAMES[0]), -half, half)


# --- grasp slots ------------------------------------------------------------


def check_slot_instance_name(name: str) -> None:
    """Raise ``ValueError`` when ``name`` cannot be a GripperSlotAPI instance name.

    USD's ``ApplyAPI`` accepts such names, but attribute creation then fails.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"slot name {name!r} is empty; expected a USD identifier such as 'left_edge'"
        )
    if not Tf.IsValidIdentifier(name):
        raise ValueError(
            f"slot name {name!r} is not a valid USD identifier (rule: ASCII letters, digits and "
            "'_', not starting with a digit); e.g. 'left_edge'"
        )
    if not Usd.SchemaRegistry.IsAllowedAPISchemaInstanceName(SLOT_API, name):
        raise ValueError(
            f"slot name {name!r} is reserved (rule: an instance name may not equal a "
            f"GripperSlotAPI property name: {', '.join(SLOT_PROPERTIES)})"
        )


@functools.cache
def get_instance_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a GripperSlotAPI instance name (``None`` when it can).

    :func:`check_slot_instance_name`'s message, remembered per name: the one
    predicate of the readers (:func:`read_gripper_slots`) and of rule GS.005.
    """
    try:
        check_slot_instance_name(name)
    except ValueError as exc:
        return str(exc)
    return None


def get_slot_attribute_name(name: str, prop: str) -> str:
    """``gripperSlot:<name>:<prop>``."""
    return f"{SLOT_NAMESPACE}:{name}:{prop}"


def list_slot_instances(prim: Usd.Prim) -> list[str]:
    """GripperSlotAPI instance names applied to ``prim``, in authoring order."""
    prefix = f"{SLOT_API}:"
    return [s[len(prefix) :] for s in prim.GetAppliedSchemas() if s.startswith(prefix)]


def list_slot_names(prim: Usd.Prim) -> list[str]:
    """Names of the prim's slots, in the order :func:`read_gripper_slots` reads them.

    GripperSlotAPI instances, then the LambdaSim records that parse under a name
    no instance uses.
    """
    names = list_slot_instances(prim)
    names += [r.name for r in read_slot_records(prim)[0] if r.name not in names]
    return names


def read_slot_records(prim: Usd.Prim) -> tuple[list[SlotRecord], list]:
    """Parse the LambdaSim ``customData`` records of ``prim``: ``(records, problems)``."""
    raw = prim.GetCustomDataByKey(CUSTOM_DATA_PATH)
    if raw is None:
        return [], []
    return parse_lambdasim_records(_to_python(raw))


def _to_python(value):
    if isinstance(value, dict):
        return {str(k): _to_python(v) for k, v in value.items()}
    if isinstance(value, (Gf.Vec3d, Gf.Vec3f, Gf.Vec3h)):
        return [float(c) for c in value]
    if isinstance(value, str) or not hasattr(value, "__len__"):
        return value
    return [_to_python(v) for v in value]


#: What each GripperSlotAPI property must hold (keys of :data:`VALUE_KINDS`).
SLOT_VALUE_KINDS = {
    "center": "vec3",
    "forward": "vec3",
    "spanAxis": "vec3",
    "upRange": "number",
    "slotInputAngle": "number",
    "lr": "text",
    "groupName": "text",
}
#: The exact Python types each :data:`SLOT_PROPERTIES` value may have (``bool`` is no number).
_SLOT_VALUE_TYPES = tuple(
    frozenset(VALUE_KINDS[SLOT_VALUE_KINDS[prop]][0]) for prop in SLOT_PROPERTIES
)


def read_slot_values(
    prim: Usd.Prim,
    name: str,
    attributes: Sequence[Usd.Attribute | None] | None = None,
    values: Sequence[object] | None = None,
) -> tuple[list, dict[str, str]]:
    """The values of slot ``name`` (GripperSlotAPI) at the default time code, and their problems.

    Unauthored properties read the schema's fallbacks; every other value goes
    through :func:`read_attribute_value` (the readers and the GS rules both call
    this), except one of the right type that differs from the fallback: only an
    authored default value reads so, and it needs no further USD call.

    Args:
        prim: the object prim.
        name: the instance name.
        attributes: the slot's attributes in :data:`SLOT_PROPERTIES` order, when the caller
            has them (else looked up).
        values: their ``Get()`` values, when the caller has them (else read).

    Returns:
        ``(values, problems)``: values in :data:`SLOT_PROPERTIES` order (``None`` for an
        unusable one) and, by property name, why a value is unusable.
    """
    out: list = []
    problems: dict[str, str] = {}
    fallbacks = get_slot_layout()[0]
    for index, prop in enumerate(SLOT_PROPERTIES):
        if attributes is not None:
            attr = attributes[index]
        else:
            attr = _get_attribute(prim, get_slot_attribute_name(name, prop))
        value = values[index] if values is not None else (_attribute_get(attr) if attr else None)
        fallback = fallbacks[index]
        if attr and not (type(value) in _SLOT_VALUE_TYPES[index] and value != fallback):
            value, problem = read_attribute_value(attr, SLOT_VALUE_KINDS[prop], value, fallback)
            if problem is not None:
                problems[prop] = problem
        out.append(value)
    return out, problems


@functools.cache
def get_slot_layout() -> tuple[tuple[Any, ...], tuple[int, ...], tuple[int, ...]]:
    """GripperSlotAPI as USD applies it, asked once of a probe prim.

    Returns:
        What ``Get()`` returns for each unauthored property (the schema's fallbacks),
        in the order of :data:`SLOT_PROPERTIES`; and, for the
        properties ``GetPropertiesInNamespace`` lists (sorted by name), their index in
        :data:`SLOT_PROPERTIES`; and its inverse (for each property of
        :data:`SLOT_PROPERTIES`, its index in that listing).
    """
    stage = Usd.Stage.CreateInMemory()
    prim = stage.DefinePrim("/Object", "Xform")
    prim.ApplyAPI(SLOT_API, "probe")
    fallbacks = tuple(
        prim.GetAttribute(get_slot_attribute_name("probe", prop)).Get() for prop in SLOT_PROPERTIES
    )
    listed = prim.GetPropertiesInNamespace(f"{SLOT_NAMESPACE}:probe")
    order = tuple(SLOT_PROPERTIES.index(p.GetBaseName()) for p in listed)
    return fallbacks, order, tuple(order.index(i) for i in range(len(order)))


def _schema_slot(prim: Usd.Prim, name: str, world: Mat4, mpu: float) -> GripperSlot:
    values, problems = read_slot_values(prim, name)
    if problems:
        raise GripperError(
            f"{_stage_name(prim.GetStage())}: <{prim.GetPath()}> slot {name!r} (GripperSlotAPI): "
            + "; ".join(problems.values())
        )
    center, forward, span_axis, up_range, angle, lr, group = values
    return GripperSlot(
        prim=str(prim.GetPath()),
        name=name,
        source="schema",
        center_local=np.array(center or (0, 0, 0), dtype=np.float64),
        forward_local=np.array(forward or (0, 0, 1), dtype=np.float64),
        span_axis_local=np.array(span_axis or (1, 0, 0), dtype=np.float64),
        up_range_local=float(up_range if up_range is not None else 2.0),
        slot_input_angle=float(angle or 0.0),
        lr=LR_TOKENS.index(lr) if lr in LR_TOKENS else -1,
        group=str(group or ""),
        object_to_world=world,
        meters_per_unit=mpu,
    )


def read_gripper_slots(prim: Usd.Prim, names: Collection[str] | None = None) -> list[GripperSlot]:
    """Read the grasp slots of an object prim, bound to it and snapshotted in world space.

    GripperSlotAPI instances come first (authoring order), then LambdaSim
    records; a record whose name a schema slot already uses is ignored (the
    schema is canonical). ``names`` reads (and checks) only the slots of those
    names, so a bad slot that is not asked for does not refuse the others.

    Raises:
        GripperError: a LambdaSim record is malformed (names file, prim, record and key),
            a GripperSlotAPI instance name is not usable (GS.005), or a slot value has
            the wrong type or only time samples (names file, prim, slot and attribute).
    """
    wanted = (lambda name: True) if names is None else set(names).__contains__
    instances = [name for name in list_slot_instances(prim) if wanted(name)]
    for name in instances:
        problem = get_instance_name_problem(name)
        if problem is not None:
            raise GripperError(
                f"{_stage_name(prim.GetStage())}: <{prim.GetPath()}>: GripperSlotAPI:{name}: "
                f"{problem}; its properties cannot be authored, so the slot cannot be read "
                "(remove this instance, or rename it with a valid identifier)"
            )
    mpu = get_meters_per_unit(prim.GetStage())
    problem = get_meters_per_unit_problem(mpu)
    if problem is not None:
        raise GripperError(f"{_stage_name(prim.GetStage())}: <{prim.GetPath()}>: {problem}")
    world = compute_world_transform(prim, meters_per_unit=mpu)
    slots = [_schema_slot(prim, name, world, mpu) for name in instances]
    records, problems = read_slot_records(prim)
    problems = [p for p in problems if p.name is None or wanted(p.name)]
    records = [r for r in records if wanted(r.name)]
    if problems:
        raise GripperError(
            f"{_stage_name(prim.GetStage())}: <{prim.GetPath()}>: {problems[0].describe()}"
        )
    taken = {s.name for s in slots}
    for r in records:
        if r.name in taken:
            continue
        slots.append(
            GripperSlot(
                prim=str(prim.GetPath()),
                name=r.name,
                source="lambdasim",
                center_local=np.array(r.center),
                forward_local=np.array(r.forward),
                span_axis_local=np.array(r.span_axis),
                up_range_local=r.up_range,
                slot_input_angle=r.slot_input_angle,
                lr=r.lr,
                group=r.group,
                object_to_world=world,
                meters_per_unit=mpu,
                version=r.version,
                record_index=r.index,
                extra=dict(r.extra),
            )
        )
    return slots


def iter_slot_prims(stage: Usd.Stage) -> Iterator[Usd.Prim]:
    """Yield every prim carrying GripperSlotAPI instances or LambdaSim slot records."""
    kinds = compute_marker_hints(stage) & {"api", "custom"}
    for prim, _, maybe_slot in _scan_marked_prims(stage, kinds):
        if maybe_slot:
            yield prim


def apply_gripper_slot(
    prim: Usd.Prim,
    name: str,
    *,
    center: ArrayLike | None = None,
    forward: ArrayLike | None = None,
    span_axis: ArrayLike | None = None,
    up_range: float | None = None,
    slot_input_angle: float | None = None,
    lr: int | str | None = None,
    group: str | None = None,
) -> None:
    """Apply ``GripperSlotAPI:<name>`` and author the given fields (local frame).

    Raises:
        ValueError: a bad instance name (see :func:`check_slot_instance_name`) or ``lr``.
    """
    check_slot_instance_name(name)
    prim.ApplyAPI(SLOT_API, name)
    vector = lambda v: Gf.Vec3d(*map(float, np.asarray(v, dtype=np.float64).reshape(3)))  # noqa: E731
    values = {
        "center": (center, Sdf.ValueTypeNames.Point3d, vector),
        "forward": (forward, Sdf.ValueTypeNames.Vector3d, vector),
        "spanAxis": (span_axis, Sdf.ValueTypeNames.Vector3d, vector),
        "upRange": (up_range, Sdf.ValueTypeNames.Double, float),
        "slotInputAngle": (slot_input_angle, Sdf.ValueTypeNames.Double, float),
        "groupName": (group, Sdf.ValueTypeNames.String, str),
    }
    for prop, (value, type_name, convert) in values.items():
        if value is not None:
            attr = prim.CreateAttribute(get_slot_attribute_name(name, prop), type_name)
            attr.Set(convert(value))
    if lr is not None:
        token = lr if isinstance(lr, str) else (LR_TOKENS[lr] if lr in (0, 1) else None)
        if token not in LR_TOKENS:
            raise ValueError(
                f"<{prim.GetPath()}> slot {name!r}: lr is {lr!r}; expected 0/1 or left/right"
            )
        attr = prim.CreateAttribute(
            get_slot_attribute_name(name, "lr"),
            Sdf.ValueTypeNames.Token,
            variability=Sdf.VariabilityUniform,
        )
        attr.Set(token)


def write_slot_records(prim: Usd.Prim, slots: Sequence[GripperSlot | SlotRecord]) -> None:
    """Write slots as LambdaSim version-2 records (JSON list string) into ``prim``'s customData."""
    records = [
        s if isinstance(s, SlotRecord) else _slot_to_record(s, i) for i, s in enumerate(slots)
    ]
    prim.SetCustomDataByKey(CUSTOM_DATA_PATH, format_lambdasim_records(records))


def _slot_to_record(slot: GripperSlot, index: int) -> SlotRecord:
    return SlotRecord(
        name=slot.name,
        index=index,
        center=tuple(map(float, slot.center_local)),
        forward=tuple(map(float, slot.forward_local)),
        span_axis=tuple(map(float, slot.span_axis_local)),
        up_range=float(slot.up_range_local),
        slot_input_angle=float(slot.slot_input_angle),
        lr=int(slot.lr),
        group=slot.group,
        version=2,
        extra=dict(slot.extra),
    )


# --- files a stage reads -------------------------------------------------------


def list_stage_files(stage: Usd.Stage) -> list[str]:
    """Real paths of every layer file ``stage`` reads or names for composition.

    The used layers (root, sublayers, references, payloads), plus every file their
    composition arcs name that exists but did not load (a broken or unselected
    reference). A layer inside a ``.usdz`` package counts as the package file;
    anonymous layers are skipped. Commands refuse to write over any of these.
    """
    from pxr import Ar

    files: list[str] = []

    def add(path: str) -> None:
        if path and Ar.IsPackageRelativePath(path):
            path = Ar.SplitPackageRelativePathOuter(path)[0]
        if path and path not in files:
            files.append(path)

    for layer in stage.GetUsedLayers():
        if layer.anonymous:
            continue
        add(layer.realPath)
        for named in list_layer_dependencies(layer):
            if Path(named.split("[", 1)[0]).is_file():
                add(named)
    return files


def list_layer_dependencies(layer: Sdf.Layer) -> list[str]:
    """The paths ``layer``'s sublayers, references and payloads name, anchored to the layer."""
    named = (
        Sdf.ComputeAssetPathRelativeToLayer(layer, asset)
        for asset in layer.GetCompositionAssetDependencies()
    )
    return [path for path in named if path]
