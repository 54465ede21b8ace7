"""Physics-checked grasps from USD: read the object, gripper and support, run the MuJoCo trials.

:func:`evaluate_grasps` adds a measured ``physics`` mapping to every candidate of a
planning result (and ``metadata.physics``); :func:`evaluate_targets` runs the
multi-hand candidates of ``usdgrip sample --format json`` (two-handed slot groups:
every target of a candidate is one hand; all close and lift together). Both read
the stages through :mod:`usdgrip.usd` (no ``pxr`` here) and call the pure engine
:mod:`usdgrip.grasping.physics` (docs/physics.md).

Inputs and their fallbacks (a warning names every default taken):

- object meshes: the planner's reader (:func:`usdgrip.grasping.reading.read_object`),
  in the object frame M (the prim's world frame, scale removed), metres;
- mass: ``UsdPhysics.MassAPI`` ``physics:mass``, else ``physics:density`` × volume,
  else ``density`` (default :data:`~usdgrip.grasping.physics.DEFAULT_DENSITY`);
- friction: the bound ``UsdPhysics.MaterialAPI`` material, else ``friction``
  (default :data:`~usdgrip.grasping.physics.DEFAULT_FRICTION`);
- grip force: ``force``, else the site's ``gripper:maxGripForce``, else
  :data:`~usdgrip.grasping.physics.DEFAULT_GRIP_FORCE` N per finger;
- gripper shapes: the planner's collision model (``gripper_model`` auto/proxy/geometry);
- up: the object stage's ``upAxis`` rotated into M (USD's fallback ``Y`` when not authored);
- support: ``table=True`` (a plane under the object's lowest point) or the meshes of
  ``support`` in the ``scene`` file.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from usdgrip.contracts import GeometryRef, GraspPhysics, GraspPlanningResult, GripperRef
from usdgrip.errors import GripperError
from usdgrip.grasping.reading import StageSource, read_gripper, read_gripper_model, read_object

Progress = Callable[[str, float], None]
"""``progress(message, fraction_done)``; fraction in [0, 1]."""

#: ``metadata.physics["ranking"]`` when candidates are ordered by measured success.
RANKING_PHYSICS = "success_rate,confidence"
#: ``metadata.physics["ranking"]`` when the planner's order is kept.
RANKING_KEPT = "unchanged"


@dataclass(frozen=True)
class EvaluationOptions:
    """The checked options shared by :func:`evaluate_grasps` and :func:`evaluate_targets`."""

    trials: int = 1
    force: float | None = None
    friction: float | None = None
    density: float | None = None
    scene: str | None = None
    support: str | None = None
    table: bool = False
    gripper_model: str = "auto"
    jobs: int = 1
    seed: int = 0
    params: Any = None
    cache_dir: str | None = None

    def __post_init__(self) -> None:
        for name, minimum in (("trials", 1), ("jobs", 1), ("seed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"{name} is {value!r}; expected an integer >= {minimum}")
        for name, unit in (("force", "N"), ("friction", ""), ("density", "kg/m³")):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} is {type(value).__name__}; expected a number")
            if not (math.isfinite(value) and value > 0):
                expected = f"a finite value > 0 {unit}".rstrip()
                raise ValueError(f"{name} is {value!r}; expected {expected}")
        if self.table and self.support is not None:
            raise ValueError("table and support are exclusive: the object rests on one of them")
        if self.support is not None and self.scene is None:
            raise ValueError(f"support {self.support!r} needs a scene file holding that prim")
        if self.scene is not None and self.support is None:
            raise ValueError(
                f"scene {self.scene!r} without a support: the evaluation simulates only what "
                "the object rests on; name it (--support PRIM) or use --table"
            )
        from usdgrip.grasping.reading import GRIPPER_MODELS

        if self.gripper_model not in GRIPPER_MODELS:
            raise ValueError(
                f"gripper model {self.gripper_model!r}; expected one of {', '.join(GRIPPER_MODELS)}"
            )

    def evaluation_params(self):
        """The engine's :class:`EvaluationParams` with ``trials`` set."""
        from usdgrip.grasping.physics import EvaluationParams

        params = self.params if self.params is not None else EvaluationParams()
        return dataclasses.replace(params, trials=self.trials)


