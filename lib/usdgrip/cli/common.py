"""What ``plan``, ``evaluate`` and ``batch plan`` share: options, their records, the summaries.

Not a command (no ``NAME``): the support options (``--table``, ``--scene``,
``--support``), the gripper model, the physics options, the option records built from
them once (:func:`build_planning_options`, :func:`build_evaluation_options`, refusals
worded with the flag), the progress bar, pose formatting and the physics summary.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

#: Gripper collision models (``--gripper-model``; :data:`usdgrip.grasping.inputs.GRIPPER_MODELS`,
#: not imported here so that ``--help`` stays fast).
GRIPPER_MODELS = ("auto", "proxy", "geometry", "articulation")
#: Simulation engines (``--engine``; :data:`usdgrip.grasping.physics.engines.ENGINES`, not
#: imported here so that ``--help`` stays fast; tests/test_physics_mjwarp.py checks they match).
ENGINES = ("mujoco", "mjwarp")


def parse_positive_int(text: str) -> int:
    """An argparse ``type``: an integer >= 1 (``batch --jobs``, ``--max-variant-selections``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not >= 1")
    return value


def add_support_arguments(parser: Any, *, scene_help: str) -> None:
    """``--table``, ``--scene FILE`` and ``--support PRIM``: what the object rests on."""
    parser.add_argument(
        "--table",
        action="store_true",
        help="the object rests on a plane just under its lowest point (stage up axis): "
        "grasps whose hand cuts it are dropped, and the physics puts the object on it",
    )
    parser.add_argument("--scene", metavar="SCENE_FILE", help=scene_help)
    parser.add_argument(
        "--support",
        metavar="PRIM",
        help="scene prim the object rests on (ignored while the object still rests on it "
        "in the retreat check; simulated under the object)",
    )


def add_gripper_model_argument(parser: Any) -> None:
    """``--gripper-model auto|proxy|geometry|articulation``."""
    parser.add_argument(
        "--gripper-model",
        choices=GRIPPER_MODELS,
        default="auto",
        help="gripper model: auto (the gripper's own articulation when it has finger joints, "
        "else its UsdPhysics collision prims and two pads, else a proxy of a palm and two "
        "finger boxes; a warning says which), proxy, geometry (every mesh/shape of the "
        "gripper; simulated fingers are the articulation's when it has one), or articulation "
        "(simulate the gripper's own links, joints and drives; refused without finger joints)",
    )


def make_progress(args: argparse.Namespace) -> Any:
    """The command's progress reporter on stderr (--progress, -q; usdgrip.progress_reporter)."""
    from usdgrip.progress_reporter import ProgressReporter

    return ProgressReporter(sys.stderr, getattr(args, "progress", "auto"), quiet=args.quiet)


def add_physics_arguments(
    parser: Any, *, seed: bool = True, jobs: bool = True, dump_scene: bool = True
) -> None:
    """The simulation options ``evaluate``, ``plan --evaluate`` and ``batch`` share.

    ``plan`` and ``batch`` have their own ``--seed``; ``batch`` its own ``--jobs`` (files
    run in parallel, each simulated in one process) and no ``--dump-scene``.
    """
    parser.add_argument(
        "--trials",
        type=int,
        default=3,
        metavar="N",
        help="trials per candidate: the nominal pose plus N-1 perturbed ones (default 3, so a "
        "success rate is a rate; rates are reported with the trial count)",
    )
    if dump_scene:
        parser.add_argument(
            "--dump-scene",
            metavar="DIR",
            help="write each candidate's nominal trial as MJCF (candidate_NNNN.xml: object "
            "pieces, hands at the grasp, support) into DIR, for MuJoCo's viewer",
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
    if jobs:
        parser.add_argument(
            "--jobs", type=int, default=1, metavar="N", help="worker processes (default 1)"
        )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="mujoco",
        help="simulation engine: mujoco (MuJoCo on the CPU, default) or mjwarp (MuJoCo Warp: "
        "every candidate x trial one world, stepped together on a GPU, else Warp's CPU "
        "device; pip install 'usdgrip[gpu]'; --jobs unused)",
    )
    if seed:
        parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def build_planning_options(args: argparse.Namespace, **fields: Any) -> Any:
    """The :class:`~usdgrip.grasping.options.PlanningOptions` of the parsed options.

    ``fields`` adds or overrides fields (``methods``, ``retreat_distance``).

    Raises:
        ValueError: a refused option, worded with its flag.
    """
    from usdgrip.grasping.options import OptionError, PlanningOptions

    values = {
        "table": args.table,
        "support": args.support,
        "gripper_model": getattr(args, "gripper_model", "auto"),
        **fields,
    }
    try:
        return PlanningOptions(**values)
    except OptionError as exc:
        raise ValueError(exc.cli_message()) from None


def refuse_physics_without_evaluate(given: list[str]) -> None:
    """Physics options (argument names) given to ``plan``/``batch plan`` without ``--evaluate``.

    Raises:
        ValueError: some were given: nothing would use them.
    """
    if given:
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
        raise ValueError(
            f"{flags} given without --evaluate: the physics options apply only to the "
            "simulation; add --evaluate, or leave them out"
        )


def build_evaluation_options(args: argparse.Namespace, **fields: Any) -> Any:
    """The :class:`~usdgrip.grasping.options.EvaluationOptions` of the parsed options.

    A ``--scene`` without ``--support`` is the planner's obstacles only: the physics
    simulates only the support, so it does not get the scene then (``plan --evaluate``).

    Raises:
        ValueError: a refused option, worded with its flag.
    """
    from usdgrip.grasping.options import DEFAULT_ENGINE, EvaluationOptions, OptionError

    values = {
        "trials": args.trials,
        "force": args.force,
        "friction": args.friction,
        "density": args.density,
        "scene": args.scene if args.support else None,
        "support": args.support,
        "table": args.table,
        "gripper_model": args.gripper_model,
        "dump_scene": args.dump_scene,
        "jobs": args.jobs,
        "seed": args.seed,
        "engine": getattr(args, "engine", "mujoco"),
        **fields,
    }
    try:
        options = EvaluationOptions(**values)
    except OptionError as exc:
        raise ValueError(exc.cli_message()) from None
    if options.jobs > 1 and options.engine != DEFAULT_ENGINE:
        from usdgrip.grasping.physics.engines import get_engine

        if get_engine(options.engine).batched:
            print(
                f"warning: --jobs {options.jobs} is not used by --engine {options.engine}: "
                "its worlds step together in one process",
                file=sys.stderr,
            )
    return options


def format_pose(position: Sequence[float], w: float, xyz: Sequence[float]) -> str:
    """``p=(x, y, z) q=(w, x, y, z)`` of a grasp pose, 3 decimals (metres)."""
    p = ", ".join(f"{v:+.3f}" for v in position)
    q = ", ".join(f"{v:+.3f}" for v in (w, *xyz))
    return f"p=({p}) q=({q})"


def format_summary_lines(summary: dict[str, Any], open_hits: dict[str, Any] | None) -> list[str]:
    """The held and outcome lines of a physics summary (what the open hand hit, when any)."""
    outcomes = ", ".join(f"{k} {v}" for k, v in summary["outcomes"].items()) or "none"
    if open_hits:
        hit = ", ".join(f"{k} {v}" for k, v in open_hits.items())
        outcomes += f" (collides_open hit: {hit})"
    return [
        f"  held: {summary['held_candidates']} of {summary['candidates']} candidate(s); "
        f"success rate {100 * summary['success_rate']:.0f}% of {summary['trials']} trial(s)",
        f"  outcomes: {outcomes}",
    ]


def engine_label(meta: dict[str, Any]) -> str:
    """``MuJoCo 4.0.0`` or ``MuJoCo Warp 4.0.0 on cpu``: the engine a report ran on."""
    version = meta.get("engine_version", "?")
    if meta.get("engine") == "mjwarp":
        return f"MuJoCo Warp {version} on {meta.get('device', '?')}"
    return f"MuJoCo {version}"


def format_physics_header(output: Path, meta: dict[str, Any], what: str) -> str:
    """``wrote OUT: what, N trial(s) each, T s (models B s, simulation S s; engine, ...)``.

    T is the physics' whole time: the object, gripper and support models (their CoACD
    decomposition included) and the simulation.
    """
    params = meta.get("parameters", {})
    parts = ""
    if "build_runtime_seconds" in meta:
        parts = (
            f"models and decomposition {meta['build_runtime_seconds']:.2f} s, simulation "
            f"{meta.get('simulation_runtime_seconds', 0.0):.2f} s; "
        )
    return (
        f"wrote {output}: {what}, {params.get('trials', 1)} trial(s) each, "
        f"{meta.get('runtime_seconds', 0.0):.2f} s ({parts}{engine_label(meta)}, "
        f"seed {meta.get('seed', 0)}, support {meta.get('support', 'none')})\n"
    )


def format_total_time(started: float, parts: dict[str, float]) -> str:
    """``  W s in all: reading the files R s, ..., the rest X s``: the command's time so far.

    W runs from the start of the command's ``run`` (after Python's start-up); the rest is
    what no part names (checking options, loading the planner's ray backend, writing).
    """
    import time

    seconds = time.perf_counter() - started
    named = ", ".join(f"{name} {value:.2f} s" for name, value in parts.items())
    rest = max(0.0, seconds - sum(parts.values()))
    return f"  {seconds:.2f} s in all: {named}, the rest {rest:.2f} s\n"


def print_grasps_summary(result: Any, output: Path, show: int, stream: TextIO) -> None:
    """Overall success, by generation method, outcome counts and the ``show`` best candidates."""
    from usdgrip.grasping.physics import summarize_evaluations, summarize_open_hits

    meta = result.metadata.physics or {}
    per_gripper = meta.get("grippers")
    first = next(iter(per_gripper.values())) if per_gripper else meta
    evaluated = [c for c in result.grasps.values() if c.physics is not None]
    stream.write(format_physics_header(output, first, f"{len(evaluated)} candidate(s) evaluated"))

    class _Row:  # summarize_evaluations reads outcomes, trials and success_rate
        def __init__(self, physics: Any) -> None:
            self.trials = physics.trials
            self.success_rate = physics.success_rate
            self.outcomes = dict(physics.outcomes)

    hits = summarize_open_hits([dict(c.physics.collides_open_with) for c in evaluated])
    summary = summarize_evaluations([_Row(c.physics) for c in evaluated])
    for line in format_summary_lines(summary, hits):
        stream.write(line + "\n")
    methods: dict[str, list[Any]] = {}
    for c in evaluated:
        methods.setdefault(c.generation_method or "unknown", []).append(c)
    if set(methods) == {"unknown"}:  # another tool's file names no method: no line for it
        methods = {}
    parts = []
    for method, group in methods.items():
        s = summarize_evaluations([_Row(c.physics) for c in group])
        parts.append(
            f"{method} {s['held_candidates']}/{s['candidates']} held "
            f"({100 * s['success_rate']:.0f}% of trials)"
        )
    if parts:
        stream.write(f"  by method: {'; '.join(parts)}\n")

    def confidence(c: Any) -> float:
        return c.confidence if c.confidence is not None else -math.inf

    best = sorted(
        evaluated, key=lambda c: (-c.physics.success_rate, -confidence(c), c.candidate_id)
    )[:show]
    if best:
        stream.write(f"  top {len(best)} (success rate, confidence, method, first trial):\n")
    for c in best:
        score = f"{c.confidence:.3f}" if c.confidence is not None else "    -"
        stream.write(
            f"    {c.candidate_id}  {100 * c.physics.success_rate:3.0f}%  {score}  "
            f"{c.generation_method or '-':<9} {c.physics.outcome}\n"
        )
