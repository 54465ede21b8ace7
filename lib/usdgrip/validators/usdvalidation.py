"""OpenUSD UsdValidation validators for the usdgrip rules (keyword ``usdgrip``).

Every rule of :data:`usdgrip.rules.RULES` is declared as a validator in
``plugins/usdValidation/plugInfo.json`` (a ``python`` Plug plugin named
:data:`PLUGIN_NAME`, reached by the root ``plugInfo.json`` Includes), and
implemented here. Plug imports the plugin's thin module the first time a
client asks for one of its validators (``ValidationContext(keywords=["usdgrip"])``,
usdview's validation panel, ``GetOrLoadValidatorByName``); that module calls
:func:`register_validators`, which binds each declared name to a task
running the SAME rule code as ``usdgrip validate``.

A process needs only ``eval "$(usdgrip env)"`` (PXR_PLUGINPATH_NAME and
PYTHONPATH); it never has to import usdgrip itself. Without that
environment, ``import usdgrip`` declares the plugin (and puts its module on
``sys.path``) when it runs before UsdValidation's registry is first built.

Each rule is a *stage* validator reading :func:`get_stage_issues`: the first
one to run on a stage runs :func:`usdgrip.rules.validate` once for every rule
(one traversal) and the result is cached until the stage changes, so the
findings (sites under an undefined ``over``, instance proxies, unresolved
assets) are exactly usdgrip's at the cost of one usdgrip validation. A finding becomes a
``ValidationError`` named by the rule code (``GR.003``) at the prim it names;
failures and errors map to ``Error``, warnings to ``Warn``, infos to ``Info``.

Fixes: usd-core 26.8's Python bindings cannot create ``ValidationFixer``
objects (``ValidationFixer(...)`` raises "This class cannot be instantiated
from Python") and ``RegisterPlugin*Validator`` takes no ``fixers`` argument,
so the available usdgrip fix is named in the error message instead
(apply it with ``usdgrip validate --fix``).
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pxr import Sdf, Tf, Usd, UsdValidation

from usdgrip.rules import RULES, Issue, Rule, validate

__all__ = [
    "KEYWORD",
    "PLUGIN_NAME",
    "compute_plug_info",
    "compute_validation_error",
    "compute_validator_name",
    "get_stage_issues",
    "register_validators",
]

PLUGIN_NAME = "usdGripValidation"
"""Plug plugin name; also the module Plug imports (``plugins/usdValidation``)."""
KEYWORD = "usdgrip"
"""Keyword shared by every usdgrip validator."""

_ERROR_TYPE = {
    "failure": UsdValidation.ValidationErrorType.Error,
    "error": UsdValidation.ValidationErrorType.Error,
    "warning": UsdValidation.ValidationErrorType.Warn,
    "info": UsdValidation.ValidationErrorType.Info,
}


def compute_validator_name(rule: Rule, qualified: bool = True) -> str:
    """``usdGripValidation:gripper-grip-line`` (or just the rule name when not qualified)."""
    return f"{PLUGIN_NAME}:{rule.name}" if qualified else rule.name


def compute_plug_info() -> dict[str, Any]:
    """The ``plugInfo.json`` content declaring every rule as a validator (keywords included).

    ``plugins/usdValidation/plugInfo.json`` must equal this (a test checks it); regenerate
    with ``python -m usdgrip.validators.usdvalidation > plugins/usdValidation/plugInfo.json``.
    """
    validators = {
        compute_validator_name(r, qualified=False): {
            "doc": f"{r.code} ({r.severity}): {r.summary} See docs/rules/{r.code}.md.",
            "keywords": [KEYWORD, r.code],
        }
        for r in (RULES[c] for c in sorted(RULES))
    }
    return {
        "Plugins": [
            {
                "Type": "python",
                "Name": PLUGIN_NAME,
                "Info": {"Validators": validators},
            }
        ]
    }


def compute_validation_error(stage: Usd.Stage, issue: Issue) -> UsdValidation.ValidationError:
    """Translate one usdgrip issue into a ``ValidationError`` at the prim it names."""
    message = issue.message
    if issue.fixes:
        fixes = "; ".join(f.description for f in issue.fixes)
        message = f"{message} (usdgrip validate --fix can: {fixes})"
    site = UsdValidation.ValidationErrorSite(stage, Sdf.Path(issue.prim))
    return UsdValidation.ValidationError(issue.code, _ERROR_TYPE[issue.severity], [site], message)


@dataclass(eq=False)
class _Entry:
    """usdgrip's findings on one stage, by code, until the stage changes."""

    issues: dict[str, list[Issue]]
    listener: Any = None
    stale: bool = False


