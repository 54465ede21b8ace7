"""Grasp planning: request in, ranked and collision-checked Isaac-Grasp candidates out.

:func:`plan_grasps` reads the object (a USD asset and prim) and every gripper
(a USD asset and the prim of its gripper site), proposes candidates with the
backends that apply, drops the ones that do not fit or collide, ranks them and
returns a :class:`~usdgrip.contracts.GraspPlanningResult`.

Pipeline for each gripper, in request order:

1. Proposals (``generation_method``):

   - ``antipodal``: :func:`usdgrip.grasping.backends.antipodal.sample_antipodal_grasps` on the
     object's ``UsdGeom.Mesh`` surface (all meshes under the object prim);
     width = contact width; score = antipodality and width margin times the
     approach quality (toward the centroid, away from the stage's authored up
     axis, nothing of the object behind the palm).
   - ``slots``: every valid GripperSlot of the object sampled on its own with
     :func:`usdgrip.sampling.sample_gripper_groups`; slots of a group of two or
     more (the hands of a two-handed grasp) are left out with a warning, since one
     gripper on one of them does not hold the object (``usdgrip evaluate
     --targets`` checks the group's hands together); the slot target frame is already a GraspGenX
     grasp frame (X span/closing, Z forward/approach); width = the site's
     max opening; score = ``1 - |s|/up_range - |θ|/slot_input_angle`` (1 at
     the slot centre, untilted; 0 at a corner of the range).
   - ``lines``: :func:`usdgrip.grasping.backends.lines.propose_lines` on the object's
     SimReady grasp vector lines: +X along the line, centre at the midpoint of the
     surfaces it lands on, width between them, approaches evenly around the line;
     score = ``0.5 + 0.5 * approach quality``.

2. Fit: candidates wider than the site's max opening are dropped; a gripper
   whose max payload is below the object's ``mass_kg`` is skipped.
3. Rank by score after soft non-maximum suppression over antipodal contact
   pairs (the k-th approach of a pair times ``pair_decay ** k``), ties by id;
   the decay is applied again among the survivors and gives ``confidence``.
4. Collision (:mod:`usdgrip.grasping.collision`), in rank order and in chunks until
   ``max_candidates_per_gripper`` survive (lower-ranked proposals are never
   checked): the open gripper at the grasp pose against the object and the
   scene obstacles; then the retreat check (the object attached to the
   gripper, moved back along -approach by ``retreat_distance``). Each candidate
   records the exclusions its checks used. The gripper's collision model is
   its ``UsdPhysics.CollisionAPI`` prims, else a proxy
   (:func:`read_gripper_model`).

Frames: poses are ``T_M_G`` with M the object prim's world frame with its
scale removed (:func:`usdgrip.frames.compute_rigid_part`), in metres; so
``metadata.pose_frame`` is the object prim path. The gripper's own world pose
in its file is irrelevant: only the geometry relative to the site's grasp
frame is used.

Candidate ids: ``g_<h>_antipodal_<n>``, ``g_<h>_slots_<slot>_<n>`` and
``g_<h>_lines_<line>_<n>``, with
``<h>`` the first 8 hex digits of SHA-256 over the gripper's asset path (as
given) and prim path, and ``<n>`` the proposal's index in its backend's output.
They do not depend on the collision outcome, the ranking or the truncation,
so an id names the same proposal in every later stage; the same request and
seed give the same ids and poses.

Randomness: one ``numpy.random.Generator`` per (seed, gripper, method), from
``SeedSequence([seed, s, method index])``; backends never share a stream.
``s`` (:func:`compute_stream_key`) hashes the gripper file's *name* and prim
path, not its directory, so the same request gives the same grasps wherever
the files live (another checkout, another machine, a CI clone); only the ids'
``<h>`` keeps the full path, for uniqueness.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from usdgrip.contracts import (
    GraspCandidate,
    GraspPlanningMetadata,
    GraspPlanningRequest,
    GraspPlanningResult,
    GripperRef,
)
from usdgrip.errors import GripperError
from usdgrip.frames import compute_quaternion_wxyz
from usdgrip.grasping.backends.antipodal import DEFAULT_CLEARANCE, propose_antipodal
from usdgrip.grasping.backends.antipodal_approach import DEFAULT_PAIR_DECAY, compute_pair_decay
from usdgrip.grasping.backends.antipodal_contacts import get_ray_backend
from usdgrip.grasping.backends.lines import propose_lines
from usdgrip.grasping.backends.slots import propose_slots
from usdgrip.grasping.checking import _RankedChecker
from usdgrip.grasping.methods import (
    check_lines_usable,
    check_slots_usable,
    list_available_methods,
)
from usdgrip.grasping.proposals import (
    ObjectData,
    _make_rng,
    _Proposals,
    compute_gripper_key,
    compute_stream_key,
    parse_methods,
)
from usdgrip.grasping.reading import (
    GRIPPER_MODELS,
    StageSource,
    _is_at_or_under,
    read_gripper,
    read_gripper_model,
    read_object,
    read_scene,
)
from usdgrip.site_limits import MAX_OPENING_M, get_max_opening_problem

#: Proposals generated per kept candidate, so that collisions still leave enough.
OVERSAMPLE = 3
#: Default retreat distance along -approach, metres.
DEFAULT_RETREAT_DISTANCE = 0.1
#: Largest accepted retreat distance, metres (a larger value is a unit mistake
#: and makes the collision checks meaningless or endless).
MAX_RETREAT_DISTANCE = 10.0
#: Upper bound on proposals per backend and gripper (memory and time guard).
MAX_PROPOSALS = 20_000

Progress = Callable[[str, float], None]
"""``progress(message, fraction_done)``; fraction in [0, 1]."""


# --- orchestration -----------------------------------------------------------------------------


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


def plan_grasps(
    request: GraspPlanningRequest,
    scene: Any = None,
    *,
    methods: str | Sequence[str] | None = None,
    support: str | None = None,
    retreat_distance: float = DEFAULT_RETREAT_DISTANCE,
    retreat_steps: int = 5,
    clearance: float = DEFAULT_CLEARANCE,
    gripper_model: str = "auto",
    ray_backend: str = "auto",
    pair_decay: float = DEFAULT_PAIR_DECAY,
    progress: Progress | None = None,
    stages: Mapping[str | os.PathLike[str], Any] | None = None,
) -> GraspPlanningResult:
    """Plan collision-checked grasp candidates for every gripper of ``request``.

    Args:
        request: object, grippers (in output order), candidate limit and seed.
        scene: obstacles around the object: ``None`` (the object alone), a
            :class:`~usdgrip.grasping.collision.CollisionScene` (the object is added for
            the run and removed afterwards), or a USD file path read with
            :meth:`CollisionScene.from_usd`, leaving out the shapes at or under the
            object prim (the object itself, when the file contains it; a warning
            says so). A CollisionScene must not contain the object itself.
        methods: backends to run (``"antipodal,slots,lines"`` or a sequence); ``None``
            runs every backend that applies (antipodal when the object has a
            mesh, slots when it has GripperSlots, lines when it has grasp vector
            lines and a mesh).
        support: name (prim path) of the scene obstacle the object rests on; the
            retreat check ignores object-support contact while the object still
            rests there.
        retreat_distance: metres to move back along -approach with the object, in
            ``(0, MAX_RETREAT_DISTANCE]``.
        retreat_steps: poses sampled along the retreat (>= 1).
        clearance: antipodal opening kept free beyond the contact width, metres, in
            ``[0, MAX_OPENING_M]``.
        gripper_model: ``auto``, ``proxy`` or ``geometry`` (see :func:`read_gripper_model`).
        ray_backend: antipodal ray casting: ``auto`` (Embree when ``embreex`` is
            importable), ``embree`` or ``triangle`` (trimesh's pure-python
            fallback, ~25x slower). A warning says when the fallback was used.
        pair_decay: soft-NMS factor in (0, 1]: the k-th candidate of one antipodal
            contact pair has its confidence multiplied by ``pair_decay ** k``
            (:func:`~usdgrip.grasping.backends.antipodal_approach.compute_pair_decay`); 1: off.
        progress: optional ``progress(message, fraction)`` callback.
        stages: ``Usd.Stage`` objects the caller has open, keyed by the asset path
            the request (or ``scene``) names; those files are not opened again.
            Every other file is opened once per call.

    Returns:
        The result: entries best-first per gripper, grippers in request order;
        ``metadata.warnings`` says what was skipped and why nothing survived.

    Raises:
        GripperError: unreadable object or gripper file, missing prim, a gripper
            prim that is not a site, a max opening above ``MAX_OPENING_M`` (2 m),
            an object without a mesh when antipodal is required (explicitly, or
            because it has no slots either), an object without a usable
            GripperSlot when slots is asked for, an object without a usable grasp
            vector line (or mesh) when lines is asked for, or a mesh that does not
            bound a solid when antipodal runs.
        ValueError: bad ``methods``, ``support``, distances or counts.
        TypeError: ``request`` is not a :class:`GraspPlanningRequest`.
    """
    if not isinstance(request, GraspPlanningRequest):
        raise TypeError(
            f"request is {type(request).__name__}; expected a GraspPlanningRequest "
            "(usdgrip.GraspPlanningRequest(object=..., grippers=[...]))"
        )
    started = time.perf_counter()
    report = progress or (lambda message, fraction: None)
    options = _check_options(
        methods, support, gripper_model, retreat_distance, retreat_steps, clearance, ray_backend,
        pair_decay,
    )  # fmt: skip
    run = PlanningRun(stages=StageSource(stages))
    inputs = read_inputs(request, scene, options, run, report)
    try:
        for index, (gripper, site) in enumerate(zip(request.grippers, inputs.sites, strict=True)):
            share = 0.05 + 0.95 * index / len(inputs.sites)
            step = 0.95 / len(inputs.sites)
            label = f"gripper {gripper}"
            if not _check_gripper(label, site, request.object.mass_kg, run):
                continue
            model = read_gripper_model(gripper, site, options.gripper_model, run.stages)
            run.models_used.append(model.source)
            proposals = propose(request, gripper, site, inputs, options, run, label, share, report)
            if not len(proposals):
                continue
            proposals = rank(fit(proposals, site.max_opening, label, run), options.pair_decay)
            kept, exclusions = check(
                proposals, model, inputs, request, options, run, label, share, step, report
            )
            if not kept:
                run.warnings.append(f"{label}: no candidate survived the fit and collision checks")
                continue
            run.grasps.update(build_candidates(gripper, proposals, kept, exclusions, options))
    finally:
        if inputs.object_id is not None:
            inputs.scene.remove(inputs.object_id)
    report("done", 1.0)
    return build_result(request, inputs, options, run, time.perf_counter() - started)


@dataclass(frozen=True)
class PlanningOptions:
    """``plan_grasps``' checked keyword arguments."""

    requested: tuple[str, ...] | None
    support: str | None
    gripper_model: str
    retreat_distance: float
    retreat_steps: int
    clearance: float
    ray_backend: str
    rays: str
    """The ray backend that runs (``ray_backend`` resolved)."""
    pair_decay: float


