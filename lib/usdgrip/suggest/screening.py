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
from usdgrip.grasping.options import OptionError
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
#: Hands a suggestion is for: one slot per hand, or a two-handed group.
HANDS = (1, 2)
#: Longest group name accepted (characters).
MAX_GROUP_NAME = 255
#: A trial closed on the object and lost it only once lifted: too heavy (or too weak a
#: grip) for the hands, not a bad place (``suggest slots --hands 2`` clusters these too).
LIFT_FAILURES = ("dropped_lift", "slipped_lift", "dropped_shake", "slipped_shake")


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
    """The object rests on a table (exclusive with ``support``)."""
    scene: str | None = None
    """USD file holding ``support`` (planning's obstacles too); both or neither."""
    support: str | None = None
    """The prim of ``scene`` the object rests on (``usdgrip plan``/``evaluate``'s meaning)."""
    force: float | None = None
    """Grip force per finger, N (``evaluate --force``); ``None``: the site's, else 50 N."""
    hands: int = 1
    """1: one slot per region; 2: one two-handed group (``group``) proven together."""
    group: str | None = None
    """The group name of a two-handed suggestion (``hands == 2`` only; a USD identifier)."""
    gripper_model: str = "auto"

    def __post_init__(self) -> None:
        for name, high in (("max_slots", 100), ("trials", 1000), ("candidates", MAX_CANDIDATES)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= high:
                raise OptionError.of(name, f"{value!r}: expected a whole number in 1..{high}")
        ok = isinstance(self.min_success, int | float) and not isinstance(self.min_success, bool)
        if not ok or not 0.0 < float(self.min_success) <= 1.0:
            raise OptionError.of("min_success", f"{self.min_success!r}: expected a rate in (0, 1]")
        self._check_hands()
        self.evaluation()  # the support and force refusals of `usdgrip evaluate`, once

    def _check_hands(self) -> None:
        if isinstance(self.hands, bool) or self.hands not in HANDS:
            raise OptionError.of(
                "hands", f"{self.hands!r}: expected 1 (a slot per hand) or 2 (a two-handed group)"
            )
        if self.hands == 1:
            if self.group is not None:
                raise OptionError.of(
                    "group",
                    f"{self.group!r}: only with hands 2 (a two-handed group); "
                    "add --hands 2, or leave --group out",
                )
            return
        if not isinstance(self.group, str) or not self.group:
            raise OptionError.of("hands", "2 needs a group name (--group NAME) for the two slots")
        try:
            self.group.encode("utf-8")
        except UnicodeEncodeError:
            raise OptionError.of(
                "group", f"{self.group!r}: not UTF-8 text; expected a USD identifier"
            ) from None
        if len(self.group) > MAX_GROUP_NAME:
            raise OptionError.of(
                "group", f"name of {len(self.group)} characters: expected at most {MAX_GROUP_NAME}"
            )
        from pxr import Tf

        if not Tf.IsValidIdentifier(self.group):
            raise OptionError.of(
                "group",
                f"{self.group!r}: expected a USD identifier (letters, digits and _, "
                "not starting with a digit)",
            )
        if self.max_slots < 2:
            raise OptionError.of("max_slots", f"{self.max_slots}: a two-handed group is 2 slots")

    def evaluation(self, *, table: bool | None = None) -> Any:
        """The :class:`~usdgrip.grasping.options.EvaluationOptions` of the screening and proofs.

        Raises:
            ValueError: a refused support or force, worded with its flag.
        """
        from usdgrip.grasping.options import EvaluationOptions

        try:
            return EvaluationOptions(
                trials=self.trials, table=self.table if table is None else table,
                scene=self.scene, support=self.support, force=self.force,
                gripper_model=self.gripper_model, seed=self.seed,
            )  # fmt: skip
        except OptionError as exc:
            raise ValueError(exc.cli_message()) from None

    def planning(self, methods: tuple[str, ...]) -> Any:
        """The :class:`~usdgrip.grasping.options.PlanningOptions` of ``methods``, same support."""
        from usdgrip.grasping.options import PlanningOptions

        return PlanningOptions(
            methods=methods, table=self.table, support=self.support,
            gripper_model=self.gripper_model,
        )  # fmt: skip

    def read_inputs(self, request: Any, stage: Any, *, table: bool | None = None) -> Any:
        """The object, gripper and support of ``request`` read once from ``stage`` (its file)."""
        from usdgrip.grasping.inputs import StageSource, read_grasp_inputs

        file = request.object.geometry.asset_path
        stages = {file: stage}
        return read_grasp_inputs(
            request.object.geometry, request.grippers,
            table=self.table if table is None else table, scene=self.scene,
            support=self.support, gripper_model=self.gripper_model,
            stages=StageSource(stages),
        )  # fmt: skip


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

    evaluation = options.evaluation()
    return evaluate_grasps(result, options=evaluation, inputs=inputs, cancel=cancel)


def plan_with(request: Any, options: SuggestOptions, methods: tuple[str, ...], inputs: Any):
    """``plan_grasps`` of ``methods`` on ``inputs``, with the options' scene and support."""
    from usdgrip.grasping.planner import plan_grasps

    return plan_grasps(
        request, scene=options.scene, options=options.planning(methods), inputs=inputs
    )


@dataclass(frozen=True)
class LeftOut:
    """A region not suggested, and why."""

    name: str
    reason: str


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
    """Planned grasps held in at least ``min_success`` of their trials."""
    lifted_short: int
    """Planned grasps that closed on the object in at least ``min_success`` of their
    trials but held it in fewer: lost only once lifted (:data:`LIFT_FAILURES`)."""
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

    With ``options.hands == 2`` the regions are of the grasps that closed on the object
    (held, or lost only once lifted: :data:`LIFT_FAILURES`): one hand may be too weak for
    the weight, and two hands share it.

    Raises:
        ValueError, GripperError, StageOpenError: bad input (one line).
        SuggestionCancelled: ``cancel()`` returned True.
    """
    from usdgrip.grasping.isaac_yaml import compute_candidate_poses
    from usdgrip.usd.stage import get_meters_per_unit, open_stage

    seconds = {"plan": 0.0, "evaluate": 0.0, "prove": 0.0}
    stage = open_stage(file)
    mpu = get_meters_per_unit(stage)
    request = make_request(file, prim, gripper, options.candidates, options.seed)
    started = time.perf_counter()
    report(f"planning {options.candidates} candidates", 0.0)
    inputs = options.read_inputs(request, stage)
    planned = plan_with(request, options, ("antipodal",), inputs)
    seconds["plan"] = time.perf_counter() - started
    check_cancel(cancel)
    notes = tuple(planned.metadata.warnings)
    if not planned.grasps:
        return Screening(stage, None, (), (), 0, 0, 0, seconds, notes, mpu)
    started = time.perf_counter()
    report(f"simulating {len(planned.grasps)} candidates", 0.2)
    evaluated = evaluate_planned(planned, inputs, options, cancel)
    seconds["evaluate"] = time.perf_counter() - started
    grasps = list(evaluated.grasps.values())
    rates = np.array([g.physics.success_rate if g.physics else 0.0 for g in grasps])
    closed = rates + np.array([_lost_when_lifted(g.physics) for g in grasps])
    held = rates >= options.min_success
    short = (closed >= options.min_success) & ~held
    kept = held | short if options.hands == 2 else held
    score = closed if options.hands == 2 else rates
    poses = compute_candidate_poses(evaluated)[kept]
    confidence = np.array([g.confidence or 0.0 for g in grasps])[kept]
    widths = np.array([g.width or 0.0 for g in grasps])[kept]
    usable = inputs.find_gripper(gripper)
    regions = compute_slot_regions(poses, score[kept], confidence, usable.max_opening)
    region_widths = tuple(float(widths[list(r.members)].mean()) for r in regions)
    return Screening(
        stage, inputs, tuple(regions), region_widths, len(grasps), int(held.sum()),
        int(short.sum()), seconds, notes, mpu,
    )  # fmt: skip


def _lost_when_lifted(physics: Any) -> float:
    """The share of a grasp's trials that closed on the object and lost it once lifted."""
    if physics is None or not physics.trials:
        return 0.0
    return sum(physics.outcomes.get(name, 0) for name in LIFT_FAILURES) / physics.trials