_CACHE: weakref.WeakKeyDictionary[Usd.Stage, _Entry] = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()


def _mark_stale(notice: Usd.Notice.ObjectsChanged, stage: Usd.Stage) -> None:
    del notice
    with _LOCK:
        entry = _CACHE.get(stage)
        if entry is not None:
            entry.stale = True


def get_stage_issues(stage: Usd.Stage, code: str) -> list[Issue]:
    """The usdgrip issues of rule ``code`` on ``stage``; all rules run in ONE validation.

    The first usdgrip validator that runs on a stage validates every rule (one
    traversal) and caches the issues by code; the others read the cache. Any
    change to the stage (``Usd.Notice.ObjectsChanged``: an edit, a fix, a variant
    switch, a load) makes the next validator validate again. The cache holds the
    stage weakly. Variant selections are the stage's own (``variants="selected"``): the
    validators of one ValidationContext run in parallel on the same stage, and switching a
    selection writes to it.
    """
    with _LOCK:
        entry = _CACHE.get(stage)
        if entry is None or entry.stale:
            by_code: dict[str, list[Issue]] = {}
            # variants="selected": UsdValidation runs validators in parallel on its stage, so
            # selections are never switched here (the issues say which selection showed them).
            for issue in validate(stage, variants="selected").issues:
                by_code.setdefault(issue.code, []).append(issue)
            entry = _Entry(by_code)
            entry.listener = Tf.Notice.Register(Usd.Notice.ObjectsChanged, _mark_stale, stage)
            _CACHE[stage] = entry
        return list(entry.issues.get(code, ()))


def _make_stage_task(
    rule: Rule,
) -> Callable[[Usd.Stage, Any], list[UsdValidation.ValidationError]]:
    def task(stage: Usd.Stage, time_range: Any) -> list[UsdValidation.ValidationError]:
        del time_range  # the rules check authored default values
        return [compute_validation_error(stage, i) for i in get_stage_issues(stage, rule.code)]

    task.__name__ = f"validate_{rule.code.replace('.', '_')}"
    return task


def register_validators(registry: UsdValidation.ValidationRegistry | None = None) -> list[str]:
    """Bind every declared usdgrip validator to its task (called by the Plug module on load).

    Validators already registered (a second call) are skipped.

    Returns:
        The names registered by this call.

    Raises:
        ValueError: the plugin's plugInfo.json is not registered with Plug (set
            PXR_PLUGINPATH_NAME as ``usdgrip env`` prints), or it does not declare a rule.
    """
    registry = registry or UsdValidation.ValidationRegistry()
    declared = {m.name for m in registry.GetValidatorMetadataForPlugin(PLUGIN_NAME)}
    registered: list[str] = []
    for code in sorted(RULES):
        rule = RULES[code]
        name = compute_validator_name(rule)
        if name not in declared:
            raise ValueError(
                f"validator {name} ({code}) is not declared by a registered {PLUGIN_NAME} "
                f"plugInfo.json (declared: {len(declared)}); import usdgrip before the "
                "process's first ValidationRegistry()/ValidationContext, or set "
                "PXR_PLUGINPATH_NAME as `usdgrip env` prints, or regenerate "
                "plugins/usdValidation/plugInfo.json"
            )
        if registry.HasValidator(name):
            continue
        registry.RegisterPluginStageValidator(name, _make_stage_task(rule))
        registered.append(name)
    return registered


if __name__ == "__main__":
    print(json.dumps(compute_plug_info(), indent=4))
