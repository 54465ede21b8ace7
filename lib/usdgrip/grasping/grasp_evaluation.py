"""Physics-checked grasps from USD: the inputs read once, then the engine's grasp-and-lift trials.

:func:`evaluate_grasps` adds a measured ``physics`` mapping to every candidate of a
planning result (and ``metadata.physics``). It takes the
:class:`~usdgrip.grasping.inputs.GraspInputs` a caller read (or reads them itself, once)
and the :class:`~usdgrip.grasping.options.EvaluationOptions`, builds the engine's models
(:func:`build_physics_world`, :func:`build_physics_hand`, from
:mod:`usdgrip.grasping.physics_models`) and runs the pure engine
:mod:`usdgrip.grasping.physics` (docs/physics.md).

Inputs and their fallbacks (a warning names every default taken):

- object meshes: the input reader's (``ObjectInputs.vertices``), in the object frame M
  (the prim's world frame, scale removed), metres;
- mass: ``UsdPhysics.MassAPI`` ``physics:mass``, else ``physics:density`` × volume,
  else ``density`` (default :data:`~usdgrip.grasping.physics.DEFAULT_DENSITY`);
- friction: the bound ``UsdPhysics.MaterialAPI`` material, else ``friction``
  (default :data:`~usdgrip.grasping.physics.DEFAULT_FRICTION`);
- grip force: ``force``, else the site's ``gripper:maxGripForce``, else
  :data:`~usdgrip.grasping.physics.DEFAULT_GRIP_FORCE` N per finger;
- gripper shapes: the planner's collision model (``gripper_model`` auto/proxy/geometry);
- up: the object stage's ``upAxis`` rotated into M (USD's fallback ``Y`` when not authored);
- support: ``table=True`` (a plane under the object's lowest point) or the geometry of
  ``support`` in the ``scene`` file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from usdgrip.contracts import (
    GeometryRef,
    GraspPhysics,
    GraspPlanningMetadata,
    GraspPlanningResult,
    GripperRef,
)
from usdgrip.grasping.inputs import GraspInputs, StageSource, read_grasp_inputs
from usdgrip.grasping.options import EvaluationOptions, make_evaluation_options
from usdgrip.grasping.physics_models import (
    PhysicsHand,
    PhysicsWorld,
    build_physics_hand,
    build_physics_world,
)
from usdgrip.grasping.provenance import Note, render_notes
from usdgrip.grasping.stage_source import is_same_file

Progress = Callable[[str, float], None]
"""``progress(message, fraction_done)``; fraction in [0, 1]."""

#: ``metadata.physics["ranking"]`` when candidates are ordered by measured success.
RANKING_PHYSICS = "success_rate,confidence"
#: ``metadata.physics["ranking"]`` when the planner's order is kept.
RANKING_KEPT = "unchanged"


def run_physics(
    world: PhysicsWorld,
    hand: PhysicsHand,
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
        summarize_open_hits,
    )

    params = options.evaluation_params()
    report = progress or (lambda message, fraction: None)
    started = time.perf_counter()
    results = evaluate_candidates(
        world.obj,
        hand.gripper,
        poses,
        scene=world.scene,
        params=params,
        seed=options.seed,
        jobs=options.jobs,
        progress=lambda done, total: report(
            f"physics: {done}/{total} candidates", done / max(total, 1)
        ),
        cancel=cancel,
        engine=options.engine,
    )
    simulation = time.perf_counter() - started
    metadata = {
        **engine_metadata(params, options.engine),
        "seed": options.seed,
        "jobs": options.jobs,
        "object": world.record["object"],
        "gripper": hand.record,
        "up": world.record["up"],
        "support": world.record["support"],
        "summary": summarize_evaluations(results),
        # building the object and hand (CoACD decomposition) is part of the run's time
        "runtime_seconds": simulation + world.seconds + hand.seconds,
        "build_runtime_seconds": world.seconds + hand.seconds,
        "simulation_runtime_seconds": simulation,
    }
    if options.dump_scene is not None:
        metadata["scenes"] = write_scenes(world, hand, poses, options)
    hits = summarize_open_hits([r.open_hits for r in results])
    if hits:
        metadata["collides_open_with"] = hits
    return results, metadata


def write_scenes(
    world: PhysicsWorld, hand: PhysicsHand, poses: np.ndarray, options: EvaluationOptions
) -> str:
    """Write ``candidate_NNNN.xml`` per candidate (its nominal trial) into ``dump_scene``.

    Raises:
        ValueError: the folder cannot be made or written (the message names it).
    """
    from pathlib import Path

    from usdgrip.fileio import replace_atomically
    from usdgrip.grasping.physics.engines import get_engine

    folder = Path(str(options.dump_scene))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--dump-scene {folder}: cannot make the folder: {exc.strerror}") from None
    from usdgrip.grasping.physics.candidate_trials import check_hand_poses

    poses = check_hand_poses(poses)  # (N, H, 4, 4)
    engine = get_engine("mujoco").build(
        world.obj, hand.gripper, world.scene, poses.shape[1], options.evaluation_params()
    )
    for index, candidate in enumerate(poses):
        text = engine.scene_xml(candidate)
        try:
            replace_atomically(
                folder / f"candidate_{index:04d}.xml",
                lambda temp, text=text: temp.write_text(text, encoding="utf-8"),
            )
        except OSError as exc:
            raise ValueError(f"--dump-scene {folder}: cannot write: {exc.strerror}") from None
    return str(folder)


def resolve_one_gripper(
    object: GeometryRef | None, gripper: GripperRef | None, inputs: GraspInputs | None
) -> tuple[GeometryRef, GripperRef]:
    """The object and the one gripper of a call: as given, else the inputs' (their only one).

    Raises:
        TypeError: neither given nor in the inputs, or of another type.
    """
    if inputs is not None:
        object = inputs.object.geometry if object is None else object
        if gripper is None and len(inputs.grippers) == 1:
            gripper = inputs.grippers[0].ref
    if not isinstance(object, GeometryRef):
        raise TypeError(f"object is {type(object).__name__}; expected a GeometryRef")
    if not isinstance(gripper, GripperRef):
        raise TypeError(f"gripper is {type(gripper).__name__}; expected a GripperRef")
    return object, gripper


def read_evaluation_inputs(
    object: GeometryRef,
    grippers: list[GripperRef],
    options: EvaluationOptions,
    inputs: GraspInputs | None,
    stages: Mapping[str | os.PathLike[str], Any] | StageSource | None,
) -> GraspInputs:
    """The inputs the evaluation runs on: ``inputs`` when given (checked), else read once.

    Raises:
        ValueError: ``inputs`` read for another object, support or gripper model.
        GripperError: as :func:`~usdgrip.grasping.inputs.read_grasp_inputs`.
    """
    if inputs is None:
        return read_grasp_inputs(
            object,
            grippers,
            table=options.table,
            scene=options.scene,
            support=options.support,
            gripper_model=options.gripper_model,
            stages=stages,
        )
    if not isinstance(inputs, GraspInputs):
        raise TypeError(f"inputs is {type(inputs).__name__}; expected GraspInputs")
    read = inputs.object.geometry
    if read.prim_path != object.prim_path or not is_same_file(read.asset_path, object.asset_path):
        raise ValueError(f"the inputs were read for {read}, not the object {object}")
    if inputs.gripper_model != options.gripper_model:
        raise ValueError(
            f"the inputs were read with gripper model {inputs.gripper_model!r}; the options "
            f"ask for {options.gripper_model!r}"
        )
    inputs.check_support(options.table, options.scene, options.support)
    for ref in grippers:
        inputs.find_gripper(ref)
    return inputs


def evaluate_grasps(
    result_or_path: GraspPlanningResult | str | os.PathLike[str],
    object: GeometryRef | None = None,
    gripper: GripperRef | None = None,
    *,
    options: EvaluationOptions | None = None,
    inputs: GraspInputs | None = None,
    rank: bool = False,
    stages: Mapping[str | os.PathLike[str], Any] | StageSource | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    gripper_frame: str | None = None,
    grasps_name: str | None = None,
    **legacy: Any,
) -> GraspPlanningResult:
    """Grasp-and-lift every candidate of a grasp file; the result with ``physics`` added.

    Args:
        result_or_path: a :class:`GraspPlanningResult` or an Isaac-Grasp file of any writer
            (usdgrip, Isaac Sim's Grasp Editor, GraspGen, GraspDataGen; read by
            :func:`~usdgrip.grasping.isaac_yaml.read_isaac_grasp`).
        object: the object the grasps are for (a usdgrip file's ``metadata.pose_frame``
            must be its prim); may be left out when ``inputs`` are given.
        gripper: the gripper site to simulate; ``None``: every gripper the entries name
            (each read from the path its entries name). Given, it must be one of them
            (same prim, same file), and only its candidates and the entries that name no
            gripper (another tool's file) are evaluated. A gripper the one rule refuses is
            skipped with a warning (an error when none is left).
        options: the evaluation options (:class:`EvaluationOptions`: trials, force,
            friction, density, support, gripper model, jobs, seed, engine parameters,
            cache, engine).
        inputs: the object, grippers and support already read (the planner's); nothing
            is read again.
        rank: order each gripper's entries by measured ``success_rate``, then
            ``confidence`` (``metadata.physics["ranking"]`` and ``generation_mode`` say so);
            else the input order is kept.
        stages: stages the caller has open, by asset path (or a ``StageSource``).
        progress: ``progress(message, fraction)``.
        cancel: polled between candidates; True stops with
            :class:`~usdgrip.grasping.physics.EvaluationCancelled`.
        gripper_frame: the prim of the gripper asset the file's poses are of (the CLI's
            ``--gripper-frame``), replacing the file's ``gripper_frame`` /
            ``gripper_frame_link``; ``None``: the file's, else the site's grasp frame G
            (:func:`~usdgrip.grasping.pose_frames.resolve_pose_frames`).
        grasps_name: how warnings name the grasps (the CLI: the file it read); default
            the path given, else ``grasps``.
        **legacy: the old keywords (``trials=``, ``force=``, ``friction=``, ``density=``,
            ``scene=``, ``support=``, ``table=``, ``gripper_model=``, ``jobs=``, ``seed=``,
            ``params=``, ``cache_dir=``): :class:`EvaluationOptions`' fields, a shim for
            one release; not with ``options``.

    Returns:
        A new result: every evaluated entry has ``physics`` (success_rate, trials,
        outcome of trial 0, outcome counts, what the open hand hit); ``metadata.physics``
        holds the engine, every parameter, what was read and assumed (the pose frames
        included), the summary and the runtime; ``metadata.warnings`` adds every default
        taken. Candidate ids, poses and every other key are unchanged; another tool's
        file gains a ``metadata`` saying how it was evaluated.

    Raises:
        GripperError: unreadable input (file, prim, mesh, site, physics attributes, the
            file's gripper frame), no usable gripper.
        ValueError, TypeError: a bad option, naming it; options with the old keywords.
    """
    from usdgrip.grasping.isaac_yaml import (
        compute_candidate_poses,
        describe_writer,
        read_isaac_grasp,
    )
    from usdgrip.grasping.pose_frames import resolve_pose_frames

    started = time.perf_counter()
    options = make_evaluation_options(options, legacy, "evaluate_grasps")
    label = f"grasps {grasps_name}" if grasps_name else "grasps"
    if isinstance(result_or_path, GraspPlanningResult):
        result = result_or_path
    elif isinstance(result_or_path, str | os.PathLike):
        result = read_isaac_grasp(result_or_path)
        label = f"grasps {grasps_name or os.fspath(result_or_path)}"
    else:
        raise TypeError(
            f"result_or_path is {type(result_or_path).__name__}; expected a "
            "GraspPlanningResult or an Isaac-Grasp file path"
        )
    if object is None and inputs is not None:
        object = inputs.object.geometry
    if not isinstance(object, GeometryRef):
        raise TypeError(f"object is {type(object).__name__}; expected a GeometryRef")
    if result.metadata is not None and result.metadata.pose_frame != object.prim_path:
        raise ValueError(
            f"the grasps are in the frame of <{result.metadata.pose_frame}> "
            f"(metadata.pose_frame), not of the object <{object.prim_path}>; evaluate them "
            "with the object they were planned for"
        )
    if gripper_frame is not None and (not isinstance(gripper_frame, str) or not gripper_frame):
        raise TypeError(f"gripper_frame is {gripper_frame!r}; expected a prim path or None")
    targets = _choose_grippers(result, gripper)
    source = StageSource(stages)
    inputs = read_evaluation_inputs(
        object, [read_as for _, read_as in targets], options, inputs, source
    )
    # A result without grasps names no gripper: nothing to simulate, nothing to build.
    world = build_physics_world(inputs, options) if result.grasps else None
    new_grasps = dict(result.grasps)
    notes: list[Note] = []
    physics_meta: dict[str, Any] = {}
    all_poses = compute_candidate_poses(result)
    rows = {cid: row for row, cid in enumerate(result.grasps)}
    for index, (listed, read_as) in enumerate(targets):
        record = inputs.find_gripper(read_as)
        if record.skipped is not None:
            notes.append(record.skipped)
            continue
        frames = resolve_pose_frames(
            result,
            record.site.path,
            record.site.grasp_frame,
            object.prim_path,
            source.open(read_as.asset_path),
            gripper_frame,
            label,
        )
        hand = build_physics_hand(record, options)
        for note in (*world.notes, *hand.notes, *frames.notes):
            if note not in notes:
                notes.append(note)
        ids = [cid for cid, c in result.grasps.items() if c.gripper in listed]
        poses = frames.convert(all_poses[[rows[cid] for cid in ids]])
        share = (lambda m, f, i=index: progress(m, (i + f) / len(targets))) if progress else None
        evaluated, meta = run_physics(world, hand, poses, options, share, cancel)
        if frames.gripper_frame is not None or result.metadata is None:
            meta["pose_frames"] = frames.to_record()
        for cid, evaluation in zip(ids, evaluated, strict=True):
            new_grasps[cid] = new_grasps[cid].model_copy(
                update={"physics": GraspPhysics(**evaluation.to_record())}
            )
        if len(targets) == 1:
            physics_meta = meta
        else:
            physics_meta.setdefault("grippers", {})[str(read_as)] = meta
    if rank:
        new_grasps = _rank_by_success(new_grasps)
    physics_meta["ranking"] = RANKING_PHYSICS if rank else RANKING_KEPT
    ranking = (
        f"ranking=physics success_rate then confidence (trials={options.trials}, "
        f"seed={options.seed})"
        if rank
        else None
    )
    if result.metadata is None:  # another tool's file: usdgrip says how it evaluated it
        import usdgrip

        origin = f"grasps read from a file of {describe_writer(result)}, not planned by usdgrip"
        metadata = GraspPlanningMetadata(
            upstream_revision=f"usdgrip {usdgrip.__version__}",
            seed=options.seed,
            runtime_seconds=time.perf_counter() - started,
            pose_frame=object.prim_path,
            generation_mode=f"{origin}; {ranking}" if ranking else origin,
            warnings=render_notes(notes),
            physics=physics_meta,
        )
    else:
        mode = result.metadata.generation_mode
        if ranking:
            mode = f"{mode}; {ranking}" if mode else ranking
        metadata = result.metadata.model_copy(
            update={
                "physics": physics_meta,
                "generation_mode": mode,
                "warnings": tuple(result.metadata.warnings) + render_notes(notes),
            }
        )
    # The entries as read, plus physics: every key they hold is written back.
    return result.model_copy(update={"grasps": new_grasps, "metadata": metadata})


def _choose_grippers(
    result: GraspPlanningResult, gripper: GripperRef | None
) -> list[tuple[tuple[GripperRef | None, ...], GripperRef]]:
    """(the entries' ``gripper`` values it evaluates, gripper to read) for each gripper.

    Entries naming no gripper (another tool's file) are the given ``gripper``'s.

    Raises:
        ValueError: no ``gripper`` for entries that name none; a ``gripper`` the entries
            do not name (and no entry without one).
    """
    listed = result.grippers
    unnamed = any(c.gripper is None for c in result.grasps.values())
    if gripper is None:
        if unnamed:
            raise ValueError(
                "the grasps name no gripper (another tool's Isaac-Grasp file); give the "
                "gripper site to simulate (--gripper FILE:/SITE)"
            )
        return [((g,), g) for g in listed]
    if not isinstance(gripper, GripperRef):
        raise TypeError(f"gripper is {type(gripper).__name__}; expected a GripperRef")
    for g in listed:
        if g.prim_path == gripper.prim_path and is_same_file(g.asset_path, gripper.asset_path):
            return [((g, None), gripper)]
    if unnamed:
        return [((None,), gripper)]
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
                -(c.confidence if c.confidence is not None else -np.inf),
                c.candidate_id,
            )
        )
        ordered.update((c.candidate_id, c) for c in candidates)
    return ordered
