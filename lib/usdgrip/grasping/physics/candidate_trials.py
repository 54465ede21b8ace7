"""Evaluate grasp candidates: trials per candidate, seeded perturbations, worker processes.

The engine (:mod:`usdgrip.grasping.physics.engines`, MuJoCo by default) only simulates;
this module draws every trial's perturbation (:func:`compute_trial_batch`), hands the
trials to the engine (one candidate at a time over worker processes, or every candidate
× trial at once to a batched engine) and turns the outcomes into
:class:`CandidateEvaluation` records.

Every candidate gets its own random stream ``numpy.random.default_rng([seed,
index])``, so its outcome does not depend on ``jobs``, on the order workers
finish, or on the other candidates. Trial 0 is the nominal pose with nominal
friction and mass; trials 1.. perturb the hands' pose, all hands together as one
rigid body (normal position offset of ``position_sigma`` per axis, rotation of
normal angle ``angle_sigma`` about a random axis through the centroid of the
hand origins: the grasp centre for one hand), the object's friction and its mass.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from usdgrip import interrupts
from usdgrip.frames import find_rigid_poses
from usdgrip.grasping.physics import trial_workers as workers_module
from usdgrip.grasping.physics.engines import GraspEngine, TrialBatch, TrialResult, get_engine
from usdgrip.grasping.physics.params import EvaluationParams
from usdgrip.grasping.physics.world import PhysicsGripper, PhysicsObject, PhysicsScene
from usdgrip.physics_outcomes import PHYSICS_OUTCOMES as OUTCOMES

HandPoses = NDArray[np.float64]  # (N, H, 4, 4) object_from_G per candidate and hand


@dataclass(frozen=True)
class CandidateEvaluation:
    """The measured result of one candidate (all its trials)."""

    index: int
    """Candidate index in the input poses."""
    outcome: str
    """Outcome of trial 0 (the nominal pose)."""
    outcomes: dict[str, int]
    """Trials per outcome, every outcome of :data:`OUTCOMES` present (zeros included)."""
    success_rate: float
    """Trials held / trials."""
    trials: int
    """Trials run."""
    trial_outcomes: tuple[str, ...]
    """Outcome of each trial, in order."""
    displacement: tuple[float, ...]
    """Per trial: largest object displacement relative to the first hand after closing, m
    (NaN when the trial ended before the lift)."""
    open_hits: dict[str, int] = field(default_factory=dict)
    """``collides_open`` trials by what the open hand hit (``object``, ``support``)."""

    @property
    def held(self) -> bool:
        """Whether at least one trial held."""
        return self.outcomes["held"] > 0

    def to_record(self) -> dict[str, Any]:
        """The ``physics`` mapping of an Isaac-Grasp entry: rate, trials, first outcome, counts.

        ``outcomes`` lists only outcomes that occurred, in :data:`OUTCOMES` order;
        ``collides_open_with`` (what the open hand hit, by trials) only when some trial
        collided open.
        """
        record: dict[str, Any] = {
            "success_rate": self.success_rate,
            "trials": self.trials,
            "outcome": self.outcome,
            "outcomes": {k: v for k, v in self.outcomes.items() if v},
        }
        if self.open_hits:
            record["collides_open_with"] = dict(self.open_hits)
        return record


class EvaluationCancelled(Exception):
    """``cancel()`` returned True; ``results`` holds the candidates finished so far (by index)."""

    def __init__(self, results: list[CandidateEvaluation]) -> None:
        super().__init__(f"evaluation cancelled after {len(results)} candidates")
        self.results = results


def engine_metadata(params: EvaluationParams, engine: str = "mujoco") -> dict[str, Any]:
    """Engine name and versions plus every parameter, for a report's ``metadata.physics``."""
    return get_engine(engine).describe(params)


