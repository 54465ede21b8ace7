"""What a rule's check function receives: a site, slot or stage context.

:class:`SiteContext` (one gripper site), :class:`SlotContext` (one object prim with
grasp slots) or :class:`StageContext`.

Each reads its prim lazily, once, through :mod:`usdgrip.usd`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np
from pxr import Usd, UsdGeom

from usdgrip.errors import GripperError
from usdgrip.frames import MAX_WORLD_OFFSET_M
from usdgrip.grasp_line_geometry import GraspLine, SurfacePoints, compute_surface_points
from usdgrip.gripper_articulation import GripperArticulation
from usdgrip.lambdasim import RecordProblem, SlotRecord
from usdgrip.site_records import DECLARING_MARKERS, GripperSite
from usdgrip.usd.articulation import fill_physics_scopes, read_gripper_articulation
from usdgrip.usd.discovery import (
    MARKER_TOKENS,
    PrimFacts,
    StageScan,
    compute_site_markers,
    read_prim_facts,
    scan_stage,
)
from usdgrip.usd.grasp_lines import (
    GraspLineScan,
    ObjectSurface,
    read_object_surface,
    scan_grasp_lines,
)
from usdgrip.usd.names import SLOT_NAMESPACE, SLOT_PROPERTIES
from usdgrip.usd.sites import compute_site_frame, read_gripper_site
from usdgrip.usd.slots import (
    get_instance_name_problem,
    get_slot_layout,
    list_slot_instances,
    read_slot_records,
    read_slot_values,
)
from usdgrip.usd.stage import compute_world_transform, get_api_schema_names

# --- per-prim contexts --------------------------------------------------------

_T = TypeVar("_T")


class cached_property(Generic[_T]):
    """``functools.cached_property`` without its lock (Python 3.11 takes one per first read).

    A context belongs to one validation call, never shared between threads, and
    thousands of them are read once each: the lock was a measurable share.
    """

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> _T:
        if instance is None:
            return self  # type: ignore[return-value]
        value = instance.__dict__[self.name] = self.func(instance)
        return value


@dataclass(eq=False)
class SiteContext:
    """One gripper site handed to ``site`` rules; the site is read once, lazily."""

    prim: Usd.Prim
    markers: tuple[str, ...]
    params: Mapping[str, float]
    xform_cache: UsdGeom.XformCache | None = None
    """Shared by the sites of one validation run (default: one per site)."""
    facts: PrimFacts | None = None
    """The prim's :func:`usdgrip.usd.discovery.read_prim_facts`, when already read."""
    meters_per_unit: float | None = None
    """The stage's, when already read."""
    scope_cache: dict | None = None
    """Shared by the sites of one validation run: each asset's physics prims are found in
    one walk (:func:`usdgrip.usd.articulation.scan_physics_scope`)."""

    @cached_property
    def path(self) -> str:
        """Prim path as text."""
        return self.facts.path if self.facts is not None else self.prim.GetPath().pathString

    @cached_property
    def articulation(self) -> GripperArticulation:
        """The site's articulation (:func:`~usdgrip.usd.articulation.read_gripper_articulation`).

        Measured along the site's grasp frame, made from the site as read only when the
        asset has rigid bodies; a stage without physics costs no walk.
        """
        return read_gripper_articulation(
            self.prim,
            read_frame=self._read_frame,
            xform_cache=self.xform_cache,
            scope_cache=self.scope_cache,
            is_site=True,
        )

    def _read_frame(self) -> np.ndarray | None:
        """The site's grasp frame from :attr:`site` (``None`` without a usable forward axis)."""
        site = self.site
        if site.forward_axis is None or site.forward_axis.direction is None:
            return None
        return compute_site_frame(site.world_transform, site.forward_axis, site.grip_line).matrix

    @cached_property
    def site(self) -> GripperSite:
        """The site as :func:`~usdgrip.usd.sites.read_gripper_site` reads it, without the frame.

        The rules check the axes, not the frame they give, so ``grasp_frame`` is
        ``None`` here and ``warnings`` lacks the frame's warnings; a rule that
        needs the frame calls ``read_gripper_site(context.prim)``.
        """
        # Non-finite authored points are reported by GR.005, not as numpy warnings.
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            return read_gripper_site(
                self.prim,
                self.markers,
                xform_cache=self.xform_cache,
                frame=False,
                facts=self.facts,
                meters_per_unit=self.meters_per_unit,
                strict=False,
            )

    @cached_property
    def api_schemas(self) -> tuple[str, ...]:
        """Every API schema applied to the site, registered here or not (``IsaacSiteAPI``)."""
        return get_api_schema_names(self.prim)

    @property
    def declared(self) -> bool:
        """GripperSiteAPI or socketType = "Gripper" marks the site."""
        return not DECLARING_MARKERS.isdisjoint(self.markers)

    @property
    def editable(self) -> bool:
        """False for instance proxies (no fix can be authored there)."""
        return not self.prim.IsInstanceProxy()

    def can_author_on(self, path: str) -> bool:
        """True when the prim at ``path`` exists and is not an instance proxy.

        A fix authors on one prim (e.g. a curve child of the site); the children
        of an instanceable site are instance proxies even when the site is not.
        """
        prim = self.prim.GetStage().GetPrimAtPath(path)
        return bool(prim) and not prim.IsInstanceProxy()


