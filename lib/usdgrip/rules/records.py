"""Rule records: :class:`Rule`, :class:`Finding`, :class:`Issue`, :class:`Fix`, :data:`RULES`.

Also the severities, the tolerance parameters and the :func:`rule` decorator that
registers a rule in :data:`RULES`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pxr import Sdf, Usd

from usdgrip.site_limits import MAX_OPENING_M
from usdgrip.slot_checks import MAX_UP_RANGE_M

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
    # GR.015: pad gap at the open limit vs gripper:maxOpening, metres.
    "articulation_opening_tolerance_m": 0.005,
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
    "articulation_opening_tolerance_m": (
        "GR.015: allowed difference of the pad gap at the open limit from gripper:maxOpening "
        "(metres)"
    ),
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
    "articulation_opening_tolerance_m": (0.0, math.inf, True),
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
