"""Finding gripper sites and slots on a stage: the marker scan (SPEC §2).

:func:`find_marked_prims` flags the prims a marker may make a site or a slot, fast:
layer texts prove which kinds of markers can occur at all, path-expression queries
do the rest; :func:`compute_site_markers` then names the exact markers of a prim.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from pxr import Sdf, Tf, Usd

from usdgrip.grasp_line_geometry import GRASP_LINE_PREFIX
from usdgrip.lambdasim import (
    CUSTOM_DATA_PATH,
)
from usdgrip.usd.names import (
    SITE_API,
    SLOT_API,
)
from usdgrip.usd.site_markers import (
    MARKER_CHILD_NAMES,
    SITE_MARKER_PROPS,
)
from usdgrip.usd.site_markers import MARKER_TOKENS as MARKER_TOKENS
from usdgrip.usd.site_markers import PrimFacts as PrimFacts
from usdgrip.usd.site_markers import compute_site_markers as compute_site_markers
from usdgrip.usd.site_markers import read_prim_facts as read_prim_facts
from usdgrip.usd.stage import TRAVERSAL
from usdgrip.usd.text_proofs import (
    MARKER_HOLDINGS,
    LayerTexts,
    children_may_be_counted,
    compute_hints,
    has_remapping_arcs,
    mark_if_counted,
    props_may_be_counted,
)
from usdgrip.usd.text_proofs import compute_marker_hints as compute_marker_hints
from usdgrip.usd.text_proofs import compute_token_hints as compute_token_hints

# --- finding marked prims fast ------------------------------------------------
#
# A Python call per prim costs more than USD's whole traversal, so discovery
# (1) skips the kinds of markers no used layer mentions and (2) makes only the
# remaining cheap queries on every prim, as unbound methods (looking a method
# up on a pxr object costs more than calling it); the exact markers are then
# computed for the few prims flagged.

_MARKER_CHILDREN = frozenset(MARKER_CHILD_NAMES)
_MARKER_CHILD_GLOB = "gripper_*"  # matches every name of _MARKER_CHILDREN
_SLOT_PREFIX = f"{SLOT_API}:"
_RIGID_BODY_API = "PhysicsRigidBodyAPI"
_COLLISION_API = "PhysicsCollisionAPI"
#: Tokens that must occur in some used layer for the scan to look for grasp vector lines
#: (prims named ``grasp_identifier*``), rigid bodies (the graspable-prop trigger, only
#: with lines) and variant sets (``variantSet "hand" = {`` and ``variantSets = ...``).
_LINE_TOKEN = GRASP_LINE_PREFIX.encode()
_RIGID_TOKEN = _RIGID_BODY_API.encode()
_COLLISION_TOKEN = _COLLISION_API.encode()
_VARIANT_TOKEN = b"variantSet"
#: Layer-text tokens without which a stage has no physics prims (joints, rigid bodies,
#: articulation roots) for :func:`usdgrip.usd.articulation.scan_physics_scope` to find.
PHYSICS_TOKENS = (b"RigidBodyAPI", b"Joint", b"ArticulationRootAPI")
_PHYSICS_SCHEMAS = frozenset(
    ("PhysicsRigidBodyAPI", "PhysicsCollisionAPI", "PhysicsArticulationRootAPI")
)


def is_physics_prim(type_name: str, schemas: Sequence[str]) -> bool:
    """Whether a prim of ``type_name`` with ``schemas`` is one the articulation reader keeps.

    A joint, a ``NewtonActuator``, or a prim with a rigid body, collision or articulation
    root API (:func:`usdgrip.usd.articulation.scan_physics_scope` sorts them).
    """
    return bool(
        (type_name and "Joint" in type_name)
        or type_name == "NewtonActuator"
        or not _PHYSICS_SCHEMAS.isdisjoint(schemas)
    )


def _classify_schemas(schemas: Iterable[str]) -> tuple[bool, bool]:
    """``(maybe_site, maybe_slot)`` from a prim's applied API schema names."""
    maybe_site = maybe_slot = False
    for schema in schemas:
        if schema == SITE_API:
            maybe_site = True
        elif schema.startswith(_SLOT_PREFIX):
            maybe_slot = True
    return maybe_site, maybe_slot


