"""Multi-hand candidates (``usdgrip sample --format json``): every target is one hand.

:func:`evaluate_targets` runs the two-handed slot groups' candidates: all hands close,
lift and shake together (docs/physics.md). :func:`parse_target_samples` and
:func:`read_target_samples` read and check the samples file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from usdgrip.contracts import GeometryRef, GripperRef
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

#: Most targets (candidates x hands) read from one ``--targets`` file: what one
#: ``usdgrip sample`` run writes at most (:data:`usdgrip.sampling.MAX_TARGETS`).
MAX_TARGET_SAMPLES = 200_000
#: Largest ``--targets`` file read, checked before reading: ``usdgrip sample`` writes
#: about 460 bytes per target (200,000 targets: 92 MB; parsed, about 700 MB).
MAX_TARGETS_FILE_BYTES = 128 << 20


def parse_target_samples(data: Any, source: str = "<samples>") -> np.ndarray:
    """World poses ``(N, H, 4, 4)`` of the candidates in ``usdgrip sample --format json`` data.

    Raises:
        ValueError: not that layout, more than :data:`MAX_TARGET_SAMPLES` targets, or a
            matrix that is not 4×4 finite numbers (``true`` or ``"1"`` are not), naming the
            record (``candidates[i].targets[h].matrix``).
    """
    from usdgrip.jsontext import NumberGridError, compute_number_grids

    if not isinstance(data, dict) or not isinstance(data.get("candidates"), list):
        raise ValueError(
            f"{source}: expected the JSON of `usdgrip sample --format json` (an object with "
            "a 'candidates' list)"
        )
    candidates = data["candidates"]
    if not candidates:
        raise ValueError(f"{source}: 'candidates' is empty; nothing to evaluate")
    matrices = []
    hands = None
    for i, candidate in enumerate(candidates):
        targets = candidate.get("targets") if isinstance(candidate, dict) else None
        if not isinstance(targets, list) or not targets:
            raise ValueError(f"{source}: candidates[{i}].targets: expected a non-empty list")
        if hands is None:
            hands = len(targets)
            if len(candidates) * hands > MAX_TARGET_SAMPLES:
                raise ValueError(
                    f"{source}: holds {len(candidates):,} candidates x {hands} targets, more "
                    f"than the {MAX_TARGET_SAMPLES:,} targets evaluated from one file (what one "
                    "`usdgrip sample` run writes at most); split the candidates into files"
                )
        elif len(targets) != hands:
            raise ValueError(
                f"{source}: candidates[{i}] has {len(targets)} targets; candidates[0] has {hands}"
            )
        matrices.extend(t.get("matrix") if isinstance(t, dict) else None for t in targets)
    from usdgrip.grasping.physics import check_hand_poses

    try:
        poses = compute_number_grids(matrices, 4, 4).reshape(len(candidates), hands, 4, 4)
    except NumberGridError as exc:
        i, h = divmod(exc.index, hands)
        raise ValueError(
            f"{source}: candidates[{i}].targets[{h}].matrix{exc.problem}; expected a 4x4 "
            "matrix of finite numbers (rows, translation in the last column)"
        ) from None
    try:
        return check_hand_poses(poses)
    except ValueError as exc:
        where = re.sub(r"poses\[(\d+)\]\[(\d+)\]", r"candidates[\1].targets[\2].matrix", str(exc))
        raise ValueError(f"{source}: {where}") from None


def read_target_samples(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a ``usdgrip sample --format json`` file (checked by :func:`parse_target_samples`).

    Read by :func:`usdgrip.jsontext.read_json_file`: at most
    :data:`MAX_TARGETS_FILE_BYTES` (refused before reading), a named pipe or device waits
    at most 30 s for data, and a key repeated in one object is refused.

    Raises:
        GripperError: missing, unreadable, too large, not JSON or a repeated key.
        ValueError: not the samples layout.
    """
    from usdgrip.jsontext import read_json_file

    data = read_json_file(
        path,
        max_bytes=MAX_TARGETS_FILE_BYTES,
        kind=f"a --targets file (at most {MAX_TARGET_SAMPLES:,} targets)",
        advice="; sample fewer candidates per file (usdgrip sample --count)",
    )
    parse_target_samples(data, str(Path(path)))
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
