"""Grasp planning: request in, ranked and collision-checked Isaac-Grasp candidates out.

:func:`plan_grasps` reads the object and every gripper once
(:func:`usdgrip.grasping.inputs.read_grasp_inputs`, or takes the
:class:`~usdgrip.grasping.inputs.GraspInputs` a caller read), proposes candidates with
the backends that apply (:data:`usdgrip.grasping.backends.registry.BACKENDS`), drops the
ones that do not fit or collide, ranks them and returns a
:class:`~usdgrip.contracts.GraspPlanningResult`.

Pipeline for each gripper, in request order:

1. Proposals (``generation_method``): each backend's ``propose``
   (``antipodal`` on the object's mesh surface, ``slots`` on its GripperSlots, ``lines``
   on its SimReady grasp vector lines; docs/planning.md has each one's score). Every
   proposal carries its :class:`~usdgrip.grasping.provenance.Provenance` (backend, slot,
   grasp line, diversity group) to the end.
2. Fit: candidates wider than the site's max opening are dropped; a gripper
   whose max payload is below the object's ``mass_kg`` is skipped.
3. Rank by score after soft non-maximum suppression over diversity groups (the k-th
   approach of one contact pair or line times ``pair_decay ** k``), ties by id;
   the decay is applied again among the survivors and gives ``confidence``.
4. Collision (:mod:`usdgrip.grasping.collision`), in rank order and in chunks until
   ``max_candidates_per_gripper`` survive (lower-ranked proposals are never
   checked): the open gripper at the grasp pose against the object, the scene
   obstacles and the support (a grasp whose hand cuts the table is dropped); then the
   retreat check (the object attached to the gripper, moved back along -approach by
   ``retreat_distance``, excused from its support while it still rests on it).

Frames: poses are ``T_M_G`` with M the object prim's world frame with its
scale removed (:func:`usdgrip.frames.compute_rigid_part`), in metres; so
``metadata.pose_frame`` is the object prim path.

Candidate ids: ``g_<h>_<backend>_<name>`` (``g_<h>_antipodal_<n>``,
``g_<h>_slots_<slot>_<n>``, ``g_<h>_lines_<line>_<n>``) with ``<h>`` the first 8 hex
digits of SHA-256 over the gripper's asset path (as given) and prim path; they do not
depend on the collision outcome, the ranking or the truncation. Randomness: one
``numpy.random.Generator`` per (seed, gripper, backend), from ``SeedSequence([seed, s,
backend seed index])``; ``s`` (:func:`compute_stream_key`) hashes the gripper file's
*name* and prim path, so the same request gives the same grasps wherever the files live.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from usdgrip.contracts import (
    GraspPlanningMetadata,
    GraspPlanningRequest,
    GraspPlanningResult,
)
from usdgrip.errors import GripperError
from usdgrip.grasping.backends.antipodal_approach import compute_pair_decay
from usdgrip.grasping.backends.registry import BACKENDS, list_applicable
from usdgrip.grasping.checking import RankedChecker
from usdgrip.grasping.inputs import (
    GraspInputs,
    Gripper,
    ObjectInputs,
    StageSource,
    read_grasp_inputs,
)
from usdgrip.grasping.options import UNSET, OptionError, PlanningOptions
from usdgrip.grasping.planning_candidates import (
    PlanningRun,
    add_joint_values,
    build_candidates,
    choose_file_frames,
)
from usdgrip.grasping.planning_scene import PlanningScene, build_scene
from usdgrip.grasping.proposals import (
    Proposals,
    ProposalSettings,
    compute_gripper_key,
    compute_stream_key,
    make_rng,
)
from usdgrip.grasping.provenance import Note, render_notes

#: Proposals generated per kept candidate, so that collisions still leave enough.
OVERSAMPLE = 3
#: Proposals per kept candidate on a table: most approaches to an object lying on one come
#: from the side or below and cut it, so each backend draws more.
TABLE_OVERSAMPLE = 10
#: Upper bound on proposals per backend and gripper (memory and time guard).
MAX_PROPOSALS = 20_000

Progress = Callable[[str, float], None]
"""``progress(message, fraction_done)``; fraction in [0, 1]."""


class PlanningOutcome(NamedTuple):
    """What :func:`run_planning` gives: the result, its notes as records, the inputs read."""

    result: GraspPlanningResult
    notes: tuple[Note, ...]
    """``metadata.warnings`` as :class:`~usdgrip.grasping.provenance.Note` records."""
    inputs: GraspInputs


def plan_grasps(
    request: GraspPlanningRequest,
    scene: Any = None,
    *,
    methods: str | Sequence[str] | None = UNSET,
    support: str | None = UNSET,
    table: bool = UNSET,
    retreat_distance: float = UNSET,
    retreat_steps: int = UNSET,
    clearance: float = UNSET,
    gripper_model: str = UNSET,
    ray_backend: str = UNSET,
    pair_decay: float = UNSET,
    progress: Progress | None = None,
    stages: Mapping[str | os.PathLike[str], Any] | StageSource | None = None,
    options: PlanningOptions | None = None,
    inputs: GraspInputs | None = None,
) -> GraspPlanningResult:
    """Plan collision-checked grasp candidates for every gripper of ``request``.

    Args:
        request: object, grippers (in output order), candidate limit and seed.
        scene: obstacles around the object: ``None`` (the object alone), a
            :class:`~usdgrip.grasping.collision.CollisionScene` (the object is added for
            the run and removed afterwards; it must not contain the object), or a USD file
            path read with the inputs, leaving out the shapes at or under the object prim
            (the object itself, when the file contains it; a warning says so).
        methods: backends to run (``"antipodal,slots,lines"`` or a sequence); ``None``:
            every backend that applies.
        support: the scene obstacle (prim path) the object rests on; the retreat check
            excuses object-support contact while the object still rests there.
        table: the object rests on a plane just under its lowest point along the stage's
            up axis (an obstacle: grasps whose hand cuts it are dropped; and its support).
        retreat_distance: metres to move back along -approach with the object.
        retreat_steps: poses sampled along the retreat (>= 1).
        clearance: antipodal opening kept free beyond the contact width, metres.
        gripper_model: ``auto``, ``proxy`` or ``geometry``.
        ray_backend: antipodal ray casting: ``auto``, ``embree`` or ``triangle``.
        pair_decay: soft-NMS factor in (0, 1]; 1: off.
        progress: optional ``progress(message, fraction)`` callback.
        stages: ``Usd.Stage`` objects the caller has open, keyed by the asset path the
            request (or ``scene``) names, or a :class:`StageSource`; those files are not
            opened again. Every other file is opened once per call.
        options: the planning options as one record (not with the keywords above).
        inputs: the object, grippers and support already read
            (:func:`~usdgrip.grasping.inputs.read_grasp_inputs`, with the same object,
            grippers, scene file, support and gripper model); nothing is read again.

    Returns:
        The result: entries best-first per gripper, grippers in request order;
        ``metadata.warnings`` says what was skipped and why nothing survived.

    Raises:
        GripperError: unreadable object or gripper file, missing prim, a gripper prim that
            is not a site, no usable gripper left
            (:func:`~usdgrip.grasping.inputs.find_gripper_problem`), an object without
            what an asked-for backend needs (or nothing any backend can use), a mesh
            that does not bound a solid when antipodal runs.
        ValueError: bad options (:class:`PlanningOptions`), an unknown support.
        TypeError: ``request`` is not a :class:`GraspPlanningRequest`; options with keywords.
    """
    keywords = {
        "methods": methods, "support": support, "table": table,
        "retreat_distance": retreat_distance, "retreat_steps": retreat_steps,
        "clearance": clearance, "gripper_model": gripper_model, "ray_backend": ray_backend,
        "pair_decay": pair_decay,
    }  # fmt: skip
    given = {name: value for name, value in keywords.items() if value is not UNSET}
    if options is None:
        options = PlanningOptions(**given)
    elif given:
        raise TypeError(
            f"plan_grasps: pass options=PlanningOptions(...) or the keywords "
            f"{', '.join(sorted(given))}, not both"
        )
    return run_planning(
        request, options=options, scene=scene, inputs=inputs, stages=stages, progress=progress
    ).result


def run_planning(
    request: GraspPlanningRequest,
    *,
    options: PlanningOptions,
    scene: Any = None,
    inputs: GraspInputs | None = None,
    stages: Mapping[str | os.PathLike[str], Any] | StageSource | None = None,
    progress: Progress | None = None,
) -> PlanningOutcome:
    """:func:`plan_grasps` with its notes as records (what a caller reacting to them reads).

    Raises:
        As :func:`plan_grasps`.
    """
    if not isinstance(request, GraspPlanningRequest):
        raise TypeError(
            f"request is {type(request).__name__}; expected a GraspPlanningRequest "
            "(usdgrip.GraspPlanningRequest(object=..., grippers=[...]))"
        )
    if not isinstance(options, PlanningOptions):
        raise TypeError(f"options is {type(options).__name__}; expected PlanningOptions")
    started = time.perf_counter()
    report = progress or (lambda message, fraction: None)
    scene_file = os.fspath(scene) if isinstance(scene, str | os.PathLike) else None
    if inputs is None:
        report(f"reading object {request.object.geometry}", 0.0)
        inputs = read_grasp_inputs(
            request.object.geometry,
            request.grippers,
            table=options.table,
            scene=scene_file,
            support=options.support,
            gripper_model=options.gripper_model,
            stages=stages,
        )
    else:
        _check_inputs(inputs, request, options, scene_file)
    run = PlanningRun()
    chosen = choose_methods(inputs.object, options.requested, run)
    world = build_scene(inputs, scene, options.support)
    run.notes.extend(world.notes)
    try:
        for index, ref in enumerate(request.grippers):
            gripper = inputs.find_gripper(ref)
            share = 0.05 + 0.95 * index / len(request.grippers)
            step = 0.95 / len(request.grippers)
            if not _check_gripper(gripper, request.object.mass_kg, run):
                continue
            run.models_used.append(gripper.collision_model.source)
            proposals = propose(request, gripper, inputs, chosen, options, run, share, report)
            if not len(proposals):
                continue
            proposals = rank(fit(proposals, gripper, run), options.pair_decay)
            kept, exclusions = check(
                proposals, gripper, inputs.object, world, request, options, run, share, step,
                report,
            )  # fmt: skip
            if not kept:
                run.note(
                    "no_candidate", gripper, "no candidate survived the fit and collision checks"
                )
                continue
            candidates = build_candidates(gripper, proposals, kept, exclusions, options)
            run.grasps.update(add_joint_values(gripper, candidates, run))
    finally:
        for added in world.added:  # the object and the table leave the caller's scene as it was
            world.scene.remove(added)
    report("done", 1.0)
    result = build_result(request, inputs, chosen, world.obstacles, options, run, started)
    return PlanningOutcome(result, tuple(run.notes), inputs)


def _check_inputs(
    inputs: GraspInputs, request: GraspPlanningRequest, options: PlanningOptions, scene: str | None
) -> None:
    """Refuse inputs read for another object, gripper model, scene or support."""
    if not isinstance(inputs, GraspInputs):
        raise TypeError(f"inputs is {type(inputs).__name__}; expected GraspInputs")
    geometry = request.object.geometry
    if inputs.object.geometry != geometry:
        raise ValueError(
            f"the inputs were read for {inputs.object.geometry}, not the request's object "
            f"{geometry}"
        )
    for ref in request.grippers:
        inputs.find_gripper(ref)
    if inputs.gripper_model != options.gripper_model:
        raise ValueError(
            f"the inputs were read with gripper model {inputs.gripper_model!r}; the options "
            f"ask for {options.gripper_model!r}"
        )
    if scene is not None and scene != inputs.scene:
        raise ValueError(f"scene {scene!r}: the inputs were read with scene {inputs.scene!r}")
    scene_of_support = inputs.support.scene if options.support is not None else None
    inputs.check_support(options.table, scene_of_support, options.support)


def choose_methods(
    obj: ObjectInputs, requested: tuple[str, ...] | None, run: PlanningRun
) -> tuple[str, ...]:
    """The backends to run: the asked-for ones (each must apply), else every one that applies.

    Raises:
        GripperError: an asked-for backend without its input, or none that applies, or a
            backend refusing the object (a mesh that does not bound a solid for antipodal).
    """
    asset = obj.geometry.asset_path
    if requested is not None:
        for name in requested:
            reason = BACKENDS[name].applies(obj) or BACKENDS[name].refuse(obj, True)
            if reason is not None:
                raise GripperError(f"{asset}: {reason}")
        chosen = requested
    else:
        chosen = list_applicable(obj)
        if not chosen:
            why = "; ".join(note.render() for note in obj.notes)
            raise GripperError(
                f"{asset}: <{obj.prim_path}> has no mesh and no GripperSlots; nothing to "
                f"plan from ({why})"
            )
        for name in chosen:
            reason = BACKENDS[name].refuse(obj, False)
            if reason is not None:
                raise GripperError(f"{asset}: {reason}")
    run.notes.extend(note.within(obj.label) for note in obj.notes)
    if requested is None:
        run.notes.extend(
            Note("backend_skipped", name, record.skip_note, (obj.label,))
            for name, record in BACKENDS.items()
            if record.skip_note and name not in chosen
        )
    return chosen


def _check_gripper(gripper: Gripper, mass: float | None, run: PlanningRun) -> bool:
    """Whether a gripper can be planned for; if not, a note says why it is skipped."""
    run.notes.extend(gripper.notes)
    if gripper.skipped is not None:
        run.notes.append(gripper.skipped)
        return False
    site = gripper.site
    payload = site.max_payload
    if mass is not None and payload is not None and np.isfinite(payload) and mass > payload:
        run.note(
            "payload_exceeded",
            gripper,
            f"skipped: object mass {mass:g} kg exceeds the gripper's max payload {payload:g} kg "
            f"({site.max_payload_source})",
        )
        return False
    if gripper.collision_model.source == "proxy" and gripper.pad_note is not None:
        run.notes.append(gripper.pad_note)
    return True


def _fallback_warning(asked: str) -> str:
    why = (
        "ray_backend 'triangle' was asked"
        if asked == "triangle"
        else "Embree is unavailable (embreex is not importable)"
    )
    return (
        f"antipodal: {why}, so ray casting used trimesh's slower pure-python fallback "
        "(about 25x slower than Embree); install the 'plan' extra (embreex) for speed"
    )


def count_proposals(request: GraspPlanningRequest, options: PlanningOptions) -> int:
    """Proposals each backend draws per gripper."""
    factor = TABLE_OVERSAMPLE if options.table else OVERSAMPLE
    return min(MAX_PROPOSALS, factor * request.max_candidates_per_gripper)


def propose(
    request: GraspPlanningRequest,
    gripper: Gripper,
    inputs: GraspInputs,
    chosen: Sequence[str],
    options: PlanningOptions,
    run: PlanningRun,
    share: float,
    report: Progress,
) -> Proposals:
    """Propose step: every chosen backend's proposals for one gripper, in frame M."""
    obj = inputs.object
    count = count_proposals(request, options)
    key, stream = compute_gripper_key(gripper.ref), compute_stream_key(gripper.ref)
    normal = obj.lift_up if inputs.support.kind == "table" else obj.up
    settings = ProposalSettings(options.clearance, options.rays, normal)
    proposals = Proposals()
    for name in chosen:
        backend = BACKENDS[name]
        report(f"{gripper.label}: {name} proposals", share)
        rng = make_rng(request.seed, stream, backend.seed_index)
        batch = backend.propose(obj, gripper, count=count, rng=rng, settings=settings)
        if name == "antipodal" and options.rays == "triangle" and not run.fallback_noted:
            run.fallback_noted = True
            run.notes.append(Note("slow_rays", "antipodal", _fallback_warning(options.ray_backend)))
        run.notes.extend(note.within(gripper.label, name) for note in batch.notes)
        if not batch.names:
            run.note("no_proposals", gripper, f"{name} produced no proposals")
            continue
        proposals.extend(key, backend, batch)
    return proposals


