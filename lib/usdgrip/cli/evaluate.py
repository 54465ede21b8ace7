"""``usdgrip evaluate OBJECT_FILE --gripper FILE:/SITE (--grasps IN | --targets IN | --lines)``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from usdgrip.cli.common import (
    add_gripper_model_argument,
    add_physics_arguments,
    add_support_arguments,
    build_evaluation_options,
    engine_label,
    format_physics_header,
    format_pose,
    format_summary_lines,
    format_total_time,
    make_progress,
    print_grasps_summary,
)
from usdgrip.progress_reporter import add_progress_argument

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

--grasps IN.yaml: an Isaac-Grasp file of any writer (`usdgrip plan`, before or after
--evaluate, Isaac Sim's Grasp Editor, GraspGen, GraspDataGen). OUT is the same file, order,
keys and poses unchanged, with a `physics` mapping per grasp and metadata.physics (another
tool's file gains a `metadata`). Poses of a gripper frame other than the site's grasp
frame (the file's gripper_frame / gripper_frame_link, or --gripper-frame PRIM) are
converted with the transform between that prim and the site in the gripper file; a file
that names no frame is read as the site's grasp frame. A warning (and metadata) says
what was assumed.
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
  usdgrip evaluate --gripper-test \\
      examples/grippers/prismatic_two_finger.usda:/PrismaticGripper/palm/tcp -o out/fet028.json

--gripper-test FILE:/SITE is SimReady's FET028 on the CPU (docs/physics.md, "Gripper
test"): the gripper's own articulation closes on a cube (0.7 x max opening, 0.85 x max
payload) and a sphere (0.5 x payload), lifts 20 cm, shakes 2 s at 2 Hz, releases; exit 0
both held (or a gripper without finger joints, skipped), 1 not, 2 bad input.

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
    parser.add_argument(
        "file", metavar="OBJECT_FILE", nargs="?", help="USD file holding the object"
    )
    parser.add_argument(
        "--object",
        metavar="PRIM",
        help="object prim, e.g. /Mug (required, but with --lines: default the lines' object)",
    )
    parser.add_argument(
        "--gripper",
        metavar="FILE:/SITE",
        help="gripper file and site prim, e.g. examples/gripper.usda:/Gripper/tcp",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--grasps",
        metavar="IN.yaml",
        help="Isaac-Grasp file of any writer (usdgrip, Isaac Sim Grasp Editor, GraspGen, "
        "GraspDataGen)",
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
    what.add_argument(
        "--gripper-test",
        metavar="FILE:/SITE",
        help="FET028 on the CPU: the gripper's own fingers close on SimReady's cube and "
        "sphere, lift, shake and release (no OBJECT_FILE; -o report.json optional)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="output file (YAML or JSON); required, but with --lines: default stdout",
    )
    parser.add_argument(
        "--gripper-frame",
        metavar="PRIM",
        help="--grasps: the prim of the gripper file the poses are of (default: the file's "
        "gripper_frame / gripper_frame_link, else the site's grasp frame)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        help="--lines report format (default: json when -o ends in .json, else text); "
        "--gripper-test report format (default: json)",
    )
    parser.add_argument(
        "--candidates-per-line",
        type=int,
        metavar="N",
        help=f"--lines: grasps planned and simulated per line (default {CANDIDATES_PER_LINE})",
    )
    add_physics_arguments(parser)
    add_progress_argument(parser)
    add_support_arguments(
        parser,
        scene_help="USD file holding the support (with --support; planning's obstacles "
        "with --lines)",
    )
    add_gripper_model_argument(parser)
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


def run(args: argparse.Namespace) -> int:
    # The simulation here renders nothing: MuJoCo's import then skips GLFW and the Python
    # child GLFW's import starts to probe its library (about 0.1 s). Read at its import.
    os.environ.setdefault("MUJOCO_GL", "disable")
    if args.gripper_test is None and not args.lines:
        _start_workers_early(args)  # before this command's own imports
    from usdgrip.cli import EXIT_FINDINGS, EXIT_OK, open_input
    from usdgrip.contracts import parse_gripper
    from usdgrip.fileio import (
        check_output,
        check_output_path,
        is_standard_output,
        write_text_output,
    )
    from usdgrip.grasping.grasp_evaluation import evaluate_grasps, read_evaluation_inputs
    from usdgrip.grasping.inputs import StageSource
    from usdgrip.grasping.isaac_yaml import read_isaac_grasp, write_isaac_grasp
    from usdgrip.grasping.target_evaluation import evaluate_targets, read_target_samples

    started = time.perf_counter()
    if args.gripper_test is not None:
        return run_gripper_test_cli(args)
    for option, value in (("OBJECT_FILE", args.file), ("--gripper FILE:/SITE", args.gripper)):
        if value is None:
            raise ValueError(f"{option} is required (but with --gripper-test)")
    if args.show is not None and args.show < 0:
        raise ValueError(f"--show {args.show}: expected a number of candidates >= 0")
    # Refused before anything is read: the physics simulates only what the object rests on,
    # so a --scene needs its --support.
    options = build_evaluation_options(args, scene=args.scene)
    if args.lines:
        if args.show is not None:
            raise ValueError(
                f"--show {args.show}: not with --lines (the report lists every line's grasp)"
            )
        if args.gripper_frame is not None:
            raise ValueError(f"--gripper-frame {args.gripper_frame}: only with --grasps")
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
    if args.gripper_frame is not None and not args.grasps:
        raise ValueError(f"--gripper-frame {args.gripper_frame}: only with --grasps")
    gripper = parse_gripper(args.gripper)
    output = Path(args.output)
    data_file = args.grasps or args.targets
    inputs = [args.file, gripper.asset_path, data_file, *filter(None, [args.scene])]
    check_output_path(output, inputs)
    check_output(output)
    geometry = _object_ref(args.file, args.object)
    source: Any = (
        read_isaac_grasp(args.grasps) if args.grasps else read_target_samples(args.targets)
    )
    if args.jobs > 1:  # fewer candidates than pay for a worker: the early one is stopped
        from usdgrip.grasping.physics.trial_workers import prestart

        count = len(source.grasps) if args.grasps else len(source.get("candidates", ()))
        prestart(args.jobs, count, args.trials)
    files = [args.file, gripper.asset_path, *filter(None, [args.scene])]
    bar = make_progress(args)
    with bar.active():
        bar(f"reading {args.file}", 0.0)
        reading = time.perf_counter()
        stages = StageSource({f: open_input(f, output) for f in dict.fromkeys(files)})
        read = read_evaluation_inputs(geometry, [gripper], options, None, stages)
        reading = time.perf_counter() - reading
        if args.grasps:
            result = evaluate_grasps(
                source,
                geometry,
                gripper,
                options=options,
                inputs=read,
                stages=stages,
                progress=bar,
                gripper_frame=args.gripper_frame,
                grasps_name=args.grasps,
            )
        else:
            report = evaluate_targets(
                source, geometry, gripper, options=options, inputs=read, progress=bar
            )
    summary_to = sys.stderr if is_standard_output(output) else sys.stdout
    if args.grasps:
        write_isaac_grasp(result, output)
        held = any(c.physics and c.physics.success_rate > 0 for c in result.grasps.values())
        known = len(source.metadata.warnings) if source.metadata is not None else 0
        warnings = result.metadata.warnings[known:]
        if not args.quiet:
            print_grasps_summary(result, output, show, summary_to)
            physics = (result.metadata.physics or {}).get("runtime_seconds", 0.0)
            parts = {"reading the files": reading, "physics": physics}
            summary_to.write(format_total_time(started, parts))
    else:
        write_text_output(output, json.dumps(report, indent=1) + "\n")
        held = report["summary"]["held_candidates"] > 0
        warnings = report["warnings"]
        if not args.quiet:
            print_targets_summary(report, output, show, summary_to)
            physics = report["physics"].get("runtime_seconds", 0.0)
            parts = {"reading the files": reading, "physics": physics}
            summary_to.write(format_total_time(started, parts))
    if not args.quiet:
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
    return EXIT_OK if held else EXIT_FINDINGS


def _start_workers_early(args: argparse.Namespace) -> None:
    """``--jobs N`` with a CPU engine: start the simulation workers before anything is read.

    They load numpy and MuJoCo (about 0.3 s) while this process imports its own modules,
    reads the grasp file and the stages and builds the object, so they are ready when the
    simulation starts; a grasp file too small to pay for them stops them again. None starts
    for more jobs than the machine allows (refused next); a command that fails later kills
    them as it exits.
    """
    from usdgrip.grasping.physics.engines import get_engine
    from usdgrip.grasping.physics.trial_workers import check_jobs, prestart

    if args.jobs <= 1 or get_engine(args.engine).batched or check_jobs(args.jobs):
        return
    prestart(args.jobs)


def run_gripper_test_cli(args: argparse.Namespace) -> int:
    """``--gripper-test FILE:/SITE``: exit 0 both shapes held (or skipped), 1 not, 2 bad input."""
    import json

    from usdgrip.cli import EXIT_FINDINGS, EXIT_OK
    from usdgrip.contracts import parse_gripper
    from usdgrip.fileio import check_output, check_output_path, write_text_output
    from usdgrip.grasping.gripper_check import check_gripper

    for option, value in (
        ("OBJECT_FILE", args.file),
        ("--gripper", args.gripper),
        ("--object", args.object),
        ("--gripper-frame", args.gripper_frame),
        ("--scene", args.scene),
        ("--support", args.support),
        ("--candidates-per-line", args.candidates_per_line),
    ):
        if value is not None:
            raise ValueError(
                f"{option} {value}: not with --gripper-test (it tests the gripper alone)"
            )
    if args.engine != "mujoco":
        raise ValueError(
            f"--engine {args.engine}: not with --gripper-test (FET028's cube and sphere run on "
            "the CPU engine, mujoco)"
        )
    trials = 1 if args.trials is None else args.trials
    if args.output is not None:
        check_output_path(Path(args.output), [parse_gripper(args.gripper_test).asset_path])
        check_output(Path(args.output))
    report = check_gripper(parse_gripper(args.gripper_test), trials=trials, seed=args.seed or 0)
    summary = format_gripper_test(report)
    as_json = (args.format or "json") == "json"
    text = json.dumps(report, indent=2) + "\n" if as_json else summary + "\n"
    if args.output is not None:
        write_text_output(args.output, text)
    if not args.quiet and (as_json or args.output is not None):
        print(summary, file=sys.stderr if args.output is None else sys.stdout)
    if args.output is None:
        sys.stdout.write(text)
    return EXIT_OK if report["passed"] or report["skipped"] else EXIT_FINDINGS


def format_gripper_test(report: dict[str, Any]) -> str:
    """The summary lines of a ``--gripper-test`` report."""
    head = f"gripper test {report['gripper']}: "
    if report["skipped"]:
        return head + f"skipped: {report['skipped']}"
    lines = [
        head
        + ("PASS" if report["passed"] else "FAIL")
        + f" ({report['trials']} trial(s) per object)"
    ]
    for shape, entry in report["objects"].items():
        first = entry["results"][0]
        lines.append(
            f"  {shape:6s} {entry['held']}/{len(entry['results'])} held  "
            f"size {first['size']:.4f} m  "
            f"mass {first['mass']:.3f} kg  outcome {first['outcome']}  displacement "
            f"{first['displacement'] * 1000:.1f} mm  pad force {first['pad_force']:.1f} N"
        )
    return "\n".join(lines)


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
    from usdgrip.contracts import parse_gripper
    from usdgrip.fileio import (
        check_output,
        check_output_path,
        display_path,
        is_standard_output,
        write_text_output,
    )
    from usdgrip.grasping.grasp_evaluation import read_evaluation_inputs
    from usdgrip.grasping.inputs import StageSource, find_line_object
    from usdgrip.grasping.line_evaluation import evaluate_grasp_lines

    # FET005 puts the asset on a floor: a table unless --support names the support.
    options = build_evaluation_options(args, table=args.table or not args.support)
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
    stages = StageSource({file: open_input(file, output) for file in files})
    geometry = _object_ref(args.file, args.object or find_line_object(args.file, stages))
    bar = make_progress(args)
    with bar.active():
        read = read_evaluation_inputs(geometry, [gripper], options, None, stages)
        report = evaluate_grasp_lines(
            geometry,
            gripper,
            options=options,
            inputs=read,
            candidates_per_line=per_line or CANDIDATES_PER_LINE,
            progress=bar,
        )
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
    summary, meta = report["summary"], report["physics"] or {}
    params = meta.get("parameters", {})
    engine = f"{engine_label(meta)}, " if "engine_version" in meta else ""
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


def print_targets_summary(report: dict[str, Any], output: Path, show: int, stream: TextIO) -> None:
    """Overall success, outcome counts and the ``show`` best multi-hand candidates."""
    meta = report["physics"]
    candidates = report["candidates"]
    what = f"{len(candidates)} candidate(s) of {report['hands']} hand(s) closing together"
    stream.write(format_physics_header(output, meta, what))
    for line in format_summary_lines(report["summary"], meta.get("collides_open_with")):
        stream.write(line + "\n")
    best = sorted(candidates, key=lambda c: (-c["success_rate"], c["index"]))[:show]
    if best:
        stream.write(f"  top {len(best)} (candidate, success rate, first trial, slots):\n")
    for c in best:
        slots = ", ".join(str(t.get("slot", "?")) for t in c["targets"])
        stream.write(
            f"    #{c['index']:<4} {100 * c['success_rate']:3.0f}%  {c['outcome']:<13} {slots}\n"
        )
