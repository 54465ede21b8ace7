"""``usdgrip batch validate|plan|evaluate|gripper-test``: a whole library, resumable, isolated."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from usdgrip.batch import DEFAULT_GLOB, EVALUATE_JOB, PLAN_JOB, VALIDATE_JOB, run_batch
from usdgrip.batch.executors import MAX_JOBS_PER_CPU, max_jobs
from usdgrip.batch.jobs import GRIPPER_TEST_JOB, compute_output_path
from usdgrip.batch.progress import format_progress
from usdgrip.batch.results import format_summary
from usdgrip.cli._batch_params import (
    BATCH_PHYSICS_OPTIONS,
    build_physics_params,
    check_grasps_dir,
    check_out_dir,
    compute_support_params,
    make_out_dir,
    parse_grippers,
)
from usdgrip.cli.common import (
    add_physics_arguments,
    add_support_arguments,
    build_planning_options,
    parse_positive_int,
)
from usdgrip.cli.validate import add_report_arguments, add_variant_arguments
from usdgrip.fileio import check_output, is_standard_output
from usdgrip.progress_reporter import ProgressReporter, add_progress_argument

NAME = "batch"
ORDER = 70
HELP = "validate, plan or evaluate grasps for every USD file under a folder (local pool or Dask)"
DESCRIPTION = """Run validation, grasp planning or physics over an asset library, one file per
worker process at a time: a file that crashes USD, hangs past --timeout or raises
becomes a `crashed`, `timeout` or `error` row and the run goes on.

  usdgrip batch validate assets/ --jobs 2 --out results.jsonl
  usdgrip batch validate assets/ --out results.jsonl --resume     # only what is missing
  usdgrip batch plan objects/ --gripper gripper.usda:/Gripper/tcp --out-dir grasps/
  usdgrip batch plan objects/ --gripper gripper.usda:/Gripper/tcp --out-dir grasps/ \\
      --evaluate --trials 3 --table
  usdgrip batch evaluate objects/ --gripper gripper.usda:/Gripper/tcp --grasps-dir grasps/ \\
      --out-dir evaluated/ --table
  usdgrip batch validate assets/ --executor dask --scheduler tcp://scheduler:8786
  usdgrip batch validate assets/ --out results.jsonl --format sarif --output assets.sarif
  usdgrip batch validate assets/ --format junit --output junit.xml --strict
  usdgrip batch validate assets/ --annotations github --param orthogonality_tolerance_deg=5

