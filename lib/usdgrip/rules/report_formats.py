"""Validation reports as text, JSON, SARIF 2.1.0, JUnit XML and GitHub annotations.

Every format takes *entries*, one per file (:meth:`usdgrip.rules.Report.to_dict` plus what
the command adds): ``path`` (as the user named it), ``ok``, ``summary`` (count per
severity), ``issues`` (``code``, ``rule``, ``severity``, ``prim``, ``message``,
``fixable``, and, when the command located them, ``location``: ``{"file": the layer's real
path, "line": its line or None}``; ``variant``: the selection that shows the issue), and
for ``batch validate`` rows that could not be validated ``status`` and ``error``.
No ``pxr`` here: ``usdgrip validate`` and ``usdgrip batch validate`` share these.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree

from usdgrip.rules.records import RULES, SEVERITIES

__all__ = [
    "HELP_URI_FORMAT",
    "SARIF_LEVELS",
    "SARIF_SCHEMA",
    "entry_fails",
    "format_annotations",
    "format_json",
    "format_junit",
    "format_sarif",
    "format_text",
    "summarize",
]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVELS = {"failure": "error", "error": "error", "warning": "warning", "info": "note"}
#: ``helpUri`` of a rule in SARIF: the rule's page, relative to usdgrip's source tree and
#: its wheel's ``share/`` folder (docs/validation.md, "SARIF"); never a path of this machine.
HELP_URI_FORMAT = "docs/rules/{code}.md"
_GITHUB_LEVELS = {"failure": "error", "error": "error", "warning": "warning", "info": "notice"}
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b")


def entry_fails(entry: dict[str, Any], strict: bool = False) -> bool:
    """Whether the file fails: a failure or error, a file not validated, or (strict) a warning."""
    if not entry.get("ok", False):
        return True
    return strict and entry.get("summary", {}).get("warning", 0) > 0


def summarize(entries: Sequence[dict[str, Any]], strict: bool = False) -> dict[str, Any]:
    """Totals over ``entries``: files, files failing, issues per severity, ok."""
    totals = dict.fromkeys(SEVERITIES, 0)
    for entry in entries:
        for severity, count in entry.get("summary", {}).items():
            totals[severity] = totals.get(severity, 0) + count
    failing = sum(entry_fails(e, strict) for e in entries)
    return {"files": len(entries), "files_failing": failing, **totals, "ok": failing == 0}


def describe_summary(summary: dict[str, Any]) -> str:
    """``3 file(s), 1 failing: 2 failure, 0 error, 1 warning, 0 info``."""
    counts = ", ".join(f"{summary[s]} {s}" for s in SEVERITIES)
    return f"{summary['files']} file(s), {summary['files_failing']} failing: {counts}"


def _variant(issue: dict[str, Any]) -> str:
    variant = issue.get("variant")
    return f" [{variant}]" if variant else ""


def format_text(entries: Sequence[dict[str, Any]], strict: bool = False) -> str:
    """Human-readable report: one line per issue, a summary per file and overall."""
    lines: list[str] = []
    for entry in entries:
        counts = entry["summary"]
        state = "FAILED" if entry_fails(entry, strict) else "ok"
        lines.append(
            f"{entry['path']}: {state} ({counts['failure']} failure, {counts['error']} error, "
            f"{counts['warning']} warning, {counts['info']} info)"
        )
        for fix in entry.get("fixed", []):
            lines.append(f"  fixed: {fix}")
        for warning in entry.get("warnings", []):
            lines.append(f"  warning: {warning}")
        for issue in entry["issues"]:
            mark = " [fixable: usdgrip validate --fix]" if issue["fixable"] else ""
            lines.append(
                f"  {issue['code']} {issue['severity']:<7} <{issue['prim']}>{_variant(issue)} "
                f"{issue['rule']}: {issue['message']}{mark}"
            )
    summary = summarize(entries, strict)
    if len(entries) > 1:
        lines.append(
            f"{summary['files']} files, {summary['files_failing']} failing: "
            f"{summary['failure']} failure, {summary['error']} error, "
            f"{summary['warning']} warning, {summary['info']} info"
        )
    return "\n".join(lines) + "\n"


def format_json(entries: Sequence[dict[str, Any]], strict: bool = False) -> str:
    """``{"files": [{"path", "issues": [...]}], "summary": {...}}``."""
    summary = summarize(entries, strict)
    return json.dumps({"files": list(entries), "summary": summary}, indent=2) + "\n"


# --- where an issue is ------------------------------------------------------------


def _display_path(entry: dict[str, Any], issue: dict[str, Any]) -> tuple[str, int | None]:
    """The file to point at for ``issue`` (as the user would name it) and its line."""
    location = issue.get("location")
    if not location:
        return entry["path"], None
    file, line = location["file"], location.get("line")
    given = entry["path"]
    if os.path.realpath(given) == os.path.realpath(file):
        return given, line
    if not os.path.isabs(given):  # the user names files relative to here: do the same
        relative = os.path.relpath(file)
        if not relative.startswith(".."):
            return relative, line
    return file, line


def _artifact_uri(path: str) -> str:
    """Relative paths stay relative (CI resolves them against the checkout); absolute → file URI.

    Both are percent-encoded: a space, ``#`` or ``?`` in a file name is data, not URI syntax.
    """
    file = Path(path)
    return file.as_uri() if file.is_absolute() else quote(file.as_posix())


def _fingerprint(code: str, uri: str, issue: dict[str, Any]) -> str:
    """Stable over reruns: rule, file, prim, variant and the message with its numbers masked."""
    message = _NUMBER.sub("#", issue["message"])
    key = "\x1f".join((code, uri, issue["prim"], issue.get("variant") or "", message))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


# --- SARIF ----------------------------------------------------------------------------


def format_sarif(
    entries: Sequence[dict[str, Any]],
    codes: Sequence[str],
    *,
    arguments: Sequence[str] | None = None,
    exit_code: int | None = None,
    notifications: Sequence[tuple[str, str]] = (),
) -> str:
    """SARIF 2.1.0: one run, every selected rule, one result per issue, located.

    Args:
        entries: the files (see the module doc).
        codes: the rules that ran (``tool.driver.rules``, in this order).
        arguments: the command's arguments after ``usdgrip`` (``invocations``).
        exit_code: the command's exit code (``invocations``).
        notifications: ``(level, text)`` for ``toolExecutionNotifications`` (a file that
            could not be validated, variant combinations left unchecked).
    """
    from usdgrip import __version__

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
                "helpUri": HELP_URI_FORMAT.format(code=r.code),
                "help": {"text": f"{r.summary} See {r.doc_path.name}.", "markdown": r.doc},
                "defaultConfiguration": {"level": SARIF_LEVELS[r.severity]},
                "properties": {
                    "tags": list(r.tags),
                    "severity": r.severity,
                    **({"simready": r.simready} if r.simready else {}),
                },
            }
        )
    artifacts: list[dict[str, Any]] = []
    artifact_index: dict[str, int] = {}

    def artifact(path: str) -> tuple[str, int]:
        uri = _artifact_uri(path)
        if uri not in artifact_index:
            artifact_index[uri] = len(artifacts)
            artifacts.append({"location": {"uri": uri}})
        return uri, artifact_index[uri]

    results = []
    for entry in entries:
        artifact(entry["path"])
        for issue in entry["issues"]:
            path, line = _display_path(entry, issue)
            uri, index = artifact(path)
            physical: dict[str, Any] = {"artifactLocation": {"uri": uri, "index": index}}
            if line is not None:
                physical["region"] = {"startLine": line}
            result: dict[str, Any] = {
                "ruleId": issue["code"],
                "level": SARIF_LEVELS[issue["severity"]],
                "message": {"text": f"<{issue['prim']}>{_variant(issue)}: {issue['message']}"},
                "locations": [
                    {
                        "physicalLocation": physical,
                        "logicalLocations": [
                            {
                                "name": issue["prim"].rsplit("/", 1)[-1] or "/",
                                "fullyQualifiedName": issue["prim"],
                                "kind": "element",
                            }
                        ],
                    }
                ],
                "partialFingerprints": {"usdgripIssue/v1": _fingerprint(issue["code"], uri, issue)},
                "properties": {
                    "severity": issue["severity"],
                    "rule": issue["rule"],
                    "fixable": issue["fixable"],
                    **({"variant": issue["variant"]} if issue.get("variant") else {}),
                },
            }
            if issue["code"] in rule_index:
                result["ruleIndex"] = rule_index[issue["code"]]
            results.append(result)
    invocation: dict[str, Any] = {"executionSuccessful": exit_code in (None, 0, 1)}
    if arguments is not None:
        invocation["commandLine"] = shlex.join(["usdgrip", *arguments])
        invocation["arguments"] = list(arguments)
    if exit_code is not None:
        invocation["exitCode"] = exit_code
    if notifications:
        invocation["toolExecutionNotifications"] = [
            {"level": level, "message": {"text": text}} for level, text in notifications
        ]
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
                "invocations": [invocation],
                "artifacts": artifacts,
                "results": results,
            }
        ],
    }
    return json.dumps(sarif, indent=2) + "\n"


# --- JUnit XML -------------------------------------------------------------------------


def format_junit(
    entries: Sequence[dict[str, Any]], *, strict: bool = False, name: str = "usdgrip validate"
) -> str:
    """JUnit XML: a ``testsuite`` per file, a ``testcase`` per issue (one passing case when clean).

    Failures and errors (and, with ``strict``, warnings) are ``<failure>``; a file that could
    not be validated is one ``<error>``; other issues pass with the finding in ``system-out``.
    ``name`` is the command (the ``testsuites`` name, and a file's case without issues).
    """
    failing = {"failure", "error", *(("warning",) if strict else ())}
    suites = ElementTree.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for entry in entries:
        path = entry["path"]
        suite = ElementTree.SubElement(suites, "testsuite", name=path)
        counts = {"tests": 0, "failures": 0, "errors": 0}
        if entry.get("error"):
            case = ElementTree.SubElement(suite, "testcase", classname=path, name=name, file=path)
            status = entry.get("status", "error")
            ElementTree.SubElement(
                case, "error", type=status, message=entry["error"]
            ).text = f"{path}: {status}: {entry['error']}"
            counts["tests"] += 1
            counts["errors"] += 1
        for issue in entry["issues"]:
            where, line = _display_path(entry, issue)
            attributes = {"classname": path, "name": f"{issue['code']} <{issue['prim']}>"}
            attributes["name"] += _variant(issue)
            attributes["file"] = where
            if line is not None:
                attributes["line"] = str(line)
            case = ElementTree.SubElement(suite, "testcase", attributes)
            text = f"{issue['code']} {issue['rule']} ({issue['severity']}): {issue['message']}"
            if issue["severity"] in failing:
                ElementTree.SubElement(
                    case, "failure", type=issue["severity"], message=issue["message"]
                ).text = text
                counts["failures"] += 1
            else:
                ElementTree.SubElement(case, "system-out").text = text
            counts["tests"] += 1
        if not counts["tests"]:
            ElementTree.SubElement(suite, "testcase", classname=path, name=name, file=path)
            counts["tests"] = 1
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        suites.set(key, str(value))
    ElementTree.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + ElementTree.tostring(suites, encoding="unicode")
        + "\n"
    )


# --- GitHub annotations -----------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_annotations(entries: Sequence[dict[str, Any]]) -> str:
    """GitHub Actions workflow commands, one per issue: ``::error file=F,line=L,title=T::msg``.

    Failures and errors are ``error``, warnings ``warning``, infos ``notice``; a file that
    could not be validated is an ``error`` on the file.
    """
    lines = []
    for entry in entries:
        if entry.get("error"):
            lines.append(
                f"::error file={_escape_property(entry['path'])},title="
                f"{_escape_property('usdgrip validate: ' + entry.get('status', 'error'))}::"
                f"{_escape_data(entry['error'])}"
            )
        for issue in entry["issues"]:
            path, line = _display_path(entry, issue)
            properties = [f"file={_escape_property(path)}"]
            if line is not None:
                properties.append(f"line={line}")
            properties.append(f"title={_escape_property(issue['code'] + ' ' + issue['rule'])}")
            message = f"<{issue['prim']}>{_variant(issue)}: {issue['message']}"
            level = _GITHUB_LEVELS[issue["severity"]]
            lines.append(f"::{level} {','.join(properties)}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)
