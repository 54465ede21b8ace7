"""Suggest grasp slots for an object: plan, simulate, cluster what held, prove, author.

:func:`suggest_slots` runs the pipeline of ``docs/authoring.md`` ("Suggest") and returns
a :class:`SlotSuggestions` record; nothing is printed and nothing is written.
:func:`author_slot_suggestions` authors the proven slots on a stage (each checked by the
rules first, see :mod:`usdgrip.authoring`), with their evidence as ``customData``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from usdgrip.contracts import GripperRef
from usdgrip.suggest.regions import RegionPlace, name_region
from usdgrip.suggest.screening import (
    DEFAULT_CANDIDATES,
    DEFAULT_MAX_SLOTS,
    DEFAULT_MIN_SUCCESS,
    DEFAULT_TRIALS,
    EVIDENCE_KEY,
    PROOF_SAMPLES,
    LeftOut,
    Progress,
    SuggestionCancelled,
    SuggestOptions,
    check_cancel,
    evaluate_planned,
    make_request,
    plan_with,
    screen_grasps,
)
from usdgrip.suggest.slot_records import (
    SlotSuggestion,
    SlotSuggestions,
    make_slot_suggestion,
    world_slot,
)


def suggest_slots(
    file: str,
    prim: str,
    gripper: GripperRef,
    options: SuggestOptions | None = None,
    *,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> SlotSuggestions:
    """Slots on ``prim`` of ``file`` that ``gripper`` holds, each proven by its samples.

    Screens the object (:func:`~usdgrip.suggest.screening.screen_grasps`: plan, simulate,
    cluster what held into regions), and proves each region's slot:
    it is authored on a private copy of the stage, sampled into :data:`PROOF_SAMPLES`
    grasps by the ``slots`` backend and simulated; a slot whose samples hold less than
    ``min_success`` of their trials is left out, saying why. With ``options.hands == 2``
    one two-handed group is suggested instead
    (:func:`~usdgrip.suggest.group_suggestions.suggest_group`).

    Raises:
        ValueError, GripperError, StageOpenError: bad input (one line), a ``group`` the
            object's slots already use.
        SuggestionCancelled: ``cancel()`` returned True.
    """
    from usdgrip.authoring import AuthoringError, SlotEdit, author_edit
    from usdgrip.authoring.world_frame import convert_edit_from_world
    from usdgrip.suggest.group_suggestions import check_group_is_new, suggest_group
    from usdgrip.usd.stage import open_stage

    options = SuggestOptions() if options is None else options
    report = progress or (lambda message, fraction: None)
    if options.hands == 2:  # refused before any work
        check_group_is_new(open_stage(file), prim, str(options.group))
    screened = screen_grasps(file, prim, gripper, options, report, cancel)
    seconds, notes, regions = screened.seconds, screened.notes, screened.regions
    if screened.inputs is None:
        return SlotSuggestions(prim, str(gripper), (), (), 0, 0, seconds, notes)
    if options.hands == 2:
        started = time.perf_counter()
        group, group_left = suggest_group(file, prim, gripper, options, screened, report, cancel)
        seconds["prove"] = time.perf_counter() - started
        report("done", 1.0)
        return SlotSuggestions(
            prim, str(gripper), tuple(group), tuple(group_left), screened.planned,
            screened.held, seconds, notes, screened.lifted_short,
        )  # fmt: skip
    stage, obj, mpu = screened.stage, screened.inputs.object, screened.meters_per_unit
    bounds = (obj.vertices.min(axis=0), obj.vertices.max(axis=0))
    taken: set[str] = set()
    from usdgrip.usd.slots import list_slot_instances

    taken |= set(list_slot_instances(stage.GetPrimAtPath(prim)))
    kept: list[SlotSuggestion] = []
    left: list[LeftOut] = []
    started = time.perf_counter()
    for index, (region, width) in enumerate(zip(regions, screened.widths, strict=True)):
        check_cancel(cancel)
        place = RegionPlace(obj.vertices, obj.faces, region.span_axis, width)
        name = name_region(region.center, bounds, obj.lift_up, taken, place)
        taken.add(name)
        if len(kept) >= options.max_slots:
            left.append(LeftOut(name, f"more than --max-slots {options.max_slots} regions held"))
            continue
        report(f"proving slot {name!r}", 0.6 + 0.4 * index / max(len(regions), 1))
        edit = convert_edit_from_world(
            stage, SlotEdit(prim, name, **world_slot(region, obj.world_frame, mpu))
        )
        proof = open_stage(file)  # a private copy: the proof's slot goes in its session layer
        try:
            author_edit(proof, edit, layer=proof.GetSessionLayer())
        except AuthoringError as exc:
            reason = "; ".join(exc.verdict.describe(item) for item in exc.verdict.refused)
            left.append(LeftOut(name, f"the rules refuse it: {reason}"))
            continue
        proven, samples = _prove(file, prim, gripper, name, proof, options, cancel)
        if proven < options.min_success:
            left.append(
                LeftOut(
                    name,
                    f"its {samples} samples held {proven:.0%} of their trials, under "
                    f"--min-success {options.min_success:.0%}",
                )
            )
            continue
        facts = {"planned_grasps_held": len(region.members)}
        kept.append(
            make_slot_suggestion(name, edit, region, gripper, options, proven, samples, facts)
        )
    seconds["prove"] = time.perf_counter() - started
    report("done", 1.0)
    advice = None
    if not kept and screened.held == 0 and screened.lifted_short:
        advice = (
            f"one hand cannot lift it: {screened.lifted_short} of {screened.planned} planned "
            "grasps closed on it and lost it once lifted"
            + (f" at --force {options.force:g} N" if options.force is not None else "")
            + "; suggest a two-handed group with --hands 2 --group NAME"
        )
    return SlotSuggestions(
        prim, str(gripper), tuple(kept), tuple(left), screened.planned, screened.held, seconds,
        notes, screened.lifted_short, advice,
    )  # fmt: skip


def _prove(
    file: str,
    prim: str,
    gripper: GripperRef,
    name: str,
    stage: Any,
    options: SuggestOptions,
    cancel: Callable[[], bool] | None,
) -> tuple[float, int]:
    """Held share of the trials of the slot's samples, and how many samples were simulated."""
    request = make_request(file, prim, gripper, PROOF_SAMPLES * 4, options.seed)
    inputs = options.read_inputs(request, stage)
    planned = plan_with(request, options, ("slots",), inputs)
    mine = {k: g for k, g in planned.grasps.items() if g.slot == name}
    if not mine:
        return 0.0, 0
    chosen = dict(list(mine.items())[:PROOF_SAMPLES])
    planned = planned.model_copy(update={"grasps": chosen})
    check_cancel(cancel)
    evaluated = evaluate_planned(planned, inputs, options, cancel)
    rates = [g.physics.success_rate for g in evaluated.grasps.values() if g.physics]
    return (float(np.mean(rates)) if rates else 0.0), len(rates)


