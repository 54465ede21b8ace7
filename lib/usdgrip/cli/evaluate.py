"""``usdgrip evaluate OBJECT_FILE --gripper FILE:/SITE (--grasps IN | --targets IN | --lines)``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from usdgrip.contracts import parse_gripper

NAME = "evaluate"
ORDER = 45
HELP = "grasp-and-lift grasps in MuJoCo: which candidates hold the object"
DESCRIPTION = """Simulate every grasp candidate in MuJoCo (CPU): place the open gripper,
close it with the grip force, lift 0.10 m along the stage's up axis and shake; a
candidate holds when both fingers still touch the object and it moved less than 2 cm in
the hand. Outcomes: held, collides_open, missed, dropped_lift, slipped_lift,
dropped_shake, slipped_shake, unstable. --trials N repeats with seeded perturbations of
the pose, friction and mass; success_rate = trials held / N. docs/physics.md has the
protocol and every parameter.

--grasps IN.yaml (from `usdgrip plan`): OUT is the same Isaac-Grasp file, order and
candidate ids unchanged, with a `physics` mapping per grasp and metadata.physics.
--targets SAMPLES.json (from `usdgrip sample --format json`): every candidate's
end-effector targets are that many hands closing and lifting together (two-handed slot
groups); OUT is JSON with per candidate its targets, outcome and success_rate.

Mass: UsdPhysics.MassAPI (mass, else density x volume), else --density (default 400
kg/m3). Friction: the UsdPhysics.MaterialAPI material bound to the object's colliders,
else --friction (default 0.8). Grip force: --force, else the site's
gripper:maxGripForce, else 50 N per finger. Every default taken is a warning.

--lines (FET005 on the CPU, docs/graspable-props.md): for each SimReady grasp vector line
(grasp_identifier*) of the object, plan --candidates-per-line grasps on it (`usdgrip plan
--method lines`) and grasp-and-lift them; the object rests on a table unless --scene/--support
name its support. --object defaults to the object the lines belong to. Reports per line
whether a grasp held (its id and pose), the best success rate and the outcome counts, as
text or JSON (--format; -o OUT.json picks json), on stdout or in -o.

Examples:
  usdgrip evaluate examples/mug.usda --object /Mug --gripper examples/gripper.usda:/Gripper/tcp \\
      --grasps out/mug_grasps.yaml --table --trials 3 -o out/mug_evaluated.yaml
  usdgrip evaluate examples/graspable_prop.usda --gripper examples/gripper.usda:/Gripper/tcp \\
      --lines -o out/graspable_prop_lines.json