def summarize_evaluations(results: Sequence[CandidateEvaluation]) -> dict[str, Any]:
    """Totals over candidates, for a summary line or ``metadata.physics``.

    Returns:
        ``candidates``; ``trials`` (all candidates); ``held_candidates`` (candidates with
        ``success_rate`` > 0); ``success_rate`` (held trials / trials, 0.0 with no trials);
        ``outcomes`` (trials per outcome, only those that occurred, in :data:`OUTCOMES` order).
    """
    totals = {name: 0 for name in OUTCOMES}
    for r in results:
        for name, count in r.outcomes.items():
            totals[name] += count
    trials = sum(r.trials for r in results)
    return {
        "candidates": len(results),
        "trials": trials,
        "held_candidates": sum(r.success_rate > 0 for r in results),
        "success_rate": totals["held"] / trials if trials else 0.0,
        "outcomes": {k: v for k, v in totals.items() if v},
    }


def summarize_open_hits(hits: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """``collides_open`` trials by what the open hand hit, summed (``object``, ``support``)."""
    totals: dict[str, int] = {}
    for counts in hits:
        for name, count in counts.items():
            totals[name] = totals.get(name, 0) + int(count)
    return {name: totals[name] for name in sorted(totals)}


def check_hand_poses(poses: ArrayLike) -> HandPoses:
    """Poses as ``(N, H, 4, 4)``: ``(N, 4, 4)`` means one hand per candidate.

    Raises:
        TypeError: not numeric.
        ValueError: wrong shape, or a pose not finite or not rigid, naming ``poses[i]`` or
            ``poses[i][h]``.
    """
    try:
        array = np.asarray(poses, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"poses: expected a numeric (N, 4, 4) or (N, H, 4, 4) array, got {type(poses).__name__}"
        ) from None
    single = array.ndim == 3
    if single:
        array = array[:, None]
    if array.ndim != 4 or array.shape[2:] != (4, 4) or (len(array) and array.shape[1] < 1):
        raise ValueError(f"poses has shape {np.shape(poses)}; expected (N, 4, 4) or (N, H, 4, 4)")
    if len(array) == 0:
        return array
    finite, rigid = find_rigid_poses(array)
    bad = ~rigid
    if bad.any():
        i, h = (int(x) for x in np.argwhere(bad)[0])
        name = f"poses[{i}]" if single else f"poses[{i}][{h}]"
        reason = (
            "contains NaN or infinite values"
            if not finite[i, h]
            else "is not a rigid transform (rotation must be orthonormal with det +1, "
            "last row 0 0 0 1)"
        )
        raise ValueError(f"{name} {reason}")
    return array


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} is {value!r}; expected an integer")
    if value < minimum:
        raise ValueError(f"{name} is {value}; expected an integer >= {minimum}")
    return int(value)


def _random_rotation(rng: np.random.Generator, sigma_degrees: float) -> NDArray[np.float64]:
    axis = rng.normal(size=3)
    axis /= max(np.linalg.norm(axis), 1e-12)
    angle = math.radians(rng.normal(0.0, sigma_degrees))
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


def compute_trial_batch(
    hand_poses: HandPoses, indices: Sequence[int], seed: int, params: EvaluationParams
) -> TrialBatch:
    """Every trial of candidates ``indices`` (poses ``(N, H, 4, 4)``, same order).

    Candidate ``i`` draws from its own stream ``default_rng([seed, i])``: trial 0 is the
    nominal pose, friction and mass; each later trial draws, in order, a rotation (axis,
    then angle), a shift, a friction and a mass factor.
    """
    n, trials = len(hand_poses), params.trials
    poses = np.repeat(np.asarray(hand_poses, dtype=np.float64)[:, None], trials, axis=1)
    friction = np.ones((n, trials))
    mass = np.ones((n, trials))
    for row, (index, nominal) in enumerate(zip(indices, hand_poses, strict=True)):
        rng = np.random.default_rng([seed, int(index)])
        centre = nominal[:, :3, 3].mean(axis=0)
        for trial in range(1, trials):
            # One rigid perturbation of all hands about their centroid (for one hand, about
            # the grasp centre): an error of the object's pose. The hands' placement relative
            # to each other is the slot group's; rigid, welded hands cannot absorb
            # independent errors along their closing axes the way compliant arms do.
            rotation = _random_rotation(rng, params.angle_sigma)
            shift = rng.normal(0.0, params.position_sigma, 3)
            poses[row, trial, :, :3, :3] = rotation @ nominal[:, :3, :3]
            poses[row, trial, :, :3, 3] = centre + (nominal[:, :3, 3] - centre) @ rotation.T + shift
            friction[row, trial] = rng.uniform(
                1 - params.friction_spread, 1 + params.friction_spread
            )
            mass[row, trial] = rng.uniform(1 - params.mass_spread, 1 + params.mass_spread)
    return TrialBatch(poses, friction, mass)


