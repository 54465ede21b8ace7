"""The Asset Validator adapter against an older ``omni.asset_validator.core`` (no ``_AddInfo``)."""

from __future__ import annotations

import types
from typing import ClassVar

from conftest import EXAMPLES
from pxr import Usd

from usdgrip.rules import RULES
from usdgrip.validators import omni_asset_validator as adapter


def _old_core() -> types.ModuleType:
    """A module shaped like Asset Validator 0.x: failure, error and warning only."""
    core = types.ModuleType("old_core")

    class Suggestion:
        def __init__(self, callable, message):
            self.callable, self.message = callable, message

    class BaseRuleChecker:
        def __init__(self):
            self.issues = []

        def _AddFailedCheck(self, message, at=None, suggestion=None):
            self.issues.append(("failure", message, at, suggestion))

        def _AddError(self, message, at=None, suggestion=None):
            self.issues.append(("error", message, at, suggestion))

        def _AddWarning(self, message, at=None, suggestion=None):
            self.issues.append(("warning", message, at, suggestion))

    class ValidationRulesRegistry:
        rules: ClassVar[dict] = {}

        @staticmethod
        def registerRule(rule, category):
            ValidationRulesRegistry.rules[rule] = category

        @staticmethod
        def deregisterRule(rule):
            ValidationRulesRegistry.rules.pop(rule)

    core.Suggestion, core.BaseRuleChecker = Suggestion, BaseRuleChecker
    core.ValidationRulesRegistry = ValidationRulesRegistry
    return core


def test_one_checker_per_rule_registered_and_removed():
    core = _old_core()
    checkers = adapter.register_rules(core)
    assert sorted(c.RULE.code for c in checkers) == sorted(RULES)
    assert set(core.ValidationRulesRegistry.rules.values()) == {adapter.CATEGORY}
    adapter.deregister_rules(core, checkers)
    assert core.ValidationRulesRegistry.rules == {}


def test_info_becomes_a_warning_and_fixes_become_suggestions(tmp_path):
    core = _old_core()
    checkers = adapter.make_rule_checkers(core)
    copy = tmp_path / "asset.usda"
    copy.write_bytes((EXAMPLES / "broken" / "GR.003-gripper-grip-line.usda").read_bytes())
    stage = Usd.Stage.Open(str(copy))
    failure, info = checkers["GR.003"](), checkers["GR.011"]()
    failure.CheckStage(stage)
    info.CheckStage(stage)
    ((severity, message, at, suggestion),) = failure.issues
    assert severity == "failure" and message.startswith("GR.003 gripper-grip-line: ")
    assert isinstance(at, Usd.Prim) and suggestion is None
    ((severity, message, at, suggestion),) = info.issues
    assert severity == "warning" and message.startswith("GR.011 ")
    assert suggestion is None  # info issues carry no suggestion (the newer _AddInfo takes none)


def test_a_fixable_warning_gets_a_suggestion_applied_on_the_edit_target(open_usda):
    stage = open_usda(
        """
        def Xform "tcp" (prepend apiSchemas = ["GripperSiteAPI"])
        {
            float gripper:maxOpening = 0.08
            def BasisCurves "gripper_forward_axis"
            {
                point3f[] points = [(0, 0, 0), (0, 0, 0.05)]
            }
            def BasisCurves "gripper_grip_line"
            {
                point3f[] points = [(0, -0.01, 0), (0, 0.01, 0)]
            }
        }
        """
    )
    checker = adapter.make_rule_checkers(_old_core())["GR.007"]()
    checker.CheckStage(stage)
    assert checker.issues and all(i[0] == "warning" for i in checker.issues)
    suggestion = checker.issues[0][3]
    assert suggestion is not None and "tcp" in suggestion.message
    suggestion.callable(stage, checker.issues[0][2])
    again = adapter.make_rule_checkers(_old_core())["GR.007"]()
    again.CheckStage(stage)
    assert len(again.issues) < len(checker.issues)