@dataclass
class PlanningRun:
    """What one planning run accumulates across grippers."""

    stages: StageSource
    warnings: list[str] = field(default_factory=list)
    grasps: dict[str, GraspCandidate] = field(default_factory=dict)
    models_used: list[str] = field(default_factory=list)
    fallback_noted: bool = False


@dataclass
class PlanningInputs:
    """What the read step gives the others: the object, the methods, the sites, the scene."""

    obj: ObjectData
    chosen: tuple[str, ...]
    sites: list[Any]
    scene: Any
    support_id: Any
    object_id: Any


def _check_options(
    methods, support, gripper_model, retreat_distance, retreat_steps, clearance, ray_backend,
    pair_decay,
) -> PlanningOptions:  # fmt: skip
    """Check ``plan_grasps``' options before any file is read (ValueError naming the option)."""
    requested = parse_methods(methods)
    if gripper_model not in GRIPPER_MODELS:
        raise ValueError(
            f"gripper model {gripper_model!r}; expected one of {', '.join(GRIPPER_MODELS)}"
        )
    if not (math.isfinite(retreat_distance) and 0 < retreat_distance <= MAX_RETREAT_DISTANCE):
        raise ValueError(
            f"retreat distance is {retreat_distance!r} m; expected a finite value in "
            f"(0, {MAX_RETREAT_DISTANCE:g}] m"
        )
    if not (math.isfinite(clearance) and 0 <= clearance <= MAX_OPENING_M):
        raise ValueError(
            f"clearance is {clearance!r} m; expected a finite value in [0, {MAX_OPENING_M:g}] m"
        )
    rays = get_ray_backend(ray_backend)  # ValueError for an unknown or unavailable backend
    if not (math.isfinite(pair_decay) and 0 < pair_decay <= 1):
        raise ValueError(f"pair decay is {pair_decay!r}; expected a value in (0, 1]")
    return PlanningOptions(
        requested, support, gripper_model, retreat_distance, retreat_steps, clearance,
        ray_backend, rays, pair_decay,
    )  # fmt: skip


