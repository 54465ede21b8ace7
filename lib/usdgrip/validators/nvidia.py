"""usd-validation-nvidia plugin: every usdgrip rule as a Requirement, checked by usdgrip.

Loaded through the entry-point group ``usd_validation_nvidia``
(``usdgrip = "usdgrip.validators.nvidia:plugin"``) when ``usd_validation_nvidia``
is imported. :class:`UsdGripPlugin` registers, for every rule in
:data:`usdgrip.rules.RULES`:

- a ``Requirement`` whose code is the rule's code (``GR.003``), with version,
  display name, message (the rule summary), doc path, compatibility, validator
  kind, tags and the rule's tolerances as ``Parameters``;
- one ``BaseRuleChecker`` subclass bound to that requirement only;

and a capability ``usdgrip.grippers`` holding all of them, plus ``usdgrip.graspable``
holding the graspable-prop rules (GSP.001 — SimReady's *Physics Graspable* code,
registered at a newer version than SimReady's 0.1.0 so the registry resolves the code
to usdgrip's rule — and GP.001–GP.004). The rules that check a SimReady requirement under
another code (GR.013, GR.014, GP.004) are also registered under SimReady's code
(``GR.ISA.001``, ``MUJOCO.GR.001``, ``PMT.001``), bound to the same rule
(:data:`SIMREADY_CODES`). Nothing is added to
the default rule categories: the rules run only when asked for, e.g.
``nvidia_usd_validate --requirement GR.003 asset.usda`` or
``--capability usdgrip.grippers``.

Each checker runs the SAME rule code as ``usdgrip validate``
(:func:`usdgrip.rules.check_prim`, :func:`usdgrip.rules.check_stage_level`)
and translates its issues: severities map one to one, the issue sits at the
prim the rule names, and every usdgrip fix becomes a ``Suggestion`` that
NVIDIA's ``IssueFixer`` (``--fix``) applies on its own edit target.

Traversal differences are bridged so both report the same findings: NVIDIA
visits only defined prims, usdgrip also checks sites under an undefined
``over`` (a missing payload). One candidate scan per stage (shared by all
checkers, dropped on ``ResetCaches``) lists the prims any rule applies to;
``CheckPrim`` skips every other prim with one set lookup, and ``CheckStage``
checks the candidates NVIDIA's traversal never visits. Variants: NVIDIA's engine
itself re-checks the prims under every variant combination (switching selections and
calling ``ResetCaches``, which drops the scan), so each checker sees one selection at a
time, as ``usdgrip validate`` does with its default ``variants="all"``.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

from pxr import Sdf, Usd


class UsdGripPlugin:
    """The ``usd_validation_nvidia`` plugin object (``on_startup`` / ``on_shutdown``).

    Defined before this module imports ``usd_validation_nvidia``, because that import
    loads every plugin at once: when this module is imported first (``import
    usdgrip.validators.nvidia``), usd_validation_nvidia finds :data:`plugin` in this
    half-built module and calls :meth:`on_startup` before the checkers below exist, so
    the registration waits for the module's last line. Imported by usd_validation_nvidia
    (through the entry point), the module is complete and it registers at once.
    """

    def __init__(self) -> None:
        self._registered: list[type[_UsdGripChecker]] = []
        self._capabilities: list[Capability] = []
        self._started = False
        self._module_built = False

    def on_startup(self) -> None:
        """Register every requirement with its checker, and the usdgrip capabilities."""
        self._started = True
        if self._module_built:
            self._register()

    def _finish_import(self) -> None:
        """Called by this module's last line: register now if startup was asked for meanwhile."""
        self._module_built = True
        if self._started:
            self._register()

    def _register(self) -> None:
        for code in sorted(CHECKERS):
            checker = CHECKERS[code]
            register_requirements(REQUIREMENTS[code])(checker)
            self._registered.append(checker)
        for code in sorted(SIMREADY_CHECKERS):
            checker = SIMREADY_CHECKERS[code]
            register_requirements(SIMREADY_REQUIREMENTS[code])(checker)
            self._registered.append(checker)
        for capability in (compute_capability(), compute_graspable_capability()):
            if CapabilityRegistry().find(capability.id, capability.version) is None:
                register_capability(capability)
                self._capabilities.append(capability)

    def on_shutdown(self) -> None:
        """Unregister what :meth:`on_startup` registered."""
        self._started = False
        for checker in reversed(self._registered):
            unregister_requirements(checker)
        self._registered.clear()
        for capability in reversed(self._capabilities):
            unregister_capability(capability)
        self._capabilities.clear()