class SlotEntry(NamedTuple):
    """One slot of an object prim, values as authored (local frame).

    A named tuple: thousands are made per validation run, and a tuple is made fastest.
    """

    name: str
    source: str
    """``schema`` or ``lambdasim``."""
    center: Any
    forward: Any
    span_axis: Any
    up_range: Any
    slot_input_angle: Any
    lr: Any
    """Raw: ``left``/``right`` token (schema) or the record's LR number."""
    group: str
    version: int | None = None
    record_index: int | None = None
    problems: Mapping[str, str] = {}
    """Unusable schema values (wrong type, time-sampled only) by property name (``upRange``...),
    from :func:`usdgrip.usd.slots.read_slot_values`; such a value is ``None`` here."""

    @property
    def label(self) -> str:
        """``slot 'left_edge'`` or ``record [0] 'handle'``."""
        if self.source == "schema":
            return f"slot {self.name!r} (GripperSlotAPI)"
        return f"slot {self.name!r} (lambdasim gripper_slots[{self.record_index}])"


@dataclass(eq=False)
class SlotContext:
    """One object prim carrying GripperSlotAPI instances and/or LambdaSim records."""

    prim: Usd.Prim
    params: Mapping[str, float]
    meters_per_unit: float | None = None
    """The stage's, when already read."""
    xform_cache: UsdGeom.XformCache | None = None
    """Shared by the prims of one validation run (default: one per prim)."""

    @cached_property
    def path(self) -> str:
        """Prim path as text."""
        return self.prim.GetPath().pathString

    def compute_object_to_world(self, meters_per_unit: float) -> np.ndarray | None:
        """The prim's local-to-world (4, 4) in metres, as the slot readers snapshot it.

        ``None`` when it is finite, within :data:`~usdgrip.frames.MAX_WORLD_OFFSET_M` of
        the origin and well-conditioned (smallest singular value above
        1e-11 m and 1e-5 of the largest), so that it can degenerate no slot frame and
        the per-slot world check is skipped: a few C++ calls instead of numpy per slot.
        """
        cache = self.xform_cache
        if cache is None:
            cache = UsdGeom.XformCache(Usd.TimeCode.Default())
        matrix = cache.GetLocalToWorldTransform(self.prim)
        det = abs(matrix.GetDeterminant3()) * meters_per_unit**3
        rows = matrix.GetRow3(0), matrix.GetRow3(1), matrix.GetRow3(2)
        frobenius_sq = (rows[0] * rows[0] + rows[1] * rows[1] + rows[2] * rows[2]) * (
            meters_per_unit**2
        )
        translation = matrix.ExtractTranslation()
        # sigma_min >= det / F^2 and sigma_max <= F (F: Frobenius norm).
        regular = (
            math.isfinite(det + frobenius_sq + translation * translation)
            and det > 1e-11 * frobenius_sq
            and det > 1e-5 * frobenius_sq**1.5
            # Far off (GS.001 names the offset): float64 loses the slot's edges there.
            and max(map(abs, translation)) * meters_per_unit <= MAX_WORLD_OFFSET_M
        )
        if regular:
            return None
        return compute_world_transform(
            self.prim, xform_cache=cache, meters_per_unit=meters_per_unit
        )

    @cached_property
    def instance_names(self) -> list[str]:
        """GripperSlotAPI instance names in authoring order."""
        return list_slot_instances(self.prim)

    @cached_property
    def _records(self) -> tuple[list[SlotRecord], list[RecordProblem]]:
        return read_slot_records(self.prim)

    @property
    def records(self) -> list[SlotRecord]:
        """LambdaSim records that parsed."""
        return self._records[0]

    @property
    def record_problems(self) -> list[RecordProblem]:
        """LambdaSim records (or the whole value) that did not parse."""
        return self._records[1]

    @cached_property
    def valid_instance_names(self) -> list[str]:
        """Instance names USD can use as a property namespace."""
        return [n for n in self.instance_names if get_instance_name_problem(n) is None]

    @cached_property
    def slots(self) -> list[SlotEntry]:
        """Schema slots (valid names) then records whose name no schema slot uses."""
        entries = [self._schema_entry(name) for name in self.valid_instance_names]
        taken = {e.name for e in entries}
        for r in self.records:
            if r.name in taken:
                continue
            entries.append(
                SlotEntry(
                    r.name,
                    "lambdasim",
                    r.center,
                    r.forward,
                    r.span_axis,
                    r.up_range,
                    r.slot_input_angle,
                    r.lr,
                    r.group,
                    r.version,
                    r.index,
                )
            )
        return entries

    def _schema_entry(self, name: str) -> SlotEntry:
        prim = self.prim
        _, order, listed = get_slot_layout()
        # One query for the instance's properties: the schema's 7 (always there once the
        # API is applied), sorted by name, so in a known order when there are no others.
        props = _get_properties_in_namespace(prim, f"{SLOT_NAMESPACE}:{name}")
        if len(props) == len(order) and all(map(isinstance, props, _ATTRIBUTE_TYPES)):
            got = list(map(_attribute_get, props))  # in listing order
            values, problems = read_slot_values(
                prim,
                name,
                [props[i] for i in listed],  # in SLOT_PROPERTIES order
                [got[i] for i in listed],
            )
        else:  # other properties in the namespace: look the schema's up by name
            values, problems = read_slot_values(prim, name)
        center, forward, span_axis, up_range, angle, lr, group = values
        # Gf vectors -> tuples of floats once, through the buffer protocol (tuple(Gf.Vec3d)
        # iterates in Python and is 20x slower), so rules work on plain tuples.
        center, forward, span_axis = (
            _to_floats(v) if v is not None else None for v in (center, forward, span_axis)
        )
        # Positional (a keyword makes a named tuple several times slower to build).
        return SlotEntry(
            name,
            "schema",
            center,
            forward,
            span_axis,
            up_range,
            angle,
            lr,
            str(group or ""),
            None,
            None,
            problems,
        )


