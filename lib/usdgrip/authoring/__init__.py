"""Authoring sites, slots and grasp lines, every value checked by the rules first.

Public API (``docs/authoring.md``)::

    from usdgrip.authoring import (
        SlotEdit, SiteEdit, LineEdit, check_edit, author_edit, AuthoringVerdict,
        apply_gripper_slot, remove_gripper_slot, define_gripper_site, set_gripper_site,
        define_grasp_line, remove_grasp_line, remove_gripper_site, ProposalStage,
        convert_edit_from_world,
    )

    verdict = check_edit(stage, SlotEdit("/Tote", "left_edge", center=(-0.195, 0, 0.12)))
    verdict.ok, [verdict.describe(item) for item in verdict.items]
    author_edit(stage, edit)  # AuthoringError (nothing authored) when the rules refuse it

The room sits above ``usd`` and ``rules``: the rules judge what an edit would author
on a private stage (:class:`ProposalStage`), then :mod:`usdgrip.usd.authoring`'s
``Sdf`` writers author it in one change block.
"""

from __future__ import annotations

from usdgrip.authoring.checks import (
    LINE_RULES,
    SITE_RULES,
    SLOT_RULES,
    ProposalStage,
    check_edit,
)
from usdgrip.authoring.edit_records import (
    REFUSING_WARNINGS,
    RULE_FIELDS,
    AuthoringError,
    AuthoringVerdict,
    LineEdit,
    SiteEdit,
    SlotEdit,
    VerdictItem,
)
from usdgrip.authoring.edits import (
    apply_gripper_slot,
    author_edit,
    define_grasp_line,
    define_gripper_site,
    remove_grasp_line,
    remove_gripper_site,
    remove_gripper_slot,
    set_gripper_site,
)

__all__ = [
    "LINE_RULES",
    "REFUSING_WARNINGS",
    "RULE_FIELDS",
    "SITE_RULES",
    "SLOT_RULES",
    "AuthoringError",
    "AuthoringVerdict",
    "LineEdit",
    "ProposalStage",
    "SiteEdit",
    "SlotEdit",
    "VerdictItem",
    "apply_gripper_slot",
    "author_edit",
    "check_edit",
    "define_grasp_line",
    "define_gripper_site",
    "remove_grasp_line",
    "remove_gripper_site",
    "remove_gripper_slot",
    "set_gripper_site",
]