plugin = UsdGripPlugin()
"""The entry point object (``usdgrip.validators.nvidia:plugin``); it exists before the import
of ``usd_validation_nvidia`` below, which may load it while this module is half-built."""

from usd_validation_nvidia import (  # noqa: E402 (after `plugin`: see UsdGripPlugin)
    BaseRuleChecker,
    CapabilityRegistry,
    IssueSeverity,
    Suggestion,
    register_capability,
    register_requirements,
    unregister_capability,
    unregister_requirements,
)
from usd_validation_nvidia import Issue as NvidiaIssue  # noqa: E402
from usd_validation_nvidia.capabilities import (  # noqa: E402
    Capability,
    Parameter,
    ParameterType,
    Requirement,
)

from usdgrip.rules import (  # noqa: E402
    DEFAULT_PARAMS,
    PARAM_DOCS,
    RULES,
    Fix,
    Issue,
    Rule,
    check_prim,
    check_stage_level,
    iter_candidates,
    resolve_params,
)

__all__ = [
    "CAPABILITY_ID",
    "CAPABILITY_VERSION",
    "CHECKERS",
    "GRASPABLE_CAPABILITY_ID",
    "GRASPABLE_CODES",
    "REQUIREMENTS",
    "SIMREADY_CHECKERS",
    "SIMREADY_CODES",
    "SIMREADY_REQUIREMENTS",
    "UsdGripPlugin",
    "compute_capability",
    "compute_graspable_capability",
    "compute_requirement",
    "plugin",
]

CAPABILITY_ID = "usdgrip.grippers"
CAPABILITY_VERSION = "1.0.0"
GRASPABLE_CAPABILITY_ID = "usdgrip.graspable"

_SEVERITY = {
    "failure": IssueSeverity.FAILURE,
    "error": IssueSeverity.ERROR,
    "warning": IssueSeverity.WARNING,
    "info": IssueSeverity.INFO,
}


def _param_codes() -> dict[str, tuple[str, ...]]:
    """Parameter name -> codes of the rules it tunes (from ``PARAM_DOCS``: ``"GR.006: ..."``)."""
    codes: dict[str, tuple[str, ...]] = {}
    for name in DEFAULT_PARAMS:
        head = PARAM_DOCS.get(name, "").split(":", 1)[0].strip()
        codes[name] = (head,) if head in RULES else tuple(RULES)
    return codes


def compute_requirement(rule: Rule, code: str | None = None) -> Requirement:
    """The NVIDIA ``Requirement`` describing ``rule`` (code exactly as usdgrip's).

    ``code``: register it under another code instead (the SimReady requirement the rule
    checks, :data:`SIMREADY_CODES`).
    """
    parameters = tuple(
        Parameter(display_name=name, type=ParameterType.FLOAT, assigned_value=DEFAULT_PARAMS[name])
        for name, codes in _param_codes().items()
        if rule.code in codes
    )
    return Requirement(
        code=code or rule.code,
        version=rule.version,
        display_name=rule.name,
        message=rule.summary,
        path=f"rules/{rule.code}.md",
        compatibility=rule.compatibility,
        validator=rule.validator,
        tags=tuple(rule.tags),
        parameters=parameters,
    )


REQUIREMENTS: dict[str, Requirement] = {code: compute_requirement(r) for code, r in RULES.items()}
"""One requirement per rule, keyed by code."""

SIMREADY_CODES: dict[str, str] = {
    r.simready: code for code, r in RULES.items() if r.simready and r.simready != code
}
"""SimReady requirement code -> the usdgrip rule checking it, where the codes differ
(``GR.ISA.001`` -> GR.013, ``MUJOCO.GR.001`` -> GR.014, ``PMT.001`` -> GP.004). Each is also
registered under SimReady's code, at the rule's version (1.0.0, newer than SimReady's 0.1.0)
so the registry resolves the code to usdgrip's rule, as GR.001-GR.004 and GSP.001 are."""