def fit(proposals: Proposals, gripper: Gripper, run: PlanningRun) -> Proposals:
    """Fit step: drop the proposals wider than the max opening (a note counts them)."""
    opening = gripper.max_opening
    fits = np.array(proposals.widths) <= opening * (1 + 1e-9)
    if fits.all():
        return proposals
    run.note(
        "too_wide",
        gripper,
        f"{int((~fits).sum())} proposals wider than max opening {opening:g} m dropped",
    )
    return proposals.keep(fits)


def rank(proposals: Proposals, pair_decay: float) -> Proposals:
    """Rank step: best first by soft-NMS score over diversity groups, ties by id."""
    scores = compute_pair_decay(proposals.scores, proposals.groups, pair_decay)
    order = sorted(range(len(proposals)), key=lambda i: (-scores[i], proposals.ids[i]))
    return proposals.keep_order(order)


def check(
    proposals: Proposals,
    gripper: Gripper,
    obj: ObjectInputs,
    world: PlanningScene,
    request: GraspPlanningRequest,
    options: PlanningOptions,
    run: PlanningRun,
    share: float,
    step: float,
    report: Progress,
) -> tuple[list[int], dict[int, tuple[str, ...]]]:
    """Check step: collision-check ranked proposals until the budget is filled.

    Proposals below the last kept one are never checked. Returns the kept rows (rank
    order) and the exclusions each one's checks used.
    """
    checker = RankedChecker(
        world.scene, gripper.collision_model, obj.world_frame, world.object_id,
        world.support_id, options.retreat_distance, options.retreat_steps,
    )  # fmt: skip
    kept, exclusions = checker.run(
        proposals,
        request.max_candidates_per_gripper,
        lambda done, total: report(
            f"{gripper.label}: collision checks ({done}/{total} proposals)",
            share + step * (0.1 + 0.9 * done / max(total, 1)),
        ),
    )
    for text in checker.summaries():
        run.note("collisions", gripper, text)
    return kept, exclusions