Each finished file appends one JSON line to --out (path relative to ROOT, size,
mtime, sha256, status ok|findings|error|timeout|crashed, duration_s, counts,
issues or output, error, job: the signature --resume checks). Dask workers open
files by path: they must see the same file system (and the same usdgrip install)
as this machine."""


def _timeout(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value != value or value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds >= 0")
    return value or None


def _add_common(
    parser: argparse.ArgumentParser, formats: tuple[str, ...] = ("text", "json")
) -> None:
    parser.add_argument("root", metavar="ROOT", help="folder of the asset library (or one file)")
    parser.add_argument(
        "--glob",
        default=DEFAULT_GLOB,
        help=f"files to take, relative to ROOT (default: {DEFAULT_GLOB!r})",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=parse_positive_int,
        default=os.cpu_count() or 1,
        help="worker processes (default: the number of CPUs, %(default)s here; at most "
        f"{MAX_JOBS_PER_CPU} x CPUs = {max_jobs()}; never more than the files to run)",
    )
    parser.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="local process pool (default) or a Dask cluster",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler to use (tcp://host:port); without it --executor dask starts "
        "a LocalCluster with --jobs worker processes",
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        help="results file, one JSON line per file, appended as files complete (- or a "
        "named pipe: streamed, no --resume)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="skip files whose row in --out has the same sha256 and was written by the same "
        "job definition (action, rules, grippers, options, --out-dir); error, timeout and "
        "crashed rows too, unless --retry-failed",
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --resume, run files whose row is error, timeout or crashed again",
    )
    parser.add_argument(
        "--timeout",
        type=_timeout,
        default=300.0,
        metavar="SECONDS",
        help="per-file limit; the worker is killed and the file gets a timeout row "
        "(default: 300; 0 = none)",
    )
    parser.add_argument(
        "--format",
        choices=formats,
        default="text",
        help="summary: a table on stderr (text), or JSON on stdout"
        + (
            "; or a report of every file's issues on stdout or --output, with the table on "
            "stderr: jsonl (the rows), sarif (SARIF 2.1.0) or junit (JUnit XML)"
            if len(formats) > 2
            else ""
        ),
    )
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="no progress (as --progress none)"
    )
    add_progress_argument(parser)
    # Internal: run another job function (tests use a job with crash/hang hooks).
    parser.add_argument("--job", help=argparse.SUPPRESS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="batch_action", metavar="ACTION")
    validate = actions.add_parser(
        "validate",
        help="run the validation rules on every file",
        description="Validate every USD file under ROOT (the rules of `usdgrip validate`).\n"
        "Exit 0 when every file is clean, 1 on findings, errors, timeouts or crashes, "
        "2 on usage.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_common(validate, ("text", "json", "jsonl", "sarif", "junit"))
    validate.add_argument(
        "--rule",
        action="append",
        metavar="CODE",
        help="run only this rule (code such as GR.003, or name); repeat or comma-separate "
        "(default: all)",
    )
    validate.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a tolerance, as in `usdgrip validate` (part of the job definition)",
    )
    validate.add_argument(
        "--output",
        metavar="PATH",
        help="with --format jsonl|sarif|junit: write the report to PATH (atomically) instead "
        "of stdout; one summary line then goes to stdout",
    )
    add_report_arguments(validate)
    add_variant_arguments(validate)
    plan = actions.add_parser(
        "plan",
        help="plan grasps for every object file, one Isaac-Grasp file each",
        description="Plan grasps for the object of every USD file under ROOT (its default "
        "prim) and write\nOUT_DIR/<path relative to ROOT without suffix>.yaml, atomically; "
        "with --evaluate, grasp-and-lift\nevery candidate in MuJoCo first.\n"
        "Exit 0 when every file got grasps (--evaluate: one held), 1 when any got none or "
        "failed, 2 on usage.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_common(plan, GRASP_FORMATS)
    plan.add_argument(
        "--gripper",
        action="append",
        required=True,
        metavar="FILE:/Site",
        help="gripper asset and site prim (repeatable, in request order)",
    )
    plan.add_argument(
        "--out-dir", required=True, metavar="DIR", help="folder for the Isaac-Grasp files"
    )
    plan.add_argument(
        "--max-candidates",
        type=parse_positive_int,
        default=100,
        help="grasps per gripper (default: %(default)s)",
    )
    plan.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    add_support_arguments(
        plan,
        scene_help="USD file of obstacles around every object (in the objects' world frame)",
    )
    _add_report_output(plan)
    physics = plan.add_argument_group(
        "physics (--evaluate)",
        "grasp-and-lift every candidate in MuJoCo, as `usdgrip plan --evaluate`; the options "
        "below need --evaluate (refused without it)",
    )
    physics.add_argument(
        "--evaluate",
        action="store_true",
        help="simulate every candidate and order each file's by measured success rate",
    )
    add_physics_arguments(physics, seed=False, jobs=False, dump_scene=False)
    plan.set_defaults(**dict.fromkeys(BATCH_PHYSICS_OPTIONS))
    add_evaluate_action(actions)
    add_gripper_test_action(actions)


#: ``--format`` of the grasping actions: the summary, or a report of every file's row.
GRASP_FORMATS = ("text", "json", "jsonl", "junit")


def _add_report_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        metavar="PATH",
        help="with --format jsonl|junit: write the report to PATH (atomically) instead of "
        "stdout; one summary line then goes to stdout",
    )


def add_evaluate_action(actions: Any) -> None:
    """``usdgrip batch evaluate ROOT --gripper F:/S --grasps-dir DIR --out-dir DIR``."""
    action = actions.add_parser(
        "evaluate",
        help="grasp-and-lift each object's Isaac-Grasp file in MuJoCo (usdgrip evaluate)",
        description="Evaluate the grasps of the object of every USD file under ROOT (its "
        "default prim),\nread from GRASPS_DIR/<path relative to ROOT without suffix>.yaml "
        "(the layout `batch plan --out-dir`\nwrites; any writer's Isaac-Grasp file), and "
        "write OUT_DIR/<same>.yaml with physics, atomically.\nA missing grasp file is an "
        "error row naming where it was looked for.\nExit 0 when a candidate held in every "
        "file, 1 when any file held none or failed, 2 on usage.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_common(action, GRASP_FORMATS)
    action.add_argument(
        "--gripper",
        required=True,
        metavar="FILE:/Site",
        help="gripper asset and site prim whose candidates are simulated",
    )
    action.add_argument(
        "--grasps-dir",
        required=True,
        metavar="DIR",
        help="folder of the grasp files: DIR/<path relative to ROOT without suffix>.yaml",
    )
    action.add_argument(
        "--out-dir", required=True, metavar="DIR", help="folder for the evaluated files"
    )
    action.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    add_support_arguments(action, scene_help="USD file holding the support (with --support)")
    _add_report_output(action)
    add_physics_arguments(action, seed=False, jobs=False, dump_scene=False)
    action.set_defaults(**dict.fromkeys(BATCH_PHYSICS_OPTIONS))


def add_gripper_test_action(actions: Any) -> None:
    """``usdgrip batch gripper-test ROOT``: FET028 on every gripper site under ROOT."""
    action = actions.add_parser(
        "gripper-test",
        help="SimReady's FET028 gripper test on every gripper site under ROOT",
        description="Run `usdgrip evaluate --gripper-test` on every gripper site of every USD "
        "file under ROOT.\nExit 0 when every site passed or was skipped, 1 when any failed "
        "or errored, 2 on usage.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_common(action)
    action.add_argument(
        "--trials", type=parse_positive_int, default=1, help="trials per object (default 1)"
    )
    action.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")


def run(args: argparse.Namespace) -> int:
    if args.batch_action is None:
        raise ValueError(
            "expected an action: usdgrip batch validate|plan|evaluate|gripper-test ROOT "
            "(see --help)"
        )
    params: dict[str, Any]
    exclude: list[str] = []
    output_of = None
    out_dir: Path | None = None
    if args.out is not None and Path(args.out).is_dir():
        raise ValueError(f"--out {args.out}: is a directory; expected a results file path")
    if args.format == "json" and is_standard_output(args.out):
        raise ValueError(
            f"--out {args.out} is standard output, where --format json prints the summary: "
            "use --format text (the summary then goes to stderr) or a results file"
        )
    report_format = None
    if args.batch_action == "validate":
        job = VALIDATE_JOB
        # The same rule selection and parameters as `usdgrip validate`: bad ones are exit 2.
        from usdgrip.cli.validate import parse_params, split_rules
        from usdgrip.rules import select_rules

        params = (
            {"rules": [r.code for r in select_rules(split_rules(args.rule))]} if args.rule else {}
        )
        if args.param:
            params["params"] = parse_params(args.param)
        if args.variants != "all":  # the defaults stay out of the job definition
            params["variants"] = args.variants
        if args.max_variant_selections is not None:
            params["max_variant_selections"] = args.max_variant_selections
        report_format = _check_report_options(args)
        if report_format in ("sarif", "junit") or args.annotations:
            params["locations"] = True
    elif args.batch_action == "gripper-test":
        job = GRIPPER_TEST_JOB
        params = {"trials": args.trials, "seed": args.seed}
    else:
        report_format = _check_report_options(args)
        out_dir = check_out_dir(args.out_dir)
        build_planning_options(args)  # --table with --support is refused here, once
        physics = build_physics_params(args)
        root = str(Path(args.root).resolve())
        if args.batch_action == "plan":
            job = PLAN_JOB
            params = {
                "grippers": parse_grippers(args.gripper, args.max_candidates, args.seed),
                "root": root,
                "out_dir": str(out_dir),
                "max_candidates": args.max_candidates,
                "seed": args.seed,
                **compute_support_params(args),
            }
            if physics is not None:  # left out without --evaluate: the job signature stays
                params["evaluate"] = physics
            grippers = [file for file, _ in params["grippers"]]
        else:
            job = EVALUATE_JOB
            grasps_dir = check_grasps_dir(args.grasps_dir, out_dir)
            gripper = parse_grippers([args.gripper], 1, args.seed)[0]
            params = {
                "gripper": gripper,
                "grasps_dir": str(grasps_dir),
                "out_dir": str(out_dir),
                "root": root,
                "seed": args.seed,
                **compute_support_params(args),
                "physics": physics,
            }
            grippers = [gripper[0]]
        # the grippers and the scene are not objects
        exclude = [*grippers, *([params["scene"]] if "scene" in params else [])]

        def output_of(path: Path) -> Path:
            return compute_output_path(str(path), params["root"], params["out_dir"])

    progress = ProgressReporter(sys.stderr, args.progress, quiet=args.quiet, prefix="usdgrip batch")
    counted = {"done": 0, "total": 0}
    started = time.perf_counter()

    def on_start(total: int) -> None:
        if out_dir is not None:  # only once run_batch has checked every output
            make_out_dir(out_dir, args.out_dir)
        counted["total"] = total

    def on_row(row: dict[str, Any]) -> None:
        counted["done"] += 1
        done, total = counted["done"], counted["total"]
        elapsed = time.perf_counter() - started
        progress(format_progress(done, total, elapsed), done / total if total else 1.0)

    try:
        result = run_batch(
            args.root,
            args.job or job,
            params=params,
            glob=args.glob,
            executor=args.executor,
            jobs=args.jobs,
            timeout=args.timeout,
            scheduler=args.scheduler,
            out=args.out,
            resume=args.resume,
            retry_failed=args.retry_failed,
            on_start=on_start,
            on_row=on_row,
            exclude=exclude,
            output_of=output_of,
        )
    finally:
        progress.close()
    summary = result.summary
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    exit_code = result.exit_code
    if args.batch_action == "validate":
        from usdgrip.rules.report_formats import entry_fails, format_annotations, summarize

        entries = [_row_entry(args.root, row) for row in result.rows]
        if args.strict and any(entry_fails(e, strict=True) for e in entries):
            exit_code = 1
        if report_format is not None:
            from usdgrip.cli.validate import render_report, write_report

            codes = [r.code for r in select_rules(split_rules(args.rule) if args.rule else None)]
            if report_format == "jsonl":
                text = "".join(json.dumps(row) + "\n" for row in result.rows)
            else:
                text = render_report(report_format, entries, codes, args, exit_code)
            write_report(text, args.output, summarize(entries, args.strict), report_format)
        if args.annotations:
            sys.stdout.write(format_annotations(entries))
    elif report_format is not None:  # batch plan, batch evaluate
        write_grasp_report(report_format, args, result.rows)
    if args.format == "json":
        print(json.dumps({**summary, "out": args.out, "warnings": list(result.warnings)}, indent=2))
    else:
        problems = sorted(
            (row for row in result.rows if row["status"] != "ok"), key=lambda row: row["path"]
        )
        print(format_summary(summary, problems), file=sys.stderr)
        if args.out:
            print(f"results: {args.out}", file=sys.stderr)
    return exit_code


def write_grasp_report(
    report_format: str, args: argparse.Namespace, rows: list[dict[str, Any]]
) -> None:
    """``batch plan|evaluate --format jsonl|junit``: every row, on stdout or ``--output``."""
    from usdgrip.cli.validate import write_report
    from usdgrip.rules.report_formats import format_junit, summarize

    entries = [_physics_entry(args.root, row) for row in rows]
    if report_format == "jsonl":
        text = "".join(json.dumps(row) + "\n" for row in rows)
    else:
        text = format_junit(entries, name=f"usdgrip batch {args.batch_action}")
    write_report(text, args.output, summarize(entries), report_format)


def _physics_entry(root: str, row: dict[str, Any]) -> dict[str, Any]:
    """A ``batch plan|evaluate`` row as a report entry: its verdict is one issue."""
    entry = _row_entry(root, row)
    output = row.get("output") or {}
    if row.get("status") in ("ok", "findings"):
        if "held" in output:
            text = (
                f"{output['held']} of {output['grasps']} candidate(s) held; success rate "
                f"{100 * output['success_rate']:.0f}% of {output['trials']} trial(s)"
            )
            if output.get("first_success_rate") is not None:
                text += f", first candidate {100 * output['first_success_rate']:.0f}%"
        else:
            text = f"{output.get('grasps', 0)} grasp(s) planned"
        severity = "info" if row["status"] == "ok" else "failure"
        entry["issues"] = [
            {
                "code": "held" if "held" in output else "planned",
                "rule": f"batch {'evaluate' if 'held' in output else 'plan'}",
                "severity": severity,
                "prim": output.get("object", "/"),
                "message": text,
            }
        ]
        entry["summary"] = {**entry["summary"], severity: 1}
    return entry


def _check_report_options(args: argparse.Namespace) -> str | None:
    """The report format of ``batch validate`` (``None``: the summary only), options checked.

    Raises:
        ValueError: ``--output`` without a report format, or two things for stdout.
    """
    report = args.format if args.format in ("jsonl", "sarif", "junit") else None
    if args.output is not None and report is None:
        raise ValueError(
            f"--output {args.output}: is for a report (--format jsonl, sarif or junit); the "
            "summary goes to stderr (text) or stdout (json), the rows to --out"
        )
    if report is not None and args.output is None and is_standard_output(args.out):
        raise ValueError(
            f"--out {args.out} and the {report} report both go to standard output: give "
            "--output FILE for the report or another --out"
        )
    on_stdout = "the JSON summary" if args.format == "json" else None
    if report is not None and (args.output is None or is_standard_output(args.output)):
        on_stdout = f"the {report} report"
    if getattr(args, "annotations", None) and on_stdout:
        raise ValueError(
            f"--annotations {args.annotations} prints on stdout, where {on_stdout} goes: give "
            "--output FILE for the report, or --format text"
        )
    if args.output is not None:
        check_output(args.output)
    return report


def _row_entry(root: str, row: dict[str, Any]) -> dict[str, Any]:
    """A results row as a report entry (``path`` as the user would name the file)."""
    from usdgrip.rules import SEVERITIES

    base = Path(root)
    path = str(base / row["path"]) if base.is_dir() else root
    counts = dict.fromkeys(SEVERITIES, 0)
    for severity, count in (row.get("counts") or {}).items():
        counts[severity] = counts.get(severity, 0) + count
    entry: dict[str, Any] = {
        "path": path,
        "ok": row.get("status") == "ok",
        "issues": list(row.get("issues") or []),
        "summary": counts,
        "status": row.get("status"),
    }
    if row.get("warnings"):
        entry["warnings"] = list(row["warnings"])
    if row.get("status") in ("error", "timeout", "crashed"):
        entry["error"] = str(row.get("error") or row.get("status"))
    return entry