Exit 0 at least one candidate held (--lines: every grasp line has a grasp that held); 1 none
held (--lines: some line has none, e.g. a line that misses the object; the output is still
written); 2 bad input (unreadable file, missing prim, no mesh, not a grasp file or samples
file, --lines on an object without grasp lines, a bad option)."""

#: Candidates listed in the summary (``--show``).
DEFAULT_SHOW = 10
#: ``--candidates-per-line`` default (``usdgrip.grasping.line_evaluation``; not imported
#: here so that ``--help`` stays fast).
CANDIDATES_PER_LINE = 24


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="OBJECT_FILE", help="USD file holding the object")
    parser.add_argument(
        "--object",
        metavar="PRIM",
        help="object prim, e.g. /Mug (required, but with --lines: default the lines' object)",
    )
    parser.add_argument(
        "--gripper",
        required=True,
        metavar="FILE:/SITE",
        help="gripper file and site prim, e.g. examples/gripper.usda:/Gripper/tcp",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--grasps", metavar="IN.yaml", help="Isaac-Grasp file written by `usdgrip plan`"
    )
    what.add_argument(
        "--targets",
        metavar="SAMPLES.json",
        help="`usdgrip sample --format json` output: each candidate's targets are hands "
        "that close and lift together",
    )
    what.add_argument(
        "--lines",
        action="store_true",
        help="FET005 on the CPU: does a grasp on each grasp vector line (grasp_identifier*) hold",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="output file (YAML or JSON); required, but with --lines: default stdout",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        help="--lines report format (default: json when -o ends in .json, else text)",
    )
    parser.add_argument(
        "--candidates-per-line",
        type=int,
        metavar="N",
        help=f"--lines: grasps planned and simulated per line (default {CANDIDATES_PER_LINE})",
    )
    add_physics_arguments(parser)
    parser.add_argument(
        "--scene", metavar="SCENE_FILE", help="USD file holding the support (with --support)"
    )
    parser.add_argument("--support", metavar="PRIM", help="scene prim the object rests on")
    parser.add_argument(
        "--gripper-model",
        choices=("auto", "proxy", "geometry"),
        default="auto",
        help="gripper collision shapes besides the closing pads (as in `usdgrip plan`)",
    )
    parser.add_argument(
        "--show",
        type=int,
        default=None,
        metavar="N",
        help=f"best candidates listed in the summary (default {DEFAULT_SHOW}; 0 for none)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print nothing but errors (for scripts)"
    )


def add_physics_arguments(parser: argparse.ArgumentParser, *, seed: bool = True) -> None:
    """The simulation options ``evaluate`` and ``plan --evaluate`` share (``plan`` has --seed)."""
    parser.add_argument(
        "--trials", type=int, default=1, metavar="N", help="trials per candidate (default 1)"
    )
    parser.add_argument(
        "--force",
        type=float,
        metavar="N",
        help="grip force per finger, newtons (default: gripper:maxGripForce, else 50)",
    )
    parser.add_argument(
        "--friction",
        type=float,
        metavar="MU",
        help="friction when no physics material is bound (default 0.8)",
    )
    parser.add_argument(
        "--density",
        type=float,
        metavar="RHO",
        help="density when no mass or density is authored, kg/m3 (default 400)",
    )
    parser.add_argument(
        "--table",
        action="store_true",
        help="the object rests on a plane just under its lowest point (stage up axis)",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="worker processes (default 1)"
    )
    if seed:
        parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def check_physics_options(args: argparse.Namespace) -> None:
    """Refuse bad simulation options before any file is read, naming the option.

    Raises:
        ValueError: a count below 1, a force, friction or density that is not > 0, or
            ``--table`` with ``--support``.
    """
    import math

    for option, value, minimum in (("--trials", args.trials, 1), ("--jobs", args.jobs, 1)):
        if value < minimum:
            raise ValueError(f"{option} {value}: expected an integer >= {minimum}")
    if args.seed < 0:
        raise ValueError(f"--seed {args.seed}: expected an integer >= 0")
    for option, value, unit in (
        ("--force", args.force, " N"),
        ("--friction", args.friction, ""),
        ("--density", args.density, " kg/m3"),
    ):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"{option} {value:g}: expected a finite value > 0{unit}")
    if args.table and args.support:
        raise ValueError("--table and --support: choose one thing the object rests on")
    if args.support and not args.scene:
        raise ValueError(f"--support {args.support}: needs --scene FILE holding that prim")


def physics_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The evaluation keywords of the parsed options."""
    return {
        "trials": args.trials,
        "force": args.force,
        "friction": args.friction,
        "density": args.density,
        "scene": args.scene if args.support else None,
        "support": args.support,
        "table": args.table,
        "gripper_model": args.gripper_model,
        "jobs": args.jobs,
        "seed": args.seed,
    }


def run(args: argparse.Namespace) -> int:
    from usdgrip.cli import EXIT_FINDINGS, EXIT_OK, open_input
    from usdgrip.cli.plan import _ProgressBar
    from usdgrip.fileio import (
        check_output,
        check_output_path,
        is_standard_output,
        write_text_output,
    )
    from usdgrip.grasping.grasp_evaluation import evaluate_grasps, evaluate_targets
    from usdgrip.grasping.isaac_yaml import read_isaac_grasp, write_isaac_grasp

    if args.show is not None and args.show < 0:
        raise ValueError(f"--show {args.show}: expected a number of candidates >= 0")
    check_physics_options(args)
    if args.scene and not args.support:
        raise ValueError(
            f"--scene {args.scene}: needs --support PRIM (the evaluation simulates only what "
            "the object rests on), or use --table"
        )
    if args.lines:
        if args.show is not None:
            raise ValueError(
                f"--show {args.show}: not with --lines (the report lists every line's grasp)"
            )
        return run_lines(args)
    show = DEFAULT_SHOW if args.show is None else args.show
    for option, value in (
        ("--format", args.format),
        ("--candidates-per-line", args.candidates_per_line),
    ):
        if value is not None:
            raise ValueError(f"{option} {value}: only with --lines")
    for option, value in (("--object PRIM", args.object), ("-o OUT", args.output)):
        if value is None:
            raise ValueError(f"{option} is required with --grasps and --targets")
    gripper = parse_gripper(args.gripper)
    output = Path(args.output)
    data_file = args.grasps or args.targets
    inputs = [args.file, gripper.asset_path, data_file, *filter(None, [args.scene])]
    check_output_path(output, inputs)
    check_output(output)
    geometry = _object_ref(args.file, args.object)
    if args.grasps:
        source: Any = read_isaac_grasp(args.grasps)
    else:
        from usdgrip.grasping.grasp_evaluation import read_target_samples

        source = read_target_samples(args.targets)
    stages = {f: open_input(f, output) for f in dict.fromkeys([args.file, gripper.asset_path])}
    if args.scene:
        stages[args.scene] = open_input(args.scene, output)
    bar = _ProgressBar(sys.stderr, enabled=not args.quiet and sys.stderr.isatty())
    keywords = physics_keywords(args)
    try:
        if args.grasps:
            result = evaluate_grasps(
                source, geometry, gripper, stages=stages, progress=bar, **keywords
            )
        else:
            report = evaluate_targets(
                source, geometry, gripper, stages=stages, progress=bar, **keywords
            )
    finally:
        bar.close()
    summary_to = sys.stderr if is_standard_output(output) else sys.stdout
    if args.grasps:
        write_isaac_grasp(result, output)
        held = any(c.physics and c.physics.success_rate > 0 for c in result.grasps.values())
        warnings = result.metadata.warnings[len(source.metadata.warnings) :]
        if not args.quiet:
            print_grasps_summary(result, output, show, summary_to)
    else:
        write_text_output(output, json.dumps(report, indent=1) + "\n")
        held = report["summary"]["held_candidates"] > 0
        warnings = report["warnings"]
        if not args.quiet:
            print_targets_summary(report, output, show, summary_to)
    if not args.quiet:
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
    return EXIT_OK if held else EXIT_FINDINGS


