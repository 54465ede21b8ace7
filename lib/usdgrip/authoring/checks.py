"""Would this edit pass? The rules themselves run on what it would author, before it is.

:func:`check_edit` is the one checker of the Python API, ``usdgrip author`` and the
authoring dialogs. It plans the edit (:func:`usdgrip.authoring.plans.plan_edit`: the
values' own problems, with the rules' pure checks), then authors it into the session
layer of a private :class:`ProposalStage` (the user's layers, its own session layer)
and runs the rules of the thing edited there (:func:`usdgrip.rules.check_prim` for a
site or a slot, :func:`usdgrip.rules.check_stage_level` for a grasp line). The user's
stage and layers are never written.

Which issues belong to the edit:

- a **site**: every issue its site rules (GR.*) find on it once edited;
- a **slot** or a **line**: the issues of the result that are not there once the slot
  (line) is taken away again, so another slot's problem is not blamed on this one,
  while the slot's own (new or left over from before) and the group and prop issues
  it causes are;
- a **removal**: the issues the removal adds (never refusing: a removal is authored);
  a site's removal has none (it is authored only into the layer holding the whole site).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pxr import Sdf, Usd

from usdgrip.authoring.edit_records import (
    AuthoringVerdict,
    Edit,
    LineEdit,
    SiteEdit,
    SlotEdit,
    VerdictItem,
    make_item,
)
from usdgrip.authoring.plans import EditPlan, Writer, map_identity, plan_edit
from usdgrip.rules.engine import check_prim, check_stage_level, resolve_params
from usdgrip.rules.records import RULES, Issue
from usdgrip.usd.grasp_lines import scan_grasp_lines

#: The rules each kind of edit is judged by.
SLOT_RULES = tuple(code for code in sorted(RULES) if code.startswith("GS."))
SITE_RULES = tuple(code for code in sorted(RULES) if code.startswith("GR."))
LINE_RULES = tuple(code for code in sorted(RULES) if code.startswith(("GSP.", "GP.")))


class ProposalStage:
    """A private stage on a user's stage's layers, with a session layer of its own.

    Edits are authored into that session layer (stronger than every layer of the
    user's), so the rules see what the stage would be; the user's layers are shared,
    never written, and their unsaved changes are seen. Keep one per dialog: each
    check starts from :meth:`reset`.
    """

    def __init__(self, stage: Usd.Stage, mask: Iterable[str | Sdf.Path] | None = None):
        """Open the private stage (``mask``: populate only those prims and their subtrees)."""
        self.source = stage
        self.session = Sdf.Layer.CreateAnonymous("usdgrip-proposal.usda")
        population = stage.GetPopulationMask()
        if mask is not None:
            population = population.GetIntersection(Usd.StagePopulationMask(list(mask)))
        self.stage = Usd.Stage.OpenMasked(
            stage.GetRootLayer(),
            self.session,
            stage.GetPathResolverContext(),
            population,
            Usd.Stage.LoadNone,
        )
        self.stage.SetLoadRules(stage.GetLoadRules())
        self.reset()

    def reset(self) -> None:
        """Make the private session layer a copy of the user's (empty when it is)."""
        user = self.source.GetSessionLayer()
        with Sdf.ChangeBlock():
            self.session.Clear()
            if user is not None and not user.empty:
                self.session.TransferContent(user)

    def author(self, write: Writer) -> None:
        """:meth:`reset`, then ``write`` into the private session layer."""
        self.reset()
        with Sdf.ChangeBlock():
            write(self.session, map_identity)


def _difference(after: Iterable[Issue], before: Iterable[Issue]) -> list[Issue]:
    """``after`` without the issues ``before`` also has (counted), in ``after``'s order."""
    left = Counter(_key(i) for i in before)
    found = []
    for issue in after:
        key = _key(issue)
        if left[key]:
            left[key] -= 1
        else:
            found.append(issue)
    return found


def _key(issue: Issue) -> tuple[str, str, str, str]:
    return (issue.code, issue.severity, issue.prim, issue.message)


def _slot_issues(
    plan: EditPlan, scratch: ProposalStage, params: Mapping[str, float]
) -> tuple[list[Issue], list[Issue]]:
    """``(after, without)`` of a slot edit: the object's GS issues with and without it."""
    path = plan.path
    if plan.write is None:
        return [], []
    scratch.author(plan.write)
    after = check_prim(scratch.stage.GetPrimAtPath(path), SLOT_RULES, params)
    if plan.edit.remove:  # without = as it is now
        return after, check_prim(scratch.source.GetPrimAtPath(path), SLOT_RULES, params)
    if plan.take_away is not None:
        scratch.author(plan.take_away)
        without = check_prim(scratch.stage.GetPrimAtPath(path), SLOT_RULES, params)
    else:
        without = check_prim(scratch.source.GetPrimAtPath(path), SLOT_RULES, params)
    return after, without


def _line_issues(
    plan: EditPlan, scratch: ProposalStage, params: Mapping[str, float]
) -> tuple[list[Issue], list[Issue], list[VerdictItem]]:
    if plan.write is None:
        return [], [], []
    scratch.author(plan.write)
    after = check_stage_level(scratch.stage, LINE_RULES, params)
    unread: list[VerdictItem] = []
    if not plan.edit.remove:
        found = {line.path for line in scan_grasp_lines(scratch.stage).lines}
        if str(plan.path) not in found:
            default = scratch.stage.GetDefaultPrim()
            message = (
                f"<{plan.path}> would not be read as a grasp vector line (lines are "
                f"BasisCurves named grasp_identifier* under the default prim "
                f"<{default.GetPath() if default else 'none'}>, active and loaded)"
            )
            issue = RULES["GSP.001"].make_issue(str(plan.path), message)
            unread.append(make_item(issue, plan.edit))
    if plan.edit.remove or plan.take_away is None:
        without = check_stage_level(scratch.source, LINE_RULES, params)
    else:
        scratch.author(plan.take_away)
        without = check_stage_level(scratch.stage, LINE_RULES, params)
    return after, without, unread


def judge_plan(
    stage: Usd.Stage,
    plan: EditPlan,
    params: Mapping[str, Any] | None = None,
    scratch: ProposalStage | None = None,
) -> AuthoringVerdict:
    """The verdict on a planned edit (see the module)."""
    edit = plan.edit
    if plan.refused:
        return AuthoringVerdict(edit, tuple(plan.refused), tuple(plan.notes))
    resolved = resolve_params(params)
    if scratch is None:
        mask = None if isinstance(edit, LineEdit) else [plan.path]
        scratch = ProposalStage(stage, mask)
    removal = bool(getattr(edit, "remove", False))
    items: list[VerdictItem] = []
    if isinstance(edit, SiteEdit) and edit.remove:
        issues = []  # authored only where the whole site is (EditPlan.check_layer): gone
    elif isinstance(edit, SiteEdit):
        scratch.author(plan.write)  # type: ignore[arg-type]
        issues = check_prim(scratch.stage.GetPrimAtPath(plan.path), SITE_RULES, resolved)
    elif isinstance(edit, SlotEdit):
        issues = _difference(*_slot_issues(plan, scratch, resolved))
    else:
        after, without, items = _line_issues(plan, scratch, resolved)
        issues = _difference(after, without)
    scratch.reset()
    items += [make_item(issue, edit, removal=removal) for issue in issues]
    return AuthoringVerdict(edit, tuple(items), tuple(plan.notes))


def check_edit(
    stage: Usd.Stage,
    edit: Edit,
    *,
    params: Mapping[str, Any] | None = None,
    scratch: ProposalStage | None = None,
) -> AuthoringVerdict:
    """What the rules would say about ``edit`` on ``stage``, which is not written.

    Args:
        stage: the stage the edit is for (its current state, unsaved changes included).
        edit: a :class:`SlotEdit`, :class:`SiteEdit` or :class:`LineEdit`.
        params: rule parameters (:data:`usdgrip.rules.DEFAULT_PARAMS`).
        scratch: a :class:`ProposalStage` of ``stage`` to reuse (a dialog checking every
            change); default: one for this call.

    Returns:
        The :class:`AuthoringVerdict`; ``verdict.ok`` when nothing refuses the edit.

    Raises:
        ValueError: a path that is no prim path, an instance proxy, a removal of what
            is not there, a new line without both points (no rule judges these).
        PrimNotFoundError: no prim at the path.
    """
    plan = plan_edit(stage, edit, resolve_params(params))
    return judge_plan(stage, plan, params, scratch)