# Unbound pxr methods: looking a method up on a pxr object costs more than calling it.
_attribute_get = Usd.Attribute.Get
_get_properties_in_namespace = Usd.Prim.GetPropertiesInNamespace
_ATTRIBUTE_TYPES = (Usd.Attribute,) * len(SLOT_PROPERTIES)


def _to_floats(value: Any) -> tuple:
    """A Gf/Vt value as a tuple of Python floats (nested for arrays), as numpy would give it."""
    # Through the buffer protocol: tuple(Gf.Vec3d) iterates in Python and is 20x slower.
    try:
        view = memoryview(value)
    except TypeError:
        view = None
    if view is not None and view.format in ("d", "f"):
        return tuple(view.tolist())
    return tuple(np.asarray(value, dtype=np.float64).tolist())


class Candidate(NamedTuple):
    """A prim some site or slot rule applies to, as the stage's one walk found it."""

    prim: Usd.Prim
    markers: tuple[str, ...]
    """Its exact site markers (:func:`~usdgrip.usd.discovery.compute_site_markers`); empty
    when it is not a site."""
    facts: PrimFacts | None
    """Its :func:`~usdgrip.usd.discovery.read_prim_facts` when it may be a site."""
    has_slots: bool
    """GripperSlotAPI instances or LambdaSim records."""


