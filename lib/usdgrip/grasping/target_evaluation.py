"""Multi-hand candidates (``usdgrip sample --format json``): every target is one hand.

:func:`evaluate_targets` runs the two-handed slot groups' candidates: all hands close,
lift and shake together (docs/physics.md). :func:`parse_target_samples` and
:func:`read_target_samples` read and check the samples file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from usdgrip.contracts import GeometryRef, GripperRef
from usdgrip.errors import GripperError
from usdgrip.grasping.grasp_evaluation import (
    Progress,
    build_physics_hand,
    build_physics_world,
    read_evaluation_inputs,
    resolve_one_gripper,
    run_physics,
)
from usdgrip.grasping.inputs import GraspInputs, StageSource
from usdgrip.grasping.options import EvaluationOptions, make_evaluation_options
from usdgrip.grasping.provenance import render_notes


def parse_target_samples(data: Any, source: str = "<samples>") -> np.ndarray:
    """World poses ``(N, H, 4, 4)`` of the candidates in ``usdgrip sample --format json`` data.

    Raises:
        ValueError: not that layout, or a matrix that is not 4×4 numbers, naming the
            record (``candidates[i].targets[h].matrix``).
    """
    if not isinstance(data, dict) or not isinstance(data.get("candidates"), list):
        raise ValueError(
            f"{source}: expected the JSON of `usdgrip sample --format json` (an object with "
            "a 'candidates' list)"
        )
    candidates = data["candidates"]
    if not candidates:
        raise ValueError(f"{source}: 'candidates' is empty; nothing to evaluate")
    poses = []
    hands = None
    for i, candidate in enumerate(candidates):
        targets = candidate.get("targets") if isinstance(candidate, dict) else None
        if not isinstance(targets, list) or not targets:
            raise ValueError(f"{source}: candidates[{i}].targets: expected a non-empty list")
        if hands is None:
            hands = len(targets)
        elif len(targets) != hands:
            raise ValueError(
                f"{source}: candidates[{i}] has {len(targets)} targets; candidates[0] has {hands}"
            )
        row = []
        for h, target in enumerate(targets):
            matrix = target.get("matrix") if isinstance(target, dict) else None
            try:
                array = np.array(matrix, dtype=np.float64)
            except (TypeError, ValueError):
                array = None
            if array is None or array.shape != (4, 4) or not np.isfinite(array).all():
                raise ValueError(
                    f"{source}: candidates[{i}].targets[{h}].matrix is not a 4x4 matrix of "
                    "finite numbers (rows, translation in the last column)"
                )
            row.append(array)
        poses.append(row)
    from usdgrip.grasping.physics import check_hand_poses

    try:
        return check_hand_poses(np.array(poses, dtype=np.float64))
    except ValueError as exc:
        where = re.sub(r"poses\[(\d+)\]\[(\d+)\]", r"candidates[\1].targets[\2].matrix", str(exc))
        raise ValueError(f"{source}: {where}") from None


def read_target_samples(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a ``usdgrip sample --format json`` file (checked by :func:`parse_target_samples`).

    Raises:
        GripperError: missing, unreadable or not JSON.
        ValueError: not the samples layout.
    """
    from usdgrip.fileio import read_text_input
    from usdgrip.jsontext import load_json

    file = Path(path)
    text = read_text_input(file)
    try:
        data = load_json(text)  # nesting depth limited
    except json.JSONDecodeError as exc:
        raise GripperError(f"{file}: not valid JSON: {exc}") from None
    except ValueError as exc:  # too deep, or an integer of too many digits
        raise GripperError(f"{file}: cannot be read: {exc}") from None
    parse_target_samples(data, str(file))
    return data


def evaluate_targets(
    samples: Mapping[str, Any] | str | os.PathLike[str],
    object: GeometryRef | None = None,
    gripper: GripperRef | None = None,
    *,
    options: EvaluationOptions | None = None,
    inputs: GraspInputs | None = None,
    stages: Mapping[str | os.PathLike[str], Any] | StageSource | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    **legacy: Any,
) -> dict[str, Any]:
    """Evaluate multi-hand candidates: a candidate's targets are hands that close and lift together.

    ``samples`` is ``usdgrip sample --format json`` output (a dict or its file): world
    poses at sampling time, mapped into the object frame with the object's current
    world transform. Every hand is ``gripper`` (with ``inputs``: their only gripper when
    left out). ``options``, ``inputs`` and the old keywords as
    :func:`~usdgrip.grasping.grasp_evaluation.evaluate_grasps`.

    Returns:
        A JSON-ready dict: ``format`` (``usdgrip_targets_evaluation``), ``object``,
        ``gripper``, ``candidates`` (per candidate, in input order: ``index``,
        ``targets`` as given, ``outcome``, ``success_rate``, ``trials``, ``outcomes``),
        ``summary``, ``physics`` (engine, parameters, what was read and assumed, runtime)
        and ``warnings``.

    Raises:
        GripperError, ValueError, TypeError: as ``evaluate_grasps``; bad samples name
        the record.
    """
    options = make_evaluation_options(options, legacy, "evaluate_targets")
    if isinstance(samples, str | os.PathLike):
        source, data = str(samples), read_target_samples(samples)
    elif isinstance(samples, Mapping):
        source, data = "samples", dict(samples)
    else:
        raise TypeError(f"samples is {type(samples).__name__}; expected a mapping or a JSON path")
    world_poses = parse_target_samples(data, source)
    object, gripper = resolve_one_gripper(object, gripper, inputs)
    inputs = read_evaluation_inputs(object, [gripper], options, inputs, stages)
    world = build_physics_world(inputs, options)
    hand = build_physics_hand(inputs.find_gripper(gripper), options)
    poses = np.einsum("ij,nhjk->nhik", np.linalg.inv(inputs.object.world_frame), world_poses)
    results, meta = run_physics(world, hand, poses, options, progress, cancel)
    candidates = [
        {
            "index": r.index,
            "targets": data["candidates"][r.index]["targets"],
            "outcome": r.outcome,
            "success_rate": r.success_rate,
            "trials": r.trials,
            "outcomes": r.to_record()["outcomes"],
        }
        for r in results
    ]
    return {
        "format": "usdgrip_targets_evaluation",
        "format_version": 1,
        "object": str(object),
        "gripper": str(gripper),
        "hands": int(poses.shape[1]),
        "candidates": candidates,
        "summary": meta["summary"],
        "physics": meta,
        "warnings": list(render_notes((*world.notes, *hand.notes))),
    }