def summarize_trials(index: int, results: Sequence[TrialResult]) -> CandidateEvaluation:
    """One candidate's evaluation from its trials' results."""
    outcomes = {name: 0 for name in OUTCOMES}
    hits: dict[str, int] = {}
    for r in results:
        outcomes[r.outcome] += 1
        if r.outcome == "collides_open" and r.hit is not None:
            hits[r.hit] = hits.get(r.hit, 0) + 1
    return CandidateEvaluation(
        index=index,
        outcome=results[0].outcome,
        outcomes=outcomes,
        success_rate=outcomes["held"] / len(results),
        trials=len(results),
        trial_outcomes=tuple(r.outcome for r in results),
        displacement=tuple(float(r.displacement) for r in results),
        open_hits=hits,
    )


def evaluate_one(
    engine: GraspEngine, hand_poses: NDArray[np.float64], index: int, seed: int
) -> CandidateEvaluation:
    """All trials of candidate ``index`` with hands at ``hand_poses`` ``(H, 4, 4)``."""
    task = (index, 0, engine.params.trials)
    return summarize_trials(index, run_trials(engine, hand_poses, task, seed))


#: A share of one candidate's trials: ``(candidate index, first trial, end trial)``.
TrialTask = tuple[int, int, int]


def run_trials(
    engine: GraspEngine, hand_poses: NDArray[np.float64], task: TrialTask, seed: int
) -> list[TrialResult]:
    """Trials ``first..end-1`` of candidate ``index`` (hands at ``hand_poses`` ``(H, 4, 4)``).

    Any share gives the same results for its trials as the whole run of the candidate
    (:func:`evaluate_one`): every trial's perturbation comes from the candidate's own
    stream, and each trial starts from a reset simulation.
    """
    index, first, end = task
    batch = compute_trial_batch(hand_poses[None], [index], seed, engine.params)
    if (first, end) != (0, engine.params.trials):
        batch = TrialBatch(*(array[:, first:end] for array in batch))
    return engine.run_batch(batch)[0]


# ---------------------------------------------------------------- worker processes
#: Whether the calling process evaluates chunks too (tests turn it off to check the workers).
_CALLER_WORKS = True
_TAGS = itertools.count()