def scan_marked_prims(stage: Usd.Stage, kinds: frozenset[str]) -> list[tuple[Usd.Prim, bool, bool]]:
    """``(prim, maybe_site, maybe_slot)`` in traversal order for prims any marker may apply to."""
    return _walk(stage, kinds).marked


class StageScan(NamedTuple):
    """What one walk of a stage found: marked prims, grasp-line prims, rigid bodies, variants."""

    marked: list[tuple[Usd.Prim, bool, bool]]
    """``(prim, maybe_site, maybe_slot)`` for the prims a discovery marker may apply to."""
    line_prims: list[Usd.Prim]
    """Prims named ``grasp_identifier*`` (any type), when looked for."""
    has_rigid_body: bool
    """Some prim has ``PhysicsRigidBodyAPI`` (looked for only with the grasp lines)."""
    variant_prims: list[Usd.Prim]
    """Prims with variant sets, when looked for (:func:`scan_stage` ``variants=True``)."""
    colliders: list[Usd.Prim]
    """Prims with ``PhysicsCollisionAPI``, when looked for (only with the grasp lines: the
    graspable-prop rules)."""
    physics_prims: list[Usd.Prim] = []  # noqa: RUF012 (never mutated)
    """Joints, actuators and prims with a physics body, collision or articulation API, in
    traversal order, when looked for (the articulation rules, :func:`is_physics_prim`)."""


def _walk(
    stage: Usd.Stage,
    kinds: Iterable[str],
    *,
    lines: bool = False,
    rigid: bool = False,
    variants: bool = False,
    colliders: bool = False,
    physics: bool = False,
    root: Usd.Prim | None = None,
) -> StageScan:
    """One Python traversal (:data:`TRAVERSAL`) of the stage, or of ``root`` and its descendants.

    ``marked``, ``line_prims`` and ``variant_prims`` are in traversal order.
    """
    kinds = frozenset(kinds)
    use_api, use_props = "api" in kinds or rigid or colliders or physics, "props" in kinds
    use_children, use_custom = "children" in kinds, "custom" in kinds
    if not (use_api or use_props or use_children or use_custom or lines or variants):
        return StageScan([], [], False, [], [], [])
    get_type_name = Usd.Prim.GetTypeName
    get_schemas = Usd.Prim.GetAppliedSchemas
    get_props = Usd.Prim.GetAuthoredPropertyNames
    get_name = Usd.Prim.GetName
    get_path = Usd.Prim.GetPath
    has_custom = Usd.Prim.HasCustomDataKey
    has_variants = Usd.Prim.HasVariantSets
    no_site_props = SITE_MARKER_PROPS.isdisjoint
    starts = str.startswith
    children = _MARKER_CHILDREN if use_children else frozenset()
    use_names, key, prefix = use_children or lines, CUSTOM_DATA_PATH, GRASP_LINE_PREFIX
    prims = stage.Traverse(TRAVERSAL) if root is None else Usd.PrimRange(root, TRAVERSAL)
    # Pass 1, the only per-prim work: keep prims that any cheap query flags.
    hits = [
        prim
        for prim in prims
        if (use_api and get_schemas(prim))
        or (use_props and not no_site_props(get_props(prim)))
        or (
            use_names and ((name := get_name(prim)) in children or (lines and starts(name, prefix)))
        )
        or (use_custom and has_custom(prim, key))
        or (variants and has_variants(prim))
        or (
            physics
            and bool(kind := get_type_name(prim))
            and ("Joint" in kind or kind == "NewtonActuator")
        )
    ]
    # Pass 2, hits only: say why (an applied API may be someone else's). A parent
    # marked by a child sorts just before the first hit of its subtree (pre-order).
    found: dict[Sdf.Path, list] = {}  # path -> [(order, depth), prim, maybe_site, maybe_slot]
    line_prims: list[Usd.Prim] = []
    variant_prims: list[Usd.Prim] = []
    collider_prims: list[Usd.Prim] = []
    physics_list: list[Usd.Prim] = []
    has_rigid = False
    top = root.GetPath() if root is not None else None
    for index, prim in enumerate(hits):
        schemas = get_schemas(prim)
        maybe_site, maybe_slot = _classify_schemas(schemas)
        if rigid and not has_rigid and _RIGID_BODY_API in schemas:
            has_rigid = True
        if colliders and _COLLISION_API in schemas:
            collider_prims.append(prim)
        if physics and is_physics_prim(get_type_name(prim), schemas):
            physics_list.append(prim)
        if variants and has_variants(prim):
            variant_prims.append(prim)
        if use_props and not maybe_site and not no_site_props(get_props(prim)):
            maybe_site = True
        if use_custom and has_custom(prim, key):
            maybe_slot = True
        name = get_name(prim) if use_names else ""
        if lines and starts(name, prefix):
            line_prims.append(prim)
        if name in children:
            parent = prim.GetParent()
            parent_path = get_path(parent)
            entry = found.get(parent_path)
            if parent.IsPseudoRoot() or (top is not None and not parent_path.HasPrefix(top)):
                pass  # a root prim named like a marker child marks no site (nor one outside)
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
    marked = [(prim, maybe_site, maybe_slot) for _, prim, maybe_site, maybe_slot in ordered]
    return StageScan(marked, line_prims, has_rigid, variant_prims, collider_prims, physics_list)


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
    for prim, maybe_site, maybe_slot in scan_marked_prims(stage, kinds):
        markers = compute_site_markers(prim) if maybe_site else ()
        if markers or maybe_slot:
            yield prim, markers, maybe_slot


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


