"""``usdgrip plan OBJECT_FILE --object PRIM --gripper FILE:/Site ... -o grasps.yaml``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from usdgrip.cli.common import (
    add_gripper_model_argument,
    add_physics_arguments,
    add_support_arguments,
    build_evaluation_options,
    build_planning_options,
    format_pose,
    format_total_time,
    make_progress,
    print_grasps_summary,
    refuse_physics_without_evaluate,
)
from usdgrip.contracts import parse_gripper
from usdgrip.progress_reporter import add_progress_argument

NAME = "plan"
ORDER = 40
HELP = "plan collision-checked grasps for grippers on an object (Isaac-Grasp YAML)"
DESCRIPTION = """Plan grasp candidates for one object and one or more gripper sites, and write
them as an extended Isaac-Grasp YAML file (readable by Isaac Sim's grasp importer and
GraspGen's loader). Backends: antipodal (on the object's meshes), slots (its
GripperSlots) and lines (its SimReady grasp vector lines, grasp_identifier*); --method
defaults to every backend that applies. Candidates that do not
fit the gripper, collide at the grasp pose, or collide while retreating with the object
are dropped; the rest are ranked best-first per gripper. Poses are T_M_G: the grasp
frame G (+X closing, +Z approach) in the object prim's frame, metres.

Example:
  usdgrip plan examples/mug.usda --object /Mug --gripper examples/gripper.usda:/Gripper/tcp \\
      -o out/mug_grasps.yaml

--table puts the object on a plane just under its lowest point (along the stage's up
axis), --scene FILE --support PRIM on a prim of a scene file: grasps whose hand would cut
the support are dropped, and --evaluate simulates on the same support.