@dataclass(frozen=True)
class PhysicsInputs:
    """Everything the engine needs, read once: object, scene, gripper, and what was assumed."""

    obj: Any
    """:class:`~usdgrip.grasping.physics.PhysicsObject`."""
    scene: Any
    """:class:`~usdgrip.grasping.physics.PhysicsScene`."""
    gripper: Any
    """:class:`~usdgrip.grasping.physics.PhysicsGripper`."""
    world_frame: np.ndarray
    """(4, 4) frame M: the object prim's world transform, scale removed."""
    prim_path: str
    warnings: tuple[str, ...]
    record: dict[str, Any]
    """What was used (object, gripper, support), for ``metadata.physics``."""


def _floats(values: Any) -> list[float]:
    return [float(v) + 0.0 for v in np.ravel(values)]


def read_physics_inputs(
    geometry: GeometryRef,
    gripper: GripperRef,
    options: EvaluationOptions,
    stages: StageSource | None = None,
) -> PhysicsInputs:
    """Read the object, its support and the gripper into the engine's models.

    Raises:
        GripperError: unreadable file, missing prim, no mesh, a bad authored mass,
            density or friction, a gripper prim that is not a usable site.
        ValueError: a bad option.
    """
    from usdgrip.grasping.physics import (
        DEFAULT_DENSITY,
        DEFAULT_FRICTION,
        DEFAULT_GRIP_FORCE,
        PhysicsGripper,
        make_physics_object,
        make_physics_scene,
    )
    from usdgrip.grasping.physics.decompose import take_cache_warnings
    from usdgrip.usd.physics import read_physics_properties, read_stage_up, read_support_mesh
    from usdgrip.usd.stage import get_prim

    stages = stages or StageSource()
    warnings: list[str] = []
    data = read_object(
        geometry.asset_path, geometry.prim_path, need_mesh=True, check_closed=False, stages=stages
    )
    warnings.extend(f"object {geometry}: {note}" for note in data.notes)
    stage = stages.open(geometry.asset_path)
    props = read_physics_properties(get_prim(stage, geometry.prim_path))
    warnings.extend(f"object {geometry}: {note}" for note in props.notes)
    mass, density = props.mass, props.density
    mass_from = props.mass_source
    if mass is None and density is None:
        density = options.density
        mass_from = "density option"
        if density is None:
            density, mass_from = DEFAULT_DENSITY, "default density"
            warnings.append(
                f"object {geometry}: no UsdPhysics.MassAPI mass or density authored and no "
                f"density given; using the default density {DEFAULT_DENSITY:g} kg/m³"
            )
    elif options.density is not None:
        warnings.append(f"density option {options.density:g} ignored: {mass_from} is authored")
    friction, friction_from = props.friction, props.friction_source
    if friction is None:
        friction, friction_from = options.friction, "friction option"
        if friction is None:
            friction, friction_from = DEFAULT_FRICTION, "default friction"
            warnings.append(
                f"object {geometry}: no UsdPhysics.MaterialAPI friction bound to its colliders "
                f"and no friction given; using the default friction {DEFAULT_FRICTION:g}"
            )
    elif options.friction is not None:
        warnings.append(f"friction option {options.friction:g} ignored: {friction_from} is bound")
    cache = {"cache_dir": options.cache_dir} if options.cache_dir is not None else {}
    try:
        obj = make_physics_object(
            data.vertices, data.faces, mass=mass, density=density, friction=friction, **cache
        )
    except ValueError as exc:
        raise GripperError(f"{geometry}: {exc}") from None
    up_world, authored = read_stage_up(stage)
    if not authored:
        warnings.append(
            f"{geometry.asset_path}: no upAxis authored; using USD's fallback Y as up for the lift"
        )
    up = data.world_frame[:3, :3].T @ up_world
    support_meshes = ()
    if options.support is not None:
        scene_stage = stages.open(options.scene)
        support_meshes = (read_support_mesh(scene_stage, options.support, data.world_frame),)
    scene = make_physics_scene(up, table=options.table, support_meshes=support_meshes, **cache)
    site = read_gripper(gripper, stages)
    if site.grasp_frame is None:
        raise GripperError(f"gripper {gripper}: the site has no usable forward axis")
    opening = site.max_opening
    if opening is None or not (math.isfinite(opening) and opening > 0):
        raise GripperError(
            f"gripper {gripper}: max opening is {opening!r}; expected a finite value > 0 m"
        )
    pad = site.grip_line.length if site.grip_line is not None else None
    if pad is None or not (0 < pad < opening):
        from usdgrip.grasping.physics.params import DEFAULT_PAD_WIDTH

        warnings.append(
            f"gripper {gripper}: grip pad width {pad!r} unusable; using {DEFAULT_PAD_WIDTH:g} m"
        )
        pad = DEFAULT_PAD_WIDTH
    force, force_from = options.force, "force option"
    if force is None and site.max_grip_force is not None:
        force, force_from = float(site.max_grip_force), "gripper:maxGripForce"
    unusable = site.problems.get("gripper:maxGripForce")
    if force is None:
        force, force_from = DEFAULT_GRIP_FORCE, "default grip force"
        authored = f"gripper:maxGripForce unusable ({unusable})" if unusable else "none authored"
        warnings.append(
            f"gripper {gripper}: no grip force given and {authored}; using the default "
            f"{DEFAULT_GRIP_FORCE:g} N per finger"
        )
    model = read_gripper_model(gripper, site, options.gripper_model, stages)
    hand = PhysicsGripper.from_collision_model(model, opening, pad, force, **cache)
    warnings.extend(take_cache_warnings())  # CoACD cache problems, each once
    record = {
        "object": {
            "prim": data.prim_path,
            "mass_kg": obj.mass,
            "mass_from": mass_from,
            "volume_m3": obj.volume,
            "friction": obj.friction,
            "friction_from": friction_from,
            "collision_pieces": len(obj.pieces),
        },
        "gripper": {
            "site": str(gripper),
            "max_opening_m": float(opening),
            "pad_width_m": float(pad),
            "grip_force_n": float(force),
            "grip_force_from": force_from,
            "collision_model": model.source,
        },
        "up": _floats(scene.up),
        "support": (
            "table" if options.table else f"{options.scene}:{options.support}"
            if options.support else "none"
        ),
    }  # fmt: skip
    return PhysicsInputs(
        obj, scene, hand, data.world_frame, data.prim_path, tuple(warnings), record
    )