def _object_ref(file: str, prim: str) -> Any:
    """The :class:`~usdgrip.contracts.GeometryRef` of ``--object``, a bad path named."""
    from pydantic import ValidationError

    from usdgrip.contracts import GeometryRef

    try:
        return GeometryRef(asset_path=file, prim_path=prim)
    except ValidationError as exc:
        message = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise ValueError(f"--object {prim!r}: {message}") from None


def run_lines(args: argparse.Namespace) -> int:
    """``--lines``: per grasp vector line, does a planned grasp on it hold (FET005)."""
    from usdgrip.cli import EXIT_FINDINGS, EXIT_OK, open_input
    from usdgrip.cli.plan import _ProgressBar
    from usdgrip.fileio import (
        check_output,
        check_output_path,
        display_path,
        is_standard_output,
        write_text_output,
    )
    from usdgrip.grasping.line_evaluation import evaluate_grasp_lines, find_line_object

    per_line = args.candidates_per_line
    if per_line is not None and per_line < 1:
        raise ValueError(f"--candidates-per-line {per_line}: expected an integer >= 1")
    gripper = parse_gripper(args.gripper)
    output = args.output
    fmt = args.format or ("json" if output and output.lower().endswith(".json") else "text")
    if output is not None:
        check_output_path(output, [args.file, gripper.asset_path, *filter(None, [args.scene])])
        try:
            check_output(output)
        except ValueError as exc:
            raise ValueError(f"-o {exc}") from None
    files = dict.fromkeys([args.file, gripper.asset_path, *filter(None, [args.scene])])
    stages = {file: open_input(file, output) for file in files}
    geometry = _object_ref(args.file, args.object or find_line_object(args.file, stages))
    keywords = physics_keywords(args)
    keywords["table"] = keywords["table"] or None  # default: a table unless --support
    bar = _ProgressBar(sys.stderr, enabled=not args.quiet and sys.stderr.isatty())
    try:
        report = evaluate_grasp_lines(
            geometry,
            gripper,
            candidates_per_line=per_line or CANDIDATES_PER_LINE,
            stages=stages,
            progress=bar,
            **keywords,
        )
    finally:
        bar.close()
    text = json.dumps(report, indent=1) + "\n" if fmt == "json" else format_lines_report(report)
    summary = report["summary"]
    if output is None:
        sys.stdout.write(text)
    else:
        write_text_output(output, text)
        if not args.quiet:
            print(
                f"wrote {display_path(output)} ({fmt}): {summary['held']} of "
                f"{summary['lines']} grasp line(s) held",
                file=sys.stderr if is_standard_output(output) else sys.stdout,
            )
    if not args.quiet:
        for warning in report["warnings"]:
            print(f"warning: {warning}", file=sys.stderr)
    return EXIT_OK if summary["every_line_held"] else EXIT_FINDINGS