def read_inputs(
    request: GraspPlanningRequest,
    scene: Any,
    options: PlanningOptions,
    run: PlanningRun,
    report: Progress,
) -> PlanningInputs:
    """Read step: the object, every gripper's site and the scene, the object added to it.

    Every gripper is read before any work, so a bad gripper file fails first.
    """
    from usdgrip.grasping.collision import Shape

    requested = options.requested
    geometry = request.object.geometry
    report(f"reading object {geometry}", 0.0)
    antipodal_needed = requested is not None and "antipodal" in requested
    lines_needed = requested is not None and "lines" in requested
    obj = read_object(
        geometry.asset_path,
        geometry.prim_path,
        need_mesh=antipodal_needed or lines_needed,
        check_closed=requested is None or antipodal_needed,
        stages=run.stages,
    )
    if requested is not None and "slots" in requested:
        check_slots_usable(obj, geometry.asset_path)
    if lines_needed:
        check_lines_usable(obj, geometry.asset_path)
    if requested is None and not list_available_methods(obj):
        raise GripperError(
            f"{geometry.asset_path}: <{obj.prim_path}> has no mesh and no GripperSlots; nothing "
            f"to plan from ({'; '.join(obj.notes)})"
        )
    chosen = requested if requested is not None else list_available_methods(obj)
    run.warnings.extend(f"object {geometry}: {note}" for note in obj.notes)
    if requested is None and "antipodal" not in chosen:
        run.warnings.append(f"object {geometry}: antipodal skipped (no mesh)")
    sites = []
    for gripper in request.grippers:
        report(f"reading gripper {gripper}", 0.02)
        site = read_gripper(gripper, run.stages)
        if site.max_opening is not None and site.max_opening > MAX_OPENING_M:
            # An absurd opening gives an absurd gripper model (collision checks never end).
            raise GripperError(
                f"{gripper.asset_path}: <{gripper.prim_path}>: "
                f"{get_max_opening_problem(site.max_opening, site.max_opening_source)}; "
                "not planning with it"
            )
        sites.append(site)
    collision_scene = read_scene(scene, run.stages)
    if isinstance(scene, str | Path):  # read here: leave the object itself out of its obstacles
        own = [
            oid
            for oid in collision_scene.obstacle_ids
            if _is_at_or_under(collision_scene.name_of(oid), obj.prim_path)
        ]
        for oid in own:
            collision_scene.remove(oid)
        if own:
            run.warnings.append(
                f"scene {scene}: {len(own)} shape(s) at or under the object <{obj.prim_path}> "
                "left out of the obstacles (the object itself)"
            )
    support_id = collision_scene.find(options.support) if options.support is not None else None
    object_id = None
    if obj.vertices is not None:  # last: plan_grasps removes it again whatever happens next
        object_id = collision_scene.add_obstacle(
            Shape.mesh(obj.vertices, obj.faces, name=obj.prim_path),
            obj.world_frame,
            name=obj.prim_path,
        )
    return PlanningInputs(obj, chosen, sites, collision_scene, support_id, object_id)


