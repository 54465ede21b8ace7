"""``usdgrip validate``: run the GR/GS/GA rules over USD files (text, JSON or SARIF)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from usdgrip.cli.common import parse_positive_int
from usdgrip.fileio import (
    check_output,
    check_output_path,
    find_usda_comments,
    is_standard_output,
    write_text_output,
)

NAME = "validate"
ORDER = 20
HELP = "check gripper sites and grasp slots against the GR/GS/GA rules"
DESCRIPTION = """Check USD files against the usdgrip rules (`usdgrip rules` lists them).

Exit codes: 0 no failure or error (warnings and infos never fail; with --strict,
warnings fail too), 1 at least one failure or error, 2 usage error or unreadable input.
A folder is refused: `usdgrip batch validate DIR` checks every USD file under it.

  usdgrip validate examples/gripper.usda
  usdgrip validate asset.usda --rule GR.003 --rule GR.004
  usdgrip validate asset.usda --param orthogonality_tolerance_deg=5
  usdgrip validate assets/*.usda --format sarif --output validation.sarif
  usdgrip validate assets/*.usda --format junit --output junit.xml --strict
  usdgrip validate assets/*.usda --annotations github    # ::error file=...,line=...::
  usdgrip validate asset.usda --fix        # additive fixes into the file, then re-check
  usdgrip validate robot.usda --variants selected   # only the current variant selections

Every variant of every variant set is checked by default (--variants all), one prim's
combinations at a time, each selection authored in the session layer and removed again;
an issue only some selections show is labelled with the selection ([hand=bad]). At most
--max-variant-selections selections per file are checked; the rest are named in a warning.

SARIF results point at the line of the prim's spec in a usda layer (the file only for
usdc), carry partialFingerprints stable over reruns and an invocation with the command
line and exit code. With --output FILE, one summary line goes to stdout.

--fix rewrites each file atomically, keeping its mode, owner and group; it refuses
(exit 2, nothing written) a read-only file and a file that changed while it was
checked. USD keeps no comments: the comment block right after `#usda 1.0` (a licence
header) is carried over, other comments are dropped with a warning."""


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
        "--format",
        choices=("text", "json", "sarif", "junit"),
        default="text",
        help="report format: text, JSON, SARIF 2.1.0 (code scanning) or JUnit XML",
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
        "is written in place); one summary line then goes to stdout",
    )
    add_report_arguments(parser)
    add_variant_arguments(parser)


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


def add_variant_arguments(parser: argparse.ArgumentParser) -> None:
    """``--variants`` and ``--max-variant-selections`` (``validate``, ``batch validate``)."""
    parser.add_argument(
        "--variants",
        choices=("none", "selected", "all"),
        default="all",
        help="all (default): check every variant selection of every variant set, one at a "
        "time (as usdchecker), issues labelled with the selection that shows them (hand=bad); "
        "selected: the stage as composed, labelled with the current selection; none: the "
        "stage as composed",
    )
    parser.add_argument(
        "--max-variant-selections",
        type=parse_positive_int,
        metavar="N",
        help=f"with --variants all: check at most N selections per file (default "
        f"{DEFAULT_VARIANT_SELECTIONS}); the rest are named in a warning",
    )


#: ``usdgrip.rules.variants.MAX_VARIANT_SELECTIONS``, for --help without importing pxr (a
#: test checks they agree).
DEFAULT_VARIANT_SELECTIONS = 64


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    """``--strict`` and ``--annotations``: shared by ``validate`` and ``batch validate``."""
    parser.add_argument(
        "--strict",
        action="store_true",
        help="warnings fail too (exit 1), as usdchecker -t; infos never fail",
    )
    parser.add_argument(
        "--annotations",
        choices=("github",),
        help="also print one GitHub Actions annotation per issue on stdout "
        "(::error file=F,line=L,title=CODE rule::message)",
    )


def refuse_folders(files: Sequence[str]) -> None:
    """Raises ValueError for a folder among ``files``, pointing to ``batch validate``."""
    for file in files:
        if Path(file).is_dir():
            raise ValueError(
                f"{file}: is a folder; usdgrip validate takes USD files: run `usdgrip batch "
                f"validate {file}` for every USD file under it, or name the files"
            )


def render_report(
    format_: str,
    entries: list[dict[str, Any]],
    codes: Sequence[str],
    args: argparse.Namespace,
    exit_code: int,
) -> str:
    """The report text of ``format_`` (text, json, sarif, junit, jsonl) for ``entries``."""
    from usdgrip.rules.report_formats import format_json, format_junit, format_sarif, format_text

    strict = getattr(args, "strict", False)
    if format_ == "json":
        return format_json(entries, strict)
    if format_ == "sarif":
        notifications = [
            ("warning", f"{e['path']}: {w}") for e in entries for w in e.get("warnings", [])
        ] + [("error", f"{e['path']}: {e['error']}") for e in entries if e.get("error")]
        return format_sarif(
            entries,
            codes,
            arguments=getattr(args, "argv", None),
            exit_code=exit_code,
            notifications=notifications,
        )
    if format_ == "junit":
        return format_junit(entries, strict=strict)
    if format_ == "jsonl":
        return "".join(json.dumps(e, sort_keys=False) + "\n" for e in entries)
    return format_text(entries, strict)


def write_report(text: str, output: str | None, summary: dict[str, Any], format_: str) -> None:
    """Write ``text`` to ``output`` (atomically) or stdout; a file gets a summary line on stdout."""
    from usdgrip.rules.report_formats import describe_summary

    if output and not is_standard_output(output):
        write_text_output(output, text)
        print(f"wrote {output} ({format_}): {describe_summary(summary)}")
    elif output:
        write_text_output(output, text)
    else:
        sys.stdout.write(text)


def run(args: argparse.Namespace) -> int:
    from usdgrip.cli import open_input, print_notes, reading, take_snapshot
    from usdgrip.rules import select_rules, validate
    from usdgrip.rules.report_formats import entry_fails, format_annotations, summarize
    from usdgrip.usd.spec_lines import locate_issues

    codes = [r.code for r in select_rules(split_rules(args.rule))]
    params = parse_params(args.param)
    refuse_folders(args.files)
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
    located = args.format in ("sarif", "junit") or args.annotations
    entries = []
    for path, snapshot, stage in stages:
        with reading(path):
            variants: dict[str, Any] = {"variants": args.variants}
            if args.max_variant_selections is not None:
                variants["max_variant_selections"] = args.max_variant_selections
            report = validate(stage, rules=codes, params=params, scan="collection", **variants)
            for warning in report.warnings:
                print(f"usdgrip validate: {path}: warning: {warning}", file=sys.stderr)
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
                    report = validate(
                        stage, rules=codes, params=params, scan="collection", **variants
                    )
            entry = _file_entry(path, report, fixed)
            if located:
                locate_issues(stage, entry["issues"])
        entries.append(entry)
    exit_code = 1 if any(entry_fails(e, args.strict) for e in entries) else 0
    text = render_report(args.format, entries, codes, args, exit_code)
    write_report(text, args.output, summarize(entries, args.strict), args.format)
    if args.annotations:
        sys.stdout.write(format_annotations(entries))
    return exit_code