def find_marked_prims(
    stage: Usd.Stage, kinds: frozenset[str] | None = None, *, scan: str = "collection"
) -> list[tuple[Usd.Prim, bool, bool]]:
    """``(prim, maybe_site, maybe_slot)`` for every prim a discovery marker may apply to.

    The same prims as :func:`iter_marked_prims` finds (a superset of the sites
    and slot carriers; :func:`compute_site_markers` decides), sorted by path
    (not in traversal order): the ``marked`` of :func:`scan_stage`, which says how.

    Raises:
        ValueError: an unknown ``scan``.
    """
    return scan_stage(stage, kinds, scan=scan).marked


def scan_stage(
    stage: Usd.Stage,
    kinds: Iterable[str] | None = None,
    *,
    lines: bool = False,
    variants: bool = False,
    colliders: bool = False,
    physics: bool = False,
    scan: str = "collection",
    root: Usd.Prim | None = None,
) -> StageScan:
    """Find in ONE walk of ``stage`` the prims markers may apply to, grasp lines and variants.

    ``marked`` is sorted by path; ``line_prims`` and ``variant_prims`` are in the walk's
    order (traversal order, or path order from the expression). The walk is one of two,
    never both:

    - ``scan="collection"`` (when the layer texts allow it): one OpenUSD path expression,
      evaluated in C++ through a temporary collection on the session layer
      (:func:`_make_membership_queries`): ``//{hasAPI(GripperSiteAPI, GripperSlotAPI)}``
      (plus ``PhysicsRigidBodyAPI`` with ``lines``), with ``//grasp_identifier*`` (grasp
      lines) and ``//gripper_*`` (marker children) as a union where those can occur.
      Marker properties elsewhere are ruled out by counting their names in the layer
      texts (:func:`~usdgrip.usd.text_proofs.mark_if_counted`).
    - one Python traversal (:func:`_walk`), when ``scan="traverse"``, when a ``root`` is
      given, when the session layer cannot be edited, or when the texts say the
      expression cannot find everything: a binary layer, LambdaSim ``customData``, variant
      sets (``variants=True``), a composition arc with marker properties, or more marker
      property names than the prims the expression finds could hold.

    The one exception, where the texts mislead the count: a marker property on a prim the
    expression does not find, beside fewer marker property names than the prims it finds
    could hold (say a legacy property-marked site next to API sites that author none).
    The marker properties are then queried per prim in a second (Python) walk.

    Args:
        stage: the stage. With ``scan="collection"`` it must not be read by another
            thread meanwhile (the session layer is edited and restored).
        kinds: marker kinds to look for (keys of :data:`MARKER_TOKENS`, default all); only
            those :func:`compute_marker_hints` allows are looked for.
        lines: also find the grasp vector line prims and whether a rigid body exists.
        variants: also find the prims with variant sets.
        colliders: with ``lines``, also find the prims with ``PhysicsCollisionAPI`` (in
            the expression: in its ``hasAPI`` list).
        physics: also find the articulation reader's prims (:func:`is_physics_prim`), in
            traversal order (the Python walk).
        scan: ``"collection"`` or ``"traverse"``.
        root: walk only this prim and its descendants (a Python walk).

    Raises:
        ValueError: an unknown ``scan``.
    """
    if scan not in ("collection", "traverse"):
        raise ValueError(f"scan is {scan!r}; expected 'collection' or 'traverse'")
    texts = LayerTexts.read(stage)
    kinds = compute_hints(texts, MARKER_TOKENS if kinds is None else kinds)

    def may_occur(token: bytes) -> bool:
        return texts is None or texts.contains(token)

    lines = lines and may_occur(_LINE_TOKEN)
    rigid = lines and may_occur(_RIGID_TOKEN)
    variants = variants and may_occur(_VARIANT_TOKEN)
    colliders = colliders and lines and may_occur(_COLLISION_TOKEN)
    physics = physics and any(map(may_occur, PHYSICS_TOKENS))
    options = {
        "lines": lines,
        "rigid": rigid,
        "variants": variants,
        "colliders": colliders,
        "physics": physics,
    }

    # Marker properties and marker children are proven absent elsewhere by counting (after
    # the walk) when the texts allow it: without a composition arc that may move a spec or a
    # variant set that may hold one not composed, and with no more marker names than the
    # prims found could hold.
    provable = (
        texts is not None and not has_remapping_arcs(texts) and not texts.contains(_VARIANT_TOKEN)
    )
    countable = "props" in kinds and provable and props_may_be_counted(texts, kinds)
    children_countable = "children" in kinds and provable and children_may_be_counted(texts, kinds)

    def python_walk() -> StageScan:
        # A count replaces a per-prim query (the property names: half the walk's cost; the
        # name: a third of the rest), except in a subtree walk (a count is of the whole
        # stage's texts). Children first: a site only they mark may hold marker properties.
        counted = [
            kind
            for kind, ok in (("children", children_countable), ("props", countable))
            if ok and root is None
        ]
        found = _walk(stage, kinds.difference(counted), root=root, **options)
        marked = found.marked
        if counted:
            entries = {prim.GetPath(): [prim, site, slot] for prim, site, slot in marked}
            for kind in counted:
                _prove_by_count(stage, entries, texts, kind)
            marked = list(map(tuple, entries.values()))
        return found._replace(marked=sorted(marked, key=lambda e: e[0].GetPath()))

    if (
        scan == "traverse"
        or root is not None
        or texts is None
        or variants
        or physics  # joints are typed prims, and the articulation reads traversal order
        or "custom" in kinds
        or ("props" in kinds and not countable)
    ):
        return python_walk()
    api = [SITE_API, SLOT_API] if "api" in kinds else []
    if rigid:
        api.append(_RIGID_BODY_API)
    if colliders:
        api.append(_COLLISION_API)
    parts = [f"//{{hasAPI({', '.join(api)})}}"] if api else []
    if "children" in kinds:
        parts.append(f"//{_MARKER_CHILD_GLOB}")
    if lines:
        parts.append(f"//{GRASP_LINE_PREFIX}*")
    found: dict[Sdf.Path, list] = {}  # path -> [prim, maybe_site, maybe_slot]
    line_prims: list[Usd.Prim] = []
    collider_prims: list[Usd.Prim] = []
    has_rigid = False
    if parts:
        queries = _make_membership_queries(stage, [" + ".join(parts)])
        paths = _compute_included_paths(stage, queries[0]) if queries else None
        if paths is None:  # the session layer cannot be edited, or USD refused
            return python_walk()
        get_prim, get_schemas = stage.GetPrimAtPath, Usd.Prim.GetAppliedSchemas
        for path in paths:
            prim = get_prim(path)
            name = path.name
            if lines and name.startswith(GRASP_LINE_PREFIX):
                line_prims.append(prim)
            if name in _MARKER_CHILDREN:
                _mark_parent(found, path, get_prim)
            schemas = get_schemas(prim)
            if rigid and not has_rigid and _RIGID_BODY_API in schemas:
                has_rigid = True
            if colliders and _COLLISION_API in schemas:
                collider_prims.append(prim)
            maybe_site, maybe_slot = _classify_schemas(schemas)
            if maybe_site or maybe_slot:
                entry = found.get(path)
                if entry is None:
                    found[path] = [prim, maybe_site, maybe_slot]
                else:
                    entry[1] |= maybe_site
                    entry[2] |= maybe_slot
    if "props" in kinds:
        _prove_by_count(stage, found, texts, "props")
    marked = [tuple(found[path]) for path in sorted(found)]
    return StageScan(marked, line_prims, has_rigid, [], collider_prims, [])


