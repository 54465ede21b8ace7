"""The screening every suggestion starts from: plan, simulate, cluster what held.

:func:`screen_grasps` plans ``candidates`` antipodal grasps on the object, simulates each
``trials`` times, and clusters those held at least ``min_success`` into regions
(:func:`~usdgrip.suggest.regions.compute_slot_regions`); slots and grasp lines are then
made and proven from the regions (``docs/authoring.md``, "Suggest").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from usdgrip.contracts import GeometryRef, GraspObject, GraspPlanningRequest, GripperRef
from usdgrip.suggest.regions import SlotRegion, compute_slot_regions

#: Planned candidates simulated by default, and at most.
DEFAULT_CANDIDATES = 40
MAX_CANDIDATES = 10_000
#: Trials per candidate and per slot sample by default.
DEFAULT_TRIALS = 2
#: A region (and its proof) must hold at least this share of its trials by default.
DEFAULT_MIN_SUCCESS = 0.8
#: Slots authored at most, by default.
DEFAULT_MAX_SLOTS = 3
#: Samples of a suggested slot simulated to prove it.
PROOF_SAMPLES = 6
#: The ``customData`` key holding a suggested slot's evidence (one dict per slot name).
EVIDENCE_KEY = "usdgrip:suggestion"


class SuggestionCancelled(Exception):
    """The caller's ``cancel`` callback asked to stop."""


@dataclass(frozen=True)
class SuggestOptions:
    """What :func:`suggest_slots` is asked (checked when made)."""

    max_slots: int = DEFAULT_MAX_SLOTS
    min_success: float = DEFAULT_MIN_SUCCESS
    trials: int = DEFAULT_TRIALS
    candidates: int = DEFAULT_CANDIDATES
    seed: int = 0
    table: bool = False
    gripper_model: str = "auto"

    def __post_init__(self) -> None:
        for name, high in (("max_slots", 100), ("trials", 1000), ("candidates", MAX_CANDIDATES)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= high:
                raise ValueError(f"{name} {value!r}: expected a whole number in 1..{high}")
        ok = isinstance(self.min_success, int | float) and not isinstance(self.min_success, bool)
        if not ok or not 0.0 < float(self.min_success) <= 1.0:
            raise ValueError(f"min_success {self.min_success!r}: expected a rate in (0, 1]")


Progress = Callable[[str, float], None]


def check_cancel(cancel: Callable[[], bool] | None) -> None:
    if cancel is not None and cancel():
        raise SuggestionCancelled("suggestion cancelled")


def make_request(file: str, prim: str, gripper: GripperRef, count: int, seed: int):
    return GraspPlanningRequest(
        object=GraspObject(geometry=GeometryRef(asset_path=file, prim_path=prim)),
        grippers=(gripper,),
        max_candidates_per_gripper=count,
        seed=seed,
    )


def evaluate_planned(result: Any, inputs: Any, options: SuggestOptions, cancel: Any) -> Any:
    from usdgrip.grasping.grasp_evaluation import evaluate_grasps
    from usdgrip.grasping.options import EvaluationOptions

    evaluation = EvaluationOptions(
        trials=options.trials, table=options.table, gripper_model=options.gripper_model,
        seed=options.seed,
    )  # fmt: skip
    return evaluate_grasps(result, options=evaluation, inputs=inputs, cancel=cancel)


@dataclass(frozen=True)
class LeftOut:
    """A region not suggested, and why."""

    name: str
    reason: str


def _planning(options: SuggestOptions) -> Any:
    from usdgrip.grasping.options import PlanningOptions

    return PlanningOptions(
        methods=("antipodal",), table=options.table, gripper_model=options.gripper_model
    )


@dataclass(frozen=True)
class Screening:
    """What :func:`screen_grasps` found: the regions of held grasps, and what they came from."""

    stage: Any
    inputs: Any
    """The planner's :class:`~usdgrip.grasping.inputs.GraspInputs`; ``None`` when nothing
    was planned."""
    regions: tuple[SlotRegion, ...]
    widths: tuple[float, ...]
    """Mean contact width (m) of each region's grasps."""
    planned: int
    held: int
    seconds: dict[str, float]
    notes: tuple[str, ...]
    meters_per_unit: float


def screen_grasps(
    file: str,
    prim: str,
    gripper: GripperRef,
    options: SuggestOptions,
    report: Progress,
    cancel: Callable[[], bool] | None,
) -> Screening:
    """Plan, simulate and cluster (see the module); ``seconds`` has ``plan`` and ``evaluate``.

    Raises:
        ValueError, GripperError, StageOpenError: bad input (one line).
        SuggestionCancelled: ``cancel()`` returned True.
    """
    from usdgrip.grasping.inputs import StageSource, read_grasp_inputs
    from usdgrip.grasping.isaac_yaml import compute_candidate_poses
    from usdgrip.grasping.planner import plan_grasps
    from usdgrip.usd.stage import get_meters_per_unit, open_stage

    seconds = {"plan": 0.0, "evaluate": 0.0, "prove": 0.0}
    stage = open_stage(file)
    mpu = get_meters_per_unit(stage)
    request = make_request(file, prim, gripper, options.candidates, options.seed)
    started = time.perf_counter()
    report(f"planning {options.candidates} candidates", 0.0)
    inputs = read_grasp_inputs(
        request.object.geometry, request.grippers, table=options.table,
        gripper_model=options.gripper_model, stages=StageSource({file: stage}),
    )  # fmt: skip
    planned = plan_grasps(request, options=_planning(options), inputs=inputs)
    seconds["plan"] = time.perf_counter() - started
    check_cancel(cancel)
    notes = tuple(planned.metadata.warnings)
    if not planned.grasps:
        return Screening(stage, None, (), (), 0, 0, seconds, notes, mpu)
    started = time.perf_counter()
    report(f"simulating {len(planned.grasps)} candidates", 0.2)
    evaluated = evaluate_planned(planned, inputs, options, cancel)
    seconds["evaluate"] = time.perf_counter() - started
    grasps = list(evaluated.grasps.values())
    rates = np.array([g.physics.success_rate if g.physics else 0.0 for g in grasps])
    held = rates >= options.min_success
    poses = compute_candidate_poses(evaluated)[held]
    confidence = np.array([g.confidence or 0.0 for g in grasps])[held]
    widths = np.array([g.width or 0.0 for g in grasps])[held]
    usable = inputs.find_gripper(gripper)
    regions = compute_slot_regions(poses, rates[held], confidence, usable.max_opening)
    region_widths = tuple(float(widths[list(r.members)].mean()) for r in regions)
    return Screening(
        stage, inputs, tuple(regions), region_widths, len(grasps), int(held.sum()), seconds,
        notes, mpu,
    )  # fmt: skip
