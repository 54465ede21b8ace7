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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from usdgrip.contracts import GeometryRef, GripperRef
from usdgrip.errors import GripperError
from usdgrip.grasping.inputs import NO_LINES, GraspInputs, StageSource, find_line_object
from usdgrip.grasping.options import EvaluationOptions, make_evaluation_options
from usdgrip.grasping.provenance import Note, find_note

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

__all__ = [
    "DEFAULT_CANDIDATES_PER_LINE",
    "REPORT_FORMAT",
    "VERDICTS",
    "evaluate_grasp_lines",
    "find_line_object",
]


def evaluate_grasp_lines(
    object: GeometryRef | None = None,
    gripper: GripperRef | None = None,
    *,
    options: EvaluationOptions | None = None,
    inputs: GraspInputs | None = None,
    candidates_per_line: int = DEFAULT_CANDIDATES_PER_LINE,
    stages: Mapping[str | os.PathLike[str], Any] | StageSource | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    **legacy: Any,
) -> dict[str, Any]:
    """Per grasp vector line of ``object``: plan grasps on it, grasp-and-lift them, say who held.

    Planning and physics share one support and one read of the inputs: the planner drops
    the grasps whose hand would cut the table (or the support), the physics simulates the
    rest on it.

    Args:
        object: the object prim (its lines: the line or its rigid body at or under it);
            may be left out when ``inputs`` are given.
        gripper: the gripper site that grasps (with ``inputs``: their gripper when left out).
        options: the evaluation options (:class:`EvaluationOptions`); its ``seed`` seeds
            planning and simulation. With the old keywords instead, ``table`` defaults to
            True unless ``support`` names what the object rests on (FET005 uses a floor).
        inputs: the object, gripper and support already read; nothing is read again.
        candidates_per_line: grasps simulated per line: the best ranked of the ``lines``
            backend (fit and collision checked; at least
            :data:`DEFAULT_CANDIDATES_PER_LINE` are planned, so the approaches sampled
            around a line do not depend on this count).
        stages: stages the caller has open, by asset path (or a ``StageSource``).
        progress: ``progress(message, fraction)``.
        cancel: polled between candidates (as
            :func:`~usdgrip.grasping.grasp_evaluation.evaluate_grasps`).
        **legacy: the old keywords (``trials=``, ``force=``, ``friction=``, ``density=``,
            ``scene=``, ``support=``, ``table=``, ``gripper_model=``, ``jobs=``, ``seed=``,
            ``params=``, ``cache_dir=``): :class:`EvaluationOptions`' fields, a shim for
            one release; not with ``options``.

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
            without a mesh, a gripper prim that is not a usable site.
        ValueError, TypeError: a bad option, naming it.
    """
    from usdgrip.contracts import GraspObject, GraspPlanningRequest
    from usdgrip.grasping.backends.line_proposals import LINE_SKIPS, summarize_line_evaluations
    from usdgrip.grasping.grasp_evaluation import (
        evaluate_grasps,
        read_evaluation_inputs,
        resolve_one_gripper,
    )
    from usdgrip.grasping.options import PlanningOptions
    from usdgrip.grasping.planner import run_planning

    if options is None and legacy.get("table") is None:  # FET005's floor, unless a support
        legacy = {**legacy, "table": legacy.get("support") is None}
    options = make_evaluation_options(options, legacy, "evaluate_grasp_lines")
    object, gripper = resolve_one_gripper(object, gripper, inputs)
    if isinstance(candidates_per_line, bool) or not isinstance(candidates_per_line, int):
        raise TypeError(
            f"candidates_per_line is {type(candidates_per_line).__name__}; expected an integer"
        )
    if candidates_per_line < 1:
        raise ValueError(f"candidates_per_line is {candidates_per_line}; expected >= 1")
    started = time.perf_counter()
    inputs = read_evaluation_inputs(object, [gripper], options, inputs, stages)
    obj = inputs.object
    lines = obj.listed_lines
    if not lines:
        raise GripperError(
            f"{object.asset_path}: <{obj.prim_path}> has no grasp vector line ({NO_LINES}); "
            "nothing to prove"
        )
    usable = [line for line in lines if line.usable]
    report = progress or (lambda message, fraction: None)
    grasps: dict[str, Any] = {}
    physics = None
    warnings: tuple[str, ...] = ()
    notes: tuple[Any, ...] = ()
    # The planner samples approaches around a line by its budget: plan at least the default
    # (every 5°, straight down included) and keep the best ``candidates_per_line``.
    planned_per_line = max(candidates_per_line, DEFAULT_CANDIDATES_PER_LINE)
    if usable:
        request = GraspPlanningRequest(
            object=GraspObject(geometry=object),
            grippers=(gripper,),
            max_candidates_per_gripper=min(100_000, planned_per_line * len(usable)),
            seed=options.seed,
        )
        planning = PlanningOptions(
            methods="lines",
            table=options.table,
            support=options.support,
            gripper_model=options.gripper_model,
        )
        planned, notes, _ = run_planning(
            request,
            options=planning,
            scene=inputs.scene,
            inputs=inputs,
            progress=lambda m, f: report(f"planning: {m}", _PLANNING_SHARE * f),
        )
        warnings = planned.metadata.warnings
        planned = _keep_per_line(planned, candidates_per_line)
        if planned.grasps:
            evaluated = evaluate_grasps(
                planned,
                options=options,
                inputs=inputs,
                progress=lambda m, f: report(m, _PLANNING_SHARE + (1 - _PLANNING_SHARE) * f),
                cancel=cancel,
            )
            grasps, physics = evaluated.grasps, evaluated.metadata.physics
            warnings = evaluated.metadata.warnings
    ids = list(grasps)
    verdicts = summarize_line_evaluations(
        [line.path for line in usable],
        [grasps[i].grasp_line for i in ids],
        ids,
        [grasps[i].physics for i in ids],
    )
    by_path = {line.path: verdict for line, verdict in zip(usable, verdicts, strict=True)}
    records = []
    for line in lines:
        verdict = by_path.get(line.path)
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
                "note": _explain_no_candidate(line, verdict, notes, LINE_SKIPS),
            }
        )
    held_lines = sum(record["held"] for record in records)
    return {
        "format": REPORT_FORMAT,
        "format_version": 1,
        "object": str(object),
        "gripper": str(gripper),
        "pose_frame": obj.prim_path,
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


def _keep_per_line(result: Any, count: int) -> Any:
    """The result with at most ``count`` candidates per grasp line, best first."""
    kept: dict[str, Any] = {}
    per_line: dict[str | None, int] = {}
    for cid, candidate in result.grasps.items():
        line = candidate.grasp_line
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


def _explain_no_candidate(
    line: Any, verdict: Any, notes: Sequence[Note], skip_codes: Sequence[str]
) -> str | None:
    """Why a line has no candidate: its points, the backend's note on it, else the planner's."""
    if verdict is not None and verdict.candidates:
        return None
    if verdict is None:
        return "not two distinct finite points (GP.002): no closing direction"
    note = find_note(notes, skip_codes, line.path)
    if note is not None:
        return note.text
    return (
        "no grasp on it was planned (too wide, colliding, or the gripper skipped: see the warnings)"
    )
