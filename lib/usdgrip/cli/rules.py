"""``usdgrip rules``: list the validation rules, or print one rule's doc."""

from __future__ import annotations

import argparse
import json
import sys

NAME = "rules"
ORDER = 21
HELP = "list the validation rules (codes, names, severities), or print one rule's doc"
DESCRIPTION = """List every validation rule, or print the doc of one rule.

  usdgrip rules
  usdgrip rules --json
  usdgrip rules GR.003        # the rule's doc: summary, why, examples, how to comply"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", nargs="?", help="print the doc of this rule (code or name)")
    parser.add_argument("--json", action="store_true", help="machine-readable list")


def run(args: argparse.Namespace) -> int:
    from usdgrip.rules import DEFAULT_PARAMS, PARAM_DOCS, RULES, select_rules

    if args.code:
        (rule,) = select_rules([args.code])
        if args.json:
            sys.stdout.write(json.dumps(_as_dict(rule) | {"doc": rule.doc}, indent=2) + "\n")
        else:
            sys.stdout.write(rule.doc if rule.doc.endswith("\n") else rule.doc + "\n")
        return 0
    rules = [RULES[c] for c in sorted(RULES)]
    if args.json:
        payload = {
            "rules": [_as_dict(r) for r in rules],
            "params": {
                name: {"default": value, "doc": PARAM_DOCS[name]}
                for name, value in DEFAULT_PARAMS.items()
            },
        }
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return 0
    width = max(len(r.name) for r in rules)
    code_width = max(len(r.code) for r in rules)  # GSP.001 is one wider than GR.001
    for r in rules:
        sys.stdout.write(
            f"{r.code:<{code_width}}  {r.severity:<7}  {r.name:<{width}}  {r.summary}\n"
        )
    sys.stdout.write("\nParameters (usdgrip validate --param NAME=VALUE):\n")
    for name, value in DEFAULT_PARAMS.items():
        sys.stdout.write(f"  {name} = {value:g}  ({PARAM_DOCS[name]})\n")
    sys.stdout.write("\n`usdgrip rules CODE` prints a rule's doc.\n")
    sys.stdout.write(_usdvalidation_hint() + "\n")
    return 0


def _usdvalidation_hint() -> str:
    """Where else these rules run: OpenUSD UsdValidation, or why not in this process."""
    from usdgrip._plugin import get_validation_plugin_problem

    problem = get_validation_plugin_problem()
    if problem is not None:
        return f"UsdValidation: {problem}."
    return (
        'UsdValidation: ValidationContext(keywords=["usdgrip"]) runs these rules in a Python '
        "process that imports usdgrip before its first ValidationRegistry()/ValidationContext; "
        'elsewhere (usdview, Kit, a process that never imports usdgrip) run eval "$(usdgrip env)" '
        "first."
    )


def _as_dict(rule) -> dict:
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity,
        "tags": list(rule.tags),
        "title": rule.title,
        "summary": rule.summary,
        "doc_path": str(rule.doc_path),
    }
