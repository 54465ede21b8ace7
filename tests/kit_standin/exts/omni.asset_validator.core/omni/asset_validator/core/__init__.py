"""Stand-in of ``omni.asset_validator.core``: rule checkers, suggestions, the rules registry.

Copies the behaviour documented for Kit's Asset Validator ("Writing Your Own
Rules"): derive from ``BaseRuleChecker``, report with ``_AddFailedCheck`` /
``_AddError`` / ``_AddWarning`` / ``_AddInfo`` (message, ``at``, optional
``suggestion``), register with ``ValidationRulesRegistry.registerRule(rule, category)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from pxr import Usd


class IssueSeverity(Enum):
    FAILURE = "failure"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Suggestion:
    callable: Callable[[Usd.Stage, Any], None]
    message: str

    def __post_init__(self) -> None:
        if not callable(self.callable):
            raise ValueError("callable must be a Callable.")


@dataclass(frozen=True)
class Issue:
    message: str
    severity: IssueSeverity
    rule: type
    at: Any = None
    suggestion: Suggestion | None = None


class BaseRuleChecker:
    def __init__(
        self,
        verbose: bool = False,
        consumerLevelChecks: bool = False,
        assetLevelChecks: bool = True,
    ):
        del verbose, consumerLevelChecks, assetLevelChecks
        self._issues: list[Issue] = []

    def _add(
        self,
        severity: IssueSeverity,
        message: str,
        at: Any = None,
        suggestion: Suggestion | None = None,
    ) -> None:
        if not isinstance(message, str) or not message:
            raise TypeError("an issue needs a message")
        if suggestion is not None and not isinstance(suggestion, Suggestion):
            raise TypeError("suggestion must be a Suggestion")
        self._issues.append(Issue(message, severity, type(self), at, suggestion))

    def _AddFailedCheck(
        self, message: str, at: Any = None, suggestion: Suggestion | None = None
    ) -> None:
        self._add(IssueSeverity.FAILURE, message, at, suggestion)

    def _AddError(self, message: str, at: Any = None, suggestion: Suggestion | None = None) -> None:
        self._add(IssueSeverity.ERROR, message, at, suggestion)

    def _AddWarning(
        self, message: str, at: Any = None, suggestion: Suggestion | None = None
    ) -> None:
        self._add(IssueSeverity.WARNING, message, at, suggestion)

    def _AddInfo(self, message: str, at: Any = None) -> None:
        self._add(IssueSeverity.INFO, message, at)

    def GetIssues(self) -> list[Issue]:
        return list(self._issues)

    def CheckStage(self, usdStage: Usd.Stage) -> None:
        pass

    def CheckPrim(self, prim: Usd.Prim) -> None:
        pass

    def ResetCaches(self) -> None:
        pass


class ValidationRulesRegistry:
    _rules: ClassVar[dict[str, list[type]]] = {}

    @staticmethod
    def registerRule(rule: type, category: str) -> None:
        if not (isinstance(rule, type) and issubclass(rule, BaseRuleChecker)):
            raise TypeError(f"{rule!r} is not a BaseRuleChecker subclass")
        ValidationRulesRegistry.deregisterRule(rule)
        ValidationRulesRegistry._rules.setdefault(category, []).append(rule)

    @staticmethod
    def deregisterRule(rule: type) -> None:
        for category, rules in list(ValidationRulesRegistry._rules.items()):
            if rule in rules:
                rules.remove(rule)
            if not rules:
                del ValidationRulesRegistry._rules[category]

    @staticmethod
    def categories(enabledOnly: bool = False) -> tuple[str, ...]:
        del enabledOnly
        return tuple(ValidationRulesRegistry._rules)

    @staticmethod
    def rules(category: str, enabledOnly: bool = False) -> tuple[type, ...]:
        del enabledOnly
        return tuple(ValidationRulesRegistry._rules.get(category, ()))


class ValidationEngine:
    """Runs every registered rule on a stage (CheckStage, then CheckPrim on each prim)."""

    def validate(self, stage: Usd.Stage) -> list[Issue]:
        issues: list[Issue] = []
        for category in ValidationRulesRegistry.categories():
            for rule in ValidationRulesRegistry.rules(category):
                checker = rule()
                checker.CheckStage(stage)
                for prim in stage.Traverse():
                    checker.CheckPrim(prim)
                issues.extend(checker.GetIssues())
        return issues
