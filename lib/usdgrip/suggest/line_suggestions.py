"""Suggest SimReady grasp vector lines for a graspable prop, proven as FET005 proves them.

:func:`suggest_lines` screens the object (:func:`~usdgrip.suggest.screening.screen_grasps`),
makes one ``grasp_identifier_NN`` line per region of held grasps (p0 and p1 where the
pads start: the region's centre ∓ half its mean contact width along its closing axis),
authors them on a private copy of the stage and runs ``usdgrip evaluate --lines`` on it
(:func:`~usdgrip.grasping.line_evaluation.evaluate_grasp_lines`); a line whose best grasp
holds less than ``min_success`` of its trials is left out. :func:`author_line_suggestions`
authors the proven lines (rules first: GSP.001, GP.001–GP.003).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from usdgrip.contracts import GripperRef
from usdgrip.suggest.screening import (
    EVIDENCE_KEY,
    PROOF_SAMPLES,
    LeftOut,
    Progress,
    SuggestOptions,
    check_cancel,
    screen_grasps,
)

#: Line names: SimReady's, numbered from 01 past the names the object already has.
LINE_NAME = "grasp_identifier_{:02d}"
#: p0 and p1 lie this far (metres) outside the contacts, so the line crosses the part (GP.001).
PAD_CLEARANCE_M = 0.005
#: Regions proven at most, as a multiple of the lines asked for (the rest are left out).
PROOF_FACTOR = 2


@dataclass(frozen=True)
class LineSuggestion:
    """One proven grasp vector line (p0, p1 in the object prim's frame, stage units)."""

    name: str
    p0: tuple[float, float, float]
    p1: tuple[float, float, float]
    proven_success: float
    """Best grasp's held share of its trials in ``evaluate --lines``."""
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LineSuggestions:
    """What :func:`suggest_lines` found."""

    object: str
    gripper: str
    lines: tuple[LineSuggestion, ...]
    left_out: tuple[LeftOut, ...]
    planned: int
    held: int
    seconds: dict[str, float]
    notes: tuple[str, ...] = ()


def suggest_lines(
    file: str,
    prim: str,
    gripper: GripperRef,
    options: SuggestOptions | None = None,
    *,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> LineSuggestions:
    """Grasp vector lines under ``prim`` that ``gripper`` holds, proven by ``evaluate --lines``.

    At most ``options.max_slots`` lines (of up to :data:`PROOF_FACTOR` times as many
    proven). Raises as
    :func:`~usdgrip.suggest.slot_suggestions.suggest_slots`.
    """
    import usdgrip
    from usdgrip.authoring import AuthoringError, LineEdit, author_edit
    from usdgrip.authoring.world_frame import convert_edit_from_world
    from usdgrip.contracts import GeometryRef
    from usdgrip.grasping.inputs import StageSource
    from usdgrip.grasping.line_evaluation import evaluate_grasp_lines
    from usdgrip.usd.stage import open_stage

    options = SuggestOptions() if options is None else options
    report = progress or (lambda message, fraction: None)
    screened = screen_grasps(file, prim, gripper, options, report, cancel)
    seconds, notes = screened.seconds, screened.notes
    if screened.inputs is None:
        return LineSuggestions(prim, str(gripper), (), (), 0, 0, seconds, notes)
    stage, frame = screened.stage, screened.inputs.object.world_frame
    rotation, origin, mpu = frame[:3, :3], frame[:3, 3], screened.meters_per_unit
    opening = screened.inputs.find_gripper(gripper).max_opening
    parent = stage.GetPrimAtPath(prim)
    taken = {child.GetName() for child in parent.GetChildren()}
    edits, left = [], []
    number = 1
    for region, width in zip(screened.regions, screened.widths, strict=True):
        while LINE_NAME.format(number) in taken:
            number += 1
        name = LINE_NAME.format(number)
        taken.add(name)
        if len(edits) >= PROOF_FACTOR * options.max_slots:
            left.append(LeftOut(name, f"more than {PROOF_FACTOR * options.max_slots} regions held"))
            continue
        reach = min(0.5 * width + PAD_CLEARANCE_M, 0.5 * opening)
        half = reach * region.span_axis
        p0, p1 = ((rotation @ (region.center + s * half) + origin) / mpu for s in (-1.0, 1.0))
        edits.append(convert_edit_from_world(stage, LineEdit(prim, name, tuple(p0), tuple(p1))))
    started = time.perf_counter()
    check_cancel(cancel)
    proof = open_stage(file)  # a private copy: the lines go in its session layer
    kept_edits = []
    for edit in edits:
        try:
            author_edit(proof, edit, layer=proof.GetSessionLayer())
            kept_edits.append(edit)
        except AuthoringError as exc:
            reason = "; ".join(exc.verdict.describe(item) for item in exc.verdict.refused)
            left.append(LeftOut(edit.name, f"the rules refuse it: {reason}"))
    lines = []
    if kept_edits:
        report("proving the lines (evaluate --lines)", 0.7)
        # FET005 puts the prop on a floor: a table unless a support is named
        evaluation = options.evaluation(table=options.support is None)
        verdicts = evaluate_grasp_lines(
            GeometryRef(asset_path=file, prim_path=prim), gripper, options=evaluation,
            stages=StageSource({file: proof}), cancel=cancel,
            candidates_per_line=PROOF_SAMPLES,
        )  # fmt: skip
        by_name = {record["name"]: record for record in verdicts["lines"]}
        for edit in kept_edits:
            record = by_name.get(edit.name)
            if len(lines) >= options.max_slots:
                left.append(LeftOut(edit.name, f"more than {options.max_slots} lines held"))
                continue
            rate = float(record["best_success_rate"]) if record else 0.0
            if record is None or not record["held"] or rate < options.min_success:
                verdict = record["verdict"] if record else "not found"
                left.append(
                    LeftOut(
                        edit.name,
                        f"evaluate --lines: {verdict}, best grasp held {rate:.0%} of its "
                        f"trials (--min-success {options.min_success:.0%})",
                    )
                )
                continue
            evidence = {
                "gripper": str(gripper),
                "trials": options.trials,
                "success_rate": round(rate, 4),
                "seed": options.seed,
                "usdgrip_version": usdgrip.__version__,
            }
            lines.append(
                LineSuggestion(
                    edit.name,
                    tuple(map(float, edit.p0)),
                    tuple(map(float, edit.p1)),
                    rate,
                    evidence,
                )
            )
    seconds["prove"] = time.perf_counter() - started
    lines = _renumber(lines, {child.GetName() for child in parent.GetChildren()})
    report("done", 1.0)
    return LineSuggestions(
        prim, str(gripper), tuple(lines), tuple(left), screened.planned, screened.held,
        seconds, notes,
    )  # fmt: skip


def _renumber(lines: list[LineSuggestion], existing: set[str]) -> list[LineSuggestion]:
    """The proven lines named ``grasp_identifier_01``, ``_02``, ... past ``existing`` names."""
    from dataclasses import replace

    renamed, number = [], 1
    for line in lines:
        while LINE_NAME.format(number) in existing:
            number += 1
        renamed.append(replace(line, name=LINE_NAME.format(number)))
        number += 1
    return renamed


def author_line_suggestions(stage: Any, suggestions: LineSuggestions, layer: Any = None) -> list:
    """Author every suggested line under its object (``layer``: the stage's root).

    Each is checked by the rules first (:func:`usdgrip.authoring.author_edit`); its evidence
    goes in the line prim's ``customData["usdgrip:suggestion"]``.

    Raises:
        AuthoringError: the rules refuse a line (those before it are authored).
    """
    from pxr import Usd

    from usdgrip.authoring import LineEdit, author_edit

    layer = stage.GetRootLayer() if layer is None else layer
    verdicts = []
    for line in suggestions.lines:
        edit = LineEdit(suggestions.object, line.name, p0=line.p0, p1=line.p1)
        verdicts.append(author_edit(stage, edit, layer=layer))
        with Usd.EditContext(stage, layer):
            stage.GetPrimAtPath(edit.path).SetCustomDataByKey(EVIDENCE_KEY, line.evidence)
    return verdicts


__all__ = [
    "LINE_NAME",
    "LineSuggestion",
    "LineSuggestions",
    "author_line_suggestions",
    "suggest_lines",
]
