"""FET005 on the CPU: does a grasp on each SimReady grasp vector line hold in grasp-and-lift?

:func:`evaluate_grasp_lines` plans the object's lines with the ``lines`` backend
(:func:`usdgrip.grasping.planner.plan_grasps`, ``methods="lines"``), runs those candidates
through the physics evaluation (:func:`usdgrip.grasping.grasp_evaluation.evaluate_grasps`; by
default on a table, as FET005 puts the asset on a floor) and groups the outcomes by line
(:func:`~usdgrip.grasping.backends.line_proposals.summarize_line_evaluations`).
docs/graspable-props.md
has the protocol and what differs from NVIDIA's FET005.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from usdgrip.contracts import GeometryRef, GripperRef
from usdgrip.errors import GripperError
from usdgrip.grasping.inputs import StageSource, select_object_lines

Progress = Callable[[str, float], None]
"""``progress(message, fraction_done)``; fraction in [0, 1]."""

#: Candidates planned (and simulated) per grasp line: the best approaches around it.
DEFAULT_CANDIDATES_PER_LINE = 24
#: ``report["format"]`` of :func:`evaluate_grasp_lines`.
REPORT_FORMAT = "usdgrip_lines_evaluation"
#: A line's ``verdict``: a grasp on it held; grasps were simulated and none held; no grasp
#: could be planned on it (it misses the object, its points are unusable, every grasp on
#: it collides or is too wide), so grasp-and-lift cannot prove it.
VERDICTS = ("held", "not_held", "not_provable")
#: Share of the progress bar spent planning.
_PLANNING_SHARE = 0.2

_NO_LINES = (
    "a BasisCurves named grasp_identifier* under the default prim; `usdgrip info FILE` "
    "lists the lines"
)


def find_line_object(asset_path: str, stages: Mapping[str, Any] | None = None) -> str:
    """The object prim the grasp lines of ``asset_path`` belong to (the default object).

    Raises:
        GripperError: unreadable file, no grasp line on the stage, or lines of several
            objects (the message lists them: choose one).
    """
    from usdgrip.usd.grasp_lines import find_grasp_lines

    stage = StageSource(stages).open(asset_path)
    try:
        objects = list(dict.fromkeys(line.object_path for line in find_grasp_lines(stage)))
    except GripperError as exc:
        raise GripperError(f"{asset_path}: {exc}") from None
    if not objects:
        raise GripperError(f"{asset_path}: no grasp vector line ({_NO_LINES}); nothing to prove")
    if len(objects) > 1:
        listed = ", ".join(f"<{path}>" for path in objects)
        raise GripperError(
            f"{asset_path}: the grasp lines belong to {len(objects)} objects ({listed}); "
            "choose one (--object PRIM)"
        )
    return objects[0]


def evaluate_grasp_lines(
    object: GeometryRef,
    gripper: GripperRef,
    *,
    candidates_per_line: int = DEFAULT_CANDIDATES_PER_LINE,
    trials: int = 1,
    force: float | None = None,
    friction: float | None = None,
    density: float | None = None,
    scene: str | None = None,
    support: str | None = None,
    table: bool | None = None,
    gripper_model: str = "auto",
    jobs: int = 1,
    seed: int = 0,
    params: Any = None,
    cache_dir: str | None = None,
    stages: Mapping[str | os.PathLike[str], Any] | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Per grasp vector line of ``object``: plan grasps on it, grasp-and-lift them, say who held.

    Args:
        object: the object prim (its lines: the line or its rigid body at or under it).
        gripper: the gripper site that grasps.
        candidates_per_line: grasps simulated per line: the best ranked of the ``lines``
            backend (fit and collision checked; at least
            :data:`DEFAULT_CANDIDATES_PER_LINE` are planned, so the approaches sampled
            around a line do not depend on this count).
        table: the object rests on a plane under its lowest point; ``None`` (default):
            True unless ``support`` names what it rests on (FET005 uses a floor).
        trials: trials per candidate (trial 0 nominal, the others perturbed).
        force: grip force per finger, N (wins over ``gripper:maxGripForce``).
        friction: friction when none is bound in USD.
        density: kg/m³ when no mass or density is authored.
        scene: USD file holding ``support``.
        support: prim the object rests on, in ``scene`` (also an obstacle when planning).
        gripper_model: ``auto``, ``proxy`` or ``geometry`` (the planner's collision model).
        jobs: worker processes; results do not depend on it.
        seed: planning and simulation seed; the same seed gives the same report.
        params: :class:`~usdgrip.grasping.physics.EvaluationParams` (``trials`` wins).
        cache_dir: CoACD cache folder (default: the engine's).
        stages: stages the caller has open, by asset path.
        progress: ``progress(message, fraction)``.
        cancel: polled between candidates (as
            :func:`~usdgrip.grasping.grasp_evaluation.evaluate_grasps`).

    Returns:
        A JSON-ready dict: ``format`` (:data:`REPORT_FORMAT`), ``object``, ``gripper``,
        ``pose_frame``, ``candidates_per_line``; ``lines`` in stage order, each with
        ``name``, ``path``, ``verdict`` (:data:`VERDICTS`), ``candidates``,
        ``best_success_rate``, ``outcomes`` (trials per outcome, summed), ``held``,
        ``grasp`` (the best candidate when it held: ``id``, ``success_rate``,
        ``position`` and ``orientation`` ``{w, xyz}`` in the pose frame, metres,
        ``width``) and ``note`` (why a line has no candidate); ``summary`` (``lines``,
        ``held``, ``every_line_held``, ``any_line_held``); ``physics`` (as
        ``metadata.physics`` of ``evaluate_grasps``; ``None`` when nothing was
        simulated), ``runtime_seconds`` (planning and simulation) and ``warnings``.

    Raises:
        GripperError: unreadable input, missing prim, an object without grasp lines or
            without a mesh, a gripper prim that is not a site.
        ValueError, TypeError: a bad option, naming it.
    """
    from usdgrip.contracts import GraspObject, GraspPlanningRequest
    from usdgrip.grasping.backends.line_proposals import (
        name_lines,
        parse_line_candidate_id,
        summarize_line_evaluations,
    )
    from usdgrip.grasping.grasp_evaluation import EvaluationOptions, evaluate_grasps
    from usdgrip.grasping.planner import plan_grasps
    from usdgrip.usd.grasp_lines import find_grasp_lines
    from usdgrip.usd.stage import get_prim

    if not isinstance(object, GeometryRef):
        raise TypeError(f"object is {type(object).__name__}; expected a GeometryRef")
    if not isinstance(gripper, GripperRef):
        raise TypeError(f"gripper is {type(gripper).__name__}; expected a GripperRef")
    if isinstance(candidates_per_line, bool) or not isinstance(candidates_per_line, int):
        raise TypeError(
            f"candidates_per_line is {type(candidates_per_line).__name__}; expected an integer"
        )
    if candidates_per_line < 1:
        raise ValueError(f"candidates_per_line is {candidates_per_line}; expected >= 1")
    if table is None:
        table = support is None
    keywords = {
        "trials": trials, "force": force, "friction": friction, "density": density,
        "scene": scene, "support": support, "table": table, "gripper_model": gripper_model,
        "jobs": jobs, "seed": seed, "params": params, "cache_dir": cache_dir,
    }  # fmt: skip
    EvaluationOptions(**keywords)  # bad options are refused before anything is read
    started = time.perf_counter()
    source = StageSource(stages)
    files = dict.fromkeys([object.asset_path, gripper.asset_path, *filter(None, [scene])])
    opened = {file: source.open(file) for file in files}
    prim_path = str(get_prim(opened[object.asset_path], object.prim_path).GetPath())
    try:
        found = find_grasp_lines(opened[object.asset_path])
    except GripperError as exc:
        raise GripperError(f"{object.asset_path}: {exc}") from None
    lines = select_object_lines(found, prim_path)
    if not lines:
        raise GripperError(
            f"{object.asset_path}: <{prim_path}> has no grasp vector line ({_NO_LINES}); "
            "nothing to prove"
        )
    usable = [line for line in lines if line.is_usable]
    parts = name_lines([line.name for line in usable])
    report = progress or (lambda message, fraction: None)
    grasps: dict[str, Any] = {}
    physics = None
    warnings: tuple[str, ...] = ()
    # The planner samples approaches around a line by its budget: plan at least the default
    # (every 5°, straight down included) and keep the best ``candidates_per_line``.
    planned_per_line = max(candidates_per_line, DEFAULT_CANDIDATES_PER_LINE)
    if usable:
        request = GraspPlanningRequest(
            object=GraspObject(geometry=object),
            grippers=(gripper,),
            max_candidates_per_gripper=min(100_000, planned_per_line * len(usable)),
            seed=seed,
        )
        planned = plan_grasps(
            request,
            scene=scene if support is not None else None,
            methods="lines",
            support=support,
            gripper_model=gripper_model,
            stages=opened,
            progress=lambda m, f: report(f"planning: {m}", _PLANNING_SHARE * f),
        )
        warnings = planned.metadata.warnings
        planned = _keep_per_line(planned, candidates_per_line, parse_line_candidate_id)
        if planned.grasps:
            evaluated = evaluate_grasps(
                planned,
                object,
                stages=opened,
                progress=lambda m, f: report(m, _PLANNING_SHARE + (1 - _PLANNING_SHARE) * f),
                cancel=cancel,
                **keywords,
            )
            grasps, physics = evaluated.grasps, evaluated.metadata.physics
            warnings = evaluated.metadata.warnings
    ids = list(grasps)
    verdicts = summarize_line_evaluations(
        parts, [parse_line_candidate_id(i) for i in ids], ids, [grasps[i].physics for i in ids]
    )
    by_part = dict(zip(parts, verdicts, strict=True))
    records = []
    for line in lines:
        verdict = by_part.get(parts[usable.index(line)]) if line in usable else None
        held = grasps[verdict.held_by] if verdict is not None and verdict.held else None
        candidates = verdict.candidates if verdict else 0
        verdict_name = "held" if held is not None else "not_held" if candidates else "not_provable"
        records.append(
            {
                "name": line.name,
                "path": line.path,
                "verdict": verdict_name,
                "candidates": candidates,
                "best_success_rate": verdict.best_success_rate if verdict else 0.0,
                "outcomes": verdict.outcomes if verdict else {},
                "held": held is not None,
                "grasp": _describe_grasp(held) if held is not None else None,
                "note": _explain_no_candidate(line, verdict, warnings),
            }
        )
    held_lines = sum(record["held"] for record in records)
    return {
        "format": REPORT_FORMAT,
        "format_version": 1,
        "object": str(object),
        "gripper": str(gripper),
        "pose_frame": prim_path,
        "candidates_per_line": candidates_per_line,
        "lines": records,
        "summary": {
            "lines": len(records),
            "held": held_lines,
            "every_line_held": held_lines == len(records),
            "any_line_held": held_lines > 0,
        },
        "physics": physics,
        "runtime_seconds": time.perf_counter() - started,
        "warnings": list(warnings),
    }