def evaluate_candidates(
    obj: PhysicsObject,
    gripper: PhysicsGripper,
    poses: ArrayLike,
    *,
    scene: PhysicsScene | None = None,
    params: EvaluationParams | None = None,
    seed: int = 0,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    engine: str = "mujoco",
) -> list[CandidateEvaluation]:
    """Grasp-and-lift every candidate; one :class:`CandidateEvaluation` per candidate.

    Args:
        obj: the object (:func:`make_physics_object`); its frame is the world frame here.
        gripper: the parallel-jaw gripper, used for every hand.
        poses: ``(N, 4, 4)`` object_from_G per candidate (one hand), or ``(N, H, 4, 4)``
            for ``H`` hands that close, lift and shake together (two-handed groups).
        scene: up axis, table and supports (default: +Z up, nothing under the object).
        params: protocol and simulation parameters (default :class:`EvaluationParams`).
        seed: non-negative integer; the same seed gives the same results.
        jobs: processes simulating, this one included (1: this process only); at most
            :func:`~usdgrip.grasping.physics.trial_workers.max_workers` are used, and one
            when the work is too small to gain (:data:`~usdgrip.grasping.physics.
            trial_workers.MIN_PARALLEL_TRIALS`). Results do not depend on it.
        progress: called as ``progress(done, total)`` after candidates finish.
        cancel: polled between candidates; when it returns True the evaluation stops.
        engine: the simulation engine (:data:`~usdgrip.grasping.physics.engines.ENGINES`);
            a batched one gets every candidate × trial in one call (``jobs`` unused).

    Returns:
        Evaluations in input order.

    Raises:
        TypeError, ValueError: a bad argument, named.
        EvaluationCancelled: ``cancel()`` returned True (carries the finished results).
    """
    if not isinstance(obj, PhysicsObject):
        raise TypeError(
            f"object is {type(obj).__name__}; expected PhysicsObject (make_physics_object)"
        )
    if not isinstance(gripper, PhysicsGripper):
        raise TypeError(f"gripper is {type(gripper).__name__}; expected PhysicsGripper")
    scene = PhysicsScene() if scene is None else scene
    if not isinstance(scene, PhysicsScene):
        raise TypeError(f"scene is {type(scene).__name__}; expected PhysicsScene or None")
    params = EvaluationParams() if params is None else params
    if not isinstance(params, EvaluationParams):
        raise TypeError(f"params is {type(params).__name__}; expected EvaluationParams or None")
    seed = _check_int("seed", seed, 0)
    jobs = _check_int("jobs", jobs, 1)
    for name, value in (("progress", progress), ("cancel", cancel)):
        if value is not None and not callable(value):
            raise TypeError(f"{name} is {value!r}; expected a callable or None")
    hand_poses = check_hand_poses(poses)
    total = len(hand_poses)
    if total == 0:
        return []
    hands = hand_poses.shape[1]
    record = get_engine(engine)
    if not record.batched:
        jobs = min(jobs, workers_module.max_workers()[0])
        if workers_module.worth_workers(jobs, total, params.trials, hands):
            world = (engine, obj, gripper, scene, hands, params)
            try:
                return _evaluate_parallel(
                    lambda: record.build(obj, gripper, scene, hands, params),
                    world,
                    hand_poses,
                    seed,
                    jobs,
                    progress,
                    cancel,
                )
            except (KeyboardInterrupt, SystemExit, interrupts.Terminated):
                workers_module.stop_workers(grace=0)  # interrupted: no worker outlives the command
                raise
    built = record.build(obj, gripper, scene, hands, params)  # compile errors surface here
    if record.batched:
        if cancel is not None and cancel():
            raise EvaluationCancelled([])
        batch = compute_trial_batch(hand_poses, range(total), seed, params)
        results = [summarize_trials(i, r) for i, r in enumerate(built.run_batch(batch))]
        if progress is not None:
            progress(total, total)
        return results
    return _evaluate_serial(built, hand_poses, seed, progress, cancel)


def _evaluate_serial(
    simulator: GraspEngine,
    hand_poses: HandPoses,
    seed: int,
    progress: Callable[[int, int], None] | None,
    cancel: Callable[[], bool] | None,
) -> list[CandidateEvaluation]:
    results: list[CandidateEvaluation] = []
    for index, poses in enumerate(hand_poses):
        interrupts.check()
        if cancel is not None and cancel():
            raise EvaluationCancelled(results)
        results.append(evaluate_one(simulator, poses, index, seed))
        if progress is not None:
            progress(len(results), len(hand_poses))
    return results