--evaluate then grasp-and-lifts every candidate in MuJoCo (as `usdgrip evaluate`, with
--trials, --force, --friction, --density, --jobs) and orders each gripper's candidates
best-first by measured success rate, then confidence (metadata.generation_mode says so;
confidence keeps the backend's score).

Exit 0 grasps found (with --evaluate: at least one held); 1 none survived or, with
--evaluate, none held (the file is still written, with the reasons in
metadata.warnings); 2 bad input (unreadable file, missing prim, no mesh, a mesh that
is not closed, a gripper prim that is not a site, no usable gripper left (a site without
a usable forward axis or max opening is skipped with a warning), bad --gripper syntax)."""

#: Candidates per gripper printed after planning (``--show``).
DEFAULT_SHOW = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="OBJECT_FILE", help="USD file holding the object")
    parser.add_argument("--object", required=True, metavar="PRIM", help="object prim, e.g. /Mug")
    parser.add_argument(
        "--gripper",
        required=True,
        action="append",
        metavar="FILE:/SITE",
        help="gripper file and site prim, e.g. examples/gripper.usda:/Gripper/tcp (repeatable; "
        "output order)",
    )
    parser.add_argument(
        "--max-candidates",
        type=int,
        default=100,
        metavar="N",
        help="candidates kept per gripper (default 100)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--method",
        metavar="LIST",
        help="comma-separated backends: antipodal,slots,lines (default: every one that applies)",
    )
    add_support_arguments(parser, scene_help="USD file of obstacles around the object")
    parser.add_argument(
        "--retreat",
        type=float,
        default=0.1,
        metavar="METRES",
        help="retreat distance along -approach with the object (default 0.1)",
    )
    add_gripper_model_argument(parser)
    parser.add_argument(
        "-o", "--output", required=True, metavar="YAML", help="output Isaac-Grasp YAML file"
    )
    parser.add_argument(
        "--show",
        type=int,
        default=DEFAULT_SHOW,
        metavar="N",
        help=f"best candidates printed per gripper (default {DEFAULT_SHOW}; 0 for none)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print nothing but errors (for scripts)"
    )
    physics = parser.add_argument_group(
        "physics (--evaluate)",
        "grasp-and-lift every candidate in MuJoCo, as `usdgrip evaluate`; the options below "
        "need --evaluate (refused without it)",
    )
    physics.add_argument(
        "--evaluate",
        action="store_true",
        help="simulate every candidate and order them by measured success rate, then confidence",
    )
    add_physics_arguments(physics, seed=False)
    add_progress_argument(parser)
    # Unset physics options read as None, so a given one is told apart from its default.
    parser.set_defaults(**dict.fromkeys(PHYSICS_OPTIONS))


#: The physics options: they apply only with --evaluate (refused without it).
PHYSICS_OPTIONS = ("trials", "force", "friction", "density", "jobs", "dump_scene", "engine")


def build_plan_evaluation_options(args: argparse.Namespace) -> Any:
    """The evaluation options of ``plan --evaluate``, else ``None``.

    Raises:
        ValueError: a physics option without ``--evaluate`` (nothing would use it), or a
            refused option (:func:`build_evaluation_options`).
    """
    import dataclasses

    from usdgrip.grasping.options import EvaluationOptions

    given = [name for name in PHYSICS_OPTIONS if getattr(args, name) is not None]
    if not args.evaluate:
        refuse_physics_without_evaluate(given)
        return None
    defaults = {f.name: f.default for f in dataclasses.fields(EvaluationOptions)}
    return build_evaluation_options(
        args, **{name: defaults[name] for name in PHYSICS_OPTIONS if name not in given}
    )


#: The command-line option of each request field (for messages).
_OPTIONS = {
    "grippers": "--gripper",
    "max_candidates_per_gripper": "--max-candidates",
    "seed": "--seed",
}
#: Stands in for the object when only the shared options are checked (``batch plan``,
#: whose objects are the files' default prims, checked file by file).
_ANY_OBJECT = ("any.usda", "/Object")


def build_request(
    object_file: str, object_prim: str, grippers: Sequence[Any], max_candidates: int, seed: int
):
    """The :class:`~usdgrip.contracts.GraspPlanningRequest` of the command-line options.

    Raises:
        ValueError: the request contract refuses an option (a bad prim path, a gripper
            listed twice, ``max_candidates`` outside 1..100000, a negative seed), naming
            the option; ``object_file``'s name is not UTF-8.
    """
    from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest
    from usdgrip.fileio import check_utf8_name

    check_utf8_name(object_file)

    try:
        geometry = GeometryRef(asset_path=os.path.normpath(object_file), prim_path=object_prim)
    except ValidationError as exc:
        raise ValueError(f"--object {object_prim!r}: {_first_error(exc)}") from None
    values = {"max_candidates_per_gripper": max_candidates, "seed": seed}
    try:
        return GraspPlanningRequest(
            object=GraspObject(geometry=geometry), grippers=tuple(grippers), **values
        )
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0])
        option = _OPTIONS.get(field, field)
        value = f" {values[field]}" if field in values else ""
        raise ValueError(f"{option}{value}: {_first_error(exc, field)}") from None


def check_request_options(grippers: Sequence[Any], max_candidates: int, seed: int) -> None:
    """Check the options a request shares across objects, before any object is read.

    Raises:
        ValueError: as :func:`build_request`.
    """
    build_request(*_ANY_OBJECT, grippers, max_candidates, seed)


def _first_error(exc: ValidationError, field: str = "") -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]).removeprefix(field).lstrip(".")
    message = err["msg"].removeprefix("Value error, ").replace("Input should be", "expected", 1)
    return f"{where}: {message}" if where else message


def run(args: argparse.Namespace) -> int:
    from usdgrip.cli import EXIT_FINDINGS, EXIT_OK, open_input
    from usdgrip.fileio import check_output, check_output_path, is_standard_output, is_streamed
    from usdgrip.grasping.grasp_evaluation import evaluate_grasps
    from usdgrip.grasping.inputs import StageSource, read_grasp_inputs
    from usdgrip.grasping.isaac_yaml import write_isaac_grasp
    from usdgrip.grasping.planner import plan_grasps

    started = time.perf_counter()
    if args.show < 0:
        raise ValueError(f"--show {args.show}: expected a number of candidates >= 0")
    # Both option records are made (and checked) once, before any file is read.
    evaluation = build_plan_evaluation_options(args)
    grippers = [parse_gripper(text) for text in args.gripper]
    planning = build_planning_options(args, methods=args.method, retreat_distance=args.retreat)
    output = Path(args.output)
    inputs = [args.file, *(g.asset_path for g in grippers), *filter(None, [args.scene])]
    check_output_path(output, inputs)
    if output.is_dir():
        raise ValueError(f"-o {output}: is a directory; expected a YAML file path")
    if not is_streamed(output) and not output.parent.is_dir():
        raise ValueError(f"-o {output}: folder {output.parent} does not exist; create it first")
    check_output(output)
    request = build_request(args.file, args.object, grippers, args.max_candidates, args.seed)
    if evaluation is not None and evaluation.jobs > 1:  # workers load while planning runs
        from usdgrip.grasping.physics.trial_workers import prestart

        prestart(evaluation.jobs, args.max_candidates * len(grippers), evaluation.trials)
    # Each input opened once (its USD warnings restated once), refused as the output, nor any
    # layer it reads; planning and physics read these stages, and the inputs once.
    bar = make_progress(args)
    with bar.active():
        bar(f"reading object {request.object.geometry}", 0.0)
        reading = time.perf_counter()
        stages = StageSource({file: open_input(file, output) for file in dict.fromkeys(inputs)})
        read = read_grasp_inputs(
            request.object.geometry,
            request.grippers,
            table=args.table,
            scene=args.scene,
            support=args.support,
            gripper_model=args.gripper_model,
            stages=stages,
        )
        reading = time.perf_counter() - reading
        result = plan_grasps(request, scene=args.scene, options=planning, inputs=read, progress=bar)
        if evaluation is not None and result.grasps:
            result = evaluate_grasps(
                result, options=evaluation, inputs=read, rank=True, progress=bar
            )
    write_isaac_grasp(result, output)
    if not args.quiet:  # the summary goes to stderr when the grasps go to stdout
        summary_to = sys.stderr if is_standard_output(output) else sys.stdout
        print_summary(result, output, len(grippers), args.show, summary_to)
        if args.evaluate and result.grasps:
            print_grasps_summary(result, output, args.show, summary_to)
        parts = {"reading the files": reading, "planning": result.metadata.runtime_seconds}
        if args.evaluate and result.grasps:
            parts["physics"] = (result.metadata.physics or {}).get("runtime_seconds", 0.0)
        summary_to.write(format_total_time(started, parts))
        for warning in result.metadata.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    if args.evaluate:
        held = any(c.physics and c.physics.success_rate > 0 for c in result.grasps.values())
        return EXIT_OK if held else EXIT_FINDINGS
    return EXIT_OK if result.grasps else EXIT_FINDINGS


def print_summary(result, output: Path, requested: int, show: int, stream: TextIO) -> None:
    """Print what was written and the best ``show`` candidates of each gripper."""
    grippers = result.grippers
    stream.write(
        f"wrote {output}: {len(result.grasps)} candidate(s) for {len(grippers)} of {requested} "
        "gripper(s) "
        f"in {result.metadata.runtime_seconds:.2f} s (pose frame {result.metadata.pose_frame}, "
        "metres)\n"
    )
    for gripper in grippers:
        candidates = result.get_candidates(gripper)
        stream.write(f"  {gripper}: {len(candidates)} candidate(s)\n")
        for c in candidates[:show]:
            q = c.orientation
            width = f" width {c.width:.3f}" if c.width is not None else ""
            if c.physics is not None:
                width += f" held {100 * c.physics.success_rate:.0f}%"
            stream.write(
                f"    {c.candidate_id}  {c.confidence:.3f}  {c.generation_method:<9} "
                f"{format_pose(c.position, q.w, q.xyz)}{width}\n"
            )
    if not result.grasps:
        stream.write("  no candidate survived; see the warnings\n")
