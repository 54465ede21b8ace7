"""Kit's Asset Validator (``omni.asset_validator.core``): every usdgrip rule as a rule checker.

Kit's extension ``omni.asset_validator.core`` re-exports the open framework's
``BaseRuleChecker`` and ``Suggestion`` and adds ``ValidationRulesRegistry``
with ``registerRule(rule, category)`` / ``deregisterRule(rule)`` (its
"Writing Your Own Rules" docs). The checkers made here derive from the
``BaseRuleChecker`` of the module they are given, so this file imports
nothing from Kit and is tested with a stand-in module.

Each checker (``UsdGripGR003Checker`` ...) runs ONE usdgrip rule through
:func:`usdgrip.rules.validate` on the stage in ``CheckStage`` (the same code as
``usdgrip validate``, sites under an undefined ``over`` included) and reports
each issue at its prim with the matching ``_Add*`` call; a usdgrip fix becomes
a ``Suggestion`` the Asset Validator window's Fix button applies on the
stage's edit target. They are registered in the category :data:`CATEGORY`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from pxr import Usd

from usdgrip.rules import RULES, Fix, Issue, Rule

CATEGORY = "usdgrip"
"""The Asset Validator category holding the usdgrip rules."""

#: usdgrip severity -> BaseRuleChecker method. ``_AddInfo`` is recent; older
#: Asset Validators report info issues as warnings.
_ADD_METHODS = {
    "failure": ("_AddFailedCheck",),
    "error": ("_AddError",),
    "warning": ("_AddWarning",),
    "info": ("_AddInfo", "_AddWarning"),
}


def _location(stage: Usd.Stage, issue: Issue) -> Any:
    """The prim an issue names (the stage for stage-level findings or a vanished prim)."""
    prim = stage.GetPrimAtPath(issue.prim) if issue.prim != "/" else None
    return prim if prim else stage


def _make_suggestion(core: ModuleType, fix: Fix) -> Any:
    def apply_fix(stage: Usd.Stage, at: Any) -> None:
        del at  # usdgrip fixes name their prims by path
        Fix(fix.description, stage, fix.author).apply(stage.GetEditTarget())

    return core.Suggestion(apply_fix, fix.description)


def make_rule_checkers(core: ModuleType) -> dict[str, type]:
    """One ``core.BaseRuleChecker`` subclass per usdgrip rule, keyed by code.

    Args:
        core: ``omni.asset_validator.core`` (or a module with the same
            ``BaseRuleChecker`` and ``Suggestion``).
    """

    def check_stage(self: Any, usdStage: Usd.Stage) -> None:
        from usdgrip.rules import validate

        for issue in validate(usdStage, rules=[self.RULE]).issues:
            for name in _ADD_METHODS[issue.severity]:
                add = getattr(self, name, None)
                if add is not None:
                    break
            kwargs = {"at": _location(usdStage, issue)}
            if issue.fixes and issue.severity != "info":
                kwargs["suggestion"] = _make_suggestion(core, issue.fixes[0])
            add(f"{issue.code} {issue.rule}: {issue.message}", **kwargs)

    def make(rule: Rule) -> type:
        return type(
            "UsdGrip" + rule.code.replace(".", "") + "Checker",
            (core.BaseRuleChecker,),
            {
                "RULE": rule,
                "CheckStage": check_stage,
                "__doc__": f"{rule.code} {rule.name} ({rule.severity}): {rule.summary}",
                "__module__": __name__,
            },
        )

    return {code: make(rule) for code, rule in sorted(RULES.items())}


def register_rules(core: ModuleType) -> list[type]:
    """Register every usdgrip rule with ``core.ValidationRulesRegistry`` under :data:`CATEGORY`.

    Returns:
        The registered checker classes (pass them to :func:`deregister_rules`).
    """
    checkers = list(make_rule_checkers(core).values())
    for checker in checkers:
        core.ValidationRulesRegistry.registerRule(checker, CATEGORY)
    return checkers


def deregister_rules(core: ModuleType, checkers: list[type]) -> None:
    """Remove ``checkers`` (from :func:`register_rules`) from the registry."""
    for checker in checkers:
        core.ValidationRulesRegistry.deregisterRule(checker)