def _mark_parent(found: dict[Sdf.Path, list], child: Sdf.Path, get_prim: Callable) -> None:
    """Flag the parent of the marker child at ``child`` as a maybe-site (not the pseudo-root)."""
    parent = child.GetParentPath()
    if parent == Sdf.Path.absoluteRootPath:
        return  # a root prim named like a marker child marks no site
    entry = found.get(parent)
    if entry is None:
        found[parent] = [get_prim(parent), True, False]
    else:
        entry[1] = True


def _prove_by_count(
    stage: Usd.Stage, found: dict[Sdf.Path, list], texts: LayerTexts, kind: str
) -> None:
    """Flag the ``found`` prims holding markers of ``kind`` (``props`` or ``children``).

    The one exception to the one walk: when the count cannot place every marker (a
    marked prim the walk did not find), they are queried per prim.
    """
    if mark_if_counted(found, texts, kind, MARKER_HOLDINGS[kind]):
        return
    for prim, maybe_site, maybe_slot in _walk(stage, {kind}).marked:
        entry = found.get(prim.GetPath())
        if entry is None:
            found[prim.GetPath()] = [prim, maybe_site, maybe_slot]
        else:
            entry[1] |= maybe_site
            entry[2] |= maybe_slot


def iter_site_prims(stage: Usd.Stage) -> Iterator[tuple[Usd.Prim, tuple[str, ...]]]:
    """Yield ``(prim, markers)`` for every gripper site on the stage, in traversal order."""
    for prim, markers, _ in iter_sites_with_facts(stage):
        yield prim, markers


def iter_sites_with_facts(
    stage: Usd.Stage,
) -> Iterator[tuple[Usd.Prim, tuple[str, ...], PrimFacts]]:
    """:func:`iter_site_prims` with the facts the markers were computed from, for the reading."""
    kinds = compute_marker_hints(stage) - {"custom"}
    for prim, maybe_site, _ in scan_marked_prims(stage, kinds):
        if maybe_site:
            facts = read_prim_facts(prim)
            markers = compute_site_markers(prim, facts)
            if markers:
                yield prim, markers, facts