def _check_gripper(label: str, site: Any, mass: float | None, run: PlanningRun) -> bool:
    """Whether a gripper can be planned for; if not, a warning says why it is skipped."""
    run.warnings.extend(f"{label}: site: {note}" for note in site.warnings)
    if site.grasp_frame is None:
        run.warnings.append(f"{label}: skipped: the site has no usable forward axis")
        return False
    opening = site.max_opening
    if opening is None or not (math.isfinite(opening) and opening > 0):
        run.warnings.append(
            f"{label}: skipped: max opening is {opening!r}; expected a finite value > 0 m"
        )
        return False
    payload = site.max_payload
    too_heavy = (
        mass is not None and payload is not None and math.isfinite(payload) and mass > payload
    )
    if too_heavy:
        run.warnings.append(
            f"{label}: skipped: object mass {mass:g} kg exceeds the gripper's max "
            f"payload {payload:g} kg ({site.max_payload_source})"
        )
        return False
    return True


def propose(
    request: GraspPlanningRequest,
    gripper: GripperRef,
    site: Any,
    inputs: PlanningInputs,
    options: PlanningOptions,
    run: PlanningRun,
    label: str,
    share: float,
    report: Progress,
) -> _Proposals:
    """Propose step: every chosen backend's proposals for one gripper, in frame M."""
    obj, opening = inputs.obj, site.max_opening
    count = min(MAX_PROPOSALS, OVERSAMPLE * request.max_candidates_per_gripper)
    key, stream = compute_gripper_key(gripper), compute_stream_key(gripper)
    proposals = _Proposals()
    pad = site.grip_line.length if site.grip_line is not None else None
    pad = pad if pad is not None and 0 < pad < opening else None
    for method in inputs.chosen:
        report(f"{label}: {method} proposals", share)
        if method == "antipodal":
            if obj.vertices is None:
                run.warnings.append(f"{label}: antipodal: object has no mesh")
                continue
            if not opening > options.clearance:
                raise GripperError(
                    f"{label}: max opening {opening:g} m ({site.max_opening_source}) is not above "
                    f"the antipodal clearance {options.clearance:g} m (the opening kept free "
                    f"beyond the contact width; default {DEFAULT_CLEARANCE:g} m); expected a max "
                    "opening > clearance (check the gripper's max opening, in metres; "
                    "plan_grasps(clearance=...) sets the clearance)"
                )
            ids, poses, widths, scores, groups = propose_antipodal(
                obj,
                opening,
                count=count,
                rng=_make_rng(request.seed, stream, method),
                key=key,
                clearance=options.clearance,
                pad_width=pad,
                ray_backend=options.rays,
            )
            if options.rays == "triangle" and not run.fallback_noted:
                run.fallback_noted = True
                run.warnings.append(_fallback_warning(options.ray_backend))
        elif method == "lines":
            ids, poses, widths, scores, groups, notes = propose_lines(
                obj, opening, count=count, key=key
            )
            run.warnings.extend(f"{label}: lines: {n}" for n in notes)
        else:  # asked-for slots exist and some are usable (check_slots_usable)
            ids, poses, widths, scores, notes = propose_slots(
                obj, opening, count=count, seed=request.seed, key=key, stream=stream
            )
            groups = None
            run.warnings.extend(f"{label}: slots: {n}" for n in notes)
        if not ids:
            run.warnings.append(f"{label}: {method} produced no proposals")
            continue
        proposals.extend(ids, method, poses, widths, scores, groups)
    return proposals