SIMREADY_REQUIREMENTS: dict[str, Requirement] = {
    simready: compute_requirement(RULES[code], simready)
    for simready, code in SIMREADY_CODES.items()
}
"""The requirements of :data:`SIMREADY_CODES`, keyed by SimReady's code (in no capability:
``usdgrip.grippers`` already holds the rule under its own code)."""


def compute_capability() -> Capability:
    """The ``usdgrip.grippers`` capability: every usdgrip requirement, in code order."""
    return Capability(
        id=CAPABILITY_ID,
        version=CAPABILITY_VERSION,
        path="adapters.md",
        requirements=[REQUIREMENTS[code] for code in sorted(REQUIREMENTS)],
    )


GRASPABLE_CODES: tuple[str, ...] = tuple(
    sorted(code for code, r in RULES.items() if "graspable" in r.tags)
)
"""Codes of the grasp-vector-line rules (``graspable`` tag): GP.001-GP.003, GSP.001."""


def compute_graspable_capability() -> Capability:
    """The ``usdgrip.graspable`` capability: GSP.001 and the GP rules (Physics Graspable)."""
    return Capability(
        id=GRASPABLE_CAPABILITY_ID,
        version=CAPABILITY_VERSION,
        path="graspable-props.md",
        requirements=[REQUIREMENTS[code] for code in GRASPABLE_CODES],
    )


# --- one candidate scan per stage ----------------------------------------------


@dataclass(frozen=True)
class _Scan:
    """Prims any site/slot rule applies to, from one traversal of a stage."""

    sites: frozenset[Sdf.Path]
    slotted: frozenset[Sdf.Path]
    undefined: tuple[Usd.Prim, ...]
    """Candidates that NVIDIA's default traversal (defined prims only) never visits."""


_SCANS: weakref.WeakKeyDictionary[Usd.Stage, _Scan] = weakref.WeakKeyDictionary()
_SCANS_LOCK = threading.Lock()


def _get_scan(stage: Usd.Stage) -> _Scan:
    with _SCANS_LOCK:
        scan = _SCANS.get(stage)
        if scan is None:
            sites: set[Sdf.Path] = set()
            slotted: set[Sdf.Path] = set()
            undefined: list[Usd.Prim] = []
            for prim, markers, has_slots in iter_candidates(stage):
                path = prim.GetPath()
                if markers:
                    sites.add(path)
                if has_slots:
                    slotted.add(path)
                if not prim.IsDefined():
                    undefined.append(prim)
            scan = _Scan(frozenset(sites), frozenset(slotted), tuple(undefined))
            _SCANS[stage] = scan
        return scan


def _drop_scan(stage: Usd.Stage | None) -> None:
    if stage is not None:
        with _SCANS_LOCK:
            _SCANS.pop(stage, None)


# --- translating issues ----------------------------------------------------------


def _make_suggestion(fix: Fix) -> Suggestion:
    """A Suggestion re-binding the usdgrip fix to the fixer's stage and edit target."""

    def apply_fix(stage: Usd.Stage, at: Any) -> None:
        del at  # usdgrip fixes name their prims by path
        Fix(fix.description, stage, fix.author).apply(stage.GetEditTarget())

    apply_fix.__name__ = f"usdgrip_fix_{fix.description[:40]}"
    return Suggestion(callable=apply_fix, message=fix.description)


def _location(stage: Usd.Stage, issue: Issue, fallback: Usd.Prim | None) -> Any:
    if issue.prim == "/":
        return stage
    prim = stage.GetPrimAtPath(issue.prim)
    if prim:
        return prim
    return fallback if fallback is not None else stage