def build_result(
    request: GraspPlanningRequest,
    inputs: GraspInputs,
    chosen: Sequence[str],
    obstacles: int,
    options: PlanningOptions,
    run: PlanningRun,
    started: float,
) -> GraspPlanningResult:
    """Result step: the candidates and the metadata saying how they were made."""
    import usdgrip

    object_frame, gripper_frame = choose_file_frames(inputs, request, run)
    support = inputs.support
    support_text = support.prim if support.kind == "prim" else support.kind
    mode = (
        f"methods={','.join(chosen)}; proposals_per_method={count_proposals(request, options)}; "
        f"clearance_m={options.clearance:g}; retreat_m={options.retreat_distance:g}; "
        f"retreat_steps={options.retreat_steps}; "
        f"gripper_models={','.join(run.models_used) or 'none'}; "
        f"scene_obstacles={obstacles}; support={support_text}"
    )
    metadata = GraspPlanningMetadata(
        upstream_revision=f"usdgrip {usdgrip.__version__}",
        seed=request.seed,
        runtime_seconds=time.perf_counter() - started,
        pose_frame=inputs.object.prim_path,
        generation_mode=mode,
        warnings=render_notes(run.notes),
    )
    return GraspPlanningResult(
        object_frame=object_frame,
        gripper_frame=gripper_frame,
        grasps=run.grasps,
        metadata=metadata,
    )


__all__ = [
    "MAX_PROPOSALS",
    "OVERSAMPLE",
    "OptionError",
    "PlanningOptions",
    "PlanningOutcome",
    "plan_grasps",
    "run_planning",
]