def fit(proposals: _Proposals, opening: float, label: str, run: PlanningRun) -> _Proposals:
    """Fit step: drop the proposals wider than the max opening (a warning counts them)."""
    fits = np.array(proposals.widths) <= opening * (1 + 1e-9)
    if fits.all():
        return proposals
    run.warnings.append(
        f"{label}: {int((~fits).sum())} proposals wider than max opening {opening:g} m dropped"
    )
    return proposals.keep(fits)


def rank(proposals: _Proposals, pair_decay: float) -> _Proposals:
    """Rank step: best first by soft-NMS score over contact pairs, ties by id."""
    scores = compute_pair_decay(proposals.scores, proposals.groups, pair_decay)
    order = sorted(range(len(proposals)), key=lambda i: (-scores[i], proposals.ids[i]))
    return proposals.keep_order(order)


def check(
    proposals: _Proposals,
    model: Any,
    inputs: PlanningInputs,
    request: GraspPlanningRequest,
    options: PlanningOptions,
    run: PlanningRun,
    label: str,
    share: float,
    step: float,
    report: Progress,
) -> tuple[list[int], dict[int, tuple[str, ...]]]:
    """Check step: collision-check ranked proposals until the budget is filled.

    Proposals below the last kept one are never checked. Returns the kept rows
    (rank order) and the exclusions each one's checks used.
    """
    checker = _RankedChecker(
        inputs.scene, model, inputs.obj.world_frame, inputs.object_id, inputs.support_id,
        options.retreat_distance, options.retreat_steps,
    )  # fmt: skip
    kept, exclusions = checker.run(
        proposals,
        request.max_candidates_per_gripper,
        lambda done, total: report(
            f"{label}: collision checks ({done}/{total} proposals)",
            share + step * (0.1 + 0.9 * done / max(total, 1)),
        ),
    )
    run.warnings.extend(f"{label}: {text}" for text in checker.summaries())
    return kept, exclusions