def format_lines_report(report: dict[str, Any]) -> str:
    """The ``--lines`` report as text: a header, then per line its verdict and the grasp."""
    from usdgrip.cli.plan import format_pose

    summary, meta = report["summary"], report["physics"] or {}
    params = meta.get("parameters", {})
    engine = f"MuJoCo {meta['engine_version']}, " if "engine_version" in meta else ""
    out = [
        f"{report['object']}: {summary['held']} of {summary['lines']} grasp line(s) held",
        f"  gripper {report['gripper']}, support {meta.get('support', 'none')}, "
        f"{report['candidates_per_line']} grasp(s) per line, {params.get('trials', 1)} "
        f"trial(s) each ({engine}seed {meta.get('seed', 0)}, {report['runtime_seconds']:.2f} s)",
    ]
    width = max(len(line["name"]) for line in report["lines"])
    for line in report["lines"]:
        verdict = line["verdict"].replace("_", " ")
        verdict = verdict if line["held"] else verdict.upper()
        head = f"  {line['name']:<{width}}  {verdict:<12}  {line['candidates']:>3} grasp(s)"
        if line["note"]:
            out.append(f"{head}: {line['note']}")
            continue
        outcomes = ", ".join(f"{k} {v}" for k, v in line["outcomes"].items())
        out.append(f"{head}, best {100 * line['best_success_rate']:.0f}%; outcomes: {outcomes}")
        grasp = line["grasp"]
        if grasp is not None:
            pose = format_pose(
                grasp["position"], grasp["orientation"]["w"], grasp["orientation"]["xyz"]
            )
            out.append(f"      by {grasp['id']}  {pose} width {grasp['width']:.3f}")
    return "\n".join(out) + "\n"


def _summary_lines(summary: dict[str, Any]) -> list[str]:
    outcomes = ", ".join(f"{k} {v}" for k, v in summary["outcomes"].items()) or "none"
    return [
        f"  held: {summary['held_candidates']} of {summary['candidates']} candidate(s); "
        f"success rate {100 * summary['success_rate']:.0f}% of {summary['trials']} trial(s)",
        f"  outcomes: {outcomes}",
    ]


def _header(output: Path, meta: dict[str, Any], what: str) -> str:
    params = meta.get("parameters", {})
    return (
        f"wrote {output}: {what}, {params.get('trials', 1)} trial(s) each, "
        f"{meta.get('runtime_seconds', 0.0):.2f} s (MuJoCo {meta.get('engine_version', '?')}, "
        f"seed {meta.get('seed', 0)}, support {meta.get('support', 'none')})\n"
    )


def print_grasps_summary(result: Any, output: Path, show: int, stream: TextIO) -> None:
    """Overall success, by generation method, outcome counts and the ``show`` best candidates."""
    from usdgrip.grasping.physics import summarize_evaluations

    meta = result.metadata.physics or {}
    per_gripper = meta.get("grippers")
    first = next(iter(per_gripper.values())) if per_gripper else meta
    evaluated = [c for c in result.grasps.values() if c.physics is not None]
    stream.write(_header(output, first, f"{len(evaluated)} candidate(s) evaluated"))

    class _Row:  # summarize_evaluations reads outcomes, trials and success_rate
        def __init__(self, physics: Any) -> None:
            self.trials = physics.trials
            self.success_rate = physics.success_rate
            self.outcomes = dict(physics.outcomes)

    for line in _summary_lines(summarize_evaluations([_Row(c.physics) for c in evaluated])):
        stream.write(line + "\n")
    methods: dict[str, list[Any]] = {}
    for c in evaluated:
        methods.setdefault(c.generation_method or "unknown", []).append(c)
    parts = []
    for method, group in methods.items():
        s = summarize_evaluations([_Row(c.physics) for c in group])
        parts.append(
            f"{method} {s['held_candidates']}/{s['candidates']} held "
            f"({100 * s['success_rate']:.0f}% of trials)"
        )
    if parts:
        stream.write(f"  by method: {'; '.join(parts)}\n")
    best = sorted(
        evaluated, key=lambda c: (-c.physics.success_rate, -c.confidence, c.candidate_id)
    )[:show]
    if best:
        stream.write(f"  top {len(best)} (success rate, confidence, method, first trial):\n")
    for c in best:
        stream.write(
            f"    {c.candidate_id}  {100 * c.physics.success_rate:3.0f}%  {c.confidence:.3f}  "
            f"{c.generation_method or '-':<9} {c.physics.outcome}\n"
        )


def print_targets_summary(report: dict[str, Any], output: Path, show: int, stream: TextIO) -> None:
    """Overall success, outcome counts and the ``show`` best multi-hand candidates."""
    meta = report["physics"]
    candidates = report["candidates"]
    what = f"{len(candidates)} candidate(s) of {report['hands']} hand(s) closing together"
    stream.write(_header(output, meta, what))
    for line in _summary_lines(report["summary"]):
        stream.write(line + "\n")
    best = sorted(candidates, key=lambda c: (-c["success_rate"], c["index"]))[:show]
    if best:
        stream.write(f"  top {len(best)} (candidate, success rate, first trial, slots):\n")
    for c in best:
        slots = ", ".join(str(t.get("slot", "?")) for t in c["targets"])
        stream.write(
            f"    #{c['index']:<4} {100 * c['success_rate']:3.0f}%  {c['outcome']:<13} {slots}\n"
        )
