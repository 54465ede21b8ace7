"""The validation engine: one traversal per stage, every rule run on what it finds.

A rule is a frozen :class:`~usdgrip.rules.records.Rule` record plus one check
function, registered by :func:`~usdgrip.rules.records.rule` into ``RULES``
(:mod:`usdgrip.rules.records`). Rules have a *scope*: ``site`` rules receive a
:class:`~usdgrip.rules.contexts.SiteContext` (one gripper site), ``slot`` rules a
:class:`~usdgrip.rules.contexts.SlotContext` (one object prim carrying grasp slots),
``stage`` rules the stage (:mod:`usdgrip.rules.contexts`). A check function yields
``Finding`` values; the engine turns them into ``Issue`` records carrying the rule's
code, name and severity.

:func:`validate` walks the stage ONCE, through
:func:`usdgrip.usd.discovery.iter_marked_prims` (the same discovery as
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
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pxr import Sdf, Usd, UsdGeom

from usdgrip.lambdasim import CUSTOM_DATA_PATH
from usdgrip.rules.contexts import SiteContext, SlotContext, StageContext
from usdgrip.rules.records import (
    BLOCKING,
    DEFAULT_PARAMS,
    PARAM_RANGES,
    RULES,
    SEVERITIES,
    Issue,
    Rule,
)
from usdgrip.usd.discovery import (
    PrimFacts,
    compute_site_markers,
    find_marked_prims,
    iter_marked_prims,
    read_prim_facts,
)
from usdgrip.usd.discovery import (
    compute_marker_hints as compute_marker_hints,  # re-exported by usdgrip.rules
)
from usdgrip.usd.slots import (
    list_slot_instances,
)
from usdgrip.usd.stage import get_meters_per_unit, open_stage

# --- the traversal -------------------------------------------------------------

# ``compute_marker_hints`` (imported above) tells which kinds of discovery markers can
# occur on a stage.
#: ``(prim, site_markers, has_slots)`` for every prim a site or slot rule applies to: one
#: traversal, exactly the prims :func:`~usdgrip.usd.discovery.iter_site_prims` /
#: :func:`~usdgrip.usd.slots.iter_slot_prims` find.
iter_candidates = iter_marked_prims


def _prim_has_slots(prim: Usd.Prim) -> bool:
    return bool(list_slot_instances(prim)) or (
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
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(
            f"params is {type(params).__name__} {params!r:.60}; expected a mapping of parameter "
            f"name to value, e.g. {{'orthogonality_tolerance_deg': 5}}"
        )
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
    facts: PrimFacts | None = None,
    meters_per_unit: float | None = None,
    scope_cache: dict | None = None,
) -> list[Issue]:
    issues: list[Issue] = []
    if markers and site_rules:
        site = SiteContext(prim, markers, params, xform_cache, facts, meters_per_unit, scope_cache)
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
    facts = read_prim_facts(prim) if site_rules else None
    markers = compute_site_markers(prim, facts) if facts is not None else ()
    has_slots = bool(slot_rules) and _prim_has_slots(prim)
    if not markers and not has_slots:
        return []
    return _check_candidate(prim, markers, has_slots, site_rules, slot_rules, resolved, None, facts)


def check_stage_level(
    stage: Usd.Stage,
    rules: Iterable[str | Rule] | None = None,
    params: Mapping[str, Any] | None = None,
) -> list[Issue]:
    """Run the stage-scope rules (GA.001, GA.002) on ``stage``.

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
        stage_or_path: an open stage, or a path opened with :func:`usdgrip.usd.stage.open_stage`.
        rules: codes (``"GR.003"``) or names to run; ``None`` runs every rule.
        params: overrides of :data:`DEFAULT_PARAMS`.
        scan: how the prims any rule applies to are found
            (:func:`usdgrip.usd.discovery.find_marked_prims`): ``"collection"``
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
        TypeError: ``stage_or_path`` is neither a stage nor a path, or ``params`` is not
            a mapping.
    """
    if scan not in (None, "collection", "traverse"):
        raise ValueError(f"scan is {scan!r}; expected 'collection' or 'traverse'")
    selected = select_rules(rules)
    resolved = resolve_params(params)
    if isinstance(stage_or_path, Usd.Stage):
        stage, scan = stage_or_path, scan or "traverse"
    elif not isinstance(stage_or_path, str | os.PathLike):
        raise TypeError(
            f"stage_or_path is {type(stage_or_path).__name__}; expected a Usd.Stage or a path"
        )
    else:
        stage, scan = open_stage(stage_or_path), scan or "collection"
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
        scope_cache: dict = {}  # the sites' physics (one walk per asset root, see contexts)
        mpu = get_meters_per_unit(stage)
        for prim, maybe_site, maybe_slot in find_marked_prims(stage, kinds, scan=scan):
            facts, markers = None, ()
            if maybe_site and site_rules:
                facts = read_prim_facts(prim)
                markers = compute_site_markers(prim, facts)
            has_slots = maybe_slot and bool(slot_rules)
            if markers or has_slots:
                found = _check_candidate(
                    prim,
                    markers,
                    has_slots,
                    site_rules,
                    slot_rules,
                    resolved,
                    cache,
                    facts,
                    mpu,
                    scope_cache,
                )
                issues.extend(found)
    return Report(stage, sort_issues(issues), tuple(r.code for r in selected), resolved)
