"""``usdgrip validate``: run the GR/GS/GA rules over USD files (text, JSON or SARIF)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from usdgrip.fileio import (
    check_output,
    check_output_path,
    find_usda_comments,
    write_text_output,
)

NAME = "validate"
ORDER = 20
HELP = "check gripper sites and grasp slots against the GR/GS/GA rules"
DESCRIPTION = """Check USD files against the usdgrip rules (`usdgrip rules` lists them).

Exit codes: 0 no failure or error (warnings and infos never fail), 1 at least
one failure or error, 2 usage error or unreadable input.

  usdgrip validate examples/gripper.usda
  usdgrip validate asset.usda --rule GR.003 --rule GR.004
  usdgrip validate asset.usda --param orthogonality_tolerance_deg=5
  usdgrip validate assets/*.usda --format sarif --output validation.sarif
  usdgrip validate asset.usda --fix        # additive fixes into the file, then re-check

--fix rewrites each file atomically, keeping its mode, owner and group; it refuses
(exit 2, nothing written) a read-only file and a file that changed while it was
checked. USD keeps no comments: the comment block right after `#usda 1.0` (a licence
header) is carried over, other comments are dropped with a warning."""

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVELS = {"failure": "error", "error": "error", "warning": "warning", "info": "note"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="USD files to validate")
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="CODE",
        help="run only this rule (code such as GR.003, or name); repeat or comma-separate",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a tolerance (see docs/validation.md), e.g. orthogonality_tolerance_deg=5",
    )
    parser.add_argument(
        "--format", choices=("text", "json", "sarif"), default="text", help="output format"
    )
    parser.add_argument(
        "--fix",
        action="store_true",
        help="apply the additive fixes into each file's root layer, save it, then re-validate",
    )
    parser.add_argument(
        "--output",
        metavar="PATH",
        help="write the report to PATH instead of stdout (atomically; a device or named pipe "
        "is written in place)",
    )


def parse_params(items: Sequence[str]) -> dict[str, float]:
    """``["name=value", ...]`` → checked parameter overrides.

    Raises:
        ValueError: malformed item, unknown name or non-numeric value (valid names listed).
    """
    from usdgrip.rules import DEFAULT_PARAMS, resolve_params

    params: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(
                f"--param {item!r} is not NAME=VALUE; valid names: "
                f"{', '.join(sorted(DEFAULT_PARAMS))}"
            )
        params[name.strip()] = value.strip()
    resolve_params(params)
    return {k: float(v) for k, v in params.items()}


def split_rules(items: Sequence[str]) -> list[str] | None:
    """Repeated or comma-separated ``--rule`` values → codes (``None``: no ``--rule`` given).

    Raises:
        ValueError: a ``--rule`` value names no rule (empty, or only commas).
    """
    codes = []
    for item in items:
        found = [c.strip() for c in item.split(",") if c.strip()]
        if not found:
            raise ValueError(
                f"--rule {item!r} names no rule; expected a code such as GR.003 or a rule name "
                "(`usdgrip rules` lists them); leave out --rule to run every rule"
            )
        codes.extend(found)
    return codes or None


def _file_entry(path: str, report: Any, fixed: list[str] | None) -> dict[str, Any]:
    entry = report.to_dict(path)
    if fixed is not None:
        entry["fixed"] = fixed
    return entry


def _summary(entries: list[dict[str, Any]]) -> dict[str, Any]:
    from usdgrip.rules import SEVERITIES

    totals = dict.fromkeys(SEVERITIES, 0)
    for entry in entries:
        for severity, count in entry["summary"].items():
            totals[severity] += count
    return {
        "files": len(entries),
        "files_failing": sum(not e["ok"] for e in entries),
        **totals,
        "ok": all(e["ok"] for e in entries),
    }


def format_text(entries: list[dict[str, Any]]) -> str:
    """Human-readable report: one line per issue, a summary per file and overall."""
    lines: list[str] = []
    for entry in entries:
        counts = entry["summary"]
        state = "ok" if entry["ok"] else "FAILED"
        lines.append(
            f"{entry['path']}: {state} ({counts['failure']} failure, {counts['error']} error, "
            f"{counts['warning']} warning, {counts['info']} info)"
        )
        for fix in entry.get("fixed", []):
            lines.append(f"  fixed: {fix}")
        for issue in entry["issues"]:
            mark = " [fixable: usdgrip validate --fix]" if issue["fixable"] else ""
            lines.append(
                f"  {issue['code']} {issue['severity']:<7} <{issue['prim']}> {issue['rule']}: "
                f"{issue['message']}{mark}"
            )
    summary = _summary(entries)
    if len(entries) > 1:
        lines.append(
            f"{summary['files']} files, {summary['files_failing']} failing: "
            f"{summary['failure']} failure, {summary['error']} error, "
            f"{summary['warning']} warning, {summary['info']} info"
        )
    return "\n".join(lines) + "\n"


def format_json(entries: list[dict[str, Any]]) -> str:
    """``{"files": [{"path", "issues": [...]}], "summary": {...}}``."""
    return json.dumps({"files": entries, "summary": _summary(entries)}, indent=2) + "\n"


def format_sarif(entries: list[dict[str, Any]], codes: Sequence[str]) -> str:
    """SARIF 2.1.0: one run, every selected rule in ``tool.driver.rules``, one result per issue."""
    from usdgrip import __version__
    from usdgrip.rules import RULES

    rule_index = {code: i for i, code in enumerate(codes)}
    rules = []
    for code in codes:
        r = RULES[code]
        rules.append(
            {
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.title},
                "fullDescription": {"text": r.summary},
                "helpUri": r.doc_path.resolve().as_uri(),
                "help": {"text": f"{r.summary} See {r.doc_path.name}.", "markdown": r.doc},
                "defaultConfiguration": {"level": SARIF_LEVELS[r.severity]},
                "properties": {"tags": list(r.tags), "severity": r.severity},
            }
        )
    results, artifacts = [], []
    for index, entry in enumerate(entries):
        uri = _artifact_uri(entry["path"])
        artifacts.append({"location": {"uri": uri}})
        for issue in entry["issues"]:
            results.append(
                {
                    "ruleId": issue["code"],
                    "ruleIndex": rule_index[issue["code"]],
                    "level": SARIF_LEVELS[issue["severity"]],
                    "message": {"text": f"<{issue['prim']}>: {issue['message']}"},
                    "locations": [
                        {
                            "physicalLocation": {"artifactLocation": {"uri": uri, "index": index}},
                            "logicalLocations": [
                                {
                                    "name": issue["prim"].rsplit("/", 1)[-1] or "/",
                                    "fullyQualifiedName": issue["prim"],
                                    "kind": "element",
                                }
                            ],
                        }
                    ],
                    "properties": {
                        "severity": issue["severity"],
                        "rule": issue["rule"],
                        "fixable": issue["fixable"],
                    },
                }
            )
    sarif = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "usdgrip",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "artifacts": artifacts,
                "results": results,
            }
        ],
    }
    return json.dumps(sarif, indent=2) + "\n"


def _artifact_uri(path: str) -> str:
    """Relative paths stay relative (CI resolves them against the checkout); absolute → file URI.

    Both are percent-encoded: a space, ``#`` or ``?`` in a file name is data, not URI syntax.
    """
    file = Path(path)
    return file.as_uri() if file.is_absolute() else quote(file.as_posix())


def run(args: argparse.Namespace) -> int:
    from usdgrip.cli import open_input, print_notes, reading, take_snapshot
    from usdgrip.rules import select_rules, validate

    codes = [r.code for r in select_rules(split_rules(args.rule))]
    params = parse_params(args.param)
    if args.output:  # every input before any is opened (each stage's layers as it opens)
        check_output_path(args.output, args.files)
        check_output(args.output)
    # Open everything first: an unreadable input is a usage error (exit 2) before any output.
    # These stages are private to this command, so the C++ candidate scan may use them.
    # --fix rewrites a file only if it is still what was read (the snapshot comes first).
    stages = []
    for path in args.files:
        snapshot = take_snapshot(path) if args.fix else None
        stages.append((path, snapshot, open_input(path, args.output)))
    entries = []
    for path, snapshot, stage in stages:
        with reading(path):
            report = validate(stage, rules=codes, params=params, scan="collection")
            fixed = None
            if args.fix:
                fixed = report.apply_fixes()
                if fixed:
                    from usdgrip.usd.layer_files import export_layer

                    notes = export_layer(
                        stage.GetRootLayer(),
                        path,
                        unchanged=snapshot,
                        comments=find_usda_comments(path),
                    )
                    print_notes(path, notes)
                    report = validate(stage, rules=codes, params=params, scan="collection")
        entries.append(_file_entry(path, report, fixed))
    if args.format == "json":
        text = format_json(entries)
    elif args.format == "sarif":
        text = format_sarif(entries, codes)
    else:
        text = format_text(entries)
    if args.output:
        write_text_output(args.output, text)
    else:
        sys.stdout.write(text)
    return 0 if all(e["ok"] for e in entries) else 1