def _evaluate_parallel(
    build: Callable[[], GraspEngine],
    world: tuple[Any, ...],
    hand_poses: HandPoses,
    seed: int,
    jobs: int,
    progress: Callable[[int, int], None] | None,
    cancel: Callable[[], bool] | None,
) -> list[CandidateEvaluation]:
    """This process plus ``jobs - 1`` simulation workers share small chunks of candidates.

    The workers (:mod:`~usdgrip.grasping.physics.trial_workers`, started early by the
    command where it can) get the world once and then chunks, two in flight each; the
    ready ones get theirs before this process builds its own engine with ``build()``
    (compile errors surface there), so they simulate meanwhile. Then this process
    evaluates one task at a time (the workers' start-up is hidden behind useful work).
    The last ``jobs`` candidates are shared trial by trial (:func:`plan_chunks`), so the
    processes finish within about one trial of each other, and when no task is left this
    process re-runs one a worker still holds: results are deterministic per trial, so
    whichever copy finishes first is the answer, and a slow worker never delays the end.
    A worker that dies or fails is dropped; its chunks go back to the queue.
    """
    from multiprocessing.connection import wait

    total, trials = len(hand_poses), world[-1].trials  # world ends with its params
    pool = workers_module.start_workers(min(jobs - 1, total - 1))
    queue = deque(plan_chunks(total, trials, jobs))
    parts: dict[int, dict[int, TrialResult]] = {}  # trials finished, by candidate and trial
    done: dict[int, CandidateEvaluation] = {}
    mine: set[int] = set()  # this call's chunk tags

    def finished(task: TrialTask) -> bool:
        index, first, end = task
        return index in done or all(t in parts.get(index, ()) for t in range(first, end))

    def record(task: TrialTask, results: Sequence[TrialResult]) -> None:
        index, first, _ = task
        got = parts.setdefault(index, {})
        for trial, result in enumerate(results, first):
            got.setdefault(trial, result)
        if index not in done and len(got) == trials:
            done[index] = summarize_trials(index, [got[t] for t in range(trials)])
            del parts[index]

    def drop(worker: workers_module.TrialWorker) -> None:
        for tag, chunk in worker.chunks.items():
            if tag in mine:
                queue.appendleft(chunk)
        worker.chunks.clear()
        pool.remove(worker)
        workers_module.drop_worker(worker)

    def serve(worker: workers_module.TrialWorker) -> None:
        try:
            while worker.connection.poll():
                message = worker.connection.recv()
                if message == workers_module.READY:
                    worker.ready = True
                    continue
                tag, answer = message
                chunk = worker.chunks.pop(tag, None)
                if tag not in mine or chunk is None:
                    continue
                if isinstance(answer, str):  # it failed: the chunk is done elsewhere
                    queue.appendleft(chunk)
                    raise OSError(answer)
                for task, results in zip(chunk, answer, strict=True):
                    record(task, results)
            while worker.ready and queue and len(worker.chunks) < 2:
                if worker.world is not world:
                    worker.tasks.send(("world", *world))
                    worker.world = world
                chunk = queue.popleft()
                tag = next(_TAGS)
                mine.add(tag)
                worker.chunks[tag] = chunk
                poses = hand_poses[[index for index, _, _ in chunk]]
                worker.tasks.send(("chunk", tag, chunk, poses, seed))
        except (EOFError, OSError):
            drop(worker)

    def run_one_here(chunk: Sequence[TrialTask]) -> None:
        task = next(t for t in chunk if not finished(t))
        record(task, run_trials(simulator, hand_poses[task[0]], task, seed))

    for worker in list(pool):  # the ready workers start while this process builds
        serve(worker)
    simulator = build()
    while len(done) < total:
        interrupts.check()
        before = len(done)
        for worker in list(pool):
            serve(worker)
        queue = deque(c for c in queue if not all(finished(t) for t in c))
        stragglers = [
            c
            for w in pool
            for tag, c in w.chunks.items()
            if tag in mine and not all(finished(t) for t in c)
        ]
        # One task at a time here, so a worker that starts or finishes a chunk is fed
        # after one task, not after a whole chunk of this process's.
        if queue and (_CALLER_WORKS or not pool):
            chunk = queue.popleft()
            run_one_here(chunk)
            if len(chunk) > 1:
                queue.appendleft(chunk[1:])
        elif stragglers and (_CALLER_WORKS or not pool):
            run_one_here(stragglers[-1])  # the one the workers reach last
        elif pool:
            wait([w.connection for w in pool], timeout=0.05)
        if len(done) != before and progress is not None:
            progress(len(done), total)
        if cancel is not None and len(done) < total and cancel():
            raise EvaluationCancelled([done[i] for i in sorted(done)])
    return [done[i] for i in range(total)]


def plan_chunks(total: int, trials: int, jobs: int) -> list[list[TrialTask]]:
    """The chunks ``jobs`` processes share: runs of whole candidates, then the tail by trial.

    Chunks hold about ``total / (32 jobs)`` candidates (at least one): small, so the
    processes stay fed. The last ``jobs`` candidates (all of them, for fewer) are split
    into one task per trial, so when the work runs out every process finishes within
    about one trial of the others instead of one candidate.
    """
    tail = min(total, jobs) if trials > 1 else 0
    whole = total - tail
    size = max(1, whole // (jobs * 32))
    chunks = [
        [(index, 0, trials) for index in range(start, min(start + size, whole))]
        for start in range(0, whole, size)
    ]
    chunks += [
        [(index, trial, trial + 1)] for index in range(whole, total) for trial in range(trials)
    ]
    return chunks