def _run(
    inputs: PhysicsInputs,
    poses: np.ndarray,
    options: EvaluationOptions,
    progress: Progress | None,
    cancel: Callable[[], bool] | None,
) -> tuple[list[Any], dict[str, Any]]:
    """Evaluate ``poses`` (N, H, 4, 4) in M; the results and ``metadata.physics``."""
    from usdgrip.grasping.physics import (
        engine_metadata,
        evaluate_candidates,
        summarize_evaluations,
    )

    params = options.evaluation_params()
    report = progress or (lambda message, fraction: None)
    started = time.perf_counter()
    results = evaluate_candidates(
        inputs.obj,
        inputs.gripper,
        poses,
        scene=inputs.scene,
        params=params,
        seed=options.seed,
        jobs=options.jobs,
        progress=lambda done, total: report(
            f"physics: {done}/{total} candidates", done / max(total, 1)
        ),
        cancel=cancel,
    )
    metadata = {
        **engine_metadata(params),
        "seed": options.seed,
        "jobs": options.jobs,
        **inputs.record,
        "summary": summarize_evaluations(results),
        "runtime_seconds": time.perf_counter() - started,
    }
    return results, metadata


def evaluate_grasps(
    result_or_path: GraspPlanningResult | str | os.PathLike[str],
    object: GeometryRef,
    gripper: GripperRef | None = None,
    *,
    trials: int = 1,
    force: float | None = None,
    friction: float | None = None,
    density: float | None = None,
    scene: str | None = None,
    support: str | None = None,
    table: bool = False,
    gripper_model: str = "auto",
    jobs: int = 1,
    seed: int = 0,
    rank: bool = False,
    params: Any = None,
    cache_dir: str | None = None,
    stages: Mapping[str | os.PathLike[str], Any] | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> GraspPlanningResult:
    """Grasp-and-lift every candidate of a plan in MuJoCo; the result with ``physics`` added.

    Args:
        result_or_path: a :class:`GraspPlanningResult` or an extended Isaac-Grasp file.
        object: the object the grasps were planned for (its prim must be the result's
            ``metadata.pose_frame``).
        gripper: the gripper site to simulate; ``None``: every gripper of the result
            (each read from the path its entries name). Given, it must be one of the
            result's grippers (same prim, same file), and only its candidates are evaluated.
        trials: trials per candidate (trial 0 nominal, the others perturbed).
        force: grip force per finger, N (wins over ``gripper:maxGripForce``).
        friction: friction when none is bound in USD.
        density: kg/m³ when no mass or density is authored.
        scene: USD file holding ``support`` (``usdgrip plan --scene``).
        support: prim the object rests on, in ``scene``.
        table: a plane just under the object's lowest point instead.
        gripper_model: ``auto``, ``proxy`` or ``geometry`` (the planner's collision model).
        jobs: worker processes; results do not depend on it.
        seed: the same seed gives the same outcomes.
        rank: order each gripper's entries by measured ``success_rate``, then
            ``confidence`` (``metadata.physics["ranking"]`` and ``generation_mode`` say so);
            else the input order is kept.
        params: :class:`~usdgrip.grasping.physics.EvaluationParams` (``trials`` wins).
        cache_dir: CoACD cache folder (default: the engine's).
        stages: stages the caller has open, by asset path.
        progress: ``progress(message, fraction)``.
        cancel: polled between candidates; True stops with
            :class:`~usdgrip.grasping.physics.EvaluationCancelled`.

    Returns:
        A new result: every evaluated entry has ``physics`` (success_rate, trials,
        outcome of trial 0, outcome counts); ``metadata.physics`` holds the engine,
        every parameter, what was read and assumed, the summary and the runtime;
        ``metadata.warnings`` adds every default taken. Candidate ids are unchanged.

    Raises:
        GripperError: unreadable input (file, prim, mesh, site, physics attributes).
        ValueError, TypeError: a bad option, naming it.
    """
    from usdgrip.grasping.isaac_yaml import compute_candidate_pose, read_isaac_grasp

    options = EvaluationOptions(
        trials, force, friction, density, scene, support, table, gripper_model, jobs, seed,
        params, cache_dir,
    )  # fmt: skip
    if isinstance(result_or_path, GraspPlanningResult):
        result = result_or_path
    elif isinstance(result_or_path, str | os.PathLike):
        result = read_isaac_grasp(result_or_path)
    else:
        raise TypeError(
            f"result_or_path is {type(result_or_path).__name__}; expected a "
            "GraspPlanningResult or an Isaac-Grasp file path"
        )
    if not isinstance(object, GeometryRef):
        raise TypeError(f"object is {type(object).__name__}; expected a GeometryRef")
    if result.metadata.pose_frame != object.prim_path:
        raise ValueError(
            f"the grasps are in the frame of <{result.metadata.pose_frame}> "
            f"(metadata.pose_frame), not of the object <{object.prim_path}>; evaluate them "
            "with the object they were planned for"
        )
    targets = _choose_grippers(result, gripper)
    source = StageSource(stages)
    new_grasps = dict(result.grasps)
    warnings: list[str] = []
    physics_meta: dict[str, Any] = {}
    for index, (listed, read_as) in enumerate(targets):
        ids = [cid for cid, c in result.grasps.items() if c.gripper == listed]
        inputs = read_physics_inputs(object, read_as, options, source)
        warnings.extend(w for w in inputs.warnings if w not in warnings)
        poses = np.array([compute_candidate_pose(result.grasps[c]) for c in ids]).reshape(-1, 4, 4)
        share = (lambda m, f, i=index: progress(m, (i + f) / len(targets))) if progress else None
        evaluated, meta = _run(inputs, poses, options, share, cancel)
        for cid, evaluation in zip(ids, evaluated, strict=True):
            new_grasps[cid] = new_grasps[cid].model_copy(
                update={"physics": GraspPhysics(**evaluation.to_record())}
            )
        if len(targets) == 1:
            physics_meta = meta
        else:
            physics_meta.setdefault("grippers", {})[str(listed)] = meta
    if rank:
        new_grasps = _rank_by_success(new_grasps)
    physics_meta["ranking"] = RANKING_PHYSICS if rank else RANKING_KEPT
    mode = result.metadata.generation_mode
    if rank:
        note = f"ranking=physics success_rate then confidence (trials={trials}, seed={seed})"
        mode = f"{mode}; {note}" if mode else note
    metadata = result.metadata.model_copy(
        update={
            "physics": physics_meta,
            "generation_mode": mode,
            "warnings": tuple(result.metadata.warnings) + tuple(warnings),
        }
    )
    return GraspPlanningResult.model_validate(
        {
            **result.model_dump(exclude={"grasps", "metadata"}),
            "grasps": {k: v.model_dump() for k, v in new_grasps.items()},
            "metadata": metadata.model_dump(),
        }
    )


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normpath(a) == os.path.normpath(b)


def _choose_grippers(
    result: GraspPlanningResult, gripper: GripperRef | None
) -> list[tuple[GripperRef, GripperRef]]:
    """(gripper as the result names it, gripper to read) for each gripper to evaluate."""
    listed = result.grippers
    if gripper is None:
        return [(g, g) for g in listed]
    if not isinstance(gripper, GripperRef):
        raise TypeError(f"gripper is {type(gripper).__name__}; expected a GripperRef")
    for g in listed:
        if g.prim_path == gripper.prim_path and _same_file(g.asset_path, gripper.asset_path):
            return [(g, gripper)]
    names = ", ".join(str(g) for g in listed) or "none (the result has no candidates)"
    raise ValueError(f"gripper {gripper} has no candidates in the grasps; they are for: {names}")


def _rank_by_success(grasps: dict[str, Any]) -> dict[str, Any]:
    """Per gripper (grippers in file order): best measured success rate first, then confidence."""
    by_gripper: dict[Any, list[Any]] = {}
    for candidate in grasps.values():
        by_gripper.setdefault(candidate.gripper, []).append(candidate)
    ordered = {}
    for candidates in by_gripper.values():
        candidates.sort(
            key=lambda c: (
                -(c.physics.success_rate if c.physics else -1.0),
                -c.confidence,
                c.candidate_id,
            )
        )
        ordered.update((c.candidate_id, c) for c in candidates)
    return ordered


# --- multi-hand targets (usdgrip sample --format json) -----------------------------------


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
    object: GeometryRef,
    gripper: GripperRef,
    *,
    trials: int = 1,
    force: float | None = None,
    friction: float | None = None,
    density: float | None = None,
    scene: str | None = None,
    support: str | None = None,
    table: bool = False,
    gripper_model: str = "auto",
    jobs: int = 1,
    seed: int = 0,
    params: Any = None,
    cache_dir: str | None = None,
    stages: Mapping[str | os.PathLike[str], Any] | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Evaluate multi-hand candidates: a candidate's targets are hands that close and lift together.

    ``samples`` is ``usdgrip sample --format json`` output (a dict or its file): world
    poses at sampling time, mapped into the object frame with the object's current
    world transform. Every hand is ``gripper``. Options as :func:`evaluate_grasps`.

    Returns:
        A JSON-ready dict: ``format`` (``usdgrip_targets_evaluation``), ``object``,
        ``gripper``, ``candidates`` (per candidate, in input order: ``index``,
        ``targets`` as given, ``outcome``, ``success_rate``, ``trials``, ``outcomes``),
        ``summary``, ``physics`` (engine, parameters, what was read and assumed, runtime)
        and ``warnings``.

    Raises:
        GripperError, ValueError, TypeError: as :func:`evaluate_grasps`; bad samples name
        the record.
    """
    options = EvaluationOptions(
        trials, force, friction, density, scene, support, table, gripper_model, jobs, seed,
        params, cache_dir,
    )  # fmt: skip
    if isinstance(samples, str | os.PathLike):
        source, data = str(samples), read_target_samples(samples)
    elif isinstance(samples, Mapping):
        source, data = "samples", dict(samples)
    else:
        raise TypeError(f"samples is {type(samples).__name__}; expected a mapping or a JSON path")
    world = parse_target_samples(data, source)
    inputs = read_physics_inputs(object, gripper, options, StageSource(stages))
    poses = np.einsum("ij,nhjk->nhik", np.linalg.inv(inputs.world_frame), world)
    results, meta = _run(inputs, poses, options, progress, cancel)
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
        "warnings": list(inputs.warnings),
    }