def build_candidates(
    gripper: GripperRef,
    proposals: _Proposals,
    kept: list[int],
    exclusions: dict[int, tuple[str, ...]],
    options: PlanningOptions,
) -> dict[str, GraspCandidate]:
    """Result step for one gripper: the survivors as candidates, best first.

    Soft-NMS again among the survivors: a pair whose best approach collided is
    not penalised for it; the decayed score is the ``confidence``.
    """
    confidence = compute_pair_decay(
        [proposals.scores[i] for i in kept], [proposals.groups[i] for i in kept], options.pair_decay
    )
    final = sorted(range(len(kept)), key=lambda j: (-confidence[j], proposals.ids[kept[j]]))
    order = [kept[j] for j in final]
    poses = proposals.pose_array[order]
    quaternions = compute_quaternion_wxyz(poses)
    candidates = {}
    for row, (i, j) in enumerate(zip(order, final, strict=True)):
        cid = proposals.ids[i]
        candidates[cid] = GraspCandidate(
            candidate_id=cid,
            gripper=gripper,
            confidence=float(confidence[j]),
            generation_method=proposals.methods[i],
            position=tuple(float(v) for v in poses[row, :3, 3]),
            orientation={
                "w": float(quaternions[row, 0]),
                "xyz": tuple(float(v) for v in quaternions[row, 1:]),
            },
            width=float(proposals.widths[i]),
            exclusions=exclusions[i],
        )
    return candidates


def build_result(
    request: GraspPlanningRequest,
    inputs: PlanningInputs,
    options: PlanningOptions,
    run: PlanningRun,
    runtime: float,
) -> GraspPlanningResult:
    """Result step: the candidates and the metadata saying how they were made."""
    import usdgrip

    proposal_count = min(MAX_PROPOSALS, OVERSAMPLE * request.max_candidates_per_gripper)
    mode = (
        f"methods={','.join(inputs.chosen)}; proposals_per_method={proposal_count}; "
        f"clearance_m={options.clearance:g}; retreat_m={options.retreat_distance:g}; "
        f"retreat_steps={options.retreat_steps}; "
        f"gripper_models={','.join(run.models_used) or 'none'}; "
        f"scene_obstacles={len(inputs.scene.obstacle_ids)}; support={options.support or 'none'}"
    )
    metadata = GraspPlanningMetadata(
        upstream_revision=f"usdgrip {usdgrip.__version__}",
        seed=request.seed,
        runtime_seconds=runtime,
        pose_frame=inputs.obj.prim_path,
        generation_mode=mode,
        warnings=tuple(run.warnings),
    )
    return GraspPlanningResult(grasps=run.grasps, metadata=metadata)
