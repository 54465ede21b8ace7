"""The validation engine: rule records, issues, fixes, one traversal per stage.

A rule is a frozen :class:`Rule` record plus one check function, registered
by the :func:`rule` decorator into :data:`RULES` (keyed by code). Rules have
a *scope*: ``site`` rules receive a :class:`SiteContext` (one gripper site),
``slot`` rules a :class:`SlotContext` (one object prim carrying grasp slots),
``stage`` rules the stage. A check function yields :class:`Finding` values;
the engine turns them into :class:`Issue` records carrying the rule's code,
name and severity.

:func:`validate` walks the stage ONCE, through
:func:`usdgrip.usd_io.iter_marked_prims` (the same discovery as
``iter_site_prims``/``iter_slot_prims``): the text of the used layers tells
which kinds of discovery markers can occur at all, only the per-prim queries
those kinds need are made, and the exact site markers are computed for the
few prims flagged.
:func:`check_prim` and :func:`check_stage_level` are the same code for one
prim or one stage (the NVIDIA and UsdValidation adapters call them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np
from pxr import Sdf, Usd, UsdGeom

from usdgrip import usd_io
from usdgrip.lambdasim import CUSTOM_DATA_PATH, RecordProblem, SlotRecord
from usdgrip.model import DECLARING_MARKERS, GripperSite
from usdgrip.slot_checks import MAX_OPENING_M, MAX_UP_RANGE_M

SEVERITIES = ("failure", "error", "warning", "info")
"""Severities, most serious first. ``failure`` and ``error`` make a report not ok."""
BLOCKING = frozenset({"failure", "error"})
SCOPES = ("site", "slot", "stage")

DEFAULT_PARAMS: dict[str, float] = {
    # GR.006: forward vs grip line may deviate this many degrees from 90°.
    "orthogonality_tolerance_deg": 10.0,
    # GR.009: warn when grip line length >= ratio * max opening.
    "grip_line_meaning_ratio": 1.0,
    # GS.001: forward vs span_axis may deviate this many degrees from 90°.
    "slot_perpendicular_tolerance_deg": 1.0,
    # GS.003: slot_input_angle must lie in [min, max] degrees.
    "slot_input_angle_min_deg": 0.0,
    "slot_input_angle_max_deg": 360.0,
    # GR.004 / GS.002: implausibly large max opening / up range (a unit mistake), metres.
    "max_opening_max_m": MAX_OPENING_M,
    "slot_up_range_max_m": MAX_UP_RANGE_M,
    # GP.003: width between the surfaces a grasp line's two ray casts land on, metres.
    "grasp_line_max_width_m": 0.085,
    "grasp_line_min_width_m": 0.002,
}
"""Documented tolerances (``docs/validation.md``); override with ``params=`` or ``--param``."""

PARAM_DOCS: dict[str, str] = {
    "orthogonality_tolerance_deg": "GR.006: allowed deviation of forward vs grip line from 90°",
    "grip_line_meaning_ratio": "GR.009: warn when grip line length >= ratio x max opening",
    "slot_perpendicular_tolerance_deg": "GS.001: allowed forward vs span_axis deviation from 90°",
    "slot_input_angle_min_deg": "GS.003: smallest allowed slot_input_angle (degrees)",
    "slot_input_angle_max_deg": "GS.003: largest allowed slot_input_angle (degrees)",
    "max_opening_max_m": "GR.004: largest plausible max opening (metres)",
    "slot_up_range_max_m": "GS.002: largest plausible slot up_range (metres)",
    "grasp_line_max_width_m": "GP.003: widest grasp a grasp line may describe (metres)",
    "grasp_line_min_width_m": "GP.003: narrowest grasp a grasp line may describe (metres)",
}

PARAM_RANGES: dict[str, tuple[float, float, bool]] = {
    "orthogonality_tolerance_deg": (0.0, 90.0, True),
    "grip_line_meaning_ratio": (0.0, math.inf, False),
    "slot_perpendicular_tolerance_deg": (0.0, 90.0, True),
    "slot_input_angle_min_deg": (0.0, 360.0, True),
    "slot_input_angle_max_deg": (0.0, 360.0, True),
    "max_opening_max_m": (0.0, math.inf, False),
    "slot_up_range_max_m": (0.0, math.inf, False),
    "grasp_line_max_width_m": (0.0, math.inf, False),
    "grasp_line_min_width_m": (0.0, math.inf, True),
}
"""Allowed ``(low, high, low_included)`` of each parameter (``docs/validation.md``); the
upper bound is included. ``slot_input_angle_min_deg`` may not exceed ``..._max_deg``, nor
``grasp_line_min_width_m`` ``grasp_line_max_width_m``."""

_REPO_DOCS = Path(__file__).resolve().parents[3] / "docs" / "rules"


def get_docs_dir() -> Path:
    """Directory of the rule docs: ``docs/rules`` of a checkout or ``usdgrip/share/docs/rules``."""
    shared = Path(__file__).resolve().parents[1] / "share" / "docs" / "rules"
    return shared if shared.is_dir() else _REPO_DOCS


# --- records ------------------------------------------------------------------


@dataclass(frozen=True)
class Fix:
    """An additive, unambiguous repair: apply an API schema or author a missing value.

    ``apply(target)`` authors into ``target``: an ``Sdf.Layer`` of the prim's
    stage (root or session layer...) or a ``Usd.EditTarget``. A fix never
    renames or removes anything.
    """

    description: str
    """One line saying what the fix authors, naming prim and attribute."""
    stage: Usd.Stage = field(repr=False, compare=False)
    author: Callable[[Usd.Stage], None] = field(repr=False, compare=False)
    """Authors the change on the stage's current edit target."""

    def apply(self, target: Sdf.Layer | Usd.EditTarget | None = None) -> str:
        """Author the fix into ``target`` (default: the root layer) and return the description.

        Raises:
            ValueError: ``target`` is not a layer of the prim's stage.
        """
        if target is None:
            target = self.stage.GetRootLayer()
        edit_target = target if isinstance(target, Usd.EditTarget) else Usd.EditTarget(target)
        if not edit_target.IsValid() or not self.stage.HasLocalLayer(edit_target.GetLayer()):
            layer = edit_target.GetLayer()
            raise ValueError(
                f"cannot apply fix ({self.description}): layer "
                f"{layer.identifier if layer else None} is not in the local layer stack of "
                f"{self.stage.GetRootLayer().identifier}; pass its root or session layer"
            )
        with Usd.EditContext(self.stage, edit_target):
            self.author(self.stage)
        return self.description