def author_slot_suggestions(
    stage: Any, suggestions: SlotSuggestions, layer: Any = None
) -> list[Any]:
    """Author every suggested slot on ``stage`` (``layer``: its root by default).

    Each slot is checked by the rules before anything is written
    (:func:`usdgrip.authoring.author_edit`); its evidence goes in the object prim's
    ``customData["usdgrip:suggestion"][name]``.

    Returns:
        The :class:`~usdgrip.authoring.AuthoringVerdict` of each slot.

    Raises:
        AuthoringError: the rules refuse a slot (those before it are authored).
    """
    from pxr import Usd

    from usdgrip.authoring import SlotEdit, author_edit

    layer = stage.GetRootLayer() if layer is None else layer
    verdicts = []
    for slot in suggestions.slots:
        edit = SlotEdit(
            suggestions.object, slot.name, center=slot.center, forward=slot.forward,
            span_axis=slot.span_axis, up_range=slot.up_range,
            slot_input_angle=slot.slot_input_angle, lr=slot.lr, group=slot.group or None,
        )  # fmt: skip
        verdicts.append(author_edit(stage, edit, layer=layer))
        with Usd.EditContext(stage, layer):
            stage.GetPrimAtPath(suggestions.object).SetCustomDataByKey(
                f"{EVIDENCE_KEY}:{slot.name}", slot.evidence
            )
    return verdicts


__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_MAX_SLOTS",
    "DEFAULT_MIN_SUCCESS",
    "DEFAULT_TRIALS",
    "EVIDENCE_KEY",
    "PROOF_SAMPLES",
    "LeftOut",
    "SlotSuggestion",
    "SlotSuggestions",
    "SuggestOptions",
    "SuggestionCancelled",
    "author_slot_suggestions",
    "suggest_slots",
]