@dataclass(eq=False)
class StageContext:
    """The stage handed to ``stage`` rules; what several of them read is read once.

    :attr:`scan` is the ONE walk of the stage of a validation run
    (:func:`usdgrip.usd.discovery.scan_stage`): the engine takes the site and slot
    candidates from it, and the stage rules their sites, slotted objects and grasp
    lines. It is made on first use, so a run whose rules need none makes no walk.
    """

    stage: Usd.Stage
    params: Mapping[str, float]
    scan_mode: str = "traverse"
    """``"collection"`` or ``"traverse"`` (:func:`~usdgrip.usd.discovery.scan_stage`)."""
    kinds: frozenset[str] = frozenset(MARKER_TOKENS)
    """Marker kinds the walk looks for (default all)."""
    lines: bool = True
    """Whether the walk looks for grasp vector lines."""
    colliders: bool = True
    """Whether the walk looks for colliders (with the lines: the graspable-prop rules)."""
    physics: bool = True
    """Whether the walk looks for the articulation rules' physics prims."""
    variants: bool = False
    """Whether the walk looks for prims with variant sets (``validate(variants=...)``)."""
    root: Usd.Prim | None = None
    """Walk only this prim's subtree (one variant selection, :mod:`usdgrip.rules.variants`)."""
    outer_scan: StageScan | None = None
    """With :attr:`root`: the whole stage's walk, for what lies outside the subtree (a
    rigid body above it)."""
    _surfaces: dict[str, ObjectSurface | GripperError] = field(
        default_factory=dict, init=False, repr=False
    )
    _surface_points: dict[str, SurfacePoints | None] = field(
        default_factory=dict, init=False, repr=False
    )

    @cached_property
    def scan(self) -> StageScan:
        """The run's one walk of the stage (or of :attr:`root`)."""
        return scan_stage(
            self.stage,
            self.kinds,
            lines=self.lines,
            colliders=self.colliders,
            variants=self.variants,
            physics=self.physics and self.root is None,
            scan=self.scan_mode,
            root=self.root,
        )

    @cached_property
    def scope_cache(self) -> dict:
        """The articulation reader's cache for the run, filled from :attr:`scan`.

        So the articulation rules walk nothing of their own
        (:func:`usdgrip.usd.articulation.fill_physics_scopes`); in a subtree run
        (:attr:`root`) each asset's physics is walked once when a site reads it. A walk
        that found none (or whose layer texts spell no physics schema) fills every asset's
        as empty, so no site reads the texts again.
        """
        cache: dict = {}
        if self.physics and self.root is None:
            fill_physics_scopes(self.stage, self.scan.physics_prims, cache)
        return cache

    @property
    def scanned(self) -> bool:
        """Whether :attr:`scan` was made (read) already."""
        return "scan" in self.__dict__

    @cached_property
    def candidates(self) -> list[Candidate]:
        """Sites and slot carriers of :attr:`scan`, sorted by path."""
        found = []
        for prim, maybe_site, maybe_slot in self.scan.marked:
            facts, markers = None, ()
            if maybe_site:
                facts = read_prim_facts(prim)
                markers = compute_site_markers(prim, facts)
            if markers or maybe_slot:
                found.append(Candidate(prim, markers, facts, maybe_slot))
        return found

    @property
    def sites(self) -> list[Candidate]:
        """The candidates that are gripper sites."""
        return [c for c in self.candidates if c.markers]

    @property
    def slotted(self) -> list[Candidate]:
        """The candidates that carry slots."""
        return [c for c in self.candidates if c.has_slots]

    @cached_property
    def grasp_lines(self) -> GraspLineScan:
        """The stage's grasp vector lines, from :attr:`scan` (lines sorted by path)."""
        scan = self.scan
        ordered = scan._replace(
            line_prims=sorted(scan.line_prims, key=Usd.Prim.GetPath),
            has_rigid_body=scan.has_rigid_body
            or (self.outer_scan is not None and self.outer_scan.has_rigid_body),
        )
        return scan_grasp_lines(self.stage, ordered)

    def get_object_surface(self, object_path: str) -> ObjectSurface | GripperError:
        """The surface of a grasp line's object, or the error that says why it has none."""
        if object_path not in self._surfaces:
            try:
                prim = self.stage.GetPrimAtPath(object_path)
                self._surfaces[object_path] = read_object_surface(prim)
            except GripperError as error:
                self._surfaces[object_path] = error
        return self._surfaces[object_path]

    def get_surface_points(self, line: GraspLine) -> SurfacePoints | GripperError | None:
        """Where ``line``'s two casts land on its object (``None``: it misses).

        Returns:
            The points, ``None`` for a miss, or the object's surface error.
        """
        surface = self.get_object_surface(line.object_path)
        if isinstance(surface, GripperError):
            return surface
        if line.path not in self._surface_points:
            p0, p1 = line.segment
            self._surface_points[line.path] = compute_surface_points(
                p0, p1, surface.vertices, surface.faces
            )
        return self._surface_points[line.path]