class _UsdGripChecker(BaseRuleChecker):
    """Base of the generated checkers: one usdgrip rule, translated."""

    RULE: Rule
    REQUIREMENT: Requirement

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Resolve the NVIDIA parameters once.

        Raises:
            ValueError: a parameter value that is not a finite number (NVIDIA reports
                "Failed to initialize rule ..." once and skips the rule).
        """
        super().__init__(*args, **kwargs)
        self._stage: Usd.Stage | None = None
        self._scan: _Scan | None = None
        try:
            self.usdgrip_params = resolve_params(self._overrides())
        except ValueError as error:
            raise ValueError(f"{self.RULE.code} ({self.RULE.name}): {error}") from None

    def _overrides(self) -> dict[str, Any]:
        """The tolerances as set through NVIDIA parameters (``--parameter NAME=VALUE``)."""
        mapping = self.parameters
        return {
            name: mapping[name].assigned_value
            for name in DEFAULT_PARAMS
            if name in mapping and mapping[name].assigned_value is not None
        }

    def _add(self, issues: list[Issue], stage: Usd.Stage, fallback: Usd.Prim | None) -> None:
        for issue in issues:
            self._AddIssue(
                NvidiaIssue(
                    message=issue.message,
                    severity=_SEVERITY[issue.severity],
                    rule=type(self),
                    at=_location(stage, issue, fallback),
                    suggestions=tuple(_make_suggestion(f) for f in issue.fixes),
                    requirement=self.REQUIREMENT,
                )
            )

    def ResetCaches(self) -> None:
        """Drop the candidate scan (NVIDIA switched a variant selection)."""
        _drop_scan(self._stage)
        self._scan = None


class _PrimRuleChecker(_UsdGripChecker):
    """A site or slot rule: ``CheckPrim`` on NVIDIA's traversal, plus undefined prims."""

    def _paths(self, scan: _Scan) -> frozenset[Sdf.Path]:
        return scan.sites if self.RULE.scope == "site" else scan.slotted

    def CheckStage(self, usdStage: Usd.Stage) -> None:
        """Check the candidates under undefined prims, which ``CheckPrim`` never sees."""
        self._stage = usdStage
        self._scan = _get_scan(usdStage)
        paths = self._paths(self._scan)
        params = self.usdgrip_params
        for prim in self._scan.undefined:
            if prim.GetPath() in paths:
                self._add(check_prim(prim, [self.RULE], params), usdStage, prim)

    def CheckPrim(self, prim: Usd.Prim) -> None:
        """Run the rule on ``prim`` when it is a site / slotted object."""
        scan = self._scan
        if scan is None:
            self._stage = prim.GetStage()
            scan = self._scan = _get_scan(self._stage)
        if prim.GetPath() not in self._paths(scan):
            return
        self._add(check_prim(prim, [self.RULE], self.usdgrip_params), prim.GetStage(), prim)


class _StageRuleChecker(_UsdGripChecker):
    """A stage rule (GA.001, GA.002): ``CheckStage`` only."""

    def CheckStage(self, usdStage: Usd.Stage) -> None:
        """Run the stage-level rule on NVIDIA's stage."""
        self._add(check_stage_level(usdStage, [self.RULE], self.usdgrip_params), usdStage, None)


def _make_checker(rule: Rule, requirement: Requirement | None = None) -> type[_UsdGripChecker]:
    requirement = requirement or REQUIREMENTS[rule.code]
    base = _StageRuleChecker if rule.scope == "stage" else _PrimRuleChecker
    name = "UsdGrip" + requirement.code.replace(".", "") + "Checker"
    doc = f"{rule.code} {rule.name} ({rule.severity}): {rule.summary}\n\nSee {rule.doc_path.name}."
    checker = type(
        name,
        (base,),
        {
            "RULE": rule,
            "REQUIREMENT": requirement,
            "__doc__": doc,
            "__module__": __name__,
        },
    )
    return checker


CHECKERS: dict[str, type[_UsdGripChecker]] = {code: _make_checker(r) for code, r in RULES.items()}
"""One checker class per rule, keyed by code (also module attributes, so they pickle)."""
SIMREADY_CHECKERS: dict[str, type[_UsdGripChecker]] = {
    simready: _make_checker(RULES[code], SIMREADY_REQUIREMENTS[simready])
    for simready, code in SIMREADY_CODES.items()
}
"""The checker of each :data:`SIMREADY_REQUIREMENTS` entry (its rule, SimReady's code)."""
globals().update({cls.__name__: cls for cls in [*CHECKERS.values(), *SIMREADY_CHECKERS.values()]})

plugin._finish_import()  # the last line: see UsdGripPlugin