@dataclass(frozen=True)
class Issue:
    """One finding of one rule on one prim."""

    code: str
    rule: str
    """Kebab-case rule name, e.g. ``gripper-grip-line``."""
    severity: str
    prim: str
    """Prim path (``/`` for stage-level findings)."""
    message: str
    fixes: tuple[Fix, ...] = ()

    @property
    def fixable(self) -> bool:
        """True when at least one additive fix is available."""
        return bool(self.fixes)

    def describe(self) -> str:
        """One line: ``GR.004 failure </Gripper/tcp>: message``."""
        return f"{self.code} {self.severity} <{self.prim}>: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping (``fixes`` as their descriptions)."""
        return {
            "code": self.code,
            "rule": self.rule,
            "severity": self.severity,
            "prim": self.prim,
            "message": self.message,
            "fixable": self.fixable,
            "fixes": [f.description for f in self.fixes],
        }


class Finding(NamedTuple):
    """What a check function yields; the engine adds code, name and severity."""

    message: str
    fixes: tuple[Fix, ...] = ()
    prim: str | None = None
    """Prim path when not the context's prim."""


@dataclass(frozen=True)
class Rule:
    """A validation rule: metadata plus one check function."""

    code: str
    name: str
    severity: str
    scope: str
    title: str
    summary: str
    message: str
    """Generic message template (``{prim}`` placeholder) used by adapters as requirement text."""
    tags: tuple[str, ...]
    check: Callable[..., Iterable[Finding]] = field(repr=False, compare=False)
    version: str = "1.0.0"
    compatibility: str = "open-usd"

    @property
    def validator(self) -> str:
        """``CheckPrim`` for site/slot rules, ``CheckStage`` for stage rules."""
        return "CheckStage" if self.scope == "stage" else "CheckPrim"

    @property
    def doc_path(self) -> Path:
        """Path of the rule's markdown doc (``docs/rules/<CODE>.md``)."""
        return get_docs_dir() / f"{self.code}.md"

    @property
    def doc(self) -> str:
        """The rule's markdown doc (summary only when the doc is not installed)."""
        try:
            return self.doc_path.read_text(encoding="utf-8")
        except OSError:
            return f"# {self.name}\n\n{self.code} ({self.severity})\n\n{self.summary}\n"

    def make_issue(self, prim: str, message: str, fixes: tuple[Fix, ...] = ()) -> Issue:
        """An :class:`Issue` of this rule."""
        return Issue(self.code, self.name, self.severity, prim, message, tuple(fixes))