def _keep_per_line(result: Any, count: int, line_of: Callable[[str], str | None]) -> Any:
    """The result with at most ``count`` candidates per line, best first (the planner's order)."""
    kept: dict[str, Any] = {}
    per_line: dict[str | None, int] = {}
    for cid, candidate in result.grasps.items():
        line = line_of(cid)
        if per_line.get(line, 0) < count:
            per_line[line] = per_line.get(line, 0) + 1
            kept[cid] = candidate
    return result.model_copy(update={"grasps": kept}) if len(kept) < len(result.grasps) else result


def _describe_grasp(candidate: Any) -> dict[str, Any]:
    return {
        "id": candidate.candidate_id,
        "success_rate": candidate.physics.success_rate,
        "position": list(candidate.position),
        "orientation": {"w": candidate.orientation.w, "xyz": list(candidate.orientation.xyz)},
        "width": candidate.width,
    }


def _explain_no_candidate(line: Any, verdict: Any, warnings: tuple[str, ...]) -> str | None:
    """Why a line has no candidate: its points, the backend's note on it, else the planner's."""
    if verdict is not None and verdict.candidates:
        return None
    if verdict is None:
        return "not two distinct finite points (GP.002): no closing direction"
    marker = f"grasp line {verdict.line!r} "  # the lines backend's notes name the line so
    for warning in warnings:
        if marker in warning:
            return warning.split(marker, 1)[1].removeprefix("skipped: ")
    return (
        "no grasp on it was planned (too wide, colliding, or the gripper skipped: see the warnings)"
    )
