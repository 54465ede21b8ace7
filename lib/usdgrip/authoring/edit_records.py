"""What an author asks for and what the rules say about it: edits, verdicts, the error.

An edit (:class:`SlotEdit`, :class:`SiteEdit`, :class:`LineEdit`) names one thing to
add, change or remove; a field left ``None`` is left as it is. A check of an edit
(:func:`usdgrip.authoring.check_edit`) gives an :class:`AuthoringVerdict`: the issues
(the rules' own :class:`~usdgrip.rules.records.Issue` records) the thing would have
once authored, each with the edit fields it is about and whether it refuses the edit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from usdgrip.rules.records import BLOCKING, Issue

#: Warnings that refuse an edit all the same: a value the author gives that its rule
#: flags (a payload or grip force that is not > 0; a grasp line that is not a two-point
#: segment, or one a parallel jaw cannot hold), never a state reached step by step.
REFUSING_WARNINGS = frozenset({"GR.010", "GR.012", "GP.002", "GP.003"})

#: The words that name each edit field in the rules' messages (schema and record names).
FIELD_WORDS: dict[str, tuple[str, ...]] = {
    "center": ("center",),
    "forward": ("forward",),
    "span_axis": ("spanAxis", "span_axis"),
    "up_range": ("upRange", "up_range", "up range"),
    "slot_input_angle": ("slotInputAngle", "slot_input_angle"),
    "lr": ("lr ", "LR"),
    "group": ("group",),
    "grip_line": ("grip line", "gripper_grip_line"),
    "pad_width": ("pad width",),
    "forward_length": ("forward length",),
    "p0": ("p0", "points[0]"),
    "p1": ("p1", "points[1]"),
}

#: The edit fields each rule is about (narrowed to those its message names).
RULE_FIELDS: dict[str, tuple[str, ...]] = {
    "GS.001": ("center", "forward", "span_axis"),
    "GS.002": ("up_range",),
    "GS.003": ("slot_input_angle",),
    "GS.004": ("lr",),
    "GS.005": ("name",),
    "GS.006": (),
    "GS.007": (),
    "GS.008": ("group", "lr"),
    "GS.009": ("center", "span_axis", "up_range"),
    "GR.001": ("prim",),
    "GR.002": ("forward",),
    "GR.003": ("grip_line", "pad_width"),
    "GR.004": ("max_opening",),
    "GR.005": ("forward", "grip_line", "pad_width", "forward_length"),
    "GR.006": ("forward", "grip_line"),
    "GR.007": ("forward", "grip_line"),
    "GR.008": (),
    "GR.009": ("pad_width", "max_opening"),
    "GR.010": ("max_payload",),
    "GR.011": (),
    "GR.012": ("max_grip_force",),
    "GSP.001": ("name", "prim"),
    "GP.001": ("p0", "p1"),
    "GP.002": ("p0", "p1"),
    "GP.003": ("p0", "p1"),
}


#: Drawn length of a site's forward axis curve (metres) when a dialog or the CLI authors it.
FORWARD_LENGTH_M = 0.05

#: :class:`SlotEdit` field -> GripperSlotAPI property.
SLOT_PROPERTY_OF = {
    "center": "center",
    "forward": "forward",
    "span_axis": "spanAxis",
    "up_range": "upRange",
    "slot_input_angle": "slotInputAngle",
    "lr": "lr",
    "group": "groupName",
}


@dataclass(frozen=True)
class SlotEdit:
    """Add, change or remove the ``GripperSlotAPI:<name>`` instance of an object prim.

    Vectors and the centre are in the object prim's frame (stage units; directions any
    length), ``up_range`` in metres, ``slot_input_angle`` in degrees, ``lr`` 0/1 or
    ``"left"``/``"right"``, ``group`` text (``""``: independent). ``None``: leave as is
    (a new instance then reads the schema's fallback).
    """

    prim: str
    name: str
    center: Any = None
    forward: Any = None
    span_axis: Any = None
    up_range: Any = None
    slot_input_angle: Any = None
    lr: Any = None
    group: Any = None
    remove: bool = False

    @property
    def label(self) -> str:
        """``</Tote> slot 'left_edge'``."""
        return f"<{self.prim}> slot {self.name!r}"

    def given(self) -> dict[str, Any]:
        """The fields that are set (edit field -> value)."""
        return {f: getattr(self, f) for f in SLOT_PROPERTY_OF if getattr(self, f) is not None}


@dataclass(frozen=True)
class SiteEdit:
    """Apply ``GripperSiteAPI`` to a prim (``define``: as a new Xform) and author its values.

    ``max_opening`` metres, ``max_payload`` kg, ``max_grip_force`` N; ``forward`` and
    ``grip_line`` are directions in the site's frame (any length) that (re)define the
    ``gripper_forward_axis`` curve (from the origin, ``forward_length`` long) and the
    ``gripper_grip_line`` curve (centred on the origin, ``pad_width`` long); lengths and
    ``translate`` (the site's position in its parent) in stage units. ``remove`` takes
    the site away: ``GripperSiteAPI``, the ``gripper:*`` attributes and the two prefixed
    curves (the prim itself stays).
    """

    prim: str
    define: bool = False
    max_opening: Any = None
    max_payload: Any = None
    max_grip_force: Any = None
    forward: Any = None
    grip_line: Any = None
    forward_length: Any = 0.05
    pad_width: Any = 0.02
    translate: Any = None
    remove: bool = False

    @property
    def label(self) -> str:
        """``</Gripper/tcp> site``."""
        return f"<{self.prim}> site"


@dataclass(frozen=True)
class LineEdit:
    """Add, change or remove the SimReady grasp vector line ``<prim>/<name>``.

    ``p0`` and ``p1`` are where the two pads start (the closing segment), in the line's
    frame: its parent ``prim``'s, stage units.
    """

    prim: str
    name: str
    p0: Any = None
    p1: Any = None
    remove: bool = False

    @property
    def path(self) -> str:
        """The line's prim path."""
        return f"{self.prim.rstrip('/')}/{self.name}"

    @property
    def label(self) -> str:
        """``</Block/grasp_identifier_03> grasp line``."""
        return f"<{self.path}> grasp line"


Edit = SlotEdit | SiteEdit | LineEdit


class VerdictItem(NamedTuple):
    """One issue a proposed edit would have."""

    issue: Issue
    """The rule's own record (code, name, severity, prim, message); no fixes."""
    fields: tuple[str, ...]
    """The edit fields it is about, the given ones first (``center``, ``max_opening``...)."""
    refuses: bool
    """Whether it stops the edit (a failure or an error, or :data:`REFUSING_WARNINGS`)."""


@dataclass(frozen=True)
class AuthoringVerdict:
    """What the rules say about an edit, before anything is authored."""

    edit: Edit
    items: tuple[VerdictItem, ...] = ()
    notes: tuple[str, ...] = field(default=())
    """What was done besides the values given (a fallback taken, a layer created...)."""

    @property
    def issues(self) -> tuple[Issue, ...]:
        """Every issue, refusing or not."""
        return tuple(item.issue for item in self.items)

    @property
    def refused(self) -> tuple[VerdictItem, ...]:
        """The items that stop the edit."""
        return tuple(item for item in self.items if item.refuses)

    @property
    def ok(self) -> bool:
        """True when nothing refuses the edit (it may still have warnings)."""
        return not self.refused

    def describe(self, item: VerdictItem, options: dict[str, str] | None = None) -> str:
        """One line: ``center: GS.009 slot-misses-object (failure): MESSAGE``.

        ``options`` renames fields (the CLI's ``--center``).
        """
        names = [(options or {}).get(f, f) for f in item.fields]
        where = f"{'/'.join(names)}: " if names else ""
        issue = item.issue
        return f"{where}{issue.code} {issue.rule} ({issue.severity}): {issue.message}"


def make_item(
    issue: Issue, edit: Edit, *, removal: bool = False, unusable: bool = False
) -> VerdictItem:
    """The :class:`VerdictItem` of ``issue`` for ``edit``.

    A removal is never refused; an ``unusable`` value (one that cannot be authored as
    given, whatever its rule's severity) always is.
    """
    issue = Issue(issue.code, issue.rule, issue.severity, issue.prim, issue.message)
    given = set(_given_fields(edit))
    related = RULE_FIELDS.get(issue.code, ())
    if len(related) > 1:  # the fields the message names, when it names some
        named = tuple(f for f in related if any(w in issue.message for w in FIELD_WORDS.get(f, ())))
        related = named or related
    fields = tuple(f for f in related if f in given) or related
    refuses = unusable or (
        not removal and (issue.severity in BLOCKING or issue.code in REFUSING_WARNINGS)
    )
    return VerdictItem(issue, fields, refuses)


def _given_fields(edit: Edit) -> list[str]:
    if isinstance(edit, SlotEdit):
        return ["name", *edit.given()]
    if isinstance(edit, LineEdit):
        return ["name", *(f for f in ("p0", "p1") if getattr(edit, f) is not None)]
    names = ("max_opening", "max_payload", "max_grip_force", "forward", "grip_line")
    given = [f for f in names if getattr(edit, f) is not None]
    if edit.grip_line is not None:
        given.append("pad_width")
    return ["prim", *given] if edit.define else given


class AuthoringError(ValueError):
    """An edit the rules refuse; nothing was authored. ``verdict`` says why."""

    def __init__(self, verdict: AuthoringVerdict, options: dict[str, str] | None = None):
        self.verdict = verdict
        lines = [verdict.describe(item, options) for item in verdict.refused]
        super().__init__(f"{verdict.edit.label}: " + "; ".join(lines) + "; nothing was authored")