RULES: dict[str, Rule] = {}
"""Every registered rule, keyed by code (``GR.003``)."""


def rule(
    code: str,
    name: str,
    severity: str,
    *,
    scope: str,
    title: str,
    summary: str,
    message: str,
    tags: Sequence[str] = (),
) -> Callable[[Callable[..., Iterable[Finding]]], Callable[..., Iterable[Finding]]]:
    """Register the decorated check function as rule ``code`` in :data:`RULES`.

    Raises:
        ValueError: duplicate code or name, unknown severity or scope.
    """
    if severity not in SEVERITIES:
        raise ValueError(f"rule {code}: severity {severity!r}; expected one of {SEVERITIES}")
    if scope not in SCOPES:
        raise ValueError(f"rule {code}: scope {scope!r}; expected one of {SCOPES}")

    def register(check: Callable[..., Iterable[Finding]]) -> Callable[..., Iterable[Finding]]:
        if code in RULES:
            raise ValueError(f"rule code {code} registered twice")
        if any(r.name == name for r in RULES.values()):
            raise ValueError(f"rule name {name} registered twice")
        RULES[code] = Rule(code, name, severity, scope, title, summary, message, tuple(tags), check)
        return check

    return register


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
    facts: usd_io.PrimFacts | None = None
    """The prim's :func:`usdgrip.usd_io.read_prim_facts`, when already read."""
    meters_per_unit: float | None = None
    """The stage's, when already read."""

    @cached_property
    def path(self) -> str:
        """Prim path as text."""
        return self.facts.path if self.facts is not None else self.prim.GetPath().pathString

    @cached_property
    def site(self) -> GripperSite:
        """The site as :func:`usdgrip.usd_io.read_gripper_site` reads it, without the grasp frame.

        The rules check the axes, not the frame they give, so ``grasp_frame`` is
        ``None`` here and ``warnings`` lacks the frame's warnings; a rule that
        needs the frame calls ``read_gripper_site(context.prim)``.
        """
        # Non-finite authored points are reported by GR.005, not as numpy warnings.
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            return usd_io.read_gripper_site(
                self.prim,
                self.markers,
                xform_cache=self.xform_cache,
                frame=False,
                facts=self.facts,
                meters_per_unit=self.meters_per_unit,
                strict=False,
            )

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
    from :func:`usdgrip.usd_io.read_slot_values`; such a value is ``None`` here."""

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

        ``None`` when it is finite and well-conditioned (smallest singular value above
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
        )
        if regular:
            return None
        return usd_io.compute_world_transform(
            self.prim, xform_cache=cache, meters_per_unit=meters_per_unit
        )

    @cached_property
    def instance_names(self) -> list[str]:
        """GripperSlotAPI instance names in authoring order."""
        return usd_io.list_slot_instances(self.prim)

    @cached_property
    def _records(self) -> tuple[list[SlotRecord], list[RecordProblem]]:
        return usd_io.read_slot_records(self.prim)

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
        _, order, listed = usd_io.get_slot_layout()
        # One query for the instance's properties: the schema's 7 (always there once the
        # API is applied), sorted by name, so in a known order when there are no others.
        props = _get_properties_in_namespace(prim, f"{usd_io.SLOT_NAMESPACE}:{name}")
        if len(props) == len(order) and all(map(isinstance, props, _ATTRIBUTE_TYPES)):
            got = list(map(_attribute_get, props))  # in listing order
            values, problems = usd_io.read_slot_values(
                prim,
                name,
                [props[i] for i in listed],  # in SLOT_PROPERTIES order
                [got[i] for i in listed],
            )
        else:  # other properties in the namespace: look the schema's up by name
            values, problems = usd_io.read_slot_values(prim, name)
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
_ATTRIBUTE_TYPES = (Usd.Attribute,) * len(usd_io.SLOT_PROPERTIES)


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


#: Why a name cannot be a GripperSlotAPI instance name (``None`` when it can); the readers
#: skip nothing silently: they refuse a prim with such a slot, GS.005 reports it.
get_instance_name_problem = usd_io.get_instance_name_problem


# --- the traversal -------------------------------------------------------------

#: Which kinds of discovery markers can occur on a stage (text of the used layers).
compute_marker_hints = usd_io.compute_marker_hints

#: ``(prim, site_markers, has_slots)`` for every prim a site or slot rule applies to: one
#: traversal, exactly the prims :func:`usdgrip.usd_io.iter_site_prims` / ``iter_slot_prims`` find.
iter_candidates = usd_io.iter_marked_prims


def _prim_has_slots(prim: Usd.Prim) -> bool:
    return bool(usd_io.list_slot_instances(prim)) or (
        prim.GetCustomDataByKey(CUSTOM_DATA_PATH) is not None
    )


# --- running rules -------------------------------------------------------------


def select_rules(rules: Iterable[str | Rule] | None = None) -> list[Rule]:
    """Resolve codes (or names, or Rule records) to rules, in code order.

    Raises:
        ValueError: an unknown code, listing the valid codes.
    """
    if rules is None:
        return [RULES[c] for c in sorted(RULES)]
    by_name = {r.name: r for r in RULES.values()}
    selected: dict[str, Rule] = {}
    for item in [rules] if isinstance(rules, str | Rule) else rules:
        if isinstance(item, Rule):
            found = item
        else:
            key = str(item).strip()
            found = RULES.get(key.upper()) or by_name.get(key.lower())
        if found is None:
            raise ValueError(f"unknown rule {item!r}; expected one of: {', '.join(sorted(RULES))}")
        selected[found.code] = found
    return [selected[c] for c in sorted(selected)]


def resolve_params(params: Mapping[str, Any] | None = None) -> dict[str, float]:
    """:data:`DEFAULT_PARAMS` overridden by ``params``.

    Raises:
        ValueError: an unknown name (listing valid ones), a value that is not a finite
            number or outside its :data:`PARAM_RANGES` range, or a minimum slot input
            angle (grasp line width) above the maximum.
    """
    resolved = dict(DEFAULT_PARAMS)
    for name, value in (params or {}).items():
        if name not in DEFAULT_PARAMS:
            raise ValueError(
                f"unknown parameter {name!r}; expected one of: {', '.join(sorted(DEFAULT_PARAMS))}"
            )
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number):
            raise ValueError(f"parameter {name} is {value!r}; expected a finite number")
        low, high, low_included = PARAM_RANGES[name]
        if not ((number >= low if low_included else number > low) and number <= high):
            expected = (
                f"a value > {low:g}"
                if math.isinf(high)
                else f"a value in {'[' if low_included else '('}{low:g}, {high:g}]"
            )
            raise ValueError(f"parameter {name} is {number:g}; expected {expected}")
        resolved[name] = number
    low, high = resolved["slot_input_angle_min_deg"], resolved["slot_input_angle_max_deg"]
    if low > high:
        raise ValueError(
            f"parameter slot_input_angle_min_deg is {low:g}, above slot_input_angle_max_deg "
            f"{high:g}; expected min <= max"
        )
    low, high = resolved["grasp_line_min_width_m"], resolved["grasp_line_max_width_m"]
    if low > high:
        raise ValueError(
            f"parameter grasp_line_min_width_m is {low:g}, above grasp_line_max_width_m "
            f"{high:g}; expected min <= max"
        )
    return resolved


def _run(rule_: Rule, context: Any, prim_path: str) -> list[Issue]:
    try:
        return [
            rule_.make_issue(f.prim or prim_path, f.message, f.fixes) for f in rule_.check(context)
        ]
    except Exception as exc:  # a crashing rule must not stop the run: report it
        return [_crash_issue(rule_, prim_path, exc)]


def _crash_issue(rule_: Rule, prim_path: str, exc: Exception) -> Issue:
    return Issue(
        rule_.code,
        rule_.name,
        "error",
        prim_path,
        f"rule {rule_.code} ({rule_.name}) crashed on this prim: "
        f"{type(exc).__name__}: {exc}; the prim was not fully checked for this rule",
    )


def _run_all(rules: Sequence[Rule], context: Any, prim_path: str, issues: list[Issue]) -> None:
    """:func:`_run` of each rule into ``issues``, inlined (most rules find nothing)."""
    for rule_ in rules:
        try:
            found = [
                rule_.make_issue(f.prim or prim_path, f.message, f.fixes)
                for f in rule_.check(context)
            ]
        except Exception as exc:  # a crashing rule must not stop the run: report it
            found = [_crash_issue(rule_, prim_path, exc)]
        if found:
            issues.extend(found)


def _check_candidate(
    prim: Usd.Prim,
    markers: tuple[str, ...],
    has_slots: bool,
    site_rules: Sequence[Rule],
    slot_rules: Sequence[Rule],
    params: Mapping[str, float],
    xform_cache: UsdGeom.XformCache | None = None,
    facts: usd_io.PrimFacts | None = None,
    meters_per_unit: float | None = None,
) -> list[Issue]:
    issues: list[Issue] = []
    if markers and site_rules:
        site = SiteContext(prim, markers, params, xform_cache, facts, meters_per_unit)
        _run_all(site_rules, site, site.path, issues)
    if has_slots and slot_rules:
        slots = SlotContext(prim, params, meters_per_unit, xform_cache)
        _run_all(slot_rules, slots, slots.path, issues)
    return issues


def _split(rules: Sequence[Rule]) -> tuple[list[Rule], list[Rule], list[Rule]]:
    return (
        [r for r in rules if r.scope == "site"],
        [r for r in rules if r.scope == "slot"],
        [r for r in rules if r.scope == "stage"],
    )


def check_prim(
    prim: Usd.Prim,
    rules: Iterable[str | Rule] | None = None,
    params: Mapping[str, Any] | None = None,
) -> list[Issue]:
    """Run the site and slot rules that apply to one prim (the adapters' entry point).

    A prim that is neither a site (SPEC §2 markers) nor carries slots yields
    no issues. Stage-level rules are not run here (see :func:`check_stage_level`).

    Raises:
        ValueError: an unknown rule code or parameter.
    """
    site_rules, slot_rules, _ = _split(select_rules(rules))
    resolved = resolve_params(params)
    facts = usd_io.read_prim_facts(prim) if site_rules else None
    markers = usd_io.compute_site_markers(prim, facts) if facts is not None else ()
    has_slots = bool(slot_rules) and _prim_has_slots(prim)
    if not markers and not has_slots:
        return []
    return _check_candidate(prim, markers, has_slots, site_rules, slot_rules, resolved, None, facts)


def check_stage_level(
    stage: Usd.Stage,
    rules: Iterable[str | Rule] | None = None,
    params: Mapping[str, Any] | None = None,
) -> list[Issue]:
    """Run the stage-scope rules (GA.001) on ``stage``.

    Raises:
        ValueError: an unknown rule code or parameter.
    """
    _, _, stage_rules = _split(select_rules(rules))
    resolved = resolve_params(params)
    issues: list[Issue] = []
    context = StageContext(stage, resolved)
    for r in stage_rules:
        issues.extend(_run(r, context, "/"))
    return issues


@dataclass(eq=False)
class StageContext:
    """The stage handed to ``stage`` rules."""

    stage: Usd.Stage
    params: Mapping[str, float]


_SEVERITY_ORDER = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass
class Report:
    """Issues found on one stage, with counts, fixes and JSON output."""

    stage: Usd.Stage | None
    issues: list[Issue]
    rules: tuple[str, ...] = ()
    """Codes of the rules that ran."""
    params: dict[str, float] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        """Number of issues per severity (every severity present, possibly 0)."""
        counts = dict.fromkeys(SEVERITIES, 0)
        for issue in self.issues:
            counts[issue.severity] += 1
        return counts

    @property
    def ok(self) -> bool:
        """True when no issue is a failure or an error (warnings and infos never fail)."""
        return not any(i.severity in BLOCKING for i in self.issues)

    @property
    def fixable(self) -> list[Issue]:
        """Issues that carry at least one fix."""
        return [i for i in self.issues if i.fixes]

    def apply_fixes(self, layer: Sdf.Layer | None = None) -> list[str]:
        """Apply every available fix into ``layer`` (default: the stage's root layer).

        Fixes only add (apply an API schema, author a missing value). The
        layer is edited in memory; saving it is the caller's choice.

        Returns:
            One description per change made, in issue order.

        Raises:
            ValueError: no stage, or ``layer`` is not in the stage's local layer stack.
        """
        if self.stage is None:
            raise ValueError("report has no stage to fix")
        target = self.stage.GetRootLayer() if layer is None else layer
        changed: list[str] = []
        seen: set[str] = set()
        # No Sdf.ChangeBlock: fixes use the Usd API, which needs composed state between edits.
        for issue in self.issues:
            for fix in issue.fixes:
                if fix.description in seen:
                    continue
                seen.add(fix.description)
                changed.append(fix.apply(target))
        return changed

    def to_dict(self, path: str | None = None) -> dict[str, Any]:
        """``{"path", "issues": [...], "summary": {...}}`` for one file."""
        return {
            "path": path if path is not None else _stage_path(self.stage),
            "ok": self.ok,
            "issues": [i.to_dict() for i in self.issues],
            "summary": self.counts,
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON text (one file entry of ``usdgrip validate --format json``)."""
        return json.dumps(self.to_dict(), indent=indent)


def _stage_path(stage: Usd.Stage | None) -> str:
    if stage is None:
        return ""
    layer = stage.GetRootLayer()
    return layer.realPath or layer.identifier


def sort_issues(issues: Iterable[Issue]) -> list[Issue]:
    """Stage issues first, then by prim path, severity and code (deterministic output)."""
    return sorted(
        issues, key=lambda i: (i.prim != "/", i.prim, _SEVERITY_ORDER[i.severity], i.code)
    )


def validate(
    stage_or_path: Usd.Stage | str | Path,
    rules: Iterable[str | Rule] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    scan: str | None = None,
) -> Report:
    """Validate a stage (or a USD file) against the usdgrip rules in one traversal.

    Args:
        stage_or_path: an open stage, or a path opened with :func:`usdgrip.usd_io.open_stage`.
        rules: codes (``"GR.003"``) or names to run; ``None`` runs every rule.
        params: overrides of :data:`DEFAULT_PARAMS`.
        scan: how the prims any rule applies to are found
            (:func:`usdgrip.usd_io.find_marked_prims`): ``"collection"``
            evaluates an OpenUSD path expression in C++ through a temporary
            collection on the session layer, removed before returning (the stage
            sends two ``ObjectsChanged`` notices; do not validate while another
            thread reads the same stage); ``"traverse"`` queries every prim from
            Python and never writes. Default (``None``): ``"collection"`` when
            given a path (the stage is private to this call), ``"traverse"`` when
            given a stage, so a caller's stage (usdview's, a UsdValidation run's)
            is never edited, not even in its session layer.

    Returns:
        A :class:`Report`; issues sorted by prim path (stage-level first).

    Raises:
        StageOpenError: the path cannot be opened as USD.
        ValueError: an unknown rule code or parameter (listing the valid ones), or
            an unknown ``scan``.
    """
    if scan not in (None, "collection", "traverse"):
        raise ValueError(f"scan is {scan!r}; expected 'collection' or 'traverse'")
    selected = select_rules(rules)
    resolved = resolve_params(params)
    if isinstance(stage_or_path, Usd.Stage):
        stage, scan = stage_or_path, scan or "traverse"
    else:
        stage, scan = usd_io.open_stage(stage_or_path), scan or "collection"
    site_rules, slot_rules, stage_rules = _split(selected)
    issues: list[Issue] = []
    context = StageContext(stage, resolved)
    for r in stage_rules:
        issues.extend(_run(r, context, "/"))
    if site_rules or slot_rules:
        # Only the markers the selected rules can use: sites (API, marker properties and
        # children), slot carriers (API, LambdaSim customData).
        kinds = ({"api", "props", "children"} if site_rules else set()) | (
            {"api", "custom"} if slot_rules else set()
        )
        # One transform cache for the run: the sites share their ancestors' transforms.
        cache = UsdGeom.XformCache(Usd.TimeCode.Default())
        mpu = usd_io.get_meters_per_unit(stage)
        for prim, maybe_site, maybe_slot in usd_io.find_marked_prims(stage, kinds, scan=scan):
            facts, markers = None, ()
            if maybe_site and site_rules:
                facts = usd_io.read_prim_facts(prim)
                markers = usd_io.compute_site_markers(prim, facts)
            has_slots = maybe_slot and bool(slot_rules)
            if markers or has_slots:
                found = _check_candidate(
                    prim, markers, has_slots, site_rules, slot_rules, resolved, cache, facts, mpu
                )
                issues.extend(found)
    return Report(stage, sort_issues(issues), tuple(r.code for r in selected), resolved)
